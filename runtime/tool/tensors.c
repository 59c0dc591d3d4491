/* Host tensors, inputs and comparisons for fuserun validate/bench; the
 * inputs of tests/gpu/validate.c's per-spec drivers too (rt_case_inputs),
 * so that both draw them from the manifest alike. */
#include "tensors.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int rt_reference_in_process;

enum { T_F64, T_F32, T_F16, T_BF16, T_F8E4M3, T_F8E5M2, T_I64, T_I32 };

static int tcode(const fz_tensor_info *ti)
{
	static const char *const names[] = {"f64", "f32", "f16", "bf16", "f8e4m3", "f8e5m2", "i64", "i32"};
	for (int i = 0; i < 8; i++)
		if (!strcmp(ti->type, names[i])) return i;
	return T_I32;
}
static int is_float(int code) { return code <= T_F8E5M2; }

uint16_t rt_f2h(float f) /* round to nearest even, finite inputs */
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
float rt_h2f(uint16_t h)
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
uint16_t rt_f2b(float f)
{
	uint32_t x;
	memcpy(&x, &f, 4);
	x += 0x7fff + ((x >> 16) & 1);
	return (uint16_t)(x >> 16);
}
float rt_b2f(uint16_t b)
{
	uint32_t x = (uint32_t)b << 16;
	float f;
	memcpy(&f, &x, 4);
	return f;
}

/* The two fp8 formats (OCP 8-bit floating point), sign bit 7 in both:
   e4m3 (f8e4m3, E4M3FN: 3 mantissa bits, bias 7, no infinities, S.1111.111
   NaN, largest 448) and e5m2 (f8e5m2: 2 mantissa bits, bias 15, IEEE's
   specials: S.11111.00 infinity, S.11111.xx NaN, largest 57344, the top
   byte of the f16 of the same value). */
typedef struct fp8_format {
	int mbits, emin, bias; /* mantissa bits; the exponent of the subnormals and the smallest normals */
	int ieee;              /* 1: the top exponent holds infinity and NaNs (e5m2); 0: only S.1111.111 is NaN (e4m3) */
	double max;            /* the largest finite value, and its code */
	uint8_t maxcode;
} fp8_format;
static const fp8_format fp8_e4m3 = {3, -6, 7, 0, 448.0, 0x7e}, fp8_e5m2 = {2, -14, 15, 1, 57344.0, 0x7b};

/* round to nearest even, saturating at +-max (an infinity too), as the
   device's cvt.rn.satfinite does; a NaN gives 0x7f, a NaN in both formats */
static uint8_t fp8_from(double v, const fp8_format *f)
{
	const uint8_t sign = signbit(v) ? 0x80 : 0;
	double a = fabs(v);
	if (a != a) return 0x7f;
	if (a >= f->max) return sign | f->maxcode;
	int e;
	frexp(a, &e); /* a = g 2^e, g in [0.5, 1): the leading bit is 2^(e-1) */
	int eb = e - 1 < f->emin ? f->emin : e - 1;
	const int one = 1 << f->mbits;
	const double r = nearbyint(ldexp(a, f->mbits - eb)); /* in quanta of 2^(eb-mbits): 0 .. 2 one */
	if (r == 0) return sign;
	if (eb == f->emin && r < one) return sign | (uint8_t)r; /* subnormal: r 2^(emin-mbits) */
	if (r == 2 * one) eb++;                                 /* rounded up to 2^(eb+1) */
	return sign | (uint8_t)((eb + f->bias) << f->mbits) | (uint8_t)(r == 2 * one ? 0 : (int)r - one);
}
static double fp8_to(uint8_t b, const fp8_format *f)
{
	const int top = 0x7f >> f->mbits, e = (b & 0x7f) >> f->mbits, m = b & ((1 << f->mbits) - 1);
	double v;
	if (e == top && (f->ieee || m == (1 << f->mbits) - 1)) v = f->ieee && m == 0 ? INFINITY : NAN;
	else v = e ? ldexp((1 << f->mbits) + m, e - f->bias - f->mbits) : ldexp(m, f->emin - f->mbits);
	return b & 0x80 ? -v : v;
}
uint8_t rt_f2e4m3(double v) { return fp8_from(v, &fp8_e4m3); }
double rt_e4m32f(uint8_t b) { return fp8_to(b, &fp8_e4m3); }
uint8_t rt_f2e5m2(double v) { return fp8_from(v, &fp8_e5m2); }
double rt_e5m22f(uint8_t b) { return fp8_to(b, &fp8_e5m2); }

