/* Validates and times one spec's artifact on a GPU: the fused and the
 * unfused variant against the float64 reference, on fresh random inputs,
 * outputs poisoned with NaN first. Built once per spec:
 *   cc -DFZ_NAME=kl_divergence -Igenerated -include kl_divergence.h \
 *      tests/gpu/validate.c generated/kl_divergence_ref.c -lcuda -lm
 * Until libfuserun exists this speaks the Driver API itself.
 * usage: validate SIZE=VALUE... [--seed S] [--reps R] [--ptx FILE] [--dir DIR] [--misalign] [--no-tma]
 * (--dir: the artifacts' folder, default generated/). An input with a
 * domain (the manifest's domain=LO..HI) is drawn from it; an inout tensor
 * (updated in place) is filled like an input before every run and
 * checked like an output. --misalign: every tensor one element past a
 * 16-byte boundary, for the kernels' scalar fallbacks. --no-tma: tile
 * kernels load with plain loads. --flush: time as triton.testing.do_bench
 * times PyTorch (bench/peers.py): a 256 MB memset before each timed run, so
 * the run starts with a cold L2 and its host-side work (tensor maps, the
 * launch) happens while the GPU is still busy; without it the events also
 * time that host work, with the inputs warm in L2. */
#include <cuda.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	int has_dom;            /* domain=LO..HI: inputs are drawn from [lo, hi] */
	double lo, hi;
	long long dimval[4];
	long long n;            /* elements */
	int bytes;              /* per element on the device */
	void *host;             /* device-typed host copy */
	double *ref;            /* float64 view for the reference */
	int32_t *iref;
	int64_t *lref;
	CUdeviceptr dev;
} T;
static T ts[MAXT];
static int nt, nsym;
/* kernels that take more than the plain args: dynamic shared memory, and for
   tile kernels the tensor maps of A and B (manifest: smem=, tma=A,B) */
enum { MAXK = 32 };
static struct { char name[96]; int smem, tma[2]; } kx[MAXK];
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

static uint16_t f2h(float f) /* round to nearest even, finite inputs */
{
	uint32_t x;
	memcpy(&x, &f, 4);
	uint32_t sign = (x >> 16) & 0x8000;
	int e = (int)((x >> 23) & 0xff) - 127 + 15;
	uint32_t mant = x & 0x7fffff;
	if (e <= 0) return (uint16_t)sign;
	if (e >= 31) return (uint16_t)(sign | 0x7c00);
	uint32_t h = sign | (uint32_t)e << 10 | mant >> 13;
	uint32_t rest = mant & 0x1fff;
	if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) h++;
	return (uint16_t)h;
}
static float h2f(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff, x;
	if (e == 0) {
		float f = (float)m / 16777216.0f;
		return sign ? -f : f;
	}
	if (e == 31) x = sign | 0x7f800000 | m << 13;
	else x = sign | (e - 15 + 127) << 23 | m << 13;
	float f;
	memcpy(&f, &x, 4);
	return f;
}
static uint16_t f2b(float f)
{
	uint32_t x;
	memcpy(&x, &f, 4);
	x += 0x7fff + ((x >> 16) & 1);
	return (uint16_t)(x >> 16);
}
static float b2f(uint16_t b)
{
	uint32_t x = (uint32_t)b << 16;
	float f;
	memcpy(&f, &x, 4);
	return f;
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
		} else if (!strncmp(line, "kernel ", 7) && strstr(line, " smem=") && nkx < MAXK) {
			char *sm = strstr(line, " smem="), *tm = strstr(line, " tma=");
			if (sscanf(line, "kernel %63s %95s", a, kx[nkx].name) != 2) continue;
			kx[nkx].smem = atoi(sm + 6), kx[nkx].tma[0] = kx[nkx].tma[1] = -1;
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
	if (!strcmp(t->type, "f64") || !strcmp(t->type, "i64")) return 8;
	if (!strcmp(t->type, "f16") || !strcmp(t->type, "bf16")) return 2;
	return 4;
}
static double get(const T *t, const void *buf, long long i)
{
	if (!strcmp(t->type, "f32")) return ((const float *)buf)[i];
	if (!strcmp(t->type, "f64")) return ((const double *)buf)[i];
	if (!strcmp(t->type, "f16")) return h2f(((const uint16_t *)buf)[i]);
	if (!strcmp(t->type, "bf16")) return b2f(((const uint16_t *)buf)[i]);
	if (!strcmp(t->type, "i64")) return (double)((const int64_t *)buf)[i];
	return ((const int32_t *)buf)[i];
}
static void put(const T *t, void *buf, long long i, double v)
{
	if (!strcmp(t->type, "f32")) ((float *)buf)[i] = (float)v;
	else if (!strcmp(t->type, "f64")) ((double *)buf)[i] = v;
	else if (!strcmp(t->type, "f16")) ((uint16_t *)buf)[i] = f2h((float)v);
	else if (!strcmp(t->type, "bf16")) ((uint16_t *)buf)[i] = f2b((float)v);
	else if (!strcmp(t->type, "i64")) ((int64_t *)buf)[i] = (int64_t)v;
	else ((int32_t *)buf)[i] = (int32_t)v;
}

