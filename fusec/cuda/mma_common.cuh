/* ---- tensor-core helpers shared by the tile and attention kernels ----
   Shared memory holds 16-bit operands in rows of 128 bytes (64 elements)
   with the 128-byte swizzle that TMA writes and ldmatrix reads without bank
   conflicts; global rows are copied in by 16-byte chunks. */
__device__ __forceinline__ unsigned fz_su32(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }
/* byte offset of the 16-byte chunk c of row r in a 128-byte-swizzled block */
__device__ __forceinline__ unsigned fz_swz(unsigned r, unsigned c) { return r * 128u + ((c ^ (r & 7u)) << 4); }

/* A chunk of 8 elements of row `row` from column `col` into shared memory
   at d: cp.async (left in flight; the caller waits for its group) where the chunk is whole and starts
   16-byte aligned, or lies wholly outside the matrix (zero-filled: a source
   size of 0 reads nothing); element by element where it is cut by the row's
   end or not aligned (a row length not a multiple of 8). A cut chunk is not
   given to cp.async with a short source size: the last row's copy would then
   start a 16-byte access that runs past the end of the allocation
   (compute-sanitizer memcheck flagged it at K=67). */
__device__ __forceinline__ void fz_chunk(unsigned d, const unsigned short *p, long long row, long long rows, long long col,
	long long cols, long long ld)
{
	const long long have = row < rows && col < cols ? (cols - col < 8 ? cols - col : 8) : 0;
	const unsigned short *q = have ? p + row * ld + col : p;
	if (have == 0 || (have == 8 && ((unsigned long long)q & 15ull) == 0)) {
		asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d), "l"(q), "r"((unsigned)(2 * have)) : "memory");
		return;
	}
	unsigned short e[8];
#pragma unroll
	for (int i = 0; i < 8; ++i) e[i] = i < have ? q[i] : (unsigned short)0;
	asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};\n" ::"r"(d), "r"(e[0] | ((unsigned)e[1] << 16)),
		"r"(e[2] | ((unsigned)e[3] << 16)), "r"(e[4] | ((unsigned)e[5] << 16)), "r"(e[6] | ((unsigned)e[7] << 16)) : "memory");
}
/* mbarriers: initialised with an arrival count, arrived on, waited on by phase parity */
__device__ __forceinline__ void fz_bar_init(unsigned b, unsigned count)
{
	asm volatile("mbarrier.init.shared.b64 [%0], %1;" ::"r"(b), "r"(count));
}
__device__ __forceinline__ void fz_bar_arrive(unsigned b)
{
	asm volatile("mbarrier.arrive.shared.b64 _, [%0];" ::"r"(b) : "memory");
}
__device__ __forceinline__ void fz_bar_wait(unsigned b, unsigned parity)
{
#if __CUDA_ARCH__ >= 900
	asm volatile("{\n.reg .pred p;\nFZ_WAIT:\nmbarrier.try_wait.parity.shared.b64 p, [%0], %1;\n@!p bra FZ_WAIT;\n}\n" ::"r"(b), "r"(parity) : "memory");
#else
	asm volatile("{\n.reg .pred p;\nFZ_WAIT:\nmbarrier.test_wait.parity.shared.b64 p, [%0], %1;\n@!p bra FZ_WAIT;\n}\n" ::"r"(b), "r"(parity) : "memory");
#endif
}

/* A loading thread's cp.async copies published on mbarrier full: wait
   until at most n of its groups are in flight (n >= 2 waits for 2), make
   its landed copies visible to the async proxy (wgmma reads them there,
   sm_90a), then arrive, so each thread's arrival releases its own writes */
__device__ __forceinline__ void fz_cp_publish(int n, unsigned full)
{
	if (n >= 2) asm volatile("cp.async.wait_group 2;\n" ::: "memory");
	else if (n == 1) asm volatile("cp.async.wait_group 1;\n" ::: "memory");
	else asm volatile("cp.async.wait_group 0;\n" ::: "memory");
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
	asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
	fz_bar_arrive(full);
}

/* The tiles' fp8 element types, ET 3 + (A e5m2) + 2 (B e5m2): 3 e4m3 x
   e4m3, 4 e5m2 x e4m3, 5 e4m3 x e5m2, 6 e5m2 x e5m2 (wgmma takes the two
   operands' types apart; the mma.sync path widens each to f16 its own way) */
