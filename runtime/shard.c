/* A fusion sharded across a group over one size symbol: each rank runs the
 * fusion on its contiguous range of that size's points, with views of its
 * rows of the split tensors (the kernels take no offset: a rank's args point
 * at its rows and give the size as the range's length), the whole of the
 * others, and its own scratch. Rank-0 outputs are per-rank partials,
 * combined in rank order (group.c); split outputs are gathered on the host
 * or, with NCCL, on every device. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct fz_sharded {
	fz_group *g;
	fz_artifact *arts[FZ_MAX_GROUP];
	const fz_artifact_info *info;
	int size;                          /* the sharded size symbol (index into info->sizes) */
	long long extent;                  /* its global value */
	long long lo[FZ_MAX_GROUP], hi[FZ_MAX_GROUP];
	int place[FZ_MAX_TENSORS];         /* FZ_PLACE_* */
	int view[FZ_MAX_TENSORS];          /* a split tensor read as rows of this whole tensor, or -1 */
	int combine[FZ_MAX_TENSORS];       /* FZ_COMBINE_* of a combined output */
	int offset;                        /* the scalar input given each rank's first point, or -1 */
	fz_ptr buf[FZ_MAX_TENSORS][FZ_MAX_GROUP];     /* allocated here (0: none, or a view) */
	fz_ptr full[FZ_MAX_TENSORS][FZ_MAX_GROUP];    /* gathered copies of split outputs */
	fz_ptr scratch[FZ_MAX_GROUP];
	unsigned char *args[FZ_MAX_GROUP]; /* each rank's args, scratch placed */
	unsigned char *tmpl;               /* the caller's args: global sizes and scalars */
	size_t args_size;
	fz_scratch_fn scratch_fn;
	fz_ops_fn ops_fn;
	int sm[FZ_MAX_GROUP];
	int ready;                         /* buffers allocated */
	char err[FZ_ERRMSG_SIZE];
};

static long long size_value(const fz_artifact_info *info, const void *args, int k)
{
	long long v;
	memcpy(&v, (const char *)args + 8 * (size_t)(info->ntensors + k), 8);
	return v;
}

/* a tensor's dimensions at the sizes of args, as the generated code
   computes them (derived ones too: fz_tensor_shape); 0 on failure (the
   sizes were checked by fz_check_sizes at create) */
static long long dims_of(const fz_artifact_info *info, const void *args, int t, long long *dims)
{
	long long sizes[FZ_MAX_SIZES], n = 0;
	for (int k = 0; k < info->nsizes; k++) sizes[k] = size_value(info, args, k);
	for (int d = 0; d < FZ_MAX_RANK; d++) dims[d] = 0;
	return fz_tensor_shape(info, t, sizes, dims, &n, NULL) ? 0 : n;
}

/* bytes of one row (dimension 0 taken away), or of the element for rank 0 */
static unsigned long long row_bytes(const fz_artifact_info *info, const void *args, int t)
{
	long long dims[FZ_MAX_RANK];
	dims_of(info, args, t, dims);
	unsigned long long b = (unsigned long long)info->tensors[t].elem_bytes;
	for (int d = 1; d < info->tensors[t].rank; d++) b *= (unsigned long long)dims[d];
	return b;
}

static unsigned long long whole_bytes(const fz_artifact_info *info, const void *args, int t)
{
	long long dims[FZ_MAX_RANK];
	return (unsigned long long)dims_of(info, args, t, dims) * (unsigned long long)info->tensors[t].elem_bytes;
}

static long long rows_of(const fz_artifact_info *info, const void *args, int t)
{
	long long dims[FZ_MAX_RANK];
	dims_of(info, args, t, dims);
	return info->tensors[t].rank ? dims[0] : 1;
}

/* dimension d is S itself, not derived from it */
static int plain(const fz_tensor_info *t, int d, int s)
{
	return t->dim_size[d] == s && t->dim_add[d] == 0 && t->dim_div[d] == 1 && t->dim_per[d] < 0;
}
static int mentions(const fz_tensor_info *t, int d, int s) { return t->dim_size[d] == s || t->dim_per[d] == s; }

static int is_scalar_input(const fz_tensor_info *t) { return t->rank == 0 && t->role == FZ_INPUT; }

