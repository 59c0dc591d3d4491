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
   computing thread once it is done with Q: after its last S where O goes
   to X from the fragments, else after the epilogue, which stages O in its
   rows of Q).
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

