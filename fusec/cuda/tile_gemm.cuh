/* ---- tensor-core tiles: C[M,N] = A[M,K] B[K,N], f32 accumulation ----
   A and B f16 or bf16, row-major: k contiguous in A; n contiguous in B, or k
   when B is stored transposed as B[N,K] (BT = 1, x W^T). A block of 384
   threads owns a 128 x BN tile at a time (BN 256, 128 or 64: fz_tile_bn;
   persistent over tiles): warpgroup 0 loads, warpgroups 1 and 2 multiply 64
   rows each.
   Shared memory is a ring of stages, each in the 128-byte swizzle that TMA
   writes and the tensor cores read: A as 128 rows of 64 k (128 B a row), B
   as four boxes of 64 k rows of 64 n (BT: like A, 256 n rows of 64 k). A
   full barrier per stage says it is loaded, an empty barrier says both
   multiplying warpgroups are done with it.
   sm_90a: TMA loads, wgmma. Elsewhere (or when the runtime could not make the
   tensor maps: unaligned rows or pointers) the loading warpgroup copies with
   cp.async into the same layout, nst - 1 stages in flight; sm_80/sm_90
   multiply with ldmatrix and mma.sync. Tails: TMA fills out-of-range elements
   with zeros, so does cp.async's source size, the epilogue skips points
   outside [M,N]. */
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
   A as {K, M} in boxes of {64, 128}, B as {N, K} (BT: {K, N}) in boxes of
   {64, 64}, both with 128-byte swizzle; ok is 1 when both were made. */
struct __align__(64) fz_tmap { unsigned long long w[16]; };
struct fz_tile_maps { fz_tmap a, b; unsigned long long ok; };

