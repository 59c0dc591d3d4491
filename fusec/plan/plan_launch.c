/* Launch parameters the built-in rules choose for each kernel: points a
 * thread, warps a point, rows a block and their register cache, blocks an
 * SM (so a register cap), and a contraction's tiles (plan_tile.c). */
#include "plan/plan_impl.h"

#include <stdlib.h>

#include "core/die.h"

/* a*i + b with a in 2..4 and 0 <= b < a whole constants, i index ix: a
   (*b its offset), else 0 */
static int affine_in(const Module *m, int e, int ix, int *b)
{
	const Expr *x = &m->expr[e];
	*b = 0;
	if (x->op == IR_ADD) {
		const Expr *l = &m->expr[x->a], *r = &m->expr[x->b];
		const Expr *c = l->op == IR_CONST ? l : r->op == IR_CONST ? r : NULL;
		if (!c || c->value != (double)(long long)c->value) return 0;
		int b0;
		const int a = affine_in(m, c == l ? x->b : x->a, ix, &b0);
		if (!a || b0 || c->value < 0 || c->value >= a) return 0;
		*b = (int)c->value;
		return a;
	}
	if (x->op != IR_MUL) return 0;
	const Expr *l = &m->expr[x->a], *r = &m->expr[x->b];
	const Expr *c = l->op == IR_CONST ? l : r->op == IR_CONST ? r : NULL, *i = c == l ? r : l;
	if (!c || i->op != IR_INDEX || i->index != ix || c->value != (double)(long long)c->value || c->value < 2 || c->value > 4) return 0;
	return (int)c->value;
}

/* the stride a of e's reads of t whose last subscript is a*i + b, i index
   ix (found: *a set; another stride than *a's: -1) */
static void gather_reads(const Module *m, int e, int t, int ix, int *a)
{
	if (!e || *a < 0) return;
	const Expr *x = &m->expr[e];
	if (x->op == IR_LOAD) {
		int b, s = x->tensor == t && x->nargs == m->tensor[t].rank ? affine_in(m, x->args[x->nargs - 1], ix, &b) : 0;
		if (s) *a = *a && *a != s ? -1 : s;
		for (int i = 0; i < x->nargs; i++) gather_reads(m, x->args[i], t, ix, a);
		return;
	}
	gather_reads(m, x->a, t, ix, a), gather_reads(m, x->b, t, ix, a), gather_reads(m, x->c, t, ix, a);
}

/* A gather at an affine index along the space's innermost one (the odd
 * columns of a matrix, x(r, 2*h + 1)): the 4 copies of a vector path read
 * a elements apart, within a 16-byte vectors of t from a * i (the kernel
 * checks that its rows are aligned and at least a times as long as the
 * space's innermost extent). The stride, 2 to 4, when the kernel's own
 * maps read t so with one stride; else 0. */
static int gather_stride(const Module *m, const Kernel *k, int t)
{
	if (m->tensor[t].kind != TK_INPUT) return 0;
	int a = 0;
	for (int sid = k->first_stmt; sid < k->first_stmt + k->nstmt; sid++) {
		const Stmt *s = &m->stmt[sid];
		if (s->red != RED_NONE || s->nfree != k->nspace) continue;
		const int ix = s->first_index + k->nspace - 1;
		gather_reads(m, s->rhs, t, ix, &a), gather_reads(m, s->mask, t, ix, &a);
	}
	return a > 1 ? a : 0;
}

/* The statements a kernel's walks run: its own, and producers inlined into
 * the variant (STEP_INLINE), which the walks recompute where they are read */
static int runs_in(const Schedule *p, const Kernel *k, int sid)
{
	return (sid >= k->first_stmt && sid < k->first_stmt + k->nstmt) || p->op[sid - p->first_stmt] == STEP_INLINE;
}

/* the tensors the statements k runs read or write, marked at [t - first_tensor] (freed by the caller) */
static unsigned char *touched_by(const Module *m, const Schedule *p, const Kernel *k)
{
	unsigned char *touched = xcalloc((size_t)(p->last_tensor - p->first_tensor) + 1, 1);
	for (int sid = p->first_stmt; sid < p->last_stmt; sid++) {
		if (!runs_in(p, k, sid)) continue;
		touched[m->stmt[sid].out - p->first_tensor] = 1;
		plan_mark_reads(m, &m->stmt[sid], touched, p->first_tensor);
	}
	return touched;
}

/* a producer inlined into the variant over n free indices (a row kernel's
 * space and row: recomputed along the row on every walk) */
