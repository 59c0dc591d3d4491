/* The generic call (fz_call: the manifest's launch recipe, no generated
 * code) against the typed launchers of every shipped fusion's NAME.h:
 *  - without a GPU, the scratch bytes, the args struct (temps and
 *    workspace placed) and the op list of both variants at many sizes and
 *    SM counts, byte for byte and op for op;
 *  - under the fake driver, what each makes the driver do (the launches
 *    with their grids, blocks, shared memory and parameter bytes, the
 *    memsets), line for line;
 *  - the refusals: argument count, types, scalars, pointers, sizes, the
 *    variant, a format-1 artifact, malformed recipe lines.
 * usage: test_call GENERATED_DIR FAKE_LIBCUDA TMP_DIR */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "call_table.h"
#include "testutil.h"

enum { MAXOPS = 600 };
static int (*log_count)(void);
static const char *(*log_line)(int);
static void (*log_start)(void);

/* the arguments of a call: tensors at made-up (or given) addresses, scalars */
static int make_args(const fz_artifact_info *info, const unsigned long long *ptr, fz_arg *args)
{
	int n = 0;
	for (int t = 0; t < info->ntensors; t++) {
		const fz_tensor_info *x = &info->tensors[t];
		if (x->role == FZ_TEMP) continue;
		fz_arg *a = &args[n++];
		memset(a, 0, sizeof *a);
		a->type = x->type;
		a->scalar = x->rank == 0 && x->role == FZ_INPUT;
		a->f = 0.25 + t, a->i = 3 + t;
		a->ptr = ptr ? ptr[t] : 0x100000ull * (unsigned long long)(t + 1);
	}
	return n;
}

/* the header's args struct for the same call: its fields are 8 bytes each,
   the tensors then the sizes then the workspace (fuserun.h) */
static void header_args(const fz_artifact_info *info, const fz_arg *args, const long long *sizes, unsigned char *s)
{
	memset(s, 0, info->args_size);
	for (int t = 0, a = 0; t < info->ntensors; t++) {
		if (info->tensors[t].role == FZ_TEMP) continue;
		const fz_arg *g = &args[a++];
		const void *v = !g->scalar ? (const void *)&g->ptr : strchr("fb", info->tensors[t].type[0]) ? (const void *)&g->f
		                                                                                           : (const void *)&g->i;
		memcpy(s + 8 * t, v, 8);
	}
	memcpy(s + 8 * info->ntensors, sizes, 8 * (size_t)info->nsizes);
}

/* one case without a GPU: "" when the recipe gives what the header gives */
static void compare_case(const call_spec *cs, const fz_artifact_info *info, int fused, const long long *sizes, int sm,
                         char *why, size_t cap)
{
	const char *v = fused ? "fused" : "unfused";
	static fz_op hops[MAXOPS], rops[MAXOPS];
	unsigned char hs[8 * (FZ_MAX_TENSORS + FZ_MAX_SIZES + 2)], rs[sizeof hs];
	fz_arg args[FZ_MAX_TENSORS];
	char err[FZ_ERRMSG_SIZE] = "";
	const int nargs = make_args(info, NULL, args);
	const unsigned long long base = 0x40000000ull;
	header_args(info, args, sizes, hs);
	unsigned long long hbytes = cs->scratch[fused](hs, 0, sm), rbytes = 0;
	cs->scratch[fused](hs, base, sm);
	const int hn = cs->ops[fused](hs, sm, hops, MAXOPS);
	int rn = -1, rc = fz_recipe_scratch(info, v, sizes, info->nsizes, sm, &rbytes, err);
	if (!rc) rc = fz_recipe_ops(info, v, sizes, info->nsizes, sm, args, nargs, base, rs, info->args_size, rops, MAXOPS, &rn, err);
	if (hn < 0 || rc) { /* past an attention kernel's largest head size: both refuse */
		if ((hn < 0) != (rc != 0) || (rc && rc != FZ_ERR_BAD_SIZE))
			snprintf(why, cap, "header ops %d, recipe %s: %s", hn, fz_strerror(rc), err);
		return;
	}
	if (hbytes != rbytes) snprintf(why, cap, "scratch: header %llu bytes, recipe %llu", hbytes, rbytes);
	else if (memcmp(hs, rs, info->args_size)) snprintf(why, cap, "the args structs differ");
	else if (hn != rn) snprintf(why, cap, "header %d ops, recipe %d", hn, rn);
	for (int i = 0; !*why && i < hn; i++) {
		const fz_op *h = &hops[i], *r = &rops[i];
		int same = h->kind == r->kind && !strcmp(h->kernel, r->kernel);
		if (same && h->kind == FZ_OP_LAUNCH)
			same = !memcmp(h->grid, r->grid, sizeof h->grid) && h->block == r->block;
		if (same && h->kind == FZ_OP_MEMSET) same = h->ptr == r->ptr && h->bytes == r->bytes;
		if (!same)
			snprintf(why, cap, "op %d: header %s %u,%u,%u x %u, recipe %s %u,%u,%u x %u", i, h->kernel, h->grid[0], h->grid[1],
			         h->grid[2], h->block, r->kernel, r->grid[0], r->grid[1], r->grid[2], r->block);
	}
}

