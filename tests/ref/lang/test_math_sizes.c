/* The float64 reference of tests/ref/lang/math_sizes.fuse against C's math
 * library, worked point by point, and the sizes read as values. */
#include "math_sizes.h"
#include "../check.h"

int main(void)
{
	const double x[5] = {-1.25, -0.5, 0, 0.3, 2};
	double s[5], c[5], e2[5], l2[5], l1p[5], em1[5], fl[5], ce[5];
	const double X[2 * 3] = {1, 2, 3, 4, 5, 9};
	double m[2], z[6];
	fz_math_sizes_ref_args a = {x, X, s, c, e2, l2, l1p, em1, fl, ce, m, z, 5, 2, 3};
	ref_int("return", 0, fz_math_sizes_reference(&a), 0);
	for (int i = 0; i < 5; i++) {
		ref_near("sin", i, s[i], sin(x[i]), 1e-15);
		ref_near("cos", i, c[i], cos(x[i]), 1e-15);
		ref_near("exp2", i, e2[i], pow(2.0, x[i]), 1e-15);
		ref_near("log2", i, l2[i], log(fabs(x[i]) + 1) / log(2.0), 1e-15);
		ref_near("log1p", i, l1p[i], log(1 + x[i] * x[i]), 1e-15);
		ref_near("expm1", i, em1[i], exp(x[i]) - 1, 1e-15);
	}
	/* x * 4 is exact in f32 and f64 alike, so floor and ceil agree on a GPU
	   too (x * 3 rounds differently near integers) */
	const double want_fl[5] = {-5, -2, 0, 1, 8}, want_ce[5] = {-5, -2, 0, 2, 8};
	ref_near_all("floor", fl, want_fl, 5, 0);
	ref_near_all("ceil", ce, want_ce, 5, 0);
	const double want_m[2] = {2, 6};                 /* (1+2+3)/3, (4+5+9)/3 */
	ref_near_all("mean", m, want_m, 2, 1e-15);
	const double want_z[6] = {6, 10, 12, 12, 10, 9}; /* X * (6 - position) */
	ref_near_all("z", z, want_z, 6, 0);
	return ref_done("math_sizes");
}
