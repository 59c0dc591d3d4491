/* X (M=2 x K=3) = [[1,2,3],[-1,0,1]], W (N=4 x K=3) = [[1,0,1],[0,1,-1],[2,0,0],[0,-1,1]]
 * (the transpose of test_matmul_residual's B), bias = (-2, 0.5, -1, -0.5); all row-major:
 *   X W^T        = [[4,-1,2,1],[0,-1,-2,1]]
 *   X W^T + bias = [[2,-0.5,1,0.5],[-2,-0.5,-3,0.5]]
 *   Y = gelu() elementwise, in its tanh form g(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
 * A reference that read the 12 elements of W as a K x N matrix would give
 * [[1,-1.5,1,2.5],[-3,0.5,-3,0.5]] before gelu instead: the values below tell the two apart. */
#include <math.h>

#include "linear_bias_gelu.h"
#include "check.h"

static double g(double x) { return 0.5 * x * (1 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))); }

int main(void)
{
	const double X[6] = {1, 2, 3, -1, 0, 1};
	const double W[12] = {1, 0, 1, 0, 1, -1, 2, 0, 0, 0, -1, 1};
	const double bias[4] = {-2, 0.5, -1, -0.5};
	double Y[8];
	for (int i = 0; i < 8; i++) Y[i] = -99;
	fz_linear_bias_gelu_ref_args a = {.t_X = X, .t_W = W, .t_bias = bias, .t_Y = Y, .n_M = 2, .n_K = 3, .n_N = 4};
	ref_int("return", 0, fz_linear_bias_gelu_reference(&a), 0);
	const double want[8] = {g(2), g(-0.5), g(1), g(0.5), g(-2), g(-0.5), g(-3), g(0.5)};
	ref_near_all("Y", Y, want, 8, 1e-15);
	return ref_done("linear_bias_gelu");
}