static int inlined_over(const Module *m, const Schedule *p, int sid, int n)
{
	return p->op[sid - p->first_stmt] == STEP_INLINE && m->stmt[sid].nfree == n;
}

/* A POINT kernel's vector path: four consecutive points a thread, so an f32
 * (f16, bf16: 8-byte) tensor along the space's innermost extent (the same dimension, derived
 * ones too: C/2 is not C) that the kernel touches (its statements, or one
 * inlined into the variant: its readers compute it where they are), read
 * or written at the point, is one 16-byte access for the four
 * (bench/proto/NOTES.md). */
static void vec_tensors(const Module *m, const Schedule *p, Kernel *k)
{
	if (k->nspace < 1) return;
	const Dim e = k->space[k->nspace - 1];
	unsigned char *touched = touched_by(m, p, k); /* t at [t - first_tensor] */
	k->vec_tensors = xcalloc((size_t)(p->last_tensor - p->first_tensor) + 1, sizeof *k->vec_tensors);
	int *stride = xcalloc((size_t)(p->last_tensor - p->first_tensor) + 1, sizeof *stride), strided = 0;
	for (int t = p->first_tensor; t < p->last_tensor; t++) {
		const Tensor *x = &m->tensor[t];
		if (!touched[t - p->first_tensor] || !(x->type == ET_F32 || x->type == ET_F16 || x->type == ET_BF16) || x->rank < 1) continue;
		const int a = dim_same(x->dim[x->rank - 1], e) ? 1 : gather_stride(m, k, t);
		if (a) stride[k->nvec] = a, k->vec_tensors[k->nvec++] = t, strided |= a > 1;
	}
	free(touched);
	if (strided) k->vec_stride = stride;
	else free(stride);
	if (!k->nvec) free(k->vec_tensors), k->vec_tensors = NULL;
}

/* Loads and stores of a point kernel's vector tensors (an in-place one
 * counts twice), its statements' and those inlined into them: past 5 the
 * vector paths' values alone fill 40 registers (adamw_bf16's 7 spilled 16
 * bytes there, adamw_f32's 7 as well; rotary_bf16's 5, with its partner,
 * did not), so such a kernel keeps the unrolled fallback and its bound. */
static int vec_accesses(const Module *m, const Schedule *p, const Kernel *k)
{
	int n = 0;
	for (int v = 0; v < k->nvec; v++) {
		int rd = 0, wr = 0;
		for (int sid = p->first_stmt; sid < p->last_stmt; sid++) {
			if (!runs_in(p, k, sid)) continue;
			wr |= m->stmt[sid].out == k->vec_tensors[v];
			rd |= plan_stmt_reads(m, &m->stmt[sid], k->vec_tensors[v]);
		}
		n += rd + wr;
	}
	return n;
}

/* Does a walk of row kernel k recompute a producer inlined into the
 * variant (STEP_INLINE) that reads, along the row, a tensor the cache does
 * not hold (a mask M(t,s) broadcast over the batch of a softmax's rows)?
 * Each walk loads it beside the cached row. As one body such a kernel
 * spilled (softmax_scaled_masked: 72 bytes at 64 registers); its cached
 * path of 4 vectors alone, none (ptxas -v, sm_90a), and it ran 18% faster
 * (0.420 -> 0.344 ms, H200, unvalidated run). Such a kernel's paths are
 * functions of their own (KernelParams.row_paths); for kernels that did
 * not spill the call cost time (logsumexp_8192 8%, rmsnorm_bf16 17%). */
static int row_recomputes_loads(const Module *m, const Schedule *p, const Kernel *k)
{
	const int n = k->nspace + k->ninner;
	for (int sid = p->first_stmt; sid < p->last_stmt; sid++) {
		const Stmt *P = &m->stmt[sid];
		if (!inlined_over(m, p, sid, n)) continue;
		int loads = 0, read = 0;
		for (int t = p->first_tensor; t < p->last_tensor; t++) {
			const Tensor *x = &m->tensor[t];
			if (x->kind == TK_INPUT && x->rank == n) continue; /* a row the cache holds */
			loads += x->rank >= 1 && dim_same(x->dim[x->rank - 1], k->inner[k->ninner - 1]) && plan_stmt_reads(m, P, t);
		}
		for (int u = k->first_stmt; u < k->first_stmt + k->nstmt && !read; u++) read = plan_stmt_reads(m, &m->stmt[u], P->out);
		if (loads && read) return 1;
	}
	return 0;
}

