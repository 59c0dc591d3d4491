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
	return fz_check_fits(info, sizes, err); /* the dimensions the inputs' domains reach */
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

static int count_params(const fz_artifact_info *info)
{
	int want = 0;
	for (int t = 0; t < info->ntensors; t++) want += info->tensors[t].role != FZ_TEMP;
	return want;
}

static int count_error(const fz_artifact_info *info, int want, const fz_arg *args, int nargs, char *err)
{
	return fr_err(err, FZ_ERR_INVALID, "%s takes %d arguments (its param lines, in order), given %d", info->fusion, want,
	              args ? nargs : 0);
}

/* argument a (from 1) g for tensor t, of n elements at the sizes: its
   element type, scalar or tensor, a tensor's pointer set unless it has
   no elements */
static int check_arg(const fz_artifact_info *info, int t, int a, const fz_arg *g, long long n, char *err)
{
	const fz_tensor_info *x = &info->tensors[t];
	const int scalar = x->rank == 0 && x->role == FZ_INPUT;
	if (!g->type || strcmp(g->type, x->type))
		return fr_err(err, FZ_ERR_INVALID, "argument %d (%s): %s expected, %s given", a, x->name, x->type,
		              g->type ? g->type : "no type");
	if (g->scalar != scalar)
		return fr_err(err, FZ_ERR_INVALID, "argument %d (%s): a %s expected, a %s given", a, x->name,
		              scalar ? "scalar input by value" : "tensor (device pointer)", g->scalar ? "scalar" : "tensor");
	if (!scalar && !g->ptr && n) return fr_err(err, FZ_ERR_INVALID, "argument %d (%s): a null device pointer", a, x->name);
	return FZ_OK;
}

/* the arguments against the param lines: count, then each as check_arg */
static int check_args(const fz_artifact_info *info, const long long *sizes, const fz_arg *args, int nargs, char *err)
{
	const int want = count_params(info);
	if (nargs != want || (nargs && !args)) return count_error(info, want, args, nargs, err);
	for (int t = 0, a = 0; t < info->ntensors; t++) {
		const fz_tensor_info *x = &info->tensors[t];
		if (x->role == FZ_TEMP) continue;
		const int scalar = x->rank == 0 && x->role == FZ_INPUT;
		long long n = 1;
		int rc = scalar ? FZ_OK : fz_tensor_shape(info, t, sizes, NULL, &n, err);
		if (!rc) rc = check_arg(info, t, a + 1, &args[a], n, err);
		if (rc) return rc;
		a++;
	}
	return FZ_OK;
}

/* one param's slot of the args struct: a tensor's pointer, a scalar's
   value as 8 bytes */
static unsigned long long arg_slot(const fz_tensor_info *x, const fz_arg *g)
{
	unsigned long long u;
	if (!g->scalar) return g->ptr;
	if (x->type[0] == 'f' || x->type[0] == 'b') memcpy(&u, &g->f, 8);
	else memcpy(&u, &g->i, 8);
	return u;
}

/* the args struct: the tensors in order (arguments, temps placed in the
   scratch), the sizes, the workspace's two pointers */
