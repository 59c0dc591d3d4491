/* A fixed-capacity exchange of lists on the devices, step after step,
 * with no host synchronisation: each rank's count (an i32 a kernel wrote)
 * and the first `cap` elements of its list are all-gathered on a stream of
 * the exchange's own, after what the rank's compute stream had queued, and
 * the compute stream waits for it (cuStreamWaitEvent) only where the
 * application asks. A list padded to its capacity lets the next step's
 * kernels be sized on the host without reading any count; the counts go to
 * a history on the device, read once after a sync (fz_exchange_counts),
 * where a count past the capacity (a list that was cut) is an error naming
 * the step and the rank.
 *
 * A step may be sent at a capacity of its own, below the exchange's
 * (fz_exchange_post_sized): the bytes moved and the threads of kernels
 * sized from it follow the lists' real lengths instead of their worst
 * case. With FZ_EXCHANGE_HOST_COUNTS local rank 0's exchange stream also
 * copies each step's gathered counts into page-locked host memory and
 * records an event, so the host reads a step's counts (fz_exchange_host_counts)
 * by waiting for that step's exchange only, never for a compute stream:
 * an application sizing step t from the counts of step t-2 keeps its
 * queue full, and one that finds a count past the capacity it chose
 * rewinds (fz_exchange_rewind) and redoes the steps after it. The counts
 * may also go first (fz_exchange_post_counts, then fz_exchange_post_lists
 * at the largest count): exact sizes, at the price of the host's wait. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"

enum { RING = 16 }; /* events of the host counts' copies, reused round robin */

struct fz_exchange {
	fz_group *g;
	size_t elem;
	long long cap;
	int steps, timed, urgent, last;          /* last: the last step whose counts were posted, -1 none */
	int open;                                /* a step whose counts went first and lists are due, -1 none */
	long long *caps;                         /* each posted step's capacity (0: lists not posted) */
	int32_t *host;                           /* HOST_COUNTS: steps x world, page-locked */
	fz_event *seen[RING];                    /* HOST_COUNTS: a step's counts are in host[] */
	fz_stream *xs[FZ_MAX_GROUP];             /* the exchange's stream, per local rank */
	fz_event *ready[FZ_MAX_GROUP];           /* the compute stream reached the post */
	fz_event *done[FZ_MAX_GROUP];            /* the last post's exchange finished */
	fz_event **t0[FZ_MAX_GROUP], **t1[FZ_MAX_GROUP]; /* timed: around each step's exchange */
	fz_ptr count[FZ_MAX_GROUP];              /* steps i32: this rank's count of each step */
	fz_ptr hist[FZ_MAX_GROUP];               /* steps x world i32: every rank's, in rank order */
};

/* a local rank's device failure: the group's message names device and rank */
static int dev_fail(fz_exchange *x, int r, int rc)
{
	fr_group_device_error(x->g, r);
	return fr_group_fail(x->g, rc);
}

void fz_exchange_destroy(fz_exchange *x)
{
	if (!x) return;
	for (int r = 0; r < x->g->n; r++) {
		fz_device *d = x->g->dev[r];
		for (int s = 0; x->timed && s < x->steps; s++) {
			if (x->t0[r]) fz_event_destroy(d, x->t0[r][s]);
			if (x->t1[r]) fz_event_destroy(d, x->t1[r][s]);
		}
		free(x->t0[r]), free(x->t1[r]);
		fz_event_destroy(d, x->ready[r]), fz_event_destroy(d, x->done[r]);
		fz_stream_destroy(d, x->xs[r]);
		fz_free(d, x->count[r]), fz_free(d, x->hist[r]);
	}
	for (int i = 0; i < RING && x->g->n; i++) fz_event_destroy(x->g->dev[0], x->seen[i]);
	if (x->host) fr_host_free(x->g->dev[0], x->host);
	free(x->caps);
	free(x);
}

/* one local rank's streams, events and count buffers (zeroed: a step never
   posted reads as no items) */
