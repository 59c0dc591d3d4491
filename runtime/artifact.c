/* Artifacts on a device: the target's PTX loaded as a module, its kernels
 * looked up, and op lists run after checking them against the manifest. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "sha256.h"

static int find_kernel(const fz_artifact_info *info, const char *name)
{
	for (int i = 0; name && i < info->nkernels; i++)
		if (!strcmp(info->kernels[i].name, name)) return i;
	return -1;
}

static int args_size_ok(const fz_artifact_info *info, size_t size, char *err)
{
	if (size == info->args_size) return FZ_OK;
	return fr_err(err, FZ_ERR_ARGS_SIZE,
	              "args are %zu bytes; fusion %s takes %zu (8 bytes x (%d tensors + %d sizes + 2 workspace pointers))",
	              size, info->fusion, info->args_size, info->ntensors, info->nsizes);
}

static int unknown_kernel(const fz_artifact_info *info, const char *name, char *err)
{
	char have[FZ_ERRMSG_SIZE / 2] = "";
	for (int i = 0; i < info->nkernels; i++) {
		size_t n = strlen(have);
		snprintf(have + n, sizeof have - n, "%s%s", i ? ", " : "", info->kernels[i].name);
	}
	return fr_err(err, FZ_ERR_UNKNOWN_KERNEL, "unknown kernel '%s': fusion %s has %s", name ? name : "(null)",
	              info->fusion, info->nkernels ? have : "none");
}

int fz_check_sizes(const fz_artifact_info *info, const void *args, size_t args_size, char *err)
{
	if (!info || !args) return fr_err(err, FZ_ERR_INVALID, "fz_check_sizes: a NULL argument");
	int rc = args_size_ok(info, args_size, err);
	long long sizes[FZ_MAX_SIZES];
	for (int i = 0; !rc && i < info->nsizes; i++) {
		long long v;
		memcpy(&v, (const char *)args + 8 * (size_t)(info->ntensors + i), 8);
		if (v <= 0)
			rc = fr_err(err, FZ_ERR_BAD_SIZE, "size %s of fusion %s is %lld: every size must be > 0", info->sizes[i],
			            info->fusion, v);
		if (i < FZ_MAX_SIZES) sizes[i] = v;
	}
	/* and at least what the inputs' domains reach through subscripts (a
	   verified manifest has at most FZ_MAX_SIZES sizes) */
	if (!rc && info->nsizes <= FZ_MAX_SIZES) rc = fz_check_fits(info, sizes, err);
	return rc;
}

int fz_check_ops(const fz_artifact_info *info, const fz_op *ops, int nops, const void *args, size_t args_size, char *err)
{
	if (!info || !args || nops < 0 || (nops && !ops)) return fr_err(err, FZ_ERR_INVALID, "fz_check_ops: a NULL or negative argument");
	int rc = args_size_ok(info, args_size, err);
	for (int i = 0; !rc && i < nops; i++) {
		const fz_op *op = &ops[i];
		if (op->kind == FZ_OP_MEMSET) {
			if (!op->ptr && op->bytes)
				rc = fr_err(err, FZ_ERR_INVALID, "op %d clears %s at a null device pointer (args or scratch not set?)", i,
				            op->kernel ? op->kernel : "(null)");
		} else if (op->kind == FZ_OP_LAUNCH) {
			if (find_kernel(info, op->kernel) < 0) rc = unknown_kernel(info, op->kernel, err);
			else if (!op->grid[0] || !op->grid[1] || !op->grid[2] || !op->block || op->block > 1024)
				rc = fr_err(err, FZ_ERR_INVALID, "op %d launches %s on an empty grid or a bad block (%ux%ux%u, %u)", i,
				            op->kernel, op->grid[0], op->grid[1], op->grid[2], op->block);
		} else {
			rc = fr_err(err, FZ_ERR_INVALID, "op %d has unknown kind %d", i, op->kind);
		}
	}
	return rc;
}

/* the newest target at most the device's capability; an arch-specific one
   (sm_90a: wgmma) only on exactly its capability, and there before sm_90 */
