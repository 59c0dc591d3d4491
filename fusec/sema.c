#include "sema.h"
#include "die.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../runtime/fuserun.h" /* the runtime's limits on names and counts */

#define MAX_CONSTS 256

typedef struct Const { unsigned off, len; double value; int is_int; } Const;

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
	int fusion_items;      /* AST list of the current fusion's items */
	int cur_stage_node;
	int no_ranges;         /* collecting a 'for' bound: row_ptr(r + 1) gives r no range */
	struct { unsigned off, len; } failed[64]; /* names whose defining statement failed */
	int nfailed;
	int *def_failed;       /* per tensor: its defining statement had an error */
	int ndef_failed;
	int cur_target, cur_red, cur_lhs; /* the statement being checked */
	struct { unsigned off, len; int done; } undef[MAX_IDX]; /* this statement's undefined names */
	int nundef;
	struct Aff {           /* an affine subscript of this statement (see affine_ranges) */
		int slot, slot2;   /* a*i + b, or i*S + c (slot2 = c, ssym = S) */
		int64_t a, b;
		int ssym;
		Dim dim;           /* the dimension it subscripts */
		int tensor, pos, node;
	} aff[16];
	int naff;
	int rank_error;        /* reported while collecting this statement */
} Sema;

/* The built-ins, from ir.h's one list; a built-in's name is its opcode's. */
static const struct Builtin { IrOp op; int arity; } builtins[] = {
#define X(o, n, f64, f32) {IR_##o, n},
	IR_BUILTINS(X)
#undef X
};

static const Node *N(Sema *s, int i) { return &s->ast->n[i]; }
static const char *TXT(Sema *s, int i) { return s->ast->text + s->ast->n[i].off; }
#define NAMEF(s, i) (int)N(s, i)->len, TXT(s, i)

static int name_is(Sema *s, int node, unsigned off, unsigned len)
{
	return N(s, node)->len == len && !memcmp(TXT(s, node), s->ast->text + off, len);
}

static char *dup_name(Sema *s, int node)
{
	char *p = xcalloc(N(s, node)->len + 1, 1);
	memcpy(p, TXT(s, node), N(s, node)->len);
	p[N(s, node)->len] = 0;
	return p;
}

static const struct Builtin *builtin_find(Sema *s, int node)
{
	for (unsigned i = 0; i < sizeof builtins / sizeof builtins[0]; i++)
		if (ast_name_eq(s->ast, node, ir_op_name[builtins[i].op])) return &builtins[i];
	return NULL;
}

static Fusion *F(Sema *s) { return &s->m->fusion[s->fusion]; }

static int tensor_find(Sema *s, int node)
{
	Fusion *f = F(s);
	for (int i = f->first_tensor; i < f->first_tensor + f->ntensor; i++)
		if (strlen(s->m->tensor[i].name) == N(s, node)->len &&
		    !memcmp(s->m->tensor[i].name, TXT(s, node), N(s, node)->len))
			return i;
	return -1;
}

static const Const *const_find(Sema *s, int node)
{
	for (int i = s->nconst - 1; i >= 0; i--)
		if (s->consts[i].len == N(s, node)->len &&
		    !memcmp(s->ast->text + s->consts[i].off, TXT(s, node), N(s, node)->len))
			return &s->consts[i];
	return NULL;
}

static int type_lookup(Sema *s, int node)
{
	int t = elem_lookup(TXT(s, node), N(s, node)->len);
	if (t < 0)
		diag_error(s->d, N(s, node)->off, "unknown element type '%.*s' (expected f64, f32, bf16, f16, i32 or i64)", NAMEF(s, node));
	return t;
}

static int dim_equal(Dim a, Dim b) { return dim_same(a, b); }

static void dim_name(Sema *s, Dim d, char *buf, size_t n)
{
	FILE *f = fmemopen(buf, n, "w");
	if (!f) die("out of memory");
	dim_write(s->m, F(s), d, f);
	fclose(f);
}

/* What an artifact's manifest can hold (runtime/fuserun.h): the checker
 * refuses longer names, so that every spec it accepts is also an artifact
 * the runtime loads. A fusion's name leaves room for its kernels' suffixes
 * (NAME_f0 .. NAME_u255). */
#define MAX_FUSION_NAME (FZ_MAX_NAME - 5)

static void name_fits(Sema *s, int node, const char *what, int max, const char *why)
{
	if (N(s, node)->len <= (unsigned)max) return;
	diag_error(s->d, N(s, node)->off, "the name of %s '%.24s...' is %u characters long: at most %d%s", what, TXT(s, node),
	           N(s, node)->len, max, why);
}

/* One more tensor of this fusion, within the runtime's count. */
static void count_tensor(Sema *s, int node)
{
	if (++F(s)->ntensor == FZ_MAX_TENSORS + 1)
		diag_error(s->d, N(s, node)->off, "too many tensors in one fusion (the runtime takes at most %d)", FZ_MAX_TENSORS);
	name_fits(s, node, "tensor", FZ_MAX_NAME, "");
}

static int sym_intern(Sema *s, int node)
{
	Fusion *f = F(s);
	for (int i = 0; i < f->nsym; i++)
		if (strlen(f->sym[i]) == N(s, node)->len && !memcmp(f->sym[i], TXT(s, node), N(s, node)->len))
			return i;
	name_fits(s, node, "size", FZ_MAX_NAME, "");
	if (f->nsym == FZ_MAX_SIZES)
		diag_error(s->d, N(s, node)->off, "too many sizes in one fusion (the runtime takes at most %d)", FZ_MAX_SIZES);
	f->sym = xrealloc(f->sym, (unsigned long)f->nsym + 1, sizeof *f->sym);
	f->sym[f->nsym] = dup_name(s, node);
	return f->nsym++;
}

/* const NAME = NUMBER */
static void declare_const(Sema *s, int node)
{
	if (const_find(s, node)) {
		diag_error(s->d, N(s, node)->off, "redefinition of constant '%.*s'", NAMEF(s, node));
		return;
	}
	if (s->nconst == MAX_CONSTS) {
		diag_error(s->d, N(s, node)->off, "too many constants (at most %d)", MAX_CONSTS);
		return;
	}
	double v = N(s, node)->num;
	if (!isfinite(v)) {
		diag_error(s->d, N(s, node)->off, "number out of range: the value of constant '%.*s' is beyond the largest double", NAMEF(s, node));
		return;
	}
	/* an integer constant is written as one: 2.0 is a float (README 3.1) */
	s->consts[s->nconst++] = (Const){N(s, node)->off, N(s, node)->len, v, N(s, node)->flag && v == floor(v) && fabs(v) < 9e15};
}

/* Literal sizes are multiplied in 64 bits everywhere after the checker
 * (scratch sizes, index spaces, offsets): their products stay below this. */
#define LITERAL_LIMIT 4611686018427387904.0 /* 2^62 */

/* The product of the sizes among d[0..n) that are numbers (symbols are
 * bound at launch, by the caller). */
static double literal_product(const Dim *d, int n)
{
	double p = 1;
	for (int i = 0; i < n; i++)
		if (d[i].sym < 0 && !dim_derived(d[i])) p *= (double)d[i].value;
	return p;
}

/* param := IDENT ':' TYPE [ '[' dim {',' dim} ']' ] */
static void declare_tensor(Sema *s, int node, TensorKind kind)
{
	if (tensor_find(s, node) >= 0) {
		diag_error(s->d, N(s, node)->off, "redefinition of '%.*s'", NAMEF(s, node));
		return;
	}
	if (builtin_find(s, node) || const_find(s, node)) {
		diag_error(s->d, N(s, node)->off, "'%.*s' is already a %s", NAMEF(s, node), builtin_find(s, node) ? "built-in function" : "constant");
		return;
	}
	int t = type_lookup(s, N(s, node)->a);
	int id = ir_add_tensor(s->m);
	count_tensor(s, node);
	Tensor *x = &s->m->tensor[id];
	x->name = dup_name(s, node);
	x->kind = kind;
	x->type = t < 0 ? ET_F32 : (ElemType)t;
	x->off = N(s, node)->off;
	if (kind != TK_TEMP) x->param = F(s)->nparam++;
	for (int d = N(s, node)->b; d; d = N(s, d)->next) {
		if (x->rank == MAX_RANK) {
			diag_error(s->d, N(s, d)->off, "too many dimensions (at most %d)", MAX_RANK);
			break;
		}
		Dim *dm = &x->dim[x->rank++];
		if (N(s, d)->flag) {
			double v = N(s, d)->num;
			if (v < 1 || v != floor(v) || v > 9e15)
				diag_error(s->d, N(s, d)->off, "a dimension must be a positive integer");
			dm->sym = -1, dm->value = v >= 1 && v <= 9e15 ? (int64_t)v : 1;
		} else {
			const Const *c = const_find(s, d);
			if (c) {
				if (!c->is_int || c->value < 1)
					diag_error(s->d, N(s, d)->off, "a dimension must be a positive integer");
				dm->sym = -1, dm->value = c->is_int && c->value >= 1 ? (int64_t)c->value : 1;
			} else {
				dm->sym = sym_intern(s, d);
			}
		}
	}
	double bytes = elem_info[x->type].bytes * literal_product(x->dim, x->rank);
	if (bytes > LITERAL_LIMIT)
		diag_error(s->d, N(s, node)->off, "'%.*s' would hold %.3g bytes: sizes written as numbers must keep a tensor "
		           "within 2^62 bytes (64-bit sizes and offsets wrap beyond)", NAMEF(s, node), bytes);
}

