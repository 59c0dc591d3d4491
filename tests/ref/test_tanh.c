/* tanh(0) = 0, tanh(ln 2) = (4 - 1) / (4 + 1) = 0.6, tanh(-ln 2) = -0.6. */
#include "tanh.h"
#include "check.h"

int main(void)
{
	const double x[3] = {0, log(2.0), -log(2.0)};
	double y[3] = {9, 9, 9};
	fz_tanh_ref_args a = {.t_x = x, .t_y = y, .n_N = 3};
	ref_int("return", 0, fz_tanh_reference(&a), 0);
	const double want[3] = {0, 0.6, -0.6};
	ref_near_all("y", y, want, 3, 1e-15);
	return ref_done("tanh");
}
