/* The group runtime (group.c, nccl_api.c, shard.c) on CPU: a fake libcuda
 * with several devices and a fake libnccl (fake_nccl.c) over host memory.
 * Every error path must return its code with a message, leave nothing
 * allocated (the fakes count what is live) and never crash; built with
 * ASan and UBSan, so a leak or undefined behaviour fails the run.
 * usage: test_group GENERATED_DIR FAKE_LIBCUDA FAKE_LIBNCCL NOT_A_LIBRARY TMP_DIR */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nccl_api.h"
#include "testutil.h"

static const char *fake_nccl;
static struct {
	int (*cuda_live)(void);
	const char *(*cuda_describe)(void);
	void (*cuda_reset)(void);
	long (*cuda_launches)(void);
	long (*cuda_injected)(void);
	long (*nccl_injected)(void);
	int (*nccl_live)(void);
	void (*nccl_reset)(void);
	long (*nccl_aborts)(void);
	long (*nccl_collectives)(void);
} fk;

static const void *(*last_args_fn)(size_t *);
static long (*urgent_fn)(void);

static void *sym(void *h, const char *name)
{
	void *f = dlsym(h, name);
	if (!f) { fprintf(stderr, "test_group: fake lacks %s\n", name); exit(2); }
	return f;
}

static void bind_fakes(void)
{
	void *c = dlopen(fake_so, RTLD_NOW | RTLD_LOCAL), *n = dlopen(fake_nccl, RTLD_NOW | RTLD_LOCAL);
	if (!c || !n) { fprintf(stderr, "test_group: %s\n", dlerror()); exit(2); }
	void *f;
	f = sym(c, "fakecuda_live"), memcpy(&fk.cuda_live, &f, sizeof f);
	f = sym(c, "fakecuda_describe"), memcpy(&fk.cuda_describe, &f, sizeof f);
	f = sym(c, "fakecuda_reset"), memcpy(&fk.cuda_reset, &f, sizeof f);
	f = sym(c, "fakecuda_launches"), memcpy(&fk.cuda_launches, &f, sizeof f);
	f = sym(c, "fakecuda_injected"), memcpy(&fk.cuda_injected, &f, sizeof f);
	f = sym(c, "fakecuda_last_args"), memcpy(&last_args_fn, &f, sizeof f);
	f = sym(c, "fakecuda_urgent_streams"), memcpy(&urgent_fn, &f, sizeof f);
	f = sym(n, "fakenccl_injected"), memcpy(&fk.nccl_injected, &f, sizeof f);
	f = sym(n, "fakenccl_live"), memcpy(&fk.nccl_live, &f, sizeof f);
	f = sym(n, "fakenccl_reset"), memcpy(&fk.nccl_reset, &f, sizeof f);
	f = sym(n, "fakenccl_aborts"), memcpy(&fk.nccl_aborts, &f, sizeof f);
	f = sym(n, "fakenccl_collectives"), memcpy(&fk.nccl_collectives, &f, sizeof f);
	/* the handles stay open: the runtime's own dlopen shares them */
}

static void nothing_live(const char *name)
{
	char d[512];
	snprintf(d, sizeof d, "driver: %s; NCCL: %d live", fk.cuda_describe(), fk.nccl_live());
	check(fk.cuda_live() == 0 && fk.nccl_live() == 0, name, d);
}

static void test_range(void)
{
	static const struct { long long n; int size; long long lo[4], hi[4]; } t[] = {
		{10, 3, {0, 4, 7}, {4, 7, 10}},
		{8, 2, {0, 4}, {4, 8}},
		{1, 2, {0, 1}, {1, 1}},           /* rank 1 empty */
		{3, 4, {0, 1, 2, 3}, {1, 2, 3, 3}},
		{65537, 2, {0, 32769}, {32769, 65537}},
	};
	int ok = 1;
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
		for (int r = 0; r < t[i].size; r++) {
			long long lo, hi;
			fz_group_range(t[i].n, t[i].size, r, &lo, &hi);
			if (lo != t[i].lo[r] || hi != t[i].hi[r]) ok = 0;
		}
	long long lo = 7, hi = 7;
	fz_group_range(0, 2, 0, &lo, &hi);
	ok &= lo == 0 && hi == 0;
	fz_group_range(5, 2, 2, &lo, &hi); /* no such rank */
	ok &= lo == 0 && hi == 0;
	check(ok, "fz_group_range: contiguous ranges, the first n % size ranks one more, empty past n", NULL);
}

