/* fuzz_specs: fusec one step further than its exit code (issue 27). Random
 * VALID specs, made by a grammar-aware generator that knows the language's
 * rules (dsl/README.md), go through fusec's whole artifact writer and what
 * it writes is used:
 *
 *   1. every spec, in-process (this program links fusec's front end,
 *      planner, writers and artifact writer, sanitized): frontend_check,
 *      then artifact_write for sm_80, sm_90, sm_90a, sm_100 and sm_120 (the
 *      schedules of every target, the CUDA, the header, the reference, the
 *      manifest and its limits, the files written atomically) with NVRTC
 *      and ptxas stubbed out: the one step that costs seconds a spec;
 *   2. every spec's header and reference, compiled by clang with -Wall
 *      -Wextra -Werror, ASan and UBSan (float-cast-overflow included), in
 *      batches (a translation unit holds a batch: fuserun.h, every header,
 *      every reference with its static helpers renamed), and every
 *      reference run on inputs drawn from what the generator knows they must
 *      hold (domains, gather indices in range, CSR row pointers, nonzero
 *      divisors): it must return 0 (no bad subscript) with no sanitizer
 *      report; the headers are also compiled as C++ (g++ -fsyntax-only);
 *   3. a deterministic sample (1 in K seeds by a hash, --sample K): the real
 *      fusec (-o, NVRTC, all five targets) and the toolkit's ptxas on each
 *      PTX it wrote, which must assemble; the sample's header and reference
 *      are also compiled alone.
 *
 * A spec fusec rejects (the generator's mistake, or fusec's) or refuses
 * when writing (a resource past a limit: fusec says file:line:col) is
 * counted and shown, not a finding; a crash, a sanitizer report, an exit 3,
 * a header or reference that does not compile, a reference that refuses or
 * traps on valid inputs, and PTX that ptxas refuses are findings.
 *
 *   fuzz_specs [--seed S] [--count N] [--jobs J] [--sample K] [--batch B]
 *              [--fusec PATH] [--ptxas PATH] [--cc CLANG] [--cxx CXX]
 *              [--dir DIR] [--keep] [--verbose]
 *   fuzz_specs --print SEED        the spec of one seed, on stdout
 *
 * Seeds S .. S+N-1; worker w of J takes those congruent to w. Exit status 0
 * with no finding, 1 with one (each printed with its seed and how to get the
 * spec again), 2 on bad usage. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "artifact/artifact.h"
#include "artifact/ptx.h"
#include "core/die.h"
#include "front/frontend.h"

/* put before each reference in a batch: a spec may compare an index with
   itself, its tautology and not fusec's; in the compiler's own spelling, so
   that --cc gcc (the GPU machines have no clang) does not stop at a pragma
   it does not know under -Werror */
static const char quiet_tautology[] =
	"#if defined(__clang__)\n#pragma clang diagnostic ignored \"-Wtautological-compare\"\n"
	"#pragma clang diagnostic ignored \"-Wparentheses-equality\"\n"
	"#elif defined(__GNUC__)\n#pragma GCC diagnostic ignored \"-Wtautological-compare\"\n#endif\n";

/* ------------------------------------------------------------------ stubs */
/* NVRTC and ptxas are the sample's (the real fusec runs them there): the
   in-process writer gets a placeholder PTX for every target. */
void nvrtc_version(int *major, int *minor) { *major = 13, *minor = 0; }
int nvrtc_compile(const char *src, const char *name, const char *arch, char **ptx, char **log)
{
	(void)src, (void)name, (void)arch;
	*log = NULL;
	*ptx = strdup("// fuzz_specs: NVRTC is not run in-process\n");
	return *ptx ? 0 : -1;
}
int artifact_warn_spills(const char *spec_path, const char *arch, const char *ptx, size_t n, const char *fusion);
int artifact_warn_spills(const char *spec_path, const char *arch, const char *ptx, size_t n, const char *fusion)
{
	(void)spec_path, (void)arch, (void)ptx, (void)n, (void)fusion;
	return 0;
}

/* ------------------------------------------------------------------ text */
typedef struct Str {
	char *p;
	size_t n, cap;
} Str;

static void sputs(Str *s, const char *t)
{
	size_t k = strlen(t);
	if (s->n + k + 1 > s->cap) {
		s->cap = (s->n + k + 1) * 2 + 64;
		s->p = realloc(s->p, s->cap);
		if (!s->p) abort();
	}
	memcpy(s->p + s->n, t, k + 1);
	s->n += k;
}

