/* libfuserun: loads fusec artifacts and runs their op lists on a GPU.
 *
 * One device handle (fz_device) per GPU context: opened on a device's
 * primary context, or adopting the calling thread's current context. An
 * artifact (fz_artifact) is a fusion's PTX, verified against its manifest
 * and loaded into that context. The generated header of the fusion
 * (generated/NAME.h) fills the args struct, sizes the scratch and writes the
 * op list (fz_op) that fz_run executes on a stream; without it, fz_call
 * runs a variant from the manifest's launch recipe (the same op list).
 *
 * libcuda is loaded with dlopen() on first use ($FUSERUN_LIBCUDA, or
 * libcuda.so.1): a machine without the driver gets FZ_ERR_NO_DRIVER, not a
 * link error. Artifact verification needs no driver at all.
 *
 * Errors: every function returns FZ_OK (0) or an FZ_ERR_* code;
 * fz_strerror(code) names the code, and the handle's last-error message
 * (fz_device_error, fz_artifact_error, or the errbuf argument of functions
 * without a handle) says what failed: the check and the file, or the CUDA
 * call with its error name and text. A handle's message is not per thread:
 * use a handle from one thread at a time. The library never prints, exits
 * or aborts. */
#ifndef FUSERUN_H
#define FUSERUN_H

/* A generated header (NAME.h) included before this one has already left out
   its typed launchers (fz_NAME_fused_run, fz_NAME_unfused_run: they need
   this header's declarations, and its include guard keeps a second include
   from adding them), so a call to one fails only at link time. Say so here,
   where it can be seen: FZ_OP_DEFINED is set by a generated header, or by
   this one further down. */
#if defined(FZ_OP_DEFINED) && (defined(__GNUC__) || defined(__clang__))
#warning "fuserun.h included after a generated NAME.h: NAME.h has left out its typed launchers fz_NAME_fused_run and fz_NAME_unfused_run; include fuserun.h first"
#endif

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* fusec's version (FUSEC_VERSION, fusec/version.h): one number for fusec,
   libfuserun (its SONAME is libfuserun.so.MAJOR) and fuserun.pc; the build
   refuses a library whose header says otherwise (runtime/runtime.mk) */
#define FZ_RUNTIME_VERSION "0.1.0"
/* artifacts of this fusec major version load; their format line is
   `fusec-artifact FZ_ARTIFACT_FORMAT` */
#define FZ_ARTIFACT_MAJOR 0
#define FZ_ARTIFACT_FORMAT 2
/* Format 2 added the launch recipe (stored, parts, counter and op lines:
   see fz_call). Format 1 artifacts still load and run through their
   NAME.h; fz_call refuses them (FZ_ERR_VERSION: regenerate). */
#define FZ_ARTIFACT_FORMAT_MIN 1
/* the size of an error message buffer, NUL included */
#define FZ_ERRMSG_SIZE 1024
#define FZ_MAX_RANK 4
/* Limits of a manifest, checked by fz_artifact_verify and by fusec when it
   writes one (fusec/artifact/artifact.c includes this header): a manifest beyond
   them is refused, so every structure the runtime and fuserun size from a
   manifest is bounded. */
#define FZ_MAX_MANIFEST_BYTES (4 << 20)
#define FZ_MAX_FILE_BYTES (256 << 20)  /* a PTX or other listed file */
#define FZ_MAX_LINE 4096               /* bytes of one manifest line */
#define FZ_MAX_NAME 63                 /* a fusion, size, tensor or kernel name: a C identifier */
#define FZ_MAX_DIM (1LL << 40)         /* a dimension written as a number (and a size's base) */
#define FZ_MAX_TARGETS 8
#define FZ_MAX_FILES 16
#define FZ_MAX_SIZES 32
#define FZ_MAX_TENSORS 128
#define FZ_MAX_KERNELS 256
#define FZ_MAX_PLAN 65536              /* `plan` lines */
#define FZ_MAX_OPS 512                 /* `op` lines of a variant (format 2) */
#define FZ_MAX_ENTRY_POINTS 8          /* an attention launch's entry points (head-size buckets) */
#define FZ_MAX_NESTING 64              /* parentheses and calls nested in a recipe expression */
#define FZ_MAX_FITS 128                /* `fits` lines: dimensions inputs' domains reach */
/* the targets a manifest may list, which fusec --arch accepts */
#define FZ_TARGETS "sm_80 sm_90 sm_90a sm_100 sm_120"

/* The same definitions as every generated header (they are guarded, so
   either may come first). */
#ifndef FZ_OP_DEFINED
#define FZ_OP_DEFINED
/* One step of a variant: a kernel launch (grid, block; the kernel's only
   parameter is the spec's args struct, by value) or a memset to zero. */
typedef struct fz_op {
	int kind;
	const char *kernel; /* kernel name, or the tensor a memset clears */
	unsigned int grid[3];
	unsigned int block;
	unsigned long long ptr, bytes;
} fz_op;
enum { FZ_OP_LAUNCH = 0, FZ_OP_MEMSET = 1 };
static inline unsigned long long fz_align(unsigned long long b) { return (b + 255) & ~255ull; }
static inline unsigned long long fz_max_u64(unsigned long long a, unsigned long long b) { return a > b ? a : b; }
/* blocks for n points at `per` a block; with cap > 0 (whole-grid
   reductions: the blocks that fit on the device at once) at most cap
   and at least 1 */
static inline unsigned long long fz_grid(long long n, int per, long long cap)
{
	unsigned long long g = n > 0 ? ((unsigned long long)n + (unsigned long long)per - 1) / (unsigned long long)per : 0;
	if (cap > 0) { if (g > (unsigned long long)cap) g = (unsigned long long)cap; if (g == 0) g = 1; }
	return g > 0x7fffffffull ? 0x7fffffffull : g;
}
/* a row kernel keeping `per` vectors of 4 a thread: threads a row (the
   kernel's fz_row_lanes), threads a block, blocks for `rows` rows */
