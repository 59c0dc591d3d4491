/* Two batches of 2 x 3 by 3 x 2 products, bias (0.5, -1), all row-major, batch after batch:
 *   A0 = [[1,2,3],[-1,0,1]]   B0 = [[1,0],[0,1],[1,-1]]   A0 B0 = [[4,-1],[0,-1]]
 *   A1 = [[0,1,0],[2,2,2]]    B1 = [[3,1],[-2,0],[1,1]]   A1 B1 = [[-2,0],[4,4]]
 *   Y = relu(A B + bias): batch 0 [[4.5,0],[0.5,0]], batch 1 [[0,0],[4.5,3]].
 * A reference that mixed the batches (A0 B1, A1 B0: [[2,4],[-2,0]], [[0,1],[4,0]])
 * or ignored the batch of B would give other values. */
#include "bmm_bias_relu.h"
#include "check.h"

int main(void)
{
	const double A[12] = {1, 2, 3, -1, 0, 1, 0, 1, 0, 2, 2, 2};
	const double B[12] = {1, 0, 0, 1, 1, -1, 3, 1, -2, 0, 1, 1};
	const double bias[2] = {0.5, -1};
	double Y[8];
	for (int i = 0; i < 8; i++) Y[i] = -99;
	fz_bmm_bias_relu_ref_args a = {.t_A = A, .t_B = B, .t_bias = bias, .t_Y = Y, .n_Bt = 2, .n_M = 2, .n_K = 3, .n_N = 2};
	ref_int("return", 0, fz_bmm_bias_relu_reference(&a), 0);
	const double want[8] = {4.5, 0, 0.5, 0, 0, 0, 4.5, 3};
	ref_near_all("Y", Y, want, 8, 1e-15);
	return ref_done("bmm_bias_relu");
}
