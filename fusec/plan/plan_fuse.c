/* The planner's fusion decisions: a kernel is a run of statements over
 * one space, by one kind (start_kernel); each next statement joins it or
 * starts the next one, and try_join names the rule that split them. A
 * pointwise temp over inputs is inlined; a pointwise producer a reader
 * can compute again is marked so (remat). */
#include "plan/plan_impl.h"

#include <stdlib.h>
#include <string.h>

#include "core/die.h"

static int dim_eq(Dim a, Dim b) { return dim_same(a, b); }

/* The dimensions a statement iterates as its outer points. */
static int stmt_space(const Module *m, const Stmt *s, Dim *d)
{
	int n = s->pattern == PAT_COMPACT ? s->nindex : s->nfree;
	for (int i = 0; i < n; i++) d[i] = m->index[s->first_index + i].range;
	return n;
}

static int reduced_dims(const Module *m, const Stmt *s, Dim *d)
{
	int n = 0;
	for (int i = s->nfree; i < s->nindex; i++) d[n++] = m->index[s->first_index + i].range;
	return n;
}

static int dims_eq(const Dim *a, int na, const Dim *b, int nb)
{
	if (na != nb) return 0;
	for (int i = 0; i < na; i++)
		if (!dim_eq(a[i], b[i])) return 0;
	return 1;
}

/* Is the reduced index the last subscript of every load that uses it?
 * Then a block can walk it with coalesced reads (a row kernel). */
static int inner_is_contiguous(const Module *m, const Stmt *s, int e, int ix)
{
	if (!e) return 1;
	const Expr *x = &m->expr[e];
	if (x->op == IR_LOAD)
		for (int i = 0; i < x->nargs; i++) {
			const Expr *a = &m->expr[x->args[i]];
			if (a->op == IR_INDEX && a->index == ix && i != x->nargs - 1) return 0;
			if (!inner_is_contiguous(m, s, x->args[i], ix)) return 0;
		}
	return inner_is_contiguous(m, s, x->a, ix) && inner_is_contiguous(m, s, x->b, ix) &&
	       inner_is_contiguous(m, s, x->c, ix);
}

/* Which statement of the current kernel, before `before`, first produces
 * tensor t (writes it, or compacts a list it counts), or -1. A binary
 * search over t's producers: a kernel may hold many thousand statements. */
static int producer_in(const Schedule *p, int kern, int t, int before)
{
	int lo = p->prod_at[t - p->first_tensor], hi = p->prod_at[t + 1 - p->first_tensor];
	while (lo < hi) { /* the first at or after the kernel's first statement */
		int mid = lo + (hi - lo) / 2;
		if (p->prod[mid] < p->k[kern].first_stmt) lo = mid + 1;
		else hi = mid;
	}
	return lo < p->prod_at[t + 1 - p->first_tensor] && p->prod[lo] < before ? p->prod[lo] : -1;
}

/* p->prod and p->prod_at: each tensor's producers among the fusion's statements. */
static void index_producers(const Module *m, Schedule *p)
{
	int nt = p->last_tensor - p->first_tensor;
	p->prod_at = xcalloc((size_t)nt + 2, sizeof *p->prod_at);
	int *at = p->prod_at + 1, n = 0;
	for (int pass = 0; pass < 2; pass++) {
		/* pass 0 counts each tensor's producers into at[t']; pass 1 enters them
		   (t' = t - first_tensor, as in every per-tensor array of p) */
		for (int sid = p->first_stmt; sid < p->last_stmt; sid++) {
			const Stmt *s = &m->stmt[sid];
			int c = s->pattern == PAT_COMPACT ? m->tensor[s->out].list_count : -1;
			int ts[2] = {s->out, c != s->out ? c : -1};
			for (int j = 0; j < 2 && ts[j] >= 0; j++)
				if (pass == 0) at[ts[j] - p->first_tensor]++;
				else p->prod[at[ts[j] - p->first_tensor]++] = sid;
		}
		if (pass == 0) { /* at[t']: where t's producers start */
			for (int t = 0; t < nt; t++) { int c = at[t]; at[t] = n, n += c; }
			p->prod = xcalloc((size_t)n + 1, sizeof *p->prod);
		}
	}
}

