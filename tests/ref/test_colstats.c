/* N = 4, C = 2: column 0 is 1, 2, 3, 6 (mean 3, squared deviations 4, 1,
 * 0, 9: variance 14/4 = 3.5), column 1 is -1 four times (mean -1,
 * variance 0). */
#include "colstats.h"
#include "check.h"

int main(void)
{
	const double X[8] = {1, -1, 2, -1, 3, -1, 6, -1};
	double mean[2] = {0}, var[2] = {0};
	fz_colstats_ref_args a = {.t_X = X, .t_mean = mean, .t_var = var, .n_N = 4, .n_C = 2};
	ref_int("return", 0, fz_colstats_reference(&a), 0);
	const double want_mean[2] = {3, -1}, want_var[2] = {3.5, 0};
	ref_near_all("mean", mean, want_mean, 2, 1e-15);
	ref_near_all("var", var, want_var, 2, 1e-15);
	return ref_done("colstats");
}
