/* The float64 reference of tests/ref/lang/strided.fuse: odd sizes, so the
 * inferred ranges (C/2, N-1, M/S) round down and leave elements unread. */
#include "strided.h"
#include "../check.h"

int main(void)
{
	const double X[2 * 5] = {1, 2, 3, 4, 5, /**/ 6, 7, 8, 9, 10}; /* C = 5: pairs (0,1), (2,3) */
	const double x[4] = {1, 4, 9, 16};                              /* diffs 3, 5, 7 */
	const double Y[7] = {1, 2, 3, 4, 5, 6, 7};                      /* S = 3: rows (1,2,3), (4,5,6); 7 unread */
	const double w[3] = {1, 10, 100};
	double rs[2], sd, tot;
	fz_strided_ref_args a = {X, x, Y, w, rs, &sd, &tot, 2, 5, 4, 7, 3};
	ref_int("return", 0, fz_strided_reference(&a), 0);
	const double want_rs[2] = {1 * 2 + 3 * 4, 6 * 7 + 8 * 9};
	ref_near_all("rs", rs, want_rs, 2, 1e-15);
	ref_near("sd", 0, sd, 9 + 25 + 49, 1e-15);
	ref_near("tot", 0, tot, 1 * (1 + 20 + 300) + 2 * (4 + 50 + 600), 1e-15);
	return ref_done("strided");
}
