/* The checker: declarations (constants, tensors, parameters and their
 * domains), name lookup, and the names' errors: did-you-mean, a temp read in
 * its own definition, the knock-on errors of names whose definition failed. */
#include "front/sema_impl.h"
#include "runtime/fuserun.h" /* FZ_MAX_DIM */

/* The built-ins, from ir.h's one list; a built-in's name is its opcode's. */
static const struct Builtin builtins[] = {
#define X(o, n, f64, f32) {IR_##o, n},
	IR_BUILTINS(X)
#undef X
};

char *sema_dup_name(Sema *s, int node)
{
	char *p = xcalloc(N(s, node)->len + 1, 1);
	memcpy(p, TXT(s, node), N(s, node)->len);
	p[N(s, node)->len] = 0;
	return p;
}

const struct Builtin *sema_builtin_find(Sema *s, int node)
{
	for (unsigned i = 0; i < sizeof builtins / sizeof builtins[0]; i++)
		if (ast_name_eq(s->ast, node, ir_op_name[builtins[i].op])) return &builtins[i];
	return NULL;
}


static unsigned name_hash(const char *p, unsigned len)
{
	unsigned h = 2166136261u; /* FNV-1a */
	for (unsigned i = 0; i < len; i++) h = (h ^ (unsigned char)p[i]) * 16777619u;
	return h;
}

int sema_namemap_get(const NameMap *m, const char *p, unsigned len)
{
	if (!m->cap) return -1;
	for (unsigned i = name_hash(p, len) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		const struct NameEnt *e = &m->e[i];
		if (!e->p) return -1;
		if (e->len == len && !memcmp(e->p, p, len)) return e->id;
	}
}

/* Enters a name, unless it is there already: the first id stays. */
void sema_namemap_put(NameMap *m, const char *p, unsigned len, int id)
{
	if (sema_namemap_get(m, p, len) >= 0) return;
	if (2 * (m->n + 1) > m->cap) { /* at most half full */
		NameMap g = {.cap = m->cap ? 2 * m->cap : 64};
		g.e = xcalloc(g.cap, sizeof *g.e);
		for (unsigned i = 0; i < m->cap; i++)
			if (m->e[i].p) sema_namemap_put(&g, m->e[i].p, m->e[i].len, m->e[i].id);
		free(m->e);
		*m = g;
	}
	unsigned i = name_hash(p, len) & (m->cap - 1);
	while (m->e[i].p) i = (i + 1) & (m->cap - 1);
	m->e[i] = (struct NameEnt){p, len, id};
	m->n++;
}

void sema_namemap_free(NameMap *m)
{
	free(m->e);
	*m = (NameMap){0};
}

int sema_tensor_find(Sema *s, int node)
{
	return sema_namemap_get(&s->tensors, TXT(s, node), N(s, node)->len);
}

const Const *sema_const_find(Sema *s, int node)
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
		diag_error(s->d, N(s, node)->off, "unknown element type '%.*s' (expected f64, f32, bf16, f16, f8e4m3, f8e5m2, i32 or i64)", NAMEF(s, node));
	return t;
}


void sema_dim_name(Sema *s, Dim d, char *buf, size_t n)
{
	FILE *f = fmemopen(buf, n, "w");
	if (!f) die("out of memory");
	dim_write(s->m, F(s), d, f);
	fclose(f);
}

void sema_name_fits(Sema *s, int node, const char *what, int max, const char *why)
{
	if (N(s, node)->len <= (unsigned)max) return;
	diag_error(s->d, N(s, node)->off, "the name of %s '%.24s...' is %u characters long: at most %d%s", what, TXT(s, node),
	           N(s, node)->len, max, why);
}

/* One more tensor of this fusion, within the runtime's count. */
static void sema_count_tensor(Sema *s, int node)
{
	if (++F(s)->ntensor == FZ_MAX_TENSORS + 1)
		diag_error(s->d, N(s, node)->off, "too many tensors in one fusion (the runtime takes at most %d)", FZ_MAX_TENSORS);
	sema_name_fits(s, node, "tensor", FZ_MAX_NAME, "");
}