/* before anything loads NCCL: a load that worked is kept */
static void test_no_nccl(const char *not_a_lib)
{
	char err[FZ_ERRMSG_SIZE];
	fz_group *g = (fz_group *)1;
	setenv("FAKECUDA_DEVICES", "2", 1);
	setenv("FUSERUN_NCCL", "/nonexistent/libnccl.so.2", 1);
	expect("no NCCL: a group of two says which library is missing", fz_group_open(2, NULL, &g, err), FZ_ERR_NO_NCCL, err,
	       "/nonexistent/libnccl.so.2", "FUSERUN_NCCL", NULL);
	check(g == NULL, "no NCCL: no group handle", NULL);
	nothing_live("no NCCL: the devices opened before are closed again");
	expect("no NCCL: a group of one needs none", fz_group_open(1, NULL, &g, err), FZ_OK, "", NULL);
	check(g && fz_group_size(g) == 1 && fz_group_device(g, 0) && fz_group_stream(g, 0) && !fz_group_device(g, 1),
	      "a group of one: its device and stream", NULL);
	fz_group_close(g);
	setenv("FUSERUN_NCCL", not_a_lib, 1);
	expect("a library that is not NCCL is refused, naming what it lacks", fz_group_open(2, NULL, &g, err), FZ_ERR_NO_NCCL, err,
	       "lacks", "ncclCommInitAll", NULL);
	setenv("FUSERUN_NCCL", fake_nccl, 1);
	setenv("FAKENCCL_VERSION", "30100", 1);
	expect("an NCCL of another major version is refused", fz_group_open(2, NULL, &g, err), FZ_ERR_NO_NCCL, err,
	       "version 30100", "NCCL 2.x", NULL);
	unsetenv("FAKENCCL_VERSION");
	nothing_live("refused libraries leave nothing open");
}

static void test_open(void)
{
	char err[FZ_ERRMSG_SIZE];
	fz_group *g = NULL;
	int dup[2] = {1, 1}, one[1] = {1};
	expect("a group of 0 devices is refused", fz_group_open(0, NULL, &g, err), FZ_ERR_INVALID, err, "1 to", NULL);
	expect("a group of 17 devices is refused", fz_group_open(17, NULL, &g, err), FZ_ERR_INVALID, err, "1 to 16", NULL);
	expect("a device named twice is refused", fz_group_open(2, dup, &g, err), FZ_ERR_INVALID, err, "device 1 named twice", NULL);
	expect("more devices than the driver sees", fz_group_open(3, NULL, &g, err), FZ_ERR_NO_DEVICE, err, "3 devices", "sees 2", NULL);
	expect("fz_group_open: out NULL", fz_group_open(2, NULL, NULL, err), FZ_ERR_INVALID, err, "NULL", NULL);
	expect("a group of device 1 alone", fz_group_open(1, one, &g, err), FZ_OK, "", NULL);
	fz_device_props p;
	check(g && fz_device_query(fz_group_device(g, 0), &p) == FZ_OK && p.ordinal == 1, "rank 0 is device 1", NULL);
	fz_group_close(g);
	setenv("FAKENCCL_FAIL", "ncclCommInitAll", 1);
	expect("ncclCommInitAll failing", fz_group_open(2, NULL, &g, err), FZ_ERR_NCCL, err, "ncclCommInitAll: NCCL error 2",
	       "system error", NULL);
	unsetenv("FAKENCCL_FAIL");
	nothing_live("a failed open leaves nothing open");
	fz_group_close(NULL);
	check(fz_group_size(NULL) == 0 && !fz_group_device(NULL, 0) && strstr(fz_group_error(NULL), "no group"),
	      "NULL group handles are refused, not dereferenced", NULL);
}

/* fills rank r's buffer with n ints r*1000 + i */
static fz_ptr rank_buffer(fz_group *g, int r, int n)
{
	fz_ptr p = 0;
	int v[64];
	for (int i = 0; i < n && i < 64; i++) v[i] = r * 1000 + i;
	if (fz_alloc(fz_group_device(g, r), 64 * sizeof(int), &p)) return 0;
	if (n) fz_copy_to_device(fz_group_device(g, r), p, v, (size_t)n * sizeof(int), NULL);
	return p;
}

