/* The float64 reference of tests/ref/lang/kmin_int.fuse. N = 2, M = 2:
 * kmin[3] over 2 terms has no third smallest, so y is INT32_MAX, as the
 * kernel's fz_kinit<int> leaves it; the second smallest of two i64 values
 * above 2^53 that doubles cannot tell apart is the larger one, exactly. */
#include "kmin_int.h"
#include "../check.h"

int main(void)
{
	const int32_t x[4] = {5, -3, 7, 7};
	const int64_t big = (int64_t)1 << 60;
	const int64_t z[4] = {big + 1, big + 2, -4, 9};
	int32_t y[2] = {0, 0};
	int64_t w[2] = {0, 0};
	fz_kmin_int_ref_args a = {.t_x = x, .t_z = z, .t_y = y, .t_w = w, .n_N = 2, .n_M = 2};
	ref_int("return", 0, fz_kmin_int_reference(&a), 0);
	for (int i = 0; i < 2; i++) ref_int("y", i, y[i], INT32_MAX);
	ref_int("w", 0, w[0], big + 2);
	ref_int("w", 1, w[1], 9);
	return ref_done("kmin_int");
}
