/* ---- attention: S = Q K^T, a softmax over S's rows carried online, O = P V ----
   FlashAttention-2's schedule on mma.sync (sm_80 and later): a block of 4
   warps owns 64 rows of m (16 a warp) of one batch and walks n in steps of
   BN. Shared memory holds Q's 64 rows and two stages of K's and V's BN rows,
   each a tile of DB columns (DB, the head-size bucket, a multiple of 64 >= D;
   the columns past D are zeros) in blocks of 64 columns x 128 bytes with the
   128-byte swizzle (mma_common.cuh); step j + 1's K and V are copied by
   cp.async while step j computes (the barrier between steps makes the
   tiles visible and frees the other stage). Per step, in registers: S = Q K^T (f32),
   z = the spec's pointwise work on S (the functor zf), the row max and the
   sum of exp(z - max) carried with the rescaling exp(old max - new max),
   which also rescales O; P = exp(z - max) rounded to the operands' type is
   the A operand of O += P V straight from S's accumulators (an m16n8 C
   fragment pair is an m16k16 A fragment). At the end O / sum goes to the
   functor epi at every (b, m, d) inside [M, D], and (max, sum) to rowf at
   every row inside M. Rows past M and columns past N read zeros and are
   masked to -inf before the max, so their exponentials are 0. */
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define FZ_ATTN_WGMMA 1 /* sm_90a: both products on wgmma, the B operands (and Q) read from shared memory */
#else
#define FZ_ATTN_WGMMA 0
#endif
#define FZ_ATTN_L2E 1.4426950408889634f
#define FZ_ATTN_NINF (-__int_as_float(0x7f800000))

__device__ __forceinline__ float fz_ex2(float x)
{
	float y;
	asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
	return y;
}
/* two floats as a pair of f16 (ET 0) or bf16 (ET 1), lo in the low half */
template <int ET> __device__ __forceinline__ unsigned fz_pack2(float lo, float hi)
{
	unsigned r;
	if constexpr (ET == 0) asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
	else asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
	return r;
}

/* rows r0 .. r0 + R - 1 of a [rows, cols] operand, rows contiguous, into
   an R x DB tile at dst, in blocks of R rows x 64 columns (R x 128 bytes);
   rows past `rows` and columns past `cols` as zeros */
template <int DB, int R>
__device__ __forceinline__ void fz_attn_load(unsigned dst, const unsigned short *src, long long r0, long long rows, long long cols, int t)
{
	constexpr int CPR = DB / 8; /* 16-byte chunks a row */
#pragma unroll
	for (int i = 0; i < R * CPR / 128; ++i) {
		const int q = t + 128 * i, r = q / CPR, c = q % CPR;
		fz_chunk(dst + (c >> 3) * (R * 128) + fz_swz(r, c & 7), src, r0 + r, rows, 8 * c, cols, cols);
	}
}

/* the functors, batched (BAT: the batch index first) or not */
template <int BAT, class F> __device__ __forceinline__ float fz_attn_z(const F &f, long long b, long long m, long long n, float v)
{
	if constexpr (BAT) return f(b, m, n, v);
	else return f(m, n, v);
}
template <int BAT, class F> __device__ __forceinline__ void fz_attn_epi(const F &f, long long b, long long m, long long d, float v, float mx, float l)
{
	if constexpr (BAT) f(b, m, d, v, mx, l);
	else f(m, d, v, mx, l);
}
template <int BAT, class F> __device__ __forceinline__ void fz_attn_row(const F &f, long long b, long long m, float mx, float l)
{
	if constexpr (BAT) f(b, m, mx, l);
	else f(m, mx, l);
}

