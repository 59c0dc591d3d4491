/* A row's mean and its squares about the mean in one walk, where the row
 * is streamed from memory (wider than the registers hold): the variance's
 * walk reads the row a second time, from DRAM past L2's size (batch norm's
 * statistics: 2x the copy floor). For a row sum s = sum A and a later sum
 * q = sum (A - L)^2, L constant over the row (the mean), the walk of s also
 * takes the terms' shifted squares about K, the row's first term:
 *   S1 = sum (A - K),  S2 = sum (A - K)^2,  s = S1 + n K,
 *   q = S2 - 2 (L - K) S1 + n (L - K)^2          (n: the row's width)
 * exact algebra; K a term of the row keeps the sums small where the values
 * sit far from 0 (the shifted-data variance). Cached rows keep their two
 * walks over the registers (the same bits as before). Kernel.shift_sum and
 * .shift_sq name the pair; the row template uses it on the streamed path.
 *
 * The same for a row's max m = max E and a later s = sum exp(E - m) (the
 * softmax's and log-sum-exp's pair): the max's walk carries both, the sum
 * rescaled by exp(m_old - m_new) where the running max grows (the online
 * softmax), so a streamed row is read once for the two, not twice
 * (Kernel.online_max, .online_sum; plan_online). */
#include "plan/plan_impl.h"

/* a's tree with indices ia.. equal to b's with ib.. (index i of a's
   statement at offset i - ia is b's at the same offset) */
static int same_expr(const Module *m, int a, int ia, int b, int ib)
{
	if (!a || !b) return a == b;
	const Expr *x = &m->expr[a], *y = &m->expr[b];
	if (x->op != y->op || x->type != y->type || x->nargs != y->nargs) return 0;
	switch (x->op) {
	case IR_CONST: return x->value == y->value;
	case IR_INDEX: return x->index - ia == y->index - ib;
	case IR_SIZE: return x->sym == y->sym && x->fusion == y->fusion;
	case IR_SCALAR: return x->tensor == y->tensor;
	case IR_LOAD:
		if (x->tensor != y->tensor) return 0;
		for (int i = 0; i < x->nargs; i++)
			if (!same_expr(m, x->args[i], ia, y->args[i], ib)) return 0;
		return 1;
	default:
		return same_expr(m, x->a, ia, y->a, ib) && same_expr(m, x->b, ia, y->b, ib) && same_expr(m, x->c, ia, y->c, ib);
	}
}

/* e without the casts that widen one float type to a wider one (a value
   that keeps its bits: bf16's E read in f32) */
static int unwidened(const Module *m, int e)
{
	while (e && m->expr[e].op == IR_CAST && m->expr[e].a) {
		const Expr *x = &m->expr[e], *y = &m->expr[x->a];
		if (!elem_info[x->type].is_float || !elem_info[y->type].is_float || elem_info[y->type].float_rank > elem_info[x->type].float_rank)
			break;
		e = x->a;
	}
	return e;
}

/* e reads only the statement's free indices (no reduced one): constant over the row */
static int at_row(const Module *m, const Stmt *s, int e)
{
	for (int i = s->nfree; i < s->nindex; i++)
		if (ir_expr_uses_index(m, e, s->first_index + i)) return 0;
	return 1;
}

/* q's terms are (A - L) * (A - L), A the sum's term; s's and q's indices
   in one order over the same ranges, neither masked */
int plan_shifted_pair(const Module *m, const Stmt *s, const Stmt *q)
{
	if (s->red != RED_SUM || q->red != RED_SUM || s->mask || q->mask || s->nfree != q->nfree || s->nindex != q->nindex ||
	    s->acc != q->acc || !elem_info[s->acc].is_float)
		return 0;
	for (int i = 0; i < s->nindex; i++)
		if (!dim_same(m->index[s->first_index + i].range, m->index[q->first_index + i].range)) return 0;
	const Expr *x = &m->expr[q->rhs];
	if (x->op != IR_MUL || !same_expr(m, x->a, q->first_index, x->b, q->first_index)) return 0;
	const Expr *d = &m->expr[x->a];
	return d->op == IR_SUB && same_expr(m, s->rhs, s->first_index, d->a, q->first_index) && at_row(m, q, d->b);
}

