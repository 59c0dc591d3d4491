/* Domains against the dimensions they subscript. A subscript that reads an
 * integer input with a domain directly, x(g(i) + b), reaches every value of
 * g's domain plus b: the caller may pass any of them, at any element. So
 * dimension D of x must hold lo+b .. hi+b. What no size can make true is an
 * error here: a negative lo+b, or a constant D at most hi+b. A D of the
 * sizes must be at least hi+b+1: the fusion records it (Fit), the manifest
 * writes it as a `fits` line that the runtime checks before it launches
 * anything, and the reference refuses the same sizes first; so no kernel
 * reads or writes outside a buffer on inputs the spec calls valid (issue
 * 27: a domain [1, 5] gathered into f32[N], run at N = 5).
 *
 * A statement whose `where` reads the input may guard its subscripts, as
 * plan/values.c takes it for inputs without a domain: its uses bound
 * nothing. Other subscripts of the input (g(i) * 2, min(g(i), 3), through
 * an intermediate) are gathers, the caller's contract (dsl/README.md 6.2). */
#include "front/sema_impl.h"

/* the integer input with a domain that e reads at any subscripts, plus a
   constant *b within +-2^53 (g(i), g(i) + 2, g(i) - 1, 3 + g(i)), *at the
   read; -1 when e is not one */
static int domain_read(const Module *m, int e, int64_t *b, unsigned *at)
{
	const Expr *x = &m->expr[e];
	double k = 0;
	if (x->op == IR_ADD || x->op == IR_SUB) {
		const Expr *l = &m->expr[x->a], *r = &m->expr[x->b];
		if (r->op == IR_CONST && !is_float(r->type)) k = x->op == IR_ADD ? r->value : -r->value, x = l;
		else if (x->op == IR_ADD && l->op == IR_CONST && !is_float(l->type)) k = l->value, x = r;
		else return -1;
	}
	if ((x->op != IR_LOAD && x->op != IR_SCALAR) || x->tensor < 0 || fabs(k) > 9007199254740992.0) return -1;
	const Tensor *t = &m->tensor[x->tensor];
	if (t->kind != TK_INPUT || !t->has_domain || is_float(t->type)) return -1;
	*b = (int64_t)k, *at = x->off;
	return x->tensor;
}

/* dim of the fusion's input t must be at least least: kept once per input
   and dimension, the most any subscript needs */
static void record(Sema *s, int t, Dim dim, int64_t least)
{
	Fusion *f = F(s);
	for (int i = 0; i < f->nfit; i++)
		if (f->fit[i].tensor == t && dim_same(f->fit[i].dim, dim)) {
			if (least > f->fit[i].least) f->fit[i].least = least;
			return;
		}
	f->fit = xrealloc(f->fit, (unsigned long)f->nfit + 1, sizeof *f->fit);
	f->fit[f->nfit++] = (Fit){.tensor = t, .dim = dim, .least = least};
}

/* subscript e, number pos of tensor sub, within dimension d, in statement st */
static void check_use(Sema *s, const Stmt *st, int e, int sub, int pos, Dim d)
{
	const Module *m = s->m;
	int64_t b;
	unsigned at;
	const int t = domain_read(m, e, &b, &at);
	if (t < 0 || ir_expr_reads(m, st->mask, t)) return;
	const Tensor *g = &m->tensor[t];
	const char *x = m->tensor[sub].name;
	/* a domain within +-2^53 (sema_names.c) plus b: within +-2^54, far below
	   the 2^62 a size may reach */
	const long long lo = (long long)g->dom_lo + b, hi = (long long)g->dom_hi + b;
	if (lo < 0) {
		diag_error(s->d, at, "subscript %d of '%s' is negative when '%s' is %lld, which its domain allows (narrow the domain, "
		           "or guard the statement with a 'where' that reads '%s')", pos + 1, x, g->name, (long long)g->dom_lo, g->name);
		return;
	}
	if (d.sym < 0 && !dim_derived(d)) {
		if (hi >= d.value)
			diag_error(s->d, at, "subscript %d of '%s' falls outside its dimension %lld when '%s' is %lld, which its domain allows "
			           "(narrow the domain, or guard the statement with a 'where' that reads '%s')", pos + 1, x,
			           (long long)d.value, g->name, (long long)g->dom_hi, g->name);
		return;
	}
	if (hi >= 1 || dim_derived(d)) record(s, t, d, hi + 1); /* a size is at least 1; a derived dimension may be 0 */
}

/* every subscript in e */
static void walk(Sema *s, const Stmt *st, int e)
{
	if (!e) return;
	const Expr *x = &s->m->expr[e];
	for (int i = 0; x->op == IR_LOAD && x->tensor >= 0 && i < x->nargs && i < s->m->tensor[x->tensor].rank; i++)
		check_use(s, st, x->args[i], x->tensor, i, s->m->tensor[x->tensor].dim[i]), walk(s, st, x->args[i]);
	walk(s, st, x->a), walk(s, st, x->b), walk(s, st, x->c);
}

/* also over a fusion with errors (each reported once, in one run): a
   statement that failed may have no target, a read no tensor */
void sema_domain_fits(Sema *s)
{
	const Module *m = s->m;
	const Fusion *f = F(s);
	for (int sg = f->first_stage; sg < f->first_stage + f->nstage; sg++)
		for (int i = m->stage[sg].first_stmt; i < m->stage[sg].first_stmt + m->stage[sg].nstmt; i++) {
			const Stmt *st = &m->stmt[i];
			walk(s, st, st->rhs), walk(s, st, st->mask);
			for (int k = 0; st->out >= 0 && k < st->nlhs && k < m->tensor[st->out].rank; k++) /* a scatter's target too */
				check_use(s, st, st->lhs[k], st->out, k, m->tensor[st->out].dim[k]), walk(s, st, st->lhs[k]);
			for (int k = st->first_index; k < st->first_index + st->nindex; k++)
				if (m->index[k].kind == IX_RAGGED) walk(s, st, m->index[k].lo), walk(s, st, m->index[k].hi);
		}
}
