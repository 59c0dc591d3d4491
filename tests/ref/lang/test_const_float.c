/* The float64 reference of tests/ref/lang/const_float.fuse: p / 2.0 is a
 * real division, p / 3 an integer one (C's: toward zero). */
#include "const_float.h"
#include "../check.h"

int main(void)
{
	const int32_t p[4] = {3, -7, 8, 1};
	double h[4] = {-1, -1, -1, -1};
	int32_t q[4] = {-1, -1, -1, -1};
	fz_const_float_ref_args a = {p, h, q, 4};
	ref_int("return", 0, fz_const_float_reference(&a), 0);
	const double want_h[4] = {1.5, -3.5, 4, 0.5};
	ref_near_all("h", h, want_h, 4, 0);
	const int want_q[4] = {1, -2, 2, 0};
	for (int i = 0; i < 4; i++) ref_int("q", i, q[i], want_q[i]);
	return ref_done("const_float");
}
