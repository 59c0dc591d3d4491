/* The planner: groups statements into kernels (try_join says why not),
 * then fills in the rest of the schedule: each statement's step, the
 * storage of every tensor, resets, launch parameters and names. */
#include "plan.h"

#include <stdlib.h>
#include <string.h>

#include "die.h"
#include "namer.h"

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

/* A rank-0 sum, max or min over the space: folded across the whole grid.
 * (A rank-0 kmin is left to one thread: it needs no grid-wide merge.) */
int plan_is_grid_reduction(const Stmt *s)
{
	return s->nfree == 0 && s->nindex > 0 && s->red >= RED_SUM && s->red <= RED_MIN;
}

/* The operands' order in a contraction over (i0, i1) reducing k: 0 when the
 * first operand carries i0 and the second i1, 1 when the other way round,
 * -1 when neither. */
static int operand_over(const Module *m, int x, int with, int without, int k)
{
	return expr_uses_index(m, x, with) && !expr_uses_index(m, x, without) && expr_uses_index(m, x, k);
}
static int operand_order(const Module *m, const Stmt *s, int i0, int i1, int k)
{
	int a = s->contract_a, b = s->contract_b;
	if (operand_over(m, a, i0, i1, k) && operand_over(m, b, i1, i0, k)) return 0;
	if (operand_over(m, b, i0, i1, k) && operand_over(m, a, i1, i0, k)) return 1;
	return -1;
}

int plan_matmul_swapped(const Module *m, const Stmt *s)
{
	return operand_order(m, s, s->first_index, s->first_index + 1, s->first_index + 2);
}

int plan_is_scalar_map(const Stmt *s) { return s->nindex == 0 && s->red == RED_NONE; }

/* Is load e the input tensor read plainly as X(i, j), row-major? */
static int plain_load(const Module *m, int e, int i, int j)
{
	const Expr *x = &m->expr[e];
	if (x->op != IR_LOAD || x->nargs != 2 || m->tensor[x->tensor].kind != TK_INPUT) return 0;
	const Expr *a = &m->expr[x->args[0]], *b = &m->expr[x->args[1]];
	return a->op == IR_INDEX && a->index == i && b->op == IR_INDEX && b->index == j;
}

static int input_load(const Module *m, int e)
{
	return m->expr[e].op == IR_LOAD && m->tensor[m->expr[e].tensor].kind == TK_INPUT;
}

/* The same, X(b, i, j), for a batched operand (b >= 0) */
static int plain_load_b(const Module *m, int e, int b, int i, int j)
{
	if (b < 0) return plain_load(m, e, i, j);
	const Expr *x = &m->expr[e];
	if (x->op != IR_LOAD || x->nargs != 3 || m->tensor[x->tensor].kind != TK_INPUT) return 0;
	const Expr *a0 = &m->expr[x->args[0]], *a = &m->expr[x->args[1]], *c = &m->expr[x->args[2]];
	return a0->op == IR_INDEX && a0->index == b && a->op == IR_INDEX && a->index == i && c->op == IR_INDEX && c->index == j;
}

/* A contraction's indices as the tile template sees them: C(m,n), or
 * batched C(b,m,n) (ib >= 0), reducing k; sw: the operands come as (B, A). */
typedef struct TileIdx { int ib, im, in, kx, sw; } TileIdx;

static TileIdx tile_idx(const Module *m, const Stmt *s)
{
	TileIdx t;
	int batched = s->nfree == 3;
	t.ib = batched ? s->first_index : -1, t.im = s->first_index + batched, t.in = t.im + 1, t.kx = t.in + 1;
	t.sw = operand_order(m, s, t.im, t.in, t.kx);
	return t;
}

/* A batched matrix contraction C(b,m,n) +=! A(b,m,k) * B(b,k,n) in a
 * tensor_eligible stage: both operands carry the batch index. Only these
 * are planned as TILE kernels (when the tensor cores take them); other
 * contractions over three free indices stay point kernels. */