/* Do the first n subscripts of load ld name statement s's first n indices?
 * (For a reader: the load is in its own row, or at its own point.) */
static int prefix_at(const Module *m, const Stmt *s, const Expr *ld, int n)
{
	if (ld->nargs < n) return 0;
	for (int i = 0; i < n; i++) {
		const Expr *a = &m->expr[ld->args[i]];
		if (a->op != IR_INDEX || a->index != s->first_index + i) return 0;
	}
	return 1;
}

/* Recomputation inside a kernel. A pointwise, unmasked statement that does
 * not read its own output can be computed again by a reader in its kernel:
 *  - anywhere (REMAT_ANY) if everything it reads from the kernel can be too;
 *  - in the reader's own row or point (REMAT_ROW) if what else it reads
 *    from the kernel it reads at its own point, where the reader has that
 *    value in a local.
 * The planner splits a kernel where neither holds; the emitters substitute
 * a recomputable producer wherever they have no local for its value. */
enum { REMAT_NO = 0, REMAT_ROW = 1, REMAT_ANY = 2 };

static int remat_reads(const Module *m, const Schedule *p, int kern, const Stmt *P, int before, int e)
{
	if (!e) return REMAT_ANY;
	const Expr *x = &m->expr[e];
	int r = REMAT_ANY;
	if (x->op == IR_LOAD || x->op == IR_SCALAR) {
		int q = producer_in(p, kern, x->tensor, before);
		if (q >= 0) {
			const Stmt *Q = &m->stmt[q];
			int nsp = p->k[kern].nspace;
			if (p->remat[q - p->first_stmt] == REMAT_ANY) {
			} else if (p->remat[q - p->first_stmt] == REMAT_ROW && prefix_at(m, P, x, nsp)) {
				r = REMAT_ROW;
			} else if (Q->nfree == nsp && Q->pattern != PAT_COMPACT && !plan_is_grid_reduction(Q) &&
			           x->nargs == nsp && prefix_at(m, P, x, nsp)) {
				r = REMAT_ROW; /* its local at the point */
			} else {
				return REMAT_NO;
			}
		}
		for (int i = 0; i < x->nargs; i++) {
			int a = remat_reads(m, p, kern, P, before, x->args[i]);
			if (a < r) r = a;
		}
		return r;
	}
	int ops[3] = {x->a, x->b, x->c};
	for (int i = 0; i < 3; i++) {
		int a = remat_reads(m, p, kern, P, before, ops[i]);
		if (a < r) r = a;
	}
	return r;
}

static int remat_of(const Module *m, const Schedule *p, int kern, int sid)
{
	const Stmt *P = &m->stmt[sid];
	if (P->red != RED_NONE || P->pattern != PAT_MAP || P->mask || P->nindex != P->nfree) return REMAT_NO;
	if (plan_stmt_reads(m, P, P->out)) return REMAT_NO;
	return remat_reads(m, p, kern, P, sid, P->rhs);
}

static SplitRule check_loads(const Module *m, const Schedule *p, int kern, const Stmt *s, int sid, int e)
{
	if (!e) return SPLIT_NONE;
	const Expr *x = &m->expr[e];
	SplitRule r = SPLIT_NONE;
	if (x->op == IR_LOAD || x->op == IR_SCALAR) {
		int pr = producer_in(p, kern, x->tensor, sid);
		if (pr >= 0) {
			const Stmt *P = &m->stmt[pr];
			const Kernel *k = &p->k[kern];
			if (P->pattern == PAT_COMPACT) return SPLIT_NOT_AT_POINT;
			if (plan_is_grid_reduction(P)) {
				if (!plan_is_scalar_map(s)) return SPLIT_AFTER_GLOBAL;
			} else if (p->remat[pr - p->first_stmt] == REMAT_ANY || (p->remat[pr - p->first_stmt] == REMAT_ROW && prefix_at(m, s, x, k->nspace))) {
				/* pointwise: recomputed where it is read */
			} else if (!plan_load_at_point(m, s, x, k->nspace)) {
				return SPLIT_NOT_AT_POINT;
			}
		}
		for (int i = 0; i < x->nargs && !r; i++) r = check_loads(m, p, kern, s, sid, x->args[i]);
		return r;
	}
	if (!r) r = check_loads(m, p, kern, s, sid, x->a);
	if (!r) r = check_loads(m, p, kern, s, sid, x->b);
	if (!r) r = check_loads(m, p, kern, s, sid, x->c);
	return r;
}

