/* Attention, recognised from the dataflow: a tensor-core product
 * S([b,]m,n) = sum_d Q([b,]m,d) K([b,]n,d), pointwise work on S giving z,
 * a max of z over n, exponentials exp(z - max), their sum over n, the
 * normalised row P = exp(z - max) / sum, and a second tensor-core product
 * O([b,]m,e) = sum_n P([b,]m,n) V([b,]n,e); then pointwise work on O and on
 * the rows' statistics. Nothing here reads a name: which statement reads
 * which tensor at which subscripts, and the algebra of the softmax (the
 * exponent is the max's own argument minus the max), decide it.
 *
 * Why the algebra matters: the kernel never holds a whole row of S. It
 * walks n in blocks, keeps a running max and sum, and rescales the sum and
 * O by exp(old max - new max) when the max grows (FlashAttention's online
 * softmax). That is exact only when every exponential is exp(z - max) of
 * the very z the max was taken over and P is that exponential divided by
 * the sum, so those are checked structurally, through the pointwise
 * statements that define z. */
#include "plan/plan_impl.h"

#include <stdlib.h>
#include <string.h>

#include "core/die.h"

/* What a tensor of the fusion is to the scan */
enum { T_OTHER, T_INPUT, T_S, T_Z, T_MX, T_E, T_SUM, T_P, T_O, T_EPI, T_ROW };

typedef struct Scan {
	const Module *m;
	const Schedule *p;
	int nsp;              /* the first product's free indices: [b,] m, n */
	Dim sp[MAX_IDX];
	int mx, sum, c2;      /* statements found, -1 none */
	unsigned char *kind;  /* per tensor of the fusion, at [t - first_tensor] */
	int *writer;          /* per tensor: its statement in the run, -1 */
} Scan;

static int tkind(const Scan *c, int t) { return c->kind[t - c->p->first_tensor]; }
static void set_kind(Scan *c, int t, int k, int sid) { c->kind[t - c->p->first_tensor] = (unsigned char)k, c->writer[t - c->p->first_tensor] = sid; }

/* Is t a temp inlined over inputs (computed where it is read)? */
static int inlined(const Schedule *p, int t)
{
	const int i = p->prod_at[t - p->first_tensor];
	return i < p->prod_at[t + 1 - p->first_tensor] && p->op[p->prod[i] - p->first_stmt] == STEP_INLINE;
}

/* Is index expression e index number `pos` of statement s (its free indices
   first, in the left-hand side's order, then the reduced ones)? */
static int is_pos(const Module *m, const Stmt *s, int e, int pos)
{
	return m->expr[e].op == IR_INDEX && m->expr[e].index == s->first_index + pos;
}

/* Are the first n subscripts of load x s's indices 0..n-1, and it has n? */
static int at_pos(const Module *m, const Stmt *s, const Expr *x, int n)
{
	if (x->nargs != n) return 0;
	for (int i = 0; i < n; i++)
		if (!is_pos(m, s, x->args[i], i)) return 0;
	return 1;
}

/* s's first n left-hand subscripts are its first n indices, over dims d */
static int lhs_prefix(const Module *m, const Stmt *s, const Dim *d, int n)
{
	if (s->nfree < n || s->nlhs < n) return 0;
	for (int i = 0; i < n; i++)
		if (!is_pos(m, s, s->lhs[i], i) || !dim_same(m->index[s->first_index + i].range, d[i])) return 0;
	return 1;
}

/* s writes out(i0, i1, ...) with its free indices in order, over dims d */
static int plain_lhs(const Module *m, const Stmt *s, const Dim *d, int n)
{
	return s->nfree == n && s->nlhs == n && lhs_prefix(m, s, d, n);
}

/* Reads of e inside statement s: inputs (and temps inlined over inputs)
   anywhere; tensors of the kinds in `at_point` only at s's point (their
   rank's worth of its first indices); nothing else. */
