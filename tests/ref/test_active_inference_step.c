/* W = [[1,2,3],[4,5,6]] (M=2, N=3), mu = (1,0,-1), o = (1,2), pi = (2,0.5), lr = 0.1,
 * q = (0.5,0.25,0.25), p = (0.25,0.25,0.5):
 *   g = W mu = (-2, -2); e = o - g = (3, 4); we = pi e = (6, 2);
 *   accuracy = sum we e = 18 + 8 = 26;
 *   grad = W^T we = (14, 22, 30); mu_next = mu + lr grad = (2.4, 2.2, 2.0);
 *   kl = 0.5 ln 2 + 0.25 ln 1 + 0.25 ln 0.5 = 0.25 ln 2. */
#include <math.h>

#include "active_inference_step.h"
#include "check.h"

int main(void)
{
	const double W[6] = {1, 2, 3, 4, 5, 6}, mu[3] = {1, 0, -1}, o[2] = {1, 2}, pi[2] = {2, 0.5};
	const double q[3] = {0.5, 0.25, 0.25}, p[3] = {0.25, 0.25, 0.5};
	double e[2] = {0}, next[3] = {0}, acc = 0, kl = 0;
	fz_active_inference_step_ref_args a = {.t_W = W, .t_mu = mu, .t_o = o, .t_pi = pi, .t_q = q, .t_p = p, .t_lr = 0.1,
	                                       .t_e = e, .t_mu_next = next, .t_accuracy = &acc, .t_kl = &kl, .n_M = 2, .n_N = 3};
	ref_int("return", 0, fz_active_inference_step_reference(&a), 0);
	const double want_e[2] = {3, 4}, want_next[3] = {2.4, 2.2, 2.0};
	ref_near_all("e", e, want_e, 2, 1e-15);
	ref_near_all("mu_next", next, want_next, 3, 1e-15);
	ref_near("accuracy", 0, acc, 26, 1e-14);
	ref_near("kl", 0, kl, 0.25 * log(2.0), 1e-15);
	return ref_done("active_inference_step");
}
