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
 *   FAKENCCL_VERSION    what ncclGetVersion says (default 22809)
 * Processes joined by ncclCommInitRankConfig (one process per rank) share
 * a directory that the unique id names (ncclGetUniqueId makes it under
 * $TMPDIR): each rank writes join.RANK (its pid) there, and a collective
 * writes its part to opSEQ.RANK and reads its peers' (SEQ counts the
 * communicator's collectives). A peer that has exited, or a part that does
 * not come within FAKENCCL_TIMEOUT_MS (default 20000), loses the
 * collective: the call returns, the data stays as it was, and
 * ncclCommGetAsyncError says ncclRemoteError, as real NCCL does.
 *   FAKENCCL_DIE_AT, FAKENCCL_DIE_RANK  the process of that rank kills
 *                       itself (SIGKILL) at its n-th collective */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define API __attribute__((visibility("default")))

typedef struct comm {
	int rank, n, dev, aborted;
	int mp, joining, lost; /* a rank of a multi-process job; not all joined yet; a peer lost */
	long seq;
	char dir[120];
} comm;
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

/* ---- several processes: a directory of files ---- */
static int mp_timeout(void) { return env_int("FAKENCCL_TIMEOUT_MS", 20000); }
static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}
static void nap(void) { struct timespec d = {0, 1000000}; nanosleep(&d, NULL); }

static int put_file(const comm *c, const char *name, const void *data, size_t n)
{
	char path[200], tmp[220];
	snprintf(path, sizeof path, "%s/%s", c->dir, name);
	snprintf(tmp, sizeof tmp, "%s.tmp%d", path, (int)getpid());
	FILE *f = fopen(tmp, "wb");
	int ok = f && fwrite(data, 1, n, f) == n;
	if (f && fclose(f)) ok = 0;
	return ok && !rename(tmp, path) ? 0 : 2;
}
/* 1 when rank's process has exited (a zombie too); 0 alive or unknown */
static int peer_dead(const comm *c, int rank)
{
	char path[200], buf[512];
	long pid = 0;
	snprintf(path, sizeof path, "%s/join.%d", c->dir, rank);
	FILE *f = fopen(path, "r");
	if (!f) return 0;
	int got = fscanf(f, "%ld", &pid);
	fclose(f);
	if (got != 1 || pid <= 0) return 0;
	if (kill((pid_t)pid, 0) && errno == ESRCH) return 1;
	snprintf(path, sizeof path, "/proc/%ld/stat", pid);
	if (!(f = fopen(path, "r"))) return 0;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	char *p = strrchr(buf, ')');
	return p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X');
}
/* ncclSuccess when every rank has joined, ncclRemoteError when one that
   did has exited, else ncclInProgress */
static int mp_joined(comm *c)
{
	int all = 1;
	for (int r = 0; r < c->n; r++) {
		char path[200];
		struct stat st;
		snprintf(path, sizeof path, "%s/join.%d", c->dir, r);
		if (stat(path, &st)) all = 0;
		else if (peer_dead(c, r)) return 6;
	}
	if (all) c->joining = 0;
	return all ? 0 : 7;
}
/* waits for rank s's part of collective seq and reads it into dst */
static int mp_take(comm *c, long seq, int s, void *dst, size_t n)
{
	char path[200];
	snprintf(path, sizeof path, "%s/op%ld.%d", c->dir, seq, s);
	double t0 = now_ms();
	FILE *f;
	while (!(f = fopen(path, "rb"))) {
		if (peer_dead(c, s) || now_ms() - t0 > mp_timeout()) return 6;
		nap();
	}
	size_t got = n ? fread(dst, 1, n, f) : 0;
	fclose(f);
	return got == n ? 0 : 3;
}
static void mp_exchange(post *p)
{
	comm *c = p->c;
	long seq = c->seq++;
	char name[64];
	snprintf(name, sizeof name, "op%ld.%d", seq, c->rank);
	if (c->lost) return;
	if ((p->kind == ALLGATHER || c->rank == p->root) && put_file(c, name, p->send, p->count)) {
		c->lost = 1;
		return;
	}
	for (int s = 0; s < c->n && !c->lost; s++) {
		if (p->kind == BROADCAST && s != p->root) continue;
		char *dst = (char *)p->recv + (p->kind == ALLGATHER ? (size_t)s * p->count : 0);
		if (mp_take(c, seq, s, dst, p->count)) c->lost = 1;
	}
}

