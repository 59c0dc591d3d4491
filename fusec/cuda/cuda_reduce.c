/* Reductions with free indices, at the kernel's point: serial loops over
 * the reduced indices (a thread per point), split over warps (sliced), or
 * the row's inner index shared by the block or warp (row kernels). The
 * schedule says which statements share one loop (Schedule.merge). */
#include <stdlib.h>
#include <string.h>

#include "core/die.h"
#include "cuda/cuda.h"

static void accumulate_body(Cx *cx, int sid, int n, int d);

/* Reductions with free indices at the point: serial loops over the reduced
 * indices (thread-per-point), or the row's inner index shared by the block. */
/* The accumulators of the n merged reductions from sid, at their identity */
static void acc_decls(Cx *cx, int sid, int n, int depth)
{
	const Module *m = cx->m;
	FILE *out = cx->out;
	for (int q = 0; q < n; q++) {
		const Stmt *s = &m->stmt[sid + q];
		const Tensor *x = &m->tensor[s->out];
		cuda_bind_point(cx, s, cx->k->nspace);
		cuda_ind(out, depth);
		if (s->red == RED_KMIN)
			fprintf(out, "%s acc_%s[%d];\n", cuda_ctype(s->acc), x->name, s->kmin_k),
			cuda_ind(out, depth), fprintf(out, "fz_kinit<%s, %d>(acc_%s);\n", cuda_ctype(s->acc), s->kmin_k, x->name);
		else
			fprintf(out, "%s acc_%s = %s;\n", cuda_ctype(s->acc), x->name, cuda_identity(s->red, s->acc));
	}
}

/* the row's reduced indices (one, or its several axes walked flat): the group walks them */
static void row_reduction(Cx *cx, int sid, int n, int depth)
{
	const Module *m = cx->m;
	const Stmt *s0 = &m->stmt[sid];
	char *var = xasprintf("r%d_%s", s0->nfree, m->index[s0->first_index + s0->nfree].name);
	for (int q = 0; q < n; q++) cuda_row_bind(cx, m->stmt[sid + q].first_index + s0->nfree, var);
	cuda_row_loop(cx, var, accumulate_body, sid, n, depth);
	free(var);
	for (int q = 0; q < n; q++) cuda_row_unbind(cx, m->stmt[sid + q].first_index + s0->nfree);
}

/* KernelParams.stage: the sliced loop over var, its body's reads at var
 * (the hoists marked at_loop) taken from this warp's tile in fz_pool: 32
 * candidates a step, slice + FZ_SLICES * t for t < 32 from fz_jt, so each
 * slice walks the same candidates in the same order as the plain loop.
 * Prints the tile's pointers to outer (before the loops), the steps'
 * header and the staged reads' locals to cx->out; drops those hoists.
 * Returns 0 (nothing printed) where the body reads nothing at var. */
static int staged_loop(Cx *cx, const Stmt *s0, const char *var, int depth, FILE *outer)
{
	const Module *m = cx->m;
	FILE *out = cx->out;
	int nst = 0;
	for (int i = 0; i < cx->nhoist; i++) nst += !cx->hoist[i].inv && cx->hoist[i].at_loop;
	if (!nst) return 0;
	const Dim r = m->index[s0->first_index + s0->nfree].range;
	const long bytes = 32L * cx->k->par.slices * nst * 8; /* a warp's tile: 32 slots of 8 bytes a tensor */
	if (bytes > cx->pool_bytes) cx->pool_bytes = bytes;
	cx->pool_live = 1;
	int q = 0;
	for (int i = 0; i < cx->nhoist; i++) {
		const struct Hoist *h = &cx->hoist[i];
		if (h->inv || !h->at_loop) continue;
		const char *ty = h->dbl ? "double" : cuda_ctype(m->tensor[h->t].type);
		cuda_ind(outer, depth), fprintf(outer, "%s *const fz_st_%s = (%s *)(fz_pool + (fz_slice * %d + %d) * 256);\n", ty, h->name, ty, nst, q++);
	}
	cuda_ind(out, depth), fputs("for (long long fz_jt = 0; fz_jt < ", out), cuda_dim(cx, r, out), fputs("; fz_jt += 32 * FZ_SLICES) {\n", out);
	cuda_ind(out, depth + 1), fputs("{ /* this warp's next 32 candidates, a lane each, converted once */\n", out);
	cuda_ind(out, depth + 2), fputs("const long long fz_sj = fz_jt + fz_slice + (long long)FZ_SLICES * fz_lane;\n", out);
	cuda_ind(out, depth + 2), fputs("if (fz_sj < ", out), cuda_dim(cx, r, out), fputs(") {\n", out);
	for (int i = 0; i < cx->nhoist; i++) {
		const struct Hoist *h = &cx->hoist[i];
		if (h->inv || !h->at_loop) continue;
		cuda_ind(out, depth + 3), fprintf(out, "fz_st_%s[fz_lane] = (%s)", h->name, h->dbl ? "double" : cuda_ctype(m->tensor[h->t].type));
		cuda_load(cx, h->t, "(long long)(fz_sj)", out);
		fputs(";\n", out);
	}
	cuda_ind(out, depth + 2), fputs("}\n", out);
	cuda_ind(out, depth + 1), fputs("}\n", out);
	cuda_ind(out, depth + 1), fputs("__syncwarp();\n", out);
	cuda_ind(out, depth + 1), fputs("const long long fz_tn = (", out), cuda_dim(cx, r, out), fputs(" - fz_jt - fz_slice + FZ_SLICES - 1) / FZ_SLICES;\n", out);
	fprintf(out, "#pragma unroll %d\n", cx->k->par.red_unroll);
	cuda_ind(out, depth + 1), fputs("for (int fz_t = 0; fz_t < (fz_tn < 32 ? (int)fz_tn : 32); ++fz_t) {\n", out);
	cuda_ind(out, depth + 2), fprintf(out, "const long long %s = fz_jt + fz_slice + (long long)FZ_SLICES * fz_t;\n", var);
	int k = 0;
	for (int i = 0; i < cx->nhoist; i++) {
		struct Hoist *h = &cx->hoist[i];
		if (h->inv || !h->at_loop) {
			cx->hoist[k++] = *h;
			continue;
		}
		cuda_ind(out, depth + 2), fprintf(out, "const %s %s = fz_st_%s[fz_t];\n", h->dbl ? "double" : cuda_ctype(m->tensor[h->t].type), h->name, h->name);
		free(h->lin), free(h->load), free(h->name);
	}
	cx->nhoist = k;
	return 1;
}

