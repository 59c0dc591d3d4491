/* The checker's own shared pieces (sema*.c only): its state while it walks
 * the Ast, small accessors, and what its files call in each other.
 *   sema.c        stages, fusions: the driver (sema_check)
 *   sema_stmt.c   a statement: may it write its target, its indices (pass 1),
 *                 subscripts, value and mask (pass 2)
 *   sema_target.c a statement's target and types, and its pattern
 *   sema_names.c  declarations (constants, tensors, parameters, domains),
 *                 name lookup, did-you-mean, knock-on errors of failed names
 *   sema_index.c  a statement's indices: slots, ranges, affine subscripts
 *   sema_expr.c   expressions: indices collected (pass 1), typed IR built
 *                 (pass 2), reads of later stages' names
 *   sema_fits.c   inputs' domains against the dimensions they subscript */
#ifndef FUSEC_SEMA_IMPL_H
#define FUSEC_SEMA_IMPL_H
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/fuserun.h" /* the runtime's limits on names and counts */
#include "core/die.h"
#include "front/sema.h"

#define MAX_CONSTS 256

typedef struct Const { unsigned off, len; double value; int is_int; } Const;

/* Names to ids (hashed), so that a spec of many fusions, stages or tensors
 * is checked in linear time. A key points at text that outlives the map. */
typedef struct NameMap {
	struct NameEnt { const char *p; unsigned len; int id; } *e;
	unsigned cap, n;
} NameMap;

/* A flag per tensor id, in an array that grows to the largest id set. */
typedef struct TensorFlags { int *v; int n; } TensorFlags;
void sema_tflag_set(TensorFlags *f, int t);
int sema_tflag_get(const TensorFlags *f, int t);

/* A name that a stage's statement defines: defined_later looks these up. */
typedef struct StageDef { const char *p; unsigned len; int ord, stmt; } StageDef;

/* One index of the statement being checked, before it is entered in IR. */
typedef struct Slot {
	unsigned off, len;     /* name */
	int has_range, ragged, on_lhs, in_access, in_bound;
	int in_unknown;        /* an argument of a call whose error pass 2 reports */
	int dropped;           /* reported, or a knock-on: not entered as an index */
	int reported;          /* has had its error: no second one */
	Dim range;
	unsigned range_off;    /* where the range was first inferred */
	int ragged_node;       /* AST FOR node */
} Slot;

typedef struct Sema {
	const Ast *ast;
	Diag *d;
	Module *m;
	int fusion;            /* current fusion id */
	Const consts[MAX_CONSTS];
	int nconst, nglobal;   /* file-level consts come first */
	int stage;             /* current stage id */
	ElemType compute;      /* float arithmetic type of the current stage */
	Slot slot[MAX_IDX];
	int nslot;
	int first_index;       /* IR id of slot 0 while building */
	int no_ranges;         /* collecting a 'for' bound: row_ptr(r + 1) gives r no range */
	struct { unsigned off, len; } failed[64]; /* names whose defining statement failed */
	int nfailed;
	TensorFlags def_failed;   /* its defining statement had an error: a second definition is not also "already written" */
	TensorFlags shape_failed; /* its declared shape had an error */
	int cur_target, cur_red, cur_lhs; /* the statement being checked */
	struct { unsigned off, len; int done; } undef[MAX_IDX]; /* this statement's undefined names */
	int nundef;
	struct Aff {           /* an affine subscript of this statement (see sema_affine_ranges) */
		int slot, slot2;   /* a*i + b, or i*S + c (slot2 = c, ssym = S); slot -1: fixed */
		int64_t a, b;
		int ssym;
		Dim dim;           /* the dimension it subscripts */
		int tensor, pos, node;
	} aff[16];
	int naff;
	int rank_error;        /* reported while collecting this statement */
	int too_many_idx;      /* likewise: once, not at every index past the 8th; the statement ends after pass 1 */
	NameMap fusions;       /* the file's fusions by name */
	NameMap tensors, stages, syms; /* the current fusion's, by name */
	StageDef *defs;        /* the current fusion's statements' targets, by name then stage */
	int ndefs, stage_ord;  /* stage_ord: the current stage's position in its fusion */
} Sema;

struct Builtin { IrOp op; int arity; };

