/* Persistent pipelines (pipeline.c): planned from the fused schedule,
 * emitted into the fusion's .cu (the persistent kernel and its phases) and
 * header (params, scratch, phase table, launchers). */
#ifndef FUSEC_PIPELINE_H
#define FUSEC_PIPELINE_H
#include <stdio.h>

#include "core/ir.h"
#include "plan/schedule.h"

#define FZ_PIPE_MAX_OPS 32     /* phases of one step (the params struct holds them) */
#define FZ_PIPE_MAX_KERNELS 16

/* The pipeline's plan: the fused schedule, its kernels named NAME_kI; one
   block size for the launch (the largest any phase needs). A phase whose
   threads never meet at a block-wide barrier (warp rows, plain point maps,
   scatters, scalars: split[k]) keeps its own block size and runs as several
   virtual blocks in each block; the others run at the launch's size. */
typedef struct PipePlan {
	Schedule s;
	int block;              /* threads a block of the launch */
	int min_blocks;         /* __launch_bounds__: blocks an SM must hold */
	unsigned char split[FZ_PIPE_MAX_KERNELS];
} PipePlan;

/* NULL, or why the pipeline cannot be built; pp->s is to be freed either way */
const char *pipe_plan(const Module *m, const Pipeline *pl, Target tgt, PipePlan *pp);
const char *pipe_refusal(const Module *m, const Pipeline *pl, Target tgt);
void emit_pipeline_cuda(const Module *m, const Pipeline *pl, const PipePlan *pp, FILE *out);
/* the manifest's line: pipeline NAME steps=T|1 block=B phases=K [carry=IN:OUT,...] */
void manifest_pipeline(const Module *m, const Pipeline *pl, Target tgt, FILE *out);
void emit_pipeline_header(const Module *m, const Pipeline *pl, const PipePlan *pp, FILE *out);

#endif
