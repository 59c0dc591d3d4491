/* The planner's own shared pieces (plan*.c only): the passes plan_build
 * runs, in order, and what they call in each other.
 *   plan.c         the driver (plan_build)
 *   plan_pred.c    the predicates below, which every pass asks
 *   plan_fuse.c    which statements share a kernel (try_join says why not),
 *                  what is inlined, what a reader may recompute
 *   plan_tile.c    matrix contractions: operand order, tensor cores or CUDA
 *                  cores (and why), the tile shape
 *   plan_attn.c    two contractions around a row softmax: one attention kernel
 *   plan_storage.c who zeroes what for the next run, what lives in device
 *                  memory, each tensor's Storage
 *   plan_launch.c  launch parameters: points a thread, row caches, register caps
 *   plan_steps.c   what each statement does in its kernel, the kernel's phases
 *   plan_shift.c   a row's sum and the squares about its mean in one walk
 *   plan_across.c  the tensors each kernel reads at other rows (sharding)
 *   plan_tune.c    each kernel's signature, and the tuning table's entries
 *   plan_pipe.c    pipelines, from the fused schedule (plan_fusion) */
#ifndef FUSEC_PLAN_IMPL_H
#define FUSEC_PLAN_IMPL_H
#include "plan/plan.h"

/* plan_pred.c */
/* Matrix contraction operand order: 0 as written, 1 swapped, -1 not a matmul. */
int plan_matmul_swapped(const Module *m, const Stmt *s);
/* A batched contraction C(b,m,n) +=! A(b,m,k) * B(b,k,n) in a tensor_eligible stage */
int plan_tile_batched(const Module *m, const Stmt *s);
/* A rank-0 sum, max or min over the space: folded across the whole grid. */
int plan_is_grid_reduction(const Stmt *s);
/* Rank-0 pointwise work with no indices (a scalar epilogue). */
int plan_is_scalar_map(const Stmt *s);
int plan_stmt_reads(const Module *m, const Stmt *s, int t);
/* does expression e (0: none) read tensor t? */
/* marks every tensor statement s reads, tensor t at mark[t - first] */
void plan_mark_reads(const Module *m, const Stmt *s, unsigned char *mark, int first);

/* A reduction over an outer axis: a sum, max or min at the point over dense
   indices, reading some tensor along the point's innermost index (so the
   lanes of a warp read consecutive elements) at a reduced index before it
   (column statistics, X(n, c) summed over n) */
int plan_outer_reduction(const Module *m, const Stmt *s);

/* Are a load's subscripts exactly the statement's free indices, i.e. the
   value at the current point? For a tail reduction, its reduced indices. */
int plan_load_at_point(const Module *m, const Stmt *s, const Expr *ld, int nspace);

/* plan_fuse.c: the kernels of statements [p->first_stmt, p->last_stmt),
   and each statement's kernel, split rule and recomputability */
void plan_group(const Module *m, Schedule *p, int fusion, int fused);

/* plan_tile.c */
int plan_tile_eligible(const Module *m, const Stmt *s, const char **why);
void plan_tile_shape(const Module *m, Kernel *k);
/* the inputs read as A and B, and whether B is read as B(n,k); 0 if an operand is no load */
int plan_tile_operands(const Module *m, const Stmt *s, int *a, int *b, int *bt);
/* Is a tensor-core contraction's A read as A(k,m), m contiguous? */
int plan_tile_a_mmajor(const Module *m, const Stmt *s);

/* plan_attn.c: does the fused variant's run of statements from sid (a
   tensor-core contraction) form an attention kernel? Then fills k's mode,
   space and k->at, and returns the statement after the run; else 0, and
   *why says why not where the run looked like one (NULL otherwise). */
int plan_attention(const Module *m, const Schedule *p, int sid, Kernel *k, const char **why);
/* its launch: block, entry points and their shared memory */
void plan_attn_launch(const Module *m, const Schedule *p, Kernel *k, const unsigned char *stored);

/* plan_storage.c; stored[t - p->first_tensor]: tensor t lives in device memory */
void plan_resets(const Module *m, Schedule *p);
void plan_stored(const Module *m, const Schedule *p, unsigned char *stored);
void plan_storage(const Module *m, Schedule *p, const unsigned char *stored);

/* plan_launch.c */
void plan_launch(const Module *m, Schedule *p, const unsigned char *stored);
void plan_split(const Module *m, Schedule *p);
void plan_stage(const Module *m, Schedule *p);

/* plan_shift.c: a row's sum and the squares about its mean in one walk (Kernel.shift_sq) */
void plan_shift(const Module *m, Schedule *p);
/* a row's max and a later sum of exp(its term - the max) in one walk (Kernel.online_sum) */
void plan_online(const Module *m, Schedule *p);
/* a row's max and a later min of the columns holding it in one walk (Kernel.argmax_idx) */
void plan_argmax(const Module *m, Schedule *p);
/* row kernels whose streamed path reads the row once: 512 threads a row (KernelParams.row_stream) */
void plan_stream(const Module *m, Schedule *p);
/* q's terms are the squares of s's about a value constant over its reduction */
int plan_shifted_pair(const Module *m, const Stmt *s, const Stmt *q);
/* a point kernel's first reduction, if statement sid may share its loop that way; else -1 */
int plan_shift_partner(const Module *m, const Schedule *p, const Kernel *k, int sid);

/* plan_steps.c */
void plan_steps(const Module *m, Schedule *p, const unsigned char *stored);

/* plan_across.c */
void plan_across(const Module *m, Schedule *p);

/* plan_tune.c: each kernel's signature (Kernel.sig), and the parameters of
   the table entry (plan_tune_use) that matches it, if any */
void plan_tune(const Module *m, Schedule *p);
/* the text a signature hashes (malloc'd), for tests and --emit=schedule */
char *plan_signature_text(const Module *m, const Schedule *p, const Kernel *k);
void plan_signature(const Module *m, const Schedule *p, const Kernel *k, char sig[PLAN_SIG_LEN]);

#endif
