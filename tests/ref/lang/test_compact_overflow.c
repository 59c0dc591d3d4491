/* The float64 reference of tests/ref/lang/compact_overflow.fuse. N = 5,
 * K = 2: three values pass (n = 0, 2, 3); the list has room for two, the
 * first two in iteration order, and the count is 3, as the kernel's
 * atomic count is (it was 2). Past the room nothing is written. */
#include "compact_overflow.h"
#include "../check.h"

int main(void)
{
	const double u[5] = {1, 0, 1, 1, 0};
	int32_t idx[3] = {-1, -1, -7}; /* idx[2]: a guard past the list */
	int32_t cnt = -1;
	fz_compact_overflow_ref_args a = {.t_u = u, .t_idx = idx, .t_cnt = &cnt, .n_N = 5, .n_K = 2};
	ref_int("return", 0, fz_compact_overflow_reference(&a), 0);
	ref_int("cnt", 0, cnt, 3);
	ref_int("idx", 0, idx[0], 0);
	ref_int("idx", 1, idx[1], 2);
	ref_int("guard", 2, idx[2], -7);
	return ref_done("compact_overflow");
}