static const fz_target_info *pick_target(const fz_artifact_info *info, const fz_device *d, char *err)
{
	int cc = d->cc_major * 10 + d->cc_minor;
	const fz_target_info *best = NULL;
	char have[256] = "";
	for (int i = 0; i < info->ntargets; i++) {
		const fz_target_info *t = &info->targets[i];
		size_t n = strlen(have);
		snprintf(have + n, sizeof have - n, "%s%s", i ? ", " : "", t->arch);
		/* an arch-specific target (sm_90a) runs only on exactly its capability */
		if (t->specific ? t->sm != cc : t->sm > cc) continue;
		if (!best || t->sm > best->sm || (t->sm == best->sm && t->specific)) best = t;
	}
	if (!best)
		fr_err(err, FZ_ERR_NO_TARGET, "%s: no target this device can run: device %d has compute capability %d.%d, the artifact has %s",
		       info->manifest, d->ordinal, d->cc_major, d->cc_minor, have);
	return best;
}

/* the target's PTX, hashed again as it is loaded */
static int read_ptx(const fz_artifact_info *info, const fz_target_info *t, char **ptx, char *err)
{
	*ptx = NULL;
	char *path = fr_artifact_path(info, t->file);
	if (!path) return fr_err(err, FZ_ERR_NO_MEMORY, "out of memory");
	size_t len;
	int rc = fr_read_file(path, "target PTX", FZ_MAX_FILE_BYTES, ptx, &len, err);
	if (!rc) {
		char got[65];
		fr_sha256_hex(*ptx, len, got);
		if (strcmp(got, t->sha256)) {
			rc = fr_err(err, FZ_ERR_INTEGRITY, "%s (target %s): changed after it was verified", path, t->arch);
			free(*ptx), *ptx = NULL;
		}
	}
	free(path);
	return rc;
}

