/* The schedule: everything the back end prints, decided once by the
 * planner (plan.c) for one fusion, one variant and one target.
 *
 *   spec -> checked IR -> [plan/] Schedule -> [cuda/kern_*.c] CUDA, [host/] launches, [artifact/] manifest
 *
 * The emitters read this struct and decide nothing: which statements share
 * a kernel, what each statement does inside its kernel (Step), where every
 * intermediate lives (Storage), the launch parameters of each kernel
 * (KernelParams) and every kernel name are here. `fusec --emit=schedule`
 * prints it (schedule.c) and tests assert on it.
 *
 * Extending it:
 *  - a new target: add it to TARGETS; plan_build gets it and may choose
 *    different kinds or parameters (the artifact then needs a .cu per target);
 *  - a new kernel kind: add it to KERNEL_MODES, write its template as
 *    cuda/kern_NAME.c and its launch geometry in host/grid.c, and register
 *    the template in cuda/emit_cuda.c's table;
 *  - tuned parameters: fill Kernel.par (and .par.tuned, the table entry
 *    used) in plan_launch.c; the templates read only .par.
 * Its arrays hold the fusion's statements and tensors only, statement sid
 * at [sid - first_stmt] and tensor t at [t - first_tensor] (a fusion's ids
 * are contiguous in the Module): sized by the Module's, a file of many
 * fusions cost each fusion the whole file's size. A schedule is meaningful
 * only with the Module it was built from. */
#ifndef FUSEC_SCHEDULE_H
#define FUSEC_SCHEDULE_H
#include <stdio.h>

#include "core/ir.h"

/* Targets a schedule can be built for: enum name, --arch spelling. */
#define TARGETS(X) \
	X(SM_80, "sm_80") \
	X(SM_90, "sm_90") \
	X(SM_90A, "sm_90a") /* Hopper's arch-specific features: wgmma, setmaxnreg */ \
	X(SM_100, "sm_100") /* Blackwell (B200): the sm_90 code paths, mma.sync; not run on one yet */ \
	X(SM_120, "sm_120") /* Blackwell (RTX 50): the same; not run on one yet */

typedef enum {
#define X(e, s) TGT_##e,
	TARGETS(X)
#undef X
	TGT_N
} Target;
extern const char *const target_name[TGT_N];
int target_lookup(const char *s); /* -1 if unknown */

/* How a kernel maps its iteration space onto the grid; one template each
 * (cuda/kern_point.c, kern_row.c, kern_matmul.c, kern_tile.c, kern_scatter.c, kern_scalar.c, kern_attn.c). */
#define KERNEL_MODES(X) \
	X(POINT, "point")   /* a thread per point of the space, grid-stride; reductions loop serially */ \
	X(ROW, "row")       /* a block (or warp) per point; reductions over the row's last index cooperate */ \
	X(MATMUL, "matmul") /* a tiled matrix contraction with its epilogue in registers */ \
	X(TILE, "tile")     /* the same on tensor cores: f16/bf16 operands, f32 accumulators (kern_tile.c) */ \
	X(SCATTER, "scatter") /* a warp per outer point, lanes over a ragged range, atomics */ \
	X(SCALAR, "scalar") /* one thread: rank-0 work with no space */ \
	X(ATTN, "attention") /* two tensor-core products around a row softmax carried online (kern_attn.c) */

typedef enum {
#define X(k, s) KM_##k,
	KERNEL_MODES(X)
#undef X
	KM_N
} KernelMode;
extern const char *const kernel_mode_name[KM_N];

/* What a statement does inside its kernel: which piece of the kernel's
 * template renders it. One per statement of the fusion. */
#define STEP_OPS(X) \
	X(NONE, "none")               /* not in this variant (another fusion's) */ \
	X(INLINE, "inline")           /* pointwise temp: recomputed where it is read, no kernel */ \
	X(MAP, "map")                 /* a value at the kernel's point (masked or not) */ \
	X(ACCUM, "accum")             /* t(point) += value: read-modify-write at the point */ \
	X(REDUCE, "reduce")           /* a reduction looping over its reduced indices at the point */ \
	X(GRID_REDUCE, "grid-reduce") /* rank-0 reduction over the whole space: partials, then the fold */ \
	X(EPILOGUE, "epilogue")       /* rank-0 work after the fold, by one thread */ \
	X(COMPACT, "compact")         /* list <- value where mask: an atomic slot each */ \
	X(ROW_ELEM, "row-elem")       /* ROW: an element of the row, walked by the block */ \
	X(ROW_ONCHIP, "row-onchip")   /* ROW: an element of the row nobody stores: readers recompute it */ \
	X(CONTRACT, "contract")       /* MATMUL: the tiled mainloop */ \
	X(SCATTER, "scatter")         /* SCATTER: atomic adds through a gathered subscript */ \
	X(SCALAR, "scalar")           /* SCALAR kernel: rank-0 work by one thread */ \
	X(ONLINE, "online")           /* ATTN: the row max, the exponentials, their sum and the normalised row,
	                                 carried across blocks of the row with rescaling, never stored */

