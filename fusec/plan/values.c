/* The values an integer input must take for the fusion to be valid, from
 * every use the checker sees: a subscript x(g(i) + b) of a dimension D
 * bounds g to -b..D-1-b; a ragged range `for s in p(i) .. p(i + 1)` whose s
 * subscripts a dimension D bounds p to 0..D and makes it nondecreasing (a
 * CSR row pointer); a divisor must be nonzero. A statement whose `where`
 * reads the input may guard its subscripts (x(nb(i,j)) where nb(i,j) >= 0):
 * its uses bound nothing. Several uses intersect
 * where their bounds compare (both numbers, or one size plus numbers). The
 * manifest writes it as a `values` line, so that a runtime can draw valid
 * inputs without searching (runtime/README.md). */
#include "plan/plan_impl.h"

/* a bound: size symbol sym (-1: none) plus c */
static void bound_lo(ValueRange *v, int sym, long long c)
{
	if (!v->known) v->lo_sym = sym, v->lo = c;
	else if (sym == v->lo_sym && c > v->lo) v->lo = c;
}
static void bound_hi(ValueRange *v, int sym, long long c)
{
	if (!v->known) v->hi_sym = sym, v->hi = c;
	else if (sym == v->hi_sym && c < v->hi) v->hi = c;
}

/* Is e t's value read at any subscripts, plus a constant *b? */
static int reads_plus(const Module *m, int e, int t, long long *b)
{
	const Expr *x = &m->expr[e];
	if (x->op == IR_LOAD && x->tensor == t) return *b = 0, 1;
	if (x->op != IR_ADD && x->op != IR_SUB) return 0;
	const Expr *l = &m->expr[x->a], *r = &m->expr[x->b];
	if (l->op == IR_LOAD && l->tensor == t && r->op == IR_CONST && !elem_info[r->type].is_float)
		return *b = x->op == IR_ADD ? (long long)r->value : -(long long)r->value, 1;
	if (x->op == IR_ADD && r->op == IR_LOAD && r->tensor == t && l->op == IR_CONST && !elem_info[l->type].is_float)
		return *b = (long long)l->value, 1;
	return 0;
}

/* subscript e of a dimension d reads t(..) + b: t in -b..d-1-b */
static void subscript(const Module *m, ValueRange *v, int e, Dim d, int t)
{
	long long b;
	if (!reads_plus(m, e, t, &b) || dim_derived(d)) return;
	const int sym = d.sym;
	const long long top = (sym >= 0 ? 0 : d.value) - 1 - b;
	bound_lo(v, -1, -b), bound_hi(v, sym, top);
	v->known = 1;
}

/* the dimension index ix subscripts in e (its first use), or none */
static int index_dim(const Module *m, int e, int ix, Dim *d)
{
	if (!e) return 0;
	const Expr *x = &m->expr[e];
	if (x->op == IR_LOAD)
		for (int i = 0; i < x->nargs; i++) {
			const Expr *a = &m->expr[x->args[i]];
			if (a->op == IR_INDEX && a->index == ix) return *d = m->tensor[x->tensor].dim[i], 1;
			if (index_dim(m, x->args[i], ix, d)) return 1;
		}
	return index_dim(m, x->a, ix, d) || index_dim(m, x->b, ix, d) || index_dim(m, x->c, ix, d);
}

/* every subscript and divisor in e */
static void walk(const Module *m, ValueRange *v, int e, int t)
{
	if (!e) return;
	const Expr *x = &m->expr[e];
	if (x->op == IR_LOAD)
		for (int i = 0; i < x->nargs; i++) subscript(m, v, x->args[i], m->tensor[x->tensor].dim[i], t), walk(m, v, x->args[i], t);
	long long b;
	if ((x->op == IR_DIV || x->op == IR_MOD) && !elem_info[x->type].is_float && reads_plus(m, x->b, t, &b) && b == 0) v->nonzero = 1;
	walk(m, v, x->a, t), walk(m, v, x->b, t), walk(m, v, x->c, t);
}

/* a ragged index of s bounded by t: t in 0..D, nondecreasing, D the
   dimension the index subscripts */
static void ragged(const Module *m, ValueRange *v, const Stmt *s, const Index *ix, int id, int t)
{
	long long b;
	Dim d;
	if (!reads_plus(m, ix->lo, t, &b) && !reads_plus(m, ix->hi, t, &b)) return;
	int found = index_dim(m, s->rhs, id, &d) || index_dim(m, s->mask, id, &d);
	for (int i = 0; i < s->nlhs && !found; i++) found = index_dim(m, s->lhs[i], id, &d);
	if (!found || dim_derived(d)) return;
	bound_lo(v, -1, 0), bound_hi(v, d.sym, d.sym >= 0 ? 0 : d.value);
	v->known = 1, v->nondecreasing = 1;
}

void plan_input_values(const Module *m, int fusion, int t, ValueRange *v)
{
	const Fusion *f = &m->fusion[fusion];
	*v = (ValueRange){.lo_sym = -1, .hi_sym = -1};
	for (int sg = f->first_stage; sg < f->first_stage + f->nstage; sg++)
		for (int sid = m->stage[sg].first_stmt; sid < m->stage[sg].first_stmt + m->stage[sg].nstmt; sid++) {
			const Stmt *s = &m->stmt[sid];
			if (ir_expr_reads(m, s->mask, t)) continue; /* a guard */
			walk(m, v, s->rhs, t), walk(m, v, s->mask, t);
			for (int i = 0; i < s->nlhs; i++)
				subscript(m, v, s->lhs[i], m->tensor[s->out].dim[i], t), walk(m, v, s->lhs[i], t);
			for (int i = s->first_index; i < s->first_index + s->nindex; i++) {
				const Index *ix = &m->index[i];
				if (ix->kind != IX_RAGGED) continue;
				walk(m, v, ix->lo, t), walk(m, v, ix->hi, t);
				ragged(m, v, s, ix, i, t);
			}
		}
}