static int make_rank(fz_exchange *x, int r)
{
	fz_device *d = x->g->dev[r];
	size_t nc = (size_t)x->steps * 4, nh = nc * (size_t)x->g->world;
	int rc = x->urgent ? fr_stream_create_urgent(d, &x->xs[r]) : fz_stream_create(d, &x->xs[r]);
	if (!rc) rc = fz_event_create(d, &x->ready[r]);
	if (!rc) rc = fz_event_create(d, &x->done[r]);
	if (!rc) rc = fz_alloc(d, nc, &x->count[r]);
	if (!rc) rc = fz_alloc(d, nh, &x->hist[r]);
	if (!rc) rc = fz_memset(d, x->count[r], 0, nc, NULL);
	if (!rc) rc = fz_memset(d, x->hist[r], 0, nh, NULL);
	if (rc || !x->timed) return rc;
	x->t0[r] = calloc((size_t)x->steps, sizeof(fz_event *));
	x->t1[r] = calloc((size_t)x->steps, sizeof(fz_event *));
	if (!x->t0[r] || !x->t1[r]) return fr_err(d->err, FZ_ERR_NO_MEMORY, "out of memory");
	for (int s = 0; !rc && s < x->steps; s++) {
		rc = fz_event_create(d, &x->t0[r][s]);
		if (!rc) rc = fz_event_create(d, &x->t1[r][s]);
	}
	return rc;
}

/* the page-locked counts and their events, on local rank 0 (every rank
   gathers the same counts: one copy serves the process) */
static int make_host(fz_exchange *x)
{
	fz_device *d = x->g->dev[0];
	int rc = fr_host_alloc(d, (size_t)x->steps * (size_t)x->g->world * 4, (void **)&x->host);
	for (int i = 0; !rc && i < RING; i++) rc = fz_event_create(d, &x->seen[i]);
	return rc;
}

int fz_exchange_create(fz_group *g, size_t elem_bytes, long long cap, int steps, int flags, fz_exchange **out)
{
	if (!out) return g ? fr_err(g->err, FZ_ERR_INVALID, "fz_exchange_create: out is NULL") : FZ_ERR_INVALID;
	*out = NULL;
	if (!g) return FZ_ERR_INVALID;
	if (g->failed) return g->failed;
	if (elem_bytes < 1 || elem_bytes > 64 || cap < 1 || steps < 1 || steps > FZ_EXCHANGE_MAX_STEPS ||
	    (unsigned long long)cap > (1ull << 40) / elem_bytes || (flags & ~(FZ_EXCHANGE_TIMED | FZ_EXCHANGE_HOST_COUNTS | FZ_EXCHANGE_URGENT)))
		return fr_err(g->err, FZ_ERR_INVALID, "fz_exchange_create: %zu-byte elements, capacity %lld, %d steps, flags %d: elements of 1 "
		              "to 64 bytes, a capacity of 1 to 2^40 bytes, 1 to %d steps, flags FZ_EXCHANGE_TIMED, _HOST_COUNTS, _URGENT or 0",
		              elem_bytes, cap, steps,
		              flags, FZ_EXCHANGE_MAX_STEPS);
	fz_exchange *x = calloc(1, sizeof *x);
	if (!x) return fr_err(g->err, FZ_ERR_NO_MEMORY, "out of memory");
	*x = (fz_exchange){.g = g, .elem = elem_bytes, .cap = cap, .steps = steps, .timed = !!(flags & FZ_EXCHANGE_TIMED), .last = -1,
	                   .urgent = !!(flags & FZ_EXCHANGE_URGENT),
	                   .open = -1};
	x->caps = calloc((size_t)steps, sizeof *x->caps);
	if (!x->caps) return free(x), fr_err(g->err, FZ_ERR_NO_MEMORY, "out of memory");
	for (int r = 0; r < g->n; r++) {
		int rc = make_rank(x, r);
		if (!rc && !r && (flags & FZ_EXCHANGE_HOST_COUNTS)) rc = make_host(x);
		if (rc) {
			/* the device's message into the group's, without failing the group */
			fr_err(g->err, rc, "device %d (rank %d): fz_exchange_create: %s", g->dev[r]->ordinal, g->first + r,
			       fz_device_error(g->dev[r]));
			fz_exchange_destroy(x);
			return rc;
		}
	}
	*out = x;
	return FZ_OK;
}

fz_ptr fz_exchange_count(const fz_exchange *x, int local, int step)
{
	if (!x || local < 0 || local >= x->g->n || step < 0 || step >= x->steps) return 0;
	return x->count[local] + (fz_ptr)step * 4;
}

enum { COUNTS = 1, LISTS = 2 };