static int sym_intern(Sema *s, int node)
{
	Fusion *f = F(s);
	int i = sema_sym_find(s, node);
	if (i >= 0) return i;
	sema_name_fits(s, node, "size", FZ_MAX_NAME, "");
	if (f->nsym == FZ_MAX_SIZES)
		diag_error(s->d, N(s, node)->off, "too many sizes in one fusion (the runtime takes at most %d)", FZ_MAX_SIZES);
	if (!(f->nsym & (f->nsym - 1))) /* 0, 1, 2, 4, ...: room for as many again */
		f->sym = xrealloc(f->sym, f->nsym ? 2ul * (unsigned long)f->nsym : 1, sizeof *f->sym);
	f->sym[f->nsym] = sema_dup_name(s, node);
	sema_namemap_put(&s->syms, f->sym[f->nsym], N(s, node)->len, f->nsym);
	return f->nsym++;
}

/* const NAME = NUMBER */
void sema_declare_const(Sema *s, int node)
{
	if (sema_const_find(s, node)) {
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

/* The product of the sizes among d[0..n) that are numbers (symbols are
 * bound at launch, by the caller). */
double sema_literal_product(const Dim *d, int n)
{
	double p = 1;
	for (int i = 0; i < n; i++)
		if (d[i].sym < 0 && !dim_derived(d[i])) p *= (double)d[i].value;
	return p;
}

/* A tensor whose declared shape had an error keeps a stand-in shape (its
 * first 4 dimensions, 1 for a bad one) so that it stays declared; its uses
 * are not then checked against that shape, which the spec never gave. */
void sema_tflag_set(TensorFlags *f, int t)
{
	if (t >= f->n) {
		int *p = xrealloc(f->v, (unsigned long)(t + 1), sizeof *p);
		for (int i = f->n; i <= t; i++) p[i] = 0;
		f->v = p, f->n = t + 1;
	}
	f->v[t] = 1;
}
int sema_tflag_get(const TensorFlags *f, int t) { return t >= 0 && t < f->n && f->v[t]; }
int sema_shape_failed(const Sema *s, int t) { return sema_tflag_get(&s->shape_failed, t); }

/* A tensor named by node, in the IR and in the fusion's name map: what a
 * declaration and a new intermediate share. */
int sema_tensor_new(Sema *s, int node, TensorKind kind, ElemType t)
{
	int id = ir_add_tensor(s->m);
	sema_count_tensor(s, node);
	Tensor *x = &s->m->tensor[id];
	x->name = sema_dup_name(s, node);
	sema_namemap_put(&s->tensors, x->name, N(s, node)->len, id);
	x->kind = kind, x->type = t, x->off = N(s, node)->off;
	return id;
}

/* param := IDENT ':' TYPE [ '[' dim {',' dim} ']' ] */
void sema_declare_tensor(Sema *s, int node, TensorKind kind)
{
	if (sema_tensor_find(s, node) >= 0) {
		diag_error(s->d, N(s, node)->off, "redefinition of '%.*s'", NAMEF(s, node));
		return;
	}
	/* a tensor named like a built-in function hides it in this fusion, as
	   in C: every RoPE names its tables cos and sin (bench/corpus/FINDINGS_B.md) */
	if (sema_const_find(s, node)) {
		diag_error(s->d, N(s, node)->off, "'%.*s' is already a constant", NAMEF(s, node));
		sema_mark_failed(s, node); /* not declared: its reads and writes are not errors again */
		return;
	}
	int t = type_lookup(s, N(s, node)->a);
	int id = sema_tensor_new(s, node, kind, t < 0 ? ET_F32 : (ElemType)t);
	Tensor *x = &s->m->tensor[id];
	if (kind != TK_TEMP) x->param = F(s)->nparam++;
	if (elem_is_fp8(t) && kind == TK_TEMP)
		diag_error(s->d, N(s, N(s, node)->a)->off, "'%.*s': %s is a type of inputs (tensor-core operands) and outputs (stored "
		           "saturated); temps are f32, bf16 or f16", NAMEF(s, node), elem_info[t].name);
	else if (elem_is_fp8(t) && kind == TK_INPUT && (!N(s, node)->b || !N(s, N(s, node)->b)->next))
		diag_error(s->d, N(s, node)->off, "'%.*s': an %s input is a matrix (rank 2, or 3 batched), read by tensor cores; scales "
		           "are f32 scalars", NAMEF(s, node), elem_info[t].name);
	for (int d = N(s, node)->b; d; d = N(s, d)->next) {
		if (x->rank == MAX_RANK) {
			diag_error(s->d, N(s, d)->off, "too many dimensions (at most %d)", MAX_RANK);
			sema_tflag_set(&s->shape_failed, id);
			break;
		}
		Dim *dm = &x->dim[x->rank++];
		if (N(s, d)->flag) {
			double v = N(s, d)->num;
			if (v < 1 || v != floor(v) || v > 9e15) {
				diag_error(s->d, N(s, d)->off, "a dimension must be a positive integer");
				sema_tflag_set(&s->shape_failed, id);
			} else if (v > (double)FZ_MAX_DIM) {
				diag_error(s->d, N(s, d)->off, "dimension %.0f is above 2^40 (%lld), the largest the runtime takes", v, FZ_MAX_DIM);
				sema_tflag_set(&s->shape_failed, id);
			}
			dm->sym = -1, dm->value = v >= 1 && v <= 9e15 ? (int64_t)v : 1;
		} else {
			const Const *c = sema_const_find(s, d);
			if (c) {
				if (!c->is_int || c->value < 1) {
					diag_error(s->d, N(s, d)->off, "a dimension must be a positive integer");
					sema_tflag_set(&s->shape_failed, id);
				} else if (c->value > (double)FZ_MAX_DIM) {
					diag_error(s->d, N(s, d)->off, "dimension %.0f is above 2^40 (%lld), the largest the runtime takes", (double)c->value, FZ_MAX_DIM);
					sema_tflag_set(&s->shape_failed, id);
				}
				dm->sym = -1, dm->value = c->is_int && c->value >= 1 ? (int64_t)c->value : 1;
			} else {
				dm->sym = sym_intern(s, d);
			}
		}
	}
	double bytes = elem_info[x->type].bytes * sema_literal_product(x->dim, x->rank);
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

void sema_guess_name(Guess *g, const char *want, size_t wl, const char *cand, size_t cl)
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
const char *sema_did_you_mean(Sema *s, unsigned off, unsigned len, int call, char *buf, size_t n)
{
	const char *w = s->ast->text + off;
	Guess g = {0};
	Fusion *f = F(s);
	for (int i = f->first_tensor; i < f->first_tensor + f->ntensor; i++)
		sema_guess_name(&g, w, len, s->m->tensor[i].name, strlen(s->m->tensor[i].name));
	for (int i = 0; i < s->nconst && !call; i++) sema_guess_name(&g, w, len, s->ast->text + s->consts[i].off, s->consts[i].len);
	for (int i = 0; i < f->nsym && !call; i++) sema_guess_name(&g, w, len, f->sym[i], strlen(f->sym[i]));
	for (int i = 0; i < s->nslot && !call; i++)
		if (s->slot[i].has_range && !s->slot[i].dropped && s->slot[i].off != off)
			sema_guess_name(&g, w, len, s->ast->text + s->slot[i].off, s->slot[i].len);
	for (unsigned i = 0; i < sizeof builtins / sizeof builtins[0] && call; i++)
		sema_guess_name(&g, w, len, ir_op_name[builtins[i].op], strlen(ir_op_name[builtins[i].op]));
	if (!g.best || g.ties) return "";
	snprintf(buf, n, "; did you mean '%.*s'?", (int)g.len, g.best);
	return buf;
}

/* A read of the name the statement being checked defines: a temp is
 * defined once, so it cannot be read there (t(i) = t(i) + x(i)). */
int sema_reads_own_definition(Sema *s, unsigned off, unsigned len)
{
	if (!s->cur_lhs || !name_is(s, s->cur_lhs, off, len)) return 0;
	diag_error(s->d, off, "'%.*s' is read in its own definition: a temp is defined once, by one statement; "
	           "give the new value another name", (int)len, s->ast->text + off);
	return 1;
}

void sema_undefined_name(Sema *s, unsigned off, unsigned len)
{
	char buf[96];
	if (sema_reads_own_definition(s, off, len)) return;
	diag_error(s->d, off, "use of undefined name '%.*s'%s", (int)len, s->ast->text + off, sema_did_you_mean(s, off, len, 0, buf, sizeof buf));
}

/* A name whose defining statement had an error: reading it later is not
 * another error. */
int sema_is_failed(Sema *s, int node)
{
	for (int i = 0; i < s->nfailed; i++)
		if (s->failed[i].len == N(s, node)->len && !memcmp(s->ast->text + s->failed[i].off, TXT(s, node), N(s, node)->len))
			return 1;
	return 0;
}

void sema_mark_failed(Sema *s, int node)
{
	if (sema_is_failed(s, node) || s->nfailed == (int)(sizeof s->failed / sizeof s->failed[0])) return;
	s->failed[s->nfailed].off = N(s, node)->off, s->failed[s->nfailed++].len = N(s, node)->len;
}

/* The values an input of type t can hold, as fuserun draws them
 * (runtime/tool/tensors.c, rt_check_domains): the finite values of a float
 * type; an integer type's, within -2^53..2^53 (inputs pass through doubles). */
static void type_range(ElemType t, double *lo, double *hi)
{
	switch (t) {
	case ET_F32: *hi = 3.4028234663852886e38; break;
	case ET_BF16: *hi = 3.3895313892515355e38; break;
	case ET_F16: *hi = 65504.0; break;
	case ET_F8E4M3: *hi = 448.0; break;
	case ET_F8E5M2: *hi = 57344.0; break;
	case ET_I32: *lo = -2147483648.0, *hi = 2147483647.0; return;
	case ET_I64: *lo = -9007199254740992.0, *hi = 9007199254740992.0; return;
	default: *hi = INFINITY; break;
	}
	*lo = -*hi;
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
	double tlo, thi;
	type_range(x->type, &tlo, &thi);
	if (lo < tlo || hi > thi) {
		const int p = elem_info[x->type].is_float ? 9 : 17; /* integers in full */
		diag_error(s->d, N(s, dn)->off, "the domain of '%s' (%.*g .. %.*g) is outside what %s holds (%.*g .. %.*g%s)", x->name, p, lo, p, hi,
		           elem_info[x->type].name, p, tlo, p, thi, x->type == ET_I64 ? ", the integers a double holds exactly" : "");
		return;
	}
	x->has_domain = 1, x->dom_lo = lo, x->dom_hi = hi, x->dom_open = open;
}

/* param := IDENT ':' TYPE [dims] ['in' interval] | IDENT (an output only:
 * the input of that name, updated in place) */
void sema_declare_param(Sema *s, int node, TensorKind kind)
{
	if (N(s, node)->a) {
		int before = s->m->ntensor;
		sema_declare_tensor(s, node, kind);
		if (N(s, node)->c && s->m->ntensor != before) check_domain(s, node, &s->m->tensor[s->m->ntensor - 1]);
		return;
	}
	int t = sema_tensor_find(s, node); /* the grammar allows this for outputs only */
	if (t < 0 || (s->m->tensor[t].kind != TK_INPUT && !s->m->tensor[t].inplace)) {
		char buf[96];
		diag_error(s->d, N(s, node)->off, "output '%.*s' has no type: an output named alone must be an input of this fusion, updated in place%s",
		           NAMEF(s, node), t < 0 ? sema_did_you_mean(s, N(s, node)->off, N(s, node)->len, 0, buf, sizeof buf) : "");
	} else if (s->m->tensor[t].inplace) {
		diag_error(s->d, N(s, node)->off, "redefinition of '%.*s'", NAMEF(s, node));
	} else {
		s->m->tensor[t].kind = TK_OUTPUT, s->m->tensor[t].inplace = 1;
	}
}
