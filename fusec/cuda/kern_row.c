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
 *    With KernelParams.row_paths each path is a __noinline__ function of
 *    its own (ptxas allocates registers per function) and the cached one
 *    is built twice, with rcache vectors and with row_cache_small's for the
 *    rows that need no more; the entry point picks one.
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

/* What every rendering of a cached row kernel starts with: the fold's
   shared words, the rows, the reciprocals of a row over several axes,
   and the group of threads a row (fz_row_lanes, as the launch) */
static void row_prologue(Cx *cx, int tails)
{
	FILE *out = cx->out;
	fputs("\t__shared__ double fz_sh[32];\n", out);
	if (tails) cuda_tail_decls(cx, 1);
	fputs("\tconst long long rows = ", out);
	cuda_space_total(cx, out);
	fputs(";\n", out);
	cuda_row_recips(cx, 1);
	fputs(cx->k->par.row_stream ? "\tconst int fz_g = fz_row_lanes_s(" : "\tconst int fz_g = fz_row_lanes(", out), cuda_row_width(cx, out);
	fprintf(out, ", %d); /* threads a row: a power of two */\n", cx->k->par.rcache);
	fputs("\tconst int fz_lane = threadIdx.x & (fz_g - 1);\n", out);
	fputs("\tconst long long fz_rpb = blockDim.x >> (__ffs(fz_g) - 1); /* rows a block (fz_g a power of two: no division) */\n", out);
	fputs("\tconst int fz_cn = ", out), cuda_row_width(cx, out), fputs(" < (1LL << 30) ? (int)", out), cuda_row_width(cx, out);
	fputs(" : (1 << 30); /* the row's width, against cached columns (under 2^16) */\n", out);
}

/* fz_v4 and fz_fit, which pick the path: the vector path where the width
   is a multiple of 4, every vector's tensor aligned and its rows too;
   peeled (Kernel.peel), any width and alignment where a row has a lane
   for each of its edge columns (up to 3 each side: 8 lanes) and the
   vector tensors' pointers are as far from a boundary, in elements, as
   the first one's (ref); the rows the registers hold (fz_fit) cached */
static void row_path_flags(Cx *cx, const unsigned char *vused, int ref)
{
	const Module *m = cx->m;
	const Kernel *k = cx->k;
	FILE *out = cx->out;
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
}

/* The three paths' row loops. path: ROW_STREAMED, ROW_CACHED, ROW_SCALAR
   alone (a function each), or ROW_ALL: the three in one body, chosen by
   fz_v4 and fz_fit (a kernel with a whole-grid fold, whose partials live
   across the paths, and a pipeline's phase) */
enum { ROW_STREAMED = 1, ROW_CACHED = 2, ROW_SCALAR = 4, ROW_ALL = 7 };

static void row_paths(Cx *cx, int path, const char *const body[3], const unsigned char *vused, int ref)
{
	const Kernel *k = cx->k;
	FILE *out = cx->out;
	if (path & ROW_STREAMED) {
		if (path != ROW_STREAMED) fputs("\tif (fz_v4 && !fz_fit) { /* wider than the registers: streamed on every walk */\n", out);
		rows_head(cx);
		if (k->peel) cuda_row_peel_bounds(cx, ref, 0, 2);
		fputs(body[0], out);
		fputs(path != ROW_STREAMED ? "\t}\n\t} else {\n" : "\t}\n", out);
	}
	if (!(path & (ROW_CACHED | ROW_SCALAR))) return;
	rows_head(cx);
	if (path & ROW_CACHED) {
		cx->rc_vec = 1;
		cx->rc_peel = k->peel;
		if (path & ROW_SCALAR) fputs("\t\tif (fz_v4) {\n", out);
		if (k->peel) cuda_row_peel_bounds(cx, ref, 1, 3);
		for (int t = cx->first_tensor; t < cx->p->last_tensor; t++)
			if (vused[t - cx->first_tensor] & 1) cuda_row_cache_fill(cx, t, out, 3, cuda_row_cached(cx), 0);
		fputs(body[1], out);
		cx->rc_vec = 0;
		cx->rc_peel = 0;
		if (path & ROW_SCALAR) fputs("\t\t} else {\n", out);
	}
	if (path & ROW_SCALAR) {
		/* the scalar body was rendered last: cx->rc_used is its own */
		for (int t = cx->first_tensor; t < cx->p->last_tensor; t++)
			if (cx->rc_used[t - cx->first_tensor] & 1) cuda_row_cache_fill(cx, t, out, 3, cuda_row_cached(cx), 0);
		fputs(body[2], out);
		if (path & ROW_CACHED) fputs("\t\t}\n", out);
	}
	fputs(path & ROW_STREAMED ? "\t}\n\t}\n" : "\t}\n", out);
}

/* The path functions' names: streamed, cached (rcache slots, or the
   small cache's), scalar; fz_ names are fusec's own */
static void row_path_name(const Kernel *k, int path, int slots, FILE *out)
{
	if (path == ROW_CACHED) fprintf(out, "fz_vc%d_%s", slots, k->name);
	else fprintf(out, "fz_%s_%s", path == ROW_STREAMED ? "vs" : "sc", k->name);
}

