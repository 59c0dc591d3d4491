/* Template: POINT kernels, a thread per point of the space, grid-stride.
 * Grid: enough blocks for every point (unrolled: U points a thread;
 * sliced: 32 points a block); with a whole-grid fold, no more blocks than
 * fit at once, since the partials are sized by the grid. */
#include <stdlib.h>
#include <string.h>

#include "cuda/cuda.h"
#include "core/die.h"

static void vec_store_all(Cx *cx, int i, int V, FILE *o);

/* One vector tensor's V elements from lin0 into fz_vl<i>[V], as f32:
   16-byte loads (f32: V / 4 of them; f16, bf16 at V = 8: one, 8 halves
   unpacked from its 4 words; at V = 4 one 8-byte load); a gather's
   (VecAccess.stride a, at V = 4) a times as many */
static void vec_load(Cx *cx, int i, int V, FILE *o)
{
	const Tensor *x = &cx->m->tensor[cx->vl[i].t];
	const char *ld = cx_readonly(cx, cx->vl[i].t) ? "__ldg(" : "*(", *lin0 = cx->vl[i].lin0;
	const int n = V * cx->vl[i].stride;
	fprintf(o, "\t\tfloat fz_vl%d[%d];\n", i, n);
	if (x->type == ET_F32) {
		for (int h = 0; h < n / 4; h++)
			fprintf(o, "\t\t{ const float4 fz_t = %s(const float4 *)&a.t_%s[%s%s]); fz_vl%d[%d] = fz_t.x, fz_vl%d[%d] = fz_t.y, fz_vl%d[%d] = fz_t.z, fz_vl%d[%d] = fz_t.w; }\n",
			        ld, x->name, lin0, h == 0 ? "" : h == 1 ? " + 4" : h == 2 ? " + 8" : h == 3 ? " + 12" : " + 16", i, 4 * h, i, 4 * h + 1, i, 4 * h + 2, i, 4 * h + 3);
		return;
	}
	const char *cv = x->type == ET_F16 ? "fz_h2f" : "fz_b2f";
	if (V == 4) {
		for (int h = 0; h < n / 4; h++)
			fprintf(o, "\t\t{ const ushort4 fz_t = %s(const ushort4 *)&a.t_%s[%s%s]); fz_vl%d[%d] = %s(fz_t.x), fz_vl%d[%d] = %s(fz_t.y), fz_vl%d[%d] = %s(fz_t.z), fz_vl%d[%d] = %s(fz_t.w); }\n",
			        ld, x->name, lin0, h == 0 ? "" : h == 1 ? " + 4" : h == 2 ? " + 8" : " + 12", i, 4 * h, cv, i, 4 * h + 1, cv, i, 4 * h + 2, cv, i, 4 * h + 3, cv);
		return;
	}
	fprintf(o, "\t\t{ const uint4 fz_t = %s(const uint4 *)&a.t_%s[%s]); const unsigned fz_w[4] = {fz_t.x, fz_t.y, fz_t.z, fz_t.w};\n#pragma unroll\n"
	           "\t\t  for (int fz_j = 0; fz_j < 4; ++fz_j) fz_vl%d[2 * fz_j] = %s((unsigned short)(fz_w[fz_j] & 0xffffu)), fz_vl%d[2 * fz_j + 1] = %s((unsigned short)(fz_w[fz_j] >> 16)); }\n",
	        ld, x->name, lin0, i, cv, i, cv);
}

static void vec_store(Cx *cx, int i, int V, FILE *o)
{
	const Tensor *x = &cx->m->tensor[cx->vs[i].t];
	const char *lin0 = cx->vs[i].lin0;
	int masked = 0;
	for (int u = 0; u < V; u++) masked |= cx->vs[i].mask[u] != NULL;
	if (masked) { /* a masked map's: the vector where every copy's mask holds, else each copy where its own does */
		fputs("\t\tif (", o);
		for (int u = 0; u < V; u++) fprintf(o, "%s%s", u ? " && " : "", cx->vs[i].mask[u] ? cx->vs[i].mask[u] : "true");
		fputs(") {\n", o);
	}
	vec_store_all(cx, i, V, o);
	if (!masked) return;
	fputs("\t\t} else {\n", o);
	for (int u = 0; u < V; u++) {
		fprintf(o, "\t\t\t");
		if (cx->vs[i].mask[u]) fprintf(o, "if (%s) ", cx->vs[i].mask[u]);
		fprintf(o, "a.t_%s[%s + %d] = fz_vs%d[%d];\n", x->name, lin0, u, i, u);
	}
	fputs("\t\t}\n", o);
}