static double get(int code, const void *buf, long long i)
{
	switch (code) {
	case T_F64: return ((const double *)buf)[i];
	case T_F32: return ((const float *)buf)[i];
	case T_F16: return rt_h2f(((const uint16_t *)buf)[i]);
	case T_BF16: return rt_b2f(((const uint16_t *)buf)[i]);
	case T_F8E4M3: return rt_e4m32f(((const uint8_t *)buf)[i]);
	case T_F8E5M2: return rt_e5m22f(((const uint8_t *)buf)[i]);
	case T_I64: return (double)((const int64_t *)buf)[i];
	default: return ((const int32_t *)buf)[i];
	}
}
static void put(int code, void *buf, long long i, double v)
{
	switch (code) {
	case T_F64: ((double *)buf)[i] = v; break;
	case T_F32: ((float *)buf)[i] = (float)v; break;
	case T_F16: ((uint16_t *)buf)[i] = rt_f2h((float)v); break;
	case T_BF16: ((uint16_t *)buf)[i] = rt_f2b((float)v); break;
	case T_F8E4M3: ((uint8_t *)buf)[i] = rt_f2e4m3(v); break;
	case T_F8E5M2: ((uint8_t *)buf)[i] = rt_f2e5m2(v); break;
	case T_I64: ((int64_t *)buf)[i] = (int64_t)v; break;
	default: ((int32_t *)buf)[i] = (int32_t)v;
	}
}
static double ref_at(const rt_tensor *t, long long k)
{
	return t->ref ? t->ref[k] : t->iref ? (double)t->iref[k] : (double)t->lref[k];
}

static double urand(uint64_t *s)
{
	*s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
	return (double)(*s >> 11) / 9007199254740992.0;
}

/* a value of the parameter's domain=LO..HI (uniform; integers in
   [ceil LO, floor HI]), which the caller checked is not empty */
static double domain_value(rt_case *c, const fz_tensor_info *ti, int code)
{
	double u = urand(&c->rng);
	if (is_float(code)) return ti->domain_lo + (ti->domain_hi - ti->domain_lo) * u;
	double lo = ceil(ti->domain_lo), hi = floor(ti->domain_hi), v = floor(lo + (hi - lo + 1) * u);
	return v > hi ? hi : v;
}

/* What a parameter holds comes from the manifest, never from its name (a
   name says nothing: fuserun gave eps 1e-5, vth 1.0 and nf size N by name,
   and positive values to q, p, var, pi; a spec says what must hold with a
   domain). A scalar without one: uniform in (0.5, 1.5), away from 0 and
   of one sign, as a scale or a step; an integer scalar is drawn later (its
   values line, or free_integers). */
static double scalar_value(rt_case *c, const fz_tensor_info *ti)
{
	if (ti->has_domain) return domain_value(c, ti, tcode(ti));
	return 0.5 + urand(&c->rng);
}

/* From the parameter's domain when the spec gave one; else uniform in
   (-1, 1). An integer input without a domain is drawn later, by
   values_input or free_integers. */
static double input_value(rt_case *c, const rt_tensor *t, int code)
{
	if (t->ti->has_domain) return domain_value(c, t->ti, code);
	if (!is_float(code)) return 0;
	return 2 * urand(&c->rng) - 1;
}

/* ---- the reference, run apart ---- */

/* what a run of the reference says: fz_NAME_reference's own answers (0,
   1 a subscript out of range, 2 out of memory, 3 sizes below the manifest's
   fits lines), then ours */
enum { REF_OK = 0, REF_BAD_INDEX = 1, REF_NO_MEMORY = 2, REF_SIZES = 3, REF_CRASHED = 4, REF_FAILED = 5, REF_NO_CHILD = 6 };

static void *view_of(const rt_tensor *t) { return t->ref ? (void *)t->ref : t->iref ? (void *)t->iref : (void *)t->lref; }
static size_t view_bytes(const rt_tensor *t) { return (size_t)t->n * (t->ref ? sizeof(double) : t->iref ? 4 : 8); }
static int writes(const rt_tensor *t) { return view_of(t) && (t->ti->role == FZ_OUTPUT || t->ti->role == FZ_INOUT); }

/* v as an integer, saturated: a conversion out of range is undefined (a
   float scalar's value went through it unused, and a manifest's domain may
   hold 1e22: the manifest fuzzer's report) */
static long long to_int(double v, long long lo, long long hi)
{
	if (!(v > (double)lo)) return lo; /* NaN too */
	if (v >= (double)hi) return hi;
	return (long long)v;
}

/* Tensor i's reference view from its device values; a scalar input's
   value into both args structs (it is passed by value) */
