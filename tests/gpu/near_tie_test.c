/* Unit test of tests/gpu/near_tie.h, what validate.c accepts as a near tie
 * (issue 27); no GPU. tests/gpu/run.sh builds and runs it first, in DRY mode
 * too, so make check's gpurun group runs it:
 *   cc -std=c11 tests/gpu/near_tie_test.c -lm && ./a.out
 * Prints "FAIL what" for each failed case and "near_tie_test: N passed, N
 * failed"; exit 1 on a failure. */
#include <stdio.h>

#include "near_tie.h"

static int npass, nfail;
static void expect(int ok, const char *what)
{
	if (ok) npass++;
	else nfail++, printf("FAIL %s\n", what);
}

static void test_elements(void)
{
	expect(nt_nudge(2.0, 1, 0.5, -INFINITY, INFINITY) == 3.0, "nudge up");
	expect(nt_nudge(-2.0, 1, 0.5, -INFINITY, INFINITY) == -1.0, "nudge up a negative: towards +inf");
	expect(nt_nudge(-2.0, -1, 0.5, -INFINITY, INFINITY) == -3.0, "nudge down a negative");
	expect(nt_nudge(0.9, 1, 0.5, 0.05, 1.0) == 1.0, "nudge kept in the domain");
	expect(elem_diff(NAN, 1) == INFINITY && elem_diff(1, NAN) == INFINITY, "NaN is infinitely far");
	expect(elem_diff(INFINITY, INFINITY) == 0, "equal infinities are equal");

	double cnt[NT_REFS] = {73338, 73337, 73340}; /* reference, nudged down, up */
	expect(nt_int_out(73339, cnt, NT_REFS) == 0, "a count between the nudged ones");
	expect(nt_int_out(73337, cnt, NT_REFS) == 0 && nt_int_out(73340, cnt, NT_REFS) == 0, "the envelope's ends");
	expect(nt_int_out(73341, cnt, NT_REFS) == 1 && nt_int_out(73335, cnt, NT_REFS) == 2, "a count outside it");
	expect(nt_int_out(73339, cnt, 1) == 1, "strict: only the reference");

	double v[NT_REFS] = {0.999999, 0, 0.999999}; /* a membrane reset only in the run nudged down */
	expect(nt_float_out(0, v, NT_REFS) == 0 && nt_float_out(0.999999, v, NT_REFS) == 0, "either side of the tie");
	expect(nt_float_out(0.5, v, NT_REFS) > 0.4, "a value no run gives");
	expect(nt_float_out(NAN, v, NT_REFS) == INFINITY, "an unwritten (NaN) element");
}

static void test_lists(void)
{
	/* the reference fires 1 2 3 7; at inputs nudged down 1 2 7 (3 was a
	   tie), up 1 2 3 4 7 (4 was one too) */
	const long long r0[] = {1, 2, 3, 7}, r1[] = {1, 2, 7}, r2[] = {1, 2, 3, 4, 7};
	const long long *r[NT_REFS] = {r0, r1, r2}, nr[NT_REFS] = {4, 3, 5};
	const long long same[] = {1, 2, 3, 7}, more[] = {1, 2, 3, 4, 7}, fewer[] = {1, 2, 7}, mixed[] = {1, 2, 4, 7};
	const long long lost[] = {2, 3, 7}, invented[] = {1, 2, 3, 5, 7}, twice[] = {1, 2, 2, 3, 7};
	expect(nt_list_ok(same, 4, r, nr, NT_REFS), "the reference's list");
	expect(nt_list_ok(more, 5, r, nr, NT_REFS) && nt_list_ok(fewer, 3, r, nr, NT_REFS), "ties all one way");
	expect(nt_list_ok(mixed, 4, r, nr, NT_REFS), "ties each its own way");
	expect(!nt_list_ok(lost, 3, r, nr, NT_REFS), "an entry every run holds, lost");
	expect(!nt_list_ok(invented, 5, r, nr, NT_REFS), "an entry no run holds");
	expect(!nt_list_ok(twice, 5, r, nr, NT_REFS), "an entry twice");
	expect(!nt_list_ok(more, 5, r, nr, 1) && nt_list_ok(same, 4, r, nr, 1), "strict: only the reference");
	expect(nt_missing(mixed, 4, r0, 4) == 1 && nt_missing(r0, 4, mixed, 4) == 1, "entries in one list only");
}

/* The case of issue 27 end to end: a count of u = 0.9 v + w >= 1, the
   kernel's in f32 (fmaf, as the GPU contracts it) against the reference's
   in f64 at the inputs nudged by dir (0: as given). */
static long long fires(const float *v, const float *w, int n, int dir, int f32)
{
	long long c = 0;
	for (int k = 0; k < n; k++) {
		double a = nt_nudge(v[k], dir, NT_NUDGE, -INFINITY, INFINITY), b = nt_nudge(w[k], dir, NT_NUDGE, -INFINITY, INFINITY);
		c += f32 ? fmaf(0.9f, v[k], w[k]) >= 1.0f : (double)0.9f * a + b >= 1.0;
	}
	return c;
}
/* A neuron 0 within half an f32 rounding below the threshold: the f64 sum
   stays below 1, the f32 one rounds up to it. */
static int tie(float *v, float *w)
{
	for (*v = 0.3f; *v < 0.4f; *v = nextafterf(*v, 1)) {
		*w = (float)(1.0 - (double)0.9f * *v);
		while ((double)0.9f * *v + *w >= 1.0) *w = nextafterf(*w, 0);
		if (fmaf(0.9f, *v, *w) >= 1.0f) return 1;
	}
	return 0;
}
static void test_threshold(void)
{
	/* neuron 1 is well above the threshold, 2 well below */
	float v[3] = {0, 0.6f, 0.1f}, w[3] = {0, 0.5f, 0.2f};
	expect(tie(&v[0], &w[0]), "a neuron at the threshold found");
	double r[NT_REFS] = {(double)fires(v, w, 3, 0, 0), (double)fires(v, w, 3, -1, 0), (double)fires(v, w, 3, 1, 0)};
	long long gpu = fires(v, w, 3, 0, 1);
	expect(gpu == (long long)r[0] + 1, "the f32 count is off by the tie (the case itself)");
	expect(nt_int_out((double)gpu, r, NT_REFS) == 0, "the tie's count accepted");
	expect(nt_int_out((double)(gpu + 1), r, NT_REFS) > 0, "a count off by a neuron far from the threshold fails");
	expect(nt_int_out(r[0] - 1, r, NT_REFS) > 0, "a lost spike away from the tie fails");
}

int main(void)
{
	test_elements();
	test_lists();
	test_threshold();
	printf("near_tie_test: %d passed, %d failed\n", npass, nfail);
	return nfail != 0;
}
