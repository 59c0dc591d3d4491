/* A fake libcuda for the runtime's CPU tests, loaded through
 * FUSERUN_LIBCUDA. "Device memory" is host memory; modules are the .entry
 * names (and parameter sizes) of the PTX; launches are recorded, not run.
 * Contexts are checked: calls that need one fail without a current one.
 * Controlled by the environment, read at each call:
 *   FAKECUDA_DEVICES  number of devices (default 1; 0: cuInit fails NO_DEVICE)
 *   FAKECUDA_STUB     cuInit fails as the toolkit's stub library does
 *   FAKECUDA_CC       compute capability as 90, 86, 120 (default 90)
 *   FAKECUDA_FAIL     the name of a call that fails
 *   FAKECUDA_FAIL_AT  the n-th call (counted since fakecuda_reset) that fails
 *   FAKECUDA_FAIL_CODE  the CUresult that failing call returns (default: one
 *                     typical of the call), a code the fake cannot name too
 *   FAKECUDA_MEM_MB   device memory (default 256)
 *   FAKECUDA_COUNT    call names, comma-separated: at exit, "fakecuda: NAME
 *                     called N times" on stderr for each (a test that a
 *                     loop does not synchronise with the host each step)
 * and queried by the tests through fakecuda_* functions. It also links into
 * tests/gpu/validate.c (cuCtxSetCurrent, cuModuleLoadData), so that the GPU
 * validator's comparison is tested on the CPU: nothing runs, so every
 * output keeps its NaN poison. */
#include <cuda.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define API __attribute__((visibility("default")))

typedef struct fctx { int dev, primary; } fctx;
typedef struct fentry { char name[128]; size_t param_bytes; } fentry;
typedef struct fmod { fentry e[64]; int n; } fmod;
typedef struct falloc { char *p; size_t n; struct falloc *next; } falloc;
typedef struct fevent { long stamp; } fevent;

static fctx primary[8];
static int primary_refs[8];
static fctx app_ctx;
static _Thread_local fctx *stack[16];
static _Thread_local int depth;
static long pushes; /* cuCtxPushCurrent_v2 calls that pushed */
static falloc *allocs;
static int nmods, nstreams, nevents, nallocs;
static size_t mem_used;
static long calls, injected, launches, stamps;
static char last_kernel[128];
/* the launches and memsets since fakecuda_log_start, one line each (the
   generic call and the header's launchers must make the same) */
