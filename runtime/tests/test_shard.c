/* Sharded fusions (shard.c) on the fake driver and the fake NCCL: which
 * fusions the manifest lets be sharded and why not, each rank's args (its
 * rows, its size, its offset, views), host puts and gets in rank order,
 * partials combined in rank order, gathers on the devices, and the error
 * paths. The fake runs no kernel: the tests write what a kernel would. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuserun.h"
#include "gemv_axpby_sum.h"
#include "kl_divergence.h"
#include "testutil.h"
#include "transfer_entropy_shard.h"

FZ_SHARD_VARIANT(kl_divergence, fused)
FZ_SHARD_VARIANT(gemv_axpby_sum, fused)
FZ_SHARD_VARIANT(transfer_entropy_shard, fused)

long fake_launches(void);
const void *fake_last_args(size_t *n);
int fakes_live(void);

static void plan_in(const char *dir, const char *fusion, const char *size, int code, const char *want)
{
	char m[4096], err[FZ_ERRMSG_SIZE] = "", name[1024];
	fz_artifact_info info;
	if (fz_artifact_verify(path2(m, dir, fusion), &info, err)) {
		check(0, fusion, err);
		return;
	}
	int place[FZ_MAX_TENSORS];
	int rc = fz_shard_plan(&info, size, place, err);
	char got[512] = "";
	for (int i = 0; !rc && i < info.ntensors; i++) {
		size_t n = strlen(got);
		snprintf(got + n, sizeof got - n, "%s%s:%s", i ? " " : "", info.tensors[i].name,
		         place[i] == FZ_PLACE_SPLIT ? "split" : place[i] == FZ_PLACE_WHOLE ? "whole" : "combined");
	}
	snprintf(name, sizeof name, "fz_shard_plan %s over %s: %s", fusion, size, code ? want : got);
	if (code) expect(name, rc, code, err, want, NULL);
	else check(rc == 0 && !strcmp(got, want), name, rc ? err : got);
	fz_artifact_info_free(&info);
}
static void plan(const char *fusion, const char *size, int code, const char *want) { plan_in(gen_dir, fusion, size, code, want); }

/* the kernels' across= (written by fusec) of a shipped manifest, "|"-joined */
static void across_of(const char *fusion, const char *want)
{
	char m[4096], err[FZ_ERRMSG_SIZE] = "", got[512] = "", name[256];
	fz_artifact_info info;
	if (fz_artifact_verify(path2(m, gen_dir, fusion), &info, err)) {
		check(0, fusion, err);
		return;
	}
	for (int k = 0; k < info.nkernels; k++) {
		size_t n = strlen(got);
		snprintf(got + n, sizeof got - n, "%s%s", k ? "|" : "", info.kernels[k].across);
	}
	snprintf(name, sizeof name, "%s: the kernels' reads at other points' rows (across=) are %s", fusion, want);
	check(!strcmp(got, want), name, got);
	fz_artifact_info_free(&info);
}

/* A kernel over S that reads a split tensor at rows other than its point's
 * (x(j) for j over S: fusec writes across=) is refused: a rank would reduce
 * over its own rows only. Shown on kl_divergence with its kernel line given
 * across=p; a name that is no tensor of rank 1 or more is a bad manifest. */
static void test_across(void)
{
	char err[FZ_ERRMSG_SIZE] = "", m[4096];
	across_of("transfer_entropy.manifest", "xn,xp,yp|xn,xp,yp||xn,xp,yp|");
	across_of("transfer_entropy_shard.manifest", "|||");
	across_of("kl_divergence.manifest", "||");
	const char *dir = copy_artifact("kl_divergence", "across");
	edit(path2(m, dir, "kl_divergence.manifest"), "space=[N] grid-reduction=deterministic", "space=[N] grid-reduction=deterministic across=p", 1);
	plan_in(dir, "kl_divergence.manifest", "N", FZ_ERR_SHARD, "kernel kl_divergence_f0 reads p at rows other than its point's");
	edit(path2(m, dir, "kl_divergence.manifest"), "across=p", "across=p,zz", 1);
	expect("a manifest whose across= names no tensor is refused", verify(dir, "kl_divergence.manifest", err), FZ_ERR_FORMAT, err,
	       "across=p,zz names a tensor not listed", NULL);
	edit(path2(m, dir, "kl_divergence.manifest"), "across=p,zz", "across=kl", 1);
	expect("a manifest whose across= names a rank-0 tensor is refused", verify(dir, "kl_divergence.manifest", err), FZ_ERR_FORMAT, err,
	       "or one of rank 0", NULL);
}