/* A point kernel's first statement, an outer reduction split over warps
   (and blocks), and a later reduction whose terms are its terms' squares
   about a value at the point, only pointwise work between: the two in one
   loop, so one kernel reads X once (col_meanvar: two kernels, X read
   twice). plan_fuse.c lets the second join the first's kernel on this. */
int plan_shift_partner(const Module *m, const Schedule *p, const Kernel *k, int sid)
{
	int a = k->first_stmt;
	while (a < sid && p->op[a - p->first_stmt] == STEP_INLINE) a++;
	if (a == sid || !plan_outer_reduction(m, &m->stmt[a]) || !plan_shifted_pair(m, &m->stmt[a], &m->stmt[sid])) return -1;
	for (int u = a + 1; u < sid; u++)
		if (p->op[u - p->first_stmt] != STEP_INLINE && (m->stmt[u].red != RED_NONE || m->stmt[u].pattern != PAT_MAP)) return -1;
	return a;
}

/* statement sid of row kernel k: a reduction of one merge (a walk of its
   own), not yet in a pair (shifted, online or argmax) */
static int unpaired(const Schedule *p, const Kernel *k, int sid)
{
	if (p->op[sid - p->first_stmt] != STEP_REDUCE || p->merge[sid - p->first_stmt] != 1) return 0;
	return !(k->shift_sq && (sid == k->shift_sum || sid == k->shift_sq)) &&
	       !(k->online_sum && (sid == k->online_max || sid == k->online_sum)) &&
	       !(k->argmax_idx && (sid == k->argmax_max || sid == k->argmax_idx));
}

typedef int PairTest(const Module *m, const Schedule *p, const Stmt *a, const Stmt *b);

/* the first a < b of k's unpaired reductions, b over k's whole space, that
   test pairs: a, with *b set; -1 when there is none */
static int find_pair(const Module *m, const Schedule *p, const Kernel *k, PairTest *test, int *b)
{
	const int end = k->first_stmt + k->nstmt;
	for (int a = k->first_stmt; a < end; a++) {
		if (!unpaired(p, k, a)) continue;
		for (int c = a + 1; c < end; c++)
			if (unpaired(p, k, c) && m->stmt[c].nfree == k->nspace && test(m, p, &m->stmt[a], &m->stmt[c])) return *b = c, a;
	}
	return -1;
}

static int shifted_test(const Module *m, const Schedule *p, const Stmt *a, const Stmt *b)
{
	(void)p;
	return plan_shifted_pair(m, a, b);
}

void plan_shift(const Module *m, Schedule *p)
{
	for (int i = 0; i < p->nk; i++) {
		Kernel *k = &p->k[i];
		if (k->mode == KM_POINT) { /* paired by plan_fuse.c; one loop only where split over warps */
			if (k->shift_sq && (k->par.slices <= 1 || p->merge[k->shift_sum - p->first_stmt] != 1 || p->merge[k->shift_sq - p->first_stmt] != 1))
				k->shift_sum = k->shift_sq = 0; /* a thread's serial loops: correct as written */
			continue;
		}
		int b, a;
		if (k->mode == KM_ROW && k->par.rcache && !k->shift_sq && (a = find_pair(m, p, k, shifted_test, &b)) >= 0) k->shift_sum = a, k->shift_sq = b;
	}
}

/* e (at statement indices from base) is exp(E - a(its first a->nfree
   indices)) in a's type, E a's term */