static void test_no_gpu(const call_spec *cs, const fz_artifact_info *info)
{
	static const long long every[] = {1, 2, 7, 64, 1000, 4099};
	/* a second size of 40009: softmax's row (R, C) wider than 1024 threads'
	   registers, streamed (row_threads_s's 512); the others small, so that
	   no tensor passes the runtime's 2^62 bytes */
	static const long long wide[] = {3, 40009, 5, 2, 7, 3, 2, 40009};
	static const long long mixed[] = {3, 64, 1000, 37, 129, 5, 2, 300};
	static const int sms[] = {0, 132, 7, 1};
	char why[512] = "", name[160];
	int cases = 0;
	long long sizes[FZ_MAX_SIZES];
	for (int e = 0; e <= 7 && !*why; e++) {
		for (int i = 0; i < info->nsizes; i++) sizes[i] = e < 6 ? every[e] : e == 6 ? wide[i % 8] : mixed[i % 8];
		for (int s = 0; s < 4 && !*why; s++)
			for (int f = 0; f < 2 && !*why; f++, cases++) {
				compare_case(cs, info, f, sizes, sms[s], why, sizeof why);
				if (*why) {
					char at[128];
					snprintf(at, sizeof at, " (%s, sizes %s %lld..., sm %d)", f ? "fused" : "unfused", e < 6 ? "all" : e == 6 ? "wide" : "mixed",
					         sizes[0], sms[s]);
					strncat(why, at, sizeof why - strlen(why) - 1);
				}
			}
	}
	snprintf(name, sizeof name, "recipe = %s.h: scratch, args and op list (%d cases)", cs->name, cases);
	check(!*why, name, why);
}

