/* fz_divm (fusec/cuda/emit_prelude.c), the text fusec emits into every
 * kernel, run on the host: a point kernel splits its flat index with it on
 * every point, so a wrong quotient is a wrong element. Built by tests/run.sh
 * (group unit) with -include of that text, cut from `fusec --emit=cuda`;
 * checks n / d for every d < 4100, divisors near powers of two and 2^31,
 * and dividends at 0, around multiples of d and up to past 2^32 (the
 * fallback). Exit status: the number of wrong quotients (at most 100). */
#include <stdio.h>
#include <stdlib.h>

static long long wrong;

static void one(fz_divm dm, long long n, long long d)
{
	const long long q = fz_divq(dm, n, d);
	if (q != n / d && wrong++ < 10) printf("fz_divq(%lld, %lld) = %lld, not %lld\n", n, d, q, n / d);
}

static void divisor(long long d, unsigned *seed)
{
	const fz_divm dm = fz_divm_make(d);
	const long long ns[] = {0, 1, 2, d - 1, d, d + 1, 0x7ffffffeLL, 0x7fffffffLL, 0x80000000LL, 0xffffffffLL, 0x100000000LL, 0x2345678901LL};
	for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
		if (ns[i] >= 0) one(dm, ns[i], d);
	for (int k = 0; k < 300; k++) { /* around multiples of d under 2^31 */
		*seed = *seed * 1103515245u + 12345u;
		const long long m = (long long)(*seed % (0x7fffffffu / (unsigned long long)d + 1));
		for (int e = -1; e <= 1; e++)
			if (m * d + e >= 0) one(dm, m * d + e, d);
		one(dm, m * d + d - 1, d);
	}
}

int main(void)
{
	unsigned seed = 7;
	for (long long d = 1; d < 4100; d++) divisor(d, &seed);
	for (int b = 2; b <= 33; b++)
		for (int e = -2; e <= 2; e++) divisor((1LL << b) + e, &seed);
	for (int k = 0; k < 2000; k++) {
		seed = seed * 1103515245u + 12345u;
		divisor(2 + seed % 0x7ffffffdu, &seed);
	}
	printf("fz_divm: %lld wrong quotients\n", wrong);
	return wrong > 100 ? 100 : (int)wrong;
}
