/* Standalone prototypes of the kernel shapes the planner should choose for
 * memory-bound chains, built as a shared library and driven by
 * bench/proto/sweep.py (which times them beside torch.compile in the same
 * process). Not part of fusec: the measurements here decide the rules that
 * fusec's row and point templates follow (bench/proto/NOTES.md).
 *   nvcc -O3 -arch=sm_90 -Xcompiler -fPIC -shared -o shapes.so shapes.cu
 * Every launcher returns 0, or the CUDA error code of the launch. */
#include <cuda_runtime.h>
#include <stdint.h>

/* exp(x) as 2^(x log2 e) on the SFU: ex2.approx.ftz has a relative error
   of about 2^-22; the product adds |x| * 2^-24 (relative), so for the
   arguments softmax feeds it (x <= 0, |x| < 100) the error stays below
   7e-6 relative: well inside the 1e-4 tolerance of a reduction's output. */
__device__ __forceinline__ float fz_exp_fast(float x)
{
	float y;
	asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x * 1.4426950408889634f));
	return y;
}

template <int W> __device__ __forceinline__ float grp_max(float v)
{
#pragma unroll
	for (int o = W / 2; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o, W));
	return v;
}
template <int W> __device__ __forceinline__ float grp_sum(float v)
{
#pragma unroll
	for (int o = W / 2; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o, W);
	return v;
}
/* block-wide, fixed order: butterfly per warp, then every thread folds the
   warps' values in warp order (deterministic) */
template <int NW, bool MAX> __device__ __forceinline__ float blk_red(float v, float *sh)
{
	v = MAX ? grp_max<32>(v) : grp_sum<32>(v);
	if (NW == 1) return v;
	/* NW warps per group; a block may hold several groups */
	const int w = threadIdx.x >> 5, w0 = w / NW * NW;
	__syncthreads();
	if ((threadIdx.x & 31) == 0) sh[w] = v;
	__syncthreads();
	float r = sh[w0];
#pragma unroll
	for (int i = 1; i < NW; ++i) r = MAX ? fmaxf(r, sh[w0 + i]) : r + sh[w0 + i];
	return r;
}

/* Row softmax with the row in registers. TPR threads per row (TPR < 32: a
   part of a warp; 32: a warp; > 32: the block), NV vectors of V floats a
   thread. V = 4 needs C % 4 == 0 and 16-byte aligned rows (decided at
   launch); V = 1 is the fallback. Columns past the row's end are masked. */
template <int TPR, int NV, int V, bool FAST>
__global__ void __launch_bounds__(TPR >= 256 ? TPR : 256) softmax_reg(const float *__restrict__ X, float *__restrict__ Y, long long R, int C)
{
	constexpr int BLK = TPR >= 256 ? TPR : 256, G = BLK / TPR;
	__shared__ float sh[32];
	const int lane = threadIdx.x % TPR;
	const long long row = (long long)blockIdx.x * G + threadIdx.x / TPR;
	const bool live = row < R; /* a dead group still joins the shuffles */
	const float *x = X + (live ? row : 0) * C;
	float v[NV][V];
#pragma unroll
	for (int k = 0; k < NV; ++k) {
		const int c = (k * TPR + lane) * V;
		if (V == 4) {
			float4 t = make_float4(-INFINITY, -INFINITY, -INFINITY, -INFINITY);
			if (c < C) t = __ldg((const float4 *)(x + c));
			v[k][0] = t.x, v[k][V > 1 ? 1 : 0] = t.y, v[k][V > 2 ? 2 : 0] = t.z, v[k][V > 3 ? 3 : 0] = t.w;
		} else {
			v[k][0] = c < C ? __ldg(x + c) : -INFINITY;
		}
	}
	float m = -INFINITY;
#pragma unroll
	for (int k = 0; k < NV; ++k)
#pragma unroll
		for (int j = 0; j < V; ++j) m = fmaxf(m, v[k][j]);
	m = TPR <= 32 ? grp_max<TPR <= 32 ? TPR : 32>(m) : blk_red<TPR <= 32 ? 1 : TPR / 32, true>(m, sh);
	float s = 0.f;
#pragma unroll
	for (int k = 0; k < NV; ++k)
#pragma unroll
		for (int j = 0; j < V; ++j) {
			v[k][j] = FAST ? fz_exp_fast(v[k][j] - m) : expf(v[k][j] - m);
			s += v[k][j];
		}
	s = TPR <= 32 ? grp_sum<TPR <= 32 ? TPR : 32>(s) : blk_red<TPR <= 32 ? 1 : TPR / 32, false>(s, sh);
	const float inv = 1.0f / s;
	if (!live) return;
	float *y = Y + row * C;
#pragma unroll
	for (int k = 0; k < NV; ++k) {
		const int c = (k * TPR + lane) * V;
		if (c >= C) continue;
		if (V == 4) *(float4 *)(y + c) = make_float4(v[k][0] * inv, v[k][V > 1 ? 1 : 0] * inv, v[k][V > 2 ? 2 : 0] * inv, v[k][V > 3 ? 3 : 0] * inv);
		else y[c] = v[k][0] * inv;
	}
}

