/* The float64 reference of tests/ref/lang/int_math_f64.fuse:
 * y = ceil(k) + x^k + e^i - max(k, x). */
#include "int_math_f64.h"
#include "../check.h"

int main(void)
{
	const double x[3] = {2, 0.5, -3};
	const int64_t k[3] = {3, -1, 2};
	double y[3];
	fz_int_math_f64_ref_args a = {x, k, y, 3};
	ref_int("return", 0, fz_int_math_f64_reference(&a), 0);
	const double want[3] = {3 + 8 + 1 - 3, -1 + 2 + exp(1) - 0.5, 2 + 9 + exp(2) - 2};
	ref_near_all("y", y, want, 3, 1e-15);
	return ref_done("int_math_f64");
}
