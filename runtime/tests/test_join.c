/* One process per GPU (join.c) on the fake driver and the fake NCCL, whose
 * ranks exchange bytes through files (runtime/tests/fake_nccl.c). Each
 * process of a job is one rank, started by fuserun-launch from
 * runtime/tests/join.sh:
 *   test_join DIR run      collectives, the combination of partials, a
 *                          sharded fusion's split output gathered, and the
 *                          exchange of padded lists (fz_exchange, a count
 *                          past the capacity on rank 1): every rank checks
 *                          every other rank's bytes; PASS/FAIL lines
 *   test_join DIR loop K   K rounds of an all-gather and a sync (a peer that
 *                          dies mid-run: the error, naming it, is printed)
 *   test_join DIR join     joins, prints "joined rank R of W", leaves
 *   test_join DIR id       prints a fresh unique id (fz_nccl_unique_id)
 * A failure to join or of a round prints "rank R: CODE (strerror): message"
 * and exits 3; failed checks exit 1. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuserun.h"
#include "gemv_axpby_sum.h"
#include "testutil.h"

FZ_SHARD_VARIANT(gemv_axpby_sum, fused)

static int rank, world;

static int report(const char *what, int rc, const char *msg)
{
	printf("rank %d: %s: code %d (%s): %s\n", rank, what, rc, fz_strerror(rc), msg);
	return 3;
}

/* every rank a part of its own size and byte; all-gathers; partials combined */
static void test_collectives(fz_group *g)
{
	fz_device *d = fz_group_device(g, 0);
	size_t bytes[FZ_MAX_WORLD], total = 0, off = 0;
	for (int r = 0; r < world; r++) bytes[r] = 10 * (size_t)(r + 1), total += bytes[r];
	unsigned char mine[256], all[4096], want[4096];
	memset(mine, 'A' + rank, bytes[rank]);
	for (int r = 0; r < world; r++) memset(want + off, 'A' + r, bytes[r]), off += bytes[r];
	fz_ptr send = 0, recv = 0, part = 0;
	int rc = fz_alloc(d, 256, &send) || fz_alloc(d, 4096, &recv) || fz_alloc(d, 8, &part);
	rc = rc ? rc : fz_copy_to_device(d, send, mine, bytes[rank], NULL);
	rc = rc ? rc : fz_group_allgatherv(g, &send, bytes, &recv);
	rc = rc ? rc : fz_group_sync(g);
	rc = rc ? rc : fz_copy_to_host(d, all, recv, total, NULL);
	check(!rc && !memcmp(all, want, total), "fz_group_allgatherv across processes: every rank's part in rank order", fz_group_error(g));
	long long v = 1000 + rank, got[FZ_MAX_WORLD];
	rc = fz_copy_to_device(d, send, &v, 8, NULL);
	rc = rc ? rc : fz_group_allgather(g, &send, &recv, 8);
	rc = rc ? rc : fz_group_sync(g);
	rc = rc ? rc : fz_copy_to_host(d, got, recv, 8 * (size_t)world, NULL);
	int same = !rc;
	for (int r = 0; same && r < world; r++) same = got[r] == 1000 + r;
	check(same, "fz_group_allgather across processes", fz_group_error(g));
	double x = 0.1 * (rank + 1), sum = 0, want_sum = 0;
	for (int r = 0; r < world; r++) want_sum += 0.1 * (r + 1); /* rank order: the combination's order */
	rc = fz_copy_to_device(d, part, &x, 8, NULL);
	rc = rc ? rc : fz_group_combine(g, &part, "f64", FZ_COMBINE_SUM, &sum);
	check(!rc && !memcmp(&sum, &want_sum, 8), "fz_group_combine across processes: every rank's partial, in rank order", fz_group_error(g));
	int k = 7 * rank, mx = -1;
	rc = fz_copy_to_device(d, part, &k, 4, NULL);
	rc = rc ? rc : fz_group_combine(g, &part, "i32", FZ_COMBINE_MAX, &mx);
	check(!rc && mx == 7 * (world - 1), "fz_group_combine across processes: i32 max", fz_group_error(g));
	fz_free(d, send), fz_free(d, recv), fz_free(d, part);
}

