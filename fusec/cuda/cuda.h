/* The CUDA back end's shared state and pieces, for its files:
 *   emit_cuda.c   the driver: one template per kernel, by its mode; the .cu
 *   kernel_base.c what every template starts and ends with
 *   cuda_stmt.c   statement bodies: loads, stores, locals, a pointwise statement
 *   cuda_read.c   reads: the expression writer's leaf, hoisted reads, vector accesses
 *   cuda_remat.c  values: recomputed producers rendered once (the memo)
 *   cuda_reduce.c reductions looping at a point (serial, sliced, row-wide)
 *   cuda_compact.c compactions (list <- value where mask)
 *   grid_fold.c   whole-grid reductions: partials, then the last block's fold
 *   kern_*.c      one template per kernel kind (schedule.h KERNEL_MODES); the
 *                 tensor-core ones print fixed mainloops (*.cuh) around functors
 *   pipe_kernel.c a pipeline's persistent kernel over the templates' bodies
 *   emit_prelude.c the device helpers every .cu starts with
 * Everything here prints what the Schedule says; nothing here decides. */
#ifndef FUSEC_CUDA_H
#define FUSEC_CUDA_H
#include <stdio.h>

#include "emit/emit.h"

/* A producer recomputed at one tuple of subscripts while one value is
 * rendered: rendered once, then written in place if used once, or bound
 * to an SSA-style local (const auto fz_sN_t = ...;) if used more. */
typedef struct Memo {
	int stmt;         /* the producer */
	char *key;        /* its subscripts, rendered */
	char *text;       /* its value, with placeholders for nested entries */
	int uses, order;  /* order: when its text was complete (dependencies first) */
	int fn;           /* a local function of the producer's indices (key ""), for values
	                     that must stay under their condition: evaluated only where called */
	char *name;       /* the local, if uses > 1 (a function: always) */
	int scope;        /* -1: the value's top; else the local function whose body declares it */
} Memo;

/* cuda_decompose's division by an extent: a uniform power-of-two test
   and a shift or a division (rows, pipelines); a shift alone (a point
   kernel's vector loop taken when every extent is a power of two, fz_p2);
   a division alone (the point kernel's other loops: one stream with the
   test took 2 more registers, batchnorm_nchw at HW = 3136 +3.3%, H100) */
enum { CUDA_DIV_TEST = 0, CUDA_DIV_SHIFT, CUDA_DIV_PLAIN };