static void vec_store_all(Cx *cx, int i, int V, FILE *o)
{
	const Tensor *x = &cx->m->tensor[cx->vs[i].t];
	const char *lin0 = cx->vs[i].lin0;
	if (x->type == ET_F32 || V == 4) {
		const char *v4 = cuda_vec4_type(x->type);
		for (int h = 0; h < V / 4; h++)
			fprintf(o, "\t\t*(%s *)&a.t_%s[%s%s] = make_%s(fz_vs%d[%d], fz_vs%d[%d], fz_vs%d[%d], fz_vs%d[%d]);\n", v4, x->name, lin0, h ? " + 4" : "",
			        v4, i, 4 * h, i, 4 * h + 1, i, 4 * h + 2, i, 4 * h + 3);
		return;
	}
	fprintf(o, "\t\t*(uint4 *)&a.t_%s[%s] = make_uint4(", x->name, lin0);
	for (int w = 0; w < 4; w++) fprintf(o, "%s(unsigned)fz_vs%d[%d] | ((unsigned)fz_vs%d[%d] << 16)", w ? ", " : "", i, 2 * w, i, 2 * w + 1);
	fputs(");\n", o);
}

/* The vector path (KernelParams.vec): a thread takes the V consecutive
 * points Vq..Vq+V-1 along the innermost index; the accesses the copies
 * share along it (cuda_vec_access) become 16-byte loads and stores (at
 * V = 4, f16 and bf16: 8 bytes), converted to f32 and back. V = 8 where a
 * vector tensor is 16-bit: with 8 bytes a thread in flight, bcast_col_f16
 * was latency-bound at 66% of the copy floor (H200). Taken when the
 * innermost extent is a multiple of V and every such tensor aligned to its
 * vector, decided by the kernel from its arguments (uniform); the next
 * path (V = 4, then the strided copies) handles everything otherwise.
 * Returns the path's text (from "if" to "else"); *cond gets the
 * declaration of its condition, fz_vec<V>, printed before the paths. */