static void sync_input(rt_case *c, int i)
{
	rt_tensor *t = &c->t[i];
	const int code = tcode(t->ti);
	for (long long k = 0; k < t->n; k++) {
		double v = get(code, t->host, k);
		if (t->ref) t->ref[k] = v;
		else if (t->iref) t->iref[k] = (int32_t)to_int(v, INT32_MIN, INT32_MAX);
		else t->lref[k] = (int64_t)to_int(v, INT64_MIN, INT64_MAX);
	}
	if (t->ti->role != FZ_INPUT || t->ti->rank != 0) return;
	double v = get(code, t->host, 0);
	long long l = is_float(code) ? 0 : to_int(v, INT64_MIN, INT64_MAX);
	memcpy(&c->args[i], is_float(code) ? (void *)&v : (void *)&l, 8);
	memcpy(&c->rargs[t->rarg], &c->args[i], 8);
}

/* an in-place tensor's view holds the reference's result after a run: its
   input values again, from the device's copy, before the next */
static void views_from_host(rt_case *c)
{
	for (int i = 0; i < c->info->ntensors; i++)
		if (c->t[i].ti->role == FZ_INOUT && view_of(&c->t[i])) sync_input(c, i);
}

static int fd_write(int fd, const void *p, size_t n)
{
	for (const char *q = p; n;) {
		ssize_t w = write(fd, q, n);
		if (w < 0 && errno == EINTR) continue;
		if (w <= 0) return -1;
		q += w, n -= (size_t)w;
	}
	return 0;
}

static int fd_read(int fd, void *p, size_t n)
{
	for (char *q = p; n;) {
		ssize_t r = read(fd, q, n);
		if (r < 0 && errno == EINTR) continue;
		if (r <= 0) return -1;
		q += r, n -= (size_t)r;
	}
	return 0;
}

/* The child: the reference, then its answer and (when it computed them
   and they are wanted) its outputs into the pipe. A sanitizer's or a
   debugger's handler of a trap would report it as fuserun's own: the
   default action ends the child, which the parent reads as a crash. */
_Noreturn static void reference_child(rt_case *c, int fd, int outputs)
{
	signal(SIGFPE, SIG_DFL), signal(SIGILL, SIG_DFL), signal(SIGSEGV, SIG_DFL), signal(SIGBUS, SIG_DFL);
	int r = c->spec->reference(c->rargs);
	unsigned char code = r >= REF_OK && r <= REF_SIZES ? (unsigned char)r : REF_FAILED;
	int ok = !fd_write(fd, &code, 1);
	for (int i = 0; ok && outputs && code == REF_OK && i < c->info->ntensors; i++)
		if (writes(&c->t[i])) ok = !fd_write(fd, view_of(&c->t[i]), view_bytes(&c->t[i]));
	_exit(ok ? 0 : 1);
}

/* The reference is the artifact's C code, and fusec accepts code that
   traps: an integer division by zero (SIGFPE), a division by the constant
   0, which the C compiler turns into a trap (SIGILL), a read outside a
   buffer. It runs in a child process, so that a crash is a refusal with
   its reason, not the end of fuserun; outputs come back through a pipe.
   *why: the signal (REF_CRASHED), the exit status (REF_FAILED) or errno
   (REF_NO_CHILD: no pipe, fork or wait). */
static int run_reference(rt_case *c, int outputs, int *why)
{
	views_from_host(c);
	*why = 0;
	if (rt_reference_in_process) {
		int r = c->spec->reference(c->rargs);
		return r >= REF_OK && r <= REF_SIZES ? r : REF_FAILED;
	}
	int fd[2];
	if (pipe(fd)) return *why = errno, REF_NO_CHILD;
	pid_t pid = fork();
	if (pid < 0) {
		*why = errno;
		close(fd[0]), close(fd[1]);
		return REF_NO_CHILD;
	}
	if (pid == 0) close(fd[0]), reference_child(c, fd[1], outputs);
	close(fd[1]);
	unsigned char code = REF_FAILED;
	int got = !fd_read(fd[0], &code, 1);
	for (int i = 0; got && outputs && code == REF_OK && i < c->info->ntensors; i++)
		if (writes(&c->t[i])) got = !fd_read(fd[0], view_of(&c->t[i]), view_bytes(&c->t[i]));
	close(fd[0]);
	int st = 0;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR) return *why = errno, REF_NO_CHILD;
	if (WIFSIGNALED(st)) return *why = WTERMSIG(st), REF_CRASHED;
	if (!got || !WIFEXITED(st) || WEXITSTATUS(st)) return *why = WIFEXITED(st) ? WEXITSTATUS(st) : -1, REF_FAILED;
	return code;
}

