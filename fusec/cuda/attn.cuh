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

/* Warp specialisation (FlashAttention-3's shape): warpgroup 0 copies, the
   others compute. The block is persistent: it takes tiles (a batch's BM
   rows of m) one after the other (fz_attn_tile), and the rings run on
   across its tiles: g counts the block's steps, every tile's and pass's,
   so that a stage is g % ST and its phase (g / ST) % 2, and the copier
   fills the next tile's first stages while this one's last are read. Two
   copying warps take turns on each ring: warp 0 copies K(g) for even g,
   warp 1 K(g) for odd g (and each tile's Q first), each into stage
   g % ST; warps 2 and 3 the same for V. A warp waits for its stage's
   empty barrier (an arrival from every computing warp once its reads of
   the stage are done), copies by cp.async, waits for its own copy and says
   it is in on the stage's full barrier (made visible to wgmma first): a
   copy is published the moment it lands, not held behind another stage's
   wait. Q's tile has NQ buffers (the block's i-th tile in buffer i % NQ),
   each with a full barrier and an empty one (an arrival from every
   computing thread after its epilogue, which stages O in its rows of Q).
   The computing warpgroups never wait for each other: no block-wide
   barrier after the start. Barriers: Q's full, Q's empty, NQ each, then
   full K, full V, empty K, empty V, ST each. */
struct fz_attn_bars {
	unsigned q, qe, fk, fv, ek, ev; /* shared addresses of the first of each */
	__device__ __forceinline__ unsigned qfull(int i) const { return q + 8u * i; }
	__device__ __forceinline__ unsigned qempty(int i) const { return qe + 8u * i; }
	__device__ __forceinline__ unsigned full(int v, int s) const { return (v ? fv : fk) + 8u * s; }
	__device__ __forceinline__ unsigned empty(int v, int s) const { return (v ? ev : ek) + 8u * s; }
};

/* The block's tiles: its r-th is tile r G + blockIdx.x for even r and
   r G + G - 1 - blockIdx.x for odd r (G blocks; a snake, so that with the
   tiles longest first, as CAUSAL orders them, every block's sum of steps
   comes out near the mean); past the last tile, none more */
struct fz_attn_tiles {
	unsigned mt, n; /* tiles a batch, tiles in all (32 bits: the division below is the cheap one) */
	__device__ __forceinline__ unsigned at(int r) const
	{
		const unsigned g = gridDim.x;
		return (unsigned)r * g + ((r & 1) ? g - 1 - blockIdx.x : blockIdx.x);
	}
	/* tile p's batch, first row and steps (CAUSAL: a batch's last rows
	   first, the tiles with the most steps, and only the steps up to the
	   tile's last row) */
	template <int BM, int BN, int CAUSAL>
	__device__ __forceinline__ void get(unsigned p, long long N, unsigned &b, unsigned &m0, unsigned &nsteps) const
	{
		b = p / mt;
		const unsigned mb = p - b * mt;
		m0 = (CAUSAL ? mt - 1 - mb : mb) * BM;
		long long ns = (N + BN - 1) / BN;
		if (CAUSAL && ((long long)m0 + BM + BN - 1) / BN < ns) ns = ((long long)m0 + BM + BN - 1) / BN;
		nsteps = (unsigned)ns;
	}
};

/* this thread's copies in, visible to wgmma, said on barrier bar */
__device__ __forceinline__ void fz_attn_publish(unsigned bar)
{
	asm volatile("cp.async.commit_group;\n" ::: "memory");
	fz_cp_publish(0, bar);
}

/* A step's tile of K (V 0) or V (V 1) by TMA, from the runtime's tensor
   maps over the tensors as stored (rows: a batch's leading dimensions
   flattened; columns past D zero-filled): K's in boxes of 64 columns x
   128 rows (map a), V's in 64 x 64 (map b), each block of 64 columns of
   the tile as one or two boxes; the bytes said on barrier bar */
