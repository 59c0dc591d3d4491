/* T = 2 queries, S = 3 keys, D = 2, scale 2, a mask that hides key 1 from
 * query 0 (-1e9) and adds 1 to key 2 for query 1:
 *   Q = [[1,0],[0,1]]  K = [[1,0],[0,1],[0,0]]  V = [[1,2],[3,4],[5,6]]
 *   z row 0 = 2 [1,0,0] + [0,-1e9,0] = [2, -1e9, 0]: O = (e^2 [1,2] + [5,6]) / (e^2 + 1),
 *     lse = log(e^2 + 1)
 *   z row 1 = 2 [0,1,0] + [0,0,1] = [0, 2, 1]: O = ([1,2] + e^2 [3,4] + e [5,6]) / (1 + e^2 + e),
 *     lse = log(1 + e^2 + e) */
#include <math.h>

#include "attention_lse.h"
#include "check.h"

int main(void)
{
	const double Q[4] = {1, 0, 0, 1}, K[6] = {1, 0, 0, 1, 0, 0}, V[6] = {1, 2, 3, 4, 5, 6};
	const double mask[6] = {0, -1e9, 0, 0, 0, 1};
	double O[4], lse[2];
	for (int i = 0; i < 4; i++) O[i] = -99;
	lse[0] = lse[1] = -99;
	fz_attention_lse_ref_args a = {.t_Q = Q, .t_K = K, .t_V = V, .t_mask = mask, .t_scale = 2, .t_O = O, .t_lse = lse,
	                               .n_T = 2, .n_S = 3, .n_D = 2};
	ref_int("return", 0, fz_attention_lse_reference(&a), 0);
	const double e = exp(1.0), e2 = exp(2.0), d0 = e2 + 1, d1 = 1 + e2 + e;
	const double want[4] = {(e2 + 5) / d0, (2 * e2 + 6) / d0, (1 + 3 * e2 + 5 * e) / d1, (2 + 4 * e2 + 6 * e) / d1};
	const double wl[2] = {log(d0), log(d1)};
	ref_near_all("O", O, want, 4, 1e-12);
	ref_near_all("lse", lse, wl, 2, 1e-12);
	return ref_done("attention_lse");
}