/* under the fake driver: the typed launcher and fz_call, the driver's log compared */
static void test_fake(const call_spec *cs, fz_device *dev, int sm)
{
	char err[FZ_ERRMSG_SIZE], path[4096], name[200], why[600] = "";
	fz_artifact *art = NULL;
	snprintf(path, sizeof path, "%s/%s.manifest", gen_dir, cs->name);
	if (fz_artifact_load(dev, path, &art)) {
		snprintf(name, sizeof name, "fz_call = %s's typed launchers on the fake driver", cs->name);
		check(0, name, fz_device_error(dev));
		return;
	}
	const fz_artifact_info *info = fz_artifact_get_info(art);
	long long sizes[FZ_MAX_SIZES];
	unsigned long long ptr[FZ_MAX_TENSORS] = {0};
	for (int i = 0; i < info->nsizes; i++) sizes[i] = 5 + 3 * i;
	int rc = 0, lines = 0;
	for (int t = 0; !rc && t < info->ntensors; t++) {
		long long n;
		if (info->tensors[t].role == FZ_TEMP) continue;
		rc = fz_tensor_shape(info, t, sizes, NULL, &n, err);
		if (!rc) rc = fz_alloc(dev, (size_t)n * (size_t)info->tensors[t].elem_bytes + 8, &ptr[t]);
	}
	fz_arg args[FZ_MAX_TENSORS];
	const int nargs = make_args(info, ptr, args);
	unsigned char hs[8 * (FZ_MAX_TENSORS + FZ_MAX_SIZES + 2)];
	for (int f = 0; !rc && f < 2 && !*why; f++) {
		const char *v = f ? "fused" : "unfused";
		unsigned long long bytes = 0;
		fz_ptr scratch = 0;
		rc = fz_call_scratch(art, v, sizes, info->nsizes, &bytes);
		if (!rc) rc = fz_alloc(dev, bytes, &scratch);
		if (!rc) rc = fz_memset(dev, scratch, 0, bytes, NULL);
		header_args(info, args, sizes, hs);
		cs->scratch[f](hs, scratch, sm);
		char hlog[64][256];
		int hn = 0;
		log_start();
		if (!rc) rc = cs->run[f](art, hs, sm, NULL);
		for (hn = 0; hn < log_count() && hn < 64; hn++) snprintf(hlog[hn], sizeof hlog[hn], "%s", log_line(hn));
		log_start();
		if (!rc) rc = fz_call(art, v, sizes, info->nsizes, args, nargs, scratch, NULL);
		if (!rc && hn != log_count()) snprintf(why, sizeof why, "%s: the header made %d driver calls, fz_call %d", v, hn, log_count());
		for (int i = 0; !rc && !*why && i < hn; i++)
			if (strcmp(hlog[i], log_line(i)))
				snprintf(why, sizeof why, "%s, call %d: header '%s', fz_call '%s'", v, i, hlog[i], log_line(i));
		/* the same call prepared, run twice (the handle reused) */
		fz_prepared_call *pc = NULL;
		if (!rc && !*why) rc = fz_call_prepare(art, v, sizes, info->nsizes, scratch, &pc);
		for (int k = 0; k < 2 && !rc && !*why; k++) {
			log_start();
			rc = fz_call_run(pc, args, nargs, NULL);
			if (!rc && hn != log_count())
				snprintf(why, sizeof why, "%s: the header made %d driver calls, fz_call_run %d", v, hn, log_count());
			for (int i = 0; !rc && !*why && i < hn; i++)
				if (strcmp(hlog[i], log_line(i)))
					snprintf(why, sizeof why, "%s, call %d (run %d): header '%s', fz_call_run '%s'", v, i, k, hlog[i], log_line(i));
		}
		fz_call_release(pc);
		lines += hn;
		if (rc) snprintf(why, sizeof why, "%s: %s", v, fz_artifact_error(art));
		fz_free(dev, scratch);
	}
	if (!*why && !lines) snprintf(why, sizeof why, "nothing was launched");
	for (int t = 0; t < info->ntensors; t++) fz_free(dev, ptr[t]);
	snprintf(name, sizeof name, "fz_call, fz_call_run = %s's typed launchers on the fake driver (%d launches and memsets)", cs->name, lines);
	check(!*why, name, why);
	fz_artifact_unload(art);
}

/* A tile kernel's tensor maps as the runtime makes them for fz_call (issue 25):
   want[] the fake driver's tensormap lines, A's then B's, at sizes M=40, K=64,
   N=48 (rows 16-byte aligned, so the maps are made) */
