/* Persistent pipelines: a fusion's fused kernels as the phases of one
 * cooperative launch, run `steps` times, each carried output feeding its
 * input on the next step.
 *
 *   pipeline NAME = [repeat T] FUSION(in <- out, ...)
 *     -> the fused schedule at one block size for the launch (plan/plan_pipe.c)
 *     -> each kernel's template as a __device__ body of (args, block index,
 *        grid size, thread index, block size) (cuda_bodies), called for
 *        the virtual blocks of its launch, grid-stride over the resident
 *        blocks; a kernel whose threads never meet at a block-wide barrier
 *        keeps its own block size, several virtual blocks to a block
 *     -> phases separated by a grid-wide barrier with a watchdog
 *
 * The phases are exactly the fused variant's op list (launches and memsets),
 * computed by the host at launch with the kernels' own grid formulas and
 * passed in the kernel's parameter: so a pipeline step does what one
 * launch-at-a-time run of the fused variant does, with the same reductions
 * in the same order (bit-identical results, but for a kernel folding a
 * whole-tensor sum at a smaller block than the launch's: dsl/README 3.3).
 *
 * The barrier: one arrival word per pipeline (its scratch), sense reversal
 * in bit 31 (one release reduction a block, block 0's add making the sum
 * 2^31), the expected sense kept by the block, polled with acquire loads,
 * each wait bounded by %globaltimer. Nothing is reset per launch: the low
 * bits return to 0 at every barrier. On an H100 (bench/proto/grid_barrier.cu)
 * it costs 1.1-1.2 us at 132 blocks; the first version (a count reset by the
 * last block, a generation read before arriving, fences) 2.5-2.6 us, an
 * acq_rel atomic whose old value decides the sense 1.9-2.0 us. On
 * expiry a block records the phase and step in the status word and every
 * block leaves at its next barrier; the runtime (fz_pipeline_wait) reports
 * the phase by name and clears the words. */
#include <stdlib.h>
#include <string.h>

#include "core/die.h"
#include "cuda/cuda.h"

/* the barrier and the phase table, once per .cu */
static const char pipe_device_library[] =
	"#ifndef FZ_PIPE_DEFINED\n"
	"#define FZ_PIPE_DEFINED\n"
	"/* a phase of a pipeline step: a launch's virtual grid, or a memset */\n"
	"typedef struct fz_pipe_op { int kind, kernel; unsigned int gx, gy; unsigned long long ptr, bytes; } fz_pipe_op;\n"
	"/* the barrier's words, in the pipeline's scratch (zeroed once; gen unused) */\n"
	"typedef struct fz_pipe_ctl { unsigned int count, gen, status, step; } fz_pipe_ctl;\n"
	"__device__ __forceinline__ unsigned int fz_ld_acquire(const unsigned int *p)\n"
	"{\n"
	"\tunsigned int v;\n"
	"\tasm volatile(\"ld.acquire.gpu.global.u32 %0, [%1];\" : \"=r\"(v) : \"l\"(p) : \"memory\");\n"
	"\treturn v;\n"
	"}\n"
	"__device__ __forceinline__ void fz_st_release(unsigned int *p, unsigned int v)\n"
	"{\n"
	"\tasm volatile(\"st.release.gpu.global.u32 [%0], %1;\" ::\"l\"(p), \"r\"(v) : \"memory\");\n"
	"}\n"
	"__device__ __forceinline__ unsigned long long fz_globaltimer()\n"
	"{\n"
	"\tunsigned long long t;\n"
	"\tasm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t));\n"
	"\treturn t;\n"
	"}\n"
	"__device__ __forceinline__ void fz_red_add_release(unsigned int *p, unsigned int v)\n"
	"{\n"
	"\tasm volatile(\"red.release.gpu.global.add.u32 [%0], %1;\" ::\"l\"(p), \"r\"(v) : \"memory\");\n"
	"}\n"
	"/* Grid-wide barrier after phase `op` of step `step`. Returns nonzero when\n"
	"   the pipeline has stopped (a watchdog expired here or elsewhere): the\n"
	"   block must leave. One word: every block adds 1 but block 0, which adds\n"
	"   2^31 - (blocks - 1), so the last arrival flips bit 31 and the low bits\n"
	"   come back to 0: nothing to reset, whatever the grid of the next launch.\n"
	"   The add returns nothing (a release reduction: the __syncthreads before\n"
	"   it orders the other threads' writes); the block knows which way bit 31\n"
	"   must turn (*sense, read at kernel start: it cannot flip before this\n"
	"   block arrives) and polls with acquire loads, reading the status word\n"
	"   and the timer every 16th poll. A grid of one block meets at\n"
	"   __syncthreads alone (it orders the block's global writes too): no\n"
	"   other block can be waited on, so nothing can stall there. */\n"
	"__device__ __noinline__ int fz_grid_barrier(fz_pipe_ctl *c, unsigned int *sense, unsigned int step, unsigned int op,\n"
	"                                            unsigned long long budget_ns)\n"
	"{\n"
	"\t__shared__ unsigned int fz_stop;\n"
	"\t__syncthreads();\n"
	"\tif (gridDim.x == 1) return 0;\n"
	"\tif (threadIdx.x == 0) {\n"
	"\t\tfz_red_add_release(&c->count, blockIdx.x == 0 ? 0x80000000u - (gridDim.x - 1) : 1u);\n"
	"\t\tconst unsigned int want = *sense ^ 0x80000000u;\n"
	"\t\tunsigned int s = 0;\n"
	"\t\tunsigned long long t0 = 0;\n"
	"\t\tfor (unsigned int i = 0; (fz_ld_acquire(&c->count) & 0x80000000u) != want; i++) {\n"
	"\t\t\tif ((i & 15) != 15) continue;\n"
	"\t\t\tif ((s = *(volatile unsigned int *)&c->status)) break;\n"
	"\t\t\tconst unsigned long long t = fz_globaltimer();\n"
	"\t\t\tif (!t0) t0 = t;\n"
	"\t\t\telse if (t - t0 > budget_ns) {\n"
	"\t\t\t\tif (atomicCAS(&c->status, 0u, op + 1) == 0u) atomicExch(&c->step, step);\n"
	"\t\t\t\ts = 1;\n"
	"\t\t\t\tbreak;\n"
	"\t\t\t}\n"
	"\t\t}\n"
	"\t\t*sense = want;\n"
	"\t\tfz_stop = s ? s : *(volatile unsigned int *)&c->status;\n"
	"\t}\n"
	"\t__syncthreads();\n"
	"\treturn fz_stop != 0;\n"
	"}\n"
	"/* a memset phase: words while aligned, then bytes */\n"
	"__device__ __forceinline__ void fz_pipe_zero(unsigned long long ptr, unsigned long long bytes)\n"
	"{\n"
	"\tconst unsigned long long t = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x, n = (unsigned long long)gridDim.x * blockDim.x;\n"
	"\tconst unsigned long long words = ptr % 4 ? 0 : bytes / 4;\n"
	"\tfor (unsigned long long i = t; i < words; i += n) ((unsigned int *)ptr)[i] = 0u;\n"
	"\tfor (unsigned long long i = words * 4 + t; i < bytes; i += n) ((unsigned char *)ptr)[i] = 0;\n"
	"}\n"
	"#endif\n\n";

