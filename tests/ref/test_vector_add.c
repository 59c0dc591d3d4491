#include "vector_add.h"
#include "check.h"

int main(void)
{
	const double x[3] = {1, -2, 0.25}, y[3] = {10, 2, 0.5};
	double z[3] = {0};
	fz_vector_add_ref_args a = {.t_x = x, .t_y = y, .t_z = z, .n_N = 3};
	ref_int("return", 0, fz_vector_add_reference(&a), 0);
	const double want[3] = {11, 0, 0.75};
	ref_near_all("z", z, want, 3, 0);
	return ref_done("vector_add");
}
