/* test_matmul_bias_relu_bf16.c's product with A stored transposed: At (K=3 x M=2)
 * = [[1,-1],[2,0],[3,1]] is A = [[1,2,3],[-1,0,1]]; B (K=3 x N=4) =
 * [[1,0,2,0],[0,1,0,-1],[1,-1,0,1]], bias = (0.5, 2, 1, -0.5):
 *   relu(A B + bias) = [[4.5,1,3,0.5],[0.5,1,0,0.5]] */
#include "matmul_at_bias_relu_bf16.h"
#include "check.h"

int main(void)
{
	const double At[6] = {1, -1, 2, 0, 3, 1};
	const double B[12] = {1, 0, 2, 0, 0, 1, 0, -1, 1, -1, 0, 1};
	const double bias[4] = {0.5, 2, 1, -0.5};
	double C[8];
	for (int i = 0; i < 8; i++) C[i] = -99;
	fz_matmul_at_bias_relu_bf16_ref_args a = {.t_A = At, .t_B = B, .t_bias = bias, .t_C = C, .n_M = 2, .n_K = 3, .n_N = 4};
	ref_int("return", 0, fz_matmul_at_bias_relu_bf16_reference(&a), 0);
	const double want[8] = {4.5, 1, 3, 0.5, 0.5, 1, 0, 0.5};
	ref_near_all("C", C, want, 8, 0);
	return ref_done("matmul_at_bias_relu_bf16");
}
