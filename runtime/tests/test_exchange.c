/* The exchange of fixed-capacity lists on the devices (exchange.c), on the
 * fake driver and the fake NCCL (linked into test_group): the counts'
 * history and every rank's padded list in rank order on every rank, a
 * count past the capacity reported as FZ_ERR_OVERFLOW naming its step and
 * rank, the refusals, a failing collective, one rank alone, and every
 * driver and NCCL call of an exchange failing in turn. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

int fakes_live(void);
const char *fakes_describe(void);

enum { R = 3, CAP = 4, STEPS = 3, SENTINEL = -7 };

/* rank r's list at step s: n items r*100 + s*10 + i, then the sentinel */
static int put_list(fz_group *g, fz_exchange *x, int r, int s, int n, fz_ptr send)
{
	int v[CAP];
	for (int i = 0; i < CAP; i++) v[i] = i < n ? r * 100 + s * 10 + i : SENTINEL;
	fz_device *d = fz_group_device(g, r);
	return fz_copy_to_device(d, send, v, sizeof v, NULL) || fz_copy_to_device(d, fz_exchange_count(x, r, s), &n, 4, NULL);
}

/* every rank's recv holds every rank's list of step s, in rank order */
static int lists_ok(fz_group *g, const fz_ptr *recv, int s, const int *n)
{
	for (int r = 0; r < fz_group_size(g); r++) {
		int got[R * CAP];
		if (fz_copy_to_host(fz_group_device(g, r), got, recv[r], sizeof got, NULL)) return 0;
		for (int k = 0; k < R; k++)
			for (int i = 0; i < CAP; i++)
				if (got[k * CAP + i] != (i < n[k] ? k * 100 + s * 10 + i : SENTINEL)) return 0;
	}
	return 1;
}

static void exchange_steps(fz_group *g, fz_exchange *x, fz_ptr *send, fz_ptr *recv)
{
	static const int n[STEPS][R] = {{1, 2, 3}, {3, 0, 4}, {2, 5, 1}}; /* step 2, rank 1: past the capacity */
	int ok = 1, counts[STEPS * R];
	for (int s = 0; s < 2; s++) {
		for (int r = 0; r < R; r++) ok &= !put_list(g, x, r, s, n[s][r], send[r]);
		ok &= fz_exchange_post(x, s, send, recv) == FZ_OK && fz_exchange_wait(x) == FZ_OK;
		ok &= lists_ok(g, recv, s, n[s]);
	}
	check(ok, "exchange: every rank's padded list, in rank order, on every rank, step after step", fz_group_error(g));
	int rc = fz_exchange_counts(x, 2, counts);
	check(rc == FZ_OK && !memcmp(counts, n, sizeof(int) * 2 * R), "exchange: the counts' history, step by step in rank order",
	      fz_group_error(g));
	expect("exchange: a step posted twice is refused", fz_exchange_post(x, 1, send, recv), FZ_ERR_INVALID, fz_group_error(g),
	       "step 1", "each posted once", NULL);
	fz_ptr holes[R] = {send[0], 0, send[2]};
	expect("exchange: a null buffer is refused, naming the rank", fz_exchange_post(x, 2, holes, recv), FZ_ERR_INVALID,
	       fz_group_error(g), "rank 1", NULL);
	float ms = -1;
	check(fz_exchange_elapsed(x, 2, 1, &ms) == FZ_OK && ms >= 0, "exchange: a timed step's time on its stream", fz_group_error(g));
	expect("exchange: the time of a step not posted is refused", fz_exchange_elapsed(x, 0, 2, &ms), FZ_ERR_INVALID, fz_group_error(g),
	       "step 2", NULL);
	check(fz_exchange_count(x, 3, 0) == 0 && fz_exchange_count(x, 0, STEPS) == 0, "exchange: no count cell for a bad rank or step", NULL);

	/* a count past the capacity: the list sent is cut, and the history says so */
	for (int r = 0; r < R; r++) ok &= !put_list(g, x, r, 2, n[2][r] < CAP ? n[2][r] : CAP, send[r]);
	int five = 5;
	fz_copy_to_device(fz_group_device(g, 1), fz_exchange_count(x, 1, 2), &five, 4, NULL);
	ok &= fz_exchange_post(x, 2, send, recv) == FZ_OK;
	check(ok, "exchange: a step whose count is past the capacity is posted (the device does not stop)", fz_group_error(g));
	expect("exchange: a count past the capacity is FZ_ERR_OVERFLOW naming the step and rank", fz_exchange_counts(x, STEPS, counts),
	       FZ_ERR_OVERFLOW, fz_group_error(g), "step 2, rank 1: 5 items", "capacity of 4", NULL);
	expect("exchange: the history is read up to a step only", fz_exchange_counts(x, 2, NULL), FZ_OK, fz_group_error(g), NULL);
}