/* --- names: misspellings and knock-on errors ----------------------------- */

/* Edit distance (insertions, deletions, substitutions, transpositions) of
 * two short names, capped: anything above `cap` is cap + 1. */
static int edit_distance(const char *a, size_t la, const char *b, size_t lb, int cap)
{
	if (la > 31 || lb > 31) return cap + 1;
	int d[33][33];
	for (size_t i = 0; i <= la; i++) d[i][0] = (int)i;
	for (size_t j = 0; j <= lb; j++) d[0][j] = (int)j;
	for (size_t i = 1; i <= la; i++)
		for (size_t j = 1; j <= lb; j++) {
			int v = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
			if (d[i - 1][j] + 1 < v) v = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < v) v = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < v) v = d[i - 2][j - 2] + 1;
			d[i][j] = v;
		}
	return d[la][lb] > cap ? cap + 1 : d[la][lb];
}

typedef struct Guess { const char *best; size_t len; int dist, ties; } Guess;

static void guess(Guess *g, const char *want, size_t wl, const char *cand, size_t cl)
{
	int cap = wl <= 1 ? 0 : wl <= 3 ? 1 : 2; /* every one-letter name is one edit from another */
	int d = edit_distance(want, wl, cand, cl, cap);
	if (d > cap || d == 0 || cap == 0) return;
	if (!g->best || d < g->dist) *g = (Guess){cand, cl, d, 0};
	else if (d == g->dist && (cl != g->len || memcmp(cand, g->best, cl))) g->ties++;
}

/* "; did you mean 'X'?" for the nearest name a spec could have meant:
 * tensors, constants and sizes, the statement's indices (values), the
 * built-ins (calls). Empty when nothing is near, or two names are. */
static const char *did_you_mean(Sema *s, unsigned off, unsigned len, int call, char *buf, size_t n)
{
	const char *w = s->ast->text + off;
	Guess g = {0};
	Fusion *f = F(s);
	for (int i = f->first_tensor; i < f->first_tensor + f->ntensor; i++)
		guess(&g, w, len, s->m->tensor[i].name, strlen(s->m->tensor[i].name));
	for (int i = 0; i < s->nconst && !call; i++) guess(&g, w, len, s->ast->text + s->consts[i].off, s->consts[i].len);
	for (int i = 0; i < f->nsym && !call; i++) guess(&g, w, len, f->sym[i], strlen(f->sym[i]));
	for (int i = 0; i < s->nslot && !call; i++)
		if (s->slot[i].has_range && !s->slot[i].dropped && s->slot[i].off != off)
			guess(&g, w, len, s->ast->text + s->slot[i].off, s->slot[i].len);
	for (unsigned i = 0; i < sizeof builtins / sizeof builtins[0] && call; i++)
		guess(&g, w, len, ir_op_name[builtins[i].op], strlen(ir_op_name[builtins[i].op]));
	if (!g.best || g.ties) return "";
	snprintf(buf, n, "; did you mean '%.*s'?", (int)g.len, g.best);
	return buf;
}

/* A read of the name the statement being checked defines: a temp is
 * defined once, so it cannot be read there (t(i) = t(i) + x(i)). */
static int reads_own_definition(Sema *s, unsigned off, unsigned len)
{
	if (!s->cur_lhs || !name_is(s, s->cur_lhs, off, len)) return 0;
	diag_error(s->d, off, "'%.*s' is read in its own definition: a temp is defined once, by one statement; "
	           "give the new value another name", (int)len, s->ast->text + off);
	return 1;
}

static void undefined_name(Sema *s, unsigned off, unsigned len)
{
	char buf[96];
	if (reads_own_definition(s, off, len)) return;
	diag_error(s->d, off, "use of undefined name '%.*s'%s", (int)len, s->ast->text + off, did_you_mean(s, off, len, 0, buf, sizeof buf));
}

/* A name whose defining statement had an error: reading it later is not
 * another error. */
static int is_failed(Sema *s, int node)
{
	for (int i = 0; i < s->nfailed; i++)
		if (s->failed[i].len == N(s, node)->len && !memcmp(s->ast->text + s->failed[i].off, TXT(s, node), N(s, node)->len))
			return 1;
	return 0;
}

static void mark_failed(Sema *s, int node)
{
	if (is_failed(s, node) || s->nfailed == (int)(sizeof s->failed / sizeof s->failed[0])) return;
	s->failed[s->nfailed].off = N(s, node)->off, s->failed[s->nfailed++].len = N(s, node)->len;
}

/* `in (lo, hi]`: the values the caller passes in an input, for whatever
 * generates test inputs. Recorded closed: an open integer end moves to the
 * next integer, an open float end a millionth of the width inside, so that
 * a generator drawing from [lo, hi] keeps to the domain. */
static void check_domain(Sema *s, int node, Tensor *x)
{
	int dn = N(s, node)->c;
	double lo = N(s, N(s, dn)->a)->num, hi = N(s, N(s, dn)->b)->num;
	int open = N(s, dn)->flag;
	if (x->kind != TK_INPUT) {
		diag_error(s->d, N(s, dn)->off, "only an input has a domain: it says which values the caller passes");
		return;
	}
	if (!isfinite(lo) || !isfinite(hi)) {
		diag_error(s->d, N(s, dn)->off, "a domain needs finite bounds: test inputs are drawn from it");
		return;
	}
	if (lo > hi || (lo == hi && open)) {
		diag_error(s->d, N(s, dn)->off, "the domain of '%s' is empty", x->name);
		return;
	}
	if (!elem_info[x->type].is_float) {
		lo = open & 1 ? floor(lo) + 1 : ceil(lo);
		hi = open & 2 ? ceil(hi) - 1 : floor(hi);
		if (lo > hi) {
			diag_error(s->d, N(s, dn)->off, "the domain of '%s' holds no integer", x->name);
			return;
		}
	} else {
		double w = (hi - lo) * 1e-6;
		if (open & 1) lo += w;
		if (open & 2) hi -= w;
	}
	x->has_domain = 1, x->dom_lo = lo, x->dom_hi = hi, x->dom_open = open;
}

/* param := IDENT ':' TYPE [dims] ['in' interval] | IDENT (an output only:
 * the input of that name, updated in place) */
static void declare_param(Sema *s, int node, TensorKind kind)
{
	if (N(s, node)->a) {
		int before = s->m->ntensor;
		declare_tensor(s, node, kind);
		if (N(s, node)->c && s->m->ntensor != before) check_domain(s, node, &s->m->tensor[s->m->ntensor - 1]);
		return;
	}
	int t = tensor_find(s, node); /* the grammar allows this for outputs only */
	if (t < 0 || (s->m->tensor[t].kind != TK_INPUT && !s->m->tensor[t].inplace)) {
		char buf[96];
		diag_error(s->d, N(s, node)->off, "output '%.*s' has no type: an output named alone must be an input of this fusion, updated in place%s",
		           NAMEF(s, node), t < 0 ? did_you_mean(s, N(s, node)->off, N(s, node)->len, 0, buf, sizeof buf) : "");
	} else if (s->m->tensor[t].inplace) {
		diag_error(s->d, N(s, node)->off, "redefinition of '%.*s'", NAMEF(s, node));
	} else {
		s->m->tensor[t].kind = TK_OUTPUT, s->m->tensor[t].inplace = 1;
	}
}

/* --- statements ------------------------------------------------------ */

static int slot_find(Sema *s, unsigned off, unsigned len)
{
	for (int i = 0; i < s->nslot; i++)
		if (s->slot[i].len == len && !memcmp(s->ast->text + s->slot[i].off, s->ast->text + off, len))
			return i;
	return -1;
}

static int slot_get(Sema *s, int node)
{
	int i = slot_find(s, N(s, node)->off, N(s, node)->len);
	if (i >= 0) return i;
	if (s->nslot == MAX_IDX) {
		diag_error(s->d, N(s, node)->off, "too many indices in one statement (at most %d)", MAX_IDX);
		return -1;
	}
	s->slot[s->nslot] = (Slot){.off = N(s, node)->off, .len = N(s, node)->len};
	return s->nslot++;
}

/* The size symbol a name spells, or -1. */
static int sym_find(Sema *s, int node)
{
	Fusion *f = F(s);
	for (int i = 0; i < f->nsym; i++)
		if (ast_name_eq(s->ast, node, f->sym[i])) return i;
	return -1;
}

/* True for a bare identifier that names no tensor, constant, size or
 * function: that is an index. */
static int is_index_name(Sema *s, int node)
{
	const Node *x = N(s, node);
	return x->kind == AST_REF && !x->flag && tensor_find(s, node) < 0 && !const_find(s, node) && sym_find(s, node) < 0 &&
	       !is_failed(s, node);
}

static void give_range(Sema *s, int node, int slot, Dim d)
{
	Slot *sl = &s->slot[slot];
	if (sl->ragged) return;
	if (!sl->has_range) {
		sl->has_range = 1, sl->range = d, sl->range_off = N(s, node)->off;
		return;
	}
	if (!dim_equal(sl->range, d)) {
		char a[64], b[64];
		dim_name(s, sl->range, a, sizeof a);
		dim_name(s, d, b, sizeof b);
		diag_error(s->d, N(s, node)->off, "index '%.*s' ranges over %s here but over %s earlier in this statement",
		           NAMEF(s, node), b, a);
		diag_note(s->d, sl->range_off, "range %s inferred here", a);
	}
}