static void test_collectives(void)
{
	char err[FZ_ERRMSG_SIZE];
	fz_group *g = NULL;
	setenv("FAKECUDA_DEVICES", "3", 1);
	if (!expect("a group of three", fz_group_open(3, NULL, &g, err), FZ_OK, "", NULL)) return;
	fz_ptr send[3], recv[3];
	for (int r = 0; r < 3; r++) send[r] = rank_buffer(g, r, 4), recv[r] = rank_buffer(g, r, 0);
	int rc = fz_group_allgather(g, send, recv, 4 * sizeof(int));
	int ok = rc == FZ_OK, got[64];
	for (int r = 0; ok && r < 3; r++) {
		fz_copy_to_host(fz_group_device(g, r), got, recv[r], 12 * sizeof(int), NULL);
		for (int i = 0; i < 12; i++) ok &= got[i] == (i / 4) * 1000 + i % 4;
	}
	check(ok, "all-gather: every rank holds every rank's part, in rank order", fz_group_error(g));
	size_t bytes[3] = {3 * sizeof(int), 0, 5 * sizeof(int)};
	rc = fz_group_allgatherv(g, send, bytes, recv);
	ok = rc == FZ_OK;
	static const int want[8] = {0, 1, 2, 2000, 2001, 2002, 2003, 0};
	for (int r = 0; ok && r < 3; r++) {
		fz_copy_to_host(fz_group_device(g, r), got, recv[r], 8 * sizeof(int), NULL);
		ok &= !memcmp(got, want, 7 * sizeof(int));
	}
	check(ok, "all-gather of unequal parts (3, 0, 5 ints): packed in rank order on every rank", fz_group_error(g));
	size_t none[3] = {0, 0, 0};
	expect("all-gather of nothing", fz_group_allgatherv(g, send, none, recv), FZ_OK, "", NULL);
	fz_ptr holes[3] = {send[0], 0, send[2]};
	expect("all-gather: a null buffer is refused", fz_group_allgather(g, holes, recv, 4), FZ_ERR_INVALID, fz_group_error(g),
	       "rank 1", NULL);
	expect("all-gather: NULL arrays", fz_group_allgatherv(g, send, NULL, recv), FZ_ERR_INVALID, fz_group_error(g), "NULL", NULL);

	/* fixed order: (1e16 + 1) - 1e16 is 0 in rank order, 1 in another */
	double dv[3] = {1e16, 1.0, -1e16}, d = -1;
	for (int r = 0; r < 3; r++) fz_copy_to_device(fz_group_device(g, r), send[r], &dv[r], 8, NULL);
	rc = fz_group_combine(g, send, "f64", FZ_COMBINE_SUM, &d);
	check(rc == FZ_OK && d == 0.0, "combine f64 sum: folded in rank order ((1e16 + 1) - 1e16 = 0)", fz_group_error(g));
	double d2 = -1;
	fz_group_combine(g, send, "f64", FZ_COMBINE_SUM, &d2);
	check(!memcmp(&d, &d2, 8), "combine: the same bits on a second run", NULL);
	rc = fz_group_combine(g, send, "f64", FZ_COMBINE_MIN, &d);
	check(rc == FZ_OK && d == -1e16, "combine f64 min", NULL);
	rc = fz_group_combine(g, send, "f64", FZ_COMBINE_MAX, &d);
	check(rc == FZ_OK && d == 1e16, "combine f64 max", NULL);
	fz_ptr two[3] = {send[0], 0, send[2]};
	rc = fz_group_combine(g, two, "f64", FZ_COMBINE_SUM, &d);
	check(rc == FZ_OK && d == 0.0, "combine: a rank without a partial takes no part", NULL);
	int iv[3] = {2147483647, 1, 5}, i = 0;
	for (int r = 0; r < 3; r++) fz_copy_to_device(fz_group_device(g, r), send[r], &iv[r], 4, NULL);
	rc = fz_group_combine(g, send, "i32", FZ_COMBINE_SUM, &i);
	check(rc == FZ_OK && i == (int)(2147483647u + 6u), "combine i32 sum wraps as the device's integer sums do (no UB)", NULL);
	float fv[3] = {1.5f, -2.0f, 0.25f}, f = 0;
	for (int r = 0; r < 3; r++) fz_copy_to_device(fz_group_device(g, r), send[r], &fv[r], 4, NULL);
	rc = fz_group_combine(g, send, "f32", FZ_COMBINE_SUM, &f);
	check(rc == FZ_OK && f == -0.25f, "combine f32 sum", NULL);
	long long lv[3] = {-5, 7, 1LL << 40}, l = 0;
	for (int r = 0; r < 3; r++) fz_copy_to_device(fz_group_device(g, r), send[r], &lv[r], 8, NULL);
	rc = fz_group_combine(g, send, "i64", FZ_COMBINE_MAX, &l);
	check(rc == FZ_OK && l == (1LL << 40), "combine i64 max", NULL);
	expect("combine: an unknown type", fz_group_combine(g, send, "f16", FZ_COMBINE_SUM, &d), FZ_ERR_INVALID, fz_group_error(g), "f16", NULL);
	expect("combine: an unknown operation", fz_group_combine(g, send, "f64", 7, &d), FZ_ERR_INVALID, fz_group_error(g), "operation 7", NULL);
	fz_ptr zero[3] = {0, 0, 0};
	expect("combine: no partial at all", fz_group_combine(g, zero, "f64", FZ_COMBINE_SUM, &d), FZ_ERR_INVALID, fz_group_error(g), "no rank", NULL);
	expect("fz_group_sync", fz_group_sync(g), FZ_OK, "", NULL);
	fz_artifact *arts[3];
	char m[4096];
	expect("fz_group_load: the artifact on every rank", fz_group_load(g, path2(m, gen_dir, "kl_divergence.manifest"), arts), FZ_OK, "", NULL);
	check(fz_artifact_device(arts[2]) == fz_group_device(g, 2), "rank 2's artifact is on rank 2's device", NULL);
	fz_group_unload(g, arts);
	expect("fz_group_load: a missing artifact", fz_group_load(g, path2(m, gen_dir, "none.manifest"), arts), FZ_ERR_IO, fz_group_error(g),
	       "rank 0", "none.manifest", NULL);
	check(!arts[0] && !arts[1] && !arts[2], "fz_group_load: none loaded after a failure", NULL);
	for (int r = 0; r < 3; r++) fz_free(fz_group_device(g, r), send[r]), fz_free(fz_group_device(g, r), recv[r]);
	fz_group_close(g);
	nothing_live("a group closed leaves nothing open");
	setenv("FAKECUDA_DEVICES", "2", 1);
}