/* Serial loops over the reduced indices at the point (split over the
   warps when sliced) */
static void loop_reduction(Cx *cx, int sid, int n, int depth, int row)
{
	const Module *m = cx->m;
	const Stmt *s0 = &m->stmt[sid];
	FILE *out = cx->out;
	/* loops over s0's reduced indices; every merged statement binds to them.
	   Written aside: the reads the body hoists out of the loops go first. */
	FILE *outer = out;
	char *loops = NULL;
	size_t loops_len = 0;
	int d = depth;
	char *var[MAX_IDX] = {0};
	int rag_step[MAX_IDX] = {0}, opened[MAX_IDX], nopen = 0;
	/* KernelParams.stage: one dense loop, shared by the warps; its header
	   written aside, since the staged loop replaces it when the body reads
	   inputs at its variable */
	const int stage_try = cx->k->par.stage && cx->sliced && !row && !cx->shift_loop && !cx->k->par.split &&
	                      s0->nindex - s0->nfree == 1 && m->index[s0->first_index + s0->nfree].kind != IX_RAGGED;
	char *hdr = NULL;
	size_t hdr_len = 0;
	out = cx->out = stage_try ? xmemstream(&hdr, &hdr_len) : xmemstream(&loops, &loops_len);
	for (int i = s0->nfree; i < s0->nindex; i++) {
		const Index *ix = &m->index[s0->first_index + i];
		var[i] = xasprintf("r%d_%s", i, ix->name);
		if (ix->kind == IX_RAGGED) continue;
		opened[nopen++] = i;
		fprintf(out, "#pragma unroll %d\n", cx->k->par.red_unroll);
		cuda_ind(out, d);
		int split = cx->sliced && d == depth; /* the outermost loop is shared by the warps */
		int blocks = split && cx->k->par.split && !(row && i == s0->nindex - 1);
		if (row && i == s0->nindex - 1)
			fprintf(out, "for (long long %s = threadIdx.x; %s < ", var[i], var[i]);
		else if (blocks) /* and over gridDim.y blocks: this block's [fz_lo, fz_hi) */
			fprintf(out, "for (long long %s = fz_lo + fz_slice; %s < fz_hi", var[i], var[i]);
		else
			fprintf(out, "for (long long %s = %s; %s < ", var[i], split ? "fz_slice" : "0", var[i]);
		if (!blocks) cuda_dim(cx, ix->range, out);
		fprintf(out, "; %s += %s) {\n", var[i], row && i == s0->nindex - 1 ? "blockDim.x" : split ? "FZ_SLICES" : "1");
		d++;
		for (int q = 0; q < n; q++) {
			cx->bind[m->stmt[sid + q].first_index + i - cx->first_index] = strdup(var[i]);
			cx->role[m->stmt[sid + q].first_index + i - cx->first_index] = CUDA_ROLE_LOOP;
		}
	}
	for (int i = s0->nfree; i < s0->nindex; i++) { /* ragged innermost: bounds see the dense ones */
		const Index *ix = &m->index[s0->first_index + i];
		if (ix->kind != IX_RAGGED) continue;
		opened[nopen++] = i;
		cuda_stmt_math(&cx->w, m, s0);
		char *lo = emit_render(&cx->w, ix->lo), *hi = emit_render(&cx->w, ix->hi);
		cuda_ind(out, d);
		int split = cx->sliced && d == depth;
		fprintf(out, "for (long long %s = (%s)%s, %s_end = %s; %s < %s_end; %s) {\n", var[i], lo, split ? " + fz_slice" : "",
		        var[i], hi, var[i], var[i], split ? "" : "");
		free(lo), free(hi);
		d++;
		for (int q = 0; q < n; q++) {
			cx->bind[m->stmt[sid + q].first_index + i - cx->first_index] = strdup(var[i]);
			cx->role[m->stmt[sid + q].first_index + i - cx->first_index] = CUDA_ROLE_LOOP;
		}
		rag_step[i] = split;
	}
	if (stage_try) fclose(out), out = cx->out = xmemstream(&loops, &loops_len);
	{
		char *body = NULL;
		size_t body_len = 0;
		FILE *bf = xmemstream(&body, &body_len);
		/* only where conditions or several merged terms read the inputs:
		   a single unconditional term's reads are each in one place anyway */
		int hoist = n > 1;
		for (int q = 0; q < n; q++) hoist |= m->stmt[sid + q].mask != 0;
		cx->nhvars = 0;
		for (int q = 0; q < nopen; q++) cx->hvars[cx->nhvars++] = var[opened[q]];
		cx->out = bf, cx->hoisting = hoist, cx->w.eager_ok = hoist ? cuda_eager_ok : NULL, cx->stage_try = stage_try;
		accumulate_body(cx, sid, n, d + (stage_try != 0));
		cx->out = out, cx->hoisting = 0, cx->w.eager_ok = NULL, cx->nhvars = 0, cx->stage_try = 0;
		fclose(bf);
		const int staged = stage_try ? staged_loop(cx, s0, var[s0->nfree], depth, outer) : 0;
		if (stage_try && !staged) fputs(hdr, out);
		if (staged) d++;
		cuda_hoist_decls(cx, 0, out, d); /* read at the loops' variables: each step */
		fputs(body, out);
		free(body);
		if (staged) cuda_ind(out, depth + 1), fputs("}\n", out), cuda_ind(out, depth + 1), fputs("__syncwarp();\n", out), d--;
	}
	free(hdr);
	while (nopen > 0) { /* closed innermost first: ragged ones, then dense */
		const int i = opened[--nopen];
		d--;
		if (m->index[s0->first_index + i].kind == IX_RAGGED)
			cuda_ind(out, d + 1), fprintf(out, "%s += %s;\n", var[i], rag_step[i] ? "FZ_SLICES" : "1");
		cuda_ind(out, d);
		fputs("}\n", out);
		for (int q = 0; q < n; q++) {
			free(cx->bind[m->stmt[sid + q].first_index + i - cx->first_index]);
			cx->bind[m->stmt[sid + q].first_index + i - cx->first_index] = NULL;
			cx->role[m->stmt[sid + q].first_index + i - cx->first_index] = CUDA_ROLE_NONE;
		}
		free(var[i]);
	}
	fclose(out);
	out = cx->out = outer;
	cuda_hoist_decls(cx, 1, out, depth); /* read at the point only: once, before the loops */
	fputs(loops, out);
	free(loops);
}

