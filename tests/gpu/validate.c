/* Validates and times one spec's artifact on a GPU: the fused and the
 * unfused variant against the float64 reference, on fresh random inputs,
 * outputs poisoned with NaN first. Built once per spec:
 *   cc -DFZ_NAME=kl_divergence -Igenerated -Iruntime -Iruntime/tool -include kl_divergence.h \
 *      tests/gpu/validate.c runtime/tool/tensors.c generated/kl_divergence_ref.c \
 *      lib/libfuserun.a -lcuda -ldl -lpthread -lm
 * (tests/gpu/build_driver.sh). It speaks the Driver API itself.
 * usage: validate SIZE=VALUE... [--seed S] [--reps R] [--ptx FILE] [--dir DIR] [--misalign] [--no-tma]
 *        [--scalar NAME VALUE]
 * (--dir: the artifacts' folder, default generated/). Its inputs are
 * fuserun's (runtime/tool/tensors.c, rt_case_inputs, on the manifest that
 * libfuserun verified): from each param's domain=LO..HI, an integer input's
 * values line, else uniform, never by a param's name; --series fills
 * transfer_entropy's series by name, a check of known character. An inout
 * tensor (updated in place) is filled like an input before every run and
 * checked like an output. --scalar: input scalar NAME is VALUE (attention's
 * scale below 0 and at 0, folded into the exponent). --misalign: every tensor one element past a
 * 16-byte boundary, for the kernels' scalar fallbacks. --no-tma: tile
 * kernels load with plain loads. --flush: time as triton.testing.do_bench
 * times PyTorch (bench/peers.py): a 256 MB memset before each timed run, so
 * the run starts with a cold L2 and its host-side work (tensor maps, the
 * launch) happens while the GPU is still busy; without it the events also
 * time that host work, with the inputs warm in L2. --once: each variant
 * runs once and is checked, nothing is timed (under compute-sanitizer,
 * where the 2 trials, 10 warm-ups and the timed runs each cost minutes
 * on a large grid). An output that fails the
 * comparison only where a value sits within rounding of a decision (a
 * threshold) passes with a "near-tie:" line saying so (near_tie.h). */
#include <cuda.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "near_tie.h"
#include "tensors.h" /* fuserun's inputs (runtime/tool) */

#define CAT3(a, b, c) a##b##c
#define X3(a, b, c) CAT3(a, b, c)
#define STR_(x) #x
#define STR(x) STR_(x)
#define ARGS X3(fz_, FZ_NAME, _args)
#define REFARGS X3(fz_, FZ_NAME, _ref_args)
#define REFERENCE X3(fz_, FZ_NAME, _reference)
#define F_SCRATCH X3(fz_, FZ_NAME, _fused_scratch)
#define U_SCRATCH X3(fz_, FZ_NAME, _unfused_scratch)
#define F_OPS X3(fz_, FZ_NAME, _fused_ops)
#define U_OPS X3(fz_, FZ_NAME, _unfused_ops)

#define CK(call) do { CUresult r_ = (call); if (r_ != CUDA_SUCCESS) { const char *n_ = 0, *s_ = 0; \
	cuGetErrorName(r_, &n_); cuGetErrorString(r_, &s_); \
	fprintf(stderr, "%s: %s failed: %s: %s\n", STR(FZ_NAME), #call, n_ ? n_ : "?", s_ ? s_ : "?"); exit(2); } } while (0)

enum { MAXT = 64, MAXS = 16 };
typedef struct T {
	char name[64], kind[64], type[64], by[64];
	int rank, dimsym[4];
	int has_dom;            /* domain=LO..HI: the near-tie nudges stay in [lo, hi] */
	double lo, hi;
	long long dimval[4];
	long long n;            /* elements */
	int bytes;              /* per element on the device */
	void *host;             /* device-typed host copy */
	double *ref;            /* float64 view for the reference */
	int32_t *iref;
	int64_t *lref;
	int slot;               /* its place in the reference's args */
	int tf32;               /* the manifest's inexact NAME tf32 (1) or fp8 (2): computed through tf32 (fp8) products */
	CUdeviceptr dev;
} T;
static T ts[MAXT];
static int nt, nsym;
/* kernels that take more than the plain args: dynamic shared memory, and for
   tile kernels the tensor maps of A and B (manifest: smem=, tma=A,B) */
enum { MAXK = 32 };
static struct { char name[96]; int smem, tma[2], rows[2]; } kx[MAXK];
static int nkx;
static int tmaps_ok = 1; /* 0: the PTX is not sm_90a, or --no-tma */
static char syms[MAXS][64];
static long long symval[MAXS];

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static double urand(void)
{
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	return (double)(rng >> 11) / 9007199254740992.0;
}

static int sym_index(const char *s)
{
	for (int i = 0; i < nsym; i++)
		if (!strcmp(syms[i], s)) return i;
	return -1;
}

static void read_manifest(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f) { perror(path); exit(2); }
	char line[1024];
	while (fgets(line, sizeof line, f)) {
		char a[64], b[64], c[64], d[64], e[256], g[64];
		if (sscanf(line, "size %63s", a) == 1) {
			snprintf(syms[nsym++], 64, "%s", a);
		} else if ((sscanf(line, "param %63s %63s %63s %255s %63s", a, c, d, e, g) == 5 ||
		            sscanf(line, "temp %63s %63s %63s %255s %63s", a, c, d, e, g) == 5)) {
			T *t = &ts[nt++];
			snprintf(t->name, 64, "%s", a), snprintf(t->kind, 64, "%s", c), snprintf(t->type, 64, "%s", d);
			snprintf(t->by, 64, "%s", g + 3);
			const char *dom = strstr(line, " domain=");
			if (dom) {
				char *end;
				t->lo = strtod(dom + 8, &end);
				if (end[0] == '.' && end[1] == '.') t->hi = strtod(end + 2, NULL), t->has_dom = 1;
			}
			if (strcmp(e, "-"))
				for (char *tok = strtok(e, ","); tok; tok = strtok(NULL, ",")) {
					int k = sym_index(tok);
					t->dimsym[t->rank] = k;
					t->dimval[t->rank++] = k < 0 ? atoll(tok) : 0;
				}
			(void)b;
		} else if (sscanf(line, "inexact %63s %63s", a, c) == 2) { /* an output through tf32 products */
			for (int i = 0; i < nt; i++)
				if (!strcmp(ts[i].name, a) && (!strcmp(c, "tf32") || !strcmp(c, "fp8"))) ts[i].tf32 = strcmp(c, "fp8") ? 1 : 2;
		} else if (!strncmp(line, "kernel ", 7) && strstr(line, " smem=") && nkx < MAXK) {
			char *sm = strstr(line, " smem="), *tm = strstr(line, " tma=");
			if (sscanf(line, "kernel %63s %95s", a, kx[nkx].name) != 2) continue;
			kx[nkx].smem = atoi(sm + 6), kx[nkx].tma[0] = kx[nkx].tma[1] = -1;
			kx[nkx].rows[0] = 128, kx[nkx].rows[1] = 64; /* the maps' box rows, or tma-rows=A,B */
			const char *rw = strstr(line, " tma-rows=");
			if (rw && sscanf(rw, " tma-rows=%d,%d", &kx[nkx].rows[0], &kx[nkx].rows[1]) != 2) { fprintf(stderr, "bad tma-rows\n"); exit(2); }
			if (tm && sscanf(tm, " tma=%63[^,],%63s", c, d) == 2)
				for (int i = 0; i < nt; i++) {
					if (!strcmp(ts[i].name, c)) kx[nkx].tma[0] = i;
					if (!strcmp(ts[i].name, d)) kx[nkx].tma[1] = i;
				}
			nkx++;
		}
	}
	fclose(f);
}