/* Does s read row t, itself or through a producer inlined into the
 * variant (STEP_INLINE) over the row's space? The walks recompute such a
 * producer from its rows, so they are cached as s's own are: a residual
 * add h = X + Res before a layer norm caches X and Res, each rcache
 * vectors a thread, and the cache is sized for both (counted as one, the
 * cached path of rc_1_8 of randchain.py --seed 1 spilled 264 bytes at 64
 * registers; sized for two, none: ptxas -v, sm_90a). */
static int row_reads(const Module *m, const Schedule *p, const Stmt *s, int t, int n)
{
	if (plan_stmt_reads(m, s, t)) return 1;
	for (int sid = p->first_stmt; sid < p->last_stmt; sid++) {
		const Stmt *P = &m->stmt[sid];
		if (inlined_over(m, p, sid, n) && P != s && plan_stmt_reads(m, P, t) && plan_stmt_reads(m, s, P->out))
			return 1;
	}
	return 0;
}

/* A row cache's vector path for rows of any width and alignment
 * (Kernel.peel): each row's head up to its first 16-byte boundary (8-byte
 * for f16/bf16) and its tail, under 4 columns, a column a thread, the rest
 * as vectors of 4 (log_softmax over 50257 columns took the scalar path,
 * its columns past the third of the registers read again on every walk).
 * Every row of the kernel must start at the same offset from a boundary:
 * the tensors over the kernel's space and row (those its statements, or
 * statements inlined into the variant, read or write) alike in every axis
 * but the first, so each row starts at the same element of each; the
 * kernel checks that their pointers agree too, then peels by the first
 * one's row. Not for rows in segments (Kernel.lead): each segment has a
 * head of its own. */
static int row_peel(const Module *m, const Schedule *p, const Kernel *k)
{
	if (k->lead) return 0;
	const int n = k->nspace + k->ninner;
	unsigned char *touched = touched_by(m, p, k); /* t at [t - first_tensor] */
	const Tensor *ref = NULL;
	int ok = 1, vec = 0;
	for (int t = p->first_tensor; t < p->last_tensor && ok; t++) {
		const Tensor *x = &m->tensor[t];
		if (!touched[t - p->first_tensor] || x->rank != n) continue;
		vec |= x->type == ET_F32 || x->type == ET_F16 || x->type == ET_BF16;
		if (!ref) ref = x;
		for (int i = 1; i < n && ok; i++) ok = dim_same(x->dim[i], ref->dim[i]);
	}
	free(touched);
	return ok && vec;
}

/* Does e read, along the row (at one of the row's inner indices ix0..),
   a tensor that is not a row of the kernel (gemv's x(n))? */
static int row_vector_in(const Module *m, const Kernel *k, int e, int ix0)
{
	if (!e) return 0;
	const Expr *x = &m->expr[e];
	if (x->op == IR_LOAD) {
		const int row = m->tensor[x->tensor].rank == k->nspace + k->ninner;
		for (int i = 0; i < x->nargs; i++) {
			for (int j = 0; j < k->ninner && !row; j++)
				if (ir_expr_uses_index(m, x->args[i], ix0 + j)) return 1;
			if (row_vector_in(m, k, x->args[i], ix0)) return 1;
		}
		return 0;
	}
	return row_vector_in(m, k, x->a, ix0) || row_vector_in(m, k, x->b, ix0) || row_vector_in(m, k, x->c, ix0);
}

/* A row kernel walking its rows once: a broadcast vector read along them
   (gemv's W(m,n) x(n)) keeps it a warp a row, 8 rows a block (measured
   so, 2026-11-23); rows alone (a row sum, a row max) take the row
   template, whose group is sized by the width at launch: rows of 32
   were a warp each, 4-byte loads (3.0-3.5x torch.compile, H200), and rows
   of 65536 a warp streaming 256 KB (1.8-8.8x). */
static int reads_row_vector(const Module *m, const Kernel *k)
{
	for (int sid = k->first_stmt; sid < k->first_stmt + k->nstmt; sid++) {
		/* a reduction's reduced indices, or an element's last free ones:
		   both after the kernel's space */
		const Stmt *s = &m->stmt[sid];
		const int ix0 = s->first_index + k->nspace;
		if (row_vector_in(m, k, s->rhs, ix0) || row_vector_in(m, k, s->mask, ix0)) return 1;
	}
	return 0;
}