static void sprintf_(Str *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sprintf_(Str *s, const char *fmt, ...)
{
	char buf[4096];
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (k >= (int)sizeof buf) {
		char *big = malloc((size_t)k + 1);
		if (!big) abort();
		va_start(ap, fmt);
		vsnprintf(big, (size_t)k + 1, fmt, ap);
		va_end(ap);
		sputs(s, big);
		free(big);
		return;
	}
	sputs(s, buf);
}

static void sfree(Str *s) { free(s->p), s->p = NULL, s->n = s->cap = 0; }
static const char *sget(const Str *s) { return s->p ? s->p : ""; }

/* ------------------------------------------------------------------ random */
typedef struct Rng {
	uint64_t s;
} Rng;

static uint64_t rnext(Rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}
static int rn(Rng *r, int n) { return n <= 1 ? 0 : (int)(rnext(r) % (uint64_t)n); }
static int pct(Rng *r, int p) { return rn(r, 100) < p; }
#define PICK(r, arr) ((arr)[rn((r), (int)(sizeof(arr) / sizeof *(arr)))])

/* ------------------------------------------------------------------ model */
enum { CL_INT, CL_FLT };
enum { TY_F64, TY_F32, TY_BF16, TY_F16, TY_I64, TY_I32 };
static const char *const ty_name[] = {"f64", "f32", "bf16", "f16", "i64", "i32"};

/* what an integer input holds */
enum { RO_PLAIN, RO_DIV, RO_INDEX, RO_ROWPTR, RO_GUARD }; /* RO_GUARD: -1 .. D-1, read under where >= 0 */

enum { GK_IN, GK_NEW, GK_TEMP };

#define MAXT 48
#define MAXD 40
#define MAXS 10
#define MAXST 24

/* a dimension: a size symbol, a constant, or derived by range inference
   (never declarable, never matched with another) */
typedef struct GDim {
	int kind; /* 0 symbol, 1 constant, 2 derived */
	int sym;
	int val;
	int cname; /* constant: spelled by a const's name (1) or the number (0), chosen per use */
} GDim;

typedef struct GSize {
	char name[24];
	int min;
	int rel, add; /* value = value(rel) + add, when rel >= 0 */
	int in_param; /* some parameter has it */
	int value;    /* the driver's */
} GSize;

typedef struct GT {
	char name[40];
	int kind, cls, type, rank, dim[4];
	int readable, read, partial, out, must_out, no_out, inplace, list;
	int big; /* an integer of any size (a float converted): read only as a float */
	int role, rdim, roff; /* integer inputs: what they hold */
	int dom;              /* index into the domains table + 1, 0 none */
	int is_param;
} GT;

typedef struct GStmt {
	char text[2048];
	int reduce, scatter, compact, tensor, f16acc;
	int f32only; /* its stage computes in f32: its target is an f32 operand of tensor cores */
} GStmt;

typedef struct Gen {
	Rng r;
	uint64_t seed;
	char fname[64];
	GT t[MAXT];
	int nt;
	GDim d[MAXD];
	int nd;
	GSize s[MAXS];
	int ns;
	GStmt st[MAXST];
	int nst;
	int const_used[8];
	int ok; /* 0: gave up (too many tensors, ...) */
	int nnames;
	unsigned fun1_called; /* bit k: fun1[k] was called (pick_fun1) */
	char pipeline[200];
} Gen;

/* constants: file-level, each a positive integer usable as a dimension, and floats */
static const struct { const char *name, *text; int ival, is_int; } consts[] = {
	{"K1", "1", 1, 1}, {"C2", "2", 2, 1}, {"C3", "3", 3, 1}, {"C4", "4", 4, 1}, {"EPS", "1e-5", 0, 0}, {"HALF", "0.5", 0, 0},
	{"NEG", "-2", 0, 1},
};
#define NCONST (int)(sizeof consts / sizeof *consts)

/* float input domains */
static const struct { const char *text; double lo, hi; } domains[] = {
	{"(0, 1]", 1e-6, 1.0}, {"[-2, 2]", -2, 2}, {"[0.5, 1.5]", 0.5, 1.5}, {"[1e-3, 0.1]", 1e-3, 0.1}, {"[-100, 100]", -100, 100},
	{"[0, 0]", 0, 0}, {"[-9, 9]", -9, 9}, {"[1, 5]", 1, 5},
};
enum { DOM_PLAIN_INT = 7, DOM_DIV = 8 }; /* table index + 1 */

/* Names: tensors, indices, sizes and stages come from disjoint pools (an
   index may not be named like a tensor, a size or a constant of its fusion),
   each with names that are words of C, C++ or CUDA, or of fusec's own
   generated code, beside plain ones. */
static const char *const tensor_pool[] = {
	"x", "y", "w", "u", "v", "X", "Y", "W", "A", "Bm", "val", "col", "rp", "idx", "gg", "hh", "src", "dst", "mu", "sig",
	"a", "bad", "oom", "acc", "int", "double", "float", "main", "threadIdx", "blockDim", "warpSize", "gridDim", "v_next",
	"t_x", "n_N", "ws_part", "ws_count", "expf", "sqrtf", "fmaxf", "isnan", "fz_sigmoid", "class", "this", "new", "template",
	"auto", "char", "sizeof", "NAN", "INFINITY", "NULL", "size_t", "int32_t", "signed", "static", "return", "if", "else",
	"switch", "case", "goto", "union", "struct", "void", "long", "short", "register", "volatile", "inline", "restrict",
	"bool", "true", "false", "half", "dim3", "atomicAdd", "printf", "malloc", "free", "calloc", "off", "parts", "base",
	"ops", "max_ops", "sm", "scratch", "lse", "part", "count", "elt", "lane", "warp", "tile", "smem", "shm", "_x", "x_",
	"y_0", "s0_0", "fz_vl0", "v_x_0", "cv_i_0", "i_i0", "acc_0", "p_x", "run_x", "fz_ix", "fz_uni", "cos", "fz_siluf",
};
static const char *const index_pool[] = {
	"i", "j", "k", "l", "m", "n", "p", "q", "r", "s", "c", "d", "e", "h", "b", "o", "z", "ii", "jj", "kk",
	"s_end", "lo", "hi", "tid", "blk", "row", "cc", "i_i", "a_", "v_", "acc_", "bad_", "for_", "pt", "nn",
	"threadIdx_", "blockIdx", "int_", "delete", "do", "while", "enum", "typedef", "extern", "default", "continue", "break",
	"i0", "j1", "t", "g", "f", "idx_", "sum", "mx", "mn", "tmp", "res", "out_",
	"gx", "gy", "args", "s0", "s1_0", "i_0", "q0", "red", "v_i_0", "fz_lane", "nn_N",
};
static const char *const size_pool[] = {
	"N", "M", "K", "R", "C", "S", "T", "D", "H", "P", "Q", "E", "G", "L", "U", "V", "NP1", "B", "F", "Z", "SM", "OFF",
	"Nn", "Rows", "Cols", "INT", "WS", "FLT_MAX", "EOF", "BUFSIZ",
};
static const char *const stage_pool[] = {
	"s", "map", "reduce", "main", "int", "threadIdx", "exp", "x", "stage_", "kernel", "k0", "f0", "u1", "fused", "unfused",
	"scatter", "compact", "do", "if", "go",
};
static const char *const fusion_pool[] = {"f", "main", "int", "threadIdx", "exp", "fz", "F", "class", "acc", "k", "A"};

static int name_used(const Gen *g, const char *n)
{
	for (int i = 0; i < g->nt; i++)
		if (!strcmp(g->t[i].name, n)) return 1;
	for (int i = 0; i < g->ns; i++)
		if (!strcmp(g->s[i].name, n)) return 1;
	return 0;
}

static int fun1_called(const Gen *g, const char *n);

static void fresh_tensor_name(Gen *g, char *out)
{
	for (int tries = 0; tries < 8; tries++) {
		const char *b = PICK(&g->r, tensor_pool);
		if (!name_used(g, b) && !fun1_called(g, b)) {
			snprintf(out, 40, "%s", b);
			return;
		}
	}
	snprintf(out, 40, "t%d", g->nnames++);
}

static int new_dim(Gen *g, int kind, int sym, int val)
{
	for (int i = 0; kind != 2 && i < g->nd; i++)
		if (g->d[i].kind == kind && (kind == 0 ? g->d[i].sym == sym : g->d[i].val == val)) return i;
	if (g->nd == MAXD) return g->ok = 0, 0;
	g->d[g->nd] = (GDim){kind, sym, val, 0};
	return g->nd++;
}

static int new_size(Gen *g)
{
	if (g->ns == MAXS) return -1;
	GSize *s = &g->s[g->ns];
	memset(s, 0, sizeof *s);
	for (int tries = 0; tries < 10; tries++) {
		const char *b = PICK(&g->r, size_pool);
		if (!name_used(g, b)) {
			snprintf(s->name, sizeof s->name, "%s", b);
			break;
		}
	}
	if (!s->name[0]) snprintf(s->name, sizeof s->name, "Z%d", g->ns);
	s->min = 1, s->rel = -1;
	g->ns++;
	return new_dim(g, 0, g->ns - 1, 0);
}

/* a random dimension for a new input: an existing size mostly */
static int rand_dim(Gen *g)
{
	if (pct(&g->r, 12)) {
		int c = rn(&g->r, 4); /* consts[0..3]: K1 C2 C3 C4 */
		return new_dim(g, 1, -1, consts[c].ival);
	}
	int nsym = 0, syms[MAXD];
	for (int i = 0; i < g->nd; i++)
		if (g->d[i].kind == 0) syms[nsym++] = i;
	if (nsym && (g->ns >= 5 || pct(&g->r, 65))) return syms[rn(&g->r, nsym)];
	int d = new_size(g);
	return d < 0 ? syms[0] : d;
}

static int dim_declarable(const Gen *g, int d) { return g->d[d].kind != 2; }

static int add_tensor(Gen *g, int kind, int cls, int type, int rank, const int *dim)
{
	if (g->nt == MAXT) return g->ok = 0, 0;
	GT *t = &g->t[g->nt];
	memset(t, 0, sizeof *t);
	fresh_tensor_name(g, t->name);
	t->kind = kind, t->cls = cls, t->type = type, t->rank = rank;
	for (int i = 0; i < rank; i++) t->dim[i] = dim[i];
	return g->nt++;
}

static int rand_float_type(Gen *g)
{
	int k = rn(&g->r, 20);
	return k < 13 ? TY_F32 : k < 16 ? TY_F64 : k < 18 ? TY_F16 : TY_BF16;
}

/* a new input; its sizes are now a parameter's */
static int add_input(Gen *g, int cls, int type, int rank, const int *dim, int role)
{
	int id = add_tensor(g, GK_IN, cls, type, rank, dim);
	GT *t = &g->t[id];
	t->readable = 1, t->role = role, t->is_param = 1;
	for (int i = 0; i < rank; i++)
		if (g->d[dim[i]].kind == 0) g->s[g->d[dim[i]].sym].in_param = 1;
	if (cls == CL_FLT && pct(&g->r, 30)) t->dom = 1 + rn(&g->r, 5);
	if (cls == CL_INT && role == RO_PLAIN && pct(&g->r, 50)) t->dom = DOM_PLAIN_INT;
	if (cls == CL_INT && role == RO_DIV && pct(&g->r, 60)) t->dom = DOM_DIV;
	return id;
}

static int rand_input(Gen *g)
{
	int rank = rn(&g->r, 10) < 2 ? 0 : pct(&g->r, 5) ? 4 : 1 + rn(&g->r, 3), dim[4];
	for (int i = 0; i < rank; i++) dim[i] = rand_dim(g);
	if (pct(&g->r, 15)) return add_input(g, CL_INT, pct(&g->r, 70) ? TY_I32 : TY_I64, rank, dim, pct(&g->r, 25) ? RO_DIV : RO_PLAIN);
	return add_input(g, CL_FLT, rand_float_type(g), rank, dim, RO_PLAIN);
}

/* ------------------------------------------------------------------ statements */
typedef struct Ctx {
	Gen *g;
	int nix;
	char ix[8][24];
	int ixdim[8];
	int used[8];
	int deny;     /* a tensor not to read (the target of +=), or -1 */
	int inplace;  /* the in-place tensor this statement updates, or -1 */
	int nonint;   /* no integer leaves (the compute is float-only here) */
} Ctx;

static void ctx_init(Ctx *c, Gen *g)
{
	memset(c, 0, sizeof *c);
	c->g = g, c->deny = -1, c->inplace = -1;
}

/* a fresh index of dimension d; -1 past 8 */
static int add_index(Ctx *c, int d)
{
	if (c->nix == 7) return -1;
	for (int tries = 0; tries < 20; tries++) {
		const char *n = PICK(&c->g->r, index_pool);
		int dup = 0;
		for (int i = 0; i < c->nix; i++) dup |= !strcmp(c->ix[i], n);
		if (!dup) {
			snprintf(c->ix[c->nix], 24, "%s", n);
			c->ixdim[c->nix] = d, c->used[c->nix] = 0;
			return c->nix++;
		}
	}
	snprintf(c->ix[c->nix], 24, "ix%d", c->nix);
	c->ixdim[c->nix] = d;
	return c->nix++;
}

static void dim_text(Gen *g, int d, Str *o)
{
	const GDim *x = &g->d[d];
	if (x->kind == 0) {
		sputs(o, g->s[x->sym].name);
		return;
	}
	/* a constant: by a const's name or the number */
	for (int k = 0; k < 4; k++)
		if (consts[k].ival == x->val && pct(&g->r, 40)) {
			g->const_used[k] = 1;
			sputs(o, consts[k].name);
			return;
		}
	sprintf_(o, "%d", x->val);
}

/* the dimension as a value (an i64 or i32), for gathers: a size or a number */
static void dim_value(Gen *g, int d, Str *o) { dim_text(g, d, o); }

static int readable(const Ctx *c, int t)
{
	const GT *x = &c->g->t[t];
	return x->readable && !x->partial && !x->list && t != c->deny && !(x->inplace && t != c->inplace && !x->readable);
}

/* index of ctx with dimension d, chosen at random among them; -1 none */
static int ix_of_dim(Ctx *c, int d)
{
	int cand[8], n = 0;
	for (int i = 0; i < c->nix; i++)
		if (c->ixdim[i] == d) cand[n++] = i;
	return n ? cand[rn(&c->g->r, n)] : -1;
}

/* a gather subscript into dimension d: an index input holding 0..d-1-off
   read at an index of ctx; 0 if there is none to read */
static int gather_arg(Ctx *c, int d, Str *o)
{
	Gen *g = c->g;
	int cand[MAXT], n = 0;
	for (int t = 0; t < g->nt; t++) {
		const GT *x = &g->t[t];
		if (x->kind == GK_IN && x->role == RO_INDEX && x->rdim == d && x->rank == 1 && ix_of_dim(c, x->dim[0]) >= 0 && !x->inplace)
			cand[n++] = t;
	}
	if (!n) return 0;
	const GT *x = &g->t[cand[rn(&g->r, n)]];
	int i = ix_of_dim(c, x->dim[0]);
	c->used[i]++;
	Str a = {0};
	sprintf_(&a, "%s(%s)", x->name, c->ix[i]);
	int form = rn(&g->r, 6);
	if (x->roff) form = form < 3 ? 0 : 5;
	switch (form) {
	case 0: /* as it is, plus its offset */
		if (x->roff) sprintf_(o, "%s + %d", sget(&a), x->roff);
		else sputs(o, sget(&a));
		break;
	case 1: /* mirrored */
		sputs(o, "("), dim_value(g, d, o), sprintf_(o, " - 1 - %s)", sget(&a));
		break;
	case 2: /* shifted round */
		sprintf_(o, "(%s + %s) %% ", sget(&a), c->ix[i]), dim_value(g, d, o);
		break;
	case 3:
		sprintf_(o, "min(%s, ", sget(&a)), dim_value(g, d, o), sputs(o, " - 1)");
		break;
	case 4:
		sprintf_(o, "max(%s, 0)", sget(&a));
		break;
	default:
		sprintf_(o, "(%s + %d) - 0", sget(&a), x->roff);
		break;
	}
	sfree(&a);
	return 1;
}

/* an access of tensor t at indices of ctx (or gathers); 0 if it cannot be */
static int tensor_access(Ctx *c, int t, Str *o)
{
	Gen *g = c->g;
	GT *x = &g->t[t];
	if (x->rank == 0) {
		sputs(o, x->name);
		x->read = 1;
		return 1;
	}
	Str a = {0};
	sprintf_(&a, "%s(", x->name);
	for (int k = 0; k < x->rank; k++) {
		if (k) sputs(&a, ", ");
		int i = ix_of_dim(c, x->dim[k]);
		if (i >= 0 && (pct(&g->r, 85) || !gather_arg(c, x->dim[k], &a))) {
			sputs(&a, c->ix[i]);
			c->used[i]++;
		} else if (i < 0 && !gather_arg(c, x->dim[k], &a)) {
			sfree(&a);
			return 0;
		}
	}
	sputs(&a, ")");
	sputs(o, sget(&a));
	sfree(&a);
	x->read = 1;
	return 1;
}

/* a tensor of class cls (-1 any) readable here, or -1; big ones (read
   as floats) only where big */
static int pick_readable(Ctx *c, int cls, int big)
{
	Gen *g = c->g;
	int cand[MAXT], n = 0;
	for (int t = 0; t < g->nt; t++) {
		const GT *x = &g->t[t];
		if (!readable(c, t) || (cls >= 0 && x->cls != cls && !(big && x->big)) || (x->big && !big)) continue;
		if (x->inplace && t != c->inplace && !x->readable) continue;
		int ok = 1;
		for (int k = 0; k < x->rank && ok; k++) {
			if (ix_of_dim(c, x->dim[k]) >= 0) continue;
			/* a gather can reach it */
			int found = 0;
			for (int q = 0; q < g->nt && !found; q++) {
				const GT *y = &g->t[q];
				found = y->kind == GK_IN && y->role == RO_INDEX && y->rdim == x->dim[k] && y->rank == 1 && ix_of_dim(c, y->dim[0]) >= 0;
			}
			ok = found;
		}
		if (ok) cand[n++] = t;
	}
	return n ? cand[rn(&g->r, n)] : -1;
}

static const char *const float_lits[] = {"0.5", "1.0", "2.0", "3.25", "1e-3", "0.0", "2.5e1", "1e30", "0.125", "7.0"};
static const char *const int_lits[] = {"0", "1", "2", "3", "5", "7"};
static const char *const fun1[] = {"exp", "log", "sqrt", "rsqrt", "abs", "tanh", "sigmoid", "relu", "gelu", "erf", "digamma",
                                   "sin", "cos", "exp2", "log2", "log1p", "expm1", "floor", "ceil", "f32", "f64", "silu"};

static int gen_num(Ctx *c, int depth, int want, Str *o);

/* a built-in of one argument; a tensor named like it (tensor_pool's cos)
   hides it in the fusion (dsl/README.md), so that a call of it would read
   the tensor at a subscript nobody chose in range: exp then, which no
   tensor is named (one draw either way, so other seeds keep their specs;
   seed 18423 read a tensor cos at -run_x(i), and its reference refused) */
static const char *pick_fun1(Gen *g)
{
	const int k = (int)rn(&g->r, (int)(sizeof fun1 / sizeof fun1[0]));
	if (name_used(g, fun1[k])) return "exp";
	g->fun1_called |= 1u << k;
	return fun1[k];
}

/* and the other way: a tensor declared after a call of its name's
   built-in would turn that call into a read of it (seeds 65777 and 85205:
   cos(INT) and cos(float(i, d)) became reads of a later input cos, which
   the references refused) */
static int fun1_called(const Gen *g, const char *n)
{
	for (int k = 0; k < (int)(sizeof fun1 / sizeof fun1[0]); k++)
		if ((g->fun1_called >> k & 1) && !strcmp(fun1[k], n)) return 1;
	return 0;
}

/* a size some parameter has (a size read as a value must be one), or -1 */
static int param_size(Gen *g)
{
	int cand[MAXS], n = 0;
	for (int i = 0; i < g->ns; i++)
		if (g->s[i].in_param) cand[n++] = i;
	return n ? cand[rn(&g->r, n)] : -1;
}

/* a nonzero integer divisor */
static void gen_divisor(Ctx *c, Str *o)
{
	Gen *g = c->g;
	int k = rn(&g->r, 5);
	if (k == 1) { /* a divisor input */
		int cand[MAXT], n = 0;
		for (int t = 0; t < g->nt; t++)
			if (g->t[t].kind == GK_IN && g->t[t].role == RO_DIV && readable(c, t)) cand[n++] = t;
		if (n) {
			int t = cand[rn(&g->r, n)];
			Str a = {0};
			if (tensor_access(c, t, &a)) {
				sputs(o, sget(&a));
				sfree(&a);
				return;
			}
			sfree(&a);
		}
	}
	if (k == 2 && param_size(g) >= 0) { /* a size: at least 1 */
		sputs(o, g->s[param_size(g)].name);
		return;
	}
	if (k == 3) { /* a new divisor input, scalar */
		int id = add_input(g, CL_INT, pct(&g->r, 50) ? TY_I32 : TY_I64, 0, NULL, RO_DIV);
		sputs(o, g->t[id].name);
		g->t[id].read = 1;
		return;
	}
	sprintf_(o, "%d", 1 + rn(&g->r, 7));
}

static void gen_bool(Ctx *c, int depth, Str *o)
{
	Gen *g = c->g;
	int k = rn(&g->r, 10);
	if (depth > 0 && k == 0) {
		sputs(o, "("), gen_bool(c, depth - 1, o), sputs(o, pct(&g->r, 50) ? " && " : " || "), gen_bool(c, depth - 1, o), sputs(o, ")");
		return;
	}
	if (depth > 0 && k == 1) {
		sputs(o, "!("), gen_bool(c, depth - 1, o), sputs(o, ")");
		return;
	}
	if (k == 2 && c->nix >= 2) { /* two indices of one range */
		for (int a = 0; a < c->nix; a++)
			for (int b = a + 1; b < c->nix; b++)
				if (c->ixdim[a] == c->ixdim[b]) {
					sprintf_(o, "%s %s %s", c->ix[a], pct(&g->r, 60) ? "!=" : "<=", c->ix[b]);
					return;
				}
	}
	static const char *const cmp[] = {"<", "<=", ">", ">=", "==", "!="};
	gen_num(c, depth > 0 ? depth - 1 : 0, -1, o);
	sprintf_(o, " %s ", PICK(&g->r, cmp));
	gen_num(c, depth > 0 ? depth - 1 : 0, -1, o);
}

/* a leaf; its class */
static int gen_leaf(Ctx *c, int want, Str *o)
{
	Gen *g = c->g;
	for (int tries = 0; tries < 4; tries++) {
		int k = rn(&g->r, 12);
		if (k < 5) { /* a tensor */
			int t = pick_readable(c, want == CL_INT ? CL_INT : want == CL_FLT ? CL_FLT : -1, want != CL_INT);
			if (t >= 0) {
				Str a = {0};
				if (tensor_access(c, t, &a)) {
					if (g->t[t].big) sprintf_(o, "f64(%s)", sget(&a));
					else sputs(o, sget(&a));
					sfree(&a);
					return g->t[t].big ? CL_FLT : g->t[t].cls;
				}
				sfree(&a);
			}
		} else if (k == 5 && want != CL_FLT && c->nix) {
			int i = rn(&g->r, c->nix);
			sputs(o, c->ix[i]);
			return CL_INT;
		} else if (k == 6 && want != CL_FLT && param_size(g) >= 0) {
			sputs(o, g->s[param_size(g)].name);
			return CL_INT;
		} else if (k == 7) {
			int q = rn(&g->r, NCONST);
			int cls = consts[q].is_int ? CL_INT : CL_FLT;
			if (want >= 0 && cls != want) continue;
			g->const_used[q] = 1;
			sputs(o, consts[q].name);
			return cls;
		}
	}
	if (want == CL_INT || (want < 0 && pct(&g->r, 40))) {
		sputs(o, PICK(&g->r, int_lits));
		return CL_INT;
	}
	sputs(o, PICK(&g->r, float_lits));
	return CL_FLT;
}

/* a number of class want (-1: either), depth levels at most; its class */
static int gen_num(Ctx *c, int depth, int want, Str *o)
{
	Gen *g = c->g;
	if (depth <= 0 || pct(&g->r, 30)) return gen_leaf(c, want, o);
	int k = rn(&g->r, 16);
	if (want == CL_INT) {
		if (k < 6) {
			static const char *const op[] = {" + ", " - ", " * "};
			sputs(o, "(");
			gen_num(c, depth - 1, CL_INT, o);
			sputs(o, PICK(&g->r, op));
			gen_num(c, depth - 1, CL_INT, o);
			sputs(o, ")");
		} else if (k < 9) {
			sputs(o, "(");
			gen_num(c, depth - 1, CL_INT, o);
			sputs(o, pct(&g->r, 50) ? " / " : " % ");
			gen_divisor(c, o);
			sputs(o, ")");
		} else if (k < 11) {
			sputs(o, pct(&g->r, 50) ? "min(" : "max(");
			gen_num(c, depth - 1, CL_INT, o);
			sputs(o, ", ");
			gen_num(c, depth - 1, CL_INT, o);
			sputs(o, ")");
		} else if (k < 12) {
			sputs(o, "abs("), gen_num(c, depth - 1, CL_INT, o), sputs(o, ")");
		} else if (k < 13) {
			sputs(o, "-("), gen_num(c, depth - 1, CL_INT, o), sputs(o, ")");
		} else if (k < 14) {
			sputs(o, pct(&g->r, 50) ? "i32(" : "i64("), gen_num(c, depth - 1, CL_INT, o), sputs(o, ")");
		} else {
			sputs(o, "select("), gen_bool(c, depth - 1, o), sputs(o, ", ");
			gen_num(c, depth - 1, CL_INT, o), sputs(o, ", "), gen_num(c, depth - 1, CL_INT, o), sputs(o, ")");
		}
		return CL_INT;
	}
	int cls;
	if (k < 6) {
		static const char *const op[] = {" + ", " - ", " * ", " / "};
		const char *p = PICK(&g->r, op);
		sputs(o, "(");
		int a = gen_num(c, depth - 1, want, o);
		sputs(o, p);
		if (p[1] == '/' && a == CL_INT) {
			/* an integer quotient needs a nonzero divisor; a float one need not */
			if (pct(&g->r, 50)) gen_divisor(c, o), cls = CL_INT;
			else cls = gen_num(c, depth - 1, CL_FLT, o), cls = CL_FLT;
		} else {
			int b = gen_num(c, depth - 1, p[1] == '/' ? CL_FLT : want, o);
			cls = a == CL_INT && b == CL_INT ? CL_INT : CL_FLT;
		}
		sputs(o, ")");
		return want == CL_FLT ? CL_FLT : cls;
	}
	if (k < 10) {
		const char *fn = pick_fun1(g);
		sprintf_(o, "%s(", fn);
		const int isabs = !strcmp(fn, "abs"); /* abs of an integer is one */
		int a = gen_num(c, depth - 1, isabs && want == CL_FLT ? CL_FLT : -1, o);
		sputs(o, ")");
		return isabs && a == CL_INT ? CL_INT : CL_FLT;
	}
	if (k < 11) {
		sputs(o, "pow("), gen_num(c, depth - 1, -1, o), sputs(o, ", "), gen_num(c, depth - 1, -1, o), sputs(o, ")");
		return CL_FLT;
	}
	if (k < 13) {
		sputs(o, pct(&g->r, 50) ? "min(" : "max(");
		int a = gen_num(c, depth - 1, want, o);
		sputs(o, ", ");
		int b = gen_num(c, depth - 1, want, o);
		sputs(o, ")");
		return a == CL_INT && b == CL_INT ? CL_INT : CL_FLT;
	}
	if (k < 14) {
		sputs(o, "-(");
		int a = gen_num(c, depth - 1, want, o);
		sputs(o, ")");
		return a;
	}
	sputs(o, "select("), gen_bool(c, depth - 1, o), sputs(o, ", ");
	int a = gen_num(c, depth - 1, want, o);
	sputs(o, ", ");
	int b = gen_num(c, depth - 1, want, o);
	sputs(o, ")");
	return a == CL_INT && b == CL_INT ? CL_INT : CL_FLT;
}

/* the anchor's access wrapped into an expression; its class */
static int wrap_anchor(Ctx *c, const char *anchor, int acls, int want, Str *o)
{
	Gen *g = c->g;
	Str cur = {0};
	sputs(&cur, anchor);
	int cls = acls;
	int n = rn(&g->r, 4);
	for (int w = 0; w < n; w++) {
		Str nx = {0};
		int k = rn(&g->r, 8), other;
		if (want == CL_INT && cls == CL_INT) k = k < 4 ? 0 : k < 6 ? 5 : 6;
		switch (k) {
		case 0: case 1: case 2: {
			static const char *const op[] = {" + ", " - ", " * "};
			const char *p = PICK(&g->r, op);
			int left = pct(&g->r, 50);
			Str e = {0};
			other = gen_num(c, 2, want == CL_INT ? CL_INT : -1, &e);
			if (left) sprintf_(&nx, "(%s%s%s)", sget(&cur), p, sget(&e));
			else sprintf_(&nx, "(%s%s%s)", sget(&e), p, sget(&cur));
			sfree(&e);
			cls = cls == CL_INT && other == CL_INT ? CL_INT : CL_FLT;
			break;
		}
		case 3: {
			Str e = {0};
			if (cls == CL_INT && pct(&g->r, 50)) {
				gen_divisor(c, &e);
				sprintf_(&nx, "(%s %s %s)", sget(&cur), pct(&g->r, 50) ? "/" : "%", sget(&e));
			} else {
				gen_num(c, 2, CL_FLT, &e);
				sprintf_(&nx, "(%s / %s)", sget(&cur), sget(&e));
				cls = CL_FLT;
			}
			sfree(&e);
			break;
		}
		case 4: {
			const char *fn = pick_fun1(g);
			sprintf_(&nx, "%s(%s)", fn, sget(&cur));
			cls = !strcmp(fn, "abs") && cls == CL_INT ? CL_INT : CL_FLT; /* abs of an integer is one */
			break;
		}
		case 5: {
			Str e = {0};
			other = gen_num(c, 2, cls == CL_INT && want == CL_INT ? CL_INT : -1, &e);
			sprintf_(&nx, "%s(%s, %s)", pct(&g->r, 50) ? "min" : "max", sget(&cur), sget(&e));
			cls = cls == CL_INT && other == CL_INT ? CL_INT : CL_FLT;
			sfree(&e);
			break;
		}
		case 6: {
			Str b = {0}, e = {0};
			gen_bool(c, 1, &b);
			other = gen_num(c, 2, cls == CL_INT && want == CL_INT ? CL_INT : -1, &e);
			if (pct(&g->r, 50)) sprintf_(&nx, "select(%s, %s, %s)", sget(&b), sget(&cur), sget(&e));
			else sprintf_(&nx, "select(%s, %s, %s)", sget(&b), sget(&e), sget(&cur));
			cls = cls == CL_INT && other == CL_INT ? CL_INT : CL_FLT;
			sfree(&b), sfree(&e);
			break;
		}
		default:
			sprintf_(&nx, "abs(%s)", sget(&cur));
			break;
		}
		sfree(&cur);
		cur = nx;
	}
	sputs(o, sget(&cur));
	sfree(&cur);
	return cls;
}

static GStmt *new_stmt(Gen *g)
{
	if (g->nst == MAXST) return g->ok = 0, &g->st[0];
	GStmt *s = &g->st[g->nst++];
	memset(s, 0, sizeof *s);
	return s;
}

static void set_text(Gen *g, GStmt *s, Str *t)
{
	if (t->n >= sizeof s->text) g->ok = 0;
	snprintf(s->text, sizeof s->text, "%s", sget(t));
}

/* a readable tensor of rank >= 1 (an anchor: every index of a statement has
   a direct use in it), preferring the newest */
static int pick_anchor(Gen *g, int min_rank, int cls)
{
	int cand[MAXT], n = 0;
	Ctx c;
	ctx_init(&c, g);
	for (int t = 0; t < g->nt; t++) {
		const GT *x = &g->t[t];
		if (!readable(&c, t) || x->rank < min_rank || (cls >= 0 && x->cls != cls) || x->big) continue;
		cand[n++] = t;
		if (t >= g->nt - 3) cand[n++] = t; /* the newest twice */
	}
	return n ? cand[rn(&g->r, n)] : -1;
}

/* the anchor read at fresh indices, one per dimension */
static void anchor_indices(Ctx *c, int a, int *ixs)
{
	const GT *x = &c->g->t[a];
	for (int k = 0; k < x->rank; k++) ixs[k] = add_index(c, x->dim[k]);
}

static void anchor_access(Ctx *c, int a, const int *ixs, Str *o)
{
	GT *x = &c->g->t[a];
	if (!x->rank) {
		sputs(o, x->name);
	} else {
		sprintf_(o, "%s(", x->name);
		for (int k = 0; k < x->rank; k++) sprintf_(o, "%s%s", k ? ", " : "", c->ix[ixs[k]]), c->used[ixs[k]]++;
		sputs(o, ")");
	}
	x->read = 1;
}

/* the target: a new tensor over the LHS indices */
static int new_target(Gen *g, Ctx *c, int cls, const int *lhs, int nlhs)
{
	int dim[4] = {0};
	for (int i = 0; i < nlhs; i++) dim[i] = c->ixdim[lhs[i]];
	int id = add_tensor(g, GK_NEW, cls, cls == CL_INT ? TY_I32 : TY_F32, nlhs, dim);
	for (int i = 0; i < nlhs; i++)
		if (!dim_declarable(g, dim[i])) g->t[id].no_out = 1;
	return id;
}

static void lhs_text(Gen *g, Ctx *c, int t, const int *lhs, int nlhs, Str *o)
{
	sputs(o, g->t[t].name);
	if (!nlhs) return;
	sputs(o, "(");
	for (int i = 0; i < nlhs; i++) sprintf_(o, "%s%s", i ? ", " : "", c->ix[lhs[i]]);
	sputs(o, ")");
}

static void shuffle(Rng *r, int *a, int n)
{
	for (int i = n - 1; i > 0; i--) {
		int j = rn(r, i + 1), t = a[i];
		a[i] = a[j], a[j] = t;
	}
}

/* out(i..) = f(anchor(i..), ...) [where ...] */
static int st_map(Gen *g)
{
	int a = pick_anchor(g, 1, -1);
	if (a < 0) return 0;
	Ctx c;
	ctx_init(&c, g);
	int ixs[4], lhs[4];
	anchor_indices(&c, a, ixs);
	const GT *A = &g->t[a];
	int n = A->rank;
	for (int i = 0; i < n; i++) lhs[i] = ixs[i];
	if (pct(&g->r, 20)) shuffle(&g->r, lhs, n);
	Str an = {0}, val = {0}, t = {0};
	anchor_access(&c, a, ixs, &an);
	int want = pct(&g->r, 20) ? CL_INT : -1;
	if (A->cls == CL_FLT && want == CL_INT) want = -1;
	int cls, big = 0;
	if (want != CL_INT && pct(&g->r, 8)) { /* a float made an integer: i32(x) of any x */
		Str f = {0};
		wrap_anchor(&c, sget(&an), A->cls, -1, &f);
		sprintf_(&val, "%s(%s)", pct(&g->r, 50) ? "i32" : "i64", sget(&f));
		sfree(&f);
		cls = CL_INT, big = 1;
	} else {
		cls = wrap_anchor(&c, sget(&an), A->cls, want, &val);
	}
	int shifted = 0;
	if (n == 1 && g->d[A->dim[0]].kind == 0 && pct(&g->r, 10)) { /* a neighbour, guarded */
		Str s = {0};
		int b = 1 + rn(&g->r, 2);
		if (pct(&g->r, 50))
			sprintf_(&s, "(%s + %s(%s + %d))", sget(&val), A->name, c.ix[ixs[0]], b);
		else
			sprintf_(&s, "(%s - %s(%s - %d))", sget(&val), A->name, c.ix[ixs[0]], b);
		cls = cls == CL_INT && A->cls == CL_INT ? CL_INT : CL_FLT;
		sfree(&val);
		val = s;
		shifted = 1;
	}
	int tid = new_target(g, &c, cls, lhs, n);
	g->t[tid].big = big;
	lhs_text(g, &c, tid, lhs, n, &t);
	sprintf_(&t, " = %s", sget(&val));
	if (shifted) {
		/* the same guard reading both shifts: i + b < N and i >= b */
		const char *sz = g->s[g->d[A->dim[0]].sym].name;
		sprintf_(&t, " where %s + 2 < %s && %s >= 2", c.ix[ixs[0]], sz, c.ix[ixs[0]]);
		g->t[tid].partial = 1;
	} else if (pct(&g->r, 10)) {
		Str b = {0};
		gen_bool(&c, 1, &b);
		sprintf_(&t, " where %s", sget(&b));
		sfree(&b);
		g->t[tid].partial = 1;
	}
	GStmt *s = new_stmt(g);
	set_text(g, s, &t);
	g->t[tid].readable = 1;
	sfree(&an), sfree(&val), sfree(&t);
	return 1;
}

/* out = f(scalars) */
static int st_scalar(Gen *g)
{
	Ctx c;
	ctx_init(&c, g);
	Str val = {0}, t = {0};
	int cls = gen_num(&c, 3, -1, &val);
	int tid = new_target(g, &c, cls, NULL, 0);
	sprintf_(&t, "%s = %s", g->t[tid].name, sget(&val));
	GStmt *s = new_stmt(g);
	set_text(g, s, &t);
	g->t[tid].readable = 1;
	sfree(&val), sfree(&t);
	return 1;
}

/* out(kept) OP=! f(anchor(kept, reduced), ...) [where ...] */
static int st_reduce(Gen *g)
{
	int a = pick_anchor(g, 1, -1);
	if (a < 0) return 0;
	Ctx c;
	ctx_init(&c, g);
	int ixs[4], lhs[4], nl = 0;
	anchor_indices(&c, a, ixs);
	const GT *A = &g->t[a];
	for (int i = 0; i < A->rank; i++)
		if (pct(&g->r, 50)) lhs[nl++] = ixs[i];
	if (nl == A->rank) nl--; /* something reduced */
	if (nl > 1 && pct(&g->r, 20)) shuffle(&g->r, lhs, nl);
	Str an = {0}, val = {0}, t = {0}, extra = {0};
	anchor_access(&c, a, ixs, &an);
	/* a pairwise loop: a second index over a kept one's range, read through the anchor */
	int pair = -1;
	if (nl && pct(&g->r, 25)) {
		int keep = lhs[rn(&g->r, nl)], pos = -1;
		for (int k = 0; k < A->rank; k++)
			if (ixs[k] == keep) pos = k;
		int j = add_index(&c, c.ixdim[keep]);
		if (j >= 0 && pos >= 0) {
			sprintf_(&extra, "%s(", A->name);
			for (int k = 0; k < A->rank; k++) sprintf_(&extra, "%s%s", k ? ", " : "", c.ix[k == pos ? j : ixs[k]]);
			sputs(&extra, ")");
			c.used[j]++;
			Str both = {0};
			static const char *const op[] = {" - ", " + ", " * "};
			sprintf_(&both, "abs(%s%s%s)", sget(&an), PICK(&g->r, op), sget(&extra));
			sfree(&an);
			an = both;
			pair = keep * 16 + j;
		}
	}
	int op = rn(&g->r, 20), kk = 0;
	int count = op >= 18;
	int cls;
	if (count) {
		sputs(&val, "1");
		cls = CL_INT;
	} else {
		cls = wrap_anchor(&c, sget(&an), A->cls, pct(&g->r, 15) && A->cls == CL_INT ? CL_INT : -1, &val);
	}
	int tid = new_target(g, &c, cls, lhs, nl);
	/* an integer max, min or kmin over nothing is the type's extreme */
	g->t[tid].big = cls == CL_INT && !count && op >= 10;
	lhs_text(g, &c, tid, lhs, nl, &t);
	if (count || op < 10) sputs(&t, " +=! ");
	else if (op < 13) sputs(&t, " max=! ");
	else if (op < 16) sputs(&t, " min=! ");
	else {
		kk = pct(&g->r, 80) ? 1 + rn(&g->r, 4) : 1 + rn(&g->r, 14);
		if (pct(&g->r, 30)) {
			int q = rn(&g->r, 4);
			g->const_used[q] = 1;
			sprintf_(&t, " kmin[%s]=! ", consts[q].name);
		} else {
			sprintf_(&t, " kmin[%d]=! ", kk);
		}
	}
	sputs(&t, sget(&val));
	/* a gather guarded by the where clause: G holds -1 where nothing is to be
	   read (x(nb(i,j)) where nb(i,j) >= 0, dsl/README 5.7) */
	Str guard = {0};
	if (!count && pct(&g->r, 12)) {
		int T = pick_anchor(g, 1, -1), v = rn(&g->r, c.nix);
		if (T >= 0 && g->t[T].rank == 1 && dim_declarable(g, g->t[T].dim[0]) && dim_declarable(g, c.ixdim[v]) &&
		    (g->t[T].cls == CL_INT || cls == CL_FLT)) {
			int over = c.ixdim[v];
			int G = add_input(g, CL_INT, TY_I32, 1, &over, RO_GUARD);
			g->t[G].rdim = g->t[T].dim[0], g->t[G].read = g->t[T].read = 1;
			sprintf_(&guard, "%s(%s) >= 0", g->t[G].name, c.ix[v]);
			Str nv = {0};
			sprintf_(&nv, "(%s + %s(%s(%s)))", sget(&val), g->t[T].name, g->t[G].name, c.ix[v]);
			sfree(&val);
			val = nv;
		}
	}
	if (guard.n) {
		/* the value written before the target's text was: rebuild it */
		char *eq = strstr(t.p, "=! ");
		if (eq) t.n = (size_t)(eq + 3 - t.p), t.p[t.n] = 0;
		sputs(&t, sget(&val));
		sprintf_(&t, " where %s", sget(&guard));
		if (pct(&g->r, 40)) {
			Str b = {0};
			gen_bool(&c, 1, &b);
			sprintf_(&t, " && %s", sget(&b));
			sfree(&b);
		}
	} else if (count || pct(&g->r, 25)) {
		Str b = {0};
		if (count) { /* a count reads the anchor in its predicate */
			static const char *const cmp[] = {"<", "<=", ">", ">=", "!="};
			sprintf_(&b, "%s %s ", sget(&an), PICK(&g->r, cmp));
			gen_num(&c, 1, -1, &b);
			if (pair >= 0 && pct(&g->r, 70)) sprintf_(&b, " && %s != %s", c.ix[pair / 16], c.ix[pair % 16]);
		} else if (pair >= 0 && pct(&g->r, 70)) {
			sprintf_(&b, "%s != %s", c.ix[pair / 16], c.ix[pair % 16]);
		} else {
			gen_bool(&c, 1, &b);
		}
		sprintf_(&t, " where %s", sget(&b));
		sfree(&b);
	}
	GStmt *s = new_stmt(g);
	set_text(g, s, &t);
	s->reduce = 1;
	g->t[tid].readable = 1;
	sfree(&an), sfree(&val), sfree(&t), sfree(&extra), sfree(&guard);
	return 1;
}

/* acc(m,n) +=! A(m,k) * B(k,n), maybe batched, maybe on tensor cores */
static int st_contract(Gen *g)
{
	int tc = pct(&g->r, 65);
	int ty = tc ? (pct(&g->r, 50) ? TY_F16 : TY_BF16) : rand_float_type(g);
	int batched = pct(&g->r, 25);
	int M = rand_dim(g), K = rand_dim(g), N = rand_dim(g), Bd = batched ? rand_dim(g) : -1;
	int da[3], db[3], na = 0, nb = 0;
	int bt = pct(&g->r, 40); /* B stored as B(n,k) */
	/* the left operand: an existing float matrix read as A(m,k), or a new input */
	int A = -1;
	if (!tc && !batched && pct(&g->r, 40)) {
		int cand = pick_anchor(g, 2, CL_FLT);
		if (cand >= 0 && g->t[cand].rank == 2 && dim_declarable(g, g->t[cand].dim[0]) && dim_declarable(g, g->t[cand].dim[1]))
			A = cand, M = g->t[cand].dim[0], K = g->t[cand].dim[1];
	}
	if (batched) da[na++] = Bd, db[nb++] = Bd;
	da[na++] = M, da[na++] = K;
	if (bt) db[nb++] = N, db[nb++] = K;
	else db[nb++] = K, db[nb++] = N;
	if (A < 0) A = add_input(g, CL_FLT, ty, na, da, RO_PLAIN);
	int B = add_input(g, CL_FLT, tc ? g->t[A].type : rand_float_type(g), nb, db, RO_PLAIN);
	if (!g->ok) return 0;
	Ctx c;
	ctx_init(&c, g);
	int ib = batched ? add_index(&c, Bd) : -1, im = add_index(&c, M), in = add_index(&c, N), ik = add_index(&c, K);
	int lhs[3], nl = 0;
	if (batched) lhs[nl++] = ib;
	lhs[nl++] = im, lhs[nl++] = in;
	Str t = {0};
	int tid = new_target(g, &c, CL_FLT, lhs, nl);
	lhs_text(g, &c, tid, lhs, nl, &t);
	sputs(&t, " +=! ");
	if (pct(&g->r, 20)) {
		int sc = -1;
		for (int q = 0; q < g->nt; q++)
			if (g->t[q].kind == GK_IN && g->t[q].rank == 0 && g->t[q].cls == CL_FLT) sc = q;
		if (sc >= 0) sprintf_(&t, "%s * ", g->t[sc].name), g->t[sc].read = 1;
		else sputs(&t, "2.0 * ");
	}
	const char *bn = batched ? c.ix[ib] : NULL;
	if (batched) sprintf_(&t, "%s(%s, %s, %s) * ", g->t[A].name, bn, c.ix[im], c.ix[ik]);
	else sprintf_(&t, "%s(%s, %s) * ", g->t[A].name, c.ix[im], c.ix[ik]);
	if (batched) sprintf_(&t, "%s(%s, ", g->t[B].name, bn);
	else sprintf_(&t, "%s(", g->t[B].name);
	if (bt) sprintf_(&t, "%s, %s)", c.ix[in], c.ix[ik]);
	else sprintf_(&t, "%s, %s)", c.ix[ik], c.ix[in]);
	g->t[A].read = g->t[B].read = 1;
	GStmt *s = new_stmt(g);
	set_text(g, s, &t);
	s->reduce = 1, s->tensor = tc;
	s->f16acc = tc && ty == TY_F16 && pct(&g->r, 10);
	g->t[tid].readable = 1;
	sfree(&t);
	return 1;
}

/* attention: s +=! Q K, z, a row max, exponentials and their sum, p, o +=! p V
   (dsl/README 10: one attention kernel in the fused variant) */
static int st_attention(Gen *g)
{
	if (g->nst + 6 > MAXST) return 0;
	int ty = pct(&g->r, 50) ? TY_BF16 : TY_F16, batched = pct(&g->r, 60);
	int Bd = batched ? rand_dim(g) : -1, T = rand_dim(g), S = pct(&g->r, 50) ? T : rand_dim(g), D = rand_dim(g);
	int E = pct(&g->r, 80) ? D : rand_dim(g);
	int dq[3], dk[3], dv[3], n = 0;
	if (batched) dq[n] = dk[n] = dv[n] = Bd, n++;
	dq[n] = T, dk[n] = S, dv[n] = S, n++;
	dq[n] = D, dk[n] = D, dv[n] = E, n++;
	int Q = add_input(g, CL_FLT, ty, n, dq, RO_PLAIN), K = add_input(g, CL_FLT, ty, n, dk, RO_PLAIN);
	int V = add_input(g, CL_FLT, ty, n, dv, RO_PLAIN);
	if (!g->ok) return 0;
	g->t[Q].read = g->t[K].read = g->t[V].read = 1;
	Ctx c;
	ctx_init(&c, g);
	int ib = batched ? add_index(&c, Bd) : -1, im = add_index(&c, T), in = add_index(&c, S), id = add_index(&c, D), ie = add_index(&c, E);
	char pre[64] = "";
	if (batched) snprintf(pre, sizeof pre, "%s, ", c.ix[ib]);
	const char *m = c.ix[im], *nn = c.ix[in], *d = c.ix[id], *e = c.ix[ie];
	int lhs3[3], k = 0;
	if (batched) lhs3[k++] = ib;
	lhs3[k++] = im, lhs3[k++] = in;
	int sT = new_target(g, &c, CL_FLT, lhs3, k), zT = new_target(g, &c, CL_FLT, lhs3, k);
	int lhs2[2], k2 = 0;
	if (batched) lhs2[k2++] = ib;
	lhs2[k2++] = im;
	int mx = new_target(g, &c, CL_FLT, lhs2, k2), l = new_target(g, &c, CL_FLT, lhs2, k2);
	int pT = new_target(g, &c, CL_FLT, lhs3, k);
	int lhso[3], ko = 0;
	if (batched) lhso[ko++] = ib;
	lhso[ko++] = im, lhso[ko++] = ie;
	int o = new_target(g, &c, CL_FLT, lhso, ko);
	if (!g->ok) return 0;
	const char *sn = g->t[sT].name, *zn = g->t[zT].name, *mn = g->t[mx].name, *ln = g->t[l].name, *pn = g->t[pT].name;
	char bm[128], bmn[192];
	snprintf(bm, sizeof bm, "%s%s", pre, m);
	snprintf(bmn, sizeof bmn, "%s%s, %s", pre, m, nn);
	Str t = {0};
	GStmt *st;
	sprintf_(&t, "%s(%s) +=! %s%s(%s, %s) * %s(%s%s, %s)", sn, bmn, pct(&g->r, 20) ? "0.125 * " : "", g->t[Q].name, bm, d,
	         g->t[K].name, pre, nn, d);
	st = new_stmt(g), set_text(g, st, &t), st->reduce = 1, st->tensor = 1, t.n = 0;
	if (pct(&g->r, 30)) sprintf_(&t, "%s(%s) = select(%s <= %s, %s(%s) * 0.5, -1e30)", zn, bmn, nn, m, sn, bmn);
	else sprintf_(&t, "%s(%s) = %s(%s) * 0.5", zn, bmn, sn, bmn);
	st = new_stmt(g), set_text(g, st, &t), t.n = 0;
	sprintf_(&t, "%s(%s) max=! %s(%s)", mn, bm, zn, bmn);
	st = new_stmt(g), set_text(g, st, &t), st->reduce = 1, t.n = 0;
	sprintf_(&t, "%s(%s) +=! exp(%s(%s) - %s(%s))", ln, bm, zn, bmn, mn, bm);
	st = new_stmt(g), set_text(g, st, &t), st->reduce = 1, t.n = 0;
	sprintf_(&t, "%s(%s) = exp(%s(%s) - %s(%s)) / %s(%s)", pn, bmn, zn, bmn, mn, bm, ln, bm);
	st = new_stmt(g), set_text(g, st, &t), t.n = 0;
	st->f32only = 1, g->t[pT].no_out = 1; /* an f32 intermediate beside V's 16-bit type, or V's type itself */
	sprintf_(&t, "%s(%s%s, %s) +=! %s(%s) * %s(%s%s, %s)", g->t[o].name, pre, m, e, pn, bmn, g->t[V].name, pre, nn, e);
	st = new_stmt(g), set_text(g, st, &t), st->reduce = 1, st->tensor = 1;
	for (int q = sT; q <= o; q++) g->t[q].readable = 1;
	sfree(&t);
	return 1;
}

/* a size of some parameter (a temp's dimension must be one) */
static int param_dim(Gen *g)
{
	int cand[MAXD], n = 0;
	for (int i = 0; i < g->nd; i++)
		if ((g->d[i].kind == 0 && g->s[g->d[i].sym].in_param) || g->d[i].kind == 1) cand[n++] = i;
	return n ? cand[rn(&g->r, n)] : -1;
}

/* an index input into dimension d with an offset: read as X(idx(j) + off) */
static int index_input(Gen *g, int d, int over)
{
	int off = pct(&g->r, 20) ? 1 + rn(&g->r, 2) : 0;
	int id = add_input(g, CL_INT, pct(&g->r, 75) ? TY_I32 : TY_I64, 1, &over, RO_INDEX);
	g->t[id].rdim = d, g->t[id].roff = off;
	if (g->d[d].kind == 0) {
		GSize *s = &g->s[g->d[d].sym];
		if (s->min < off + 1) s->min = off + 1;
	} else if (g->d[d].val < off + 1) {
		g->t[id].roff = 0;
	}
	return id;
}

/* T(idx(j) + off) += f(j, ...) into a temp; or the CSR walk
   T(col(s)) += w(s) for s in rp(fired(f)) .. rp(fired(f) + 1) */
static int st_scatter(Gen *g)
{
	int D = param_dim(g);
	if (D < 0) return 0;
	int cls = pct(&g->r, 25) ? CL_INT : CL_FLT;
	int ty = cls == CL_INT ? (pct(&g->r, 50) ? TY_I32 : TY_I64) : (pct(&g->r, 80) ? TY_F32 : TY_F64);
	int T = add_tensor(g, GK_TEMP, cls, ty, 1, &D);
	if (!g->ok) return 0;
	Ctx c;
	ctx_init(&c, g);
	Str t = {0}, val = {0};
	if (pct(&g->r, 30)) { /* CSR */
		int NP1 = new_size(g), S = new_size(g), F = rand_dim(g);
		if (NP1 < 0 || S < 0) return sfree(&t), 0;
		g->s[g->d[NP1].sym].min = 2;
		int fired = index_input(g, NP1, F);
		g->t[fired].roff = 1; /* fired(f) + 1 is read too: 0 .. NP1-2 */
		int rp = add_input(g, CL_INT, TY_I32, 1, &NP1, RO_ROWPTR);
		g->t[rp].rdim = S;
		int col = index_input(g, D, S);
		g->t[col].roff = 0;
		int w = add_input(g, cls, ty == TY_I64 ? TY_I64 : cls == CL_INT ? TY_I32 : TY_F32, 1, &S, RO_PLAIN);
		int f = add_index(&c, F), s = add_index(&c, S);
		sprintf_(&t, "%s(%s(%s)) += %s(%s)", g->t[T].name, g->t[col].name, c.ix[s], g->t[w].name, c.ix[s]);
		if (pct(&g->r, 30)) sputs(&t, " * 2");
		sprintf_(&t, " for %s in %s(%s(%s)) .. %s(%s(%s) + 1)", c.ix[s], g->t[rp].name, g->t[fired].name, c.ix[f],
		         g->t[rp].name, g->t[fired].name, c.ix[f]);
		g->t[fired].read = g->t[rp].read = g->t[col].read = g->t[w].read = 1;
	} else {
		int J = pct(&g->r, 50) ? D : rand_dim(g);
		int idx = index_input(g, D, J);
		int j = add_index(&c, J);
		c.used[j]++;
		/* a value over j: any readable tensor reachable, with the index read directly */
		gen_num(&c, 2, cls == CL_INT ? CL_INT : -1, &val);
		sprintf_(&t, "%s(%s(%s)", g->t[T].name, g->t[idx].name, c.ix[j]);
		if (g->t[idx].roff) sprintf_(&t, " + %d", g->t[idx].roff);
		sprintf_(&t, ") += %s", sget(&val));
		g->t[idx].read = 1;
		if (pct(&g->r, 15)) {
			Str b = {0};
			gen_bool(&c, 1, &b);
			sprintf_(&t, " where %s", sget(&b));
			sfree(&b);
		}
	}
	GStmt *s = new_stmt(g);
	set_text(g, s, &t);
	s->scatter = 1;
	g->t[T].readable = 1;
	sfree(&t), sfree(&val);
	return 1;
}

/* Y(i..) += f(i.., more) into something written before */
static int st_accum(Gen *g)
{
	int cand[MAXT], n = 0;
	Ctx c;
	ctx_init(&c, g);
	for (int t = 0; t < g->nt; t++) {
		const GT *x = &g->t[t];
		if ((x->kind == GK_NEW || x->kind == GK_TEMP) && readable(&c, t) && x->rank >= 1 && !x->list && !x->big) cand[n++] = t;
	}
	if (!n) return 0;
	int Y = cand[rn(&g->r, n)];
	int ixs[4];
	anchor_indices(&c, Y, ixs);
	for (int k = 0; k < g->t[Y].rank; k++) c.used[ixs[k]]++;
	c.deny = Y;
	Str t = {0}, val = {0};
	int lhs[4];
	for (int k = 0; k < g->t[Y].rank; k++) lhs[k] = ixs[k];
	lhs_text(g, &c, Y, lhs, g->t[Y].rank, &t);
	gen_num(&c, 3, g->t[Y].cls == CL_INT ? CL_INT : -1, &val);
	sprintf_(&t, " += %s", sget(&val));
	GStmt *s = new_stmt(g);
	set_text(g, s, &t);
	s->scatter = 1;
	sfree(&t), sfree(&val);
	return 1;
}

/* y(r) +=! val(s) * x(col(s)) * d(r) for s in rp(r + 0) .. rp(r + 1) */
static int st_csr(Gen *g)
{
	int d = pick_anchor(g, 1, CL_FLT);
	if (d < 0 || g->t[d].rank != 1 || g->d[g->t[d].dim[0]].kind != 0) return 0;
	int R = g->t[d].dim[0];
	int RP = new_size(g), S = new_size(g);
	if (RP < 0 || S < 0) return 0;
	g->s[g->d[RP].sym].rel = g->d[R].sym, g->s[g->d[RP].sym].add = 1;
	int rp = add_input(g, CL_INT, pct(&g->r, 70) ? TY_I32 : TY_I64, 1, &RP, RO_ROWPTR);
	g->t[rp].rdim = S;
	int val = add_input(g, CL_FLT, rand_float_type(g), 1, &S, RO_PLAIN);
	Ctx c;
	ctx_init(&c, g);
	int r = add_index(&c, R), s = add_index(&c, S);
	Str t = {0}, x = {0};
	int X = -1;
	if (pct(&g->r, 60)) {
		int D = param_dim(g);
		int col = index_input(g, D, S);
		X = pick_anchor(g, 1, CL_FLT);
		if (X >= 0 && g->t[X].rank == 1 && g->t[X].dim[0] == D) {
			if (g->t[col].roff) sprintf_(&x, " * %s(%s(%s) + %d)", g->t[X].name, g->t[col].name, c.ix[s], g->t[col].roff);
			else sprintf_(&x, " * %s(%s(%s))", g->t[X].name, g->t[col].name, c.ix[s]);
			g->t[X].read = g->t[col].read = 1;
		}
	}
	int lhs[1] = {r};
	int tid = new_target(g, &c, CL_FLT, lhs, 1);
	lhs_text(g, &c, tid, lhs, 1, &t);
	int op = rn(&g->r, 4);
	sprintf_(&t, " %s %s(%s)%s * %s(%s) for %s in %s(%s + 0) .. %s(%s + 1)", op == 0 ? "max=!" : op == 1 ? "min=!" : "+=!",
	         g->t[val].name, c.ix[s], sget(&x), g->t[d].name, c.ix[r], c.ix[s], g->t[rp].name, c.ix[r], g->t[rp].name, c.ix[r]);
	g->t[rp].read = g->t[val].read = g->t[d].read = 1;
	GStmt *st = new_stmt(g);
	set_text(g, st, &t);
	st->reduce = 1;
	g->t[tid].readable = 1;
	sfree(&t), sfree(&x);
	return 1;
}

/* list[count] <- value where pred */
static int st_compact(Gen *g)
{
	int a = pick_anchor(g, 1, -1);
	if (a < 0 || g->t[a].rank != 1) return 0;
	int D = g->t[a].dim[0];
	Ctx c;
	ctx_init(&c, g);
	int ixs[1];
	anchor_indices(&c, a, ixs);
	int temp = pct(&g->r, 30) && dim_declarable(g, D) && (g->d[D].kind == 1 || g->s[g->d[D].sym].in_param);
	if (!dim_declarable(g, D)) return 0;
	int L = add_tensor(g, temp ? GK_TEMP : GK_NEW, CL_INT, pct(&g->r, 70) ? TY_I32 : TY_I64, 1, &D);
	int cnt = add_tensor(g, GK_NEW, CL_INT, pct(&g->r, 80) ? TY_I32 : TY_I64, 0, NULL);
	if (!g->ok) return 0;
	g->t[L].list = 1, g->t[L].must_out = !temp, g->t[L].no_out = temp;
	g->t[cnt].must_out = 1;
	Str an = {0}, t = {0}, v = {0}, b = {0};
	anchor_access(&c, a, ixs, &an);
	int k = rn(&g->r, 4);
	if (k == 0) sprintf_(&v, "%s", c.ix[ixs[0]]);
	else if (k == 1) sprintf_(&v, "%s * 2 + 1", c.ix[ixs[0]]);
	else if (k == 2) sputs(&v, "("), dim_value(g, D, &v), sprintf_(&v, " - 1 - %s)", c.ix[ixs[0]]);
	else gen_num(&c, 2, CL_INT, &v);
	static const char *const cmp[] = {"<", ">=", ">", "!="};
	sprintf_(&b, "%s %s ", sget(&an), PICK(&g->r, cmp));
	gen_num(&c, 1, -1, &b);
	sprintf_(&t, "%s[%s] <- %s where %s", g->t[L].name, g->t[cnt].name, sget(&v), sget(&b));
	GStmt *s = new_stmt(g);
	set_text(g, s, &t);
	s->compact = 1;
	g->t[cnt].readable = 1;
	sfree(&an), sfree(&t), sfree(&v), sfree(&b);
	return 1;
}

/* x(i..) = f(x(i..), ...) on an input no statement has read yet */
static int st_inplace(Gen *g)
{
	int cand[MAXT], n = 0;
	for (int t = 0; t < g->nt; t++) {
		const GT *x = &g->t[t];
		if (x->kind == GK_IN && !x->read && x->rank >= 1 && x->cls == CL_FLT && !x->inplace) cand[n++] = t;
	}
	if (!n) return 0;
	int P = cand[rn(&g->r, n)];
	Ctx c;
	ctx_init(&c, g);
	int ixs[4], lhs[4];
	anchor_indices(&c, P, ixs);
	for (int k = 0; k < g->t[P].rank; k++) lhs[k] = ixs[k];
	c.deny = P;
	Str an = {0}, t = {0}, val = {0};
	anchor_access(&c, P, ixs, &an);
	wrap_anchor(&c, sget(&an), CL_FLT, -1, &val);
	lhs_text(g, &c, P, lhs, g->t[P].rank, &t);
	sprintf_(&t, " = %s", sget(&val));
	GStmt *s = new_stmt(g);
	set_text(g, s, &t);
	g->t[P].inplace = 1, g->t[P].out = 1, g->t[P].read = 1;
	sfree(&an), sfree(&t), sfree(&val);
	return 1;
}

/* views by affine subscripts: d(i) = x(i + b) - x(i), p(r,c) = X(r, 2*c) * X(r, 2*c + 1) */
static int st_view(Gen *g)
{
	int a = pick_anchor(g, 1, -1);
	if (a < 0 || !dim_declarable(g, g->t[a].dim[g->t[a].rank - 1])) return 0;
	GT *A = &g->t[a];
	Ctx c;
	ctx_init(&c, g);
	int ixs[4];
	anchor_indices(&c, a, ixs);
	int last = A->rank - 1;
	int nd = new_dim(g, 2, -1, 0);
	if (!g->ok) return 0;
	c.ixdim[ixs[last]] = nd; /* its range is the view's now */
	Str t = {0}, e1 = {0}, e2 = {0};
	int form = rn(&g->r, 3);
	for (int pass = 0; pass < 2; pass++) {
		Str *e = pass ? &e2 : &e1;
		sprintf_(e, "%s(", A->name);
		for (int k = 0; k < A->rank; k++) {
			if (k) sputs(e, ", ");
			if (k < last) sputs(e, c.ix[ixs[k]]);
			else if (form == 0) sprintf_(e, pass ? "%s + %d" : "%s", c.ix[ixs[k]], 1);
			else if (form == 1) sprintf_(e, pass ? "2*%s + 1" : "2*%s", c.ix[ixs[k]]);
			else sprintf_(e, pass ? "3*%s + 2" : "3*%s", c.ix[ixs[k]]);
		}
		sputs(e, ")");
	}
	int lhs[4];
	for (int k = 0; k < A->rank; k++) lhs[k] = ixs[k];
	int tid = new_target(g, &c, A->cls, lhs, A->rank);
	lhs_text(g, &c, tid, lhs, A->rank, &t);
	sprintf_(&t, " = %s %s %s", sget(&e2), pct(&g->r, 50) ? "-" : "*", sget(&e1));
	A->read = 1;
	GStmt *s = new_stmt(g);
	set_text(g, s, &t);
	g->t[tid].readable = 1;
	sfree(&t), sfree(&e1), sfree(&e2);
	return 1;
}

/* ------------------------------------------------------------------ a spec */
static int is_target(const GT *x) { return x->kind == GK_NEW; }

/* a last sum into a scalar output, when nothing else can be one */
static void final_sum(Gen *g)
{
	int a = pick_anchor(g, 1, -1);
	if (a < 0) return; /* any anchor will do: its dimensions are reduced */
	Ctx c;
	ctx_init(&c, g);
	int ixs[4];
	anchor_indices(&c, a, ixs);
	Str an = {0}, t = {0};
	anchor_access(&c, a, ixs, &an);
	int tid = new_target(g, &c, g->t[a].cls, NULL, 0);
	sprintf_(&t, "%s +=! %s", g->t[tid].name, sget(&an));
	GStmt *s = new_stmt(g);
	set_text(g, s, &t);
	s->reduce = 1;
	g->t[tid].readable = 1, g->t[tid].out = 1;
	sfree(&an), sfree(&t);
}

static void choose_outputs(Gen *g)
{
	int last = -1, any = 0;
	for (int t = 0; t < g->nt; t++) {
		GT *x = &g->t[t];
		if (!is_target(x) || x->no_out) continue;
		last = t;
		if (x->must_out || pct(&g->r, 30)) x->out = 1;
	}
	if (last >= 0) g->t[last].out = 1;
	for (int t = 0; t < g->nt; t++) any |= g->t[t].out;
	if (!any) final_sum(g);
	for (int t = 0; t < g->nt; t++) {
		GT *x = &g->t[t];
		if (!x->out || x->kind != GK_NEW || x->must_out) continue;
		if (x->cls == CL_INT) x->type = pct(&g->r, 70) ? TY_I32 : TY_I64;
		else x->type = rand_float_type(g);
		/* the type of an input of its shape, sometimes: a carry may feed it */
		for (int q = 0; q < g->nt; q++) {
			const GT *y = &g->t[q];
			if (y->kind != GK_IN || y->rank != x->rank || y->cls != x->cls || !x->rank) continue;
			int same = 1;
			for (int k = 0; k < x->rank; k++) same &= y->dim[k] == x->dim[k];
			if (same && pct(&g->r, 50)) x->type = y->type;
		}
		for (int k = 0; k < x->rank; k++)
			if (g->d[x->dim[k]].kind == 0) g->s[g->d[x->dim[k]].sym].in_param = 1;
	}
}

static void choose_pipeline(Gen *g)
{
	if (!pct(&g->r, 12)) return;
	int in = -1, out = -1;
	for (int q = 0; q < g->nt && in < 0; q++) {
		const GT *y = &g->t[q];
		if (y->kind != GK_IN || !y->rank || y->inplace || y->role != RO_PLAIN) continue;
		for (int t = 0; t < g->nt; t++) {
			const GT *x = &g->t[t];
			if (!x->out || x->kind != GK_NEW || x->list || x->rank != y->rank || x->type != y->type) continue;
			int same = 1;
			for (int k = 0; k < x->rank; k++) same &= y->dim[k] == x->dim[k];
			if (same) in = q, out = t;
		}
	}
	if (in >= 0 && pct(&g->r, 60))
		snprintf(g->pipeline, sizeof g->pipeline, "pipeline pl_%llu = repeat Steps %s(%s <- %s)", (unsigned long long)g->seed, g->fname,
		         g->t[in].name, g->t[out].name);
	else
		snprintf(g->pipeline, sizeof g->pipeline, "pipeline pl_%llu = %s", (unsigned long long)g->seed, g->fname);
}

static void choose_sizes(Gen *g)
{
	for (int i = 0; i < g->ns; i++) g->s[i].value = g->s[i].min + rn(&g->r, 5);
	for (int i = 0; i < g->ns; i++)
		if (g->s[i].rel >= 0) g->s[i].value = g->s[g->s[i].rel].value + g->s[i].add;
}

static int dim_val(const Gen *g, int d) { return g->d[d].kind == 0 ? g->s[g->d[d].sym].value : g->d[d].val; }

static long count_of(const Gen *g, const GT *x)
{
	long n = 1;
	for (int k = 0; k < x->rank; k++) n *= dim_val(g, x->dim[k]);
	return n;
}

/* size i raised to at least v, its relations kept (a size defined from
   another, NP1 = F + 1, raises that one) */
static void raise_size(Gen *g, int i, long v)
{
	if (g->s[i].value >= v) return;
	int base = g->s[i].rel >= 0 ? g->s[i].rel : i;
	g->s[base].value += (int)(v - g->s[i].value);
	for (int k = 0; k < g->ns; k++)
		if (g->s[k].rel >= 0) g->s[k].value = g->s[g->s[k].rel].value + g->s[k].add;
}

static int size_named(const Gen *g, const char *p, size_t n)
{
	for (int i = 0; i < g->ns; i++)
		if (strlen(g->s[i].name) == n && !strncmp(g->s[i].name, p, n)) return i;
	return -1;
}

/* a size's name or a number at *p, advanced past: its size or -1, *v its value */
static int fits_term(const Gen *g, const char **p, long *v)
{
	size_t n = strspn(*p, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_");
	int i = **p >= '0' && **p <= '9' ? -1 : size_named(g, *p, n);
	*v = i >= 0 ? g->s[i].value : strtol(*p, NULL, 10);
	*p += n;
	return i;
}

/* One `fits NAME DIM>=LEAST` line (fusec writes one where an input's
   domain subscripts a dimension; dsl/README.md): DIM as the manifest spells
   a dimension, B, B+K, B-K, B/D, (B+K)/D, B/S; its base size raised until
   DIM is at least LEAST at the driver's sizes. 0 when it already was. */
static int fit_line(Gen *g, const char *dim)
{
	const char *p = dim + (*dim == '(');
	long base, k = 0, div = 1;
	const int b = fits_term(g, &p, &base);
	if (*p == '+' || *p == '-') k = strtol(p, (char **)&p, 10);
	p += *p == ')';
	if (*p == '/') p++, fits_term(g, &p, &div);
	const char *ge = strstr(p, ">=");
	if (!ge || b < 0 || div < 1) return 0; /* a constant base: no size to raise (the reference refuses: a finding) */
	const long least = strtol(ge + 2, NULL, 10), now = (base + k > 0 ? base + k : 0) / div;
	if (now >= least) return 0;
	raise_size(g, b, least * div - k);
	return 1;
}

/* The sizes of the driver raised to what the manifest's fits lines ask:
   below them the spec's domains subscript outside a dimension, and the
   reference refuses the sizes (3) as the runtime does. 1 if any changed. */
static int fits_sizes(Gen *g, const char *manifest)
{
	FILE *f = fopen(manifest, "r");
	if (!f) return 0;
	char line[4200];
	int changed = 0, again = 1;
	for (int pass = 0; again && pass < 8; pass++) { /* a raised size may shrink another line's B/S */
		again = 0;
		rewind(f);
		while (fgets(line, sizeof line, f))
			if (!strncmp(line, "fits ", 5) && strchr(line + 5, ' ')) again |= fit_line(g, strchr(line + 5, ' ') + 1);
		changed |= again;
	}
	fclose(f);
	return changed;
}

/* the spec's text */
static void print_spec(Gen *g, Str *o)
{
	Str body = {0};
	/* temps first: declared before any stage uses them */
	for (int t = 0; t < g->nt; t++) {
		const GT *x = &g->t[t];
		if (x->kind != GK_TEMP) continue;
		sprintf_(&body, "    temp %s: %s[", x->name, ty_name[x->type]);
		for (int k = 0; k < x->rank; k++) sputs(&body, k ? ", " : ""), dim_text(g, x->dim[k], &body);
		sputs(&body, "]\n");
	}
	int nstage = 0;
	for (int i = 0; i < g->nst;) {
		int j = i + 1;
		if (!g->st[i].tensor)
			while (j < g->nst && !g->st[j].tensor && pct(&g->r, 45)) j++;
		int red = 0, sc = 0, cp = 0, f32only = 0;
		for (int k = i; k < j; k++) red |= g->st[k].reduce, sc |= g->st[k].scatter, cp |= g->st[k].compact, f32only |= g->st[k].f32only;
		Str attrs = {0};
		if (g->st[i].tensor) {
			sprintf_(&attrs, "tensor_eligible, precision = %s", g->st[i].f16acc ? "f16" : "f32");
		} else {
			if (red && pct(&g->r, 80)) sputs(&attrs, "reduction");
			if (sc && pct(&g->r, 85)) sputs(&attrs, attrs.n ? ", scatter" : "scatter");
			if (cp && pct(&g->r, 90)) sputs(&attrs, attrs.n ? ", compact" : "compact");
			if (pct(&g->r, 6)) sputs(&attrs, attrs.n ? ", deterministic" : "deterministic");
			static const char *const any[] = {"f32", "f64", "bf16", "f16"};
			if (pct(&g->r, 45)) {
				const char *p = f32only ? "f32" : red ? (pct(&g->r, 50) ? "f32" : "f64") : PICK(&g->r, any);
				sprintf_(&attrs, "%sprecision = %s", attrs.n ? ", " : "", p);
			}
		}
		sprintf_(&body, "    stage %s%d", PICK(&g->r, stage_pool), nstage++);
		if (attrs.n) sprintf_(&body, " [%s]", sget(&attrs));
		sputs(&body, " {\n");
		for (int k = i; k < j; k++) sprintf_(&body, "        %s%s\n", g->st[k].text, pct(&g->r, 20) ? ";" : "");
		sputs(&body, "    }\n");
		sfree(&attrs);
		i = j;
	}
	Str sig = {0}, *so = &sig;
	sprintf_(so, "fusion %s(", g->fname);
	int first = 1;
	for (int t = 0; t < g->nt; t++) {
		const GT *x = &g->t[t];
		if (x->kind != GK_IN) continue;
		sprintf_(so, "%s%s: %s", first ? "" : ", ", x->name, ty_name[x->type]);
		first = 0;
		if (x->rank) {
			sputs(so, "[");
			for (int k = 0; k < x->rank; k++) sputs(so, k ? ", " : ""), dim_text(g, x->dim[k], so);
			sputs(so, "]");
		}
		if (x->dom) sprintf_(so, " in %s", domains[x->dom - 1].text);
	}
	sputs(so, ") -> (");
	first = 1;
	for (int t = 0; t < g->nt; t++) {
		const GT *x = &g->t[t];
		if (!x->out) continue;
		sprintf_(so, "%s%s", first ? "" : ", ", x->name);
		first = 0;
		if (x->inplace) continue;
		sprintf_(so, ": %s", ty_name[x->type]);
		if (x->rank) {
			sputs(so, "[");
			for (int k = 0; k < x->rank; k++) sputs(so, k ? ", " : ""), dim_text(g, x->dim[k], so);
			sputs(so, "]");
		}
	}
	sprintf_(o, "# fuzz_specs seed %llu\n", (unsigned long long)g->seed);
	for (int q = 0; q < NCONST; q++)
		if (g->const_used[q]) sprintf_(o, "const %s = %s\n", consts[q].name, consts[q].text);
	sputs(o, sget(&sig));
	sfree(&sig);
	sputs(o, ") {\n");
	sputs(o, sget(&body));
	sputs(o, "}\n");
	if (g->pipeline[0]) sprintf_(o, "%s\n", g->pipeline);
	sfree(&body);
}

/* the driver's function for this spec: inputs drawn from what they must
   hold, the reference run, its status returned */
static void print_driver(const Gen *g, Str *o)
{
	sprintf_(o, "static int run_%s(void)\n{\n\tfz_%s_ref_args a;\n\tuint64_t r = %lluull;\n\tint rc;\n", g->fname, g->fname,
	         (unsigned long long)g->seed);
	sputs(o, "\tmemset(&a, 0, sizeof a);\n\t(void)r;\n");
	for (int i = 0; i < g->ns; i++)
		if (g->s[i].in_param) sprintf_(o, "\ta.n_%s = %d;\n", g->s[i].name, g->s[i].value);
	for (int t = 0; t < g->nt; t++) {
		const GT *x = &g->t[t];
		if (x->kind == GK_TEMP || (x->kind == GK_NEW && !x->out)) continue;
		long n = count_of(g, x);
		const char *cty = x->cls == CL_FLT ? "double" : x->type == TY_I64 ? "int64_t" : "int32_t";
		double lo = -1, hi = 1;
		if (x->dom) lo = domains[x->dom - 1].lo, hi = domains[x->dom - 1].hi;
		if (x->kind == GK_IN && x->cls == CL_INT) {
			if (x->role == RO_PLAIN) lo = -9, hi = 9;
			if (x->role == RO_DIV) lo = 1, hi = 5;
			if (x->role == RO_INDEX) lo = 0, hi = dim_val(g, x->rdim) - 1 - x->roff;
			if (x->role == RO_GUARD) lo = -1, hi = dim_val(g, x->rdim) - 1;
		}
		if (x->kind == GK_IN && x->rank == 0) {
			if (x->cls == CL_FLT) sprintf_(o, "\ta.t_%s = fz_uni(&r, %.17g, %.17g);\n", x->name, lo, hi);
			else sprintf_(o, "\ta.t_%s = (int64_t)fz_int(&r, %.17g, %.17g);\n", x->name, lo, hi);
			continue;
		}
		sprintf_(o, "\t%s *p_%s = calloc(%ld, sizeof(%s));\n", cty, x->name, n > 0 ? n : 1, cty);
		sprintf_(o, "\tif (!p_%s) abort();\n", x->name);
		if (x->kind == GK_IN || x->inplace) {
			if (x->role == RO_ROWPTR)
				sprintf_(o, "\tfor (long q = 0, v = 0; q < %ld; q++) { v += fz_int(&r, 0, 2); if (v > %d) v = %d; p_%s[q] = (%s)v; }\n", n,
				         dim_val(g, x->rdim), dim_val(g, x->rdim), x->name, cty);
			else if (x->cls == CL_FLT)
				sprintf_(o, "\tfor (long q = 0; q < %ld; q++) p_%s[q] = fz_uni(&r, %.17g, %.17g);\n", n, x->name, lo, hi);
			else
				sprintf_(o, "\tfor (long q = 0; q < %ld; q++) p_%s[q] = (%s)fz_int(&r, %.17g, %.17g);\n", n, x->name, cty, lo, hi);
		}
		sprintf_(o, "\ta.t_%s = p_%s;\n", x->name, x->name);
	}
	sprintf_(o, "\trc = fz_%s_reference(&a);\n", g->fname);
	for (int t = 0; t < g->nt; t++) {
		const GT *x = &g->t[t];
		if (x->kind == GK_TEMP || (x->kind == GK_NEW && !x->out) || (x->kind == GK_IN && x->rank == 0)) continue;
		sprintf_(o, "\tfree(p_%s);\n", x->name);
	}
	sputs(o, "\treturn rc;\n}\n\n");
}

/* one seed's spec (and driver); 0 when the generator gave up */
static int gen_spec(uint64_t seed, Gen *g, Str *spec, Str *drv)
{
	memset(g, 0, sizeof *g);
	g->seed = seed, g->r.s = seed * 0x2545f4914f6cdd1dull + 12345, g->ok = 1;
	snprintf(g->fname, sizeof g->fname, "%s_%llu", PICK(&g->r, fusion_pool), (unsigned long long)seed);
	int nin = 1 + rn(&g->r, 3);
	for (int i = 0; i < nin; i++) rand_input(g);
	int has_rank = 0;
	for (int t = 0; t < g->nt; t++) has_rank |= g->t[t].rank > 0;
	if (!has_rank) {
		int d = rand_dim(g);
		add_input(g, CL_FLT, rand_float_type(g), 1, &d, RO_PLAIN);
	}
	int nstmt = 1 + rn(&g->r, 8);
	for (int i = 0; i < nstmt && g->ok; i++) {
		for (int tries = 0; tries < 6; tries++) {
			int k = rn(&g->r, 100), done;
			if (k < 28) done = st_map(g);
			else if (k < 50) done = st_reduce(g);
			else if (k < 54) done = st_scalar(g);
			else if (k < 60) done = st_contract(g);
			else if (k < 67) done = st_scatter(g);
			else if (k < 71) done = st_accum(g);
			else if (k < 75) done = st_csr(g);
			else if (k < 80) done = st_compact(g);
			else if (k < 84) done = st_inplace(g);
			else if (k < 89) done = st_view(g);
			else if (k < 91) done = st_attention(g);
			else done = (rand_input(g), 0);
			if (done) break;
		}
	}
	if (!g->ok) return 0;
	choose_outputs(g);
	choose_pipeline(g);
	choose_sizes(g);
	print_spec(g, spec);
	print_driver(g, drv);
	return g->ok;
}

/* ------------------------------------------------------------------ the harness */
typedef struct Opts {
	uint64_t seed;
	long count;
	int jobs, sample, batch, keep, verbose;
	const char *fusec, *ptxas, *cc, *cxx, *dir, *root;
} Opts;

/* what a worker counted, and where its time went */
typedef struct Tally {
	long specs, gaveup, rejected, refused, written, refs_run, headers_cxx, sampled, ptx_files, findings;
	double t_gen, t_batch_cc, t_batch_run, t_cxx, t_nvrtc, t_ptxas;
} Tally;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (!f) return -1;
	fputs(text, f);
	return fclose(f);
}

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f) return NULL;
	Str s = {0};
	char buf[4096];
	size_t n;
	while ((n = fread(buf, 1, sizeof buf - 1, f)) > 0) buf[n] = 0, sputs(&s, buf);
	fclose(f);
	if (!s.p) sputs(&s, "");
	return s.p;
}

