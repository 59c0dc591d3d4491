/* Template: ROW kernels, the threads of a group per point of the outer
 * space (a row); reductions over the row's last index are shared by the
 * group. Two shapes (KernelParams):
 *  - rcache > 0 (rows walked more than once: softmax, norms): the row is
 *    read once into registers, rcache vectors of 4 consecutive elements a
 *    thread, 16-byte loads (8-byte for f16/bf16) and vector stores when the
 *    pointers and widths allow (fz_v4, decided by the kernel). The group's
 *    size is chosen at launch from the row's width (fz_row_lanes, the same
 *    function on the host and the device): a power of two up to 32 lanes
 *    sharing a warp with other rows (reductions by shuffles), or a block of
 *    64 to 1024 threads (warp shuffles, then the warps in order): the
 *    fewest that hold the row, so each thread has its vectors in flight. The
 *    statements are written three times: the vector path, bounds checked per
 *    4 columns; the vector path of a row wider than the registers hold,
 *    streamed from memory on every walk (4 vectors a thread loaded before
 *    their use, a row loop of its own); and the scalar one (any width, any
 *    alignment), bounds checked per column, its columns past the registers
 *    read again on each walk.
 *  - warp_rows (rows walked once: gemv): a warp per row, 8 rows a block.
 * Grid: enough blocks for every row (capped for a whole-grid fold). */
#include <stdlib.h>
#include <string.h>

#include "cuda/cuda.h"
#include "core/die.h"

static void row_map_body(Cx *cx, int sid, int n, int d);

static int vec_type(ElemType t) { return t == ET_F32 || t == ET_F16 || t == ET_BF16; }

/* A store at (s0.., var) of a row tensor, unmasked, inside a cached walk
 * of the vector path: its four values are collected (fz_ws_T[fz_j]) and
 * stored as one vector after the walk's step. */
int row_store_deferred(Cx *cx, const Stmt *s, char **subs)
{
	const Kernel *k = cx->k;
	const Tensor *x = &cx->m->tensor[s->out];
	if (!cx->rc_var || !cx->rc_vec || !k->par.rcache || s->mask || s->nlhs != k->nspace + 1 || x->rank != k->nspace + 1 ||
	    !vec_type(x->type) || strcmp(subs[k->nspace], cx->rc_var))
		return 0;
	for (int i = 0; i < k->nspace; i++) {
		char sv[16];
		snprintf(sv, sizeof sv, "s%d", i);
		if (strcmp(subs[i], sv)) return 0;
	}
	cx->rc_used[s->out - cx->first_tensor] |= 2;
	return 1;
}

/* a.t_T at (s0.., col) */
static char *row_lin(Cx *cx, int t, const char *col)
{
	const Tensor *x = &cx->m->tensor[t];
	char *subs[MAX_RANK], names[MAX_RANK][24];
	for (int i = 0; i < x->rank; i++) {
		snprintf(names[i], sizeof names[i], "s%d", i);
		subs[i] = i < x->rank - 1 ? names[i] : (char *)col;
	}
	return linear_of(cx, t, subs);
}

static int row_cached(const Cx *cx) { return row_cache_vectors(&cx->k->par, cx->rc_vec); }

/* Steps of a walk over vectors held in fz_rc_T[count][4]: step fz_k covers
 * the 4 columns from fz_c0 = (fz_k * fz_g + fz_lane) * 4 (in the rest of a
 * row past the registers, tail: (fz_kt + fz_k) * fz_g + fz_lane); text is
 * the walk's body for the element at var (fz_c0 + fz_j). On the vector path
 * (fz_v4: the width a multiple of 4) a step is all in the row or all out,
 * and stores collected per step are written as one vector; on the scalar
 * path each column is checked. */
