/* Groups of devices of one host: a device handle and a stream per rank, an
 * NCCL communicator per rank when there are two or more, collectives that
 * move bytes (NCCL never reduces for us), and fixed-order combination of
 * per-rank values on the host. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "nccl_api.h"


const char *fz_group_error(const fz_group *g) { return g ? g->err : "no group handle"; }
int fz_group_size(const fz_group *g) { return g ? g->n : 0; }
int fz_group_ranks(const fz_group *g) { return g ? g->world : 0; }
int fz_group_rank(const fz_group *g, int r) { return g && r >= 0 && r < g->n ? g->first + r : -1; }
fz_device *fz_group_device(const fz_group *g, int r) { return g && r >= 0 && r < g->n ? g->dev[r] : NULL; }
fz_stream *fz_group_stream(const fz_group *g, int r) { return g && r >= 0 && r < g->n ? g->stream[r] : NULL; }

void fz_group_range(long long n, int size, int rank, long long *lo, long long *hi)
{
	long long q = 0, r = 0, l = 0, h = 0;
	if (n > 0 && size > 0 && rank >= 0 && rank < size) {
		q = n / size, r = n % size;
		l = rank * q + (rank < r ? rank : r);
		h = l + q + (rank < r);
	}
	if (lo) *lo = l;
	if (hi) *hi = h;
}

/* marks the group failed with the current message (a lost device, a failed collective) */
int fr_group_fail(fz_group *g, int rc)
{
	if (rc && !g->failed) g->failed = rc;
	return rc;
}

static int usable(fz_group *g)
{
	if (!g) return FZ_ERR_INVALID;
	return g->failed; /* g->err still holds the first failure's message */
}

/* the group's message from a rank's device handle */
void fr_group_device_error(fz_group *g, int r)
{
	fr_err(g->err, 0, "device %d (rank %d): %s", g->dev[r]->ordinal, g->first + r, fz_device_error(g->dev[r]));
}

void fz_group_close(fz_group *g)
{
	if (!g) return;
	for (int r = 0; r < g->n; r++)
		if (g->comm[r] && g->nccl) {
			/* a joined communicator is non-blocking: finalized (its peers'
			   last operations complete, a bounded wait) before it is freed */
			if (g->joined && !g->failed) {
				fr_ncclResult_t nr = g->nccl->ncclCommFinalize(g->comm[r]);
				if (nr != FR_NCCL_SUCCESS && nr != FR_NCCL_IN_PROGRESS) g->failed = FZ_ERR_NCCL;
				else fr_join_settle(g, "ncclCommFinalize");
			}
			/* a failed group may have a peer that will never answer: abort, do not wait */
			if (g->failed) g->nccl->ncclCommAbort(g->comm[r]);
			else g->nccl->ncclCommDestroy(g->comm[r]);
		}
	for (int r = 0; r < g->n; r++) {
		if (g->stream[r]) fz_stream_destroy(g->dev[r], g->stream[r]);
		fz_device_close(g->dev[r]);
	}
	free(g->peers);
	free(g);
}