static void test_plans(void)
{
	plan("kl_divergence.manifest", "N", 0, "q:split p:split kl:combined t:split");
	plan("gemv_axpby_sum.manifest", "M", 0, "A:split x:whole z:split alpha:whole beta:whole y:split s:combined ax:split");
	plan("batchnorm_inference.manifest", "B", 0, "X:split mean:whole var:whole gamma:whole beta:whole eps:whole Y:split");
	plan("transfer_entropy_shard.manifest", "M", 0,
	     "qxn:split qxp:split qyp:split xn:whole xp:whole yp:whole off:whole psi:split psi_sum:combined eps:split n_x:split n_xnx:split n_xy:split");
	plan("gemv_axpby_sum.manifest", "N", FZ_ERR_SHARD, "ranges over [M], not over N first");
	plan("transfer_entropy.manifest", "N", FZ_ERR_SHARD, "kernel transfer_entropy_f0 reads xn,xp,yp at rows other than its point's");
	plan("transfer_entropy_shard.manifest", "N", FZ_ERR_SHARD, "not over N first");
	plan("spike_burst.manifest", "N", FZ_ERR_SHARD, "spike_burst_f0 (scatter) ranges over data-dependent points");
	plan("softmax.manifest", "C", FZ_ERR_SHARD, "not over C first");
	plan("kl_divergence.manifest", "Q", FZ_ERR_SHARD, "has no size Q");
}

/* what rank r's launch got as args (the fake records the last launch) */
static int last_args(void *a, size_t n)
{
	size_t got = 0;
	const void *p = fake_last_args(&got);
	if (got != n) return 0;
	memcpy(a, p, n);
	return 1;
}

