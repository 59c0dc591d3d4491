/* Devices (a primary context retained, or the application's adopted),
 * buffers, streams and events. Every call pushes the handle's context and
 * pops it again, leaving the thread's current context as it was. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static int cu_ok(char *err, const char *call, CUresult r)
{
	return r == CUDA_SUCCESS ? FZ_OK : fr_cuda_error(err, call, r);
}
#define CU(err, fn, ...) cu_ok(err, #fn, fr_cu->fn(__VA_ARGS__))

/* Where the handle's context is already the thread's current one (an
 * application on the primary context: torch's), enter pushes nothing and
 * leave pops nothing: a push and a pop were a part of each launch's host
 * time (issue 24). Bit i of skipped: the enter at nesting depth i pushed
 * nothing; past 64 deep every enter pushes. */
static _Thread_local unsigned long long skipped;
static _Thread_local int entered;

int fr_enter(fz_device *d, char *err)
{
	CUcontext cur = NULL;
	int rc = entered < 64 ? CU(err, cuCtxGetCurrent, &cur) : FZ_OK;
	const int skip = !rc && entered < 64 && cur == d->ctx;
	if (!rc && !skip) rc = CU(err, cuCtxPushCurrent_v2, d->ctx);
	if (rc) return rc;
	if (entered < 64) skipped = skip ? skipped | 1ULL << entered : skipped & ~(1ULL << entered);
	entered++;
	return FZ_OK;
}

void fr_leave(fz_device *d)
{
	CUcontext c;
	(void)d;
	if (entered > 0) entered--;
	if (entered < 64 && (skipped >> entered & 1)) return;
	fr_cu->cuCtxPopCurrent_v2(&c);
}

int fz_device_count(int *count, char *err)
{
	if (!count) return fr_err(err, FZ_ERR_INVALID, "fz_device_count: count is NULL");
	*count = 0;
	int rc = fr_cuda_get(NULL, err);
	if (rc == FZ_ERR_NO_DEVICE) { /* cuInit found none */
		if (err) err[0] = 0;
		return FZ_OK;
	}
	return rc ? rc : CU(err, cuDeviceGetCount, count);
}

/* compute capability and multiprocessors; refuses devices before 8.0 */
static int describe(fz_device *d, char *err)
{
	int rc = CU(err, cuDeviceGetAttribute, &d->cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d->dev);
	if (!rc) rc = CU(err, cuDeviceGetAttribute, &d->cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d->dev);
	if (!rc) rc = CU(err, cuDeviceGetAttribute, &d->sm_count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, d->dev);
	if (!rc && d->cc_major < 8) {
		char name[128] = "?";
		if (fr_cu->cuDeviceGetName(name, sizeof name, d->dev) != CUDA_SUCCESS) strcpy(name, "?");
		rc = fr_err(err, FZ_ERR_DEVICE_TOO_OLD,
		            "device %d (%s) has compute capability %d.%d; fusec artifacts need 8.0 or newer (targets sm_80, sm_90)",
		            d->ordinal, name, d->cc_major, d->cc_minor);
	}
	return rc;
}

int fz_device_open(int ordinal, fz_device **out, char *err)
{
	if (!out) return fr_err(err, FZ_ERR_INVALID, "fz_device_open: out is NULL");
	*out = NULL;
	int rc = fr_cuda_get(NULL, err), count = 0;
	if (!rc) rc = CU(err, cuDeviceGetCount, &count);
	if (!rc && (ordinal < 0 || ordinal >= count))
		rc = fr_err(err, FZ_ERR_NO_DEVICE, "no CUDA device %d: the driver sees %d device%s", ordinal, count, count == 1 ? "" : "s");
	if (rc) return rc;
	fz_device *d = calloc(1, sizeof *d);
	if (!d) return fr_err(err, FZ_ERR_NO_MEMORY, "out of memory");
	d->ordinal = ordinal;
	rc = CU(err, cuDeviceGet, &d->dev, ordinal);
	if (!rc) rc = describe(d, err);
	if (!rc) rc = CU(err, cuDevicePrimaryCtxRetain, &d->ctx, d->dev);
	if (rc) {
		free(d);
		return rc;
	}
	*out = d;
	return FZ_OK;
}

