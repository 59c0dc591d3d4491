/* A (M=2 x K=3) = [[1,2,3],[-1,0,1]], B (K=3 x N=4) = [[1,0,2,0],[0,1,0,-1],[1,-1,0,1]],
 * bias = (0.5, 2, 1, -0.5); all row-major. The reference is exact f64 (tf32 is
 * the GPU's, dsl/MATH.md):
 *   A B + bias = [[4.5,1,3,0.5],[0.5,1,-1,0.5]]
 * and an operand no tf32 could hold (1 + 2^-20) still counts in full here. */
#include "matmul_bias_tf32.h"
#include "check.h"

int main(void)
{
	const double A[6] = {1, 2, 3, -1, 0, 1};
	const double B[12] = {1, 0, 2, 0, 0, 1, 0, -1, 1, -1, 0, 1};
	const double bias[4] = {0.5, 2, 1, -0.5};
	double C[8];
	for (int i = 0; i < 8; i++) C[i] = -99;
	fz_matmul_bias_tf32_ref_args a = {.t_A = A, .t_B = B, .t_bias = bias, .t_C = C, .n_M = 2, .n_K = 3, .n_N = 4};
	ref_int("return", 0, fz_matmul_bias_tf32_reference(&a), 0);
	const double want[8] = {4.5, 1, 3, 0.5, 0.5, 1, -1, 0.5};
	ref_near_all("C", C, want, 8, 0);
	const double A1[1] = {1 + 0x1p-20}, B1[1] = {1}, b1[1] = {0};
	double C1[1] = {-99};
	fz_matmul_bias_tf32_ref_args one = {.t_A = A1, .t_B = B1, .t_bias = b1, .t_C = C1, .n_M = 1, .n_K = 1, .n_N = 1};
	ref_int("return (1x1x1)", 0, fz_matmul_bias_tf32_reference(&one), 0);
	ref_near_all("C (1x1x1)", C1, A1, 1, 0);
	return ref_done("matmul_bias_tf32");
}