static void test_kl(void)
{
	char err[FZ_ERRMSG_SIZE], m[4096];
	fz_group *g = NULL;
	fz_sharded *s = NULL;
	if (fz_group_open(3, NULL, &g, err)) { check(0, "a group of three for sharding", err); return; }
	fz_kl_divergence_args a;
	memset(&a, 0, sizeof a);
	a.n_N = 10;
	path2(m, gen_dir, "kl_divergence.manifest");
	expect("fz_sharded_create refuses another header's layout", fz_sharded_create(g, m, "N", FZ_gemv_axpby_sum_LAYOUT, &a, sizeof a,
	       fz_kl_divergence_fused_scratch_v, fz_kl_divergence_fused_ops_v, &s, err), FZ_ERR_LAYOUT, err, "layout", NULL);
	a.n_N = 0;
	expect("fz_sharded_create refuses a size 0", fz_sharded_create(g, m, "N", FZ_kl_divergence_LAYOUT, &a, sizeof a,
	       fz_kl_divergence_fused_scratch_v, fz_kl_divergence_fused_ops_v, &s, err), FZ_ERR_BAD_SIZE, err, "size N", NULL);
	a.n_N = 10;
	expect("fz_sharded_create refuses a size it cannot shard over", fz_sharded_create(g, m, "Q", FZ_kl_divergence_LAYOUT, &a, sizeof a,
	       fz_kl_divergence_fused_scratch_v, fz_kl_divergence_fused_ops_v, &s, err), FZ_ERR_SHARD, err, "has no size Q", NULL);
	if (!expect("fz_sharded_create: kl_divergence over N on three ranks", fz_sharded_create(g, m, "N", FZ_kl_divergence_LAYOUT, &a,
	            sizeof a, fz_kl_divergence_fused_scratch_v, fz_kl_divergence_fused_ops_v, &s, err), FZ_OK, "", NULL))
		goto out;
	float q[10], p[10], back[10];
	for (int i = 0; i < 10; i++) q[i] = (float)i, p[i] = (float)(100 + i);
	expect("put q", fz_sharded_put(s, "q", q, sizeof q), FZ_OK, "", NULL);
	expect("put p", fz_sharded_put(s, "p", p, sizeof p), FZ_OK, "", NULL);
	expect("put refuses the wrong size", fz_sharded_put(s, "p", p, 8), FZ_ERR_INVALID, fz_sharded_error(s), "40 bytes, not 8", NULL);
	expect("put refuses an output", fz_sharded_put(s, "kl", p, 4), FZ_ERR_INVALID, fz_sharded_error(s), "not an input", NULL);
	expect("put refuses a tensor the fusion lacks", fz_sharded_put(s, "zz", p, 4), FZ_ERR_INVALID, fz_sharded_error(s), "no tensor zz", NULL);
	expect("a view after the first put is refused", fz_sharded_view(s, "q", "p"), FZ_ERR_INVALID, fz_sharded_error(s), "before the first", NULL);
	int ok = 1;
	for (int r = 0; r < 3; r++) { /* rows 0-3, 4-6, 7-9 */
		long long lo, hi;
		fz_sharded_range(s, r, &lo, &hi);
		float got[4] = {0};
		fz_copy_to_host(fz_group_device(g, r), got, fz_sharded_ptr(s, "q", r), (size_t)(hi - lo) * 4, NULL);
		ok &= lo == (r == 0 ? 0 : r == 1 ? 4 : 7) && !memcmp(got, q + lo, (size_t)(hi - lo) * 4);
	}
	check(ok, "each rank holds its rows of a split input", NULL);
	long before = fake_launches();
	expect("fz_sharded_run", fz_sharded_run(s), FZ_OK, "", NULL);
	fz_kl_divergence_args last;
	check(fake_launches() - before == 3 && last_args(&last, sizeof last) && last.n_N == 3 && last.t_q == fz_sharded_ptr(s, "q", 2) &&
	      last.t_kl == fz_sharded_ptr(s, "kl", 2) && last.ws_part != 0,
	      "one launch a rank; rank 2's args: N = its 3 rows, its pointers, its scratch", NULL);
	/* what the kernels would have written: partial sums in the outputs */
	float part[3] = {1e8f, 1.0f, -1e8f}, kl = -1;
	for (int r = 0; r < 3; r++) fz_copy_to_device(fz_group_device(g, r), fz_sharded_ptr(s, "kl", r), &part[r], 4, NULL);
	expect("get a combined output", fz_sharded_get(s, "kl", &kl, 4), FZ_OK, "", NULL);
	check(kl == 0.0f, "the partials fold in rank order ((1e8 + 1) - 1e8 = 0 in f32)", NULL);
	expect("combine op max", fz_sharded_combine_op(s, "kl", FZ_COMBINE_MAX), FZ_OK, "", NULL);
	fz_sharded_get(s, "kl", &kl, 4);
	check(kl == 1e8f, "combine op max is used", NULL);
	expect("combine op on a split tensor is refused", fz_sharded_combine_op(s, "q", FZ_COMBINE_MAX), FZ_ERR_INVALID, fz_sharded_error(s),
	       "not a combined output", NULL);
	expect("get of a split input brings back the rows in order", fz_sharded_get(s, "p", back, sizeof back), FZ_OK, "", NULL);
	check(!memcmp(back, p, sizeof p), "the rows come back in rank order", NULL);
	expect("gather of a split input on the devices", fz_sharded_gather(s, "q", NULL), FZ_OK, "", NULL);
	fz_ptr full[3];
	fz_sharded_gather(s, "q", full);
	ok = 1;
	for (int r = 0; r < 3; r++) {
		float got[10];
		fz_copy_to_host(fz_group_device(g, r), got, full[r], sizeof got, NULL);
		ok &= !memcmp(got, q, sizeof q);
	}
	check(ok, "every rank holds the whole gathered tensor", NULL);
	expect("gather of a combined output is refused", fz_sharded_gather(s, "kl", full), FZ_ERR_INVALID, fz_sharded_error(s), "not a split", NULL);
	check(!fz_sharded_ptr(s, "q", 3) && !fz_sharded_ptr(s, "zz", 0) && fz_sharded_artifact(s, 1) && !fz_sharded_artifact(s, 3),
	      "fz_sharded_ptr and fz_sharded_artifact refuse a bad rank or name", NULL);
	fz_sharded_destroy(s), s = NULL;

	/* fewer points than ranks: the empty rank runs nothing and takes no part */
	a.n_N = 2;
	if (!fz_sharded_create(g, m, "N", FZ_kl_divergence_LAYOUT, &a, sizeof a, fz_kl_divergence_fused_scratch_v, fz_kl_divergence_fused_ops_v,
	                       &s, err)) {
		before = fake_launches();
		float two[2] = {1, 2};
		fz_sharded_put(s, "q", two, 8), fz_sharded_put(s, "p", two, 8);
		expect("2 points on 3 ranks", fz_sharded_run(s), FZ_OK, "", NULL);
		check(fake_launches() - before == 2, "the empty rank launches nothing", NULL);
		float v[2] = {0.5f, 0.25f};
		for (int r = 0; r < 2; r++) fz_copy_to_device(fz_group_device(g, r), fz_sharded_ptr(s, "kl", r), &v[r], 4, NULL);
		expect("get with an empty rank", fz_sharded_get(s, "kl", &kl, 4), FZ_OK, "", NULL);
		check(kl == 0.75f, "the empty rank takes no part in the combination", NULL);
	}
out:
	fz_sharded_destroy(s);
	fz_group_close(g);
	check(fakes_live() == 0, "sharded runs leave nothing open", NULL);
}