static inline int fz_row_lanes(long long cols, int per)
{
	/* the least power of two g >= 2 with g * per >= the row's vectors, up
	   to 1024; in closed form, not a doubling loop: each row kernel's
	   threads compute it (twice with a path a function), and the loop was
	   about a tenth of logsumexp's instructions at 8192 columns (H100) */
	const long long nv = (cols + 3) / 4;
	if (nv <= 1) return 1;
	const long long q = (nv + per - 1) / per;
	if (q >= 1024) return 1024;
	unsigned int g = (unsigned int)q - 1u; /* q - 1's bits smeared right: the next power of two less one */
	g |= g >> 1, g |= g >> 2, g |= g >> 4, g |= g >> 8;
	return g + 1u < 2u ? 2 : (int)(g + 1u); /* a group reads at least 32 bytes a step */
}
static inline unsigned int fz_row_threads(long long cols, int per)
{
	const int g = fz_row_lanes(cols, per);
	return g <= 32 ? 256u : (unsigned int)g; /* up to a warp: several rows a block */
}
static inline unsigned long long fz_row_grid(long long rows, long long cols, int per, long long cap)
{
	return fz_grid(rows, (int)(fz_row_threads(cols, per) / (unsigned int)fz_row_lanes(cols, per)), cap);
}
static inline unsigned long long fz_rows(long long rows, long long cap)
{
	unsigned long long g = rows > 0 ? (unsigned long long)rows : 0;
	if (cap > 0) { if (g > (unsigned long long)cap) g = (unsigned long long)cap; if (g == 0) g = 1; }
	return g > 0x7fffffffull ? 0x7fffffffull : g;
}
#endif
#ifndef FZ_ROW_S_DEFINED
#define FZ_ROW_S_DEFINED
/* The same for a row kernel whose rows wider than its registers hold (per
   vectors a thread at 1024 threads) are streamed: 512 threads a row there,
   in blocks of 512, so that two blocks share an SM and one's loads run
   while the other folds its row across the block (cross_entropy at
   R=4096 C=32768 on an H100: one 1024-thread row an SM ran at 2.3 TB/s,
   torch.compile's 512-thread rows at 2.8; bench/RESULTS.md). Rows that fit
   keep fz_row_lanes's group. A kernel calling fz_row_lanes_s is launched
   with the recipe's row_threads_s; artifacts written before it call
   fz_row_lanes, launched with row_threads, which stays as it was. */
static inline int fz_row_lanes_s(long long cols, int per)
{
	const int g = fz_row_lanes(cols, per);
	return g == 1024 && (cols + 3) / 4 > 1024LL * per ? 512 : g;
}
static inline unsigned int fz_row_threads_s(long long cols, int per)
{
	const int g = fz_row_lanes_s(cols, per);
	return g <= 32 ? 256u : (unsigned int)g; /* up to a warp: several rows a block */
}
#endif

/* What a header with a reduction split across blocks adds (guarded too):
   the launch recipe's split() is this function. */
#ifndef FZ_SPLIT_DEFINED
#define FZ_SPLIT_DEFINED
/* blocks along y of a reduction over rows split across blocks: with fewer
   32-point tiles than SMs, as many shares of the rows as keep one wave of
   blocks (each SM holds one), each share at least 1024 rows */
static inline unsigned long long fz_split(long long points, long long rows, int sm)
{
	const unsigned long long tiles = points > 0 ? ((unsigned long long)points + 31) / 32 : 1;
	unsigned long long s = tiles >= (unsigned long long)(sm > 0 ? sm : 1) ? 1 : (unsigned long long)sm / tiles;
	const unsigned long long most = rows > 1024 ? (unsigned long long)rows / 1024 : 1;
	if (s > most) s = most;
	if (s > 65535) s = 65535;
	return s ? s : 1;
}
#endif

/* ---- errors -------------------------------------------------------- */

enum {
	FZ_OK = 0,
	FZ_ERR_INVALID,        /* a bad argument: NULL, an unknown op kind, a null memset pointer */
	FZ_ERR_NO_MEMORY,      /* a host allocation failed */
	FZ_ERR_NO_DRIVER,      /* libcuda missing, lacking symbols, a stub, or too old */
	FZ_ERR_NO_DEVICE,      /* no CUDA device, or no device of that ordinal */
	FZ_ERR_DEVICE_TOO_OLD, /* compute capability below 8.0 */
	FZ_ERR_NO_CONTEXT,     /* fz_device_adopt: the thread has no current context */
	FZ_ERR_IO,             /* a file of the artifact is missing or unreadable */
	FZ_ERR_FORMAT,         /* not a fusec artifact, or a malformed manifest */
	FZ_ERR_VERSION,        /* made by an incompatible fusec, or a newer format */
	FZ_ERR_INTEGRITY,      /* a SHA-256 differs: a file truncated or edited */
	FZ_ERR_NO_TARGET,      /* no target in the artifact that the device can run */
	FZ_ERR_UNKNOWN_KERNEL, /* a launch names a kernel the artifact does not have */
	FZ_ERR_ARGS_SIZE,      /* the args struct is not the size the manifest gives */
	FZ_ERR_BAD_SIZE,       /* a size symbol is <= 0 */
	FZ_ERR_CUDA,           /* a Driver API call failed */
	FZ_ERR_LAYOUT,         /* the artifact's layout is not the one a generated header was compiled against */
	FZ_ERR_NO_NCCL,        /* libnccl missing or unusable (a group of several devices needs it) */
	FZ_ERR_NCCL,           /* an NCCL call failed, now or asynchronously (a peer lost) */
	FZ_ERR_SHARD,          /* the fusion cannot be sharded over that size (fz_shard_plan says why) */
	FZ_ERR_STALL,          /* a persistent pipeline's barrier waited past its watchdog (the message names the phase) */
	FZ_ERR_TIMEOUT,        /* a joined group's bounded wait expired: a peer process never answered (the message names the wait) */
	FZ_ERR_OVERFLOW,       /* a fixed-capacity exchange was given more items than its capacity (the message names step and rank) */
	FZ_ERR_COUNT_
};
/* a static description of the code (never NULL) */
const char *fz_strerror(int code);

/* ---- artifact verification (no GPU, no driver) --------------------- */

/* FZ_INOUT: an output updated in place, whose old value is an input */
enum { FZ_INPUT = 0, FZ_OUTPUT = 1, FZ_TEMP = 2, FZ_INOUT = 3 };

