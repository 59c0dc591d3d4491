/* The host's fp8 conversions (runtime/tool/tensors.c: rt_f2e4m3,
 * rt_e4m32f, rt_f2e5m2, rt_e5m22f), which fill fuserun's and
 * tests/gpu/validate.c's fp8 inputs and read them back for the float64
 * reference: every one of the 256 codes round trips, the specials and the
 * ends are where the formats put them, ties go to even, and everything
 * else saturates as the device's cvt.rn.satfinite does. Where the toolkit
 * has cuda_fp8.h, its host emulation of that instruction
 * (__nv_cvt_double_to_fp8, __NV_SATFINITE) is the oracle for the midpoints
 * between codes and for a million values of every magnitude. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tensors.h"
#include "testutil.h"

#if defined(__has_include)
#if __has_include(<cuda_fp8.h>)
#include <cuda_fp8.h>
#define HAVE_CUDA_FP8 1
#endif
#endif

typedef struct fp8_case {
	const char *name;
	uint8_t (*from)(double);
	double (*to)(uint8_t);
	double max;
	int e5; /* 1: e5m2 (infinities, the top byte of an f16), 0: e4m3 */
} fp8_case;

static int is_nan_code(const fp8_case *f, uint8_t b) { return isnan(f->to(b)); }

/* every code: decoded, then encoded back to itself (an infinity, which
   satfinite cannot give, to the largest finite value of its sign) */
static void round_trip(const fp8_case *f)
{
	char name[96], detail[160] = "";
	int bad = 0;
	for (int b = 0; b < 256 && !bad; b++) {
		const double v = f->to((uint8_t)b);
		const uint8_t back = f->from(v), want = isinf(v) ? (uint8_t)((b & 0x80) | f->from(f->max)) : (uint8_t)b;
		if (isnan(v) ? !is_nan_code(f, back) : back != want)
			bad = 1, snprintf(detail, sizeof detail, "code 0x%02x = %.17g encodes as 0x%02x", b, v, back);
	}
	snprintf(name, sizeof name, "fp8 %s: all 256 codes round trip", f->name);
	check(!bad, name, detail);
}

/* the specials and the ends of each format */
static void landmarks(void)
{
	check(rt_e4m32f(0x38) == 1 && rt_e4m32f(0x7e) == 448 && rt_e4m32f(0x01) == ldexp(1, -9) && rt_e4m32f(0x08) == ldexp(1, -6) &&
	          isnan(rt_e4m32f(0x7f)) && isnan(rt_e4m32f(0xff)) && rt_e4m32f(0xfe) == -448 && !isnan(rt_e4m32f(0x78)),
	      "fp8 e4m3: 1, 448, 2^-9, 2^-6, S.1111.111 NaN (no infinities)", NULL);
	check(rt_e5m22f(0x3c) == 1 && rt_e5m22f(0x7b) == 57344 && rt_e5m22f(0x01) == ldexp(1, -16) && rt_e5m22f(0x04) == ldexp(1, -14) &&
	          rt_e5m22f(0x7c) == INFINITY && rt_e5m22f(0xfc) == -INFINITY && isnan(rt_e5m22f(0x7d)) && isnan(rt_e5m22f(0x7f)) &&
	          rt_e5m22f(0xfb) == -57344,
	      "fp8 e5m2: 1, 57344, 2^-16, 2^-14, S.11111.00 infinity, S.11111.xx NaN", NULL);
	/* the device widens e5m2 for mma.sync by a shift (tile_gemm.cuh fz_f8x2) */
	int bad = -1;
	for (int b = 0; b < 256 && bad < 0; b++) {
		const double h = rt_h2f((uint16_t)(b << 8)), e = rt_e5m22f((uint8_t)b);
		if (!(h == e || (isnan(h) && isnan(e)))) bad = b;
	}
	check(bad < 0, "fp8 e5m2: every code is the top byte of the f16 of its value", NULL);
}

