/* KL(q||p) = sum q (log q - log p), q = (1/2, 1/4, 1/4), p = (1/4, 1/4, 1/2):
 * 1/2 ln 2 + 0 + 1/4 ln(1/2) = 1/4 ln 2. */
#include "kl_divergence.h"
#include "check.h"

int main(void)
{
	const double q[3] = {0.5, 0.25, 0.25}, p[3] = {0.25, 0.25, 0.5};
	double kl = -1.0;
	fz_kl_divergence_ref_args a = {.t_q = q, .t_p = p, .t_kl = &kl, .n_N = 3};
	ref_int("return", 0, fz_kl_divergence_reference(&a), 0);
	ref_near("kl", 0, kl, 0.25 * log(2.0), 1e-15);
	ref_near("kl (python)", 0, kl, 0.17328679513998632, 1e-15);
	return ref_done("kl_divergence");
}