/* every rank's recv holds every rank's first `cap` items of step s, in slots of cap */
static int lists_at(fz_group *g, const fz_ptr *recv, int s, const int *n, int cap)
{
	for (int r = 0; r < fz_group_size(g); r++) {
		int got[R * CAP];
		if (fz_copy_to_host(fz_group_device(g, r), got, recv[r], sizeof(int) * (size_t)(R * cap), NULL)) return 0;
		for (int k = 0; k < R; k++)
			for (int i = 0; i < cap; i++)
				if (got[k * cap + i] != (i < n[k] ? k * 100 + s * 10 + i : SENTINEL)) return 0;
	}
	return 1;
}

/* a capacity a step, the counts on the host, an overflow found there and
   redone, the counts first */
static void exchange_sized(fz_group *g, fz_ptr *send, fz_ptr *recv)
{
	static const int n[3][R] = {{1, 2, 1}, {3, 0, 1}, {2, 4, 0}};
	fz_exchange *x = NULL;
	int c[R] = {-1, -1, -1}, ok = !fz_exchange_create(g, 4, CAP, 3, FZ_EXCHANGE_HOST_COUNTS, &x);
	for (int r = 0; ok && r < R; r++) ok = !put_list(g, x, r, 0, n[0][r], send[r]);
	ok = ok && !fz_exchange_post_sized(x, 0, 2, send, recv) && !fz_exchange_host_counts(x, 0, c);
	check(ok && !memcmp(c, n[0], sizeof c) && lists_at(g, recv, 0, n[0], 2) && fz_exchange_capacity(x, 0) == 2,
	      "exchange sized: a step at a capacity of its own (2 of 4): its lists in slots of 2, its counts on the host", fz_group_error(g));
	expect("exchange sized: a capacity past the exchange's is refused", fz_exchange_post_sized(x, 1, 5, send, recv), FZ_ERR_INVALID,
	       fz_group_error(g), "capacity of 5", NULL);
	expect("exchange sized: counts not posted are not on the host", fz_exchange_host_counts(x, 1, c), FZ_ERR_INVALID, fz_group_error(g),
	       "step 1", NULL);
	/* step 1, rank 0: 3 items at a capacity of 2: cut, seen on the host, redone at 3 */
	for (int r = 0; ok && r < R; r++) ok = !put_list(g, x, r, 1, n[1][r], send[r]);
	ok = ok && !fz_exchange_post_sized(x, 1, 2, send, recv) && !fz_exchange_host_counts(x, 1, c);
	check(ok && c[0] == 3 && c[0] > fz_exchange_capacity(x, 1) && lists_at(g, recv, 1, (int[]){2, 0, 1}, 2),
	      "exchange sized: a count past the step's capacity reaches the host, the list cut to it", fz_group_error(g));
	expect("exchange sized: the history names the cut step", fz_exchange_counts(x, 2, NULL), FZ_ERR_OVERFLOW, fz_group_error(g),
	       "step 1, rank 0: 3 items", "capacity of 2", NULL);
	expect("exchange sized: a rewind past the next step is refused", fz_exchange_rewind(x, 3), FZ_ERR_INVALID, fz_group_error(g),
	       "to step 3", NULL);
	ok = !fz_exchange_rewind(x, 1) && !fz_exchange_post_sized(x, 1, 3, send, recv) && !fz_exchange_wait(x);
	check(ok && lists_at(g, recv, 1, n[1], 3) && fz_exchange_counts(x, 2, NULL) == FZ_OK,
	      "exchange sized: rewound and posted again at the largest count, the step's lists whole and the history clean", fz_group_error(g));
	/* step 2: the counts first, the lists at their largest */
	for (int r = 0; ok && r < R; r++) ok = !put_list(g, x, r, 2, n[2][r], send[r]);
	ok = ok && !fz_exchange_post_counts(x, 2);
	expect("exchange sized: a wait while a step's lists are due is refused", fz_exchange_wait(x), FZ_ERR_INVALID, fz_group_error(g),
	       "step 2's lists are due", NULL);
	expect("exchange sized: a step's counts again while its lists are due is refused", fz_exchange_post_counts(x, 2), FZ_ERR_INVALID,
	       fz_group_error(g), "its lists are due", NULL);
	ok = ok && !fz_exchange_host_counts(x, 2, c) && !fz_exchange_post_lists(x, 2, 4, send, recv) && !fz_exchange_wait(x);
	check(ok && !memcmp(c, n[2], sizeof c) && lists_at(g, recv, 2, n[2], 4) && fz_exchange_counts(x, 3, NULL) == FZ_OK,
	      "exchange sized: the counts first, read on the host, then the lists at the largest count", fz_group_error(g));
	fz_exchange_destroy(x);
	x = NULL;
	ok = !fz_exchange_create(g, 4, CAP, 1, 0, &x) && !fz_exchange_post(x, 0, send, recv);
	expect("exchange sized: host counts without FZ_EXCHANGE_HOST_COUNTS are refused", ok ? fz_exchange_host_counts(x, 0, c) : -1,
	       FZ_ERR_INVALID, fz_group_error(g), "FZ_EXCHANGE_HOST_COUNTS", NULL);
	fz_exchange_destroy(x);
}

