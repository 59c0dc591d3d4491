/* sigmoid(0) = 1/2, sigmoid(ln 3) = 3/4, sigmoid(-ln 3) = 1/4. */
#include "sigmoid.h"
#include "check.h"

int main(void)
{
	const double x[3] = {0, log(3.0), -log(3.0)};
	double y[3] = {0};
	fz_sigmoid_ref_args a = {.t_x = x, .t_y = y, .n_N = 3};
	ref_int("return", 0, fz_sigmoid_reference(&a), 0);
	const double want[3] = {0.5, 0.75, 0.25};
	ref_near_all("y", y, want, 3, 1e-15);
	return ref_done("sigmoid");
}