static char *vec_path(Cx *cx, int V, char **cond)
{
	const Module *m = cx->m;
	const Kernel *k = cx->k;
	const int ns = k->nspace;
	char *idx = NULL, *body = NULL, *stores = NULL, *split[2] = {0}, lin[32];
	size_t ilen = 0, blen = 0, slen = 0, splen[2] = {0};
	FILE *xf = xmemstream(&idx, &ilen), *bf = xmemstream(&body, &blen), *sf = xmemstream(&stores, &slen);
	const int loops = ns > 1 ? 2 : 1; /* the point divided by extents: a loop with divisions, one with shifts */
	FILE *main_out = cx->out;
	cx->nvl = cx->nvs = 0, cx->vec_n = V;
	cx->out = bf, cx->sink = sf;
	for (int u = 0; u < V; u++) {
		char sfx[16];
		snprintf(sfx, sizeof sfx, "_%d", u);
		cx->sfx = sfx, cx->vec_u = u;
		/* the copies' indices first: the vector loads use copy 0's */
		if (u == 0) {
			snprintf(lin, sizeof lin, "%d * q", V);
			for (int l = 0; l < loops; l++) {
				cx->out = xmemstream(&split[l], &splen[l]), cx->div = l ? CUDA_DIV_SHIFT : CUDA_DIV_PLAIN;
				cuda_decompose(cx, lin, 2);
				fclose(cx->out);
			}
			cx->out = bf, cx->div = CUDA_DIV_PLAIN;
		} else {
			for (int i = 0; i < ns; i++)
				cuda_ind(xf, 2), fprintf(xf, "const long long s%d_%d = s%d_0", i, u, i), fprintf(xf, i == ns - 1 ? " + %d;\n" : ";\n", u);
			if (cx->flat) cuda_ind(xf, 2), fprintf(xf, "const long long fz_p_%d = fz_p_0 + %d;\n", u, u);
		}
		const Phase *ph = &k->phase[0];
		for (int sid = ph->first_stmt; sid < ph->first_stmt + ph->nstmt; sid++) {
			const StepOp op = cx->p->op[sid - cx->p->first_stmt];
			cuda_bind_point(cx, &m->stmt[sid], ns);
			switch (op) {
			case STEP_INLINE: break; /* computed where it is read */
			case STEP_GRID_REDUCE: cuda_tail_accumulate(cx, sid, 2, 0); break;
			case STEP_MAP: case STEP_ACCUM: cuda_map(cx, sid, 2, 0); break;
			default: die("step %s in the vector path of point kernel %s", step_op_name[op], k->name);
			}
		}
		cuda_resets(cx, 2);
	}
	cx->vec_u = -1, cx->sfx = "", cx->sink = NULL, cx->out = main_out;
	fclose(xf), fclose(bf), fclose(sf);
	cuda_clear_locals(cx);
	char *res = NULL;
	size_t rlen = 0;
	FILE *o = xmemstream(cond, &rlen);
	/* the condition: the innermost extent, then every vector's tensor */
	fprintf(o, "\tconst bool fz_vec%s = (", V == 4 ? "" : "8");
	cuda_dim(cx, k->space[ns - 1], o);
	fprintf(o, " & %d) == 0", V - 1);
	for (int i = 0; i < cx->nvl; i++) {
		fprintf(o, " && ((unsigned long long)a.t_%s & %d) == 0", m->tensor[cx->vl[i].t].name, cuda_vec_mask(m->tensor[cx->vl[i].t].type, V));
		if (cx->vl[i].cond) fprintf(o, " && %s", cx->vl[i].cond);
	}
	for (int i = 0; i < cx->nvs; i++) fprintf(o, " && ((unsigned long long)a.t_%s & %d) == 0", m->tensor[cx->vs[i].t].name, cuda_vec_mask(m->tensor[cx->vs[i].t].type, V));
	fputs(";\n", o);
	fclose(o);
	o = xmemstream(&res, &rlen);
	fprintf(o, "\tif (fz_vec%s) {\n", V == 4 ? "" : "8");
	/* the loop twice where the point is divided: with shifts when every
	   extent is a power of two (fz_p2), else with divisions. One loop
	   testing each extent (a uniform branch) took 2 more registers, so
	   fewer blocks an SM where the division ran (batchnorm at HW = 3136:
	   +3.3%, H100); apart, the kernel's registers are the larger loop's */
	for (int l = loops - 1; l >= 0; l--) {
		if (loops > 1) fputs(l ? "\tif (fz_p2)\n" : "\telse\n", o);
		fprintf(o, "\tfor (long long q = (long long)blockIdx.x * blockDim.x + threadIdx.x; q < total / %d; q += (long long)gridDim.x * blockDim.x) {\n", V);
		/* the copies' indices, every vector load, the copies, their stores */
		fputs(split[l], o), fputs(idx, o);
		for (int i = 0; i < cx->nvl; i++) vec_load(cx, i, V, o);
		for (int i = 0; i < cx->nvs; i++) fprintf(o, "\t\t%s fz_vs%d[%d];\n", emit_device_type(&m->tensor[cx->vs[i].t]), i, V);
		fputs(body, o);
		fputs(stores, o);
		for (int i = 0; i < cx->nvs; i++) vec_store(cx, i, V, o);
		fputs("\t}\n", o);
	}
	fputs("\t} else\n", o);
	fclose(o);
	for (int i = 0; i < cx->nvl; i++) free(cx->vl[i].lin0), free(cx->vl[i].cond);
	for (int i = 0; i < cx->nvs; i++) {
		free(cx->vs[i].lin0);
		for (int u = 0; u < 8; u++) free(cx->vs[i].mask[u]), cx->vs[i].mask[u] = NULL;
	}
	cx->nvl = cx->nvs = 0;
	free(idx), free(body), free(stores), free(split[0]), free(split[1]);
	return res;
}