template <int DB, int BN, int V>
__device__ __forceinline__ void fz_attn_tma(unsigned dst, const fz_tmap *map, long long row, unsigned bar)
{
	constexpr int R = V ? 64 : 128;
	static_assert(BN % R == 0, "whole boxes a step");
	asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(BN * DB * 2u) : "memory");
#pragma unroll
	for (int cb = 0; cb < DB / 64; ++cb)
#pragma unroll
		for (int h = 0; h < BN / R; ++h)
			asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n"
				::"r"(dst + cb * (BN * 128) + h * (R * 128)), "l"(map), "r"(64 * cb), "r"((int)(row + h * R)), "r"(bar) : "memory");
}

/* TMA: sm_90a, K's boxes a whole step (BN 128), and the maps given and
   made (tm->ok: rows of D % 8 == 0 elements, 16-byte aligned); then every step
   wholly inside a batch's N rows is copied so, by one lane of its warp
   (its arrival carries the bytes, the other lanes' arrivals complete the
   count), and a cut last step by cp.async, zero-filled, as without */
#if FZ_ATTN_WGMMA
#define FZ_ATTN_COPY_INLINE __noinline__ /* its own registers, under setmaxnreg's 56 */
#else
#define FZ_ATTN_COPY_INLINE __forceinline__ /* a branch of the kernel's, no call's spills */
#endif
template <int DB, int BN, int BM, int ST, int NP, int NQ, int CAUSAL>
__device__ FZ_ATTN_COPY_INLINE void fz_attn_copy(const fz_attn_bars bb, unsigned sq, unsigned sk0, unsigned sv0, const unsigned short *Q,
	const unsigned short *K, const unsigned short *V, const fz_tile_maps *tm, const fz_attn_tiles tl, long long M, long long N,
	long long D, int t)
{
	static_assert(ST >= 2, "two copying warps a ring, taking turns");
	constexpr unsigned TB = BN * DB * 2u, TQ = BM * DB * 2u;
	const int w = t >> 5, lane = t & 31, v = w >> 1, s = w & 1;
	const bool tma = FZ_ATTN_WGMMA && FZ_ATTN_TMA && BN % 128 == 0 && tm && tm->ok != 0;
	const unsigned dst = v ? sv0 : sk0; /* this warp's ring */
	unsigned g = 0; /* the block's steps before this tile */
#pragma unroll 1
	for (int r = 0;; ++r) {
		const unsigned p = tl.at(r);
		if (p >= tl.n) break;
		unsigned b, m0, nsteps; /* 32 bits: a block's registers */
		tl.template get<BM, BN, CAUSAL>(p, N, b, m0, nsteps);
		if (w == 1) {
			const int qb = NQ > 1 ? r % NQ : 0;
			fz_bar_wait(bb.qempty(qb), (unsigned)((r / NQ) & 1) ^ 1u);
#pragma unroll 1
			for (int c = 0; c < BM / 64; ++c) fz_attn_load<DB, 64, 32>(sq + qb * TQ + c * (64 * DB * 2), Q + b * M * D, (long long)m0 + 64 * c, M, D, lane);
			fz_attn_publish(bb.qfull(qb));
		}
		const unsigned steps = NP * nsteps;
		const unsigned short *src = (v ? V : K) + b * N * D;
#pragma unroll 1
		for (unsigned j = (unsigned)s ^ (g & 1u); j < steps; j += 2) {
			const unsigned gj = g + j;
			const int st = (int)(gj % ST);
			const long long n0 = (long long)(NP > 1 ? j % nsteps : j) * BN;
			const unsigned full = (v ? bb.fv : bb.fk) + 8u * st;
			fz_bar_wait((v ? bb.ev : bb.ek) + 8u * st, ((gj / ST) & 1u) ^ 1u);
			if constexpr (FZ_ATTN_WGMMA && FZ_ATTN_TMA && BN % 128 == 0) {
				if (tma && n0 + BN <= N) {
					if (lane == 0) {
						if (v) fz_attn_tma<DB, BN, 1>(dst + st * TB, &tm->b, b * N + n0, full);
						else fz_attn_tma<DB, BN, 0>(dst + st * TB, &tm->a, b * N + n0, full);
					} else fz_bar_arrive(full);
					continue;
				}
			}
			fz_attn_load<DB, BN, 32>(dst + st * TB, src, n0, N, D, lane);
			fz_attn_publish(full);
		}
		g += steps;
	}
}