int fz_device_adopt(fz_device **out, char *err)
{
	if (!out) return fr_err(err, FZ_ERR_INVALID, "fz_device_adopt: out is NULL");
	*out = NULL;
	CUcontext ctx = NULL;
	int rc = fr_cuda_get(NULL, err);
	if (!rc) rc = CU(err, cuCtxGetCurrent, &ctx);
	if (!rc && !ctx)
		rc = fr_err(err, FZ_ERR_NO_CONTEXT, "fz_device_adopt: the calling thread has no current CUDA context "
		            "(make one current first, or use fz_device_open)");
	if (rc) return rc;
	fz_device *d = calloc(1, sizeof *d);
	if (!d) return fr_err(err, FZ_ERR_NO_MEMORY, "out of memory");
	d->ctx = ctx, d->adopted = 1, d->ordinal = -1;
	int count = 0;
	rc = CU(err, cuCtxGetDevice, &d->dev);
	if (!rc) rc = CU(err, cuDeviceGetCount, &count);
	for (int i = 0; !rc && i < count && d->ordinal < 0; i++) {
		CUdevice x;
		if (fr_cu->cuDeviceGet(&x, i) == CUDA_SUCCESS && x == d->dev) d->ordinal = i;
	}
	if (!rc) rc = describe(d, err);
	if (rc) {
		free(d);
		return rc;
	}
	*out = d;
	return FZ_OK;
}

void fz_device_close(fz_device *d)
{
	if (!d) return;
	if (!d->adopted) fr_cu->cuDevicePrimaryCtxRelease_v2(d->dev);
	free(d);
}

const char *fz_device_error(const fz_device *d)
{
	return d ? d->err : "no device handle";
}

int fz_device_query(const fz_device *d, fz_device_props *p)
{
	if (!d || !p) return FZ_ERR_INVALID;
	char *err = ((fz_device *)d)->err;
	memset(p, 0, sizeof *p);
	p->ordinal = d->ordinal, p->cc_major = d->cc_major, p->cc_minor = d->cc_minor, p->sm_count = d->sm_count;
	size_t mem = 0;
	int rc = CU(err, cuDeviceGetName, p->name, (int)sizeof p->name, d->dev);
	if (!rc) rc = CU(err, cuDeviceTotalMem_v2, &mem, d->dev);
	if (!rc) rc = CU(err, cuDriverGetVersion, &p->driver_version);
	p->total_memory = mem;
	return rc;
}

/* one driver call inside the device's context */
#define IN_CTX(d, call) do { \
	if (!(d)) return FZ_ERR_INVALID; \
	int rc_ = fr_enter((d), (d)->err); \
	if (rc_) return rc_; \
	rc_ = (call); \
	fr_leave(d); \
	return rc_; \
} while (0)

int fz_device_sync(fz_device *d)
{
	IN_CTX(d, CU(d->err, cuCtxSynchronize));
}

int fz_alloc(fz_device *d, size_t bytes, fz_ptr *out)
{
	if (!d || !out) return FZ_ERR_INVALID;
	*out = 0;
	if (!bytes) return fr_err(d->err, FZ_ERR_INVALID, "fz_alloc: 0 bytes");
	CUdeviceptr p = 0;
	int rc = fr_enter(d, d->err);
	if (rc) return rc;
	rc = CU(d->err, cuMemAlloc_v2, &p, bytes);
	fr_leave(d);
	if (!rc) *out = (fz_ptr)p;
	return rc;
}

int fz_free(fz_device *d, fz_ptr ptr)
{
	if (!ptr) return d ? FZ_OK : FZ_ERR_INVALID;
	IN_CTX(d, CU(d->err, cuMemFree_v2, (CUdeviceptr)ptr));
}