typedef struct fz_tensor_info {
	const char *name;
	int role;                          /* FZ_INPUT, FZ_OUTPUT, FZ_TEMP or FZ_INOUT */
	const char *type;                  /* f64 f32 bf16 f16 f8e4m3 f8e5m2 i64 i32 (fp8: e4m3 or e5m2 bytes: tensor-core operands, saturated outputs) */
	int elem_bytes;                    /* on the device */
	int rank;                          /* 0: a scalar */
	/* Each dimension as written: a size symbol or a number, or derived
	   from one by fusec's range inference through an affine subscript
	   (c in X(r, 2*c) ranges over (C+1)/2): B+K, B-K, B/D, B/S, (B+K)/D,
	   (B-K)/D, (B+K)/S, (B-K)/S. Its value is max(B + dim_add, 0) / dim_div,
	   or / the size dim_per when that is not -1 (as the generated code
	   computes it; fz_tensor_shape evaluates it). */
	const char *dim[FZ_MAX_RANK];
	int dim_size[FZ_MAX_RANK];         /* B: index into sizes[], or -1 for a number */
	long long dim_value[FZ_MAX_RANK];  /* B, where dim_size is -1 */
	long long dim_add[FZ_MAX_RANK];    /* K: 0 when not derived */
	long long dim_div[FZ_MAX_RANK];    /* D: 1 when it does not divide */
	int dim_per[FZ_MAX_RANK];          /* S: index into sizes[], or -1 */
	const char *by;                    /* how it is computed: input, map, reduce, compact, ... */
	int has_domain;                    /* the spec gave the values' domain: */
	double domain_lo, domain_hi;       /* finite, lo <= hi (param lines' domain=LO..HI) */
} fz_tensor_info;

typedef struct fz_kernel_info {
	const char *name;
	int fused;                         /* 1: the fused variant, 0: the unfused one */
	const char *mode;                  /* point, row, matmul, scatter, scalar */
	int block;
	const char *space;                 /* e.g. "[N]", or "" */
	int grid_reduction;
	int smem;                          /* dynamic shared memory it asks for (bytes; 0: none) */
	int tma[2];                        /* tile kernels: the tensors (indices) read as A and B,
	                                      whose tensor maps are its second parameter (attention
	                                      kernels: K and V); -1: none */
	const char *across;                /* tensors whose first dimension is the space's first size,
	                                      read at rows other than the point's (x(j), x(i + 1),
	                                      x(g(i))), comma-separated; "" none. fz_shard_plan refuses
	                                      to shard such a kernel over that size */
} fz_kernel_info;

typedef struct fz_target_info {
	const char *arch;                  /* "sm_90" or "sm_90a" */
	int sm;                            /* 90 */
	int specific;                      /* 1 for sm_90a: runs only on exactly that capability */
	const char *file, *sha256;
} fz_target_info;

typedef struct fz_file_info {
	const char *name, *sha256;
} fz_file_info;

/* Everything the manifest says. The tensors come in the order of the args
   struct's fields, then the sizes: args_size = 8 * (ntensors + nsizes + 2). */
typedef struct fz_artifact_info {
	const char *manifest;              /* the path it was read from */
	const char *fusion, *fusec_version, *spec, *spec_sha256, *nvrtc, *options, *manifest_sha256;
	int ntargets;
	const fz_target_info *targets;
	int nfiles;
	const fz_file_info *files;
	int nsizes;
	const char *const *sizes;
	int ntensors;
	const fz_tensor_info *tensors;
	int nkernels;
	const fz_kernel_info *kernels;
	int nplan;
	const char *const *plan;           /* the `plan` lines: what fusec --explain says */
	const char *layout;                /* the layout fingerprint (SHA-256 hex), also in the generated header */
	size_t args_size;
	int format;                        /* the `fusec-artifact N` line: 2 has a launch recipe, 1 none */
	void *storage_;
} fz_artifact_info;

/* Reads the manifest and checks it: the format line, its own
   manifest-sha256, the fusec version, its lines within the FZ_MAX_* limits,
   that it agrees with itself (names, roles, shapes, kernels, targets, the
   layout fingerprint recomputed from its size/param/temp lines, which the
   generated header NAME.h must also carry), and the SHA-256 of every target
   and file it lists (found next to the manifest; regular files only, never
   through a symbolic link), and that each PTX is for its target. On success fills *info (release it with
   fz_artifact_info_free); on failure *info is empty and errbuf (may be
   NULL, else FZ_ERRMSG_SIZE bytes) says which check failed for which file. */
int fz_artifact_verify(const char *manifest_path, fz_artifact_info *info, char *errbuf);
void fz_artifact_info_free(fz_artifact_info *info);

/* The dimensions (dims, FZ_MAX_RANK entries; may be NULL) and the element
   count of tensor `tensor` of the artifact when its sizes are sizes[]
   (sizes[i] for info->sizes[i]). A derived dimension is computed as the
   generated code computes it, so it may be 0 (C/2 at C = 1); a scalar has
   1 element. FZ_ERR_BAD_SIZE if a size is not from 1 to 2^62 or the count
   (or its bytes) would pass 2^62; FZ_ERR_INVALID for a bad argument. */
int fz_tensor_shape(const fz_artifact_info *info, int tensor, const long long *sizes, long long *dims,
                    long long *elements, char *errbuf);
/* Tensor `tensor`'s dimensions as the manifest writes them, into buf (cap
   bytes): "-" for a scalar, else each as written, joined by commas ("B,C",
   "N,(C+1)/2"). The generated header's field table and the reference carry
   the same text for every param; the runtime compares them. Its length, or
   -1 (buf "") for a bad argument or a buf too small. */
int fz_tensor_shape_text(const fz_artifact_info *info, int tensor, char *buf, size_t cap);

/* What an integer input must hold, from the manifest's line `values NAME
   LO..HI [nondecreasing] [nonzero]` (fusec writes one for each integer input
   without a domain that some use bounds: a subscript, a ragged `for` bound,
   a divisor; runtime/README.md). LO and HI are numbers, or a size plus or
   minus a number, evaluated at sizes[] (sizes[i] for info->sizes[i]). */
typedef struct fz_values_info {
	int known;                         /* 0: no values line for the tensor (nothing said; older fusec wrote none) */
	long long lo, hi;                  /* at these sizes, lo <= hi (0 when sizes is NULL and the bound names a size) */
	int nondecreasing;                 /* sorted across the tensor, its first element lo: a CSR row pointer */
	int nonzero;                       /* never 0: a divisor */
	const char *range;                 /* LO..HI as the manifest writes it */
} fz_values_info;
/* Fills *out for tensor `tensor` (out->known 0 when the manifest says
   nothing of it). sizes may be NULL: then a bound that names a size is not
   evaluated. FZ_ERR_BAD_SIZE if a size is not from 1 to 2^62, a bound
   overflows, or the range holds no value at these sizes (lo > hi, or only 0
   and nonzero); FZ_ERR_INVALID for a bad argument. */