/* fz_P_ws (phase o uses the workspace) and fz_P_waits (phase nx must wait
   at a grid barrier for the phases in pend: bit k a kernel, bit 30 one
   that used the workspace, bit 31 a memset), from PipePlan.dep */
static void pipe_waits(const PipePlan *pp, FILE *out)
{
	const char *P = pp->pl->name;
	fprintf(out, "__device__ __forceinline__ bool fz_%s_ws(const fz_pipe_op &o)\n{\n", P);
	fprintf(out, "\treturn o.kind != 1 && (((0x%xu >> o.kernel) & 1u) || (((0x%xu >> o.kernel) & 1u) && o.gy > 1u));\n}\n", pp->tails,
	        pp->splits);
	fprintf(out, "__device__ __forceinline__ bool fz_%s_waits(unsigned int pend, const fz_pipe_op &nx)\n{\n", P);
	fputs("\tif (nx.kind == 1 || (pend & 0x80000000u)) return true;\n\tunsigned int dep = 0xffffu;\n\tswitch (nx.kernel) {\n", out);
	for (int k = 0; k < pp->s.nk; k++) fprintf(out, "\tcase %d: dep = 0x%xu; break;\n", k, pp->dep[k]);
	fprintf(out, "\tdefault: break;\n\t}\n\treturn (pend & dep) != 0u || ((pend & 0x40000000u) && fz_%s_ws(nx));\n}\n\n", P);
}