/* --- affine subscripts: X(r, 2*c), x(i + 1), X(r*S + c) ----------------- */

/* An integer literal or integer constant. */
static int int_value(Sema *s, int n, int64_t *v)
{
	const Node *x = N(s, n);
	if (x->kind == AST_NUM && x->flag && x->num <= 9e15) return *v = (int64_t)x->num, 1;
	if (x->kind == AST_REF && !x->flag) {
		const Const *c = const_find(s, n);
		if (c && c->is_int) return *v = (int64_t)c->value, 1;
	}
	return 0;
}

static int index_slot(Sema *s, int n)
{
	const Node *x = N(s, n);
	if (x->kind != AST_REF || x->flag || !is_index_name(s, n)) return -1;
	return slot_find(s, x->off, x->len);
}

/* a*i (a a positive integer, or a size S: then *ssym = S), or i alone. */
static int aff_term(Sema *s, int n, int *slot, int64_t *a, int *ssym)
{
	const Node *x = N(s, n);
	*ssym = -1, *a = 1;
	if ((*slot = index_slot(s, n)) >= 0) return 1;
	if (x->kind != AST_BINARY || x->op != OP_MUL) return 0;
	for (int side = 0; side < 2; side++) {
		int k = side ? x->a : x->b, o = side ? x->b : x->a;
		if ((*slot = index_slot(s, o)) < 0) continue;
		if (int_value(s, k, a) && *a >= 1) return 1;
		if (N(s, k)->kind == AST_REF && !N(s, k)->flag && (*ssym = sym_find(s, k)) >= 0) return 1;
	}
	return 0;
}

/* Is subscript n one of: a*i + b, a*i - b, b + a*i (a, b integer
 * constants), or i*S + c (S a size, c an index)? */
static int affine(Sema *s, int n, struct Aff *f)
{
	const Node *x = N(s, n);
	if (aff_term(s, n, &f->slot, &f->a, &f->ssym)) return f->ssym < 0 && f->a > 1; /* a bare i is no news */
	if (x->kind != AST_BINARY || (x->op != OP_ADD && x->op != OP_SUB)) return 0;
	int64_t k;
	if (int_value(s, x->b, &k) && aff_term(s, x->a, &f->slot, &f->a, &f->ssym) && f->ssym < 0)
		return f->b = x->op == OP_ADD ? k : -k, 1;
	if (x->op == OP_ADD && int_value(s, x->a, &k) && aff_term(s, x->b, &f->slot, &f->a, &f->ssym) && f->ssym < 0)
		return f->b = k, 1;
	if (x->op != OP_ADD) return 0;
	for (int side = 0; side < 2; side++) {
		int c = index_slot(s, side ? x->a : x->b);
		if (c >= 0 && aff_term(s, side ? x->b : x->a, &f->slot, &f->a, &f->ssym) && f->ssym >= 0 && f->slot != c)
			return f->slot2 = c, f->b = 0, 1;
	}
	return 0;
}

/* The range of i that keeps a*i + b (or i*S + c) within dim: (D + a-1-b)/a,
 * or D/S. 0 when there is none (a derived or negative start). */
static int aff_candidate(const struct Aff *f, Dim *r)
{
	Dim d = f->dim;
	if (dim_derived(d) || f->b < 0) return 0;
	*r = d;
	if (f->ssym >= 0) {
		r->dsym = f->ssym + 1;
	} else if (d.sym < 0) {
		int64_t v = d.value - f->b + f->a - 1;
		r->value = v > 0 ? v / f->a : 0;
	} else {
		r->add = f->a - 1 - f->b, r->div = f->a > 1 ? f->a : 0;
	}
	return 1;
}

/* Does ri <= rd hold for every size (ri derived from rd's own base)? */
static int dim_le(Dim ri, Dim rd)
{
	if (dim_same(ri, rd)) return 1;
	if (ri.sym != rd.sym) return 0;
	if (dim_derived(rd)) /* (D + x)/a <= (D + y)/a when x <= y */
		return !rd.dsym && !ri.dsym && (ri.div > 1 ? ri.div : 1) == (rd.div > 1 ? rd.div : 1) && ri.add <= rd.add;
	if (ri.sym < 0) return !dim_derived(ri) && ri.value <= rd.value;
	if (ri.dsym) return ri.add <= 0 && ri.div <= 1;
	return ri.add <= (ri.div > 1 ? ri.div : 1) - 1;
}

/* Is subscript f within its dimension for every point, i < ri (c < rc)? */
static int aff_proved(const struct Aff *f, Dim ri, Dim rc)
{
	Dim d = f->dim;
	if (dim_derived(d)) return 0;
	if (f->ssym >= 0) /* (ri-1)*S + rc-1 <= D-1: ri = D/S, rc = S */
		return rc.sym == f->ssym && !dim_derived(rc) && ri.sym == d.sym && ri.dsym == f->ssym + 1 && ri.add == 0 &&
		       ri.div <= 1 && (d.sym >= 0 || ri.value == d.value);
	if (f->b < 0) return 0;
	if (ri.sym < 0 && d.sym < 0 && !dim_derived(ri)) return ri.value == 0 || f->a * (ri.value - 1) + f->b <= d.value - 1;
	if (ri.sym != d.sym || ri.dsym) return 0;
	int64_t y = ri.div > 1 ? ri.div : 1;
	if (y == f->a) return ri.add <= f->a - 1 - f->b; /* a*floor((D+x)/a) <= D+x */
	return y == 1 && f->a == 1 && ri.add + f->b <= 0;
}

static int leftmost(Sema *s, int n)
{
	while (N(s, n)->kind == AST_BINARY) n = N(s, n)->a;
	return n;
}

/* Ranges from affine subscripts, then the proof that every affine subscript
 * stays within its dimension: an index with no other range takes the one
 * its affine use allows; one with a range is narrowed to it when that is
 * smaller and the index does not enumerate an existing target; what is
 * still not proved is an error, unless a 'where' may guard it. */
static int affine_ranges(Sema *s, int guarded, int target_known)
{
	int bad = 0;
	for (int i = 0; i < s->naff; i++) {
		struct Aff *f = &s->aff[i];
		Slot *sl = &s->slot[f->slot];
		Dim c;
		if (sl->ragged || !aff_candidate(f, &c)) continue;
		if (!sl->has_range) {
			sl->has_range = 1, sl->range = c, sl->range_off = N(s, f->node)->off;
			continue;
		}
		Dim rc = f->slot2 >= 0 ? s->slot[f->slot2].range : c;
		if (!aff_proved(f, sl->range, rc) && !(sl->on_lhs && target_known) && dim_le(c, sl->range) && aff_proved(f, c, rc))
			sl->range = c, sl->range_off = N(s, f->node)->off;
	}
	for (int i = 0; i < s->naff && !guarded; i++) {
		const struct Aff *f = &s->aff[i];
		const Slot *sl = &s->slot[f->slot], *s2 = f->slot2 >= 0 ? &s->slot[f->slot2] : NULL;
		if (sl->ragged || (s2 && s2->ragged) || !sl->has_range || (s2 && !s2->has_range)) continue;
		if (aff_proved(f, sl->range, s2 ? s2->range : sl->range)) continue;
		char r[64], d[64];
		dim_name(s, sl->range, r, sizeof r), dim_name(s, f->dim, d, sizeof d);
		unsigned at = N(s, leftmost(s, f->node))->off;
		if (f->b < 0 && f->ssym < 0)
			diag_error(s->d, at, "subscript %d of '%s' is negative when '%.*s' is 0 (guard the statement with 'where')", f->pos + 1,
			           s->m->tensor[f->tensor].name, (int)sl->len, s->ast->text + sl->off);
		else
			diag_error(s->d, at, "subscript %d of '%s' may fall outside its dimension %s: '%.*s' ranges over %s (guard the statement with 'where')",
			           f->pos + 1, s->m->tensor[f->tensor].name, d, (int)sl->len, s->ast->text + sl->off, r);
		diag_note(s->d, sl->range_off, "range %s inferred here", r);
		bad = 1;
	}
	return bad;
}

/* Pass 1: find the indices of a statement and the ranges the tensors they
 * subscript give them. */
