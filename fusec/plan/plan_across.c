/* Which tensors each kernel reads at rows other than its point's: a
 * runtime sharding a kernel over its first space dimension holds only each
 * rank's rows of a tensor split along it, so it must refuse a kernel that
 * reads such a tensor across rows (a reduction over the size's own index,
 * a shifted or gathered read: runtime/shard.c). The manifest lists them on
 * the kernel's line (across=). */
#include <stdlib.h>

#include "core/die.h"
#include "plan/plan_impl.h"

/* Marks in across[] the tensors whose first dimension is the plain size sym
 * that expression e of statement s reads at a first subscript other than the
 * statement's first index (x(j), x(i + 1), x(g(i)) at point i). */
static void scan(const Module *m, const Schedule *p, const Stmt *s, int e, int sym, unsigned char *across)
{
	if (!e) return;
	const Expr *x = &m->expr[e];
	if (x->op == IR_LOAD && x->nargs >= 1) {
		const Tensor *t = &m->tensor[x->tensor];
		const Expr *a0 = &m->expr[x->args[0]];
		if (t->rank >= 1 && t->dim[0].sym == sym && !dim_derived(t->dim[0]) &&
		    !(a0->op == IR_INDEX && a0->index == s->first_index))
			across[x->tensor - p->first_tensor] = 1;
		for (int i = 0; i < x->nargs; i++) scan(m, p, s, x->args[i], sym, across);
	}
	scan(m, p, s, x->a, sym, across), scan(m, p, s, x->b, sym, across), scan(m, p, s, x->c, sym, across);
}

static void scan_stmt(const Module *m, const Schedule *p, const Stmt *s, int sym, unsigned char *across)
{
	scan(m, p, s, s->rhs, sym, across);
	scan(m, p, s, s->mask, sym, across);
	for (int i = 0; i < s->nlhs; i++) scan(m, p, s, s->lhs[i], sym, across);
	for (int i = 0; i < s->nindex; i++) {
		const Index *ix = &m->index[s->first_index + i];
		if (ix->kind == IX_RAGGED) scan(m, p, s, ix->lo, sym, across), scan(m, p, s, ix->hi, sym, across);
	}
}

/* A kernel's statements and the statements inlined into the variant (they
 * are evaluated in whichever kernel reads them). */
static void kernel_across(const Module *m, const Schedule *p, Kernel *k, unsigned char *across)
{
	if (!k->nspace || k->space[0].sym < 0 || dim_derived(k->space[0])) return;
	const int nt = p->last_tensor - p->first_tensor;
	for (int t = 0; t < nt; t++) across[t] = 0;
	for (int sid = p->first_stmt; sid < p->last_stmt; sid++)
		if ((sid >= k->first_stmt && sid < k->first_stmt + k->nstmt) || p->op[sid - p->first_stmt] == STEP_INLINE)
			scan_stmt(m, p, &m->stmt[sid], k->space[0].sym, across);
	for (int t = 0; t < nt; t++) k->nacross += across[t];
	if (!k->nacross) return;
	k->across = xcalloc((size_t)k->nacross, sizeof *k->across);
	for (int t = 0, n = 0; t < nt; t++)
		if (across[t]) k->across[n++] = p->first_tensor + t;
}

void plan_across(const Module *m, Schedule *p)
{
	unsigned char *across = xcalloc((size_t)(p->last_tensor - p->first_tensor) + 1, 1); /* t at [t - first_tensor] */
	for (int i = 0; i < p->nk; i++) kernel_across(m, p, &p->k[i], across);
	free(across);
}