int fz_tensor_values(const fz_artifact_info *info, int tensor, const long long *sizes, fz_values_info *out,
                     char *errbuf);

/* "tf32" when the manifest says output `tensor` is computed through tf32
   products (its line inexact NAME tf32: compare it with tf32's tolerance,
   dsl/MATH.md), "fp8" through fp8 products (inexact NAME fp8: the tensor
   cores' own f32 sums, fp8's tolerance), else NULL (also for a bad argument). */
const char *fz_tensor_inexact(const fz_artifact_info *info, int tensor);

/* The checks fz_run makes before launching anything, usable without a GPU:
   the args size, every launch naming a kernel of the artifact, every memset
   a non-null pointer, and (fz_check_sizes) every size symbol > 0 and the
   sizes within the manifest's fits lines (fz_check_fits). */
int fz_check_sizes(const fz_artifact_info *info, const void *args, size_t args_size, char *errbuf);
/* The manifest's lines `fits NAME DIM>=LEAST` at sizes[] (sizes[i] for
   info->sizes[i]): an integer input with a domain that a subscript reads
   directly reaches every value of its domain, so the dimension it
   subscripts (DIM, as a param line spells one) must be at least LEAST, or
   an input the spec allows reads or writes outside a buffer. FZ_OK, or
   FZ_ERR_BAD_SIZE naming the input, its domain, DIM, LEAST and DIM's value
   (also for a size not from 1 to 2^62); FZ_ERR_INVALID for a NULL
   argument. fz_run, fz_call, fz_call_prepare and the fz_recipe_ functions
   check it; an info without fits lines (filled by hand) says nothing. */
int fz_check_fits(const fz_artifact_info *info, const long long *sizes, char *errbuf);
/* The i-th fits line (0-based): the input's index into info->tensors, the
   dimension as the manifest spells it (valid while info is) and its least
   value. Returns the number of fits lines (-1 for a NULL info); where i
   is outside them, *tensor, *dim and *least are left as they were. */
int fz_artifact_fits(const fz_artifact_info *info, int i, int *tensor, const char **dim, long long *least);
int fz_check_ops(const fz_artifact_info *info, const fz_op *ops, int nops, const void *args, size_t args_size,
                 char *errbuf);

/* ---- devices ------------------------------------------------------- */

typedef struct fz_device fz_device;
/* A CUstream or CUevent, cast: an application may pass its own. NULL is the
   legacy default stream. */
typedef struct fz_stream fz_stream;
typedef struct fz_event fz_event;
typedef unsigned long long fz_ptr;   /* a device pointer (CUdeviceptr) */

typedef struct fz_device_props {
	char name[256];
	int ordinal;                       /* -1 when adopted and unknown */
	int cc_major, cc_minor;
	int sm_count;
	unsigned long long total_memory;
	int driver_version;                /* e.g. 13000 */
} fz_device_props;

/* how many CUDA devices (0 with FZ_OK when the driver finds none) */
int fz_device_count(int *count, char *errbuf);
/* Retains the primary context of device `ordinal`; refuses devices older
   than compute capability 8.0. The calling thread's current context is
   left as it was: every call pushes and pops the handle's context. */
int fz_device_open(int ordinal, fz_device **out, char *errbuf);
/* Uses the calling thread's current context (the application's), which
   fz_device_close leaves alone. */
int fz_device_adopt(fz_device **out, char *errbuf);
/* Releases the handle. Unload its artifacts and free its buffers, streams
   and events first. NULL is ignored. */
void fz_device_close(fz_device *dev);
const char *fz_device_error(const fz_device *dev);
int fz_device_query(const fz_device *dev, fz_device_props *props);
int fz_device_sync(fz_device *dev);

/* Buffers. With stream NULL the copies and the memset have finished when
   they return (work on any stream may use the data); with a stream they are
   queued on it. A NULL host pointer is FZ_ERR_INVALID (the driver never
   sees it). */
int fz_alloc(fz_device *dev, size_t bytes, fz_ptr *out);
int fz_free(fz_device *dev, fz_ptr ptr);     /* 0 is ignored */
int fz_copy_to_device(fz_device *dev, fz_ptr dst, const void *src, size_t bytes, fz_stream *stream);
int fz_copy_to_host(fz_device *dev, void *dst, fz_ptr src, size_t bytes, fz_stream *stream);
int fz_copy_on_device(fz_device *dev, fz_ptr dst, fz_ptr src, size_t bytes, fz_stream *stream);
int fz_memset(fz_device *dev, fz_ptr dst, unsigned char value, size_t bytes, fz_stream *stream);
/* count 32-bit words at dst set to value (a sentinel that is not a byte
   repeated), queued on stream (not NULL) */
int fz_memset32(fz_device *dev, fz_ptr dst, unsigned int value, size_t count, fz_stream *stream);

/* Streams (non-blocking with respect to the default stream) and events. */
int fz_stream_create(fz_device *dev, fz_stream **out);
int fz_stream_destroy(fz_device *dev, fz_stream *stream);
int fz_stream_sync(fz_device *dev, fz_stream *stream);
int fz_event_create(fz_device *dev, fz_event **out);
int fz_event_destroy(fz_device *dev, fz_event *event);
int fz_event_record(fz_device *dev, fz_event *event, fz_stream *stream);
/* work queued on stream after this waits (on the device) for the event's
   last record; the host does not wait */
int fz_stream_wait(fz_device *dev, fz_stream *stream, fz_event *event);
/* waits for `end`, then the milliseconds from start to end */
int fz_event_elapsed(fz_device *dev, fz_event *start, fz_event *end, float *ms);

/* ---- artifacts ----------------------------------------------------- */

typedef struct fz_artifact fz_artifact;

/* Verifies the artifact (as fz_artifact_verify), picks the newest target
   the device runs (sm_90 on 9.x, sm_80 on 8.x, the newest at most the
   device's capability on later ones), loads its PTX and looks up every
   kernel the manifest lists. Errors go to fz_device_error(dev). */
int fz_artifact_load(fz_device *dev, const char *manifest_path, fz_artifact **out);
void fz_artifact_unload(fz_artifact *art);  /* NULL is ignored */
const char *fz_artifact_error(const fz_artifact *art);
const fz_artifact_info *fz_artifact_get_info(const fz_artifact *art);
const char *fz_artifact_target(const fz_artifact *art);   /* "sm_90" */
fz_device *fz_artifact_device(const fz_artifact *art);