/* Rows too wide for registers: a block per row, one pass with an online
   max and sum over 16-byte loads, then a second read that writes. */
template <int BLK>
__global__ void __launch_bounds__(BLK) softmax_online(const float *__restrict__ X, float *__restrict__ Y, long long R, int C)
{
	__shared__ float shm[32], shs[32];
	const long long row = blockIdx.x;
	const float4 *x = (const float4 *)(X + row * C);
	const int n4 = C / 4;
	float m = -INFINITY, s = 0.f;
	for (int i = threadIdx.x; i < n4; i += 2 * BLK) {
		float4 a = __ldg(x + i), b = make_float4(-INFINITY, -INFINITY, -INFINITY, -INFINITY);
		if (i + BLK < n4) b = __ldg(x + i + BLK);
		const float mx = fmaxf(fmaxf(fmaxf(a.x, a.y), fmaxf(a.z, a.w)), fmaxf(fmaxf(b.x, b.y), fmaxf(b.z, b.w)));
		const float mn = fmaxf(m, mx);
		s = s * fz_exp_fast(m - mn) + fz_exp_fast(a.x - mn) + fz_exp_fast(a.y - mn) + fz_exp_fast(a.z - mn) + fz_exp_fast(a.w - mn)
		    + fz_exp_fast(b.x - mn) + fz_exp_fast(b.y - mn) + fz_exp_fast(b.z - mn) + fz_exp_fast(b.w - mn);
		m = mn;
	}
	/* combine (m, s) pairs: warp butterfly, then the warps in order */
#pragma unroll
	for (int o = 16; o > 0; o >>= 1) {
		const float mo = __shfl_xor_sync(0xffffffffu, m, o), so = __shfl_xor_sync(0xffffffffu, s, o);
		const float mn = fmaxf(m, mo);
		s = (m == -INFINITY ? 0.f : s * fz_exp_fast(m - mn)) + (mo == -INFINITY ? 0.f : so * fz_exp_fast(mo - mn));
		m = mn;
	}
	if ((threadIdx.x & 31) == 0) shm[threadIdx.x >> 5] = m, shs[threadIdx.x >> 5] = s;
	__syncthreads();
	float M = shm[0], S = shs[0];
	for (int w = 1; w < BLK / 32; ++w) {
		const float mn = fmaxf(M, shm[w]);
		S = S * fz_exp_fast(M - mn) + shs[w] * fz_exp_fast(shm[w] - mn);
		M = mn;
	}
	const float inv = 1.0f / S;
	float4 *y = (float4 *)(Y + row * C);
	for (int i = threadIdx.x; i < n4; i += BLK) {
		const float4 a = __ldg(x + i);
		y[i] = make_float4(fz_exp_fast(a.x - M) * inv, fz_exp_fast(a.y - M) * inv, fz_exp_fast(a.z - M) * inv, fz_exp_fast(a.w - M) * inv);
	}
}

/* Whole-tensor map-reduce, KL(q||p) = sum q (log q - log p): a capped grid
   of BLK-thread blocks, U 16-byte loads of each input in flight a thread,
   per-block partials, the last block folds them in block order. */