static void collect(Sema *s, int e)
{
	if (!e) return;
	const Node *x = N(s, e);
	switch (x->kind) {
	case AST_REF: {
		if (!x->flag) {
			int t = tensor_find(s, e);
			if (t >= 0 && s->m->tensor[t].rank && !s->rank_error) {
				diag_error(s->d, x->off, "'%.*s' has rank %d; index it, as in %.*s(...)", NAMEF(s, e),
				           s->m->tensor[t].rank, NAMEF(s, e));
				s->rank_error = 1;
				return;
			}
			if (is_index_name(s, e)) {
				int k = slot_get(s, e);
				(void)k;
			}
			return;
		}
		int t = tensor_find(s, e);
		int pos = 0, nargs = 0;
		int unknown = t < 0 && ((!builtin_find(s, e) && elem_lookup(TXT(s, e), x->len) < 0) || is_failed(s, e));
		for (int a = x->a; a; a = N(s, a)->next) nargs++;
		if (t >= 0 && nargs != s->m->tensor[t].rank && !s->rank_error) {
			diag_error(s->d, x->off, "'%.*s' has rank %d but is subscripted with %d ind%s", NAMEF(s, e),
			           s->m->tensor[t].rank, nargs, nargs == 1 ? "ex" : "ices");
			s->rank_error = 1;
			return;
		}
		for (int a = x->a; a; a = N(s, a)->next, pos++) {
			if (is_index_name(s, a)) {
				int k = slot_get(s, a);
				if (k < 0) continue;
				if (!s->no_ranges) s->slot[k].in_access = 1;
				if (unknown) s->slot[k].in_unknown = 1;
				/* a 'for' bound is weak evidence: row_ptr(r) must not
				 * give r the size of row_ptr when y(r) says otherwise */
				if (s->no_ranges) s->slot[k].in_bound = 1;
				if (t >= 0 && pos < s->m->tensor[t].rank && (!s->no_ranges || !s->slot[k].has_range))
					give_range(s, a, k, s->m->tensor[t].dim[pos]);
			} else {
				collect(s, a);
				if (t >= 0 && pos < s->m->tensor[t].rank && !s->no_ranges && s->naff < (int)(sizeof s->aff / sizeof s->aff[0])) {
					struct Aff f = {.slot = -1, .slot2 = -1, .ssym = -1};
					if (affine(s, a, &f)) {
						f.dim = s->m->tensor[t].dim[pos], f.tensor = t, f.pos = pos, f.node = a;
						s->aff[s->naff++] = f;
					}
				}
			}
		}
		return;
	}
	case AST_UNARY: collect(s, x->a); return;
	case AST_BINARY: collect(s, x->a), collect(s, x->b); return;
	default: return;
	}
}

static int is_float(ElemType t) { return elem_info[t].is_float; }

static ElemType arith_type(Sema *s, ElemType a, ElemType b)
{
	if (is_float(a) || is_float(b)) return s->compute;
	if (a == ET_I64 || b == ET_I64) return ET_I64;
	return ET_I32;
}

static int mk(Sema *s, IrOp op, ElemType t, unsigned off, int a, int b, int c)
{
	int e = ir_add_expr(s->m, op, t, off);
	s->m->expr[e].a = a, s->m->expr[e].b = b, s->m->expr[e].c = c;
	return e;
}

static ElemType ET(Sema *s, int e) { return s->m->expr[e].type; }

static int build(Sema *s, int node);

/* A read of an in-place tensor's old value (before its first write). It is
 * correct in every schedule only as the updating statement's own '=' at
 * its own point, p(i) = f(p(i), ...): the thread that reads an element is
 * the one that overwrites it, and nothing computed from the old value can
 * be recomputed after the write. Anything else is refused. */
static int old_value_read(Sema *s, int t, int node)
{
	const Node *x = N(s, node);
	int ok = t == s->cur_target && s->cur_red == RED_NONE;
	int a = x->a, b = s->cur_lhs ? N(s, s->cur_lhs)->a : 0;
	for (; ok && a && b; a = N(s, a)->next, b = N(s, b)->next)
		ok = is_index_name(s, b) && N(s, a)->kind == AST_REF && !N(s, a)->flag && name_is(s, a, N(s, b)->off, N(s, b)->len);
	if (ok && !a && !b) return 1;
	if (t == s->cur_target) {
		char at[128] = "";
		int n = 0;
		for (b = s->cur_lhs ? N(s, s->cur_lhs)->a : 0; b && n < 100; b = N(s, b)->next)
			n += snprintf(at + n, sizeof at - (size_t)n, "%s%.*s", n ? ", " : "(", NAMEF(s, b));
		if (n) snprintf(at + n, sizeof at - (size_t)n, ")");
		diag_error(s->d, x->off, "the in-place update of '%.*s' may read its old value only with '=', at the point it writes: %.*s%s",
		           NAMEF(s, node), NAMEF(s, node), at);
	} else {
		diag_error(s->d, x->off, "'%.*s' is updated in place later: only the statement that updates it may read its old value",
		           NAMEF(s, node));
	}
	return 0;
}

static int need_number(Sema *s, int e, const char *what)
{
	if (ET(s, e) == ET_BOOL) {
		diag_error(s->d, s->m->expr[e].off, "type mismatch: %s needs a number, not a boolean (use select(c, 1, 0))", what);
		return 0;
	}
	return 1;
}

static int build_ref(Sema *s, int node)
{
	const Node *x = N(s, node);
	int t = tensor_find(s, node);
	if (!x->flag) { /* bare name: index, constant or scalar */
		const Const *c = const_find(s, node);
		if (c) {
			int e = mk(s, IR_CONST, c->is_int ? ET_I32 : s->compute, x->off, 0, 0, 0);
			s->m->expr[e].value = c->value;
			return e;
		}
		if (t >= 0) {
			Tensor *tt = &s->m->tensor[t];
			if (tt->rank != 0) {
				diag_error(s->d, x->off, "'%.*s' has rank %d; index it, as in %.*s(...)", NAMEF(s, node), tt->rank, NAMEF(s, node));
				return 0;
			}
			if (tt->inplace && tt->def_stage < 0) {
				if (!old_value_read(s, t, node)) return 0;
			} else if (tt->kind != TK_INPUT && tt->def_stage < 0) {
				diag_error(s->d, x->off, "'%.*s' is read before any stage writes it", NAMEF(s, node));
				return 0;
			}
			int e = mk(s, IR_SCALAR, tt->type, x->off, 0, 0, 0);
			s->m->expr[e].tensor = t;
			return e;
		}
		if (is_failed(s, node)) return 0;
		int sym = sym_find(s, node);
		if (sym >= 0) { /* a size, bound at launch: an i64 value like an index */
			int e = mk(s, IR_SIZE, ET_I64, x->off, 0, 0, 0);
			s->m->expr[e].sym = sym, s->m->expr[e].fusion = s->fusion;
			return e;
		}
		int k = slot_find(s, x->off, x->len);
		if (k < 0) {
			for (int i = 0; i < s->nundef; i++)
				if (!s->undef[i].done && s->undef[i].len == x->len && !memcmp(s->ast->text + s->undef[i].off, TXT(s, node), x->len))
					undefined_name(s, x->off, x->len), s->undef[i].done = 1;
			return 0;
		}
		Slot *sl = &s->slot[k];
		if (!sl->has_range && !sl->ragged) {
			undefined_name(s, x->off, x->len);
			sl->has_range = 1, sl->range = (Dim){.sym = -1, .value = 1}; /* report once */
			return 0;
		}
		int e = mk(s, IR_INDEX, ET_I64, x->off, 0, 0, 0);
		s->m->expr[e].index = s->first_index + k;
		return e;
	}
	if (t < 0) { /* a call */
		const struct Builtin *b = builtin_find(s, node);
		int ty = elem_lookup(TXT(s, node), x->len);
		int nargs = 0, args[3] = {0, 0, 0};
		for (int a = x->a; a; a = N(s, a)->next, nargs++)
			if (nargs < 3) args[nargs] = build(s, a);
		if (ty >= 0) {
			if (nargs != 1) {
				diag_error(s->d, x->off, "cast '%.*s' takes 1 argument, not %d", NAMEF(s, node), nargs);
				return 0;
			}
			if (!args[0] || !need_number(s, args[0], "a cast")) return 0;
			ElemType to = is_float((ElemType)ty) ? (ty == ET_F64 ? ET_F64 : s->compute) : (ElemType)ty;
			return mk(s, IR_CAST, to, x->off, args[0], 0, 0);
		}
		if (!b && sym_find(s, node) >= 0) {
			diag_error(s->d, x->off, "'%.*s' is a size, not a tensor: read it as a value, without parentheses", NAMEF(s, node));
			return 0;
		}
		if (!b && is_failed(s, node)) return 0; /* its definition's error is reported */
		if (!b && reads_own_definition(s, x->off, x->len)) return 0;
		if (!b) {
			char buf[96];
			diag_error(s->d, x->off, "unknown function or tensor '%.*s'%s", NAMEF(s, node),
			           did_you_mean(s, x->off, x->len, 1, buf, sizeof buf));
			return 0;
		}
		if (nargs != b->arity) {
			diag_error(s->d, x->off, "'%s' takes %d argument%s, not %d", ir_op_name[b->op], b->arity, b->arity == 1 ? "" : "s", nargs);
			return 0;
		}
		for (int i = 0; i < nargs; i++)
			if (!args[i]) return 0;
		if (b->op == IR_SELECT) {
			if (ET(s, args[0]) != ET_BOOL) {
				diag_error(s->d, s->m->expr[args[0]].off, "type mismatch: select's condition must be a comparison");
				return 0;
			}
			if (!need_number(s, args[1], "select") || !need_number(s, args[2], "select")) return 0;
			return mk(s, IR_SELECT, arith_type(s, ET(s, args[1]), ET(s, args[2])), x->off, args[0], args[1], args[2]);
		}
		for (int i = 0; i < nargs; i++)
			if (!need_number(s, args[i], ir_op_name[b->op])) return 0;
		ElemType rt = s->compute;
		if ((b->op == IR_MINF || b->op == IR_MAXF) && !is_float(ET(s, args[0])) && !is_float(ET(s, args[1])))
			rt = arith_type(s, ET(s, args[0]), ET(s, args[1]));
		if (b->op == IR_ABS && !is_float(ET(s, args[0]))) rt = ET(s, args[0]);
		return mk(s, b->op, rt, x->off, args[0], args[1], 0);
	}
	Tensor *tt = &s->m->tensor[t];
	if (tt->inplace && tt->def_stage < 0) {
		if (!old_value_read(s, t, node)) return 0;
	} else if (tt->kind != TK_INPUT && tt->def_stage < 0 && !tt->zero_init) {
		diag_error(s->d, x->off, "'%.*s' is read before any stage writes it", NAMEF(s, node));
		return 0;
	}
	int nargs = 0, args[MAX_RANK] = {0}, ok = 1;
	for (int a = x->a; a; a = N(s, a)->next, nargs++) {
		int e = build(s, a);
		if (!e) { ok = 0; continue; }
		if (is_float(ET(s, e)) || ET(s, e) == ET_BOOL) {
			diag_error(s->d, N(s, a)->off, "type mismatch: a subscript must be an integer, not %s",
			           ET(s, e) == ET_BOOL ? "a boolean" : "a float");
			ok = 0;
		}
		if (nargs < MAX_RANK) args[nargs] = e;
	}
	if (nargs != tt->rank) {
		diag_error(s->d, x->off, "'%.*s' has rank %d but is subscripted with %d ind%s", NAMEF(s, node), tt->rank, nargs, nargs == 1 ? "ex" : "ices");
		return 0;
	}
	if (!ok) return 0;
	int e = mk(s, IR_LOAD, tt->type, x->off, 0, 0, 0);
	s->m->expr[e].tensor = t;
	s->m->expr[e].nargs = nargs;
	memcpy(s->m->expr[e].args, args, sizeof args);
	return e;
}