/* world 1: the count into the history and the list into recv, device copies */
static int copy_one(fz_exchange *x, int step, int what, long long cap, fz_ptr send, fz_ptr recv)
{
	fz_device *d = x->g->dev[0];
	int rc = FZ_OK;
	if (what & COUNTS) rc = fz_copy_on_device(d, x->hist[0] + (fz_ptr)step * 4, x->count[0] + (fz_ptr)step * 4, 4, x->xs[0]);
	if (!rc && (what & LISTS) && send != recv) rc = fz_copy_on_device(d, recv, send, (size_t)cap * x->elem, x->xs[0]);
	return rc ? dev_fail(x, 0, rc) : FZ_OK;
}

/* several ranks: the all-gathers asked for, of every local rank, in one NCCL group */
static int gather(fz_exchange *x, int step, int what, long long cap, const fz_ptr *send, const fz_ptr *recv)
{
	fz_group *g = x->g;
	fr_ncclResult_t nr = g->nccl->ncclGroupStart();
	if (nr != FR_NCCL_SUCCESS) return fr_group_fail(g, fr_nccl_error(g->nccl, g->err, "ncclGroupStart (exchange)", nr));
	int rc = FZ_OK;
	for (int r = 0; !rc && r < g->n; r++) {
		CUstream s = (CUstream)x->xs[r];
		const void *c = (const void *)(uintptr_t)(x->count[r] + (fz_ptr)step * 4);
		void *h = (void *)(uintptr_t)(x->hist[r] + (fz_ptr)step * 4 * (fz_ptr)g->world);
		nr = (what & COUNTS) ? g->nccl->ncclAllGather(c, h, 4, FR_NCCL_INT8, g->comm[r], s) : FR_NCCL_SUCCESS;
		if (nr == FR_NCCL_SUCCESS && (what & LISTS))
			nr = g->nccl->ncclAllGather((const void *)(uintptr_t)send[r], (void *)(uintptr_t)recv[r], (size_t)cap * x->elem,
			                            FR_NCCL_INT8, g->comm[r], s);
		if (nr != FR_NCCL_SUCCESS) {
			char call[96];
			snprintf(call, sizeof call, "rank %d: ncclAllGather (exchange, step %d)", g->first + r, step);
			rc = fr_group_fail(g, fr_nccl_error(g->nccl, g->err, call, nr));
		}
	}
	return fr_group_end(g, rc, "ncclGroupEnd (exchange)");
}

/* each exchange stream starts after what its compute stream queued so far */
static int start(fz_exchange *x, int step)
{
	for (int r = 0; r < x->g->n; r++) {
		fz_device *d = x->g->dev[r];
		int rc = fz_event_record(d, x->ready[r], x->g->stream[r]);
		if (!rc) rc = fz_stream_wait(d, x->xs[r], x->ready[r]);
		if (!rc && x->timed) rc = fz_event_record(d, x->t0[r][step], x->xs[r]);
		if (rc) return dev_fail(x, r, rc);
	}
	return FZ_OK;
}

/* after the collectives: the counts to the host (HOST_COUNTS), the events */
static int finish(fz_exchange *x, int step, int what)
{
	fz_group *g = x->g;
	if ((what & COUNTS) && x->host) {
		size_t n = (size_t)g->world * 4;
		int rc = fz_copy_to_host(g->dev[0], x->host + (size_t)step * (size_t)g->world, x->hist[0] + (fz_ptr)(step * n), n, x->xs[0]);
		if (!rc) rc = fz_event_record(g->dev[0], x->seen[step % RING], x->xs[0]);
		if (rc) return dev_fail(x, 0, rc);
	}
	for (int r = 0; r < g->n; r++) {
		fz_device *d = g->dev[r];
		int rc = x->timed && (what & LISTS) ? fz_event_record(d, x->t1[r][step], x->xs[r]) : FZ_OK;
		if (!rc) rc = fz_event_record(d, x->done[r], x->xs[r]);
		if (rc) return dev_fail(x, r, rc);
	}
	return FZ_OK;
}