int fz_group_open(int n, const int *ordinals, fz_group **out, char *err)
{
	if (!out) return fr_err(err, FZ_ERR_INVALID, "fz_group_open: out is NULL");
	*out = NULL;
	if (n < 1 || n > FZ_MAX_GROUP)
		return fr_err(err, FZ_ERR_INVALID, "fz_group_open: %d devices; a group has 1 to %d", n, FZ_MAX_GROUP);
	int ord[FZ_MAX_GROUP];
	for (int r = 0; r < n; r++) {
		ord[r] = ordinals ? ordinals[r] : r;
		for (int k = 0; k < r; k++)
			if (ord[k] == ord[r])
				return fr_err(err, FZ_ERR_INVALID, "fz_group_open: device %d named twice (ranks %d and %d)", ord[r], k, r);
	}
	int count = 0, rc = fz_device_count(&count, err);
	if (rc) return rc;
	if (count < n)
		return fr_err(err, FZ_ERR_NO_DEVICE, "a group of %d devices: the driver sees %d device%s", n, count, count == 1 ? "" : "s");
	fz_group *g = calloc(1, sizeof *g);
	if (!g) return fr_err(err, FZ_ERR_NO_MEMORY, "out of memory");
	for (int r = 0; !rc && r < n; r++) {
		rc = fz_device_open(ord[r], &g->dev[r], err);
		if (!rc) {
			g->n = r + 1;
			g->world = g->n;
			rc = fz_stream_create(g->dev[r], &g->stream[r]);
			if (rc) fr_err(err, rc, "device %d: %s", ord[r], fz_device_error(g->dev[r]));
		}
	}
	if (!rc && n > 1) rc = fr_nccl_get(&g->nccl, err);
	if (!rc && n > 1) {
		fr_ncclResult_t nr = g->nccl->ncclCommInitAll(g->comm, n, ord);
		if (nr != FR_NCCL_SUCCESS) {
			memset(g->comm, 0, sizeof g->comm);
			rc = fr_nccl_error(g->nccl, err, "ncclCommInitAll", nr);
		}
	}
	if (rc) {
		fz_group_close(g);
		return rc;
	}
	*out = g;
	return FZ_OK;
}

int fz_group_load(fz_group *g, const char *path, fz_artifact **arts)
{
	int rc = usable(g);
	if (rc) return rc;
	if (!path || !arts) return fr_err(g->err, FZ_ERR_INVALID, "fz_group_load: a NULL argument");
	for (int r = 0; r < g->n; r++) arts[r] = NULL;
	for (int r = 0; !rc && r < g->n; r++) {
		rc = fz_artifact_load(g->dev[r], path, &arts[r]);
		if (rc) fr_group_device_error(g, r);
	}
	if (rc) fz_group_unload(g, arts);
	return rc;
}

void fz_group_unload(fz_group *g, fz_artifact **arts)
{
	if (!g || !arts) return;
	for (int r = 0; r < g->n; r++) {
		fz_artifact_unload(arts[r]);
		arts[r] = NULL;
	}
}

/* asks every communicator for an asynchronous error (a peer gone, a
   transport failure): NCCL reports those only this way */
static int async_errors(fz_group *g)
{
	for (int r = 0; g->nccl && r < g->n; r++) {
		fr_ncclResult_t e = FR_NCCL_SUCCESS;
		fr_ncclResult_t nr = g->nccl->ncclCommGetAsyncError(g->comm[r], &e);
		if (nr != FR_NCCL_SUCCESS) return fr_group_fail(g, fr_nccl_error(g->nccl, g->err, "ncclCommGetAsyncError", nr));
		if (e != FR_NCCL_SUCCESS && e != FR_NCCL_IN_PROGRESS) {
			char call[64];
			snprintf(call, sizeof call, "rank %d (device %d) communicator", g->first + r, g->dev[r]->ordinal);
			fr_group_fail(g, fr_nccl_error(g->nccl, g->err, call, e));
			if (g->joined) fr_join_blame(g);
			return g->failed;
		}
	}
	return FZ_OK;
}

int fz_group_sync(fz_group *g)
{
	int rc = usable(g);
	if (!rc && g->joined) return fr_join_sync(g); /* bounded: a peer may be gone */
	for (int r = 0; !rc && r < g->n; r++) {
		rc = fz_stream_sync(g->dev[r], g->stream[r]);
		if (rc) fr_group_device_error(g, r), fr_group_fail(g, rc);
	}
	return rc ? rc : async_errors(g);
}

/* ends an NCCL group; a failure makes the group unusable */
int fr_group_end(fz_group *g, int rc, const char *what)
{
	fr_ncclResult_t nr = g->nccl->ncclGroupEnd();
	if (rc) return rc;
	if (nr == FR_NCCL_IN_PROGRESS && g->joined) return fr_join_settle(g, what); /* a non-blocking communicator */
	if (nr != FR_NCCL_SUCCESS) return fr_group_fail(g, fr_nccl_error(g->nccl, g->err, what, nr));
	return async_errors(g);
}