/* why a run of the reference was refused, for a message */
static void reference_failure(int r, int why, char *buf, size_t n)
{
	const char *sig = why == SIGFPE ? "SIGFPE: an integer division by zero, or of the most negative integer by -1"
	                : why == SIGILL ? "SIGILL: a trap the C compiler put where the code is undefined, e.g. a division by the constant 0"
	                : why == SIGSEGV || why == SIGBUS ? "a read or write outside its buffers" : NULL;
	if (r == REF_BAD_INDEX) snprintf(buf, n, "a subscript out of range (a bad gather)");
	else if (r == REF_NO_MEMORY) snprintf(buf, n, "out of memory");
	else if (r == REF_SIZES) snprintf(buf, n, "sizes below what an input's domain reaches (the manifest's fits lines)");
	else if (r == REF_CRASHED && sig) snprintf(buf, n, "it crashed (%s)", sig);
	else if (r == REF_CRASHED) snprintf(buf, n, "it crashed (signal %d)", why);
	else if (r == REF_NO_CHILD) snprintf(buf, n, "it could not be run apart (%s)", strerror(why));
	else if (why) snprintf(buf, n, "it ended with status %d (a sanitizer's report?)", why);
	else snprintf(buf, n, "unknown error");
}

/* ---- integer inputs with a values line ---- */

/* fusec says what an integer input without a domain must hold (a values
   line: LO..HI, nondecreasing for a CSR row pointer, nonzero for a
   divisor; fz_tensor_values): drawn from it, uniform in LO..HI (0 left
   out for nonzero, and -1 while anything else is left: the most negative
   integer divided by -1 overflows, a trap in the reference, and a divisor
   line is not told what it divides), or for nondecreasing a sorted sequence whose first
   element is LO, each element uniform in its own stretch of the range, so
   that the last is near HI and never past it (s in rp(i) .. rp(i+1) then
   stays inside what rp points into, and most of it is reached). Inputs go
   through doubles (the reference's view): the range is cut to the type and
   to -2^53..2^53, a subset of what is valid. */
static int values_input(rt_case *c, int i, char *err)
{
	rt_tensor *t = &c->t[i];
	fz_values_info v;
	int rc = fz_tensor_values(c->info, i, c->size, &v, err);
	if (rc || !v.known) return rc ? 1 : 0;
	const int code = tcode(t->ti);
	const long long top = 9007199254740992ll, tlo = code == T_I32 ? INT32_MIN : -top, thi = code == T_I32 ? INT32_MAX : top;
	long long lo = v.lo > tlo ? v.lo : tlo, hi = v.hi < thi ? v.hi : thi;
	/* candidates: lo..hi without 0 and -1 when nonzero (hi - lo < 2^54: exact enough in a double) */
	const int no0 = v.nonzero && lo <= 0 && hi >= 0;
	const double all = (double)(hi - lo) + 1 - no0;
	const int no1 = v.nonzero && lo <= -1 && hi >= -1 && all >= 2;
	const double w = all - no1;
	if (lo > hi || w < 1)
		return snprintf(err, FZ_ERRMSG_SIZE, "%s: values %s%s (%lld..%lld at these sizes) hold nothing fuserun can draw into %s "
		                "(%lld..%lld)", t->ti->name, v.range, v.nonzero ? " nonzero" : "", v.lo, v.hi, t->ti->type, tlo, thi), 1;
	for (long long k = 0; k < t->n; k++) {
		double x = v.nondecreasing ? (k ? floor(((double)k + urand(&c->rng)) * w / (double)t->n) : 0) : floor(urand(&c->rng) * w);
		long long d = x < w - 1 ? (long long)x : (long long)(w - 1), val = lo + d;
		if (no1 && val >= -1) val++; /* past -1, then past 0: the order keeps a sorted draw sorted */
		if (no0 && val >= 0) val++;
		put(code, t->host, k, (double)val);
	}
	t->valued = 1;
	sync_input(c, i);
	return 0;
}

/* ---- integer inputs without a domain ---- */

/* An integer input the spec gave no domain and the manifest no values
   line (a fusec that wrote none, or no use that bounds it) is an index
   into some dimension, a CSR row pointer, a divisor, a count: which, the
   manifest does not say, and a name says nothing.
   What the artifact does carry is its reference, which checks every
   subscript it reads and refuses a bad one, and runs apart, so that a trap
   (a division by 0) is a refusal too: the values are found by trying
   ranges on it, and only values it accepted are kept. Values are nondecreasing across a tensor, each uniform in its
   own stretch of the range: a valid CSR row pointer, and any index. */
