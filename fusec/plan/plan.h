/* The fusion planner: which stages share a kernel, what each statement
 * does in it, where each intermediate lives and how each kernel is
 * launched; the result is a Schedule (schedule.h). Groups are contiguous
 * runs of stages; each split names the rule that made it, for --explain.
 *
 * The predicates below are the planner's own vocabulary; the emitters
 * never call them: they read what the schedule recorded. */
#ifndef FUSEC_PLAN_H
#define FUSEC_PLAN_H
#include <stdio.h>

#include "core/ir.h"
#include "plan/schedule.h"

/* Matrix contraction operand order: 0 as written, 1 swapped, -1 not a matmul. */
int plan_matmul_swapped(const Module *m, const Stmt *s);
/* A batched contraction C(b,m,n) +=! A(b,m,k) * B(b,k,n) in a tensor_eligible stage */
int plan_tile_batched(const Module *m, const Stmt *s);
/* A rank-0 sum, max or min over the space: folded across the whole grid. */
int plan_is_grid_reduction(const Stmt *s);
/* Rank-0 pointwise work with no indices (a scalar epilogue). */
int plan_is_scalar_map(const Stmt *s);
int plan_reads_tensor(const Module *m, int e, int t);
int plan_stmt_reads(const Module *m, const Stmt *s, int t);

#endif
