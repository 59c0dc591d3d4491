/* Persistent pipelines: a fusion's fused kernels as the phases of one
 * cooperative launch, run `steps` times, each carried output feeding its
 * input on the next step.
 *
 *   pipeline NAME = [repeat T] FUSION(in <- out, ...)
 *     -> the fused schedule at one block size for the launch (pipe_plan)
 *     -> each kernel's template as a __device__ body of (args, block index,
 *        grid size, thread index, block size) (emit_cuda_bodies), called for
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

#include "cuda/cuda.h"
#include "core/die.h"
#include "emit/emit.h"
#include "plan/pipeline.h"

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
	"   and the timer every 16th poll. */\n"
	"__device__ __noinline__ int fz_grid_barrier(fz_pipe_ctl *c, unsigned int *sense, unsigned int step, unsigned int op,\n"
	"                                            unsigned long long budget_ns)\n"
	"{\n"
	"\t__shared__ unsigned int fz_stop;\n"
	"\t__syncthreads();\n"
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

/* the host side's copy of the same types, once per header */
static const char pipe_host_library[] =
	"#ifndef FZ_PIPE_DEFINED\n"
	"#define FZ_PIPE_DEFINED\n"
	"/* a phase of a pipeline step: a launch's virtual grid, or a memset */\n"
	"typedef struct fz_pipe_op { int kind, kernel; unsigned int gx, gy; unsigned long long ptr, bytes; } fz_pipe_op;\n"
	"enum { FZ_PIPE_CTL_BYTES = 256 };\n"
	"#define FZ_PIPE_WATCHDOG_NS 2000000000LL\n"
	"static inline int fz_pipe_streq(const char *a, const char *b)\n"
	"{\n"
	"\twhile (*a && *a == *b) a++, b++;\n"
	"\treturn *a == *b;\n"
	"}\n"
	"#endif\n\n";

const char *pipe_refusal(const Module *m, const Pipeline *pl, Target tgt)
{
	PipePlan pp;
	const char *why = pipe_plan(m, pl, tgt, &pp);
	sched_free(&pp.s);
	return why;
}

/* no block-wide barrier or shared memory between its threads: its blocks
   can share a block of the launch */
static int splittable(const Kernel *k)
{
	if (k->has_tail) return 0;
	switch (k->mode) {
	case KM_SCALAR: case KM_SCATTER: return 1;
	case KM_POINT: return k->par.slices <= 1;
	case KM_ROW: return k->par.warp_rows;
	default: return 0;
	}
}

