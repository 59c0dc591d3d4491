/* Transfer entropy (KSG, K = 4, max-norm) on N = 6 points, checked against a
 * brute-force estimate written here independently of the generated reference:
 * sort each point's distances, take the K-th, count strictly closer points in
 * the marginal spaces, and use digamma(n) = -gamma + H(n-1) for integer n.
 * The data are multiples of 1/8 (exact in binary) and every K-th distance is
 * strictly between its neighbours, so no comparison sits on a rounding edge.
 * Python (fractions, same brute force) gives te = 1/30. */
#include "transfer_entropy.h"
#include "check.h"

#define N 6
#define K 4

static double digamma_int(int n) /* n >= 1 */
{
	double h = 0;
	for (int k = 1; k < n; k++) h += 1.0 / k;
	return -0.57721566490153286061 + h;
}

static double maxd(double a, double b) { return a > b ? a : b; }

static double brute(const double *xn, const double *xp, const double *yp, int *cnt)
{
	double sum = 0;
	for (int i = 0; i < N; i++) {
		double d[N - 1];
		int m = 0;
		for (int j = 0; j < N; j++)
			if (j != i) d[m++] = maxd(fabs(xn[i] - xn[j]), maxd(fabs(xp[i] - xp[j]), fabs(yp[i] - yp[j])));
		for (int a = 1; a < m; a++) /* insertion sort */
			for (int b = a; b > 0 && d[b - 1] > d[b]; b--) {
				double t = d[b];
				d[b] = d[b - 1], d[b - 1] = t;
			}
		double eps = d[K - 1];
		int nx = 0, nxnx = 0, nxy = 0;
		for (int j = 0; j < N; j++) {
			if (j == i) continue;
			nx += fabs(xp[i] - xp[j]) < eps;
			nxnx += maxd(fabs(xn[i] - xn[j]), fabs(xp[i] - xp[j])) < eps;
			nxy += maxd(fabs(xp[i] - xp[j]), fabs(yp[i] - yp[j])) < eps;
		}
		cnt[3 * i] = nx, cnt[3 * i + 1] = nxnx, cnt[3 * i + 2] = nxy;
		sum += digamma_int(nx + 1) - digamma_int(nxnx + 1) - digamma_int(nxy + 1);
	}
	return digamma_int(K) + sum / N;
}

int main(void)
{
	const double xn[N] = {13 / 8.0, 5 / 8.0, 1 / 8.0, 2 / 8.0, 12 / 8.0, 9 / 8.0};
	const double xp[N] = {7 / 8.0, 9 / 8.0, 1 / 8.0, 14 / 8.0, 5 / 8.0, 5 / 8.0};
	const double yp[N] = {8 / 8.0, 14 / 8.0, 0 / 8.0, 8 / 8.0, 11 / 8.0, 10 / 8.0};
	int cnt[3 * N];
	const double want = brute(xn, xp, yp, cnt);
	/* the brute force itself, against the counts worked out in python */
	const int wcnt[3 * N] = {5, 3, 5, 4, 3, 4, 4, 4, 3, 4, 3, 4, 5, 3, 4, 4, 4, 3};
	for (int i = 0; i < 3 * N; i++) ref_int("brute-force count", i, cnt[i], wcnt[i]);
	ref_near("brute force vs python", 0, want, 1.0 / 30, 1e-14);

	double te = -99;
	fz_transfer_entropy_ref_args a = {.t_xn = xn, .t_xp = xp, .t_yp = yp, .t_nf = N, .t_te = &te, .n_N = N};
	ref_int("return", 0, fz_transfer_entropy_reference(&a), 0);
	ref_near("te", 0, te, want, 1e-12);
	return ref_done("transfer_entropy");
}
