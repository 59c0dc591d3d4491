/* One process per GPU: a process opens its one device and joins the job's
 * communicator through NCCL's own bootstrap, from a unique id that rank 0
 * makes and hands out (a file written atomically, or the environment).
 * NCCL's blocking calls would wait forever for a peer that never comes or
 * has died, so the communicator is made non-blocking and every wait here
 * polls under a deadline (the group's timeout_ms). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* a poll's pause, growing with the wait: none in the first millisecond (a
   collective or a sync nearly done must not pay a sleep), then 50 us, and
   1 ms past 100 ms (a long wait must not take a core from the others) */
static void pause_after(double t0)
{
	double e = now_ms() - t0;
	if (e < 1.0) return;
	struct timespec d = {0, e < 10 ? 50000 : e < 100 ? 200000 : 1000000};
	nanosleep(&d, NULL);
}

void fz_join_defaults(fz_join_opts *o)
{
	if (!o) return;
	memset(o, 0, sizeof *o);
	o->rank = o->nranks = o->device = -1;
}

/* a non-negative integer from the environment, or -1 when unset */
static int env_int(const char *name, int *v, char *err)
{
	const char *s = getenv(name);
	*v = -1;
	if (!s || !*s) return FZ_OK;
	char *end;
	errno = 0;
	long x = strtol(s, &end, 10);
	if (*end || errno || x < 0 || x > INT_MAX) return fr_err(err, FZ_ERR_INVALID, "%s=%s is not a non-negative integer", name, s);
	*v = (int)x;
	return FZ_OK;
}

static const char *env_str(const char *name)
{
	const char *s = getenv(name);
	return s && *s ? s : NULL;
}

typedef struct plan {
	int rank, nranks, device, timeout;
	const char *file, *hex;
} plan;

/* the options, each unset one from the environment (torchrun's names) */
static int resolve(const fz_join_opts *o, plan *p, char *err)
{
	int rc = FZ_OK, v = -1;
	*p = (plan){o->rank, o->nranks, o->device, o->timeout_ms, o->id_file, o->id_hex};
	if (p->rank < 0) rc = env_int("RANK", &p->rank, err);
	if (!rc && p->nranks < 0) rc = env_int("WORLD_SIZE", &p->nranks, err);
	if (!rc && p->device < 0) rc = env_int("LOCAL_RANK", &p->device, err);
	if (!rc && p->timeout <= 0) rc = env_int("FUSERUN_JOIN_TIMEOUT_MS", &v, err);
	if (rc) return rc;
	if (p->timeout <= 0) p->timeout = v > 0 ? v : 60000;
	if (p->device < 0) p->device = p->rank;
	if (!p->file) p->file = env_str("FUSERUN_NCCL_ID_FILE");
	if (!p->hex) p->hex = env_str("FUSERUN_NCCL_ID");
	if (p->rank < 0 || p->nranks < 0)
		return fr_err(err, FZ_ERR_INVALID, "fz_group_join: no rank or world size (give them, or set RANK and WORLD_SIZE as torchrun does)");
	if (p->nranks < 1 || p->nranks > FZ_MAX_WORLD || p->rank >= p->nranks)
		return fr_err(err, FZ_ERR_INVALID, "fz_group_join: rank %d of %d: a job has 1 to %d ranks, numbered from 0", p->rank, p->nranks,
		              FZ_MAX_WORLD);
	if (p->nranks > 1 && !p->file && !p->hex)
		return fr_err(err, FZ_ERR_INVALID, "rank %d of %d: no NCCL unique id to join by (FUSERUN_NCCL_ID_FILE names the file rank 0 "
		              "writes it to, or FUSERUN_NCCL_ID holds it)", p->rank, p->nranks);
	return FZ_OK;
}

static void to_hex(const fr_ncclUniqueId *id, char *hex)
{
	static const char digit[] = "0123456789abcdef";
	const unsigned char *b = (const unsigned char *)id->internal;
	for (int i = 0; i < FR_NCCL_ID_BYTES; i++) hex[2 * i] = digit[b[i] >> 4], hex[2 * i + 1] = digit[b[i] & 15];
	hex[2 * FR_NCCL_ID_BYTES] = 0;
}