#define ST(s) ((CUstream)(s))

/* The legacy stream's copies and memsets may return before they finish;
   "synchronous" (stream NULL) here means finished, for any stream after. */
static int finish(fz_device *d, int rc)
{
	return rc ? rc : CU(d->err, cuStreamSynchronize, NULL);
}

/* A NULL host buffer is the caller's mistake, refused here: the driver
   would read or write through it (or fail, depending on its version). */
static int null_host(fz_device *d, const char *call)
{
	return fr_err(d->err, FZ_ERR_INVALID, "%s: the host pointer is NULL", call);
}

int fz_copy_to_device(fz_device *d, fz_ptr dst, const void *src, size_t n, fz_stream *s)
{
	if (d && !src) return null_host(d, "fz_copy_to_device");
	IN_CTX(d, s ? CU(d->err, cuMemcpyHtoDAsync_v2, dst, src, n, ST(s)) : finish(d, CU(d->err, cuMemcpyHtoD_v2, dst, src, n)));
}

int fz_copy_to_host(fz_device *d, void *dst, fz_ptr src, size_t n, fz_stream *s)
{
	if (d && !dst) return null_host(d, "fz_copy_to_host");
	IN_CTX(d, s ? CU(d->err, cuMemcpyDtoHAsync_v2, dst, src, n, ST(s)) : finish(d, CU(d->err, cuMemcpyDtoH_v2, dst, src, n)));
}

int fz_copy_on_device(fz_device *d, fz_ptr dst, fz_ptr src, size_t n, fz_stream *s)
{
	IN_CTX(d, s ? CU(d->err, cuMemcpyDtoDAsync_v2, dst, src, n, ST(s)) : finish(d, CU(d->err, cuMemcpyDtoD_v2, dst, src, n)));
}

int fz_memset(fz_device *d, fz_ptr dst, unsigned char v, size_t n, fz_stream *s)
{
	IN_CTX(d, s ? CU(d->err, cuMemsetD8Async, dst, v, n, ST(s)) : finish(d, CU(d->err, cuMemsetD8_v2, dst, v, n)));
}

int fz_memset32(fz_device *d, fz_ptr dst, unsigned int v, size_t count, fz_stream *s)
{
	if (d && !s) return fr_err(d->err, FZ_ERR_INVALID, "fz_memset32: queued on a stream only (stream is NULL)");
	IN_CTX(d, CU(d->err, cuMemsetD32Async, dst, v, count, ST(s)));
}

int fz_stream_create(fz_device *d, fz_stream **out)
{
	if (!d || !out) return FZ_ERR_INVALID;
	CUstream s = NULL;
	*out = NULL;
	int rc = fr_enter(d, d->err);
	if (rc) return rc;
	rc = CU(d->err, cuStreamCreate, &s, CU_STREAM_NON_BLOCKING);
	fr_leave(d);
	if (!rc) *out = (fz_stream *)s;
	return rc;
}

int fz_stream_destroy(fz_device *d, fz_stream *s)
{
	if (!s) return d ? FZ_OK : FZ_ERR_INVALID;
	IN_CTX(d, CU(d->err, cuStreamDestroy_v2, ST(s)));
}

int fz_stream_sync(fz_device *d, fz_stream *s)
{
	IN_CTX(d, CU(d->err, cuStreamSynchronize, ST(s)));
}

/* 0: the stream's work is done; 1: not yet (a wait that must stay bounded
   polls this instead of blocking in cuStreamSynchronize) */
int fr_stream_ready(fz_device *d, fz_stream *s, int *done)
{
	*done = 0;
	int rc = fr_enter(d, d->err);
	if (rc) return rc;
	CUresult r = fr_cu->cuStreamQuery(ST(s));
	fr_leave(d);
	if (r == CUDA_ERROR_NOT_READY) return FZ_OK;
	rc = cu_ok(d->err, "cuStreamQuery", r);
	*done = !rc;
	return rc;
}

