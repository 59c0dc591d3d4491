/* Near ties in tests/gpu/validate.c (issue 27): what it may accept when a
 * kernel's output fails the strict comparison with the float64 reference.
 *
 * The kernel computes in f32 where the reference computes in f64, so a value
 * within a few f32 roundings of a decision boundary (a neuron's membrane at
 * its threshold) can fall on the other side: one spike more or less, a count
 * off by one, an element reset or not. validate.c then runs the reference
 * twice more, at every float input tensor nudged down and up by NT_NUDGE
 * (x -/+ NT_NUDGE |x|), and accepts an output only where each difference from
 * the reference is one of those runs' answers:
 *   - an integer element lies within [min, max] of the three references;
 *   - a float element is within the tolerance of one of the three;
 *   - a compacted list holds distinct entries, each held by some reference,
 *     and every entry that all three hold.
 * A result no nudged reference gives (a wrong value, a lost or an invented
 * entry away from a boundary) still fails. The nudge is 16 f32 roundings
 * (16 f64 ones for f64 data): about what a few float operations (a
 * scatter's additions, say) can lose. It moves every input one way, so it
 * explains ties of a result that grows or shrinks with its inputs (a sum
 * against a threshold); a tie between two computed values (a distance
 * against another, as transfer_entropy's counts) moves with neither, and
 * such a mismatch still fails.
 *
 * Pure C, no CUDA: tests/gpu/near_tie_test.c runs it on any machine. */
#ifndef NEAR_TIE_H
#define NEAR_TIE_H
#include <math.h>
#include <stdlib.h>

#define NT_NUDGE (1.0 / 1048576) /* 2^-20: 16 units of f32 rounding (2^-24) */
enum { NT_REFS = 3 };            /* the reference, nudged down, nudged up */

/* x nudged by dir (-1 or +1) times rel of its magnitude, kept in [lo, hi]
   (an input's domain, so that the reference stays defined) */
static inline double nt_nudge(double x, int dir, double rel, double lo, double hi)
{
	double y = x + dir * rel * fabs(x);
	return y < lo ? lo : y > hi ? hi : y;
}

/* |g - r| for one element; any NaN, in the output (an element never
   written keeps its poison) or in the reference (inputs outside a
   function's domain: it would match the poison), is an infinite error;
   equal infinities are equal (as fuserun's rt_compare). */
static inline double elem_diff(double g, double r)
{
	if (isnan(g) || isnan(r)) return INFINITY;
	return g == r ? 0 : fabs(g - r);
}

/* How far an integer result g lies outside [min, max] of r[0..n-1]. */
static inline double nt_int_out(double g, const double *r, int n)
{
	double lo = r[0], hi = r[0];
	for (int p = 1; p < n; p++) lo = r[p] < lo ? r[p] : lo, hi = r[p] > hi ? r[p] : hi;
	return g < lo ? lo - g : g > hi ? g - hi : 0;
}

/* How far a float result g lies from the nearest of r[0..n-1]. */
static inline double nt_float_out(double g, const double *r, int n)
{
	double best = INFINITY;
	for (int p = 0; p < n; p++) {
		double d = elem_diff(g, r[p]);
		best = d < best ? d : best;
	}
	return best;
}

static inline int nt_cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;
	return x < y ? -1 : x > y;
}
static inline int nt_has(const long long *s, long long n, long long v) /* s sorted */
{
	return n > 0 && bsearch(&v, s, (size_t)n, sizeof *s, nt_cmp_ll) != NULL;
}

/* Entries of sorted a[0..na) that sorted b[0..nb) lacks. */
static inline long long nt_missing(const long long *a, long long na, const long long *b, long long nb)
{
	long long m = 0;
	for (long long k = 0; k < na; k++) m += !nt_has(b, nb, a[k]);
	return m;
}

/* A compacted list got[0..ng) against the references' lists r[p][0..nr[p]),
   all sorted: 1 if its entries are distinct, each is held by some reference,
   and it holds every entry all references hold. */
static inline int nt_list_ok(const long long *got, long long ng, const long long *const *r, const long long *nr, int n)
{
	for (long long k = 0; k < ng; k++) {
		int held = 0;
		for (int p = 0; p < n && !held; p++) held = nt_has(r[p], nr[p], got[k]);
		if (!held || (k > 0 && got[k] == got[k - 1])) return 0;
	}
	for (long long k = 0; k < nr[0]; k++) {
		int all = 1;
		for (int p = 1; p < n && all; p++) all = nt_has(r[p], nr[p], r[0][k]);
		if (all && !nt_has(got, ng, r[0][k])) return 0;
	}
	return 1;
}
#endif
