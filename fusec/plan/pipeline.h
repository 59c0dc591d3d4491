/* Persistent pipelines, planned once per fusion from its fused schedule
 * (plan_pipe.c): the kernels become the phases of one cooperative launch
 * at one block size. The .cu's persistent kernel (cuda/pipe_kernel.c), the
 * header's params, scratch and launchers (host/pipe_header.c) and the
 * manifest's pipeline line print this plan. */
#ifndef FUSEC_PIPELINE_H
#define FUSEC_PIPELINE_H
#include "plan/schedule.h"

#define FZ_PIPE_MAX_OPS 32     /* phases of one step (the params struct holds them) */
#define FZ_PIPE_MAX_KERNELS 16

/* A pipeline's plan: a copy of the fused schedule, its kernels named
   PIPELINE_kI; one block size for the launch (the largest any phase needs).
   A phase whose threads never meet at a block-wide barrier (warp rows,
   plain point maps, scatters, scalars: split[k]) keeps its own block size
   and runs as several virtual blocks in each block; the others run at the
   launch's size. */
typedef struct PipePlan {
	const Pipeline *pl;
	const char *why;        /* NULL, or why it cannot be built (then nothing below is set) */
	Schedule s;
	int block;              /* threads a block of the launch */
	int min_blocks;         /* __launch_bounds__: blocks an SM must hold */
	unsigned char split[FZ_PIPE_MAX_KERNELS];
	/* Which phases must wait for which (plan_pipe_deps.c): bit j of dep[k]
	   when kernel k touches device memory that kernel j writes, or writes
	   what j reads (a carried output and its input are one tensor). The
	   launch puts a grid barrier before a phase only where a phase since
	   the last barrier is one of those, or where both use the workspace:
	   the kernels in `tails` (a whole-grid fold) always, those in `splits`
	   when their grid has a y (a reduction split across blocks). */
	unsigned int dep[FZ_PIPE_MAX_KERNELS];
	unsigned int tails, splits;
} PipePlan;

/* fills pp's dep, tails and splits from its schedule (plan_pipe_deps.c) */
void plan_pipe_deps(const Module *m, PipePlan *pp);

#endif