template <int BLK, int U>
__global__ void __launch_bounds__(BLK) kl_sum(const float *__restrict__ q, const float *__restrict__ p, long long n, double *part, unsigned *count, float *out)
{
	__shared__ double sh[32];
	__shared__ bool last;
	const long long n4 = n / 4;
	const long long stride = (long long)gridDim.x * BLK;
	double acc = 0;
	float accf = 0.f;
	for (long long i = (long long)blockIdx.x * BLK + threadIdx.x; i < n4; i += U * stride) {
		float4 a[U], b[U];
#pragma unroll
		for (int u = 0; u < U; ++u) {
			const long long j = i + u * stride;
			if (j < n4) a[u] = __ldg((const float4 *)q + j), b[u] = __ldg((const float4 *)p + j);
			else a[u] = b[u] = make_float4(1, 1, 1, 1);
		}
#pragma unroll
		for (int u = 0; u < U; ++u)
			accf += a[u].x * (__logf(a[u].x) - __logf(b[u].x)) + a[u].y * (__logf(a[u].y) - __logf(b[u].y))
			      + a[u].z * (__logf(a[u].z) - __logf(b[u].z)) + a[u].w * (__logf(a[u].w) - __logf(b[u].w));
	}
	acc = accf;
	if (blockIdx.x == 0)
		for (long long i = n4 * 4 + threadIdx.x; i < n; i += BLK) acc += q[i] * (logf(q[i]) - logf(p[i]));
#pragma unroll
	for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
	if ((threadIdx.x & 31) == 0) sh[threadIdx.x >> 5] = acc;
	__syncthreads();
	if (threadIdx.x == 0) {
		double r = 0;
		for (int w = 0; w < BLK / 32; ++w) r += sh[w];
		part[blockIdx.x] = r;
		__threadfence();
		last = atomicAdd(count, 1u) == gridDim.x - 1;
	}
	__syncthreads();
	if (!last) return;
	__threadfence();
	double r = 0;
	for (int b = threadIdx.x; b < gridDim.x; b += BLK) r += ((volatile double *)part)[b];
	/* fixed order: thread t sums blocks t, t+BLK, ...; then the warps */
#pragma unroll
	for (int o = 16; o > 0; o >>= 1) r += __shfl_xor_sync(0xffffffffu, r, o);
	__syncthreads();
	if ((threadIdx.x & 31) == 0) sh[threadIdx.x >> 5] = r;
	__syncthreads();
	if (threadIdx.x == 0) {
		double t = 0;
		for (int w = 0; w < BLK / 32; ++w) t += sh[w];
		*out = (float)t;
		*count = 0;
	}
}

/* precise-log variant, to see whether log costs anything at the floor */
template <int BLK, int U>
__global__ void __launch_bounds__(BLK) kl_sum_precise(const float *__restrict__ q, const float *__restrict__ p, long long n, double *part, unsigned *count, float *out)
{
	__shared__ double sh[32];
	__shared__ bool last;
	const long long n4 = n / 4;
	const long long stride = (long long)gridDim.x * BLK;
	float accf = 0.f;
	for (long long i = (long long)blockIdx.x * BLK + threadIdx.x; i < n4; i += U * stride) {
		float4 a[U], b[U];
#pragma unroll
		for (int u = 0; u < U; ++u) {
			const long long j = i + u * stride;
			if (j < n4) a[u] = __ldg((const float4 *)q + j), b[u] = __ldg((const float4 *)p + j);
			else a[u] = b[u] = make_float4(1, 1, 1, 1);
		}
#pragma unroll
		for (int u = 0; u < U; ++u)
			accf += a[u].x * (logf(a[u].x) - logf(b[u].x)) + a[u].y * (logf(a[u].y) - logf(b[u].y))
			      + a[u].z * (logf(a[u].z) - logf(b[u].z)) + a[u].w * (logf(a[u].w) - logf(b[u].w));
	}
	double acc = accf;
	if (blockIdx.x == 0)
		for (long long i = n4 * 4 + threadIdx.x; i < n; i += BLK) acc += q[i] * (logf(q[i]) - logf(p[i]));
#pragma unroll
	for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
	if ((threadIdx.x & 31) == 0) sh[threadIdx.x >> 5] = acc;
	__syncthreads();
	if (threadIdx.x == 0) {
		double r = 0;
		for (int w = 0; w < BLK / 32; ++w) r += sh[w];
		part[blockIdx.x] = r;
		__threadfence();
		last = atomicAdd(count, 1u) == gridDim.x - 1;
	}
	__syncthreads();
	if (!last) return;
	__threadfence();
	double r = 0;
	for (int b = threadIdx.x; b < gridDim.x; b += BLK) r += ((volatile double *)part)[b];
#pragma unroll
	for (int o = 16; o > 0; o >>= 1) r += __shfl_xor_sync(0xffffffffu, r, o);
	__syncthreads();
	if ((threadIdx.x & 31) == 0) sh[threadIdx.x >> 5] = r;
	__syncthreads();
	if (threadIdx.x == 0) {
		double t = 0;
		for (int w = 0; w < BLK / 32; ++w) t += sh[w];
		*out = (float)t;
		*count = 0;
	}
}

