/* The fusion planner: which stages share a kernel, what each statement
 * does in it, where each intermediate lives and how each kernel is
 * launched; the result is a Schedule (schedule.h) per variant and a plan
 * per pipeline, built once per fusion (FusionPlan) and handed to every
 * writer. Groups are contiguous runs of stages; each split names the rule
 * that made it, for --explain. */
#ifndef FUSEC_PLAN_H
#define FUSEC_PLAN_H
#include <stdio.h>

#include "core/ir.h"
#include "plan/pipeline.h"
#include "plan/schedule.h"

/* Everything the writers print about one fusion, planned once: both
   variants' schedules and the fusion's pipelines, in the spec's order. */
typedef struct FusionPlan {
	int fusion;
	Schedule fused, unfused;
	int npipe;
	PipePlan *pipe;
} FusionPlan;

/* The static shared memory a block of kernel k declares (its template's
   arrays: a sliced reduction's partials, FZ_SLICES x points x k values;
   the fixed scratch of the fold and the block reductions); *over is the
   statement whose reduction takes it past limit bytes, or -1 (plan_launch.c) */
long plan_static_smem(const Module *m, const Schedule *p, const Kernel *k, long limit, int *over);
/* what a block may declare statically on every target */
#define PLAN_STATIC_SMEM_MAX 49152

/* The values an integer input must take (values.c): LO..HI, each a size
   symbol (-1: none) plus a number; known = 0 when no use bounds it. */
typedef struct ValueRange {
	int known;
	int lo_sym, hi_sym;
	long long lo, hi;
	int nondecreasing;        /* a ragged range's bound: a CSR row pointer */
	int nonzero;              /* an integer divisor */
} ValueRange;
void plan_input_values(const Module *m, int fusion, int t, ValueRange *v);

/* The tuning table every later plan reads, and whose architecture's
   entries (NULL: the built-in rules alone); main.c keeps it alive until
   the last plan is freed (plan_tune.c). */
struct TuneTable;
void plan_tune_use(const struct TuneTable *t, const char *arch);

/* --explain's numbers (explain_cost.c): the bytes each kernel of both
   variants loads and stores, as sums over the sizes and, where size_name
   gives every size of the fusion, at size_value; each kernel's registers
   and spilled bytes where regs[v] and spill[v] have them (v 0 fused, 1
   unfused; an entry < 0 is unknown), counted by ptxas for arch; no_regs:
   a line saying why there are none, or NULL. */
typedef struct ExplainCost {
	const char *const *size_name;
	const long long *size_value;
	int nsize;
	const int *regs[2], *spill[2];
	const char *arch, *no_regs;
} ExplainCost;
void plan_explain_cost(const Module *m, const FusionPlan *fp, const ExplainCost *c, FILE *out);

/* The writers' one entry to the planner (plan_pipe.c). */
void plan_fusion(const Module *m, int fusion, Target target, FusionPlan *fp);
void plan_fusion_free(FusionPlan *fp);

#endif