static int is_float(const T *t) { return t->type[0] == 'f' || t->type[0] == 'b'; }
/* an inout tensor is both: filled like an input, checked like an output */
static int is_in(const T *t) { return !strcmp(t->kind, "input") || !strcmp(t->kind, "inout"); }
static int is_out(const T *t) { return !strcmp(t->kind, "output") || !strcmp(t->kind, "inout"); }
static int elem_bytes(const T *t)
{
	if (!strncmp(t->type, "f8", 2)) return 1; /* f8e4m3, f8e5m2 */
	if (!strcmp(t->type, "f64") || !strcmp(t->type, "i64")) return 8;
	if (!strcmp(t->type, "f16") || !strcmp(t->type, "bf16")) return 2;
	return 4;
}
static double get(const T *t, const void *buf, long long i)
{
	if (!strcmp(t->type, "f32")) return ((const float *)buf)[i];
	if (!strcmp(t->type, "f64")) return ((const double *)buf)[i];
	if (!strcmp(t->type, "f16")) return rt_h2f(((const uint16_t *)buf)[i]);
	if (!strcmp(t->type, "bf16")) return rt_b2f(((const uint16_t *)buf)[i]);
	if (!strcmp(t->type, "f8e4m3")) return rt_e4m32f(((const uint8_t *)buf)[i]);
	if (!strcmp(t->type, "f8e5m2")) return rt_e5m22f(((const uint8_t *)buf)[i]);
	if (!strcmp(t->type, "i64")) return (double)((const int64_t *)buf)[i];
	return ((const int32_t *)buf)[i];
}
static void put(const T *t, void *buf, long long i, double v)
{
	if (!strcmp(t->type, "f32")) ((float *)buf)[i] = (float)v;
	else if (!strcmp(t->type, "f64")) ((double *)buf)[i] = v;
	else if (!strcmp(t->type, "f16")) ((uint16_t *)buf)[i] = rt_f2h((float)v);
	else if (!strcmp(t->type, "bf16")) ((uint16_t *)buf)[i] = rt_f2b((float)v);
	else if (!strcmp(t->type, "f8e4m3")) ((uint8_t *)buf)[i] = rt_f2e4m3(v);
	else if (!strcmp(t->type, "f8e5m2")) ((uint8_t *)buf)[i] = rt_f2e5m2(v);
	else if (!strcmp(t->type, "i64")) ((int64_t *)buf)[i] = (int64_t)v;
	else ((int32_t *)buf)[i] = (int32_t)v;
}

/* transfer_entropy (and its shard) on series of known character, --series:
   its series and its scalars by name, as the analysis needs them (nf is N
   as a float, a shard's queries the last M points: off = N - M); any other
   run takes fuserun's inputs */
static long long size_of(const char *s) { return symval[sym_index(s)]; }
static int series_scalar(const T *t, double *v)
{
	if (!strcmp(t->name, "nf")) return *v = (double)size_of("N"), 1;
	if (!strcmp(t->name, "off")) return *v = (double)(size_of("N") - size_of("M")), 1;
	return 0;
}

static const char *scalar_name; /* --scalar NAME VALUE */
static double scalar_given;
static int scalar_used;

static double gauss(void)
{
	double u = urand(), v = urand();
	return sqrt(-2.0 * log(u > 1e-300 ? u : 1e-300)) * cos(6.283185307179586 * v);
}

