/* The fusion planner: which stages share a kernel, and how each kernel
 * walks its iteration space. Groups are contiguous runs of stages; each
 * decision names the rule that made it, for --explain. */
#ifndef FUSEC_PLAN_H
#define FUSEC_PLAN_H
#include <stdio.h>

#include "ir.h"

/* How a kernel maps its iteration space onto the grid. */
#define KERNEL_MODES(X) \
	X(POINT, "point")   /* a thread per point of the space, grid-stride; reductions loop serially */ \
	X(ROW, "row")       /* a block per point; reductions over the row's last index cooperate */ \
	X(MATMUL, "matmul") /* a tiled matrix contraction with its epilogue in registers */ \
	X(SCATTER, "scatter") /* a warp per outer point, lanes over a ragged range, atomics */ \
	X(SCALAR, "scalar") /* one thread: rank-0 work with no space */

typedef enum {
#define X(k, s) KM_##k,
	KERNEL_MODES(X)
#undef X
	KM_N
} KernelMode;
extern const char *const kernel_mode_name[KM_N];

/* Why two adjacent stages were not fused. */
#define SPLIT_RULES(X) \
	X(NONE, "fused") \
	X(UNFUSED, "the unfused variant runs every stage alone") \
	X(AFTER_GLOBAL, "a whole-grid reduction must finish before later work that is not rank-0 can use it") \
	X(SPACE, "different iteration spaces") \
	X(NOT_AT_POINT, "it reads a value of this kernel at another point of the space: that needs every block to finish first") \
	X(SCATTER, "a scatter's target is complete only when every block has finished") \
	X(MATMUL_IN, "a matrix contraction starts its own tiled kernel") \
	X(MATMUL_EPI, "only pointwise work over the contraction's output fuses into its epilogue") \
	X(ROW_MODE, "a row kernel fuses only work over its rows or over their elements") \
	X(POINT_MODE, "a thread-per-point kernel fuses only work over the same points") \
	X(TAIL_TWICE, "a kernel folds at most one set of whole-grid reductions")

typedef enum {
#define X(k, s) SPLIT_##k,
	SPLIT_RULES(X)
#undef X
	SPLIT_N
} SplitRule;
extern const char *const split_rule_text[SPLIT_N];

typedef struct Kernel {
	char name[96];
	KernelMode mode;
	int first_stmt, nstmt;
	int fusion;
	int space_stmt;           /* the statement whose free indices are the space */
	int nspace;
	Dim space[MAX_RANK];      /* outer iteration space */
	int has_inner;            /* ROW: the cooperative inner dimension */
	Dim inner;
	int has_tail;             /* ends in a whole-grid (deterministic) reduction */
	int block;                /* threads per block */
	int unroll;               /* POINT maps: points per thread, loads first */
	int slices;               /* POINT reductions: warps sharing each point's loop */
	int rcache;               /* ROW: elements of each input row a thread keeps in registers */
	int warp_rows;            /* ROW: a warp per row (rows walked once), not a block */
	int min_blocks;           /* blocks an SM must hold (__launch_bounds__), so registers */
} Kernel;

typedef struct Plan {
	Kernel *k;
	int nk, cap;
	SplitRule *why;           /* per statement: why it did not join the previous kernel */
	int *stmt_kernel;         /* per statement: its kernel, -1 if inlined */
	unsigned char *inlined;   /* per statement: a pointwise temp computed where it is read */
	int *reset_by;            /* per tensor that must start at zero: the kernel that
	                             zeroes it for the next run (-1: a memset op does) */
	unsigned char *stored;    /* per tensor: lives in device memory */
} Plan;

/* fused = 0 gives the one-kernel-per-stage plan. */
void plan_build(const Module *m, int fusion, int fused, Plan *p);
void plan_free(Plan *p);
/* Matrix contraction operand order: 0 as written, 1 swapped, -1 not a matmul. */
int plan_matmul_swapped(const Module *m, const Stmt *s);
/* A rank-0 sum, max or min over the space: folded across the whole grid. */
int plan_is_grid_reduction(const Stmt *s);
/* Rank-0 pointwise work with no indices (a scalar epilogue). */
int plan_is_scalar_map(const Stmt *s);
int plan_reads_tensor(const Module *m, int e, int t);
int plan_stmt_reads(const Module *m, const Stmt *s, int t);
void plan_explain(const Module *m, int fusion, const Plan *fused, FILE *out);

#endif