/* one rank in all: the count copied on the device; the list too unless send is recv */
static void exchange_alone(void)
{
	char err[FZ_ERRMSG_SIZE];
	fz_group *g = NULL;
	fz_exchange *x = NULL;
	if (!expect("exchange alone: a group of one", fz_group_open(1, NULL, &g, err), FZ_OK, "", NULL)) return;
	fz_device *d = fz_group_device(g, 0);
	fz_ptr a = 0, b = 0;
	int v[CAP] = {4, 5, 6, 7}, got[CAP] = {0}, n = 3, c = -1;
	int ok = !fz_exchange_create(g, 4, CAP, 2, 0, &x) && !fz_alloc(d, sizeof v, &a) && !fz_alloc(d, sizeof v, &b) &&
	         !fz_memset(d, b, 0, sizeof v, NULL) && !fz_copy_to_device(d, a, v, sizeof v, NULL) &&
	         !fz_copy_to_device(d, fz_exchange_count(x, 0, 0), &n, 4, NULL) && !fz_exchange_post(x, 0, &a, &b) &&
	         !fz_exchange_counts(x, 1, &c) && !fz_copy_to_host(d, got, b, sizeof got, NULL);
	check(ok && c == 3 && !memcmp(got, v, sizeof v), "exchange alone: the count into the history, the list copied", fz_group_error(g));
	fz_memset(d, b, 0, sizeof v, NULL);
	n = -3; /* what no kernel writes: an unwritten count */
	ok = !fz_copy_to_device(d, fz_exchange_count(x, 0, 1), &n, 4, NULL) && !fz_exchange_post(x, 1, &a, &a) && !fz_group_sync(g) &&
	     !fz_copy_to_host(d, got, b, sizeof got, NULL);
	check(ok && got[0] == 0, "exchange alone: send == recv copies nothing", fz_group_error(g));
	expect("exchange alone: a negative count is refused, naming the step", fz_exchange_counts(x, 2, NULL), FZ_ERR_INVALID,
	       fz_group_error(g), "step 1, rank 0: a count of -3", NULL);
	expect("exchange alone: the time of an untimed exchange is refused", fz_exchange_elapsed(x, 0, 0, &(float){0}), FZ_ERR_INVALID,
	       fz_group_error(g), "FZ_EXCHANGE_TIMED", NULL);
	fz_exchange_destroy(x);
	fz_free(d, a), fz_free(d, b);
	fz_group_close(g);
}