/* Does expression e read index ix anywhere (subscripts, operands)? */
static int expr_uses_index(const Module *m, int e, int ix)
{
	if (!e) return 0;
	const Expr *x = &m->expr[e];
	if (x->op == IR_INDEX) return x->index == ix;
	for (int i = 0; i < x->nargs; i++)
		if (expr_uses_index(m, x->args[i], ix)) return 1;
	return expr_uses_index(m, x->a, ix) || expr_uses_index(m, x->b, ix) || expr_uses_index(m, x->c, ix);
}
static size_t sl_len(const Sema *s, int k) { return s->slot[k].len; }
static const char *sl_text(const Sema *s, int k) { return s->ast->text + s->slot[k].off; }

/* Pass 2: expressions, with types. Returns 0 after reporting an error. */
static int build(Sema *s, int node)
{
	const Node *x = N(s, node);
	switch (x->kind) {
	case AST_NUM: {
		if (!isfinite(x->num)) {
			diag_error(s->d, x->off, "number out of range: '%.*s' is beyond the largest double", (int)x->len, s->ast->text + x->off);
			return 0;
		}
		int isint = x->flag && x->num <= 9e15;
		int e = mk(s, IR_CONST, isint ? (x->num > 2147483647.0 ? ET_I64 : ET_I32) : s->compute, x->off, 0, 0, 0);
		s->m->expr[e].value = x->num;
		return e;
	}
	case AST_REF: return build_ref(s, node);
	case AST_UNARY: {
		int a = build(s, x->a);
		if (!a) return 0;
		if (x->op == OP_NOT) {
			if (ET(s, a) != ET_BOOL) {
				diag_error(s->d, x->off, "type mismatch: '!' needs a boolean operand");
				return 0;
			}
			return mk(s, IR_NOT, ET_BOOL, x->off, a, 0, 0);
		}
		if (!need_number(s, a, "'-'")) return 0;
		return mk(s, IR_NEG, ET(s, a), x->off, a, 0, 0);
	}
	case AST_BINARY: {
		int a = build(s, x->a), b = build(s, x->b);
		if (!a || !b) return 0;
		static const IrOp map[OP_N] = {
			[OP_ADD] = IR_ADD, [OP_SUB] = IR_SUB, [OP_MUL] = IR_MUL, [OP_DIV] = IR_DIV,
			[OP_MOD] = IR_MOD, [OP_LT] = IR_LT, [OP_LE] = IR_LE, [OP_GT] = IR_GT,
			[OP_GE] = IR_GE, [OP_EQ] = IR_EQ, [OP_NE] = IR_NE, [OP_AND] = IR_AND, [OP_OR] = IR_OR,
		};
		IrOp op = map[x->op];
		if (op == IR_AND || op == IR_OR) {
			if (ET(s, a) != ET_BOOL || ET(s, b) != ET_BOOL) {
				diag_error(s->d, x->off, "type mismatch: '%s' needs boolean operands", expr_op_spelling[x->op]);
				return 0;
			}
			return mk(s, op, ET_BOOL, x->off, a, b, 0);
		}
		char what[8];
		snprintf(what, sizeof what, "'%s'", expr_op_spelling[x->op]);
		if (!need_number(s, a, what) || !need_number(s, b, what)) return 0;
		if (op == IR_MOD && (is_float(ET(s, a)) || is_float(ET(s, b)))) {
			diag_error(s->d, x->off, "type mismatch: '%%' needs integer operands");
			return 0;
		}
		ElemType t = op >= IR_LT && op <= IR_NE ? ET_BOOL : arith_type(s, ET(s, a), ET(s, b));
		return mk(s, op, t, x->off, a, b, 0);
	}
	default:
		die("checker: AST node kind %d is not an expression", x->kind);
	}
}

/* Constant integer value of an AST expression (kmin's k), or -1. */
static long const_int(Sema *s, int node)
{
	const Node *x = N(s, node);
	if (x->kind == AST_NUM && x->flag && x->num >= 1 && x->num < 1e6) return (long)x->num;
	if (x->kind == AST_REF && !x->flag) {
		const Const *c = const_find(s, node);
		if (c && c->is_int && c->value >= 1 && c->value < 1e6) return (long)c->value;
	}
	return -1;
}

/* Is this name written by a statement of a later stage of this fusion? */
static int defined_later(Sema *s, int name_node)
{
	int seen = 0;
	for (int it = s->fusion_items; it; it = N(s, it)->next) {
		if (it == s->cur_stage_node) { seen = 1; continue; }
		if (!seen || N(s, it)->kind != AST_STAGE) continue;
		for (int st = N(s, it)->b; st; st = N(s, st)->next) {
			int lhs = N(s, st)->kind == AST_STMT ? N(s, st)->a : st;
			if (name_is(s, lhs, N(s, name_node)->off, N(s, name_node)->len)) return st;
		}
	}
	return 0;
}

/* Expressions deeper than this are refused before any recursive walk, so
 * no later pass can exhaust the C stack (a+a+...+a nests without bound). */
#define MAX_EXPR_DEPTH 1000

/* Reports reads of names that a later stage defines, with a note, and
 * expressions nested too deeply. Every expression passes here first. */
static int check_order_at(Sema *s, int e, int depth)
{
	if (!e) return 0;
	const Node *x = N(s, e);
	int bad = 0;
	if (depth > MAX_EXPR_DEPTH) {
		diag_error(s->d, x->off, "expression nested too deeply (more than %d levels)", MAX_EXPR_DEPTH);
		return -1;
	}
	if (x->kind == AST_REF) {
		if (tensor_find(s, e) < 0 && !builtin_find(s, e) && (x->flag || !const_find(s, e))) {
			int later = defined_later(s, e);
			if (later) {
				diag_error(s->d, x->off, "'%.*s' is used before it is defined", NAMEF(s, e));
				diag_note(s->d, N(s, later)->off, "'%.*s' is defined here, in a later stage", NAMEF(s, e));
				bad = 1;
			}
		}
		for (int a = x->a; a && bad >= 0; a = N(s, a)->next) bad |= check_order_at(s, a, depth + 1);
	} else if (x->kind == AST_UNARY) {
		bad |= check_order_at(s, x->a, depth + 1);
	} else if (x->kind == AST_BINARY) {
		bad |= check_order_at(s, x->a, depth + 1);
		if (bad >= 0) bad |= check_order_at(s, x->b, depth + 1);
	}
	return bad;
}

static int check_order(Sema *s, int e) { return check_order_at(s, e, 0); }

static int loads_index(const Module *m, int e, int ix)
{
	const Expr *x = &m->expr[e];
	if (x->op != IR_LOAD) return 0;
	for (int i = 0; i < x->nargs; i++)
		if (m->expr[x->args[i]].op == IR_INDEX && m->expr[x->args[i]].index == ix) return 1;
	return 0;
}

static void classify(Sema *s, Stmt *st)
{
	Module *m = s->m;
	if (st->red == RED_APPEND) { st->pattern = PAT_COMPACT; return; }
	if (st->red == RED_ACCUM) {
		int gathered = st->nindex > st->nfree;
		for (int i = 0; i < st->nlhs; i++)
			if (m->expr[st->lhs[i]].op != IR_INDEX) gathered = 1;
		st->pattern = gathered ? PAT_SCATTER : PAT_MAP;
		ElemType tt = m->tensor[st->out].type;
		if (gathered && (tt == ET_F16 || tt == ET_BF16))
			diag_error(s->d, st->off, "a scatter-add ('+=' through a gather) into %s is not supported: its atomics take f32, f64, i32 "
			           "or i64; scatter into an f32 temp and convert it in a later stage", elem_info[tt].name);
		return;
	}
	if (st->red == RED_NONE) { st->pattern = PAT_MAP; return; }
	st->pattern = PAT_REDUCE;
	int nred = st->nindex - st->nfree;
	if (st->red == RED_SUM && nred == 1 && !st->mask) {
		int r = st->first_index + st->nfree;
		const Expr *x = &m->expr[st->rhs];
		if (x->op == IR_MUL && loads_index(m, x->a, r) && loads_index(m, x->b, r)) {
			st->pattern = PAT_CONTRACT, st->contract_a = x->a, st->contract_b = x->b;
			return;
		}
	}
	if (st->nfree == 1 && nred == 1) {
		const Index *i = &m->index[st->first_index], *j = &m->index[st->first_index + 1];
		if (i->kind == IX_DENSE && j->kind == IX_DENSE && dim_equal(i->range, j->range))
			st->pattern = PAT_PAIRWISE;
	}
}