/* runs argv (no shell) with stdout and stderr into log; its wait status */
static int run_cmd(char *const argv[], const char *log, const char *cwd)
{
	pid_t pid = fork();
	if (pid < 0) return -1;
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd >= 0) dup2(fd, 1), dup2(fd, 2), close(fd);
		if (cwd && chdir(cwd)) _exit(126);
		execvp(argv[0], argv);
		_exit(127);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return st;
}

static void finding(Tally *t, uint64_t seed, const char *what, const char *log)
{
	t->findings++;
	Str m = {0};
	sprintf_(&m, "FINDING seed %llu: %s\n", (unsigned long long)seed, what);
	if (log) {
		char *l = read_file(log);
		if (l) {
			int lines = 0;
			/* from the last "run NAME" line before a report, or from the report */
			char *from = l, *rep = strstr(l, "runtime error");
			if (!rep) rep = strstr(l, "ERROR: ");
			if (!rep) rep = strstr(l, "error: ");
			if (rep) {
				from = rep;
				while (from > l && from[-1] != '\n') from--;
				for (char *q = l; q < rep; q++)
					if ((q == l || q[-1] == '\n') && !strncmp(q, "run ", 4)) from = q;
			}
			for (char *p = from; *p && lines < 25; lines++) {
				char *nl = strchr(p, '\n');
				size_t k = nl ? (size_t)(nl - p) : strlen(p);
				sprintf_(&m, "    %.*s\n", (int)(k > 300 ? 300 : k), p);
				p += k + (nl != NULL);
			}
			free(l);
		}
	}
	sprintf_(&m, "    the spec: fuzz_specs --print %llu\n", (unsigned long long)seed);
	fputs(sget(&m), stdout);
	fflush(stdout);
	sfree(&m);
}