/* S = Q K^T for this warp's 16 rows and the step's BN columns */
template <int ET, int DB, int BN, bool QR>
__device__ __forceinline__ void fz_attn_scores(float (&s)[BN / 8][4], const unsigned (&qf)[QR ? DB / 16 : 1][4], unsigned sq, unsigned sk, int w, int lane)
{
#pragma unroll
	for (int j = 0; j < BN / 8; ++j)
#pragma unroll
		for (int q = 0; q < 4; ++q) s[j][q] = 0.f;
#pragma unroll
	for (int ks = 0; ks < DB / 16; ++ks) {
		unsigned a[4];
		if constexpr (QR) {
#pragma unroll
			for (int i = 0; i < 4; ++i) a[i] = qf[ks][i];
		} else {
			fz_ldsm4(a, sq + (ks >> 2) * 8192 + fz_swz(16 * w + (lane & 15), 2 * (ks & 3) + (lane >> 4)), false);
		}
#pragma unroll
		for (int j = 0; j < BN / 8; j += 2) { /* K's rows n are B's columns: its fragments as stored */
			unsigned r[4];
			const int n = 8 * j + (lane & 7) + 8 * (lane >> 4);
			fz_ldsm4(r, sk + (ks >> 2) * (BN * 128) + fz_swz(n, 2 * (ks & 3) + ((lane >> 3) & 1)), false);
			fz_mma16816<ET>(s[j], a, r[0], r[1]);
			fz_mma16816<ET>(s[j + 1], a, r[2], r[3]);
		}
	}
}

/* O += P V, P the step's exponentials in S's registers */
template <int ET, int DB, int BN>
__device__ __forceinline__ void fz_attn_pv(float (&o)[DB / 8][4], const float (&s)[BN / 8][4], unsigned sv, int lane)
{
#pragma unroll
	for (int kk = 0; kk < BN / 16; ++kk) {
		const unsigned a[4] = {fz_pack2<ET>(s[2 * kk][0], s[2 * kk][1]), fz_pack2<ET>(s[2 * kk][2], s[2 * kk][3]),
		                       fz_pack2<ET>(s[2 * kk + 1][0], s[2 * kk + 1][1]), fz_pack2<ET>(s[2 * kk + 1][2], s[2 * kk + 1][3])};
#pragma unroll
		for (int i = 0; i < DB / 8; i += 2) { /* V's rows are k: transposed on the way */
			unsigned r[4];
			const int n = 8 * i + 8 * (lane >> 4), kr = 16 * kk + (lane & 7) + 8 * ((lane >> 3) & 1);
			fz_ldsm4(r, sv + (n >> 6) * (BN * 128) + fz_swz(kr, (n & 63) >> 3), true);
			fz_mma16816<ET>(o[i], a, r[0], r[1]);
			fz_mma16816<ET>(o[i + 1], a, r[2], r[3]);
		}
	}
}

#if FZ_ATTN_WGMMA
/* S = Q K^T on wgmma for the warpgroup's 64 rows: A is Q's tile, B K's
   (k-major), 16 columns of d an instruction; S's registers are laid out as
   mma.sync's (thread t of warp w: rows 16w + t/4 and + 8) */
template <int ET, int DB, int BN>
__device__ __forceinline__ void fz_attn_scores_wg(float (&s)[BN / 8][4], unsigned sq, unsigned sk)
{
#pragma unroll
	for (int j = 0; j < BN / 8; ++j)
#pragma unroll
		for (int q = 0; q < 4; ++q) s[j][q] = 0.f;
	asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
	for (int ks = 0; ks < DB / 16; ++ks)
		fz_wgmma<ET, BN, 1>(&s[0][0], fz_wg_desc(sq + (ks >> 2) * 8192 + 32 * (ks & 3), 16, 1024),
			fz_wg_desc(sk + (ks >> 2) * (BN * 128) + 32 * (ks & 3), 16, 1024), 1);
	asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
	asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
}
/* O += P V on wgmma: A, P, from registers; B, V's tile, n-major (its rows
   are k), 16 rows of it an instruction */
template <int ET, int DB, int BN>
__device__ __forceinline__ void fz_attn_pv_wg(float (&o)[DB / 8][4], const float (&s)[BN / 8][4], unsigned sv)
{
	unsigned a[BN / 16][4];
#pragma unroll
	for (int kk = 0; kk < BN / 16; ++kk) {
		a[kk][0] = fz_pack2<ET>(s[2 * kk][0], s[2 * kk][1]), a[kk][1] = fz_pack2<ET>(s[2 * kk][2], s[2 * kk][3]);
		a[kk][2] = fz_pack2<ET>(s[2 * kk + 1][0], s[2 * kk + 1][1]), a[kk][3] = fz_pack2<ET>(s[2 * kk + 1][2], s[2 * kk + 1][3]);
	}
	asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
	for (int kk = 0; kk < BN / 16; ++kk) fz_wgmma_ra<ET, DB>(&o[0][0], a[kk], fz_wg_desc(sv + 2048 * kk, BN * 128, 1024));
	asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
	asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
}
#endif

