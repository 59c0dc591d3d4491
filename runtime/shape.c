/* fz_tensor_shape: a tensor's dimensions at given sizes, as the generated
 * code computes them (fusec/core/ir.c, dim_write_c): a derived dimension
 * max(B + K, 0) / D, or / S. Every step is overflow-checked, so no size on
 * a command line and no manifest can make a caller allocate a wrapped-round
 * count. fz_tensor_values: an integer input's values line at given sizes,
 * overflow-checked the same way. fz_check_fits: the fits lines at given
 * sizes, each dimension computed as the shapes are. fz_tensor_shape_text:
 * the dimensions as written, which the generated header and reference
 * carry too. */
#include <string.h>

#include "internal.h"

#define LIMIT (1ll << 62)

int fr_dim_at(const fz_artifact_info *info, const fz_tensor_info *t, int d, const long long *sizes, long long *out, char *err)
{
	int use[2] = {t->dim_size[d], t->dim_per[d]};
	for (int u = 0; u < 2; u++)
		if (use[u] >= info->nsizes || (use[u] >= 0 && (sizes[use[u]] < 1 || sizes[use[u]] > LIMIT)))
			return fr_err(err, FZ_ERR_BAD_SIZE, "%s: size %s is %lld, not from 1 to 2^62", t->name,
			              use[u] < info->nsizes ? info->sizes[use[u]] : "?", use[u] < info->nsizes ? sizes[use[u]] : 0);
	long long v = t->dim_size[d] >= 0 ? sizes[t->dim_size[d]] : t->dim_value[d];
	if (__builtin_add_overflow(v, t->dim_add[d], &v) || v > LIMIT)
		return fr_err(err, FZ_ERR_BAD_SIZE, "%s: dimension %s overflows", t->name, t->dim[d]);
	if (v < 0) v = 0;
	*out = v / (t->dim_per[d] >= 0 ? sizes[t->dim_per[d]] : t->dim_div[d] > 1 ? t->dim_div[d] : 1);
	return FZ_OK;
}

int fz_tensor_shape(const fz_artifact_info *info, int tensor, const long long *sizes, long long *dims,
                    long long *elements, char *err)
{
	if (!info || !sizes || !elements || tensor < 0 || tensor >= info->ntensors)
		return fr_err(err, FZ_ERR_INVALID, "fz_tensor_shape: a NULL argument or no tensor %d", tensor);
	const fz_tensor_info *t = &info->tensors[tensor];
	long long n = 1;
	for (int d = 0; d < t->rank; d++) {
		long long v;
		int rc = fr_dim_at(info, t, d, sizes, &v, err);
		if (rc) return rc;
		if (dims) dims[d] = v;
		if (__builtin_mul_overflow(n, v, &n) || n > LIMIT / (t->elem_bytes > 0 ? t->elem_bytes : 1))
			return fr_err(err, FZ_ERR_BAD_SIZE, "%s: more than 2^62 bytes at these sizes", t->name);
	}
	*elements = n;
	return FZ_OK;
}

/* a values line's bound at sizes[]: size use (or -1) plus c */
static int value_at(const fz_artifact_info *info, const fz_tensor_info *t, int use, long long c, const long long *sizes,
                    long long *out, char *err)
{
	if (use < 0) return *out = c, FZ_OK;
	if (use >= info->nsizes) return fr_err(err, FZ_ERR_INVALID, "fz_tensor_values: %s: no size %d", t->name, use);
	if (sizes[use] < 1 || sizes[use] > LIMIT)
		return fr_err(err, FZ_ERR_BAD_SIZE, "%s: size %s is %lld, not from 1 to 2^62", t->name, info->sizes[use], sizes[use]);
	if (__builtin_add_overflow(sizes[use], c, out))
		return fr_err(err, FZ_ERR_BAD_SIZE, "%s: values: %s%+lld overflows", t->name, info->sizes[use], c);
	return FZ_OK;
}