static SplitRule stmt_loads(const Module *m, const Schedule *p, int kern, int sid)
{
	const Stmt *s = &m->stmt[sid];
	SplitRule r = check_loads(m, p, kern, s, sid, s->rhs);
	if (!r) r = check_loads(m, p, kern, s, sid, s->mask);
	for (int i = 0; i < s->nlhs && !r; i++) r = check_loads(m, p, kern, s, sid, s->lhs[i]);
	for (int i = s->first_index; i < s->first_index + s->nindex && !r; i++)
		if (m->index[i].kind == IX_RAGGED)
			r = check_loads(m, p, kern, s, sid, m->index[i].lo), r = r ? r : check_loads(m, p, kern, s, sid, m->index[i].hi);
	return r;
}

static Kernel *new_kernel(Schedule *p)
{
	if (p->nk == p->cap) {
		p->cap = p->cap ? 2 * p->cap : 8;
		p->k = xrealloc(p->k, (size_t)p->cap, sizeof *p->k);
	}
	Kernel *k = &p->k[p->nk++];
	memset(k, 0, sizeof *k);
	return k;
}

/* Do the loads of e read indices ix0 .. ix0+n-1 only as bare subscripts
 * over dimensions of their ranges, each once and in order, the last of
 * them the tensor's last axis, and in at most two runs of adjacent axes:
 * the trailing one, and a lead run of the first pat[0] indices pat[1]
 * axes before it? Then a row walks them as one flat column, a contiguous
 * segment of memory at a time (batch norm's n | c | h, w: lead 1, gap 1;
 * a group norm's trailing (cg, hw): 0, 0). Every load gives the same pat
 * (-1, -1 before the first). */
static int row_axes(const Module *m, int e, int ix0, int n, int pat[2])
{
	if (!e) return 1;
	const Expr *x = &m->expr[e];
	if (x->op == IR_INDEX) return 1; /* a value: bound from the flat column */
	if (x->op != IR_LOAD) return row_axes(m, x->a, ix0, n, pat) && row_axes(m, x->b, ix0, n, pat) && row_axes(m, x->c, ix0, n, pat);
	int pos[ROW_MAX_INNER], hit = 0;
	for (int j = 0; j < n; j++) pos[j] = -1;
	for (int i = 0; i < x->nargs; i++) {
		const Expr *a = &m->expr[x->args[i]];
		if (a->op == IR_INDEX && a->index >= ix0 && a->index < ix0 + n) {
			const int j = a->index - ix0;
			if (pos[j] >= 0 || !dim_same(m->tensor[x->tensor].dim[i], m->index[a->index].range)) return 0;
			pos[j] = i, hit = 1;
			continue;
		}
		for (int j = 0; j < n; j++)
			if (ir_expr_uses_index(m, x->args[i], ix0 + j)) return 0;
	}
	if (!hit) return 1;
	for (int j = 0; j < n; j++)
		if (pos[j] < 0 || (j && pos[j] <= pos[j - 1])) return 0;
	if (pos[n - 1] != x->nargs - 1) return 0;
	int t = 1; /* the trailing run */
	while (t < n && pos[n - 1 - t] == x->nargs - 1 - t) t++;
	const int lead = n - t, gap = lead ? pos[lead] - pos[lead - 1] - 1 : 0;
	for (int j = 1; j < lead; j++)
		if (pos[j] != pos[j - 1] + 1) return 0;
	if (pat[0] < 0) pat[0] = lead, pat[1] = gap;
	return pat[0] == lead && pat[1] == gap;
}