/* A split kernel (KernelParams.split): this block's share [fz_lo, fz_hi)
 * of the outermost loop of its first reductions, of gridDim.y shares */
static void split_rows(Cx *cx)
{
	const Dim r = cx->k->split_range;
	FILE *out = cx->out;
	fputs("\tconst long long fz_chunk = (", out), cuda_dim(cx, r, out), fputs(" + gridDim.y - 1) / gridDim.y;\n", out);
	fputs("\tconst long long fz_lo = (long long)blockIdx.y * fz_chunk, fz_hi = fz_lo + fz_chunk < ", out);
	cuda_dim(cx, r, out), fputs(" ? fz_lo + fz_chunk : ", out), cuda_dim(cx, r, out), fputs(";\n", out);
}

/* the kernel compacts a list (STEP_COMPACT) */
static int compacts(const Cx *cx)
{
	for (int sid = cx->k->first_stmt; sid < cx->k->first_stmt + cx->k->nstmt; sid++)
		if (cx->p->op[sid - cx->p->first_stmt] == STEP_COMPACT) return 1;
	return 0;
}

/* A thread per point, grid-stride. Unrolled: U points a thread, every
 * copy's values (and so its loads) before any copy's stores. Sliced: 32
 * points a block, each point's reduction loop shared by FZ_SLICES warps. */
