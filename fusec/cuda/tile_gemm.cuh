/* ---- tensor-core tiles: C[M,N] = A[M,K] B[K,N], f32 accumulation ----
   A and B f16, bf16 (ET 0, 1), f32 read as tf32 (ET 2) or fp8 (ET 3..6, each
   operand e4m3 or e5m2: mma_common.cuh fz_et_fp8; A[M,K] and B[N,K] alone,
   both k-major, as fp8 wgmma reads them), row-major: k
   contiguous in A, or m when A is stored transposed as A[K,M] (AT = 1); n
   contiguous in B, or k when B is stored transposed as B[N,K] (BT = 1, x W^T).
   A block of 384 threads owns a 128 x BN tile at a time (BN 256, 128 or 64:
   fz_tile_bn; persistent over tiles): warpgroup 0 loads, warpgroups 1 and 2
   multiply 64 rows each.
   Shared memory is a ring of stages, each in the 128-byte swizzle that TMA
   writes and the tensor cores read, KS = 128 bytes of k a stage (64 16-bit
   elements, 32 tf32): a k-major operand as rows of KS k (A: 128 m rows; BT:
   BN n rows; 128 fp8 elements), an m- or n-major one as boxes of 128 bytes of m or n (64 or 32
   elements) by KS k rows. A full barrier per stage says it is loaded, an
   empty barrier says both multiplying warpgroups are done with it.
   sm_90a: TMA loads, wgmma (tf32 only with A and B both k-major: wgmma has no
   transposed tf32; its other layouts multiply with mma.sync, plain loads).
   Elsewhere (or when the runtime could not make the tensor maps: unaligned
   rows or pointers) the loading warpgroup copies with cp.async into the same
   layout, nst - 1 stages in flight; sm_80/sm_90 multiply with ldmatrix (or
   32-bit shared loads for a transposed tf32 operand) and mma.sync. Tails:
   TMA fills out-of-range elements with zeros, so does cp.async's source
   size, the epilogue skips points outside [M,N]. */
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define FZ_TILE_WGMMA 1
#else
#define FZ_TILE_WGMMA 0
#endif
#define FZ_TILE_STAGES 4                 /* at most; fewer when the device gives less shared memory */
#define FZ_TILE_A_BYTES 16384
#define FZ_TILE_STAGE_BYTES 49152
/* wgmma's epilogue goes through shared memory, 64 rows x 32 columns of f32
   a multiplying warpgroup at a time (rows padded by 4 words), so that the
   epilogue's loads and stores are coalesced along rows */
#define FZ_TILE_EPI_LD 36
#define FZ_TILE_EPI_BYTES (FZ_TILE_WGMMA ? 2 * 64 * FZ_TILE_EPI_LD * 4 : 0)
/* barriers, slack to align the ring to 1024 bytes, the ring, the epilogue's buffers */
#define FZ_TILE_SMEM (64 + 1023 + FZ_TILE_STAGES * FZ_TILE_STAGE_BYTES + 2 * 64 * FZ_TILE_EPI_LD * 4)

/* The tensor maps the runtime makes at launch (cuTensorMapEncodeTiled):
   boxes 128 bytes wide, A as {K, M} in boxes of 128 rows (AT: {M, K} in
   boxes of 64 k rows), B as {N, K} (BT: {K, N}) in boxes of 64 rows, all
   with 128-byte swizzle; ok is 1 when both were made. */
struct __align__(64) fz_tmap { unsigned long long w[16]; };
struct fz_tile_maps { fz_tmap a, b; unsigned long long ok; };

/* Does this instantiation multiply with wgmma? ET 0, 1: every layout on
   sm_90a; tf32 only with B k-major (wgmma reads tf32 k-major from shared
   memory: an m-major A goes through registers, fz_wgmma_tf32_ra) */
template <int ET, int AT, int BT> __device__ constexpr bool fz_tile_wg()
{
	static_assert(!fz_et_fp8(ET) || (BT && !AT), "fp8 tiles read A and B k-major only");
	return FZ_TILE_WGMMA && (ET != 2 || BT);
}

/* A chunk of 16 bytes (8 16-bit elements, 4 f32, 16 fp8) of row `row` from column
   `col`: mma_common.cuh's fz_chunk for 16-bit elements; for 32-bit ones the
   same rules (cp.async when whole and aligned or wholly outside, else
   element by element) */
template <int ES>
__device__ __forceinline__ void fz_tchunk(unsigned d, const void *p, long long row, long long rows, long long col, long long cols,
	long long ld)
{
	if constexpr (ES == 2) fz_chunk(d, (const unsigned short *)p, row, rows, col, cols, ld);
	else if constexpr (ES == 1) { /* 16 fp8 elements */
		const long long have = row < rows && col < cols ? (cols - col < 16 ? cols - col : 16) : 0;
		const unsigned char *q = have ? (const unsigned char *)p + row * ld + col : (const unsigned char *)p;
		if (have == 0 || (have == 16 && ((unsigned long long)q & 15ull) == 0)) {
			asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d), "l"(q), "r"((unsigned)have) : "memory");
			return;
		}
		unsigned e[4] = {0u, 0u, 0u, 0u};
