/* ---- attention: S = Q K^T, a softmax over S's rows carried online, O = P V ----
   FlashAttention-2's schedule on mma.sync (sm_80 and later): a block of 4
   warps owns 64 rows of m (16 a warp) of one batch and walks n in steps of
   BN. Shared memory holds Q's 64 rows and three stages of K's and V's BN rows,
   each a tile of DB columns (DB, the head-size bucket, a multiple of 64 >= D;
   the columns past D are zeros) in blocks of 64 columns x 128 bytes with the
   128-byte swizzle (mma_common.cuh); K and V are copied by cp.async two
   steps ahead (the barrier at each step makes its tiles visible and frees
   the stage of the step before). Per step, in registers: S = Q K^T (f32),
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
	if (cols == DB && r0 + R <= rows && ((unsigned long long)src & 15ull) == 0) {
		/* whole rows of whole 16-byte chunks (the common case): no tests a chunk */
		const unsigned short *p = src + r0 * DB;
#pragma unroll
		for (int i = 0; i < R * CPR / 128; ++i) {
			const int q = t + 128 * i, r = q / CPR, c = q % CPR;
			asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst + (c >> 3) * (R * 128) + fz_swz(r, c & 7)),
				"l"(p + q * 8) : "memory");
		}
		return;
	}
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

/* O += P V, P packed from the step's exponentials */
template <int ET, int DB, int BN>
__device__ __forceinline__ void fz_attn_pv(float (&o)[DB / 8][4], const unsigned (&a)[BN / 16][4], unsigned sv, int lane)
{
#pragma unroll
	for (int kk = 0; kk < BN / 16; ++kk) {
#pragma unroll
		for (int i = 0; i < DB / 8; i += 2) { /* V's rows are k: transposed on the way */
			unsigned r[4];
			const int n = 8 * i + 8 * (lane >> 4), kr = 16 * kk + (lane & 7) + 8 * ((lane >> 3) & 1);
			fz_ldsm4(r, sv + (n >> 6) * (BN * 128) + fz_swz(kr, (n & 63) >> 3), true);
			fz_mma16816<ET>(o[i], a[kk], r[0], r[1]);
			fz_mma16816<ET>(o[i + 1], a[kk], r[2], r[3]);
		}
	}
}

#if FZ_ATTN_WGMMA
/* S = Q K^T on wgmma for the warpgroup's 64 rows, issued and left in
   flight: A is Q's tile, B K's (k-major), 16 columns of d an instruction;
   S's registers are laid out as mma.sync's (thread t of warp w: rows
   16w + t/4 and + 8) */
template <int ET, int DB, int BN>
__device__ __forceinline__ void fz_attn_qk_issue(float (&s)[BN / 8][4], unsigned sq, unsigned sk)
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
}
/* O += P V on wgmma, issued and left in flight: A, P, from registers; B,
   V's tile, n-major (its rows are k), 16 rows of it an instruction */