typedef struct { char internal[128]; } uid;
typedef struct { size_t size; unsigned int magic, version; int blocking; } config_head;
API int ncclGetUniqueId(uid *id)
{
	FAULT();
	const char *tmp = getenv("TMPDIR");
	memset(id, 0, sizeof *id);
	memcpy(id->internal, "FAKENCCL", 8);
	snprintf(id->internal + 8, 120, "%s/fakenccl.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (strlen(id->internal + 8) >= 119 || !mkdtemp(id->internal + 8)) return 2;
	return 0;
}
API int ncclCommInitRankConfig(comm **out, int n, uid id, int rank, config_head *config)
{
	FAULT();
	struct stat st;
	if (!out || n < 1 || rank < 0 || rank >= n || memcmp(id.internal, "FAKENCCL", 8) || !memchr(id.internal + 8, 0, 120) ||
	    stat(id.internal + 8, &st) || !S_ISDIR(st.st_mode))
		return 4; /* ncclInvalidArgument: not an id this fake made */
	if (config && (config->magic != 0xcafebeefu || config->version < 21400)) return 4;
	comm *c = calloc(1, sizeof *c);
	c->rank = rank, c->n = n, c->mp = 1, c->joining = 1;
	snprintf(c->dir, sizeof c->dir, "%s", id.internal + 8);
	char name[32], pid[32];
	snprintf(name, sizeof name, "join.%d", rank);
	snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
	if (put_file(c, name, pid, strlen(pid))) return free(c), 2;
	*out = c, ncomms++;
	if (config && config->blocking == 0) return mp_joined(c) == 6 ? 6 : 7; /* ncclInProgress: polled */
	double t0 = now_ms();
	int r;
	while ((r = mp_joined(c)) == 7 && now_ms() - t0 < mp_timeout()) nap();
	return r == 7 ? 6 : r;
}

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
API int ncclCommFinalize(comm *c) { FAULT(); return c ? 0 : 4; }
API int ncclCommDestroy(comm *c) { if (!c) return 4; free(c), ncomms--; return 0; }
API int ncclCommAbort(comm *c) { if (!c) return 4; free(c), ncomms--, aborts++; return 0; }
API int ncclCommGetAsyncError(comm *c, int *e)
{
	FAULT();
	if (!c) return 4;
	if (c->mp && c->joining) return *e = mp_joined(c), 0;
	*e = lost || c->lost ? 6 : 0; /* ncclRemoteError */
	return 0;
}
API int ncclGroupStart(void) { FAULT(); depth++; return 0; }

static int run_posts(void)
{
	if (nposts && posts[0].c->mp) {
		for (int i = 0; i < nposts; i++) mp_exchange(&posts[i]);
		return 0;
	}
	int n = nposts ? posts[0].c->n : 0, per = n ? nposts / n : 0;
	if (nposts % (n ? n : 1)) return 5; /* ranks posted different numbers of calls: ncclInvalidUsage */
	int k[16] = {0};
	post *by[16][64];
	for (int i = 0; i < nposts; i++) {
		int r = posts[i].c->rank;
		if (k[r] >= 64) return 5;
		by[r][k[r]++] = &posts[i];
	}
	for (int r = 0; r < n; r++)
		if (k[r] != per) return 5; /* a rank posted fewer calls (one of its calls failed): ncclInvalidUsage */
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
	if (c->mp && collectives == env_int("FAKENCCL_DIE_AT", -1) && c->rank == env_int("FAKENCCL_DIE_RANK", 0)) raise(SIGKILL);
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