__device__ constexpr bool fz_et_fp8(int et) { return et >= 3; }
__device__ constexpr bool fz_et_a5(int et) { return et >= 3 && ((et - 3) & 1) != 0; }
__device__ constexpr bool fz_et_b5(int et) { return et >= 3 && ((et - 3) & 2) != 0; }

/* sm_90a: wgmma's shared-memory descriptors (128-byte swizzle) and
   instructions */
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
__device__ __forceinline__ unsigned long long fz_wg_desc(unsigned addr, unsigned lbo, unsigned sbo)
{
	return (unsigned long long)((addr & 0x3ffffu) >> 4) | ((unsigned long long)(lbo >> 4) << 16) |
	       ((unsigned long long)(sbo >> 4) << 32) | (1ull << 62);
}
/* One wgmma instruction, m64 x N x k16, f32 accumulators d[N/2], for f16 or
   bf16 (ET 0, 1): the accumulators are its first N/2 operands (FZ_ACCn,
   FZ_OUTn), then A's and B's descriptors, the scale-d flag, tnsp-b (1 reads B
   n-major, B[K,N]; 0 k-major like A, B[N,K]) and tnsp-a (AT 1 reads A
   m-major, A[K,M]), numbered after them (I0..I4). ET 2 is tf32, m64 x N x k8:
   wgmma takes it only k-major on both sides (no tnsp operands), so AT must
   be 0 and BT 1 there (tile_gemm.cuh sends the other layouts to mma.sync). */
#define FZ_ACC8 "%0,%1,%2,%3,%4,%5,%6,%7"
#define FZ_ACC16 "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15"
#define FZ_ACC32 "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31"
#define FZ_ACC64 FZ_ACC32 ",%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63"
#define FZ_ACC128 FZ_ACC64 ",%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95,%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111,%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127"
#define FZ_O8(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), "+f"(d[i + 6]), "+f"(d[i + 7])
#define FZ_OUT8 FZ_O8(0)
#define FZ_OUT16 FZ_O8(0), FZ_O8(8)
#define FZ_OUT32 FZ_O8(0), FZ_O8(8), FZ_O8(16), FZ_O8(24)
#define FZ_OUT64 FZ_OUT32, FZ_O8(32), FZ_O8(40), FZ_O8(48), FZ_O8(56)
#define FZ_OUT128 FZ_OUT64, FZ_O8(64), FZ_O8(72), FZ_O8(80), FZ_O8(88), FZ_O8(96), FZ_O8(104), FZ_O8(112), FZ_O8(120)
#define FZ_WGMMA_ASM(N, TY, ACC, I0, I1, I2, I3, I4, ...) \
	asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" I2 ", 0;\nwgmma.mma_async.sync.aligned.m64n" #N "k16.f32." TY "." TY \
		" {" ACC "}, %" I0 ", %" I1 ", p, 1, 1, %" I4 ", %" I3 ";\n}\n" : __VA_ARGS__ : "l"(da), "l"(db), "r"(scale), "n"(1 - BT), "n"(AT))
#define FZ_WGMMA_TF32_ASM(N, ACC, I0, I1, I2, ...) \
	asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" I2 ", 0;\nwgmma.mma_async.sync.aligned.m64n" #N "k8.f32.tf32.tf32" \
		" {" ACC "}, %" I0 ", %" I1 ", p, 1, 1;\n}\n" : __VA_ARGS__ : "l"(da), "l"(db), "r"(scale))
/* ET 3..6 are fp8 (fz_et_fp8), m64 x N x k32 (32 bytes of k, as k16 of
   16-bit ones), A's type then B's, e4m3 or e5m2 each: k-major only on both
   sides too */
#define FZ_WGMMA_F8_ASM(N, TA, TB, ACC, I0, I1, I2, ...) \
	asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" I2 ", 0;\nwgmma.mma_async.sync.aligned.m64n" #N "k32.f32." TA "." TB \
		" {" ACC "}, %" I0 ", %" I1 ", p, 1, 1;\n}\n" : __VA_ARGS__ : "l"(da), "l"(db), "r"(scale))