static int exp_less_max(const Module *m, const Stmt *a, int e, int base)
{
	const Expr *x = &m->expr[unwidened(m, e)];
	if (x->op != IR_EXP || x->type != a->acc) return 0;
	const Expr *d = &m->expr[unwidened(m, x->a)];
	if (d->op != IR_SUB || d->type != a->acc) return 0;
	const Expr *l = &m->expr[unwidened(m, d->b)];
	if (l->op != IR_LOAD || l->tensor != a->out || l->nargs != a->nfree) return 0;
	for (int i = 0; i < l->nargs; i++)
		if (m->expr[l->args[i]].op != IR_INDEX || m->expr[l->args[i]].index != base + i) return 0;
	return same_expr(m, unwidened(m, a->rhs), a->first_index, unwidened(m, d->a), base);
}

/* a load of t at exactly statement s's indices, in order */
static int at_own_indices(const Module *m, int e, const Stmt *s, int n)
{
	const Expr *l = &m->expr[e];
	if (l->op != IR_LOAD || l->nargs != n) return 0;
	for (int i = 0; i < n; i++)
		if (m->expr[l->args[i]].op != IR_INDEX || m->expr[l->args[i]].index != s->first_index + i) return 0;
	return 1;
}

/* s's term is a load of a temp T(its indices), T's only writer an unmasked
   map over the same indices in a's type whose value is exp(E - a): the
   softmax spelt with its exponentials a stage of their own (then the
   walk computes the exponential from E, and never reads T) */
static int exp_stage(const Module *m, const Schedule *p, const Stmt *a, const Stmt *s)
{
	if (!at_own_indices(m, s->rhs, s, s->nindex)) return 0;
	const int t = m->expr[s->rhs].tensor;
	if (m->tensor[t].kind != TK_TEMP || m->tensor[t].type != a->acc) return 0;
	int w = -1;
	for (int i = p->first_stmt; i < p->last_stmt; i++)
		if (m->stmt[i].out == t) {
			if (w >= 0) return 0;
			w = i;
		}
	if (w < 0) return 0;
	const Stmt *d = &m->stmt[w];
	if (d->red != RED_NONE || d->mask || d->nfree != s->nindex || d->nindex != s->nindex || d->nlhs != s->nindex || d->acc != a->acc)
		return 0;
	for (int i = 0; i < d->nindex; i++)
		if (!dim_same(m->index[d->first_index + i].range, m->index[s->first_index + i].range) ||
		    m->expr[d->lhs[i]].op != IR_INDEX || m->expr[d->lhs[i]].index != d->first_index + i)
			return 0;
	return exp_less_max(m, a, d->rhs, d->first_index);
}

/* s's terms are exp(E - a(free indices)), E a's term, directly or through
   a stage of the exponentials; a a max over the same indices and ranges,
   neither masked, one float accumulator type */
static int online_pair(const Module *m, const Schedule *p, const Stmt *a, const Stmt *s)
{
	if (a->red != RED_MAX || s->red != RED_SUM || a->mask || s->mask || a->nfree != s->nfree || a->nindex != s->nindex ||
	    a->acc != s->acc || (a->acc != ET_F32 && a->acc != ET_F64))
		return 0;
	for (int i = 0; i < a->nindex; i++)
		if (!dim_same(m->index[a->first_index + i].range, m->index[s->first_index + i].range)) return 0;
	return exp_less_max(m, a, s->rhs, s->first_index) || exp_stage(m, p, a, s);
}

/* e without any cast */
static int uncast(const Module *m, int e)
{
	while (e && m->expr[e].op == IR_CAST && m->expr[e].a) e = m->expr[e].a;
	return e;
}

/* e (at s's indices) is a(s's free indices), a load of a's result */
static int loads_result(const Module *m, const Stmt *a, int e, const Stmt *s)
{
	return at_own_indices(m, e, s, a->nfree) && m->expr[e].tensor == a->out;
}

/* s is idx min= select(E == a, c, F) (or a == E): a a max of E over the
   same indices and ranges, c s's one reduced index (the column), F
   constant over the row; neither masked. Then s is the first column
   holding the row's max, or F where smaller: one walk keeps each lane's
   max and the first column holding it, the lanes whose max is the row's
   then give their column (exact: no rounding, the two walks' result).
   The max is kept, stored and compared in one type (the walk compares its
   accumulator: a max in f64 stored as f32 could compare otherwise). */