/* gemv_axpby_sum over M: this rank's range of the job's; its rows of y and
   its partial of s written as a kernel would (the fake runs none); get
   brings back every rank's rows and the combined s in every process */
static void test_sharded(fz_group *g, const char *dir)
{
	enum { M = 1001, N = 3 };
	char m[4096], err[FZ_ERRMSG_SIZE] = "";
	fz_gemv_axpby_sum_args a;
	memset(&a, 0, sizeof a);
	a.n_M = M, a.n_N = N;
	fz_sharded *s = NULL;
	int rc = fz_sharded_create(g, path2(m, dir, "gemv_axpby_sum.manifest"), "M", FZ_gemv_axpby_sum_LAYOUT, &a, sizeof a,
	                           fz_gemv_axpby_sum_fused_scratch_v, fz_gemv_axpby_sum_fused_ops_v, &s, err);
	if (!check(!rc, "fz_sharded_create on a joined group", err)) return;
	long long lo, hi, wlo, whi;
	fz_sharded_range(s, 0, &lo, &hi);
	fz_group_range(M, world, rank, &wlo, &whi);
	check(lo == wlo && hi == whi, "a joined rank shards its part of the job's range", "");
	static float z[M], y[M], rows[M];
	for (int i = 0; i < M; i++) z[i] = (float)i;
	rc = fz_sharded_put(s, "z", z, sizeof z);
	rc = rc ? rc : fz_sharded_run(s);
	check(!rc, "fz_sharded_put and fz_sharded_run on a joined group", fz_sharded_error(s));
	for (long long i = lo; i < hi; i++) rows[i - lo] = 2.0f * (float)i + 1.0f;
	float part = 1.5f + (float)rank, sum = 0, want_sum = 0;
	for (int r = 0; r < world; r++) want_sum += 1.5f + (float)r;
	fz_device *d = fz_group_device(g, 0);
	rc = rc ? rc : fz_copy_to_device(d, fz_sharded_ptr(s, "y", 0), rows, (size_t)(hi - lo) * 4, NULL);
	rc = rc ? rc : fz_copy_to_device(d, fz_sharded_ptr(s, "s", 0), &part, 4, NULL);
	rc = rc ? rc : fz_sharded_get(s, "y", y, sizeof y);
	int same = !rc;
	for (int i = 0; same && i < M; i++) same = y[i] == 2.0f * (float)i + 1.0f;
	check(same, "fz_sharded_get of a split output: every process gets every rank's rows", fz_sharded_error(s));
	rc = rc ? rc : fz_sharded_get(s, "s", &sum, 4);
	check(!rc && sum == want_sum, "fz_sharded_get of a reduction: the partials of every process, combined", fz_sharded_error(s));
	fz_sharded_destroy(s);
}

/* fz_exchange across processes: two steps of lists of capacity 3 (rank r
   sends r + 1 items at step 0, padded with -1), the counts' history, and
   at step 1 rank 1 counting 4: every process reports the overflow, naming
   step 1 and rank 1 */
