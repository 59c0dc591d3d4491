/* Matrix contractions: the operands' order, whether the tensor cores take
 * one (and why not, for --explain), and the tile shape of a MATMUL or TILE
 * kernel. */
#include "plan/plan_impl.h"

#include "core/die.h"

/* The operands' order in a contraction over (i0, i1) reducing k: 0 when the
 * first operand carries i0 and the second i1, 1 when the other way round,
 * -1 when neither. */
static int operand_over(const Module *m, int x, int with, int without, int k)
{
	return ir_expr_uses_index(m, x, with) && !ir_expr_uses_index(m, x, without) && ir_expr_uses_index(m, x, k);
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
	return t.sw >= 0 && ir_expr_uses_index(m, s->contract_a, t.ib) && ir_expr_uses_index(m, s->contract_b, t.ib);
}

/* Is a tile kernel's B read as B(n,k), k contiguous (x W^T)? */
static int tile_b_kmajor(const Module *m, const Stmt *s)
{
	TileIdx t = tile_idx(m, s);
	return plain_load_b(m, t.sw ? s->contract_a : s->contract_b, t.ib, t.in, t.kx);
}

/* Is its A read as A(k,m), m contiguous (A^T B)? */
int plan_tile_a_mmajor(const Module *m, const Stmt *s)
{
	TileIdx t = tile_idx(m, s);
	return t.sw >= 0 && plain_load_b(m, t.sw ? s->contract_b : s->contract_a, t.ib, t.kx, t.im);
}

/* The tensor-core path's words for --explain, by batched, tf32 and layout */
static const char *tile_path(int batched, int tf32, int at, int bt)
{
	static const char *const lay[2][2] = {{"", ", B read as B(n,k)"}, {", A read as A(k,m)", ", A read as A(k,m), B read as B(n,k)"}};
	static const char *const lay_b[2][2] = {{"", ", B read as B(b,n,k)"}, {", A read as A(b,k,m)", ", A read as A(b,k,m), B read as B(b,n,k)"}};
	static const char *const rows_past_k[2][2] = {{", or B(b,k,n) with K not a multiple of 64", ""},
	                                              {", or A(b,k,m) or B(b,k,n) with K not a multiple of 64", ", or A(b,k,m) with K not a multiple of 64"}};
	/* wgmma reads tf32 only k-major from shared memory: an m-major A from
	   registers; A(m,k) B(k,n) as C^T = B^T A^T, B the m-major operand;
	   A(k,m) B(k,n) would need both: mma.sync */
	static const char *const tf32_how[2][2] = {{" computing C^T = B^T A^T (B's fragments from registers, A as the k-major operand)", ""},
	                                           {"", " (A's fragments from registers)"}};
	/* one buffer a combination: the text depends on it alone, and kernels
	   keep the pointer (Kernel.path_why) */
	static char bufs[2][2][2][2][768];
	char *buf = bufs[batched][tf32][at][bt], w[320];
	if (tf32 && at && !bt)
		snprintf(w, sizeof w, "sm_90a mma.sync with plain loads (wgmma reads tf32 k-contiguous from shared memory, and neither operand is)");
	else
		snprintf(w, sizeof w, "sm_90a wgmma fed by TMA%s (plain loads when a row or pointer is not 16-byte aligned%s)", tf32 ? tf32_how[at][bt] : "",
		         batched ? (tf32 && !at && !bt ? rows_past_k[1][1] : rows_past_k[at][bt]) : "");
	snprintf(buf, sizeof bufs[0][0][0][0], "tensor cores%s%s%s: %s, one loading and two multiplying warpgroups; sm_80 and sm_90 mma.sync with %s; f32 accumulators",
	         tf32 ? ", tf32 (f32 operands read with 10-bit mantissas)" : "", batched ? ", batched (the persistent grid walks every batch's tiles)" : "",
	         (batched ? lay_b : lay)[at][bt], w, tf32 && (at || !bt) ? "ldmatrix and 32-bit shared loads" : "ldmatrix");
	return buf;
}

/* The same for fp8 operands, A of type ta and B of tb (sema lets them be
   read A(m,k) and B(n,k) only): "e4m3", "e5m2", or the pair as A x B */
static const char *tile_path_fp8(int batched, ElemType ta, ElemType tb)
{
	const int a5 = ta == ET_F8E5M2, b5 = tb == ET_F8E5M2;
	static const char *const one[2] = {"e4m3", "e5m2"};
	static char bufs[2][2][2][640]; /* a buffer a combination, as tile_path's */
	char *buf = bufs[batched][a5][b5], ty[16], bytes[16];
	if (a5 == b5) snprintf(ty, sizeof ty, "%s", one[a5]), snprintf(bytes, sizeof bytes, "%s", one[a5]);
	else snprintf(ty, sizeof ty, "%s x %s", one[a5], one[b5]), snprintf(bytes, sizeof bytes, "e4m3 and e5m2");
	snprintf(buf, sizeof bufs[0][0][0], "tensor cores, fp8 %s (exact products, f32 accumulation in the tensor cores' own rounding: "
	         "dsl/MATH.md)%s: sm_90a wgmma k32 %s fed by TMA (plain loads when a row or pointer is not 16-byte aligned), one loading "
	         "and two multiplying warpgroups; sm_80 and sm_90 (no fp8 wgmma) mma.sync f16 with ldmatrix, the %s bytes widened to f16 "
	         "exactly; f32 accumulators", ty, batched ? ", batched (the persistent grid walks every batch's tiles), B read as B(b,n,k)"
	                                               : ", B read as B(n,k)", ty, bytes);
	return buf;
}