#pragma unroll
		for (int i = 0; i < 16; ++i)
			if (i < have) e[i >> 2] |= (unsigned)q[i] << (8 * (i & 3));
		asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};\n" ::"r"(d), "r"(e[0]), "r"(e[1]), "r"(e[2]), "r"(e[3]) : "memory");
	} else {
		const long long have = row < rows && col < cols ? (cols - col < 4 ? cols - col : 4) : 0;
		const unsigned *q = have ? (const unsigned *)p + row * ld + col : (const unsigned *)p;
		if (have == 0 || (have == 4 && ((unsigned long long)q & 15ull) == 0)) {
			asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d), "l"(q), "r"((unsigned)(4 * have)) : "memory");
			return;
		}
		unsigned e[4];
#pragma unroll
		for (int i = 0; i < 4; ++i) e[i] = i < have ? q[i] : 0u;
		asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};\n" ::"r"(d), "r"(e[0]), "r"(e[1]), "r"(e[2]), "r"(e[3]) : "memory");
	}
}

/* Byte offset in a stage's m- or n-major operand of element (x, k): box
   x / BW of KS rows, chunk (x % BW) / CH of row k, swizzled */
template <int ES>
__device__ __forceinline__ unsigned fz_mn_off(int x, int k)
{
	constexpr int BW = 128 / ES, CH = 16 / ES, KS = 128 / ES;
	return (unsigned)(x / BW) * (KS * 128u) + fz_swz(k, (x % BW) / CH) + ES * (x % CH);
}

/* One stage's operands by cp.async: a k-major operand as rows of 8 chunks,
   an m- or n-major one as KS k rows of its columns' chunks in boxes of 8 */
template <int ES, int AT, int BT>
__device__ __noinline__ void fz_tile_load_plain(unsigned st, const void *A, const void *B, long long M, long long N, long long K,
	long long m0, long long n0, long long k0, int bn, int t)
{
	constexpr int CH = 16 / ES, KS = 128 / ES;
	for (int q = t; q < 1024; q += 128) /* A: 1024 chunks */
		if (AT) { /* A[K,M]: KS k rows x 128/CH chunks */
			const int r = q / (128 / CH), c = q % (128 / CH);
			fz_tchunk<ES>(st + (c >> 3) * (KS * 128) + fz_swz(r, c & 7), A, k0 + r, K, m0 + CH * c, M, M);
		} else { /* 128 m rows x 8 chunks */
			const int r = q >> 3, c = q & 7;
			fz_tchunk<ES>(st + fz_swz(r, c), A, m0 + r, M, k0 + CH * c, K, K);
		}
	if (BT)
		for (int q = t; q < 8 * bn; q += 128) { /* B[N,K]: bn n rows x 8 chunks, as A */
			const int r = q >> 3, c = q & 7;
			fz_tchunk<ES>(st + FZ_TILE_A_BYTES + fz_swz(r, c), B, n0 + r, N, k0 + CH * c, K, K);
		}
	else
		for (int q = t; q < 8 * bn; q += 128) { /* B: KS k rows x bn/CH chunks */
			const int r = q / (bn >> (ES == 2 ? 3 : 2)), c = q % (bn >> (ES == 2 ? 3 : 2)); /* bn / CH */
			fz_tchunk<ES>(st + FZ_TILE_A_BYTES + (c >> 3) * (KS * 128) + fz_swz(r, c & 7), B, k0 + r, K, n0 + CH * c, N, N);
		}
	asm volatile("cp.async.commit_group;\n" ::: "memory");
}
/* Wait until at most n of this thread's stages are in flight, then say the
   oldest one is loaded (fz_cp_publish): every loading thread arrives on the
   stage's full barrier (128 arrivals without TMA). */



/* Tile number tile of a (batched) product: its batch b and its corner
   (m0, n0); tiles run down M first, then across N, then over the batch. */
struct fz_tile_at { long long b, m0, n0; };
template <int BAT>
__device__ __forceinline__ fz_tile_at fz_tile_pos(long long tile, long long mt, long long per, int bn)
{
	fz_tile_at p;
	p.b = 0;
	if constexpr (BAT) p.b = tile / per, tile -= p.b * per;
	p.m0 = (tile % mt) * 128, p.n0 = (tile / mt) * bn;
	return p;
}
/* The tile width BN, from M's tiles mt, N, the batch NB and the blocks (the
   launch gives min(128 x 64 tiles, SMs)): of 256, 128 and 64 (mma.sync: 128
   and 64, its accumulators a thread) the one with the fewest waves of tiles
   over the blocks times BN + 32 (a tile's fixed cost, the pipeline's ramp and
   the epilogue, taken as 32 columns' worth), the wider on a tie. So large
   products keep 128 x 256 tiles, and small ones fill the chip: 1024^3 on 132
   SMs takes 128 x 64 (128 tiles), where 128 x 128 gave 64 and left half the
   SMs idle; 1536 x 1024 keeps 128 x 128 (96 tiles in one wave, not 192 in
   two). */
