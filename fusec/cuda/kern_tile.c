/* Template: TILE kernels, a matrix contraction on tensor cores with its
 * pointwise epilogue fused in registers. The mainloop is fixed CUDA text
 * (tile_gemm.cuh: a persistent block of a loading and two multiplying
 * warpgroups; wgmma fed by TMA on sm_90a, mma.sync on sm_80 and sm_90,
 * chosen by the preprocessor, so one .cu serves every target). What is
 * generated per kernel is the epilogue, rendered by the shared statement
 * code as a functor called at every point of C inside [M,N], and the entry
 * point. Launch: 384 threads, min(128 x 64 tiles, SMs) blocks, the
 * schedule's dynamic shared memory and, as a second parameter, the tensor
 * maps of A and B that the runtime makes (runtime/artifact.c); the grid is
 * host/grid.c's. */
#include <stdlib.h>
#include <string.h>

#include "cuda/cuda.h"
#include "core/die.h"

static const char mma_lib[] =
#include "mma_common.inc"
	;
static const char tile_lib[] =
#include "tile_gemm.inc"
	;

void cuda_mma_library(FILE *out) { fputs(mma_lib, out), fputc('\n', out); }
void cuda_tile_library(FILE *out) { fputs(tile_lib, out), fputc('\n', out); }

void cuda_kern_tile(Cx *cx)
{
	const Module *m = cx->m;
	const Kernel *k = cx->k;
	const Stmt *c = &m->stmt[k->first_stmt];
	const char *fname = m->fusion[cx->fusion].name;
	FILE *out = cx->out;
	const int ta = k->tile_a, tb = k->tile_b; /* A(m,k) or A(k,m), and B(k,n) or B(n,k) */
	ElemType et = m->tensor[ta].type, etb = m->tensor[tb].type;
	const int fp8 = elem_is_fp8(et) && elem_is_fp8(etb); /* e4m3 and e5m2 in any pair */
	/* the mainloop's shapes are fixed text: the schedule must ask for them */
	if (k->par.block != 384 || k->par.tile_m != 128 || k->par.tile_n != 256 || k->par.tile_n_min != 64 ||
	    k->par.tile_k != 128 / elem_info[et].bytes || (!fp8 && ((et != ET_F16 && et != ET_BF16 && et != ET_F32) || etb != et)) ||
	    (fp8 && (k->par.a_mmajor || !k->par.b_kmajor)))
		die("tile kernel %s: block %d, tile %dx%d..%dx%d, operands %s and %s", k->name, k->par.block, k->par.tile_m,
		    k->par.tile_n, k->par.tile_n_min, k->par.tile_k, elem_info[et].name, elem_info[m->tensor[tb].type].name);
	/* the epilogue at (s0, s1), batched (s0, s1, s2), v_acc_ the accumulator there */
	const int bat = k->nspace == 3;
	if (k->nspace != 2 + bat) die("tile kernel %s: %d dimensions", k->name, k->nspace);
	fprintf(out, "struct %s_epi {\n\tconst fz_%s_args &a;\n", k->name, fname);
	fprintf(out, "\t__device__ __forceinline__ void operator()(const long long s0, const long long s1, %sconst float v_acc_) const\n\t{\n",
	        bat ? "const long long s2, " : "");
	cx->w.compute = ET_F32, cx->w.half = 0; /* the contraction's own arithmetic */
	cuda_bind_point(cx, c, k->nspace);
	const char *v = cuda_contract_value(cx, c, "v_acc_", 2);
	if (sched_stored(cx->p, c->out)) cuda_store_target(cx, c, v, 2);
	cuda_publish(cx, c, v);
	for (int sid = k->first_stmt + 1; sid < k->first_stmt + k->nstmt; sid++) {
		/* a pointwise temp between the contraction and its epilogue, of any
		   shape: computed where it is read (as kern_matmul.c skips it); bound
		   at the tile's point it died of an index the tile does not have */
		if (cx->p->op[sid - cx->p->first_stmt] == STEP_INLINE) continue;
		cuda_bind_point(cx, &m->stmt[sid], k->nspace);
		cuda_map(cx, sid, 2, 0);
	}
	fputs("\t}\n};\n\n", out);
	cuda_clear_locals(cx);
	fprintf(out, "extern \"C\" __global__ void __launch_bounds__(%d, 1) %s(const __grid_constant__ fz_%s_args a, "
	        "const __grid_constant__ fz_tile_maps tm)\n{\n", k->par.block, k->name, fname);
	const Fusion *f = &m->fusion[cx->fusion];
	for (int t = f->first_tensor; t < f->first_tensor + f->ntensor; t++)
		if (cx->p->reset_by[t - cx->p->first_tensor] == cx->kernel_id && m->tensor[t].rank == 0)
			fprintf(out, "\tif (blockIdx.x == 0 && threadIdx.x == 0) a.t_%s[0] = 0; /* for a later kernel */\n", m->tensor[t].name);
	/* ET: 0 f16, 1 bf16, 2 f32 read as tf32, fp8 3 + (A e5m2) + 2 (B e5m2):
	   3 e4m3 x e4m3, 4 e5m2 x e4m3, 5 e4m3 x e5m2, 6 e5m2 x e5m2
	   (tile_gemm.cuh fz_et_fp8); B read as B(n,k): the mainloop's k-major B
	   (template argument BT); batched (BAT): the batch count last; A read as
	   A(k,m): AT; C^T computed: TC. Arguments left at their defaults are not
	   written. */
	const int etv = fp8 ? 3 + (et == ET_F8E5M2) + 2 * (etb == ET_F8E5M2) : et == ET_F32 ? 2 : et == ET_BF16;
	const int targ[5] = {etv, k->par.b_kmajor, bat, k->par.a_mmajor, k->par.c_swapped};
	int nt = 5;
	while (nt > 1 && !targ[nt - 1]) nt--;
	fputs("\tfz_tile_gemm<", out);
	for (int i = 0; i < nt; i++) fprintf(out, "%s%d", i ? ", " : "", targ[i]);
	/* swapped: the mainloop's M is C's N (tile_a is the tensor read as B) */
	const int sw = k->par.c_swapped;
	fprintf(out, ">(%s_epi{a}, tm, a.t_%s, a.t_%s, ", k->name, m->tensor[ta].name, m->tensor[tb].name);
	cuda_dim(cx, k->space[bat + sw], out), fputs(", ", out), cuda_dim(cx, k->space[bat + 1 - sw], out), fputs(", ", out);
	cuda_dim(cx, m->index[c->first_index + 2 + bat].range, out);
	if (bat) fputs(", ", out), cuda_dim(cx, k->space[0], out);
	fputs(");\n}\n\n", out);
}

