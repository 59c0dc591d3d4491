/* Unit tests of the planner on the schedule struct itself (schedule.h), not
 * on printed text: for specs written here, the kernels' kinds, spaces,
 * phases and barriers, each statement's step and split rule, each tensor's
 * storage, the names the namer made, and that every target gets the same
 * schedule (one .cu serves them all). Also the one path of internal errors:
 * die() exits 3 naming the spec. Prints "unit_plan: N passed, N failed". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/die.h"
#include "front/frontend.h"
#include "core/namer.h"
#include "plan/plan.h"

static int npass, nfail;
static const char *cur; /* the case being run */

#define EXPECT(cond)                                                                                \
	do {                                                                                            \
		if (cond) npass++;                                                                          \
		else nfail++, printf("FAIL %s: %s\n    at tests/unit_plan.c:%d\n", cur, #cond, __LINE__); \
	} while (0)

typedef struct Case {
	FrontEnd fe;
	Schedule fu, un;
} Case;

/* Checks and plans `text` (one fusion) for sm_80; 0 if it has errors. */
static int load(Case *c, const char *name, const char *text)
{
	cur = name;
	memset(c, 0, sizeof *c);
	c->fe.src.path = "unit.fuse";
	c->fe.src.len = strlen(text);
	c->fe.src.text = malloc(c->fe.src.len + 1);
	memcpy(c->fe.src.text, text, c->fe.src.len + 1);
	FILE *sink = fopen("/dev/null", "w");
	int errors = frontend_check(&c->fe, sink ? sink : stderr, 20);
	if (sink) fclose(sink);
	if (errors || c->fe.mod.nfusion != 1) {
		nfail++, printf("FAIL %s: the spec does not check (%d errors)\n", name, errors);
		frontend_free(&c->fe);
		return 0;
	}
	plan_build(&c->fe.mod, 0, 1, TGT_SM_80, &c->fu);
	plan_build(&c->fe.mod, 0, 0, TGT_SM_80, &c->un);
	/* every target's schedule is the sm_80 one (artifact.c relies on it) */
	for (int t = 1; t < TGT_N; t++) {
		Schedule fu, un;
		plan_build(&c->fe.mod, 0, 1, (Target)t, &fu);
		plan_build(&c->fe.mod, 0, 0, (Target)t, &un);
		EXPECT(fu.target == (Target)t);
		EXPECT(sched_same(&c->fe.mod, &c->fu, &fu));
		EXPECT(sched_same(&c->fe.mod, &c->un, &un));
		sched_free(&fu), sched_free(&un);
	}
	return 1;
}

static void done(Case *c)
{
	sched_free(&c->fu), sched_free(&c->un);
	frontend_free(&c->fe);
}

static int tensor(const Case *c, const char *name)
{
	for (int t = 0; t < c->fe.mod.ntensor; t++)
		if (!strcmp(c->fe.mod.tensor[t].name, name)) return t;
	printf("    (no tensor %s)\n", name);
	return c->fe.mod.ntensor; /* schedules' per-tensor arrays have one spare element */
}

/* the statement defining tensor `name` */
static int stmt(const Case *c, const char *name)
{
	int t = tensor(c, name);
	for (int s = 0; s < c->fe.mod.nstmt; s++)
		if (c->fe.mod.stmt[s].out == t) return s;
	printf("    (no statement defines %s)\n", name);
	return c->fe.mod.nstmt;
}

#define STORAGE(c, sch, name) ((c)->sch.storage[tensor(c, name) - (c)->sch.first_tensor])
#define OP(c, sch, name) ((c)->sch.op[stmt(c, name) - (c)->sch.first_stmt])
#define WHY(c, sch, name) ((c)->sch.why[stmt(c, name) - (c)->sch.first_stmt])
#define KERNEL_OF(c, sch, name) ((c)->sch.stmt_kernel[stmt(c, name) - (c)->sch.first_stmt])

/* Pointwise chain: a temp over inputs is inlined and recomputed; a masked
 * one (which no other point can recompute) read at another point is stored
 * and splits the kernel. */
static void test_point(void)
{
	Case c;
	if (!load(&c, "point", "fusion pt(x: f32[N], g: i32[N]) -> (y: f32[N], z: f32[N]) {\n"
	                       "  stage a { t(i) = x(i) * 2.0 }\n"
	                       "  stage b { u(i) = t(i) + x(i) where x(i) > 0.0 }\n"
	                       "  stage c { y(i) = u(i) * u(i) }\n"
	                       "  stage d { z(i) = u(g(i)) }\n"
	                       "}\n"))
		return;
	EXPECT(c.fu.fused == 1 && c.fu.variant == 'f' && c.fu.target == TGT_SM_80);
	EXPECT(c.fu.nk == 2);
	EXPECT(c.fu.k[0].mode == KM_POINT && c.fu.k[0].nspace == 1 && !c.fu.k[0].has_tail);
	EXPECT(c.fu.k[0].nphase == 1 && c.fu.k[0].phase[0].kind == KM_POINT && c.fu.k[0].phase[0].after == BAR_NONE);
	EXPECT(c.fu.nk == 2 && !strcmp(c.fu.k[0].name, "pt_f0") && !strcmp(c.fu.k[1].name, "pt_f1"));
	EXPECT(OP(&c, fu, "t") == STEP_INLINE && KERNEL_OF(&c, fu, "t") == -1);
	EXPECT(STORAGE(&c, fu, "t") == ST_RECOMPUTED);
	EXPECT(OP(&c, fu, "u") == STEP_MAP && OP(&c, fu, "y") == STEP_MAP);
	EXPECT(KERNEL_OF(&c, fu, "u") == 0 && KERNEL_OF(&c, fu, "y") == 0 && KERNEL_OF(&c, fu, "z") == 1);
	EXPECT(WHY(&c, fu, "y") == SPLIT_NONE);
	EXPECT(WHY(&c, fu, "z") == SPLIT_NOT_AT_POINT); /* u(g(i)): another point */
	EXPECT(STORAGE(&c, fu, "u") == ST_STORED);      /* so u leaves its kernel */
	EXPECT(STORAGE(&c, fu, "x") == ST_PARAM && STORAGE(&c, fu, "y") == ST_STORED);
	/* unfused: a kernel a stage, each split as such, every temp stored */
	EXPECT(c.un.fused == 0 && c.un.variant == 'u' && c.un.nk == 4);
	EXPECT(c.un.nk == 4 && !strcmp(c.un.k[0].name, "pt_u0") && !strcmp(c.un.k[3].name, "pt_u3"));
	EXPECT(WHY(&c, un, "y") == SPLIT_UNFUSED && WHY(&c, un, "z") == SPLIT_UNFUSED);
	EXPECT(STORAGE(&c, un, "u") == ST_STORED && STORAGE(&c, un, "t") == ST_STORED);
	done(&c);
}

/* Row kernel: reductions over the row's last index in registers, an
 * element nobody stores recomputed by its readers. */
static void test_row(void)
{
	Case c;
	if (!load(&c, "row", "fusion sm(X: f32[R,C]) -> (Y: f32[R,C]) {\n"
	                     "  stage mx [reduction] { rmax(r) max=! X(r,c) }\n"
	                     "  stage ex { e(r,c) = exp(X(r,c) - rmax(r)) }\n"
	                     "  stage sm [reduction] { rsum(r) +=! e(r,c) }\n"
	                     "  stage no { Y(r,c) = e(r,c) / rsum(r) }\n"
	                     "}\n"))
		return;
	EXPECT(c.fu.nk == 1);
	EXPECT(c.fu.k[0].mode == KM_ROW && c.fu.k[0].ninner == 1 && c.fu.k[0].nspace == 1);
	EXPECT(c.fu.k[0].first_stmt == stmt(&c, "rmax") && c.fu.k[0].nstmt == 4);
	EXPECT(OP(&c, fu, "rmax") == STEP_REDUCE && OP(&c, fu, "rsum") == STEP_REDUCE);
	EXPECT(OP(&c, fu, "e") == STEP_ROW_ONCHIP && OP(&c, fu, "Y") == STEP_ROW_ELEM);
	EXPECT(STORAGE(&c, fu, "rmax") == ST_REGISTERS && STORAGE(&c, fu, "rsum") == ST_REGISTERS);
	EXPECT(STORAGE(&c, fu, "e") == ST_RECOMPUTED);
	EXPECT(c.fu.k[0].par.block > 0 && c.fu.k[0].par.block % 32 == 0);
	EXPECT(c.un.nk == 4 && STORAGE(&c, un, "e") == ST_STORED && STORAGE(&c, un, "rmax") == ST_STORED);
	done(&c);
}

/* Whole-grid reduction: partials folded by the last block (a phase ending
 * in the grid fold), then the rank-0 epilogue as a second phase. */
static void test_grid_fold(void)
{
	Case c;
	if (!load(&c, "grid fold", "fusion mr(x: f32[N], y: f32[N]) -> (mean: f32, d: f32[N]) {\n"
	                           "  stage r [reduction] { s +=! x(i) * y(i) }\n"
	                           "  stage e { mean = s / 4.0 }\n"
	                           "  stage f { d(i) = x(i) - mean }\n"
	                           "}\n"))
		return;
	EXPECT(c.fu.nk == 2);
	const Kernel *k = &c.fu.k[0];
	EXPECT(k->mode == KM_POINT && k->has_tail && k->ntail == 1);
	EXPECT(k->nphase == 2 && k->phase[0].after == BAR_GRID_FOLD && k->phase[1].kind == KM_SCALAR);
	EXPECT(k->phase[1].first_stmt == stmt(&c, "mean") && k->phase[1].nstmt == 1);
	EXPECT(OP(&c, fu, "s") == STEP_GRID_REDUCE && OP(&c, fu, "mean") == STEP_EPILOGUE);
	EXPECT(WHY(&c, fu, "d") == SPLIT_AFTER_GLOBAL);
	EXPECT(STORAGE(&c, fu, "mean") == ST_STORED);
	/* unfused: the epilogue is a scalar kernel of its own */
	EXPECT(c.un.nk == 3 && c.un.k[0].mode == KM_POINT && c.un.k[1].mode == KM_SCALAR && c.un.k[1].nspace == 0);
	EXPECT(OP(&c, un, "mean") == STEP_SCALAR);
	done(&c);
}

/* Matrix contractions: CUDA cores for f32 (and why), tensor cores for a
 * tensor_eligible bf16 one, the epilogue joined in registers. */
/* One tile kernel's layout flags and operands, for each way of reading A and
 * B, 16-bit and tf32; f32 without tf32 stays a CUDA-core matmul. A of type
 * ty, B of tyb (fp8: e4m3 and e5m2 mix). */
static void tile_case2(const char *name, const char *ty, const char *tyb, const char *prec, const char *a, const char *b, int tile,
	int at, int bt, int sw, const char *ta, const char *why)
{
	Case c;
	char text[512];
	snprintf(text, sizeof text, "fusion tl(A: %s[%s], B: %s[%s]) -> (C: f32[M,N]) {\n"
	         "  stage m [tensor_eligible, precision = %s] { acc(m,n) +=! A(%s) * B(%s) }\n"
	         "  stage e { C(m,n) = acc(m,n) }\n}\n", ty, a[0] == 'm' ? "M,K" : "K,M", tyb, b[0] == 'k' ? "K,N" : "N,K", prec, a, b);
	if (!load(&c, name, text)) return;
	const Kernel *k = &c.fu.k[0];
	EXPECT(c.fu.nk == 1 && (k->mode == KM_TILE) == tile);
	EXPECT(k->path_why && strstr(k->path_why, why));
	if (tile) {
		EXPECT(k->par.a_mmajor == at && k->par.b_kmajor == bt && k->par.c_swapped == sw);
		EXPECT(k->par.tile_k == (!strcmp(ty, "f32") ? 32 : !strncmp(ty, "f8", 2) ? 128 : 64)); /* 128 bytes of k a stage */
		/* barriers, slack, the ring of (128 + 256) rows of 128 bytes, the epilogue's buffers: the same for every type */
		EXPECT(k->par.smem == 64 + 1023 + k->par.stages * (128 + 256) * 128 + 2 * 64 * 36 * 4);
		EXPECT(k->tile_a == tensor(&c, ta) && k->tile_b == tensor(&c, ta[0] == 'A' ? "B" : "A"));
	}
	done(&c);
}
static void tile_case(const char *name, const char *ty, const char *prec, const char *a, const char *b, int tile, int at, int bt,
	int sw, const char *ta, const char *why)
{
	tile_case2(name, ty, ty, prec, a, b, tile, at, bt, sw, ta, why);
}

static void tile_layouts(void)
{
	tile_case("bf16 A(k,m)", "bf16", "f32", "k,m", "k,n", 1, 1, 0, 0, "A", "A read as A(k,m)");
	tile_case("bf16 A(k,m) B(n,k)", "bf16", "f32", "k,m", "n,k", 1, 1, 1, 0, "A", "A read as A(k,m), B read as B(n,k)");
	tile_case("f16 B(n,k)", "f16", "f32", "m,k", "n,k", 1, 0, 1, 0, "A", "B read as B(n,k)");
	/* tf32: wgmma reads it k-major from shared memory only: A(m,k) B(k,n) as C^T = B^T A^T */
	tile_case("tf32 A(m,k) B(k,n)", "f32", "tf32", "m,k", "k,n", 1, 1, 1, 1, "B", "C^T = B^T A^T");
	tile_case("tf32 A(m,k) B(n,k)", "f32", "tf32", "m,k", "n,k", 1, 0, 1, 0, "A", "tf32");
	tile_case("tf32 A(k,m) B(n,k)", "f32", "tf32", "k,m", "n,k", 1, 1, 1, 0, "A", "A's fragments from registers");
	tile_case("tf32 A(k,m) B(k,n)", "f32", "tf32", "k,m", "k,n", 1, 1, 0, 0, "A", "sm_90a mma.sync");
	tile_case("f32 exact", "f32", "f32", "m,k", "k,n", 0, 0, 0, 0, "A", "CUDA cores: f32 operands, exact");
	/* fp8 e4m3 (issue 25): A(m,k) B(n,k) alone, both k-major, 128 k a stage (sema refuses the other layouts) */
	tile_case("fp8 A(m,k) B(n,k)", "f8e4m3", "f32", "m,k", "n,k", 1, 0, 1, 0, "A", "fp8 e4m3");
	tile_case("fp8 wgmma path", "f8e4m3", "f32", "m,k", "n,k", 1, 0, 1, 0, "A", "wgmma k32 e4m3 fed by TMA");
	/* e5m2, and one of each (the pair named A x B, as wgmma's .atype.btype) */
	tile_case("fp8 e5m2", "f8e5m2", "f32", "m,k", "n,k", 1, 0, 1, 0, "A", "wgmma k32 e5m2 fed by TMA");
	tile_case("fp8 e5m2 widened", "f8e5m2", "f32", "m,k", "n,k", 1, 0, 1, 0, "A", "the e5m2 bytes widened to f16 exactly");
	tile_case2("fp8 e4m3 x e5m2", "f8e4m3", "f8e5m2", "f32", "m,k", "n,k", 1, 0, 1, 0, "A", "wgmma k32 e4m3 x e5m2 fed by TMA");
	tile_case2("fp8 e5m2 x e4m3", "f8e5m2", "f8e4m3", "f32", "m,k", "n,k", 1, 0, 1, 0, "A", "fp8 e5m2 x e4m3 (exact products");
	tile_case2("fp8 mixed widened", "f8e5m2", "f8e4m3", "f32", "m,k", "n,k", 1, 0, 1, 0, "A", "the e4m3 and e5m2 bytes widened");
}

static void test_contractions(void)
{
	Case c;
	if (load(&c, "matmul", "fusion mm(A: f32[M,K], B: f32[K,N], b: f32[N]) -> (C: f32[M,N]) {\n"
	                       "  stage m { acc(m,n) +=! A(m,k) * B(k,n) }\n"
	                       "  stage e { C(m,n) = relu(acc(m,n) + b(n)) }\n"
	                       "}\n")) {
		EXPECT(c.fu.nk == 1 && c.fu.k[0].mode == KM_MATMUL && c.fu.k[0].nspace == 2);
		EXPECT(c.fu.k[0].par.tile_m > 0 && c.fu.k[0].par.tile_n > 0 && c.fu.k[0].par.tile_k > 0);
		EXPECT(c.fu.k[0].path_why && strstr(c.fu.k[0].path_why, "CUDA cores"));
		EXPECT(OP(&c, fu, "acc") == STEP_CONTRACT && OP(&c, fu, "C") == STEP_MAP);
		EXPECT(STORAGE(&c, fu, "acc") == ST_REGISTERS && STORAGE(&c, un, "acc") == ST_STORED);
		done(&c);
	}
	if (load(&c, "tile", "fusion tl(X: bf16[M,K], W: bf16[K,N]) -> (C: bf16[M,N]) {\n"
	                     "  stage m [tensor_eligible, precision = f32] { acc(m,n) +=! X(m,k) * W(k,n) }\n"
	                     "  stage e { C(m,n) = relu(acc(m,n)) }\n"
	                     "}\n")) {
		const Kernel *k = &c.fu.k[0];
		EXPECT(c.fu.nk == 1 && k->mode == KM_TILE && k->nphase == 1 && k->phase[0].kind == KM_TILE);
		EXPECT(k->par.stages > 1 && k->par.smem > 0 && k->par.block == 384);
		/* the widest tile and the narrowest the launch may pick (fz_tile_bn); the ring holds the widest */
		EXPECT(k->par.tile_m == 128 && k->par.tile_n == 256 && k->par.tile_n_min == 64 && k->par.tile_k == 64);
		EXPECT(k->par.smem >= k->par.stages * (k->par.tile_m + k->par.tile_n) * k->par.tile_k * 2);
		EXPECT(k->path_why && strstr(k->path_why, "tensor cores"));
		EXPECT(OP(&c, fu, "acc") == STEP_CONTRACT && STORAGE(&c, fu, "acc") == ST_REGISTERS);
		EXPECT(!k->par.a_mmajor && !k->par.b_kmajor && !k->par.c_swapped);
		done(&c);
	}
	tile_layouts();
}

/* Attention: the textbook chain in one KM_ATTN kernel; its variants; and
 * the chains that only look like it, each left a tile kernel with the
 * reason. */
#define ATTN_HEAD "fusion at(Q: bf16[B,T,%s], K: bf16[B,S,%s], V: bf16[B,S,%s], sc: f32) -> (O: bf16[B,T,%s]%s) {\n" \
	"  stage qk [tensor_eligible, precision = f32] { s(b,m,n) +=! Q(b,m,d) * K(b,n,d) }\n"
#define ATTN_TAIL(P, L) \
	"  stage mx [reduction] { mx(b,m) max=! z(b,m,n) }\n" \
	"  stage e { e(b,m,n) = exp(z(b,m,n) - mx(b,m)) }\n" \
	"  stage l [reduction] { l(b,m) +=! e(b,m,n) }\n" \
	"  stage p [precision = " P "] { p(b,m,n) = e(b,m,n) / l(b,m) }\n" \
	"  stage pv [tensor_eligible, precision = f32] { o(b,m,d) +=! p(b,m,n) * V(b,n,d) }\n" \
	"  stage out [precision = bf16] { O(b,m,d) = o(b,m,d) }\n" L "}\n"

static int attn_case(Case *c, const char *name, const char *d, const char *outs, const char *z, const char *tail)
{
	char text[2048];
	snprintf(text, sizeof text, ATTN_HEAD "  stage z { %s }\n%s", d, d, d, d, outs, z, tail);
	return load(c, name, text);
}

static void test_attention(void)
{
	Case c;
	if (attn_case(&c, "attention", "D", "", "z(b,m,n) = s(b,m,n) * sc", ATTN_TAIL("bf16", ""))) {
		const Kernel *k = &c.fu.k[0];
		EXPECT(c.fu.nk == 1 && k->mode == KM_ATTN && k->nspace == 3 && k->par.block == 384 && k->at.block_m == 128);
		EXPECT(k->at.nent == 3 && k->at.db[0] == 64 && k->at.db[2] == 256 && k->at.causal == 0);
		/* z reads no matrix: 128-column steps up to D 128, 32 at 256 */
		EXPECT(k->at.bn[0] == 128 && k->at.bn[1] == 128 && k->at.bn[2] == 32);
		/* two Q buffers up to D 128 (two stages there, so that they fit), one at 256 */
		EXPECT(k->at.st[0] == 3 && k->at.st[1] == 2 && k->at.st[2] == 3);
		EXPECT(k->at.nq[0] == 2 && k->at.nq[1] == 2 && k->at.nq[2] == 1);
		for (int e = 0; e < 3; e++) /* an H100's 227 KB a block, Q's buffers and the rings */
			EXPECT(k->at.smem[e] <= 232448 && k->at.smem[e] >= (k->at.nq[e] * 128 + 2 * k->at.st[e] * k->at.bn[e]) * k->at.db[e] * 2);
		EXPECT(k->at.c1 == stmt(&c, "s") && k->at.mx == stmt(&c, "mx") && k->at.sum == stmt(&c, "l") && k->at.c2 == stmt(&c, "o"));
		EXPECT(OP(&c, fu, "s") == STEP_CONTRACT && OP(&c, fu, "z") == STEP_MAP && OP(&c, fu, "e") == STEP_ONLINE);
		EXPECT(OP(&c, fu, "p") == STEP_ONLINE && OP(&c, fu, "o") == STEP_CONTRACT && OP(&c, fu, "O") == STEP_MAP);
		EXPECT(STORAGE(&c, fu, "s") != ST_STORED && STORAGE(&c, fu, "p") != ST_STORED && STORAGE(&c, fu, "O") == ST_STORED);
		EXPECT(c.un.nk == 8 && c.un.k[0].mode == KM_TILE); /* the unfused variant: every stage alone */
		/* O, 16-bit, the only tensor stored at (b, m, d): written in whole rows */
		EXPECT(k->at.out == 1 + c.fe.mod.stmt[stmt(&c, "O")].out);
		/* z = S sc: sc folded into the exponent, S its first operand */
		EXPECT(k->at.zmul > 0 && c.fe.mod.expr[k->at.zmul].op == IR_MUL && k->at.zkeep == 1 && k->at.zstmt == stmt(&c, "z"));
		EXPECT(c.fe.mod.expr[k->at.zc].op == IR_SCALAR);
		done(&c);
	}
	/* the factor first, and one of sizes and constants: folded; a factor
	   read at the point, or z more than the product: not */
	if (attn_case(&c, "fold sc S", "D", "", "z(b,m,n) = (sc * 0.5) * s(b,m,n)", ATTN_TAIL("bf16", ""))) {
		EXPECT(c.fu.k[0].mode == KM_ATTN && c.fu.k[0].at.zmul > 0 && c.fu.k[0].at.zkeep == 2);
		done(&c);
	}
	if (attn_case(&c, "fold rsqrt D", "D", "", "z(b,m,n) = s(b,m,n) * rsqrt(f32(D))", ATTN_TAIL("bf16", ""))) {
		EXPECT(c.fu.k[0].mode == KM_ATTN && c.fu.k[0].at.zmul > 0 && c.fu.k[0].at.zkeep == 1);
		done(&c);
	}
	if (attn_case(&c, "no fold: index", "D", "", "z(b,m,n) = s(b,m,n) * f32(m)", ATTN_TAIL("bf16", ""))) {
		EXPECT(c.fu.k[0].mode == KM_ATTN && c.fu.k[0].at.zmul == 0);
		done(&c);
	}
	if (attn_case(&c, "no fold: sum", "D", "", "z(b,m,n) = s(b,m,n) * sc + 1", ATTN_TAIL("bf16", ""))) {
		EXPECT(c.fu.k[0].mode == KM_ATTN && c.fu.k[0].at.zmul == 0);
		done(&c);
	}
	if (attn_case(&c, "no fold: unscaled", "D", "", "z(b,m,n) = s(b,m,n)", ATTN_TAIL("bf16", ""))) {
		EXPECT(c.fu.k[0].mode == KM_ATTN && c.fu.k[0].at.zmul == 0);
		done(&c);
	}
	/* a second 16-bit output at (b, m, d), or an f32 one: element by element */
	if (attn_case(&c, "two outputs", "D", ", O2: bf16[B,T,D]", "z(b,m,n) = s(b,m,n) * sc",
	              ATTN_TAIL("bf16", "  stage o2 { O2(b,m,d) = o(b,m,d) * 2 }\n"))) {
		EXPECT(c.fu.nk == 1 && c.fu.k[0].mode == KM_ATTN && c.fu.k[0].at.out == 0);
		done(&c);
	}
	if (load(&c, "f32 out", "fusion at(Q: bf16[B,T,D], K: bf16[B,S,D], V: bf16[B,S,D], sc: f32) -> (O: f32[B,T,D]) {\n"
	                        "  stage qk [tensor_eligible, precision = f32] { s(b,m,n) +=! Q(b,m,d) * K(b,n,d) }\n"
	                        "  stage z { z(b,m,n) = s(b,m,n) * sc }\n" ATTN_TAIL("bf16", ""))) {
		EXPECT(c.fu.nk == 1 && c.fu.k[0].mode == KM_ATTN && c.fu.k[0].at.out == 0);
		done(&c);
	}
	/* a head size that is a number: one entry point, its bucket */
	if (attn_case(&c, "attention D=100", "100", "", "z(b,m,n) = s(b,m,n) * sc", ATTN_TAIL("bf16", ""))) {
		EXPECT(c.fu.k[0].mode == KM_ATTN && c.fu.k[0].at.nent == 1 && c.fu.k[0].at.db[0] == 128);
		done(&c);
	}
	if (attn_case(&c, "attention D=300", "300", "", "z(b,m,n) = s(b,m,n) * sc", ATTN_TAIL("bf16", ""))) {
		EXPECT(c.fu.k[0].mode == KM_TILE && c.fu.k[0].attn_why && strstr(c.fu.k[0].attn_why, "above 256"));
		done(&c);
	}
	/* causal: masked to -1e30 skips blocks; to -1e3 it is still attention, every block computed */
	if (attn_case(&c, "causal", "D", "", "z(b,m,n) = select(n <= m, s(b,m,n) * sc, -1e30)", ATTN_TAIL("bf16", ""))) {
		EXPECT(c.fu.k[0].mode == KM_ATTN && c.fu.k[0].at.causal == 1);
		/* the mask's select, which the kernel takes as its first value inside the triangle */
		EXPECT(c.fu.k[0].at.csel > 0 && c.fe.mod.expr[c.fu.k[0].at.csel].op == IR_SELECT);
		/* its first value S sc: sc folded */
		EXPECT(c.fu.k[0].at.zmul == c.fe.mod.expr[c.fu.k[0].at.csel].b);
		done(&c);
	}
	if (attn_case(&c, "causal -1e3", "D", "", "z(b,m,n) = select(n <= m, s(b,m,n) * sc, -1e3)", ATTN_TAIL("bf16", ""))) {
		EXPECT(c.fu.k[0].mode == KM_ATTN && c.fu.k[0].at.causal == 0 && c.fu.k[0].at.zmul == 0); /* a select, no mask: not folded */
		done(&c);
	}
	if (attn_case(&c, "anti-causal", "D", "", "z(b,m,n) = select(m <= n, s(b,m,n) * sc, -1e30)", ATTN_TAIL("bf16", ""))) {
		EXPECT(c.fu.k[0].mode == KM_ATTN && c.fu.k[0].at.causal == 0);
		done(&c);
	}
	/* P left in f32: still one kernel (rounded to V's type) */
	if (attn_case(&c, "P in f32", "D", "", "z(b,m,n) = s(b,m,n) * sc", ATTN_TAIL("f32", ""))) {
		EXPECT(c.fu.nk == 1 && c.fu.k[0].mode == KM_ATTN);
		done(&c);
	}
	/* the log-sum-exp: a row statement after the product, in the kernel */
	if (attn_case(&c, "lse", "D", ", lse: f32[B,T]", "z(b,m,n) = s(b,m,n) * sc",
	              ATTN_TAIL("bf16", "  stage ls { lse(b,m) = mx(b,m) + log(l(b,m)) }\n"))) {
		EXPECT(c.fu.nk == 1 && c.fu.k[0].mode == KM_ATTN && KERNEL_OF(&c, fu, "lse") == 0 && OP(&c, fu, "lse") == STEP_MAP);
		EXPECT(c.fu.k[0].at.out == 1 + c.fe.mod.stmt[stmt(&c, "O")].out); /* lse is a row's: O still whole rows */
		done(&c);
	}
	/* an additive mask read in z: a matrix from memory a score, so 64-column
	   steps (16 at D 256), whose loads' registers fit */
	if (load(&c, "masked", "fusion at(Q: bf16[B,T,D], K: bf16[B,S,D], V: bf16[B,S,D], mk: f32[B,T,S], sc: f32) -> (O: bf16[B,T,D]) {\n"
	                       "  stage qk [tensor_eligible, precision = f32] { s(b,m,n) +=! Q(b,m,d) * K(b,n,d) }\n"
	                       "  stage z { z(b,m,n) = s(b,m,n) * sc + mk(b,m,n) }\n" ATTN_TAIL("bf16", ""))) {
		const Kernel *k = &c.fu.k[0];
		EXPECT(c.fu.nk == 1 && k->mode == KM_ATTN && k->at.nent == 3);
		EXPECT(k->at.bn[0] == 64 && k->at.bn[1] == 64 && k->at.bn[2] == 16);
		done(&c);
	}
	/* not attention: the exponent is not the max's own z */
	if (load(&c, "other exponent", "fusion at(Q: bf16[B,T,D], K: bf16[B,S,D], V: bf16[B,S,D], sc: f32) -> (O: f32[B,T,D]) {\n"
	                               "  stage qk [tensor_eligible, precision = f32] { s(b,m,n) +=! Q(b,m,d) * K(b,n,d) }\n"
	                               "  stage z { z(b,m,n) = s(b,m,n) * sc }\n"
	                               "  stage mx [reduction] { mx(b,m) max=! z(b,m,n) }\n"
	                               "  stage l [reduction] { l(b,m) +=! exp(s(b,m,n) - mx(b,m)) }\n"
	                               "  stage p [precision = bf16] { p(b,m,n) = exp(s(b,m,n) - mx(b,m)) / l(b,m) }\n"
	                               "  stage pv [tensor_eligible, precision = f32] { O(b,m,d) +=! p(b,m,n) * V(b,n,d) }\n"
	                               "}\n")) {
		EXPECT(c.fu.k[0].mode == KM_TILE && c.fu.k[0].attn_why && strstr(c.fu.k[0].attn_why, "exp(z - max)"));
		done(&c);
	}
	/* not attention: the scores are an output, or read after the kernel */
	if (attn_case(&c, "scores out", "D", ", zo: f32[B,T,S]", "zo(b,m,n) = s(b,m,n) * sc }\n  stage z2 { z(b,m,n) = zo(b,m,n)",
	              ATTN_TAIL("bf16", ""))) {
		EXPECT(c.fu.k[0].mode == KM_TILE && c.fu.k[0].attn_why && strstr(c.fu.k[0].attn_why, "is an output"));
		done(&c);
	}
	if (attn_case(&c, "scores read later", "D", ", w: f32[B,T,S]", "z(b,m,n) = s(b,m,n) * sc",
	              ATTN_TAIL("bf16", "  stage late { w(b,m,n) = p(b,m,n) * 2.0 }\n"))) {
		EXPECT(c.fu.k[0].mode == KM_TILE && c.fu.k[0].attn_why && strstr(c.fu.k[0].attn_why, "later statement reads"));
		done(&c);
	}
	/* not attention: K stored [B,D,S], read as K(b,d,n) */
	if (load(&c, "K transposed", "fusion at(Q: bf16[B,T,D], K: bf16[B,D,S], V: bf16[B,S,D], sc: f32) -> (O: bf16[B,T,D]) {\n"
	                             "  stage qk [tensor_eligible, precision = f32] { s(b,m,n) +=! Q(b,m,d) * K(b,d,n) }\n"
	                             "  stage z { z(b,m,n) = s(b,m,n) * sc }\n" ATTN_TAIL("bf16", ""))) {
		EXPECT(c.fu.k[0].mode == KM_TILE && c.fu.k[0].attn_why && strstr(c.fu.k[0].attn_why, "K([b,]d,n)"));
		done(&c);
	}
}

/* Scatter-add into a temp: its own kernel, the reader split after it and
 * zeroing the temp for the next run; a compaction; rank-0 work alone. */
static void test_scatter_compact_scalar(void)
{
	Case c;
	if (load(&c, "scatter", "fusion sc(idx: i32[M], w: f32[M]) -> (y: f32[N]) {\n"
	                        "  temp T: f32[N]\n"
	                        "  stage a [scatter] { T(idx(m)) += w(m) }\n"
	                        "  stage b { y(i) = T(i) * 2.0 }\n"
	                        "}\n")) {
		EXPECT(c.fu.nk == 2 && c.fu.k[0].mode == KM_SCATTER && c.fu.k[1].mode == KM_POINT);
		EXPECT(OP(&c, fu, "T") == STEP_SCATTER && WHY(&c, fu, "y") == SPLIT_SCATTER);
		EXPECT(STORAGE(&c, fu, "T") == ST_STORED);
		EXPECT(c.fu.reset_by[tensor(&c, "T") - c.fu.first_tensor] == 1); /* its reader zeroes it: no memset */
		done(&c);
	}
	if (load(&c, "compact", "fusion cp(u: f32[N], v: f32) -> (idx: i32[N], count: i32) {\n"
	                        "  stage f [compact] { idx[count] <- n where u(n) >= v }\n"
	                        "}\n")) {
		EXPECT(c.fu.nk == 1 && c.fu.k[0].mode == KM_POINT && OP(&c, fu, "idx") == STEP_COMPACT);
		EXPECT(STORAGE(&c, fu, "count") == ST_STORED && c.fu.reset_by[tensor(&c, "count") - c.fu.first_tensor] == -1); /* a memset */
		done(&c);
	}
	if (load(&c, "scalar", "fusion sa(a: f32, b: f32) -> (c: f32) {\n"
	                       "  stage x { c = a * b }\n"
	                       "}\n")) {
		EXPECT(c.fu.nk == 1 && c.fu.k[0].mode == KM_SCALAR && c.fu.k[0].nspace == 0);
		EXPECT(OP(&c, fu, "c") == STEP_SCALAR && STORAGE(&c, fu, "c") == ST_STORED);
		done(&c);
	}
}

/* A pointwise statement over [rows, C] whose next statement reduces each
 * row reading it starts the row kernel (row_ahead): a residual add before
 * an RMS norm is one kernel, the sum written by the row's walk. */
static void test_row_ahead(void)
{
	Case c;
	if (load(&c, "add then rmsnorm", "fusion an(x: bf16[R,C], res: bf16[R,C], w: bf16[C]) -> (h: bf16[R,C], y: bf16[R,C]) {\n"
	                                 "  stage add [precision = bf16] { h(r,c) = x(r,c) + res(r,c) }\n"
	                                 "  stage ss [reduction] { ms(r) +=! h(r,c) * h(r,c) }\n"
	                                 "  stage n [precision = bf16] { y(r,c) = h(r,c) * rsqrt(ms(r) / C + 1e-6) * w(c) }\n"
	                                 "}\n")) {
		EXPECT(c.fu.nk == 1 && c.fu.k[0].mode == KM_ROW && c.fu.k[0].nspace == 1 && c.fu.k[0].ninner == 1);
		EXPECT(OP(&c, fu, "h") == STEP_ROW_ELEM && OP(&c, fu, "ms") == STEP_REDUCE && WHY(&c, fu, "ms") == SPLIT_NONE);
		EXPECT(c.un.nk == 3 && c.un.k[0].mode == KM_POINT); /* unfused: every stage alone */
		done(&c);
	}
	/* the reduction reads another tensor's rows: still joins, the sum recomputed there */
	if (load(&c, "add then a row sum elsewhere", "fusion ag(x: f32[R,C], idx: i32[R]) -> (h: f32[R,C], y: f32[R]) {\n"
	                                             "  stage add { h(r,c) = x(r,c) * 2.0 }\n"
	                                             "  stage ss [reduction] { y(r) +=! h(r,c) }\n"
	                                             "}\n")) {
		EXPECT(c.fu.nk == 1 && c.fu.k[0].mode == KM_ROW);
		done(&c);
	}
	/* a map not followed by a row reduction stays a point kernel */
	if (load(&c, "map then map", "fusion mm(x: f32[R,C]) -> (h: f32[R,C], y: f32[R,C]) {\n"
	                             "  stage a { h(r,c) = x(r,c) * 2.0 }\n"
	                             "  stage b { y(r,c) = h(r,c) + 1.0 }\n"
	                             "}\n")) {
		EXPECT(c.fu.nk == 1 && c.fu.k[0].mode == KM_POINT);
		done(&c);
	}
}

/* A reduction over several trailing axes (group norm's statistics per
 * (n, g) over (c, h)) is a row kernel whose row is their product, walked
 * flat, when every load reads them last, in order, over its own trailing
 * dimensions; otherwise a thread-per-output kernel as before. */
static void test_row_axes(void)
{
	Case c;
	if (load(&c, "group norm", "fusion gn(x: f32[N,G,CG,HW], gamma: f32[G,CG]) -> (y: f32[N,G,CG,HW]) {\n"
	                           "  stage m [reduction] { mu(n,g) +=! x(n,g,c,h) / (CG * HW) }\n"
	                           "  stage v [reduction] { va(n,g) +=! (x(n,g,c,h) - mu(n,g)) * (x(n,g,c,h) - mu(n,g)) / (CG * HW) }\n"
	                           "  stage y { y(n,g,c,h) = (x(n,g,c,h) - mu(n,g)) * rsqrt(va(n,g) + 1e-5) * gamma(g,c) }\n"
	                           "}\n")) {
		EXPECT(c.fu.nk == 1 && c.fu.k[0].mode == KM_ROW && c.fu.k[0].nspace == 2 && c.fu.k[0].ninner == 2);
		EXPECT(c.fu.k[0].par.rcache > 0); /* walked three times: kept in registers */
		EXPECT(OP(&c, fu, "mu") == STEP_REDUCE && OP(&c, fu, "va") == STEP_REDUCE && OP(&c, fu, "y") == STEP_ROW_ELEM);
		EXPECT(c.un.k[0].mode == KM_ROW && c.un.k[0].ninner == 2); /* each statistic alone: a row kernel too */
		done(&c);
	}
	/* three axes: a layer norm over (c, h, w) of images */
	if (load(&c, "three axes", "fusion ln(x: f32[N,C,H,W]) -> (s: f32[N]) {\n"
	                           "  stage m [reduction] { s(n) +=! x(n,c,h,w) }\n"
	                           "}\n")) {
		EXPECT(c.fu.nk == 1 && c.fu.k[0].mode == KM_ROW && c.fu.k[0].ninner == 3 && c.fu.k[0].nspace == 1);
		done(&c);
	}
	/* batch norm's statistics per channel over (n, h, w): a row in two
	   contiguous runs, n apart from (h, w) by the kept c; the normalised
	   x after them is not an element of such a row (its own kernel) */
	if (load(&c, "in segments", "fusion bs(x: f32[N,C,H,W]) -> (y: f32[N,C,H,W]) {\n"
	                           "  stage m [reduction] { mu(c) +=! x(n,c,h,w) }\n"
	                           "  stage y { y(n,c,h,w) = x(n,c,h,w) - mu(c) }\n"
	                           "}\n")) {
		EXPECT(c.fu.nk == 2 && c.fu.k[0].mode == KM_ROW && c.fu.k[0].ninner == 3 && c.fu.k[0].nspace == 1);
		EXPECT(c.fu.k[0].lead == 1 && c.fu.k[0].gap == 1 && c.fu.k[1].mode == KM_POINT);
		EXPECT(row_axis_pos(&c.fu.k[0], 0) == 1 && row_axis_pos(&c.fu.k[0], 1) == 0 && row_axis_pos(&c.fu.k[0], 3) == 3);
		done(&c);
	}
	if (load(&c, "lead of two", "fusion l2(x: f32[A,B,C,D]) -> (s: f32[C]) {\n  stage m [reduction] { s(c) +=! x(a,b,c,d) }\n}\n")) {
		EXPECT(c.fu.nk == 1 && c.fu.k[0].mode == KM_ROW && c.fu.k[0].lead == 2 && c.fu.k[0].gap == 1);
		EXPECT(row_axis_pos(&c.fu.k[0], 0) == 2 && row_axis_pos(&c.fu.k[0], 2) == 1 && row_axis_pos(&c.fu.k[0], 3) == 3);
		done(&c);
	}
	/* the last axis kept (an outer reduction), read out of order, or through arithmetic: thread per output */
	const char *no[] = {"fusion bs(x: f32[N,H,C]) -> (s: f32[C]) {\n  stage m [reduction] { s(c) +=! x(n,h,c) }\n}\n",
	                    "fusion ro(x: f32[N,A,B], y: f32[N,B,A]) -> (s: f32[N]) {\n  stage m [reduction] { s(n) +=! x(n,a,b) * y(n,b,a) }\n}\n",
	                    "fusion ar(x: f32[N,A,B], y: f32[N,A]) -> (s: f32[N]) {\n  stage m [reduction] { s(n) +=! x(n,a,b) * y(n,(a + b) % A) }\n}\n"};
	for (int i = 0; i < 3; i++)
		if (load(&c, "not a row", no[i])) {
			EXPECT(c.fu.nk == 1 && c.fu.k[0].mode == KM_POINT && c.fu.k[0].ninner == 0);
			done(&c);
		}
}

/* A row's sum and the squares about its mean are one walk where the row
 * is streamed (plan_shift.c): the same term, unmasked, about a value
 * constant over the row; not for another term or a masked sum. */
static void test_row_shift(void)
{
	Case c;
	if (load(&c, "mean and variance", "fusion mv(X: f32[R,C]) -> (v: f32[R]) {\n"
	                                  "  stage s [reduction] { s(r) +=! X(r,c) }\n"
	                                  "  stage m { mu(r) = s(r) / C }\n"
	                                  "  stage q [reduction] { v(r) +=! (X(r,c) - mu(r)) * (X(r,c) - mu(r)) }\n"
	                                  "}\n")) {
		const Kernel *k = &c.fu.k[0];
		EXPECT(c.fu.nk == 1 && k->mode == KM_ROW && k->shift_sq && k->shift_sum < k->shift_sq);
		EXPECT(c.fe.mod.tensor[c.fe.mod.stmt[k->shift_sum].out].name[0] == 's' && c.fe.mod.tensor[c.fe.mod.stmt[k->shift_sq].out].name[0] == 'v');
		EXPECT(!c.un.k[0].shift_sq); /* each reduction alone */
		done(&c);
	}
	/* over the outer axis: one split loop for both, one kernel (it was two, X read twice) */
	if (load(&c, "column mean and variance", "fusion cv(X: f32[N,C]) -> (v: f32[C]) {\n"
	                                         "  stage s [reduction] { s(c) +=! X(n,c) }\n"
	                                         "  stage m { mu(c) = s(c) / N }\n"
	                                         "  stage q [reduction] { v(c) +=! (X(n,c) - mu(c)) * (X(n,c) - mu(c)) }\n"
	                                         "}\n")) {
		const Kernel *k = &c.fu.k[0];
		EXPECT(c.fu.nk == 1 && k->mode == KM_POINT && k->shift_sq && k->par.slices > 1 && k->par.split == 2);
		EXPECT(c.un.nk == 3 && !c.un.k[0].shift_sq);
		done(&c);
	}
	/* a third reduction after the pair reading the mean: a kernel of its own */
	if (load(&c, "after the pair", "fusion cw(X: f32[N,C]) -> (v: f32[C], w: f32[C]) {\n"
	                               "  stage s [reduction] { s(c) +=! X(n,c) }\n"
	                               "  stage m { mu(c) = s(c) / N }\n"
	                               "  stage q [reduction] { v(c) +=! (X(n,c) - mu(c)) * (X(n,c) - mu(c)) }\n"
	                               "  stage r [reduction] { w(c) +=! X(n,c) * mu(c) }\n"
	                               "}\n")) {
		EXPECT(c.fu.nk == 2 && c.fu.k[0].shift_sq && !c.fu.k[1].shift_sq);
		done(&c);
	}
	const char *no[] = {"fusion a(X: f32[R,C], Y: f32[R,C]) -> (v: f32[R]) {\n  stage s [reduction] { s(r) +=! X(r,c) }\n"
	                    "  stage q [reduction] { v(r) +=! (Y(r,c) - s(r)) * (Y(r,c) - s(r)) }\n}\n",
	                    "fusion b(X: f32[R,C]) -> (v: f32[R]) {\n  stage s [reduction] { s(r) +=! X(r,c) where X(r,c) > 0.0 }\n"
	                    "  stage q [reduction] { v(r) +=! (X(r,c) - s(r)) * (X(r,c) - s(r)) }\n}\n",
	                    "fusion d(X: f32[R,C]) -> (v: f32[R]) {\n  stage s [reduction] { s(r) +=! X(r,c) }\n"
	                    "  stage q [reduction] { v(r) +=! (X(r,c) - X(r,0)) * (X(r,c) - X(r,0)) }\n}\n"};
	for (int i = 0; i < 3; i++)
		if (load(&c, "no shifted pair", no[i])) {
			EXPECT(c.fu.nk >= 1 && !c.fu.k[0].shift_sq);
			done(&c);
		}
}

/* A row's max and a later sum of exp(term - max) are one walk where the
 * row is streamed (plan_shift.c plan_online): the same term (bf16 widened
 * to f32 still the same), unmasked, less the row's own max; not another
 * term, a mask, a max at another row, a scaled exponent, or a sum first. */
static void test_row_online(void)
{
	Case c;
	if (load(&c, "log-sum-exp", "fusion l(X: bf16[R,C]) -> (y: f32[R]) {\n"
	                            "  stage m [reduction] { m(r) max=! X(r,c) }\n"
	                            "  stage s [reduction] { s(r) +=! exp(X(r,c) - m(r)) }\n"
	                            "  stage o { y(r) = m(r) + log(s(r)) }\n"
	                            "}\n")) {
		const Kernel *k = &c.fu.k[0];
		EXPECT(c.fu.nk == 1 && k->mode == KM_ROW && k->online_sum && k->online_max < k->online_sum);
		EXPECT(c.fe.mod.tensor[c.fe.mod.stmt[k->online_max].out].name[0] == 'm' && c.fe.mod.tensor[c.fe.mod.stmt[k->online_sum].out].name[0] == 's');
		EXPECT(!c.un.k[0].online_sum && !c.un.k[1].online_sum); /* each reduction alone */
		done(&c);
	}
	/* the exponentials a stage of their own (specs/softmax.fuse's spelling) */
	if (load(&c, "softmax", "fusion sm(X: f32[R,C]) -> (Y: f32[R,C]) {\n"
	                        "  stage m [reduction] { m(r) max=! X(r,c) }\n"
	                        "  stage e { e(r,c) = exp(X(r,c) - m(r)) }\n"
	                        "  stage s [reduction] { s(r) +=! e(r,c) }\n"
	                        "  stage y { Y(r,c) = e(r,c) / s(r) }\n"
	                        "}\n")) {
		const Kernel *k = &c.fu.k[0];
		EXPECT(c.fu.nk == 1 && k->mode == KM_ROW && k->online_sum && c.fe.mod.tensor[c.fe.mod.stmt[k->online_sum].out].name[0] == 's');
		done(&c);
	}
	const char *no[] = {"fusion a(X: f32[R,C], Y: f32[R,C]) -> (v: f32[R]) {\n  stage m [reduction] { m(r) max=! X(r,c) }\n"
	                    "  stage s [reduction] { v(r) +=! exp(Y(r,c) - m(r)) }\n}\n",
	                    "fusion b(X: f32[R,C]) -> (v: f32[R]) {\n  stage m [reduction] { m(r) max=! X(r,c) }\n"
	                    "  stage s [reduction] { v(r) +=! exp(X(r,c) - m(r)) where X(r,c) > 0.0 }\n}\n",
	                    "fusion d(X: f32[R,C]) -> (v: f32[R]) {\n  stage m [reduction] { m(r) max=! X(r,c) }\n"
	                    "  stage s [reduction] { v(r) +=! exp(X(r,c) - m(0)) }\n}\n",
	                    "fusion e(X: f32[R,C]) -> (v: f32[R]) {\n  stage m [reduction] { m(r) max=! X(r,c) }\n"
	                    "  stage s [reduction] { v(r) +=! exp(2.0 * (X(r,c) - m(r))) }\n}\n",
	                    "fusion f(X: f32[R,C]) -> (v: f32[R]) {\n  stage m [reduction] { m(r) min=! X(r,c) }\n"
	                    "  stage s [reduction] { v(r) +=! exp(X(r,c) - m(r)) }\n}\n",
	                    /* the exponentials stored in bf16: the sum adds rounded values */
	                    "fusion g(X: f32[R,C]) -> (v: f32[R]) {\n  stage m [reduction] { m(r) max=! X(r,c) }\n"
	                    "  stage e [precision = bf16] { e(r,c) = exp(X(r,c) - m(r)) }\n  stage s [reduction] { v(r) +=! e(r,c) }\n}\n",
	                    /* the exponentials at the transposed point */
	                    "fusion h(X: f32[R,R]) -> (v: f32[R]) {\n  stage m [reduction] { m(r) max=! X(r,c) }\n"
	                    "  stage e { e(r,c) = exp(X(r,c) - m(r)) }\n  stage s [reduction] { v(r) +=! e(c,r) }\n}\n"};
	for (int i = 0; i < 7; i++)
		if (load(&c, "no online pair", no[i])) {
			EXPECT(c.fu.nk >= 1 && !c.fu.k[0].online_sum);
			done(&c);
		}
}

/* A row kernel walking its rows once takes the row template (its group
 * sized by the width at launch) unless it reads a vector along the row:
 * gemv's W(m,n) x(n) stays a warp a row. */
static void test_row_once(void)
{
	Case c;
	if (load(&c, "row sum", "fusion rs(x: f32[R,C]) -> (s: f32[R]) {\n  stage m [reduction] { s(r) +=! x(r,c) * x(r,c) }\n}\n")) {
		EXPECT(c.fu.nk == 1 && c.fu.k[0].mode == KM_ROW && c.fu.k[0].par.rcache > 0 && !c.fu.k[0].par.warp_rows);
		done(&c);
	}
	if (load(&c, "gemv", "fusion gv(W: f32[M,N], x: f32[N]) -> (y: f32[M]) {\n  stage m [reduction] { y(i) +=! W(i,j) * x(j) }\n}\n")) {
		EXPECT(c.fu.nk == 1 && c.fu.k[0].mode == KM_ROW && c.fu.k[0].par.rcache == 0 && c.fu.k[0].par.warp_rows);
		done(&c);
	}
}

/* A row cache's vector path takes rows of any width and alignment
 * (Kernel.peel, plan_launch.c row_peel): the head before the first 16-byte
 * boundary and the tail a column a thread. Every kernel keeping rows in
 * registers whose row tensors share a layout and has one of f32, f16 or
 * bf16; not rows in segments, not a walk without a register cache, not
 * rows with no 16-byte vectors, not tensors of the row's rank laid out
 * otherwise (a transposed read: the heads could differ). */
static void test_row_peel(void)
{
	Case c;
	if (load(&c, "softmax", "fusion sm(X: f32[R,C]) -> (Y: f32[R,C]) {\n"
	                        "  stage a [reduction] { mx(r) max=! X(r,c) }\n"
	                        "  stage b [reduction] { s(r) +=! exp(X(r,c) - mx(r)) }\n"
	                        "  stage o { Y(r,c) = exp(X(r,c) - mx(r)) / s(r) }\n}\n")) {
		EXPECT(c.fu.nk == 1 && c.fu.k[0].mode == KM_ROW && c.fu.k[0].par.rcache > 0 && c.fu.k[0].peel == 1);
		EXPECT(c.un.k[0].mode == KM_ROW && c.un.k[0].par.rcache > 0 && c.un.k[0].peel == 1); /* the max alone */
		for (int i = 0; i < c.un.nk; i++) EXPECT(c.un.k[i].peel == (c.un.k[i].mode == KM_ROW && c.un.k[i].par.rcache > 0));
		done(&c);
	}
	/* 16-bit rows in, another 16-bit type out, over two space axes, a broadcast weight */
	if (load(&c, "rms norm f16 to bf16", "fusion rn(x: f16[B,T,C], g: f32[C]) -> (y: bf16[B,T,C]) {\n"
	                                     "  stage m [reduction] { s(b,t) +=! x(b,t,c) * x(b,t,c) }\n"
	                                     "  stage o { y(b,t,c) = x(b,t,c) * rsqrt(s(b,t) / C + 1e-6) * g(c) }\n}\n")) {
		EXPECT(c.fu.nk == 1 && c.fu.k[0].mode == KM_ROW && c.fu.k[0].nspace == 2 && c.fu.k[0].peel == 1);
		done(&c);
	}
	/* a row over two trailing axes walked as one */
	if (load(&c, "two axes", "fusion ta(x: f32[N,A,B]) -> (y: f32[N,A,B]) {\n"
	                         "  stage m [reduction] { mu(n) +=! x(n,a,b) }\n"
	                         "  stage o { y(n,a,b) = x(n,a,b) - mu(n) }\n}\n")) {
		EXPECT(c.fu.nk == 1 && c.fu.k[0].mode == KM_ROW && c.fu.k[0].ninner == 2 && c.fu.k[0].peel == 1);
		done(&c);
	}
	if (load(&c, "segments", "fusion bs(x: f32[N,C,H,W]) -> (mu: f32[C], q: f32[C]) {\n"
	                         "  stage m [reduction] { mu(c) +=! x(n,c,h,w) }\n"
	                         "  stage v [reduction] { q(c) +=! (x(n,c,h,w) - mu(c)) * (x(n,c,h,w) - mu(c)) }\n}\n")) {
		EXPECT(c.fu.nk == 1 && c.fu.k[0].mode == KM_ROW && c.fu.k[0].lead == 1 && c.fu.k[0].par.rcache > 0 && c.fu.k[0].peel == 0);
		done(&c);
	}
	if (load(&c, "gemv", "fusion gv(W: f32[M,N], x: f32[N]) -> (y: f32[M]) {\n  stage m [reduction] { y(i) +=! W(i,j) * x(j) }\n}\n")) {
		EXPECT(c.fu.k[0].mode == KM_ROW && c.fu.k[0].par.rcache == 0 && c.fu.k[0].peel == 0);
		done(&c);
	}
	if (load(&c, "i32 rows", "fusion ir(x: i32[R,C]) -> (y: i32[R,C]) {\n"
	                         "  stage m [reduction] { s(r) +=! x(r,c) }\n"
	                         "  stage o { y(r,c) = x(r,c) - s(r) }\n}\n")) {
		EXPECT(c.fu.k[0].mode == KM_ROW && c.fu.k[0].par.rcache > 0 && c.fu.k[0].peel == 0);
		done(&c);
	}
	if (load(&c, "transposed read", "fusion tr(x: f32[R,C], z: f32[C,R]) -> (y: f32[R,C]) {\n"
	                                "  stage m [reduction] { s(r) max=! x(r,c) }\n"
	                                "  stage o { y(r,c) = x(r,c) - s(r) + z(c,r) }\n}\n")) {
		EXPECT(c.fu.nk == 1 && c.fu.k[0].mode == KM_ROW && c.fu.k[0].par.rcache > 0 && c.fu.k[0].peel == 0);
		done(&c);
	}
}

/* A masked map takes 4 points a thread like any other (its masks kept
 * for its stores, cuda_map); an input read at a*i + b along the space's
 * innermost index i, a in 2..4, 0 <= b < a, is a vector tensor of stride a
 * (Kernel.vec_stride: its copies' elements in a vectors); not another
 * stride, two strides, an offset of a or more. */
static void test_gather_stride(void)
{
	Case c;
	if (load(&c, "odd columns", "fusion oc(X: f32[R,C], w: f32[H]) -> (y: f32[R,H]) {\n"
	                            "  stage p { y(r,h) = X(r, 2*h + 1) * w(h) where 2*h + 1 < C }\n}\n")) {
		const Kernel *k = &c.fu.k[0];
		EXPECT(c.fu.nk == 1 && k->mode == KM_POINT && k->par.unroll == 1 && k->par.vec == 4 && k->par.min_blocks == 6);
		EXPECT(kernel_vec_stride(k, tensor(&c, "X")) == 2 && kernel_vec_stride(k, tensor(&c, "w")) == 1 && kernel_vec_stride(k, tensor(&c, "y")) == 1);
		done(&c);
	}
	if (load(&c, "every third, f16", "fusion g3(img: f16[N,Q]) -> (g: f32[N,P]) {\n"
	                                 "  stage p { g(n,p) = img(n, p * 3) where 3*p < Q }\n}\n")) {
		EXPECT(kernel_vec_stride(&c.fu.k[0], tensor(&c, "img")) == 3);
		done(&c);
	}
	const char *no[] = {"fusion s5(X: f32[R,C]) -> (y: f32[R,H]) {\n  stage p { y(r,h) = X(r, 5*h) where 5*h < C }\n}\n",
	                    "fusion s2(X: f32[R,C]) -> (y: f32[R,H]) {\n  stage p { y(r,h) = X(r, 2*h) + X(r, 3*h) where 3*h < C }\n}\n",
	                    "fusion b2(X: f32[R,C]) -> (y: f32[R,H]) {\n  stage p { y(r,h) = X(r, 2*h + 2) where 2*h + 2 < C }\n}\n"};
	for (int i = 0; i < 3; i++)
		if (load(&c, "not a gather", no[i])) {
			EXPECT(c.fu.k[0].mode == KM_POINT && kernel_vec_stride(&c.fu.k[0], tensor(&c, "X")) == 0);
			done(&c);
		}
}

/* A map on vector paths takes its strided fallback one point at a time and
 * three quarters of an SM (40 registers), not half: the fallback's four
 * copies set the kernel's registers (bench/runs/pointocc-2026-11-26-h200);
 * past 5 loads and stores of vector tensors (an optimizer step updating
 * four in place) the values alone need more, and the old bound stays; f64
 * keeps its register pairs' bound. */
static void test_point_occupancy(void)
{
	Case c;
	if (load(&c, "gated bf16", "fusion g(x: bf16[R,C], u: bf16[R,C]) -> (y: bf16[R,C]) {\n"
	                           "  stage p { y(r,c) = silu(x(r,c)) * u(r,c) }\n}\n")) {
		const Kernel *k = &c.fu.k[0];
		EXPECT(k->mode == KM_POINT && k->par.vec == 8 && k->par.unroll == 1 && k->par.min_blocks == 6);
		done(&c);
	}
	if (load(&c, "four in place", "fusion o(p: bf16[N], g: bf16[N], m: bf16[N], v: bf16[N], lr: f32) -> (p, m, v) {\n"
	                              "  stage a { m(i) = 0.9 * m(i) + 0.1 * g(i) }\n"
	                              "  stage b { v(i) = 0.99 * v(i) + 0.01 * g(i) * g(i) }\n"
	                              "  stage c { p(i) = p(i) - lr * m(i) / (sqrt(v(i)) + 1e-8) }\n}\n")) {
		const Kernel *k = &c.fu.k[0];
		EXPECT(c.fu.nk == 1 && k->par.vec == 8 && k->par.unroll == 4 && k->par.min_blocks == 4);
		done(&c);
	}
	if (load(&c, "f64 map", "fusion d(x: f64[N], y: f32[N]) -> (z: f32[N]) {\n"
	                        "  stage p [precision = f64] { z(i) = x(i) * y(i) }\n}\n")) {
		const Kernel *k = &c.fu.k[0];
		EXPECT(k->par.vec == 4 && k->par.unroll == 1 && k->par.min_blocks == 4);
		done(&c);
	}
}

/* The values each integer input must take (values.c), for the manifest's
 * `values` lines: subscripts of a dimension, ragged bounds, divisors; a
 * `where` that reads the input guards its uses. */
static void test_input_values(void)
{
	Case c;
	if (!load(&c, "values", "fusion vb(fired: i32[F], rp: i32[NP1], col: i32[S], w: f32[S], d: i32[N], nb: i32[N], x: f32[N])\n"
	                        "    -> (y: f32[N], q: i32[N], z: f32[N]) {\n"
	                        "  temp I: f32[N]\n"
	                        "  stage p [scatter] { I(col(s)) += w(s) for s in rp(fired(f)) .. rp(fired(f) + 1) }\n"
	                        "  stage a { y(n) = I(n) }\n"
	                        "  stage b { q(n) = n / d(n) }\n"
	                        "  stage g [reduction] { z(n) +=! x(nb(n)) where nb(n) >= 0 }\n"
	                        "}\n"))
		return;
	const Module *m = &c.fe.mod;
	ValueRange v;
	int np1 = -1, s = -1, n = -1;
	for (int i = 0; i < m->fusion[0].nsym; i++) {
		if (!strcmp(m->fusion[0].sym[i], "NP1")) np1 = i;
		if (!strcmp(m->fusion[0].sym[i], "S")) s = i;
		if (!strcmp(m->fusion[0].sym[i], "N")) n = i;
	}
	plan_input_values(m, 0, tensor(&c, "fired"), &v); /* rp(fired(f)) and rp(fired(f) + 1): 0..NP1-2 */
	EXPECT(v.known && v.lo_sym == -1 && v.lo == 0 && v.hi_sym == np1 && v.hi == -2 && !v.nondecreasing && !v.nonzero);
	plan_input_values(m, 0, tensor(&c, "rp"), &v); /* a ragged range over S: 0..S, nondecreasing */
	EXPECT(v.known && v.lo == 0 && v.hi_sym == s && v.hi == 0 && v.nondecreasing);
	plan_input_values(m, 0, tensor(&c, "col"), &v); /* the scatter's target I[N]: 0..N-1 */
	EXPECT(v.known && v.lo == 0 && v.hi_sym == n && v.hi == -1);
	plan_input_values(m, 0, tensor(&c, "d"), &v); /* a divisor */
	EXPECT(!v.known && v.nonzero);
	plan_input_values(m, 0, tensor(&c, "nb"), &v); /* guarded by its where */
	EXPECT(!v.known && !v.nonzero);
	done(&c);
}

/* Stages that cannot share a kernel, each with its rule. */
static void test_split_rules(void)
{
	Case c;
	if (!load(&c, "split rules", "fusion sp(W: f32[R,C], x: f32[C], v: f32[N]) -> (y: f32[R], z: f32[N], q: f32[R]) {\n"
	                             "  stage a [reduction] { g(r) +=! W(r,c) * x(c) }\n"
	                             "  stage b { y(r) = g(r) * 2.0 }\n"
	                             "  stage c { z(i) = v(i) + 1.0 }\n"
	                             "  stage d { q(r) = y(r) + 1.0 }\n"
	                             "}\n"))
		return;
	EXPECT(KERNEL_OF(&c, fu, "g") == KERNEL_OF(&c, fu, "y"));
	EXPECT(c.fu.k[KERNEL_OF(&c, fu, "g")].mode == KM_ROW);
	EXPECT(STORAGE(&c, fu, "g") == ST_REGISTERS);
	EXPECT(WHY(&c, fu, "y") == SPLIT_NONE);
	EXPECT(WHY(&c, fu, "z") == SPLIT_ROW_MODE || WHY(&c, fu, "z") == SPLIT_SPACE);
	EXPECT(KERNEL_OF(&c, fu, "z") != KERNEL_OF(&c, fu, "y"));
	EXPECT(WHY(&c, fu, "q") != SPLIT_NONE);
	done(&c);
}

/* The namer: made names are distinct from each other and from reserved
 * ones, whatever their length. */
static void test_namer(void)
{
	cur = "namer";
	Namer nm;
	namer_init(&nm);
	namer_reserve(&nm, "k_f0");
	const char *a = namer_make(&nm, "%s_f%d", "k", 0);
	const char *b = namer_make(&nm, "%s_f%d", "k", 0);
	EXPECT(strcmp(a, "k_f0") && strcmp(b, "k_f0") && strcmp(a, b));
	EXPECT(namer_taken(&nm, a) && namer_taken(&nm, b) && !namer_taken(&nm, "k_f1"));
	char longname[600];
	memset(longname, 'n', sizeof longname - 1), longname[sizeof longname - 1] = 0;
	const char *l1 = namer_make(&nm, "%s", longname), *l2 = namer_make(&nm, "%s", longname);
	EXPECT(!strcmp(l1, longname) && strcmp(l2, longname) && !strncmp(l2, longname, sizeof longname - 1));
	for (int i = 0; i < 1000; i++) namer_make(&nm, "x%d", i % 10); /* grows its table */
	EXPECT(namer_taken(&nm, "x3") && namer_taken(&nm, "x3_100"));
	namer_free(&nm);
}

/* Internal errors: one path, exit status 3, the spec named. */
static void test_die(void)
{
	cur = "die";
	int fd[2];
	if (pipe(fd)) {
		nfail++, printf("FAIL die: pipe\n");
		return;
	}
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		dup2(fd[1], 2);
		close(fd[0]);
		die_set_spec("specs/some.fuse");
		die("plan: kernel %s has no statements", "x_f0");
	}
	close(fd[1]);
	char buf[512] = {0};
	size_t n = 0;
	ssize_t r;
	while (n < sizeof buf - 1 && (r = read(fd[0], buf + n, sizeof buf - 1 - n)) > 0) n += (size_t)r;
	close(fd[0]);
	int status = 0;
	waitpid(pid, &status, 0);
	EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 3);
	EXPECT(strstr(buf, "fusec: internal error compiling specs/some.fuse: plan: kernel x_f0 has no statements") != NULL);
}

int main(void)
{
	test_point();
	test_row();
	test_grid_fold();
	test_contractions();
	test_attention();
	test_row_ahead();
	test_row_axes();
	test_row_shift();
	test_row_online();
	test_row_once();
	test_row_peel();
	test_gather_stride();
	test_point_occupancy();
	test_input_values();
	test_scatter_compact_scalar();
	test_split_rules();
	test_namer();
	test_die();
	printf("unit_plan: %d passed, %d failed\n", npass, nfail);
	return nfail != 0;
}