typedef enum {
#define X(e, s) STEP_##e,
	STEP_OPS(X)
#undef X
	STEP_N
} StepOp;
extern const char *const step_op_name[STEP_N];

/* Where an intermediate's value lives. Inputs are ST_PARAM. */
#define STORAGES(X) \
	X(PARAM, "param")           /* an input: the caller's memory */ \
	X(STORED, "stored")         /* device memory (outputs, temps that leave their kernel) */ \
	X(REGISTERS, "registers")   /* a local of the kernel that computes it */ \
	X(RECOMPUTED, "recomputed") /* never materialised: each reader computes it again */

typedef enum {
#define X(e, s) ST_##e,
	STORAGES(X)
#undef X
	ST_N
} Storage;
extern const char *const storage_name[ST_N];

/* What follows a phase before the next one may start. */
#define BARRIERS(X) \
	X(NONE, "none") \
	X(GRID_FOLD, "grid-fold") /* per-block partials; the last block to finish folds them in block order */

typedef enum {
#define X(e, s) BAR_##e,
	BARRIERS(X)
#undef X
	BAR_N
} Barrier;
extern const char *const barrier_name[BAR_N];

/* A phase is a run of a kernel's statements over one space, by one kind;
 * a kernel has one or two: its main phase (kind = its mode), and after a
 * whole-grid fold a scalar epilogue. A persistent kernel will have more,
 * with grid-wide barriers between them. */
typedef struct Phase {
	KernelMode kind;
	int first_stmt, nstmt;    /* statements of the phase (a subrange of the kernel's) */
	Barrier after;
} Phase;

#define MAX_PHASES 4

/* Launch and loop parameters: the built-in rules fill them (plan_launch.c);
 * a tuning table may replace them per kernel. Templates read only these. */
typedef struct KernelParams {
	int block;        /* threads per block */
	int min_blocks;   /* blocks an SM must hold (__launch_bounds__), so a register cap */
	int regs;         /* ROW with a register cache: 0, or registers a thread (__maxnreg__, in place of
	                     __launch_bounds__): a cap for blocks of any size a launch picks (fz_row_lanes),
	                     which min_blocks gives only at 64 or 32 */
	int unroll;       /* POINT maps: points per thread, loads first (with vector paths: the copies
	                     of the strided fallback, 1, so its registers do not cap the vector paths') */
	int vec;          /* POINT maps: 4 = a thread takes 4 consecutive points, f32 accesses along the
	                     innermost index as 16-byte vectors (16-bit: 8-byte) when the pointers and the
	                     innermost extent allow (checked by the kernel); 8 = first 8 points, 16-byte
	                     vectors of 16-bit tensors too, then 4 (where a vector tensor is 16-bit); 0 = none */
	int slices;       /* POINT reductions: warps sharing each point's loop (32 points a block) */
	int red_unroll;   /* reduction loops: copies of the body a '#pragma unroll' asks for */
	int split;        /* POINT, sliced, starting with this many merged reductions over an outer axis
	                     (0: none): their outermost loop (Kernel.split_range) split over gridDim.y
	                     blocks (chosen at launch, fz_split), the partials folded in block order by
	                     the last block of each 32 points (plan_split) */
	int rcache;       /* ROW: elements of each row a thread keeps in registers (0: none) */
	int warp_rows;    /* ROW: a warp per row (rows walked once), not a block */
	int row_paths;    /* ROW with a register cache: 1 = each path (streamed, cached, scalar) a function
	                     of its own, its registers allocated alone, the cached one also with the
	                     small cache (row_cache_small); 0 = the three in one body */
	int row_stream;   /* ROW with a register cache: 1 = rows wider than the cache are streamed by 512
	                     threads a row in 512-thread blocks (fz_row_lanes_s, the recipe's
	                     row_threads_s), two rows an SM; 0 = by the block of fz_row_lanes (plan_stream) */
	int stage;        /* POINT, sliced (not split, not a pipeline's phase): inputs that a reduction
	                     loop's body reads at its one loop variable go through a warp's tile in
	                     shared memory, 32 candidates a step, loaded and converted to the body's
	                     precision once (plan_stage); the order of each slice's terms unchanged */
	int tile_m, tile_n, tile_k; /* MATMUL, TILE: block tile and k-step (TILE: tile_n the widest) */
	int tile_n_min;   /* TILE: the narrowest tile; the kernel halves tile_n down to it to fill the SMs */
	int swapped;      /* MATMUL, TILE: the contraction's operands in the order (B, A) */
	int b_kmajor;     /* TILE: B read as B(n,k), k contiguous (x W^T); 0: B(k,n) */
	int a_mmajor;     /* TILE: A read as A(k,m), m contiguous (A^T B); 0: A(m,k) */
	int c_swapped;    /* TILE: computes C^T = B^T A^T, tile_a being the tensor read as B (tf32 A(m,k) B(k,n)) */
	int stages;       /* TILE: shared-memory stages in the load ring */
	int smem;         /* TILE: dynamic shared memory a block asks for, bytes */
	const char *tuned; /* the tuning-table entry used; NULL: built-in rules */
} KernelParams;