template <bool WG>
__device__ __forceinline__ int fz_tile_bn(long long mt, long long N, long long NB)
{
	int bn = 64;
	long long best = -1;
	for (int b = WG ? 256 : 128; b >= 64; b >>= 1) {
		const long long waves = (NB * mt * ((N + b - 1) / b) + gridDim.x - 1) / gridDim.x, cost = waves * (b + 32);
		if (best < 0 || cost < best) best = cost, bn = b;
	}
	return bn;
}

/* the epilogue at (row, col) of batch b's C: a batched contraction's
   functor takes the batch index first; TC: the tile computed C^T = B^T A^T
   (A and B passed the other way round), so (row, col) is C's (col, row) */
template <int BAT, int TC, class Epi>
__device__ __forceinline__ void fz_tile_epi(const Epi &epi, long long b, long long row, long long col, float v)
{
	if constexpr (BAT && TC) epi(b, col, row, v);
	else if constexpr (BAT) epi(b, row, col, v);
	else if constexpr (TC) epi(col, row, v);
	else epi(row, col, v);
}

/* 32-bit shared load; mma.sync for the tile: m16n8k16 for f16 and bf16,
   m16n8k8 for tf32 (the same fragment places, counted in 32-bit words) */
__device__ __forceinline__ unsigned fz_lds32(unsigned addr)
{
	unsigned v;
	asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(v) : "r"(addr));
	return v;
}
template <int ET> __device__ __forceinline__ void fz_mma_tile(float *d, const unsigned *a, unsigned b0, unsigned b1)
{
	if constexpr (fz_et_fp8(ET)) fz_mma16816<0>(d, a, b0, b1); /* fp8 widened to f16 (fz_f8x2) */
	else if constexpr (ET == 2)
		asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
			: "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
	else fz_mma16816<ET>(d, a, b0, b1);
}

/* Two e4m3 values (bits 0-7 and 8-15 of v) as an f16x2, exactly: the sign
   to bit 15, exponent and mantissa to bits 13-7 (an f16 of 2^-8 times the
   value, subnormals included: f16's bias is 8 above e4m3's), times 256.
   e4m3's NaN (S.1111.111) becomes 480; no hardware conversion before sm_89 */
__device__ __forceinline__ unsigned fz_e4m3x2(unsigned v)
{
	const unsigned r = ((v & 0x7fu) << 7) | ((v & 0x80u) << 8) | ((v & 0x7f00u) << 15) | ((v & 0x8000u) << 16);
	unsigned o;
	asm("mul.rn.f16x2 %0, %1, %2;\n" : "=r"(o) : "r"(r), "r"(0x5c005c00u));
	return o;
}
/* Two fp8 values (bits 0-7 and 8-15 of v) as an f16x2, exactly: e4m3 (E5
   0) as above; e5m2 (E5 1) is the top byte of the f16 of the same value (1
   sign, 5 exponent bits of bias 15, 2 mantissa bits), infinities and NaNs
   included, so a shift places it */
template <bool E5> __device__ __forceinline__ unsigned fz_f8x2(unsigned v)
{
	if constexpr (E5) return ((v & 0xffu) << 8) | ((v & 0xff00u) << 16);
	else return fz_e4m3x2(v);
}

#if FZ_TILE_WGMMA
/* wgmma m64 x N x k8 tf32 with A from registers (a[4]: the warp's 16 rows as
   an mma.sync m16n8k8 fragment), B k-major from shared memory, accumulating */
