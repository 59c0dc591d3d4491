/* fp8_store_check: the sm_80 PTX's fp8 store (the prelude's fz_f2f8 behind
 * fz_f2e4m3 and fz_f2e5m2, as fusec --emit=cuda prints it, compiled for the
 * host: no __CUDA_ARCH__, so the software path) against the runtime's
 * rt_f2e4m3 and rt_f2e5m2 (runtime/tool/tensors.c, the host conversions
 * whose round-to-nearest-even and saturation are cvt.rn.satfinite's), on
 * every fp8 code's value, the midpoints between neighbouring codes and a
 * float either side of each, the range ends, infinities, NaN and a sweep of
 * random floats. tests/run.sh builds it with the emitted text in front
 * (-include) and runs it; exit 0 when every byte agrees. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

uint8_t rt_f2e4m3(double v);
double rt_e4m32f(uint8_t b);
uint8_t rt_f2e5m2(double v);
double rt_e5m22f(uint8_t b);

static long bad, n;

static void one(float v)
{
	const uint8_t g4 = fz_f2e4m3(v), w4 = rt_f2e4m3(v), g5 = fz_f2e5m2(v), w5 = rt_f2e5m2(v);
	n += 2;
	if (g4 != w4 && bad++ < 10) printf("e4m3(%a): emitted 0x%02x, runtime 0x%02x\n", (double)v, g4, w4);
	if (g5 != w5 && bad++ < 10) printf("e5m2(%a): emitted 0x%02x, runtime 0x%02x\n", (double)v, g5, w5);
}

static void around(float v)
{
	one(v), one(-v), one(nextafterf(v, INFINITY)), one(nextafterf(v, -INFINITY));
	one(-nextafterf(v, INFINITY)), one(-nextafterf(v, -INFINITY));
}

int main(void)
{
	for (int c = 0; c < 255; c++) { /* each code's value and the midpoint to the next */
		for (int f = 0; f < 2; f++) {
			const double a = f ? rt_e5m22f((uint8_t)c) : rt_e4m32f((uint8_t)c), b = f ? rt_e5m22f((uint8_t)(c + 1)) : rt_e4m32f((uint8_t)(c + 1));
			if (!isfinite(a)) continue;
			around((float)a);
			if (isfinite(b) && c != 0x7f) around((float)((a + b) / 2));
		}
	}
	const float special[] = {0.0f, 448.0f, 464.0f, 480.0f, 57344.0f, 61440.0f, 65536.0f, 1e30f, 1e-30f, 0x1p-9f, 0x1p-10f, 0x1p-16f, 0x1p-17f, 0x1p-18f};
	for (size_t i = 0; i < sizeof special / sizeof *special; i++) around(special[i]);
	one(INFINITY), one(-INFINITY), one(NAN);
	uint32_t s = 12345;
	for (long i = 0; i < 4000000; i++) { /* random floats over the whole range, and over fp8's */
		s ^= s << 13, s ^= s >> 17, s ^= s << 5;
		float v;
		uint32_t bits = i & 1 ? s : (s & 0x80000000u) | ((100u + (s >> 8) % 60u) << 23) | (s & 0x7fffffu);
		memcpy(&v, &bits, 4);
		if (v == v) one(v);
	}
	printf("fp8_store_check: %ld conversions, %ld differ\n", n, bad);
	return bad != 0;
}
