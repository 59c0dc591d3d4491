/* Tiny helpers for the reference tests (tests/ref/test_*.c): each test fills a
 * hand-checkable input, runs fz_NAME_reference and compares with values
 * worked out by hand (or by an independent computation in the test). */
#ifndef TESTS_REF_CHECK_H
#define TESTS_REF_CHECK_H
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static int ref_failures;

#define REF_COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* |got - want| <= tol * max(1, |want|) */
static inline void ref_near(const char *what, long long i, double got, double want, double tol)
{
	double scale = fabs(want) > 1.0 ? fabs(want) : 1.0;
	if (!(fabs(got - want) <= tol * scale)) {
		printf("  %s[%lld]: got %.17g, want %.17g\n", what, i, got, want);
		ref_failures++;
	}
}

static inline void ref_near_all(const char *what, const double *got, const double *want, long long n, double tol)
{
	for (long long i = 0; i < n; i++) ref_near(what, i, got[i], want[i], tol);
}

static inline void ref_int(const char *what, long long i, long long got, long long want)
{
	if (got != want) {
		printf("  %s[%lld]: got %lld, want %lld\n", what, i, got, want);
		ref_failures++;
	}
}

static inline int ref_done(const char *name)
{
	if (ref_failures) printf("%s: %d mismatches\n", name, ref_failures);
	return ref_failures ? 1 : 0;
}

#endif