#define FZ_WGMMA_TF32_RA_ASM(N, ACC, A0, A1, A2, A3, IB, ...) \
	asm volatile("{\n.reg .pred p;\nsetp.eq.u32 p, 1, 1;\nwgmma.mma_async.sync.aligned.m64n" #N "k8.f32.tf32.tf32" \
		" {" ACC "}, {%" A0 ", %" A1 ", %" A2 ", %" A3 "}, %" IB ", p, 1, 1;\n}\n" : __VA_ARGS__ \
		: "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db))
template <int N> __device__ __forceinline__ void fz_wgmma_tf32_ra(float *d, const unsigned *a, unsigned long long db)
{
	if constexpr (N == 256) { FZ_WGMMA_TF32_RA_ASM(256, FZ_ACC128, "128", "129", "130", "131", "132", FZ_OUT128); }
	else if constexpr (N == 128) { FZ_WGMMA_TF32_RA_ASM(128, FZ_ACC64, "64", "65", "66", "67", "68", FZ_OUT64); }
	else { FZ_WGMMA_TF32_RA_ASM(64, FZ_ACC32, "32", "33", "34", "35", "36", FZ_OUT32); }
}

/* The multiplying warpgroup c (rows 64c..64c+63 of each tile) over this
   block's tiles with wgmma; it walks the ring in the loader's order (stage
   s, parity ph). */
template <int ET, int AT, int BT, int BAT, int TC, int BN, class Epi>
__device__ __forceinline__ void fz_tile_consume_wg(const Epi &epi, unsigned char *ring, unsigned long long *bars, float *ebuf,
	int nst, long long M, long long N, long long nk, long long tiles, long long mt, long long per, int c, int t)
{
	const int lane = t & 31, w = t >> 5;
	int s = 0;
	unsigned ph = 0;
	for (long long tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
		const fz_tile_at at = fz_tile_pos<BAT>(tile, mt, per, BN);
		const long long m0 = at.m0, n0 = at.n0;
		float d[BN / 2];
#pragma unroll
		for (int i = 0; i < BN / 2; ++i) d[i] = 0.f;
		int prev = -1;
		for (long long kb = 0; kb < nk; ++kb) {
			fz_bar_wait(fz_su32(&bars[s]), ph);
			/* this warpgroup's 64 rows of A: k-major, 64 rows of 128 B; m-major
			   (16-bit), the second box of 64 m */
			const unsigned a0 = fz_su32(ring + s * FZ_TILE_STAGE_BYTES) + c * 8192, b0 = a0 - c * 8192 + FZ_TILE_A_BYTES;
			if constexpr (ET == 2 && AT) {
				/* tf32 A m-major: the warp's fragments by 32-bit shared loads,
				   then wgmma from registers; its registers are read until the
				   wgmma completes, so it waits for all before the next stage
				   (the other multiplying warpgroup keeps the tensor cores busy) */
				const unsigned sa = a0 - c * 8192;
				unsigned a[4][4];
#pragma unroll
				for (int ks = 0; ks < 4; ++ks) {
					const int mm = 64 * c + 16 * w + (lane >> 2), kr = 8 * ks + (lane & 3);
					a[ks][0] = fz_lds32(sa + fz_mn_off<4>(mm, kr)), a[ks][1] = fz_lds32(sa + fz_mn_off<4>(mm + 8, kr));
					a[ks][2] = fz_lds32(sa + fz_mn_off<4>(mm, kr + 4)), a[ks][3] = fz_lds32(sa + fz_mn_off<4>(mm + 8, kr + 4));
				}
				asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
				for (int ks = 0; ks < 4; ++ks) fz_wgmma_tf32_ra<BN>(d, a[ks], fz_wg_desc(b0 + 32 * ks, 16, 1024));
				asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
				asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
				if (lane == 0) fz_bar_arrive(fz_su32(&bars[FZ_TILE_STAGES + s]));
			} else {
				asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
				for (int ks = 0; ks < 4; ++ks) /* k-major: +32 B a k16 (tf32: k8) step; m- or n-major: +16 rows */
					fz_wgmma<ET, BN, BT, AT>(d, AT ? fz_wg_desc(a0 + 2048 * ks, 8192, 1024) : fz_wg_desc(a0 + 32 * ks, 16, 1024),
						BT ? fz_wg_desc(b0 + 32 * ks, 16, 1024) : fz_wg_desc(b0 + 2048 * ks, 8192, 1024), 1);
				asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
				/* one stage's multiplies stay in flight; the one before is done: release it */
				asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
				if (prev >= 0 && lane == 0) fz_bar_arrive(fz_su32(&bars[FZ_TILE_STAGES + prev]));
				prev = s;
			}
			if (++s == nst) s = 0, ph ^= 1u;
		}
		asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
		if (prev >= 0 && lane == 0) fz_bar_arrive(fz_su32(&bars[FZ_TILE_STAGES + prev]));
		/* the epilogue, 32 columns at a time: the accumulators (thread t holds
		   rows 16w + lane/4 (+8), column pairs 8j + 2(lane%4)) into the buffer,
		   then each warp walks 16 rows with a lane a column (TC: C's rows are
		   the buffer's columns, so each warp walks 8 columns with a lane a
		   row, twice: C's stores stay coalesced) */
		const unsigned eb = fz_su32(ebuf), ew = eb + 4u * ((16 * w + (lane >> 2)) * FZ_TILE_EPI_LD + 2 * (lane & 3));
		const unsigned er = TC ? eb + 4u * (lane * FZ_TILE_EPI_LD + 8 * w) : eb + 4u * (16 * w * FZ_TILE_EPI_LD + lane);
		/* a whole tile inside [M,N] takes the epilogue without tests, so that
		   its loads are not held behind branches */
		const bool inside = m0 + 128 <= M && n0 + BN <= N;
		const long long rb = m0 + 64 * c + 16 * w;
#pragma unroll
		for (int q = 0; q < BN / 32; ++q) {
#pragma unroll
			for (int j = 4 * q; j < 4 * q + 4; ++j) {
				const unsigned e = ew + 32u * (j - 4 * q);
				asm volatile("st.shared.v2.f32 [%0], {%1, %2};\n" ::"r"(e), "f"(d[4 * j]), "f"(d[4 * j + 1]) : "memory");
				asm volatile("st.shared.v2.f32 [%0], {%1, %2};\n" ::"r"(e + 32u * FZ_TILE_EPI_LD), "f"(d[4 * j + 2]), "f"(d[4 * j + 3]) : "memory");
			}
			asm volatile("bar.sync %0, 128;\n" ::"r"(2 + c) : "memory");
			float v[16];
			if constexpr (TC) {
#pragma unroll
				for (int r = 0; r < 16; ++r) /* row lane + 32 (r & 1), column 8w + r / 2 */
					asm volatile("ld.shared.f32 %0, [%1];\n" : "=f"(v[r]) : "r"(er + 4u * ((r & 1) * 32 * FZ_TILE_EPI_LD + (r >> 1))) : "memory");
				asm volatile("bar.sync %0, 128;\n" ::"r"(2 + c) : "memory");
				const long long r0 = m0 + 64 * c + lane, c0 = n0 + 32 * q + 8 * w;
#pragma unroll
				for (int r = 0; r < 16; ++r)
					if (inside || (r0 + 32 * (r & 1) < M && c0 + (r >> 1) < N)) fz_tile_epi<BAT, TC>(epi, at.b, r0 + 32 * (r & 1), c0 + (r >> 1), v[r]);
				continue;
			}
#pragma unroll
			for (int r = 0; r < 16; ++r) asm volatile("ld.shared.f32 %0, [%1];\n" : "=f"(v[r]) : "r"(er + 4u * r * FZ_TILE_EPI_LD) : "memory");
			asm volatile("bar.sync %0, 128;\n" ::"r"(2 + c) : "memory");
			const long long s1 = n0 + 32 * q + lane;
			if (inside) {
#pragma unroll
				for (int r = 0; r < 16; ++r) fz_tile_epi<BAT, TC>(epi, at.b, rb + r, s1, v[r]);
			} else {
#pragma unroll
				for (int r = 0; r < 16; ++r)
					if (rb + r < M && s1 < N) fz_tile_epi<BAT, TC>(epi, at.b, rb + r, s1, v[r]);
			}
		}
	}
}
#endif

/* The same with mma.sync (sm_80, sm_90; tf32 with B n-major on sm_90a) */
template <int ET, int AT, int BT, int BAT, int TC, int BN, class Epi>
__device__ __forceinline__ void fz_tile_consume_mma(const Epi &epi, unsigned char *ring, unsigned long long *bars, float *ebuf,
	int nst, long long M, long long N, long long nk, long long tiles, long long mt, long long per, int c, int t)
{
	const int lane = t & 31, w = t >> 5;
	int s = 0;
	unsigned ph = 0;
	for (long long tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
		const fz_tile_at at = fz_tile_pos<BAT>(tile, mt, per, BN);
		const long long m0 = at.m0, n0 = at.n0;
		constexpr int NT = BN / 32; /* n8 tiles of this warp: columns w*BN/4 .. +BN/4 */
		float d[4][NT][4];
#pragma unroll
		for (int i = 0; i < 4; ++i)
#pragma unroll
			for (int j = 0; j < NT; ++j)
#pragma unroll
				for (int q = 0; q < 4; ++q) d[i][j][q] = 0.f;
		for (long long kb = 0; kb < nk; ++kb) {
			fz_bar_wait(fz_su32(&bars[s]), ph);
			const unsigned sa = fz_su32(ring + s * FZ_TILE_STAGE_BYTES), sb = sa + FZ_TILE_A_BYTES;
#pragma unroll
			for (int ks = 0; ks < 4; ++ks) { /* 32 bytes of k: k16, tf32 k8, fp8 two k16 */
				if constexpr (fz_et_fp8(ET)) {
					/* fp8, A[M,K] and B[N,K]: ldmatrix as 16-bit pairs, so a thread holds
					   bytes 4q..4q+3 (q = lane % 4) of a 16-byte chunk of its row, widened
					   to two f16x2 (fz_f8x2, each operand by its type): the low pair as the mma's k 2q, 2q+1,
					   the high pair as k 2q+8, 2q+9, in A and B alike (the sum over a
					   chunk's 16 k is the same in any order); chunk 2ks, then 2ks+1 */
					unsigned rb[NT][2]; /* tile j's chunks 2ks and 2ks + 1, as loaded */
#pragma unroll
					for (int j = 0; j < NT; j += 2) {
						unsigned r[4]; /* tile j chunk 2ks, j 2ks + 1, j + 1 2ks, j + 1 2ks + 1 */
						const int n = w * (BN / 4) + 8 * j + (lane & 7) + 8 * (lane >> 4);
						fz_ldsm4(r, sb + fz_swz(n, 2 * ks + ((lane >> 3) & 1)), false);
						rb[j][0] = r[0], rb[j][1] = r[1], rb[j + 1][0] = r[2], rb[j + 1][1] = r[3];
					}
#pragma unroll
					for (int h = 0; h < 2; ++h) {
						unsigned b[NT][2];
#pragma unroll
						for (int j = 0; j < NT; ++j)
							b[j][0] = fz_f8x2<fz_et_b5(ET)>(rb[j][h] & 0xffffu), b[j][1] = fz_f8x2<fz_et_b5(ET)>(rb[j][h] >> 16);
#pragma unroll
						for (int i = 0; i < 4; ++i) {
							unsigned r0, r1; /* rows 0-7 and 8-15 of chunk 2ks + h */
							asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];\n" : "=r"(r0), "=r"(r1)
								: "r"(sa + fz_swz(64 * c + 16 * i + (lane & 15), 2 * ks + h)));
							constexpr bool A5 = fz_et_a5(ET);
							const unsigned a[4] = {fz_f8x2<A5>(r0 & 0xffffu), fz_f8x2<A5>(r1 & 0xffffu), fz_f8x2<A5>(r0 >> 16), fz_f8x2<A5>(r1 >> 16)};
#pragma unroll
							for (int j = 0; j < NT; ++j) fz_mma_tile<ET>(d[i][j], a, b[j][0], b[j][1]);
						}
					}
					continue;
				}
				unsigned b[NT][2];
#pragma unroll
				for (int j = 0; j < NT; j += 2) {
					unsigned r[4];
					if (BT) { /* n rows of k: the fragments as stored (tf32 too: a 32-bit
					             element is a pair of b16 columns) */
						const int n = w * (BN / 4) + 8 * j + (lane & 7) + 8 * (lane >> 4);
						fz_ldsm4(r, sb + fz_swz(n, 2 * ks + ((lane >> 3) & 1)), false);
					} else if (ET != 2) { /* k rows of n: transposed on the way */
						const int n = w * (BN / 4) + 8 * j + 8 * (lane >> 4), kr = 16 * ks + (lane & 7) + 8 * ((lane >> 3) & 1);
						fz_ldsm4(r, sb + (n >> 6) * 8192 + fz_swz(kr, (n & 63) >> 3), true);
					} else { /* tf32 k rows of n: ldmatrix cannot transpose 32-bit elements */
						const int n = w * (BN / 4) + 8 * j + (lane >> 2), kr = 8 * ks + (lane & 3);
						r[0] = fz_lds32(sb + fz_mn_off<4>(n, kr)), r[1] = fz_lds32(sb + fz_mn_off<4>(n, kr + 4));
						r[2] = fz_lds32(sb + fz_mn_off<4>(n + 8, kr)), r[3] = fz_lds32(sb + fz_mn_off<4>(n + 8, kr + 4));
					}
					b[j][0] = r[0], b[j][1] = r[1], b[j + 1][0] = r[2], b[j + 1][1] = r[3];
				}
#pragma unroll
				for (int i = 0; i < 4; ++i) {
					unsigned a[4];
					if (!AT) /* m rows of k (tf32 as B's k-major fragments) */
						fz_ldsm4(a, sa + fz_swz(64 * c + 16 * i + (lane & 15), 2 * ks + (lane >> 4)), false);
					else if (ET != 2) { /* k rows of m, transposed: (k lo, m lo), (k lo, m hi), (k hi, m lo), (k hi, m hi);
					                       box c, row 16ks + (lane & 7) + 8 (lane >> 4), chunk 2i + (lane >> 3 & 1):
					                       the swizzle depends on lane & 7 alone, so ks adds 16 rows */
						const unsigned off = c * 8192u + ((lane & 7) + 8 * (lane >> 4)) * 128u + (((2 * i + ((lane >> 3) & 1)) ^ (lane & 7)) << 4);
						fz_ldsm4(a, sa + off + 2048u * ks, true);
					} else { /* tf32 k rows of m: (m, k), (m + 8, k), (m, k + 4), (m + 8, k + 4), m = 64c + 16i + lane/4,
					            k = 8ks + lane%4. The stage is 1024-byte aligned and each step moves a field of
					            its own: i/2 the box (+4096), ks the row (+1024), i%2 the chunk's bit 2 (^64),
					            m + 8 its bit 1 (^32), k + 4 the row (+512, no carry) and, through the
					            swizzle, the chunk's bit 2 (^64): one base, the rest constants */
						const unsigned x = ((sa + fz_mn_off<4>(64 * c + (lane >> 2), lane & 3) + (i >> 1) * 4096u + 1024u * ks) ^ ((i & 1) << 6));
						a[0] = fz_lds32(x), a[1] = fz_lds32(x ^ 32u), a[2] = fz_lds32(x ^ 576u), a[3] = fz_lds32(x ^ 608u);
					}
#pragma unroll
					for (int j = 0; j < NT; ++j) fz_mma_tile<ET>(d[i][j], a, b[j][0], b[j][1]);
				}
			}
			__syncwarp();
			if (lane == 0) fz_bar_arrive(fz_su32(&bars[FZ_TILE_STAGES + s]));
			if (++s == nst) s = 0, ph ^= 1u;
		}
		(void)ebuf;
		const bool inside = m0 + 128 <= M && n0 + BN <= N;
#pragma unroll
		for (int i = 0; i < 4; ++i)
#pragma unroll
			for (int j = 0; j < NT; ++j)
#pragma unroll
				for (int q = 0; q < 4; ++q) {
					const long long s0 = m0 + 64 * c + 16 * i + (lane >> 2) + 8 * (q >> 1);
					const long long s1 = n0 + w * (BN / 4) + 8 * j + 2 * (lane & 3) + (q & 1);
					if (inside || (s0 < M && s1 < N)) fz_tile_epi<BAT, TC>(epi, at.b, s0, s1, d[i][j][q]);
				}
	}
}

