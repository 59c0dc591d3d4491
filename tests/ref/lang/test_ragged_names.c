/* The float64 reference of tests/ref/lang/ragged_names.fuse:
 * y(n) = sum over s in row_ptr(n) .. row_ptr(n+1) of w(s), times the sum of
 * v over s_end (its own index, not s's bound). */
#include "ragged_names.h"
#include "../check.h"

int main(void)
{
	const int32_t row_ptr[3] = {0, 2, 3};
	const double w[3] = {1, 2, 4}, v[2] = {10, 5};
	double y[2] = {-1, -1};
	fz_ragged_names_ref_args a = {row_ptr, w, v, y, 3, 3, 2, 2};
	ref_int("return", 0, fz_ragged_names_reference(&a), 0);
	const double want[2] = {(1 + 2) * 15.0, 4 * 15.0};
	ref_near_all("y", y, want, 2, 0);
	return ref_done("ragged_names");
}