const char *pipe_plan(const Module *m, const Pipeline *pl, Target tgt, PipePlan *pp)
{
	memset(pp, 0, sizeof *pp);
	Schedule *s = &pp->s;
	plan_build(m, pl->fusion, 1, tgt, s);
	if (s->nk > FZ_PIPE_MAX_KERNELS) return "it has more kernels than a pipeline takes";
	int b = 32, threads = 1 << 30, sliced = 0;
	for (int i = 0; i < s->nk; i++) {
		const Kernel *k = &s->k[i];
		if (k->mode == KM_TILE) return "its tensor-core tile kernel (dynamic shared memory, TMA) cannot be a phase of a persistent launch yet";
		if (k->mode == KM_ROW && k->par.rcache)
			return "its row kernel keeping rows in registers picks its block size at launch from the row's width; it cannot be a phase of a persistent launch yet";
		if (k->mode == KM_POINT && k->par.slices > 1) sliced = 1;
		else if (k->par.block > b) b = k->par.block;
		/* the threads an SM was to hold for this kernel (its register cap) */
		if (k->par.block * k->par.min_blocks < threads) threads = k->par.block * k->par.min_blocks;
		pp->split[i] = (unsigned char)splittable(k);
	}
	/* A sliced reduction keeps its slices, so its sums are the fused
	   variant's in the same order, and takes block / slices points a block
	   instead of 32: at 256 threads and 32 slices, 8 points, so a phase
	   over 1024 points spreads over 128 SMs instead of 32 (belief_steps at
	   1024^2 on an H100: 9.4 -> 5.9 us a step, bench/proto/belief_persist.cu) */
	if (sliced && b < 256) b = 256;
	for (int i = 0; i < s->nk; i++)
		if (s->k[i].mode == KM_POINT && s->k[i].par.slices > 1 && (b % s->k[i].par.slices || b / s->k[i].par.slices > 32))
			return "its sliced reduction cannot share the launch's block size";
	for (int i = 0; i < s->nk; i++)
		if (b % s->k[i].par.block) pp->split[i] = 0;
	for (int i = 0; i < s->nk; i++)
		if (s->k[i].mode == KM_MATMUL && b != 256)
			return "its tiled matrix kernel needs 256-thread blocks and another of its kernels needs more";
	/* The templates walk with blockDim (a sliced reduction: kernel_points) */
	for (int i = 0; i < s->nk; i++) {
		Kernel *k = &s->k[i];
		free(k->name);
		k->name = xasprintf("%s_k%d", pl->name, i);
		if (pp->split[i]) continue;
		k->par.block = b;
	}
	pp->block = b;
	/* at most 1024 threads an SM: the phases share one register budget, and
	   1536 made the scatter-and-compact pair spill */
	if (threads > 1024) threads = 1024;
	pp->min_blocks = threads / b > 1 ? threads / b : 1;
	return NULL;
}

static const Tensor *T(const Module *m, int t) { return &m->tensor[t]; }

/* the runtime ignores the line (a key it does not know); tests read it */
void manifest_pipeline(const Module *m, const Pipeline *pl, Target tgt, FILE *out)
{
	PipePlan pp;
	if (!pipe_plan(m, pl, tgt, &pp)) {
		fprintf(out, "pipeline %s steps=%s block=%d phases=%d", pl->name, pl->repeat ? pl->steps : "1", pp.block, pp.s.nk);
		for (int i = 0; i < pl->ncarry; i++)
			fprintf(out, "%s%s:%s", i ? "," : " carry=", T(m, pl->carry_in[i])->name, T(m, pl->carry_out[i])->name);
		fputc('\n', out);
	}
	sched_free(&pp.s);
}

/* the params struct, the same bytes on both sides */
static void params_struct(const Module *m, const Pipeline *pl, FILE *out)
{
	const Fusion *f = &m->fusion[pl->fusion];
	fprintf(out, "typedef struct fz_%s_params {\n", pl->name);
	fprintf(out, "\tfz_%s_args a; /* step 0's arguments; the carried outputs' final buffers */\n", f->name);
	fprintf(out, "\tunsigned long long carry[%d]; /* the carried outputs' other buffers (scratch) */\n", pl->ncarry ? pl->ncarry : 1);
	fputs("\tunsigned long long ctl; /* the barrier's words (scratch) */\n", out);
	fputs("\tlong long steps; /* launch-time step count */\n", out);
	fputs("\tlong long watchdog_ns; /* a barrier waits at most this long */\n", out);
	fputs("\tint stall_block, stall_op; /* testing: this block leaves before this phase's barrier of step 0 (-1: none) */\n", out);
	fputs("\tint nops, pad;\n", out);
	fprintf(out, "\tfz_pipe_op op[%d];\n", FZ_PIPE_MAX_OPS);
	fprintf(out, "} fz_%s_params;\n\n", pl->name);
}