int fz_shard_plan(const fz_artifact_info *info, const char *size, int *place, char *err)
{
	if (!info || !size || !place) return fr_err(err, FZ_ERR_INVALID, "fz_shard_plan: a NULL argument");
	int s = -1;
	for (int k = 0; k < info->nsizes; k++)
		if (!strcmp(info->sizes[k], size)) s = k;
	if (s < 0) return fr_err(err, FZ_ERR_SHARD, "fusion %s has no size %s", info->fusion, size);
	char want[FZ_MAX_NAME + 2];
	snprintf(want, sizeof want, "[%s", size);
	/* every kernel's space must start with the size: then each point of it is
	   computed by one rank, from that rank's rows. A scatter writes anywhere. */
	for (int k = 0; k < info->nkernels; k++) {
		const fz_kernel_info *kn = &info->kernels[k];
		size_t n = strlen(want);
		if (strncmp(kn->space, want, n) || (kn->space[n] != ']' && kn->space[n] != ','))
			return fr_err(err, FZ_ERR_SHARD, "fusion %s cannot be sharded over %s: kernel %s (%s) ranges over %s, not over %s first",
			              info->fusion, size, kn->name, kn->mode, kn->space[0] ? kn->space : "data-dependent points", size);
		/* it reads tensors split over S at other points' rows (x(j) for j
		   over S, x(i + 1), x(g(i))): a rank holds only its own */
		if (kn->across && *kn->across)
			return fr_err(err, FZ_ERR_SHARD, "fusion %s cannot be sharded over %s: kernel %s reads %s at rows other than its "
			              "point's (a reduction over %s's own index, or a shifted or gathered read), and a rank holds only its own rows "
			              "(read the whole tensor through separate query tensors, as transfer_entropy_shard does)",
			              info->fusion, size, kn->name, kn->across, size);
	}
	for (int i = 0; i < info->ntensors; i++) {
		const fz_tensor_info *t = &info->tensors[i];
		for (int d = 0; d < t->rank; d++)
			if (mentions(t, d, s) && (d > 0 || !plain(t, d, s)))
				return fr_err(err, FZ_ERR_SHARD, "fusion %s cannot be sharded over %s: %s has %s%s in dimension %d (a rank's part would not be "
				              "its own rows)", info->fusion, size, t->name, plain(t, d, s) ? "" : "a size derived from ", size, d + 1);
		if (t->rank && plain(t, 0, s)) place[i] = FZ_PLACE_SPLIT;
		else if (t->role == FZ_INPUT) place[i] = FZ_PLACE_WHOLE;
		else if (t->role != FZ_TEMP && t->rank == 0 && !strcmp(t->by, "reduce") && strcmp(t->type, "f16") && strcmp(t->type, "bf16"))
			place[i] = FZ_PLACE_COMBINED;
		else
			return fr_err(err, FZ_ERR_SHARD, "fusion %s cannot be sharded over %s: %s %s (%s) does not range over %s, so a rank "
			              "would compute a part of it that cannot be combined%s", info->fusion, size,
			              t->role == FZ_TEMP ? "temp" : "output", t->name, t->by, size,
			              t->rank == 0 && t->role != FZ_TEMP ? " (only whole-tensor reductions of f32, f64, i32, i64 can)" : "");
	}
	return FZ_OK;
}

static int find_tensor(fz_sharded *s, const char *name, const char *who)
{
	for (int i = 0; name && i < s->info->ntensors; i++)
		if (!strcmp(s->info->tensors[i].name, name)) return i;
	fr_err(s->err, FZ_ERR_INVALID, "%s: fusion %s has no tensor %s", who, s->info->fusion, name ? name : "(null)");
	return -1;
}

const char *fz_sharded_error(const fz_sharded *s) { return s ? s->err : "no sharded handle"; }

void fz_sharded_range(const fz_sharded *s, int rank, long long *lo, long long *hi)
{
	int ok = s && rank >= 0 && rank < fz_group_size(s->g);
	if (lo) *lo = ok ? s->lo[rank] : 0;
	if (hi) *hi = ok ? s->hi[rank] : 0;
}

void fz_sharded_destroy(fz_sharded *s)
{
	if (!s) return;
	int n = fz_group_size(s->g);
	for (int r = 0; r < n; r++) {
		fz_device *d = fz_group_device(s->g, r);
		for (int i = 0; s->info && i < s->info->ntensors; i++) fz_free(d, s->buf[i][r]), fz_free(d, s->full[i][r]);
		fz_free(d, s->scratch[r]);
		free(s->args[r]);
	}
	fz_group_unload(s->g, s->arts);
	free(s->tmpl);
	free(s);
}

