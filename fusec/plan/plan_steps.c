/* What each statement does in its kernel (its Step), reductions that share
 * one loop, and each kernel's phases. */
#include "plan/plan_impl.h"

/* Consecutive reductions of kernel k with the same reduced space, none
 * reading another: one pass over the reduced indices computes them all. */
static int merge_run(const Module *m, const Kernel *k, int sid)
{
	const Stmt *s0 = &m->stmt[sid];
	int end = k->first_stmt + k->nstmt, n = 1;
	for (int u = sid + 1; u < end; u++) {
		const Stmt *s = &m->stmt[u];
		if (s->red < RED_SUM || s->red > RED_KMIN || s->nfree != s0->nfree || s->nindex != s0->nindex) break;
		int same = 1;
		for (int i = s->nfree; i < s->nindex; i++) {
			const Index *a = &m->index[s->first_index + i], *b = &m->index[s0->first_index + i];
			if (a->kind != IX_DENSE || b->kind != IX_DENSE || !dim_same(a->range, b->range))
				same = 0;
		}
		for (int v = sid; v < u && same; v++)
			if (plan_stmt_reads(m, s, m->stmt[v].out)) same = 0;
		if (!same) break;
		n++;
	}
	return n;
}

/* What each statement does in its kernel, and the kernel's phases. */
void plan_steps(const Module *m, Schedule *p, const unsigned char *stored)
{
	for (int i = 0; i < p->nk; i++) {
		Kernel *k = &p->k[i];
		int epi = -1;
		for (int sid = k->first_stmt; sid < k->first_stmt + k->nstmt; sid++) {
			const Stmt *s = &m->stmt[sid];
			if (p->op[sid - p->first_stmt] == STEP_INLINE) continue; /* computed where it is read */
			StepOp op;
			switch (k->mode) {
			case KM_SCATTER: op = STEP_SCATTER; break;
			case KM_SCALAR: op = STEP_SCALAR; break;
			case KM_MATMUL:
			case KM_TILE: op = sid == k->first_stmt ? STEP_CONTRACT : STEP_MAP; break;
			case KM_ATTN: /* the products; z before the max; the softmax between; O's and the rows' work after */
				op = sid == k->at.c1 || sid == k->at.c2 ? STEP_CONTRACT : sid >= k->at.mx && sid < k->at.c2 ? STEP_ONLINE : STEP_MAP;
				break;
			default:
				if (plan_is_scalar_map(s)) op = STEP_EPILOGUE;
				else if (plan_is_grid_reduction(s)) op = STEP_GRID_REDUCE;
				else if (s->pattern == PAT_COMPACT) op = STEP_COMPACT;
				else if (s->red >= RED_SUM && s->red <= (k->mode == KM_ROW ? RED_MIN : RED_KMIN)) op = STEP_REDUCE;
				else if (k->mode == KM_POINT) op = s->red == RED_ACCUM ? STEP_ACCUM : STEP_MAP;
				else if (s->nfree == k->nspace) op = s->red == RED_ACCUM ? STEP_ACCUM : STEP_MAP;
				else op = stored[s->out - p->first_tensor] ? STEP_ROW_ELEM : STEP_ROW_ONCHIP;
			}
			p->op[sid - p->first_stmt] = op;
			if (op == STEP_EPILOGUE && epi < 0) epi = sid;
		}
		for (int sid = k->first_stmt; sid < k->first_stmt + k->nstmt; sid++) {
			if (p->op[sid - p->first_stmt] != STEP_REDUCE) continue;
			int n = merge_run(m, k, sid);
			p->merge[sid - p->first_stmt] = n;
			sid += n - 1;
		}
		int end = k->first_stmt + k->nstmt, main_end = epi >= 0 ? epi : end;
		k->nphase = 1;
		k->phase[0] = (Phase){.kind = k->mode, .first_stmt = k->first_stmt, .nstmt = main_end - k->first_stmt,
		                      .after = k->has_tail ? BAR_GRID_FOLD : BAR_NONE};
		if (epi >= 0) k->phase[k->nphase++] = (Phase){.kind = KM_SCALAR, .first_stmt = epi, .nstmt = end - epi};
		for (int sid = k->first_stmt; sid < end; sid++) k->ntail += p->op[sid - p->first_stmt] == STEP_GRID_REDUCE;
	}
}