/* a stream at the context's greatest priority: the block scheduler starts
   its kernels' blocks before queued ones of normal streams (a collective's
   blocks then run together instead of trickling in between a big grid's) */
int fr_stream_create_urgent(fz_device *d, fz_stream **out)
{
	CUstream s = NULL;
	int least = 0, greatest = 0;
	*out = NULL;
	int rc = fr_enter(d, d->err);
	if (rc) return rc;
	rc = CU(d->err, cuCtxGetStreamPriorityRange, &least, &greatest);
	if (!rc) rc = CU(d->err, cuStreamCreateWithPriority, &s, CU_STREAM_NON_BLOCKING, greatest);
	fr_leave(d);
	if (!rc) *out = (fz_stream *)s;
	return rc;
}

/* *done = 1 when the work before the event's record is finished
   (cuEventQuery): a bounded wait polls this */
int fr_event_ready(fz_device *d, fz_event *e, int *done)
{
	*done = 0;
	int rc = fr_enter(d, d->err);
	if (rc) return rc;
	CUresult r = fr_cu->cuEventQuery((CUevent)e);
	fr_leave(d);
	if (r == CUDA_ERROR_NOT_READY) return FZ_OK;
	rc = cu_ok(d->err, "cuEventQuery", r);
	*done = !rc;
	return rc;
}

/* page-locked host memory (a device's async copy lands there without the
   host waiting, as pageable memory would make it) */
int fr_host_alloc(fz_device *d, size_t bytes, void **out)
{
	*out = NULL;
	int rc = fr_enter(d, d->err);
	if (rc) return rc;
	rc = CU(d->err, cuMemHostAlloc, out, bytes, 0);
	fr_leave(d);
	return rc;
}

void fr_host_free(fz_device *d, void *p)
{
	if (!p || fr_enter(d, d->err)) return;
	fr_cu->cuMemFreeHost(p);
	fr_leave(d);
}

int fz_event_create(fz_device *d, fz_event **out)
{
	if (!d || !out) return FZ_ERR_INVALID;
	CUevent e = NULL;
	*out = NULL;
	int rc = fr_enter(d, d->err);
	if (rc) return rc;
	rc = CU(d->err, cuEventCreate, &e, CU_EVENT_DEFAULT);
	fr_leave(d);
	if (!rc) *out = (fz_event *)e;
	return rc;
}

int fz_event_destroy(fz_device *d, fz_event *e)
{
	if (!e) return d ? FZ_OK : FZ_ERR_INVALID;
	IN_CTX(d, CU(d->err, cuEventDestroy_v2, (CUevent)e));
}

int fz_event_record(fz_device *d, fz_event *e, fz_stream *s)
{
	if (!d) return FZ_ERR_INVALID;
	if (!e) return fr_err(d->err, FZ_ERR_INVALID, "fz_event_record: event is NULL");
	IN_CTX(d, CU(d->err, cuEventRecord, (CUevent)e, ST(s)));
}

int fz_stream_wait(fz_device *d, fz_stream *s, fz_event *e)
{
	if (!d) return FZ_ERR_INVALID;
	if (!e) return fr_err(d->err, FZ_ERR_INVALID, "fz_stream_wait: event is NULL");
	IN_CTX(d, CU(d->err, cuStreamWaitEvent, ST(s), (CUevent)e, 0));
}

int fz_event_elapsed(fz_device *d, fz_event *start, fz_event *end, float *ms)
{
	if (!d) return FZ_ERR_INVALID;
	if (!start || !end || !ms) return fr_err(d->err, FZ_ERR_INVALID, "fz_event_elapsed: a NULL argument");
	*ms = 0;
	int rc = fr_enter(d, d->err);
	if (rc) return rc;
	rc = CU(d->err, cuEventSynchronize, (CUevent)end);
	if (!rc) rc = CU(d->err, cuEventElapsedTime_v2, ms, (CUevent)start, (CUevent)end);
	fr_leave(d);
	return rc;
}
