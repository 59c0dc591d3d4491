/* fuserun bench --devices N: the fused variant sharded across N devices of
 * this host (fz_sharded over the outermost size of its kernels), timed
 * beside the same on one device in the same run, the outputs of both
 * compared bit for bit. Refused, with the reason, for a fusion the manifest
 * shows cannot be sharded (runtime/README.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tensors.h"
#include "tool.h"

enum { WARMUPS = 3 };

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* the size the first kernel ranges over first ("N" of "[N,M]"), which
   fz_shard_plan checks every kernel against; else the first size, for its
   reason why not */
static void shard_size(const fz_artifact_info *info, char *size)
{
	const char *sp = info->nkernels ? info->kernels[0].space : "";
	size_t n = sp[0] == '[' ? strcspn(sp + 1, ",]") : 0;
	if (n && n <= FZ_MAX_NAME) memcpy(size, sp + 1, n), size[n] = 0;
	else snprintf(size, FZ_MAX_NAME + 1, "%s", info->nsizes ? info->sizes[0] : "");
}

/* one group of `devices`: the median wall time of a run (launches to every
   device finished), and every output copied back into out[] */
static int time_group(const fr_opts *o, const rt_case *c, const char *size, int devices, double *ms, void **out)
{
	char err[FZ_ERRMSG_SIZE];
	const fz_artifact_info *info = c->info;
	fz_group *g = NULL;
	fz_sharded *s = NULL;
	double *t = calloc((size_t)o->reps, sizeof *t);
	int rc = EXIT_ERROR, ordinals[FZ_MAX_GROUP];
	for (int r = 0; r < devices; r++) ordinals[r] = o->device + r;
	if (!t) {
		fprintf(stderr, "fuserun: out of memory\n");
		goto out;
	}
	int e = fz_group_open(devices, ordinals, &g, err);
	if (e) {
		fprintf(stderr, "fuserun: %s%d device%s from %d: %s\n", e == FZ_ERR_NO_DRIVER ? "no usable GPU: " : "", devices,
		        devices == 1 ? "" : "s", o->device, err);
		goto out;
	}
	if (fz_sharded_create(g, info->manifest, size, info->layout, c->args, info->args_size, c->spec->scratch[0], c->spec->ops[0], &s, err)) {
		fprintf(stderr, "fuserun: %s\n", err);
		goto out;
	}
	for (int i = 0; i < info->ntensors; i++) {
		const rt_tensor *x = &c->t[i];
		if ((x->ti->role == FZ_INPUT || x->ti->role == FZ_INOUT) && x->ti->rank > 0 && fz_sharded_put(s, x->ti->name, x->host, x->bytes)) {
			fprintf(stderr, "fuserun: %s\n", fz_sharded_error(s));
			goto out;
		}
	}
	for (int k = -WARMUPS; k < o->reps; k++) {
		double t0 = now_ms();
		if (fz_sharded_run(s) || fz_group_sync(g)) {
			fprintf(stderr, "fuserun: %s%s\n", fz_sharded_error(s), fz_group_error(g));
			goto out;
		}
		if (k >= 0) t[k] = now_ms() - t0;
	}
	for (int i = 0; i < info->ntensors; i++) {
		const rt_tensor *x = &c->t[i];
		if (x->ti->role != FZ_OUTPUT && x->ti->role != FZ_INOUT) continue;
		if (fz_sharded_get(s, x->ti->name, out[i], x->bytes)) {
			fprintf(stderr, "fuserun: %s\n", fz_sharded_error(s));
			goto out;
		}
	}
	qsort(t, (size_t)o->reps, sizeof *t, cmp_double);
	*ms = o->reps % 2 ? t[o->reps / 2] : 0.5 * (t[o->reps / 2 - 1] + t[o->reps / 2]);
	rc = EXIT_PASS;
out:
	fz_sharded_destroy(s);
	fz_group_close(g);
	free(t);
	return rc;
}

