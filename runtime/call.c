/* fz_call: a variant run from its manifest's launch recipe (recipe.c),
 * with no generated code: the arguments checked against the param lines,
 * the args struct filled and the scratch placed as the header's scratch
 * function does, the op list evaluated as its op-list function does, then
 * fz_run. The comparison with NAME.h's launchers is runtime/tests'
 * test_call.c (every shipped spec). */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static int variant_of(const fz_artifact_info *info, const char *variant, const fr_variant **v, char *err)
{
	if (!info) return fr_err(err, FZ_ERR_INVALID, "no artifact info");
	if (info->format < 2 || !info->storage_)
		return fr_err(err, FZ_ERR_VERSION, "%s: artifact format %d has no launch recipe (format 2, fusec 0.1.0 of issue 24 on): "
		              "regenerate it, or run it through its NAME.h", info->manifest ? info->manifest : "?", info->format);
	const int fused = variant && !strcmp(variant, "fused");
	if (!fused && !(variant && !strcmp(variant, "unfused")))
		return fr_err(err, FZ_ERR_INVALID, "variant '%s': fused or unfused", variant ? variant : "(null)");
	*v = &((const fr_store *)info->storage_)->recipe.v[fused];
	return FZ_OK;
}

static int check_sizes(const fz_artifact_info *info, const long long *sizes, int nsizes, char *err)
{
	if (nsizes != info->nsizes || (nsizes && !sizes))
		return fr_err(err, FZ_ERR_INVALID, "%s takes %d sizes, given %d", info->fusion, info->nsizes, sizes ? nsizes : 0);
	for (int i = 0; i < nsizes; i++)
		if (sizes[i] < 1 || sizes[i] > (1LL << 62))
			return fr_err(err, FZ_ERR_BAD_SIZE, "size %s = %lld: not from 1 to 2^62", info->sizes[i], sizes[i]);
	return FZ_OK;
}

/* the bytes of tensor t at these sizes */
static int tensor_bytes(const fz_artifact_info *info, int t, const long long *sizes, unsigned long long *bytes, char *err)
{
	long long n;
	int rc = fz_tensor_shape(info, t, sizes, NULL, &n, err);
	if (!rc) *bytes = (unsigned long long)n * (unsigned long long)info->tensors[t].elem_bytes;
	return rc;
}

/* The scratch as the header's fz_NAME_V_scratch lays it out: the stored
   temps (place[t], 0 for the others), then the partials, then the counters. */
static int layout(const fz_artifact_info *info, const fr_variant *v, const long long *sizes, long long sm,
                  unsigned long long base, unsigned long long *place, unsigned long long *ws, unsigned long long *total,
                  char *err)
{
	const fr_recipe *r = &((const fr_store *)info->storage_)->recipe;
	unsigned long long off = 0, b;
	long long parts = 0, cnt = 256, x;
	int rc = FZ_OK;
	for (int i = 0; !rc && i < v->nstored; i++) {
		rc = tensor_bytes(info, v->stored[i], sizes, &b, err);
		if (!rc && place) place[v->stored[i]] = base + off;
		if (!rc) off += fz_align(b); /* each below 2^62 (fz_tensor_shape): no wrap */
	}
	for (int i = 0; !rc && i < v->nparts; i++)
		if (!(rc = fr_eval(r, v->parts[i], sizes, sm, &x, err)) && x > parts) parts = x;
	for (int i = 0; !rc && i < v->ncounters; i++)
		if (!(rc = fr_eval(r, v->counters[i], sizes, sm, &x, err)) && x > cnt) cnt = x;
	if (rc) return rc;
	if (off > (1ull << 63) || (unsigned long long)parts > (1ull << 62) || (unsigned long long)cnt > (1ull << 62))
		return fr_err(err, FZ_ERR_BAD_SIZE, "the scratch passes 2^63 bytes at these sizes");
	ws[0] = base + off;
	off += fz_align(parts ? (unsigned long long)parts : 8);
	ws[1] = base + off;
	*total = off + (unsigned long long)cnt;
	return FZ_OK;
}

int fz_recipe_scratch(const fz_artifact_info *info, const char *variant, const long long *sizes, int nsizes, int sm,
                      unsigned long long *bytes, char *err)
{
	const fr_variant *v;
	unsigned long long ws[2];
	if (!bytes) return fr_err(err, FZ_ERR_INVALID, "fz_recipe_scratch: bytes is NULL");
	int rc = variant_of(info, variant, &v, err);
	if (!rc) rc = check_sizes(info, sizes, nsizes, err);
	return rc ? rc : layout(info, v, sizes, sm > 0 ? sm : 132, 0, NULL, ws, bytes, err);
}