static void fill_args(const fz_artifact_info *info, const fz_arg *args, const long long *sizes,
                      const unsigned long long *place, const unsigned long long *ws, unsigned char *s)
{
	size_t o = 0;
	for (int t = 0, a = 0; t < info->ntensors; t++, o += 8) {
		const unsigned long long u = info->tensors[t].role != FZ_TEMP ? arg_slot(&info->tensors[t], &args[a++]) : place[t];
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

/* ---- a call prepared once per variant, sizes and scratch ---------- */

typedef struct fr_pparam {
	int tensor;              /* its info index (the args struct's slot) */
	long long n;             /* its elements at the sizes (1 for a scalar) */
} fr_pparam;

struct fz_prepared_call {
	fz_artifact *art;
	size_t args_size;
	int nargs, nops;
	fr_pparam param[FZ_MAX_TENSORS];
	/* the args struct with the temps, the sizes and the workspace placed;
	   each run copies it and writes the arguments' slots */
	unsigned char args[8 * (FZ_MAX_TENSORS + FZ_MAX_SIZES + 2)];
	/* the op list at the sizes: a launch with its kernel's index, a
	   memset with its tensor's (the pointer read from the args struct) */
	fz_op *ops;
	int *index;
};

int fz_call_prepare(fz_artifact *art, const char *variant, const long long *sizes, int nsizes, fz_ptr scratch,
                    fz_prepared_call **out)
{
	if (!art) return FZ_ERR_INVALID;
	if (!out) return fr_err(art->err, FZ_ERR_INVALID, "fz_call_prepare: out is NULL");
	*out = NULL;
	const fz_artifact_info *info = &art->info;
	const fr_variant *v;
	int rc = variant_of(info, variant, &v, art->err);
	if (!rc) rc = check_sizes(info, sizes, nsizes, art->err);
	if (rc) return rc;
	if (!scratch) return fr_err(art->err, FZ_ERR_INVALID, "no scratch: allocate fz_call_scratch's bytes, zeroed once");
	fz_prepared_call *p = calloc(1, sizeof *p);
	if (!p || !(p->ops = malloc((size_t)(v->nops ? v->nops : 1) * sizeof *p->ops)) ||
	    !(p->index = malloc((size_t)(v->nops ? v->nops : 1) * sizeof *p->index))) {
		if (p) free(p->ops), free(p);
		return fr_err(art->err, FZ_ERR_NO_MEMORY, "out of memory");
	}
	p->art = art, p->args_size = info->args_size;
	for (int t = 0; !rc && t < info->ntensors; t++) {
		const fz_tensor_info *x = &info->tensors[t];
		if (x->role == FZ_TEMP) continue;
		fr_pparam *q = &p->param[p->nargs++];
		q->tensor = t, q->n = 1;
		if (!(x->rank == 0 && x->role == FZ_INPUT)) rc = fz_tensor_shape(info, t, sizes, NULL, &q->n, art->err);
	}
	/* the args struct as fill_args makes it, the params' slots 0 */
	unsigned long long place[FZ_MAX_TENSORS] = {0}, ws[2], total;
	const long long sm = art->dev->sm_count > 0 ? art->dev->sm_count : 132;
	if (!rc) rc = layout(info, v, sizes, sm, scratch, place, ws, &total, art->err);
	if (!rc) {
		size_t o = 0;
		for (int t = 0; t < info->ntensors; t++, o += 8) memcpy(p->args + o, &place[t], 8);
		for (int i = 0; i < info->nsizes; i++, o += 8) memcpy(p->args + o, &sizes[i], 8);
		memcpy(p->args + o, &ws[0], 8), memcpy(p->args + o + 8, &ws[1], 8);
	}
	for (int i = 0; !rc && i < v->nops; i++) {
		const fr_op *op = &v->ops[i];
		fz_op o;
		int skip = 0;
		if (op->kind == FZ_OP_MEMSET) {
			o.kind = FZ_OP_MEMSET, o.kernel = info->tensors[op->tensor].name, o.ptr = 0;
			o.grid[0] = o.grid[1] = o.grid[2] = 0, o.block = 0;
			rc = tensor_bytes(info, op->tensor, sizes, &o.bytes, art->err);
			p->index[p->nops] = op->tensor;
		} else {
			rc = launch_op(info, op, sizes, sm, &o, &skip, art->err);
			/* the kernel launched: the entry point launch_op chose */
			for (int k = 0; !rc && !skip && k < info->nkernels; k++)
				if (info->kernels[k].name == o.kernel) p->index[p->nops] = k;
		}
		if (!rc && !skip) p->ops[p->nops++] = o;
	}
	if (rc) {
		fz_call_release(p);
		return rc;
	}
	*out = p;
	return FZ_OK;
}

int fz_call_run(fz_prepared_call *p, const fz_arg *args, int nargs, fz_stream *stream)
{
	if (!p) return FZ_ERR_INVALID;
	fz_artifact *art = p->art;
	const fz_artifact_info *info = &art->info;
	if (nargs != p->nargs || (nargs && !args)) return count_error(info, p->nargs, args, nargs, art->err);
	unsigned char s[sizeof p->args];
	memcpy(s, p->args, p->args_size);
	for (int a = 0; a < nargs; a++) {
		const fr_pparam *q = &p->param[a];
		int rc = check_arg(info, q->tensor, a + 1, &args[a], q->n, art->err);
		if (rc) return rc;
		const unsigned long long u = arg_slot(&info->tensors[q->tensor], &args[a]);
		memcpy(s + 8 * (size_t)q->tensor, &u, 8);
	}
	int rc = fr_enter(art->dev, art->err);
	if (rc) return rc;
	for (int i = 0; !rc && i < p->nops; i++) {
		if (p->ops[i].kind == FZ_OP_MEMSET) {
			fz_op o = p->ops[i];
			memcpy(&o.ptr, s + 8 * (size_t)p->index[i], 8);
			if (!o.ptr && o.bytes)
				rc = fr_err(art->err, FZ_ERR_INVALID, "op %d clears %s at a null device pointer", i, o.kernel);
			else
				rc = fr_run_op(art, &o, -1, s, stream, i);
		} else {
			rc = fr_run_op(art, &p->ops[i], p->index[i], s, stream, i);
		}
	}
	fr_leave(art->dev);
	return rc;
}

void fz_call_release(fz_prepared_call *p)
{
	if (!p) return;
	free(p->ops), free(p->index), free(p);
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