/* FlashAttention-3's ping-pong between two computing warpgroups: each
   issues a step's products only once the other has issued its own, so one
   warpgroup's softmax runs under the other's products. Named barrier 3 + c
   is warpgroup c's turn: it waits there (its 128 threads and the other's
   128 arrivals), issues, and hands the turn over. The turns run on across
   the block's tiles (both warpgroups take the same tiles, the same issues
   each): warpgroup 1 hands over first, once, at the start, and not after
   its last issue of the block's last tile, so that every barrier's
   arrivals match its waits. */
template <int PP> __device__ __forceinline__ void fz_attn_turn(int c)
{
	if constexpr (PP) asm volatile("bar.sync %0, 256;\n" ::"r"(3 + c) : "memory");
}
template <int PP> __device__ __forceinline__ void fz_attn_hand(int c, bool last)
{
	if constexpr (PP)
		if (!(last && c == 1)) asm volatile("bar.arrive %0, 256;\n" ::"r"(3 + (c ^ 1)) : "memory");
}

#if FZ_ATTN_WGMMA
/* A computing warpgroup on wgmma, with FlashAttention-3's overlap inside
   it: step j issues S(j) = Q K(j)^T, then O += P(j - 1) V(j - 1), waits for
   S(j) only and takes its softmax while the second product runs; then
   waits for that, rescales O by step j's correction and packs P(j). Step
   0 is peeled so that every wait is unconditional (ptxas cannot pair a
   conditional issue with a conditional wait, and serialises every wgmma:
   its C7514). */
template <int ET, int DB, int OD, int BN, int ST, int BAT, int PP, int CAUSAL, class Z, class ZI>
__device__ __forceinline__ void fz_attn_compute(const Z &zf, const ZI &zi, float (&o)[OD / 8][4], float (&mrow)[2], float (&lrow)[2],
	const fz_attn_bars bb, unsigned sq, unsigned sk0, unsigned sv0, long long b, long long r0, long long M, long long N,
	unsigned nsteps, unsigned g, unsigned, bool last, float L, int lane)
{
	static_assert(OD == DB, "one walk");
	constexpr unsigned TB = BN * DB * 2u;
	const int c = (threadIdx.x >> 7) - 1;
	unsigned a[BN / 16][4]; /* P of the step before */
	{
		const int st = (int)(g % ST);
		float s[BN / 8][4], corr[2];
		fz_bar_wait(bb.full(0, st), (g / ST) & 1u);
		fz_attn_turn<PP>(c);
		fz_attn_qk_issue<ET, DB, BN, 64>(s, sq, sk0 + st * TB);
		fz_attn_hand<PP>(c, false);
		fz_wg_wait<0>(s);
		if (lane == 0) fz_bar_arrive(bb.empty(0, st));
		fz_attn_softmax<BAT, BN, CAUSAL>(zf, zi, s, corr, mrow, lrow, b, r0, 0, M, N, L, lane);
		fz_attn_pack<ET, BN>(a, s); /* O is 0: nothing to rescale */
	}
	for (unsigned j = 1; j < nsteps; ++j) {
		const unsigned gj = g + j;
		const int st = (int)(gj % ST), sp = (int)((gj - 1) % ST);
		float s[BN / 8][4], corr[2];
		fz_bar_wait(bb.full(0, st), (gj / ST) & 1u);
		fz_bar_wait(bb.full(1, sp), ((gj - 1) / ST) & 1u);
		fz_attn_turn<PP>(c);
		fz_attn_qk_issue<ET, DB, BN, 64>(s, sq, sk0 + st * TB);
		fz_attn_pv_issue<ET, DB, BN>(o, a, sv0 + sp * TB);
		fz_attn_hand<PP>(c, false);
		fz_wg_wait<1>(s);
		if (lane == 0) fz_bar_arrive(bb.empty(0, st));
		fz_attn_softmax<BAT, BN, CAUSAL>(zf, zi, s, corr, mrow, lrow, b, r0, (long long)j * BN, M, N, L, lane);
		fz_attn_pin(s, lrow); /* the exponentials before the wait, not sunk after it */
		fz_wg_wait<0>(o);
		if (lane == 0) fz_bar_arrive(bb.empty(1, sp));
		fz_attn_rescale<DB>(o, corr);
		fz_attn_pack<ET, BN>(a, s);
	}
	const unsigned gl = g + nsteps - 1;
	const int sp = (int)(gl % ST);
	fz_bar_wait(bb.full(1, sp), (gl / ST) & 1u);
	fz_attn_turn<PP>(c);
	fz_attn_pv_issue<ET, DB, BN>(o, a, sv0 + sp * TB);
	fz_attn_hand<PP>(c, last);
	fz_wg_wait<0>(o);
	if (lane == 0) fz_bar_arrive(bb.empty(1, sp));
}
#else
/* A computing warpgroup on mma.sync (sm_80, sm_90), a step's BN columns in
   parts of at most 64 (16 at DB 256) so that S's, P's and O's registers fit
   without spilling in the 168 a thread that 384 threads leave; O's OD
   columns from dv (bytes into V's tile); steps g .. g + nsteps - 1 of the
   block's (DB 256 takes two walks a tile, a half of O each) */