/* Inputs: uniform in (-1, 1), or (0.05, 1) for names that must be positive;
   a CSR of `syn` synapses per neuron for the spiking burst. */
static int positive(const char *n)
{
	static const char *const pos[] = {"q", "p", "var", "pi", NULL};
	for (int i = 0; pos[i]; i++)
		if (!strcmp(n, pos[i])) return 1;
	return 0;
}

/* A value from the input's domain: uniform in [lo, hi], whole numbers for
   integer types. */
static double domain_value(const T *t)
{
	if (!is_float(t)) return t->lo + floor(urand() * (t->hi - t->lo + 1 - 1e-9));
	return t->lo + (t->hi - t->lo) * urand();
}

/* the shipped specs whose inputs must hold together (indices in range,
   views of the same series) are filled by name: FZ_NAME is SPEC or SPEC_shard */
static int spec_is(const char *name)
{
	size_t n = strlen(name);
	return !strncmp(STR(FZ_NAME), name, n) && (!STR(FZ_NAME)[n] || !strcmp(STR(FZ_NAME) + n, "_shard"));
}
static long long size_of(const char *s) { return symval[sym_index(s)]; }

static double scalar_value(const T *t)
{
	if (t->has_dom) return domain_value(t);
	/* a shard is the last device's range: the queries are the series' points
	   off .. N-1, the neurons base .. NP1-2 of the network */
	if (spec_is("transfer_entropy") && !strcmp(t->name, "off")) return (double)(size_of("N") - size_of("M"));
	if (spec_is("spike_burst") && !strcmp(t->name, "base")) return (double)(size_of("NP1") - 1 - size_of("N"));
	if (!strcmp(t->name, "eps")) return 1e-5;
	if (!strcmp(t->name, "nf")) return (double)symval[sym_index("N")];
	if (!strcmp(t->name, "decay")) return 0.9;
	if (!strcmp(t->name, "vth")) return 1.0;
	if (!strcmp(t->name, "vreset")) return 0.0;
	if (!strcmp(t->name, "lr")) return 0.01;
	return 0.5 + urand();
}

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

static void fill_inputs(void)
{
	/* spike_burst: all NP1-1 neurons; spike_burst_shard: NP1-1 in the whole
	   network (row_ptr and fired), N of them here (col: local targets) */
	int spike = spec_is("spike_burst");
	if (series) {
		fill_series();
		if (spec_is("transfer_entropy")) fill_views();
		return;
	}
	for (int i = 0; i < nt; i++) {
		T *t = &ts[i];
		if (!is_in(t) || (!t->rank && strcmp(t->kind, "inout"))) continue;
		for (long long k = 0; k < t->n; k++) {
			double v;
			if (t->has_dom) {
				v = domain_value(t);
			} else if (spike && !strcmp(t->name, "row_ptr")) {
				long long syn = size_of("S") / (size_of("NP1") - 1);
				v = (double)(k * syn);
			} else if (spike && !strcmp(t->name, "col")) {
				v = (double)(long long)(urand() * (double)size_of("N"));
			} else if (spike && !strcmp(t->name, "fired")) { /* distinct: a stride through the neurons */
				long long G = size_of("NP1") - 1, F = size_of("F");
				v = (double)((k * (G / (F ? F : 1)) + 7) % G);
			} else if (spike && !strcmp(t->name, "w")) {
				v = 0.02 + 0.2 * urand();
			} else if (spike && !strcmp(t->name, "v")) {
				v = urand(); /* about 1.5% fire: u = 0.9 v + I reaches 1 only with input */
			} else if (!is_float(t)) {
				v = (double)(long long)(urand() * 100);
			} else {
				v = positive(t->name) ? 0.05 + 0.95 * urand() : 2 * urand() - 1;
			}
			put(t, t->host, k, v);
		}
	}
	if (spec_is("transfer_entropy")) fill_views();
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
	if (x->rank < 2 || (args[t] & 15) || (dim[1] * 2) % 16 || dim[0] <= 0 || dim[1] <= 0 || dim[0] >= (1ll << 31) || dim[1] >= (1ll << 31)) return 0;
	cuuint64_t dims[2] = {(cuuint64_t)dim[1], (cuuint64_t)dim[0]}, strides[1] = {(cuuint64_t)dim[1] * 2};
	cuuint32_t box[2] = {64, (cuuint32_t)box_rows}, es[2] = {1, 1};
	CK(cuTensorMapEncodeTiled(map, strcmp(x->type, "bf16") ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2,
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
				tm.ok = tmaps_ok && encode_map(args, kx[k].tma[0], 128, &tm.a) && encode_map(args, kx[k].tma[1], 64, &tm.b);
		}
		CK(cuLaunchKernel(fn, ops[i].grid[0], ops[i].grid[1], ops[i].grid[2], ops[i].block, 1, 1, (unsigned)smem, st, params, NULL));
	}
	return n;
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;
	return x < y ? -1 : x > y;
}