/* accumulator acc_NAME of type ty, one a warp, folded in warp order by op */
static void fold_slices_named(Cx *cx, const char *name, const char *ty, const char *op, int depth)
{
	FILE *out = cx->out;
	if (cx->pool_live) { /* the warps' tiles' memory, once every warp has left its loop */
		const long bytes = (long)cx->k->par.slices * kernel_points(cx->k) * 8;
		if (bytes > cx->pool_bytes) cx->pool_bytes = bytes;
		cuda_ind(out, depth), fputs("__syncthreads();\n", out);
		cuda_ind(out, depth), fprintf(out, "%s (*const fz_m_%s)[%d] = (%s (*)[%d])fz_pool;\n", ty, name, kernel_points(cx->k), ty, kernel_points(cx->k));
	} else
	cuda_ind(out, depth), fprintf(out, "__shared__ %s fz_m_%s[FZ_SLICES][%d];\n", ty, name, kernel_points(cx->k));
	cuda_ind(out, depth), fprintf(out, "fz_m_%s[fz_slice][fz_lane] = acc_%s;\n", name, name);
	cuda_ind(out, depth), fputs("__syncthreads();\n", out);
	cuda_ind(out, depth), fprintf(out, "acc_%s = fz_m_%s[0][fz_lane];\n", name, name);
	cuda_ind(out, depth), fprintf(out, "for (int w = 1; w < FZ_SLICES; ++w) acc_%s = fz_op<%s>(acc_%s, fz_m_%s[w][fz_lane]);\n",
	                         name, op, name, name);
	cuda_ind(out, depth), fputs("__syncthreads();\n", out);
}

/* A sliced reduction's partials, one a warp, folded in warp order through
 * shared memory into acc_T (each line indented) */
static void fold_slices(Cx *cx, const Stmt *s, int depth)
{
	const Module *m = cx->m;
	FILE *out = cx->out;
	const Tensor *x = &m->tensor[s->out];
	if (cx->sliced && s->red == RED_KMIN) {
		/* every warp's k smallest, merged in warp order */
		const char *ty = cuda_ctype(s->acc);
		int K = s->kmin_k;
		if (cx->pool_live) { /* the warps' tiles' memory, once every warp has left its loop */
			const long bytes = (long)cx->k->par.slices * kernel_points(cx->k) * K * elem_info[s->acc].bytes;
			if (bytes > cx->pool_bytes) cx->pool_bytes = bytes;
			cuda_ind(out, depth), fputs("__syncthreads();\n", out);
			cuda_ind(out, depth), fprintf(out, "%s (*const fz_m_%s)[%d][%d] = (%s (*)[%d][%d])fz_pool;\n", ty, x->name, kernel_points(cx->k), K, ty,
			                              kernel_points(cx->k), K);
		} else
		cuda_ind(out, depth), fprintf(out, "__shared__ %s fz_m_%s[FZ_SLICES][%d][%d];\n", ty, x->name, kernel_points(cx->k), K);
		fputs("#pragma unroll\n", out);
		cuda_ind(out, depth), fprintf(out, "for (int q = 0; q < %d; ++q) fz_m_%s[fz_slice][fz_lane][q] = acc_%s[q];\n", K, x->name, x->name);
		cuda_ind(out, depth), fputs("__syncthreads();\n", out);
		cuda_ind(out, depth), fprintf(out, "fz_kinit<%s, %d>(acc_%s);\n", ty, K, x->name);
		/* each warp's list ascends: its first value not below the k-th
		   smallest so far ends it (the same k values, fewer steps) */
		cuda_ind(out, depth), fprintf(out, "for (int w = 0; w < FZ_SLICES; ++w)\n");
		fputs("#pragma unroll\n", out);
		cuda_ind(out, depth + 1), fprintf(out, "for (int q = 0; q < %d; ++q) {\n", K);
		cuda_ind(out, depth + 2), fprintf(out, "const %s fz_v = fz_m_%s[w][fz_lane][q];\n", ty, x->name);
		cuda_ind(out, depth + 2), fprintf(out, "if (!(fz_v < acc_%s[%d])) break;\n", x->name, K - 1);
		cuda_ind(out, depth + 2), fprintf(out, "fz_kpush<%s, %d>(acc_%s, fz_v);\n", ty, K, x->name);
		cuda_ind(out, depth + 1), fputs("}\n", out);
		cuda_ind(out, depth), fputs("__syncthreads();\n", out);
	} else if (cx->sliced) {
		fold_slices_named(cx, x->name, cuda_ctype(s->acc), cuda_red_op(s->red), depth);
	}
}