static void tile_maps_case(fz_device *dev, const char *spec, const char *const want[2], const char *what)
{
	char err[FZ_ERRMSG_SIZE], path[4096], why[600] = "";
	fz_artifact *art = NULL;
	snprintf(path, sizeof path, "%s/%s.manifest", gen_dir, spec);
	if (!check(!fz_artifact_load(dev, path, &art), what, fz_device_error(dev))) return;
	const fz_artifact_info *info = fz_artifact_get_info(art);
	long long sizes[FZ_MAX_SIZES];
	unsigned long long ptr[FZ_MAX_TENSORS] = {0};
	for (int i = 0; i < info->nsizes; i++) sizes[i] = !strcmp(info->sizes[i], "M") ? 40 : !strcmp(info->sizes[i], "K") ? 64 : 48;
	int rc = 0;
	for (int t = 0; !rc && t < info->ntensors; t++) {
		long long n;
		if (info->tensors[t].role == FZ_TEMP) continue;
		rc = fz_tensor_shape(info, t, sizes, NULL, &n, err);
		if (!rc) rc = fz_alloc(dev, (size_t)n * (size_t)info->tensors[t].elem_bytes + 8, &ptr[t]);
	}
	fz_arg args[FZ_MAX_TENSORS];
	const int nargs = make_args(info, ptr, args);
	unsigned long long bytes = 0;
	fz_ptr scratch = 0;
	if (!rc) rc = fz_call_scratch(art, "fused", sizes, info->nsizes, &bytes);
	if (!rc) rc = fz_alloc(dev, bytes ? bytes : 1, &scratch);
	if (!rc) rc = fz_memset(dev, scratch, 0, bytes ? bytes : 1, NULL);
	log_start();
	if (!rc) rc = fz_call(art, "fused", sizes, info->nsizes, args, nargs, scratch, NULL);
	if (rc) snprintf(why, sizeof why, "%s", fz_artifact_error(art));
	int seen = 0;
	for (int i = 0; !rc && i < log_count() && seen < 2; i++)
		if (!strncmp(log_line(i), "tensormap ", 10) && strcmp(log_line(i), want[seen++]))
			snprintf(why, sizeof why, "map %d: '%s', want '%s'", seen - 1, log_line(i), want[seen - 1]);
	if (!rc && !*why && seen != 2) snprintf(why, sizeof why, "%d tensor maps made, want 2", seen);
	for (int t = 0; t < info->ntensors; t++) fz_free(dev, ptr[t]);
	fz_free(dev, scratch);
	check(!*why, what, why);
	fz_artifact_unload(art);
}

static void tile_maps(fz_device *dev)
{
	/* tf32 A(m,k) B(k,n) as C^T = B^T A^T: B [K,N] m-major, boxes of 32 n x 32 k rows; A [M,K] k-major, 32 k x 64 m rows */
	static const char *const tf32[2] = {"tensormap type=7 dims=48,64 stride=192 box=32,32", "tensormap type=7 dims=64,40 stride=256 box=32,64"};
	tile_maps_case(dev, "matmul_bias_tf32", tf32, "tf32 tile maps: f32 elements, B first (C^T), boxes of 128 bytes by a stage's k (tma-rows=32,64)");
	/* bf16 A(k,m): A [K,M] in boxes of 64 m x 64 k rows, B [K,N] 64 n x 64 k rows */
	static const char *const at[2] = {"tensormap type=9 dims=40,64 stride=80 box=64,64", "tensormap type=9 dims=48,64 stride=96 box=64,64"};
	tile_maps_case(dev, "matmul_at_bias_relu_bf16", at, "bf16 A(k,m) tile maps: A's boxes of 64 k rows (tma-rows=64,64)");
	/* the default: A [M,K] 64 k x 128 m rows */
	static const char *const plain[2] = {"tensormap type=9 dims=64,40 stride=128 box=64,128", "tensormap type=9 dims=48,64 stride=96 box=64,64"};
	tile_maps_case(dev, "matmul_bias_relu_bf16", plain, "bf16 A(m,k) tile maps: boxes of 128 and 64 rows");
	/* f8e4m3 A [M,K] and B [N,K], both k-major: bytes (type 0, UINT8) in boxes of 128 elements by 128 and 64 rows */
	static const char *const fp8[2] = {"tensormap type=0 dims=64,40 stride=64 box=128,128", "tensormap type=0 dims=64,48 stride=64 box=128,64"};
	tile_maps_case(dev, "matmul_bias_relu_fp8", fp8, "fp8 tile maps: e4m3 bytes, 128 k a box");
}