/* FZ_ERR_LAYOUT unless the artifact's layout fingerprint is `layout`: the
   FZ_NAME_LAYOUT of the generated header an application was compiled
   with (its typed launchers fz_NAME_*_run call this before each run). */
int fz_artifact_check_layout(fz_artifact *art, const char *layout);

/* Where a generated header's args struct holds a field, as the compiler
   that compiled it laid the struct out: its name (t_PARAM, n_SIZE), its
   offset and its kind, FZ_FIELD_KIND: its size in bytes, and whether it is
   a float, a signed integer or neither (a device pointer); for a param, its
   shape as the header's code assumes it (fz_tensor_shape_text's spelling),
   NULL for a size. A header's fz_NAME_fields() is a table of these for
   every param and size of its args struct, and its typed launchers pass it
   to fz_artifact_check_fields before each run, so that a header whose
   struct is not the manifest's, field by field, is refused whatever its
   layout string says. */
typedef struct fz_field {
	const char *name;
	unsigned long long offset;
	int kind;
	const char *shape;
} fz_field;
enum { FZ_KIND_FLOAT = 0x100, FZ_KIND_SIGNED = 0x200, FZ_KIND_UNKNOWN = 0x400 /* size only: a compiler without a way to tell */ };
#if defined(__cplusplus) && __cplusplus >= 201103L
#define FZ_FIELD_KIND(x) \
	((int)sizeof(x) | ((decltype(x))0.5 != 0 ? FZ_KIND_FLOAT : (decltype(x))-1 < (decltype(x))1 ? FZ_KIND_SIGNED : 0))
#elif !defined(__cplusplus) && defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define FZ_FIELD_KIND(x) \
	((int)sizeof(x) | _Generic((x), float: FZ_KIND_FLOAT, double: FZ_KIND_FLOAT, long double: FZ_KIND_FLOAT, signed char: FZ_KIND_SIGNED, \
	                            short: FZ_KIND_SIGNED, int: FZ_KIND_SIGNED, long: FZ_KIND_SIGNED, long long: FZ_KIND_SIGNED, default: 0))
#elif defined(__GNUC__)
#define FZ_FIELD_KIND(x) \
	((int)sizeof(x) | ((__typeof__(x))0.5 != 0 ? FZ_KIND_FLOAT : (__typeof__(x))-1 < (__typeof__(x))1 ? FZ_KIND_SIGNED : 0))
#else
#define FZ_FIELD_KIND(x) ((int)sizeof(x) | FZ_KIND_UNKNOWN)
#endif
/* a row of the table, for field f of struct type S with shape (0 for a size) */
#define FZ_FIELD(S, f, shape) {#f, (unsigned long long)offsetof(S, f), FZ_FIELD_KIND(((S *)0)->f), shape}

/* FZ_ERR_LAYOUT unless fields[0..n) are the artifact's args struct as its
   manifest lays it out: every param (temps too) and size the manifest
   lists, each once, named t_PARAM or n_SIZE, at 8 bytes times its place
   (params in the manifest's order, then sizes), a device pointer but a
   scalar input by value (a double for a float type, a long long for an
   integer one) and a size (a long long), each param with the manifest's
   shape; nothing else. */
int fz_artifact_check_fields(fz_artifact *art, const fz_field *fields, int n);

/* FZ_ERR_UNKNOWN_KERNEL unless the artifact has a kernel of that name */
int fz_kernel_lookup(fz_artifact *art, const char *name, const fz_kernel_info **out);

/* Runs an op list in order on a stream (asynchronously): launches get
   `args` (the fusion's args struct, args_size bytes) as their parameter,
   memsets clear [ptr, ptr + bytes). Checks as fz_check_ops and
   fz_check_sizes first; nothing is launched if a check fails. */
int fz_run(fz_artifact *art, const fz_op *ops, int nops, const void *args, size_t args_size, fz_stream *stream);
/* one launch */
int fz_launch(fz_artifact *art, const char *kernel, const unsigned int grid[3], unsigned int block,
              const void *args, size_t args_size, fz_stream *stream);

/* ---- a variant called from its manifest alone (call.c) ------------- */

/* A format-2 manifest carries each variant's launch recipe: its scratch
   layout and op list as expressions over the sizes and the SM count, the
   lines (fusec writes them; fusec/host/recipe.c):
     stored V TEMP              a temp kept in the scratch, in placement order
     parts V EXPR               per-block partials (the largest of these lines)
     counter V EXPR             reduction counters (the largest, at least 256)
     op V memset TENSOR         zero all of the tensor, in stream order
     op V launch KERNEL grid=X,Y block=B [always]
     op V launch K1:64,K2:128 head=D grid=X,Y block=B [always]
   V is fused or unfused; EXPR is C's 64-bit integer arithmetic without
   spaces over numbers, size names and $sm (the device's SM count), with
   fz_grid, fz_rows, fz_row_grid, fz_row_threads, fz_row_threads_s, fz_split and fz_align of
   this header without their fz_, and dim(B,K,D) = B+K > 0 ? (B+K)/D : 0.
   A launch whose grid is empty is skipped unless `always` (then 1 block);
   with entry points, the first whose bound is at least the head size D.
   The scratch is: the stored temps (each fz_align'ed), the partials
   (fz_align'ed, 8 bytes at least: ws_part), the counters (ws_count), as the
   generated NAME.h's fz_NAME_V_scratch places them. */

/* One argument: the fusion's parameters are its param lines (not its
   temps), in order. */
typedef struct fz_arg {
	const char *type;   /* the element type the caller holds, spelt as the manifest does ("f32", "i32", "bf16"): checked */
	int scalar;         /* 1: a rank-0 input by value, f for a float type, i for an integer one; 0: a tensor at ptr */
	fz_ptr ptr;         /* device pointer; 0 only for a tensor of no elements at these sizes */
	double f;
	long long i;
} fz_arg;

/* Bytes of the scratch the variant ("fused" or "unfused") needs at sizes
   (nsizes of them, in the manifest's order) on a device of sm SMs (<= 0:
   132, as the header's). Allocate it, zero it once (the reduction
   counters start at 0 and reset themselves), and pass it to every call of
   the variant at those sizes (one call at a time: it holds the variant's
   temps). FZ_ERR_VERSION for a format-1 artifact (no recipe). */