static int post(fz_exchange *x, int step, int what, long long cap, const fz_ptr *send, const fz_ptr *recv)
{
	fz_group *g = x->g;
	if (g->failed) return g->failed;
	int first = what & COUNTS, want = first ? x->last + 1 : x->open;
	if (first && x->open >= 0)
		return fr_err(g->err, FZ_ERR_INVALID, "fz_exchange_post: step %d's counts went first: its lists are due", x->open);
	if (step < 0 || step >= x->steps || step != want)
		return fr_err(g->err, FZ_ERR_INVALID, "fz_exchange_post: step %d; the steps go from %d to %d, each posted once, in order%s", step,
		              x->last + 1, x->steps - 1, first ? "" : " (its counts first)");
	if ((what & LISTS) && (cap < 1 || cap > x->cap))
		return fr_err(g->err, FZ_ERR_INVALID, "fz_exchange_post: step %d at a capacity of %lld: 1 to the exchange's %lld", step, cap, x->cap);
	if ((what & LISTS) && (!send || !recv)) return fr_err(g->err, FZ_ERR_INVALID, "fz_exchange_post: a NULL argument");
	for (int r = 0; (what & LISTS) && r < g->n; r++)
		if (!send[r] || !recv[r]) return fr_err(g->err, FZ_ERR_INVALID, "fz_exchange_post: rank %d has a null buffer", g->first + r);
	int rc = start(x, step);
	if (!rc) rc = g->world == 1 ? copy_one(x, step, what, cap, send ? send[0] : 0, recv ? recv[0] : 0) : gather(x, step, what, cap, send, recv);
	if (!rc) rc = finish(x, step, what);
	if (rc) return rc;
	if (first) x->last = step;
	x->open = what & LISTS ? -1 : step;
	if (what & LISTS) x->caps[step] = cap;
	return FZ_OK;
}

int fz_exchange_post(fz_exchange *x, int step, const fz_ptr *send, const fz_ptr *recv)
{
	return x ? post(x, step, COUNTS | LISTS, x->cap, send, recv) : FZ_ERR_INVALID;
}

int fz_exchange_post_sized(fz_exchange *x, int step, long long cap, const fz_ptr *send, const fz_ptr *recv)
{
	return x ? post(x, step, COUNTS | LISTS, cap, send, recv) : FZ_ERR_INVALID;
}

int fz_exchange_post_counts(fz_exchange *x, int step)
{
	return x ? post(x, step, COUNTS, 0, NULL, NULL) : FZ_ERR_INVALID;
}

int fz_exchange_post_lists(fz_exchange *x, int step, long long cap, const fz_ptr *send, const fz_ptr *recv)
{
	return x ? post(x, step, LISTS, cap, send, recv) : FZ_ERR_INVALID;
}

long long fz_exchange_capacity(const fz_exchange *x, int step)
{
	return x && step >= 0 && step < x->steps ? x->caps[step] : 0;
}

int fz_exchange_rewind(fz_exchange *x, int step)
{
	if (!x) return FZ_ERR_INVALID;
	if (x->g->failed) return x->g->failed;
	if (x->open >= 0 || step < 0 || step > x->last + 1)
		return fr_err(x->g->err, FZ_ERR_INVALID, "fz_exchange_rewind: to step %d: 0 to %d, no step's lists due", step, x->last + 1);
	for (int s = step; s <= x->last; s++) x->caps[s] = 0;
	x->last = step - 1;
	return FZ_OK;
}

/* milliseconds on a monotonic clock, for the bounded waits */
static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* the step's counts event reached, bounded (a peer that never joins the
   collective leaves it pending): a spin first (it is usually done), then
   50-microsecond naps */
static int wait_seen(fz_exchange *x, int step)
{
	fz_group *g = x->g;
	int bound = g->timeout_ms > 0 ? g->timeout_ms : 60000;
	double t0 = now_ms();
	for (int done = 0;;) {
		int rc = fr_event_ready(g->dev[0], x->seen[step % RING], &done);
		if (rc) return dev_fail(x, 0, rc);
		if (done) return FZ_OK;
		double t = now_ms() - t0;
		if (t > bound)
			return fr_group_fail(g, fr_err(g->err, FZ_ERR_TIMEOUT, "rank %d: the counts of step %d were not on the host after %d ms (the "
			                                "exchange waiting for a peer?)", g->first, step, bound));
		if (t > 1.0) nanosleep(&(struct timespec){0, 50000}, NULL);
	}
}