/* fusec in-process (its diagnostics into fd 2, the worker's log, emptied
   first): 0 written, 10 rejected by the checker, 11 refused by the
   artifact writer, 3 its internal error; a die() or a sanitizer report
   ends the worker, and the parent reports the seed it was at */
static int fusec_inprocess(const char *spec, const char *out)
{
	if (ftruncate(2, 0) == 0) lseek(2, 0, SEEK_SET);
	FrontEnd fe = {0};
	die_set_spec(spec);
	if (source_load(&fe.src, spec, stderr)) return 10;
	static const char *const archs[] = {"sm_80", "sm_90", "sm_90a", "sm_100", "sm_120"};
	ArtifactOpts ao = {out, archs, 5, NULL, NULL};
	int rc = frontend_check(&fe, stderr, 20) ? 10 : artifact_write(&fe, &ao);
	frontend_free(&fe);
	return rc == 10 ? 10 : rc == ARTIFACT_OK ? 0 : rc == ARTIFACT_USER_ERROR ? 11 : 3;
}

static void status_text(int st, char *buf, size_t n)
{
	if (WIFEXITED(st)) snprintf(buf, n, "exit status %d", WEXITSTATUS(st));
	else if (WIFSIGNALED(st)) snprintf(buf, n, "signal %d", WTERMSIG(st));
	else snprintf(buf, n, "status %d", st);
}