int fz_recipe_scratch(const fz_artifact_info *info, const char *variant, const long long *sizes, int nsizes, int sm,
                      unsigned long long *bytes, char *errbuf);
/* What fz_call launches, without a GPU: checks the sizes and the arguments
   (count, element type, scalar or tensor, a pointer given), fills the args
   struct (args_size must be info->args_size) with the temps and workspace
   placed in scratch, and writes the op list (*nops of at most max_ops): the
   same as the generated header's fz_NAME_V_scratch and fz_NAME_V_ops. */
int fz_recipe_ops(const fz_artifact_info *info, const char *variant, const long long *sizes, int nsizes, int sm,
                  const fz_arg *args, int nargs, fz_ptr scratch, void *args_struct, size_t args_size, fz_op *ops,
                  int max_ops, int *nops, char *errbuf);
/* The same two on a loaded artifact, at its device's SM count: the bytes
   of scratch, and the variant run on stream (asynchronously, as fz_run).
   Errors go to fz_artifact_error(art). */
int fz_call_scratch(fz_artifact *art, const char *variant, const long long *sizes, int nsizes, unsigned long long *bytes);
int fz_call(fz_artifact *art, const char *variant, const long long *sizes, int nsizes, const fz_arg *args, int nargs,
            fz_ptr scratch, fz_stream *stream);

/* fz_call in two steps, for a caller that calls a variant many times at
   the same sizes (the Python package): fz_call_prepare checks the variant
   and the sizes and evaluates the recipe once (the scratch placed, the
   op list's grids, blocks, entry points and memsets); fz_call_run checks
   the arguments as fz_call does (count, element type, scalar or tensor,
   a pointer given) and runs the op list on stream. The handle keeps
   scratch's address: the scratch must outlive it, and one run at a time
   may use it (as fz_call's). Release every handle before unloading its
   artifact. Errors go to fz_artifact_error(art). */
typedef struct fz_prepared_call fz_prepared_call;
int fz_call_prepare(fz_artifact *art, const char *variant, const long long *sizes, int nsizes, fz_ptr scratch,
                    fz_prepared_call **out);
int fz_call_run(fz_prepared_call *call, const fz_arg *args, int nargs, fz_stream *stream);
void fz_call_release(fz_prepared_call *call);

/* fz_artifact_verify into an info the library allocates (for callers
   through a foreign-function interface, which need not know its size);
   release with fz_artifact_close_info (NULL is ignored). */
int fz_artifact_open_info(const char *manifest_path, fz_artifact_info **out, char *errbuf);
void fz_artifact_close_info(fz_artifact_info *info);

/* ---- several devices of one host (group.c, shard.c) ------------------ */

#define FZ_MAX_GROUP 16

/* A group: several devices of one host, one stream on each, and (with more
   than one device) an NCCL communicator per device. libnccl is loaded with
   dlopen() ($FUSERUN_NCCL, else libnccl.so.2) only for two devices or more:
   a group of one runs without it. A rank is a device's place in the group.
   After a failed collective or a lost device the group is unusable: later
   calls return the first failure again; close it. */
typedef struct fz_group fz_group;

/* ordinals: n device ordinals, or NULL for 0 .. n-1 */
int fz_group_open(int n, const int *ordinals, fz_group **out, char *errbuf);
void fz_group_close(fz_group *g);    /* NULL is ignored; aborts the communicators of a failed group */
const char *fz_group_error(const fz_group *g);
int fz_group_size(const fz_group *g);
fz_device *fz_group_device(const fz_group *g, int rank);
fz_stream *fz_group_stream(const fz_group *g, int rank);
/* waits for every rank's stream, then asks NCCL for asynchronous errors */
int fz_group_sync(fz_group *g);
/* Loads the artifact on every rank: arts[0 .. size-1]; all or none. */
int fz_group_load(fz_group *g, const char *manifest_path, fz_artifact **arts);
void fz_group_unload(fz_group *g, fz_artifact **arts);
/* The contiguous range [lo, hi) of n points that rank gets: the first n %
   size ranks one point more. Empty when n < size. */
void fz_group_range(long long n, int size, int rank, long long *lo, long long *hi);

/* Collectives, queued on the ranks' streams (NCCL, bytes moved as they are;
   with one rank, device copies). send[r], recv[r]: buffers on local rank r
   (one of them in a joined group).
   allgather: every recv[k] gets send[0] .. send[size-1], `bytes` each, in
   rank order. allgatherv: rank r sends bytes[r] (the host knows them: one
   entry per rank of the job, the same in every process), and every recv[k]
   gets them packed in rank order (sum of bytes). */
int fz_group_allgather(fz_group *g, const fz_ptr *send, const fz_ptr *recv, size_t bytes);
int fz_group_allgatherv(fz_group *g, const fz_ptr *send, const size_t *bytes, const fz_ptr *recv);

/* Combining one value a rank across the group, in a fixed order: the
   partials are read back and folded on the host in rank order (rank 0
   first), in the values' own type, so the result has the same bits on every
   run with the same number of devices. (Not, in general, the bits of one
   device: there one kernel folds its blocks' partials in its own order;
   min, max and integer sums are exact and agree.) */
enum { FZ_COMBINE_SUM = 0, FZ_COMBINE_MIN = 1, FZ_COMBINE_MAX = 2 };
/* type: a manifest type (f64 f32 i64 i32); waits for the ranks' streams;
   ranks with partial[r] == 0 take no part; result: one value of the type */
int fz_group_combine(fz_group *g, const fz_ptr *partial, const char *type, int op, void *result);

/* ---- one process per GPU, joined through NCCL (join.c) ------------- */

/* A process of a job that runs one process per GPU (on one host or many)
   opens its one device and joins a communicator of `nranks` ranks through
   NCCL's own bootstrap, from a unique id: rank 0 makes it
   (ncclGetUniqueId) and writes it, as 256 hex digits, to id_file
   atomically (a temporary file renamed); the others wait for that file
   (bounded by timeout_ms) and read it. Or every rank is given the id in
   id_hex (a launcher that called ncclGetUniqueId itself and lives while
   the ranks join: fz_nccl_unique_id). The result is a group whose
   fz_group_size is 1 (the ranks this process drives) and fz_group_ranks
   nranks; everything above works on it the same: collectives take the
   local rank's buffers (allgatherv's bytes: one entry per rank of the
   job), fz_group_combine folds every process's partial in rank order (the
   same bits in every process), and a sharded fusion runs this rank's
   range. Every wait for a peer is bounded by timeout_ms: the id, the
   join, a collective or a sync that a dead peer would block end in
   FZ_ERR_TIMEOUT or FZ_ERR_NCCL naming the wait, and, where the ranks
   joined through an id file on one host, the ranks that have exited. */