int fz_exchange_host_counts(fz_exchange *x, int step, int *counts)
{
	if (!x || !counts) return x ? fr_err(x->g->err, FZ_ERR_INVALID, "fz_exchange_host_counts: counts is NULL") : FZ_ERR_INVALID;
	fz_group *g = x->g;
	if (g->failed) return g->failed;
	if (!x->host || step < 0 || step > x->last)
		return fr_err(g->err, FZ_ERR_INVALID, "fz_exchange_host_counts: step %d: %s", step,
		              x->host ? "its counts were not posted" : "the exchange was not made with FZ_EXCHANGE_HOST_COUNTS");
	/* the slot's event may be a later step's: stream order covers this one */
	int rc = wait_seen(x, step);
	if (rc) return rc;
	const int32_t *c = x->host + (size_t)step * (size_t)g->world;
	for (int k = 0; k < g->world; k++) {
		if (c[k] < 0) return fr_err(g->err, FZ_ERR_INVALID, "step %d, rank %d: a count of %d items (not a count: was it written?)", step, k, c[k]);
		counts[k] = c[k];
	}
	return FZ_OK;
}

int fz_exchange_wait(fz_exchange *x)
{
	if (!x) return FZ_ERR_INVALID;
	fz_group *g = x->g;
	if (g->failed) return g->failed;
	if (x->open >= 0) return fr_err(g->err, FZ_ERR_INVALID, "fz_exchange_wait: step %d's lists are due", x->open);
	for (int r = 0; x->last >= 0 && r < g->n; r++) {
		int rc = fz_stream_wait(g->dev[r], g->stream[r], x->done[r]);
		if (rc) return dev_fail(x, r, rc);
	}
	return FZ_OK;
}

/* the first count of steps [0, n) outside 0 .. cap, in step then rank order */
static int check_counts(fz_exchange *x, int n, const int32_t *c)
{
	int world = x->g->world;
	for (int s = 0; s < n; s++)
		for (int k = 0; k < world; k++) {
			int32_t v = c[(size_t)s * (size_t)world + (size_t)k];
			if (v < 0)
				return fr_err(x->g->err, FZ_ERR_INVALID, "step %d, rank %d: a count of %d items (not a count: was it written?)", s, k, v);
			if (v > x->caps[s])
				return fr_err(x->g->err, FZ_ERR_OVERFLOW, "step %d, rank %d: %d items, more than the step's capacity of %lld: the list "
				              "sent was cut to %lld (a larger capacity is needed)", s, k, v, x->caps[s], x->caps[s]);
		}
	return FZ_OK;
}

int fz_exchange_counts(fz_exchange *x, int n, int *counts)
{
	if (!x) return FZ_ERR_INVALID;
	fz_group *g = x->g;
	if (n < 0 || n > x->steps) return fr_err(g->err, FZ_ERR_INVALID, "fz_exchange_counts: %d steps of %d", n, x->steps);
	/* the compute streams wait for the last exchange, then the (bounded,
	   where joined) sync: afterwards every count is on every device */
	int rc = fz_exchange_wait(x);
	if (!rc) rc = fz_group_sync(g);
	if (rc || !n) return rc;
	size_t bytes = (size_t)n * (size_t)g->world * 4;
	int32_t *c = malloc(bytes);
	if (!c) return fr_err(g->err, FZ_ERR_NO_MEMORY, "out of memory");
	rc = fz_copy_to_host(g->dev[0], c, x->hist[0], bytes, NULL);
	if (rc) dev_fail(x, 0, rc);
	if (!rc) rc = check_counts(x, n, c);
	if (!rc && counts) memcpy(counts, c, bytes);
	free(c);
	return rc;
}

int fz_exchange_elapsed(fz_exchange *x, int local, int step, float *ms)
{
	if (!x || !ms) return FZ_ERR_INVALID;
	if (!x->timed || local < 0 || local >= x->g->n || step < 0 || step > x->last)
		return fr_err(x->g->err, FZ_ERR_INVALID, "fz_exchange_elapsed: rank %d, step %d: %s", local, step,
		              x->timed ? "not a local rank and a posted step" : "the exchange was not made with FZ_EXCHANGE_TIMED");
	int rc = fz_event_elapsed(x->g->dev[local], x->t0[local][step], x->t1[local][step], ms);
	return rc ? dev_fail(x, local, rc) : FZ_OK;
}