/* A split kernel (KernelParams.split): each block's partials of the n
 * reductions from sid, for its points (32; a pipeline's phase: fewer), go
 * to the workspace (8 bytes a slot, [block.y][point][reduction]); the last
 * block of those points to arrive (a counter a block's points, from word 16
 * of ws_count: the grid fold uses word 0) folds them in
 * block order into acc_T and goes on; the others leave the points. The
 * counter is left at 0 for the next launch. */
static void fold_blocks_named(Cx *cx, int n, const char *const *name, const char *const *ty, const char *const *op, int depth)
{
	FILE *out = cx->out;
	const int d = depth;
	cuda_ind(out, d), fputs("if (gridDim.y > 1) {\n", out);
	cuda_ind(out, d + 1), fputs("unsigned long long *const fz_part = (unsigned long long *)a.ws_part;\n", out);
	cuda_ind(out, d + 1), fprintf(out, "unsigned int *const fz_cnt = (unsigned int *)a.ws_count + 16 + pb / %d;\n", kernel_points(cx->k));
	cuda_ind(out, d + 1), fputs("if (fz_slice == 0 && fz_live) {\n", out);
	for (int q = 0; q < n; q++)
		cuda_ind(out, d + 2), fprintf(out, "*(%s *)&fz_part[((long long)blockIdx.y * total + p) * %d + %d] = acc_%s;\n", ty[q], n, q, name[q]);
	cuda_ind(out, d + 1), fputs("}\n", out);
	cuda_ind(out, d + 1), fputs("__threadfence();\n", out);
	cuda_ind(out, d + 1), fputs("__syncthreads();\n", out);
	cuda_ind(out, d + 1), fputs("__shared__ bool fz_last;\n", out);
	cuda_ind(out, d + 1), fputs("if (threadIdx.x == 0) fz_last = atomicAdd(fz_cnt, 1u) == gridDim.y - 1;\n", out);
	cuda_ind(out, d + 1), fputs("__syncthreads();\n", out);
	cuda_ind(out, d + 1), fputs("if (!fz_last) continue; /* another block folds these points */\n", out);
	cuda_ind(out, d + 1), fputs("__threadfence();\n", out);
	for (int q = 0; q < n; q++) {
		cuda_ind(out, d + 1), fprintf(out, "acc_%s = __ldcg((const %s *)&fz_part[p * %d + %d]);\n", name[q], ty[q], n, q);
		cuda_ind(out, d + 1), fprintf(out, "for (unsigned int y = 1; y < gridDim.y; ++y) acc_%s = fz_op<%s>(acc_%s, __ldcg((const %s *)&fz_part[((long long)y * total + p) * %d + %d]));\n",
		                              name[q], op[q], name[q], ty[q], n, q);
	}
	cuda_ind(out, d + 1), fputs("if (threadIdx.x == 0) *fz_cnt = 0u; /* for the next launch */\n", out);
	cuda_ind(out, d), fputs("}\n", out);
}

static void fold_blocks(Cx *cx, int sid, int n, int depth)
{
	const char **name = xcalloc((size_t)n, sizeof *name), **ty = xcalloc((size_t)n, sizeof *ty), **op = xcalloc((size_t)n, sizeof *op);
	for (int q = 0; q < n; q++) {
		const Stmt *s = &cx->m->stmt[sid + q];
		name[q] = cx->m->tensor[s->out].name, ty[q] = cuda_ctype(s->acc), op[q] = cuda_red_op(s->red);
	}
	fold_blocks_named(cx, n, name, ty, op, depth);
	free(name), free(ty), free(op);
}

/* reduction s's result, name: stored if it leaves the kernel (by the
   row's leader), published as v_T for later statements */
static void fold_store(Cx *cx, const Stmt *s, const char *name, int depth, int row)
{
	if (sched_stored(cx->p, s->out)) {
		if (row) cuda_ind(cx->out, depth), fprintf(cx->out, "if (%s)\n", row_leader(cx));
		cuda_store_target(cx, s, name, depth + row);
	}
	cuda_publish(cx, s, name);
}

/* The result of reduction s: the slices' or the group's partials folded,
   stored if it leaves the kernel, published as v_T for later statements */