int plan_tile_batched(const Module *m, const Stmt *s)
{
	if (s->pattern != PAT_CONTRACT || s->nfree != 3 || s->nindex != 4 || !(m->stage[s->stage].attrs & ATTR(TENSOR_ELIGIBLE)))
		return 0;
	TileIdx t = tile_idx(m, s);
	return t.sw >= 0 && expr_uses_index(m, s->contract_a, t.ib) && expr_uses_index(m, s->contract_b, t.ib);
}

/* Is a tile kernel's B read as B(n,k), k contiguous (x W^T)? */
static int tile_b_kmajor(const Module *m, const Stmt *s)
{
	TileIdx t = tile_idx(m, s);
	return plain_load_b(m, t.sw ? s->contract_a : s->contract_b, t.ib, t.in, t.kx);
}

/* A matrix contraction goes to the tensor-core tile template when its stage
 * asks (tensor_eligible) and the operands are what the tensor cores take:
 * two input matrices of one 16-bit float type read as A(m,k) and B(k,n) or
 * B(n,k) (batched: A(b,m,k) and B(b,k,n) or B(b,n,k)), accumulated in f32,
 * unmasked. Otherwise the CUDA-core tile kernel (batched: a point kernel);
 * *why says which, for --explain. */
static int tile_eligible(const Module *m, const Stmt *s, const char **why)
{
	TileIdx x = tile_idx(m, s);
	int ib = x.ib, i0 = x.im, i1 = x.in, kx = x.kx;
	int ea = x.sw ? s->contract_b : s->contract_a, eb = x.sw ? s->contract_a : s->contract_b;
	ElemType ta = m->expr[ea].op == IR_LOAD ? m->tensor[m->expr[ea].tensor].type : ET_N;
	ElemType tb = m->expr[eb].op == IR_LOAD ? m->tensor[m->expr[eb].tensor].type : ET_N;
	int bt = plain_load_b(m, eb, ib, i1, kx);
	if (!(m->stage[s->stage].attrs & ATTR(TENSOR_ELIGIBLE))) *why = "CUDA cores: the stage is not marked tensor_eligible";
	else if (s->nindex != s->nfree + 1 || s->red != RED_SUM || s->mask) *why = "CUDA cores: not a plain sum over one index (masked contractions are not on tensor cores)";
	else if (!input_load(m, ea) || !input_load(m, eb))
		*why = "CUDA cores: an operand is an intermediate, not an input matrix (a prologue on an operand is not on "
		       "tensor cores yet: the loaders copy inputs to shared memory as they are stored)";
	else if (plain_load_b(m, ea, ib, kx, i0) && (plain_load_b(m, eb, ib, kx, i1) || bt))
		*why = "CUDA cores: A is read as A(k,m) (m contiguous); tensor cores take A(m,k) with B(k,n) or B(n,k) "
		       "(wgmma and ldmatrix could read A transposed, but the tile loaders and the runtime's tensor map for A "
		       "take rows of k: not generated)";
	else if (!plain_load_b(m, ea, ib, i0, kx) || !(plain_load_b(m, eb, ib, kx, i1) || bt))
		*why = ib >= 0 ? "CUDA cores: the operands are not read plainly as A(b,m,k) and B(b,k,n) or B(b,n,k)"
		               : "CUDA cores: the operands are not read plainly as A(m,k) and B(k,n) or B(n,k)";
	else if (ta != tb || (ta != ET_F16 && ta != ET_BF16))
		*why = "CUDA cores: tensor cores take f16 or bf16 operands of one type (f32 would need tf32, which no spec can ask "
		       "for yet and the tile template does not generate)";
	else if (m->stage[s->stage].precision != ET_F32) *why = "CUDA cores: tensor cores accumulate in f32, the stage asks for another precision";
	else {
		static const char *const path[2][2] = {
			{"tensor cores: sm_90a wgmma fed by TMA (plain loads when a row or pointer is not 16-byte aligned), "
			 "one loading and two multiplying warpgroups; sm_80 and sm_90 mma.sync with ldmatrix; f32 accumulators",
			 "tensor cores, B read as B(n,k): sm_90a wgmma fed by TMA (plain loads when a row or pointer is not 16-byte aligned), "
			 "one loading and two multiplying warpgroups; sm_80 and sm_90 mma.sync with ldmatrix; f32 accumulators"},
			{"tensor cores, batched (the persistent grid walks every batch's tiles): sm_90a wgmma fed by TMA (plain loads when "
			 "a row or pointer is not 16-byte aligned, or B(b,k,n) with K not a multiple of 64), one loading and two multiplying "
			 "warpgroups; sm_80 and sm_90 mma.sync with ldmatrix; f32 accumulators",
			 "tensor cores, batched (the persistent grid walks every batch's tiles), B read as B(b,n,k): sm_90a wgmma fed by TMA "
			 "(plain loads when a row or pointer is not 16-byte aligned), one loading and two multiplying warpgroups; sm_80 and "
			 "sm_90 mma.sync with ldmatrix; f32 accumulators"}};
		*why = path[ib >= 0][bt];
		return 1;
	}
	return 0;
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

/* Which statement of the current kernel writes tensor t, or -1. */
static int producer_in(const Module *m, const Schedule *p, int kern, int t, int before)
{
	const Kernel *k = &p->k[kern];
	for (int i = k->first_stmt; i < before; i++)
		if (m->stmt[i].out == t || (m->tensor[m->stmt[i].out].list_count == t && m->stmt[i].pattern == PAT_COMPACT))
			return i;
	return -1;
}

/* Are a load's subscripts exactly the statement's free indices, i.e. the
 * value at the current point? For a tail reduction, its reduced indices. */
static int load_at_point(const Module *m, const Stmt *s, const Expr *ld, int nspace)
{
	if (ld->nargs != nspace) return 0;
	for (int i = 0; i < ld->nargs; i++) {
		const Expr *a = &m->expr[ld->args[i]];
		if (a->op != IR_INDEX || a->index != s->first_index + i) return 0;
	}
	return 1;
}

/* Does expression e read tensor t only at the statement's own point? */
static int reads_only_at_point(const Module *m, const Stmt *s, int e, int t, int nspace)
{
	if (!e) return 1;
	const Expr *x = &m->expr[e];
	if (x->op == IR_LOAD && x->tensor == t && !load_at_point(m, s, x, nspace)) return 0;
	for (int i = 0; i < x->nargs; i++)
		if (!reads_only_at_point(m, s, x->args[i], t, nspace)) return 0;
	return reads_only_at_point(m, s, x->a, t, nspace) && reads_only_at_point(m, s, x->b, t, nspace) &&
	       reads_only_at_point(m, s, x->c, t, nspace);
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
		int q = producer_in(m, p, kern, x->tensor, before);
		if (q >= 0) {
			const Stmt *Q = &m->stmt[q];
			int nsp = p->k[kern].nspace;
			if (p->remat[q] == REMAT_ANY) {
			} else if (p->remat[q] == REMAT_ROW && prefix_at(m, P, x, nsp)) {
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
		int pr = producer_in(m, p, kern, x->tensor, sid);
		if (pr >= 0) {
			const Stmt *P = &m->stmt[pr];
			const Kernel *k = &p->k[kern];
			if (P->pattern == PAT_COMPACT) return SPLIT_NOT_AT_POINT;
			if (plan_is_grid_reduction(P)) {
				if (!plan_is_scalar_map(s)) return SPLIT_AFTER_GLOBAL;
			} else if (p->remat[pr] == REMAT_ANY || (p->remat[pr] == REMAT_ROW && prefix_at(m, s, x, k->nspace))) {
				/* pointwise: recomputed where it is read */
			} else if (!load_at_point(m, s, x, k->nspace)) {
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

static void start_kernel(const Module *m, Schedule *p, int fusion, int sid, int fused)
{
	if (p->nk == p->cap) {
		p->cap = p->cap ? 2 * p->cap : 8;
		p->k = xrealloc(p->k, (size_t)p->cap, sizeof *p->k);
	}
	Kernel *k = &p->k[p->nk++];
	memset(k, 0, sizeof *k);
	const Stmt *s = &m->stmt[sid];
	k->fusion = fusion, k->first_stmt = sid;
	(void)fused;
	k->par.block = 256;
	if (s->pattern == PAT_CONTRACT && s->nfree == 3 && (m->stage[s->stage].attrs & ATTR(TENSOR_ELIGIBLE)) && !plan_tile_batched(m, s))
		k->path_why = "CUDA cores: a contraction over three free indices goes on tensor cores only as a batched product, "
		              "C(b,m,n) +=! A(b,m,k) * B(b,k,n) or B(b,n,k), the batch index first in both operands";
	if (s->pattern == PAT_SCATTER) {
		k->mode = KM_SCATTER;
	} else if (s->pattern == PAT_CONTRACT && s->nfree == 2 && plan_matmul_swapped(m, s) >= 0) {
		k->mode = tile_eligible(m, s, &k->path_why) ? KM_TILE : KM_MATMUL;
		k->nspace = stmt_space(m, s, k->space);
	} else if (plan_tile_batched(m, s) && tile_eligible(m, s, &k->path_why)) {
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
		int nred = s->nindex - s->nfree;
		int ix = s->first_index + s->nfree;
		if (nred == 1 && (s->pattern == PAT_REDUCE || s->pattern == PAT_CONTRACT) &&
		    (s->red == RED_SUM || s->red == RED_MAX || s->red == RED_MIN) &&
		    m->index[ix].kind == IX_DENSE && inner_is_contiguous(m, s, s->rhs, ix) &&
		    inner_is_contiguous(m, s, s->mask, ix)) {
			k->mode = KM_ROW, k->has_inner = 1, k->inner = m->index[ix].range;
		}
	}
	k->nstmt = 1;
}

/* Can statement sid join kernel k? Updates k when it can. */
static SplitRule try_join(const Module *m, Schedule *p, int kern, int sid, int *tail_closed)
{
	Kernel *k = &p->k[kern];
	const Stmt *s = &m->stmt[sid];
	Dim sp[MAX_IDX], rd[MAX_IDX];
	int nsp = stmt_space(m, s, sp), nrd = reduced_dims(m, s, rd);
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
			} else {
				return *tail_closed && plan_is_grid_reduction(s) ? SPLIT_TAIL_TWICE : SPLIT_AFTER_GLOBAL;
			}
		}
	} else if (plan_is_grid_reduction(s)) {
		if (!dims_eq(rd, nrd, k->space, k->nspace)) return SPLIT_SPACE;
	} else if (plan_is_scalar_map(s)) {
		return SPLIT_SPACE;
	} else if (k->mode == KM_ROW) {
		int row_el = nsp == k->nspace + 1 && dims_eq(sp, k->nspace, k->space, k->nspace) && dim_eq(sp[nsp - 1], k->inner);
		int at_row = dims_eq(sp, nsp, k->space, k->nspace);
		if (s->red == RED_NONE && !(row_el || at_row)) return SPLIT_ROW_MODE;
		if (s->pattern == PAT_COMPACT && !at_row) return SPLIT_ROW_MODE;
		if (s->red >= RED_SUM && s->red <= RED_KMIN &&
		    !(at_row && nrd == 1 && dim_eq(rd[0], k->inner) && s->red != RED_KMIN && s->pattern != PAT_PAIRWISE))
			return SPLIT_ROW_MODE;
		if (s->red == RED_ACCUM) return SPLIT_ROW_MODE;
	} else { /* POINT */
		if (!dims_eq(sp, nsp, k->space, k->nspace)) return SPLIT_POINT_MODE;
	}
	SplitRule r = stmt_loads(m, p, kern, sid);
	if (r) return r;
	if (plan_is_grid_reduction(s)) k->has_tail = 1;
	if (k->has_tail && plan_is_scalar_map(s)) *tail_closed = 1;
	k->nstmt = sid - k->first_stmt + 1; /* statements inlined since lie inside the range */
	return SPLIT_NONE;
}

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
				if (m->stmt[u].out == x->tensor && p->op[u] == STEP_INLINE) ok = 1;
			if (!ok) return 0;
		}
		for (int i = 0; i < x->nargs; i++)
			if (!inlinable(m, p, sid, x->args[i])) return 0;
		return 1;
	}
	return inlinable(m, p, sid, x->a) && inlinable(m, p, sid, x->b) && inlinable(m, p, sid, x->c);
}

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
static void assign_steps(const Module *m, Schedule *p, const unsigned char *stored)
{
	for (int i = 0; i < p->nk; i++) {
		Kernel *k = &p->k[i];
		int epi = -1;
		for (int sid = k->first_stmt; sid < k->first_stmt + k->nstmt; sid++) {
			const Stmt *s = &m->stmt[sid];
			if (p->op[sid] == STEP_INLINE) continue; /* computed where it is read */
			StepOp op;
			switch (k->mode) {
			case KM_SCATTER: op = STEP_SCATTER; break;
			case KM_SCALAR: op = STEP_SCALAR; break;
			case KM_MATMUL:
			case KM_TILE: op = sid == k->first_stmt ? STEP_CONTRACT : STEP_MAP; break;
			default:
				if (plan_is_scalar_map(s)) op = STEP_EPILOGUE;
				else if (plan_is_grid_reduction(s)) op = STEP_GRID_REDUCE;
				else if (s->pattern == PAT_COMPACT) op = STEP_COMPACT;
				else if (s->red >= RED_SUM && s->red <= (k->mode == KM_ROW ? RED_MIN : RED_KMIN)) op = STEP_REDUCE;
				else if (k->mode == KM_POINT) op = s->red == RED_ACCUM ? STEP_ACCUM : STEP_MAP;
				else if (s->nfree == k->nspace) op = s->red == RED_ACCUM ? STEP_ACCUM : STEP_MAP;
				else op = stored[s->out] ? STEP_ROW_ELEM : STEP_ROW_ONCHIP;
			}
			p->op[sid] = op;
			if (op == STEP_EPILOGUE && epi < 0) epi = sid;
		}
		for (int sid = k->first_stmt; sid < k->first_stmt + k->nstmt; sid++) {
			if (p->op[sid] != STEP_REDUCE) continue;
			int n = merge_run(m, k, sid);
			p->merge[sid] = n;
			sid += n - 1;
		}
		int end = k->first_stmt + k->nstmt, main_end = epi >= 0 ? epi : end;
		k->nphase = 1;
		k->phase[0] = (Phase){.kind = k->mode, .first_stmt = k->first_stmt, .nstmt = main_end - k->first_stmt,
		                      .after = k->has_tail ? BAR_GRID_FOLD : BAR_NONE};
		if (epi >= 0) k->phase[k->nphase++] = (Phase){.kind = KM_SCALAR, .first_stmt = epi, .nstmt = end - epi};
		for (int sid = k->first_stmt; sid < end; sid++) k->ntail += p->op[sid] == STEP_GRID_REDUCE;
	}
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
			if (p->stmt_kernel[sid] != i && p->op[sid] != STEP_INLINE)
				die("plan: statement %d lies in kernel %s's range but belongs to kernel %d", sid, p->k[i].name, p->stmt_kernel[sid]);
}