int fz_tensor_values(const fz_artifact_info *info, int tensor, const long long *sizes, fz_values_info *out, char *err)
{
	if (!info || !out || tensor < 0 || tensor >= info->ntensors)
		return fr_err(err, FZ_ERR_INVALID, "fz_tensor_values: a NULL argument or no tensor %d", tensor);
	memset(out, 0, sizeof *out);
	const fr_store *st = info->storage_;
	if (!st || !st->values[tensor].set) return FZ_OK; /* an info filled by hand says nothing */
	const fr_values *v = &st->values[tensor];
	const fz_tensor_info *t = &info->tensors[tensor];
	out->known = 1, out->nondecreasing = v->nondecreasing, out->nonzero = v->nonzero, out->range = v->range;
	if (!sizes) {
		out->lo = v->lo_size < 0 ? v->lo : 0, out->hi = v->hi_size < 0 ? v->hi : 0;
		return FZ_OK;
	}
	int rc = value_at(info, t, v->lo_size, v->lo, sizes, &out->lo, err);
	if (!rc) rc = value_at(info, t, v->hi_size, v->hi, sizes, &out->hi, err);
	if (rc) return rc;
	if (out->lo > out->hi || (v->nonzero && !out->lo && !out->hi))
		return fr_err(err, FZ_ERR_BAD_SIZE, "%s: values %s%s hold nothing at these sizes (%lld..%lld): choose other sizes", t->name,
		              v->range, v->nonzero ? " nonzero" : "", out->lo, out->hi);
	return FZ_OK;
}

int fz_check_fits(const fz_artifact_info *info, const long long *sizes, char *err)
{
	if (!info || !sizes) return fr_err(err, FZ_ERR_INVALID, "fz_check_fits: a NULL argument");
	const fr_store *st = info->storage_;
	for (int i = 0; st && i < st->nfits; i++) { /* an info filled by hand says nothing */
		const fr_fit *f = &st->fits[i];
		const fz_tensor_info *g = &info->tensors[f->tensor];
		long long v;
		int rc = fr_dim_at(info, &f->dim, 0, sizes, &v, err);
		if (rc) return rc;
		if (v >= f->least) continue;
		return fr_err(err, FZ_ERR_BAD_SIZE, "input %s's domain %.17g..%.17g subscripts a dimension %s, which must be at least %lld: "
		              "%s is %lld at these sizes (choose larger sizes, or give %s a narrower domain)", g->name, g->domain_lo,
		              g->domain_hi, f->dim.dim[0], f->least, f->dim.dim[0], v, g->name);
	}
	return FZ_OK;
}

int fz_artifact_fits(const fz_artifact_info *info, int i, int *tensor, const char **dim, long long *least)
{
	if (!info) return -1;
	const fr_store *st = info->storage_;
	const int n = st ? st->nfits : 0;
	if (i >= 0 && i < n) {
		if (tensor) *tensor = st->fits[i].tensor;
		if (dim) *dim = st->fits[i].dim.dim[0];
		if (least) *least = st->fits[i].least;
	}
	return n;
}

int fz_tensor_shape_text(const fz_artifact_info *info, int tensor, char *buf, size_t cap)
{
	if (!buf || !cap) return -1;
	buf[0] = 0;
	if (!info || tensor < 0 || tensor >= info->ntensors) return -1;
	const fz_tensor_info *t = &info->tensors[tensor];
	size_t n = 0;
	for (int d = 0; d < (t->rank ? t->rank : 1); d++) {
		const char *w = t->rank ? t->dim[d] : "-";
		const size_t l = w ? strlen(w) : 0;
		if (!w || n + (d > 0) + l >= cap) return buf[0] = 0, -1;
		if (d) buf[n++] = ',';
		memcpy(buf + n, w, l + 1), n += l;
	}
	return (int)n;
}

const char *fz_tensor_inexact(const fz_artifact_info *info, int tensor)
{
	if (!info || !info->storage_ || tensor < 0 || tensor >= info->ntensors) return NULL;
	return ((const fr_store *)info->storage_)->inexact[tensor];
}
