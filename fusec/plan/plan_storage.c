/* Where the planner puts every tensor: what starts each run at zero and
 * who zeroes it, what lives in device memory, and each tensor's Storage. */
#include "plan/plan_impl.h"

/* Does expression e read tensor t only at the statement's own point? */
static int reads_only_at_point(const Module *m, const Stmt *s, int e, int t, int nspace)
{
	if (!e) return 1;
	const Expr *x = &m->expr[e];
	if (x->op == IR_LOAD && x->tensor == t && !plan_load_at_point(m, s, x, nspace)) return 0;
	for (int i = 0; i < x->nargs; i++)
		if (!reads_only_at_point(m, s, x->args[i], t, nspace)) return 0;
	return reads_only_at_point(m, s, x->a, t, nspace) && reads_only_at_point(m, s, x->b, t, nspace) &&
	       reads_only_at_point(m, s, x->c, t, nspace);
}

/* Each tensor's writer (the only one, or -1 or -2), and its reset: what
 * must start each run at zero is zeroed by a kernel of the previous
 * run where it can be, not by a memset of its own (one launch fewer):
 * a zero-initialised temp by its last reader, if that reads every
 * element once, at its point; a compaction's count by the first kernel,
 * if the compaction comes later. The scratch starts zeroed. */
void plan_resets(const Module *m, Schedule *p)
{
	const Fusion *f = &m->fusion[p->fusion];
	int first = p->first_stmt, last = p->last_stmt;
	for (int t = p->first_tensor; t < p->last_tensor; t++) p->reset_by[t - p->first_tensor] = -1, p->writer[t - p->first_tensor] = -1;
	for (int sid = first; sid < last; sid++) {
		int t = m->stmt[sid].out;
		p->writer[t - p->first_tensor] = p->writer[t - p->first_tensor] == -1 ? sid : -2;
	}
	for (int t = f->first_tensor; t < f->first_tensor + f->ntensor; t++) {
		const Tensor *x = &m->tensor[t];
		if (x->list_count >= 0) {
			int c = x->list_count, kc = -1;
			for (int sid = first; sid < last; sid++)
				if (m->stmt[sid].pattern == PAT_COMPACT && m->stmt[sid].out == t) kc = p->stmt_kernel[sid - p->first_stmt];
			int touched0 = 0;
			for (int sid = first; sid < last; sid++)
				if (p->stmt_kernel[sid - p->first_stmt] == 0 && (plan_stmt_reads(m, &m->stmt[sid], c) || m->stmt[sid].out == c)) touched0 = 1;
			if (kc > 0 && !touched0) p->reset_by[c - p->first_tensor] = 0;
		}
		if (!x->zero_init) continue;
		int lastk = -1, ok = 1;
		for (int sid = first; sid < last; sid++) {
			const Stmt *s = &m->stmt[sid];
			if (p->op[sid - p->first_stmt] == STEP_INLINE || !plan_stmt_reads(m, s, t)) continue;
			lastk = p->stmt_kernel[sid - p->first_stmt];
		}
		if (lastk < 0) continue;
		const Kernel *k = &p->k[lastk];
		ok = k->mode == KM_POINT && k->nspace == x->rank;
		for (int d = 0; ok && d < x->rank; d++) ok = dim_same(k->space[d], x->dim[d]);
		for (int sid = k->first_stmt; ok && sid < k->first_stmt + k->nstmt; sid++) {
			const Stmt *s = &m->stmt[sid];
			if (s->out == t) ok = 0;
			else if (plan_stmt_reads(m, s, t)) ok = s->nfree == x->rank && reads_only_at_point(m, s, s->rhs, t, k->nspace) &&
			                                     reads_only_at_point(m, s, s->mask, t, k->nspace);
		}
		if (ok) p->reset_by[t - p->first_tensor] = lastk;
	}
}

/* A tensor lives in device memory if it leaves its kernel. */
void plan_stored(const Module *m, const Schedule *p, unsigned char *stored)
{
	const Fusion *f = &m->fusion[p->fusion];
	int first = p->first_stmt, last = p->last_stmt, fused = p->fused;
	for (int t = f->first_tensor; t < f->first_tensor + f->ntensor; t++) {
		const Tensor *x = &m->tensor[t];
		if (x->kind != TK_TEMP || x->zero_init || x->list_count >= 0) stored[t - p->first_tensor] = x->kind != TK_INPUT;
		for (int sid = first; sid < last; sid++) {
			const Stmt *s = &m->stmt[sid];
			if (s->out == t && s->pattern == PAT_SCATTER) stored[t - p->first_tensor] = 1;
			if (s->out != t || stored[t - p->first_tensor] || p->op[sid - p->first_stmt] == STEP_INLINE) continue;
			for (int u = sid + 1; u < last; u++)
				if (p->stmt_kernel[u - p->first_stmt] != p->stmt_kernel[sid - p->first_stmt] && plan_stmt_reads(m, &m->stmt[u], t)) stored[t - p->first_tensor] = 1;
		}
		if (!fused && x->kind == TK_TEMP) stored[t - p->first_tensor] = 1;
	}
}

/* Each tensor's Storage. After plan_steps: a row element nobody stores
   (STEP_ROW_ONCHIP) is recomputed by its readers. */
void plan_storage(const Module *m, Schedule *p, const unsigned char *stored)
{
	for (int t = p->first_tensor; t < p->last_tensor; t++) {
		const Tensor *x = &m->tensor[t];
		if (x->kind == TK_INPUT) p->storage[t - p->first_tensor] = ST_PARAM;
		else if (stored[t - p->first_tensor]) p->storage[t - p->first_tensor] = ST_STORED;
		else if (p->writer[t - p->first_tensor] >= 0 && p->op[p->writer[t - p->first_tensor] - p->first_stmt] == STEP_INLINE) p->storage[t - p->first_tensor] = ST_RECOMPUTED;
		else p->storage[t - p->first_tensor] = ST_REGISTERS;
	}
	for (int t = p->first_tensor; t < p->last_tensor; t++)
		if (p->storage[t - p->first_tensor] == ST_REGISTERS && p->writer[t - p->first_tensor] >= 0 && p->op[p->writer[t - p->first_tensor] - p->first_stmt] == STEP_ROW_ONCHIP)
			p->storage[t - p->first_tensor] = ST_RECOMPUTED;
}
