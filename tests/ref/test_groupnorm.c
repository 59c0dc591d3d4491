/* N = 1, G = 2 groups of CG = 2 channels, HW = 2 positions, eps = 1e-6:
 *   group 0: x = 1, 2 | 3, 4  -> mean 2.5, variance (2.25+0.25+0.25+2.25)/4 = 1.25
 *   group 1: x = 0, 0 | 0, 8  -> mean 2,   variance (4+4+4+36)/4 = 12
 *   gamma = [[1, 2], [3, 4]], beta = [[0, 1], [0, -1]] (per group, channel)
 *   y = (x - mean) / sqrt(variance + eps) * gamma(g,c) + beta(g,c) */
#include <math.h>

#include "groupnorm.h"
#include "check.h"

int main(void)
{
	const double x[8] = {1, 2, 3, 4, 0, 0, 0, 8}, gamma[4] = {1, 2, 3, 4}, beta[4] = {0, 1, 0, -1}, eps = 1e-6;
	double y[8];
	for (int i = 0; i < 8; i++) y[i] = -99;
	fz_groupnorm_ref_args a = {.t_x = x, .t_gamma = gamma, .t_beta = beta, .t_eps = eps, .t_y = y,
	                           .n_N = 1, .n_G = 2, .n_CG = 2, .n_HW = 2};
	ref_int("return", 0, fz_groupnorm_reference(&a), 0);
	const double r0 = 1 / sqrt(1.25 + eps), r1 = 1 / sqrt(12 + eps);
	const double want[8] = {-1.5 * r0, -0.5 * r0, 0.5 * r0 * 2 + 1, 1.5 * r0 * 2 + 1,
	                        -2 * r1 * 3, -2 * r1 * 3, -2 * r1 * 4 - 1, 6 * r1 * 4 - 1};
	ref_near_all("y", y, want, 8, 1e-12);
	return ref_done("groupnorm");
}