template <int ET, int AT, int BT, int BAT, int TC, int BN, class Epi>
__device__ __forceinline__ void fz_tile_consume(const Epi &epi, unsigned char *ring, unsigned long long *bars, float *ebuf,
	int nst, long long M, long long N, long long nk, long long tiles, long long mt, long long per, int c, int t)
{
#if FZ_TILE_WGMMA
	if constexpr (fz_tile_wg<ET, AT, BT>()) fz_tile_consume_wg<ET, AT, BT, BAT, TC, BN>(epi, ring, bars, ebuf, nst, M, N, nk, tiles, mt, per, c, t);
	else
#endif
	fz_tile_consume_mma<ET, AT, BT, BAT, TC, BN>(epi, ring, bars, ebuf, nst, M, N, nk, tiles, mt, per, c, t);
}

/* The whole tile kernel's body: ET 0 f16, 1 bf16, 2 f32 read as tf32, 3..6 fp8 (BT 1, AT 0 only; fz_et_fp8); BT 1:
   B stored as B[N,K]; AT 1: A stored as A[K,M]; BAT 1: NB products, A as
   [NB,M,K] (AT: [NB,K,M]), B as [NB,K,N] (BT: [NB,N,K]), the batches one
   after another in memory. epi(s0, s1, v) (BAT: epi(b, s0, s1, v)) is the
   fused epilogue at point (s0, s1) of C, called only inside [M,N]. TC 1:
   the caller passed B^T as A and A^T as B (N and M swapped), so the tile
   computes C^T and the epilogue gets C's points (fz_tile_epi): tf32's way
   to A(m,k) B(k,n) with B k-major in shared memory. */