static int scatter_ragged(const Module *m, const Kernel *k)
{
	const Stmt *s = &m->stmt[k->first_stmt];
	for (int i = 0; i < s->nindex; i++)
		if (m->index[s->first_index + i].kind == IX_RAGGED) return 1;
	return 0;
}

void plan_launch(const Module *m, Schedule *p, const unsigned char *stored)
{
	/* Schedules: pointwise kernels take several points a thread so their
	 * loads are in flight together; kernels that loop over a reduced index
	 * split each point's loop over 32 warps (32 points a block) and merge
	 * the partial results in a fixed order. */
	for (int i = 0; i < p->nk; i++) {
		Kernel *k = &p->k[i];
		k->par.unroll = k->par.slices = 1;
		k->par.red_unroll = 4; /* reduction loops: 4 copies (a pipeline's phases: 32, plan_pipe.c) */
		/* a warp over a ragged range (CSR rows): 4 items a lane, their loads
		   in flight together before the atomics (cuda_kern_scatter) */
		if (k->mode == KM_SCATTER && scatter_ragged(m, k)) k->par.unroll = 4;
		if (k->mode != KM_POINT) continue;
		int loops = 0, simple = 1, compact = 0;
		for (int sid = k->first_stmt; sid < k->first_stmt + k->nstmt; sid++) {
			const Stmt *s = &m->stmt[sid];
			if (s->red >= RED_SUM && s->red <= RED_KMIN && !plan_is_grid_reduction(s)) loops = 1;
			/* a masked map too: its stores wait for the copies' loads with
			   their masks kept (cuda_map) */
			if (s->red == RED_ACCUM) simple = 0;
			if (s->pattern == PAT_COMPACT) compact = 1;
		}
		if (loops) k->par.slices = 32, k->par.block = 1024;
		else if (simple) k->par.unroll = 4;
		/* 16-byte accesses along the innermost index (bench/proto/NOTES.md:
		   maps and map-reduces at 99-101% of the copy floor that way); a
		   compaction's slots are claimed per point, so it keeps the strided copies */
		if (k->par.unroll == 4 && !compact) k->par.vec = 4, vec_tensors(m, p, k);
		/* 16-bit vector tensors: 8 points a thread first, 16-byte accesses
		   (with 8 bytes a thread in flight bcast_col_f16 was latency-bound,
		   66% of the copy floor, H200); then 4, then the strided copies */
		for (int t = 0; t < k->nvec && k->nvec <= 4; t++) /* more: adamw_bf16's 7 lost 8% (registers) */
			if (elem_info[m->tensor[k->vec_tensors[t]].type].bytes == 2) k->par.vec = 8;
		/* the strided fallback (misaligned pointers, odd extents) one point
		   at a time: its four copies' coordinates set the whole kernel's
		   registers, 44-58 where each vector path alone needs 28-32 */
		if (k->par.vec && k->nvec && vec_accesses(m, p, k) <= 5) k->par.unroll = 1;
	}

	/* A row walked more than once (softmax: max, sum, normalise) is read
	 * from memory once, into registers: each thread keeps rcache vectors of
	 * 4 consecutive elements of every input row it walks (16-byte loads for
	 * f32), 24 registers of them in all (bench/proto/NOTES.md: 8 vectors a
	 * thread at 8192 f32 columns reached 98% of the copy floor; 8 spilled
	 * here beside the scalar path). How many
	 * threads share a row is decided at launch from the row's width
	 * (fz_row_lanes: 2 to 32 lanes of a warp, or a block of 256 to 1024),
	 * so rows of up to 1024 * 4 * rcache elements are read once. A wider
	 * row is read again on every walk: on the vector path streamed whole,
	 * ROW_STREAM_VECS 16-byte loads a thread issued before their use (a
	 * loop of its own, so the cache's registers are free; a row of up to
	 * 256 KB an SM mostly comes back from L2); on the scalar path the
	 * cached columns, then the rest a column at a time. 64 registers a thread
	 * (1024 threads an SM): enough for the cache on the vector path, whose
	 * bounds are checked per vector; the scalar path caches a third. The
	 * vector path takes rows of any width and alignment where they can be
	 * peeled (row_peel). */
	for (int i = 0; i < p->nk; i++) {
		Kernel *k = &p->k[i];
		if (k->mode != KM_ROW) continue;
		int walks = 0, regs = 0;
		unsigned char *seen = xcalloc((size_t)(p->last_tensor - p->first_tensor) + 1, 1); /* t at [t - first_tensor] */
		for (int sid = k->first_stmt; sid < k->first_stmt + k->nstmt; sid++) {
			const Stmt *s = &m->stmt[sid];
			int walk = (s->nfree == k->nspace + k->ninner && stored[s->out - p->first_tensor]) ||
			           (s->red >= RED_SUM && s->red <= RED_MIN && s->nfree == k->nspace);
			walks += walk;
			if (s->nfree != k->nspace + k->ninner && !walk) continue;
			for (int t = p->first_tensor; t < p->last_tensor; t++) /* the rows it may cache: inputs of rank space + 1, read or recomputed */
				if (!seen[t - p->first_tensor] && m->tensor[t].kind == TK_INPUT && m->tensor[t].rank == k->nspace + k->ninner && row_reads(m, p, s, t, k->nspace + k->ninner))
					seen[t - p->first_tensor] = 1, regs += m->tensor[t].type == ET_F64 || m->tensor[t].type == ET_I64 ? 2 : 1;
		}
		free(seen);
		/* a row over several axes keeps registers for splitting its flat
		   column (gamma(g, c) of a group norm): two vectors less, or ptxas
		   spilled (groupnorm.fuse: 8 bytes at 6, and at 5 once the block's
		   fold became a butterfly; bench/corpus/batchnorm_stats: 4 at 5) */
		if ((walks >= 2 || (walks == 1 && regs && !reads_row_vector(m, k))) && regs <= 4)
			k->par.block = 1024, k->par.rcache = (k->ninner > 1 ? 4 : 6) / (regs ? regs : 1);
		else
			k->par.warp_rows = 1; /* gemv: 8 rows a block, no block-wide barriers */
		k->peel = k->par.rcache && row_peel(m, p, k);
		k->par.row_paths = k->par.rcache && row_recomputes_loads(m, p, k);
	}

	/* Blocks a multiprocessor must hold, which caps registers: kernels with
	 * arrays in registers (a row cache, k-smallest lists, matmul tiles) or
	 * f64 work get 64 a thread at half occupancy; streaming kernels 40 at
	 * three quarters, enough for an unrolled body without spilling. */
	for (int i = 0; i < p->nk; i++) {
		Kernel *k = &p->k[i];
		/* a point of four or more axes decomposes into 64-bit coordinates
		   per unrolled copy: 40 registers spilled (groupnorm's unfused
		   normalisation over [N,G,CG,HW], 8 bytes); a ragged scatter's
		   four copies: 56 registers, 20 bytes spilled at 40 (spike_burst,
		   sm_90), and half an SM beat three quarters with 4 bytes spilled
		   (0.0372 ms against 0.0382, H100, cold L2) */
		int heavy = k->par.slices > 1 || k->mode == KM_MATMUL || (k->mode == KM_SCATTER && k->par.unroll > 1) || k->par.rcache || (k->mode == KM_POINT && k->nspace >= 4) ||
		            k->par.vec == 8; /* 8 points a thread: adamw_bf16 spilled 32 bytes at 40 */
		int f64 = 0;
		for (int sid = k->first_stmt; sid < k->first_stmt + k->nstmt; sid++)
			f64 |= m->stage[m->stmt[sid].stage].precision == ET_F64; /* doubles take register pairs */
		heavy |= f64;
		k->par.min_blocks = (heavy ? 1024 : 1536) / k->par.block;
		/* a map on its vector paths with a one-copy fallback: three quarters
		   of an SM, 40 registers a thread, not half (the vector path alone
		   at a full SM against the built kernel at half, H200,
		   bench/runs/pointocc-2026-11-26-h200: rotary_bf16 0.239 -> 0.179 ms,
		   bias_gelu_f16 0.247 -> 0.198, bcast_mid_bf16 0.190 -> 0.150,
		   swiglu_f16 0.112 -> 0.098, geglu_f16 0.112 -> 0.101; a full SM's
		   32 registers spilled 4-20 bytes in whole kernels: rotary_bf16 and
		   softmax's unfused map on sm_80, swiglu_f16 on sm_90); not for f64
		   (register pairs) */
		if (k->mode == KM_POINT && k->par.vec && k->par.unroll == 1 && !f64) k->par.min_blocks = 1536 / k->par.block;
		if (k->par.min_blocks > 32) k->par.min_blocks = 32;
		if (k->par.min_blocks < 1) k->par.min_blocks = 1;
		plan_tile_shape(m, k);
		if (k->mode == KM_ATTN) plan_attn_launch(m, p, k, stored);
	}
}

