/* R = 2, C = 3. Row 0: exp(0, ln 2, ln 3) = (1, 2, 3) -> (1/6, 1/3, 1/2).
 * Row 1: (1000, 1000, 1000 + ln 2): only stable with the max subtracted
 * (exp(1000) overflows) -> (1/4, 1/4, 1/2). */
#include "softmax.h"
#include "check.h"

int main(void)
{
	const double X[6] = {0, log(2.0), log(3.0), 1000, 1000, 1000 + log(2.0)};
	double Y[6] = {0};
	fz_softmax_ref_args a = {.t_X = X, .t_Y = Y, .n_R = 2, .n_C = 3};
	ref_int("return", 0, fz_softmax_reference(&a), 0);
	const double want[6] = {1.0 / 6, 1.0 / 3, 0.5, 0.25, 0.25, 0.5};
	ref_near_all("Y", Y, want, 6, 1e-13);
	return ref_done("softmax");
}