static int nibble(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* 256 hex digits, then only white space; where is the id's source in a message */
static int from_hex(const char *s, fr_ncclUniqueId *id, const plan *p, const char *where, char *err)
{
	size_t n = strlen(s);
	while (n && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t')) n--;
	int bad = n != 2 * FR_NCCL_ID_BYTES;
	for (size_t i = 0; !bad && i < FR_NCCL_ID_BYTES; i++) {
		int hi = nibble(s[2 * i]), lo = nibble(s[2 * i + 1]);
		if (hi < 0 || lo < 0) bad = 1;
		else id->internal[i] = (char)(hi << 4 | lo);
	}
	if (bad)
		return fr_err(err, FZ_ERR_INVALID, "rank %d of %d: %s does not hold an NCCL unique id (%d hex digits; it has %zu characters%s)",
		              p->rank, p->nranks, where, 2 * FR_NCCL_ID_BYTES, n, n == 2 * FR_NCCL_ID_BYTES ? ", not all hex digits" : "");
	return FZ_OK;
}

/* writes text to path through a temporary file renamed over it: a reader
   sees nothing or all of it */
static int write_atomic(const char *path, const char *text, const plan *p, char *err)
{
	char tmp[4096];
	if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof tmp)
		return fr_err(err, FZ_ERR_IO, "rank %d of %d: the path %s is too long", p->rank, p->nranks, path);
	/* write(2), not stdio: the library prints nothing (a check of make check) */
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	size_t n = strlen(text);
	int ok = fd >= 0 && write(fd, text, n) == (ssize_t)n;
	if (fd >= 0 && close(fd)) ok = 0;
	if (ok && rename(tmp, path)) ok = 0;
	if (!ok) {
		int e = errno;
		remove(tmp);
		return fr_err(err, FZ_ERR_IO, "rank %d of %d: cannot write %s: %s", p->rank, p->nranks, path, strerror(e));
	}
	return FZ_OK;
}

/* rank 0 makes the id and publishes it; the others wait for it */
static int get_id(const fr_nccl *nccl, const plan *p, fr_ncclUniqueId *id, char *err)
{
	char where[4200];
	if (!p->file) {
		snprintf(where, sizeof where, "%s", p->hex == env_str("FUSERUN_NCCL_ID") ? "FUSERUN_NCCL_ID" : "the id given");
		return from_hex(p->hex, id, p, where, err);
	}
	snprintf(where, sizeof where, "the id file %s", p->file);
	if (p->rank == 0) {
		char hex[2 * FR_NCCL_ID_BYTES + 2];
		fr_ncclResult_t nr = nccl->ncclGetUniqueId(id);
		if (nr != FR_NCCL_SUCCESS) return fr_nccl_error(nccl, err, "ncclGetUniqueId", nr);
		to_hex(id, hex);
		strcat(hex, "\n");
		return write_atomic(p->file, hex, p, err);
	}
	double t0 = now_ms();
	struct stat st;
	while (stat(p->file, &st)) {
		if (now_ms() - t0 > p->timeout)
			return fr_err(err, FZ_ERR_TIMEOUT, "rank %d of %d: no NCCL unique id in %s after %d ms (rank 0 writes it when it joins: is it "
			              "running, with the same path, on a file system both see?)", p->rank, p->nranks, p->file, p->timeout);
		pause_after(t0);
	}
	char *text = NULL;
	size_t len = 0;
	int rc = fr_read_file(p->file, "NCCL unique id file", 4096, &text, &len, err);
	if (!rc) rc = from_hex(text, id, p, where, err);
	free(text);
	return rc;
}

/* "PATH.rankR": this rank's pid and host, for naming a peer that exits */
static char *pid_file(const char *idfile, int rank)
{
	size_t n = strlen(idfile) + 32;
	char *s = malloc(n);
	if (s) snprintf(s, n, "%s.rank%d", idfile, rank);
	return s;
}

static int register_self(fz_group *g, const plan *p, char *err)
{
	char host[256] = "", line[320];
	gethostname(host, sizeof host - 1);
	snprintf(line, sizeof line, "%ld %s\n", (long)getpid(), host);
	char *path = pid_file(p->file, p->rank);
	int rc = path ? write_atomic(path, line, p, err) : fr_err(err, FZ_ERR_NO_MEMORY, "out of memory");
	free(path);
	if (!rc && !(g->peers = strdup(p->file))) rc = fr_err(err, FZ_ERR_NO_MEMORY, "out of memory");
	return rc;
}

/* a process of this host that has exited (a zombie not yet reaped too) */
static int exited(long pid)
{
	if (kill((pid_t)pid, 0) && errno == ESRCH) return 1;
	char path[64], buf[512];
	snprintf(path, sizeof path, "/proc/%ld/stat", pid);
	FILE *f = fopen(path, "r");
	if (!f) return 0;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	const char *paren = strrchr(buf, ')');
	return paren && paren[1] == ' ' && (paren[2] == 'Z' || paren[2] == 'X');
}

void fr_join_blame(fz_group *g)
{
	if (!g->peers) return;
	char host[256] = "";
	gethostname(host, sizeof host - 1);
	for (int r = 0; r < g->world; r++) {
		if (r == g->first) continue;
		char *path = pid_file(g->peers, r), *text = NULL, other[256] = "";
		size_t len = 0, n = strlen(g->err);
		long pid = 0;
		if (path && !fr_read_file(path, "pid file", 1024, &text, &len, NULL) && sscanf(text, "%ld %255s", &pid, other) == 2 &&
		    pid > 0 && !strcmp(other, host) && exited(pid) && n + 64 < sizeof g->err)
			snprintf(g->err + n, sizeof g->err - n, "; rank %d (pid %ld on %s) has exited", r, pid, host);
		free(text);
		free(path);
	}
}

/* the communicator's state: FZ_OK with *pending, or the failure (g->err) */
static int comm_state(fz_group *g, const char *what, int *pending)
{
	fr_ncclResult_t e = FR_NCCL_SUCCESS, nr = g->nccl->ncclCommGetAsyncError(g->comm[0], &e);
	*pending = 0;
	if (nr != FR_NCCL_SUCCESS) e = nr, what = "ncclCommGetAsyncError";
	if (e == FR_NCCL_IN_PROGRESS) *pending = 1;
	else if (e != FR_NCCL_SUCCESS) {
		char call[256];
		snprintf(call, sizeof call, "rank %d of %d: %s", g->first, g->world, what);
		if (!g->failed) g->failed = fr_nccl_error(g->nccl, g->err, call, e);
		fr_join_blame(g);
		return g->failed;
	}
	return FZ_OK;
}

static int expired(fz_group *g, const char *what)
{
	if (!g->failed)
		g->failed = fr_err(g->err, FZ_ERR_TIMEOUT, "rank %d of %d (device %d): %s was not done after %d ms (a peer missing, gone or "
		                   "stuck; FUSERUN_JOIN_TIMEOUT_MS sets the bound)", g->first, g->world, g->dev[0]->ordinal, what, g->timeout_ms);
	fr_join_blame(g);
	return g->failed;
}

int fr_join_settle(fz_group *g, const char *what)
{
	double t0 = now_ms();
	for (int pending = 1, rc; pending; pause_after(t0)) {
		if ((rc = comm_state(g, what, &pending))) return rc;
		if (pending && now_ms() - t0 > g->timeout_ms) return expired(g, what);
	}
	return FZ_OK;
}

int fr_join_sync(fz_group *g)
{
	double t0 = now_ms();
	for (int done = 0, pending = 0, rc; !done; pause_after(t0)) {
		if ((rc = fr_stream_ready(g->dev[0], g->stream[0], &done))) {
			fr_err(g->err, 0, "rank %d of %d (device %d): %s", g->first, g->world, g->dev[0]->ordinal, fz_device_error(g->dev[0]));
			return g->failed ? g->failed : (g->failed = rc);
		}
		if (g->nccl && (rc = comm_state(g, "the communicator", &pending))) return rc;
		if (!done && now_ms() - t0 > g->timeout_ms) return expired(g, "its stream (a collective waiting for a peer?)");
	}
	return FZ_OK;
}

/* ncclCommInitRankConfig, non-blocking, in the device's context (NCCL
   takes the current device), then polled until every rank is in */
static int init_comm(fz_group *g, const fr_ncclUniqueId *id, char *err)
{
	fr_ncclConfig cfg = {sizeof cfg, 0xcafebeefu, 21400u, 0, INT_MIN, INT_MIN, INT_MIN, NULL};
	int rc = fr_enter(g->dev[0], err);
	if (rc) return rc;
	fr_ncclResult_t nr = g->nccl->ncclCommInitRankConfig(&g->comm[0], g->world, *id, g->first, &cfg);
	fr_leave(g->dev[0]);
	if (nr != FR_NCCL_SUCCESS && nr != FR_NCCL_IN_PROGRESS) {
		char call[128];
		snprintf(call, sizeof call, "rank %d of %d: ncclCommInitRankConfig", g->first, g->world);
		g->failed = fr_nccl_error(g->nccl, g->err, call, nr);
	} else if (!g->comm[0]) {
		g->failed = fr_err(g->err, FZ_ERR_NCCL, "rank %d of %d: ncclCommInitRankConfig gave no communicator", g->first, g->world);
	} else {
		fr_join_settle(g, "joining the communicator (ncclCommInitRankConfig)");
	}
	if (g->failed) fr_err(err, g->failed, "%s", g->err);
	return g->failed;
}

int fz_group_join(const fz_join_opts *opts, fz_group **out, char *err)
{
	if (!out) return fr_err(err, FZ_ERR_INVALID, "fz_group_join: out is NULL");
	*out = NULL;
	fz_join_opts dflt;
	fz_join_defaults(&dflt);
	plan p;
	int rc = resolve(opts ? opts : &dflt, &p, err);
	if (rc) return rc;
	fz_group *g = calloc(1, sizeof *g);
	if (!g) return fr_err(err, FZ_ERR_NO_MEMORY, "out of memory");
	g->world = p.nranks, g->first = p.rank, g->joined = 1, g->timeout_ms = p.timeout;
	rc = fz_device_open(p.device, &g->dev[0], err);
	if (!rc) {
		g->n = 1;
		rc = fz_stream_create(g->dev[0], &g->stream[0]);
		if (rc) fr_err(err, rc, "device %d: %s", p.device, fz_device_error(g->dev[0]));
	}
	fr_ncclUniqueId id;
	memset(&id, 0, sizeof id);
	if (!rc && p.nranks > 1) rc = fr_nccl_get(&g->nccl, err);
	if (!rc && p.nranks > 1 && p.file) rc = register_self(g, &p, err);
	if (!rc && p.nranks > 1) rc = get_id(g->nccl, &p, &id, err);
	if (!rc && p.nranks > 1) rc = init_comm(g, &id, err);
	if (rc) {
		fz_group_close(g);
		return rc;
	}
	*out = g;
	return FZ_OK;
}

int fz_nccl_unique_id(char hex[2 * FR_NCCL_ID_BYTES + 1], char *err)
{
	if (!hex) return fr_err(err, FZ_ERR_INVALID, "fz_nccl_unique_id: hex is NULL");
	const fr_nccl *nccl = NULL;
	fr_ncclUniqueId id;
	int rc = fr_nccl_get(&nccl, err);
	if (rc) return rc;
	fr_ncclResult_t nr = nccl->ncclGetUniqueId(&id);
	if (nr != FR_NCCL_SUCCESS) return fr_nccl_error(nccl, err, "ncclGetUniqueId", nr);
	to_hex(&id, hex);
	return FZ_OK;
}