template <int ET, int DB, int OD, int BN, int ST, int BAT, int PP, int CAUSAL, class Z, class ZI>
__device__ __forceinline__ void fz_attn_compute(const Z &zf, const ZI &zi, float (&o)[OD / 8][4], float (&mrow)[2], float (&lrow)[2],
	const fz_attn_bars bb, unsigned sq, unsigned sk0, unsigned sv0, long long b, long long r0, long long M, long long N,
	unsigned nsteps, unsigned g, unsigned dv, bool, float L, int lane)
{
	constexpr unsigned TB = BN * DB * 2u;
	/* 16 too at DB 128 when z reads a matrix (BN 64, plan_attn_launch): the
	   persistent loop's tile in registers left its loads too few at 32 */
	constexpr int SB = DB > 128 || (DB > 64 && BN < 128) ? 16 : DB > 64 ? 32 : (BN < 64 ? BN : 64);
	constexpr bool QR = DB <= 64;
	const int w = (threadIdx.x >> 5) & 3;
	unsigned qf[QR ? DB / 16 : 1][4];
	if constexpr (QR) {
#pragma unroll
		for (int ks = 0; ks < DB / 16; ++ks)
			fz_ldsm4(qf[ks], sq + (ks >> 2) * (64 * 128) + fz_swz(16 * w + (lane & 15), 2 * (ks & 3) + (lane >> 4)), false);
	}
	for (unsigned j = 0; j < nsteps; ++j) {
		const unsigned gj = g + j;
		const int st = (int)(gj % ST);
		const unsigned ph = (gj / ST) & 1u;
		fz_bar_wait(bb.full(0, st), ph);
		fz_bar_wait(bb.full(1, st), ph);
#pragma unroll 1
		for (int h = 0; h < BN / SB; ++h) {
			float s[SB / 8][4], corr[2];
			unsigned a[SB / 16][4];
			fz_attn_scores<ET, DB, SB, 64, QR, BN>(s, qf, sq, sk0 + st * TB + h * SB * 128, w, lane);
			fz_attn_softmax<BAT, SB, CAUSAL>(zf, zi, s, corr, mrow, lrow, b, r0, (long long)j * BN + h * SB, M, N, L, lane);
			fz_attn_rescale<OD>(o, corr);
			fz_attn_pack<ET, SB>(a, s);
			fz_attn_pv<ET, OD, SB, BN>(o, a, sv0 + st * TB + dv + h * SB * 128, lane);
		}
		__syncwarp();
		if (lane == 0) fz_bar_arrive(bb.empty(0, st)), fz_bar_arrive(bb.empty(1, st));
	}
}
#endif

