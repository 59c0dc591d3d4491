/* The float64 reference of tests/ref/lang/row_walks.fuse: per row b,
 * s = sum of X(b, :), Y = 1.5 * (X - s) + X. */
#include "row_walks.h"
#include "../check.h"

int main(void)
{
	const double X[6] = {1, 2, 3, -1, 0, 4}; /* row sums 6 and 3 */
	double Y[6] = {0};
	fz_row_walks_ref_args a = {X, Y, 2, 3};
	ref_int("return", 0, fz_row_walks_reference(&a), 0);
	const double want[6] = {-6.5, -4, -1.5, -7, -4.5, 5.5};
	ref_near_all("Y", Y, want, 6, 0);
	return ref_done("row_walks");
}