template <int ET, int BT = 0, int BAT = 0, int AT = 0, int TC = 0, class Epi>
__device__ __forceinline__ void fz_tile_gemm(const Epi &epi, const fz_tile_maps &tm, const void *A, const void *B, long long M,
	long long N, long long K, long long NB = 1)
{
	constexpr int ES = fz_et_fp8(ET) ? 1 : ET == 2 ? 4 : 2, KS = 128 / ES, BW = 128 / ES; /* element bytes, k a stage, elements a 128-byte row */
	constexpr bool WG = fz_tile_wg<ET, AT, BT>();
	extern __shared__ unsigned char fz_smem_raw[];
	unsigned long long *bars = (unsigned long long *)fz_smem_raw;
	unsigned char *ring = (unsigned char *)(((unsigned long long)fz_smem_raw + 64ull + 1023ull) & ~1023ull);
	/* as many stages as the shared memory the launch gave holds (the runtime
	   gives what the kernel asks, or the device's most) */
	unsigned dyn;
	asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(dyn));
	int nst = (int)((dyn - (unsigned)(ring - fz_smem_raw) - FZ_TILE_EPI_BYTES) / FZ_TILE_STAGE_BYTES);
	if (dyn < (unsigned)(ring - fz_smem_raw) + FZ_TILE_EPI_BYTES + FZ_TILE_STAGE_BYTES) __trap(); /* the launch gave too little */
	if (nst > FZ_TILE_STAGES) nst = FZ_TILE_STAGES;
	float *ebuf = (float *)(ring + nst * FZ_TILE_STAGE_BYTES);
	const int wg = threadIdx.x >> 7, t = threadIdx.x & 127;
	const long long mt = (M + 127) >> 7;
	const int bn = fz_tile_bn<WG>(mt, N, NB);
	const long long per = mt * ((N + bn - 1) / bn), tiles = NB * per, nk = (K + KS - 1) >> (ES == 1 ? 7 : ES == 2 ? 6 : 5);