/* O / sum to the functor epi, 32 columns at a time through shared memory
   (the warpgroup's Q tile, read no more: 64 rows x 32 f32 = 8 KB, at most
   its size), so that a warp walks a row with a lane a column: coalesced
   stores, not 2-byte ones 8 rows apart. The columns are swizzled by the
   row (bits 2..4 XOR row % 8): the fragments' writes, 8 rows at once, and
   a row's reads are each free of bank conflicts. */
template <int OD, class Epi>
__device__ __forceinline__ void fz_attn_out(const Epi &epi, const float (&o)[OD / 8][4], const float (&mrow)[2],
	const float (&lrow)[2], unsigned eb, long long b, long long rb, long long d0, long long M, long long D, int c, int w, int lane)
{
	const float inv[2] = {1.f / lrow[0], 1.f / lrow[1]};
	asm volatile("bar.sync %0, 128;\n" ::"r"(1 + c) : "memory"); /* every warp done with Q */
#pragma unroll
	for (int k = 0; k < OD / 32; ++k) {
#pragma unroll
		for (int i = 4 * k; i < 4 * k + 4; ++i)
#pragma unroll
			for (int h = 0; h < 2; ++h) {
				const unsigned r = 16 * w + (lane >> 2) + 8 * h, col = (8 * (i - 4 * k) + 2 * (lane & 3)) ^ ((r & 7) << 2);
				asm volatile("st.shared.v2.f32 [%0], {%1, %2};\n" ::"r"(eb + 4 * (32 * r + col)), "f"(o[i][2 * h] * inv[h]),
					"f"(o[i][2 * h + 1] * inv[h]) : "memory");
			}
		asm volatile("bar.sync %0, 128;\n" ::"r"(1 + c) : "memory");
		const long long d = d0 + 32 * k + lane;
#pragma unroll 4
		for (int r = 16 * w; r < 16 * w + 16; ++r) {
			float v;
			asm volatile("ld.shared.f32 %0, [%1];\n" : "=f"(v) : "r"(eb + 4 * (32 * r + (lane ^ ((r & 7) << 2)))) : "memory");
			const int src = 4 * (r & 7); /* the row's statistics: lanes 4 (r % 8) .. hold them */
			const bool hi = (r & 8) != 0;  /* a select, not an index: mrow and lrow stay in registers */
			const float mx = __shfl_sync(0xffffffffu, hi ? mrow[1] : mrow[0], src), l = __shfl_sync(0xffffffffu, hi ? lrow[1] : lrow[0], src);
			if (rb + r < M && d < D) epi(b, rb + r, d, v, mx, l);
		}
		asm volatile("bar.sync %0, 128;\n" ::"r"(1 + c) : "memory");
	}
}

/* O to X (DIRECT) in whole rows: the warpgroup's 64 rows as X's bytes in
   shared memory (its Q tile, read no more: 64 x D x 2 bytes fit), then
   copied out 16 bytes a thread, consecutive threads consecutive bytes: the
   rows of X from m = rb on are one contiguous run. Needs D % 8 == 0 and X
   16-byte aligned. Elementwise (fz_attn_out) this was a quarter of a
   block's life at T 1024 (a 2-byte store an element, its 64-bit address) */