/* Transfer entropy on series of known character (series != NULL):
   "independent" x, y; "coupled" y -> x with x' = 0.5 x + 0.8 y + 0.3 noise;
   "reverse": the coupled pair with roles swapped, TE(x -> y), near 0. */
static const char *series;
static void fill_series(void)
{
	long long N = symval[sym_index("N")];
	double *x = calloc((size_t)N + 1, sizeof *x), *y = calloc((size_t)N + 1, sizeof *y);
	x[0] = gauss();
	for (long long t = 0; t <= N; t++) y[t] = gauss();
	for (long long t = 0; t < N; t++)
		x[t + 1] = strcmp(series, "independent") ? 0.5 * x[t] + 0.8 * y[t] + 0.3 * gauss() : gauss();
	int rev = !strcmp(series, "reverse");
	const double *a = rev ? y : x, *b = rev ? x : y;
	for (int i = 0; i < nt; i++) {
		T *t = &ts[i];
		for (long long k = 0; k < t->n && t->rank; k++) {
			if (!strcmp(t->name, "xn")) put(t, t->host, k, a[k + 1]);
			else if (!strcmp(t->name, "xp")) put(t, t->host, k, a[k]);
			else if (!strcmp(t->name, "yp")) put(t, t->host, k, b[k]);
		}
	}
	free(x), free(y);
}

static T *tensor(const char *name)
{
	for (int i = 0; i < nt; i++)
		if (!strcmp(ts[i].name, name)) return &ts[i];
	return NULL;
}

/* transfer_entropy_shard's queries qxn, qxp, qyp are a view of the series
   xn, xp, yp at off (as te_mgpu passes them): query i is point i + off, so
   the self-pair the spec excludes by index is really the same point */
static void fill_views(void)
{
	static const char *const q[] = {"xn", "xp", "yp"};
	const long long off = size_of("N") - size_of("M");
	for (int i = 0; i < 3; i++) {
		char qn[8];
		snprintf(qn, sizeof qn, "q%s", q[i]);
		T *v = tensor(qn), *w = tensor(q[i]);
		for (long long k = 0; v && w && k < v->n && k + off < w->n; k++) put(v, v->host, k, get(w, w->host, k + off));
	}
}

/* the inputs: fuserun's (rc, drawn from the manifest), or --series */
static void fill_inputs(const rt_case *rc)
{
	if (series) {
		fill_series();
		if (tensor("qxn")) fill_views();
		return;
	}
	for (int i = 0; i < nt; i++) /* tensors, and scalars updated in place (by value: set with the args) */
		if (is_in(&ts[i]) && (ts[i].rank || !strcmp(ts[i].kind, "inout")))
			memcpy(ts[i].host, rc->t[i].host, (size_t)ts[i].n * (size_t)ts[i].bytes);
}

static double now_median(float *v, int n)
{
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && v[j] < v[j - 1]; j--) {
			float x = v[j];
			v[j] = v[j - 1], v[j - 1] = x;
		}
	return n ? v[n / 2] : 0;
}

