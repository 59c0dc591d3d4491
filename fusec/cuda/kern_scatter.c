/* Template: SCATTER kernels, out(g(..)) += value: a thread per outer
 * point, or a warp per outer point with its lanes over a ragged range;
 * atomic adds, and a target outside the tensor is dropped.
 * Grid: a thread (or warp) per point of the dense indices. */
#include <stdlib.h>
#include <string.h>

#include "cuda/cuda.h"
#include "core/die.h"

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
	/* a target outside the tensor is dropped, never written */
	for (int i = 0; i < s->nlhs; i++) {
		fprintf(out, "%s(unsigned long long)(%s) < (unsigned long long)", i ? " && " : "", subs[i]);
		cuda_dim(cx, x->dim[i], out);
	}
	if (!s->nlhs) fputs("true", out);
	char *lin = cuda_linear(cx, s->out, subs);
	fprintf(out, vd ? ") {\n" : ")\n");
	cuda_put_decls(out, vd, depth + 1);
	cuda_ind(out, depth + 1);
	if (x->type == ET_I64) /* two's complement: the unsigned add is the signed one */
		fprintf(out, "atomicAdd((unsigned long long *)&a.t_%s[%s], (unsigned long long)(long long)(%s));\n", x->name, lin, v);
	else
		fprintf(out, "atomicAdd(&a.t_%s[%s], (%s)(%s));\n", x->name, lin, emit_device_type(x), v);
	if (vd) cuda_ind(out, depth), fputs("}\n", out);
	free(lin), free(v), free(mk), free(vd), free(md);
	for (int i = 0; i < s->nlhs; i++) free(subs[i]);
	if (ragged >= 0) fputs("\t\t}\n", out);
	fputs("\t}\n}\n\n", out);
	for (int i = 0; i < s->nindex; i++) free(cx->bind[s->first_index + i - cx->first_index]), cx->bind[s->first_index + i - cx->first_index] = NULL;
}