static int load_module(fz_artifact *a, const char *ptx, char *err)
{
	enum { LOG = 2048 };
	char log[LOG] = "";
	CUjit_option opt[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
	void *val[] = {log, (void *)(uintptr_t)LOG};
	CUresult r = fr_cu->cuModuleLoadDataEx(&a->mod, ptx, 2, opt, val);
	if (r != CUDA_SUCCESS) {
		a->mod = NULL;
		int rc = fr_cuda_error(err, "cuModuleLoadDataEx", r);
		size_t n = strlen(err);
		for (char *s = log; *s; s++)
			if (*s == '\n') *s = ' ';
		snprintf(err + n, FZ_ERRMSG_SIZE - n, " (%s, target %s%s%s)", a->target->file, a->target->arch,
		         log[0] ? "; JIT log: " : "", log);
		return rc;
	}
	a->fn = calloc((size_t)a->info.nkernels + 1, sizeof *a->fn);
	a->smem = calloc((size_t)a->info.nkernels + 1, sizeof *a->smem);
	if (!a->fn || !a->smem) return fr_err(err, FZ_ERR_NO_MEMORY, "out of memory");
	int optin = 0; /* tile kernels take what the device gives a block, up to what they ask */
	r = fr_cu->cuDeviceGetAttribute(&optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, a->dev->dev);
	if (r != CUDA_SUCCESS) return fr_cuda_error(err, "cuDeviceGetAttribute(shared memory per block)", r);
	for (int i = 0; i < a->info.nkernels; i++) {
		r = fr_cu->cuModuleGetFunction(&a->fn[i], a->mod, a->info.kernels[i].name);
		if (r != CUDA_SUCCESS) {
			char call[160];
			snprintf(call, sizeof call, "cuModuleGetFunction(%s)", a->info.kernels[i].name);
			int rc = fr_cuda_error(err, call, r);
			size_t n = strlen(err);
			snprintf(err + n, FZ_ERRMSG_SIZE - n, " (%s, target %s)", a->target->file, a->target->arch);
			return rc;
		}
		int want = a->info.kernels[i].smem;
		a->smem[i] = want < optin ? want : optin;
		if (a->smem[i] > 48 * 1024) {
			r = fr_cu->cuFuncSetAttribute(a->fn[i], CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, a->smem[i]);
			if (r != CUDA_SUCCESS) {
				char call[160];
				snprintf(call, sizeof call, "cuFuncSetAttribute(%s, %d bytes of shared memory)", a->info.kernels[i].name, a->smem[i]);
				return fr_cuda_error(err, call, r);
			}
		}
	}
	return FZ_OK;
}

/* A tile kernel's second parameter: the tensor maps of A and B, boxes 128
   bytes wide (64 16-bit elements, 32 f32, 128 fp8) by 128 rows (A) and 64 (B), or the
   manifest's tma-rows= (an m- or n-major operand: a stage's k), each over its
   tensor as stored, a batched operand's leading dimensions flattened into
   rows, 128-byte swizzle, then a flag the kernel reads: 1 when both were
   made. Without them (not sm_90a, or a row or pointer not 16-byte aligned)
   the kernel loads with plain loads. The layout is tile_gemm.cuh's struct
   fz_tile_maps. */
typedef struct tile_maps {
	CUtensorMap a, b;
	unsigned long long ok;
} tile_maps;

static int encode_map(const fz_artifact_info *info, const void *args, int t, int box_rows, CUtensorMap *map)
{
	const fz_tensor_info *x = &info->tensors[t];
	unsigned long long ptr;
	long long dim[2] = {1, 1}; /* rows (a batched operand's leading dimensions flattened), row length */
	const long long eb = x->elem_bytes;
	memcpy(&ptr, (const char *)args + 8 * (size_t)t, 8);
	if (x->rank < 2 || (eb != 1 && eb != 2 && eb != 4)) return 0;
	for (int d = 0; d < x->rank; d++) {
		/* a derived dimension (fusec never gives a tile operand one): no
		   maps, rather than a map the buffer might not fill */
		if (x->dim_add[d] || x->dim_div[d] > 1 || x->dim_per[d] >= 0) return 0;
		long long v;
		if (x->dim_size[d] < 0) v = x->dim_value[d];
		else memcpy(&v, (const char *)args + 8 * (size_t)(info->ntensors + x->dim_size[d]), 8);
		if (v <= 0 || v >= (1ll << 31)) return 0;
		if (d == x->rank - 1) dim[1] = v;
		else if ((dim[0] *= v) >= (1ll << 31)) return 0;
	}
	if ((ptr & 15) || (dim[1] * eb) % 16) return 0;
	cuuint64_t dims[2] = {(cuuint64_t)dim[1], (cuuint64_t)dim[0]}, strides[1] = {(cuuint64_t)(dim[1] * eb)};
	cuuint32_t box[2] = {(cuuint32_t)(128 / eb), (cuuint32_t)box_rows}, es[2] = {1, 1};
	CUtensorMapDataType ty = eb == 1 ? CU_TENSOR_MAP_DATA_TYPE_UINT8 /* fp8 bytes, e4m3 or e5m2 */
	                       : eb == 4 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32
	                       : strcmp(x->type, "bf16") ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
	return fr_cu->cuTensorMapEncodeTiled(map, ty, 2, (void *)(uintptr_t)ptr, dims, strides, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
	                                     CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
	                                     CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

static void make_tile_maps(const fz_artifact *a, const fz_kernel_info *k, const void *args, tile_maps *tm)
{
	const fr_store *st = a->info.storage_;
	const int *rows = st->tma_rows[k - a->info.kernels];
	memset(tm, 0, sizeof *tm);
	tm->ok = a->target->specific && encode_map(&a->info, args, k->tma[0], rows[0], &tm->a) &&
	         encode_map(&a->info, args, k->tma[1], rows[1], &tm->b);
}

static void release(fz_artifact *a)
{
	if (a->mod) { /* unloaded even if its context cannot be made current */
		int entered = fr_enter(a->dev, a->err) == FZ_OK;
		fr_cu->cuModuleUnload(a->mod);
		if (entered) fr_leave(a->dev);
	}
	free(a->fn), free(a->smem), free(a->entry);
	fz_artifact_info_free(&a->info);
	free(a);
}

int fz_artifact_load(fz_device *d, const char *path, fz_artifact **out)
{
	if (!d) return FZ_ERR_INVALID;
	if (!out || !path) return fr_err(d->err, FZ_ERR_INVALID, "fz_artifact_load: a NULL argument");
	*out = NULL;
	fz_artifact *a = calloc(1, sizeof *a);
	if (!a) return fr_err(d->err, FZ_ERR_NO_MEMORY, "out of memory");
	a->dev = d;
	char *ptx = NULL;
	int rc = fz_artifact_verify(path, &a->info, d->err);
	if (!rc) {
		a->target = pick_target(&a->info, d, d->err);
		if (!a->target) rc = FZ_ERR_NO_TARGET;
	}
	if (!rc) rc = read_ptx(&a->info, a->target, &ptx, d->err);
	if (!rc) rc = fr_ptx_entries(a, ptx, d->err);
	if (!rc) rc = fr_enter(d, d->err);
	if (!rc) {
		rc = load_module(a, ptx, d->err);
		fr_leave(d);
	}
	free(ptx);
	if (rc) {
		release(a);
		return rc;
	}
	*out = a;
	return FZ_OK;
}

void fz_artifact_unload(fz_artifact *a)
{
	if (a) release(a);
}

const char *fz_artifact_error(const fz_artifact *a) { return a ? a->err : "no artifact handle"; }
const fz_artifact_info *fz_artifact_get_info(const fz_artifact *a) { return a ? &a->info : NULL; }
const char *fz_artifact_target(const fz_artifact *a) { return a ? a->target->arch : NULL; }
fz_device *fz_artifact_device(const fz_artifact *a) { return a ? a->dev : NULL; }

int fz_artifact_check_layout(fz_artifact *a, const char *layout)
{
	if (!a) return FZ_ERR_INVALID;
	if (layout && a->info.layout && !strcmp(layout, a->info.layout)) return FZ_OK;
	return fr_err(a->err, FZ_ERR_LAYOUT,
	              "%s: layout %.12s... is not the %.12s... of the generated header compiled in: "
	              "rebuild the application with this artifact's %s.h",
	              a->info.manifest, a->info.layout, layout ? layout : "(null)", a->info.fusion);
}

/* the field a generated header's args struct holds for tensor or size i of the manifest */
static void field_want(const fz_artifact_info *in, int i, char *name, size_t cap, int *kind)
{
	if (i < in->ntensors) {
		const fz_tensor_info *t = &in->tensors[i];
		snprintf(name, cap, "t_%s", t->name);
		const int fl = t->type[0] == 'f' || t->type[0] == 'b';
		*kind = 8 | (t->role == FZ_INPUT && t->rank == 0 ? (fl ? FZ_KIND_FLOAT : FZ_KIND_SIGNED) : 0);
	} else {
		snprintf(name, cap, "n_%s", in->sizes[i - in->ntensors]);
		*kind = 8 | FZ_KIND_SIGNED;
	}
}

/* param i's shape in the header's table is the manifest's (a shape the
   header's code assumes, a buffer the caller sized by the manifest: a
   re-hashed manifest that changed one is refused; issue 27) */
static int shape_ok(fz_artifact *a, int i, const char *shape)
{
	const fz_artifact_info *in = &a->info;
	char want[FZ_MAX_LINE];
	if (fz_tensor_shape_text(in, i, want, sizeof want) >= 0 && shape && !strcmp(shape, want)) return 1;
	fr_err(a->err, FZ_ERR_LAYOUT, "%s: the generated header's param %s has shape %.200s, the manifest's is %.200s: "
	       "rebuild the application with this artifact's %s.h", in->manifest, in->tensors[i].name,
	       shape ? shape : "(none)", want, in->fusion);
	return 0;
}

int fz_artifact_check_fields(fz_artifact *a, const fz_field *f, int n)
{
	if (!a) return FZ_ERR_INVALID;
	const fz_artifact_info *in = &a->info;
	const int want = in->ntensors + in->nsizes;
	if (!f || n != want)
		return fr_err(a->err, FZ_ERR_LAYOUT, "%s: the generated header's args struct has %d params and sizes, the manifest %d: "
		              "rebuild the application with this artifact's %s.h", in->manifest, f ? n : 0, want, in->fusion);
	for (int i = 0; i < want; i++) {
		char name[FZ_MAX_NAME + 8];
		int kind, j = 0;
		field_want(in, i, name, sizeof name, &kind);
		while (j < n && !(f[j].name && !strcmp(f[j].name, name))) j++;
		const int kind_ok = j < n && (f[j].kind == kind || ((f[j].kind & FZ_KIND_UNKNOWN) && (f[j].kind & 0xff) == (kind & 0xff)));
		if (j < n && f[j].offset == 8ull * (unsigned)i && kind_ok) {
			if (i >= in->ntensors || shape_ok(a, i, f[j].shape)) continue;
			return FZ_ERR_LAYOUT;
		}
		if (j == n)
			return fr_err(a->err, FZ_ERR_LAYOUT, "%s: the generated header's args struct has no field %s: rebuild the application "
			              "with this artifact's %s.h", in->manifest, name, in->fusion);
		return fr_err(a->err, FZ_ERR_LAYOUT, "%s: the generated header's args struct holds %s at offset %llu as kind 0x%x; "
		              "the manifest puts it at %llu as 0x%x (%s): rebuild the application with this artifact's %s.h",
		              in->manifest, name, f[j].offset, (unsigned)f[j].kind, 8ull * (unsigned)i, (unsigned)kind,
		              kind & FZ_KIND_FLOAT ? "a double" : i >= in->ntensors || kind & FZ_KIND_SIGNED ? "a long long" : "a device pointer",
		              in->fusion);
	}
	return FZ_OK;
}

int fz_kernel_lookup(fz_artifact *a, const char *name, const fz_kernel_info **out)
{
	if (!a) return FZ_ERR_INVALID;
	int k = find_kernel(&a->info, name);
	if (out) *out = k < 0 ? NULL : &a->info.kernels[k];
	return k < 0 ? unknown_kernel(&a->info, name, a->err) : FZ_OK;
}

int fr_run_op(fz_artifact *a, const fz_op *op, int k, const void *args, fz_stream *stream, int i)
{
	CUstream st = (CUstream)stream;
	CUresult r;
	char call[192];
	if (op->kind == FZ_OP_MEMSET) {
		if (!op->bytes) return FZ_OK;
		r = fr_cu->cuMemsetD8Async((CUdeviceptr)op->ptr, 0, (size_t)op->bytes, st);
		if (r != CUDA_SUCCESS) {
			snprintf(call, sizeof call, "cuMemsetD8Async(op %d, clearing %s)", i, op->kernel ? op->kernel : "?");
			return fr_cuda_error(a->err, call, r);
		}
		return FZ_OK;
	}
	void *params[] = {(void *)args};
	tile_maps tm;
	void *tparams[] = {(void *)args, &tm};
	if (a->info.kernels[k].tma[0] >= 0) make_tile_maps(a, &a->info.kernels[k], args, &tm);
	r = fr_cu->cuLaunchKernel(a->fn[k], op->grid[0], op->grid[1], op->grid[2], op->block, 1, 1, (unsigned)a->smem[k], st,
	                          a->info.kernels[k].tma[0] >= 0 ? tparams : params, NULL);
	if (r != CUDA_SUCCESS) {
		snprintf(call, sizeof call, "cuLaunchKernel(op %d, %s)", i, op->kernel);
		return fr_cuda_error(a->err, call, r);
	}
	return FZ_OK;
}

int fz_run(fz_artifact *a, const fz_op *ops, int nops, const void *args, size_t args_size, fz_stream *stream)
{
	if (!a) return FZ_ERR_INVALID;
	int rc = fz_check_ops(&a->info, ops, nops, args, args_size, a->err);
	if (!rc) rc = fz_check_sizes(&a->info, args, args_size, a->err);
	if (!rc) rc = fr_enter(a->dev, a->err);
	if (rc) return rc;
	for (int i = 0; !rc && i < nops; i++)
		rc = fr_run_op(a, &ops[i], ops[i].kind == FZ_OP_MEMSET ? -1 : find_kernel(&a->info, ops[i].kernel), args, stream, i);
	fr_leave(a->dev);
	return rc;
}

int fz_launch(fz_artifact *a, const char *kernel, const unsigned int grid[3], unsigned int block, const void *args,
              size_t args_size, fz_stream *stream)
{
	if (!a) return FZ_ERR_INVALID;
	if (!grid) return fr_err(a->err, FZ_ERR_INVALID, "fz_launch: grid is NULL");
	fz_op op = {FZ_OP_LAUNCH, kernel, {grid[0], grid[1], grid[2]}, block, 0, 0};
	return fz_run(a, &op, 1, args, args_size, stream);
}