long fake_urgent_streams(void);

/* FZ_EXCHANGE_URGENT: the exchange's streams at the context's greatest
   priority (the fake's range is 0 to -5), a stream a rank; without it
   none is (spiking_mgpu's SPIKING_MGPU_URGENT=1 depends on it) */
static void exchange_priority(void)
{
	char err[FZ_ERRMSG_SIZE];
	fz_group *g = NULL;
	fz_exchange *x = NULL;
	if (!expect("exchange priority: a group of three", fz_group_open(R, NULL, &g, err), FZ_OK, "", NULL)) return;
	long before = fake_urgent_streams();
	int ok = !fz_exchange_create(g, 4, CAP, 2, 0, &x);
	check(ok && fake_urgent_streams() == before, "exchange priority: a plain exchange's streams at the default priority",
	      fz_group_error(g));
	fz_exchange_destroy(x), x = NULL;
	before = fake_urgent_streams();
	ok = !fz_exchange_create(g, 4, CAP, 2, FZ_EXCHANGE_URGENT, &x);
	check(ok && fake_urgent_streams() - before == R, "exchange priority: FZ_EXCHANGE_URGENT's streams at the greatest priority, one a rank",
	      fz_group_error(g));
	fz_exchange_destroy(x);
	fz_group_close(g);
}

void test_exchange(void)
{
	char err[FZ_ERRMSG_SIZE];
	fz_group *g = NULL;
	fz_exchange *x = NULL;
	if (!expect("exchange: a group of three", fz_group_open(R, NULL, &g, err), FZ_OK, "", NULL)) return;
	expect("exchange: a capacity of 0 is refused", fz_exchange_create(g, 4, 0, 2, 0, &x), FZ_ERR_INVALID, fz_group_error(g),
	       "capacity 0", NULL);
	expect("exchange: unknown flags are refused", fz_exchange_create(g, 4, 4, 2, 8, &x), FZ_ERR_INVALID, fz_group_error(g), "flags 8",
	       NULL);
	check(!x && fz_exchange_post(NULL, 0, NULL, NULL) == FZ_ERR_INVALID && fz_exchange_wait(NULL) == FZ_ERR_INVALID,
	      "exchange: NULL handles are refused", NULL);
	fz_exchange_destroy(NULL);
	fz_ptr send[R] = {0}, recv[R] = {0};
	int ok = !fz_exchange_create(g, 4, CAP, STEPS, FZ_EXCHANGE_TIMED, &x);
	for (int r = 0; ok && r < R; r++)
		ok = !fz_alloc(fz_group_device(g, r), CAP * 4, &send[r]) && !fz_alloc(fz_group_device(g, r), R * CAP * 4, &recv[r]);
	if (check(ok, "exchange: created on three ranks", fz_group_error(g))) exchange_steps(g, x, send, recv);
	fz_exchange_destroy(x);
	if (ok) exchange_sized(g, send, recv);
	x = NULL;
	/* a failing collective: named, the group failed, the communicators aborted */
	setenv("FAKENCCL_FAIL", "ncclAllGather", 1);
	ok = !fz_exchange_create(g, 4, CAP, STEPS, 0, &x);
	expect("exchange: a failing collective is reported, naming the rank and step", ok ? fz_exchange_post(x, 0, send, recv) : -1,
	       FZ_ERR_NCCL, fz_group_error(g), "rank 0: ncclAllGather (exchange, step 0)", NULL);
	unsetenv("FAKENCCL_FAIL");
	expect("exchange: after a failed collective the exchange refuses with the first error", fz_exchange_counts(x, 1, NULL), FZ_ERR_NCCL,
	       fz_group_error(g), "ncclAllGather (exchange", NULL);
	fz_exchange_destroy(x);
	for (int r = 0; r < R; r++) fz_free(fz_group_device(g, r), send[r]), fz_free(fz_group_device(g, r), recv[r]);
	fz_group_close(g);
	exchange_alone();
	exchange_priority();
	check(fakes_live() == 0, "exchange: nothing left open", NULL);
}