/* rows of two dimensions and scalars; views and offsets of the pairwise fusion */
static void test_views(void)
{
	char err[FZ_ERRMSG_SIZE], m[4096];
	fz_group *g = NULL;
	fz_sharded *s = NULL;
	if (fz_group_open(2, NULL, &g, err)) { check(0, "a group of two", err); return; }
	fz_gemv_axpby_sum_args a;
	memset(&a, 0, sizeof a);
	a.n_M = 5, a.n_N = 3, a.t_alpha = 2.5;
	if (!fz_sharded_create(g, path2(m, gen_dir, "gemv_axpby_sum.manifest"), "M", FZ_gemv_axpby_sum_LAYOUT, &a, sizeof a,
	                       fz_gemv_axpby_sum_fused_scratch_v, fz_gemv_axpby_sum_fused_ops_v, &s, err)) {
		float A[15], x[3] = {1, 2, 3}, got[9];
		for (int i = 0; i < 15; i++) A[i] = (float)i;
		expect("an offset must be an integer scalar", fz_sharded_offset(s, "alpha"), FZ_ERR_INVALID, fz_sharded_error(s), "integer scalar", NULL);
		expect("put rows of a matrix", fz_sharded_put(s, "A", A, sizeof A), FZ_OK, "", NULL);
		expect("put a whole vector", fz_sharded_put(s, "x", x, sizeof x), FZ_OK, "", NULL);
		fz_copy_to_host(fz_group_device(g, 1), got, fz_sharded_ptr(s, "A", 1), 6 * 4, NULL);
		int ok = !memcmp(got, A + 9, 6 * 4);
		fz_copy_to_host(fz_group_device(g, 1), got, fz_sharded_ptr(s, "x", 1), 3 * 4, NULL);
		ok &= !memcmp(got, x, 3 * 4);
		check(ok, "rank 1 holds rows 3-4 of A (a row is N floats) and the whole of x", NULL);
		fz_sharded_run(s);
		fz_gemv_axpby_sum_args last;
		check(last_args(&last, sizeof last) && last.n_M == 2 && last.n_N == 3 && last.t_alpha == 2.5,
		      "rank 1's args: M = its 2 rows, N and the scalars as given", NULL);
	}
	fz_sharded_destroy(s), s = NULL;

	fz_transfer_entropy_shard_args t;
	memset(&t, 0, sizeof t);
	t.n_M = 7, t.n_N = 7;
	path2(m, gen_dir, "transfer_entropy_shard.manifest");
	if (!fz_sharded_create(g, m, "M", FZ_transfer_entropy_shard_LAYOUT, &t, sizeof t, fz_transfer_entropy_shard_fused_scratch_v,
	                       fz_transfer_entropy_shard_fused_ops_v, &s, err)) {
		expect("a view of a split input as the rows of a whole one", fz_sharded_view(s, "qxn", "xn"), FZ_OK, "", NULL);
		expect("a view of mismatched tensors is refused", fz_sharded_view(s, "qxp", "psi"), FZ_ERR_INVALID, fz_sharded_error(s), "must be", NULL);
		expect("the offset scalar", fz_sharded_offset(s, "off"), FZ_OK, "", NULL);
		float xs[7] = {0, 1, 2, 3, 4, 5, 6};
		fz_sharded_put(s, "xn", xs, sizeof xs);
		expect("put refuses a view (put its whole tensor)", fz_sharded_put(s, "qxn", xs, 16), FZ_ERR_INVALID, fz_sharded_error(s), "view", NULL);
		fz_sharded_run(s);
		fz_transfer_entropy_shard_args last;
		check(last_args(&last, sizeof last) && last.n_M == 3 && last.n_N == 7 && last.t_off == 4 &&
		      last.t_qxn == fz_sharded_ptr(s, "xn", 1) + 4 * 4 && last.t_qxp != 0,
		      "rank 1: M = 3 queries, N = 7, off = 4, qxn the view of xn at point 4", NULL);
		double psi[7], want[7];
		for (int r = 0; r < 2; r++) {
			long long lo, hi;
			fz_sharded_range(s, r, &lo, &hi);
			for (long long i = lo; i < hi; i++) want[i] = 0.5 * (double)i;
			fz_copy_to_device(fz_group_device(g, r), fz_sharded_ptr(s, "psi", r), want + lo, (size_t)(hi - lo) * 8, NULL);
		}
		expect("get of a split output", fz_sharded_get(s, "psi", psi, sizeof psi), FZ_OK, "", NULL);
		check(!memcmp(psi, want, sizeof psi), "the split output comes back in point order", NULL);
	}
	fz_sharded_destroy(s);
	fz_group_close(g);
	check(fakes_live() == 0, "views leave nothing open", NULL);
}