static int reads_only(const Scan *c, const Stmt *s, int e, unsigned at_point)
{
	if (!e) return 1;
	const Expr *x = &c->m->expr[e];
	if (x->op == IR_LOAD || x->op == IR_SCALAR) {
		int k = tkind(c, x->tensor);
		if (k == T_INPUT || (k == T_OTHER && inlined(c->p, x->tensor))) {
		} else if (!((at_point >> k) & 1) || !at_pos(c->m, s, x, c->m->tensor[x->tensor].rank)) {
			return 0;
		}
		for (int i = 0; i < x->nargs; i++)
			if (!reads_only(c, s, x->args[i], at_point)) return 0;
		return 1;
	}
	return reads_only(c, s, x->a, at_point) && reads_only(c, s, x->b, at_point) && reads_only(c, s, x->c, at_point);
}

/* A load of a z tensor at the point stands for its statement's value */
static void through(const Scan *c, int *e, const Stmt **s)
{
	const Expr *x = &c->m->expr[*e];
	while (x->op == IR_LOAD && tkind(c, x->tensor) == T_Z && at_pos(c->m, *s, x, c->nsp)) {
		*s = &c->m->stmt[c->writer[x->tensor - c->p->first_tensor]];
		*e = (*s)->rhs, x = &c->m->expr[*e];
	}
}

/* Do e1 (in s1) and e2 (in s2) compute the same value at the same point?
   Indices compare by position, so the max's reduced n is the map's free n. */
static int same(const Scan *c, int e1, const Stmt *s1, int e2, const Stmt *s2)
{
	if (!e1 || !e2) return e1 == e2;
	through(c, &e1, &s1), through(c, &e2, &s2);
	const Expr *x = &c->m->expr[e1], *y = &c->m->expr[e2];
	if (x->op != y->op || x->type != y->type) return 0;
	switch (x->op) {
	case IR_CONST: return x->value == y->value;
	case IR_INDEX: return x->index - s1->first_index == y->index - s2->first_index;
	case IR_SIZE: return x->sym == y->sym;
	case IR_LOAD:
	case IR_SCALAR:
		if (x->tensor != y->tensor || x->nargs != y->nargs) return 0;
		for (int i = 0; i < x->nargs; i++)
			if (!same(c, x->args[i], s1, y->args[i], s2)) return 0;
		return 1;
	default: return same(c, x->a, s1, y->a, s2) && same(c, x->b, s1, y->b, s2) && same(c, x->c, s1, y->c, s2);
	}
}

/* Is e (in s, whose point is [b,]m,n) exp(z - max) for the max's z? */
static int is_exp(const Scan *c, const Stmt *s, int e)
{
	const Module *m = c->m;
	const Expr *x = &m->expr[e];
	if (x->op == IR_LOAD && tkind(c, x->tensor) == T_E) return at_pos(m, s, x, c->nsp);
	if (x->op != IR_EXP || m->expr[x->a].op != IR_SUB) return 0;
	const Expr *d = &m->expr[x->a], *mx = &m->expr[d->b];
	if (mx->op != IR_LOAD || tkind(c, mx->tensor) != T_MX || !at_pos(m, s, mx, c->nsp - 1)) return 0;
	return same(c, d->a, s, m->stmt[c->mx].rhs, &m->stmt[c->mx]);
}

/* A reduction over the row's n at the point [b,]m, unmasked */
static int row_reduction(const Scan *c, const Stmt *s, RedOp op)
{
	const Index *n = &c->m->index[s->first_index + c->nsp - 1];
	return s->red == op && s->pattern == PAT_REDUCE && !s->mask && s->nindex == c->nsp &&
	       plain_lhs(c->m, s, c->sp, c->nsp - 1) && n->kind == IX_DENSE && dim_same(n->range, c->sp[c->nsp - 1]);
}

static int pointwise(const Stmt *s) { return s->pattern == PAT_MAP && s->red == RED_NONE && !s->mask && s->nindex == s->nfree; }

