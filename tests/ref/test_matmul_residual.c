/* A (M=2 x K=3) = [[1,2,3],[-1,0,1]], B (K=3 x N=4) = [[1,0,2,0],[0,1,0,-1],[1,-1,0,1]],
 * s = (0.5, 2), bias = (-2, 0.5, -1, -0.5), R = [[1,2,3,4],[5,6,7,8]]; all row-major:
 *   A B            = [[4,-1,2,1],[0,-1,-2,1]]
 *   s A B + bias   = [[0,0,0,0],[-2,-1.5,-5,1.5]]
 *   C = R + gelu() = [[1,2,3,4],[5+gelu(-2), 6+gelu(-1.5), 7+gelu(-5), 8+gelu(1.5)]]
 * gelu in its tanh form, g(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), g(0) = 0. */
#include <math.h>

#include "matmul_residual.h"
#include "check.h"

static double g(double x) { return 0.5 * x * (1 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))); }

int main(void)
{
	const double A[6] = {1, 2, 3, -1, 0, 1};
	const double B[12] = {1, 0, 2, 0, 0, 1, 0, -1, 1, -1, 0, 1};
	const double s[2] = {0.5, 2};
	const double bias[4] = {-2, 0.5, -1, -0.5};
	const double R[8] = {1, 2, 3, 4, 5, 6, 7, 8};
	double C[8];
	for (int i = 0; i < 8; i++) C[i] = -99;
	fz_matmul_residual_ref_args a = {.t_A = A, .t_B = B, .t_s = s, .t_bias = bias, .t_R = R, .t_C = C, .n_M = 2, .n_K = 3, .n_N = 4};
	ref_int("return", 0, fz_matmul_residual_reference(&a), 0);
	const double want[8] = {1, 2, 3, 4, 5 + g(-2), 6 + g(-1.5), 7 + g(-5), 8 + g(1.5)};
	ref_near_all("C", C, want, 8, 1e-15);
	return ref_done("matmul_residual");
}
