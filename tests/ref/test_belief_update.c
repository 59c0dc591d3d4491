/* W = [[1,2,3],[4,5,6]] (M=2, N=3), mu = (1,0,-1), o = (1,2), pi = (2,0.5), lr = 0.1:
 *   g = W mu = (-2, -2); e = pi (o - g) = (6, 2);
 *   grad = W^T e = (1*6+4*2, 2*6+5*2, 3*6+6*2) = (14, 22, 30);
 *   mu_next = mu + lr grad = (2.4, 2.2, 2.0). */
#include "belief_update.h"
#include "check.h"

int main(void)
{
	const double W[6] = {1, 2, 3, 4, 5, 6}, mu[3] = {1, 0, -1}, o[2] = {1, 2}, pi[2] = {2, 0.5};
	double next[3] = {0};
	fz_belief_update_ref_args a = {.t_W = W, .t_mu = mu, .t_o = o, .t_pi = pi, .t_lr = 0.1, .t_mu_next = next, .n_M = 2, .n_N = 3};
	ref_int("return", 0, fz_belief_update_reference(&a), 0);
	const double want[3] = {2.4, 2.2, 2.0};
	ref_near_all("mu_next", next, want, 3, 1e-15);
	return ref_done("belief_update");
}