static int shard_session(const char *var)
{
	char err[FZ_ERRMSG_SIZE] = "", m[4096];
	fz_group *g = NULL;
	fz_sharded *s = NULL;
	int rc = fz_group_open(2, NULL, &g, err);
	if (rc) return err[0] ? rc : -1;
	fz_kl_divergence_args a;
	memset(&a, 0, sizeof a);
	a.n_N = 9;
	rc = fz_sharded_create(g, path2(m, gen_dir, "kl_divergence.manifest"), "N", FZ_kl_divergence_LAYOUT, &a, sizeof a,
	                       fz_kl_divergence_fused_scratch_v, fz_kl_divergence_fused_ops_v, &s, err);
	if (rc && !err[0]) rc = -1;
	float q[9] = {0}, kl;
	const char *e = "";
	if (!rc) rc = fz_sharded_put(s, "q", q, sizeof q), e = fz_sharded_error(s);
	if (!rc) rc = fz_sharded_put(s, "p", q, sizeof q), e = fz_sharded_error(s);
	if (!rc) rc = fz_sharded_run(s), e = fz_sharded_error(s);
	if (!rc) rc = fz_sharded_gather(s, "q", NULL), e = fz_sharded_error(s);
	if (!rc) rc = fz_sharded_get(s, "kl", &kl, 4), e = fz_sharded_error(s);
	if (rc > 0 && s && !e[0]) rc = -1; /* an error without a message */
	unsetenv(var); /* no fault in the clean-up: a free that cannot enter its context leaks */
	fz_sharded_destroy(s);
	fz_group_close(g);
	return rc;
}