static void build(const Module *m, int fusion, int fused, Target target, Schedule *p)
{
	memset(p, 0, sizeof *p);
	p->target = target, p->fused = fused, p->variant = fused ? 'f' : 'u', p->fusion = fusion;
	size_t ns = (size_t)m->nstmt + 1, nt = (size_t)m->ntensor + 1;
	p->why = xcalloc(ns, sizeof *p->why);
	p->stmt_kernel = xcalloc(ns, sizeof *p->stmt_kernel);
	p->op = xcalloc(ns, sizeof *p->op);
	p->merge = xcalloc(ns, sizeof *p->merge);
	p->remat = xcalloc(ns, 1);
	p->storage = xcalloc(nt, sizeof *p->storage);
	p->writer = xcalloc(nt, sizeof *p->writer);
	p->reset_by = xcalloc(nt, sizeof *p->reset_by);
	unsigned char *stored = xcalloc(nt, 1);
	const Fusion *f = &m->fusion[fusion];
	int first = f->nstage ? m->stage[f->first_stage].first_stmt : 0;
	int last = f->nstage ? m->stage[f->first_stage + f->nstage - 1].first_stmt + m->stage[f->first_stage + f->nstage - 1].nstmt : first;
	p->first_stmt = first, p->last_stmt = last;
	int tail_closed = 0;
	for (int sid = first; sid < last && fused; sid++) {
		const Stmt *s = &m->stmt[sid];
		const Tensor *t = &m->tensor[s->out];
		if (s->pattern == PAT_MAP && s->red == RED_NONE && !s->mask && t->kind == TK_TEMP &&
		    !t->zero_init && inlinable(m, p, sid, s->rhs))
			p->op[sid] = STEP_INLINE;
	}
	int any = 0;
	for (int sid = first; sid < last; sid++) {
		SplitRule r = SPLIT_NONE;
		if (p->op[sid] == STEP_INLINE) {
			p->stmt_kernel[sid] = -1;
			p->remat[sid] = REMAT_ANY;
			continue;
		}
		if (!any) r = SPLIT_SPACE, any = 1;
		else if (!fused && m->stmt[sid].stage != m->stmt[sid - 1].stage) r = SPLIT_UNFUSED;
		else r = try_join(m, p, p->nk - 1, sid, &tail_closed);
		if (r != SPLIT_NONE) {
			start_kernel(m, p, fusion, sid, fused);
			tail_closed = 0;
		}
		p->why[sid] = p->nk == 1 && r ? SPLIT_NONE : r;
		p->stmt_kernel[sid] = p->nk - 1;
		p->remat[sid] = (unsigned char)remat_of(m, p, p->nk - 1, sid);
	}
	/* Schedules: pointwise kernels take several points a thread so their
	 * loads are in flight together; kernels that loop over a reduced index
	 * split each point's loop over 32 warps (32 points a block) and merge
	 * the partial results in a fixed order. */
	for (int i = 0; i < p->nk; i++) {
		Kernel *k = &p->k[i];
		k->par.unroll = k->par.slices = 1;
		if (k->mode != KM_POINT) continue;
		int loops = 0, simple = 1, compact = 0;
		for (int sid = k->first_stmt; sid < k->first_stmt + k->nstmt; sid++) {
			const Stmt *s = &m->stmt[sid];
			if (s->red >= RED_SUM && s->red <= RED_KMIN && !plan_is_grid_reduction(s)) loops = 1;
			if (s->red == RED_ACCUM || (s->red == RED_NONE && s->mask)) simple = 0;
			if (s->pattern == PAT_COMPACT) compact = 1;
		}
		if (loops) k->par.slices = 32, k->par.block = 1024;
		else if (simple) k->par.unroll = 4;
		/* 16-byte accesses along the innermost index (bench/proto/NOTES.md:
		   maps and map-reduces at 99-101% of the copy floor that way); a
		   compaction's slots are claimed per point, so it keeps the strided copies */
		if (k->par.unroll == 4 && !compact) k->par.vec = 4;
	}

	/* What must start each run at zero is zeroed by a kernel of the previous
	 * run where it can be, not by a memset of its own (one launch fewer):
	 * a zero-initialised temp by its last reader, if that reads every
	 * element once, at its point; a compaction's count by the first kernel,
	 * if the compaction comes later. The scratch starts zeroed. */
	for (int t = 0; t < m->ntensor; t++) p->reset_by[t] = -1, p->writer[t] = -1;
	for (int sid = first; sid < last; sid++) {
		int t = m->stmt[sid].out;
		p->writer[t] = p->writer[t] == -1 ? sid : -2;
	}
	for (int t = f->first_tensor; t < f->first_tensor + f->ntensor; t++) {
		const Tensor *x = &m->tensor[t];
		if (x->list_count >= 0) {
			int c = x->list_count, kc = -1;
			for (int sid = first; sid < last; sid++)
				if (m->stmt[sid].pattern == PAT_COMPACT && m->stmt[sid].out == t) kc = p->stmt_kernel[sid];
			int touched0 = 0;
			for (int sid = first; sid < last; sid++)
				if (p->stmt_kernel[sid] == 0 && (plan_stmt_reads(m, &m->stmt[sid], c) || m->stmt[sid].out == c)) touched0 = 1;
			if (kc > 0 && !touched0) p->reset_by[c] = 0;
		}
		if (!x->zero_init) continue;
		int lastk = -1, ok = 1;
		for (int sid = first; sid < last; sid++) {
			const Stmt *s = &m->stmt[sid];
			if (p->op[sid] == STEP_INLINE || !plan_stmt_reads(m, s, t)) continue;
			lastk = p->stmt_kernel[sid];
		}
		if (lastk < 0) continue;
		const Kernel *k = &p->k[lastk];
		ok = k->mode == KM_POINT && k->nspace == x->rank;
		for (int d = 0; ok && d < x->rank; d++) ok = dim_eq(k->space[d], x->dim[d]);
		for (int sid = k->first_stmt; ok && sid < k->first_stmt + k->nstmt; sid++) {
			const Stmt *s = &m->stmt[sid];
			if (s->out == t) ok = 0;
			else if (plan_stmt_reads(m, s, t)) ok = s->nfree == x->rank && reads_only_at_point(m, s, s->rhs, t, k->nspace) &&
			                                     reads_only_at_point(m, s, s->mask, t, k->nspace);
		}
		if (ok) p->reset_by[t] = lastk;
	}

	/* A tensor lives in device memory if it leaves its kernel. */
	for (int t = f->first_tensor; t < f->first_tensor + f->ntensor; t++) {
		const Tensor *x = &m->tensor[t];
		if (x->kind != TK_TEMP || x->zero_init || x->list_count >= 0) stored[t] = x->kind != TK_INPUT;
		for (int sid = first; sid < last; sid++) {
			const Stmt *s = &m->stmt[sid];
			if (s->out == t && s->pattern == PAT_SCATTER) stored[t] = 1;
			if (s->out != t || stored[t] || p->op[sid] == STEP_INLINE) continue;
			for (int u = sid + 1; u < last; u++)
				if (p->stmt_kernel[u] != p->stmt_kernel[sid] && plan_stmt_reads(m, &m->stmt[u], t)) stored[t] = 1;
		}
		if (!fused && x->kind == TK_TEMP) stored[t] = 1;
	}

	/* A row walked more than once (softmax: max, sum, normalise) is read
	 * from memory once, into registers: each thread keeps rcache vectors of
	 * 4 consecutive elements of every input row it walks (16-byte loads for
	 * f32), 24 registers of them in all (bench/proto/NOTES.md: 8 vectors a
	 * thread at 8192 f32 columns reached 98% of the copy floor; 8 spilled
	 * here beside the scalar path). How many
	 * threads share a row is decided at launch from the row's width
	 * (fz_row_lanes: 2 to 32 lanes of a warp, or a block of 256 to 1024),
	 * so rows of up to 1024 * 4 * rcache elements are read once. A wider
	 * row is read again on every walk: on the vector path streamed whole,
	 * ROW_STREAM_VECS 16-byte loads a thread issued before their use (a
	 * loop of its own, so the cache's registers are free; a row of up to
	 * 256 KB an SM mostly comes back from L2); on the scalar path the
	 * cached columns, then the rest a column at a time. 64 registers a thread
	 * (1024 threads an SM): enough for the cache on the vector path, whose
	 * bounds are checked per vector; the scalar path caches a third. */
	for (int i = 0; i < p->nk; i++) {
		Kernel *k = &p->k[i];
		if (k->mode != KM_ROW) continue;
		int walks = 0, regs = 0;
		unsigned char *seen = xcalloc((size_t)m->ntensor + 1, 1);
		for (int sid = k->first_stmt; sid < k->first_stmt + k->nstmt; sid++) {
			const Stmt *s = &m->stmt[sid];
			int walk = (s->nfree == k->nspace + 1 && stored[s->out]) ||
			           (s->red >= RED_SUM && s->red <= RED_MIN && s->nfree == k->nspace);
			walks += walk;
			if (s->nfree != k->nspace + 1 && !walk) continue;
			for (int t = 0; t < m->ntensor; t++) /* the rows it may cache: inputs of rank space + 1 */
				if (!seen[t] && m->tensor[t].kind == TK_INPUT && m->tensor[t].rank == k->nspace + 1 && plan_stmt_reads(m, s, t))
					seen[t] = 1, regs += m->tensor[t].type == ET_F64 || m->tensor[t].type == ET_I64 ? 2 : 1;
		}
		free(seen);
		if (walks >= 2 && regs <= 4) k->par.block = 1024, k->par.rcache = 6 / (regs ? regs : 1);
		else k->par.warp_rows = 1; /* gemv: 8 rows a block, no block-wide barriers */
	}

	/* Blocks a multiprocessor must hold, which caps registers: kernels with
	 * arrays in registers (a row cache, k-smallest lists, matmul tiles) or
	 * f64 work get 64 a thread at half occupancy; streaming kernels 40 at
	 * three quarters, enough for an unrolled body without spilling. */
	for (int i = 0; i < p->nk; i++) {
		Kernel *k = &p->k[i];
		int heavy = k->par.slices > 1 || k->mode == KM_MATMUL || k->par.rcache;
		for (int sid = k->first_stmt; sid < k->first_stmt + k->nstmt; sid++)
			heavy |= m->stage[m->stmt[sid].stage].precision == ET_F64; /* doubles take register pairs */
		k->par.min_blocks = (heavy ? 1024 : 1536) / k->par.block;
		if (k->par.min_blocks > 32) k->par.min_blocks = 32;
		if (k->par.min_blocks < 1) k->par.min_blocks = 1;
		if (k->mode == KM_MATMUL) {
			k->par.tile_m = k->par.tile_n = 64, k->par.tile_k = 16;
			k->par.swapped = plan_matmul_swapped(m, &m->stmt[k->first_stmt]);
		}
		/* Tensor-core tiles: one block an SM (a persistent grid), 384 threads
		   (a loading warpgroup, two multiplying), 128 x 256 x 64 tiles in a
		   ring of 4 stages of 48 KB; the template narrows them to 128 x 128
		   or 128 x 64 at launch when that fills the SMs better (the sizes
		   and the SM count are known only there: fz_tile_bn), so the grid is
		   min(128 x 64 tiles, SMs). */
		if (k->mode == KM_TILE) {
			k->par.block = 384, k->par.min_blocks = 1;
			k->par.tile_m = 128, k->par.tile_n = 256, k->par.tile_n_min = 64, k->par.tile_k = 64, k->par.stages = 4;
			k->par.swapped = tile_idx(m, &m->stmt[k->first_stmt]).sw;
			k->par.b_kmajor = tile_b_kmajor(m, &m->stmt[k->first_stmt]);
			/* barriers, alignment slack, the ring, two 64 x 36 f32 epilogue buffers (tile_gemm.cuh FZ_TILE_SMEM) */
			k->par.smem = 64 + 1023 + k->par.stages * (k->par.tile_m + k->par.tile_n) * k->par.tile_k * 2 + 2 * 64 * 36 * 4;
		}
	}

	for (int t = 0; t < m->ntensor; t++) {
		const Tensor *x = &m->tensor[t];
		if (x->kind == TK_INPUT) p->storage[t] = ST_PARAM;
		else if (stored[t]) p->storage[t] = ST_STORED;
		else if (p->writer[t] >= 0 && p->op[p->writer[t]] == STEP_INLINE) p->storage[t] = ST_RECOMPUTED;
		else p->storage[t] = ST_REGISTERS;
	}
	assign_steps(m, p, stored);
	for (int t = 0; t < m->ntensor; t++)
		if (p->storage[t] == ST_REGISTERS && p->writer[t] >= 0 && p->op[p->writer[t]] == STEP_ROW_ONCHIP)
			p->storage[t] = ST_RECOMPUTED;
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
	free(p->storage), free(p->writer), free(p->reset_by);
	memset(p, 0, sizeof *p);
}
