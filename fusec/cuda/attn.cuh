/* ---- attention: S = Q K^T, a softmax over S's rows carried online, O = P V ----
   FlashAttention's schedule, warp-specialised as FlashAttention-3 does it:
   a block of 128 rows of m of one batch, three warpgroups. Warpgroup 0
   copies (fz_attn_copy): Q's rows once, then K's and V's BN rows a step
   into rings of ST stages (three on sm_90a, two on mma.sync), each a tile of DB columns (DB, the head-size
   bucket, a multiple of 64 >= D; the columns past D are zeros) in blocks of
   64 columns x 128 bytes with the 128-byte swizzle (mma_common.cuh), said in
   and freed through mbarriers; by TMA on sm_90a where the runtime made
   tensor maps of K and V (128-column steps), else by cp.async. Warpgroups 1 and 2 compute 64 rows each
   (fz_attn_compute). Per step, in registers: S = Q K^T (f32), z = the
   spec's pointwise work on S (the functor zf), the row max and the sum of
   exp(z - max) carried with the rescaling exp(old max - new max), which
   also rescales O; P = exp(z - max) rounded to the operands' type is the A
   operand of O += P V straight from S's accumulators (an m16n8 C fragment
   pair is an m16k16 A fragment). At the end O / sum goes to the functor epi
   at every (b, m, d) inside [M, D] (through shared memory, fz_attn_out), and
   (max, sum) to rowf at every row inside M. Rows past M and columns past N
   read zeros and are masked to -inf before the max, so their exponentials
   are 0. */
#ifndef FZ_ATTN_PP
#define FZ_ATTN_PP 1 /* sm_90a: the two computing warpgroups take turns to issue */
#endif
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define FZ_ATTN_WGMMA 1 /* sm_90a: both products on wgmma, the B operands (and Q) read from shared memory */
#else
#define FZ_ATTN_WGMMA 0
#endif
#ifndef FZ_ATTN_TMA
#define FZ_ATTN_TMA 1 /* sm_90a: K and V by TMA where the runtime made the maps */
#endif
#ifndef FZ_TILE_SMEM /* tile_gemm.cuh's, when it is not printed before */
struct __align__(64) fz_tmap { unsigned long long w[16]; };
struct fz_tile_maps { fz_tmap a, b; unsigned long long ok; };
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
template <int DB, int R, int NT>
__device__ __forceinline__ void fz_attn_load(unsigned dst, const unsigned short *src, long long r0, long long rows, long long cols, int t)
{
	static_assert(R * (DB / 8) % NT == 0, "a tile's chunks split evenly over the block's threads");
	constexpr int CPR = DB / 8; /* 16-byte chunks a row */
	if (cols == DB && r0 + R <= rows && ((unsigned long long)src & 15ull) == 0) {
		/* whole rows of whole 16-byte chunks (the common case): no tests a chunk */
		const unsigned short *p = src + r0 * DB;
#pragma unroll 4
		for (int i = 0; i < R * CPR / NT; ++i) {
			const int q = t + NT * i, r = q / CPR, c = q % CPR;
			asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst + (c >> 3) * (R * 128) + fz_swz(r, c & 7)),
				"l"(p + q * 8) : "memory");
		}
		return;
	}
#pragma unroll 1
	for (int i = 0; i < R * CPR / NT; ++i) {
		const int q = t + NT * i, r = q / CPR, c = q % CPR;
		fz_chunk(dst + (c >> 3) * (R * 128) + fz_swz(r, c & 7), src, r0 + r, rows, 8 * c, cols, cols);
	}
}

/* the functors, batched (BAT: the batch index first) or not */
template <int BAT, class F> __device__ __forceinline__ float fz_attn_z(const F &f, long long b, long long m, long long n, float v)
{
	if constexpr (BAT) return f(b, m, n, v);
	else return f(m, n, v);
}
template <int BAT, class F> __device__ __forceinline__ auto fz_attn_epi(const F &f, long long b, long long m, long long d, float v, float mx, float l)
{
	if constexpr (BAT) return f(b, m, d, v, mx, l);
	else return f(m, d, v, mx, l);
}
/* O's work at (b, m, d) as one call: the generated epi, which stores what
   it stores (DIRECT 0), or returns the bits of X's element there, stored
   here (DIRECT 1: X a 16-bit [NB, M, D] that nothing else writes) */