int fz_sharded_create(fz_group *g, const char *manifest, const char *size, const char *layout, const void *args, size_t args_size,
                      fz_scratch_fn scratch, fz_ops_fn ops, fz_sharded **out, char *err)
{
	if (!out) return fr_err(err, FZ_ERR_INVALID, "fz_sharded_create: out is NULL");
	*out = NULL;
	if (!g || !manifest || !size || !layout || !args || !scratch || !ops)
		return fr_err(err, FZ_ERR_INVALID, "fz_sharded_create: a NULL argument");
	fz_sharded *s = calloc(1, sizeof *s);
	if (!s) return fr_err(err, FZ_ERR_NO_MEMORY, "out of memory");
	s->g = g, s->scratch_fn = scratch, s->ops_fn = ops, s->offset = -1, s->args_size = args_size;
	int n = fz_group_size(g), rc = fz_group_load(g, manifest, s->arts);
	if (rc) {
		fr_err(err, rc, "%s", fz_group_error(g));
		free(s);
		return rc;
	}
	s->info = fz_artifact_get_info(s->arts[0]);
	rc = fz_artifact_check_layout(s->arts[0], layout);
	if (rc) fr_err(err, rc, "%s", fz_artifact_error(s->arts[0]));
	if (!rc) rc = fz_check_sizes(s->info, args, args_size, err);
	if (!rc) rc = fz_shard_plan(s->info, size, s->place, err);
	if (!rc && !(s->tmpl = malloc(args_size))) rc = fr_err(err, FZ_ERR_NO_MEMORY, "out of memory");
	for (int r = 0; !rc && r < n; r++) {
		fz_device_props p;
		rc = fz_device_query(fz_group_device(g, r), &p);
		if (rc) fr_err(err, rc, "%s", fz_device_error(fz_group_device(g, r)));
		s->sm[r] = p.sm_count;
		if (!rc && !(s->args[r] = malloc(args_size))) rc = fr_err(err, FZ_ERR_NO_MEMORY, "out of memory");
	}
	if (rc) {
		fz_sharded_destroy(s);
		return rc;
	}
	memcpy(s->tmpl, args, args_size);
	for (int k = 0; k < s->info->nsizes; k++)
		if (!strcmp(s->info->sizes[k], size)) s->size = k;
	s->extent = size_value(s->info, args, s->size);
	/* in a joined group this process's one rank gets its part of the job's range */
	for (int r = 0; r < n; r++) fz_group_range(s->extent, fz_group_ranks(g), fz_group_rank(g, r), &s->lo[r], &s->hi[r]);
	for (int i = 0; i < FZ_MAX_TENSORS; i++) s->view[i] = -1, s->combine[i] = FZ_COMBINE_SUM;
	*out = s;
	return FZ_OK;
}

static int not_after_start(fz_sharded *s, const char *who)
{
	return s->ready ? fr_err(s->err, FZ_ERR_INVALID, "%s: only before the first put or run", who) : FZ_OK;
}

int fz_sharded_view(fz_sharded *s, const char *split, const char *whole)
{
	if (!s) return FZ_ERR_INVALID;
	int rc = not_after_start(s, "fz_sharded_view");
	int a = rc ? -1 : find_tensor(s, split, "fz_sharded_view"), b = a < 0 ? -1 : find_tensor(s, whole, "fz_sharded_view");
	if (rc || a < 0 || b < 0) return rc ? rc : FZ_ERR_INVALID;
	const fz_tensor_info *x = &s->info->tensors[a], *y = &s->info->tensors[b];
	if (s->place[a] != FZ_PLACE_SPLIT || x->role != FZ_INPUT || s->place[b] != FZ_PLACE_WHOLE || y->rank == 0)
		return fr_err(s->err, FZ_ERR_INVALID, "fz_sharded_view: %s must be a split input and %s a whole input with rows", split, whole);
	if (strcmp(x->type, y->type) || x->rank != y->rank || row_bytes(s->info, s->tmpl, a) != row_bytes(s->info, s->tmpl, b) ||
	    rows_of(s->info, s->tmpl, b) < s->extent)
		return fr_err(s->err, FZ_ERR_INVALID, "fz_sharded_view: %s (%s, %d dimensions) cannot be read as the rows of %s (%s, %d dimensions, "
		              "%lld rows)", split, x->type, x->rank, whole, y->type, y->rank, rows_of(s->info, s->tmpl, b));
	s->view[a] = b;
	return FZ_OK;
}