typedef struct Cx {
	const Module *m;
	const Schedule *p;
	int fusion;
	const Kernel *k;
	int kernel_id;
	/* The per-index and per-tensor arrays hold the fusion's own (contiguous
	   in the Module): index i at [i - first_index], tensor t at
	   [t - first_tensor]. Sized by the Module's, a file of many fusions cost
	   each fusion the whole file's size. */
	int first_index, first_tensor;
	char **bind;      /* per index: C expression */
	signed char *role; /* per index: what its binding stands for (CUDA_ROLE_*, cuda_role) */
	char **local;     /* per tensor: local holding its value at the point */
	char ***local_at; /* per tensor: the subscripts that local stands for */
	ExprWriter w;
	FILE *out;
	FILE *sink;       /* where stores go: out, or a copy's deferred stores */
	FILE *sink_main;  /* the .cu itself */
	const char *sfx;  /* suffix of this copy's locals when unrolled */
	int flat;         /* POINT: the point's flat index is declared as fz_p<sfx> (cuda_decompose) */
	int sliced;       /* reductions split over warps (KernelParams.slices) */
	int cur;          /* the statement being rendered: producers before it may be recomputed */
	Memo *memo;       /* while a value is rendered (cuda_value_of) */
	int nmemo, cmemo, memo_on, memo_done;
	int scope;        /* -1, or the local function whose body is being rendered */
	int nssa;         /* locals made in this kernel, for their names */
	const char *rc_var;      /* inside a row loop over cached registers: its index */
	int rc_vec;              /* ROW cache: rendering the vector path (fz_v4), else the scalar one */
	int rc_slots;            /* ... the vector path's cached vectors a thread, if not rcache (row_cache_small) */
	int rc_stream;           /* ... the vector path of a row wider than the registers: every walk
	                            streams it from memory, ROW_STREAM_VECS vectors a thread in flight */
	unsigned char *rc_used;  /* per tensor: its row is cached */
	int rc_peel;             /* ... Kernel.peel: the vector path's steps start at the row's head fz_h and end
	                            at fz_cb; the fz_ne columns outside them (its edges) a column a thread */
	int rc_edge;             /* ... rendering a cached walk's edge column: its cached value fz_re_T, its
	                            stores not collected into vectors */
	/* a row over several axes (Kernel.ninner > 1): the index groups bound to
	   the walk's flat column (cuda_row_bind), rebound in 32-bit arithmetic
	   inside the cached steps, where the column is under 2^30; each open walk
	   holds a distinct group's first index, so the fusion's index count
	   (row_cap) bounds them: 9 merged row sums once overflowed a table of 8 */
	int *row_ix, nrow_ix, row_cap, row_small;
	const char *row_var;
	/* POINT vector path (KernelParams.vec): the copy being rendered (0..3,
	   consecutive points along the innermost index), -1 outside it; the
	   distinct 16-byte accesses its copies share, loads and stores */
	int vec_u;
	int ret_out;      /* ATTN epi: 1 + the tensor (AttnPlan.out) whose store becomes the functor's
	                     value, fz_ov; 0 */
	int vec_n;        /* POINT vector path: its width (4 or 8) */
	int div;          /* how cuda_decompose divides the point by an extent (CUDA_DIV_*) */
	int nvl, nvs;
	int persist;      /* a phase of a persistent kernel (pipeline.c): a __device__ body
	                     whose blockIdx and gridDim are its parameters fz_vb, fz_vg */
	const unsigned char *written; /* per tensor, or NULL: an input written during the launch
	                     (a pipeline's carried input), so not read through the read-only path */
	struct VecAccess { int t, stride; char *lin0, *cond, *mask[8]; } vl[16], vs[16]; /* cond: NULL, or what else the vector
	                                 needs; stride: a gather's (Kernel.vec_stride), its vectors; mask: a masked store's, each copy's */
	const char *store_mask; /* cuda_store_target: the store only where this holds (a masked map's, kept) */
	/* A reduction loop's body (cuda_reductions, not row-wide): an input read
	   at point and loop variables only is in range wherever the loop runs,
	   so it is read once into a local (the body's top, or before the loops
	   when it reads at the point only) and conditions over such reads are
	   evaluated without branches (& for &&): every term's loads are issued
	   together instead of each behind its own condition. */
	int hoisting;
	int shift_loop;   /* the loop of a point kernel's shifted pair (Kernel.shift_sq) */
	const char *hvars[MAX_IDX];  /* the open loops' variables */
	int nhvars, nhoist, nhname;
	struct Hoist { int t; char *lin, *load, *name; int inv, at_loop, dbl; } hoist[32];
	/* KernelParams.stage: the reduction loop being rendered may stage its
	   reads at the loop variable (hoists with at_loop; dbl: held as double,
	   every use in f64); a kernel that staged some (pool_live) shares one
	   shared-memory pool, fz_pool, of pool_bytes between the warps' tiles
	   and the slices' folds */
	int stage_try, pool_live;
	long pool_bytes;
} Cx;

/* What an index's binding stands for: the vector and cached accesses,
   and the reads hoisted out of a reduction loop, are decided on this,
   never on the binding's text. 0 .. MAX_IDX-1: the point's coordinate j
   in the copy being rendered (cuda_bind_point). */
enum { CUDA_ROLE_NONE = -1, CUDA_ROLE_ROW = 100 /* the row walk's column (of a row over several axes: the last axis) */,
       CUDA_ROLE_LOOP = 101 /* an open reduction loop's variable */,
       CUDA_ROLE_ROW_HI = 102 /* + j: axis j of a row over several axes (Kernel.inner), not its last */ };

/* inputs go through the read-only path (__ldg) unless the launch writes them */
static inline int cx_readonly(const Cx *cx, int t)
{
	return cx->m->tensor[t].kind == TK_INPUT && !(cx->written && cx->written[t]);
}

/* One template per kernel kind (schedule.h KERNEL_MODES): the
   __global__ function (or a pipeline phase's __device__ body) of cx->k.
   The launch geometry that goes with each is host/grid.c's. */