/* rounding to nearest even, saturation, signs, NaN */
static void rounding(void)
{
	check(rt_f2e5m2(1.125) == 0x3c && rt_f2e5m2(1.375) == 0x3e && rt_f2e5m2(nextafter(1.125, 2)) == 0x3d &&
	          rt_f2e5m2(-1.125) == 0xbc && rt_f2e5m2(0.875) == 0x3b && rt_f2e5m2(1.0 + ldexp(1, -30)) == 0x3c,
	      "fp8 e5m2: ties to even (1.125 -> 1, 1.375 -> 1.5), above a tie rounds up", NULL);
	check(rt_f2e5m2(ldexp(1, -17)) == 0x00 && rt_f2e5m2(ldexp(3, -17)) == 0x02 && rt_f2e5m2(nextafter(ldexp(1, -17), 1)) == 0x01 &&
	          rt_f2e5m2(ldexp(1, -40)) == 0x00 && rt_f2e5m2(-ldexp(1, -40)) == 0x80 && rt_f2e5m2(ldexp(7, -17)) == 0x04,
	      "fp8 e5m2: subnormals round to even, underflow keeps the sign, the top subnormal rounds up to 2^-14", NULL);
	check(rt_f2e5m2(57344) == 0x7b && rt_f2e5m2(61439) == 0x7b && rt_f2e5m2(61440) == 0x7b && rt_f2e5m2(1e300) == 0x7b &&
	          rt_f2e5m2(INFINITY) == 0x7b && rt_f2e5m2(-INFINITY) == 0xfb && rt_f2e5m2(-70000) == 0xfb && rt_f2e5m2(53248) == 0x7a,
	      "fp8 e5m2: saturates at +-57344 (satfinite: infinities too); 53248, between 49152 and 57344, ties to even 49152", NULL);
	check(isnan(rt_e5m22f(rt_f2e5m2(NAN))) && isnan(rt_e4m32f(rt_f2e4m3(NAN))) && isnan(rt_e5m22f(rt_f2e5m2(-NAN))),
	      "fp8: a NaN stays a NaN", NULL);
	check(rt_f2e4m3(1.0625) == 0x38 && rt_f2e4m3(1.1875) == 0x3a && rt_f2e4m3(464) == 0x7e && rt_f2e4m3(1e9) == 0x7e &&
	          rt_f2e4m3(-INFINITY) == 0xfe && rt_f2e4m3(ldexp(1, -10)) == 0x00 && rt_f2e4m3(ldexp(3, -10)) == 0x02,
	      "fp8 e4m3: ties to even, saturation at +-448, subnormals", NULL);
}

#ifdef HAVE_CUDA_FP8
/* the midpoints between neighbouring codes and the doubles either side of
   them, then random values from 2^-20 to 2^18 of both signs: the same code
   as NVIDIA's emulation of cvt.rn.satfinite (NaN aside: both give a NaN) */
static void against_cuda(const fp8_case *f)
{
	const __nv_fp8_interpretation_t kind = f->e5 ? __NV_E5M2 : __NV_E4M3;
	char name[96], detail[160] = "";
	long long n = 0, bad = 0;
	uint64_t s = 88172645463325252ull;
	for (long long i = 0; i < 1000000 + 3 * 2 * 127; i++) {
		double v;
		if (i < 3 * 2 * 127) { /* code c and c + 1 (c < 127, positive finite ones), then negated */
			const int c = (int)(i / 6) % 127, side = (int)(i % 3) - 1;
			const double lo = f->to((uint8_t)c), hi = f->to((uint8_t)(c + 1));
			if (isnan(hi) || isinf(hi)) continue;
			v = (lo + hi) / 2;
			if (side) v = nextafter(v, side * INFINITY);
			if ((i / 3) & 1) v = -v;
		} else {
			s ^= s << 13, s ^= s >> 7, s ^= s << 17;
			v = ldexp(1.0 + (double)(s >> 11) / 9007199254740992.0, (int)(s % 39) - 20);
			if (s & (1ull << 60)) v = -v;
		}
		const uint8_t got = f->from(v), want = (uint8_t)__nv_cvt_double_to_fp8(v, __NV_SATFINITE, kind);
		n++;
		if (got != want && !bad++) snprintf(detail, sizeof detail, "%.17g: 0x%02x, cuda_fp8.h 0x%02x", v, got, want);
	}
	snprintf(name, sizeof name, "fp8 %s: as cuda_fp8.h's cvt.rn.satfinite on %lld values (midpoints, random)", f->name, n);
	check(!bad, name, detail);
}
#endif

void test_fp8(void)
{
	const fp8_case cases[2] = {{"e4m3", rt_f2e4m3, rt_e4m32f, 448, 0}, {"e5m2", rt_f2e5m2, rt_e5m22f, 57344, 1}};
	for (int i = 0; i < 2; i++) round_trip(&cases[i]);
	landmarks();
	rounding();
#ifdef HAVE_CUDA_FP8
	for (int i = 0; i < 2; i++) against_cuda(&cases[i]);
#else
	printf("SKIP fp8: cuda_fp8.h not found, no comparison with its cvt emulation\n");
#endif
}