/* ROW with a register cache: the vectors of 4 elements a thread keeps on
 * the vector path (vec) and on the scalar one, whose per-column bounds take
 * registers too (with more, ptxas spilled under the 64-register cap). A row
 * has at most ROW_MAX_THREADS threads (fz_row_lanes). */
#define ROW_MAX_THREADS 1024
/* A row spans at most this many trailing axes (Kernel.inner) */
#define ROW_MAX_INNER 3
/* A row wider than the registers hold is streamed on every walk, this many
 * 16-byte vectors a thread loaded before they are used */
#define ROW_STREAM_VECS 4
static inline int row_cache_vectors(const KernelParams *p, int vec) { return vec ? p->rcache : (p->rcache + 2) / 3; }
/* The lanes a row (fz_row_lanes) leave a thread more than rcache / 2 of
 * the row's vectors, up to rcache: the vector path of a row the registers
 * hold is built twice, with rcache slots and with this many (0: once) for
 * the rows that need no more, so that no slot past the row is loaded and
 * held (8192 f32 columns at rcache 6: 4 used; the rows of 4 vectors were
 * 3-8% faster, H200) */
static inline int row_cache_small(const KernelParams *p) { return p->rcache >= 3 ? (2 * p->rcache + 2) / 3 : 0; }

/* An attention kernel (KM_ATTN, plan_attn.c): S = Q K^T over the space
 * [(b,) m, n], pointwise work on S, a row max and a row sum of exp(z - max)
 * over n, the normalised row P, then O = P V and pointwise work on O and on
 * the rows' statistics. It runs FlashAttention's way: a block of 64 rows of
 * m walks n in blocks of 64, the max and sum carried and O rescaled. */
#define ATTN_MAX_ENTRY 3
typedef struct AttnPlan {
	int c1, mx, sum, c2;      /* statements: the two products, the row max and the row sum */
	int q, k, v;              /* inputs read as Q([b,]m,d), K([b,]n,d), V([b,]n,d) */
	Dim dh;                   /* d's range, the head size */
	int block_m;              /* rows of m a block */
	int causal;               /* z is select(n <= m, .., C <= -1e30): blocks of keys past the rows' skipped */
	int csel;                 /* causal: that select (an expr id), taken as its first value where every n <= m */
	int zmul, zkeep, zc;      /* zmul > 0: z is S (operand zkeep, 1 or 2, of the product zmul) times zc, a
	                             factor constant over the space (causal: the select's first value): folded
	                             into the exponent, exp2(S c log2(e) - max), the kernel's Q negated for c < 0 */
	int zstmt;                /* the statement holding zmul */
	int out;                  /* 1 + the one tensor O's work stores, a 16-bit [(b,) m, d] written at its point
	                             and nothing else stored there (O leaves from the fragments, attn_kernel.cuh); 0: none */
	int nent;                 /* entry points, one a head-size bucket: the launch takes the */
	int db[ATTN_MAX_ENTRY];   /* smallest db >= dh (64, 128, 256; one when dh is a number) */
	int bn[ATTN_MAX_ENTRY];   /* each one's columns of n a step */
	int st[ATTN_MAX_ENTRY];   /* its stages of K's and V's tiles in shared memory, copied st - 1 steps ahead */
	int nq[ATTN_MAX_ENTRY];   /* its buffers of Q's tile: 2, the next tile's Q copied during this one */
	int minb[ATTN_MAX_ENTRY]; /* blocks an SM must hold (__launch_bounds__), so a register cap */
	int smem[ATTN_MAX_ENTRY]; /* dynamic shared memory of each, bytes */
	char *entry[ATTN_MAX_ENTRY]; /* their names (the namer's) */
} AttnPlan;
/* entry e takes the runtime's tensor maps of K (boxes of 64 x 128 rows) and
   V (64 x 64), its second parameter (manifest tma=K,V): its steps are whole
   boxes of K. attn.cuh copies by TMA on sm_90a, where the maps were made */