/* z, the running max and sum, and the exponentials, for one step: this
   thread's rows r0 and r0 + 8, columns n0 + 8j + 2(lane % 4) + {0, 1} */
template <int BAT, int DB, int BN, class Z>
__device__ __forceinline__ void fz_attn_softmax(const Z &zf, float (&s)[BN / 8][4], float (&o)[DB / 8][4], float (&mrow)[2],
	float (&lrow)[2], long long b, long long r0, long long n0, long long M, long long N, int lane)
{
	float mx[2] = {mrow[0], mrow[1]};
	/* a whole step inside [M, N] takes z without tests: the coordinates
	   are computed only where the spec's z reads them */
	if (n0 + BN <= N && r0 + 8 < M) {
#pragma unroll
		for (int j = 0; j < BN / 8; ++j)
#pragma unroll
			for (int q = 0; q < 4; ++q) {
				const float z = fz_attn_z<BAT>(zf, b, r0 + 8 * (q >> 1), n0 + 8 * j + 2 * (lane & 3) + (q & 1), s[j][q]);
				s[j][q] = z, mx[q >> 1] = fmaxf(mx[q >> 1], z);
			}
	} else {
#pragma unroll
		for (int j = 0; j < BN / 8; ++j)
#pragma unroll
			for (int q = 0; q < 4; ++q) {
				const long long n = n0 + 8 * j + 2 * (lane & 3) + (q & 1), m = r0 + 8 * (q >> 1);
				const float z = n < N && m < M ? fz_attn_z<BAT>(zf, b, m, n, s[j][q]) : FZ_ATTN_NINF;
				s[j][q] = z, mx[q >> 1] = fmaxf(mx[q >> 1], z);
			}
	}
	float corr[2], base[2], ls[2] = {0.f, 0.f};
#pragma unroll
	for (int r = 0; r < 2; ++r) { /* the four lanes of a row hold its BN columns */
		mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 1));
		mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 2));
		const float m = mx[r] == FZ_ATTN_NINF ? 0.f : mx[r]; /* a row with nothing yet: exponentials of -inf */
		corr[r] = fz_ex2((mrow[r] - m) * FZ_ATTN_L2E), base[r] = m * FZ_ATTN_L2E, mrow[r] = mx[r];
	}
#pragma unroll
	for (int j = 0; j < BN / 8; ++j)
#pragma unroll
		for (int q = 0; q < 4; ++q) {
			const float e = fz_ex2(fmaf(s[j][q], FZ_ATTN_L2E, -base[q >> 1]));
			s[j][q] = e, ls[q >> 1] += e;
		}
#pragma unroll
	for (int r = 0; r < 2; ++r) lrow[r] = lrow[r] * corr[r] + ls[r];
#pragma unroll
	for (int i = 0; i < DB / 8; ++i)
#pragma unroll
		for (int q = 0; q < 4; ++q) o[i][q] *= corr[q >> 1];
}

/* The whole kernel: ET 0 f16, 1 bf16; DB the head-size bucket; BN the
   columns of n a step (64; 32 at DB 256, whose O takes 128 registers a
   thread); BAT 1: NB batches, Q as [NB,M,D], K and V as [NB,N,D]. Blocks:
   NB x ceil(M / 64), 128 threads; dynamic shared memory: Q's 64 x DB tile,
   two stages of K's and V's BN x DB, 1 KB of alignment slack. */
template <int ET, int DB, int BN, int BAT, class Z, class Epi, class Row>
__device__ __forceinline__ void fz_attn(const Z &zf, const Epi &epi, const Row &rowf, const unsigned short *Q,
	const unsigned short *K, const unsigned short *V, long long M, long long N, long long D, long long NB)
{
	extern __shared__ unsigned char fz_smem_raw[];
	constexpr unsigned TQ = 64u * DB * 2u, TB = BN * DB * 2u; /* Q's tile, one of K's or V's */
	constexpr bool QR = !FZ_ATTN_WGMMA && DB <= 128; /* mma.sync: Q's fragments stay in registers */
	unsigned char *base = (unsigned char *)(((unsigned long long)fz_smem_raw + 1023ull) & ~1023ull);
	unsigned dyn;
	asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(dyn));
	if (dyn < (unsigned)(base - fz_smem_raw) + TQ + 4u * TB) __trap(); /* the launch gave too little */
	const unsigned sq = fz_su32(base), sk0 = sq + TQ, sv0 = sq + TQ + 2 * TB;
	const int t = threadIdx.x, w = t >> 5, lane = t & 31;
	const long long mt = (M + 63) >> 6, b = blockIdx.x / mt, m0 = (long long)(blockIdx.x % mt) * 64;
	if (b >= NB) return;
	const unsigned short *Qb = Q + b * M * D, *Kb = K + b * N * D, *Vb = V + b * N * D;
	const long long nsteps = (N + BN - 1) / BN, r0 = m0 + 16 * w + (lane >> 2);
	fz_attn_load<DB, 64>(sq, Qb, m0, M, D, t);
	fz_attn_load<DB, BN>(sk0, Kb, 0, N, D, t);
	fz_attn_load<DB, BN>(sv0, Vb, 0, N, D, t);
	asm volatile("cp.async.commit_group;\n" ::: "memory");
	asm volatile("cp.async.wait_group 0;\n" ::: "memory");
