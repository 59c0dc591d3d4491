/* The float64 reference of tests/ref/lang/whole8.fuse: the sum over all 8
 * indices of A(a,b,c,d) * B(e,f,g,h) is sum(A) * sum(B). Sizes 2,1,3,1 and
 * 1,2,1,3 so that every index ranges over its own extent. */
#include "whole8.h"
#include "../check.h"

int main(void)
{
	double A[2 * 1 * 3 * 1], B[1 * 2 * 1 * 3], s = -1;
	double sa = 0, sb = 0;
	for (int i = 0; i < 6; i++) A[i] = i + 1, B[i] = 0.5 * (i + 1) * (i + 1), sa += A[i], sb += B[i];
	fz_whole8_ref_args a = {A, B, &s, 2, 1, 3, 1, 1, 2, 1, 3};
	ref_int("return", 0, fz_whole8_reference(&a), 0);
	ref_near("double", 0, s, sa * sb, 1e-15);
	return ref_done("whole8");
}
