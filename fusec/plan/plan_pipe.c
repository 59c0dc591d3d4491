/* Pipelines: a fusion's fused kernels as the phases of one cooperative
 * launch (plan/pipeline.h), planned from the fused schedule that is
 * already built. Decides the launch's block size, which phases run as
 * several virtual blocks to a block, the reduction unroll of a phase, and
 * why a pipeline cannot be built. */
#include <stdlib.h>
#include <string.h>

#include "core/die.h"
#include "core/namer.h"
#include "plan/plan.h"

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

/* The launch's block size: the largest a phase needs; 0 with *why set when
   a phase cannot be one. */
static int launch_block(PipePlan *pp, int *threads)
{
	const Schedule *s = &pp->s;
	int b = 32, sliced = 0, matmul = 0;
	*threads = 1 << 30;
	if (s->nk > FZ_PIPE_MAX_KERNELS) return pp->why = "it has more kernels than a pipeline takes", 0;
	for (int i = 0; i < s->nk; i++) {
		const Kernel *k = &s->k[i];
		if (k->mode == KM_TILE) return pp->why = "its tensor-core tile kernel (dynamic shared memory, TMA) cannot be a phase of a persistent launch yet", 0;
		if (k->mode == KM_ATTN) return pp->why = "its attention kernel (dynamic shared memory, an entry point a head size) cannot be a phase of a persistent launch yet", 0;
		if (k->mode == KM_ROW && k->par.rcache)
			return pp->why = "its row kernel keeping rows in registers picks its block size at launch from the row's width; it cannot be a phase of a persistent launch yet", 0;
		matmul |= k->mode == KM_MATMUL;
		if (k->mode == KM_POINT && k->par.slices > 1) sliced = 1;
		else if (k->par.block > b) b = k->par.block;
		/* the threads an SM was to hold for this kernel (its register cap) */
		if (k->par.block * k->par.min_blocks < *threads) *threads = k->par.block * k->par.min_blocks;
	}
	/* A sliced reduction keeps its slices, so its sums are the fused
	   variant's in the same order, and takes block / slices points a block
	   instead of 32. At 512 threads and 32 slices, 16 points: a phase over
	   1024 points spreads over 64 SMs, not 32 (belief_steps at 1024^2 on
	   an H100: 9.4 -> 5.9 us a step at 8 points, bench/proto/belief_persist.cu),
	   and each row is read 64 bytes at a time. At 256 threads (8 points,
	   32 bytes of a row a virtual block) the transposed gemv of
	   active_inference_once at 8192^2 ran at 2.6 TB/s against the fused
	   kernel's 3.9 (ncu, H200: 0.1015 ms against 0.0701) and the one
	   launch was slower than the stream; 512 was faster at 1024^2 and
	   8192^2 alike (bench/proto/pipe_bench.c, bench/RESULTS.md). A tiled
	   matrix kernel keeps 256. */
	if (sliced && b < 512) b = matmul ? (b > 256 ? b : 256) : 512;
	for (int i = 0; i < s->nk; i++)
		if (s->k[i].mode == KM_POINT && s->k[i].par.slices > 1 && (b % s->k[i].par.slices || b / s->k[i].par.slices > 32))
			return pp->why = "its sliced reduction cannot share the launch's block size", 0;
	for (int i = 0; i < s->nk; i++)
		if (s->k[i].mode == KM_MATMUL && b != 256)
			return pp->why = "its tiled matrix kernel needs 256-thread blocks and another of its kernels needs more", 0;
	return b;
}

static void plan_one(const Module *m, const Pipeline *pl, const Schedule *fused, Namer *nm, PipePlan *pp)
{
	memset(pp, 0, sizeof *pp);
	pp->pl = pl;
	sched_copy(fused, &pp->s);
	Schedule *s = &pp->s;
	int threads, b = launch_block(pp, &threads);
	if (!b) return;
	for (int i = 0; i < s->nk; i++) pp->split[i] = (unsigned char)(splittable(&s->k[i]) && b % s->k[i].par.block == 0);
	pp->block = b;
	/* at most 1024 threads an SM: the phases share one register budget, and
	   1536 made the scatter-and-compact pair spill; 768 with a reduction
	   split across blocks, whose fold spilled at 64 registers (belief_steps
	   on sm_90a) */
	int split = 0;
	for (int i = 0; i < s->nk; i++) split |= s->k[i].par.split != 0;
	if (threads > (split ? 768 : 1024)) threads = split ? 768 : 1024;
	pp->min_blocks = threads / b > 1 ? threads / b : 1;
	/* The templates walk with blockDim (a sliced reduction: kernel_points).
	   Reduction loops unroll 32 copies: a 1024-long loop of 32 lanes or
	   slices, whole, took a belief step at 1024^2 from 7.7 to 5.9 us on an
	   H100 (bench/proto/belief_persist.cu); the sum's order is the loop's
	   either way. A split reduction keeps its 16: its fold spilled at 64
	   registers, and at 512 threads and 128 registers 32 copies were
	   slower (H200, active_inference_once's gradient at 8192^2 0.0826 ->
	   0.0938 ms, belief_steps at 1024^2 6.9 -> 7.2 us a step: the load
	   queue full, lg_throttle in ncu). */
	for (int i = 0; i < s->nk; i++) {
		Kernel *k = &s->k[i];
		free(k->name);
		k->name = xstrdup(namer_make(nm, "%s_k%d", pl->name, i));
		if (!k->par.split) k->par.red_unroll = 32;
		k->par.stage = 0; /* a phase's blocks are not the launch's (plan_stage) */
		if (!pp->split[i]) k->par.block = b;
	}
	plan_pipe_deps(m, pp);
}

void plan_fusion(const Module *m, int fusion, Target target, FusionPlan *fp)
{
	memset(fp, 0, sizeof *fp);
	fp->fusion = fusion;
	plan_build(m, fusion, 1, target, &fp->fused);
	plan_build(m, fusion, 0, target, &fp->unfused);
	for (int i = 0; i < m->npipeline; i++) fp->npipe += m->pipeline[i].fusion == fusion;
	fp->pipe = xcalloc((size_t)fp->npipe + 1, sizeof *fp->pipe);
	/* the phases' names share the .cu's scope with the variants' kernels */
	Namer nm;
	namer_init(&nm);
	for (int i = 0; i < fp->fused.nk; i++) namer_reserve(&nm, fp->fused.k[i].name);
	for (int i = 0; i < fp->unfused.nk; i++) namer_reserve(&nm, fp->unfused.k[i].name);
	for (int i = 0, n = 0; i < m->npipeline; i++)
		if (m->pipeline[i].fusion == fusion) plan_one(m, &m->pipeline[i], &fp->fused, &nm, &fp->pipe[n++]);
	namer_free(&nm);
}

void plan_fusion_free(FusionPlan *fp)
{
	sched_free(&fp->fused), sched_free(&fp->unfused);
	for (int i = 0; i < fp->npipe; i++) sched_free(&fp->pipe[i].s);
	free(fp->pipe);
	memset(fp, 0, sizeof *fp);
}
