/* Template: MATMUL kernels, C(m,n) = sum_k A(m,k) B(k,n) by 64 x 64 tiles
 * in shared memory (k-steps of KernelParams.tile_k), 4 x 4 outputs a
 * thread accumulated in registers, then the fused pointwise epilogue per
 * element. Grid: (N / tile_n, M / tile_m) blocks. */
#include <stdlib.h>
#include <string.h>

#include "cuda/cuda.h"
#include "core/die.h"

void cuda_kern_matmul(Cx *cx)
{
	const Module *m = cx->m;
	const Kernel *k = cx->k;
	const Stmt *c = &m->stmt[k->first_stmt];
	FILE *out = cx->out;
	int swapped = k->par.swapped;
	int ea = swapped ? c->contract_b : c->contract_a, eb = swapped ? c->contract_a : c->contract_b;
	const Index *kx = &m->index[c->first_index + 2];
	int T = k->par.tile_m, BK = k->par.tile_k;
	/* the thread mapping below is 16 x 16 threads of 4 x 4 outputs */
	if (T != 64 || k->par.tile_n != 64 || k->par.block != 256) die("matmul kernel %s: tile %dx%d, block %d", k->name, T, k->par.tile_n, k->par.block);
	cuda_kernel_head(cx);
	fprintf(out, "\t__shared__ float As[%d][%d];\n\t__shared__ float Bs[%d][%d];\n", BK, T + 4, BK, T + 4);
	fputs("\tconst long long M = ", out), cuda_dim(cx, k->space[0], out), fputs(", N = ", out), cuda_dim(cx, k->space[1], out);
	fputs(", K = ", out), cuda_dim(cx, kx->range, out), fputs(";\n", out);
	fprintf(out, "\tconst long long m0 = (long long)blockIdx.y * %d, n0 = (long long)blockIdx.x * %d;\n", T, T);
	fputs("\tconst int tx = threadIdx.x % 16, ty = threadIdx.x / 16;\n", out);
	fputs("\tfloat acc[4][4];\n#pragma unroll\n\tfor (int i = 0; i < 4; ++i)\n#pragma unroll\n\t\tfor (int j = 0; j < 4; ++j) acc[i][j] = 0.f;\n", out);
	fprintf(out, "\tfor (long long k0 = 0; k0 < K; k0 += %d) {\n", BK);
	cx->w.compute = ET_F32, cx->w.half = 0; /* the contraction's own arithmetic */
	cx->cur = k->first_stmt;
	cx->bind[c->first_index - cx->first_index] = strdup("gm");
	cx->bind[c->first_index + 1 - cx->first_index] = strdup("gn");
	cx->bind[c->first_index + 2 - cx->first_index] = strdup("gk");
	for (int i = 0; i < 3; i++) cx->role[c->first_index + i - cx->first_index] = CUDA_ROLE_NONE;
	char *va = emit_render(&cx->w, ea), *vb = emit_render(&cx->w, eb);
	fprintf(out, "\t\tfor (int q = threadIdx.x; q < %d; q += blockDim.x) {\n", T * BK);
	fprintf(out, "\t\t\tconst int mm = q / %d, kk = q %% %d;\n", BK, BK);
	fputs("\t\t\tconst long long gm = m0 + mm, gk = k0 + kk;\n", out);
	fprintf(out, "\t\t\tAs[kk][mm] = gm < M && gk < K ? (float)(%s) : 0.f;\n\t\t}\n", va);
	fprintf(out, "\t\tfor (int q = threadIdx.x; q < %d; q += blockDim.x) {\n", T * BK);
	fprintf(out, "\t\t\tconst int kk = q / %d, nn = q %% %d;\n", T, T);
	fputs("\t\t\tconst long long gn = n0 + nn, gk = k0 + kk;\n", out);
	fprintf(out, "\t\t\tBs[kk][nn] = gn < N && gk < K ? (float)(%s) : 0.f;\n\t\t}\n", vb);
	free(va), free(vb);
	fputs("\t\t__syncthreads();\n#pragma unroll\n", out);
	fprintf(out, "\t\tfor (int kk = 0; kk < %d; ++kk) {\n", BK);
	fputs("\t\t\tfloat av[4], bv[4];\n#pragma unroll\n\t\t\tfor (int i = 0; i < 4; ++i) av[i] = As[kk][ty + 16 * i], bv[i] = Bs[kk][tx + 16 * i];\n", out);
	fputs("#pragma unroll\n\t\t\tfor (int i = 0; i < 4; ++i)\n#pragma unroll\n\t\t\t\tfor (int j = 0; j < 4; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);\n", out);
	fputs("\t\t}\n\t\t__syncthreads();\n\t}\n", out);
	/* epilogue, per element, in registers */
	fputs("#pragma unroll\n\tfor (int i = 0; i < 4; ++i)\n#pragma unroll\n\t\tfor (int j = 0; j < 4; ++j) {\n", out);
	fputs("\t\t\tconst long long s0 = m0 + ty + 16 * i, s1 = n0 + tx + 16 * j;\n", out);
	fputs("\t\t\tif (s0 >= M || s1 >= N) continue;\n", out);
	fputs("\t\t\tconst float v_acc_ = acc[i][j];\n", out);
	for (int i = 0; i < 3; i++) free(cx->bind[c->first_index + i - cx->first_index]), cx->bind[c->first_index + i - cx->first_index] = NULL;
	cuda_bind_point(cx, c, 2);
	const char *name = cuda_contract_value(cx, c, "v_acc_", 3);
	if (sched_stored(cx->p, c->out)) cuda_store_target(cx, c, name, 3);
	cuda_publish(cx, c, name);
	for (int sid = k->first_stmt + 1; sid < k->first_stmt + k->nstmt; sid++) {
		if (cx->p->op[sid - cx->p->first_stmt] == STEP_INLINE) continue; /* computed where it is read */
		cuda_bind_point(cx, &m->stmt[sid], 2);
		cuda_map(cx, sid, 3, 0);
	}
	fputs("\t\t}\n}\n\n", out);
	cuda_clear_locals(cx);
}