typedef struct free_int {
	int i;          /* the tensor */
	uint64_t rng;   /* the generator before its accepted values were drawn */
	long long hi;   /* their range: lo .. hi */
} free_int;

static int free_integer(const rt_tensor *t)
{
	return view_of(t) && (t->ti->role == FZ_INPUT || t->ti->role == FZ_INOUT) && !is_float(tcode(t->ti)) && !t->ti->has_domain &&
	       !t->valued;
}

/* draws f's values in lo..hi (hi within the type), remembering how; a
   tensor of two or more elements holds both ends, so that a range is
   accepted for its ends and not by the luck of a draw that missed one (an
   index range one past its dimension, accepted, then refused every
   widening of the row pointer that read it) */
static void fill_free(rt_case *c, free_int *f, long long lo, long long hi)
{
	rt_tensor *t = &c->t[f->i];
	const double w = (double)(hi - lo + 1);
	f->rng = c->rng, f->hi = hi;
	for (long long k = 0; k < t->n; k++) {
		double v = (double)lo + floor(((double)k + urand(&c->rng)) * w / (double)t->n);
		if (t->n > 1 && (k == 0 || k == t->n - 1)) v = k ? (double)hi : (double)lo;
		put(tcode(t->ti), t->host, k, v > (double)hi ? (double)hi : v);
	}
	sync_input(c, f->i);
}

/* f's last accepted values again: the same draw from the same state */
static void refill_free(rt_case *c, free_int *f, long long lo)
{
	uint64_t now = c->rng;
	c->rng = f->rng;
	fill_free(c, f, lo, f->hi);
	c->rng = now;
}

/* the largest value of f's type that fuserun draws exactly */
static long long type_top(const rt_case *c, const free_int *f)
{
	return tcode(c->t[f->i].ti) == T_I32 ? 2147483647ll : 9007199254740992ll;
}

static int cmp_desc(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;
	return x < y ? 1 : x > y ? -1 : 0;
}

/* v[] sorted from the largest, without repeats; the new count */
static int distinct_desc(long long *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_desc);
	int k = 0;
	for (int j = 0; j < n; j++)
		if (!k || v[j] != v[k - 1]) v[k++] = v[j];
	return k;
}

/* the refusal when no range tried was accepted: the inputs, the last reason */
static int no_free_values(rt_case *c, const free_int *f, int nf, int r, int why, char *err)
{
	char names[400] = "", what[200];
	for (int x = 0; x < nf; x++) {
		size_t l = strlen(names);
		snprintf(names + l, sizeof names - l, "%s%s", x ? ", " : "", c->t[f[x].i].ti->name);
	}
	reference_failure(r, why, what, sizeof what);
	snprintf(err, FZ_ERRMSG_SIZE,
	         "%s: no values of its integer inputs without a domain (%s) that the float64 reference accepts, of those fuserun "
	         "tries (0..m-1 and 1..m-1 for m = each size up to 100, 100, 2, 1): %s; if it is the inputs, give them domains in the spec "
	         "(k: i32[N] in [1, 9])", c->info->fusion, names, what);
	return 1;
}

/* a run that ends the search: out of memory, no child process, or sizes
   the reference refuses whatever the inputs */
static int fatal_run(rt_case *c, int r, int why, char *err)
{
	char what[200];
	reference_failure(r, why, what, sizeof what);
	snprintf(err, FZ_ERRMSG_SIZE, "the float64 reference of %s failed: %s", c->info->fusion, what);
	return 1;
}

/* Every free integer input in one range lo..m-1, from the widest: m each
   size up to 100, then 100, 2 and 1 (0..0 reads only first elements), lo
   0 and then 1 (0 is an index but no divisor). Then each tensor alone is
   widened to a size's whole range (an index reaches the whole dimension,
   a row pointer the whole of what it points into), the widest accepted;
   scalars keep their first range. */
