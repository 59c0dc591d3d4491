/* The float64 reference of tests/ref/lang/sgd_inplace.fuse: w and mom hold
 * the inputs on entry and the updated values on return. */
#include "sgd_inplace.h"
#include "../check.h"

int main(void)
{
	double w[3] = {1, -2, 0.5}, mom[3] = {0.1, 0, -1}, cnt[3] = {9, 9, 9};
	const double g[3] = {0.5, -1, 0.25};
	const int32_t k[3] = {1, 5, 9};
	fz_sgd_inplace_ref_args a = {w, g, mom, 0.1, 0.9, k, cnt, 3};
	ref_int("return", 0, fz_sgd_inplace_reference(&a), 0);
	const double want_mom[3] = {0.9 * 0.1 + 0.5, -1, 0.9 * -1 + 0.25};
	const double want_w[3] = {1 - 0.1 * 0.59, -2 + 0.1, 0.5 + 0.1 * 0.65};
	ref_near_all("mom", mom, want_mom, 3, 1e-15);
	ref_near_all("w", w, want_w, 3, 1e-15);
	const double want_cnt[3] = {1, 5, 9};
	ref_near_all("cnt", cnt, want_cnt, 3, 0);
	return ref_done("sgd_inplace");
}
