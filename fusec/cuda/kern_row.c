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
 *    read again on each walk. Peeled (Kernel.peel), both vector paths take
 *    rows of any width and alignment: a row's vectors start at its head fz_h
 *    (its columns before the first vector boundary) and end at fz_cb, and its
 *    edges, the head and the columns after fz_cb (fz_ne, at most 6 where
 *    cached), are a column a lane, cached in fz_re_T or read on each walk;
 *    the scalar path is left for tensors whose pointers lie at different
 *    offsets from a boundary, and for rows with fewer than 8 lanes (at most
 *    16 * rcache columns) unless they are aligned and a multiple of 4 wide.
 *  - warp_rows (rows walked once: gemv): a warp per row, 8 rows a block.
 * Grid: enough blocks for every row (capped for a whole-grid fold). */
#include <stdlib.h>
#include <string.h>

#include "cuda/cuda.h"
#include "core/die.h"

static void row_map_body(Cx *cx, int sid, int n, int d);


static void row_map_body(Cx *cx, int sid, int n, int d)
{
	(void)n;
	cuda_map(cx, sid, d, 0);
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
	cuda_clear_locals(cx);
	cx->out = bf;
	const Phase *ph = &k->phase[0]; /* the epilogue phase, if any, follows the fold */
	for (int sid = ph->first_stmt; sid < ph->first_stmt + ph->nstmt; sid++) {
		const Stmt *s = &m->stmt[sid];
		const StepOp op = cx->p->op[sid - cx->p->first_stmt];
		if (op == STEP_INLINE) continue; /* computed where it is read */
		cuda_bind_point(cx, s, k->nspace);
		if (op == STEP_GRID_REDUCE) {
			cuda_tail_accumulate(cx, sid, depth, 1);
		} else if (op == STEP_REDUCE) {
			sid += cuda_reductions(cx, sid, depth, 1) - 1;
		} else if (op == STEP_COMPACT) {
			cuda_ind(bf, depth), fprintf(bf, "if (%s) {\n", row_leader(cx));
			cuda_compact(cx, sid, depth + 1);
			cuda_ind(bf, depth), fputs("}\n", bf);
		} else if (op == STEP_MAP || op == STEP_ACCUM) {
			cuda_map(cx, sid, depth, 1);
		} else if (op == STEP_ROW_ONCHIP) {
			/* an element of the row that stays on chip: its readers recompute it */
		} else if (op != STEP_ROW_ELEM) {
			die("step %s in row kernel %s", step_op_name[op], k->name);
		} else { /* an element of the row: the group walks the row */
			const Index *ix = &m->index[s->first_index + s->nfree - 1];
			const int ix0 = s->first_index + s->nfree - k->ninner;
			char *var = xasprintf("c_%s", ix->name);
			cuda_row_bind(cx, ix0, var);
			cuda_row_loop(cx, var, row_map_body, sid, 1, depth);
			/* closed with its loop, as the reductions' walks are: an open
			   walk stays in cx->row_ix for every later walk of this body,
			   of the body's other two renderings (rcache) and of the
			   schedule's later kernels, until the table overflows */
			cuda_row_unbind(cx, ix0);
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
	cuda_decompose(cx, "row", 2);
}

void cuda_kern_row(Cx *cx)
{
	const Module *m = cx->m;
	const Kernel *k = cx->k;
	FILE *out = cx->out;
	cuda_kernel_head(cx);
	fputs("\t__shared__ double fz_sh[32];\n", out);
	cuda_tail_decls(cx, 1);
	fputs("\tconst long long rows = ", out);
	cuda_space_total(cx, out);
	fputs(";\n", out);
	cuda_row_recips(cx, 1);
	if (!k->par.rcache) {
		char *body = row_body(cx, 2);
		if (k->par.warp_rows) {
			fputs("\tconst int fz_lane = threadIdx.x & 31;\n", out);
			fputs("\tfor (long long row = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5; row < rows; row += ((long long)gridDim.x * blockDim.x) >> 5) {\n", out);
		} else {
			fputs("\tfor (long long row = blockIdx.x; row < rows; row += gridDim.x) {\n", out);
		}
		cuda_decompose(cx, "row", 2);
		fputs(body, out);
		free(body);
		fputs("\t}\n", out);
		cuda_finish_kernel(cx);
		return;
	}
	/* A row cache: the statements three times, the vector path of a row
	   the registers hold, that of a wider row (streamed on every walk) and
	   the scalar one (any width, any alignment) */
	cx->rc_vec = 1;
	cx->rc_peel = k->peel;
	char *vbody = row_body(cx, 3);
	unsigned char *vused = xcalloc((size_t)(cx->p->last_tensor - cx->first_tensor) + 1, 1);
	memcpy(vused, cx->rc_used, (size_t)(cx->p->last_tensor - cx->first_tensor) + 1);
	cx->rc_stream = 1;
	char *wbody = row_body(cx, 3);
	for (int t = cx->first_tensor; t < cx->p->last_tensor; t++) vused[t - cx->first_tensor] |= cx->rc_used[t - cx->first_tensor] & 2; /* its vector stores too */
	cx->rc_stream = 0;
	cx->rc_vec = 0;
	cx->rc_peel = 0;
	char *sbody = row_body(cx, 3);
	cuda_clear_locals(cx);
	fputs("\tconst int fz_g = fz_row_lanes(", out), cuda_row_width(cx, out);
	fprintf(out, ", %d); /* threads a row: a power of two */\n", k->par.rcache);
	fputs("\tconst int fz_lane = threadIdx.x & (fz_g - 1);\n", out);
	fputs("\tconst long long fz_rpb = blockDim.x / fz_g; /* rows a block */\n", out);
	fputs("\tconst int fz_cn = ", out), cuda_row_width(cx, out), fputs(" < (1LL << 30) ? (int)", out), cuda_row_width(cx, out);
	fputs(" : (1 << 30); /* the row's width, against cached columns (under 2^16) */\n", out);
	/* the vector path: the width a multiple of 4, every vector's tensor
	   aligned and its rows too; peeled (Kernel.peel), any width and
	   alignment where a row has a lane for each of its edge columns (up
	   to 3 each side: 8 lanes) and the vector tensors' pointers are as
	   far from a boundary, in elements, as the first one's (ref) */
	int ref = -1;
	for (int t = cx->first_tensor; t < cx->p->last_tensor && k->peel && ref < 0; t++)
		if (vused[t - cx->first_tensor] && cuda_row_vec_type(m->tensor[t].type)) ref = t;
	fputs("\tconst bool fz_v4 = ", out), fputs(k->peel ? "(((" : "(", out), cuda_row_width(cx, out), fputs(" & 3) == 0", out);
	if (k->lead) fputs(" && (", out), cuda_row_segment(cx, out), fputs(" & 3) == 0", out); /* no vector across segments */
	for (int t = cx->first_tensor; t < cx->p->last_tensor; t++) {
		const Tensor *x = &m->tensor[t];
		if (!vused[t - cx->first_tensor] || !cuda_row_vec_type(x->type)) continue;
		if (k->ninner == 1 && !dim_same(x->dim[x->rank - 1], k->inner[0])) /* several: the row's own, checked */
			fputs(" && (", out), cuda_dim(cx, x->dim[x->rank - 1], out), fputs(" & 3) == 0", out);
		if (!k->peel) fprintf(out, " && ((unsigned long long)a.t_%s & %d) == 0", x->name, cuda_vec4_mask(x->type));
	}
	if (k->peel) {
		if (ref >= 0) fputs(" && ", out), cuda_row_residue(&m->tensor[ref], out), fputs(" == 0", out);
		fputs(") || fz_g >= 8)", out);
		for (int t = ref + 1; ref >= 0 && t < cx->p->last_tensor; t++)
			if (vused[t - cx->first_tensor] && cuda_row_vec_type(m->tensor[t].type))
				fputs(" && ", out), cuda_row_residue(&m->tensor[t], out), fputs(" == ", out), cuda_row_residue(&m->tensor[ref], out);
	}
	fputs(";\n", out);
	fputs("\tconst bool fz_fit = ", out), cuda_row_width(cx, out);
	fprintf(out, " <= %dLL * 4 * fz_g; /* the registers hold the row (vector path) */\n", row_cache_vectors(&k->par, 1));
	/* the streamed rows in a loop of their own (register allocation) */
	fputs("\tif (fz_v4 && !fz_fit) { /* wider than the registers: streamed on every walk */\n", out);
	rows_head(cx);
	if (k->peel) cuda_row_peel_bounds(cx, ref, 0, 2);
	fputs(wbody, out);
	fputs("\t}\n\t} else {\n", out);
	rows_head(cx);
	cx->rc_vec = 1;
	cx->rc_peel = k->peel;
	fputs("\t\tif (fz_v4) {\n", out);
	if (k->peel) cuda_row_peel_bounds(cx, ref, 1, 3);
	for (int t = cx->first_tensor; t < cx->p->last_tensor; t++)
		if (vused[t - cx->first_tensor] & 1) cuda_row_cache_fill(cx, t, out, 3, cuda_row_cached(cx), 0);
	fputs(vbody, out);
	cx->rc_vec = 0;
	cx->rc_peel = 0;
	fputs("\t\t} else {\n", out);
	for (int t = cx->first_tensor; t < cx->p->last_tensor; t++)
		if (cx->rc_used[t - cx->first_tensor] & 1) cuda_row_cache_fill(cx, t, out, 3, cuda_row_cached(cx), 0);
	fputs(sbody, out);
	fputs("\t\t}\n\t}\n\t}\n", out);
	free(vbody), free(wbody), free(sbody), free(vused);
	cuda_finish_kernel(cx);
}

