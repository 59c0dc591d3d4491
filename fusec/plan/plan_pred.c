/* The planner's vocabulary: questions about statements and reads that its
 * passes ask (plan_impl.h). Nothing here decides; the passes do. */
#include "plan/plan_impl.h"

/* A rank-0 sum, max or min over the space: folded across the whole grid.
 * (A rank-0 kmin is left to one thread: it needs no grid-wide merge.) */
int plan_is_grid_reduction(const Stmt *s)
{
	return s->nfree == 0 && s->nindex > 0 && s->red >= RED_SUM && s->red <= RED_MIN;
}

int plan_is_scalar_map(const Stmt *s) { return s->nindex == 0 && s->red == RED_NONE; }

static int plan_reads_tensor(const Module *m, int e, int t)
{
	if (!e) return 0;
	const Expr *x = &m->expr[e];
	if ((x->op == IR_LOAD || x->op == IR_SCALAR) && x->tensor == t) return 1;
	for (int i = 0; i < x->nargs; i++)
		if (plan_reads_tensor(m, x->args[i], t)) return 1;
	return plan_reads_tensor(m, x->a, t) || plan_reads_tensor(m, x->b, t) || plan_reads_tensor(m, x->c, t);
}

int plan_stmt_reads(const Module *m, const Stmt *s, int t)
{
	if (plan_reads_tensor(m, s->rhs, t) || plan_reads_tensor(m, s->mask, t)) return 1;
	for (int i = 0; i < s->nlhs; i++)
		if (plan_reads_tensor(m, s->lhs[i], t)) return 1;
	for (int i = s->first_index; i < s->first_index + s->nindex; i++)
		if (m->index[i].kind == IX_RAGGED && (plan_reads_tensor(m, m->index[i].lo, t) || plan_reads_tensor(m, m->index[i].hi, t)))
			return 1;
	return 0;
}

/* Are a load's subscripts exactly the statement's free indices, i.e. the
 * value at the current point? For a tail reduction, its reduced indices. */
int plan_load_at_point(const Module *m, const Stmt *s, const Expr *ld, int nspace)
{
	if (ld->nargs != nspace) return 0;
	for (int i = 0; i < ld->nargs; i++) {
		const Expr *a = &m->expr[ld->args[i]];
		if (a->op != IR_INDEX || a->index != s->first_index + i) return 0;
	}
	return 1;
}

/* e reads a tensor whose last subscript is index last and an earlier one a
   reduced index of s */
static int strided_read(const Module *m, const Stmt *s, int e, int last)
{
	if (!e) return 0;
	const Expr *x = &m->expr[e];
	if (x->op == IR_LOAD && x->nargs >= 2) {
		const Expr *a = &m->expr[x->args[x->nargs - 1]];
		int reduced = 0;
		for (int i = 0; i < x->nargs - 1; i++) {
			const Expr *b = &m->expr[x->args[i]];
			reduced |= b->op == IR_INDEX && b->index >= s->first_index + s->nfree && b->index < s->first_index + s->nindex;
		}
		if (a->op == IR_INDEX && a->index == last && reduced) return 1;
	}
	if (x->op == IR_LOAD)
		for (int i = 0; i < x->nargs; i++)
			if (strided_read(m, s, x->args[i], last)) return 1;
	return strided_read(m, s, x->a, last) || strided_read(m, s, x->b, last) || strided_read(m, s, x->c, last);
}

int plan_outer_reduction(const Module *m, const Stmt *s)
{
	if (s->nfree < 1 || s->nindex == s->nfree || !(s->red == RED_SUM || s->red == RED_MAX || s->red == RED_MIN)) return 0;
	if (s->pattern != PAT_REDUCE && s->pattern != PAT_CONTRACT) return 0;
	for (int i = s->first_index + s->nfree; i < s->first_index + s->nindex; i++)
		if (m->index[i].kind != IX_DENSE) return 0;
	return strided_read(m, s, s->rhs, s->first_index + s->nfree - 1);
}