int fz_sharded_offset(fz_sharded *s, const char *scalar)
{
	if (!s) return FZ_ERR_INVALID;
	int rc = not_after_start(s, "fz_sharded_offset"), i = rc ? -1 : find_tensor(s, scalar, "fz_sharded_offset");
	if (rc || i < 0) return rc ? rc : FZ_ERR_INVALID;
	const fz_tensor_info *t = &s->info->tensors[i];
	if (!is_scalar_input(t) || (strcmp(t->type, "i64") && strcmp(t->type, "i32")))
		return fr_err(s->err, FZ_ERR_INVALID, "fz_sharded_offset: %s is not an integer scalar input", scalar);
	s->offset = i;
	return FZ_OK;
}

int fz_sharded_combine_op(fz_sharded *s, const char *output, int op)
{
	if (!s) return FZ_ERR_INVALID;
	int i = find_tensor(s, output, "fz_sharded_combine_op");
	if (i < 0) return FZ_ERR_INVALID;
	if (s->place[i] != FZ_PLACE_COMBINED || (op != FZ_COMBINE_SUM && op != FZ_COMBINE_MIN && op != FZ_COMBINE_MAX))
		return fr_err(s->err, FZ_ERR_INVALID, "fz_sharded_combine_op: %s is not a combined output, or operation %d is unknown", output, op);
	s->combine[i] = op;
	return FZ_OK;
}

/* allocates every rank's buffers (views point into the whole tensor) */
static int realize(fz_sharded *s)
{
	if (s->ready) return FZ_OK;
	int n = fz_group_size(s->g), rc = FZ_OK;
	const fz_artifact_info *info = s->info;
	for (int r = 0; !rc && r < n; r++) {
		fz_device *d = fz_group_device(s->g, r);
		long long rows = s->hi[r] - s->lo[r];
		for (int i = 0; !rc && i < info->ntensors; i++) {
			const fz_tensor_info *t = &info->tensors[i];
			unsigned long long bytes = 0;
			if (t->role == FZ_TEMP || is_scalar_input(t) || s->view[i] >= 0) continue;
			if (s->place[i] == FZ_PLACE_SPLIT) bytes = row_bytes(info, s->tmpl, i) * (unsigned long long)rows;
			else bytes = whole_bytes(info, s->tmpl, i);
			if (bytes) rc = fz_alloc(d, bytes, &s->buf[i][r]);
		}
		if (rc) break;
		/* the args: pointers, the rank's size and offset, then the scratch */
		unsigned char *a = s->args[r];
		memcpy(a, s->tmpl, s->args_size);
		for (int i = 0; i < info->ntensors; i++) {
			const fz_tensor_info *t = &info->tensors[i];
			fz_ptr p = s->buf[i][r];
			if (is_scalar_input(t)) continue;
			if (s->view[i] >= 0) p = s->buf[s->view[i]][r] + (fz_ptr)s->lo[r] * row_bytes(info, s->tmpl, i);
			memcpy(a + 8 * (size_t)i, &p, 8);
		}
		memcpy(a + 8 * (size_t)(info->ntensors + s->size), &rows, 8);
		if (s->offset >= 0) memcpy(a + 8 * (size_t)s->offset, &s->lo[r], 8);
		if (!rows) continue; /* an empty rank runs nothing */
		unsigned long long need = s->scratch_fn(a, 0, s->sm[r]);
		rc = fz_alloc(d, need ? need : 256, &s->scratch[r]);
		if (!rc) rc = fz_memset(d, s->scratch[r], 0, need ? need : 256, NULL);
		if (!rc) s->scratch_fn(a, s->scratch[r], s->sm[r]);
		if (rc) break;
	}
	for (int r = 0; rc && r < n; r++)
		if (fz_device_error(fz_group_device(s->g, r))[0]) {
			fr_err(s->err, rc, "rank %d: %s", fz_group_rank(s->g, r), fz_device_error(fz_group_device(s->g, r)));
			break;
		}
	/* a failure part-way frees what it allocated: the next put or run starts
	   over (it would otherwise allocate every buffer again over the first) */
	for (int r = 0; rc && r < n; r++) {
		fz_device *d = fz_group_device(s->g, r);
		for (int i = 0; i < info->ntensors; i++) fz_free(d, s->buf[i][r]), s->buf[i][r] = 0;
		fz_free(d, s->scratch[r]), s->scratch[r] = 0;
	}
	if (!rc) s->ready = 1;
	return rc;
}