int cmd_bench_devices(const fr_opts *o)
{
	char err[FZ_ERRMSG_SIZE], size[FZ_MAX_NAME + 1];
	fz_artifact_info info;
	fr_spec spec;
	rt_case c;
	long long sizes[FZ_MAX_SIZES];
	int place[FZ_MAX_TENSORS], rc = fz_artifact_verify(o->artifact, &info, err), have_spec = 0, have_case = 0;
	void *out[2][FZ_MAX_TENSORS] = {{0}};
	double ms[2] = {0, 0};
	memset(&spec, 0, sizeof spec), memset(&c, 0, sizeof c);
	if (rc) {
		fprintf(stderr, "fuserun: artifact refused: %s (%s)\n", err, fz_strerror(rc));
		return EXIT_ERROR;
	}
	rc = EXIT_ERROR;
	shard_size(&info, size);
	if (fz_shard_plan(&info, size, place, err)) {
		fprintf(stderr, "fuserun: --devices: %s\n", err);
		goto out;
	}
	if (rt_check_domains(&info, err)) {
		fprintf(stderr, "fuserun: %s\n", err);
		goto out;
	}
	if (sizes_resolve(o, &info, sizes)) goto out;
	if (fr_spec_load(&info, &spec, err)) {
		fprintf(stderr, "fuserun: %s\n", err);
		goto out;
	}
	have_spec = 1;
	have_case = 1; /* a refused case has memory to free too */
	if (rt_case_init(&c, &info, &spec, sizes, o->seed, err)) {
		fprintf(stderr, "fuserun: %s\n", err);
		goto out;
	}
	for (int v = 0; v < 2; v++)
		for (int i = 0; i < info.ntensors; i++)
			if ((c.t[i].ti->role == FZ_OUTPUT || c.t[i].ti->role == FZ_INOUT) && !(out[v][i] = calloc(1, c.t[i].bytes))) goto out;
	/* one device, then the group: the same inputs, the same code path */
	if (time_group(o, &c, size, 1, &ms[0], out[0]) || time_group(o, &c, size, o->devices, &ms[1], out[1])) goto out;
	/* split outputs must be the same bits; a combined reduction may differ
	   in its last bits (partials folded in device order) */
	int same = 1, combined_same = 1;
	for (int i = 0; i < info.ntensors; i++)
		if (out[0][i] && memcmp(out[0][i], out[1][i], c.t[i].bytes)) {
			if (place[i] == FZ_PLACE_COMBINED) combined_same = 0;
			else same = 0;
			fprintf(stderr, "fuserun: %s differs between 1 and %d devices%s\n", info.tensors[i].name, o->devices,
			        place[i] == FZ_PLACE_COMBINED ? " (a reduction combined in device order: its last bits may)" : "");
		}
	double speedup = ms[1] > 0 ? ms[0] / ms[1] : 0;
	if (o->json) {
		printf("{\"command\": \"bench\", \"fusion\": "), json_str(stdout, info.fusion);
		printf(", \"sharded_over\": \"%s\", \"devices\": %d, \"reps\": %d, \"one_device_ms\": ", size, o->devices, o->reps);
		json_num(stdout, ms[0]), printf(", \"devices_ms\": "), json_num(stdout, ms[1]);
		printf(", \"speedup\": "), json_num(stdout, speedup);
		printf(", \"identical\": %s, \"reductions_identical\": %s}\n", same ? "true" : "false", combined_same ? "true" : "false");
	} else {
		printf("bench %s sharded over %s: median of %d runs (wall time, launches to every device finished)\n", info.fusion, size, o->reps);
		printf("  1 device  %10.4f ms\n  %d devices %10.4f ms   speed-up %.2fx; outputs %s%s\n", ms[0], o->devices, ms[1], speedup,
		       same ? "identical" : "DIFFER", combined_same ? "" : " (reductions combined in device order differ in their last bits)");
	}
	rc = same ? EXIT_PASS : EXIT_MISMATCH;
out:
	for (int v = 0; v < 2; v++)
		for (int i = 0; i < FZ_MAX_TENSORS; i++) free(out[v][i]);
	if (have_case) rt_case_free(&c);
	if (have_spec) fr_spec_unload(&spec);
	fz_artifact_info_free(&info);
	return rc;
}