static int free_integers(rt_case *c, char *err)
{
	free_int f[FZ_MAX_TENSORS];
	int nf = 0, nm = 0, r = REF_FAILED, why = 0;
	for (int i = 0; i < c->info->ntensors; i++)
		if (free_integer(&c->t[i])) f[nf++] = (free_int){i, 0, 0};
	if (!nf) return 0;
	long long m[FZ_MAX_SIZES + 3] = {100, 2, 1}, lo = 0;
	nm = 3;
	for (int j = 0; j < c->info->nsizes; j++) m[nm++] = c->size[j] < 100 ? c->size[j] : 100;
	nm = distinct_desc(m, nm);
	for (int j = 0; j < nm && r != REF_OK; j++)
		for (lo = 0; lo <= 1 && lo <= m[j] - 1; lo++) {
			for (int x = 0; x < nf; x++) fill_free(c, &f[x], lo, m[j] - 1);
			if ((r = run_reference(c, 0, &why)) == REF_OK) break;
			if (r == REF_NO_MEMORY || r == REF_NO_CHILD || r == REF_SIZES) return fatal_run(c, r, why, err);
		}
	if (r != REF_OK) return no_free_values(c, f, nf, r, why, err);
	long long d[FZ_MAX_SIZES];
	int nd = c->info->nsizes;
	memcpy(d, c->size, sizeof *d * (size_t)nd);
	nd = distinct_desc(d, nd);
	for (int x = 0; x < nf; x++) {
		if (c->t[f[x].i].ti->rank == 0) continue;
		free_int keep = f[x];
		int accepted = 0;
		for (int j = 0; j < nd && !accepted; j++) {
			long long hi = d[j] - 1 < type_top(c, &f[x]) ? d[j] - 1 : type_top(c, &f[x]);
			if (hi <= keep.hi) break;
			if (hi == f[x].hi) continue; /* two sizes past the type: tried */
			fill_free(c, &f[x], lo, hi);
			r = run_reference(c, 0, &why);
			if (r == REF_NO_MEMORY || r == REF_NO_CHILD || r == REF_SIZES) return fatal_run(c, r, why, err);
			accepted = r == REF_OK;
		}
		if (!accepted) f[x] = keep, refill_free(c, &f[x], lo);
	}
	return 0;
}

/* the finite values of an element type: a domain past them would give
   inputs the device cannot hold (an infinity, a wrapped integer) */
static void type_range(int code, double *lo, double *hi)
{
	static const double top[] = {[T_F64] = INFINITY, [T_F32] = 3.4028234663852886e38, [T_F16] = 65504.0,
	                             [T_BF16] = 3.3895313892515355e38, [T_F8E4M3] = 448.0,
	                             [T_F8E5M2] = 57344.0, [T_I64] = 9223372036854775807.0, [T_I32] = 2147483647.0};
	*hi = top[code];
	*lo = code == T_I32 ? -2147483648.0 : code == T_I64 ? -9223372036854775808.0 : -top[code];
}

int rt_check_domains(const fz_artifact_info *info, char *err)
{
	for (int i = 0; i < info->ntensors; i++) {
		const fz_tensor_info *ti = &info->tensors[i];
		const int code = tcode(ti);
		double lo, hi;
		type_range(code, &lo, &hi);
		if (!ti->has_domain) continue;
		if (ti->domain_lo < lo || ti->domain_hi > hi)
			return snprintf(err, FZ_ERRMSG_SIZE, "%s: domain %.15g..%.15g is outside %s (%.15g..%.15g): no input of that type "
			                "can hold it; give the spec a domain inside the type", ti->name, ti->domain_lo, ti->domain_hi,
			                ti->type, lo, hi), 1;
		if (is_float(code)) continue;
		if (ceil(ti->domain_lo) > floor(ti->domain_hi))
			return snprintf(err, FZ_ERRMSG_SIZE, "%s: domain %.15g..%.15g holds no integer", ti->name, ti->domain_lo,
			                ti->domain_hi), 1;
		/* inputs pass through doubles (the reference's view of them) */
		if (fabs(ti->domain_lo) > 9007199254740992.0 || fabs(ti->domain_hi) > 9007199254740992.0)
			return snprintf(err, FZ_ERRMSG_SIZE, "%s: domain %.15g..%.15g: fuserun draws %s inputs exactly only within "
			                "-2^53..2^53", ti->name, ti->domain_lo, ti->domain_hi, ti->type), 1;
	}
	return 0;
}

int rt_case_init(rt_case *c, const fz_artifact_info *info, const fr_spec *spec, const long long *sizes,
                 unsigned long long seed, char *err)
{
	if (rt_case_inputs(c, info, spec, sizes, seed, err)) return 1;
	/* inputs the reference refuses are never launched on: its refusal is a
	   subscript out of range, which a kernel would read or write outside
	   its buffers (bench launched them) */
	return rt_case_reference(c, err) ? 1 : 0;
}