/* a collective failing, and a peer lost: the group reports it, refuses
   further work with the same error, and close aborts the communicators */
static void test_failures(void)
{
	char err[FZ_ERRMSG_SIZE];
	static const struct { const char *var, *val, *what, *msg; int code; } t[] = {
		{"FAKENCCL_FAIL", "ncclAllGather", "a failing collective", "ncclAllGather: NCCL error 2", FZ_ERR_NCCL},
		{"FAKENCCL_FAIL", "ncclGroupEnd", "a failing group end", "ncclGroupEnd (all-gather): NCCL error 2", FZ_ERR_NCCL},
		{"FAKENCCL_LOST_AT", "1", "a device lost mid-run (NCCL's asynchronous error)", "remote process exited", FZ_ERR_NCCL},
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		fz_group *g = NULL;
		char name[256];
		if (fz_group_open(2, NULL, &g, err)) { check(0, "open for a failure test", err); continue; }
		fk.nccl_reset();
		fz_ptr send[2], recv[2];
		for (int r = 0; r < 2; r++) send[r] = rank_buffer(g, r, 4), recv[r] = rank_buffer(g, r, 0);
		setenv(t[i].var, t[i].val, 1);
		snprintf(name, sizeof name, "%s is reported", t[i].what);
		expect(name, fz_group_allgather(g, send, recv, 16), t[i].code, fz_group_error(g), t[i].msg, NULL);
		unsetenv(t[i].var);
		snprintf(name, sizeof name, "%s: the group refuses further collectives with the first error", t[i].what);
		expect(name, fz_group_allgatherv(g, send, (size_t[]){4, 4}, recv), t[i].code, fz_group_error(g), t[i].msg, NULL);
		snprintf(name, sizeof name, "%s: fz_group_sync says so too", t[i].what);
		expect(name, fz_group_sync(g), t[i].code, fz_group_error(g), t[i].msg, NULL);
		for (int r = 0; r < 2; r++) fz_free(fz_group_device(g, r), send[r]), fz_free(fz_group_device(g, r), recv[r]);
		fz_group_close(g);
		snprintf(name, sizeof name, "%s: close aborts both communicators", t[i].what);
		check(fk.nccl_aborts() == 2, name, NULL);
		snprintf(name, sizeof name, "%s: nothing left open", t[i].what);
		nothing_live(name);
	}
	/* the driver losing a device: a stream that cannot be synchronised */
	fz_group *g = NULL;
	if (!fz_group_open(2, NULL, &g, err)) {
		setenv("FAKECUDA_FAIL", "cuStreamSynchronize", 1);
		expect("a device lost (the driver's error at sync) names the device and rank", fz_group_sync(g), FZ_ERR_CUDA,
		       fz_group_error(g), "device 0 (rank 0)", "cuStreamSynchronize", NULL);
		unsetenv("FAKECUDA_FAIL");
		expect("after a lost device the group stays failed", fz_group_sync(g), FZ_ERR_CUDA, fz_group_error(g), "cuStreamSynchronize", NULL);
		fz_group_close(g);
		nothing_live("a group with a lost device closes cleanly");
	}
}