/* A reduction a row kernel does: over 1..ROW_MAX_INNER dense indices its
   loads read as row_axes says (pat: its lead and gap). Returns how many. */
static int row_reduction_at(const Module *m, const Stmt *s, int pat[2])
{
	const int ix = s->first_index + s->nfree, nr = s->nindex - s->nfree;
	pat[0] = pat[1] = 0;
	if (nr < 1 || nr > ROW_MAX_INNER || (s->pattern != PAT_REDUCE && s->pattern != PAT_CONTRACT) ||
	    (s->red != RED_SUM && s->red != RED_MAX && s->red != RED_MIN))
		return 0;
	for (int i = 0; i < nr; i++)
		if (m->index[ix + i].kind != IX_DENSE) return 0;
	if (nr == 1) return inner_is_contiguous(m, s, s->rhs, ix) && inner_is_contiguous(m, s, s->mask, ix);
	pat[0] = pat[1] = -1;
	int ok = row_axes(m, s->rhs, ix, nr, pat) && row_axes(m, s->mask, ix, nr, pat);
	if (pat[0] < 0) pat[0] = pat[1] = 0; /* no load reads them: a sum of their values */
	return ok ? nr : 0;
}

/* A pointwise statement over [rows, C] whose next statement reduces each
   row over C reading it (a residual add before a norm): the row kernel
   starts here and takes it as an element of the row, written by the walk
   (or recomputed where it is read), not a kernel of its own that stores it
   for the row kernel to read again. Returns that next statement, or sid. */
static int row_ahead(const Module *m, const Schedule *p, int sid)
{
	const Stmt *s = &m->stmt[sid];
	if (s->pattern != PAT_MAP || s->red != RED_NONE || s->mask || s->nfree < 2 || s->nindex != s->nfree) return sid;
	int n = sid + 1;
	while (n < p->last_stmt && p->op[n - p->first_stmt] == STEP_INLINE) n++;
	if (n == p->last_stmt) return sid;
	const Stmt *r = &m->stmt[n];
	int pat[2];
	const int nr = row_reduction_at(m, r, pat);
	if (!nr || pat[0] || /* a row in segments takes no elements */ r->nfree != s->nfree - nr || !plan_stmt_reads(m, r, s->out)) return sid;
	for (int i = 0; i < s->nfree; i++)
		if (!dim_eq(m->index[s->first_index + i].range, m->index[r->first_index + i].range)) return sid;
	return n;
}

static void start_kernel(const Module *m, Schedule *p, int fusion, int sid, int fused)
{
	Kernel *k = new_kernel(p);
	const int first = sid;
	if (fused) sid = row_ahead(m, p, sid); /* the kernel's kind and space: the row reduction's */
	const Stmt *s = &m->stmt[sid];
	k->fusion = fusion, k->first_stmt = first;
	k->par.block = 256;
	if (s->pattern == PAT_CONTRACT && s->nfree == 3 && (m->stage[s->stage].attrs & ATTR(TENSOR_ELIGIBLE)) && !plan_tile_batched(m, s))
		k->path_why = "CUDA cores: a contraction over three free indices goes on tensor cores only as a batched product, "
		              "C(b,m,n) +=! A(b,m,k) * B(b,k,n) or B(b,n,k), the batch index first in both operands";
	if (s->pattern == PAT_SCATTER) {
		k->mode = KM_SCATTER;
	} else if (s->pattern == PAT_CONTRACT && s->nfree == 2 && plan_matmul_swapped(m, s) >= 0) {
		k->mode = plan_tile_eligible(m, s, &k->path_why) ? KM_TILE : KM_MATMUL;
		k->nspace = stmt_space(m, s, k->space);
	} else if (plan_tile_batched(m, s) && plan_tile_eligible(m, s, &k->path_why)) {
		k->mode = KM_TILE;
		k->nspace = stmt_space(m, s, k->space);
	} else if (plan_is_scalar_map(s)) {
		k->mode = KM_SCALAR, k->par.block = 32;
	} else if (plan_is_grid_reduction(s)) {
		k->mode = KM_POINT, k->has_tail = 1;
		k->nspace = reduced_dims(m, s, k->space);
	} else {
		k->mode = KM_POINT;
		k->nspace = stmt_space(m, s, k->space);
		int pat[2];
		if ((k->ninner = row_reduction_at(m, s, pat))) {
			k->mode = KM_ROW, k->lead = pat[0], k->gap = pat[1];
			for (int i = 0; i < k->ninner; i++) k->inner[i] = m->index[s->first_index + s->nfree + i].range;
		}
	}
	k->nstmt = 1;
}