static int argmax_pair(const Module *m, const Stmt *a, const Stmt *s)
{
	if (a->red != RED_MAX || s->red != RED_MIN || a->mask || s->mask || a->nfree != s->nfree || a->nindex != s->nindex ||
	    s->nindex != s->nfree + 1)
		return 0;
	for (int i = 0; i < a->nindex; i++)
		if (!dim_same(m->index[a->first_index + i].range, m->index[s->first_index + i].range)) return 0;
	const Expr *x = &m->expr[uncast(m, s->rhs)];
	if (x->op != IR_SELECT) return 0;
	const Expr *q = &m->expr[x->a], *c = &m->expr[uncast(m, x->b)];
	if (q->op != IR_EQ || c->op != IR_INDEX || c->index != s->first_index + s->nfree || !at_row(m, s, x->c)) return 0;
	if (m->tensor[a->out].type != a->acc || m->expr[q->a].type != a->acc || m->expr[q->b].type != a->acc) return 0;
	const int e = loads_result(m, a, unwidened(m, q->b), s) ? q->a : loads_result(m, a, unwidened(m, q->a), s) ? q->b : 0;
	return e && same_expr(m, unwidened(m, a->rhs), a->first_index, unwidened(m, e), s->first_index);
}

static int argmax_test(const Module *m, const Schedule *p, const Stmt *a, const Stmt *b)
{
	(void)p;
	return argmax_pair(m, a, b);
}

/* Row kernels that stream their rows: a max with a later first column
   holding it (argmax_pair), each a walk of its own */
void plan_argmax(const Module *m, Schedule *p)
{
	for (int i = 0; i < p->nk; i++) {
		Kernel *k = &p->k[i];
		int b, a;
		if (k->mode == KM_ROW && k->par.rcache && !k->argmax_idx && (a = find_pair(m, p, k, argmax_test, &b)) >= 0)
			k->argmax_max = a, k->argmax_idx = b, k->argmax_sel = uncast(m, m->stmt[b].rhs);
	}
}

/* Row kernels whose streamed path reads the row once (one row reduction,
   a shifted pair, the online pair or the argmax pair, and no row element stored): 512
   threads a row in 512-thread blocks (KernelParams.row_stream), so that
   two blocks share an SM and one's loads run while the other folds its
   row (cross_entropy at R=4096 C=32768 on an H100: 0.2301 -> 0.1960 ms,
   torch.compile 0.1978). A row walked twice keeps fz_row_lanes's 1024:
   at two rows an SM its second walk no longer finds the row in L2
   (log_softmax at R=2048 C=32000: 0.1980 -> 0.2594 ms; row_argmax's two
   walks 0.2153 -> 0.2103; bench/runs/s41-call3-h100). */
void plan_stream(const Module *m, Schedule *p)
{
	for (int i = 0; i < p->nk; i++) {
		Kernel *k = &p->k[i];
		if (k->mode != KM_ROW || !k->par.rcache) continue;
		int walks = 0;
		for (int sid = k->first_stmt; sid < k->first_stmt + k->nstmt; sid++) {
			const StepOp op = p->op[sid - p->first_stmt];
			if ((k->online_sum && sid == k->online_sum) || (k->shift_sq && sid == k->shift_sq) || (k->argmax_idx && sid == k->argmax_idx))
				continue; /* in another's walk */
			walks += op == STEP_ROW_ELEM || (op == STEP_REDUCE && m->stmt[sid].nfree == k->nspace);
		}
		k->par.row_stream = walks == 1;
	}
}

/* Row kernels that stream their rows: the first max with a later sum of
   exp(its term - it) (online_pair), each a loop of its own */
void plan_online(const Module *m, Schedule *p)
{
	for (int i = 0; i < p->nk; i++) {
		Kernel *k = &p->k[i];
		int b, a;
		if (k->mode == KM_ROW && k->par.rcache && !k->online_sum && (a = find_pair(m, p, k, online_pair, &b)) >= 0) k->online_max = a, k->online_sum = b;
	}
}