int fz_sharded_put(fz_sharded *s, const char *name, const void *host, size_t bytes)
{
	if (!s) return FZ_ERR_INVALID;
	int i = find_tensor(s, name, "fz_sharded_put");
	if (i < 0) return FZ_ERR_INVALID;
	const fz_tensor_info *t = &s->info->tensors[i];
	if (!host || (t->role != FZ_INPUT && t->role != FZ_INOUT) || is_scalar_input(t) || s->view[i] >= 0)
		return fr_err(s->err, FZ_ERR_INVALID, "fz_sharded_put: %s is not an input tensor held here (a scalar is set in the args; a view "
		              "is put through its whole tensor)", name);
	unsigned long long want = whole_bytes(s->info, s->tmpl, i), row = row_bytes(s->info, s->tmpl, i);
	if (bytes != want) return fr_err(s->err, FZ_ERR_INVALID, "fz_sharded_put: %s is %llu bytes, not %zu", name, want, bytes);
	int rc = realize(s);
	for (int r = 0; !rc && r < fz_group_size(s->g); r++) {
		fz_device *d = fz_group_device(s->g, r);
		if (s->place[i] == FZ_PLACE_SPLIT) {
			unsigned long long n = row * (unsigned long long)(s->hi[r] - s->lo[r]);
			if (n) rc = fz_copy_to_device(d, s->buf[i][r], (const char *)host + row * (unsigned long long)s->lo[r], n, NULL);
		} else {
			rc = fz_copy_to_device(d, s->buf[i][r], host, want, NULL);
		}
		if (rc) fr_err(s->err, rc, "rank %d: %s", fz_group_rank(s->g, r), fz_device_error(d));
	}
	return rc;
}

int fz_sharded_run(fz_sharded *s)
{
	if (!s) return FZ_ERR_INVALID;
	int rc = realize(s);
	for (int r = 0; !rc && r < fz_group_size(s->g); r++) {
		if (s->hi[r] == s->lo[r]) continue;
		fz_op ops[FZ_MAX_KERNELS];
		int nops = s->ops_fn(s->args[r], s->sm[r], ops, FZ_MAX_KERNELS);
		if (nops < 0) return fr_err(s->err, FZ_ERR_INVALID, "rank %d: the op list does not fit %d ops", r, FZ_MAX_KERNELS);
		rc = fz_run(s->arts[r], ops, nops, s->args[r], s->args_size, fz_group_stream(s->g, r));
		if (rc) fr_err(s->err, rc, "rank %d: %s", fz_group_rank(s->g, r), fz_artifact_error(s->arts[r]));
	}
	return rc;
}

/* a split output of a joined group: the other processes' rows live on
   their devices only, so it is all-gathered first (every process takes
   part) and read from this rank's whole copy */
static int get_joined(fz_sharded *s, int i, void *host, unsigned long long bytes)
{
	fz_ptr full[FZ_MAX_GROUP];
	fz_device *d = fz_group_device(s->g, 0);
	int rc = fz_sharded_gather(s, s->info->tensors[i].name, full);
	if (!rc && bytes) {
		rc = fz_copy_to_host(d, host, full[0], bytes, fz_group_stream(s->g, 0));
		if (rc) fr_err(s->err, rc, "rank %d: %s", fz_group_rank(s->g, 0), fz_device_error(d));
	}
	if (!rc) {
		rc = fz_group_sync(s->g);
		if (rc) fr_err(s->err, rc, "%s", fz_group_error(s->g));
	}
	return rc;
}

