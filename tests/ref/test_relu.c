#include "relu.h"
#include "check.h"

int main(void)
{
	const double x[4] = {-1, 0, 2.5, -0.0};
	double y[4] = {9, 9, 9, 9};
	fz_relu_ref_args a = {.t_x = x, .t_y = y, .n_N = 4};
	ref_int("return", 0, fz_relu_reference(&a), 0);
	const double want[4] = {0, 0, 2.5, 0};
	ref_near_all("y", y, want, 4, 0);
	return ref_done("relu");
}