/* |g - r| for one element; any NaN, in the output (an element never
   written keeps its poison) or in the reference (inputs outside a
   function's domain: it would match the poison), is an infinite error;
   equal infinities are equal (as fuserun's rt_compare). */
static double elem_diff(double g, double r)
{
	if (isnan(g) || isnan(r)) return INFINITY;
	return g == r ? 0 : fabs(g - r);
}

/* Worst normwise error of every output: max|out-ref| / max|ref|. */
static double check_outputs(const char *variant, int verbose)
{
	double worst = 0;
	for (int i = 0; i < nt; i++) {
		T *t = &ts[i];
		if (!is_out(t)) continue;
		void *got = malloc((size_t)(t->n ? t->n : 1) * t->bytes);
		CK(cuMemcpyDtoH(got, t->dev, (size_t)(t->n ? t->n : 1) * t->bytes));
		long long n = t->rank ? t->n : 1;
		double maxref = 0, maxdiff = 0;
		if (!strcmp(t->by, "compact") && t->rank == 1) { /* a list: the same set */
			T *cnt = NULL;
			for (int j = 0; j < nt; j++)
				if (!strcmp(ts[j].by, "compact") && ts[j].rank == 0) cnt = &ts[j];
			int32_t gc = 0;
			CK(cuMemcpyDtoH(&gc, cnt->dev, 4));
			long long rc = cnt->iref ? cnt->iref[0] : cnt->lref ? cnt->lref[0] : (long long)cnt->ref[0];
			if (gc != rc) maxdiff = INFINITY;
			else {
				long long *a = malloc(sizeof(long long) * (size_t)(gc + 1)), *b = malloc(sizeof(long long) * (size_t)(gc + 1));
				for (long long k = 0; k < gc; k++) a[k] = (long long)get(t, got, k), b[k] = t->iref[k];
				qsort(a, (size_t)gc, sizeof *a, cmp_ll), qsort(b, (size_t)gc, sizeof *b, cmp_ll);
				for (long long k = 0; k < gc; k++)
					if (a[k] != b[k]) maxdiff = INFINITY;
				free(a), free(b);
			}
			maxref = 1;
		} else {
			for (long long k = 0; k < n; k++) {
				double r = is_float(t) ? t->ref[k] : t->iref ? t->iref[k] : (double)t->lref[k];
				double g = get(t, got, k);
				double d = elem_diff(g, r);
				if (d > maxdiff) maxdiff = d;
				if (isfinite(r) && fabs(r) > maxref) maxref = fabs(r); /* an infinity is no scale */
			}
		}
		/* normwise, with a floor so an exact zero (an independent-series
		   entropy, say) is compared absolutely */
		double err = maxdiff == 0 ? 0 : maxdiff / (maxref > 1e-3 ? maxref : 1e-3);
		if (verbose) {
			long long worst_k = -1;
			for (long long k = 0; k < n && strcmp(t->by, "compact"); k++) {
				double r = is_float(t) ? t->ref[k] : t->iref ? t->iref[k] : (double)t->lref[k];
				double g = get(t, got, k);
				if (elem_diff(g, r) == maxdiff) { worst_k = k; break; }
			}
			fprintf(stderr, "  %s %s: error %.3g (max|diff| %.3g, max|ref| %.3g", variant, t->name, err, maxdiff, maxref);
			if (worst_k >= 0)
				fprintf(stderr, "; at %lld got %.9g want %.9g", worst_k, get(t, got, worst_k),
				        is_float(t) ? t->ref[worst_k] : t->iref ? t->iref[worst_k] : (double)t->lref[worst_k]);
			fprintf(stderr, ")\n");
		}
		/* tolerance by type and by how it is computed */
		double tol = 0;
		int red = strcmp(t->by, "map") != 0;
		if (!strcmp(t->type, "f32")) tol = red ? 1e-4 : 1e-5;
		else if (!strcmp(t->type, "f64")) tol = 1e-10;
		else if (!strcmp(t->type, "f16")) tol = 1e-2;
		else if (!strcmp(t->type, "bf16")) tol = 2e-2;
		double score = tol > 0 ? err / tol : (err > 0 ? INFINITY : 0);
		if (score > worst) worst = score;
		free(got);
	}
	return worst; /* in units of the tolerance: <= 1 passes */
}