template <int BAT, int OD, class E>
__device__ __forceinline__ void fz_attn_out_rows(const E &f, const float (&o)[OD / 8][4], const float (&mrow)[2], const float (&lrow)[2],
	unsigned eb, unsigned short *X, long long b, long long rb, long long M, long long D, int c, int w, int lane)
{
	const float inv[2] = {1.f / lrow[0], 1.f / lrow[1]};
	const int dd = (int)D;
	asm volatile("bar.sync %0, 128;\n" ::"r"(1 + c) : "memory"); /* every warp done with Q */
#pragma unroll
	for (int i = 0; i < OD / 8; ++i)
#pragma unroll
		for (int h = 0; h < 2; ++h) {
			const int r = 16 * w + (lane >> 2) + 8 * h, col = 8 * i + 2 * (lane & 3);
			if (rb + r < M && col < dd) { /* and col + 1: D is even; the functor may read inputs at (b, m, d) */
				const unsigned lo = fz_attn_epi<BAT>(f, b, rb + r, col, o[i][2 * h] * inv[h], mrow[h], lrow[h]);
				const unsigned hi = fz_attn_epi<BAT>(f, b, rb + r, col + 1, o[i][2 * h + 1] * inv[h], mrow[h], lrow[h]);
				asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(eb + 2u * (unsigned)(r * dd + col)), "r"(lo | hi << 16) : "memory");
			}
		}
	asm volatile("bar.sync %0, 128;\n" ::"r"(1 + c) : "memory");
	const long long rows = M - rb < 64 ? M - rb : 64;
	const int n = rows > 0 ? (int)(rows * D / 8) : 0; /* 16-byte pieces */
	uint4 *dst = (uint4 *)(X + (b * M + rb) * D);
#pragma unroll 4
	for (int q = (int)(threadIdx.x & 127); q < n; q += 128) {
		uint4 v;
		asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];\n" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(eb + 16u * q) : "memory");
		dst[q] = v;
	}
}

/* A computing warpgroup's 64 rows of Q negated in shared memory, once
   they have landed (a factor zc < 0 folded into the exponent as |zc|),
   visible to wgmma and to the warpgroup's ldmatrix before any product;
   every tile's, each in its own buffer of Q's */
template <int DB> __device__ __forceinline__ void fz_attn_negq(unsigned sq, int c, int t)
{
#pragma unroll
	for (int i = 0; i < DB / 16; ++i) {
		const unsigned p = sq + 16u * (unsigned)(t + 128 * i);
		unsigned x0, x1, x2, x3;
		asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];\n" : "=r"(x0), "=r"(x1), "=r"(x2), "=r"(x3) : "r"(p) : "memory");
		asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};\n" ::"r"(p), "r"(x0 ^ 0x80008000u), "r"(x1 ^ 0x80008000u),
			"r"(x2 ^ 0x80008000u), "r"(x3 ^ 0x80008000u) : "memory");
	}
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
	asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
	asm volatile("bar.sync %0, 128;\n" ::"r"(1 + c) : "memory");
}

/* The whole kernel: ET 0 f16, 1 bf16; DB the head-size bucket; BN the
   columns of n a step; C computing warpgroups of 64 rows of m each (BM =
   64 C rows a tile), sharing each step's K and V tiles, and one copying;
   CAUSAL 1: the spec's z masks n > m to a value whose exponential is 0, so
   the steps past the tile's last row are not taken; BAT 1: NB batches, Q
   as [NB,M,D], K and V as [NB,N,D]. Tiles: NB x ceil(M / BM); blocks: at
   most that many (the runtime's grid: at most one an SM), each taking its
   tiles in turn (fz_attn_tiles), 128 (C + 1) threads; dynamic shared
   memory: 256 bytes of barriers, NQ of Q's BM x DB tiles (a 64 x DB tile a
   computing warpgroup; two at DB 64, where they fit beside the rings on
   every GPU, so that the next tile's Q lands during this one's epilogue),
   ST stages of K's and V's BN x DB, 1 KB of alignment slack
   (plan_attn_launch's sizes). */