static void new_intermediate(Sema *s, int lhs, ElemType t, Stmt *st)
{
	int id = ir_add_tensor(s->m);
	count_tensor(s, lhs);
	Tensor *x = &s->m->tensor[id];
	x->name = dup_name(s, lhs);
	x->kind = TK_TEMP;
	x->type = t;
	x->off = N(s, lhs)->off;
	x->rank = st->nlhs;
	for (int i = 0; i < st->nlhs; i++) x->dim[i] = s->m->index[s->m->expr[st->lhs[i]].index].range;
	st->out = id;
}

/* Outputs whose defining statement failed: a second definition is not
 * also "already written". Tensor ids are small; the array grows. */
static void def_failed_mark(Sema *s, int t)
{
	if (t >= s->ndef_failed) {
		int *p = xrealloc(s->def_failed, (unsigned long)(t + 1), sizeof *p);
		for (int i = s->ndef_failed; i <= t; i++) p[i] = 0;
		s->def_failed = p, s->ndef_failed = t + 1;
	}
	s->def_failed[t] = 1;
}
static int def_failed_get(Sema *s, int t) { return t < s->ndef_failed && s->def_failed[t]; }

/* What a '+=' that has nothing to add into probably meant: with bare
 * indices on the left, a sum reduction; through a gather, a zeroed temp. */
static void accum_hint(Sema *s, int lhs, int output)
{
	int bare = 1;
	for (int a = N(s, lhs)->a; a; a = N(s, a)->next) bare &= is_index_name(s, a);
	if (bare)
		diag_note(s->d, N(s, lhs)->off, "did you mean '+=!'? It sums into '%.*s' from zero; '+=' adds into %s",
		          NAMEF(s, lhs), output ? "whatever the buffer held" : "a tensor that already exists");
	else
		diag_note(s->d, N(s, lhs)->off, "scatter into a 'temp' (it starts at zero)%s",
		          output ? ", or define the output first (with '=')" : "");
}

/* stmt := ref aop expr [for IDENT in expr .. expr] [where expr]
 *       | IDENT '[' IDENT ']' '<-' expr where expr */
static void check_stmt_body(Sema *s, int node);

/* An output whose statement fails is not also reported "never written";
 * marked after the statement, so it still cannot read itself. */
static void check_stmt(Sema *s, int node)
{
	const Node *x = N(s, node);
	s->nundef = 0;
	int errors = s->d->errors;
	check_stmt_body(s, node);
	for (int i = 0; i < s->nundef; i++) /* not met by pass 2: reported all the same */
		if (!s->undef[i].done) undefined_name(s, s->undef[i].off, s->undef[i].len);
	s->cur_lhs = 0; /* names read outside a statement (constants) define nothing */
	int t = tensor_find(s, x->kind == AST_APPEND ? node : x->a);
	if (t < 0) mark_failed(s, x->kind == AST_APPEND ? node : x->a);
	if (t >= 0 && s->m->tensor[t].kind != TK_INPUT && s->m->tensor[t].def_stage < 0) {
		s->m->tensor[t].def_stage = s->stage;
		if (s->d->errors != errors) def_failed_mark(s, t);
	}
	if (x->kind == AST_APPEND && (t = tensor_find(s, x->a)) >= 0 && s->m->tensor[t].kind != TK_INPUT &&
	    s->m->tensor[t].def_stage < 0)
		s->m->tensor[t].def_stage = s->stage;
}

