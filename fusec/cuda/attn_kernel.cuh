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
	unsigned nsteps, unsigned g, unsigned, bool last, float L, int lane, unsigned qe)
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
		if (qe && nsteps == 1) fz_bar_arrive(qe); /* Q read for the last time */
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
		if (qe && j == nsteps - 1) fz_bar_arrive(qe); /* Q read for the last time */
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
	unsigned nsteps, unsigned g, unsigned dv, bool, float L, int lane, unsigned qe)
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
	if (qe) fz_bar_arrive(qe); /* Q read for the last time */
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

/* O to X (DIRECT) straight from the fragments, two elements (4 bytes) a
   store: a quad of lanes writes 16 contiguous bytes of a row, and L2 joins
   the halves of each sector. No shared memory, so Q's buffer is given back
   after the last S (qe in fz_attn_compute) and the next tile's Q lands
   under this one's last products and epilogue. Needs D even and X 4-byte
   aligned. */
template <int BAT, int OD, class E>
__device__ __forceinline__ void fz_attn_out_frag(const E &f, const float (&o)[OD / 8][4], const float (&mrow)[2], const float (&lrow)[2],
	unsigned short *X, long long b, long long r0, long long M, long long D, int lane)
{
	const int dd = (int)D;
#pragma unroll
	for (int h = 0; h < 2; ++h) {
		const long long m = r0 + 8 * h;
		if (m >= M) continue;
		const float inv = 1.f / lrow[h];
		unsigned *row = (unsigned *)(X + (b * M + m) * D);
#pragma unroll
		for (int i = 0; i < OD / 8; ++i) {
			const int col = 8 * i + 2 * (lane & 3);
			if (col < dd) {
				const unsigned lo = fz_attn_epi<BAT>(f, b, m, col, o[i][2 * h] * inv, mrow[h], lrow[h]);
				const unsigned hi = fz_attn_epi<BAT>(f, b, m, col + 1, o[i][2 * h + 1] * inv, mrow[h], lrow[h]);
				row[col >> 1] = lo | hi << 16;
			}
		}
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
   columns of n a step; STAGES and QBUF the planner's stages of K's and V's
   tiles and buffers of Q (plan_attn_launch); C computing warpgroups of 64
   rows of m each (BM = 64 C rows a tile), sharing each step's K and V
   tiles, and one copying; CAUSAL 1: the spec's z masks n > m to a value
   whose exponential is 0, so the steps past the tile's last row are not
   taken; BAT 1: NB batches, Q as [NB,M,D], K and V as [NB,N,D]. Tiles:
   NB x ceil(M / BM); blocks: at most that many (the runtime's grid: at
   most one an SM), each taking its tiles in turn (fz_attn_tiles),
   128 (C + 1) threads; dynamic shared memory: 256 bytes of barriers, NQ of
   Q's BM x DB tiles (a 64 x DB tile a computing warpgroup; with two, the
   next tile's Q lands during this one), ST stages of K's and V's BN x DB,
   1 KB of alignment slack (plan_attn_launch's sizes). */
template <int ET, int DB, int BN, int STAGES, int QBUF, int C, int CAUSAL, int BAT, int DIRECT, class Z, class ZI, class Epi, class Row>
__device__ __forceinline__ void fz_attn(const Z &zf, const ZI &zi, const Epi &epi, const Row &rowf, const fz_tile_maps *tm, float zc,
	unsigned short *X, const unsigned short *Q, const unsigned short *K, const unsigned short *V, long long M, long long N, long long D,
	long long NB)
{
	/* the planner's stages and Q buffers on sm_90a; on the mma.sync path two
	   stages, and two Q buffers at DB 64 only, so that it fits an A100's
	   163 KB (the runtime gives a block what the device has, up to what the
	   manifest asks) */
	constexpr int ST = FZ_ATTN_WGMMA ? STAGES : 2, NQ = FZ_ATTN_WGMMA ? QBUF : DB == 64 ? 2 : 1;
	static_assert(C >= 1 && C <= 3 && ST >= 2 && NQ >= 1 && NQ <= 2 && 2 * NQ + 4 * ST <= 32, "computing warpgroups, stages and their barriers");
	constexpr int BM = 64 * C;
	/* mma.sync at DB 256: O's 128 registers a thread for each half, in two
	   walks over the keys (the second recomputes S: this path is for GPUs
	   without wgmma) */
	constexpr int NP = !FZ_ATTN_WGMMA && DB > 128 ? 2 : 1, OD = DB / NP;
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
		bool rows = false; /* O in whole rows, from the fragments */
		if constexpr (DIRECT && NP == 1) rows = D % 8 == 0 && ((unsigned long long)X & 15ull) == 0;
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
				g0 + pass * nsteps, pass * (OD / 64) * (BN * 128), last, L, lane, rows ? bb.qempty(qb) : 0u);
#pragma unroll
			for (int r = 0; r < 2; ++r) mrow[r] *= za; /* the max of z itself */
#pragma unroll
			for (int r = 0; r < 2; ++r) {
				lrow[r] += __shfl_xor_sync(0xffffffffu, lrow[r], 1);
				lrow[r] += __shfl_xor_sync(0xffffffffu, lrow[r], 2);
			}
			const fz_attn_st<BAT, DIRECT, Epi> st = {epi, X, M, D};
			if constexpr (NP == 1) {
				if constexpr (DIRECT)
					if (rows) fz_attn_out_frag<BAT, OD>(epi, o, mrow, lrow, X, b, r0, M, D, lane);
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
		   each one's accesses are ordered before the copier's next Q there
		   (with rows, fz_attn_compute said so after the last S) */
		if (!rows) fz_bar_arrive(bb.qempty(qb));
		if ((lane & 3) == 0)
#pragma unroll
			for (int r = 0; r < 2; ++r)
				if (r0 + 8 * r < M) fz_attn_row<BAT>(rowf, b, r0 + 8 * r, mrow[r], lrow[r]);
	}
}