static inline int attn_tma(const AttnPlan *at, int e) { return at->bn[e] % 128 == 0; }

/* a kernel signature: MODE.HASH12 (plan_tune.c) */
#define PLAN_SIG_LEN 32

typedef struct Kernel {
	char *name;               /* made once by the namer (namer.c) */
	char sig[PLAN_SIG_LEN];   /* what it computes, for the tuning table (plan_tune.c); not its name */
	KernelMode mode;
	int first_stmt, nstmt;    /* its statements, in order */
	int fusion;
	int nspace;
	Dim space[MAX_IDX];       /* outer iteration space (a grid reduction: its reduced indices) */
	int ninner;               /* ROW: the row's axes, walked by the group as one flat column index: 1 (the
	                             statements' last index), or 2..ROW_MAX_INNER trailing axes every load reads
	                             last, in order (group norm's (c, hw)); 0 for other kinds */
	Dim inner[ROW_MAX_INNER];
	int lead, gap;            /* ROW over several axes: 0, 0 when they are the trailing axes of the tensors it
	                             reads; else its first `lead` axes are a run of their own, `gap` kept axes
	                             before the trailing run of the others (batch norm's statistics over n | c |
	                             h, w: lead 1, gap 1): a row of contiguous segments (row_axis_pos) */
	int shift_sum, shift_sq;  /* ROW: a row sum and a later sum of its terms' squares about a value
	                             constant over the row (the mean), both in the sum's walk where the row
	                             is streamed (plan_shift.c); shift_sq 0: none */
	int online_max, online_sum; /* ROW: a row max and a later sum of exp(its term - the max), both in the max's
	                             walk where the row is streamed, the sum rescaled as the max grows
	                             (plan_shift.c plan_online); online_sum 0: none */
	int argmax_max, argmax_idx; /* ROW: a row max and a later min of select(its term == the max, the column,
	                             F), the first column holding the max, both in the max's walk where the
	                             row is streamed (plan_shift.c plan_argmax); argmax_idx 0: none */
	int argmax_sel;           /* ROW: the select of argmax_idx's term, under its casts (the expression) */
	int peel;                 /* ROW, rcache: the vector path also takes rows of any width and alignment, each
	                             row's head to its first 16-byte boundary and its tail (under 4 columns) a
	                             column a thread, the rest as 16-byte vectors (plan_launch.c row_peel); 0:
	                             only rows whose width is a multiple of 4 and every row aligned */
	int has_tail;             /* ends in a whole-grid (deterministic) reduction */
	int ntail;                /* how many whole-grid reductions it folds */
	int nphase;
	Phase phase[MAX_PHASES];
	KernelParams par;
	int tile_a, tile_b;       /* TILE: the tensors the mainloop reads as its A and B (the runtime's tensor maps, in
	                             this order): A and B, or B and A when par.c_swapped */
	int *across, nacross;     /* tensors it reads at rows other than its point's first index (plan_across.c) */
	Dim split_range;          /* par.split: the extent of the loop split over blocks */
	int *vec_tensors, nvec;   /* par.vec: the f32 tensors it touches along the space's innermost extent, which
	                             its accesses at the point take as 16-byte vectors (plan_launch.c) */
	int *vec_stride;          /* NULL, or each vec_tensors entry's stride: 1, or a > 1 for a tensor of another
	                             innermost extent read at a*i + b, i the space's innermost index, 0 <= b < a
	                             (the odd columns x(r, 2*h + 1)): the copies' elements lie in a vectors */
	const char *path_why;     /* MATMUL, TILE (and POINT for a batched tensor_eligible contraction): why its contraction runs where it runs (--explain) */
	const char *attn_why;     /* TILE: why it did not become an attention kernel with the softmax and product after it */
	AttnPlan at;              /* ATTN */
} Kernel;

/* Position of axis i of the kernel's space (i < nspace) or of its row's
 * axis j (i = nspace + j) in a tensor over both, of rank nspace + ninner:
 * the lead run, the gap of kept axes, then the trailing run. */
static inline int row_axis_pos(const Kernel *k, int i)
{
	const int r = k->nspace + k->ninner, trail = k->ninner - k->lead, lead_at = r - trail - k->gap - k->lead;
	if (i >= k->nspace) {
		const int j = i - k->nspace;
		return j < k->lead ? lead_at + j : r - trail + (j - k->lead);
	}
	return i < lead_at ? i : i + k->lead; /* the space's axes before the lead run, then the gap */
}

