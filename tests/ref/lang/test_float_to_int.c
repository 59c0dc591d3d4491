/* The float64 reference of tests/ref/lang/float_to_int.fuse: float to
 * integer conversions toward zero, saturated, NaN to 0 (the GPU's cvt.rzi). */
#include <stdint.h>

#include "float_to_int.h"
#include "../check.h"

int main(void)
{
	const double x[5] = {0.5, -0.25, 0, -1, 1e-12};
	int32_t a[5], c[5];
	int64_t b[5];
	fz_float_to_int_ref_args args = {x, a, b, c, 5};
	ref_int("return", 0, fz_float_to_int_reference(&args), 0);
	/* x * 1e10: past i32 both ways, then -0 and 0.01 toward zero */
	const long long want_a[5] = {INT32_MAX, INT32_MIN, 0, INT32_MIN, 0};
	const long long want_b[5] = {INT64_MAX, INT64_MIN, 0, INT64_MIN, 1000000000000000000LL};
	/* log: -0.69 -> 0, NaN -> 0, -inf -> INT32_MIN, NaN -> 0, -27.6 -> -27 */
	const long long want_c[5] = {0, 0, INT32_MIN, 0, -27};
	for (int i = 0; i < 5; i++) {
		ref_int("a", i, a[i], want_a[i]);
		ref_int("b", i, b[i], want_b[i]);
		ref_int("c", i, c[i], want_c[i]);
	}
	return ref_done("float_to_int");
}