static void fold_result(Cx *cx, const Stmt *s, int depth, int row)
{
	const Module *m = cx->m;
	FILE *out = cx->out;
	const Tensor *x = &m->tensor[s->out];
	char *name = xasprintf("v_%s%s", x->name, cx->sfx);
	cuda_ind(out, depth);
	if (s->red == RED_KMIN)
		fprintf(out, "const %s %s = acc_%s[%d];\n", cuda_ctype(s->acc), name, x->name, s->kmin_k - 1);
	else if (row && cx->k->par.rcache)
		fprintf(out, "const %s %s = fz_row_reduce<%s, %s>(acc_%s, (%s *)fz_sh, fz_g);\n", cuda_ctype(s->acc), name,
		        cuda_ctype(s->acc), cuda_red_op(s->red), x->name, cuda_ctype(s->acc));
	else if (row && cx->k->par.warp_rows)
		fprintf(out, "const %s %s = fz_warp_reduce<%s, %s>(acc_%s);\n", cuda_ctype(s->acc), name, cuda_ctype(s->acc),
		        cuda_red_op(s->red), x->name);
	else if (row)
		fprintf(out, "const %s %s = fz_block_reduce<%s, %s>(acc_%s, (%s *)fz_sh);\n", cuda_ctype(s->acc), name,
		        cuda_ctype(s->acc), cuda_red_op(s->red), x->name, cuda_ctype(s->acc));
	else
		fprintf(out, "const %s %s = acc_%s;\n", cuda_ctype(s->acc), name, x->name);
	fold_store(cx, s, name, depth, row);
	free(name);
}

/* A sum and the squares of its terms about a value constant over its
 * reduction, in one walk or loop (Kernel.shift_sq, plan_shift.c): the
 * terms shifted by K, the first term (0 for an empty reduction), summed
 * in double (the squares' algebra cancels where the first term sits far
 * from the mean: f32 failed the float64 reference at rows of 65536);
 * partials about the same K add up, so warps and blocks may fold them.
 * s = S1 + n K,  q = S2 - 2 (L - K) S1 + n (L - K)^2.
 * One step: the term less K into the sum, its square into the squares. */
static void shifted_body(Cx *cx, int sid, int n, int d)
{
	(void)n;
	const Module *m = cx->m;
	const Stmt *s = &m->stmt[sid];
	const char *ts = m->tensor[s->out].name, *tq = m->tensor[m->stmt[cx->k->shift_sq].out].name, *ty = cuda_ctype(s->acc);
	char *vd = NULL, *v = cuda_value_of(cx, s, s->rhs, &vd);
	cuda_ind(cx->out, d), fputs("{\n", cx->out);
	cuda_put_decls(cx->out, vd, d + 1);
	cuda_ind(cx->out, d + 1), fprintf(cx->out, "const double fz_t = (double)(%s)(%s) - fz_k_%s;\n", ty, v, ts);
	cuda_ind(cx->out, d + 1), fprintf(cx->out, "acc_%s += fz_t;\n", ts);
	cuda_ind(cx->out, d + 1), fprintf(cx->out, "acc_%s += fz_t * fz_t;\n", tq);
	cuda_ind(cx->out, d), fputs("}\n", cx->out);
	free(v), free(vd);
}

/* the two accumulators and K: s's term with its reduced indices at 0,
   where nonempty (the reduction's extent > 0) */
static void shifted_open(Cx *cx, const Stmt *s, const char *nonempty, int depth)
{
	const Module *m = cx->m;
	FILE *out = cx->out;
	const char *ts = m->tensor[s->out].name, *tq = m->tensor[m->stmt[cx->k->shift_sq].out].name;
	cuda_ind(out, depth), fprintf(out, "double acc_%s = 0, acc_%s = 0, fz_k_%s = 0; /* the sum and the squares about the first term, fz_k_%s */\n",
	                        ts, tq, ts, ts);
	cuda_ind(out, depth), fprintf(out, "if (%s > 0) {\n", nonempty);
	for (int i = s->nfree; i < s->nindex; i++)
		cx->bind[s->first_index + i - cx->first_index] = xstrdup("0LL"), cx->role[s->first_index + i - cx->first_index] = CUDA_ROLE_NONE;
	char *kd = NULL, *kv = cuda_value_of(cx, s, s->rhs, &kd);
	cuda_put_decls(out, kd, depth + 1);
	cuda_ind(out, depth + 1), fprintf(out, "fz_k_%s = (double)(%s)(%s);\n", ts, cuda_ctype(s->acc), kv);
	cuda_ind(out, depth), fputs("}\n", out);
	free(kv), free(kd);
	for (int i = s->nfree; i < s->nindex; i++) free(cx->bind[s->first_index + i - cx->first_index]), cx->bind[s->first_index + i - cx->first_index] = NULL;
}

/* s = S1 + n K, from the folded S1 (s1) and n in double (n) */
static void shifted_sum(Cx *cx, const Stmt *s, const char *s1, const char *n, int depth, int row)
{
	const char *ts = cx->m->tensor[s->out].name, *ty = cuda_ctype(s->acc);
	char *v = xasprintf("v_%s%s", ts, cx->sfx);
	cuda_ind(cx->out, depth), fprintf(cx->out, "const %s %s = (%s)(%s + %s * fz_k_%s);\n", ty, v, ty, s1, n, ts);
	fold_store(cx, s, v, depth, row);
	free(v);
}