static CUmodule mod;
/* the tile kernels' second parameter, as libfuserun makes it (runtime/artifact.c) */
typedef struct tile_maps { CUtensorMap a, b; unsigned long long ok; } tile_maps;
static int encode_map(uint64_t *args, int t, int box_rows, CUtensorMap *map)
{
	const T *x = &ts[t];
	long long dim[2] = {1, 1}; /* rows (leading dimensions flattened, as the runtime does), row length */
	for (int d = 0; d < x->rank; d++) {
		long long v = x->dimsym[d] >= 0 ? symval[x->dimsym[d]] : x->dimval[d];
		if (d == x->rank - 1) dim[1] = v;
		else dim[0] *= v;
	}
	const long long eb = elem_bytes(x);
	if (x->rank < 2 || (args[t] & 15) || (dim[1] * eb) % 16 || dim[0] <= 0 || dim[1] <= 0 || dim[0] >= (1ll << 31) || dim[1] >= (1ll << 31)) return 0;
	cuuint64_t dims[2] = {(cuuint64_t)dim[1], (cuuint64_t)dim[0]}, strides[1] = {(cuuint64_t)(dim[1] * eb)};
	cuuint32_t box[2] = {(cuuint32_t)(128 / eb), (cuuint32_t)box_rows}, es[2] = {1, 1};
	CK(cuTensorMapEncodeTiled(map, eb == 1 ? CU_TENSOR_MAP_DATA_TYPE_UINT8 : eb == 4 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32 : strcmp(x->type, "bf16") ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2,
	                          (void *)(uintptr_t)args[t], dims, strides, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
	                          CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
	return 1;
}
static int run_ops(uint64_t *args, fz_op *ops, int n, CUstream st)
{
	for (int i = 0; i < n; i++) {
		if (ops[i].kind == FZ_OP_MEMSET) {
			CK(cuMemsetD8Async(ops[i].ptr, 0, ops[i].bytes, st));
			continue;
		}
		CUfunction fn;
		CK(cuModuleGetFunction(&fn, mod, ops[i].kernel));
		static tile_maps tm; /* launches copy their parameters */
		void *params[] = {args, &tm};
		int smem = 0, k = 0;
		while (k < nkx && strcmp(kx[k].name, ops[i].kernel)) k++;
		if (k < nkx) {
			smem = kx[k].smem;
			CK(cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem));
			memset(&tm, 0, sizeof tm);
			if (kx[k].tma[0] >= 0)
				tm.ok = tmaps_ok && encode_map(args, kx[k].tma[0], kx[k].rows[0], &tm.a) && encode_map(args, kx[k].tma[1], kx[k].rows[1], &tm.b);
		}
		CK(cuLaunchKernel(fn, ops[i].grid[0], ops[i].grid[1], ops[i].grid[2], ops[i].block, 1, 1, (unsigned)smem, st, params, NULL));
	}
	return n;
}

/* The float64 reference's values of output i: in run p, views[i][p]; run 0
   is the reference itself (t->ref, iref or lref), runs 1 and 2 are at the
   float inputs nudged down and up (near_tie.h), made the first time a
   strict comparison fails. */
static void *views[MAXT][NT_REFS];
static REFARGS *ref_args; /* main's, for the reference itself */
static int nudged;        /* 1: runs 1 and 2 made; -1: one failed, no envelope */

static size_t view_bytes(const T *t) { return t->iref ? 4 : 8; }
static double view_get(const T *t, const void *v, long long k)
{
	if (t->ref) return ((const double *)v)[k];
	return t->iref ? ((const int32_t *)v)[k] : (double)((const int64_t *)v)[k];
}
static void view_put(const T *t, void *v, long long k, double x)
{
	if (t->ref) ((double *)v)[k] = x;
	else if (t->iref) ((int32_t *)v)[k] = (int32_t)x;
	else ((int64_t *)v)[k] = (int64_t)x;
}

/* The reference at every float input tensor nudged by dir (scalars such as
   a threshold stay put): each tensor it writes gets a view of its own (an
   inout one filled from its input first), each float input a nudged copy;
   integer inputs (indices) are shared, unchanged, so they stay valid. */
static int run_nudged(int dir, int p)
{
	REFARGS ra = *ref_args;
	uint64_t *rf = (uint64_t *)&ra;
	void *tmp[MAXT] = {0};
	for (int i = 0; i < nt; i++) {
		T *t = &ts[i];
		if (!strcmp(t->kind, "temp") || (!strcmp(t->kind, "input") && !t->rank) || (!is_out(t) && !is_float(t))) continue;
		void *v = calloc((size_t)t->n + 1, view_bytes(t));
		/* f64 data: 16 units of f64 rounding, where the kernel computes in f64 */
		double rel = strcmp(t->type, "f64") ? NT_NUDGE : NT_NUDGE * 0x1p-29;
		for (long long k = 0; k < t->n && is_in(t); k++) {
			double x = get(t, t->host, k);
			if (is_float(t)) x = nt_nudge(x, dir, rel, t->has_dom ? t->lo : -INFINITY, t->has_dom ? t->hi : INFINITY);
			view_put(t, v, k, x);
		}
		memcpy(&rf[t->slot], &v, 8);
		if (is_out(t)) views[i][p] = v;
		else tmp[i] = v;
	}
	int rr = REFERENCE(&ra);
	for (int i = 0; i < nt; i++) free(tmp[i]);
	return rr;
}

/* Runs 1 and 2, once: 1 if they are there. */
static int envelope(void)
{
	for (int p = 1; p < NT_REFS && !nudged; p++) {
		int rr = run_nudged(p == 1 ? -1 : 1, p);
		if (rr) fprintf(stderr, "near-tie: the reference at nudged inputs failed (%d): no envelope\n", rr), nudged = -1;
	}
	if (!nudged) nudged = 1;
	return nudged > 0;
}

/* tolerance by type and by how it is computed */
static double tol_of(const T *t)
{
	int red = strcmp(t->by, "map") != 0;
	/* through tf32 products (dsl/MATH.md): operands with 10-bit mantissas; fp8 products: the tensor cores' f32 sums */
	if (t->tf32 && (!strcmp(t->type, "f32") || !strcmp(t->type, "f64"))) return t->tf32 == 2 ? 1e-2 : 5e-3;
	if (!strcmp(t->type, "f32")) return red ? 1e-4 : 1e-5;
	if (!strcmp(t->type, "f64")) return 1e-10;
	if (!strcmp(t->type, "f16")) return 1e-2;
	if (!strcmp(t->type, "bf16")) return 2e-2;
	/* fp8 outputs, saturated in the reference but not rounded: half an fp8
	   unit and an f32 value's error across it (runtime/tool/tensors.c's
	   rt_tolerance, dsl/MATH.md) */
	if (!strcmp(t->type, "f8e4m3")) return 8e-2;
	if (!strcmp(t->type, "f8e5m2")) return 0.15;
	return 0; /* integers: exact */
}
/* normwise, with a floor so an exact zero (an independent-series entropy,
   say) is compared absolutely */
static double norm_err(double maxdiff, double maxref) { return maxdiff == 0 ? 0 : maxdiff / (maxref > 1e-3 ? maxref : 1e-3); }
/* in units of the tolerance: <= 1 passes */
static double score_of(double maxdiff, double maxref, double tol)
{
	double err = norm_err(maxdiff, maxref);
	return tol > 0 ? err / tol : (err > 0 ? INFINITY : 0);
}

static int compact_count(void) /* the count of the (one) compacted list */
{
	for (int j = 0; j < nt; j++)
		if (!strcmp(ts[j].by, "compact") && ts[j].rank == 0) return j;
	return -1;
}
static int is_list(const T *t) { return !strcmp(t->by, "compact") && t->rank == 1 && compact_count() >= 0; }
/* The first n entries of a list, sorted: from the kernel's buffer (got) or
   from a reference's view (got NULL, view v). */
static long long *sorted_list(const T *t, const void *got, const void *v, long long n)
{
	long long *s = malloc(sizeof *s * (size_t)(n + 1));
	for (long long k = 0; k < n; k++) s[k] = (long long)(got ? get(t, got, k) : view_get(t, v, k));
	qsort(s, (size_t)n, sizeof *s, nt_cmp_ll);
	return s;
}

/* How far the list `got` (gc entries) is from reference run 0 (np 1: the
   same entries, infinitely far otherwise) or from the envelope of runs
   0..np-1 (nt_list_ok); *off: entries in one of it and run 0, not both. */
static double list_diff(int i, const void *got, long long gc, int np, long long *off)
{
	const T *t = &ts[i], *c = &ts[compact_count()];
	long long *r[NT_REFS], nr[NT_REFS];
	for (int p = 0; p < np; p++) {
		nr[p] = (long long)view_get(c, views[c - ts][p], 0);
		nr[p] = nr[p] < 0 ? 0 : nr[p] > t->n ? t->n : nr[p]; /* past the list's room: what it holds */
		r[p] = sorted_list(t, NULL, views[i][p], nr[p]);
	}
	long long *g = sorted_list(t, got, NULL, gc);
	int ok = np == 1 ? gc == nr[0] && !memcmp(g, r[0], sizeof *g * (size_t)gc)
	                 : nt_list_ok(g, gc, (const long long *const *)r, nr, np);
	*off = nt_missing(g, gc, r[0], nr[0]) + nt_missing(r[0], nr[0], g, gc);
	free(g);
	for (int p = 0; p < np; p++) free(r[p]);
	return ok ? 0 : INFINITY;
}

/* The largest distance of an element of `got` from reference run 0 (np 1)
   or from the envelope of runs 0..np-1; *off: elements off run 0 by more
   than lim. */
static double elems_diff(int i, const void *got, int np, double lim, long long *off)
{
	const T *t = &ts[i];
	double worst = 0, r[NT_REFS];
	*off = 0;
	for (long long k = 0; k < (t->rank ? t->n : 1); k++) {
		double g = get(t, got, k);
		for (int p = 0; p < np; p++) r[p] = view_get(t, views[i][p], k);
		double d = is_float(t) ? nt_float_out(g, r, np) : nt_int_out(g, r, np);
		worst = d > worst ? d : worst;
		*off += elem_diff(g, r[0]) > lim;
	}
	return worst;
}

/* Output i's distance from the reference (np 1) or from the envelope. */
static double out_diff(int i, const void *got, int np, double lim, long long *off)
{
	if (!is_list(&ts[i])) return elems_diff(i, got, np, lim, off);
	int32_t gc = 0;
	CK(cuMemcpyDtoH(&gc, ts[compact_count()].dev, 4));
	if (gc < 0 || gc > ts[i].n) return *off = gc, INFINITY; /* no list of that length */
	return list_diff(i, got, gc, np, off);
}

/* What the envelope accepted, said once for each variant and output. */
static char notes[2 * MAXT][320];
static int nnotes;
static void note_tie(const char *variant, int i, const void *got, long long off, double strict)
{
	const T *t = &ts[i];
	char key[160], *n = notes[nnotes];
	snprintf(key, sizeof key, "  near-tie: %s %s:", variant, t->name);
	for (int k = 0; k < nnotes; k++)
		if (!strncmp(notes[k], key, strlen(key))) return;
	if (nnotes == 2 * MAXT) return;
	nnotes++;
	int len = is_list(t) ? snprintf(n, sizeof notes[0], "%s entries in only one of the list and the reference's: %lld (error/tol %.3g)", key, off, strict)
	                      : snprintf(n, sizeof notes[0], "%s elements off the reference: %lld of %lld (error/tol %.3g)", key, off, t->rank ? t->n : 1, strict);
	if (!t->rank && len > 0 && len < (int)sizeof notes[0])
		snprintf(n + len, sizeof notes[0] - (size_t)len, ", got %.10g, reference %.10g, at inputs nudged down %.10g, up %.10g",
		         get(t, got, 0), view_get(t, views[i][0], 0), view_get(t, views[i][1], 0), view_get(t, views[i][2], 0));
	strncat(n, "; each one the reference's at float inputs nudged (near_tie.h): accepted", sizeof notes[0] - strlen(n) - 1);
}

static void print_detail(const char *variant, int i, const void *got, double err, double maxdiff, double maxref)
{
	const T *t = &ts[i];
	long long worst_k = -1;
	for (long long k = 0; k < (t->rank ? t->n : 1) && strcmp(t->by, "compact"); k++)
		if (elem_diff(get(t, got, k), view_get(t, views[i][0], k)) == maxdiff) { worst_k = k; break; }
	fprintf(stderr, "  %s %s: error %.3g (max|diff| %.3g, max|ref| %.3g", variant, t->name, err, maxdiff, maxref);
	if (worst_k >= 0) fprintf(stderr, "; at %lld got %.9g want %.9g", worst_k, get(t, got, worst_k), view_get(t, views[i][0], worst_k));
	fprintf(stderr, ")\n");
}

/* Worst normwise error of every output, max|out-ref| / max|ref|, in units
   of its tolerance; an output that fails it may still pass within the
   envelope of the nudged references (near_tie.h), with a note. */
static double check_outputs(const char *variant, int verbose)
{
	double worst = 0;
	for (int i = 0; i < nt; i++) {
		T *t = &ts[i];
		if (!is_out(t)) continue;
		size_t nb = (size_t)(t->n ? t->n : 1) * t->bytes;
		void *got = malloc(nb);
		CK(cuMemcpyDtoH(got, t->dev, nb));
		double maxref = is_list(t) ? 1 : 0, tol = tol_of(t);
		for (long long k = 0; k < (t->rank ? t->n : 1) && !is_list(t); k++) {
			double r = view_get(t, views[i][0], k);
			if (isfinite(r) && fabs(r) > maxref) maxref = fabs(r); /* an infinity is no scale */
		}
		double lim = tol * (maxref > 1e-3 ? maxref : 1e-3); /* an element off by more fails alone */
		long long off = 0;
		double maxdiff = out_diff(i, got, 1, lim, &off), score = score_of(maxdiff, maxref, tol);
		if (verbose) print_detail(variant, i, got, norm_err(maxdiff, maxref), maxdiff, maxref);
		if (score > 1 && envelope()) {
			long long off2;
			double s = score_of(out_diff(i, got, NT_REFS, lim, &off2), maxref, tol);
			if (s <= 1) note_tie(variant, i, got, off, score), score = s;
		}
		if (score > worst) worst = score;
		free(got);
	}
	return worst;
}

/* the header's functions, as fuserun's fr_spec (runtime/tool/registry.h) */
static int ref_fn(const void *a) { return REFERENCE((const REFARGS *)a); }
static unsigned long long fs_fn(void *a, unsigned long long b, int sm) { return F_SCRATCH((ARGS *)a, b, sm); }
static unsigned long long us_fn(void *a, unsigned long long b, int sm) { return U_SCRATCH((ARGS *)a, b, sm); }
static int fo_fn(const void *a, int sm, fz_op *o, int max) { return F_OPS((const ARGS *)a, sm, o, max); }
static int uo_fn(const void *a, int sm, fz_op *o, int max) { return U_OPS((const ARGS *)a, sm, o, max); }

/* fuserun's inputs at the sizes given (rt_case_inputs on the verified
   manifest), before the driver starts (trial runs of the reference fork);
   exits 2 when they cannot be drawn */
static void draw_inputs(const char *manifest, unsigned long long seed, fz_artifact_info *info, rt_case *rc)
{
	static fr_spec spec = {.name = STR(FZ_NAME), .args_size = sizeof(ARGS), .ref_args_size = sizeof(REFARGS),
	                       .reference = ref_fn, .scratch = {fs_fn, us_fn}, .ops = {fo_fn, uo_fn}};
	char err[FZ_ERRMSG_SIZE];
	long long sizes[MAXS];
	if (fz_artifact_verify(manifest, info, err)) { fprintf(stderr, "%s\n", err); exit(2); }
	if (info->ntensors != nt || info->nsizes != nsym) { fprintf(stderr, "%s: manifest read twice, differently\n", manifest); exit(2); }
	for (int i = 0; i < nt; i++)
		if (strcmp(info->tensors[i].name, ts[i].name)) { fprintf(stderr, "%s: tensor %d read twice, differently\n", manifest, i); exit(2); }
	for (int i = 0; i < nsym; i++) sizes[i] = symval[sym_index(info->sizes[i])];
	if (rt_case_inputs(rc, info, &spec, sizes, seed, err)) { fprintf(stderr, "%s: %s\n", STR(FZ_NAME), err); exit(2); }
}

int main(int argc, char **argv)
{
	const char *dir = "generated";
	for (int i = 1; i + 1 < argc; i++)
		if (!strcmp(argv[i], "--dir")) dir = argv[i + 1];
	char ptx_buf[512], man_buf[512];
	snprintf(man_buf, sizeof man_buf, "%s/%s.manifest", dir, STR(FZ_NAME));
	const char *ptx_path = NULL; /* default: sm_90a on compute capability 9.0, else sm_90 */
	int reps = 100, verbose = 0, time_only = 0, misalign = 0, flush = 0, once = 0;
	unsigned long long seed = 0;
	read_manifest(man_buf);
	for (int i = 1; i < argc; i++) {
		char k[64];
		long long v;
		if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--seed") && i + 1 < argc) seed = strtoull(argv[++i], NULL, 0), rng ^= seed * 0x2545F4914F6CDD1Dull;
		else if (!strcmp(argv[i], "--ptx") && i + 1 < argc) ptx_path = argv[++i];
		else if (!strcmp(argv[i], "--dir") && i + 1 < argc) i++;
		else if (!strcmp(argv[i], "-v")) verbose = 1;
		else if (!strcmp(argv[i], "--no-tma")) tmaps_ok = 0; /* tile kernels load with plain loads */
		else if (!strcmp(argv[i], "--time-only")) time_only = 1; /* sizes whose CPU reference would take minutes */
		else if (!strcmp(argv[i], "--once")) once = 1;
		else if (!strcmp(argv[i], "--flush")) flush = 1; /* a cold L2 and the host's work hidden, as do_bench */
		else if (!strcmp(argv[i], "--misalign")) misalign = 1; /* every tensor one element past a 16-byte boundary */
		else if (!strcmp(argv[i], "--scalar") && i + 2 < argc) scalar_name = argv[i + 1], scalar_given = atof(argv[i + 2]), i += 2;
		else if (!strcmp(argv[i], "--series") && i + 1 < argc) series = argv[++i];
		else if (sscanf(argv[i], "%63[^=]=%lld", k, &v) == 2 && sym_index(k) >= 0) symval[sym_index(k)] = v;
		else { fprintf(stderr, "bad argument %s\n", argv[i]); return 2; }
	}
	if (once) reps = 0;
	for (int i = 0; i < nsym; i++)
		if (symval[i] <= 0) { fprintf(stderr, "size %s not given\n", syms[i]); return 2; }
	fz_artifact_info info;
	rt_case rc;
	draw_inputs(man_buf, seed, &info, &rc);
	/* --time-only runs no reference on the result, but draw_inputs did:
	   an integer input without a domain or values line (an index, a
	   divisor) holds only values its trial references accepted
	   (rt_case_inputs' free_integers), as under fuserun */
	CK(cuInit(0));
	CUdevice dev;
	CUcontext ctx;
	CK(cuDeviceGet(&dev, 0));
	CK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CK(cuCtxSetCurrent(ctx));
	int sm = 0;
	CK(cuDeviceGetAttribute(&sm, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
	int ccmaj = 0, ccmin = 0;
	CK(cuDeviceGetAttribute(&ccmaj, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
	CK(cuDeviceGetAttribute(&ccmin, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));
	if (!ptx_path) {
		snprintf(ptx_buf, sizeof ptx_buf, "%s/%s.%s.ptx", dir, STR(FZ_NAME), ccmaj == 9 && ccmin == 0 ? "sm_90a" : "sm_90");
		ptx_path = ptx_buf;
	}
	if (!strstr(ptx_path, "sm_90a")) tmaps_ok = 0;
	FILE *pf = fopen(ptx_path, "rb");
	if (!pf) { perror(ptx_path); return 2; }
	fseek(pf, 0, SEEK_END);
	long plen = ftell(pf);
	fseek(pf, 0, SEEK_SET);
	char *ptx = calloc((size_t)plen + 1, 1);
	if (fread(ptx, 1, (size_t)plen, pf) != (size_t)plen) return 2;
	fclose(pf);
	CK(cuModuleLoadData(&mod, ptx));

	ARGS args;
	uint64_t *af = (uint64_t *)&args;
	REFARGS rargs;
	uint64_t *rf = (uint64_t *)&rargs;
	if (sizeof args != 8 * (size_t)(nt + nsym + 2) || sizeof rargs % 8) { fprintf(stderr, "manifest and header disagree\n"); return 2; }
	memset(&args, 0, sizeof args);
	int rk = 0;
	double bytes_moved = 0;
	for (int i = 0; i < nt; i++) {
		T *t = &ts[i];
		t->n = rc.t[i].n; /* derived dimensions too, as the generated code computes them (fz_tensor_shape) */
		t->bytes = elem_bytes(t);
		if (!strcmp(t->kind, "temp")) continue;
		t->slot = rk;
		size_t nb = (size_t)t->n * (size_t)t->bytes;
		t->host = calloc(t->n ? (size_t)t->n : 1, (size_t)t->bytes);
		if (is_float(t)) t->ref = calloc((size_t)t->n + 1, sizeof(double));
		else if (!strcmp(t->type, "i64")) t->lref = calloc((size_t)t->n + 1, 8);
		else t->iref = calloc((size_t)t->n + 1, 4);
		if (!strcmp(t->kind, "input") && t->rank == 0) {
			double v = get(t, rc.t[i].host, 0);
			if (series) series_scalar(t, &v);
			if (scalar_name && !strcmp(t->name, scalar_name)) v = scalar_given, scalar_used = 1;
			put(t, t->host, 0, v);
			v = get(t, t->host, 0);
			if (is_float(t)) memcpy(&af[i], &v, 8), memcpy(&rf[rk++], &v, 8);
			else { long long l = (long long)v; memcpy(&af[i], &l, 8), memcpy(&rf[rk++], &l, 8); }
			continue;
		}
		CK(cuMemAlloc(&t->dev, (nb ? nb : 8) + (misalign ? 16 : 0)));
		if (misalign) t->dev += (CUdeviceptr)t->bytes; /* never freed: the process ends */
		af[i] = t->dev;
		bytes_moved += (double)nb;
		void *view = t->ref ? (void *)t->ref : t->iref ? (void *)t->iref : (void *)t->lref;
		memcpy(&rf[rk++], &view, 8);
	}
	if (scalar_name && !scalar_used) { fprintf(stderr, "--scalar %s: no rank-0 input of that name\n", scalar_name); return 2; }
	for (int i = 0; i < nsym; i++) memcpy(&af[nt + i], &symval[i], 8), memcpy(&rf[rk++], &symval[i], 8);
	if (rk * 8 != (int)sizeof rargs) { fprintf(stderr, "reference args disagree with the manifest\n"); return 2; }
	ref_args = &rargs;
	for (int i = 0; i < nt; i++) views[i][0] = ts[i].ref ? (void *)ts[i].ref : ts[i].iref ? (void *)ts[i].iref : (void *)ts[i].lref;

	fill_inputs(&rc);
	rt_case_free(&rc), fz_artifact_info_free(&info); /* copied: its memory back before the large buffers */
	for (int i = 0; i < nt; i++) {
		T *t = &ts[i];
		if (!is_in(t) || (!t->rank && strcmp(t->kind, "inout"))) continue;
		for (long long k = 0; k < t->n; k++) {
			if (t->ref) t->ref[k] = get(t, t->host, k);
			else if (t->iref) t->iref[k] = (int32_t)get(t, t->host, k);
			else t->lref[k] = (int64_t)get(t, t->host, k);
		}
		CK(cuMemcpyHtoD(t->dev, t->host, (size_t)t->n * t->bytes));
	}
	int rr = time_only ? 0 : REFERENCE(&rargs);
	if (rr) { fprintf(stderr, "reference failed: %d\n", rr); return 2; }

	struct { const char *name; unsigned long long (*scratch)(ARGS *, unsigned long long, int);
	         int (*ops)(const ARGS *, int, fz_op *, int); double score, ms; int launches; } var[2] = {
		{"fused", F_SCRATCH, F_OPS, 0, 0, 0}, {"unfused", U_SCRATCH, U_OPS, 0, 0, 0}};
	CUstream st;
	CK(cuStreamCreate(&st, CU_STREAM_NON_BLOCKING));
	CUevent e0, e1;
	CK(cuEventCreate(&e0, 0));
	CK(cuEventCreate(&e1, 0));
	float *times = calloc((size_t)reps, sizeof *times);
	const size_t flush_bytes = 256u << 20;
	CUdeviceptr flush_buf = 0;
	if (flush) CK(cuMemAlloc(&flush_buf, flush_bytes));
	for (int v = 0; v < 2; v++) {
		ARGS a = args;
		unsigned long long need = var[v].scratch(&a, 0, sm);
		CUdeviceptr scratch;
		CK(cuMemAlloc(&scratch, need));
		CK(cuMemsetD8Async(scratch, 0, need, st));
		CK(cuStreamSynchronize(st));
		var[v].scratch(&a, scratch, sm);
		fz_op ops[64];
		int n = var[v].ops(&a, sm, ops, 64);
		if (n < 0) { fprintf(stderr, "too many ops\n"); return 2; }
		for (int k = 0; k < n; k++) var[v].launches += ops[k].kind == FZ_OP_LAUNCH;
		double score = 0;
		for (int trial = 0; trial < 2 - once; trial++) { /* twice: the second run must see reset counters */
			/* on the stream: a memset on the legacy stream does not order
			   with a non-blocking stream and could land after the kernels */
			for (int i = 0; i < nt; i++)
				if (!strcmp(ts[i].kind, "output")) CK(cuMemsetD8Async(ts[i].dev, 0xff, (size_t)(ts[i].n ? ts[i].n : 1) * ts[i].bytes, st));
				else if (!strcmp(ts[i].kind, "inout")) /* the input it updates, again */
					CK(cuMemcpyHtoDAsync(ts[i].dev, ts[i].host, (size_t)(ts[i].n ? ts[i].n : 1) * ts[i].bytes, st));
			run_ops((uint64_t *)&a, ops, n, st);
			CK(cuStreamSynchronize(st));
			double s = time_only ? 0 : check_outputs(var[v].name, verbose);
			if (s > score) score = s;
		}
		var[v].score = score;
		for (int r = 0; r < (once ? 0 : 10); r++) run_ops((uint64_t *)&a, ops, n, st);
		for (int r = 0; r < reps; r++) {
			if (flush) CK(cuMemsetD8Async(flush_buf, 0, flush_bytes, st));
			CK(cuEventRecord(e0, st));
			run_ops((uint64_t *)&a, ops, n, st);
			CK(cuEventRecord(e1, st));
			CK(cuEventSynchronize(e1));
			CK(cuEventElapsedTime(&times[r], e0, e1));
		}
		var[v].ms = reps ? now_median(times, reps) : 0;
		CK(cuMemFree(scratch));
	}
	/* the copy ceiling, measured now: bytes read plus written */
	size_t cb = (size_t)1 << 30;
	CUdeviceptr c0, c1;
	double peak = 0;
	if (!once && cuMemAlloc(&c0, cb) == CUDA_SUCCESS && cuMemAlloc(&c1, cb) == CUDA_SUCCESS) {
		for (int r = 0; r < 3; r++) CK(cuMemcpyDtoDAsync(c1, c0, cb, st));
		float best = 1e30f;
		for (int r = 0; r < 10; r++) {
			float ms;
			CK(cuEventRecord(e0, st));
			CK(cuMemcpyDtoDAsync(c1, c0, cb, st));
			CK(cuEventRecord(e1, st));
			CK(cuEventSynchronize(e1));
			CK(cuEventElapsedTime(&ms, e0, e1));
			if (ms < best) best = ms;
		}
		peak = 2.0 * (double)cb / (best * 1e-3);
		cuMemFree(c0), cuMemFree(c1);
	}
	char sizes[256] = "";
	for (int i = 0; i < nsym; i++)
		snprintf(sizes + strlen(sizes), sizeof sizes - strlen(sizes), "%s%s=%lld", i ? "," : "", syms[i], symval[i]);
	double floor_ms = peak > 0 ? bytes_moved / peak * 1e3 : 0;
	int ok = var[0].score <= 1 && var[1].score <= 1;
	if (flush_buf) CK(cuMemFree(flush_buf));
	if (time_only) printf("(timing only, not checked) ");
	if (flush) printf("(L2 flushed before each timed run) ");
	printf("%-20s %-22s %-4s fused_err/tol=%-8.3g unfused_err/tol=%-8.3g fused=%.4fms unfused=%.4fms speedup=%.2fx "
	       "launches=%d/%d floor=%.4fms (%.0f%% of floor) copy=%.2fTB/s\n",
	       STR(FZ_NAME), sizes, ok ? "PASS" : "FAIL", var[0].score, var[1].score, var[0].ms, var[1].ms,
	       var[1].ms / var[0].ms, var[0].launches, var[1].launches, floor_ms,
	       floor_ms > 0 ? 100.0 * floor_ms / var[0].ms : 0, peak / 1e12);
	for (int k = 0; k < nnotes; k++) puts(notes[k]); /* what passed only as a near tie */
	for (int i = 0; i < nt; i++) /* scalar results, from the last (unfused) run and the reference */
		if (is_out(&ts[i]) && ts[i].rank == 0) {
			double got = 0;
			unsigned char buf[8];
			CK(cuMemcpyDtoH(buf, ts[i].dev, (size_t)ts[i].bytes));
			got = get(&ts[i], buf, 0);
			printf("  %s%s%s = %.10g (reference %.10g)\n", STR(FZ_NAME), series ? " series " : "", series ? series : "",
			       got, ts[i].ref ? ts[i].ref[0] : ts[i].iref ? (double)ts[i].iref[0] : (double)ts[i].lref[0]);
		}
	return ok ? 0 : 1;
}