/* Does e, read by statement sid, depend on a reduction over an outer axis
 * of kernel kern (directly, or through the kernel's pointwise producers)?
 * Such a reduction is folded across blocks (KernelParams.split): a
 * reduction reading it needs every block's partials, so a kernel of its
 * own. seen[] marks the producers walked (each once). */
static int reads_outer(const Module *m, const Schedule *p, int kern, int sid, int e, unsigned char *seen)
{
	if (!e) return 0;
	const Expr *x = &m->expr[e];
	if (x->op == IR_LOAD || x->op == IR_SCALAR) {
		int pr = producer_in(p, kern, x->tensor, sid);
		if (pr >= 0 && !seen[pr - p->first_stmt]) {
			const Stmt *P = &m->stmt[pr];
			seen[pr - p->first_stmt] = 1;
			if (plan_outer_reduction(m, P)) return 1;
			if (P->red == RED_NONE && (reads_outer(m, p, kern, pr, P->rhs, seen) || reads_outer(m, p, kern, pr, P->mask, seen)))
				return 1;
		}
		for (int i = 0; i < x->nargs; i++)
			if (reads_outer(m, p, kern, sid, x->args[i], seen)) return 1;
		return 0;
	}
	return reads_outer(m, p, kern, sid, x->a, seen) || reads_outer(m, p, kern, sid, x->b, seen) ||
	       reads_outer(m, p, kern, sid, x->c, seen);
}

static int reduction_after_outer(const Module *m, const Schedule *p, int kern, int sid)
{
	const Stmt *s = &m->stmt[sid];
	if (s->red < RED_SUM || s->red > RED_KMIN || plan_is_grid_reduction(s)) return 0;
	unsigned char *seen = xcalloc((size_t)(p->last_stmt - p->first_stmt) + 1, 1);
	int r = reads_outer(m, p, kern, sid, s->rhs, seen) || reads_outer(m, p, kern, sid, s->mask, seen);
	free(seen);
	return r;
}