typedef struct fz_join_opts {
	int rank, nranks;    /* -1: from RANK and WORLD_SIZE (as torchrun exports them) */
	int device;          /* the ordinal to open; -1: LOCAL_RANK, else rank */
	const char *id_file; /* NULL: FUSERUN_NCCL_ID_FILE */
	const char *id_hex;  /* NULL: FUSERUN_NCCL_ID; one of the two is needed (id_file wins) */
	int timeout_ms;      /* 0: FUSERUN_JOIN_TIMEOUT_MS, else 60000 */
} fz_join_opts;
#define FZ_MAX_WORLD 1024
void fz_join_defaults(fz_join_opts *opts);   /* every field "from the environment" */
int fz_group_join(const fz_join_opts *opts, fz_group **out, char *errbuf);
int fz_group_ranks(const fz_group *g);          /* the job's ranks (fz_group_size in one process) */
int fz_group_rank(const fz_group *g, int local); /* the job-wide rank of a local rank, -1 if none */
/* A fresh NCCL unique id as 256 hex digits and a NUL (loads libnccl). The
   id names a bootstrap root inside this process: keep it alive until
   every rank has joined. */
int fz_nccl_unique_id(char hex[2 * 128 + 1], char *errbuf);

/* ---- lists exchanged on the devices, step after step (exchange.c) -- */

/* Every step, every rank of a group (of one process or joined) has a list
   of at most `cap` elements of elem_bytes and its count, an i32 that a
   kernel writes to fz_exchange_count(x, local, step). fz_exchange_post
   all-gathers, on a stream of the exchange's own per local rank that
   starts after what the rank's stream (fz_group_stream) has queued so far,
   the counts into a history on every device (steps x ranks i32) and the
   first cap elements of each rank's send buffer into every rank's recv
   buffer (ranks x cap elements, in rank order); the host waits for
   nothing. The list is sent whole, so the items past a rank's count must
   be ones the reader skips (a sentinel the application writes, e.g. with
   fz_memset32 before the kernel that fills the list). fz_exchange_wait
   makes each rank's stream wait, on the device, for the last post: work
   queued before it (what does not read recv) overlaps the exchange.
   fz_exchange_counts (after the streams' work, a bounded sync where
   joined) reads the history of steps [0, n) and checks every count: one
   past cap is FZ_ERR_OVERFLOW naming the step and rank (that list was cut:
   everything after it is wrong), never a silent drop. Send and recv buffers
   are the application's; with one rank in all and send == recv nothing is
   copied. With FZ_EXCHANGE_TIMED, fz_exchange_elapsed gives each step's
   exchange time on its stream (after fz_exchange_counts or a sync).
   fz_exchange_post_sized sends a step at a capacity of its own (1 to the
   exchange's): recv then holds ranks x that many elements, and a count
   past it is the step's overflow. With FZ_EXCHANGE_HOST_COUNTS each
   step's gathered counts are also copied to page-locked host memory on
   the exchange's stream: fz_exchange_host_counts waits (bounded) for that
   step's exchange only, never for a compute stream, so the host can size
   step t from the counts of step t-2 with its queue still full. Every rank
   reads the same counts: decisions made from them agree across processes.
   After an overflow found so, fz_exchange_wait and fz_group_sync, then
   fz_exchange_rewind(x, s): the next post is step s again. The counts may
   go first instead (fz_exchange_post_counts, fz_exchange_host_counts,
   fz_exchange_post_lists at the largest count): exact, but the host waits
   for each step's counts. fz_exchange_capacity: a posted step's.
   FZ_EXCHANGE_URGENT: the exchange's streams at the device's greatest
   priority, so a collective's blocks are scheduled ahead of the blocks of
   a large grid queued on the compute stream that it overlaps. */
typedef struct fz_exchange fz_exchange;
enum { FZ_EXCHANGE_TIMED = 1, FZ_EXCHANGE_HOST_COUNTS = 2, FZ_EXCHANGE_URGENT = 4 };
#define FZ_EXCHANGE_MAX_STEPS 1000000
int fz_exchange_create(fz_group *g, size_t elem_bytes, long long cap, int steps, int flags, fz_exchange **out);
void fz_exchange_destroy(fz_exchange *x);  /* NULL is ignored; before fz_group_close */
fz_ptr fz_exchange_count(const fz_exchange *x, int local, int step); /* 0 for a bad rank or step */
int fz_exchange_post(fz_exchange *x, int step, const fz_ptr *send, const fz_ptr *recv);
int fz_exchange_post_sized(fz_exchange *x, int step, long long cap, const fz_ptr *send, const fz_ptr *recv);
int fz_exchange_post_counts(fz_exchange *x, int step);
int fz_exchange_post_lists(fz_exchange *x, int step, long long cap, const fz_ptr *send, const fz_ptr *recv);
int fz_exchange_host_counts(fz_exchange *x, int step, int *counts); /* counts: ranks */
int fz_exchange_rewind(fz_exchange *x, int step);
long long fz_exchange_capacity(const fz_exchange *x, int step);
int fz_exchange_wait(fz_exchange *x);
int fz_exchange_counts(fz_exchange *x, int n, int *counts); /* counts: n x ranks, or NULL */
int fz_exchange_elapsed(fz_exchange *x, int local, int step, float *ms);

/* ---- a fusion sharded across a group (shard.c) --------------------- */

/* A sharding over one size symbol S: every kernel of the fusion must range
   over S first ("space=[S...]" in the manifest). Then each rank computes
   its contiguous range of S's points, with pointers to its rows of the
   tensors whose first dimension is S (split: the kernels take no offset,
   so a rank's args point at its rows and give S as the range's length),
   the whole of the inputs without S, and whole-tensor reductions (rank-0
   outputs by=reduce) as per-rank partials combined in rank order
   (fz_group_combine). fz_shard_plan refuses, with the reason, what the
   manifest shows cannot be sharded: a kernel over another space or a
   scatter, S in a later dimension (the rows of [N,N] pairwise temps), an
   output or temp without S that a rank would compute only a part of, a
   kernel reading a split tensor at rows other than its point's (the
   manifest's across=: a reduction over S's own index, x(j) for j over S,
   or a shifted or gathered read; a pairwise fusion is sharded with
   separate query tensors, as specs/transfer_entropy_shard.fuse does).
   Manifests written before across= existed do not show such reads. */
