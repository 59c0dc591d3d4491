/* The planner's own shared pieces (plan*.c only): the passes plan_build
 * runs, in order, and what they call in each other.
 *   plan.c         the driver (plan_build) and the predicates of plan.h
 *   plan_fuse.c    which statements share a kernel (try_join says why not),
 *                  what is inlined, what a reader may recompute
 *   plan_tile.c    matrix contractions: operand order, tensor cores or CUDA
 *                  cores (and why), the tile shape
 *   plan_storage.c who zeroes what for the next run, what lives in device
 *                  memory, each tensor's Storage
 *   plan_launch.c  launch parameters: points a thread, row caches, register caps
 *   plan_steps.c   what each statement does in its kernel, the kernel's phases */
#ifndef FUSEC_PLAN_IMPL_H
#define FUSEC_PLAN_IMPL_H
#include "plan/plan.h"

/* plan_fuse.c: the kernels of statements [p->first_stmt, p->last_stmt),
   and each statement's kernel, split rule and recomputability */
void plan_group(const Module *m, Schedule *p, int fusion, int fused);
int load_at_point(const Module *m, const Stmt *s, const Expr *ld, int nspace);

/* plan_tile.c */
int tile_eligible(const Module *m, const Stmt *s, const char **why);
void tile_shape(const Module *m, Kernel *k);

/* plan_storage.c; stored[t - p->first_tensor]: tensor t lives in device memory */
void plan_resets(const Module *m, Schedule *p);
void plan_stored(const Module *m, const Schedule *p, unsigned char *stored);
void plan_storage(const Module *m, Schedule *p, const unsigned char *stored);

/* plan_launch.c */
void plan_launch(const Module *m, Schedule *p, const unsigned char *stored);

/* plan_steps.c */
void assign_steps(const Module *m, Schedule *p, const unsigned char *stored);

#endif