/* the first line of a log, for the tallies of rejections and refusals */
static void first_line(const char *log, char *buf, size_t n)
{
	char *l = read_file(log);
	buf[0] = 0;
	if (!l) return;
	char *p = l;
	/* skip to the message: after "FILE:L:C: error: " or "fusec: error: FILE: " */
	char *e = strstr(p, "error: ");
	if (e) p = e + 7;
	/* "fusec: error: PATH: fusion F: why" and "...: pipeline P: why": the why */
	if (*p == '/' && strstr(p, ": ")) p = strstr(p, ": ") + 2;
	if ((!strncmp(p, "fusion ", 7) || !strncmp(p, "pipeline ", 9)) && strstr(p, ": ")) p = strstr(p, ": ") + 2;
	if (!strncmp(p, "kernel ", 7) && strstr(p, "'s ")) p = strstr(p, "'s ") + 3; /* kernel K's reductions need N bytes ... */
	snprintf(buf, n, "%.*s", (int)strcspn(p, "\n"), p);
	/* names and numbers vary: keep the words */
	for (char *q = buf, *d = buf;; q++) {
		if (*q >= '0' && *q <= '9') {
			if (d == buf || d[-1] != '#') *d++ = '#';
			continue;
		}
		*d++ = *q;
		if (!*q) break;
	}
	for (char *q = buf; *q; q++)
		if (*q == '\'') {
			char *end = strchr(q + 1, '\'');
			if (!end) break;
			memmove(q + 2, end + 1, strlen(end + 1) + 1);
			q[1] = '\'';
			q++;
		}
	free(l);
}

