/* A (M=2 x K=3) = [[1,2,3],[-1,0,1]], B stored as B[N,K] (N=4 x K=3) =
 * [[1,0,1],[0,1,-1],[2,0,0],[0,-1,1]] (B^T is matmul_bias_tf32's B), scales
 * a_scale = 0.5, b_scale = 4, bias = (0.5, 2, 1, -0.5); all row-major. The
 * reference reads the inputs as the doubles they are (the driver decodes the
 * e4m3 bytes exactly, dsl/MATH.md) and computes in f64:
 *   A B^T = [[4,-1,2,1],[0,-1,-2,1]], x 2 + bias = [[8.5,0,5,1.5],[0.5,0,-3,1.5]],
 *   relu:  [[8.5,0,5,1.5],[0.5,0,0,1.5]]
 * and e4m3's extremes count in full: 448 x 448 (its largest) and 2^-9 x 2^-9
 * (its smallest subnormal). */
#include "matmul_bias_relu_fp8.h"
#include "check.h"

int main(void)
{
	const double A[6] = {1, 2, 3, -1, 0, 1};
	const double B[12] = {1, 0, 1, 0, 1, -1, 2, 0, 0, 0, -1, 1};
	const double bias[4] = {0.5, 2, 1, -0.5};
	double C[8];
	for (int i = 0; i < 8; i++) C[i] = -99;
	fz_matmul_bias_relu_fp8_ref_args a = {.t_A = A, .t_B = B, .t_a_scale = 0.5, .t_b_scale = 4, .t_bias = bias, .t_C = C, .n_M = 2, .n_K = 3, .n_N = 4};
	ref_int("return", 0, fz_matmul_bias_relu_fp8_reference(&a), 0);
	const double want[8] = {8.5, 0, 5, 1.5, 0.5, 0, 0, 1.5};
	ref_near_all("C", C, want, 8, 0);
	const double A1[2] = {448, 0x1p-9}, B1[2] = {448, 0x1p-9}, b1[1] = {0};
	double C1[1] = {-99};
	const double w1[1] = {448.0 * 448.0 + 0x1p-18};
	fz_matmul_bias_relu_fp8_ref_args one = {.t_A = A1, .t_B = B1, .t_a_scale = 1, .t_b_scale = 1, .t_bias = b1, .t_C = C1, .n_M = 1, .n_K = 2, .n_N = 1};
	ref_int("return (1x2x1)", 0, fz_matmul_bias_relu_fp8_reference(&one), 0);
	ref_near_all("C (1x2x1)", C1, w1, 1, 0);
	return ref_done("matmul_bias_relu_fp8");
}