/* the checks of the arguments, on kl_divergence (q, p: f32 [N]; kl: f32 output) */
static void call_refusals(void)
{
	char err[FZ_ERRMSG_SIZE], path[4096];
	fz_artifact_info *info = NULL;
	snprintf(path, sizeof path, "%s/kl_divergence.manifest", gen_dir);
	if (!check(!fz_artifact_open_info(path, &info, err), "fz_artifact_open_info", err)) return;
	check(info->format == 2, "a format-2 manifest says so", NULL);
	fz_arg a[3];
	long long n = 100, bad = 0;
	unsigned char s[8 * (FZ_MAX_TENSORS + FZ_MAX_SIZES + 2)];
	fz_op ops[8];
	int nops;
	make_args(info, NULL, a);
#define OPS(args, nargs, sz, ns, variant, scratch) \
	fz_recipe_ops(info, variant, sz, ns, 132, args, nargs, scratch, s, info->args_size, ops, 8, &nops, err)
	check(!OPS(a, 3, &n, 1, "fused", 4096) && nops == 1, "the arguments as the manifest says: one launch", err);
	expect("too few arguments", OPS(a, 2, &n, 1, "fused", 4096), FZ_ERR_INVALID, err, "takes 3 arguments", "given 2", NULL);
	expect("no sizes", OPS(a, 3, &n, 0, "fused", 4096), FZ_ERR_INVALID, err, "takes 1 sizes, given 0", NULL);
	expect("a size of 0", OPS(a, 3, &bad, 1, "fused", 4096), FZ_ERR_BAD_SIZE, err, "size N = 0", NULL);
	expect("an unknown variant", OPS(a, 3, &n, 1, "fastest", 4096), FZ_ERR_INVALID, err, "variant 'fastest'", NULL);
	expect("no scratch", OPS(a, 3, &n, 1, "fused", 0), FZ_ERR_INVALID, err, "no scratch", NULL);
	a[1].type = "f16";
	expect("an argument of another element type", OPS(a, 3, &n, 1, "fused", 4096), FZ_ERR_INVALID, err, "argument 2 (p): f32 expected, f16 given", NULL);
	a[1].type = NULL;
	expect("an argument without a type", OPS(a, 3, &n, 1, "fused", 4096), FZ_ERR_INVALID, err, "argument 2 (p)", "no type", NULL);
	a[1].type = "f32", a[1].scalar = 1;
	expect("a scalar for a tensor", OPS(a, 3, &n, 1, "fused", 4096), FZ_ERR_INVALID, err, "argument 2 (p): a tensor", NULL);
	a[1].scalar = 0, a[1].ptr = 0;
	expect("a null device pointer", OPS(a, 3, &n, 1, "fused", 4096), FZ_ERR_INVALID, err, "argument 2 (p): a null device pointer", NULL);
	a[1].ptr = 64;
	expect("an args struct of another size", fz_recipe_ops(info, "fused", &n, 1, 132, a, 3, 4096, s, 8, ops, 8, &nops, err),
	       FZ_ERR_ARGS_SIZE, err, "args struct of 8 bytes", NULL);
	expect("an op list too short", OPS(a, 3, &n, 1, "unfused", 4096) == 0 ? fz_recipe_ops(info, "unfused", &n, 1, 132, a, 3, 4096, s,
	       info->args_size, ops, 1, &nops, err) : -1, FZ_ERR_INVALID, err, "more than 1 ops", NULL);
	fz_artifact_close_info(info);
	fz_artifact_close_info(NULL);
	/* attention: the head size past the largest entry point's bound */
	snprintf(path, sizeof path, "%s/attention.manifest", gen_dir);
	if (!fz_artifact_open_info(path, &info, err)) {
		fz_arg b[5];
		make_args(info, NULL, b);
		long long sz[4] = {2, 64, 300, 64}; /* B, T, D, S */
		expect("attention: a head size past the largest bucket", OPS(b, 5, sz, 4, "fused", 4096), FZ_ERR_BAD_SIZE, err,
		       "head size 300 is past its largest entry point's 256", NULL);
		sz[2] = 100;
		check(!OPS(b, 5, sz, 4, "fused", 4096) && nops == 1 && !strcmp(ops[0].kernel, "attention_f0_d128"),
		      "attention: head size 100 launches the d128 entry point", err);
		fz_artifact_close_info(info);
	}
#undef OPS
}

/* the prepared call's refusals, on kl_divergence under the fake driver:
   at prepare (variant, sizes, scratch), at each run (the arguments) */