/* A matrix contraction goes to the tensor-core tile template when its stage
 * asks (tensor_eligible) and the operands are what the tensor cores take:
 * two input matrices of one 16-bit float type, or f32 ones where the stage
 * allows tf32, read as A(m,k) or A(k,m) and B(k,n) or B(n,k) (batched: the
 * batch index first), accumulated in f32, unmasked. Otherwise the CUDA-core
 * tile kernel (batched: a point kernel); *why says which, for --explain. */
int plan_tile_eligible(const Module *m, const Stmt *s, const char **why)
{
	TileIdx x = tile_idx(m, s);
	int ib = x.ib, i0 = x.im, i1 = x.in, kx = x.kx;
	int ea = x.sw ? s->contract_b : s->contract_a, eb = x.sw ? s->contract_a : s->contract_b;
	ElemType ta = m->expr[ea].op == IR_LOAD ? m->tensor[m->expr[ea].tensor].type : ET_N;
	ElemType tb = m->expr[eb].op == IR_LOAD ? m->tensor[m->expr[eb].tensor].type : ET_N;
	const int fp8 = ta != ET_N && tb != ET_N && elem_is_fp8(ta) && elem_is_fp8(tb); /* e4m3 and e5m2, any pair */
	const Stage *sg = &m->stage[s->stage];
	int bt = plain_load_b(m, eb, ib, i1, kx), at = plain_load_b(m, ea, ib, kx, i0);
	if (!(sg->attrs & ATTR(TENSOR_ELIGIBLE))) *why = "CUDA cores: the stage is not marked tensor_eligible";
	else if (s->nindex != s->nfree + 1 || s->red != RED_SUM || s->mask) *why = "CUDA cores: not a plain sum over one index (masked contractions are not on tensor cores)";
	else if (!input_load(m, ea) || !input_load(m, eb))
		*why = "CUDA cores: an operand is an intermediate, not an input matrix (a prologue on an operand is not on "
		       "tensor cores yet: the loaders copy inputs to shared memory as they are stored)";
	else if (!(at || plain_load_b(m, ea, ib, i0, kx)) || !(plain_load_b(m, eb, ib, kx, i1) || bt))
		*why = ib >= 0 ? "CUDA cores: the operands are not read plainly as A(b,m,k) or A(b,k,m) and B(b,k,n) or B(b,n,k)"
		               : "CUDA cores: the operands are not read plainly as A(m,k) or A(k,m) and B(k,n) or B(n,k)";
	else if (ta == ET_F32 && tb == ET_F32 && !sg->tf32)
		*why = "CUDA cores: f32 operands, exact: tensor cores would read them as tf32 (10-bit mantissas), which the stage "
		       "does not allow (precision = tf32 does)";
	else if (!fp8 && (ta != tb || (ta != ET_F16 && ta != ET_BF16 && ta != ET_F32)))
		*why = "CUDA cores: tensor cores take f16 or bf16 operands of one type, fp8 ones (f8e4m3, f8e5m2, or one of each), or f32 "
		       "ones as tf32";
	else if (sg->precision != ET_F32) *why = "CUDA cores: tensor cores accumulate in f32, the stage asks for another precision";
	else if (fp8 && (at || !bt)) /* sema refuses it first */
		*why = "CUDA cores: fp8 tensor cores read both operands k-contiguous (A(m,k), B(n,k))";
	else {
		*why = fp8 ? tile_path_fp8(ib >= 0, ta, tb) : tile_path(ib >= 0, ta == ET_F32, at != 0, bt != 0);
		return 1;
	}
	return 0;
}

/* The input tensors a tensor-core contraction reads as A and B, and
 * whether B is read as B(n,k); 0 when an operand is not a load. */
int plan_tile_operands(const Module *m, const Stmt *s, int *a, int *b, int *bt)
{
	const int sw = tile_idx(m, s).sw;
	int ea = sw ? s->contract_b : s->contract_a, eb = sw ? s->contract_a : s->contract_b;
	if (sw < 0 || m->expr[ea].op != IR_LOAD || m->expr[eb].op != IR_LOAD) return 0;
	*a = m->expr[ea].tensor, *b = m->expr[eb].tensor, *bt = tile_b_kmajor(m, s);
	return 1;
}

/* The tile and its shared memory, for a contraction's kernel. */
void plan_tile_shape(const Module *m, Kernel *k)
{
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
		/* the operands A(m,k) and B(k,n) or B(n,k): the runtime makes their tensor maps */
		if (!plan_tile_operands(m, &m->stmt[k->first_stmt], &k->tile_a, &k->tile_b, &k->par.b_kmajor))
			die("plan: tile kernel's operands are not loads");
		k->par.a_mmajor = plan_tile_a_mmajor(m, &m->stmt[k->first_stmt]);
		/* tf32 A(m,k) B(k,n): wgmma reads tf32 k-major from shared memory
		   only, and an m-major A from registers, so the tile computes
		   C^T = B^T A^T: B the m-major A, A the k-major B (tile_gemm.cuh TC) */
		if (m->tensor[k->tile_a].type == ET_F32 && !k->par.a_mmajor && !k->par.b_kmajor) {
			int t = k->tile_a;
			k->tile_a = k->tile_b, k->tile_b = t;
			k->par.a_mmajor = k->par.b_kmajor = k->par.c_swapped = 1;
		}
		/* a stage holds 128 bytes of k: 64 16-bit elements, 32 tf32 ones, 128 fp8 ones */
		const int es = elem_info[m->tensor[k->tile_a].type].bytes;
		k->par.tile_k = 128 / es;
		/* barriers, alignment slack, the ring, two 64 x 36 f32 epilogue buffers (tile_gemm.cuh FZ_TILE_SMEM) */
		k->par.smem = 64 + 1023 + k->par.stages * (k->par.tile_m + k->par.tile_n) * k->par.tile_k * es + 2 * 64 * 36 * 4;
	}
}
