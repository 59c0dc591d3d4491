/* e = o - g = (0.5, -0.5, 2); accuracy = pi e^2 = (0.5, 1, 2); total = 3.5. */
#include "prediction_error.h"
#include "check.h"

int main(void)
{
	const double o[3] = {1, 2, 3}, g[3] = {0.5, 2.5, 1}, pi[3] = {2, 4, 0.5};
	double e[3], acc[3], total = -1;
	fz_prediction_error_ref_args a = {.t_o = o, .t_g = g, .t_pi = pi, .t_e = e, .t_accuracy = acc, .t_total = &total, .n_N = 3};
	ref_int("return", 0, fz_prediction_error_reference(&a), 0);
	const double we[3] = {0.5, -0.5, 2}, wacc[3] = {0.5, 1, 2};
	ref_near_all("e", e, we, 3, 0);
	ref_near_all("accuracy", acc, wacc, 3, 0);
	ref_near("total", 0, total, 3.5, 0);
	return ref_done("prediction_error");
}
