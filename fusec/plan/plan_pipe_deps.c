/* Which phases of a pipeline wait for which (plan/pipeline.h, PipePlan.dep).
 *
 * A grid barrier costs about a microsecond and every block's idle tail; a
 * phase that reads nothing the phases before it (since the last barrier)
 * write, and writes nothing they read or write, needs none: its blocks
 * start as soon as they leave the previous phase (active_inference_once:
 * the KL sum reads q and p only, so it runs beside the gradient's last
 * blocks). The tensors are those each kernel loads from or stores to
 * device memory; a temp kept on chip is no one's. The workspace (the
 * per-block partials and counters of whole-grid folds and of reductions
 * split across blocks) is shared by all of them and decided at launch
 * (PipePlan.tails, splits). */
#include <stdlib.h>

#include "core/die.h"
#include "plan/plan_impl.h"

enum { TOUCH_READ = 1, TOUCH_WRITE = 2 };

/* the tensors kernel k touches in device memory: mark[t'] |= TOUCH_*,
   t' = t - first_tensor; a carried output counts as its input */
static void touch(const Module *m, const PipePlan *pp, int k, unsigned char *mark)
{
	const Schedule *s = &pp->s;
	const int first = s->first_tensor, nt = s->last_tensor - first;
	unsigned char *rd = xcalloc((size_t)nt, 1), *seen = xcalloc((size_t)nt, 1);
	for (int i = s->first_stmt; i < s->last_stmt; i++) {
		if (s->stmt_kernel[i - s->first_stmt] != k) continue;
		const Stmt *st = &m->stmt[i];
		plan_mark_reads(m, st, rd, first);
		if (s->op[i - s->first_stmt] == STEP_ACCUM) rd[st->out - first] = 1; /* read-modify-write */
		if (sched_stored(s, st->out)) mark[st->out - first] |= TOUCH_WRITE;
		const int cnt = m->tensor[st->out].list_count;
		if (cnt >= first && cnt < s->last_tensor) mark[cnt - first] |= TOUCH_WRITE | TOUCH_READ; /* an atomic count */
	}
	for (int i = 0; i < nt; i++) /* zeroed for the next run by this kernel */
		if (s->reset_by[i] == k) mark[i] |= TOUCH_WRITE;
	/* a temp computed where it is read reads what its statement reads */
	for (int again = 1; again;) {
		again = 0;
		for (int i = 0; i < nt; i++) {
			const int w = s->writer[i];
			if (!rd[i] || seen[i] || w < 0 || s->op[w - s->first_stmt] != STEP_INLINE) continue;
			seen[i] = again = 1;
			plan_mark_reads(m, &m->stmt[w], rd, first);
		}
	}
	for (int i = 0; i < nt; i++) {
		const Tensor *x = &m->tensor[first + i];
		if (rd[i] && !(x->kind == TK_INPUT && x->rank == 0)) mark[i] |= TOUCH_READ; /* scalars come by value */
	}
	for (int c = 0; c < pp->pl->ncarry; c++) {
		unsigned char *in = &mark[pp->pl->carry_in[c] - first], *out = &mark[pp->pl->carry_out[c] - first];
		*in = *out = (unsigned char)(*in | *out);
	}
	free(rd), free(seen);
}

/* kernels a and b (their touch marks) must not overlap */
static int conflict(const unsigned char *a, const unsigned char *b, int nt)
{
	for (int i = 0; i < nt; i++)
		if (((a[i] & TOUCH_WRITE) && b[i]) || ((b[i] & TOUCH_WRITE) && a[i])) return 1;
	return 0;
}

void plan_pipe_deps(const Module *m, PipePlan *pp)
{
	const Schedule *s = &pp->s;
	const int nt = s->last_tensor - s->first_tensor, nk = s->nk;
	unsigned char *mark = xcalloc((size_t)nk * (size_t)(nt ? nt : 1), 1);
	for (int k = 0; k < nk; k++) touch(m, pp, k, &mark[(size_t)k * (size_t)nt]);
	pp->tails = pp->splits = 0;
	for (int k = 0; k < nk; k++) {
		pp->dep[k] = 0;
		for (int j = 0; j < nk; j++)
			if (conflict(&mark[(size_t)k * (size_t)nt], &mark[(size_t)j * (size_t)nt], nt)) pp->dep[k] |= 1u << j;
		if (s->k[k].has_tail) pp->tails |= 1u << k;
		if (s->k[k].par.split) pp->splits |= 1u << k;
	}
	free(mark);
}