template <int BAT, int DIRECT, class E> struct fz_attn_st {
	const E &f;
	unsigned short *X;
	long long M, D;
	__device__ __forceinline__ void operator()(long long b, long long m, long long d, float v, float mx, float l) const
	{
		if constexpr (DIRECT) X[(b * M + m) * D + d] = fz_attn_epi<BAT>(f, b, m, d, v, mx, l);
		else fz_attn_epi<BAT>(f, b, m, d, v, mx, l);
	}
};
template <int BAT, class F> __device__ __forceinline__ void fz_attn_row(const F &f, long long b, long long m, float mx, float l)
{
	if constexpr (BAT) f(b, m, mx, l);
	else f(m, mx, l);
}

/* S = Q K^T for this warp's 16 rows and BN columns of a tile of LD rows */
template <int ET, int DB, int BN, int BM, bool QR, int LD>
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
			fz_ldsm4(a, sq + (ks >> 2) * (BM * 128) + fz_swz(16 * w + (lane & 15), 2 * (ks & 3) + (lane >> 4)), false);
		}
#pragma unroll
		for (int j = 0; j < BN / 8; j += 2) { /* K's rows n are B's columns: its fragments as stored */
			unsigned r[4];
			const int n = 8 * j + (lane & 7) + 8 * (lane >> 4);
			fz_ldsm4(r, sk + (ks >> 2) * (LD * 128) + fz_swz(n, 2 * (ks & 3) + ((lane >> 3) & 1)), false);
			fz_mma16816<ET>(s[j], a, r[0], r[1]);
			fz_mma16816<ET>(s[j + 1], a, r[2], r[3]);
		}
	}
}

/* O += P V, P packed from the step's exponentials; BN rows of V's tile of LD */
template <int ET, int DB, int BN, int LD>
__device__ __forceinline__ void fz_attn_pv(float (&o)[DB / 8][4], const unsigned (&a)[BN / 16][4], unsigned sv, int lane)
{
#pragma unroll
	for (int kk = 0; kk < BN / 16; ++kk) {
#pragma unroll
		for (int i = 0; i < DB / 8; i += 2) { /* V's rows are k: transposed on the way */
			unsigned r[4];
			const int n = 8 * i + 8 * (lane >> 4), kr = 16 * kk + (lane & 7) + 8 * ((lane >> 3) & 1);
			fz_ldsm4(r, sv + (n >> 6) * (LD * 128) + fz_swz(kr, (n & 63) >> 3), true);
			fz_mma16816<ET>(o[i], a[kk], r[0], r[1]);
			fz_mma16816<ET>(o[i + 1], a[kk], r[2], r[3]);
		}
	}
}

#if FZ_ATTN_WGMMA
/* S = Q K^T on wgmma for the warpgroup's 64 rows, issued and left in
   flight: A is Q's tile, B K's (k-major), 16 columns of d an instruction;
   S's registers are laid out as mma.sync's (thread t of warp w: rows
   16w + t/4 and + 8); sq: the warpgroup's first row of Q's tile of BM rows */