void cuda_kern_point(Cx *cx)
{
	const Module *m = cx->m;
	const Kernel *k = cx->k;
	FILE *out = cx->out;
	int U = k->par.unroll > 1 ? k->par.unroll : 1;
	FILE *pool_keep = NULL;
	char *pool_text = NULL;
	size_t pool_len = 0;
	cuda_kernel_head(cx);
	if (k->has_tail) fputs("\t__shared__ double fz_sh[32];\n", out);
	cuda_tail_decls(cx, 1);
	fputs("\tconst long long total = ", out);
	cuda_space_total(cx, out);
	fputs(";\n", out);
	if (k->par.slices > 1) {
		/* FZ_SLICES warps' worth of threads a point; a pipeline's phase may
		   give a block fewer than 32 points (kernel_points), with the same
		   slices, so the same sums in the same order */
		const int pts = kernel_points(k);
		fprintf(out, "#define FZ_SLICES %d\n", k->par.slices);
		if (pts == 32) fputs("\tconst int fz_lane = threadIdx.x & 31, fz_slice = threadIdx.x >> 5;\n", out);
		else fprintf(out, "\tconst int fz_lane = threadIdx.x %% %d, fz_slice = threadIdx.x / %d; /* %d points a block */\n", pts, pts, pts);
		if (k->par.split) split_rows(cx);
		if (k->par.stage) /* written aside: fz_pool's size is known once the loops are (cuda_reduce.c) */
			cx->pool_live = 0, cx->pool_bytes = 0, pool_keep = out, out = cx->out = xmemstream(&pool_text, &pool_len);
		fprintf(out, "\tfor (long long pb = (long long)blockIdx.x * %d; pb < total; pb += (long long)gridDim.x * %d) {\n", pts, pts);
		fputs("\t\tconst bool fz_live = pb + fz_lane < total;\n", out);
		fputs("\t\tconst long long p = fz_live ? pb + fz_lane : pb;\n", out);
		cx->sliced = 1;
	} else {
		if (U > 1) fprintf(out, "\tconst long long stride = (long long)gridDim.x * blockDim.x;\n");
		if (k->par.vec) {
			cx->div = CUDA_DIV_PLAIN; /* the fallback too: the kernel's registers are its division loop's */
			if (k->nspace > 1) { /* vec_path's loop with shifts */
				fputs("\tconst bool fz_p2 = ", out);
				for (int i = 1; i < k->nspace; i++) fputs(i > 1 ? " && fz_pow2(" : "fz_pow2(", out), cuda_dim(cx, k->space[i], out), fputs(")", out);
				fputs(";\n", out);
			}
			char *c4 = NULL, *v4 = vec_path(cx, 4, &c4), *c8 = NULL, *v8 = NULL;
			if (k->par.vec == 8) v8 = vec_path(cx, 8, &c8); /* 16-bit vectors: 16 bytes a thread first */
			if (v8) fputs(c8, out);
			fputs(c4, out);
			if (v8) fputs(v8, out);
			fputs(v4, out);
			free(c4), free(v4), free(c8), free(v8);
		}
		if (U > 1 && compacts(cx)) {
			/* the same batches in every thread of a block: its compactions
			   meet at __syncthreads (cuda_compact_warp); a copy past the end
			   reads the block's first point */
			fprintf(out, "\tfor (long long pb = (long long)blockIdx.x * blockDim.x; pb < total; pb += %d * stride) {\n", U);
			fputs("\t\tconst long long p = pb + threadIdx.x;\n", out);
		} else if (U > 1) {
			fprintf(out, "\tfor (long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x; p < total; p += %d * stride) {\n", U);
		} else {
			fputs("\tfor (long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x; p < total; p += (long long)gridDim.x * blockDim.x) {\n", out);
		}
	}
	char *deferred[8] = {0};
	size_t dlen[8] = {0};
	for (int u = 0; u < U; u++) {
		char sfx[16] = "", lin[64];
		FILE *dfr = NULL;
		if (U > 1) {
			snprintf(sfx, sizeof sfx, "_%d", u);
			/* a copy past the end reads point p (valid) and stores nothing */
			fprintf(out, "\t\tconst bool ok%s = p + %d * stride < total;\n", sfx, u);
			snprintf(lin, sizeof lin, "(ok%s ? p + %d * stride : %s)", sfx, u, compacts(cx) ? "pb" : "p");
			dfr = xmemstream(&deferred[u], &dlen[u]);
			cx->sink = dfr;
		} else {
			snprintf(lin, sizeof lin, "p");
		}
		cx->sfx = sfx;
		cuda_decompose(cx, lin, 2);
		const Phase *ph = &k->phase[0]; /* the epilogue phase, if any, follows the fold */
		for (int sid = ph->first_stmt; sid < ph->first_stmt + ph->nstmt; sid++) {
			const StepOp op = cx->p->op[sid - cx->p->first_stmt];
			cuda_bind_point(cx, &m->stmt[sid], k->nspace);
			FILE *keep = cx->out;
			if (dfr && op == STEP_GRID_REDUCE) cx->out = dfr;
			switch (op) {
			case STEP_INLINE: break; /* computed where it is read */
			case STEP_GRID_REDUCE: cuda_tail_accumulate(cx, sid, 2, 0); break;
			case STEP_COMPACT:
				if (U > 1) cuda_compact_operands(cx, sid, u);
				else cuda_compact(cx, sid, 2);
				break;
			case STEP_REDUCE: sid += cuda_reductions(cx, sid, 2, 0) - 1; break;
			case STEP_MAP: case STEP_ACCUM: cuda_map(cx, sid, 2, 0); break;
			default: die("step %s in point kernel %s", step_op_name[op], k->name);
			}
			cx->out = keep;
		}
		cuda_resets(cx, 2);
		if (dfr) fclose(dfr);
		cx->sink = NULL;
	}
	for (int u = 0; u < U && U > 1; u++) {
		fprintf(out, "\t\tif (ok_%d) {\n%s\t\t}\n", u, deferred[u] ? deferred[u] : "");
		free(deferred[u]);
	}
	for (int sid = k->first_stmt; sid < k->first_stmt + k->nstmt && U > 1; sid++)
		if (cx->p->op[sid - cx->p->first_stmt] == STEP_COMPACT) cuda_compact_warp(cx, sid, U);
	cx->sfx = "";
	cx->sliced = 0;
	fputs("\t}\n", out);
	if (pool_keep) {
		fclose(out);
		out = cx->out = pool_keep;
		if (cx->pool_live) fprintf(out, "\t__shared__ __align__(16) unsigned char fz_pool[%ld]; /* the warps' tiles, then the slices' folds */\n", cx->pool_bytes);
		fputs(pool_text, out);
		free(pool_text);
		cx->pool_live = 0, cx->pool_bytes = 0;
	}
	if (k->par.slices > 1) fputs("#undef FZ_SLICES\n", out);
	cx->div = CUDA_DIV_TEST;
	cuda_finish_kernel(cx);
}

