/* The planner: groups statements into kernels (try_join says why not),
 * then fills in the rest of the schedule: resets, the storage of every
 * tensor, launch parameters, each statement's step and names. Each pass
 * has a file of its own (plan_impl.h lists them). */
#include "plan/plan_impl.h"

#include <stdlib.h>
#include <string.h>

#include "core/die.h"
#include "core/namer.h"

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
	plan_steps(m, p, stored);
	plan_shift(m, p);
	plan_online(m, p);
	plan_argmax(m, p);
	plan_stream(m, p);
	plan_split(m, p);
	plan_stage(m, p);
	plan_storage(m, p, stored);
	plan_across(m, p);
	plan_tune(m, p);
	free(stored);

	/* Names: one namer for the kernels of the .cu (both variants share
	   it; their letters keep them apart). */
	Namer nm;
	namer_init(&nm);
	for (int i = 0; i < p->nk; i++) p->k[i].name = xstrdup(namer_make(&nm, "%s_%c%d", f->name, p->variant, i));
	for (int i = 0; i < p->nk; i++) /* an attention kernel's entry points, one a head-size bucket */
		for (int e = 0; e < p->k[i].at.nent; e++) p->k[i].at.entry[e] = xstrdup(namer_make(&nm, "%s_d%d", p->k[i].name, p->k[i].at.db[e]));
	namer_free(&nm);
}

void sched_free(Schedule *p)
{
	for (int i = 0; i < p->nk; i++) {
		free(p->k[i].name), free(p->k[i].across), free(p->k[i].vec_tensors), free(p->k[i].vec_stride);
		for (int e = 0; e < p->k[i].at.nent; e++) free(p->k[i].at.entry[e]);
	}
	free(p->k), free(p->why), free(p->stmt_kernel), free(p->op), free(p->merge), free(p->remat);
	free(p->storage), free(p->writer), free(p->reset_by), free(p->prod_at), free(p->prod);
	memset(p, 0, sizeof *p);
}

static void *dup(const void *src, size_t n)
{
	void *d = xcalloc(n + 1, 1);
	if (n) memcpy(d, src, n);
	return d;
}

void sched_copy(const Schedule *s, Schedule *d)
{
	*d = *s;
	size_t ns = (size_t)(s->last_stmt - s->first_stmt) + 1, nt = (size_t)(s->last_tensor - s->first_tensor) + 1;
	d->cap = s->nk;
	d->k = dup(s->k, (size_t)s->nk * sizeof *s->k);
	for (int i = 0; i < s->nk; i++) {
		d->k[i].name = xstrdup(s->k[i].name);
		d->k[i].across = dup(s->k[i].across, (size_t)s->k[i].nacross * sizeof *s->k[i].across);
		d->k[i].vec_tensors = dup(s->k[i].vec_tensors, (size_t)s->k[i].nvec * sizeof *s->k[i].vec_tensors);
		d->k[i].vec_stride = s->k[i].vec_stride ? dup(s->k[i].vec_stride, (size_t)s->k[i].nvec * sizeof *s->k[i].vec_stride) : NULL;
		for (int e = 0; e < s->k[i].at.nent; e++) d->k[i].at.entry[e] = xstrdup(s->k[i].at.entry[e]);
	}
	d->why = dup(s->why, ns * sizeof *s->why);
	d->stmt_kernel = dup(s->stmt_kernel, ns * sizeof *s->stmt_kernel);
	d->op = dup(s->op, ns * sizeof *s->op);
	d->merge = dup(s->merge, ns * sizeof *s->merge);
	d->remat = dup(s->remat, ns);
	d->storage = dup(s->storage, nt * sizeof *s->storage);
	d->writer = dup(s->writer, nt * sizeof *s->writer);
	d->reset_by = dup(s->reset_by, nt * sizeof *s->reset_by);
	d->prod_at = dup(s->prod_at, (nt + 1) * sizeof *s->prod_at);
	d->prod = dup(s->prod, (size_t)s->prod_at[nt - 1] * sizeof *s->prod);
}