void cuda_pipeline(const Module *m, const PipePlan *pp, FILE *out)
{
	const Pipeline *pl = pp->pl;
	const Schedule *s = &pp->s;
	const int block = pp->block;
	const Fusion *f = &m->fusion[pl->fusion];
	fprintf(out, "/* pipeline %s: %s%s of %s, %d phase kernel%s at %d threads a block, one cooperative launch */\n\n", pl->name,
	        pl->repeat ? pl->steps : "one", pl->repeat ? " steps" : " step", f->name, s->nk, s->nk == 1 ? "" : "s", block);
	fputs(pipe_device_library, out);
	emit_pipe_params(m, pl, out);
	fputs("#define blockIdx fz_vb\n#define gridDim fz_vg\n#define threadIdx fz_vt\n#define blockDim fz_vd\n", out);
	unsigned char *written = xcalloc((unsigned long)m->ntensor + 1, 1);
	for (int i = 0; i < pl->ncarry; i++) written[pl->carry_in[i]] = 1;
	cuda_bodies(m, s, written, out);
	free(written);
	fputs("#undef blockIdx\n#undef gridDim\n#undef threadIdx\n#undef blockDim\n\n", out);
	pipe_waits(pp, out);
	fprintf(out, "extern \"C\" __global__ void __launch_bounds__(%d, %d) %s(const __grid_constant__ fz_%s_params p)\n{\n", block,
	        pp->min_blocks, pl->name, pl->name);
	fputs("\tfz_pipe_ctl *const c = (fz_pipe_ctl *)p.ctl;\n", out);
	fputs("\t__shared__ unsigned int fz_sense; /* bit 31 of the barrier word as this launch found it */\n", out);
	fputs("\tif (threadIdx.x == 0) fz_sense = fz_ld_acquire(&c->count) & 0x80000000u;\n", out);
	fputs("\tconst long long T = p.steps;\n", out);
	fputs("\tunsigned int fz_pend = 0; /* the phases since the last grid barrier (fz_*_waits) */\n", out);
	fputs("\tfor (long long t = 0; t < T; t++) {\n", out);
	fprintf(out, "\t\tfz_%s_args a = p.a;\n", f->name);
	if (pl->ncarry)
		fputs("\t\t/* the carried buffers trade places: step t writes the final buffer when\n"
		      "\t\t   T - 1 - t is even, the scratch one when odd; step t + 1 reads it */\n", out);
	for (int i = 0; i < pl->ncarry; i++) {
		const char *in = m->tensor[pl->carry_in[i]].name, *o = m->tensor[pl->carry_out[i]].name;
		fprintf(out, "\t\tif (t > 0) a.t_%s = (decltype(a.t_%s))(((T - t) & 1) ? p.carry[%d] : (unsigned long long)p.a.t_%s);\n", in, in, i, o);
		fprintf(out, "\t\ta.t_%s = (decltype(a.t_%s))(((T - 1 - t) & 1) ? p.carry[%d] : (unsigned long long)p.a.t_%s);\n", o, o, i, o);
	}
	fputs("\t\tfor (int i = 0; i < p.nops; i++) {\n", out);
	fputs("\t\t\tconst fz_pipe_op o = p.op[i];\n", out);
	fputs("\t\t\tif (o.kind == 1) {\n\t\t\t\tfz_pipe_zero(o.ptr, o.bytes);\n\t\t\t} else {\n", out);
	fputs("\t\t\t\tconst unsigned long long nb = (unsigned long long)o.gx * o.gy;\n", out);
	fputs("\t\t\t\tconst dim3 g(o.gx, o.gy, 1u);\n", out);
	fputs("\t\t\t\tswitch (o.kernel) {\n", out);
	for (int i = 0; i < s->nk; i++) {
		const int kb = s->k[i].par.block;
		fprintf(out, "\t\t\t\tcase %d:\n", i);
		if (pp->split[i] && kb < block) {
			/* virtual blocks of kb threads, block-index-major so that the
			   first ones spread over every SM */
			fprintf(out, "\t\t\t\t\tfor (unsigned long long vb = (unsigned long long)(threadIdx.x / %d) * gridDim.x + blockIdx.x; vb < nb; "
			             "vb += (unsigned long long)gridDim.x * %d)\n", kb, block / kb);
			fprintf(out, "\t\t\t\t\t\t%s(a, make_uint3((unsigned int)(vb %% o.gx), (unsigned int)(vb / o.gx), 0u), g, "
			             "make_uint3(threadIdx.x %% %d, 0u, 0u), dim3(%d, 1u, 1u));\n", s->k[i].name, kb, kb);
		} else {
			fputs("\t\t\t\t\tfor (unsigned long long vb = blockIdx.x; vb < nb; vb += gridDim.x) {\n", out);
			fprintf(out, "\t\t\t\t\t\t%s(a, make_uint3((unsigned int)(vb %% o.gx), (unsigned int)(vb / o.gx), 0u), g, threadIdx, blockDim);\n",
			        s->k[i].name);
			if (!pp->split[i])
				fputs("\t\t\t\t\t\t__syncthreads(); /* shared memory and early returns: one virtual block at a time */\n", out);
			fputs("\t\t\t\t\t}\n", out);
		}
		fputs("\t\t\t\t\tbreak;\n", out);
	}
	fputs("\t\t\t\tdefault: break;\n\t\t\t\t}\n", out);
	fputs("\t\t\t}\n", out);
	fprintf(out, "\t\t\tfz_pend |= o.kind == 1 ? 0x80000000u : (1u << o.kernel) | (fz_%s_ws(o) ? 0x40000000u : 0u);\n", pl->name);
	fputs("\t\t\tif (t == 0 && i == p.stall_op && (int)blockIdx.x == p.stall_block) return;\n", out);
	fputs("\t\t\tif (t + 1 == T && i + 1 == p.nops) break;\n", out);
	fputs("\t\t\t/* a barrier only where the next phase depends on one since the last */\n", out);
	fprintf(out, "\t\t\tif (!fz_%s_waits(fz_pend, p.op[i + 1 < p.nops ? i + 1 : 0])) continue;\n", pl->name);
	fputs("\t\t\tif (fz_grid_barrier(c, &fz_sense, (unsigned int)t, (unsigned int)i, (unsigned long long)p.watchdog_ns)) return;\n", out);
	fputs("\t\t\tfz_pend = 0;\n", out);
	fputs("\t\t}\n\t}\n}\n\n", out);
}