#define FZ_WGMMA_N(N, ACC, I0, I1, I2, I3, I4, OUT) \
	if constexpr (ET == 0) FZ_WGMMA_ASM(N, "f16", ACC, I0, I1, I2, I3, I4, OUT); \
	else if constexpr (ET == 1) FZ_WGMMA_ASM(N, "bf16", ACC, I0, I1, I2, I3, I4, OUT); \
	else if constexpr (ET == 3) FZ_WGMMA_F8_ASM(N, "e4m3", "e4m3", ACC, I0, I1, I2, OUT); \
	else if constexpr (ET == 4) FZ_WGMMA_F8_ASM(N, "e5m2", "e4m3", ACC, I0, I1, I2, OUT); \
	else if constexpr (ET == 5) FZ_WGMMA_F8_ASM(N, "e4m3", "e5m2", ACC, I0, I1, I2, OUT); \
	else if constexpr (ET == 6) FZ_WGMMA_F8_ASM(N, "e5m2", "e5m2", ACC, I0, I1, I2, OUT); \
	else FZ_WGMMA_TF32_ASM(N, ACC, I0, I1, I2, OUT)
template <int ET, int BN, int BT, int AT = 0>
__device__ __forceinline__ void fz_wgmma(float *d, unsigned long long da, unsigned long long db, int scale)
{
	static_assert(ET < 2 || (BT == 1 && AT == 0), "wgmma tf32 and fp8 read A and B k-major only");
	static_assert(ET <= 6, "ET: 0 f16, 1 bf16, 2 tf32, 3..6 fp8");
	if constexpr (BN == 256) { FZ_WGMMA_N(256, FZ_ACC128, "128", "129", "130", "131", "132", FZ_OUT128); }
	else if constexpr (BN == 128) { FZ_WGMMA_N(128, FZ_ACC64, "64", "65", "66", "67", "68", FZ_OUT64); }
	else if constexpr (BN == 64) { FZ_WGMMA_N(64, FZ_ACC32, "32", "33", "34", "35", "36", FZ_OUT32); }
	else if constexpr (BN == 32) { FZ_WGMMA_N(32, FZ_ACC16, "16", "17", "18", "19", "20", FZ_OUT16); }
	else { FZ_WGMMA_N(16, FZ_ACC8, "8", "9", "10", "11", "12", FZ_OUT8); }
}
/* The same with A from registers (a[4] each thread: its warp's 16 rows as
   an mma.sync m16k16 fragment) and B read n-major (B[K,N]), accumulating */
#define FZ_WGMMA_RA_ASM(N, TY, ACC, A0, A1, A2, A3, IB, ...) \
	asm volatile("{\n.reg .pred p;\nsetp.eq.u32 p, 1, 1;\nwgmma.mma_async.sync.aligned.m64n" #N "k16.f32." TY "." TY \
		" {" ACC "}, {%" A0 ", %" A1 ", %" A2 ", %" A3 "}, %" IB ", p, 1, 1, 1;\n}\n" : __VA_ARGS__ \
		: "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db))
#define FZ_WGMMA_RA_N(N, ACC, A0, A1, A2, A3, IB, OUT) \
	if constexpr (ET == 0) FZ_WGMMA_RA_ASM(N, "f16", ACC, A0, A1, A2, A3, IB, OUT); \
	else FZ_WGMMA_RA_ASM(N, "bf16", ACC, A0, A1, A2, A3, IB, OUT)
template <int ET, int N> __device__ __forceinline__ void fz_wgmma_ra(float *d, const unsigned *a, unsigned long long db)
{
	if constexpr (N == 256) { FZ_WGMMA_RA_N(256, FZ_ACC128, "128", "129", "130", "131", "132", FZ_OUT128); }
	else if constexpr (N == 128) { FZ_WGMMA_RA_N(128, FZ_ACC64, "64", "65", "66", "67", "68", FZ_OUT64); }
	else { FZ_WGMMA_RA_N(64, FZ_ACC32, "32", "33", "34", "35", "36", FZ_OUT32); }
}
#endif

/* mma.sync m16n8k16 with f32 accumulators, f16 (ET 0) or bf16 (ET 1)
   operands; ldmatrix of four 8 x 8 matrices, transposed or not */
template <int ET> __device__ __forceinline__ void fz_mma16816(float *d, const unsigned *a, unsigned b0, unsigned b1)
{
	if constexpr (ET == 0)
		asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
			: "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
	else
		asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
			: "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
__device__ __forceinline__ void fz_ldsm4(unsigned *r, unsigned addr, bool trans)
{
	if (trans)
		asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
			: "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
	else
		asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
			: "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}