/* P = exp(z - max) / sum at the point */
static int is_normalised(const Scan *c, const Stmt *s)
{
	const Expr *x = &c->m->expr[s->rhs];
	if (c->sum < 0 || x->op != IR_DIV) return 0;
	const Expr *l = &c->m->expr[x->b];
	return l->op == IR_LOAD && tkind(c, l->tensor) == T_SUM && at_pos(c->m, s, l, c->nsp - 1) && is_exp(c, s, x->a);
}

/* The second product, O([b,]m,e) +=! P([b,]m,n) * V([b,]n,e): P the
   normalised row read at the point with n reduced, V an input of P's type
   read as V([b,]n,e). NULL when it is; else why not. */
static const char *second_product(const Scan *c, const Stmt *s, int *v)
{
	const Module *m = c->m;
	const int nsp = c->nsp, n = s->first_index + nsp;
	if (!(m->stage[s->stage].attrs & ATTR(TENSOR_ELIGIBLE)) || s->red != RED_SUM || s->mask || s->nfree != nsp ||
	    s->nindex != nsp + 1 || m->index[n].kind != IX_DENSE || !dim_same(m->index[n].range, c->sp[nsp - 1]))
		return "the normalised row feeds no tensor_eligible sum over n of it times a matrix";
	if (!lhs_prefix(m, s, c->sp, nsp - 1) || s->nlhs != nsp || !is_pos(m, s, s->lhs[nsp - 1], nsp - 1))
		return "the second product's output is not indexed by the rows' indices then its own";
	const Expr *a = &m->expr[s->contract_a], *b = &m->expr[s->contract_b];
	if (b->op == IR_LOAD && tkind(c, b->tensor) == T_P) { const Expr *t = a; a = b, b = t; }
	if (a->op != IR_LOAD || tkind(c, a->tensor) != T_P || a->nargs != nsp || !is_pos(m, s, a->args[nsp - 1], nsp))
		return "the second product does not read the normalised row P([b,]m,n) with n the index it sums over";
	for (int i = 0; i < nsp - 1; i++)
		if (!is_pos(m, s, a->args[i], i)) return "the second product reads the normalised row at other rows";
	if (b->op != IR_LOAD || m->tensor[b->tensor].kind != TK_INPUT || b->nargs != nsp || (nsp == 3 && !is_pos(m, s, b->args[0], 0)) ||
	    !is_pos(m, s, b->args[nsp - 2], nsp) || !is_pos(m, s, b->args[nsp - 1], nsp - 1))
		return "the second product's other operand is not an input read as V([b,]n,e)";
	const ElemType tv = m->tensor[b->tensor].type, tp = m->tensor[a->tensor].type;
	if ((tv != ET_F16 && tv != ET_BF16) || (tp != tv && tp != ET_F32))
		return "V is not f16 or bf16, or the normalised row neither V's type nor f32 (rounded to V's on the way in)";
	if (m->stage[s->stage].precision != ET_F32) return "the second product does not accumulate in f32";
	*v = b->tensor;
	return NULL;
}

/* Statement s of the run, after the first product: what it is to the scan
   (its kind set), or why the run is no attention; *stop: the run ended
   before s (s is not the kernel's). */
