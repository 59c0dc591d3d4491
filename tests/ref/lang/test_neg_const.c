/* The float64 reference of tests/ref/lang/neg_const.fuse: y = x * 2 - 1.5,
 * z = k - 2 + (-2); the spec's -NEG are negations of negative constants. */
#include "neg_const.h"
#include "../check.h"

int main(void)
{
	const double x[3] = {1, -0.5, 4};
	const int32_t k[3] = {7, 0, -3};
	double y[3] = {-1, -1, -1};
	int32_t z[3] = {-1, -1, -1};
	fz_neg_const_ref_args a = {x, k, y, z, 3};
	ref_int("return", 0, fz_neg_const_reference(&a), 0);
	const double want_y[3] = {0.5, -2.5, 6.5};
	ref_near_all("y", y, want_y, 3, 0);
	const int want_z[3] = {3, -4, -7};
	for (int i = 0; i < 3; i++) ref_int("z", i, z[i], want_z[i]);
	return ref_done("neg_const");
}
