/* Template: SCATTER kernels, out(g(..)) += value: a thread per outer
 * point, or a warp per outer point with its lanes over a ragged range;
 * atomic adds, and a target outside the tensor is dropped.
 * Grid: a thread (or warp) per point of the dense indices. */
#include <stdlib.h>
#include <string.h>

#include "cuda/cuda.h"
#include "core/die.h"

/* a target outside the tensor is dropped, never written */
static void in_range(Cx *cx, const Stmt *s, const Tensor *x, char **subs, FILE *out)
{
	for (int i = 0; i < s->nlhs; i++) {
		fprintf(out, "%s(unsigned long long)(%s) < (unsigned long long)", i ? " && " : "", subs[i]);
		cuda_dim(cx, x->dim[i], out);
	}
	if (!s->nlhs) fputs("true", out);
}

static void atomic_add(FILE *out, const Tensor *x, const char *lin, const char *v)
{
	if (x->type == ET_I64) /* two's complement: the unsigned add is the signed one */
		fprintf(out, "atomicAdd((unsigned long long *)&a.t_%s[%s], (unsigned long long)(long long)(%s));\n", x->name, lin, v);
	else
		fprintf(out, "atomicAdd(&a.t_%s[%s], (%s)(%s));\n", x->name, lin, emit_device_type(x), v);
}

/* Every read of e is an input's at plain indices (in range by the
 * statement's ranges): the value may be read before its mask and target are
 * known, so its loads need not wait for theirs. A gather (a subscript read
 * from data), or a temp computed in place, waits, as with one copy. */
static int plain_reads(const Module *m, int e)
{
	const Expr *x = &m->expr[e];
	if (x->op == IR_LOAD) {
		if (m->tensor[x->tensor].kind != TK_INPUT) return 0;
		for (int i = 0; i < x->nargs; i++)
			if (m->expr[x->args[i]].op != IR_INDEX && m->expr[x->args[i]].op != IR_CONST) return 0;
		return 1;
	}
	const int ar = ir_op_arity[x->op];
	return (ar < 1 || plain_reads(m, x->a)) && (ar < 2 || plain_reads(m, x->b)) && (ar < 3 || plain_reads(m, x->c));
}

/* The ragged range in batches of 32 * U (KernelParams.unroll): each lane
 * takes U items 32 apart, every copy's target, mask and value computed
 * before the first copy's atomic, so a row's loads are in flight together
 * (one copy at a time, each load waited for before the next items':
 * spike_burst's 100-synapse rows cost four memory latencies, not one).
 * A copy past the end reads nothing (where the statement needs locals:
 * the batch's first item, valid) and adds nothing; a value with a gather is read only where its target is in
 * range and its mask holds, as with one copy (plain_reads). The same adds, each once: only the order of the
 * atomics differs, which nothing orders anyway. */
static void ragged_copies(Cx *cx, const Stmt *s, const Tensor *x, int ragged, int U)
{
	const Module *m = cx->m;
	FILE *out = cx->out;
	const Index *ix = &m->index[s->first_index + ragged];
	char *lo = emit_render(&cx->w, ix->lo), *hi = emit_render(&cx->w, ix->hi);
	fprintf(out, "\t\tconst long long lo = %s, hi = %s;\n", lo, hi);
	fprintf(out, "\t\tfor (long long rb = lo; rb < hi; rb += %d) {\n", 32 * U);
	free(lo), free(hi);
	const int slot = s->first_index + ragged - cx->first_index;
	for (int u = 0; u < U; u++) {
		fprintf(out, "\t\t\tconst long long r_%d = rb + lane + %d;\n", u, 32 * u);
		fprintf(out, "\t\t\tconst bool ok_%d = r_%d < hi;\n", u, u);
		cx->bind[slot] = xasprintf("r_%d", u);
		cx->role[slot] = CUDA_ROLE_NONE;
		char *vd = NULL, *md = NULL;
		char *mk = s->mask ? cuda_value_of(cx, s, s->mask, &md) : NULL;
		char *v = cuda_value_of(cx, s, s->rhs, &vd);
		/* locals are computed whatever ok is: past the end they read the
		   batch's first item; else every read waits for ok (predicated,
		   one address register for all copies) */
		const int clamp = md || vd;
		if (clamp) {
			free(v), free(mk), free(vd), free(md), vd = md = NULL;
			free(cx->bind[slot]);
			fprintf(out, "\t\t\tconst long long rc_%d = ok_%d ? r_%d : rb;\n", u, u, u);
			cx->bind[slot] = xasprintf("rc_%d", u);
			mk = s->mask ? cuda_value_of(cx, s, s->mask, &md) : NULL;
			v = cuda_value_of(cx, s, s->rhs, &vd);
		}
		char *subs[MAX_RANK] = {0};
		for (int i = 0; i < s->nlhs; i++) subs[i] = emit_render(&cx->w, s->lhs[i]);
		cuda_put_decls(out, md, 3);
		for (int i = 0; i < s->nlhs; i++) {
			if (clamp) fprintf(out, "\t\t\tconst long long fz_t%d_%d = (long long)(%s);\n", i, u, subs[i]);
			else fprintf(out, "\t\t\tconst long long fz_t%d_%d = ok_%d ? (long long)(%s) : 0;\n", i, u, u, subs[i]);
			free(subs[i]), subs[i] = xasprintf("fz_t%d_%d", i, u);
		}
		fprintf(out, "\t\t\tconst bool fz_do_%d = ok_%d && ", u, u);
		if (mk) fprintf(out, "(%s) && ", mk);
		in_range(cx, s, x, subs, out);
		fputs(";\n", out);
		const char *ty = emit_device_type(x);
		if (vd) {
			fprintf(out, "\t\t\t%s fz_v_%d = 0;\n\t\t\tif (fz_do_%d) {\n", ty, u, u);
			cuda_put_decls(out, vd, 4);
			fprintf(out, "\t\t\t\tfz_v_%d = (%s)(%s);\n\t\t\t}\n", u, ty, v);
		} else {
			fprintf(out, "\t\t\tconst %s fz_v_%d = %s_%d ? (%s)(%s) : (%s)0;\n", ty, u, plain_reads(m, s->rhs) ? "ok" : "fz_do", u, ty, v, ty);
		}
		free(v), free(mk), free(vd), free(md);
		for (int i = 0; i < s->nlhs; i++) free(subs[i]);
		free(cx->bind[slot]);
		cx->bind[slot] = NULL;
	}
	char *subs[MAX_RANK] = {0};
	for (int u = 0; u < U; u++) {
		for (int i = 0; i < s->nlhs; i++) subs[i] = xasprintf("fz_t%d_%d", i, u);
		char *lin = cuda_linear(cx, s->out, subs), *v = xasprintf("fz_v_%d", u);
		fprintf(out, "\t\t\tif (fz_do_%d) ", u);
		atomic_add(out, x, lin, v);
		free(lin), free(v);
		for (int i = 0; i < s->nlhs; i++) free(subs[i]);
	}
	fputs("\t\t}\n", out);
}