template <int ET, int DB, int BN, int STAGES, int C, int CAUSAL, int BAT, int DIRECT, class Z, class ZI, class Epi, class Row>
__device__ __forceinline__ void fz_attn(const Z &zf, const ZI &zi, const Epi &epi, const Row &rowf, const fz_tile_maps *tm, float zc,
	unsigned short *X, const unsigned short *Q, const unsigned short *K, const unsigned short *V, long long M, long long N, long long D,
	long long NB)
{
	constexpr int NQ = DB == 64 ? 2 : 1;
	static_assert(C >= 1 && C <= 3 && STAGES >= 2 && 2 * NQ + 4 * STAGES <= 32, "computing warpgroups, stages and their barriers");
	constexpr int BM = 64 * C;
	/* mma.sync at DB 256: O's 128 registers a thread for each half, in two
	   walks over the keys (the second recomputes S: this path is for GPUs
	   without wgmma) */
	constexpr int NP = !FZ_ATTN_WGMMA && DB > 128 ? 2 : 1, OD = DB / NP;
	/* the planner's stages on sm_90a; two on the mma.sync path, whose rings
	   then fit an A100's 163 KB (the runtime gives a block what the device
	   has, up to what the manifest asks) */
	constexpr int ST = FZ_ATTN_WGMMA ? STAGES : 2;
	constexpr int PP = FZ_ATTN_WGMMA && FZ_ATTN_PP && C == 2;
	extern __shared__ unsigned char fz_smem_raw[];
	constexpr unsigned TQ = BM * DB * 2u, TB = BN * DB * 2u; /* Q's tile, one of K's or V's */
	unsigned char *base = (unsigned char *)(((unsigned long long)fz_smem_raw + 256ull + 1023ull) & ~1023ull);
	unsigned dyn;
	asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(dyn));
	if (dyn < (unsigned)(base - fz_smem_raw) + NQ * TQ + 2u * ST * TB) __trap(); /* the launch gave too little */
	const unsigned sq = fz_su32(base), sk0 = sq + NQ * TQ, sv0 = sk0 + ST * TB, b0 = fz_su32(fz_smem_raw);
	const fz_attn_bars bb = {b0, b0 + 8u * NQ, b0 + 8u * (2 * NQ), b0 + 8u * (2 * NQ + ST), b0 + 8u * (2 * NQ + 2 * ST),
		b0 + 8u * (2 * NQ + 3 * ST)};
	const int wg = threadIdx.x >> 7, t = threadIdx.x & 127, lane = t & 31;
	const long long mt = (M + BM - 1) / BM;
	const fz_attn_tiles tl = {(unsigned)mt, (unsigned)(mt * NB)};
	if (blockIdx.x >= tl.n) return; /* no tile (a grid of at least one block) */
	if (threadIdx.x == 0) {
		for (int i = 0; i < NQ; ++i) fz_bar_init(bb.qfull(i), 32), fz_bar_init(bb.qempty(i), 128 * C);
		for (int s = 0; s < ST; ++s)
			fz_bar_init(bb.full(0, s), 32), fz_bar_init(bb.full(1, s), 32), fz_bar_init(bb.empty(0, s), 4 * C),
				fz_bar_init(bb.empty(1, s), 4 * C);
#if __CUDA_ARCH__ >= 900
		asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
#endif
	}
	__syncthreads();
	if (wg == 0) {
#if FZ_ATTN_WGMMA
		asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(C == 2 ? 56 : C == 3 ? 40 : 120));
#endif
		fz_attn_copy<DB, BN, BM, ST, NP, NQ, CAUSAL>(bb, sq, sk0, sv0, Q, K, V, tm, tl, M, N, D, t);
		return;
	}
#if FZ_ATTN_WGMMA
	asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(C == 2 ? 224 : C == 3 ? 160 : 136));
#endif
	const int c = wg - 1, w = t >> 5;
	/* z = S zc folded into the exponent (zc 1: z as the functors give it):
	   exp(z - max z) = exp2(S' L - max S' L), S' = S sign(zc), L = |zc|
	   log2(e) (the least normal float for 0, so that a masked -inf still
	   gives 0); S' from Q negated for zc < 0 */
	const float za = fabsf(zc), L = za == 0.f ? 1.17549435e-38f : FZ_ATTN_L2E * za;
	if (PP && c == 1) fz_attn_hand<PP>(1, false); /* warpgroup 0 goes first */
	unsigned g = 0; /* the block's steps before this tile, as the copier counts them */
