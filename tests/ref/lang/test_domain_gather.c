/* The float64 reference of tests/ref/lang/domain_gather.fuse (issue 27):
 * malloc in [1, 5] subscripts cos: f32[N], so the reference refuses N <= 5
 * before it reads anything (3, as the runtime refuses those sizes: the
 * manifest's fits line), and at N = 6 reads cos at every value the domain
 * allows: y(i, p) = tanh(cos(malloc(p, i))) + malloc(p, i). */
#include <math.h>

#include "domain_gather.h"
#include "../check.h"

int main(void)
{
	/* nothing is read below the fits line: no buffers at all */
	for (long long n = 1; n <= 5; n++) {
		fz_domain_gather_ref_args none = {0, 0, 0, 2, n};
		ref_int("return at N <= 5 (sizes below the domain)", n, fz_domain_gather_reference(&none), 3);
	}
	enum { P = 2, N = 6 };
	const int32_t g[P * N] = {1, 2, 3, 4, 5, 5, 5, 4, 3, 2, 1, 1}; /* malloc(p, i) at p * N + i: the whole domain */
	const double c[N] = {-3, -0.5, 0.25, 1, 2, 100};
	double y[N * P];
	fz_domain_gather_ref_args a = {g, c, y, P, N};
	ref_int("return at N = 6", 0, fz_domain_gather_reference(&a), 0);
	for (int i = 0; i < N; i++)
		for (int p = 0; p < P; p++) ref_near("y", i * P + p, y[i * P + p], tanh(c[g[p * N + i]]) + g[p * N + i], 1e-15);
	/* a value outside the domain is still caught where it is read */
	int32_t g0[P * N];
	for (int k = 0; k < P * N; k++) g0[k] = k == 7 ? 6 : 1;
	fz_domain_gather_ref_args b = {g0, c, y, P, N};
	ref_int("return for malloc = 6 at N = 6", 0, fz_domain_gather_reference(&b), 1);
	return ref_done("domain_gather");
}