static char log_line[1024][256];
static int log_n, log_on;
static void log_add(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void log_add(const char *fmt, ...)
{
	if (!log_on || log_n == 1024) return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(log_line[log_n++], sizeof log_line[0], fmt, ap);
	va_end(ap);
}
static unsigned char last_args[4096];
static size_t last_args_n;

static int env_int(const char *name, int dflt)
{
	const char *s = getenv(name);
	return s && *s ? atoi(s) : dflt;
}

/* FAKECUDA_COUNT's calls: names and counts, printed at exit */
static struct { char name[64]; long n; } counted[16];
static int ncounted = -1;
static void count_call(const char *name)
{
	if (ncounted < 0) {
		ncounted = 0;
		const char *s = getenv("FAKECUDA_COUNT");
		while (s && *s && ncounted < 16) {
			size_t n = strcspn(s, ",");
			if (n && n < sizeof counted[0].name) memcpy(counted[ncounted].name, s, n), counted[ncounted++].name[n] = 0;
			s += n + (s[n] == ',');
		}
	}
	for (int i = 0; i < ncounted; i++)
		if (!strcmp(counted[i].name, name)) counted[i].n++;
}
__attribute__((destructor)) static void print_counts(void)
{
	for (int i = 0; i < ncounted; i++) fprintf(stderr, "fakecuda: %s called %ld times\n", counted[i].name, counted[i].n);
}

/* counts a call; the error it is told to fail with, or success */
static CUresult fault(const char *name, CUresult code)
{
	calls++;
	count_call(name);
	const char *f = getenv("FAKECUDA_FAIL");
	if ((f && !strcmp(f, name)) || calls == env_int("FAKECUDA_FAIL_AT", -1)) {
		injected++;
		int c = env_int("FAKECUDA_FAIL_CODE", 0);
		return c ? (CUresult)c : code;
	}
	return CUDA_SUCCESS;
}
#define FAULT(code) do { CUresult f_ = fault(__func__, code); if (f_) return f_; } while (0)
#define NEED_CTX() do { if (!depth || !stack[depth - 1]) return CUDA_ERROR_INVALID_CONTEXT; } while (0)

static int cc(void) { return env_int("FAKECUDA_CC", 90); }

/* ---- the tests' side ---- */
API int fakecuda_live(void)
{
	int refs = 0;
	for (int i = 0; i < 8; i++) refs += primary_refs[i];
	return nallocs + nmods + nstreams + nevents + refs + depth;
}
API const char *fakecuda_describe(void)
{
	static char buf[256];
	int refs = 0;
	for (int i = 0; i < 8; i++) refs += primary_refs[i];
	snprintf(buf, sizeof buf, "%d allocations, %d modules, %d streams, %d events, %d primary retains, %d pushed", nallocs,
	         nmods, nstreams, nevents, refs, depth);
	return buf;
}
API void fakecuda_reset(void) { calls = injected = 0; }
API long fakecuda_injected(void) { return injected; }
API long fakecuda_launches(void) { return launches; }
API void fakecuda_log_start(void) { log_n = 0, log_on = 1; }
API int fakecuda_log_count(void) { return log_n; }
API const char *fakecuda_log_line(int i) { return i >= 0 && i < log_n ? log_line[i] : ""; }
API const char *fakecuda_last_kernel(void) { return last_kernel; }
API const void *fakecuda_last_args(size_t *n) { *n = last_args_n; return last_args; }
/* makes an "application" context current on this thread (or none) */
API void fakecuda_app_context(int on)
{
	depth = 0;
	if (on) stack[depth++] = &app_ctx;
}

/* ---- the Driver API ---- */
API CUresult cuInit(unsigned int flags)
{
	(void)flags;
	if (env_int("FAKECUDA_STUB", 0)) return CUDA_ERROR_STUB_LIBRARY;
	if (env_int("FAKECUDA_DEVICES", 1) == 0) return CUDA_ERROR_NO_DEVICE;
	return fault(__func__, CUDA_ERROR_UNKNOWN);
}

API CUresult cuDriverGetVersion(int *v) { *v = 13000; return CUDA_SUCCESS; }

static const struct { CUresult r; const char *name, *text; } errors[] = {
	{CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
	{CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
	{CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
	{CUDA_ERROR_STUB_LIBRARY, "CUDA_ERROR_STUB_LIBRARY", "CUDA driver is a stub library"},
	{CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
	{CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
	{CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
	{CUDA_ERROR_INVALID_PTX, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
	{CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
	{CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
	{CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", "too many resources requested for launch"},
	{CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN", "unknown error"},
};
static int err_index(CUresult r)
{
	for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
		if (errors[i].r == r) return (int)i;
	return -1;
}
API CUresult cuGetErrorName(CUresult r, const char **s)
{
	int i = err_index(r);
	*s = i < 0 ? NULL : errors[i].name;
	return i < 0 ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}
API CUresult cuGetErrorString(CUresult r, const char **s)
{
	int i = err_index(r);
	*s = i < 0 ? NULL : errors[i].text;
	return i < 0 ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

API CUresult cuDeviceGetCount(int *n)
{
	FAULT(CUDA_ERROR_UNKNOWN);
	*n = env_int("FAKECUDA_DEVICES", 1);
	return CUDA_SUCCESS;
}
API CUresult cuDeviceGet(CUdevice *d, int ordinal)
{
	FAULT(CUDA_ERROR_INVALID_DEVICE);
	if (ordinal < 0 || ordinal >= env_int("FAKECUDA_DEVICES", 1) || ordinal >= 8) return CUDA_ERROR_INVALID_DEVICE;
	*d = ordinal;
	return CUDA_SUCCESS;
}
API CUresult cuDeviceGetName(char *name, int len, CUdevice d)
{
	snprintf(name, (size_t)len, "Fake GPU %d (cc %d.%d)", (int)d, cc() / 10, cc() % 10);
	return CUDA_SUCCESS;
}
API CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d)
{
	(void)d;
	FAULT(CUDA_ERROR_INVALID_VALUE);
	if (a == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) *v = cc() / 10;
	else if (a == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR) *v = cc() % 10;
	else if (a == CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT) *v = 132;
	else if (a == CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN) *v = 227 * 1024;
	else return CUDA_ERROR_INVALID_VALUE;
	return CUDA_SUCCESS;
}
API CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice d)
{
	(void)d;
	*bytes = (size_t)80 << 30;
	return CUDA_SUCCESS;
}
API CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d)
{
	FAULT(CUDA_ERROR_OUT_OF_MEMORY);
	primary[d].dev = d, primary[d].primary = 1, primary_refs[d]++;
	*c = (CUcontext)(void *)&primary[d];
	return CUDA_SUCCESS;
}
API CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d)
{
	if (primary_refs[d] <= 0) return CUDA_ERROR_INVALID_CONTEXT;
	primary_refs[d]--;
	return CUDA_SUCCESS;
}
API CUresult cuCtxGetCurrent(CUcontext *c)
{
	FAULT(CUDA_ERROR_UNKNOWN);
	*c = depth ? (CUcontext)(void *)stack[depth - 1] : NULL;
	return CUDA_SUCCESS;
}
API CUresult cuCtxGetDevice(CUdevice *d)
{
	FAULT(CUDA_ERROR_UNKNOWN);
	NEED_CTX();
	*d = stack[depth - 1]->dev;
	return CUDA_SUCCESS;
}
API CUresult cuCtxPushCurrent_v2(CUcontext c)
{
	FAULT(CUDA_ERROR_INVALID_CONTEXT);
	fctx *x = (fctx *)(void *)c;
	if (!x || depth == 16 || (x->primary && primary_refs[x->dev] <= 0)) return CUDA_ERROR_INVALID_CONTEXT;
	stack[depth++] = x;
	pushes++;
	return CUDA_SUCCESS;
}
API long fakecuda_pushes(void) { return pushes; } /* successful pushes, ever */
API CUresult cuCtxPopCurrent_v2(CUcontext *c) /* never injected: the runtime cannot act on it */
{
	if (!depth) return CUDA_ERROR_INVALID_CONTEXT;
	*c = (CUcontext)(void *)stack[--depth];
	return CUDA_SUCCESS;
}
API CUresult cuCtxSetCurrent(CUcontext c) /* replaces the top of the stack; NULL empties it */
{
	FAULT(CUDA_ERROR_INVALID_CONTEXT);
	fctx *x = (fctx *)(void *)c;
	if (x && x->primary && primary_refs[x->dev] <= 0) return CUDA_ERROR_INVALID_CONTEXT;
	if (!x) depth = 0;
	else if (depth) stack[depth - 1] = x;
	else stack[depth++] = x;
	return CUDA_SUCCESS;
}
API CUresult cuCtxSynchronize(void)
{
	FAULT(CUDA_ERROR_UNKNOWN);
	NEED_CTX();
	return CUDA_SUCCESS;
}

static int live_range(CUdeviceptr p, size_t n)
{
	for (falloc *a = allocs; a; a = a->next)
		if ((char *)(uintptr_t)p >= a->p && (char *)(uintptr_t)p + n <= a->p + a->n) return 1;
	return 0;
}

API CUresult cuModuleLoadDataEx(CUmodule *m, const void *image, unsigned int n, CUjit_option *opt, void **val)
{
	char *log = NULL;
	size_t logn = 0;
	for (unsigned i = 0; i < n; i++) {
		if (opt[i] == CU_JIT_ERROR_LOG_BUFFER) log = val[i];
		if (opt[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES) logn = (size_t)(uintptr_t)val[i];
	}
	CUresult f = fault(__func__, CUDA_ERROR_INVALID_PTX);
	if (f) {
		if (log && logn) snprintf(log, logn, "ptxas fatal   : fake failure\n");
		return f;
	}
	NEED_CTX();
	const char *ptx = image, *t = strstr(ptx, "\n.target sm_");
	int sm = t ? atoi(t + 12) : 0;
	if (!t || sm > cc()) {
		if (log && logn) snprintf(log, logn, "ptxas fatal   : SM version specified by .target is higher than default SM version\n");
		return CUDA_ERROR_INVALID_PTX;
	}
	fmod *mod = calloc(1, sizeof *mod);
	if (!mod) return CUDA_ERROR_OUT_OF_MEMORY;
	for (const char *e = strstr(ptx, ".entry "); e && mod->n < 64; e = strstr(e + 1, ".entry ")) {
		fentry *x = &mod->e[mod->n++];
		sscanf(e + 7, "%127[A-Za-z0-9_$]", x->name);
		const char *p = strstr(e, "_param_0[");
		x->param_bytes = p ? (size_t)atol(p + 9) : 0;
	}
	nmods++;
	*m = (CUmodule)(void *)mod;
	return CUDA_SUCCESS;
}
API CUresult cuModuleLoadData(CUmodule *m, const void *image) { return cuModuleLoadDataEx(m, image, 0, NULL, NULL); }
API CUresult cuModuleUnload(CUmodule m)
{
	if (!m) return CUDA_ERROR_INVALID_HANDLE;
	free(m), nmods--;
	return CUDA_SUCCESS;
}
API CUresult cuModuleGetFunction(CUfunction *fn, CUmodule m, const char *name)
{
	FAULT(CUDA_ERROR_NOT_FOUND);
	fmod *mod = (fmod *)(void *)m;
	for (int i = 0; i < mod->n; i++)
		if (!strcmp(mod->e[i].name, name)) {
			*fn = (CUfunction)(void *)&mod->e[i];
			return CUDA_SUCCESS;
		}
	return CUDA_ERROR_NOT_FOUND;
}
API CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
                            unsigned int by, unsigned int bz, unsigned int shared, CUstream s, void **params, void **extra)
{
	(void)s, (void)extra, (void)shared;
	FAULT(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
	NEED_CTX();
	fentry *e = (fentry *)(void *)f;
	if (!e || !gx || !gy || !gz || !bx || !by || !bz || bx * by * bz > 1024 || !params) return CUDA_ERROR_INVALID_VALUE;
	snprintf(last_kernel, sizeof last_kernel, "%s", e->name);
	last_args_n = e->param_bytes < sizeof last_args ? e->param_bytes : sizeof last_args;
	memcpy(last_args, params[0], last_args_n);
	launches++;
	uint64_t h = 1469598103934665603ull; /* FNV-1a of the parameter's bytes */
	for (size_t i = 0; i < e->param_bytes; i++) h = (h ^ ((const unsigned char *)params[0])[i]) * 1099511628211ull;
	log_add("launch %s grid=%u,%u,%u block=%u,%u,%u smem=%u param=%zu bytes fnv=%016llx", e->name, gx, gy, gz, bx, by, bz,
	        shared, e->param_bytes, (unsigned long long)h);
	return CUDA_SUCCESS;
}

/* cooperative launches: FAKECUDA_OCCUPANCY blocks an SM (default 2); a grid
   beyond that times the SM count fails as the driver does */
static long coop_launches;
API long fakecuda_coop_launches(void) { return coop_launches; }
API CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *blocks, CUfunction f, int block, size_t smem)
{
	(void)smem;
	FAULT(CUDA_ERROR_INVALID_VALUE);
	NEED_CTX();
	if (!blocks || !f || block < 1 || block > 1024) return CUDA_ERROR_INVALID_VALUE;
	*blocks = env_int("FAKECUDA_OCCUPANCY", 2);
	return CUDA_SUCCESS;
}
API CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
                                       unsigned int by, unsigned int bz, unsigned int shared, CUstream s, void **params)
{
	FAULT(CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE);
	int sms = 0;
	cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0);
	if ((long long)gx * gy * gz > (long long)env_int("FAKECUDA_OCCUPANCY", 2) * sms) return CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE;
	CUresult r = cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shared, s, params, NULL);
	if (r == CUDA_SUCCESS) coop_launches++;
	return r;
}
/* graphs: captured work is not recorded; a launch counts */
static long graph_launches;
static int graph_dummy;
API long fakecuda_graph_launches(void) { return graph_launches; }
API CUresult cuStreamBeginCapture_v2(CUstream st, CUstreamCaptureMode mode)
{
	(void)st, (void)mode;
	FAULT(CUDA_ERROR_INVALID_VALUE);
	NEED_CTX();
	return CUDA_SUCCESS;
}
API CUresult cuStreamEndCapture(CUstream st, CUgraph *g)
{
	(void)st;
	FAULT(CUDA_ERROR_INVALID_VALUE);
	*g = (CUgraph)(void *)&graph_dummy;
	return CUDA_SUCCESS;
}
API CUresult cuGraphInstantiateWithFlags(CUgraphExec *e, CUgraph g, unsigned long long flags)
{
	(void)flags;
	FAULT(CUDA_ERROR_INVALID_VALUE);
	if (!g) return CUDA_ERROR_INVALID_VALUE;
	*e = (CUgraphExec)(void *)&graph_dummy;
	return CUDA_SUCCESS;
}
API CUresult cuGraphLaunch(CUgraphExec e, CUstream st)
{
	(void)st;
	FAULT(CUDA_ERROR_INVALID_VALUE);
	NEED_CTX();
	if (!e) return CUDA_ERROR_INVALID_VALUE;
	graph_launches++;
	return CUDA_SUCCESS;
}
API CUresult cuGraphExecDestroy(CUgraphExec e) { return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE; }
API CUresult cuGraphDestroy(CUgraph g) { return g ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE; }

API CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n)
{
	FAULT(CUDA_ERROR_OUT_OF_MEMORY);
	NEED_CTX();
	if (!n) return CUDA_ERROR_INVALID_VALUE;
	if (n > ((size_t)env_int("FAKECUDA_MEM_MB", 256) << 20) - mem_used) return CUDA_ERROR_OUT_OF_MEMORY;
	falloc *a = malloc(sizeof *a);
	char *mem = malloc(n);
	if (!a || !mem) {
		free(a), free(mem);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	a->p = mem, a->n = n, a->next = allocs, allocs = a;
	nallocs++, mem_used += n;
	*p = (CUdeviceptr)(uintptr_t)mem;
	return CUDA_SUCCESS;
}
API CUresult cuMemFree_v2(CUdeviceptr p)
{
	NEED_CTX();
	for (falloc **a = &allocs; *a; a = &(*a)->next)
		if ((*a)->p == (char *)(uintptr_t)p) {
			falloc *x = *a;
			*a = x->next;
			mem_used -= x->n;
			free(x->p), free(x), nallocs--;
			return CUDA_SUCCESS;
		}
	return CUDA_ERROR_INVALID_VALUE;
}
#define CHECK_RANGE(p, n) do { if (!live_range(p, n)) return CUDA_ERROR_INVALID_VALUE; } while (0)
API CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *s, size_t n)
{
	FAULT(CUDA_ERROR_INVALID_VALUE);
	NEED_CTX();
	CHECK_RANGE(d, n);
	if (!s) return CUDA_ERROR_INVALID_VALUE; /* (a real driver may fault instead) */
	memcpy((void *)(uintptr_t)d, s, n);
	return CUDA_SUCCESS;
}
API CUresult cuMemcpyDtoH_v2(void *d, CUdeviceptr s, size_t n)
{
	FAULT(CUDA_ERROR_INVALID_VALUE);
	NEED_CTX();
	CHECK_RANGE(s, n);
	if (!d) return CUDA_ERROR_INVALID_VALUE;
	memcpy(d, (void *)(uintptr_t)s, n);
	return CUDA_SUCCESS;
}
API CUresult cuMemcpyDtoD_v2(CUdeviceptr d, CUdeviceptr s, size_t n)
{
	FAULT(CUDA_ERROR_INVALID_VALUE);
	NEED_CTX();
	CHECK_RANGE(d, n);
	CHECK_RANGE(s, n);
	memmove((void *)(uintptr_t)d, (void *)(uintptr_t)s, n);
	return CUDA_SUCCESS;
}
API CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void *s, size_t n, CUstream st) { (void)st; return cuMemcpyHtoD_v2(d, s, n); }
API CUresult cuMemcpyDtoHAsync_v2(void *d, CUdeviceptr s, size_t n, CUstream st) { (void)st; return cuMemcpyDtoH_v2(d, s, n); }
API CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st) { (void)st; return cuMemcpyDtoD_v2(d, s, n); }
API CUresult cuMemsetD8_v2(CUdeviceptr d, unsigned char v, size_t n)
{
	FAULT(CUDA_ERROR_INVALID_VALUE);
	NEED_CTX();
	CHECK_RANGE(d, n);
	memset((void *)(uintptr_t)d, v, n);
	return CUDA_SUCCESS;
}
API CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, CUstream st)
{
	(void)st;
	log_add("memset %llx %zu to %u", (unsigned long long)d, n, v);
	return cuMemsetD8_v2(d, v, n);
}

API CUresult cuMemsetD32Async(CUdeviceptr d, unsigned int v, size_t n, CUstream st)
{
	(void)st;
	FAULT(CUDA_ERROR_INVALID_VALUE);
	NEED_CTX();
	if (n > SIZE_MAX / 4 || (d & 3)) return CUDA_ERROR_INVALID_VALUE;
	CHECK_RANGE(d, n * 4);
	log_add("memset32 %llx %zu words to %u", (unsigned long long)d, n, v);
	for (size_t i = 0; i < n; i++) memcpy((char *)(uintptr_t)d + 4 * i, &v, 4);
	return CUDA_SUCCESS;
}

API CUresult cuStreamCreate(CUstream *s, unsigned int flags)
{
	(void)flags;
	FAULT(CUDA_ERROR_OUT_OF_MEMORY);
	NEED_CTX();
	*s = malloc(16);
	if (!*s) return CUDA_ERROR_OUT_OF_MEMORY;
	nstreams++;
	return CUDA_SUCCESS;
}
/* the priorities of an H100: 0 (least) to -5 (greatest) */
API CUresult cuCtxGetStreamPriorityRange(int *least, int *greatest)
{
	FAULT(CUDA_ERROR_INVALID_CONTEXT);
	NEED_CTX();
	*least = 0, *greatest = -5;
	return CUDA_SUCCESS;
}
static int last_priority = 1; /* none yet */
static long urgent_streams; /* created at the greatest priority, ever */
API int fakecuda_last_priority(void) { return last_priority; }
API long fakecuda_urgent_streams(void) { return urgent_streams; }
API CUresult cuStreamCreateWithPriority(CUstream *s, unsigned int flags, int priority)
{
	FAULT(CUDA_ERROR_OUT_OF_MEMORY);
	if (priority < -5 || priority > 0 || flags > 1) return CUDA_ERROR_INVALID_VALUE;
	CUresult r = cuStreamCreate(s, flags);
	if (!r) last_priority = priority, urgent_streams += priority == -5;
	return r;
}
API CUresult cuStreamDestroy_v2(CUstream s)
{
	NEED_CTX();
	free(s), nstreams--;
	return CUDA_SUCCESS;
}
/* everything ran when it was queued: a stream is always done */
API CUresult cuStreamQuery(CUstream s)
{
	(void)s;
	FAULT(CUDA_ERROR_UNKNOWN);
	NEED_CTX();
	return CUDA_SUCCESS;
}
API CUresult cuStreamSynchronize(CUstream s)
{
	(void)s;
	FAULT(CUDA_ERROR_UNKNOWN);
	NEED_CTX();
	return CUDA_SUCCESS;
}
API CUresult cuEventCreate(CUevent *e, unsigned int flags)
{
	(void)flags;
	FAULT(CUDA_ERROR_OUT_OF_MEMORY);
	NEED_CTX();
	fevent *x = calloc(1, sizeof *x);
	if (!x) return CUDA_ERROR_OUT_OF_MEMORY;
	nevents++;
	*e = (CUevent)(void *)x;
	return CUDA_SUCCESS;
}
API CUresult cuEventDestroy_v2(CUevent e)
{
	NEED_CTX();
	free(e), nevents--;
	return CUDA_SUCCESS;
}
API CUresult cuEventRecord(CUevent e, CUstream s)
{
	(void)s;
	FAULT(CUDA_ERROR_INVALID_HANDLE);
	NEED_CTX();
	((fevent *)(void *)e)->stamp = ++stamps;
	return CUDA_SUCCESS;
}
/* everything ran when it was queued: the wait is over at once */
API CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned int flags)
{
	(void)s;
	FAULT(CUDA_ERROR_INVALID_HANDLE);
	NEED_CTX();
	return e && !flags ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
API CUresult cuEventSynchronize(CUevent e)
{
	(void)e;
	FAULT(CUDA_ERROR_UNKNOWN);
	NEED_CTX();
	return CUDA_SUCCESS;
}
/* everything ran when it was queued: an event is always reached */
API CUresult cuEventQuery(CUevent e)
{
	FAULT(CUDA_ERROR_UNKNOWN);
	NEED_CTX();
	return e && ((fevent *)(void *)e)->stamp ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}
API CUresult cuMemHostAlloc(void **p, size_t n, unsigned int flags)
{
	FAULT(CUDA_ERROR_OUT_OF_MEMORY);
	NEED_CTX();
	*p = flags ? NULL : calloc(1, n ? n : 1);
	return *p ? CUDA_SUCCESS : flags ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_OUT_OF_MEMORY;
}
API CUresult cuMemFreeHost(void *p)
{
	NEED_CTX();
	free(p);
	return CUDA_SUCCESS;
}
/* 1 microsecond per event recorded in between */
API CUresult cuEventElapsedTime_v2(float *ms, CUevent a, CUevent b)
{
	FAULT(CUDA_ERROR_INVALID_HANDLE);
	NEED_CTX();
	fevent *x = (fevent *)(void *)a, *y = (fevent *)(void *)b;
	if (!x->stamp || !y->stamp) return CUDA_ERROR_INVALID_HANDLE;
	*ms = (float)(y->stamp - x->stamp) * 1e-3f;
	return CUDA_SUCCESS;
}

API CUresult cuFuncSetAttribute(CUfunction f, CUfunction_attribute a, int v)
{
	FAULT(CUDA_ERROR_INVALID_VALUE);
	(void)a;
	return f && v >= 0 && v <= 227 * 1024 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
API CUresult cuTensorMapEncodeTiled(CUtensorMap *map, CUtensorMapDataType type, cuuint32_t rank, void *addr, const cuuint64_t *dims,
                                    const cuuint64_t *strides, const cuuint32_t *box, const cuuint32_t *es, CUtensorMapInterleave il,
                                    CUtensorMapSwizzle sw, CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill fill)
{
	FAULT(CUDA_ERROR_INVALID_VALUE);
	(void)il, (void)sw, (void)l2, (void)fill, (void)es;
	if (!map || !addr || rank < 1 || rank > 5) return CUDA_ERROR_INVALID_VALUE;
	memset(map, 0, sizeof *map);
	/* what the tests check of a tile kernel's maps (test_call.c): element type, shape, box */
	log_add("tensormap type=%d dims=%llu,%llu stride=%llu box=%u,%u", (int)type, (unsigned long long)dims[0],
	        (unsigned long long)(rank > 1 ? dims[1] : 1), (unsigned long long)(rank > 1 ? strides[0] : 0), box[0], rank > 1 ? box[1] : 1);
	return CUDA_SUCCESS;
}
