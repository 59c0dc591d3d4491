/* fz_tensor_shape: a tensor's dimensions at given sizes, as the generated
 * code computes them (fusec/core/ir.c, dim_write_c): a derived dimension
 * max(B + K, 0) / D, or / S. Every step is overflow-checked, so no size on
 * a command line and no manifest can make a caller allocate a wrapped-round
 * count. */
#include "internal.h"

#define LIMIT (1ll << 62)

int fz_tensor_shape(const fz_artifact_info *info, int tensor, const long long *sizes, long long *dims,
                    long long *elements, char *err)
{
	if (!info || !sizes || !elements || tensor < 0 || tensor >= info->ntensors)
		return fr_err(err, FZ_ERR_INVALID, "fz_tensor_shape: a NULL argument or no tensor %d", tensor);
	const fz_tensor_info *t = &info->tensors[tensor];
	long long n = 1;
	for (int d = 0; d < t->rank; d++) {
		int use[2] = {t->dim_size[d], t->dim_per[d]};
		for (int u = 0; u < 2; u++)
			if (use[u] >= info->nsizes || (use[u] >= 0 && (sizes[use[u]] < 1 || sizes[use[u]] > LIMIT)))
				return fr_err(err, FZ_ERR_BAD_SIZE, "%s: size %s is %lld, not from 1 to 2^62", t->name,
				              use[u] < info->nsizes ? info->sizes[use[u]] : "?", use[u] < info->nsizes ? sizes[use[u]] : 0);
		long long v = t->dim_size[d] >= 0 ? sizes[t->dim_size[d]] : t->dim_value[d];
		if (__builtin_add_overflow(v, t->dim_add[d], &v) || v > LIMIT)
			return fr_err(err, FZ_ERR_BAD_SIZE, "%s: dimension %s overflows", t->name, t->dim[d]);
		if (v < 0) v = 0;
		v /= t->dim_per[d] >= 0 ? sizes[t->dim_per[d]] : t->dim_div[d] > 1 ? t->dim_div[d] : 1;
		if (dims) dims[d] = v;
		if (__builtin_mul_overflow(n, v, &n) || n > LIMIT / (t->elem_bytes > 0 ? t->elem_bytes : 1))
			return fr_err(err, FZ_ERR_BAD_SIZE, "%s: more than 2^62 bytes at these sizes", t->name);
	}
	*elements = n;
	return FZ_OK;
}
