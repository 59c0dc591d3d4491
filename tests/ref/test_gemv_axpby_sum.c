/* A = [[1,2,3],[4,5,6]] (M=2, N=3), x = (1,1,2), z = (10,-10), alpha = 2, beta = 0.5:
 *   A x = (9, 21); y = 2 A x + 0.5 z = (23, 37); s = 60. */
#include "gemv_axpby_sum.h"
#include "check.h"

int main(void)
{
	const double A[6] = {1, 2, 3, 4, 5, 6}, x[3] = {1, 1, 2}, z[2] = {10, -10};
	double y[2] = {0}, s = -1;
	fz_gemv_axpby_sum_ref_args a = {.t_A = A, .t_x = x, .t_z = z, .t_alpha = 2, .t_beta = 0.5, .t_y = y, .t_s = &s, .n_M = 2, .n_N = 3};
	ref_int("return", 0, fz_gemv_axpby_sum_reference(&a), 0);
	const double want[2] = {23, 37};
	ref_near_all("y", y, want, 2, 0);
	ref_near("s", 0, s, 60, 0);
	return ref_done("gemv_axpby_sum");
}