static void walk_steps(Cx *cx, int count, int tail, const char *text, const char *var, int depth)
{
	FILE *out = cx->out;
	const Module *m = cx->m;
	const int v = cx->rc_vec;
	ind(out, depth), fputs("#pragma unroll\n", out);
	ind(out, depth), fprintf(out, "for (int fz_k = 0; fz_k < %d; ++fz_k) {\n", count);
	ind(out, depth + 1), fprintf(out, "const int fz_c0 = (%s * fz_g + fz_lane) * 4;\n", tail ? "(fz_kt + fz_k)" : "fz_k");
	if (v) {
		ind(out, depth + 1), fputs("if (fz_live && fz_c0 < fz_cn) {\n", out);
		for (int t = cx->first_tensor; t < cx->p->last_tensor; t++)
			if (cx->rc_used[t - cx->first_tensor] & 2) ind(out, depth + 1), fprintf(out, "%s fz_ws_%s[4];\n", tensor_device_type(&m->tensor[t]), m->tensor[t].name);
	}
	ind(out, depth + 1), fputs("#pragma unroll\n", out);
	ind(out, depth + 1), fputs("for (int fz_j = 0; fz_j < 4; ++fz_j) {\n", out);
	ind(out, depth + 2), fprintf(out, "const long long %s = fz_c0 + fz_j;\n", var);
	if (v) ind(out, depth + 2), fputs("{\n", out);
	else ind(out, depth + 2), fprintf(out, "if (fz_live && %s < fz_cn) {\n", var);
	fputs(text, out);
	ind(out, depth + 2), fputs("}\n", out);
	ind(out, depth + 1), fputs("}\n", out);
	for (int t = cx->first_tensor; t < cx->p->last_tensor; t++) {
		if (!(cx->rc_used[t - cx->first_tensor] & 2)) continue;
		const Tensor *x = &m->tensor[t];
		char *lin0 = row_lin(cx, t, "fz_c0");
		const char *v4 = x->type == ET_F32 ? "float4" : "ushort4";
		ind(out, depth + 1), fprintf(out, "*(%s *)&a.t_%s[%s] = make_%s(fz_ws_%s[0], fz_ws_%s[1], fz_ws_%s[2], fz_ws_%s[3]);\n",
		                             v4, x->name, lin0, v4, x->name, x->name, x->name, x->name);
		free(lin0);
	}
	if (v) ind(out, depth + 1), fputs("}\n", out);
	ind(out, depth), fputs("}\n", out);
}

static void cache_fill(Cx *cx, int t, FILE *out, int depth, int count, int tail);

/* The group walks the row: var over the row's columns. With a register
 * cache, on the vector path of a row the registers hold (fz_fit), the
 * cached vectors, four consecutive columns a step; on the vector path of a
 * wider row (rc_stream) every walk reads the row from memory, ROW_STREAM_VECS
 * 16-byte vectors a thread loaded before they are used, into arrays named
 * as the cache's (the same body text); on the scalar path the cached
 * columns, then the rest of the row a column a thread and step (the body
 * written again for a column), as past 2^30 columns on the streaming path. */
