/* libfuserun's private structures and helpers (names fr_*). */
#ifndef FUSERUN_INTERNAL_H
#define FUSERUN_INTERNAL_H
#include <stdarg.h>

#include "cuda_api.h"
#include "fuserun.h"
#include "nccl_api.h"

struct fz_device {
	CUdevice dev;
	CUcontext ctx;
	int adopted;      /* the application's context: not released at close */
	int ordinal;
	int cc_major, cc_minor, sm_count;
	char err[FZ_ERRMSG_SIZE];
};

struct fz_artifact {
	fz_device *dev;
	fz_artifact_info info;
	const fz_target_info *target;
	CUmodule mod;
	CUfunction *fn;   /* one per info.kernels[] */
	int *smem;        /* one per kernel: the dynamic shared memory its launches get */
	/* the last pipeline launched (runtime/pipeline.c): its function and
	   occupancy, so that a launch costs no driver query after the first */
	char pipe_name[128];
	CUfunction pipe_fn;
	unsigned int pipe_block;
	int pipe_per_sm;
	/* every .entry of the loaded PTX and the bytes of its one parameter,
	   read at load: a pipeline launch's params are checked against them
	   as fz_run checks an op list's args against the manifest */
	struct fr_entry *entry;
	int nentries;
	char err[FZ_ERRMSG_SIZE];
};

/* An entry of a PTX module: its name and the bytes of its parameter (0
   when it has none, several, or one this reader cannot size). */
typedef struct fr_entry {
	char name[128];
	unsigned long long param_bytes;
} fr_entry;
/* One op of a checked list (fz_run's loop; the context entered): a memset,
   or a launch of kernel k (its index in info.kernels); i names the op in
   an error. */
int fr_run_op(fz_artifact *a, const fz_op *op, int k, const void *args, fz_stream *stream, int i);
/* Fills a->entry from the PTX text (pipeline.c); FZ_OK or FZ_ERR_NO_MEMORY. */
int fr_ptx_entries(fz_artifact *a, const char *ptx, char *err);

/* A group (group.c): the ranks this process drives. In one process they
   are the whole world (first 0, world n); a process joined to others
   (join.c) drives one rank, first, of world. */
struct fz_group {
	int n;                 /* local ranks: dev[], stream[], comm[] */
	int world, first;      /* every process's ranks; the global rank of local rank 0 */
	int joined;            /* fz_group_join: peers are other processes, every wait bounded */
	int timeout_ms;        /* joined: the bound of a wait for a peer */
	char *peers;           /* joined through an id file: its path (the ranks' pid files sit beside it), else NULL */
	fz_device *dev[FZ_MAX_GROUP];
	fz_stream *stream[FZ_MAX_GROUP];
	fr_ncclComm_t comm[FZ_MAX_GROUP];
	const fr_nccl *nccl;   /* NULL with one rank in all */
	int failed;            /* the first failure of a collective or a sync; the group is unusable */
	char err[FZ_ERRMSG_SIZE];
};
/* group.c, for exchange.c: fail marks the group failed with rc (the
   first failure sticks); device_error copies local rank r's device message
   into g->err, naming device and rank; end closes an NCCL group of calls
   (a non-blocking communicator settled, bounded) and asks for NCCL's
   asynchronous errors. */
int fr_group_fail(fz_group *g, int rc);
void fr_group_device_error(fz_group *g, int r);
int fr_group_end(fz_group *g, int rc, const char *what);
/* join.c: a joined group's bounded waits. settle: NCCL calls on a
   non-blocking communicator return ncclInProgress; polls until it is done.
   sync: each local stream finished, polling NCCL's asynchronous errors.
   blame: appends to g->err which peers have exited (same host, through
   the id file's pid files). All return FZ_OK or the failure, g->err set. */
int fr_join_settle(fz_group *g, const char *what);
int fr_join_sync(fz_group *g);
void fr_join_blame(fz_group *g);
/* device.c: *done = 1 when the stream's work is finished (cuStreamQuery) */
int fr_stream_ready(fz_device *d, fz_stream *s, int *done);
/* device.c: the same for an event (cuEventQuery); page-locked host memory */
int fr_event_ready(fz_device *d, fz_event *e, int *done);
int fr_host_alloc(fz_device *d, size_t bytes, void **out);
int fr_stream_create_urgent(fz_device *d, fz_stream **out);
void fr_host_free(fz_device *d, void *p);

/* Writes a message into err (FZ_ERRMSG_SIZE bytes; NULL: none); returns code. */
int fr_err(char *err, int code, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 3, 4)))
#endif
	;

/* Makes dev's context current for the calling thread (a push, none where it
   already is), and restores the thread's as it was; called in pairs, nested. */
int fr_enter(fz_device *dev, char *err);
void fr_leave(fz_device *dev);

/* Reads a whole regular file of at most max bytes (NUL-terminated too),
   refusing a symbolic link, a FIFO or a device; 0, or FZ_ERR_IO, FORMAT
   (too large) or NO_MEMORY with what = the role of the file in the message. */