/* Map, sigmoid: U 16-byte vectors a thread, all loads before any store;
   GRID_STRIDE = 0: one pass, a grid that covers the tensor. */
template <int U>
__global__ void __launch_bounds__(256) sigmoid_map(const float *__restrict__ x, float *__restrict__ y, long long n)
{
	const long long n4 = n / 4;
	const long long stride = (long long)gridDim.x * 256;
	for (long long i = (long long)blockIdx.x * 256 + threadIdx.x; i < n4; i += U * stride) {
		float4 a[U];
#pragma unroll
		for (int u = 0; u < U; ++u)
			if (i + u * stride < n4) a[u] = __ldg((const float4 *)x + i + u * stride);
#pragma unroll
		for (int u = 0; u < U; ++u)
			if (i + u * stride < n4) {
				float4 t = a[u];
				t.x = 1.f / (1.f + fz_exp_fast(-t.x)), t.y = 1.f / (1.f + fz_exp_fast(-t.y));
				t.z = 1.f / (1.f + fz_exp_fast(-t.z)), t.w = 1.f / (1.f + fz_exp_fast(-t.w));
				((float4 *)y)[i + u * stride] = t;
			}
	}
	if (blockIdx.x == 0)
		for (long long i = n4 * 4 + threadIdx.x; i < n; i += 256) y[i] = 1.f / (1.f + expf(-x[i]));
}

/* Batch norm with per-column parameters: a thread owns 4 columns (one
   16-byte vector), folds mean, var, gamma, beta into scale and shift once,
   then walks RPT rows. Grid: x over column vectors, y over row chunks. */
template <int RPT>
__global__ void __launch_bounds__(256) bn_cols(const float *__restrict__ X, const float *__restrict__ mean, const float *__restrict__ var,
                                               const float *__restrict__ gamma, const float *__restrict__ beta, float eps, float *__restrict__ Y, long long B, int C)
{
	const int c4 = blockIdx.x * 256 + threadIdx.x;
	if (c4 * 4 >= C) return;
	float sc[4], sf[4];
#pragma unroll
	for (int j = 0; j < 4; ++j) {
		const int c = c4 * 4 + j;
		sc[j] = rsqrtf(var[c] + eps) * gamma[c];
		sf[j] = beta[c] - mean[c] * sc[j];
	}
	const long long r0 = (long long)blockIdx.y * RPT;
	float4 a[RPT];
#pragma unroll
	for (int r = 0; r < RPT; ++r)
		if (r0 + r < B) a[r] = __ldg((const float4 *)(X + (r0 + r) * C) + c4);
#pragma unroll
	for (int r = 0; r < RPT; ++r)
		if (r0 + r < B) {
			float4 t = a[r];
			t.x = t.x * sc[0] + sf[0], t.y = t.y * sc[1] + sf[1], t.z = t.z * sc[2] + sf[2], t.w = t.w * sc[3] + sf[3];
			*((float4 *)(Y + (r0 + r) * C) + c4) = t;
		}
}

extern "C" {
int sm_count(void)
{
	int d = 0, n = 0;
	cudaGetDevice(&d);
	cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, d);
	return n;
}