void cuda_kern_point(Cx *cx);
void cuda_kern_row(Cx *cx);
void cuda_kern_matmul(Cx *cx);
void cuda_kern_tile(Cx *cx);
void cuda_kern_scatter(Cx *cx);
void cuda_kern_scalar(Cx *cx);
void cuda_kern_attn(Cx *cx);
/* kern_tile.c, kern_attn.c: the tensor-core mainloops' CUDA text, once per
   .cu that has such a kernel, after the helpers they share (mma_common.cuh) */
void cuda_mma_library(FILE *out);
void cuda_tile_library(FILE *out);
void cuda_attn_library(FILE *out);

/* The whole .cu of a fusion: banner, prelude, args, fused then unfused
   kernels, the pipelines (emit_cuda.c). */
void cuda_file(const Module *m, const FusionPlan *fp, const char *banner, FILE *out);
/* the kernels of s as __device__ functions of (args, block index, grid
   size): a pipeline's phases; written: per tensor, inputs the launch
   writes (no read-only loads), or NULL */
void cuda_bodies(const Module *m, const Schedule *s, const unsigned char *written, FILE *out);
/* pipe_kernel.c: a pipeline's persistent kernel */
void cuda_pipeline(const Module *m, const PipePlan *pp, FILE *out);
/* emit_prelude.c: the device helpers every .cu starts with */
void cuda_prelude(const Module *m, const FusionPlan *fp, FILE *out);

/* cuda_stmt.c */
/* Sets w's compute type and math policy (dsl/MATH.md) for statement s's stage. */
void cuda_stmt_math(ExprWriter *w, const Module *m, const Stmt *s);
const char *cuda_ctype(ElemType t);
void cuda_ind(FILE *out, int n);
void cuda_dim(Cx *cx, Dim d, FILE *out);
void cuda_load(Cx *cx, int t, const char *lin, FILE *out);
char *cuda_linear(Cx *cx, int t, char **subs);
/* the same where the subscripts' roles are known (cuda_role): a POINT
   kernel's tensor over its whole space, read at the point (or at the point
   but for its last axis), is at the point's flat index (offset) */
char *cuda_linear_at(Cx *cx, int t, char **subs, const int *roles, int n);
void cuda_put_decls(FILE *out, const char *decls, int depth);
/* the role of expression e as a subscript: its index's, or none */
int cuda_role(const Cx *cx, int e);
void cuda_set_local(Cx *cx, int t, const char *name, char **subs, int n);
void cuda_clear_locals(Cx *cx);
void cuda_store_target(Cx *cx, const Stmt *s, const char *v, int depth);
void cuda_publish(Cx *cx, const Stmt *s, const char *name);
void cuda_map(Cx *cx, int sid, int depth, int store_only_thread0);
void cuda_bind_point(Cx *cx, const Stmt *s, int nspace);
const char *cuda_contract_value(Cx *cx, const Stmt *c, const char *acc, int depth);

/* cuda_read.c */
void cuda_leaf(ExprWriter *w, int e, void *outp);
int cuda_eager_ok(ExprWriter *w, int e);
void cuda_hoist_decls(Cx *cx, int inv, FILE *out, int depth);
int cuda_vec_access(Cx *cx, int t, const int *roles, const int *args, int n, int store, int *elem);

/* cuda_remat.c */
/* The value (or mask) e of statement s, in its compute type. Locals it
 * needs are in *decls (lines, no indent; NULL if none): print them with
 * cuda_put_decls where the value is evaluated, never outside a condition that
 * guards it. */
char *cuda_value_of(Cx *cx, const Stmt *s, int e, char **decls);
/* Producer wr read at subs, as a reference to its memo entry; 0, writing
   nothing, where it cannot be one (the caller recomputes it in place) */
int cuda_memo_use(Cx *cx, int wr, char **subs, const int *roles, int n, ElemType c, FILE *out);
/* cuda_reduce.c */
const char *cuda_identity(RedOp r, ElemType t);
const char *cuda_red_op(RedOp r);
int cuda_reductions(Cx *cx, int sid, int depth, int row);

/* cuda_compact.c */
void cuda_compact_operands(Cx *cx, int sid, int u);
void cuda_compact_warp(Cx *cx, int sid, int U);
void cuda_compact(Cx *cx, int sid, int depth);

