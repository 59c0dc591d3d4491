/* The float64 reference of tests/ref/lang/int_minmax.fuse at N = 4:
 * y = min(k, 4) + max(7, b), z = max(k, i) - min(3, 4). */
#include "int_minmax.h"
#include "../check.h"

int main(void)
{
	const int32_t k[4] = {9, -2, 1, 4};
	const int64_t b[4] = {10, 0, 7, -5};
	int64_t y[4];
	int32_t z[4];
	fz_int_minmax_ref_args a = {k, b, y, z, 4};
	ref_int("return", 0, fz_int_minmax_reference(&a), 0);
	const long long want_y[4] = {14, 5, 8, 11}, want_z[4] = {6, -2, -1, 1};
	for (int i = 0; i < 4; i++) ref_int("y", i, y[i], want_y[i]), ref_int("z", i, z[i], want_z[i]);
	return ref_done("int_minmax");
}