/* q = S2 - 2 (L - K) S1 + n (L - K)^2, L the value the squares are about
   (q's term is (A - L) * (A - L)), from the folded S2 and S1 */
static void shifted_squares(Cx *cx, int sid, const char *s2, const char *s1, const char *n, int depth, int row)
{
	const Module *m = cx->m;
	const Stmt *q = &m->stmt[sid], *s = &m->stmt[cx->k->shift_sum];
	FILE *out = cx->out;
	const char *ts = m->tensor[s->out].name, *tq = m->tensor[q->out].name, *ty = cuda_ctype(q->acc);
	char *ld = NULL, *lv = cuda_value_of(cx, q, m->expr[m->expr[q->rhs].a].b, &ld);
	cuda_put_decls(out, ld, depth);
	cuda_ind(out, depth), fprintf(out, "const double fz_d_%s = (double)(%s)(%s) - fz_k_%s;\n", tq, ty, lv, ts);
	char *v = xasprintf("v_%s%s", tq, cx->sfx);
	cuda_ind(out, depth), fprintf(out, "const %s %s = (%s)(%s - 2 * fz_d_%s * %s + %s * fz_d_%s * fz_d_%s);\n", ty, v, ty, s2, tq, s1, n, tq, tq);
	fold_store(cx, q, v, depth, row);
	free(v), free(lv), free(ld);
}

/* the row's width (nonempty: as an integer) or the reduced indices'
   extent in double, as text */
static char *shifted_extent(Cx *cx, const Stmt *s, int row, int dbl)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = xmemstream(&buf, &len);
	if (row) {
		fputs(dbl ? "(double)" : "", f), cuda_row_width(cx, f);
	} else {
		fputs("((double)", f);
		for (int i = s->nfree; i < s->nindex; i++) fputs(i > s->nfree ? " * (double)" : "", f), cuda_dim(cx, cx->m->index[s->first_index + i].range, f);
		fputc(')', f);
	}
	fclose(f);
	return buf;
}

/* The streamed path of a row kernel: the sum's walk takes the squares; the
   block folds both (fz_s1_T: the folded S1, for the squares) */
static void shifted_walk(Cx *cx, int sid, int depth)
{
	const Module *m = cx->m;
	const Stmt *s = &m->stmt[sid];
	const char *ts = m->tensor[s->out].name;
	const int ix = s->first_index + s->nfree;
	char *w = shifted_extent(cx, s, 1, 0), *n = shifted_extent(cx, s, 1, 1), *var = xasprintf("r%d_%s", s->nfree, m->index[ix].name);
	shifted_open(cx, s, w, depth);
	cuda_row_bind(cx, ix, var);
	cuda_row_loop(cx, var, shifted_body, sid, 1, depth);
	cuda_row_unbind(cx, ix);
	cuda_ind(cx->out, depth), fprintf(cx->out, "const double fz_s1_%s = fz_row_reduce<double, FZ_SUM>(acc_%s, fz_sh, fz_g);\n", ts, ts);
	char *s1 = xasprintf("fz_s1_%s", ts);
	shifted_sum(cx, s, s1, n, depth, 1);
	free(w), free(n), free(var), free(s1);
}

static void shifted_row_result(Cx *cx, int sid, int depth)
{
	const Module *m = cx->m;
	const Stmt *s = &m->stmt[cx->k->shift_sum];
	char *n = shifted_extent(cx, s, 1, 1), *s1 = xasprintf("fz_s1_%s", m->tensor[s->out].name);
	char *s2 = xasprintf("fz_row_reduce<double, FZ_SUM>(acc_%s, fz_sh, fz_g)", m->tensor[m->stmt[sid].out].name);
	shifted_squares(cx, sid, s2, s1, n, depth, 1);
	free(n), free(s1), free(s2);
}

/* A point kernel's outer reduction, split over warps and blocks: the sum's
   loop takes the squares, the warps' and the blocks' partials folded */
static void shifted_loop(Cx *cx, int sid, int depth)
{
	const Module *m = cx->m;
	const Stmt *s = &m->stmt[sid];
	const char *ts = m->tensor[s->out].name, *tq = m->tensor[m->stmt[cx->k->shift_sq].out].name;
	char *n = shifted_extent(cx, s, 0, 1), *s1 = xasprintf("acc_%s", ts);
	shifted_open(cx, s, n, depth);
	cx->shift_loop = 1;
	loop_reduction(cx, sid, 1, depth, 0);
	cx->shift_loop = 0;
	const char *name[2] = {ts, tq}, *tys[2] = {"double", "double"}, *ops[2] = {"FZ_SUM", "FZ_SUM"};
	for (int q = 0; q < 2; q++) fold_slices_named(cx, name[q], "double", "FZ_SUM", depth);
	if (cx->k->par.split) fold_blocks_named(cx, 2, name, tys, ops, depth);
	shifted_sum(cx, s, s1, n, depth, 0);
	free(n), free(s1);
}

static void shifted_point_result(Cx *cx, int sid, int depth)
{
	const Module *m = cx->m;
	const Stmt *s = &m->stmt[cx->k->shift_sum];
	char *n = shifted_extent(cx, s, 0, 1), *s1 = xasprintf("acc_%s", m->tensor[s->out].name), *s2 = xasprintf("acc_%s", m->tensor[m->stmt[sid].out].name);
	shifted_squares(cx, sid, s2, s1, n, depth, 0);
	free(n), free(s1), free(s2);
}

/* the online pair's rescale of its sum to a new max to (a lane's term or
   the row's max): to 0 from a max of -inf (see online_body) */