void cuda_kern_scatter(Cx *cx)
{
	const Module *m = cx->m;
	const Kernel *k = cx->k;
	const Stmt *s = &m->stmt[k->first_stmt];
	const Tensor *x = &m->tensor[s->out];
	FILE *out = cx->out;
	int ragged = -1;
	for (int i = 0; i < s->nindex; i++)
		if (m->index[s->first_index + i].kind == IX_RAGGED) ragged = i;
	cuda_kernel_head(cx);
	/* outer points: the dense indices; a warp each when a ragged range follows */
	fputs("\tconst long long outer = 1LL", out);
	for (int i = 0; i < s->nindex; i++)
		if (i != ragged) fputs(" * ", out), cuda_dim(cx, m->index[s->first_index + i].range, out);
	fputs(";\n", out);
	const char *width = ragged >= 0 ? "32" : "1";
	fprintf(out, "\tconst long long lane = threadIdx.x %% %s, nw = (long long)gridDim.x * blockDim.x / %s;\n", width, width);
	fprintf(out, "\tfor (long long p = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / %s; p < outer; p += nw) {\n", width);
	fputs("\t\tlong long fz_rem = p;\n", out);
	for (int i = s->nindex - 1; i >= 0; i--) {
		if (i == ragged) continue;
		const Index *ix = &m->index[s->first_index + i];
		char *v = xasprintf("o%d_%s", i, ix->name);
		fprintf(out, "\t\tconst long long %s = fz_rem %% ", v);
		cuda_dim(cx, ix->range, out);
		fputs("; fz_rem /= ", out);
		cuda_dim(cx, ix->range, out);
		fputs(";\n", out);
		cx->bind[s->first_index + i - cx->first_index] = v;
		cx->role[s->first_index + i - cx->first_index] = CUDA_ROLE_NONE;
	}
	cuda_stmt_math(&cx->w, m, s);
	cx->cur = k->first_stmt;
	if (ragged >= 0 && k->par.unroll > 1) {
		ragged_copies(cx, s, x, ragged, k->par.unroll);
	} else {
		int depth = 2;
		if (ragged >= 0) {
			const Index *ix = &m->index[s->first_index + ragged];
			char *lo = emit_render(&cx->w, ix->lo), *hi = emit_render(&cx->w, ix->hi);
			fprintf(out, "\t\tconst long long lo = %s, hi = %s;\n", lo, hi);
			fputs("\t\tfor (long long r = lo + lane; r < hi; r += 32) {\n", out);
			free(lo), free(hi);
			cx->bind[s->first_index + ragged - cx->first_index] = strdup("r");
			cx->role[s->first_index + ragged - cx->first_index] = CUDA_ROLE_NONE;
			depth = 3;
		}
		char *vd = NULL, *md = NULL;
		char *v = cuda_value_of(cx, s, s->rhs, &vd);
		char *mk = s->mask ? cuda_value_of(cx, s, s->mask, &md) : NULL;
		char *subs[MAX_RANK] = {0};
		for (int i = 0; i < s->nlhs; i++) subs[i] = emit_render(&cx->w, s->lhs[i]);
		cuda_put_decls(out, md, depth);
		cuda_ind(out, depth);
		fputs("if (", out);
		if (mk) fprintf(out, "(%s) && ", mk);
		in_range(cx, s, x, subs, out);
		char *lin = cuda_linear(cx, s->out, subs);
		fprintf(out, vd ? ") {\n" : ")\n");
		cuda_put_decls(out, vd, depth + 1);
		cuda_ind(out, depth + 1);
		atomic_add(out, x, lin, v);
		if (vd) cuda_ind(out, depth), fputs("}\n", out);
		free(lin), free(v), free(mk), free(vd), free(md);
		for (int i = 0; i < s->nlhs; i++) free(subs[i]);
		if (ragged >= 0) fputs("\t\t}\n", out);
	}
	fputs("\t}\n}\n\n", out);
	for (int i = 0; i < s->nindex; i++) free(cx->bind[s->first_index + i - cx->first_index]), cx->bind[s->first_index + i - cx->first_index] = NULL;
}