static void row_path_fn(Cx *cx, int path, int slots, const char *const body[3], const unsigned char *vused, int ref)
{
	FILE *out = cx->out;
	fputs("static __device__ __noinline__ void ", out), row_path_name(cx->k, path, slots, out);
	fprintf(out, "(const fz_%s_args a)\n{\n", cx->m->fusion[cx->fusion].name);
	row_prologue(cx, 0);
	cx->rc_slots = slots;
	row_paths(cx, path, body, vused, ref);
	cx->rc_slots = 0;
	fputs("}\n\n", out);
}

void cuda_kern_row(Cx *cx)
{
	const Module *m = cx->m;
	const Kernel *k = cx->k;
	FILE *out = cx->out;
	if (!k->par.rcache) {
		cuda_kernel_head(cx);
		fputs("\t__shared__ double fz_sh[32];\n", out);
		cuda_tail_decls(cx, 1);
		fputs("\tconst long long rows = ", out);
		cuda_space_total(cx, out);
		fputs(";\n", out);
		cuda_row_recips(cx, 1);
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
	   wider than the registers hold (streamed on every walk), that of a
	   row they hold, and the scalar one (any width, any alignment); split
	   into functions, the cached path again with the small cache */
	const int split = k->par.row_paths && !cx->persist && !k->has_tail, small = split ? row_cache_small(&k->par) : 0;
	cx->rc_vec = 1;
	cx->rc_peel = k->peel;
	char *body[3], *sbody = NULL;
	if (small) {
		cx->rc_slots = small;
		sbody = row_body(cx, 3);
		cx->rc_slots = 0;
	}
	body[1] = row_body(cx, 3);
	unsigned char *vused = xcalloc((size_t)(cx->p->last_tensor - cx->first_tensor) + 1, 1);
	memcpy(vused, cx->rc_used, (size_t)(cx->p->last_tensor - cx->first_tensor) + 1);
	cx->rc_stream = 1;
	body[0] = row_body(cx, 3);
	for (int t = cx->first_tensor; t < cx->p->last_tensor; t++) vused[t - cx->first_tensor] |= cx->rc_used[t - cx->first_tensor] & 2; /* its vector stores too */
	cx->rc_stream = 0;
	cx->rc_vec = 0;
	cx->rc_peel = 0;
	body[2] = row_body(cx, 3);
	cuda_clear_locals(cx);
	int ref = -1;
	for (int t = cx->first_tensor; t < cx->p->last_tensor && k->peel && ref < 0; t++)
		if (vused[t - cx->first_tensor] && cuda_row_vec_type(m->tensor[t].type)) ref = t;
	if (!split) { /* a whole-grid fold's partials live across the paths; a pipeline's phase */
		cuda_kernel_head(cx);
		row_prologue(cx, 1);
		row_path_flags(cx, vused, ref);
		row_paths(cx, ROW_ALL, (const char *const *)body, vused, ref);
	} else {
		/* Each path a function of its own, not inlined: ptxas allocates
		   registers per function, so the row's cache is not held beside
		   the registers of the paths a launch does not take (logsumexp,
		   sm_90a, capped at 40 registers: 92 bytes spilled as one body;
		   its path of 4 cached vectors alone, none). The call is made
		   once a thread. */
		row_path_fn(cx, ROW_STREAMED, 0, (const char *const *)body, vused, ref);
		if (small) {
			const char *sb[3] = {body[0], sbody, body[2]};
			row_path_fn(cx, ROW_CACHED, small, sb, vused, ref);
		}
		row_path_fn(cx, ROW_CACHED, k->par.rcache, (const char *const *)body, vused, ref);
		row_path_fn(cx, ROW_SCALAR, 0, (const char *const *)body, vused, ref);
		cuda_kernel_head(cx);
		fputs(cx->k->par.row_stream ? "\tconst int fz_g = fz_row_lanes_s(" : "\tconst int fz_g = fz_row_lanes(", out), cuda_row_width(cx, out);
		fprintf(out, ", %d); /* threads a row: a power of two */\n", k->par.rcache);
		row_path_flags(cx, vused, ref);
		fputs("\tif (fz_v4 && !fz_fit) ", out), row_path_name(k, ROW_STREAMED, 0, out), fputs("(a);\n", out);
		if (small) {
			fputs("\telse if (fz_v4 && ", out), cuda_row_width(cx, out);
			fprintf(out, " <= %dLL * 4 * fz_g) ", small), row_path_name(k, ROW_CACHED, small, out), fputs("(a);\n", out);
		}
		fputs("\telse if (fz_v4) ", out), row_path_name(k, ROW_CACHED, k->par.rcache, out), fputs("(a);\n", out);
		fputs("\telse ", out), row_path_name(k, ROW_SCALAR, 0, out), fputs("(a);\n", out);
	}
	free(body[0]), free(body[1]), free(body[2]), free(sbody), free(vused);
	cuda_finish_kernel(cx);
}