static void online_rescale(Cx *cx, const Stmt *a, const char *to, FILE *out)
{
	const Module *m = cx->m;
	const char *tm = m->tensor[a->out].name, *ts = m->tensor[m->stmt[cx->k->online_sum].out].name, *ty = cuda_ctype(a->acc);
	const int dbl = a->acc == ET_F64;
	fprintf(out, "acc_%s = acc_%s == -%s ? (%s)0 : acc_%s * %s(acc_%s - %s);\n", ts, tm, dbl ? "fz_inf<double>()" : "FZ_INF_F", ty, ts,
	        dbl ? "exp" : "fz_expf", tm, to);
}

/* The online pair (Kernel.online_max, plan_shift.c): one step takes the
   max's term t; where t passes the running max the sum so far is rescaled
   to it (to 0 from a max of -inf: its terms were exp(-inf - -inf), NaN, for
   columns whose true share is 0 once any column is finite). A row of -inf
   alone keeps the NaN the two walks give. */
static void online_body(Cx *cx, int sid, int n, int d)
{
	(void)n;
	const Module *m = cx->m;
	const Stmt *a = &m->stmt[sid];
	const char *tm = m->tensor[a->out].name, *ts = m->tensor[m->stmt[cx->k->online_sum].out].name, *ty = cuda_ctype(a->acc);
	const char *ex = a->acc == ET_F64 ? "exp" : "fz_expf";
	char *vd = NULL, *v = cuda_value_of(cx, a, a->rhs, &vd);
	FILE *out = cx->out;
	cuda_ind(out, d), fputs("{\n", out);
	cuda_put_decls(out, vd, d + 1);
	cuda_ind(out, d + 1), fprintf(out, "const %s fz_t = (%s)(%s);\n", ty, ty, v);
	cuda_ind(out, d + 1), fprintf(out, "if (fz_t > acc_%s) {\n", tm);
	cuda_ind(out, d + 2), online_rescale(cx, a, "fz_t", out);
	cuda_ind(out, d + 2), fprintf(out, "acc_%s = fz_t;\n", tm);
	cuda_ind(out, d + 1), fputs("}\n", out);
	cuda_ind(out, d + 1), fprintf(out, "acc_%s += %s(fz_t - acc_%s);\n", ts, ex, tm);
	cuda_ind(out, d), fputs("}\n", out);
	free(v), free(vd);
}

/* The streamed path of a row kernel: the max's walk takes the sum of
   exp(term - max) as well; the group's max folded, each lane's sum
   rescaled to it (a lane at -inf adds 0 unless the row's max is -inf
   too), then the sums folded */
static void online_walk(Cx *cx, int sid, int depth)
{
	const Module *m = cx->m;
	const Stmt *a = &m->stmt[sid], *s = &m->stmt[cx->k->online_sum];
	const char *tm = m->tensor[a->out].name;
	FILE *out = cx->out;
	acc_decls(cx, sid, 1, depth);
	acc_decls(cx, cx->k->online_sum, 1, depth);
	const int ix = a->first_index + a->nfree;
	char *var = xasprintf("r%d_%s", a->nfree, m->index[ix].name);
	cuda_row_bind(cx, ix, var);
	cuda_row_loop(cx, var, online_body, sid, 1, depth);
	cuda_row_unbind(cx, ix);
	fold_result(cx, a, depth, 1);
	char *to = xasprintf("v_%s%s", tm, cx->sfx);
	cuda_ind(out, depth), fprintf(out, "if (acc_%s != %s) ", tm, to), online_rescale(cx, a, to, out);
	free(to);
	fold_result(cx, s, depth, 1);
	free(var);
}

/* The argmax pair (Kernel.argmax_max, plan_shift.c plan_argmax): one step
   takes the max's term t and the column c; a lane keeps its max and the
   first of its columns holding it, with F (the select's other value) where
   smaller. NaN passes neither test, as in the two walks' max and ==. */
static void argmax_body(Cx *cx, int sid, int n, int d)
{
	(void)n;
	const Module *m = cx->m;
	const Stmt *a = &m->stmt[sid], *s = &m->stmt[cx->k->argmax_idx];
	const Expr *x = &m->expr[cx->k->argmax_sel];
	const char *tm = m->tensor[a->out].name, *ti = m->tensor[s->out].name, *ty = cuda_ctype(a->acc), *iy = cuda_ctype(s->acc);
	char *vd = NULL, *cd = NULL, *fd = NULL;
	char *v = cuda_value_of(cx, a, a->rhs, &vd), *c = cuda_value_of(cx, s, x->b, &cd), *f = cuda_value_of(cx, s, x->c, &fd);
	FILE *out = cx->out;
	cuda_ind(out, d), fputs("{\n", out);
	cuda_put_decls(out, vd, d + 1), cuda_put_decls(out, cd, d + 1), cuda_put_decls(out, fd, d + 1);
	cuda_ind(out, d + 1), fprintf(out, "const %s fz_t = (%s)(%s);\n", ty, ty, v);
	cuda_ind(out, d + 1), fprintf(out, "const %s fz_c = fz_op<FZ_MIN>((%s)(%s), (%s)(%s));\n", iy, iy, c, iy, f);
	cuda_ind(out, d + 1), fprintf(out, "if (fz_t > acc_%s) acc_%s = fz_t, acc_%s = fz_c;\n", tm, tm, ti);
	cuda_ind(out, d + 1), fprintf(out, "else if (fz_t == acc_%s) acc_%s = fz_op<FZ_MIN>(acc_%s, fz_c);\n", tm, ti, ti);
	cuda_ind(out, d), fputs("}\n", out);
	free(v), free(vd), free(c), free(cd), free(f), free(fd);
}