int rt_case_inputs(rt_case *c, const fz_artifact_info *info, const fr_spec *spec, const long long *sizes,
                   unsigned long long seed, char *err)
{
	memset(c, 0, sizeof *c);
	c->info = info, c->spec = spec;
	c->rng = 0x9e3779b97f4a7c15ull ^ (seed * 0x2545F4914F6CDD1Dull);
	if (!c->rng) c->rng = 1;
	if (info->nsizes > FZ_MAX_SIZES) return snprintf(err, FZ_ERRMSG_SIZE, "too many sizes"), 1;
	for (int i = 0; i < info->nsizes; i++) c->size[i] = sizes[i];
	if (spec->args_size != info->args_size) {
		snprintf(err, FZ_ERRMSG_SIZE, "%s: the generated header's args are %zu bytes, the manifest's %zu: header and artifact disagree",
		         info->fusion, spec->args_size, info->args_size);
		return 1;
	}
	if (rt_check_domains(info, err)) return 1;
	/* sizes at which an input the spec allows would subscript outside a
	   buffer: refused as the runtime refuses to launch at them */
	if (fz_check_fits(info, c->size, err)) return 1;
	if (info->ntensors <= 0 || info->ntensors > FZ_MAX_TENSORS) return snprintf(err, FZ_ERRMSG_SIZE, "no tensors"), 1;
	c->t = calloc((size_t)info->ntensors, sizeof *c->t);
	c->args = calloc(info->args_size / 8, 8);
	c->rargs = calloc(spec->ref_args_size / 8 + 1, 8);
	if (!c->t || !c->args || !c->rargs) return snprintf(err, FZ_ERRMSG_SIZE, "out of memory"), 1;
	size_t rk = 0;
	for (int i = 0; i < info->ntensors; i++) {
		rt_tensor *t = &c->t[i];
		const fz_tensor_info *ti = &info->tensors[i];
		int code = tcode(ti);
		t->ti = ti;
		if (fz_tensor_shape(info, i, c->size, NULL, &t->n, err)) return 1;
		if (t->n > (1ll << 40))
			return snprintf(err, FZ_ERRMSG_SIZE, "%s: %lld elements is more than fuserun takes (2^40)", ti->name, t->n), 1;
		t->bytes = (size_t)t->n * (size_t)ti->elem_bytes;
		/* a derived dimension may be 0 (C/2 at C = 1): harmless for a temp,
		   which the generated scratch function sizes, but a parameter needs
		   memory to hold */
		if (ti->role == FZ_TEMP) continue;
		if (t->n == 0)
			return snprintf(err, FZ_ERRMSG_SIZE, "%s has no elements at these sizes (a derived dimension is 0): choose larger sizes",
			                ti->name), 1;
		if (rk >= spec->ref_args_size / 8) break;
		t->host = malloc(t->bytes);
		if (is_float(code)) t->ref = calloc((size_t)t->n, sizeof(double));
		else if (code == T_I64) t->lref = calloc((size_t)t->n, 8);
		else t->iref = calloc((size_t)t->n, 4);
		if (!t->host || (!t->ref && !t->lref && !t->iref))
			return snprintf(err, FZ_ERRMSG_SIZE, "out of memory for %s (%lld elements)", ti->name, t->n), 1;
		t->rarg = (int)rk++;
		if (ti->role == FZ_INPUT && ti->rank == 0) {
			put(code, t->host, 0, scalar_value(c, ti));
			sync_input(c, i);
			continue;
		}
		c->bytes_moved += (double)t->bytes * (ti->role == FZ_INOUT ? 2 : 1); /* read and written */
		void *view = view_of(t);
		memcpy(&c->rargs[t->rarg], &view, 8);
		if (ti->role != FZ_INPUT && ti->role != FZ_INOUT) continue;
		for (long long k = 0; k < t->n; k++) put(code, t->host, k, input_value(c, t, code));
		sync_input(c, i);
	}
	for (int i = 0; i < info->nsizes && rk < spec->ref_args_size / 8 + 1; i++)
		memcpy(&c->args[info->ntensors + i], &c->size[i], 8), memcpy(&c->rargs[rk++], &c->size[i], 8);
	if (rk * 8 != spec->ref_args_size) {
		snprintf(err, FZ_ERRMSG_SIZE, "%s: the reference's args (%zu bytes) disagree with the manifest's tensors and sizes",
		         info->fusion, spec->ref_args_size);
		return 1;
	}
	for (int i = 0; i < info->ntensors; i++)
		if (view_of(&c->t[i]) && (c->t[i].ti->role == FZ_INPUT || c->t[i].ti->role == FZ_INOUT) && values_input(c, i, err)) return 1;
	return free_integers(c, err) ? 1 : 0;
}

int rt_case_reference(rt_case *c, char *err)
{
	int why, r = run_reference(c, 1, &why);
	if (r) {
		char what[200];
		reference_failure(r, why, what, sizeof what);
		snprintf(err, FZ_ERRMSG_SIZE, "the float64 reference of %s failed: %s", c->info->fusion, what);
	}
	return r;
}

