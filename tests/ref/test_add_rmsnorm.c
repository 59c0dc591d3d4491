/* R = 2 rows of C = 2, eps = 0: h = x + res; y = h / sqrt(mean(h^2)) * w.
 *   x = [[1,2],[0,-3]], res = [[2,2],[4,-1]] -> h = [[3,4],[4,-4]]
 *   row 0: mean h^2 = 12.5, row 1: 16; w = [1, 2]
 *   y = [[3/sqrt(12.5), 8/sqrt(12.5)], [4/4, -8/4]] */
#include <math.h>

#include "add_rmsnorm.h"
#include "check.h"

int main(void)
{
	const double x[4] = {1, 2, 0, -3}, res[4] = {2, 2, 4, -1}, w[2] = {1, 2};
	double h[4], y[4];
	for (int i = 0; i < 4; i++) h[i] = y[i] = -99;
	fz_add_rmsnorm_ref_args a = {.t_x = x, .t_res = res, .t_w = w, .t_eps = 0, .t_h = h, .t_y = y, .n_R = 2, .n_C = 2};
	ref_int("return", 0, fz_add_rmsnorm_reference(&a), 0);
	const double wh[4] = {3, 4, 4, -4}, wy[4] = {3 / sqrt(12.5), 8 / sqrt(12.5), 1, -2};
	ref_near_all("h", h, wh, 4, 1e-15);
	ref_near_all("y", y, wy, 4, 1e-12);
	return ref_done("add_rmsnorm");
}
