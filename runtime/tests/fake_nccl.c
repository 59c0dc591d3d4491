/* A fake libnccl for the group tests, loaded through FUSERUN_NCCL. Its
 * "device memory" is the fake libcuda's: host memory, so collectives are
 * memcpy. Collectives of a group of several ranks must be posted between
 * ncclGroupStart and ncclGroupEnd (one thread drives every rank; real NCCL
 * would hang otherwise); ncclGroupEnd matches the k-th call of every rank
 * and checks they agree. Controlled by the environment, read at each call:
 *   FAKENCCL_FAIL       the name of a call that fails (ncclSystemError)
 *   FAKENCCL_FAIL_AT    the n-th call (counted since fakenccl_reset) that fails
 *   FAKENCCL_LOST_AT    from the n-th collective on, a peer is lost:
 *                       ncclCommGetAsyncError says ncclRemoteError
 *   FAKENCCL_VERSION    what ncclGetVersion says (default 22809) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define API __attribute__((visibility("default")))

typedef struct comm { int rank, n, dev, aborted; } comm;
typedef struct post { int kind; const void *send; void *recv; size_t count; int type, root; comm *c; } post;
enum { ALLGATHER, BROADCAST };

static int ncomms, depth, nposts, lost;
static long calls, collectives, injected, aborts;
static post posts[256];

static int env_int(const char *name, int dflt)
{
	const char *s = getenv(name);
	return s && *s ? atoi(s) : dflt;
}
static int fault(const char *name)
{
	calls++;
	const char *f = getenv("FAKENCCL_FAIL");
	if ((f && !strcmp(f, name)) || calls == env_int("FAKENCCL_FAIL_AT", -1)) return injected++, 2; /* ncclSystemError */
	return 0;
}
#define FAULT() do { int f_ = fault(__func__); if (f_) return f_; } while (0)

/* ---- the tests' side ---- */
API int fakenccl_live(void) { return ncomms + depth + nposts; }
API void fakenccl_reset(void) { calls = collectives = injected = aborts = 0, lost = 0; }
API long fakenccl_injected(void) { return injected; }
API long fakenccl_aborts(void) { return aborts; }
API long fakenccl_collectives(void) { return collectives; }

/* ---- NCCL ---- */
API int ncclGetVersion(int *v) { *v = env_int("FAKENCCL_VERSION", 22809); return 0; }
API const char *ncclGetErrorString(int r)
{
	static const char *const text[] = {"no error", "unhandled cuda error", "unhandled system error", "internal error",
	                                   "invalid argument", "invalid usage", "remote process exited or there was a network error",
	                                   "NCCL operation in progress"};
	return r >= 0 && r < 8 ? text[r] : "unknown result code";
}
API int ncclCommInitAll(comm **comms, int n, const int *devs)
{
	FAULT();
	if (n < 1 || !comms) return 4;
	for (int i = 0; i < n; i++) {
		comms[i] = calloc(1, sizeof **comms);
		comms[i]->rank = i, comms[i]->n = n, comms[i]->dev = devs ? devs[i] : i;
		ncomms++;
	}
	return 0;
}
API int ncclCommDestroy(comm *c) { if (!c) return 4; free(c), ncomms--; return 0; }
API int ncclCommAbort(comm *c) { if (!c) return 4; free(c), ncomms--, aborts++; return 0; }
API int ncclCommGetAsyncError(comm *c, int *e)
{
	FAULT();
	if (!c) return 4;
	*e = lost ? 6 : 0; /* ncclRemoteError */
	return 0;
}
API int ncclGroupStart(void) { FAULT(); depth++; return 0; }

static int run_posts(void)
{
	int n = nposts ? posts[0].c->n : 0, per = n ? nposts / n : 0;
	if (nposts % (n ? n : 1)) return 5; /* ranks posted different numbers of calls: ncclInvalidUsage */
	int k[16] = {0};
	post *by[16][64];
	for (int i = 0; i < nposts; i++) {
		int r = posts[i].c->rank;
		if (k[r] >= 64) return 5;
		by[r][k[r]++] = &posts[i];
	}
	for (int j = 0; j < per; j++) {
		post *p0 = by[0][j];
		for (int r = 1; r < n; r++)
			if (by[r][j]->kind != p0->kind || by[r][j]->count != p0->count || by[r][j]->root != p0->root) return 5;
		for (int r = 0; r < n; r++) {
			post *p = by[r][j];
			if (p->kind == ALLGATHER)
				for (int s = 0; s < n; s++) memmove((char *)p->recv + (size_t)s * p->count, by[s][j]->send, p->count);
			else
				memmove(p->recv, by[p->root][j]->send, p->count);
		}
	}
	return 0;
}
API int ncclGroupEnd(void)
{
	if (fault(__func__)) { /* the group is over, failed: its calls are dropped */
		if (depth > 0 && !--depth) nposts = 0;
		return 2;
	}
	if (depth <= 0) return 5;
	if (--depth) return 0;
	int r = run_posts();
	nposts = 0;
	return r;
}
static int post_op(int kind, const void *send, void *recv, size_t count, int type, int root, comm *c)
{
	if (!c || c->aborted || type != 0 || (count && (!send || !recv))) return 4;
	if (c->n > 1 && !depth) return 5; /* one thread, several ranks, no group: real NCCL would hang */
	collectives++;
	if (collectives >= env_int("FAKENCCL_LOST_AT", -1) && env_int("FAKENCCL_LOST_AT", -1) > 0) lost = 1;
	if (nposts == 256) return 3;
	posts[nposts++] = (post){kind, send, recv, count, type, root, c};
	if (!depth) { /* a group of one */
		int r = run_posts();
		nposts = 0;
		return r;
	}
	return 0;
}
API int ncclAllGather(const void *send, void *recv, size_t count, int type, comm *c, void *stream)
{
	(void)stream;
	FAULT();
	return post_op(ALLGATHER, send, recv, count, type, 0, c);
}
API int ncclBroadcast(const void *send, void *recv, size_t count, int type, int root, comm *c, void *stream)
{
	(void)stream;
	FAULT();
	if (!c || root < 0 || root >= c->n) return 4;
	return post_op(BROADCAST, send, recv, count, type, root, c);
}