/* grid_fold.c */
void cuda_tail(Cx *cx, int depth);
void cuda_tail_decls(Cx *cx, int depth);
void cuda_tail_accumulate(Cx *cx, int sid, int depth, int thread0);

/* kernel_base.c: what every template starts and ends with */
void cuda_kernel_head(Cx *cx);
void cuda_decompose(Cx *cx, const char *lin, int depth);
void cuda_space_total(Cx *cx, FILE *out);
void cuda_resets(Cx *cx, int depth);
void cuda_finish_kernel(Cx *cx);

/* row_walk.c: the row walk, for the row template and a row's reductions */
typedef void RowBody(Cx *cx, int sid, int n, int depth);
void cuda_row_loop(Cx *cx, const char *var, RowBody *body, int sid, int n, int depth);
/* A store at (s0.., var) of a row tensor, unmasked, inside a cached walk
   of the vector path: collected and stored as one vector (1), or not (0) */
int cuda_row_store_deferred(Cx *cx, const Stmt *s);
/* the types a row's vector path loads and stores 4 at a time */
int cuda_row_vec_type(ElemType t);
/* a vector of 4 elements of such a type: its CUDA type (float4, or ushort4
   for f16 and bf16) and the alignment mask of its address (15 or 7) */
static inline const char *cuda_vec4_type(ElemType t) { return t == ET_F32 ? "float4" : "ushort4"; }
static inline int cuda_vec4_mask(ElemType t) { return t == ET_F32 ? 15 : 7; }
/* the alignment a vector of V (4 or 8) elements of type t needs, less 1 */
static inline int cuda_vec_mask(ElemType t, int V) { return V == 8 ? 15 : cuda_vec4_mask(t); }
/* vectors of 4 a thread keeps of a cached row, on the path being rendered */
int cuda_row_cached(const Cx *cx);
/* the row's width: its inner axes' product */
void cuda_row_width(Cx *cx, FILE *out);
/* binds the row's ninner axes, indices ix0.., to the walk's flat column var
   (several: var / .. and var % ..), their roles CUDA_ROLE_ROW(_HI + j);
   unbind clears them */
void cuda_row_bind(Cx *cx, int ix0, const char *var);
void cuda_row_unbind(Cx *cx, int ix0);
/* a row over several axes: the reciprocals its bindings divide by */
void cuda_row_recips(Cx *cx, int depth);
/* do the n subscripts of tensor x (roles as cuda_role gives them) name
   the kernel's point, then its row's axes at the walk's column, over x's
   own trailing dimensions (a row of several axes contiguous in x)? */
int cuda_row_at(const Cx *cx, const Tensor *x, const int *roles, int n);
/* a row in segments (Kernel.lead): the segment's length, in parentheses */
void cuda_row_segment(Cx *cx, FILE *f);
/* the register cache of tensor t's row (tail: count vectors past the registers') */
void cuda_row_cache_fill(Cx *cx, int t, FILE *out, int depth, int count, int tail);
/* Kernel.peel, per row of the vector path: its head fz_h (columns before the
   first vector boundary of tensor ref's row; ref < 0: none), the end of its
   vectors fz_cb, its edge columns fz_ne; cached: this lane's edge column fz_ec */
void cuda_row_peel_bounds(Cx *cx, int ref, int cached, int depth);
/* tensor x's pointer's distance from the vector boundary below it, in
   elements (0..3) */
void cuda_row_residue(const Tensor *x, FILE *out);

/* A row is walked by a group of fz_g threads (KernelParams.rcache: the
   group's size chosen at launch; fz_live is false in a spare group of the
   last block), a warp (KernelParams.warp_rows) or a block. */
static inline const char *row_tid(const Cx *cx) { return cx->k->par.warp_rows || cx->k->par.rcache ? "fz_lane" : "threadIdx.x"; }
static inline const char *row_width(const Cx *cx) { return cx->k->par.rcache ? "fz_g" : cx->k->par.warp_rows ? "32" : "blockDim.x"; }
static inline const char *row_leader(const Cx *cx)
{
	return cx->k->par.rcache ? "fz_lane == 0 && fz_live" : cx->k->par.warp_rows ? "fz_lane == 0" : "threadIdx.x == 0";
}

#endif
