/* Two batches, M = 2 queries, N = 3 keys, D = 2, scale 0.5; keys stored as rows [N,D]:
 *   Q0 = [[1,2],[0,-1]]   K0 = [[1,0],[0,1],[1,1]]    Q0 K0^T = [[1,2,3],[0,-1,-1]]
 *   Q1 = [[2,0],[1,1]]    K1 = [[-1,1],[2,2],[0,3]]   Q1 K1^T = [[-2,4,0],[0,4,3]]
 *   S = 0.5 Q K^T. A reference that read the keys as [D,N] (Q0 times [[1,0,0],[1,1,1]]
 *   = [[3,2,2],[-1,-1,-1]]) would give other values. */
#include "attn_scores.h"
#include "check.h"

int main(void)
{
	const double Q[8] = {1, 2, 0, -1, 2, 0, 1, 1};
	const double K[12] = {1, 0, 0, 1, 1, 1, -1, 1, 2, 2, 0, 3};
	double S[12];
	for (int i = 0; i < 12; i++) S[i] = -99;
	fz_attn_scores_ref_args a = {.t_Q = Q, .t_Kt = K, .t_scale = 0.5, .t_S = S, .n_Bt = 2, .n_M = 2, .n_N = 3, .n_D = 2};
	ref_int("return", 0, fz_attn_scores_reference(&a), 0);
	const double want[12] = {0.5, 1, 1.5, 0, -0.5, -0.5, -1, 2, 0, 0, 2, 1.5};
	ref_near_all("S", S, want, 12, 1e-15);
	return ref_done("attn_scores");
}