enum { FZ_PLACE_SPLIT = 1, FZ_PLACE_WHOLE = 2, FZ_PLACE_COMBINED = 3 };
/* place: FZ_MAX_TENSORS entries, filled for info->ntensors */
int fz_shard_plan(const fz_artifact_info *info, const char *size, int *place, char *errbuf);

/* A variant's scratch and op-list functions of the generated header, with
   the args as void *: FZ_SHARD_VARIANT(NAME, fused) defines
   fz_NAME_fused_scratch_v and fz_NAME_fused_ops_v to pass here. */
typedef unsigned long long (*fz_scratch_fn)(void *args, unsigned long long base, int sm);
typedef int (*fz_ops_fn)(const void *args, int sm, fz_op *ops, int max_ops);
#define FZ_SHARD_VARIANT(NAME, VARIANT) \
	static unsigned long long fz_##NAME##_##VARIANT##_scratch_v(void *a, unsigned long long base, int sm) \
	{ return fz_##NAME##_##VARIANT##_scratch((fz_##NAME##_args *)a, base, sm); } \
	static int fz_##NAME##_##VARIANT##_ops_v(const void *a, int sm, fz_op *ops, int max_ops) \
	{ return fz_##NAME##_##VARIANT##_ops((const fz_##NAME##_args *)a, sm, ops, max_ops); }

typedef struct fz_sharded fz_sharded;
/* Loads the artifact on every rank of g and plans the sharding over `size`.
   args: the fusion's args struct (args_size bytes) with every size at its
   global value and the scalar inputs set; pointers are ignored. layout: the
   header's FZ_NAME_LAYOUT. Buffers are allocated at the first put or run. */
int fz_sharded_create(fz_group *g, const char *manifest_path, const char *size, const char *layout, const void *args,
                      size_t args_size, fz_scratch_fn scratch, fz_ops_fn ops, fz_sharded **out, char *errbuf);
void fz_sharded_destroy(fz_sharded *s);   /* frees its buffers and unloads; the group stays open */
const char *fz_sharded_error(const fz_sharded *s);
void fz_sharded_range(const fz_sharded *s, int rank, long long *lo, long long *hi);
/* Before the first put or run: a split input read as the rows of a whole
   input (the queries of a pairwise fusion are the series' own points: no
   copy); an integer scalar input given each rank's first point. */
int fz_sharded_view(fz_sharded *s, const char *split, const char *whole);
int fz_sharded_offset(fz_sharded *s, const char *scalar);
/* how a combined output's partials fold (default FZ_COMBINE_SUM): the
   manifest does not say which reduction made it */
int fz_sharded_combine_op(fz_sharded *s, const char *output, int op);
/* Host copies of a whole tensor (bytes: all of it): put sends each rank its
   rows of a split input, or the whole; get waits and brings back every
   rank's rows of a split output, rank 0's whole tensor, or the combined
   value of a rank-0 output. */
int fz_sharded_put(fz_sharded *s, const char *tensor, const void *host, size_t bytes);
int fz_sharded_get(fz_sharded *s, const char *tensor, void *host, size_t bytes);
/* queues every rank's op list on its stream; ranks with no points run nothing */
int fz_sharded_run(fz_sharded *s);
/* All-gathers a split tensor on the devices: full[r] (may be NULL) is a
   buffer on rank r, owned by s, holding the whole tensor after the group's
   streams reach this point. */
int fz_sharded_gather(fz_sharded *s, const char *tensor, fz_ptr *full);
/* rank's pointer to a tensor (its rows, a view, the whole), 0 before the first put or run */
fz_ptr fz_sharded_ptr(const fz_sharded *s, const char *tensor, int rank);
fz_artifact *fz_sharded_artifact(const fz_sharded *s, int rank);

/* ---- persistent pipelines and graphs ------------------------------- */

/* One cooperative launch of the artifact's kernel `kernel` (a pipeline's,
   fusec's `pipeline` declaration) with `params` (params_size bytes) as its
   one parameter, `block` threads a block, and as many blocks as fit on the
   device at once by the occupancy of the kernel (at most max_per_sm an SM
   when max_per_sm > 0); *grid (may be NULL) gets the grid. The generated
   header's fz_NAME_run fills params and calls this. params_size must be
   the size the kernel's PTX declares for its parameter (FZ_ERR_ARGS_SIZE
   otherwise: the driver would read that many bytes from params). */
int fz_pipeline_launch(fz_artifact *art, const char *kernel, const void *params, size_t params_size, unsigned int block,
                       int max_per_sm, fz_stream *stream, unsigned int *grid);
/* The same with at most max_blocks blocks (0: no cap): the generated
   fz_NAME_run passes the blocks its largest phase can keep busy. */
int fz_pipeline_launch_capped(fz_artifact *art, const char *kernel, const void *params, size_t params_size, unsigned int block,
                              int max_per_sm, unsigned long long max_blocks, fz_stream *stream, unsigned int *grid);
/* Waits for the stream, then reads the pipeline's barrier words at ctl:
   FZ_ERR_STALL if a watchdog expired, the message naming the phase (its
   name from phase[], nphase of them) and step; the words (and the 4 bytes
   at also_clear, when not 0: the reduction counter) are then cleared, so
   the next launch starts clean. */
int fz_pipeline_wait(fz_artifact *art, const char *pipeline, fz_ptr ctl, fz_ptr also_clear, const char *const *phase,
                     int nphase, fz_stream *stream);

/* A CUDA graph captured from a stream (not the default one): begin,
   enqueue work (fz_run, ...), end; then launch it as often as needed. */
typedef struct fz_graph fz_graph;
int fz_graph_begin(fz_device *dev, fz_stream *stream);
int fz_graph_end(fz_device *dev, fz_stream *stream, fz_graph **out);
int fz_graph_launch(fz_device *dev, fz_graph *graph, fz_stream *stream);
int fz_graph_destroy(fz_device *dev, fz_graph *graph); /* NULL is ignored */

#ifdef __cplusplus
}
#endif

#endif