static inline const Node *N(Sema *s, int i) { return &s->ast->n[i]; }
static inline const char *TXT(Sema *s, int i) { return s->ast->text + s->ast->n[i].off; }
#define NAMEF(s, i) (int)N(s, i)->len, TXT(s, i)
static inline Fusion *F(Sema *s) { return &s->m->fusion[s->fusion]; }
static inline int dim_equal(Dim a, Dim b) { return dim_same(a, b); }
static inline int is_float(ElemType t) { return elem_info[t].is_float; }
static inline ElemType ET(Sema *s, int e) { return s->m->expr[e].type; }
static inline size_t sl_len(const Sema *s, int k) { return s->slot[k].len; }
static inline const char *sl_text(const Sema *s, int k) { return s->ast->text + s->slot[k].off; }
static inline int name_is(Sema *s, int node, unsigned off, unsigned len)
{
	return N(s, node)->len == len && !memcmp(TXT(s, node), s->ast->text + off, len);
}

/* What an artifact's manifest can hold (runtime/fuserun.h): the checker
 * refuses longer names, so that every spec it accepts is also an artifact
 * the runtime loads. A fusion's name leaves room for its kernels' suffixes
 * (NAME_f0 .. NAME_u255). */
#define MAX_FUSION_NAME (FZ_MAX_NAME - 5)

/* Literal sizes are multiplied in 64 bits everywhere after the checker
 * (scratch sizes, index spaces, offsets): their products stay below this. */
#define LITERAL_LIMIT 4611686018427387904.0 /* 2^62 */

/* sema_stmt.c */
void sema_check_stmt(Sema *s, int node);

/* sema_target.c */
void sema_stmt_target(Sema *s, int node, int sid, int target);

/* sema_names.c */
int sema_namemap_get(const NameMap *m, const char *p, unsigned len);
void sema_namemap_put(NameMap *m, const char *p, unsigned len, int id);
void sema_namemap_free(NameMap *m);
typedef struct Guess { const char *best; size_t len; int dist, ties; } Guess;
char *sema_dup_name(Sema *s, int node);
const struct Builtin *sema_builtin_find(Sema *s, int node);
int sema_tensor_find(Sema *s, int node);
const Const *sema_const_find(Sema *s, int node);
void sema_dim_name(Sema *s, Dim d, char *buf, size_t n);
void sema_name_fits(Sema *s, int node, const char *what, int max, const char *why);
void sema_declare_const(Sema *s, int node);
double sema_literal_product(const Dim *d, int n);
void sema_declare_tensor(Sema *s, int node, TensorKind kind);
int sema_shape_failed(const Sema *s, int t);
int sema_tensor_new(Sema *s, int node, TensorKind kind, ElemType t);
void sema_guess_name(Guess *g, const char *want, size_t wl, const char *cand, size_t cl);
const char *sema_did_you_mean(Sema *s, unsigned off, unsigned len, int call, char *buf, size_t n);
int sema_reads_own_definition(Sema *s, unsigned off, unsigned len);
void sema_undefined_name(Sema *s, unsigned off, unsigned len);
int sema_is_failed(Sema *s, int node);
void sema_mark_failed(Sema *s, int node);
void sema_declare_param(Sema *s, int node, TensorKind kind);

/* sema_index.c */
int sema_slot_find(Sema *s, unsigned off, unsigned len);
int sema_slot_get(Sema *s, int node);
int sema_sym_find(Sema *s, int node);
int sema_is_index_name(Sema *s, int node);
void sema_give_range(Sema *s, int node, int slot, Dim d);
int sema_affine_subscript(Sema *s, int n, struct Aff *f);
int sema_fixed_subscript(Sema *s, int n);
int sema_affine_ranges(Sema *s, int where, int target_known);

/* sema_expr.c */
void sema_collect_indices(Sema *s, int e);
int sema_build_expr(Sema *s, int node);
long sema_const_int(Sema *s, int node);
int sema_loads_index(const Module *m, int e, int ix);
int sema_check_order(Sema *s, int e);
void sema_stage_defs(Sema *s, int items);

/* sema_fits.c: the current fusion's subscripts that read an input with a
   domain: an error where no size holds the domain, else F(s)->fit */
void sema_domain_fits(Sema *s);

#endif
