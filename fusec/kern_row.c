/* Template: ROW kernels, a block (or, for rows walked once, a warp) per
 * point of the outer space; reductions over the row's last index are
 * shared by its threads. A row walked more than once is read once into
 * registers (KernelParams.rcache elements a thread).
 * Grid: a block per row, or a warp per row at 8 rows a block. */
#include <stdlib.h>
#include <string.h>

#include "cuda.h"
#include "die.h"

static void row_map_body(Cx *cx, int sid, int n, int d);

/* The block walks the row: var = threadIdx.x, += blockDim.x. With a
 * register cache the first rcache strides read the cached elements (the
 * body is written twice: cached, then for the rest of a longer row). */
void row_loop(Cx *cx, const char *var, RowBody *body, int sid, int n, int depth)
{
	FILE *out = cx->out;
	const Kernel *k = cx->k;
	if (k->par.rcache) {
		ind(out, depth), fputs("#pragma unroll\n", out);
		ind(out, depth), fprintf(out, "for (int fz_k = 0; fz_k < %d; ++fz_k) {\n", k->par.rcache);
		ind(out, depth + 1), fprintf(out, "const long long %s = threadIdx.x + (long long)fz_k * blockDim.x;\n", var);
		ind(out, depth + 1), fprintf(out, "if (%s < ", var), dim_c(cx, k->inner, out), fputs(") {\n", out);
		cx->rc_var = var;
		body(cx, sid, n, depth + 2);
		cx->rc_var = NULL;
		ind(out, depth + 1), fputs("}\n", out);
		ind(out, depth), fputs("}\n", out);
		ind(out, depth), fprintf(out, "for (long long %s = threadIdx.x + %dLL * blockDim.x; %s < ", var, k->par.rcache, var);
	} else {
		ind(out, depth), fputs("#pragma unroll 4\n", out);
		ind(out, depth), fprintf(out, "for (long long %s = %s; %s < ", var, row_tid(cx), var);
	}
	dim_c(cx, k->inner, out);
	fprintf(out, "; %s += %s) {\n", var, row_width(cx));
	body(cx, sid, n, depth + 1);
	ind(out, depth), fputs("}\n", out);
}

static void row_map_body(Cx *cx, int sid, int n, int d)
{
	(void)n;
	emit_map(cx, sid, d, 0);
}

static void emit(Cx *cx)
{
	const Module *m = cx->m;
	const Kernel *k = cx->k;
	FILE *out = cx->out;
	kernel_head(cx);
	fputs("\t__shared__ double fz_sh[32];\n", out);
	emit_tail_decls(cx, 1);
	fputs("\tconst long long rows = ", out);
	space_total(cx, out);
	fputs(";\n", out);
	if (k->par.warp_rows) {
		fputs("\tconst int fz_lane = threadIdx.x & 31;\n", out);
		fputs("\tfor (long long row = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5; row < rows; row += ((long long)gridDim.x * blockDim.x) >> 5) {\n", out);
	} else {
		fputs("\tfor (long long row = blockIdx.x; row < rows; row += gridDim.x) {\n", out);
	}
	decompose(cx, "row", 2);
	/* the row's statements first into a buffer: which rows they cache is
	   known only then, and the cache is filled before them */
	char *body = NULL;
	size_t blen = 0;
	FILE *bf = open_memstream(&body, &blen);
	if (!bf) die("out of memory");
	memset(cx->rc_used, 0, (size_t)m->ntensor + 1);
	cx->out = out = bf;
	const Phase *ph = &k->phase[0]; /* the epilogue phase, if any, follows the fold */
	for (int sid = ph->first_stmt; sid < ph->first_stmt + ph->nstmt; sid++) {
		const Stmt *s = &m->stmt[sid];
		const StepOp op = cx->p->op[sid];
		if (op == STEP_INLINE) continue; /* computed where it is read */
		bind_point(cx, s, k->nspace);
		if (op == STEP_GRID_REDUCE) {
			emit_tail_accumulate(cx, sid, 2, 1);
		} else if (op == STEP_REDUCE) {
			sid += emit_reductions(cx, sid, 2, 1) - 1;
		} else if (op == STEP_COMPACT) {
			fprintf(out, "\t\tif (%s) {\n", row_leader(cx));
			emit_compact(cx, sid, 3);
			fputs("\t\t}\n", out);
		} else if (op == STEP_MAP || op == STEP_ACCUM) {
			emit_map(cx, sid, 2, 1);
		} else if (op == STEP_ROW_ONCHIP) {
			/* an element of the row that stays on chip: its readers recompute it */
		} else if (op != STEP_ROW_ELEM) {
			die("step %s in row kernel %s", step_op_name[op], k->name);
		} else { /* an element of the row: the block walks the row */
			const Index *ix = &m->index[s->first_index + s->nfree - 1];
			char *var = xasprintf("c_%s", ix->name);
			free(cx->bind[s->first_index + s->nfree - 1]);
			cx->bind[s->first_index + s->nfree - 1] = xstrdup(var);
			row_loop(cx, var, row_map_body, sid, 1, 2);
			free(var);
			free(cx->local[s->out]);
			cx->local[s->out] = NULL; /* valid inside that loop only */
		}
	}
	fclose(bf);
	cx->out = out = cx->sink_main;
	const Fusion *fu = &m->fusion[cx->fusion];
	for (int t = fu->first_tensor; t < fu->first_tensor + fu->ntensor; t++) {
		if (!cx->rc_used[t]) continue;
		const Tensor *x = &m->tensor[t];
		char *subs[MAX_RANK], names[MAX_RANK][16];
		for (int i = 0; i < x->rank; i++) {
			snprintf(names[i], sizeof names[i], i < k->nspace ? "s%d" : "fz_c", i);
			subs[i] = names[i];
		}
		char *lin = linear_of(cx, t, subs);
		fprintf(out, "\t\t%s fz_rc_%s[%d];\n#pragma unroll\n", elem_info[x->type].is_float ? (x->type == ET_F64 ? "double" : "float") : ctype(x->type), x->name, k->par.rcache);
		fprintf(out, "\t\tfor (int fz_k = 0; fz_k < %d; ++fz_k) {\n", k->par.rcache);
		fputs("\t\t\tconst long long fz_c = threadIdx.x + (long long)fz_k * blockDim.x;\n", out);
		fprintf(out, "\t\t\tfz_rc_%s[fz_k] = fz_c < ", x->name);
		dim_c(cx, k->inner, out);
		fputs(" ? ", out);
		load_elem(cx, t, lin, out);
		fputs(" : 0;\n\t\t}\n", out);
		free(lin);
	}
	fputs(body, out);
	free(body);
	fputs("\t}\n", out);
	finish_kernel(cx);
}

static void grid_x(const Module *m, const Fusion *f, const Kernel *k, FILE *out)
{
	char cap[64] = "0";
	if (k->has_tail) snprintf(cap, sizeof cap, "(long long)sm * %d", k->par.min_blocks);
	if (k->par.warp_rows) {
		fputs("fz_grid(32LL * (", out), host_space_product(m, f, k, out);
		fprintf(out, "), %d, %s)", k->par.block, cap);
		return;
	}
	fputs("fz_rows(", out), host_space_product(m, f, k, out);
	fprintf(out, ", %s)", cap);
}

const KernTemplate kern_row = {emit, grid_x, NULL};