/* A sliced POINT kernel that starts with one merged group of reductions
 * over an outer axis, followed by pointwise work at the point only: with
 * few points (column statistics of a tall matrix: 1024 columns are 32
 * blocks), its 32-point blocks would leave most SMs idle, so the group's
 * outermost loop is split over gridDim.y blocks, chosen at launch from the
 * sizes and the SM count (fz_split in the header); each block's partials
 * are folded in block order by the last block of its points, which then
 * runs the rest. Needs the steps (plan_steps) for the merged group. */
void plan_split(const Module *m, Schedule *p)
{
	for (int i = 0; i < p->nk; i++) {
		Kernel *k = &p->k[i];
		if (k->mode != KM_POINT || k->par.slices <= 1 || k->has_tail || k->nphase != 1) continue;
		int sid = k->first_stmt, end = k->first_stmt + k->nstmt;
		while (sid < end && p->op[sid - p->first_stmt] == STEP_INLINE) sid++;
		if (sid == end || p->op[sid - p->first_stmt] != STEP_REDUCE) continue;
		const int n = p->merge[sid - p->first_stmt];
		int ok = 1;
		for (int q = 0; q < n && ok; q++) ok = plan_outer_reduction(m, &m->stmt[sid + q]);
		for (int u = sid + n; u < end && ok; u++) {
			const StepOp op = p->op[u - p->first_stmt];
			ok = op == STEP_INLINE || (op == STEP_MAP && m->stmt[u].pattern == PAT_MAP) || (k->shift_sq == u && k->shift_sum == sid);
		}
		if (!ok) continue;
		/* a shifted pair's two sums (plan_shift.c) take two slots */
		k->par.split = k->shift_sq ? 2 : n, k->split_range = m->index[m->stmt[sid].first_index + m->stmt[sid].nfree].range;
		/* each warp's loads are 128 bytes a row: 16 rows of them in flight,
		   not 4 (H200, bench/proto/split_sweep.sh: column statistics of
		   65536 x 1024 from 0.177 to 0.143 ms, 8192 x 8192 unsplit from
		   0.178 to 0.142) */
		k->par.red_unroll = 16;
	}
}