/* Can statement sid join kernel k? Updates k when it can. */
static SplitRule try_join(const Module *m, Schedule *p, int kern, int sid, int *tail_closed, int outer)
{
	Kernel *k = &p->k[kern];
	const Stmt *s = &m->stmt[sid];
	Dim sp[MAX_IDX], rd[MAX_IDX];
	int nsp = stmt_space(m, s, sp), nrd = reduced_dims(m, s, rd), pair = -1;
	if (k->mode == KM_ATTN) return SPLIT_ATTN_END; /* plan_attention took what it can */
	if (s->pattern == PAT_SCATTER || k->mode == KM_SCATTER) return SPLIT_SCATTER;
	if (s->pattern == PAT_CONTRACT && s->nfree == 2 && plan_matmul_swapped(m, s) >= 0) return SPLIT_MATMUL_IN;
	if (plan_tile_batched(m, s)) return SPLIT_MATMUL_IN;
	if (k->mode == KM_MATMUL || k->mode == KM_TILE) {
		if (s->red != RED_NONE || !dims_eq(sp, nsp, k->space, k->nspace)) return SPLIT_MATMUL_EPI;
	} else if (k->mode == KM_SCALAR) {
		if (!plan_is_scalar_map(s)) return SPLIT_SPACE;
	} else if (k->has_tail) {
		if (!plan_is_scalar_map(s)) {
			if (plan_is_grid_reduction(s) && !*tail_closed && dims_eq(rd, nrd, k->space, k->nspace)) {
				/* several whole-grid reductions fold together */
			} else if (k->mode == KM_POINT && s->red == RED_NONE && s->pattern == PAT_MAP && !*tail_closed &&
			           dims_eq(sp, nsp, k->space, k->nspace)) {
				/* a map over the kernel's points runs in its loop, before
				   the tail, when it reads no reduction of the kernel
				   (stmt_loads refuses one): an MSE's gradient beside its
				   loss took a second launch (small_mse_grad, 1.6x
				   torch.compile at N = 4096, H100) */
			} else {
				return *tail_closed && plan_is_grid_reduction(s) ? SPLIT_TAIL_TWICE : SPLIT_AFTER_GLOBAL;
			}
		}
	} else if (plan_is_grid_reduction(s)) {
		if (!dims_eq(rd, nrd, k->space, k->nspace)) return SPLIT_SPACE;
		/* a whole-grid fold would keep the outer reduction from being split
		   over blocks (active_inference_step at 65536 x 1024: 0.33 ms fused,
		   0.16 unfused, H200): the sum gets a kernel of its own */
		if (outer) return SPLIT_OUTER_TAIL;
	} else if (plan_is_scalar_map(s)) {
		return SPLIT_SPACE;
	} else if (k->mode == KM_ROW) {
		int pat[2];
		/* a row in segments (lead): its elements are not the statement's last axes */
		int row_el = !k->lead && nsp == k->nspace + k->ninner && dims_eq(sp, k->nspace, k->space, k->nspace) &&
		             dims_eq(sp + k->nspace, k->ninner, k->inner, k->ninner);
		int at_row = dims_eq(sp, nsp, k->space, k->nspace);
		if (s->red == RED_NONE && !(row_el || at_row)) return SPLIT_ROW_MODE;
		if (s->pattern == PAT_COMPACT && !at_row) return SPLIT_ROW_MODE;
		if (s->red >= RED_SUM && s->red <= RED_KMIN &&
		    !(at_row && dims_eq(rd, nrd, k->inner, k->ninner) && s->red != RED_KMIN && s->pattern != PAT_PAIRWISE &&
		      (k->ninner == 1 || (row_reduction_at(m, s, pat) == k->ninner && pat[0] == k->lead && pat[1] == k->gap))))
			return SPLIT_ROW_MODE;
		if (s->red == RED_ACCUM) return SPLIT_ROW_MODE;
	} else { /* POINT */
		if (!dims_eq(sp, nsp, k->space, k->nspace)) return SPLIT_POINT_MODE;
		if (outer && k->shift_sq && s->red != RED_NONE) return SPLIT_OUTER_FOLD; /* one loop, two sums: nothing more */
		/* the squares about the first reduction's mean: its loop's too (plan_shift.c) */
		if (outer && reduction_after_outer(m, p, kern, sid) && (pair = plan_shift_partner(m, p, k, sid)) < 0) return SPLIT_OUTER_FOLD;
	}
	SplitRule r = stmt_loads(m, p, kern, sid);
	if (r) return r;
	if (pair >= 0) k->shift_sum = pair, k->shift_sq = sid;
	if (plan_is_grid_reduction(s)) k->has_tail = 1;
	if (k->has_tail && plan_is_scalar_map(s)) *tail_closed = 1;
	k->nstmt = sid - k->first_stmt + 1; /* statements inlined since lie inside the range */
	return SPLIT_NONE;
}

/* A pointwise temp over inputs (or over other such temps) needs no kernel
 * and no memory: each reader recomputes it from its subscripts. This is
 * what keeps the N x N distances of a pairwise chain off the device. */
static int inlinable(const Module *m, const Schedule *p, int sid, int e)
{
	if (!e) return 1;
	const Expr *x = &m->expr[e];
	if (x->op == IR_LOAD || x->op == IR_SCALAR) {
		const Tensor *t = &m->tensor[x->tensor];
		if (t->kind != TK_INPUT) {
			int ok = 0;
			for (int u = 0; u < sid; u++)
				if (m->stmt[u].out == x->tensor && p->op[u - p->first_stmt] == STEP_INLINE) ok = 1;
			if (!ok) return 0;
		}
		for (int i = 0; i < x->nargs; i++)
			if (!inlinable(m, p, sid, x->args[i])) return 0;
		return 1;
	}
	return inlinable(m, p, sid, x->a) && inlinable(m, p, sid, x->b) && inlinable(m, p, sid, x->c);
}

