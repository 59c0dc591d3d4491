/* --explain's rewrite hints (issue 24): a split that the spec can avoid by
 * writing its stages in another order.
 *
 * The planner fuses a contiguous run of statements in the order written, so
 * an independent stage written between a producer and its consumer splits
 * them: `h(r,c) = ...; u(i) = ...; m(r) +=! h(r,c)` is three kernels where
 * `h; m; u` is two (a row kernel then fuses h's map and m's sum). A stage
 * that starts a kernel of its own may move after the stages that follow it
 * when it shares no tensor with any of them (neither reads what the other
 * writes, nor do both write one): every value stays the same. The hint is
 * given only where the planner, run on the fusion with that order, makes
 * fewer kernels: the rewrite is tried, not guessed. What the other split
 * rules name (a whole-grid reduction's barrier, a scatter, a read at
 * another point, a contraction's own kernel) no reordering removes. */
#include "plan/plan_impl.h"

#include <stdlib.h>
#include <string.h>

#include "core/die.h"

/* stages a and b of m share a tensor: one writes what the other reads or
   writes. A scatter or a compacted list (which writes its count too) is
   taken to share everything: such a stage never moves. */
static int stages_share(const Module *m, int a, int b)
{
	const Stage *A = &m->stage[a], *B = &m->stage[b];
	for (int i = A->first_stmt; i < A->first_stmt + A->nstmt; i++) {
		const Stmt *s = &m->stmt[i];
		if (s->pattern == PAT_SCATTER || s->pattern == PAT_COMPACT) return 1;
		for (int j = B->first_stmt; j < B->first_stmt + B->nstmt; j++) {
			const Stmt *u = &m->stmt[j];
			if (u->pattern == PAT_SCATTER || u->pattern == PAT_COMPACT) return 1;
			if (s->out == u->out || plan_stmt_reads(m, u, s->out) || plan_stmt_reads(m, s, u->out)) return 1;
		}
	}
	return 0;
}

/* x: m with fusion f's stage b written right after stage c (b < c), the
   statements laid out again in the new order; arrays malloc'd (hint_free).
   Indices and expressions stay where they are: statements refer to them. */
static void reorder(const Module *m, int f, int b, int c, Module *x)
{
	const Fusion *F = &m->fusion[f];
	*x = *m;
	x->stage = xcalloc((size_t)m->nstage + 1, sizeof *x->stage);
	x->stmt = xcalloc((size_t)m->nstmt + 1, sizeof *x->stmt);
	x->tensor = xcalloc((size_t)m->ntensor + 1, sizeof *x->tensor);
	memcpy(x->stage, m->stage, (size_t)m->nstage * sizeof *x->stage);
	memcpy(x->stmt, m->stmt, (size_t)m->nstmt * sizeof *x->stmt);
	memcpy(x->tensor, m->tensor, (size_t)m->ntensor * sizeof *x->tensor);
	int at = m->stage[F->first_stage].first_stmt;
	for (int j = F->first_stage; j < F->first_stage + F->nstage; j++) {
		/* the j-th stage of the new order */
		const int old = j < b ? j : j < c ? j + 1 : j == c ? b : j;
		const Stage *o = &m->stage[old];
		x->stage[j] = *o;
		x->stage[j].first_stmt = at;
		for (int i = 0; i < o->nstmt; i++) {
			x->stmt[at + i] = m->stmt[o->first_stmt + i];
			x->stmt[at + i].stage = j;
		}
		at += o->nstmt;
	}
	for (int t = F->first_tensor; t < F->first_tensor + F->ntensor; t++) { /* the first stage that writes it, in the new order */
		if (x->tensor[t].def_stage < 0) continue;
		int found = 0;
		for (int j = F->first_stage; j < F->first_stage + F->nstage && !found; j++)
			for (int i = x->stage[j].first_stmt; i < x->stage[j].first_stmt + x->stage[j].nstmt && !found; i++)
				if (x->stmt[i].out == t) x->tensor[t].def_stage = j, found = 1;
	}
}

static void hint_free(Module *x)
{
	free(x->stage), free(x->stmt), free(x->tensor);
}

/* the fused kernels of fusion f with stage b written after stage c */
static int kernels_reordered(const Module *m, int f, int b, int c, Target target)
{
	Module x;
	Schedule s;
	reorder(m, f, b, c, &x);
	plan_build(&x, f, 1, target, &s);
	const int n = s.nk;
	sched_free(&s);
	hint_free(&x);
	return n;
}

/* stage sg starts a kernel of its own, split from the kernel before */
static int starts_split(const Module *m, const Schedule *p, int sg)
{
	const Stage *st = &m->stage[sg];
	for (int s = st->first_stmt; s < st->first_stmt + st->nstmt; s++) {
		if (p->op[s - p->first_stmt] == STEP_INLINE) continue;
		return p->why[s - p->first_stmt] != SPLIT_NONE;
	}
	return 0;
}

void plan_explain_hints(const Module *m, int fusion, const Schedule *p, FILE *out)
{
	const Fusion *f = &m->fusion[fusion];
	const int last = f->first_stage + f->nstage;
	if (!p->fused || p->nk < 2) return;
	for (int b = f->first_stage + 1; b < last; b++) {
		if (!m->stage[b].nstmt || !starts_split(m, p, b)) continue;
		int best = p->nk, to = -1;
		for (int c = b + 1; c < last && !stages_share(m, b, c); c++) {
			if (!m->stage[c].nstmt) continue;
			const int n = kernels_reordered(m, fusion, b, c, p->target);
			if (n < best) best = n, to = c;
		}
		if (to < 0) continue;
		fprintf(out, "  hint: %s -> %s is split, but stage %s shares no tensor with %s%s: written after %s, the fusion "
		             "plans in %d kernel%s, not %d (the same values; planned so, not guessed)\n",
		        m->stage[b - 1].name, m->stage[b].name, m->stage[b].name, to == b + 1 ? "stage " : "the stages up to ",
		        m->stage[to].name, m->stage[to].name, best, best == 1 ? "" : "s", p->nk);
	}
}