template <int BT>
__device__ __noinline__ void fz_tile_load_plain(unsigned st, const unsigned short *A, const unsigned short *B, long long M,
	long long N, long long K, long long m0, long long n0, long long k0, int bn, int t)
{
	for (int q = t; q < 1024; q += 128) { /* A: 128 rows x 8 chunks */
		const int r = q >> 3, c = q & 7;
		fz_chunk(st + fz_swz(r, c), A, m0 + r, M, k0 + 8 * c, K, K);
	}
	if (BT)
		for (int q = t; q < 8 * bn; q += 128) { /* B[N,K]: bn n rows x 8 chunks, as A */
			const int r = q >> 3, c = q & 7;
			fz_chunk(st + FZ_TILE_A_BYTES + fz_swz(r, c), B, n0 + r, N, k0 + 8 * c, K, K);
		}
	else
		for (int q = t; q < 8 * bn; q += 128) { /* B: 64 k rows x bn/8 chunks */
			const int r = q / (bn >> 3), c = q % (bn >> 3);
			fz_chunk(st + FZ_TILE_A_BYTES + (c >> 3) * 8192 + fz_swz(r, c & 7), B, k0 + r, K, n0 + 8 * c, N, N);
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
__device__ __forceinline__ int fz_tile_bn(long long mt, long long N, long long NB)
{
	int bn = 64;
	long long best = -1;
	for (int b = FZ_TILE_WGMMA ? 256 : 128; b >= 64; b >>= 1) {
		const long long waves = (NB * mt * ((N + b - 1) / b) + gridDim.x - 1) / gridDim.x, cost = waves * (b + 32);
		if (best < 0 || cost < best) best = cost, bn = b;
	}
	return bn;
}

/* the epilogue at (row, col) of batch b's C: a batched contraction's
   functor takes the batch index first */
template <int BAT, class Epi>
__device__ __forceinline__ void fz_tile_epi(const Epi &epi, long long b, long long row, long long col, float v)
{
	if constexpr (BAT) epi(b, row, col, v);
	else epi(row, col, v);
}

/* The multiplying warpgroup c (rows 64c..64c+63 of each tile) over this
   block's tiles; it walks the ring in the loader's order (stage s, parity ph). */
template <int ET, int BT, int BAT, int BN, class Epi>
__device__ __forceinline__ void fz_tile_consume(const Epi &epi, unsigned char *ring, unsigned long long *bars, float *ebuf,
	int nst, long long M, long long N, long long nk, long long tiles, long long mt, long long per, int c, int t)
{
	const int lane = t & 31, w = t >> 5;
	int s = 0;
	unsigned ph = 0;
	for (long long tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
		const fz_tile_at at = fz_tile_pos<BAT>(tile, mt, per, BN);
		const long long m0 = at.m0, n0 = at.n0;
#if FZ_TILE_WGMMA
		float d[BN / 2];
#pragma unroll
		for (int i = 0; i < BN / 2; ++i) d[i] = 0.f;
		int prev = -1;
		for (long long kb = 0; kb < nk; ++kb) {
			fz_bar_wait(fz_su32(&bars[s]), ph);
			const unsigned a0 = fz_su32(ring + s * FZ_TILE_STAGE_BYTES) + c * 8192, b0 = a0 - c * 8192 + FZ_TILE_A_BYTES;
			asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
			for (int ks = 0; ks < 4; ++ks) /* k-major: +32 B a k16 step; n-major: +16 rows */
				fz_wgmma<ET, BN, BT>(d, fz_wg_desc(a0 + 32 * ks, 16, 1024),
					BT ? fz_wg_desc(b0 + 32 * ks, 16, 1024) : fz_wg_desc(b0 + 2048 * ks, 8192, 1024), 1);
			asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
			/* one stage's multiplies stay in flight; the one before is done: release it */
			asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
			if (prev >= 0 && lane == 0) fz_bar_arrive(fz_su32(&bars[FZ_TILE_STAGES + prev]));
			prev = s;
			if (++s == nst) s = 0, ph ^= 1u;
		}
		asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
		if (prev >= 0 && lane == 0) fz_bar_arrive(fz_su32(&bars[FZ_TILE_STAGES + prev]));
		/* the epilogue, 32 columns at a time: the accumulators (thread t holds
		   rows 16w + lane/4 (+8), column pairs 8j + 2(lane%4)) into the buffer,
		   then each warp walks 16 rows with a lane a column */
		const unsigned eb = fz_su32(ebuf), ew = eb + 4u * ((16 * w + (lane >> 2)) * FZ_TILE_EPI_LD + 2 * (lane & 3));
		const unsigned er = eb + 4u * (16 * w * FZ_TILE_EPI_LD + lane);
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
#pragma unroll
			for (int r = 0; r < 16; ++r) asm volatile("ld.shared.f32 %0, [%1];\n" : "=f"(v[r]) : "r"(er + 4u * r * FZ_TILE_EPI_LD) : "memory");
			asm volatile("bar.sync %0, 128;\n" ::"r"(2 + c) : "memory");
			const long long s1 = n0 + 32 * q + lane;
			if (inside) {
#pragma unroll
				for (int r = 0; r < 16; ++r) fz_tile_epi<BAT>(epi, at.b, rb + r, s1, v[r]);
			} else {
#pragma unroll
				for (int r = 0; r < 16; ++r)
					if (rb + r < M && s1 < N) fz_tile_epi<BAT>(epi, at.b, rb + r, s1, v[r]);
			}
		}
#else
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
			for (int ks = 0; ks < 4; ++ks) {
				unsigned b[NT][2];
#pragma unroll
				for (int j = 0; j < NT; j += 2) {
					unsigned r[4];
					if (BT) { /* n rows of k: the fragments as stored */
						const int n = w * (BN / 4) + 8 * j + (lane & 7) + 8 * (lane >> 4);
						fz_ldsm4(r, sb + fz_swz(n, 2 * ks + ((lane >> 3) & 1)), false);
					} else { /* k rows of n: transposed on the way */
						const int n = w * (BN / 4) + 8 * j + 8 * (lane >> 4), kr = 16 * ks + (lane & 7) + 8 * ((lane >> 3) & 1);
						fz_ldsm4(r, sb + (n >> 6) * 8192 + fz_swz(kr, (n & 63) >> 3), true);
					}
					b[j][0] = r[0], b[j][1] = r[1], b[j + 1][0] = r[2], b[j + 1][1] = r[3];
				}
#pragma unroll
				for (int i = 0; i < 4; ++i) {
					unsigned a[4];
					fz_ldsm4(a, sa + fz_swz(64 * c + 16 * i + (lane & 15), 2 * ks + (lane >> 4)), false);
#pragma unroll
					for (int j = 0; j < NT; ++j) fz_mma16816<ET>(d[i][j], a, b[j][0], b[j][1]);
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
					if (inside || (s0 < M && s1 < N)) fz_tile_epi<BAT>(epi, at.b, s0, s1, d[i][j][q]);
				}
#endif
	}
}

/* The whole tile kernel's body: ET 0 f16, 1 bf16; BT 1: B stored as B[N,K];
   BAT 1: NB products, A as [NB,M,K], B as [NB,K,N] (BT: [NB,N,K]), the
   batches one after another in memory. epi(s0, s1, v) (BAT: epi(b, s0, s1,
   v)) is the fused epilogue at point (s0, s1) of C, called only inside [M,N]. */
template <int ET, int BT = 0, int BAT = 0, class Epi>
__device__ __forceinline__ void fz_tile_gemm(const Epi &epi, const fz_tile_maps &tm, const unsigned short *A,
	const unsigned short *B, long long M, long long N, long long K, long long NB = 1)
{
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
	const int bn = fz_tile_bn(mt, N, NB);
	const long long per = mt * ((N + bn - 1) / bn), tiles = NB * per, nk = (K + 63) >> 6;
#if FZ_TILE_WGMMA
	/* The maps cover a batched operand as one matrix of NB x rows. Rows past
	   a batch's M or N read the next batch (their results are not stored);
	   B(k,n)'s rows past K would too, and meet A's zero-filled columns, but
	   0 * inf is not 0: that case loads with plain loads. */
	const bool tma = tm.ok != 0 && (NB == 1 || BT || (K & 63) == 0);
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
		/* the batch's offsets need a few more registers: 56 + 2 x 224 of
		   the 168 x 3 warpgroups' registers is still all there is */
		if constexpr (BAT) asm volatile("setmaxnreg.dec.sync.aligned.u32 56;\n");
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
						asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n"
							::"r"(fz_su32(st)), "l"(&tm.a), "r"((int)(kb * 64)), "r"((int)(at.b * M + m0)), "r"(full) : "memory");
						for (int j = 0; j < bn / 64; ++j)
							asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n"
								::"r"(fz_su32(st + FZ_TILE_A_BYTES + 8192 * j)), "l"(&tm.b), "r"(BT ? (int)(kb * 64) : (int)(n0 + 64 * j)),
								"r"(BT ? (int)(at.b * N + n0 + 64 * j) : (int)(at.b * K + kb * 64)), "r"(full) : "memory");
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
					fz_tile_load_plain<BT>(fz_su32(st), A + at.b * M * K, B + at.b * K * N, M, N, K, m0, n0, kb * 64, bn, t);
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
		asm volatile("setmaxnreg.inc.sync.aligned.u32 224;\n");
		if (bn == 256) fz_tile_consume<ET, BT, BAT, 256>(epi, ring, bars, ebuf + (wg - 1) * 64 * FZ_TILE_EPI_LD, nst, M, N, nk, tiles, mt, per, wg - 1, t);
		else
#endif
		if (bn == 128) fz_tile_consume<ET, BT, BAT, 128>(epi, ring, bars, ebuf + (wg - 1) * 64 * FZ_TILE_EPI_LD, nst, M, N, nk, tiles, mt, per, wg - 1, t);
		else fz_tile_consume<ET, BT, BAT, 64>(epi, ring, bars, ebuf + (wg - 1) * 64 * FZ_TILE_EPI_LD, nst, M, N, nk, tiles, mt, per, wg - 1, t);
	}
}
