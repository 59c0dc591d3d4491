/* One batch, T = 3, D = 1, scale 1: Q = K = [1, 2, 3], V = [10, 20, 30].
 *   row 0 sees key 0 only: O = 10
 *   row 1: z = [2, 4] -> O = (10 e^2 + 20 e^4) / (e^2 + e^4)
 *   row 2: z = [3, 6, 9] -> O = (10 e^3 + 20 e^6 + 30 e^9) / (e^3 + e^6 + e^9)
 * A reference that ignored the mask would give row 0 = (10 e + 20 e^2 + 30 e^3) / (e + e^2 + e^3). */
#include <math.h>

#include "attention_causal.h"
#include "check.h"

int main(void)
{
	const double Q[3] = {1, 2, 3}, K[3] = {1, 2, 3}, V[3] = {10, 20, 30};
	double O[3] = {-99, -99, -99};
	fz_attention_causal_ref_args a = {.t_Q = Q, .t_K = K, .t_V = V, .t_scale = 1, .t_O = O, .n_B = 1, .n_T = 3, .n_D = 1};
	ref_int("return", 0, fz_attention_causal_reference(&a), 0);
	const double want[3] = {10, (10 * exp(2.0) + 20 * exp(4.0)) / (exp(2.0) + exp(4.0)),
	                        (10 * exp(3.0) + 20 * exp(6.0) + 30 * exp(9.0)) / (exp(3.0) + exp(6.0) + exp(9.0))};
	ref_near_all("O", O, want, 3, 1e-12);
	return ref_done("attention_causal");
}