int fz_group_allgather(fz_group *g, const fz_ptr *send, const fz_ptr *recv, size_t bytes)
{
	int rc = usable(g);
	if (rc) return rc;
	if (!send || !recv) return fr_err(g->err, FZ_ERR_INVALID, "fz_group_allgather: a NULL argument");
	for (int r = 0; r < g->n; r++)
		if ((!send[r] || !recv[r]) && bytes) return fr_err(g->err, FZ_ERR_INVALID, "fz_group_allgather: rank %d has a null buffer", r);
	if (!bytes) return FZ_OK;
	if (g->world == 1) {
		if (send[0] == recv[0]) return FZ_OK;
		rc = fz_copy_on_device(g->dev[0], recv[0], send[0], bytes, g->stream[0]);
		if (rc) fr_group_device_error(g, 0), fr_group_fail(g, rc);
		return rc;
	}
	fr_ncclResult_t nr = g->nccl->ncclGroupStart();
	if (nr != FR_NCCL_SUCCESS) return fr_group_fail(g, fr_nccl_error(g->nccl, g->err, "ncclGroupStart", nr));
	for (int r = 0; !rc && r < g->n; r++) {
		nr = g->nccl->ncclAllGather((const void *)(uintptr_t)send[r], (void *)(uintptr_t)recv[r], bytes, FR_NCCL_INT8, g->comm[r],
		                            (CUstream)g->stream[r]);
		if (nr != FR_NCCL_SUCCESS) rc = fr_group_fail(g, fr_nccl_error(g->nccl, g->err, "ncclAllGather", nr));
	}
	return fr_group_end(g, rc, "ncclGroupEnd (all-gather)");
}

int fz_group_allgatherv(fz_group *g, const fz_ptr *send, const size_t *bytes, const fz_ptr *recv)
{
	int rc = usable(g);
	if (rc) return rc;
	if (!send || !recv || !bytes) return fr_err(g->err, FZ_ERR_INVALID, "fz_group_allgatherv: a NULL argument");
	size_t total = 0;
	for (int r = 0; r < g->n; r++)
		if (!recv[r] || (bytes[g->first + r] && !send[r])) return fr_err(g->err, FZ_ERR_INVALID, "fz_group_allgatherv: rank %d has a null buffer", g->first + r);
	for (int r = 0; r < g->world; r++) {
		if (total + bytes[r] < total) return fr_err(g->err, FZ_ERR_INVALID, "fz_group_allgatherv: the sizes overflow");
		total += bytes[r];
	}
	if (g->world == 1) {
		if (!bytes[0] || send[0] == recv[0]) return FZ_OK;
		rc = fz_copy_on_device(g->dev[0], recv[0], send[0], bytes[0], g->stream[0]);
		if (rc) fr_group_device_error(g, 0), fr_group_fail(g, rc);
		return rc;
	}
	/* one broadcast a root into its place in every rank's buffer: NCCL has no
	   all-gather of unequal parts, and the host knows the parts' sizes */
	fr_ncclResult_t nr = g->nccl->ncclGroupStart();
	if (nr != FR_NCCL_SUCCESS) return fr_group_fail(g, fr_nccl_error(g->nccl, g->err, "ncclGroupStart", nr));
	size_t off = 0;
	for (int root = 0; !rc && root < g->world; off += bytes[root], root++) {
		if (!bytes[root]) continue;
		for (int r = 0; !rc && r < g->n; r++) {
			nr = g->nccl->ncclBroadcast((const void *)(uintptr_t)send[r], (void *)(uintptr_t)(recv[r] + off), bytes[root], FR_NCCL_INT8,
			                            root, g->comm[r], (CUstream)g->stream[r]);
			if (nr != FR_NCCL_SUCCESS) rc = fr_group_fail(g, fr_nccl_error(g->nccl, g->err, "ncclBroadcast", nr));
		}
	}
	return fr_group_end(g, rc, "ncclGroupEnd (all-gather of unequal parts)");
}

/* ---- fixed-order combination ---- */

/* a joined group: each process's 16-byte record (mine) all-gathered through
   the device into all[], one a rank in rank order */