typedef struct Counted {
	char what[160];
	long n;
	uint64_t seed;
} Counted;

static void count_reason(Counted *c, int *nc, int cap, const char *what, uint64_t seed)
{
	for (int i = 0; i < *nc; i++)
		if (!strcmp(c[i].what, what)) {
			c[i].n++;
			return;
		}
	if (*nc == cap) return;
	snprintf(c[*nc].what, sizeof c[*nc].what, "%s", what);
	c[*nc].n = 1, c[*nc].seed = seed;
	(*nc)++;
}

typedef struct Item {
	char name[64];
	uint64_t seed;
	char *driver;
} Item;

static const char prelude[] =
	"#include <math.h>\n#include <stdint.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n"
	"__attribute__((unused)) static double fz_uni(uint64_t *r, double lo, double hi)\n{\n"
	"\tuint64_t z = (*r += 0x9e3779b97f4a7c15ull);\n\tz = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;\n"
	"\tz = (z ^ (z >> 27)) * 0x94d049bb133111ebull;\n\tz ^= z >> 31;\n"
	"\treturn lo + (hi - lo) * ((double)(z >> 11) / 9007199254740992.0);\n}\n"
	"__attribute__((unused)) static long fz_int(uint64_t *r, double lo, double hi)\n{\n\tlong v = (long)floor(fz_uni(r, lo, hi + 1));\n"
	"\treturn v > (long)hi ? (long)hi : v;\n}\n";