#pragma unroll 1
	for (int it = 0;; ++it) {
		const unsigned p = tl.at(it);
		if (p >= tl.n) break;
		const bool last = PP && tl.at(it + 1) >= tl.n; /* the turns' end */
		unsigned bu, m0, nsteps; /* 32 bits: a block's registers */
		tl.template get<BM, BN, CAUSAL>(p, N, bu, m0, nsteps);
		const long long b = bu, r0 = (long long)m0 + 64 * c + 16 * w + (lane >> 2);
		const int qb = NQ > 1 ? it % NQ : 0;
		const unsigned sqc = sq + qb * TQ + c * (64 * DB * 2); /* this warpgroup's rows of Q */
		fz_bar_wait(bb.qfull(qb), (unsigned)((it / NQ) & 1));
		if (zc < 0.f) fz_attn_negq<DB>(sqc, c, t);
		float mrow[2], lrow[2];
		const unsigned g0 = g;
		g += NP * nsteps;
#pragma unroll 1
		for (int pass = 0; pass < NP; ++pass) {
			float o[OD / 8][4];
			mrow[0] = mrow[1] = FZ_ATTN_NINF, lrow[0] = lrow[1] = 0.f;
#pragma unroll
			for (int i = 0; i < OD / 8; ++i)
#pragma unroll
				for (int q = 0; q < 4; ++q) o[i][q] = 0.f;
			fz_attn_compute<ET, DB, OD, BN, ST, BAT, PP, CAUSAL>(zf, zi, o, mrow, lrow, bb, sqc, sk0, sv0, b, r0, M, N, nsteps,
				g0 + pass * nsteps, pass * (OD / 64) * (BN * 128), last, L, lane);
#pragma unroll
			for (int r = 0; r < 2; ++r) mrow[r] *= za; /* the max of z itself */
#pragma unroll
			for (int r = 0; r < 2; ++r) {
				lrow[r] += __shfl_xor_sync(0xffffffffu, lrow[r], 1);
				lrow[r] += __shfl_xor_sync(0xffffffffu, lrow[r], 2);
			}
			const fz_attn_st<BAT, DIRECT, Epi> st = {epi, X, M, D};
			if constexpr (NP == 1) {
				bool rows = false; /* O in whole rows */
				if constexpr (DIRECT) rows = D % 8 == 0 && ((unsigned long long)X & 15ull) == 0;
				if constexpr (DIRECT)
					if (rows) fz_attn_out_rows<BAT, OD>(epi, o, mrow, lrow, sqc, X, b, (long long)m0 + 64 * c, M, D, c, w, lane);
				if (!rows) fz_attn_out<OD>(st, o, mrow, lrow, sqc, b, (long long)m0 + 64 * c, 0, M, D, c, w, lane);
			} else { /* Q is read again by the next walk: O straight from the fragments */
				const float inv[2] = {1.f / lrow[0], 1.f / lrow[1]};
#pragma unroll
				for (int i = 0; i < OD / 8; ++i)
#pragma unroll
					for (int q = 0; q < 4; ++q) {
						const long long d = pass * OD + 8 * i + 2 * (lane & 3) + (q & 1), m = r0 + 8 * (q >> 1);
						if (m < M && d < D) st(b, m, d, o[i][q] * inv[q >> 1], mrow[q >> 1], lrow[q >> 1]);
					}
			}
		}
		/* this thread's reads and writes of Q's buffer (the products', the
		   epilogue's, fz_attn_negq's) are done: every thread says so, so that
		   each one's accesses are ordered before the copier's next Q there */
		fz_bar_arrive(bb.qempty(qb));
		if ((lane & 3) == 0)
#pragma unroll
			for (int r = 0; r < 2; ++r)
				if (r0 + 8 * r < M) fz_attn_row<BAT>(rowf, b, r0 + 8 * r, mrow[r], lrow[r]);
	}
}