static const char *classify(Scan *c, int sid, int *v, int *stop, int *looks)
{
	const Module *m = c->m;
	const Stmt *s = &m->stmt[sid];
	const unsigned sz = 1u << T_S | 1u << T_Z;
	if (c->mx < 0) {
		if (pointwise(s) && plain_lhs(m, s, c->sp, c->nsp) && reads_only(c, s, s->rhs, sz)) set_kind(c, s->out, T_Z, sid);
		else if (row_reduction(c, s, RED_MAX) && reads_only(c, s, s->rhs, sz)) c->mx = sid, set_kind(c, s->out, T_MX, sid), *looks = 1;
		else if (s->red == RED_MAX && reads_only(c, s, s->rhs, sz)) return *looks = 1, "its row max is masked, or not over the product's last index";
		else *stop = 1;
		return NULL;
	}
	if (c->c2 < 0) {
		if (pointwise(s) && plain_lhs(m, s, c->sp, c->nsp) && is_exp(c, s, s->rhs)) set_kind(c, s->out, T_E, sid);
		else if (row_reduction(c, s, RED_SUM) && c->sum < 0 && is_exp(c, s, s->rhs)) c->sum = sid, set_kind(c, s->out, T_SUM, sid);
		else if (pointwise(s) && plain_lhs(m, s, c->sp, c->nsp) && is_normalised(c, s)) set_kind(c, s->out, T_P, sid);
		else if (s->pattern == PAT_CONTRACT) {
			const char *no = second_product(c, s, v);
			if (no) return no;
			c->c2 = sid, set_kind(c, s->out, T_O, sid);
		} else
			return "after the row max comes something other than exp(z - max) of the max's own z, one sum of it over n, "
			       "or the exponential divided by that sum";
		return NULL;
	}
	Dim od[MAX_IDX]; /* the second product's space */
	const Stmt *c2 = &m->stmt[c->c2];
	for (int i = 0; i < c->nsp; i++) od[i] = m->index[c2->first_index + i].range;
	const unsigned row = 1u << T_MX | 1u << T_SUM | 1u << T_ROW, epi = 1u << T_O | 1u << T_EPI | 1u << T_MX | 1u << T_SUM;
	if (s->pattern == PAT_MAP && s->red == RED_NONE && s->nindex == s->nfree && plain_lhs(m, s, od, c->nsp) &&
	    reads_only(c, s, s->rhs, epi) && reads_only(c, s, s->mask, epi))
		set_kind(c, s->out, T_EPI, sid);
	else if (s->pattern == PAT_MAP && s->red == RED_NONE && s->nindex == s->nfree && plain_lhs(m, s, c->sp, c->nsp - 1) &&
	         reads_only(c, s, s->rhs, row) && reads_only(c, s, s->mask, row))
		set_kind(c, s->out, T_ROW, sid);
	else *stop = 1;
	return NULL;
}

/* The run's tensors over the scores' space stay in the kernel: temps, read
   by no statement after it */
static const char *stays_inside(const Scan *c, int end)
{
	const Module *m = c->m;
	for (int t = c->p->first_tensor; t < c->p->last_tensor; t++) {
		int k = tkind(c, t);
		if (k != T_S && k != T_Z && k != T_E && k != T_P) continue;
		if (m->tensor[t].kind != TK_TEMP) return "a tensor over the scores' space is an output: the fused kernel would store it";
		for (int sid = end; sid < c->p->last_stmt; sid++)
			if (plan_stmt_reads(m, &m->stmt[sid], t)) return "a later statement reads a tensor over the scores' space";
	}
	return NULL;
}

/* Is e (in s) the constant C, and C <= -1e30? */
static int far_below(const Module *m, int e)
{
	const Expr *x = &m->expr[e];
	if (x->op == IR_NEG) return m->expr[x->a].op == IR_CONST && m->expr[x->a].value >= 1e30;
	return x->op == IR_CONST && x->value <= -1e30;
}

/* z = select(n <= m, x, C) (or m >= n), C <= -1e30: past a row's own index
   every exponential is exp(C - max) = 0 in f32 and f64 alike, so a block of
   keys wholly past a block's rows adds nothing to the sum or to O and is
   not computed (a causal mask) */
static int causal(const Scan *c, int *sel)
{
	const Module *m = c->m;
	const Stmt *s = &m->stmt[c->mx];
	int e = s->rhs;
	through(c, &e, &s);
	const Expr *x = &m->expr[e];
	if (x->op != IR_SELECT || !far_below(m, x->c)) return 0;
	const Expr *p = &m->expr[x->a], *l = &m->expr[p->a], *r = &m->expr[p->b];
	if ((p->op != IR_LE && p->op != IR_GE) || l->op != IR_INDEX || r->op != IR_INDEX) return 0;
	const int n = p->op == IR_LE ? l->index : r->index, mm = p->op == IR_LE ? r->index : l->index;
	const int ok = n - s->first_index == c->nsp - 1 && mm - s->first_index == c->nsp - 2;
	if (ok) *sel = e;
	return ok;
}