/* the static helpers a reference defines: "static TYPE fz_NAME(" at a line's start */
static void helper_names(const char *ref, Str *def, Str *undef, int k)
{
	for (const char *p = ref; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, "static ", 7)) continue;
		const char *paren = strchr(p, '(');
		const char *nl = strchr(p, '\n');
		if (!paren || (nl && paren > nl)) continue;
		const char *b = paren;
		while (b > p && (b[-1] == '_' || (b[-1] >= 'a' && b[-1] <= 'z') || (b[-1] >= 'A' && b[-1] <= 'Z') || (b[-1] >= '0' && b[-1] <= '9'))) b--;
		if (paren - b < 1 || paren - b > 60 || strncmp(b, "fz_", 3)) continue;
		sprintf_(def, "#define %.*s %.*s__%d\n", (int)(paren - b), b, (int)(paren - b), b, k);
		sprintf_(undef, "#undef %.*s\n", (int)(paren - b), b);
	}
}

static void remove_artifact(const char *dir, const char *name)
{
	static const char *const suf[] = {".cu", ".h", "_ref.c", ".manifest", ".sm_80.ptx", ".sm_90.ptx", ".sm_90a.ptx", ".sm_100.ptx",
	                                   ".sm_120.ptx", ".fuse"};
	char p[4096];
	for (unsigned i = 0; i < sizeof suf / sizeof *suf; i++) snprintf(p, sizeof p, "%s/%s%s", dir, name, suf[i]), unlink(p);
}

/* a batch: its headers and references in one translation unit, compiled
   with ASan and UBSan and run; the headers again as C++ */
static void run_batch(const Opts *o, const char *w, Item *items, int n, Tally *t)
{
	if (!n) return;
	char out[4200], path[4400], log[4400], exe[4400];
	snprintf(out, sizeof out, "%s/out", w);
	Str u = {0}, cxx = {0};
	sputs(&u, prelude);
	sputs(&u, "#include \"fuserun.h\"\n");
	sputs(&cxx, "#include \"fuserun.h\"\n");
	for (int i = 0; i < n; i++) sprintf_(&u, "#include \"%s.h\"\n", items[i].name), sprintf_(&cxx, "#include \"%s.h\"\n", items[i].name);
	for (int i = 0; i < n; i++) {
		snprintf(path, sizeof path, "%s/%s_ref.c", out, items[i].name);
		char *ref = read_file(path);
		Str def = {0}, undef = {0};
		helper_names(ref ? ref : "", &def, &undef, i);
		/* a spec may compare an index with itself: its tautology, not fusec's (quiet_tautology) */
		sprintf_(&u, "%s%s#include \"%s_ref.c\"\n%s", quiet_tautology, sget(&def),
		         items[i].name, sget(&undef));
		sfree(&def), sfree(&undef), free(ref);
	}
	for (int i = 0; i < n; i++) sputs(&u, items[i].driver);
	sputs(&u, "int main(void)\n{\n\tint bad = 0, rc;\n");
	for (int i = 0; i < n; i++)
		sprintf_(&u, "\tfprintf(stderr, \"run %s\\n\");\n\tif ((rc = run_%s()) != 0) printf(\"refused %s %%d\\n\", rc), bad = 1;\n",
		         items[i].name, items[i].name, items[i].name);
	sputs(&u, "\treturn bad;\n}\n");
	snprintf(path, sizeof path, "%s/batch.c", w);
	write_file(path, sget(&u));
	snprintf(exe, sizeof exe, "%s/batch", w);
	snprintf(log, sizeof log, "%s/batch.log", w);
	char inc1[4300], inc2[4300];
	snprintf(inc1, sizeof inc1, "-I%s", out);
	snprintf(inc2, sizeof inc2, "-I%s/runtime", o->root);
	double t0 = now();
	/* UBSan but its pointer-overflow, alignment and null checks (ASan and a
	   crash cover those here, and they were two thirds of the compile) */
	char *cc[] = {(char *)o->cc, "-std=c11", "-O0", "-Wall", "-Wextra", "-Werror", "-fsanitize=address,undefined",
	              "-fno-sanitize=pointer-overflow,alignment,null", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer",
	              inc1, inc2, path, "-lm", "-o", exe, NULL};
	int st = run_cmd(cc, log, NULL);
	t->t_batch_cc += now() - t0;
	if (st != 0) {
		/* which one: each alone */
		int blamed = 0;
		for (int i = 0; i < n; i++) {
			Str one = {0};
			sputs(&one, prelude);
			sprintf_(&one, "#include \"fuserun.h\"\n%s#include \"%s_ref.c\"\n%sint main(void) { return run_%s(); }\n", quiet_tautology, items[i].name,
			         items[i].driver, items[i].name);
			char p1[4500], l1[4500];
			snprintf(p1, sizeof p1, "%s/one.c", w);
			snprintf(l1, sizeof l1, "%s/one.log", w);
			write_file(p1, sget(&one));
			sfree(&one);
			char *cc1[] = {(char *)o->cc, "-std=c11", "-fsyntax-only", "-Wall", "-Wextra", "-Werror", inc1, inc2, p1, NULL};
			if (run_cmd(cc1, l1, NULL) != 0) finding(t, items[i].seed, "the header or the reference does not compile (clang -Wall -Wextra -Werror)", l1), blamed = 1;
		}
		if (!blamed) finding(t, items[0].seed, "a batch of references does not compile (none alone fails)", log);
	} else {
		t0 = now();
		char *run[] = {exe, NULL};
		st = run_cmd(run, log, NULL);
		t->t_batch_run += now() - t0;
		if (st != 0) {
			/* the last "run NAME" before the report, or each "refused NAME" */
			char *l = read_file(log);
			int blamed = 0;
			for (int i = 0; l && i < n; i++) {
				char key[200];
				snprintf(key, sizeof key, "refused %s ", items[i].name);
				if (!strstr(l, key)) continue;
				/* 3: sizes below its fits lines, which the driver's sizes were raised to */
				char rc3[220];
				snprintf(rc3, sizeof rc3, "refused %s 3\n", items[i].name);
				finding(t, items[i].seed, strstr(l, rc3) ? "the reference refuses sizes its manifest's fits lines allow"
				                                          : "the reference refuses valid inputs (a subscript out of range)", NULL);
				blamed = 1;
			}
			if (!blamed) {
				const char *last = NULL, *p = l;
				while (p && (p = strstr(p, "run ")))
					if (p == l || p[-1] == '\n') last = p, p += 4;
					else p += 4;
				int who = 0;
				for (int i = 0; last && i < n; i++) {
					char key[200];
					snprintf(key, sizeof key, "run %s\n", items[i].name);
					if (!strncmp(last, key, strlen(key))) who = i;
				}
				char what[200];
				char sts[64];
				status_text(st, sts, sizeof sts);
				snprintf(what, sizeof what, "the reference, run under ASan and UBSan: %s", sts);
				finding(t, items[who].seed, what, log);
			}
			free(l);
		}
		t->refs_run += n;
	}
	if (o->cxx && *o->cxx) {
		t0 = now();
		snprintf(path, sizeof path, "%s/headers.cc", w);
		write_file(path, sget(&cxx));
		char *cx[] = {(char *)o->cxx, "-std=c++17", "-fsyntax-only", "-Wall", "-Wextra", "-Werror", inc1, inc2, path, NULL};
		st = run_cmd(cx, log, NULL);
		t->t_cxx += now() - t0;
		if (st != 0) finding(t, items[0].seed, "a batch's headers do not compile as C++", log);
		else t->headers_cxx += n;
	}
	for (int i = 0; i < n; i++) {
		if (!o->keep) remove_artifact(out, items[i].name);
		free(items[i].driver);
	}
	sfree(&u), sfree(&cxx);
}

/* the sample: the real fusec with NVRTC for every target, ptxas on every
   PTX, the header and the reference compiled alone */