static void prepared_refusals(fz_device *dev)
{
	char path[4096];
	fz_artifact *art = NULL;
	snprintf(path, sizeof path, "%s/kl_divergence.manifest", gen_dir);
	if (!check(!fz_artifact_load(dev, path, &art), "kl_divergence loads on the fake device", fz_device_error(dev))) return;
	const fz_artifact_info *info = fz_artifact_get_info(art);
	long long n = 100, bad = 0;
	fz_ptr scratch = 0, buf = 0;
	unsigned long long bytes = 0;
	fz_prepared_call *pc = NULL;
	if (fz_call_scratch(art, "fused", &n, 1, &bytes) || fz_alloc(dev, bytes, &scratch) || fz_alloc(dev, 4096, &buf)) {
		check(0, "fz_call_scratch and fz_alloc for the prepared call", fz_artifact_error(art));
		fz_artifact_unload(art);
		return;
	}
	expect("prepare: an unknown variant", fz_call_prepare(art, "fastest", &n, 1, scratch, &pc), FZ_ERR_INVALID, fz_artifact_error(art),
	       "variant 'fastest'", NULL);
	expect("prepare: a size of 0", fz_call_prepare(art, "fused", &bad, 1, scratch, &pc), FZ_ERR_BAD_SIZE, fz_artifact_error(art),
	       "size N = 0", NULL);
	expect("prepare: no sizes", fz_call_prepare(art, "fused", &n, 0, scratch, &pc), FZ_ERR_INVALID, fz_artifact_error(art),
	       "takes 1 sizes, given 0", NULL);
	expect("prepare: no scratch", fz_call_prepare(art, "fused", &n, 1, 0, &pc), FZ_ERR_INVALID, fz_artifact_error(art), "no scratch", NULL);
	check(!pc, "a refused prepare leaves no handle", NULL);
	if (check(!fz_call_prepare(art, "fused", &n, 1, scratch, &pc), "prepare kl_divergence fused at N = 100", fz_artifact_error(art))) {
		fz_arg a[3];
		unsigned long long ptr[FZ_MAX_TENSORS] = {0};
		for (int t = 0; t < info->ntensors; t++) ptr[t] = buf + 1024 * (unsigned long long)t;
		make_args(info, ptr, a);
		check(!fz_call_run(pc, a, 3, NULL), "run: the arguments as the manifest says", fz_artifact_error(art));
		expect("run: too few arguments", fz_call_run(pc, a, 2, NULL), FZ_ERR_INVALID, fz_artifact_error(art), "takes 3 arguments",
		       "given 2", NULL);
		a[1].type = "f16";
		expect("run: an argument of another element type", fz_call_run(pc, a, 3, NULL), FZ_ERR_INVALID, fz_artifact_error(art),
		       "argument 2 (p): f32 expected, f16 given", NULL);
		a[1].type = "f32", a[1].scalar = 1;
		expect("run: a scalar for a tensor", fz_call_run(pc, a, 3, NULL), FZ_ERR_INVALID, fz_artifact_error(art),
		       "argument 2 (p): a tensor", NULL);
		a[1].scalar = 0, a[2].ptr = 0;
		expect("run: a null device pointer", fz_call_run(pc, a, 3, NULL), FZ_ERR_INVALID, fz_artifact_error(art),
		       "argument 3 (kl): a null device pointer", NULL);
		a[2].ptr = ptr[2];
		check(!fz_call_run(pc, a, 3, NULL), "run: the handle still runs after refusals", fz_artifact_error(art));
		expect("run: no handle", fz_call_run(NULL, a, 3, NULL), FZ_ERR_INVALID, "", NULL);
	}
	fz_call_release(pc);
	fz_call_release(NULL);
	fz_free(dev, buf), fz_free(dev, scratch);
	fz_artifact_unload(art);
}