template <int ET, int DB, int BN>
__device__ __forceinline__ void fz_attn_pv_issue(float (&o)[DB / 8][4], const unsigned (&a)[BN / 16][4], unsigned sv)
{
	asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
	for (int kk = 0; kk < BN / 16; ++kk) fz_wgmma_ra<ET, DB>(&o[0][0], a[kk], fz_wg_desc(sv + 2048 * kk, BN * 128, 1024));
	asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
/* until this warpgroup's wgmma groups are done; then the registers they
   wrote are the compiler's again */
template <int R> __device__ __forceinline__ void fz_wg_wait(float (&r)[R][4])
{
	asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
#pragma unroll
	for (int i = 0; i < R; ++i)
#pragma unroll
		for (int q = 0; q < 4; ++q) asm volatile("" : "+f"(r[i][q])::"memory");
}
#endif

/* z, the running max and sum, and the exponentials, for one step: this
   thread's rows r0 and r0 + 8, columns n0 + 8j + 2(lane % 4) + {0, 1} */
template <int BAT, int BN, class Z>
__device__ __forceinline__ void fz_attn_softmax(const Z &zf, float (&s)[BN / 8][4], float (&corr)[2], float (&mrow)[2],
	float (&lrow)[2], long long b, long long r0, long long n0, long long M, long long N, int lane)
{
	/* a whole step inside [M, N] takes z without tests: the coordinates
	   are computed only where the spec's z reads them */
	if (n0 + BN <= N && r0 + 8 < M) {
#pragma unroll
		for (int j = 0; j < BN / 8; ++j)
#pragma unroll
			for (int q = 0; q < 4; ++q) s[j][q] = fz_attn_z<BAT>(zf, b, r0 + 8 * (q >> 1), n0 + 8 * j + 2 * (lane & 3) + (q & 1), s[j][q]);
	} else {
#pragma unroll
		for (int j = 0; j < BN / 8; ++j)
#pragma unroll
			for (int q = 0; q < 4; ++q) {
				const long long n = n0 + 8 * j + 2 * (lane & 3) + (q & 1), m = r0 + 8 * (q >> 1);
				s[j][q] = n < N && m < M ? fz_attn_z<BAT>(zf, b, m, n, s[j][q]) : FZ_ATTN_NINF;
			}
	}
	/* each row's max as a tree, not a chain of BN / 4 dependent steps */
	float t[BN / 8][2];
#pragma unroll
	for (int j = 0; j < BN / 8; ++j) t[j][0] = fmaxf(s[j][0], s[j][1]), t[j][1] = fmaxf(s[j][2], s[j][3]);
#pragma unroll
	for (int w = BN / 16; w >= 1; w >>= 1)
#pragma unroll
		for (int j = 0; j < w; ++j) t[j][0] = fmaxf(t[j][0], t[j + w][0]), t[j][1] = fmaxf(t[j][1], t[j + w][1]);
	float mx[2] = {fmaxf(mrow[0], t[0][0]), fmaxf(mrow[1], t[0][1])};
	float base[2];
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
		for (int q = 0; q < 4; ++q) s[j][q] = fz_ex2(fmaf(s[j][q], FZ_ATTN_L2E, -base[q >> 1]));
	/* the row sums as a tree too */
#pragma unroll
	for (int j = 0; j < BN / 8; ++j) t[j][0] = s[j][0] + s[j][1], t[j][1] = s[j][2] + s[j][3];
#pragma unroll
	for (int w = BN / 16; w >= 1; w >>= 1)
#pragma unroll
		for (int j = 0; j < w; ++j) t[j][0] += t[j + w][0], t[j][1] += t[j + w][1];
#pragma unroll
	for (int r = 0; r < 2; ++r) lrow[r] = fmaf(lrow[r], corr[r], t[0][r]);
}

/* O's rows times their corrections */
template <int DB> __device__ __forceinline__ void fz_attn_rescale(float (&o)[DB / 8][4], const float (&corr)[2])
{
#pragma unroll
	for (int i = 0; i < DB / 8; ++i)
#pragma unroll
		for (int q = 0; q < 4; ++q) o[i][q] *= corr[q >> 1];
}

/* P, the exponentials in S's registers, as the A operand of P V: an m16n8
   C fragment pair is an m16k16 A fragment */
template <int ET, int BN> __device__ __forceinline__ void fz_attn_pack(unsigned (&a)[BN / 16][4], const float (&s)[BN / 8][4])
{
#pragma unroll
	for (int kk = 0; kk < BN / 16; ++kk) {
		a[kk][0] = fz_pack2<ET>(s[2 * kk][0], s[2 * kk][1]), a[kk][1] = fz_pack2<ET>(s[2 * kk][2], s[2 * kk][3]);
		a[kk][2] = fz_pack2<ET>(s[2 * kk + 1][0], s[2 * kk + 1][1]), a[kk][3] = fz_pack2<ET>(s[2 * kk + 1][2], s[2 * kk + 1][3]);
	}
}

/* Step i's K and V tiles sit in stage i % ST of their rings (ST, 2 or 3,
   the schedule's): copied ST - 1 steps ahead of their use, each its own
   cp.async group, committed in the order K(i), V(i), K(i + 1), ... */
/* The steps: step j's tiles in (and, for wgmma, visible to the async
   proxy), every warp done with step j - 1's, then step j + ST - 1's copied
   into j - 1's stage while j computes: S, the softmax, O rescaled, O += P V.
   sm_90a: both products on wgmma, each waited for where it is issued. (The
   next step's Q K^T left in flight during this step's softmax, with a third
   stage to hold its K, was slower on an H200: 256 x 1024 x 1024 x 128 in
   0.527 ms against 0.434, 32 x 1024 x 1024 x 64 in 0.053 against 0.039;
   the stage's shared memory cost a block an SM.) sm_80, sm_90: mma.sync,
   Q's fragments kept in registers up to DB 128. */
template <int ET, int DB, int BN, int ST, int BAT, class Z>
__device__ __forceinline__ void fz_attn_steps(const Z &zf, float (&o)[DB / 8][4], float (&mrow)[2], float (&lrow)[2],
	unsigned sq, unsigned sk0, unsigned sv0, const unsigned short *Kb, const unsigned short *Vb, long long b, long long r0,
	long long M, long long N, long long D, long long nsteps, int t, int lane)
{
	constexpr unsigned TB = BN * DB * 2u;
#if !FZ_ATTN_WGMMA
	constexpr bool QR = DB <= 128;
	const int w = t >> 5;
	unsigned qf[QR ? DB / 16 : 1][4];
#endif
	for (long long j = 0; j < nsteps; ++j) {
		const unsigned st = (unsigned)(j % ST), s2 = (unsigned)((j + ST - 1) % ST);
		asm volatile("cp.async.wait_group %0;\n" ::"n"(2 * (ST - 2)) : "memory"); /* all but the steps after j */
#if FZ_ATTN_WGMMA
		asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
		__syncthreads();
#if !FZ_ATTN_WGMMA
		if (QR && j == 0) {
#pragma unroll
			for (int ks = 0; ks < (QR ? DB / 16 : 0); ++ks)
				fz_ldsm4(qf[ks], sq + (ks >> 2) * 8192 + fz_swz(16 * w + (lane & 15), 2 * (ks & 3) + (lane >> 4)), false);
		}
#endif
		if (j + ST - 1 < nsteps) fz_attn_load<DB, BN>(sk0 + s2 * TB, Kb, (j + ST - 1) * BN, N, D, t);
		asm volatile("cp.async.commit_group;\n" ::: "memory");
		if (j + ST - 1 < nsteps) fz_attn_load<DB, BN>(sv0 + s2 * TB, Vb, (j + ST - 1) * BN, N, D, t);
		asm volatile("cp.async.commit_group;\n" ::: "memory");
		float s[BN / 8][4], corr[2];
		unsigned a[BN / 16][4];
#if FZ_ATTN_WGMMA
		fz_attn_qk_issue<ET, DB, BN>(s, sq, sk0 + st * TB);
		fz_wg_wait(s);
#else
		fz_attn_scores<ET, DB, BN, QR>(s, qf, sq, sk0 + st * TB, w, lane);
#endif
		fz_attn_softmax<BAT, BN>(zf, s, corr, mrow, lrow, b, r0, j * BN, M, N, lane);
		fz_attn_rescale<DB>(o, corr);
		fz_attn_pack<ET, BN>(a, s);
#if FZ_ATTN_WGMMA
		fz_attn_pv_issue<ET, DB, BN>(o, a, sv0 + st * TB);
		fz_wg_wait(o);
#else
		fz_attn_pv<ET, DB, BN>(o, a, sv0 + st * TB, lane);
#endif
	}
}

/* The whole kernel: ET 0 f16, 1 bf16; DB the head-size bucket; BN the
   columns of n a step (64; 32 at DB 256, whose O takes 128 registers a
   thread); CAUSAL 1: the spec's z masks n > m to a value whose exponential
   is 0, so the steps past the block's last row are not taken; BAT 1: NB batches, Q as [NB,M,D], K and V as [NB,N,D]. Blocks:
   NB x ceil(M / 64), 128 threads; dynamic shared memory: Q's 64 x DB tile,
   ST stages of K's and V's BN x DB, 1 KB of alignment slack. */
template <int ET, int DB, int BN, int ST, int CAUSAL, int BAT, class Z, class Epi, class Row>
__device__ __forceinline__ void fz_attn(const Z &zf, const Epi &epi, const Row &rowf, const unsigned short *Q,
	const unsigned short *K, const unsigned short *V, long long M, long long N, long long D, long long NB)
{
	extern __shared__ unsigned char fz_smem_raw[];
	constexpr unsigned TQ = 64u * DB * 2u, TB = BN * DB * 2u; /* Q's tile, one of K's or V's */
	unsigned char *base = (unsigned char *)(((unsigned long long)fz_smem_raw + 1023ull) & ~1023ull);
	unsigned dyn;
	asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(dyn));
	if (dyn < (unsigned)(base - fz_smem_raw) + TQ + 2u * ST * TB) __trap(); /* the launch gave too little */
	const unsigned sq = fz_su32(base), sk0 = sq + TQ, sv0 = sk0 + ST * TB;
	const int t = threadIdx.x, w = t >> 5, lane = t & 31;
	/* CAUSAL: a batch's last rows first, the blocks with the most steps
	   (longest first packs the SMs better than rows in order) */
	const long long mt = (M + 63) >> 6, b = blockIdx.x / mt, mb = (long long)(blockIdx.x % mt);
	const long long m0 = (CAUSAL ? mt - 1 - mb : mb) * 64;
	if (b >= NB) return;
	const unsigned short *Qb = Q + b * M * D, *Kb = K + b * N * D, *Vb = V + b * N * D;
	const long long r0 = m0 + 16 * w + (lane >> 2);
	/* the steps: every block of keys, or (CAUSAL) those up to the block's last row */
	long long nsteps = (N + BN - 1) / BN;
	if (CAUSAL && (m0 + 64 + BN - 1) / BN < nsteps) nsteps = (m0 + 64 + BN - 1) / BN;
	/* groups: Q with K(0), V(0), K(1), V(1) */
	fz_attn_load<DB, 64>(sq, Qb, m0, M, D, t);
	fz_attn_load<DB, BN>(sk0, Kb, 0, N, D, t);
	asm volatile("cp.async.commit_group;\n" ::: "memory");
	fz_attn_load<DB, BN>(sv0, Vb, 0, N, D, t);
	asm volatile("cp.async.commit_group;\n" ::: "memory");
	if constexpr (ST == 3) {
		if (N > BN) fz_attn_load<DB, BN>(sk0 + TB, Kb, BN, N, D, t);
		asm volatile("cp.async.commit_group;\n" ::: "memory");
		if (N > BN) fz_attn_load<DB, BN>(sv0 + TB, Vb, BN, N, D, t);
		asm volatile("cp.async.commit_group;\n" ::: "memory");
	}
#if FZ_ATTN_WGMMA
	asm volatile("cp.async.wait_group %0;\n" ::"n"(2 * ST - 3) : "memory"); /* Q and K(0) */
	asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); /* the copies, visible to wgmma */
	__syncthreads();
#endif
	float o[DB / 8][4], mrow[2] = {FZ_ATTN_NINF, FZ_ATTN_NINF}, lrow[2] = {0.f, 0.f};
#pragma unroll
	for (int i = 0; i < DB / 8; ++i)
#pragma unroll
		for (int q = 0; q < 4; ++q) o[i][q] = 0.f;
	fz_attn_steps<ET, DB, BN, ST, BAT>(zf, o, mrow, lrow, sq, sk0, sv0, Kb, Vb, b, r0, M, N, D, nsteps, t, lane);
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