/* Is e the same value at every point of the space: constants, sizes and
   inputs of rank 0, combined? */
static int invariant(const Scan *c, int e)
{
	if (!e) return 1;
	const Expr *x = &c->m->expr[e];
	if (x->op == IR_INDEX || x->op == IR_LOAD) return 0;
	if (x->op == IR_SCALAR) return tkind(c, x->tensor) == T_INPUT;
	return invariant(c, x->a) && invariant(c, x->b) && invariant(c, x->c);
}

/* z = S * c or c * S (causal: the mask's first value), S the product read
   at the point, c invariant, in f32: the product and S's side in it, the
   factor, and its statement in *at; 0 when z is not so. The kernel folds c
   into the exponent, exp2(S c log2(e) - max), a multiply an element fewer */
static int zfold(const Scan *c, AttnPlan *at)
{
	const Module *m = c->m;
	const Stmt *s = &m->stmt[c->mx];
	int e = s->rhs;
	through(c, &e, &s);
	if (at->causal) e = m->expr[at->csel].b, through(c, &e, &s);
	const Expr *x = &m->expr[e];
	if (x->op != IR_MUL || x->type != ET_F32) return 0;
	for (int k = 1; k <= 2; k++) {
		const Expr *sv = &m->expr[k == 1 ? x->a : x->b];
		const int f = k == 1 ? x->b : x->a;
		if (sv->op != IR_LOAD || tkind(c, sv->tensor) != T_S || !at_pos(m, s, sv, c->nsp) || !invariant(c, f) ||
		    m->expr[f].type != ET_F32)
			continue;
		at->zmul = e, at->zkeep = k, at->zc = f, at->zstmt = (int)(s - m->stmt);
		return 1;
	}
	return 0;
}

static int attn_scan(Scan *c, int sid, int *v, int *end, const char **why)
{
	const Module *m = c->m;
	int looks = 0, stop = 0, j;
	for (j = sid + 1; j < c->p->last_stmt && !stop && !*why; j++)
		if (c->p->op[j - c->p->first_stmt] != STEP_INLINE) *why = classify(c, j, v, &stop, &looks);
	*end = stop ? j - 1 : j;
	if (!looks) return *why = NULL, 0;
	if (*why) return 0;
	if (c->sum < 0 || c->c2 < 0)
		return *why = "the row max is not followed by exp(z - max), its sum over n, that exponential divided by the sum, "
		              "and a tensor_eligible product of it with an input",
		       0;
	const Stmt *c1 = &m->stmt[sid], *c2 = &m->stmt[c->c2];
	Dim dh = m->index[c1->first_index + c1->nfree].range;
	if (!dim_same(dh, m->index[c2->first_index + c->nsp - 1].range))
		return *why = "V's head size is not Q's and K's (the kernel takes one head size)", 0;
	if (dh.sym < 0 && !dim_derived(dh) && dh.value > 256) return *why = "the head size is above 256", 0;
	return (*why = stays_inside(c, *end)) == NULL;
}

