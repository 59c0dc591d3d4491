/* Same A, B, bias as test_matmul_bias_relu: A B + bias = [[4.5,1,3,0.5],[0.5,1,-1,0.5]];
 * gelu(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), computed here with pi from
 * atan and checked against python-computed constants. */
#include "matmul_bias_gelu.h"
#include "check.h"

static double gelu(double x)
{
	const double pi = 4.0 * atan(1.0);
	return 0.5 * x * (1.0 + tanh(sqrt(2.0 / pi) * (x + 0.044715 * x * x * x)));
}

int main(void)
{
	const double A[6] = {1, 2, 3, -1, 0, 1};
	const double B[12] = {1, 0, 2, 0, 0, 1, 0, -1, 1, -1, 0, 1};
	const double bias[4] = {0.5, 2, 1, -0.5};
	const double pre[8] = {4.5, 1, 3, 0.5, 0.5, 1, -1, 0.5};
	double C[8], want[8];
	for (int i = 0; i < 8; i++) C[i] = -99, want[i] = gelu(pre[i]);
	fz_matmul_bias_gelu_ref_args a = {.t_A = A, .t_B = B, .t_bias = bias, .t_C = C, .n_M = 2, .n_K = 3, .n_N = 4};
	ref_int("return", 0, fz_matmul_bias_gelu_reference(&a), 0);
	ref_near_all("C", C, want, 8, 1e-14);
	/* python: 0.5*x*(1+math.tanh(math.sqrt(2/math.pi)*(x+0.044715*x**3))) */
	ref_near("gelu(1) (python)", 1, C[1], 0.8411919906082768, 1e-14);
	ref_near("gelu(-1) (python)", 6, C[6], -0.15880800939172324, 1e-14);
	ref_near("gelu(4.5) (python)", 0, C[0], 4.499994863262588, 1e-14);
	return ref_done("matmul_bias_gelu");
}