static void check_stmt_body(Sema *s, int node)
{
	const Node *x = N(s, node);
	Module *m = s->m;
	int is_append = x->kind == AST_APPEND;
	int lhs = is_append ? node : x->a;
	/* The target's own name is a write, not a read: only its subscripts. */
	int bad = check_order(s, x->b) | check_order(s, x->d) | (is_append ? 0 : check_order(s, x->e));
	for (int a = is_append ? 0 : N(s, lhs)->a; a; a = N(s, a)->next) bad |= check_order(s, a);
	if (!is_append && x->c) bad |= check_order(s, N(s, x->c)->a) | check_order(s, N(s, x->c)->b);
	if (bad) return;

	RedOp red = RED_NONE;
	if (is_append) red = RED_APPEND;
	else switch (x->op) {
	case AOP_SET: red = RED_NONE; break;
	case AOP_ACCUM: red = RED_ACCUM; break;
	case AOP_SUM: red = RED_SUM; break;
	case AOP_MAX: red = RED_MAX; break;
	case AOP_MIN: red = RED_MIN; break;
	case AOP_KMIN: red = RED_KMIN; break;
	}
	/* An error about the target leaves the rest of the statement to check
	   (lhs_bad): its value and mask may hold independent errors. */
	int target = tensor_find(s, lhs), lhs_bad = 0;
	s->cur_target = target, s->cur_red = red, s->cur_lhs = is_append ? 0 : lhs;
	if (target >= 0 && m->tensor[target].kind == TK_INPUT) {
		diag_error(s->d, x->off, "cannot assign to input '%.*s'", NAMEF(s, lhs));
		lhs_bad = 1;
	} else if (target >= 0 && red != RED_ACCUM && m->tensor[target].def_stage >= 0) {
		if (!def_failed_get(s, target)) /* else its first definition's error says it all */
			diag_error(s->d, x->off, "'%.*s' is already written by stage '%s' (use += to accumulate)",
		           NAMEF(s, lhs), m->stage[m->tensor[target].def_stage].name);
		lhs_bad = 1;
	} else if (target >= 0 && red == RED_ACCUM && m->tensor[target].kind == TK_OUTPUT && m->tensor[target].def_stage < 0 &&
	           !m->tensor[target].inplace) {
		diag_error(s->d, x->off, "'+=' adds into output '%.*s', but no earlier statement defines it", NAMEF(s, lhs));
		accum_hint(s, lhs, 1);
		lhs_bad = 1;
	} else if (target < 0 && (red == RED_ACCUM || is_append)) {
		diag_error(s->d, x->off, "'%.*s' must be declared (as an output or with 'temp') before %s",
		           NAMEF(s, lhs), is_append ? "a compaction appends to it" : "'+=' accumulates into it");
		if (!is_append) accum_hint(s, lhs, 0);
		lhs_bad = 1;
	} else if (target < 0 && (builtin_find(s, lhs) || const_find(s, lhs) || sym_find(s, lhs) >= 0)) {
		diag_error(s->d, x->off, "cannot assign to %s '%.*s'",
		           builtin_find(s, lhs) ? "built-in function" : const_find(s, lhs) ? "constant" : "size", NAMEF(s, lhs));
		lhs_bad = 1;
	}

	/* Pass 1: indices and ranges. */
	s->nslot = 0;
	s->nundef = 0;
	s->naff = 0;
	s->rank_error = 0;
	if (!is_append && x->c) {
		int k = slot_get(s, x->c);
		if (k >= 0) s->slot[k].ragged = 1, s->slot[k].ragged_node = x->c;
	}
	if (!is_append) {
		int pos = 0;
		for (int a = N(s, lhs)->a; a; a = N(s, a)->next, pos++) {
			if (is_index_name(s, a)) {
				int k = slot_get(s, a);
				if (k < 0) continue;
				if (s->slot[k].on_lhs) {
					diag_error(s->d, N(s, a)->off, "index '%.*s' appears twice on the left-hand side", NAMEF(s, a));
					return;
				}
				s->slot[k].on_lhs = 1;
				if (target >= 0 && pos < m->tensor[target].rank)
					give_range(s, a, k, m->tensor[target].dim[pos]);
			} else if (red != RED_ACCUM) {
				diag_error(s->d, N(s, a)->off, "a left-hand subscript must be an index name (only '+=' may scatter through an expression)");
				return;
			} else {
				collect(s, a);
			}
		}
	}
	collect(s, x->b);
	collect(s, x->d);
	if (!is_append && x->c) {
		s->no_ranges = 1;
		collect(s, N(s, x->c)->a), collect(s, N(s, x->c)->b);
		s->no_ranges = 0;
	}
	if (!is_append && x->e) collect(s, x->e);
	if (s->rank_error) return;
	/* Range errors do not end the statement (p1_bad): pass 2 still reports
	   the independent errors of its value. Names that pass 2 reports, or
	   that are already reported, are dropped rather than entered. */
	int p1_bad = affine_ranges(s, x->d != 0, target >= 0);
	for (int k = 0; k < s->nslot; k++) {
		Slot *sl = &s->slot[k];
		if (sl->has_range || sl->ragged) continue;
		sl->has_range = 1, sl->range = (Dim){.sym = -1, .value = 1};
		if ((lhs_bad && sl->on_lhs && !sl->in_access) || (sl->in_unknown && !sl->in_bound)) {
			/* knock-on of the target's error, or of an unknown callee's */
			sl->dropped = !sl->on_lhs, sl->reported = 1, p1_bad = 1;
		} else if (sl->on_lhs || sl->in_access || sl->in_bound) {
			diag_error(s->d, sl->off, "cannot infer the range of index '%.*s': no tensor on the right is subscripted by it",
			           (int)sl->len, s->ast->text + sl->off);
			sl->reported = 1, p1_bad = 1;
		} else { /* reported where pass 2 meets it, in source order */
			s->undef[s->nundef].off = sl->off, s->undef[s->nundef].len = sl->len, s->undef[s->nundef++].done = 0;
			sl->dropped = 1, p1_bad = 1;
		}
	}

	for (int k = 0; k < s->nslot; k++) {
		if (!s->slot[k].ragged) continue;
		if (s->slot[k].on_lhs) {
			diag_error(s->d, N(s, x->c)->off, "the 'for' index '%.*s' cannot be a subscript of the target", NAMEF(s, x->c));
			return;
		}
		if (s->slot[k].in_bound) {
			diag_error(s->d, N(s, x->c)->off, "the bounds of 'for %.*s' cannot use '%.*s' itself", NAMEF(s, x->c), NAMEF(s, x->c));
			return;
		}
	}

	/* Enter the indices: those on the left first, in subscript order. */
	int order[MAX_IDX], n = 0;
	if (!is_append)
		for (int a = N(s, lhs)->a; a; a = N(s, a)->next)
			if (is_index_name(s, a)) order[n++] = slot_find(s, N(s, a)->off, N(s, a)->len);
	int nfree = n;
	for (int k = 0; k < s->nslot; k++) {
		int dup = s->slot[k].dropped;
		for (int j = 0; j < n; j++) dup |= order[j] == k;
		if (!dup) order[n++] = k;
	}
	Slot sorted[MAX_IDX];
	for (int k = 0; k < n; k++) sorted[k] = s->slot[order[k]];
	memcpy(s->slot, sorted, sizeof sorted);
	s->nslot = n;

	int sid = ir_add_stmt(m);
	m->stage[s->stage].nstmt++;
	Stmt *st = &m->stmt[sid];
	st->stage = s->stage, st->red = red, st->off = x->off, st->out = target;
	st->nfree = nfree, st->nindex = n;
	s->first_index = st->first_index = m->nindex;
	for (int k = 0; k < n; k++) {
		int id = ir_add_index(m);
		Index *ix = &m->index[id];
		ix->name = xcalloc(s->slot[k].len + 1, 1);
		memcpy(ix->name, s->ast->text + s->slot[k].off, s->slot[k].len);
		ix->name[s->slot[k].len] = 0;
		ix->off = s->slot[k].off;
		ix->kind = s->slot[k].ragged ? IX_RAGGED : IX_DENSE;
		ix->range = s->slot[k].range;
		ix->reduced = k >= nfree && red != RED_ACCUM && red != RED_APPEND && red != RED_NONE;
	}
	{
		Dim r[MAX_IDX];
		int nr = 0;
		for (int k = 0; k < n; k++)
			if (!s->slot[k].ragged) r[nr++] = s->slot[k].range;
		double pts = literal_product(r, nr);
		if (pts > LITERAL_LIMIT) {
			diag_error(s->d, x->off, "this statement ranges over %.3g points: sizes written as numbers must keep it "
			           "within 2^62 (64-bit index arithmetic wraps beyond)", pts);
			return;
		}
	}
	for (int k = nfree; red == RED_NONE && k < n; k++) {
		const Slot *sl = &s->slot[k];
		if (sl->reported) continue;
		Guess g = {0}; /* a typo of an index on the left? */
		for (int j = 0; j < nfree; j++) guess(&g, s->ast->text + sl->off, sl->len, s->ast->text + s->slot[j].off, s->slot[j].len);
		if (g.best && !g.ties)
			diag_error(s->d, sl->off, "index '%.*s' is not on the left-hand side; did you mean '%.*s'?",
			           (int)sl->len, s->ast->text + sl->off, (int)g.len, g.best);
		else
			diag_error(s->d, sl->off, "index '%.*s' is not on the left-hand side; reduce over it with +=!, max=!, min=! or kmin[k]=!",
			           (int)sl->len, s->ast->text + sl->off);
		return;
	}
	for (int k = 0; k < n; k++) {
		if (!s->slot[k].ragged) continue;
		int fn = s->slot[k].ragged_node;
		Index *ix = &m->index[st->first_index + k];
		int lo = build(s, N(s, fn)->a), hi = build(s, N(s, fn)->b);
		if (!lo || !hi) return;
		if (is_float(ET(s, lo)) || is_float(ET(s, hi)) || ET(s, lo) == ET_BOOL || ET(s, hi) == ET_BOOL) {
			diag_error(s->d, N(s, fn)->off, "type mismatch: the bounds of a 'for' range must be integers");
			return;
		}
		ix->lo = lo, ix->hi = hi;
		/* the loops over data-given ranges open after the dense ones: their
		   bounds can see only those (`for s in 0 .. s` has no value) */
		for (int q = 0; q < n; q++)
			if (s->slot[q].ragged && (expr_uses_index(m, lo, st->first_index + q) || expr_uses_index(m, hi, st->first_index + q))) {
				diag_error(s->d, N(s, fn)->off, "the range of '%.*s' is bounded by '%.*s', which is not known before the loop; "
				           "its bounds may use only the statement's other indices", (int)sl_len(s, k), sl_text(s, k),
				           (int)sl_len(s, q), sl_text(s, q));
				return;
			}
	}
	/* Pass 2: the target's subscripts, the value, the mask. */
	if (!is_append) {
		for (int a = N(s, lhs)->a; a; a = N(s, a)->next) {
			if (st->nlhs == MAX_RANK) {
				diag_error(s->d, N(s, a)->off, "too many subscripts (at most %d)", MAX_RANK);
				return;
			}
			int e = build(s, a);
			if (!e) return;
			if (is_float(ET(s, e)) || ET(s, e) == ET_BOOL) {
				diag_error(s->d, N(s, a)->off, "type mismatch: a subscript must be an integer");
				return;
			}
			st->lhs[st->nlhs++] = e;
		}
		if (target >= 0 && st->nlhs != m->tensor[target].rank) {
			diag_error(s->d, x->off, "'%.*s' has rank %d but is subscripted with %d ind%s", NAMEF(s, lhs),
			           m->tensor[target].rank, st->nlhs, st->nlhs == 1 ? "ex" : "ices");
			return;
		}
	}
	int rhs = build(s, x->b);
	int mask = x->d ? build(s, x->d) : 0;
	if (!rhs || (x->d && !mask)) return;
	if (mask && ET(s, mask) != ET_BOOL) {
		diag_error(s->d, s->m->expr[mask].off, "type mismatch: a 'where' condition must be a comparison");
		return;
	}
	if (ET(s, rhs) == ET_BOOL) {
		diag_error(s->d, s->m->expr[rhs].off, "type mismatch: a boolean cannot be stored (use select(c, 1, 0))");
		return;
	}
	if (lhs_bad || p1_bad) return;
	st = &m->stmt[sid];
	st->rhs = rhs, st->mask = mask;
	if (red == RED_KMIN) {
		long k = const_int(s, x->e);
		if (k < 1) {
			diag_error(s->d, N(s, x->e)->off, "kmin's k must be a positive integer constant");
			return;
		}
		st->kmin_k = (int)k;
	}
	/* Types. */
	ElemType vt = ET(s, rhs);
	if (is_append) {
		int count = tensor_find(s, x->a);
		Tensor *lt = &m->tensor[target];
		if (lt->rank != 1 || is_float(lt->type)) {
			diag_error(s->d, x->off, "type mismatch: '%.*s' must be a one-dimensional integer list to append to", NAMEF(s, lhs));
			return;
		}
		if (count < 0 || m->tensor[count].rank != 0 || is_float(m->tensor[count].type) || m->tensor[count].kind == TK_INPUT) {
			diag_error(s->d, N(s, x->a)->off, "'%.*s' must be a scalar integer output or temp that receives the list's length", NAMEF(s, x->a));
			return;
		}
		if (is_float(vt)) {
			diag_error(s->d, s->m->expr[rhs].off, "type mismatch: a list holds integers, not floats");
			return;
		}
		for (int u = 0; u < m->ntensor; u++)
			if (u != target && m->tensor[u].list_count == count) {
				/* one counter, two lists: each would append at the other's slots */
				diag_error(s->d, N(s, x->a)->off, "'%.*s' already counts the list '%s'; each list needs its own count",
				           NAMEF(s, x->a), m->tensor[u].name);
				return;
			}
		lt->list_count = count;
		if (m->tensor[count].def_stage < 0) m->tensor[count].def_stage = s->stage;
		st->acc = lt->type;
	} else if (target >= 0) {
		Tensor *tt = &m->tensor[target];
		if (is_float(vt) && !is_float(tt->type)) {
			diag_error(s->d, s->m->expr[rhs].off, "type mismatch: cannot store a value of type %s in tensor '%s' of type %s",
			           elem_info[vt].name, tt->name, elem_info[tt->type].name);
			return;
		}
		st->acc = is_float(tt->type) ? (tt->type == ET_F64 ? ET_F64 : s->compute) : (red == RED_KMIN ? vt : tt->type);
		if (is_float(tt->type) && s->compute == ET_F64) st->acc = ET_F64;
	} else {
		ElemType store = is_float(vt) ? m->stage[s->stage].precision : (vt == ET_I64 ? ET_I64 : ET_I32);
		if (red == RED_SUM && !is_float(vt)) store = ET_I32;
		new_intermediate(s, lhs, store, st);
		st = &m->stmt[sid];
		st->acc = is_float(vt) ? s->compute : store;
		target = st->out;
	}
	if (m->tensor[target].def_stage < 0) m->tensor[target].def_stage = s->stage;
	classify(s, st);
}