void row_loop(Cx *cx, const char *var, RowBody *body, int sid, int n, int depth)
{
	FILE *out = cx->out;
	const Kernel *k = cx->k;
	if (k->par.rcache) {
		const int rc = row_cached(cx), v = cx->rc_vec;
		unsigned char *before = xcalloc((size_t)(cx->p->last_tensor - cx->first_tensor) + 1, 1);
		for (int t = cx->first_tensor; t < cx->p->last_tensor; t++) before[t - cx->first_tensor] = cx->rc_used[t - cx->first_tensor] & 3, cx->rc_used[t - cx->first_tensor] &= (unsigned char)~3;
		char *text = NULL;
		size_t len = 0;
		FILE *bf = xmemstream(&text, &len);
		cx->out = bf;
		cx->rc_var = var;
		body(cx, sid, n, depth + (cx->rc_stream ? 4 : 3)); /* inside the stream loop: one deeper */
		cx->rc_var = NULL;
		fclose(bf);
		cx->out = out;
		if (cx->rc_stream) { /* the whole row from memory, ROW_STREAM_VECS vectors a thread at a time */
			ind(out, depth), fputs("#pragma unroll 1\n", out);
			ind(out, depth), fprintf(out, "for (int fz_kt = 0; fz_kt * 4 * fz_g < fz_cn; fz_kt += %d) {\n", ROW_STREAM_VECS);
			for (int t = cx->first_tensor; t < cx->p->last_tensor; t++)
				if (cx->rc_used[t - cx->first_tensor] & 1) cache_fill(cx, t, out, depth + 1, ROW_STREAM_VECS, 1);
			walk_steps(cx, ROW_STREAM_VECS, 1, text, var, depth + 1);
			ind(out, depth), fputs("}\n", out);
			for (int t = cx->first_tensor; t < cx->p->last_tensor; t++) cx->rc_used[t - cx->first_tensor] &= (unsigned char)~1; /* nothing kept across walks */
		} else {
			walk_steps(cx, rc, 0, text, var, depth);
		}
		for (int t = cx->first_tensor; t < cx->p->last_tensor; t++) cx->rc_used[t - cx->first_tensor] |= before[t - cx->first_tensor];
		free(before), free(text);
		if (v && !cx->rc_stream) return; /* the vector path holds the whole row (fz_fit) */
		if (v) ind(out, depth), fprintf(out, "for (long long %s = (long long)fz_cn + fz_lane; fz_live && %s < ", var, var);
		else ind(out, depth), fprintf(out, "for (long long %s = %dLL * 4 * fz_g + fz_lane; fz_live && %s < ", var, rc, var);
	} else {
		ind(out, depth), fprintf(out, "#pragma unroll %d\n", reduce_unroll(cx));
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

/* The register cache of tensor t's row: row_cached() vectors of 4
 * elements, one 16-byte (f16/bf16: 8-byte) load each on the vector path;
 * tail: count vectors of the rest of the row, from fz_kt. */
static void cache_fill(Cx *cx, int t, FILE *out, int depth, int count, int tail)
{
	const Tensor *x = &cx->m->tensor[t];
	const char *ty = elem_info[x->type].is_float ? (x->type == ET_F64 ? "double" : "float") : ctype(x->type);
	char *lin0 = row_lin(cx, t, "fz_c0"), *lin = row_lin(cx, t, "fz_c0 + fz_j");
	ind(out, depth), fprintf(out, "%s fz_rc_%s[%d][4];%s\n#pragma unroll\n", ty, x->name, count, tail ? " /* the next vector, in place of the registers' */" : "");
	ind(out, depth), fprintf(out, "for (int fz_k = 0; fz_k < %d; ++fz_k) {\n", count);
	ind(out, depth + 1), fprintf(out, "const int fz_c0 = (%s * fz_g + fz_lane) * 4;\n", tail ? "(fz_kt + fz_k)" : "fz_k");
	if (cx->rc_vec && vec_type(x->type) && tail) {
		/* past the row's end the row's first vector, unused: a load
		   under a condition here made ptxas spill */
		char *linc = row_lin(cx, t, "(fz_c0 < fz_cn ? fz_c0 : 0)");
		ind(out, depth + 1), fprintf(out, "fz_ld4%s(&a.t_%s[%s], fz_rc_%s[fz_k]);\n", x->type == ET_F32 ? "" : x->type == ET_F16 ? "h" : "b",
		                             x->name, linc, x->name);
		free(linc);
	} else if (cx->rc_vec && vec_type(x->type)) {
		ind(out, depth + 1), fprintf(out, "if (fz_c0 < fz_cn) fz_ld4%s(&a.t_%s[%s], fz_rc_%s[fz_k]);\n",
		                             x->type == ET_F32 ? "" : x->type == ET_F16 ? "h" : "b", x->name, lin0, x->name);
	} else {
		fputs("#pragma unroll\n", out);
		ind(out, depth + 1), fprintf(out, "for (int fz_j = 0; fz_j < 4; ++fz_j) fz_rc_%s[fz_k][fz_j] = %s < fz_cn ? ", x->name,
		                             cx->rc_vec ? "fz_c0" : "fz_c0 + fz_j");
		load_elem(cx, t, lin, out);
		fputs(" : 0;\n", out);
	}
	ind(out, depth), fputs("}\n", out);
	free(lin0), free(lin);
}

/* The row's statements, in order, into text: which rows they cache and
 * which stores become vectors is known only then (cx->rc_used). */
static char *row_body(Cx *cx, int depth)
{
	const Module *m = cx->m;
	const Kernel *k = cx->k;
	char *body = NULL;
	size_t blen = 0;
	FILE *bf = xmemstream(&body, &blen);
	FILE *keep = cx->out;
	memset(cx->rc_used, 0, (size_t)(cx->p->last_tensor - cx->first_tensor) + 1);
	clear_locals(cx);
	cx->out = bf;
	const Phase *ph = &k->phase[0]; /* the epilogue phase, if any, follows the fold */
	for (int sid = ph->first_stmt; sid < ph->first_stmt + ph->nstmt; sid++) {
		const Stmt *s = &m->stmt[sid];
		const StepOp op = cx->p->op[sid - cx->p->first_stmt];
		if (op == STEP_INLINE) continue; /* computed where it is read */
		bind_point(cx, s, k->nspace);
		if (op == STEP_GRID_REDUCE) {
			emit_tail_accumulate(cx, sid, depth, 1);
		} else if (op == STEP_REDUCE) {
			sid += emit_reductions(cx, sid, depth, 1) - 1;
		} else if (op == STEP_COMPACT) {
			ind(bf, depth), fprintf(bf, "if (%s) {\n", row_leader(cx));
			emit_compact(cx, sid, depth + 1);
			ind(bf, depth), fputs("}\n", bf);
		} else if (op == STEP_MAP || op == STEP_ACCUM) {
			emit_map(cx, sid, depth, 1);
		} else if (op == STEP_ROW_ONCHIP) {
			/* an element of the row that stays on chip: its readers recompute it */
		} else if (op != STEP_ROW_ELEM) {
			die("step %s in row kernel %s", step_op_name[op], k->name);
		} else { /* an element of the row: the group walks the row */
			const Index *ix = &m->index[s->first_index + s->nfree - 1];
			char *var = xasprintf("c_%s", ix->name);
			free(cx->bind[s->first_index + s->nfree - 1 - cx->first_index]);
			cx->bind[s->first_index + s->nfree - 1 - cx->first_index] = xstrdup(var);
			row_loop(cx, var, row_map_body, sid, 1, depth);
			free(var);
			free(cx->local[s->out - cx->first_tensor]);
			cx->local[s->out - cx->first_tensor] = NULL; /* valid inside that loop only */
		}
	}
	fclose(bf);
	cx->out = keep;
	return body;
}

/* The loop over the block's rows, a group of fz_g threads a row */
static void rows_head(Cx *cx)
{
	FILE *out = cx->out;
	fputs("\tfor (long long fz_base = (long long)blockIdx.x * fz_rpb; fz_base < rows; fz_base += (long long)gridDim.x * fz_rpb) {\n", out);
	fputs("\t\tconst bool fz_live = fz_base + threadIdx.x / fz_g < rows; /* else: a spare group of the last block */\n", out);
	fputs("\t\tconst long long row = fz_live ? fz_base + threadIdx.x / fz_g : fz_base;\n", out);
	decompose(cx, "row", 2);
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
	if (!k->par.rcache) {
		char *body = row_body(cx, 2);
		if (k->par.warp_rows) {
			fputs("\tconst int fz_lane = threadIdx.x & 31;\n", out);
			fputs("\tfor (long long row = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5; row < rows; row += ((long long)gridDim.x * blockDim.x) >> 5) {\n", out);
		} else {
			fputs("\tfor (long long row = blockIdx.x; row < rows; row += gridDim.x) {\n", out);
		}
		decompose(cx, "row", 2);
		fputs(body, out);
		free(body);
		fputs("\t}\n", out);
		finish_kernel(cx);
		return;
	}
	/* A row cache: the statements three times, the vector path of a row
	   the registers hold, that of a wider row (streamed on every walk) and
	   the scalar one (any width, any alignment) */
	cx->rc_vec = 1;
	char *vbody = row_body(cx, 3);
	unsigned char *vused = xcalloc((size_t)(cx->p->last_tensor - cx->first_tensor) + 1, 1);
	memcpy(vused, cx->rc_used, (size_t)(cx->p->last_tensor - cx->first_tensor) + 1);
	cx->rc_stream = 1;
	char *wbody = row_body(cx, 3);
	for (int t = cx->first_tensor; t < cx->p->last_tensor; t++) vused[t - cx->first_tensor] |= cx->rc_used[t - cx->first_tensor] & 2; /* its vector stores too */
	cx->rc_stream = 0;
	cx->rc_vec = 0;
	char *sbody = row_body(cx, 3);
	clear_locals(cx);
	fputs("\tconst int fz_g = fz_row_lanes(", out), dim_c(cx, k->inner, out);
	fprintf(out, ", %d); /* threads a row: a power of two */\n", k->par.rcache);
	fputs("\tconst int fz_lane = threadIdx.x & (fz_g - 1);\n", out);
	fputs("\tconst long long fz_rpb = blockDim.x / fz_g; /* rows a block */\n", out);
	fputs("\tconst int fz_cn = ", out), dim_c(cx, k->inner, out), fputs(" < (1LL << 30) ? (int)", out), dim_c(cx, k->inner, out);
	fputs(" : (1 << 30); /* the row's width, against cached columns (under 2^16) */\n", out);
	/* the vector path: the width a multiple of 4, every vector's tensor
	   aligned and its rows too */
	fputs("\tconst bool fz_v4 = (", out), dim_c(cx, k->inner, out), fputs(" & 3) == 0", out);
	for (int t = cx->first_tensor; t < cx->p->last_tensor; t++) {
		const Tensor *x = &m->tensor[t];
		if (!vused[t - cx->first_tensor] || !vec_type(x->type)) continue;
		if (!dim_same(x->dim[x->rank - 1], k->inner))
			fputs(" && (", out), dim_c(cx, x->dim[x->rank - 1], out), fputs(" & 3) == 0", out);
		fprintf(out, " && ((unsigned long long)a.t_%s & %d) == 0", x->name, x->type == ET_F32 ? 15 : 7);
	}
	fputs(";\n", out);
	fputs("\tconst bool fz_fit = ", out), dim_c(cx, k->inner, out);
	fprintf(out, " <= %dLL * 4 * fz_g; /* the registers hold the row (vector path) */\n", row_cache_vectors(&k->par, 1));
	/* the streamed rows in a loop of their own (register allocation) */
	fputs("\tif (fz_v4 && !fz_fit) { /* wider than the registers: streamed on every walk */\n", out);
	rows_head(cx);
	fputs(wbody, out);
	fputs("\t}\n\t} else {\n", out);
	rows_head(cx);
	cx->rc_vec = 1;
	fputs("\t\tif (fz_v4) {\n", out);
	for (int t = cx->first_tensor; t < cx->p->last_tensor; t++)
		if (vused[t - cx->first_tensor] & 1) cache_fill(cx, t, out, 3, row_cached(cx), 0);
	fputs(vbody, out);
	cx->rc_vec = 0;
	fputs("\t\t} else {\n", out);
	for (int t = cx->first_tensor; t < cx->p->last_tensor; t++)
		if (cx->rc_used[t - cx->first_tensor] & 1) cache_fill(cx, t, out, 3, row_cached(cx), 0);
	fputs(sbody, out);
	fputs("\t\t}\n\t}\n\t}\n", out);
	free(vbody), free(wbody), free(sbody), free(vused);
	finish_kernel(cx);
}

static void grid_x(const Module *m, const Fusion *f, const Kernel *k, FILE *out)
{
	char cap[64] = "0";
	if (k->has_tail) snprintf(cap, sizeof cap, "(long long)sm * %d", k->par.min_blocks);
	if (k->par.rcache) {
		fputs("fz_row_grid(", out), host_space_product(m, f, k, out);
		fputs(", ", out), host_dim(f, k->inner, out);
		fprintf(out, ", %d, %s)", k->par.rcache, cap);
		return;
	}
	if (k->par.warp_rows) {
		fputs("fz_grid(32LL * (", out), host_space_product(m, f, k, out);
		fprintf(out, "), %d, %s)", k->par.block, cap);
		return;
	}
	fputs("fz_rows(", out), host_space_product(m, f, k, out);
	fprintf(out, ", %s)", cap);
}

const KernTemplate kern_row = {emit, grid_x, NULL};
