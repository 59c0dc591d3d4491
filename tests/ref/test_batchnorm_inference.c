/* B = 2, C = 3, eps = 1: rsqrt(var + eps) = (1/2, 1, 1/3).
 *   Y(b,c) = (X - mean) * rsqrt(var + eps) * gamma + beta
 *   row 0: (0*0.5*2 + 0, 0*1*1 + 1, 0*(1/3)*3 - 1) = (0, 1, -1)
 *   row 1: (3*0.5*2 + 0, 3*1*1 + 1, 3*(1/3)*3 - 1) = (3, 4, 2) */
#include "batchnorm_inference.h"
#include "check.h"

int main(void)
{
	const double X[6] = {1, 2, 3, 4, 5, 6}, mean[3] = {1, 2, 3}, var[3] = {3, 0, 8};
	const double gamma[3] = {2, 1, 3}, beta[3] = {0, 1, -1};
	double Y[6] = {0};
	fz_batchnorm_inference_ref_args a = {.t_X = X, .t_mean = mean, .t_var = var, .t_gamma = gamma, .t_beta = beta,
	                                     .t_eps = 1.0, .t_Y = Y, .n_B = 2, .n_C = 3};
	ref_int("return", 0, fz_batchnorm_inference_reference(&a), 0);
	const double want[6] = {0, 1, -1, 3, 4, 2};
	ref_near_all("Y", Y, want, 6, 1e-15);
	return ref_done("batchnorm_inference");
}
