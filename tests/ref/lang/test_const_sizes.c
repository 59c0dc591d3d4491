/* The float64 reference of tests/ref/lang/const_sizes.fuse, and its header
 * compiled with -Wall -Wextra -Werror (what the test itself is built with):
 * y = 2 x, s = sum of w. */
#include "const_sizes.h"
#include "../check.h"

int main(void)
{
	const double x[4] = {1, -0.5, 4, 0};
	const double w[3] = {0.25, 1, -3};
	double y[4] = {-1, -1, -1, -1}, s = -1;
	fz_const_sizes_ref_args a = {x, w, y, &s};
	ref_int("return", 0, fz_const_sizes_reference(&a), 0);
	const double want_y[4] = {2, -1, 8, 0};
	ref_near_all("y", y, want_y, 4, 0);
	ref_near("s", 0, s, -1.75, 0);
	return ref_done("const_sizes");
}