#if FZ_ATTN_WGMMA
	asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); /* the copies, visible to wgmma */
#endif
	__syncthreads();
	unsigned qf[QR ? DB / 16 : 1][4];
	if constexpr (QR) {
#pragma unroll
		for (int ks = 0; ks < DB / 16; ++ks)
			fz_ldsm4(qf[ks], sq + (ks >> 2) * 8192 + fz_swz(16 * w + (lane & 15), 2 * (ks & 3) + (lane >> 4)), false);
	}
	float o[DB / 8][4], mrow[2] = {FZ_ATTN_NINF, FZ_ATTN_NINF}, lrow[2] = {0.f, 0.f};
#pragma unroll
	for (int i = 0; i < DB / 8; ++i)
#pragma unroll
		for (int q = 0; q < 4; ++q) o[i][q] = 0.f;
	for (long long j = 0; j < nsteps; ++j) {
		const unsigned st = (unsigned)(j & 1);
		if (j > 0) { /* step j's tiles are in; every warp is done with step j - 1's */
			asm volatile("cp.async.wait_group 0;\n" ::: "memory");
#if FZ_ATTN_WGMMA
			asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
			__syncthreads();
		}
		if (j + 1 < nsteps) {
			fz_attn_load<DB, BN>(sk0 + (st ^ 1u) * TB, Kb, (j + 1) * BN, N, D, t);
			fz_attn_load<DB, BN>(sv0 + (st ^ 1u) * TB, Vb, (j + 1) * BN, N, D, t);
			asm volatile("cp.async.commit_group;\n" ::: "memory");
		}
		float s[BN / 8][4];
#if FZ_ATTN_WGMMA
		fz_attn_scores_wg<ET, DB, BN>(s, sq, sk0 + st * TB);
		fz_attn_softmax<BAT, DB, BN>(zf, s, o, mrow, lrow, b, r0, j * BN, M, N, lane);
		fz_attn_pv_wg<ET, DB, BN>(o, s, sv0 + st * TB);
#else
		fz_attn_scores<ET, DB, BN, QR>(s, qf, sq, sk0 + st * TB, w, lane);
		fz_attn_softmax<BAT, DB, BN>(zf, s, o, mrow, lrow, b, r0, j * BN, M, N, lane);
		fz_attn_pv<ET, DB, BN>(o, s, sv0 + st * TB, lane);
#endif
	}
#pragma unroll
	for (int r = 0; r < 2; ++r) {
		lrow[r] += __shfl_xor_sync(0xffffffffu, lrow[r], 1);
		lrow[r] += __shfl_xor_sync(0xffffffffu, lrow[r], 2);
	}
	const float inv[2] = {1.f / lrow[0], 1.f / lrow[1]};
#pragma unroll
	for (int i = 0; i < DB / 8; ++i)
#pragma unroll
		for (int q = 0; q < 4; ++q) {
			const long long d = 8 * i + 2 * (lane & 3) + (q & 1), m = r0 + 8 * (q >> 1);
			if (m < M && d < D) fz_attn_epi<BAT>(epi, b, m, d, o[i][q] * inv[q >> 1], mrow[q >> 1], lrow[q >> 1]);
		}
	if ((lane & 3) == 0)
#pragma unroll
		for (int r = 0; r < 2; ++r)
			if (r0 + 8 * r < M) fz_attn_row<BAT>(rowf, b, r0 + 8 * r, mrow[r], lrow[r]);
}