/* every driver and NCCL call failing in turn through a scripted session:
   an error code with a message each time, nothing left open */
static int session(void)
{
	char err[FZ_ERRMSG_SIZE] = "";
	fz_group *g = NULL;
	int rc = fz_group_open(2, NULL, &g, err);
	if (rc) return err[0] ? rc : -1;
	fz_artifact *arts[2] = {NULL, NULL};
	fz_ptr send[2] = {0, 0}, recv[2] = {0, 0};
	char m[4096];
	rc = fz_group_load(g, path2(m, gen_dir, "relu.manifest"), arts);
	for (int r = 0; !rc && r < 2; r++) {
		rc = fz_alloc(fz_group_device(g, r), 64, &send[r]);
		if (!rc) rc = fz_alloc(fz_group_device(g, r), 128, &recv[r]);
		if (!rc) rc = fz_memset(fz_group_device(g, r), send[r], 0, 64, NULL);
	}
	if (!rc) rc = fz_group_allgather(g, send, recv, 64);
	if (!rc) rc = fz_group_allgatherv(g, send, (size_t[]){8, 16}, recv);
	double d;
	if (!rc) rc = fz_group_combine(g, send, "f64", FZ_COMBINE_SUM, &d);
	if (!rc) rc = fz_group_sync(g);
	if (rc && getenv("TEST_GROUP_DEBUG")) printf("session: %d %s\n", rc, fz_group_error(g));
	if (rc && !fz_group_error(g)[0]) {
		int r0 = 0;
		for (int r = 0; r < 2; r++) r0 |= fz_device_error(fz_group_device(g, r))[0] != 0;
		if (!r0) rc = -1;
	}
	/* a fault injected into the clean-up (a free that cannot make its
	   context current) ends the sweep: the work itself went through */
	if (!rc && (fk.cuda_injected() || fk.nccl_injected())) rc = 0;
	long before = fk.cuda_injected() + fk.nccl_injected();
	for (int r = 0; r < 2; r++) { /* a free refused by the injected fault is tried again */
		if (fz_free(fz_group_device(g, r), send[r])) fz_free(fz_group_device(g, r), send[r]);
		if (fz_free(fz_group_device(g, r), recv[r])) fz_free(fz_group_device(g, r), recv[r]);
	}
	fz_group_unload(g, arts);
	fz_group_close(g);
	if (!rc && fk.cuda_injected() + fk.nccl_injected() > before) rc = -2;
	return rc;
}