static int exchange(fz_group *g, const unsigned char *mine, unsigned char *all)
{
	fz_device *d = g->dev[0];
	size_t total = 16 * (size_t)g->world;
	fz_ptr buf = 0;
	int rc = fz_alloc(d, 16 + total, &buf);
	if (!rc) rc = fz_copy_to_device(d, buf, mine, 16, g->stream[0]);
	if (rc) {
		fr_group_device_error(g, 0);
		fz_free(d, buf);
		return fr_group_fail(g, rc);
	}
	fz_ptr send[1] = {buf}, recv[1] = {buf + 16};
	rc = fz_group_allgather(g, send, recv, 16);
	if (!rc) {
		rc = fz_copy_to_host(d, all, buf + 16, total, g->stream[0]);
		if (rc) fr_group_device_error(g, 0), fr_group_fail(g, rc);
	}
	if (!rc) rc = fz_group_sync(g);
	fz_free(d, buf);
	return rc;
}

#define FOLD(T, acc, v, op) ((op) == FZ_COMBINE_SUM ? (T)((acc) + (v)) : (op) == FZ_COMBINE_MIN ? ((v) < (acc) ? (v) : (acc)) : ((v) > (acc) ? (v) : (acc)))

int fz_group_combine(fz_group *g, const fz_ptr *partial, const char *type, int op, void *result)
{
	int rc = usable(g);
	if (rc) return rc;
	if (!partial || !type || !result) return fr_err(g->err, FZ_ERR_INVALID, "fz_group_combine: a NULL argument");
	if (op != FZ_COMBINE_SUM && op != FZ_COMBINE_MIN && op != FZ_COMBINE_MAX)
		return fr_err(g->err, FZ_ERR_INVALID, "fz_group_combine: unknown operation %d", op);
	int kind = !strcmp(type, "f64") ? 0 : !strcmp(type, "f32") ? 1 : !strcmp(type, "i64") ? 2 : !strcmp(type, "i32") ? 3 : -1;
	if (kind < 0) return fr_err(g->err, FZ_ERR_INVALID, "fz_group_combine: type %s; f64, f32, i64 or i32", type);
	size_t size = kind == 0 || kind == 2 ? 8 : 4;
	unsigned char val[FZ_MAX_WORLD][16]; /* per rank: 8 bytes of value, a flag at byte 8 */
	int any = 0;
	memset(val, 0, sizeof val);
	for (int r = 0; !rc && r < g->n; r++) {
		if (!partial[r]) continue;
		rc = fz_copy_to_host(g->dev[r], val[g->first + r], partial[r], size, g->stream[r]);
		if (rc) fr_group_device_error(g, r), fr_group_fail(g, rc);
		val[g->first + r][8] = 1;
	}
	if (!rc) rc = fz_group_sync(g);
	if (!rc && g->world > g->n) rc = exchange(g, val[g->first], val[0]); /* every process gets every partial */
	if (rc) return rc;
	for (int r = 0; r < g->world; r++) any |= val[r][8];
	if (!any) return fr_err(g->err, FZ_ERR_INVALID, "fz_group_combine: no rank has a partial");
	double d = 0;
	float f = 0;
	long long l = 0;
	int i = 0, first = 1;
	for (int r = 0; r < g->world; r++) { /* rank order: the same bits every run */
		if (!val[r][8]) continue;
		if (kind == 0) { double v; memcpy(&v, val[r], 8); d = first ? v : FOLD(double, d, v, op); }
		else if (kind == 1) { float v; memcpy(&v, val[r], 4); f = first ? v : FOLD(float, f, v, op); }
		else if (kind == 2) { long long v; memcpy(&v, val[r], 8); l = first ? v : op == FZ_COMBINE_SUM ? (long long)((unsigned long long)l + (unsigned long long)v) : FOLD(long long, l, v, op); }
		else { int v; memcpy(&v, val[r], 4); i = first ? v : op == FZ_COMBINE_SUM ? (int)((unsigned)i + (unsigned)v) : FOLD(int, i, v, op); }
		first = 0;
	}
	if (kind == 0) memcpy(result, &d, 8);
	else if (kind == 1) memcpy(result, &f, 4);
	else if (kind == 2) memcpy(result, &l, 8);
	else memcpy(result, &i, 4);
	return FZ_OK;
}
