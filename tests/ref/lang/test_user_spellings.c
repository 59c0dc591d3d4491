/* The float64 reference of tests/ref/lang/user_spellings.fuse: silu(x) =
 * x / (1 + e^-x), a comparison cast to i32 or f32 is 1 or 0, and cos(i),
 * sin(i) read the tensors so named, not the functions. */
#include <math.h>
#include <stdint.h>

#include "user_spellings.h"
#include "../check.h"

int main(void)
{
	const double x[4] = {0.5, log(3.0), -2, -1};
	const double c[4] = {1, 2, 3, 4}, sn[4] = {10, 20, 30, 40};
	double s[4], k[4], r[4];
	int32_t m[4];
	fz_user_spellings_ref_args a = {.t_x = x, .t_cos = c, .t_sin = sn, .t_s = s, .t_m = m, .t_k = k, .t_r = r, .n_N = 4};
	ref_int("return", 0, fz_user_spellings_reference(&a), 0);
	/* silu(ln 3) = ln 3 * 3/4 exactly as sigmoid(ln 3) = 3/4 */
	const double want_s[4] = {0.5 / (1 + exp(-0.5)), 0.75 * log(3.0), -2 / (1 + exp(2.0)), -1 / (1 + exp(1.0))};
	ref_near_all("s", s, want_s, 4, 1e-15);
	const long long want_m[4] = {1, 1, 0, 0};
	const double want_k[4] = {0.5, 0, 0, -1}; /* x in [-1, 1): 0.5 and -1 */
	const double want_r[4] = {5.5, 22 * log(3.0), -66, -44};
	ref_near_all("k", k, want_k, 4, 0);
	ref_near_all("r", r, want_r, 4, 1e-14);
	for (int i = 0; i < 4; i++) ref_int("m", i, m[i], want_m[i]);
	return ref_done("user_spellings");
}