static void run_sample(const Opts *o, const char *w, const char *spec, const char *name, uint64_t seed, Tally *t)
{
	char nv[4200], log[4200], ptx[4400], sts[64];
	snprintf(nv, sizeof nv, "%s/nv", w);
	snprintf(log, sizeof log, "%s/nv.log", w);
	double t0 = now();
	char *fc[] = {(char *)o->fusec, "-o", nv, "--arch=sm_80,sm_90,sm_90a,sm_100,sm_120", (char *)spec, NULL};
	int st = run_cmd(fc, log, NULL);
	t->t_nvrtc += now() - t0;
	t->sampled++;
	if (st != 0) {
		status_text(st, sts, sizeof sts);
		char what[200];
		snprintf(what, sizeof what, "fusec -o (NVRTC) failed where the in-process writer succeeded: %s", sts);
		finding(t, seed, what, log);
		return;
	}
	static const char *const archs[] = {"sm_80", "sm_90", "sm_90a", "sm_100", "sm_120"};
	t0 = now();
	for (int a = 0; a < 5; a++) {
		char archopt[32];
		snprintf(ptx, sizeof ptx, "%s/%s.%s.ptx", nv, name, archs[a]);
		snprintf(archopt, sizeof archopt, "-arch=%s", archs[a]);
		char *pa[] = {(char *)o->ptxas, archopt, ptx, "-o", "/dev/null", NULL};
		st = run_cmd(pa, log, NULL);
		t->ptx_files++;
		if (st != 0) {
			char what[200];
			snprintf(what, sizeof what, "ptxas refuses the PTX for %s", archs[a]);
			finding(t, seed, what, log);
		}
	}
	t->t_ptxas += now() - t0;
	/* the header and the reference, each alone */
	char inc1[4300], inc2[4300], src[4400];
	snprintf(inc1, sizeof inc1, "-I%s", nv);
	snprintf(inc2, sizeof inc2, "-I%s/runtime", o->root);
	Str one = {0};
	snprintf(src, sizeof src, "%s/one.c", w);
	sprintf_(&one, "#include \"%s.h\"\n", name); /* without fuserun.h first: the header finds it */
	write_file(src, sget(&one));
	sfree(&one);
	char *h[] = {(char *)o->cc, "-std=c11", "-fsyntax-only", "-Wall", "-Wextra", "-Werror", inc1, inc2, src, NULL};
	if (run_cmd(h, log, NULL) != 0) finding(t, seed, "the header alone does not compile", log);
	snprintf(src, sizeof src, "%s/%s_ref.c", nv, name);
	char *rc[] = {(char *)o->cc, "-std=c11", "-c", "-Wall", "-Wextra", "-Werror", "-Wno-tautological-compare", "-Wno-parentheses-equality", inc1, src, "-o", "/dev/null", NULL};
	if (run_cmd(rc, log, NULL) != 0) finding(t, seed, "the reference alone does not compile", log);
	if (!o->keep) remove_artifact(nv, name);
}

/* the sample: 1 in o->sample seeds, by a hash of the seed (seed % K would
   give every sample to one worker when K and the jobs share a factor) */
static int sampled(const Opts *o, uint64_t seed)
{
	Rng r = {seed ^ 0x5a17c0de5a17c0deull};
	return o->sample > 0 && rnext(&r) % (uint64_t)o->sample == 0;
}

/* what a worker shares with the parent, in memory that outlives it */
typedef struct Shared {
	Tally t;
	long cur; /* the index in fusec in-process now, or -1 */
	int nrej, nref;
	Counted rej[64], ref[64];
} Shared;

/* seeds o->seed + i for i = start, start + jobs, ... */
static void worker(const Opts *o, int w, long start, Shared *sh)
{
	char wd[4096], out[4200], spec[4300], log[4300];
	Tally *t = &sh->t;
	snprintf(wd, sizeof wd, "%s/w%d", o->dir, w);
	snprintf(out, sizeof out, "%s/out", wd);
	mkdir(wd, 0755);
	mkdir(out, 0755);
	snprintf(log, sizeof log, "%s/fusec.log", wd);
	int fd = open(log, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || dup2(fd, 2) < 0) _exit(2);
	close(fd);
	Item *items = calloc((size_t)o->batch, sizeof *items);
	int nitems = 0;
	for (long i = start; i < o->count; i += o->jobs) {
		uint64_t seed = o->seed + (uint64_t)i;
		double t0 = now();
		Gen *g = calloc(1, sizeof *g);
		Str sp = {0}, drv = {0};
		t->specs++;
		if (!gen_spec(seed, g, &sp, &drv)) {
			t->gaveup++;
			free(g), sfree(&sp), sfree(&drv);
			continue;
		}
		snprintf(spec, sizeof spec, "%s/%s.fuse", out, g->fname);
		write_file(spec, sget(&sp));
		sh->cur = i;
		int code = fusec_inprocess(spec, out);
		sh->cur = -1;
		t->t_gen += now() - t0;
		char why[200];
		if (code == 10 || code == 11) {
			first_line(log, why, sizeof why);
			if (code == 10) t->rejected++, count_reason(sh->rej, &sh->nrej, 64, why, seed);
			else t->refused++, count_reason(sh->ref, &sh->nref, 64, why, seed);
			if (o->verbose && code == 10) {
				char *l = read_file(log);
				fprintf(stdout, "rejected seed %llu:\n%s%s\n", (unsigned long long)seed, sget(&sp), l ? l : "");
				free(l);
			}
			if (!o->keep) remove_artifact(out, g->fname);
		} else if (code != 0) {
			finding(t, seed, "fusec in-process (check, plan, every writer): an internal error, exit 3", log);
		} else {
			t->written++;
			char man[4400];
			snprintf(man, sizeof man, "%s/%s.manifest", out, g->fname);
			if (fits_sizes(g, man)) sfree(&drv), print_driver(g, &drv);
			if (sampled(o, seed)) run_sample(o, wd, spec, g->fname, seed, t);
			Item *it = &items[nitems++];
			snprintf(it->name, sizeof it->name, "%s", g->fname);
			it->seed = seed, it->driver = drv.p, drv.p = NULL;
			if (nitems == o->batch) run_batch(o, wd, items, nitems, t), nitems = 0;
		}
		free(g), sfree(&sp), sfree(&drv);
	}
	run_batch(o, wd, items, nitems, t);
	free(items);
}

static void usage(void)
{
	fputs("usage: fuzz_specs [--seed S] [--count N] [--jobs J] [--sample K] [--batch B] [--fusec PATH] [--ptxas PATH]\n"
	      "                  [--cc CLANG] [--cxx CXX] [--dir DIR] [--keep] [--verbose]\n"
	      "       fuzz_specs --print SEED\n",
	      stderr);
}

int main(int argc, char **argv)
{
	Opts o = {.seed = 1, .count = 100, .jobs = 1, .sample = 0, .batch = 40, .fusec = "build/san/fusec", .cc = "clang", .cxx = "clang++"};
	const char *home = getenv("CUDA_HOME");
	static char ptxas[4200], root[4096];
	snprintf(ptxas, sizeof ptxas, "%s/bin/ptxas", home && *home ? home : "/usr/local/cuda");
	o.ptxas = ptxas;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
#define OPT(flag) (!strcmp(a, flag) && v && (i++, 1))
		if (OPT("--seed")) o.seed = strtoull(v, NULL, 10);
		else if (OPT("--count")) o.count = atol(v);
		else if (OPT("--jobs")) o.jobs = atoi(v);
		else if (OPT("--sample")) o.sample = atoi(v);
		else if (OPT("--batch")) o.batch = atoi(v);
		else if (OPT("--fusec")) o.fusec = v;
		else if (OPT("--ptxas")) o.ptxas = v;
		else if (OPT("--cc")) o.cc = v;
		else if (OPT("--cxx")) o.cxx = v;
		else if (OPT("--dir")) o.dir = v;
		else if (!strcmp(a, "--keep")) o.keep = 1;
		else if (!strcmp(a, "--verbose")) o.verbose = 1;
		else if (OPT("--print")) {
			Gen *g = calloc(1, sizeof *g);
			Str sp = {0}, drv = {0};
			int ok = gen_spec(strtoull(v, NULL, 10), g, &sp, &drv);
			fputs(sget(&sp), stdout);
			if (getenv("FUZZ_SPECS_DRIVER")) fputs(sget(&drv), stdout);
			free(g), sfree(&sp), sfree(&drv);
			return ok ? 0 : 1;
		}
#undef OPT
		else return usage(), 2;
	}
	if (o.jobs < 1 || o.batch < 1 || o.count < 0) return usage(), 2;
	if (!getcwd(root, sizeof root)) return 2;
	o.root = root;
	char tmpl[4096];
	if (!o.dir) {
		const char *tmp = getenv("TMPDIR");
		if (!tmp || !*tmp) tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
		snprintf(tmpl, sizeof tmpl, "%s/fuzz_specs.XXXXXX", tmp);
		if (!mkdtemp(tmpl)) return perror("mkdtemp"), 2;
		o.dir = tmpl;
	} else {
		mkdir(o.dir, 0755);
	}
	/* sanitizer reports get exit statuses of their own */
	setenv("ASAN_OPTIONS", "exitcode=86:detect_leaks=1", 0);
	setenv("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1:exitcode=87", 0);
	double t0 = now();
	/* workers: each a process; one that dies (a die() or a sanitizer
	   report in fusec in-process) is reported at its seed and started again
	   after it */
	Shared *sh = mmap(NULL, sizeof(Shared) * (size_t)o.jobs, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) return perror("mmap"), 2;
	pid_t *pids = calloc((size_t)o.jobs, sizeof *pids);
	int alive = 0, bad = 0;
	for (int w = 0; w < o.jobs; w++) {
		sh[w].cur = -1;
		fflush(stdout);
		if ((pids[w] = fork()) == 0) worker(&o, w, w, &sh[w]), fflush(stdout), _exit(0);
		alive += pids[w] > 0;
	}
	while (alive > 0) {
		int st;
		pid_t pid = wait(&st);
		if (pid < 0) break;
		int w = 0;
		while (w < o.jobs && pids[w] != pid) w++;
		if (w == o.jobs) continue;
		alive--;
		if (WIFEXITED(st) && WEXITSTATUS(st) == 0) continue;
		char sts[64], what[200], log[4300];
		status_text(st, sts, sizeof sts);
		snprintf(log, sizeof log, "%s/w%d/fusec.log", o.dir, w);
		long cur = sh[w].cur;
		if (cur < 0) {
			printf("fuzz_specs: worker %d ended (%s) outside fusec\n", w, sts);
			bad = 1;
			continue;
		}
		snprintf(what, sizeof what, "fusec in-process (check, plan, every writer): %s", sts);
		finding(&sh[w].t, o.seed + (uint64_t)cur, what, log);
		sh[w].cur = -1;
		if (cur + o.jobs < o.count) {
			fflush(stdout);
			if ((pids[w] = fork()) == 0) worker(&o, w, cur + o.jobs, &sh[w]), fflush(stdout), _exit(0);
			alive += pids[w] > 0;
		}
	}
	free(pids);
	Tally all = {0};
	Counted rej[128], ref[128];
	int nrej = 0, nref = 0;
	for (int w = 0; w < o.jobs; w++) {
		const Tally t = sh[w].t;
		all.specs += t.specs, all.gaveup += t.gaveup, all.rejected += t.rejected, all.refused += t.refused;
		all.written += t.written, all.refs_run += t.refs_run, all.headers_cxx += t.headers_cxx, all.sampled += t.sampled;
		all.ptx_files += t.ptx_files, all.findings += t.findings;
		all.t_gen += t.t_gen, all.t_batch_cc += t.t_batch_cc, all.t_batch_run += t.t_batch_run, all.t_cxx += t.t_cxx;
		all.t_nvrtc += t.t_nvrtc, all.t_ptxas += t.t_ptxas;
		for (int i = 0; i < sh[w].nrej; i++)
			for (long k = 0; k < sh[w].rej[i].n; k++) count_reason(rej, &nrej, 128, sh[w].rej[i].what, sh[w].rej[i].seed);
		for (int i = 0; i < sh[w].nref; i++)
			for (long k = 0; k < sh[w].ref[i].n; k++) count_reason(ref, &nref, 128, sh[w].ref[i].what, sh[w].ref[i].seed);
	}
	double wall = now() - t0;
	printf("fuzz_specs: seeds %llu..%llu, %d jobs, %.1f s: %ld specs, %ld written by fusec in-process (5 targets, NVRTC stubbed), "
	       "%ld rejected by the checker, %ld refused by the writer, %ld given up by the generator\n",
	       (unsigned long long)o.seed, (unsigned long long)(o.seed + (uint64_t)o.count - 1), o.jobs, wall, all.specs, all.written,
	       all.rejected, all.refused, all.gaveup);
	printf("fuzz_specs: %ld references run under ASan+UBSan (headers with -Wall -Wextra -Werror), %ld headers as C++; "
	       "%ld sampled (1 in %d) through fusec -o with NVRTC, %ld PTX files through ptxas\n",
	       all.refs_run, all.headers_cxx, all.sampled, o.sample, all.ptx_files);
	printf("fuzz_specs: seconds in each step, summed over the workers: fusec in-process %.1f (%.0f specs/s), references compile %.1f, run %.1f, C++ %.1f "
	       "(%.0f specs/s together), NVRTC %.1f (%.2f specs/s), ptxas %.1f\n",
	       all.t_gen, all.t_gen > 0 ? all.specs / all.t_gen : 0, all.t_batch_cc, all.t_batch_run, all.t_cxx,
	       all.t_batch_cc + all.t_batch_run + all.t_cxx > 0 ? all.refs_run / (all.t_batch_cc + all.t_batch_run + all.t_cxx) : 0,
	       all.t_nvrtc, all.t_nvrtc > 0 ? all.sampled / all.t_nvrtc : 0, all.t_ptxas);
	for (int i = 0; i < nrej; i++) printf("  rejected %ld (first seed %llu): %s\n", rej[i].n, (unsigned long long)rej[i].seed, rej[i].what);
	for (int i = 0; i < nref; i++) printf("  refused %ld (first seed %llu): %s\n", ref[i].n, (unsigned long long)ref[i].seed, ref[i].what);
	printf("fuzz_specs: %ld findings\n", all.findings);
	if (!o.keep && o.dir == tmpl) {
		char *rm[] = {"rm", "-rf", tmpl, NULL};
		run_cmd(rm, "/dev/null", NULL);
	}
	return all.findings || bad ? 1 : 0;
}