static void test_fault_sweep(void)
{
	char name[128], at[16];
	int bad = 0, failures = 0, n;
	for (n = 1; n < 400; n++) {
		snprintf(at, sizeof at, "%d", n);
		fk.cuda_reset(), fk.nccl_reset();
		setenv("FAKECUDA_FAIL_AT", at, 1);
		int rc = session();
		unsetenv("FAKECUDA_FAIL_AT");
		if (rc == -2) break; /* past the work: the fault hit the clean-up */
		if (rc < 0 || fk.cuda_live() || fk.nccl_live()) {
			bad++;
			if (getenv("TEST_GROUP_DEBUG")) printf("rc %d\n", rc);
			snprintf(name, sizeof name, "driver call %d failing: an error with a message, nothing left open", n);
			check(0, name, fk.cuda_describe());
		}
		if (rc == 0) break; /* past the session's last call */
		failures++;
	}
	snprintf(name, sizeof name, "every driver call of a group session failing in turn (%d calls): reported, nothing left open", failures);
	check(!bad && failures > 10, name, NULL);
	bad = failures = 0;
	for (n = 1; n < 100; n++) {
		snprintf(at, sizeof at, "%d", n);
		fk.cuda_reset(), fk.nccl_reset();
		setenv("FAKENCCL_FAIL_AT", at, 1);
		int rc = session();
		unsetenv("FAKENCCL_FAIL_AT");
		if (rc == -2) break;
		if (rc < 0 || fk.cuda_live() || fk.nccl_live()) {
			bad++;
			char d[512];
			snprintf(d, sizeof d, "rc %d; driver: %s; NCCL: %d live", rc, fk.cuda_describe(), fk.nccl_live());
			snprintf(name, sizeof name, "NCCL call %d failing: an error with a message, nothing left open", n);
			check(0, name, d);
		}
		if (rc == 0) break;
		failures++;
	}
	snprintf(name, sizeof name, "every NCCL call of a group session failing in turn (%d calls): reported, nothing left open", failures);
	check(!bad && failures >= 5, name, NULL);
}

/* test_exchange.c */
void test_exchange(void);
void test_exchange_sweep(const char *var, void (*reset)(void), long (*injected)(void));
/* for test_shard.c */
void test_shard(void);
void test_shard_sweep(const char *var, void (*reset)(void), long (*injected)(void));
void test_shard_retry(void (*reset)(void));
long fake_launches(void);
const void *fake_last_args(size_t *n);
int fakes_live(void);
long fake_launches(void) { return fk.cuda_launches(); }
long fake_urgent_streams(void);
long fake_urgent_streams(void) { return urgent_fn(); }
const void *fake_last_args(size_t *n) { return last_args_fn(n); }
int fakes_live(void) { return fk.cuda_live() + fk.nccl_live(); }
const char *fakes_describe(void);
const char *fakes_describe(void)
{
	static char d[512];
	snprintf(d, sizeof d, "driver: %s; NCCL: %d live", fk.cuda_describe(), fk.nccl_live());
	return d;
}
static void resets(void) { fk.cuda_reset(), fk.nccl_reset(); }
static long injections(void) { return fk.cuda_injected() + fk.nccl_injected(); }

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "--load-nccl")) { /* the real library, named by FUSERUN_NCCL */
		char err[FZ_ERRMSG_SIZE];
		const fr_nccl *api;
		if (fr_nccl_get(&api, err)) return printf("%s\n", err), 1;
		printf("loaded NCCL %d.%d.%d\n", api->version / 10000, api->version / 100 % 100, api->version % 100);
		return 0;
	}
	if (argc != 6) {
		fprintf(stderr, "usage: test_group GENERATED_DIR FAKE_LIBCUDA FAKE_LIBNCCL NOT_A_LIBRARY TMP_DIR\n");
		return 2;
	}
	gen_dir = argv[1], fake_so = argv[2], fake_nccl = argv[3], tmp_dir = argv[5];
	setvbuf(stdout, NULL, _IOLBF, 0);
	setenv("FUSERUN_LIBCUDA", fake_so, 1);
	unsetenv("FAKECUDA_FAIL"), unsetenv("FAKECUDA_FAIL_AT"), unsetenv("FAKENCCL_FAIL"), unsetenv("FAKENCCL_FAIL_AT");
	unsetenv("FAKENCCL_LOST_AT");
	bind_fakes();
	test_range();
	test_no_nccl(argv[4]);
	test_open();
	test_collectives();
	test_failures();
	test_fault_sweep();
	setenv("FAKECUDA_DEVICES", "3", 1);
	test_shard();
	setenv("FAKECUDA_DEVICES", "2", 1);
	test_shard_sweep("FAKECUDA_FAIL_AT", resets, injections);
	test_shard_retry(resets);
	test_shard_sweep("FAKENCCL_FAIL_AT", resets, injections);
	setenv("FAKECUDA_DEVICES", "3", 1);
	test_exchange();
	setenv("FAKECUDA_DEVICES", "2", 1);
	test_exchange_sweep("FAKECUDA_FAIL_AT", resets, injections);
	test_exchange_sweep("FAKENCCL_FAIL_AT", resets, injections);
	printf("test_group: %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