int fr_read_file(const char *path, const char *what, size_t max, char **data, size_t *len, char *err);
char *fr_path_join(const char *dir, const char *name);   /* malloc'd "dir/name" */
char *fr_dir_of(const char *path);                        /* malloc'd; "." for a bare name */

/* The path of a file of a verified artifact, next to its manifest (malloc'd). */
char *fr_artifact_path(const fz_artifact_info *info, const char *name);

/* A `values NAME LO..HI [nondecreasing] [nonzero]` line of the manifest:
   each bound a size (index into sizes[]; -1: none) plus a number. */
typedef struct fr_values {
	int set;
	int lo_size, hi_size;
	long long lo, hi;
	int nondecreasing, nonzero;
	const char *range;       /* LO..HI as written */
} fr_values;

/* A `fits NAME DIM>=LEAST` line of the manifest: input NAME's domain
   reaches dimension DIM through a subscript, so DIM must be at least LEAST
   at a launch's sizes. dim is DIM parsed as a param line's dimension (rank
   1, named like the input, for the messages). */
typedef struct fr_fit {
	int tensor;
	fz_tensor_info dim;
	long long least;
} fr_fit;
/* shape.c: dimension d of t at sizes (each from 1 to 2^62, checked), as
   the generated code computes it; FZ_OK or FZ_ERR_BAD_SIZE with why */
int fr_dim_at(const fz_artifact_info *info, const fz_tensor_info *t, int d, const long long *sizes, long long *out, char *err);

/* The launch recipe (recipe.c): expressions as nodes in a pool, each
   node's operands before it (kid[] are smaller indices). */
typedef struct fr_node {
	int op, nkid;
	int kid[4];
	long long v;             /* a number, or a size's index */
} fr_node;
typedef struct fr_op {
	int kind;                /* FZ_OP_LAUNCH or FZ_OP_MEMSET */
	int tensor;              /* memset: the tensor (info index) */
	int nent;                /* launch: its kernels (info index) and head-size bounds */
	int kernel[FZ_MAX_ENTRY_POINTS];
	long long bound[FZ_MAX_ENTRY_POINTS];
	int head, gx, gy, block; /* nodes; head -1 for a single kernel */
	int always;              /* one block at least, even on an empty grid */
} fr_op;
typedef struct fr_variant {
	int nops, nstored, nparts, ncounters;
	fr_op ops[FZ_MAX_OPS];
	int stored[FZ_MAX_TENSORS];
	int parts[FZ_MAX_KERNELS], counters[FZ_MAX_KERNELS];
} fr_variant;
typedef struct fr_recipe {
	fr_node *node;
	int nnodes, cap;
	fr_variant v[2];         /* [1] fused, [0] unfused, as fz_kernel_info.fused */
} fr_recipe;

/* What a verified fz_artifact_info points into (info->storage_). Every
   array is bounded by the FZ_MAX_* limits. */
typedef struct fr_store {
	char *text, *dir, *path;
	fz_target_info targets[FZ_MAX_TARGETS];
	fz_file_info files[FZ_MAX_FILES];
	const char *sizes[FZ_MAX_SIZES];
	fz_tensor_info tensors[FZ_MAX_TENSORS];
	fz_kernel_info kernels[FZ_MAX_KERNELS];
	int tma_rows[FZ_MAX_KERNELS][2]; /* per kernel, its maps' box rows (tma-rows=; default 128,64) */
	const char *inexact[FZ_MAX_TENSORS]; /* per tensor, its inexact line's kind ("tf32", "fp8"), or NULL */
	const char **plan;       /* at most FZ_MAX_PLAN */
	fr_values values[FZ_MAX_TENSORS]; /* per tensor, from its values line */
	fr_fit fits[FZ_MAX_FITS];         /* the fits lines, in order */
	int nfits;
	char layout[65];         /* recomputed from the manifest's lines */
	fr_recipe recipe;        /* format 2: the stored/parts/counter/op lines */
} fr_store;

/* Parses the manifest's lines [text, stop) (the envelope already checked)
   into info and st, line by line in linear time; FZ_OK or FZ_ERR_FORMAT
   with "path:line: why". */
int fr_manifest_parse(const char *path, char *text, char *stop, fz_artifact_info *info, fr_store *st, char *err);
/* The layout fingerprint of a parsed manifest: SHA-256 hex of its fusion,
   size, param and temp lines without their by= and domain= attributes.
   fusec computes the same (fusec/emit/layout.c, emit_layout). */
void fr_layout(const fz_artifact_info *info, char hex[65]);

/* recipe.c: a stored, parts, counter or op line (t: its n fields), in
   place; FZ_OK or FZ_ERR_FORMAT with why in err (no location) */
int fr_recipe_line(fz_artifact_info *info, fr_store *st, char **t, int n, char *err);
/* what only the whole manifest says: format 2 has a recipe for both
   variants, launching every kernel of the variant; format 1 none */
int fr_recipe_check(const fz_artifact_info *info, const fr_store *st, const char *path, char *err);
/* evaluates node i at sizes and sm; FZ_OK or FZ_ERR_BAD_SIZE (an overflow,
   a division by zero) with why in err */
int fr_eval(const fr_recipe *r, int i, const long long *sizes, long long sm, long long *out, char *err);

#endif