#if FZ_TILE_WGMMA
	/* The maps cover a batched operand as one matrix of NB x rows. Rows past
	   a batch's M or N read the next batch (their results are not stored);
	   rows of k past K (B(k,n), A(k,m)) would too, and meet the other
	   operand's zero-filled k, but 0 * inf is not 0: that case loads with
	   plain loads. */
	const bool tma = WG && tm.ok != 0 && (NB == 1 || (BT && !AT) || (K & (KS - 1)) == 0);
#else
	const bool tma = false;
#endif
	if (threadIdx.x == 0) { /* full: one arrival with TMA's byte count, or each loading thread's */
		for (int s = 0; s < nst; ++s)
			fz_bar_init(fz_su32(&bars[s]), tma ? 1 : 128), fz_bar_init(fz_su32(&bars[FZ_TILE_STAGES + s]), 8);
#if __CUDA_ARCH__ >= 900
		asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
#endif
	}
	__syncthreads();
	if (wg == 0) {
#if FZ_TILE_WGMMA
		/* the batch's offsets, or A's boxes of m (AT), need a few more
		   registers: 56 + 2 x 224 of the 168 x 3 warpgroups' registers is
		   still all there is */
		if constexpr (!WG) { /* mma.sync (tf32 with B n-major): 168 registers each, as on sm_90 */
		} else if constexpr (BAT || AT) asm volatile("setmaxnreg.dec.sync.aligned.u32 56;\n");
		else asm volatile("setmaxnreg.dec.sync.aligned.u32 48;\n");
#endif
		int s = 0, ps = 0, lag = nst - 1, pending = 0;
		unsigned ph = 0;
		for (long long tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
			const fz_tile_at at = fz_tile_pos<BAT>(tile, mt, per, bn);
			const long long m0 = at.m0, n0 = at.n0;
			for (long long kb = 0; kb < nk; ++kb) {
				const unsigned full = fz_su32(&bars[s]);
				unsigned char *st = ring + s * FZ_TILE_STAGE_BYTES;
				if (tma) {
#if FZ_TILE_WGMMA
					if (t == 0) {
						fz_bar_wait(fz_su32(&bars[FZ_TILE_STAGES + s]), ph ^ 1u);
						asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(full), "r"(FZ_TILE_A_BYTES + 128 * bn) : "memory");
						if (AT) /* A[K,M]: boxes of BW m x KS k rows */
#pragma unroll
							for (int j = 0; j < 128 / BW; ++j)
								asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n"
									::"r"(fz_su32(st + KS * 128 * j)), "l"(&tm.a), "r"((int)(m0 + BW * j)), "r"((int)(at.b * K + kb * KS)), "r"(full) : "memory");
						else
							asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n"
								::"r"(fz_su32(st)), "l"(&tm.a), "r"((int)(kb * KS)), "r"((int)(at.b * M + m0)), "r"(full) : "memory");
						/* B: boxes of 64 n rows (BT), or of 64 n x KS k rows (16-bit only) */
						for (int j = 0; j < bn / 64; ++j)
							asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n"
								::"r"(fz_su32(st + FZ_TILE_A_BYTES + 8192 * j)), "l"(&tm.b), "r"(BT ? (int)(kb * KS) : (int)(n0 + 64 * j)),
								"r"(BT ? (int)(at.b * N + n0 + 64 * j) : (int)(at.b * K + kb * KS)), "r"(full) : "memory");
					}