/* The streamed path of a row kernel: the max's walk takes the first column
   holding it as well; the group's max folded, a lane whose max is not the
   row's gives the min's identity, then the columns folded */
static void argmax_walk(Cx *cx, int sid, int depth)
{
	const Module *m = cx->m;
	const Stmt *a = &m->stmt[sid], *s = &m->stmt[cx->k->argmax_idx];
	const char *tm = m->tensor[a->out].name, *ti = m->tensor[s->out].name;
	FILE *out = cx->out;
	acc_decls(cx, sid, 1, depth);
	acc_decls(cx, cx->k->argmax_idx, 1, depth);
	const int ix = a->first_index + a->nfree, is = s->first_index + s->nfree;
	char *var = xasprintf("r%d_%s", a->nfree, m->index[ix].name);
	cuda_row_bind(cx, ix, var), cuda_row_bind(cx, is, var);
	cuda_row_loop(cx, var, argmax_body, sid, 1, depth);
	cuda_row_unbind(cx, is), cuda_row_unbind(cx, ix);
	fold_result(cx, a, depth, 1);
	cuda_ind(out, depth), fprintf(out, "if (acc_%s != v_%s%s) acc_%s = %s;\n", tm, tm, cx->sfx, ti, cuda_identity(s->red, s->acc));
	fold_result(cx, s, depth, 1);
	free(var);
}

int cuda_reductions(Cx *cx, int sid, int depth, int row)
{
	if (!row && cx->sliced && cx->k->shift_sq) { /* a sum and its squares in one split loop */
		if (sid == cx->k->shift_sum) return shifted_loop(cx, sid, depth), 1;
		if (sid == cx->k->shift_sq) return shifted_point_result(cx, sid, depth), 1;
	}
	const int n = cx->p->merge[sid - cx->p->first_stmt];
	if (row && cx->rc_stream && cx->k->shift_sq) { /* the streamed path: a sum and its squares in one walk */
		if (sid == cx->k->shift_sum) return shifted_walk(cx, sid, depth), 1;
		if (sid == cx->k->shift_sq) return shifted_row_result(cx, sid, depth), 1;
	}
	if (row && cx->rc_stream && cx->k->online_sum) { /* the streamed path: a max and its sum of exponentials in one walk */
		if (sid == cx->k->online_max) return online_walk(cx, sid, depth), 1;
		if (sid == cx->k->online_sum) return 1; /* folded and published by the max's walk */
	}
	if (row && cx->rc_stream && cx->k->argmax_idx) { /* the streamed path: a max and the first column holding it in one walk */
		if (sid == cx->k->argmax_max) return argmax_walk(cx, sid, depth), 1;
		if (sid == cx->k->argmax_idx) return 1; /* folded and published by the max's walk */
	}
	acc_decls(cx, sid, n, depth);
	if (row) row_reduction(cx, sid, n, depth);
	else loop_reduction(cx, sid, n, depth, row);
	if (cx->k->par.split) {
		for (int q = 0; q < n; q++) fold_slices(cx, &cx->m->stmt[sid + q], depth);
		if (n != cx->k->par.split) die("kernel %s: %d reductions split, %d merged", cx->k->name, cx->k->par.split, n);
		fold_blocks(cx, sid, n, depth);
		for (int q = 0; q < n; q++) fold_result(cx, &cx->m->stmt[sid + q], depth, row);
	} else {
		for (int q = 0; q < n; q++) fold_slices(cx, &cx->m->stmt[sid + q], depth), fold_result(cx, &cx->m->stmt[sid + q], depth, row);
	}
	return n;
}

/* One step of n merged reductions: fold the current term into each
   (a shifted pair's loop: the sum's term less K, and its square) */
static void accumulate_body(Cx *cx, int sid, int n, int d)
{
	const Module *m = cx->m;
	FILE *out = cx->out;
	if (cx->shift_loop) { /* the loop of a shifted pair: its own step */
		shifted_body(cx, sid, n, d);
		return;
	}
	for (int q = 0; q < n; q++) {
		const Stmt *s = &m->stmt[sid + q];
		const Tensor *x = &m->tensor[s->out];
		char *vd = NULL, *md = NULL;
		char *v = cuda_value_of(cx, s, s->rhs, &vd);
		char *mk = s->mask ? cuda_value_of(cx, s, s->mask, &md) : NULL;
		cuda_put_decls(out, md, d);
		cuda_ind(out, d);
		if (mk) fprintf(out, "if (%s) ", mk);
		if (vd) fputs("{\n", out), cuda_put_decls(out, vd, d + 1), cuda_ind(out, d + 1);
		if (s->red == RED_KMIN) fprintf(out, "fz_kpush<%s, %d>(acc_%s, (%s)(%s));\n", cuda_ctype(s->acc), s->kmin_k, x->name, cuda_ctype(s->acc), v);
		else fprintf(out, "acc_%s = fz_op<%s>(acc_%s, (%s)(%s));\n", x->name, cuda_red_op(s->red), x->name, cuda_ctype(s->acc), v);
		if (vd) cuda_ind(out, d), fputs("}\n", out);
		free(v), free(mk), free(vd), free(md);
	}
}
