/* The six points of test_transfer_entropy.c (te = 1/30, worked out there and
 * in python) as shards of queries: points 0-2 (off 0), 3-5 (off 3), and all
 * six (off 0). Every device holds the whole series; each shard's psi are the
 * per-point terms of the one-kernel estimator, psi_sum their sum, and
 *   te = digamma(4) + (psi_sum of 0-2 + psi_sum of 3-5) / 6 = 1/30.
 * The self-pair is excluded by index (i + off != j), as in the one-kernel
 * spec: a shard at the wrong offset would count its point's own zero
 * distance as a neighbour, and the digamma terms would change. The
 * generated digamma is a series good to about 1e-11 (digamma_int here is
 * exact): the terms are compared at 1e-10, the partial sums among
 * themselves at 1e-14. */
#include "transfer_entropy_shard.h"
#include "check.h"

#define N 6

static const double xn[N] = {13 / 8.0, 5 / 8.0, 1 / 8.0, 2 / 8.0, 12 / 8.0, 9 / 8.0};
static const double xp[N] = {7 / 8.0, 9 / 8.0, 1 / 8.0, 14 / 8.0, 5 / 8.0, 5 / 8.0};
static const double yp[N] = {8 / 8.0, 14 / 8.0, 0 / 8.0, 8 / 8.0, 11 / 8.0, 10 / 8.0};

static double digamma_int(int n) /* n >= 1 */
{
	double h = 0;
	for (int k = 1; k < n; k++) h += 1.0 / k;
	return -0.57721566490153286061 + h;
}

static double shard(long long off, long long m, double *psi)
{
	double sum = -99;
	fz_transfer_entropy_shard_ref_args a = {.t_qxn = xn + off, .t_qxp = xp + off, .t_qyp = yp + off, .t_xn = xn, .t_xp = xp,
	                                        .t_yp = yp, .t_off = off, .t_psi = psi + off, .t_psi_sum = &sum, .n_M = m, .n_N = N};
	ref_int("return", off, fz_transfer_entropy_shard_reference(&a), 0);
	return sum;
}

int main(void)
{
	/* the counts (n_x, n_xnx, n_xy) per point, from test_transfer_entropy.c */
	const int cnt[3 * N] = {5, 3, 5, 4, 3, 4, 4, 4, 3, 4, 3, 4, 5, 3, 4, 4, 4, 3};
	double want[N], psi[N], all[N], s = 0;
	for (int i = 0; i < N; i++) {
		want[i] = digamma_int(cnt[3 * i] + 1) - digamma_int(cnt[3 * i + 1] + 1) - digamma_int(cnt[3 * i + 2] + 1);
		psi[i] = all[i] = -99;
	}
	double s0 = shard(0, 3, psi), s1 = shard(3, 3, psi), sa = shard(0, N, all);
	ref_near_all("psi of the two shards", psi, want, N, 1e-10);
	ref_near_all("psi of one shard of all points", all, want, N, 1e-10);
	ref_near_all("the shards' psi and the whole's", psi, all, N, 0);
	for (int i = 0; i < 3; i++) s += psi[i];
	ref_near("psi_sum of points 0-2", 0, s0, s, 1e-14);
	ref_near("psi_sum of all", 0, sa, s0 + s1, 1e-14);
	ref_near("te from the two shards' partials", 0, digamma_int(4) + (s0 + s1) / N, 1.0 / 30, 1e-10);
	return ref_done("transfer_entropy_shard");
}