#endif
				} else {
					/* nst - 1 stages in flight: the oldest is said loaded before
					   this one waits for its slot (which the multipliers free
					   only once they hold the stage after it) */
					if (pending > 0 && pending >= lag) {
						fz_cp_publish(pending - 1, fz_su32(&bars[ps]));
						pending--;
						if (++ps == nst) ps = 0;
					}
					fz_bar_wait(fz_su32(&bars[FZ_TILE_STAGES + s]), ph ^ 1u);
					/* 16-bit units, as the 16-bit kernels always counted (ptxas then keeps their registers) */
					if constexpr (ES == 1) /* bytes */
						fz_tile_load_plain<ES, AT, BT>(fz_su32(st), (const unsigned char *)A + at.b * M * K, (const unsigned char *)B + at.b * K * N,
							M, N, K, m0, n0, kb * KS, bn, t);
					else
						fz_tile_load_plain<ES, AT, BT>(fz_su32(st), (const unsigned short *)A + at.b * M * K * (ES / 2), (const unsigned short *)B + at.b * K * N * (ES / 2),
							M, N, K, m0, n0, kb * KS, bn, t);
					pending++;
				}
				(void)full;
				if (++s == nst) s = 0, ph ^= 1u;
			}
		}
		for (; pending > 0; pending--) { /* the last stages */
			fz_cp_publish(pending - 1, fz_su32(&bars[ps]));
			if (++ps == nst) ps = 0;
		}
	} else {
#if FZ_TILE_WGMMA
		if constexpr (WG) asm volatile("setmaxnreg.inc.sync.aligned.u32 224;\n");
		if (WG && bn == 256) fz_tile_consume<ET, AT, BT, BAT, TC, WG ? 256 : 128>(epi, ring, bars, ebuf + (wg - 1) * 64 * FZ_TILE_EPI_LD, nst, M, N, nk, tiles, mt, per, wg - 1, t);
		else
#endif
		if (bn == 128) fz_tile_consume<ET, AT, BT, BAT, TC, 128>(epi, ring, bars, ebuf + (wg - 1) * 64 * FZ_TILE_EPI_LD, nst, M, N, nk, tiles, mt, per, wg - 1, t);
		else fz_tile_consume<ET, AT, BT, BAT, TC, 64>(epi, ring, bars, ebuf + (wg - 1) * 64 * FZ_TILE_EPI_LD, nst, M, N, nk, tiles, mt, per, wg - 1, t);
	}
}