#define REG(T, N, V, F) if (tpr == T && nv == N && vec == V && fast == F) { \
	constexpr int BLK = T >= 256 ? T : 256; \
	softmax_reg<T, N, V, F><<<(unsigned)((R + BLK / T - 1) / (BLK / T)), BLK>>>(X, Y, R, C); return (int)cudaGetLastError(); }
int softmax_reg_launch(const float *X, float *Y, long long R, int C, int tpr, int nv, int vec, int fast)
{
	REG(8, 1, 4, 1) REG(16, 1, 4, 1) REG(32, 1, 4, 1) REG(32, 2, 4, 1) REG(32, 4, 4, 1) REG(32, 8, 4, 1)
	REG(64, 4, 4, 1) REG(128, 2, 4, 1) REG(128, 4, 4, 1) REG(128, 8, 4, 1) REG(256, 2, 4, 1) REG(256, 4, 4, 1) REG(256, 8, 4, 1)
	REG(512, 2, 4, 1) REG(512, 4, 4, 1) REG(512, 8, 4, 1) REG(1024, 2, 4, 1) REG(1024, 4, 4, 1) REG(1024, 8, 4, 1)
	REG(512, 4, 4, 0) REG(512, 16, 1, 1) REG(32, 8, 1, 1) REG(32, 32, 1, 1) REG(1024, 16, 1, 1) REG(1024, 32, 1, 1)
	return -1;
}
int softmax_online_launch(const float *X, float *Y, long long R, int C, int blk)
{
	if (C % 4) return -1;
	if (blk == 512) softmax_online<512><<<(unsigned)R, 512>>>(X, Y, R, C);
	else if (blk == 1024) softmax_online<1024><<<(unsigned)R, 1024>>>(X, Y, R, C);
	else return -1;
	return (int)cudaGetLastError();
}
int kl_launch(const float *q, const float *p, long long n, double *part, unsigned *count, float *out, int blk, int u, int per_sm, int precise)
{
	const unsigned g = (unsigned)(sm_count() * per_sm);
#define KL(B, UU) if (blk == B && u == UU) { if (precise) kl_sum_precise<B, UU><<<g, B>>>(q, p, n, part, count, out); else kl_sum<B, UU><<<g, B>>>(q, p, n, part, count, out); return (int)cudaGetLastError(); }
	KL(256, 1) KL(256, 2) KL(256, 4) KL(512, 1) KL(512, 2) KL(512, 4) KL(1024, 1) KL(1024, 2)
	return -1;
}
int sigmoid_launch(const float *x, float *y, long long n, int u, int per_sm)
{
	long long n4 = n / 4;
	long long need = (n4 + 256LL * u - 1) / (256LL * u);
	long long g = per_sm > 0 ? (long long)sm_count() * per_sm : need;
	if (g > need) g = need;
	if (g < 1) g = 1;
	if (u == 1) sigmoid_map<1><<<(unsigned)g, 256>>>(x, y, n);
	else if (u == 2) sigmoid_map<2><<<(unsigned)g, 256>>>(x, y, n);
	else if (u == 4) sigmoid_map<4><<<(unsigned)g, 256>>>(x, y, n);
	else return -1;
	return (int)cudaGetLastError();
}
int bn_launch(const float *X, const float *mean, const float *var, const float *gamma, const float *beta, float eps, float *Y, long long B, int C, int rpt)
{
	dim3 g((unsigned)((C / 4 + 255) / 256), (unsigned)((B + rpt - 1) / rpt));
	if (rpt == 2) bn_cols<2><<<g, 256>>>(X, mean, var, gamma, beta, eps, Y, B, C);
	else if (rpt == 4) bn_cols<4><<<g, 256>>>(X, mean, var, gamma, beta, eps, Y, B, C);
	else if (rpt == 8) bn_cols<8><<<g, 256>>>(X, mean, var, gamma, beta, eps, Y, B, C);
	else if (rpt == 16) bn_cols<16><<<g, 256>>>(X, mean, var, gamma, beta, eps, Y, B, C);
	else return -1;
	return (int)cudaGetLastError();
}
}
