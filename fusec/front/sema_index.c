/* The checker: the indices of the statement being checked (slots), the
 * ranges the tensors they subscript give them, and affine subscripts
 * (a*i + b, i*S + c): their ranges, proved inside their dimension or refused. */
#include "front/sema_impl.h"

/* --- statements ------------------------------------------------------ */

int sema_slot_find(Sema *s, unsigned off, unsigned len)
{
	for (int i = 0; i < s->nslot; i++)
		if (s->slot[i].len == len && !memcmp(s->ast->text + s->slot[i].off, s->ast->text + off, len))
			return i;
	return -1;
}

int sema_slot_get(Sema *s, int node)
{
	int i = sema_slot_find(s, N(s, node)->off, N(s, node)->len);
	if (i >= 0) return i;
	if (s->nslot == MAX_IDX) {
		if (!s->too_many_idx)
			diag_error(s->d, N(s, node)->off, "too many indices in one statement (at most %d)", MAX_IDX);
		s->too_many_idx = 1;
		return -1;
	}
	s->slot[s->nslot] = (Slot){.off = N(s, node)->off, .len = N(s, node)->len};
	return s->nslot++;
}

/* The size symbol a name spells, or -1. */
int sema_sym_find(Sema *s, int node)
{
	return sema_namemap_get(&s->syms, TXT(s, node), N(s, node)->len);
}

/* True for a bare identifier that names no tensor, constant, size or
 * function: that is an index. */
int sema_is_index_name(Sema *s, int node)
{
	const Node *x = N(s, node);
	return x->kind == AST_REF && !x->flag && sema_tensor_find(s, node) < 0 && !sema_const_find(s, node) && sema_sym_find(s, node) < 0 &&
	       !sema_is_failed(s, node);
}

void sema_give_range(Sema *s, int node, int slot, Dim d)
{
	Slot *sl = &s->slot[slot];
	if (sl->ragged) return;
	if (!sl->has_range) {
		sl->has_range = 1, sl->range = d, sl->range_off = N(s, node)->off;
		return;
	}
	if (!dim_equal(sl->range, d)) {
		char a[64], b[64];
		sema_dim_name(s, sl->range, a, sizeof a);
		sema_dim_name(s, d, b, sizeof b);
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
		const Const *c = sema_const_find(s, n);
		if (c && c->is_int) return *v = (int64_t)c->value, 1;
	}
	return 0;
}

static int index_slot(Sema *s, int n)
{
	const Node *x = N(s, n);
	if (x->kind != AST_REF || x->flag || !sema_is_index_name(s, n)) return -1;
	return sema_slot_find(s, x->off, x->len);
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
		if (N(s, k)->kind == AST_REF && !N(s, k)->flag && (*ssym = sema_sym_find(s, k)) >= 0) return 1;
	}
	return 0;
}

/* Is subscript n one of: a*i + b, a*i - b, b + a*i (a, b integer
 * constants), or i*S + c (S a size, c an index)? */
int sema_affine_subscript(Sema *s, int n, struct Aff *f)
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

/* Is subscript n the same at every point: numbers, constants and sizes
 * only (x(5), x(N - 1), x(OFF))? No index proves it in range, so it must
 * be proved by itself (fixed_proved): the GPU does not check subscripts. */
int sema_fixed_subscript(Sema *s, int n)
{
	const Node *x = N(s, n);
	switch (x->kind) {
	case AST_NUM: return x->flag && x->num <= 9e15;
	case AST_REF: return !x->flag && !x->a && (int_value(s, n, &(int64_t){0}) || sema_sym_find(s, n) >= 0);
	case AST_UNARY: return x->op != OP_NOT && sema_fixed_subscript(s, x->a);
	case AST_BINARY: return (x->op == OP_ADD || x->op == OP_SUB || x->op == OP_MUL || x->op == OP_DIV || x->op == OP_MOD) &&
		                sema_fixed_subscript(s, x->a) && sema_fixed_subscript(s, x->b);
	default: return 0;
	}
}

/* A fixed subscript within dimension d: a constant below a constant d, 0
 * (a dimension is at least 1), or D - 1 of its own size D. */