/* the arguments against the param lines: count, element type, scalar or
   tensor, a tensor's pointer set unless it has no elements */
static int check_args(const fz_artifact_info *info, const long long *sizes, const fz_arg *args, int nargs, char *err)
{
	int want = 0;
	for (int t = 0; t < info->ntensors; t++) want += info->tensors[t].role != FZ_TEMP;
	if (nargs != want || (nargs && !args))
		return fr_err(err, FZ_ERR_INVALID, "%s takes %d arguments (its param lines, in order), given %d", info->fusion, want,
		              args ? nargs : 0);
	for (int t = 0, a = 0; t < info->ntensors; t++) {
		const fz_tensor_info *x = &info->tensors[t];
		if (x->role == FZ_TEMP) continue;
		const fz_arg *g = &args[a++];
		const int scalar = x->rank == 0 && x->role == FZ_INPUT;
		if (!g->type || strcmp(g->type, x->type))
			return fr_err(err, FZ_ERR_INVALID, "argument %d (%s): %s expected, %s given", a, x->name, x->type,
			              g->type ? g->type : "no type");
		if (g->scalar != scalar)
			return fr_err(err, FZ_ERR_INVALID, "argument %d (%s): a %s expected, a %s given", a, x->name,
			              scalar ? "scalar input by value" : "tensor (device pointer)", g->scalar ? "scalar" : "tensor");
		long long n = 1;
		int rc = scalar ? FZ_OK : fz_tensor_shape(info, t, sizes, NULL, &n, err);
		if (rc) return rc;
		if (!scalar && !g->ptr && n) return fr_err(err, FZ_ERR_INVALID, "argument %d (%s): a null device pointer", a, x->name);
	}
	return FZ_OK;
}

/* the args struct: the tensors in order (arguments, temps placed in the
   scratch), the sizes, the workspace's two pointers */
static void fill_args(const fz_artifact_info *info, const fz_arg *args, const long long *sizes,
                      const unsigned long long *place, const unsigned long long *ws, unsigned char *s)
{
	size_t o = 0;
	for (int t = 0, a = 0; t < info->ntensors; t++, o += 8) {
		unsigned long long u = place[t];
		if (info->tensors[t].role != FZ_TEMP) {
			const fz_arg *g = &args[a++];
			if (!g->scalar) u = g->ptr;
			else if (info->tensors[t].type[0] == 'f' || info->tensors[t].type[0] == 'b') memcpy(&u, &g->f, 8);
			else memcpy(&u, &g->i, 8);
		}
		memcpy(s + o, &u, 8);
	}
	for (int i = 0; i < info->nsizes; i++, o += 8) memcpy(s + o, &sizes[i], 8);
	memcpy(s + o, &ws[0], 8), memcpy(s + o + 8, &ws[1], 8);
}

/* a launch op at these sizes: *skip when its grid is empty */
static int launch_op(const fz_artifact_info *info, const fr_op *op, const long long *sizes, long long sm, fz_op *out,
                     int *skip, char *err)
{
	const fr_recipe *r = &((const fr_store *)info->storage_)->recipe;
	long long gx, gy = 1, block, head = 0;
	int rc = fr_eval(r, op->gx, sizes, sm, &gx, err);
	if (!rc && op->gy >= 0) rc = fr_eval(r, op->gy, sizes, sm, &gy, err);
	if (!rc) rc = fr_eval(r, op->block, sizes, sm, &block, err);
	if (!rc && op->head >= 0) rc = fr_eval(r, op->head, sizes, sm, &head, err);
	if (rc) return rc;
	if (op->always && gx == 0) gx = 1; /* it zeroes something for later kernels */
	*skip = !gx || !gy;
	if (*skip) return FZ_OK;
	if (gx < 0 || gx > 0x7fffffff || gy < 0 || gy > 65535 || block < 1 || block > 1024)
		return fr_err(err, FZ_ERR_BAD_SIZE, "kernel %s: grid %lld x %lld, block %lld at these sizes", info->kernels[op->kernel[0]].name,
		              gx, gy, block);
	int e = 0;
	if (op->head >= 0)
		while (e < op->nent && head > op->bound[e]) e++;
	if (e == op->nent)
		return fr_err(err, FZ_ERR_BAD_SIZE, "kernel %s: head size %lld is past its largest entry point's %lld",
		              info->kernels[op->kernel[0]].name, head, op->bound[op->nent - 1]);
	out->kind = FZ_OP_LAUNCH, out->kernel = info->kernels[op->kernel[e]].name;
	out->grid[0] = (unsigned)gx, out->grid[1] = (unsigned)gy, out->grid[2] = 1;
	out->block = (unsigned)block, out->ptr = out->bytes = 0;
	return FZ_OK;
}

