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

/* e's reads: with mark, every tensor it reads marked (at [t - first]) and 0;
   without, 1 as soon as it reads tensor t */
static int reads(const Module *m, int e, int t, unsigned char *mark, int first)
{
	if (!e) return 0;
	const Expr *x = &m->expr[e];
	if (x->op == IR_LOAD || x->op == IR_SCALAR) {
		if (mark) mark[x->tensor - first] = 1;
		else if (x->tensor == t) return 1;
	}
	for (int i = 0; i < x->nargs; i++)
		if (reads(m, x->args[i], t, mark, first)) return 1;
	return reads(m, x->a, t, mark, first) || reads(m, x->b, t, mark, first) || reads(m, x->c, t, mark, first);
}

/* the same over a statement: its value, mask, subscripts and for bounds */
static int stmt_reads(const Module *m, const Stmt *s, int t, unsigned char *mark, int first)
{
	if (reads(m, s->rhs, t, mark, first) || reads(m, s->mask, t, mark, first)) return 1;
	for (int i = 0; i < s->nlhs; i++)
		if (reads(m, s->lhs[i], t, mark, first)) return 1;
	for (int i = s->first_index; i < s->first_index + s->nindex; i++)
		if (m->index[i].kind == IX_RAGGED && (reads(m, m->index[i].lo, t, mark, first) || reads(m, m->index[i].hi, t, mark, first)))
			return 1;
	return 0;
}

int plan_stmt_reads(const Module *m, const Stmt *s, int t) { return stmt_reads(m, s, t, NULL, 0); }

void plan_mark_reads(const Module *m, const Stmt *s, unsigned char *mark, int first) { stmt_reads(m, s, -1, mark, first); }

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