static int fixed_proved(Sema *s, int n, Dim d)
{
	const Node *x = N(s, n);
	int64_t c;
	if (int_value(s, n, &c)) return c == 0 || (d.sym < 0 && !dim_derived(d) && c >= 0 && c < d.value);
	return x->kind == AST_BINARY && x->op == OP_SUB && int_value(s, x->b, &c) && c == 1 && d.sym >= 0 &&
	       !dim_derived(d) && N(s, x->a)->kind == AST_REF && sema_sym_find(s, x->a) == d.sym;
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

/* Does expression e read the size sym or the index slot (either -1)? */
static int reads_name(Sema *s, int e, int sym, int slot)
{
	if (!e) return 0;
	const Node *x = N(s, e);
	if (x->kind == AST_REF && !x->flag)
		return (sym >= 0 && sema_sym_find(s, e) == sym) || (slot >= 0 && index_slot(s, e) == slot);
	if (x->kind == AST_REF) {
		for (int a = x->a; a; a = N(s, a)->next)
			if (reads_name(s, a, sym, slot)) return 1;
		return 0;
	}
	return (x->kind == AST_UNARY || x->kind == AST_BINARY) && (reads_name(s, x->a, sym, slot) || reads_name(s, x->b, sym, slot));
}

/* Does the size or index that bare name n (in subscript n's tree) stands
   for appear in where? */
static int where_reads_any(Sema *s, int where, int n)
{
	const Node *x = N(s, n);
	if (x->kind == AST_REF && !x->flag) {
		const int sym = sema_sym_find(s, n), slot = sym < 0 ? index_slot(s, n) : -1;
		return (sym >= 0 || slot >= 0) && reads_name(s, where, sym, slot);
	}
	return (x->kind == AST_UNARY || x->kind == AST_BINARY) && (where_reads_any(s, where, x->a) || where_reads_any(s, where, x->b));
}

/* May the statement's 'where' guard subscript f? Only when it reads what
 * f depends on: an index or size of the subscript, or a size of the
 * dimension. A clause reading none of them is the same for every value
 * the subscript takes, so it guards nothing (issue 27, fuzz seed 65777:
 * cos(INT) on f32[2] under a 'where' that read neither INT nor an index:
 * the reference refused every size, the kernel read outside cos). */
static int where_guards(Sema *s, int where, const struct Aff *f)
{
	if (!where) return 0;
	const Dim d = f->dim;
	if ((d.sym >= 0 && reads_name(s, where, d.sym, -1)) || (d.dsym > 0 && reads_name(s, where, d.dsym - 1, -1)))
		return 1;
	return where_reads_any(s, where, f->node);
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
 * still not proved is an error, unless the 'where' may guard it (reads an
 * index or size of it: where_guards). */
int sema_affine_ranges(Sema *s, int where, int target_known)
{
	int bad = 0;
	for (int i = 0; i < s->naff; i++) {
		struct Aff *f = &s->aff[i];
		if (f->slot < 0) continue; /* fixed: no index to give a range */
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
	for (int i = 0; i < s->naff; i++) {
		const struct Aff *f = &s->aff[i];
		if (where_guards(s, where, f)) continue;
		if (f->slot < 0) {
			if (fixed_proved(s, f->node, f->dim)) continue;
			char d[64];
			sema_dim_name(s, f->dim, d, sizeof d);
			diag_error(s->d, N(s, leftmost(s, f->node))->off,
			           "subscript %d of '%s' may fall outside its dimension %s: it is the same at every point and "
			           "nothing proves it below %s (guard the statement with 'where')", f->pos + 1, s->m->tensor[f->tensor].name, d, d);
			bad = 1;
			continue;
		}
		const Slot *sl = &s->slot[f->slot], *s2 = f->slot2 >= 0 ? &s->slot[f->slot2] : NULL;
		if (sl->ragged || (s2 && s2->ragged) || !sl->has_range || (s2 && !s2->has_range)) continue;
		if (aff_proved(f, sl->range, s2 ? s2->range : sl->range)) continue;
		char r[64], d[64];
		sema_dim_name(s, sl->range, r, sizeof r), sema_dim_name(s, f->dim, d, sizeof d);
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