void emit_pipeline_cuda(const Module *m, const Pipeline *pl, const PipePlan *pp, FILE *out)
{
	const Schedule *s = &pp->s;
	const int block = pp->block;
	const Fusion *f = &m->fusion[pl->fusion];
	fprintf(out, "/* pipeline %s: %s%s of %s, %d phase kernel%s at %d threads a block, one cooperative launch */\n\n", pl->name,
	        pl->repeat ? pl->steps : "one", pl->repeat ? " steps" : " step", f->name, s->nk, s->nk == 1 ? "" : "s", block);
	fputs(pipe_device_library, out);
	params_struct(m, pl, out);
	fputs("#define blockIdx fz_vb\n#define gridDim fz_vg\n#define threadIdx fz_vt\n#define blockDim fz_vd\n", out);
	unsigned char *written = xcalloc((unsigned long)m->ntensor + 1, 1);
	for (int i = 0; i < pl->ncarry; i++) written[pl->carry_in[i]] = 1;
	emit_cuda_bodies(m, s, written, out);
	free(written);
	fputs("#undef blockIdx\n#undef gridDim\n#undef threadIdx\n#undef blockDim\n\n", out);
	fprintf(out, "extern \"C\" __global__ void __launch_bounds__(%d, %d) %s(const __grid_constant__ fz_%s_params p)\n{\n", block,
	        pp->min_blocks, pl->name, pl->name);
	fputs("\tfz_pipe_ctl *const c = (fz_pipe_ctl *)p.ctl;\n", out);
	fputs("\t__shared__ unsigned int fz_sense; /* bit 31 of the barrier word as this launch found it */\n", out);
	fputs("\tif (threadIdx.x == 0) fz_sense = fz_ld_acquire(&c->count) & 0x80000000u;\n", out);
	fputs("\tconst long long T = p.steps;\n", out);
	fputs("\tfor (long long t = 0; t < T; t++) {\n", out);
	fprintf(out, "\t\tfz_%s_args a = p.a;\n", f->name);
	if (pl->ncarry)
		fputs("\t\t/* the carried buffers trade places: step t writes the final buffer when\n"
		      "\t\t   T - 1 - t is even, the scratch one when odd; step t + 1 reads it */\n", out);
	for (int i = 0; i < pl->ncarry; i++) {
		const char *in = T(m, pl->carry_in[i])->name, *o = T(m, pl->carry_out[i])->name;
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
	fputs("\t\t\tif (t == 0 && i == p.stall_op && (int)blockIdx.x == p.stall_block) return;\n", out);
	fputs("\t\t\tif ((t + 1 < T || i + 1 < p.nops) && fz_grid_barrier(c, &fz_sense, (unsigned int)t, (unsigned int)i, (unsigned long long)p.watchdog_ns))\n", out);
	fputs("\t\t\t\treturn;\n", out);
	fputs("\t\t}\n\t}\n}\n\n", out);
}

static void bytes_of(const Fusion *f, const Tensor *x, FILE *out)
{
	fprintf(out, "(unsigned long long)%d", elem_info[x->type].bytes);
	for (int d = 0; d < x->rank; d++) fputs(" * (unsigned long long)", out), host_dim(f, x->dim[d], out);
}

void emit_pipeline_header(const Module *m, const Pipeline *pl, const PipePlan *pp, FILE *out)
{
	const Schedule *s = &pp->s;
	const int block = pp->block;
	const Fusion *f = &m->fusion[pl->fusion];
	const char *P = pl->name;
	fprintf(out, "/* ---- pipeline %s: %s%s of %s in one cooperative launch of %d-thread blocks ---- */\n", P,
	        pl->repeat ? pl->steps : "one", pl->repeat ? " steps" : " step", f->name, block);
	fputs(pipe_host_library, out);
	params_struct(m, pl, out);
	fprintf(out, "#define FZ_%s_BLOCK %d\n\n", P, block);
	/* scratch */
	fprintf(out, "/* The pipeline's scratch: the fused variant's, the carried outputs' second\n"
	             "   buffers, the pipeline's whole-grid partials (if any), the barrier's\n"
	             "   words. Zero it once when you allocate it. */\n");
	fprintf(out, "static inline unsigned long long fz_%s_scratch(fz_%s_params *p, unsigned long long base, int sm)\n{\n", P, P);
	fprintf(out, "\tunsigned long long off = fz_%s_fused_scratch(&p->a, base, sm);\n", f->name);
	fputs("\tconst fz_", out), fprintf(out, "%s_args *a = &p->a;\n\t(void)a;\n", f->name);
	for (int i = 0; i < pl->ncarry; i++) {
		fprintf(out, "\tif (base) p->carry[%d] = base + off;\n\toff += fz_align(", i);
		bytes_of(f, T(m, pl->carry_out[i]), out);
		fputs(");\n", out);
	}
	/* whole-grid partials: a phase may have more (virtual) blocks than the
	   fused kernel had (a sliced reduction's 8 points a block, not 32), so
	   the pipeline sizes its own */
	int tails = 0;
	for (int i = 0; i < s->nk; i++) {
		const Kernel *k = &s->k[i];
		if (!k->ntail) continue;
		if (!tails++) fputs("\tunsigned long long parts = 0;\n", out);
		fputs("\tparts = fz_max_u64(parts, (unsigned long long)(", out);
		kern_template[k->mode]->grid_x(m, f, k, out);
		fprintf(out, ") * %d * 8);\n", k->ntail);
	}
	if (tails) fputs("\tif (base) p->a.ws_part = base + off;\n\toff += fz_align(parts);\n", out);
	fputs("\tif (base) p->ctl = base + off;\n\toff += FZ_PIPE_CTL_BYTES;\n\treturn off;\n}\n\n", out);
	/* the phases: the fused op list at this block size */
	fprintf(out, "/* One step's phases, in order, as an op list at FZ_%s_BLOCK threads a block. */\n", P);
	char *fn = xasprintf("fz_%s_ops", P);
	emit_host_ops(m, s, fn, out);
	free(fn);
	fprintf(out, "/* Fills p's phase table for `steps` steps (watchdog and stall fields left\n"
	             "   as they are: zero watchdog_ns means FZ_PIPE_WATCHDOG_NS). 0, or -1. */\n");
	fprintf(out, "static inline int fz_%s_prepare(fz_%s_params *p, long long steps, int sm)\n{\n", P, P);
	fprintf(out, "\tstatic const char *const kernels[%d] = {", s->nk);
	for (int i = 0; i < s->nk; i++) fprintf(out, "%s\"%s\"", i ? ", " : "", s->k[i].name);
	fputs("};\n", out);
	fprintf(out, "\tfz_op ops[%d];\n", FZ_PIPE_MAX_OPS);
	fprintf(out, "\tconst int n = fz_%s_ops(&p->a, sm, ops, %d);\n", P, FZ_PIPE_MAX_OPS);
	fputs("\tif (n < 0 || steps < 1) return -1;\n", out);
	fputs("\tp->steps = steps, p->nops = n, p->pad = 0;\n", out);
	fputs("\tif (p->watchdog_ns <= 0) p->watchdog_ns = FZ_PIPE_WATCHDOG_NS;\n", out);
	fputs("\tfor (int i = 0; i < n; i++) {\n", out);
	fputs("\t\tp->op[i].kind = ops[i].kind, p->op[i].kernel = -1, p->op[i].ptr = ops[i].ptr, p->op[i].bytes = ops[i].bytes;\n", out);
	fputs("\t\tp->op[i].gx = ops[i].grid[0], p->op[i].gy = ops[i].grid[1];\n", out);
	fprintf(out, "\t\tfor (int k = 0; k < %d && ops[i].kind == FZ_OP_LAUNCH; k++)\n", s->nk);
	fputs("\t\t\tif (fz_pipe_streq(ops[i].kernel, kernels[k])) p->op[i].kernel = k;\n", out);
	fputs("\t\tif (ops[i].kind == FZ_OP_LAUNCH && p->op[i].kernel < 0) return -1;\n\t}\n\treturn 0;\n}\n", out);
	/* the grid's cap: the blocks the largest phase can keep busy */
	fprintf(out, "/* The blocks of FZ_%s_BLOCK threads the largest of p's phases can keep busy\n"
	             "   (a kernel of smaller blocks runs several in one): the launch's grid\n"
	             "   needs no more. */\n", P);
	fprintf(out, "static inline unsigned long long fz_%s_blocks(const fz_%s_params *p)\n{\n", P, P);
	fprintf(out, "\tstatic const unsigned int per[%d] = {", s->nk);
	for (int i = 0; i < s->nk; i++) fprintf(out, "%s%d", i ? ", " : "", pp->split[i] ? block / s->k[i].par.block : 1);
	fputs("};\n\tunsigned long long want = 1;\n", out);
	fputs("\tfor (int i = 0; i < p->nops && i < (int)(sizeof p->op / sizeof p->op[0]); i++) {\n", out);
	fputs("\t\tconst fz_pipe_op *o = &p->op[i];\n", out);
	fprintf(out, "\t\tconst unsigned long long n = o->kind == 1 ? (o->bytes / 4 + %d) / %d\n", block - 1, block);
	fprintf(out, "\t\t\t: o->kernel >= 0 && o->kernel < %d ? ((unsigned long long)o->gx * o->gy + per[o->kernel] - 1) / per[o->kernel] : 1;\n", s->nk);
	fputs("\t\tif (n > want) want = n;\n\t}\n\treturn want;\n}\n", out);
	/* typed launchers */
	fputs("#ifdef FUSERUN_H\n", out);
	fprintf(out, "/* Launches `steps` steps as one cooperative launch on stream, its grid the\n"
	             "   blocks that fit on the device at once (at most max_per_sm an SM when > 0)\n"
	             "   or fz_%s_blocks, the fewer,\n", P);
	fprintf(out, "   p's scratch placed by fz_%s_scratch with the same sm. Asynchronous:\n"
	             "   fz_%s_wait reports a watchdog's expiry. */\n", P, P);
	fprintf(out, "static inline int fz_%s_run(fz_artifact *art, fz_%s_params *p, long long steps, int sm, int max_per_sm,\n"
	             "                                  fz_stream *stream, unsigned int *grid)\n{\n", P, P);
	fprintf(out, "\tif (fz_%s_prepare(p, steps, sm)) return FZ_ERR_INVALID;\n", P);
	fprintf(out, "\tint rc = fz_artifact_check_layout(art, FZ_%s_LAYOUT);\n", f->name);
	fprintf(out, "\tif (!rc) rc = fz_check_sizes(fz_artifact_get_info(art), &p->a, sizeof p->a, NULL);\n");
	fprintf(out, "\treturn rc ? rc : fz_pipeline_launch_capped(art, \"%s\", p, sizeof *p, FZ_%s_BLOCK, max_per_sm, fz_%s_blocks(p), stream, grid);\n}\n", P, P, P);
	fprintf(out, "/* Waits for the stream; FZ_ERR_STALL naming the phase whose barrier's\n"
	             "   watchdog expired (the barrier's words are cleared for the next launch). */\n");
	fprintf(out, "static inline int fz_%s_wait(fz_artifact *art, const fz_%s_params *p, int sm, fz_stream *stream)\n{\n", P, P);
	fprintf(out, "\tfz_op ops[%d];\n\tconst char *names[%d];\n", FZ_PIPE_MAX_OPS, FZ_PIPE_MAX_OPS);
	fprintf(out, "\tint n = fz_%s_ops(&p->a, sm, ops, %d);\n", P, FZ_PIPE_MAX_OPS);
	fputs("\tif (n < 0) n = 0;\n\tfor (int i = 0; i < n; i++) names[i] = ops[i].kernel;\n", out);
	fprintf(out, "\treturn fz_pipeline_wait(art, \"%s\", p->ctl, p->a.ws_count, names, n, stream);\n}\n", P);
	fputs("#endif\n\n", out);
}