void rt_case_free(rt_case *c)
{
	for (int i = 0; c->t && i < c->info->ntensors; i++) free(c->t[i].host), free(c->t[i].ref), free(c->t[i].iref), free(c->t[i].lref);
	free(c->t), free(c->args), free(c->rargs);
	memset(c, 0, sizeof *c);
}

double rt_tolerance(const fz_tensor_info *ti)
{
	int map = !strcmp(ti->by, "map");
	switch (tcode(ti)) {
	case T_F32: return map ? 1e-5 : 1e-4;
	case T_F64: return 1e-10; /* sums in another order differ by more than 1e-12 */
	case T_F16: return 1e-2;
	case T_BF16: return 2e-2;
	/* fp8 outputs: the reference saturated, not rounded; half an fp8
	   unit (2^-4, 2^-3 relative) and an f32 value's error across it */
	case T_F8E4M3: return 8e-2;
	case T_F8E5M2: return 0.15;
	default: return 0;
	}
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;
	return x < y ? -1 : x > y;
}

/* a compacted list: the same count and the same set of values */
static double compare_set(const rt_case *c, const rt_tensor *t, void *const *got, double *maxdiff)
{
	int code = tcode(t->ti);
	const rt_tensor *cnt = NULL;
	int ci = -1;
	for (int j = 0; j < c->info->ntensors; j++)
		if (c->t[j].ti->role == FZ_OUTPUT && !strcmp(c->t[j].ti->by, "compact") && c->t[j].ti->rank == 0)
			cnt = &c->t[j], ci = j;
	*maxdiff = INFINITY;
	if (!cnt || !got[ci]) return 1;
	long long gc = (long long)get(tcode(cnt->ti), got[ci], 0), rc = (long long)ref_at(cnt, 0);
	if (gc != rc || gc < 0 || gc > t->n) return 1;
	long long *a = malloc(sizeof(long long) * (size_t)(gc + 1)), *b = malloc(sizeof(long long) * (size_t)(gc + 1));
	if (a && b) {
		for (long long k = 0; k < gc; k++) a[k] = (long long)get(code, got[t - c->t], k), b[k] = (long long)ref_at(t, k);
		qsort(a, (size_t)gc, sizeof *a, cmp_ll), qsort(b, (size_t)gc, sizeof *b, cmp_ll);
		*maxdiff = 0;
		for (long long k = 0; k < gc; k++)
			if (a[k] != b[k]) *maxdiff = INFINITY;
	}
	free(a), free(b);
	return 1;
}

void rt_compare(const rt_case *c, int i, void *const *got, rt_result *r)
{
	const rt_tensor *t = &c->t[i];
	int code = tcode(t->ti);
	memset(r, 0, sizeof *r);
	r->name = t->ti->name, r->type = t->ti->type, r->at = -1;
	r->tolerance = rt_tolerance(t->ti);
	/* through tf32 or fp8 products (the manifest's inexact line; dsl/MATH.md) */
	const char *inexact = c->info ? fz_tensor_inexact(c->info, (int)(t->ti - c->info->tensors)) : NULL;
	const double itol = inexact && !strcmp(inexact, "fp8") ? 1e-2 : 5e-3;
	if (inexact && (code == T_F32 || code == T_F64) && r->tolerance < itol) r->tolerance = itol;
	double maxref = 0, maxdiff = 0;
	if (!strcmp(t->ti->by, "compact") && t->ti->rank == 1) {
		r->as_set = 1;
		maxref = compare_set(c, t, got, &maxdiff);
	} else {
		for (long long k = 0; k < t->n; k++) {
			double want = ref_at(t, k), g = get(code, got[i], k), d;
			/* a NaN in the reference fails too: it would match a poisoned,
			   never-written element, and says the inputs are outside the
			   function's domain */
			if (isnan(want)) d = INFINITY, r->ref_nan = 1;
			else if (g == want) d = 0; /* equal infinities too */
			else if (isnan(d = fabs(g - want))) d = INFINITY;
			if (d > maxdiff) maxdiff = d, r->at = k, r->got = g, r->want = want;
			if (isfinite(want) && fabs(want) > maxref) maxref = fabs(want); /* an infinity is no scale */
		}
	}
	/* normwise, with a floor: a result that is (nearly) zero is compared absolutely */
	r->error = maxdiff == 0 ? 0 : maxdiff / (maxref > 1e-3 ? maxref : 1e-3);
	r->score = r->tolerance > 0 ? r->error / r->tolerance : (r->error > 0 ? INFINITY : 0);
}