static const char *sweep_var;

/* an exchange session on two ranks: every call of its work failing in
   turn (the clean-up runs without the fault: a refused destroy would leak
   into the tests after) */
static int session(void)
{
	char err[FZ_ERRMSG_SIZE] = "";
	fz_group *g = NULL;
	fz_exchange *x = NULL;
	fz_ptr send[2] = {0, 0}, recv[2] = {0, 0};
	int rc = fz_group_open(2, NULL, &g, err);
	if (rc) return err[0] ? rc : -1;
	rc = fz_exchange_create(g, 4, CAP, 2, FZ_EXCHANGE_TIMED | FZ_EXCHANGE_HOST_COUNTS, &x);
	for (int r = 0; !rc && r < 2; r++) {
		rc = fz_alloc(fz_group_device(g, r), CAP * 4, &send[r]);
		if (!rc) rc = fz_alloc(fz_group_device(g, r), 2 * CAP * 4, &recv[r]);
		if (!rc) rc = fz_memset32(fz_group_device(g, r), send[r], 1, CAP, fz_group_stream(g, r));
	}
	int c[2];
	for (int s = 0; !rc && s < 2; s++) {
		rc = s ? fz_exchange_post_sized(x, s, CAP - 1, send, recv) : fz_exchange_post(x, s, send, recv);
		if (!rc) rc = fz_exchange_host_counts(x, s, c);
		if (!rc) rc = fz_exchange_wait(x);
	}
	if (!rc) rc = fz_exchange_counts(x, 2, NULL);
	float ms;
	if (!rc) rc = fz_exchange_elapsed(x, 1, 1, &ms);
	/* an error without a message (the group's, or the device's for the buffers' calls) */
	if (rc && !fz_group_error(g)[0] && !fz_device_error(fz_group_device(g, 0))[0] && !fz_device_error(fz_group_device(g, 1))[0]) rc = -1;
	unsetenv(sweep_var);
	fz_exchange_destroy(x);
	for (int r = 0; r < 2; r++) fz_free(fz_group_device(g, r), send[r]), fz_free(fz_group_device(g, r), recv[r]);
	fz_group_close(g);
	return rc;
}

void test_exchange_sweep(const char *var, void (*reset)(void), long (*injected)(void))
{
	char name[160], at[16];
	int bad = 0, failures = 0;
	sweep_var = var;
	for (int n = 1; n < 600; n++) {
		snprintf(at, sizeof at, "%d", n);
		reset();
		setenv(var, at, 1);
		int rc = session();
		unsetenv(var);
		if (!injected()) break; /* past the session's work */
		if (rc < 0 || fakes_live()) {
			char d[64];
			bad++;
			snprintf(name, sizeof name, "exchange: %s=%d: an error with a message, nothing left open", var, n);
			snprintf(d, sizeof d, "rc %d, %d live", rc, fakes_live());
			if (getenv("TEST_GROUP_DEBUG")) printf("%s\n", fakes_describe());
			check(0, name, d);
		}
		failures += rc != 0;
	}
	snprintf(name, sizeof name, "exchange: every call (%s) of an exchange session failing in turn (%d failed): reported, nothing left open",
	         var, failures);
	check(!bad && failures > 3, name, NULL);
}