int plan_attention(const Module *m, const Schedule *p, int sid, Kernel *k, const char **why)
{
	const Stmt *c1 = &m->stmt[sid];
	const char *tw;
	int q, kt, bt, v = -1, end = 0;
	*why = NULL;
	if (c1->pattern != PAT_CONTRACT || !(plan_tile_batched(m, c1) || (c1->nfree == 2 && plan_matmul_swapped(m, c1) >= 0)) ||
	    !plan_tile_eligible(m, c1, &tw) || !plan_tile_operands(m, c1, &q, &kt, &bt))
		return 0;
	/* the attention kernel reads Q(b,m,d), 16-bit: a transposed Q or f32
	   (tf32) operands stay a tile kernel's */
	if (plan_tile_a_mmajor(m, c1) || m->tensor[q].type == ET_F32) return 0;
	const size_t nt = (size_t)(p->last_tensor - p->first_tensor) + 1;
	Scan c = {.m = m, .p = p, .nsp = c1->nfree, .mx = -1, .sum = -1, .c2 = -1, .kind = xcalloc(nt, 1), .writer = xcalloc(nt, sizeof(int))};
	for (int i = 0; i < c.nsp; i++) c.sp[i] = m->index[c1->first_index + i].range;
	for (int t = p->first_tensor; t < p->last_tensor; t++)
		set_kind(&c, t, m->tensor[t].kind == TK_INPUT ? T_INPUT : T_OTHER, -1);
	set_kind(&c, c1->out, T_S, sid);
	int ok = attn_scan(&c, sid, &v, &end, why);
	if (ok && !bt) ok = 0, *why = "K is read as K([b,]d,n): the kernel takes K([b,]n,d), d contiguous";
	if (ok && m->tensor[v].type != m->tensor[q].type) ok = 0, *why = "V's type is not Q's and K's";
	if (ok) {
		memset(k, 0, sizeof *k);
		k->mode = KM_ATTN, k->first_stmt = sid, k->nstmt = end - sid, k->nspace = c.nsp, k->par.block = 384;
		for (int i = 0; i < c.nsp; i++) k->space[i] = c.sp[i];
		k->at.c1 = sid, k->at.mx = c.mx, k->at.sum = c.sum, k->at.c2 = c.c2;
		k->at.q = q, k->at.k = kt, k->at.v = v, k->at.dh = m->index[c1->first_index + c1->nfree].range;
		k->at.causal = causal(&c, &k->at.csel);
		zfold(&c, &k->at);
		k->path_why = "tensor cores, one kernel for both products (FlashAttention-3's way): a block of 3 warpgroups, one "
		              "copying K and V into two or three stages of shared memory (two on mma.sync), by TMA on sm_90a for 128-column steps (the "
		              "runtime's tensor maps, its second parameter) and cp.async otherwise, two computing 64 rows of m each and "
		              "taking turns to issue their products; n walked in blocks of 128 (64 when z reads a matrix, 32 for "
		              "head sizes over 128); sm_90a wgmma, the second product of the step before in flight during this "
		              "step's softmax; sm_80 and sm_90 mma.sync with ldmatrix; f32 accumulators; the row max and sum carried "
		              "online, O rescaled when the max grows, divided by the sum at the end; exponentials in f32, the "
		              "normalised row rounded to the operands' type for the second product; no tensor over the scores' "
		              "space is stored";
	}
	free(c.kind), free(c.writer);
	return ok ? end : 0;
}

/* Does z's computation (its statements up to the row max) read an input
   over two or more axes (a mask over the scores, a value from memory a
   score)? Temps are z's own statements. */
static int z_reads_matrix(const Module *m, const Kernel *k)
{
	const Fusion *f = &m->fusion[k->fusion];
	unsigned char *mark = xcalloc((size_t)f->ntensor, 1);
	for (int sid = k->at.c1 + 1; sid <= k->at.mx; sid++) plan_mark_reads(m, &m->stmt[sid], mark, f->first_tensor);
	int r = 0;
	for (int t = f->first_tensor; t < f->first_tensor + f->ntensor; t++)
		r |= mark[t - f->first_tensor] && m->tensor[t].kind == TK_INPUT && m->tensor[t].rank >= 2;
	free(mark);
	return r;
}

/* The tensor O's work stores, if it is the only one: a 16-bit tensor over
   [(b,) m, d] written at the point, unmasked (the kernel writes O's rows
   whole, as 16-byte copies from shared memory, instead of an element a
   call); and neither the row max nor the sum stored from there. 1 + the
   tensor, or 0. */
