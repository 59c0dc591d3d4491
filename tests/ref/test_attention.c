/* Two batches, T = 2 queries, S = 3 keys, D = 2, scale 1; K stored as rows [S,D]:
 *   Q0 = [[1,0],[0,1]]  K = [[1,0],[0,1],[1,1]]  V = [[1,2],[3,4],[5,6]]  (both batches)
 *   Q1 = 2 Q0.  Scores: Q0 K^T = [[1,0,1],[0,1,1]], Q1 K^T = twice that.
 *   Row [c,0,c] gives p = [e^c, 1, e^c] / (2e^c + 1) and O = [3,4] whatever c;
 *   row [0,c,c] gives O = [1 + 8e^c, 2 + 10e^c] / (1 + 2e^c).
 *   A reference that normalised over the queries instead of the keys, or
 *   read V transposed, gives other values. */
#include <math.h>

#include "attention.h"
#include "check.h"

int main(void)
{
	const double Q[8] = {1, 0, 0, 1, 2, 0, 0, 2};
	const double K[12] = {1, 0, 0, 1, 1, 1, 1, 0, 0, 1, 1, 1};
	const double V[12] = {1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6};
	double O[8];
	for (int i = 0; i < 8; i++) O[i] = -99;
	fz_attention_ref_args a = {.t_Q = Q, .t_K = K, .t_V = V, .t_scale = 1, .t_O = O, .n_B = 2, .n_T = 2, .n_S = 3, .n_D = 2};
	ref_int("return", 0, fz_attention_reference(&a), 0);
	const double e1 = exp(1.0), e2 = exp(2.0);
	const double want[8] = {3, 4, (1 + 8 * e1) / (1 + 2 * e1), (2 + 10 * e1) / (1 + 2 * e1),
	                        3, 4, (1 + 8 * e2) / (1 + 2 * e2), (2 + 10 * e2) / (1 + 2 * e2)};
	ref_near_all("O", O, want, 8, 1e-12);
	return ref_done("attention");
}