int fz_sharded_get(fz_sharded *s, const char *name, void *host, size_t bytes)
{
	if (!s) return FZ_ERR_INVALID;
	int i = find_tensor(s, name, "fz_sharded_get");
	if (i < 0) return FZ_ERR_INVALID;
	const fz_tensor_info *t = &s->info->tensors[i];
	if (!host || t->role == FZ_TEMP || is_scalar_input(t) || s->view[i] >= 0)
		return fr_err(s->err, FZ_ERR_INVALID, "fz_sharded_get: %s is not a tensor held here", name);
	unsigned long long want = whole_bytes(s->info, s->tmpl, i), row = row_bytes(s->info, s->tmpl, i);
	if (bytes != want) return fr_err(s->err, FZ_ERR_INVALID, "fz_sharded_get: %s is %llu bytes, not %zu", name, want, bytes);
	int rc = realize(s), n = fz_group_size(s->g);
	if (!rc && s->place[i] == FZ_PLACE_COMBINED) {
		fz_ptr part[FZ_MAX_GROUP] = {0};
		for (int r = 0; r < n; r++) part[r] = s->hi[r] > s->lo[r] ? s->buf[i][r] : 0;
		rc = fz_group_combine(s->g, part, t->type, s->combine[i], host);
		if (rc) fr_err(s->err, rc, "%s", fz_group_error(s->g));
		return rc;
	}
	if (!rc && s->place[i] == FZ_PLACE_SPLIT && fz_group_ranks(s->g) > n) return get_joined(s, i, host, want);
	for (int r = 0; !rc && r < n; r++) {
		fz_device *d = fz_group_device(s->g, r);
		if (s->place[i] == FZ_PLACE_SPLIT) {
			unsigned long long m = row * (unsigned long long)(s->hi[r] - s->lo[r]);
			if (m) rc = fz_copy_to_host(d, (char *)host + row * (unsigned long long)s->lo[r], s->buf[i][r], m, fz_group_stream(s->g, r));
		} else if (r == 0) {
			rc = fz_copy_to_host(d, host, s->buf[i][r], want, fz_group_stream(s->g, r));
		}
		if (rc) fr_err(s->err, rc, "rank %d: %s", fz_group_rank(s->g, r), fz_device_error(d));
	}
	if (!rc) {
		rc = fz_group_sync(s->g);
		if (rc) fr_err(s->err, rc, "%s", fz_group_error(s->g));
	}
	return rc;
}

int fz_sharded_gather(fz_sharded *s, const char *name, fz_ptr *full)
{
	if (!s) return FZ_ERR_INVALID;
	int i = find_tensor(s, name, "fz_sharded_gather"), n = fz_group_size(s->g);
	if (i < 0) return FZ_ERR_INVALID;
	const fz_tensor_info *t = &s->info->tensors[i];
	if (s->place[i] != FZ_PLACE_SPLIT || t->role == FZ_TEMP || s->view[i] >= 0)
		return fr_err(s->err, FZ_ERR_INVALID, "fz_sharded_gather: %s is not a split tensor held here", name);
	int rc = realize(s), world = fz_group_ranks(s->g);
	unsigned long long row = row_bytes(s->info, s->tmpl, i), want = whole_bytes(s->info, s->tmpl, i);
	size_t bytes[FZ_MAX_WORLD];
	fz_ptr send[FZ_MAX_GROUP];
	for (int r = 0; r < world; r++) { /* every rank's part, this process's or not */
		long long lo, hi;
		fz_group_range(s->extent, world, r, &lo, &hi);
		bytes[r] = (size_t)(row * (unsigned long long)(hi - lo));
	}
	for (int r = 0; !rc && r < n; r++) {
		send[r] = s->buf[i][r];
		if (!s->full[i][r]) rc = fz_alloc(fz_group_device(s->g, r), want, &s->full[i][r]);
		if (rc) fr_err(s->err, rc, "rank %d: %s", fz_group_rank(s->g, r), fz_device_error(fz_group_device(s->g, r)));
	}
	if (!rc) {
		rc = fz_group_allgatherv(s->g, send, bytes, s->full[i]);
		if (rc) fr_err(s->err, rc, "%s", fz_group_error(s->g));
	}
	for (int r = 0; full && r < n; r++) full[r] = rc ? 0 : s->full[i][r];
	return rc;
}

fz_ptr fz_sharded_ptr(const fz_sharded *s, const char *name, int rank)
{
	if (!s || rank < 0 || rank >= fz_group_size(s->g)) return 0;
	for (int i = 0; name && i < s->info->ntensors; i++)
		if (!strcmp(s->info->tensors[i].name, name)) {
			fz_ptr p;
			memcpy(&p, s->args[rank] + 8 * (size_t)i, 8);
			return s->ready && !is_scalar_input(&s->info->tensors[i]) ? p : 0;
		}
	return 0;
}

fz_artifact *fz_sharded_artifact(const fz_sharded *s, int rank)
{
	return s && rank >= 0 && rank < fz_group_size(s->g) ? s->arts[rank] : NULL;
}