int main(int argc, char **argv)
{
	const char *dir = "generated";
	for (int i = 1; i + 1 < argc; i++)
		if (!strcmp(argv[i], "--dir")) dir = argv[i + 1];
	char ptx_buf[512], man_buf[512];
	snprintf(man_buf, sizeof man_buf, "%s/%s.manifest", dir, STR(FZ_NAME));
	const char *ptx_path = NULL; /* default: sm_90a on compute capability 9.0, else sm_90 */
	int reps = 100, verbose = 0, time_only = 0, misalign = 0, flush = 0;
	read_manifest(man_buf);
	for (int i = 1; i < argc; i++) {
		char k[64];
		long long v;
		if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--seed") && i + 1 < argc) rng ^= strtoull(argv[++i], NULL, 0) * 0x2545F4914F6CDD1Dull;
		else if (!strcmp(argv[i], "--ptx") && i + 1 < argc) ptx_path = argv[++i];
		else if (!strcmp(argv[i], "--dir") && i + 1 < argc) i++;
		else if (!strcmp(argv[i], "-v")) verbose = 1;
		else if (!strcmp(argv[i], "--no-tma")) tmaps_ok = 0; /* tile kernels load with plain loads */
		else if (!strcmp(argv[i], "--time-only")) time_only = 1; /* sizes whose CPU reference would take minutes */
		else if (!strcmp(argv[i], "--flush")) flush = 1; /* a cold L2 and the host's work hidden, as do_bench */
		else if (!strcmp(argv[i], "--misalign")) misalign = 1; /* every tensor one element past a 16-byte boundary */
		else if (!strcmp(argv[i], "--series") && i + 1 < argc) series = argv[++i];
		else if (sscanf(argv[i], "%63[^=]=%lld", k, &v) == 2 && sym_index(k) >= 0) symval[sym_index(k)] = v;
		else { fprintf(stderr, "bad argument %s\n", argv[i]); return 2; }
	}
	for (int i = 0; i < nsym; i++)
		if (symval[i] <= 0) { fprintf(stderr, "size %s not given\n", syms[i]); return 2; }
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
		t->n = 1;
		for (int d = 0; d < t->rank; d++) t->n *= t->dimsym[d] >= 0 ? symval[t->dimsym[d]] : t->dimval[d];
		t->bytes = elem_bytes(t);
		if (!strcmp(t->kind, "temp")) continue;
		size_t nb = (size_t)t->n * (size_t)t->bytes;
		t->host = calloc(t->n ? (size_t)t->n : 1, (size_t)t->bytes);
		if (is_float(t)) t->ref = calloc((size_t)t->n + 1, sizeof(double));
		else if (!strcmp(t->type, "i64")) t->lref = calloc((size_t)t->n + 1, 8);
		else t->iref = calloc((size_t)t->n + 1, 4);
		if (!strcmp(t->kind, "input") && t->rank == 0) {
			double v = scalar_value(t);
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
	for (int i = 0; i < nsym; i++) memcpy(&af[nt + i], &symval[i], 8), memcpy(&rf[rk++], &symval[i], 8);
	if (rk * 8 != (int)sizeof rargs) { fprintf(stderr, "reference args disagree with the manifest\n"); return 2; }

	fill_inputs();
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
		for (int trial = 0; trial < 2; trial++) { /* twice: the second run must see reset counters */
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
		for (int r = 0; r < 10; r++) run_ops((uint64_t *)&a, ops, n, st);
		for (int r = 0; r < reps; r++) {
			if (flush) CK(cuMemsetD8Async(flush_buf, 0, flush_bytes, st));
			CK(cuEventRecord(e0, st));
			run_ops((uint64_t *)&a, ops, n, st);
			CK(cuEventRecord(e1, st));
			CK(cuEventSynchronize(e1));
			CK(cuEventElapsedTime(&times[r], e0, e1));
		}
		var[v].ms = now_median(times, reps);
		CK(cuMemFree(scratch));
	}
	/* the copy ceiling, measured now: bytes read plus written */
	size_t cb = (size_t)1 << 30;
	CUdeviceptr c0, c1;
	double peak = 0;
	if (cuMemAlloc(&c0, cb) == CUDA_SUCCESS && cuMemAlloc(&c1, cb) == CUDA_SUCCESS) {
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