/* A put that fails part-way through the allocations (the n-th driver call
 * of the first put failing, for every n) and is tried again: the retry
 * succeeds and nothing is left allocated after destroy (a failed attempt
 * once kept its first buffers and the retry allocated them again). */
void test_shard_retry(void (*reset)(void));
void test_shard_retry(void (*reset)(void))
{
	char err[FZ_ERRMSG_SIZE] = "", m[4096], name[160];
	int retried = 0, bad = 0;
	for (int n = 1; n < 200; n++) {
		fz_group *g = NULL;
		fz_sharded *s = NULL;
		if (fz_group_open(2, NULL, &g, err)) {
			check(0, "retry: the group opens", err);
			return;
		}
		fz_kl_divergence_args a;
		memset(&a, 0, sizeof a);
		a.n_N = 9;
		if (fz_sharded_create(g, path2(m, gen_dir, "kl_divergence.manifest"), "N", FZ_kl_divergence_LAYOUT, &a, sizeof a,
		                      fz_kl_divergence_fused_scratch_v, fz_kl_divergence_fused_ops_v, &s, err)) {
			check(0, "retry: the sharded fusion is created", err);
			fz_group_close(g);
			return;
		}
		float q[9] = {0};
		char at[16];
		snprintf(at, sizeof at, "%d", n);
		reset();
		setenv("FAKECUDA_FAIL_AT", at, 1);
		int first = fz_sharded_put(s, "q", q, sizeof q);
		unsetenv("FAKECUDA_FAIL_AT");
		int again = first ? fz_sharded_put(s, "q", q, sizeof q) : FZ_OK;
		if (again) {
			bad++;
			snprintf(name, sizeof name, "retry after FAKECUDA_FAIL_AT=%d in the first put: the second put succeeds", n);
			check(0, name, fz_sharded_error(s));
		}
		fz_sharded_destroy(s);
		fz_group_close(g);
		if (fakes_live()) {
			bad++;
			snprintf(name, sizeof name, "retry after FAKECUDA_FAIL_AT=%d in the first put: nothing left allocated", n);
			check(0, name, NULL);
			break;
		}
		if (!first) break; /* past the put's last call */
		retried++;
	}
	snprintf(name, sizeof name, "a put failing at each of its %d driver calls, then tried again: succeeds, nothing left allocated", retried);
	check(!bad && retried >= 4, name, NULL);
}

void test_shard_sweep(const char *var, void (*reset)(void), long (*injected)(void));
void test_shard_sweep(const char *var, void (*reset)(void), long (*injected)(void))
{
	char name[160], at[16];
	int bad = 0, failures = 0;
	for (int n = 1; n < 600; n++) {
		snprintf(at, sizeof at, "%d", n);
		reset();
		setenv(var, at, 1);
		int rc = shard_session(var);
		(void)injected;
		if (rc < 0 || fakes_live()) {
			bad++;
			snprintf(name, sizeof name, "%s=%d in a sharded session: an error with a message, nothing left open", var, n);
			check(0, name, NULL);
			if (fakes_live()) break;
		}
		if (!rc) break;
		failures++;
	}
	snprintf(name, sizeof name, "every call of a sharded session failing in turn (%s, %d calls): reported, nothing left open", var, failures);
	check(!bad && failures >= 5, name, NULL);
}

void test_shard(void)
{
	test_plans();
	test_across();
	test_kl();
	test_views();
}