/* format 1 (no recipe) loads and is refused by fz_call alone; malformed recipes are refused at verification */
static void call_formats(void)
{
	char err[FZ_ERRMSG_SIZE], p[4096];
	const char *dir = copy_artifact("kl_divergence", "format1");
	edit(path2(p, dir, "kl_divergence.manifest"), "fusec-artifact 2\n", "fusec-artifact 1\n", 1);
	fz_artifact_info *info = NULL;
	unsigned long long bytes;
	long long n = 10;
	if (check(!fz_artifact_open_info(p, &info, err), "a format-1 manifest still verifies (its recipe lines ignored)", err)) {
		expect("fz_call refuses a format-1 artifact: no recipe", fz_recipe_scratch(info, "fused", &n, 1, 132, &bytes, err),
		       FZ_ERR_VERSION, err, "format 1 has no launch recipe", "regenerate", NULL);
		fz_artifact_close_info(info);
	}
	dir = copy_artifact("kl_divergence", "format3");
	edit(path2(p, dir, "kl_divergence.manifest"), "fusec-artifact 2\n", "fusec-artifact 3\n", 1);
	expect("a format-3 manifest is refused", verify(dir, "kl_divergence.manifest", err), FZ_ERR_VERSION, err, "formats 1 to 2", NULL);
	static const struct { const char *from, *to, *why; } bad[] = {
		{"op fused launch kl_divergence_f0 grid=grid(1*N,", "op fused launch kl_divergence_f0 grid=grod(1*N,", "unknown function 'grod'"},
		{"op fused launch kl_divergence_f0 grid=grid(1*N,", "op fused launch kl_divergence_f0 grid=grid(1*Q,", "'Q' is no size"},
		{"op fused launch kl_divergence_f0 grid=grid(1*N,1024,$sm*6),1", "op fused launch kl_divergence_f0 grid=grid(1*N,1024,$sm*6)",
		 "grid=X,Y expected"},
		{"op fused launch kl_divergence_f0 grid=grid(1*N,1024,$sm*6),1 block=256", "op fused launch kl_divergence_f0 grid=grid(1*N,1024,$sm*6),1 block=256)",
		 "unexpected ')'"},
		{"op fused launch kl_divergence_f0", "op fused launch kl_divergence_u0", "a kernel of the other variant"},
		{"op fused launch kl_divergence_f0", "op fused launch nothing_here", "no kernel line before it"},
		{"op fused launch kl_divergence_f0", "op fused memset q\nop fused launch kl_divergence_f0", "names no output or temp"},
		{"op unfused launch kl_divergence_u1", "op unfused launch kl_divergence_u0", "launches no kernel kl_divergence_u1"},
		{"stored unfused t", "stored unfused q", "names no temp"},
		{"parts fused (grid(1*N,", NULL, "nested deeper"}, /* 70 parentheses */
		{"op fused launch kl_divergence_f0 grid=grid(1*N,", "op fused launch kl_divergence_f0:64 grid=grid(1*N,", "head= goes with"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char casename[32], name[160];
		snprintf(casename, sizeof casename, "recipe%zu", i);
		dir = copy_artifact("kl_divergence", casename);
		char deep[128] = "parts fused ";
		if (!bad[i].to) memset(deep + 12, '(', 70), strcpy(deep + 82, "grid(1*N,");
		edit(path2(p, dir, "kl_divergence.manifest"), bad[i].from, bad[i].to ? bad[i].to : deep, 1);
		snprintf(name, sizeof name, "a malformed recipe is refused: %s", bad[i].why);
		expect(name, verify(dir, "kl_divergence.manifest", err), FZ_ERR_FORMAT, err, bad[i].why, NULL);
	}
}

/* fz_row_lanes in closed form (the kernels' and the launch's) against the
   doubling loop it replaced, over every width up to 2^18 columns and some
   past 2^40, for the caches the planner and the tuner can pick */
static void row_lanes_table(void)
{
	int bad = 0;
	long long n = 0;
	for (int per = 1; per <= 24; per++)
		for (long long c = 0; c < (1LL << 18) + 70; c += c < 4096 ? 1 : 7, n++) {
			for (int big = 0; big < 2; big++) {
				const long long cols = big ? c * 1048573LL + (1LL << 40) : c, nv = (cols + 3) / 4;
				int g = nv > 1 ? 2 : 1;
				while (g < 1024 && (long long)g * per < nv) g *= 2;
				if (fz_row_lanes(cols, per) != g && !bad++)
					fprintf(stderr, "fz_row_lanes(%lld, %d) = %d, the loop gives %d\n", cols, per, fz_row_lanes(cols, per), g);
			}
		}
	char what[96];
	snprintf(what, sizeof what, "%lld widths x 24 caches, %d differ", n / 24, bad);
	check(!bad, "fz_row_lanes in closed form gives the doubling loop's lanes", what);
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: test_call GENERATED_DIR FAKE_LIBCUDA TMP_DIR\n");
		return 2;
	}
	gen_dir = argv[1], fake_so = argv[2], tmp_dir = argv[3];
	setvbuf(stdout, NULL, _IOLBF, 0);
	char err[FZ_ERRMSG_SIZE], path[4096];
	for (int i = 0; i < ncall_specs; i++) {
		fz_artifact_info info;
		snprintf(path, sizeof path, "%s/%s.manifest", gen_dir, call_specs[i].name);
		if (!check(!fz_artifact_verify(path, &info, err), path, err)) continue;
		check(info.args_size == call_specs[i].args_size, "the manifest's args size is the header's struct's", call_specs[i].name);
		test_no_gpu(&call_specs[i], &info);
		fz_artifact_info_free(&info);
	}
	row_lanes_table();
	call_refusals();
	call_formats();
	{ /* inexact C tf32: matmul_bias_tf32's output, not its inputs; none in a 16-bit product's */
		fz_artifact_info info;
		snprintf(path, sizeof path, "%s/matmul_bias_tf32.manifest", gen_dir);
		if (check(!fz_artifact_verify(path, &info, err), path, err)) {
			const char *c = fz_tensor_inexact(&info, 3), *a = fz_tensor_inexact(&info, 0);
			check(!strcmp(info.tensors[3].name, "C") && c && !strcmp(c, "tf32") && !a, "fz_tensor_inexact: C through tf32, A not",
			      c ? c : "(null)");
			fz_artifact_info_free(&info);
		}
		snprintf(path, sizeof path, "%s/matmul_bias_relu_fp8.manifest", gen_dir);
		if (check(!fz_artifact_verify(path, &info, err), path, err)) {
			const int ci = info.ntensors > 5 ? 5 : 0;
			const char *c = fz_tensor_inexact(&info, ci), *a = fz_tensor_inexact(&info, 0);
			check(!strcmp(info.tensors[ci].name, "C") && c && !strcmp(c, "fp8") && !a && info.tensors[0].elem_bytes == 1 &&
			      !strcmp(info.tensors[0].type, "f8e4m3"), "fz_tensor_inexact: C through fp8 products, A (f8e4m3, 1 byte) not", c ? c : "(null)");
			fz_artifact_info_free(&info);
		}
		snprintf(path, sizeof path, "%s/matmul_bias_relu_bf16.manifest", gen_dir);
		if (check(!fz_artifact_verify(path, &info, err), path, err)) {
			check(!fz_tensor_inexact(&info, 3) && !fz_tensor_inexact(&info, -1), "fz_tensor_inexact: none in a bf16 product", "");
			fz_artifact_info_free(&info);
		}
	}
	void *h = dlopen(fake_so, RTLD_NOW | RTLD_LOCAL);
	if (!h || !(log_count = (int (*)(void))dlsym(h, "fakecuda_log_count")) ||
	    !(log_line = (const char *(*)(int))dlsym(h, "fakecuda_log_line")) || !(log_start = (void (*)(void))dlsym(h, "fakecuda_log_start"))) {
		fprintf(stderr, "test_call: the fake libcuda %s has no launch log\n", fake_so);
		return 2;
	}
	setenv("FUSERUN_LIBCUDA", fake_so, 1);
	fz_device *dev = NULL;
	fz_device_props props;
	if (check(!fz_device_open(0, &dev, err), "the fake device opens", err) && !fz_device_query(dev, &props)) {
		for (int i = 0; i < ncall_specs; i++) test_fake(&call_specs[i], dev, props.sm_count);
		prepared_refusals(dev);
		tile_maps(dev);
		fz_device_close(dev);
	}
	dlclose(h);
	printf("test_call: %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