static int rows_out(const Module *m, const Schedule *p, const Kernel *k, const unsigned char *stored)
{
	const int n = k->nspace;
	if (stored[m->stmt[k->at.mx].out - p->first_tensor] || stored[m->stmt[k->at.sum].out - p->first_tensor]) return 0;
	Dim d[MAX_IDX];
	for (int i = 0; i + 1 < n; i++) d[i] = k->space[i];
	d[n - 1] = k->at.dh;
	int x = -1;
	for (int sid = k->at.c2; sid < k->first_stmt + k->nstmt; sid++) {
		const Stmt *s = &m->stmt[sid];
		if (s->nfree != n || !stored[s->out - p->first_tensor]) continue;
		const Tensor *t = &m->tensor[s->out];
		if (x >= 0 || s->mask || (sid != k->at.c2 && s->red != RED_NONE) || (t->type != ET_F16 && t->type != ET_BF16) || t->rank != n || !plain_lhs(m, s, d, n))
			return 0;
		for (int i = 0; i < n; i++)
			if (!dim_same(t->dim[i], d[i])) return 0;
		x = s->out;
	}
	return x + 1;
}

/* Warp-specialised (attn_warps.cuh): one warpgroup copies, two compute 64 rows
   of m each and take turns to issue their products; one block an SM (the
   computing warpgroups take 224 registers a thread, the copier 56).
   Persistent: at most a block an SM, each taking tiles of 128 rows in turn
   (host/grid.c), the copier running on into the next tile's Q and first
   K and V while this one's last steps and epilogue run: at T 1024 (8
   steps a tile) a grid of a tile a block left Q's load, the rings' fill
   and O's epilogue exposed on every tile, which cuDNN's persistent kernel
   hides (bench/RESULTS.md).
   Shared memory: barriers, Q's 128 rows in two buffers up to db 128 (the
   next tile's Q lands during this one: with one, ncu on an H100 had the
   computing warps waiting for Q a tenth of their time at T 1024, db 128),
   K's and V's BN rows in stages (three at db 64 and 256: two copies in
   flight while a third is read; at db 128 two, so that Q's second buffer
   fits in 227 KB: 256/1024/128 took 0.252 ms against 0.290 with three
   stages and one Q, H100, bench/RESULTS.md; the mma.sync path takes two
   stages and Q's second buffer at db 64 only, which an A100 holds), each
   padded to db columns, 1 KB to align them for the 128-byte swizzle. BN:
   128 columns a step up to db 128 (64 when z reads a matrix such as a
   mask: its loads' registers spilled at 128), 32 at db 256 (O's 128
   registers a thread; 16 with such a mask). */
void plan_attn_launch(const Module *m, const Schedule *p, Kernel *k, const unsigned char *stored)
{
	static const int bucket[ATTN_MAX_ENTRY] = {64, 128, 256};
	const int zload = z_reads_matrix(m, k);
	const int step[ATTN_MAX_ENTRY] = {zload ? 64 : 128, zload ? 64 : 128, zload ? 16 : 32};
	k->par.block = 128 * 3, k->par.min_blocks = 1;
	k->at.block_m = 128;
	k->at.out = rows_out(m, p, k, stored);
	const Dim dh = k->at.dh;
	k->at.nent = 0;
	for (int i = 0; i < ATTN_MAX_ENTRY; i++) {
		if (dh.sym < 0 && !dim_derived(dh) && (dh.value > bucket[i] || (i > 0 && dh.value <= bucket[i - 1]))) continue;
		const int e = k->at.nent++;
		k->at.db[e] = bucket[i], k->at.bn[e] = step[i];
		k->at.st[e] = bucket[i] == 128 ? 2 : 3, k->at.nq[e] = bucket[i] <= 128 ? 2 : 1;
		k->at.smem[e] = 1024 + 256 + (k->at.nq[e] * k->at.block_m + 2 * k->at.st[e] * step[i]) * bucket[i] * 2;
		k->at.minb[e] = 1;
	}
}