/* A row kernel started ahead at a pointwise statement (row_ahead) whose
   row reduction then did not join it: the statement alone over [rows, C]
   is a point kernel after all */
static void unstart_row(const Module *m, Schedule *p, int fusion)
{
	const Kernel *k = &p->k[p->nk - 1];
	const int first = k->first_stmt;
	if (k->mode != KM_ROW || k->nstmt != 1 || m->stmt[first].nfree != k->nspace + k->ninner) return;
	p->nk--;
	start_kernel(m, p, fusion, first, 0);
}

/* Two contractions around a row softmax from sid: one attention kernel
 * (plan_attn.c) over the run, whose first statement split from the
 * kernel before by rule r. Returns the statement after the run, or 0 and
 * in *why why not, where the run looked like one (else NULL). */
static int attention(const Module *m, Schedule *p, int fusion, int sid, SplitRule r, const char **why)
{
	Kernel k;
	int end = plan_attention(m, p, sid, &k, why);
	if (!end) return 0;
	k.fusion = fusion;
	*new_kernel(p) = k;
	for (int u = sid; u < end; u++) {
		if (p->op[u - p->first_stmt] == STEP_INLINE) continue;
		p->why[u - p->first_stmt] = u == sid && p->nk > 1 ? r : SPLIT_NONE;
		p->stmt_kernel[u - p->first_stmt] = p->nk - 1;
		p->remat[u - p->first_stmt] = (unsigned char)remat_of(m, p, p->nk - 1, u);
	}
	return end;
}

void plan_group(const Module *m, Schedule *p, int fusion, int fused)
{
	int first = p->first_stmt, last = p->last_stmt;
	int tail_closed = 0, outer = 0; /* the last kernel: folded its whole-grid sums; holds a reduction over an outer axis */
	index_producers(m, p);
	for (int sid = first; sid < last && fused; sid++) {
		const Stmt *s = &m->stmt[sid];
		const Tensor *t = &m->tensor[s->out];
		if (s->pattern == PAT_MAP && s->red == RED_NONE && !s->mask && t->kind == TK_TEMP &&
		    !t->zero_init && inlinable(m, p, sid, s->rhs))
			p->op[sid - p->first_stmt] = STEP_INLINE;
	}
	int any = 0;
	for (int sid = first; sid < last; sid++) {
		SplitRule r = SPLIT_NONE;
		if (p->op[sid - p->first_stmt] == STEP_INLINE) {
			p->stmt_kernel[sid - p->first_stmt] = -1;
			p->remat[sid - p->first_stmt] = REMAT_ANY;
			continue;
		}
		if (!any) r = SPLIT_SPACE, any = 1;
		else if (!fused && m->stmt[sid].stage != m->stmt[sid - 1].stage) r = SPLIT_UNFUSED;
		else r = try_join(m, p, p->nk - 1, sid, &tail_closed, outer);
		if (r != SPLIT_NONE) {
			const char *why = NULL;
			if (p->nk > 0) unstart_row(m, p, fusion);
			int end = fused ? attention(m, p, fusion, sid, r, &why) : 0;
			if (end) { /* the whole run is one kernel */
				sid = end - 1;
				continue;
			}
			start_kernel(m, p, fusion, sid, fused);
			p->k[p->nk - 1].attn_why = why;
			tail_closed = outer = 0;
		}
		outer |= p->k[p->nk - 1].mode == KM_POINT && plan_outer_reduction(m, &m->stmt[sid]);
		p->why[sid - p->first_stmt] = p->nk == 1 && r ? SPLIT_NONE : r;
		p->stmt_kernel[sid - p->first_stmt] = p->nk - 1;
		p->remat[sid - p->first_stmt] = (unsigned char)remat_of(m, p, p->nk - 1, sid);
	}
}