template <int ET, int DB, int BN, int BM>
__device__ __forceinline__ void fz_attn_qk_issue(float (&s)[BN / 8][4], unsigned sq, unsigned sk)
{
#pragma unroll
	for (int j = 0; j < BN / 8; ++j)
#pragma unroll
		for (int q = 0; q < 4; ++q) s[j][q] = 0.f;
	asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
	for (int ks = 0; ks < DB / 16; ++ks)
		fz_wgmma<ET, BN, 1>(&s[0][0], fz_wg_desc(sq + (ks >> 2) * (BM * 128) + 32 * (ks & 3), 16, 1024),
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
/* values computed here, in program order with the volatile wgmma waits
   around them: the compiler may not sink the softmax's exponentials past
   the wait for the product they are meant to overlap */
template <int R> __device__ __forceinline__ void fz_attn_pin(float (&s)[R][4], float (&l)[2])
{
#pragma unroll
	for (int i = 0; i < R; ++i)
#pragma unroll
		for (int q = 0; q < 4; ++q) asm volatile("" : "+f"(s[i][q]));
	asm volatile("" : "+f"(l[0]), "+f"(l[1]));
}
/* until this warpgroup's wgmma groups are done; then the registers they
   wrote are the compiler's again */
template <int N, int R> __device__ __forceinline__ void fz_wg_wait(float (&r)[R][4])
{
	asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
#pragma unroll
	for (int i = 0; i < R; ++i)
#pragma unroll
		for (int q = 0; q < 4; ++q) asm volatile("" : "+f"(r[i][q])::"memory");
}
#endif

/* z over a whole step inside [M, N], without tests: the coordinates are
   computed only where the functor reads them */
template <int BAT, int BN, class Z>
__device__ __forceinline__ void fz_attn_zstep(const Z &zf, float (&s)[BN / 8][4], long long b, long long r0, long long n0, int lane)
{
#pragma unroll
	for (int j = 0; j < BN / 8; ++j)
#pragma unroll
		for (int q = 0; q < 4; ++q) s[j][q] = fz_attn_z<BAT>(zf, b, r0 + 8 * (q >> 1), n0 + 8 * j + 2 * (lane & 3) + (q & 1), s[j][q]);
}

/* z, the running max and sum, and the exponentials, for one step: this
   thread's rows r0 and r0 + 8, columns n0 + 8j + 2(lane % 4) + {0, 1}.
   CAUSAL: zi is z where every n <= m (the mask's select as its first
   value), for a step wholly inside the triangle for this thread's rows:
   FlashAttention's mask on the diagonal steps only */
template <int BAT, int BN, int CAUSAL, class Z, class ZI>
__device__ __forceinline__ void fz_attn_softmax(const Z &zf, const ZI &zi, float (&s)[BN / 8][4], float (&corr)[2], float (&mrow)[2],
	float (&lrow)[2], long long b, long long r0, long long n0, long long M, long long N, float L, int lane)
{
	if (n0 + BN <= N && r0 + 8 < M) {
		if (CAUSAL && n0 + BN - 1 <= r0) fz_attn_zstep<BAT, BN>(zi, s, b, r0, n0, lane);
		else fz_attn_zstep<BAT, BN>(zf, s, b, r0, n0, lane);
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
		for (int j = 0; j < BN / 16; ++j) /* a constant trip count: unrolled whole, t stays in registers */
			if (j < w) t[j][0] = fmaxf(t[j][0], t[j + w][0]), t[j][1] = fmaxf(t[j][1], t[j + w][1]);
	float mx[2] = {fmaxf(mrow[0], t[0][0]), fmaxf(mrow[1], t[0][1])};
	float base[2];
#pragma unroll
	for (int r = 0; r < 2; ++r) { /* the four lanes of a row hold its BN columns */
		mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 1));
		mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 2));
		const float m = mx[r] == FZ_ATTN_NINF ? 0.f : mx[r]; /* a row with nothing yet: exponentials of -inf */
		corr[r] = fz_ex2((mrow[r] - m) * L), base[r] = m * L, mrow[r] = mx[r];
	}
#pragma unroll
	for (int j = 0; j < BN / 8; ++j)
#pragma unroll
		for (int q = 0; q < 4; ++q) s[j][q] = fz_ex2(fmaf(s[j][q], L, -base[q >> 1]));
	/* the row sums as a tree too */
#pragma unroll
	for (int j = 0; j < BN / 8; ++j) t[j][0] = s[j][0] + s[j][1], t[j][1] = s[j][2] + s[j][3];
#pragma unroll
	for (int w = BN / 16; w >= 1; w >>= 1)
#pragma unroll
		for (int j = 0; j < BN / 16; ++j)
			if (j < w) t[j][0] += t[j + w][0], t[j][1] += t[j + w][1];
#pragma unroll
	for (int r = 0; r < 2; ++r) lrow[r] = fmaf(lrow[r], corr[r], t[0][r]);
}

/* O's rows times their corrections; nothing when no row of the warp has
   a new max (every correction exactly 1, the common case after a row's
   first steps): the same bits, DB / 2 multiplies a thread fewer */
template <int DB> __device__ __forceinline__ void fz_attn_rescale(float (&o)[DB / 8][4], const float (&corr)[2])
{
	if (!__any_sync(0xffffffffu, corr[0] != 1.f || corr[1] != 1.f)) return;
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