long plan_static_smem(const Module *m, const Schedule *p, const Kernel *k, long limit, int *over)
{
	long bytes = 512; /* fz_sh[32] doubles, the fold's flags */
	*over = -1;
	if (k->mode == KM_MATMUL) bytes += 2L * k->par.tile_k * (k->par.tile_n + 4) * 4; /* As, Bs (kern_matmul.c) */
	for (int sid = k->first_stmt; sid < k->first_stmt + k->nstmt; sid++) {
		const Stmt *s = &m->stmt[sid];
		if (p->op[sid - p->first_stmt] != STEP_REDUCE || k->par.slices <= 1) continue;
		bytes += (long)k->par.slices * kernel_points(k) * (s->red == RED_KMIN ? s->kmin_k : 1) * elem_info[s->acc].bytes;
		if (bytes > limit && *over < 0) *over = sid;
	}
	return bytes;
}

/* A sliced POINT kernel (a launch of its own, not split) whose reduction
 * loops over one index with a condition or several merged terms (the
 * loops whose body reads its inputs once a step, cuda_reduce.c): the
 * inputs read at the loop's variable go through shared memory, each warp
 * loading its next 32 candidates (a lane each, converted once to the
 * body's precision) and then reading them as broadcasts. Every lane of a
 * warp reads the same candidate, so before this each step loaded it again
 * and converted it again: at f64 with f32 data, three conversions a pair
 * at a quarter of the f64 rate (transfer_entropy, issue 28). The slices
 * walk their candidates in the same order, so the sums are the same. */
void plan_stage(const Module *m, Schedule *p)
{
	for (int i = 0; i < p->nk; i++) {
		Kernel *k = &p->k[i];
		k->par.stage = 0;
		if (k->mode != KM_POINT || k->par.slices <= 1 || k->par.split || k->shift_sq || kernel_points(k) != 32) continue;
		for (int sid = k->first_stmt; sid < k->first_stmt + k->nstmt; sid++) {
			const Stmt *s = &m->stmt[sid];
			if (p->op[sid - p->first_stmt] != STEP_REDUCE || s->nindex - s->nfree != 1) continue;
			if (m->index[s->first_index + s->nfree].kind == IX_RAGGED) continue;
			if (s->mask || p->merge[sid - p->first_stmt] > 1) k->par.stage = 1;
		}
	}
}