static void check_attrs(Sema *s, int stage_node, Stage *sg)
{
	static const char *const names[] = {
#define X(a, n) n,
		ATTRS(X)
#undef X
	};
	sg->precision = ET_F32;
	for (int a = N(s, stage_node)->a; a; a = N(s, a)->next) {
		int bit = -1;
		for (unsigned i = 0; i < sizeof names / sizeof names[0]; i++)
			if (ast_name_eq(s->ast, a, names[i])) bit = (int)i;
		if (bit < 0) {
			diag_error(s->d, N(s, a)->off, "unknown attribute '%.*s' (expected reduction, tensor_eligible, precision, scatter, compact or deterministic)", NAMEF(s, a));
			continue;
		}
		if (sg->attrs & (1u << bit)) {
			diag_error(s->d, N(s, a)->off, "attribute '%s' given twice", names[bit]);
			continue;
		}
		sg->attrs |= 1u << bit;
		int v = N(s, a)->a;
		if (bit == ATTR_PRECISION_BIT) {
			int t = v && N(s, v)->kind == AST_IDENT ? elem_lookup(TXT(s, v), N(s, v)->len) : -1;
			if (t < 0 || !elem_info[t].is_float) {
				diag_error(s->d, N(s, v ? v : a)->off, "precision must be one of f64, f32, bf16, f16");
				continue;
			}
			sg->precision = (ElemType)t;
		} else if (v) {
			diag_error(s->d, N(s, v)->off, "attribute '%s' takes no value", names[bit]);
		}
	}
}

static int has_red(const Module *m, const Stage *sg, RedOp lo, RedOp hi)
{
	for (int i = sg->first_stmt; i < sg->first_stmt + sg->nstmt; i++)
		if (m->stmt[i].red >= lo && m->stmt[i].red <= hi) return 1;
	return 0;
}

/* The attributes a stage claims must be true of its statements. */
static void check_stage_claims(Sema *s, Stage *sg)
{
	Module *m = s->m;
	if ((sg->attrs & ATTR(REDUCTION)) && !has_red(m, sg, RED_SUM, RED_KMIN))
		diag_error(s->d, sg->off, "stage '%s' is marked 'reduction' but has no reduction (+=!, max=!, min=!, kmin[k]=!)", sg->name);
	if ((sg->attrs & ATTR(SCATTER)) && !has_red(m, sg, RED_ACCUM, RED_ACCUM))
		diag_error(s->d, sg->off, "stage '%s' is marked 'scatter' but has no '+=' statement", sg->name);
	if ((sg->attrs & ATTR(COMPACT)) && !has_red(m, sg, RED_APPEND, RED_APPEND))
		diag_error(s->d, sg->off, "stage '%s' is marked 'compact' but has no '<-' statement", sg->name);
	int reduces = has_red(m, sg, RED_SUM, RED_KMIN);
	if (reduces && (sg->precision == ET_F16 || sg->precision == ET_BF16) && !(sg->attrs & ATTR(TENSOR_ELIGIBLE)))
		diag_error(s->d, sg->off, "stage '%s' reduces, so it cannot have precision %s: accumulate in f32 or f64",
		           sg->name, elem_info[sg->precision].name);
	if (sg->attrs & ATTR(TENSOR_ELIGIBLE)) {
		const Stmt *c = NULL;
		for (int i = sg->first_stmt; i < sg->first_stmt + sg->nstmt; i++)
			if (m->stmt[i].pattern == PAT_CONTRACT && m->stmt[i].nfree == 2) c = &m->stmt[i];
		if (!c || sg->nstmt != 1) {
			diag_error(s->d, sg->off, "stage '%s' is marked 'tensor_eligible' but is not one matrix contraction acc(m,n) +=! A(m,k) * B(k,n)", sg->name);
			return;
		}
		ElemType a = m->expr[c->contract_a].type, b = m->expr[c->contract_b].type;
		if (a != b || (a != ET_F16 && a != ET_BF16)) {
			diag_error(s->d, sg->off, "stage '%s' is 'tensor_eligible' but its operands are %s and %s; tensor cores need f16 or bf16 operands of one type",
			           sg->name, elem_info[a].name, elem_info[b].name);
			return;
		}
		if (!(sg->attrs & ATTR(PRECISION))) sg->precision = ET_F32;
		if (sg->precision != ET_F32 && !(sg->precision == ET_F16 && a == ET_F16))
			diag_error(s->d, sg->off, "a tensor-core stage over %s operands cannot have precision %s (use f32%s)",
			           elem_info[a].name, elem_info[sg->precision].name, a == ET_F16 ? " or f16" : "");
	}
}

/* stage := 'stage' IDENT [ '[' attr {',' attr} ']' ] '{' { stmt } '}' */
static void check_stage(Sema *s, int node)
{
	Module *m = s->m;
	Fusion *f = F(s);
	for (int i = f->first_stage; i < f->first_stage + f->nstage; i++)
		if (ast_name_eq(s->ast, node, m->stage[i].name)) {
			diag_error(s->d, N(s, node)->off, "redefinition of stage '%.*s'", NAMEF(s, node));
			break;
		}
	int id = ir_add_stage(m);
	F(s)->nstage++;
	Stage *sg = &m->stage[id];
	sg->name = dup_name(s, node);
	sg->off = N(s, node)->off;
	sg->first_stmt = m->nstmt;
	check_attrs(s, node, sg);
	s->stage = id;
	s->compute = sg->precision == ET_F64 ? ET_F64 : ET_F32;
	s->cur_stage_node = node;
	if (!N(s, node)->b) diag_warning(s->d, N(s, node)->off, "stage '%.*s' is empty", NAMEF(s, node));
	int errors = s->d->errors;
	for (int st = N(s, node)->b; st; st = N(s, st)->next) check_stmt(s, st);
	if (s->d->errors == errors) check_stage_claims(s, &m->stage[id]);
}

/* fusion := 'fusion' IDENT '(' params ')' '->' '(' params ')' '{' items '}' */
static void check_fusion(Sema *s, int node)
{
	Module *m = s->m;
	for (int i = 0; i < m->nfusion; i++)
		if (ast_name_eq(s->ast, node, m->fusion[i].name)) {
			diag_error(s->d, N(s, node)->off, "redefinition of fusion '%.*s'", NAMEF(s, node));
			return;
		}
	name_fits(s, node, "fusion", MAX_FUSION_NAME, ", so that its kernels' names (NAME_f0 ...) are within the runtime's 63");
	s->fusion = ir_add_fusion(m);
	Fusion *f = F(s);
	f->name = dup_name(s, node);
	f->off = N(s, node)->off;
	f->first_tensor = m->ntensor;
	f->first_stage = m->nstage;
	s->nconst = s->nglobal;
	s->nfailed = 0;
	s->fusion_items = N(s, node)->c;
	for (int p = N(s, node)->a; p; p = N(s, p)->next) declare_param(s, p, TK_INPUT);
	if (!N(s, node)->b) diag_error(s->d, N(s, node)->off, "fusion '%.*s' has no outputs", NAMEF(s, node));
	for (int p = N(s, node)->b; p; p = N(s, p)->next) declare_param(s, p, TK_OUTPUT);
	for (int it = N(s, node)->c; it; it = N(s, it)->next) {
		switch (N(s, it)->kind) {
		case AST_CONST: declare_const(s, it); break;
		case AST_TEMP: {
			/* a temp's sizes must be the parameters' own: nothing else
			   binds a size at launch */
			int before = F(s)->nsym;
			declare_tensor(s, it, TK_TEMP);
			for (int d = N(s, it)->b; d; d = N(s, d)->next) {
				int k;
				if (N(s, d)->flag || const_find(s, d)) continue;
				for (k = 0; k < before; k++)
					if (ast_name_eq(s->ast, d, F(s)->sym[k])) break;
				if (k == before)
					diag_error(s->d, N(s, d)->off, "size '%.*s' of temp '%.*s' is no parameter's size", NAMEF(s, d), NAMEF(s, it));
			}
			if (tensor_find(s, it) >= 0) m->tensor[tensor_find(s, it)].zero_init = 1;
			break;
		}
		case AST_STAGE: check_stage(s, it); break;
		default: break;
		}
	}
	f = F(s);
	for (int i = f->first_tensor; i < f->first_tensor + f->ntensor; i++) {
		Tensor *t = &m->tensor[i];
		if (t->kind == TK_OUTPUT && t->def_stage < 0)
			diag_error(s->d, t->off, "output '%s' is never written", t->name);
	}
	if (!f->nstage) diag_error(s->d, f->off, "fusion '%s' has no stages", f->name);
	s->fusion = -1;
}

int sema_check(const Ast *ast, int root, Diag *d, Module *m)
{
	Sema s = {.ast = ast, .d = d, .m = m, .fusion = -1};
	int before = d->errors;
	int nfusion = 0;
	for (int it = root; it; it = ast->n[it].next)
		if (ast->n[it].kind == AST_CONST) declare_const(&s, it), s.nglobal = s.nconst;
	for (int it = root; it; it = ast->n[it].next)
		if (ast->n[it].kind == AST_FUSION) check_fusion(&s, it), nfusion++;
	if (!nfusion && d->errors == before) diag_error(d, 0, "no fusion in this file");
	free(s.def_failed);
	return d->errors - before;
}