int fz_recipe_ops(const fz_artifact_info *info, const char *variant, const long long *sizes, int nsizes, int sm,
                  const fz_arg *args, int nargs, fz_ptr scratch, void *args_struct, size_t args_size, fz_op *ops,
                  int max_ops, int *nops, char *err)
{
	const fr_variant *v;
	int rc = variant_of(info, variant, &v, err);
	if (!rc) rc = check_sizes(info, sizes, nsizes, err);
	if (!rc) rc = check_args(info, sizes, args, nargs, err);
	if (rc) return rc;
	if (!args_struct || args_size != info->args_size || !nops || (max_ops && !ops))
		return fr_err(err, FZ_ERR_ARGS_SIZE, "fz_recipe_ops: args struct of %zu bytes (%s's is %zu), or no op list", args_size,
		              info->fusion, info->args_size);
	if (!scratch) return fr_err(err, FZ_ERR_INVALID, "no scratch: allocate fz_call_scratch's bytes, zeroed once");
	unsigned long long place[FZ_MAX_TENSORS] = {0}, ws[2], total;
	if (sm <= 0) sm = 132;
	if ((rc = layout(info, v, sizes, sm, scratch, place, ws, &total, err))) return rc;
	fill_args(info, args, sizes, place, ws, args_struct);
	int n = 0;
	for (int i = 0; i < v->nops; i++) {
		const fr_op *op = &v->ops[i];
		fz_op o;
		int skip = 0;
		if (op->kind == FZ_OP_MEMSET) {
			unsigned long long at;
			memcpy(&at, (unsigned char *)args_struct + 8 * (size_t)op->tensor, 8);
			o.kind = FZ_OP_MEMSET, o.kernel = info->tensors[op->tensor].name, o.ptr = at;
			o.grid[0] = o.grid[1] = o.grid[2] = 0, o.block = 0;
			rc = tensor_bytes(info, op->tensor, sizes, &o.bytes, err);
		} else {
			rc = launch_op(info, op, sizes, sm, &o, &skip, err);
		}
		if (rc) return rc;
		if (skip) continue;
		if (n == max_ops) return fr_err(err, FZ_ERR_INVALID, "fz_recipe_ops: more than %d ops", max_ops);
		ops[n++] = o;
	}
	*nops = n;
	return FZ_OK;
}

int fz_call_scratch(fz_artifact *art, const char *variant, const long long *sizes, int nsizes, unsigned long long *bytes)
{
	if (!art) return FZ_ERR_INVALID;
	return fz_recipe_scratch(&art->info, variant, sizes, nsizes, art->dev->sm_count, bytes, art->err);
}

int fz_call(fz_artifact *art, const char *variant, const long long *sizes, int nsizes, const fz_arg *args, int nargs,
            fz_ptr scratch, fz_stream *stream)
{
	if (!art) return FZ_ERR_INVALID;
	/* on the stack for the usual few ops; the recipe's most otherwise */
	unsigned char s[8 * (FZ_MAX_TENSORS + FZ_MAX_SIZES + 2)];
	fz_op few[32], *ops = few;
	const fr_variant *v;
	int rc = variant_of(&art->info, variant, &v, art->err), n = 0;
	if (rc) return rc;
	if (v->nops > 32 && !(ops = malloc((size_t)v->nops * sizeof *ops))) return fr_err(art->err, FZ_ERR_NO_MEMORY, "out of memory");
	rc = fz_recipe_ops(&art->info, variant, sizes, nsizes, art->dev->sm_count, args, nargs, scratch, s, art->info.args_size, ops,
	                   v->nops, &n, art->err);
	if (!rc) rc = fz_run(art, ops, n, s, art->info.args_size, stream);
	if (ops != few) free(ops);
	return rc;
}

int fz_artifact_open_info(const char *path, fz_artifact_info **out, char *err)
{
	if (!out) return fr_err(err, FZ_ERR_INVALID, "fz_artifact_open_info: out is NULL");
	*out = calloc(1, sizeof **out);
	if (!*out) return fr_err(err, FZ_ERR_NO_MEMORY, "out of memory");
	int rc = fz_artifact_verify(path, *out, err);
	if (rc) free(*out), *out = NULL;
	return rc;
}

void fz_artifact_close_info(fz_artifact_info *info)
{
	if (!info) return;
	fz_artifact_info_free(info);
	free(info);
}