/* tensor t is one of k's vector tensors */
static inline int kernel_vec_tensor(const Kernel *k, int t)
{
	for (int i = 0; i < k->nvec; i++)
		if (k->vec_tensors[i] == t) return 1;
	return 0;
}

/* the stride at which a vector tensor of k is read (Kernel.vec_stride): 1,
   a > 1 for a gather at a*i + b; 0 if t is not one */
static inline int kernel_vec_stride(const Kernel *k, int t)
{
	for (int i = 0; i < k->nvec; i++)
		if (k->vec_tensors[i] == t) return k->vec_stride ? k->vec_stride[i] : 1;
	return 0;
}

/* points a block of a POINT kernel: a sliced one's block is FZ_SLICES
   threads a point (32 points in a launch of its own; fewer as a pipeline's
   phase at a smaller block, plan_pipe.c) */
static inline int kernel_points(const Kernel *k)
{
	return k->par.slices > 1 ? k->par.block / k->par.slices : k->par.block;
}

/* points a thread of an unsliced POINT kernel takes at once: its widest
   vector path's, else its unrolled copies' (the grid is sized by them) */
static inline int kernel_thread_points(const Kernel *k)
{
	return k->par.vec && k->nvec ? k->par.vec : k->par.unroll;
}

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
	X(TAIL_TWICE, "a kernel folds at most one set of whole-grid reductions") \
	X(OUTER_FOLD, "it reads a reduction over an outer axis, which is split across blocks: every block must finish first") \
	X(OUTER_TAIL, "a kernel whose reduction over an outer axis is split across blocks folds no whole-grid reduction") \
	X(ATTN_END, "an attention kernel takes only pointwise work over its output or over its rows after its second product")

typedef enum {
#define X(k, s) SPLIT_##k,
	SPLIT_RULES(X)
#undef X
	SPLIT_N
} SplitRule;
extern const char *const split_rule_text[SPLIT_N];

typedef struct Schedule {
	Target target;
	int fused;                /* 0: the one-kernel-per-stage variant */
	char variant;             /* 'f' or 'u': the suffix letter of its kernel names */
	int fusion;
	int first_stmt, last_stmt; /* the fusion's statements [first, last) */
	int first_tensor, last_tensor; /* its tensors [first, last) */
	Kernel *k;
	int nk, cap;
	/* per statement of the fusion: sid at [sid - first_stmt] */
	SplitRule *why;           /* why it did not join the previous kernel */
	int *stmt_kernel;         /* its kernel, -1 if inlined */
	StepOp *op;               /* what it does there */
	int *merge;               /* REDUCE: reductions sharing its loop (it and the next merge-1); 0 for those */
	unsigned char *remat;     /* 0: never recomputed; 1: a reader in its kernel, in the reader's own row
	                             or point, recomputes it where it has no local for it; 2: any reader in
	                             its kernel (INLINE statements: any reader at all) */
	/* per tensor of the fusion: t at [t - first_tensor] */
	Storage *storage;
	int *writer;              /* its only writing statement in the fusion; -1 none, -2 several */
	int *reset_by;            /* must start each run at zero: the kernel that zeroes it for the next run
	                             (-1: a memset op does) */
	int *prod_at, *prod;      /* the statements that produce it (write it, or compact a list that it
	                             counts), in order: prod[prod_at[t'] .. prod_at[t' + 1]), t' = t - first_tensor */
} Schedule;

/* Schedule of fusion `fusion` for `target`; fused = 0 gives the one-kernel-
 * per-stage variant (plan.c). The writers get both through plan_fusion
 * (plan.h); only the driver (main.c, artifact/) calls these. */
void plan_build(const Module *m, int fusion, int fused, Target target, Schedule *s);
void sched_free(Schedule *s);
/* a deep copy of s into *d */
void sched_copy(const Schedule *s, Schedule *d);
/* 1 if a and b (one fusion, one variant) differ at most in their target. */
int sched_same(const Module *m, const Schedule *a, const Schedule *b);
static inline int sched_stored(const Schedule *s, int t) { return s->storage[t - s->first_tensor] == ST_STORED; }
/* --emit=schedule (schedule.c) and --explain (explain.c). */
void sched_print(const Module *m, const Schedule *s, FILE *out);
void plan_explain(const Module *m, int fusion, const Schedule *s, FILE *out);
/* --explain's hints: splits that writing the stages in another order removes, each tried by
   planning the fusion so (explain_hint.c); nothing when there is none */
void plan_explain_hints(const Module *m, int fusion, const Schedule *fused, FILE *out);

#endif
