/* The planner: groups statements into kernels (try_join says why not),
 * then fills in the rest of the schedule: resets, the storage of every
 * tensor, launch parameters, each statement's step and names. Each pass
 * has a file of its own (plan_impl.h lists them). */
#include "plan/plan_impl.h"

#include <stdlib.h>
#include <string.h>

#include "core/die.h"
#include "core/namer.h"

/* A rank-0 sum, max or min over the space: folded across the whole grid.
 * (A rank-0 kmin is left to one thread: it needs no grid-wide merge.) */
int plan_is_grid_reduction(const Stmt *s)
{
	return s->nfree == 0 && s->nindex > 0 && s->red >= RED_SUM && s->red <= RED_MIN;
}

int plan_is_scalar_map(const Stmt *s) { return s->nindex == 0 && s->red == RED_NONE; }

int plan_reads_tensor(const Module *m, int e, int t)
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

/* A kernel is a contiguous run of statements; those inlined between its
 * members lie inside the run, marked STEP_INLINE, and every template skips
 * them (their values are computed where they are read). */
static void build(const Module *m, int fusion, int fused, Target target, Schedule *p);

void plan_build(const Module *m, int fusion, int fused, Target target, Schedule *p)
{
	build(m, fusion, fused, target, p);
	for (int i = 0; i < p->nk; i++)
		for (int sid = p->k[i].first_stmt; sid < p->k[i].first_stmt + p->k[i].nstmt; sid++)
			if (p->stmt_kernel[sid - p->first_stmt] != i && p->op[sid - p->first_stmt] != STEP_INLINE)
				die("plan: statement %d lies in kernel %s's range but belongs to kernel %d", sid, p->k[i].name, p->stmt_kernel[sid - p->first_stmt]);
}

static void build(const Module *m, int fusion, int fused, Target target, Schedule *p)
{
	memset(p, 0, sizeof *p);
	p->target = target, p->fused = fused, p->variant = fused ? 'f' : 'u', p->fusion = fusion;
	const Fusion *f = &m->fusion[fusion];
	int first = f->nstage ? m->stage[f->first_stage].first_stmt : 0;
	int last = f->nstage ? m->stage[f->first_stage + f->nstage - 1].first_stmt + m->stage[f->first_stage + f->nstage - 1].nstmt : first;
	p->first_stmt = first, p->last_stmt = last;
	p->first_tensor = f->first_tensor, p->last_tensor = f->first_tensor + f->ntensor;
	/* the fusion's own statements and tensors (schedule.h): not the file's */
	size_t ns = (size_t)(last - first) + 1, nt = (size_t)f->ntensor + 1;
	p->why = xcalloc(ns, sizeof *p->why);
	p->stmt_kernel = xcalloc(ns, sizeof *p->stmt_kernel);
	p->op = xcalloc(ns, sizeof *p->op);
	p->merge = xcalloc(ns, sizeof *p->merge);
	p->remat = xcalloc(ns, 1);
	p->storage = xcalloc(nt, sizeof *p->storage);
	p->writer = xcalloc(nt, sizeof *p->writer);
	p->reset_by = xcalloc(nt, sizeof *p->reset_by);
	unsigned char *stored = xcalloc(nt, 1); /* t at [t - first_tensor], as p's */
	plan_group(m, p, fusion, fused);
	plan_resets(m, p);
	plan_stored(m, p, stored);
	plan_launch(m, p, stored);
	assign_steps(m, p, stored);
	plan_storage(m, p, stored);
	free(stored);

	/* Names: one namer for the kernels of the .cu (both variants share
	   it; their letters keep them apart). */
	Namer nm;
	namer_init(&nm);
	for (int i = 0; i < p->nk; i++) p->k[i].name = xstrdup(namer_make(&nm, "%s_%c%d", f->name, p->variant, i));
	namer_free(&nm);
}

void sched_free(Schedule *p)
{
	for (int i = 0; i < p->nk; i++) free(p->k[i].name);
	free(p->k), free(p->why), free(p->stmt_kernel), free(p->op), free(p->merge), free(p->remat);
	free(p->storage), free(p->writer), free(p->reset_by), free(p->prod_at), free(p->prod);
	memset(p, 0, sizeof *p);
}