static void test_exchange(fz_group *g)
{
	enum { CAP = 3 };
	fz_device *d = fz_group_device(g, 0);
	fz_exchange *x = NULL;
	fz_ptr send = 0, recv = 0;
	int rc = fz_exchange_create(g, 4, CAP, 2, 0, &x) || fz_alloc(d, CAP * 4, &send) || fz_alloc(d, (size_t)world * CAP * 4, &recv);
	int v[CAP], n = rank + 1 < CAP ? rank + 1 : CAP, got[FZ_MAX_WORLD * CAP], counts[2 * FZ_MAX_WORLD];
	for (int i = 0; i < CAP; i++) v[i] = i < n ? 10 * rank + i : -1;
	rc = rc || fz_copy_to_device(d, send, v, sizeof v, NULL) || fz_copy_to_device(d, fz_exchange_count(x, 0, 0), &n, 4, NULL);
	rc = rc || fz_exchange_post(x, 0, &send, &recv) || fz_exchange_counts(x, 1, counts);
	rc = rc || fz_copy_to_host(d, got, recv, (size_t)world * CAP * 4, NULL);
	int same = !rc;
	for (int k = 0; same && k < world; k++) {
		int nk = k + 1 < CAP ? k + 1 : CAP;
		same = counts[k] == nk;
		for (int i = 0; same && i < CAP; i++) same = got[k * CAP + i] == (i < nk ? 10 * k + i : -1);
	}
	check(same, "fz_exchange across processes: every rank's count and padded list, in rank order", fz_group_error(g));
	n = rank == 1 ? CAP + 1 : 0;
	rc = rc || fz_copy_to_device(d, fz_exchange_count(x, 0, 1), &n, 4, NULL) || fz_exchange_post(x, 1, &send, &recv);
	rc = rc ? rc : fz_exchange_counts(x, 2, counts);
	check(rc == FZ_ERR_OVERFLOW && strstr(fz_group_error(g), "step 1, rank 1: 4 items"),
	      "fz_exchange across processes: a count past the capacity is an error in every process, naming step and rank", fz_group_error(g));
	fz_exchange_destroy(x);
	fz_free(d, send), fz_free(d, recv);
}

/* rounds of an all-gather and a sync: a peer killed mid-run ends this in an
   error (bounded), never a hang */
static int rounds(fz_group *g, int k)
{
	fz_device *d = fz_group_device(g, 0);
	fz_ptr send = 0, recv = 0;
	int rc = fz_alloc(d, 8, &send);
	if (!rc) rc = fz_alloc(d, 8 * (size_t)world, &recv);
	if (rc) return fz_free(d, send), report("alloc", rc, fz_device_error(d));
	for (int i = 0; !rc && i < k; i++) {
		rc = fz_group_allgather(g, &send, &recv, 8);
		if (!rc) rc = fz_group_sync(g);
		if (rc) {
			char what[32];
			snprintf(what, sizeof what, "round %d", i);
			report(what, rc, fz_group_error(g));
		}
	}
	fz_free(d, send), fz_free(d, recv);
	if (!rc) printf("rank %d: %d rounds done\n", rank, k);
	return rc ? 3 : 0;
}

int main(int argc, char **argv)
{
	if (argc < 3) return fprintf(stderr, "usage: test_join DIR run|loop K|join\n"), 2;
	setvbuf(stdout, NULL, _IOLBF, 0);
	char err[FZ_ERRMSG_SIZE] = "", hex[2 * 128 + 1];
	fz_group *g = NULL;
	if (!strcmp(argv[2], "id")) {
		int rc = fz_nccl_unique_id(hex, err);
		return rc ? report("fz_nccl_unique_id", rc, err) : (printf("%s\n", hex), 0);
	}
	const char *r = getenv("RANK");
	rank = r ? atoi(r) : -1;
	int rc = fz_group_join(NULL, &g, err);
	if (rc) return report("fz_group_join", rc, err);
	rank = fz_group_rank(g, 0), world = fz_group_ranks(g);
	if (!strcmp(argv[2], "join")) {
		printf("joined rank %d of %d (group size %d)\n", rank, world, fz_group_size(g));
	} else if (!strcmp(argv[2], "loop") && argc > 3) {
		rc = rounds(g, atoi(argv[3]));
	} else {
		test_collectives(g);
		test_sharded(g, argv[1]);
		test_exchange(g);
		rc = failed ? 1 : 0;
		printf("rank %d: %d passed, %d failed\n", rank, passed, failed);
	}
	fz_group_close(g);
	return rc;
}
