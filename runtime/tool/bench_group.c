/* fuserun bench --devices N: the fused variant sharded across N devices of
 * this host (fz_sharded over the outermost size of its kernels), timed
 * beside the same on one device in the same run, the outputs of both
 * compared bit for bit. Refused, with the reason, for a fusion the manifest
 * shows cannot be sharded (runtime/README.md). With --procs, one process a
 * device: fuserun runs fuserun-launch on its own command line, each process
 * joins the job (fz_group_join) and runs the sharded variant, and rank 0
 * then runs the one-device baseline and reports. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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

/* opens the devices, or joins the job (join: its rank into *rank) */
static int open_group(const fr_opts *o, int devices, int join, int *rank, fz_group **g)
{
	char err[FZ_ERRMSG_SIZE];
	int ordinals[FZ_MAX_GROUP], e;
	for (int r = 0; r < devices; r++) ordinals[r] = o->device + r;
	e = join ? fz_group_join(NULL, g, err) : fz_group_open(devices, ordinals, g, err);
	if (e && join) fprintf(stderr, "fuserun: --procs: %s\n", err);
	else if (e)
		fprintf(stderr, "fuserun: %s%d device%s from %d: %s\n", e == FZ_ERR_NO_DRIVER ? "no usable GPU: " : "", devices,
		        devices == 1 ? "" : "s", o->device, err);
	else if (join && fz_group_ranks(*g) != devices)
		fprintf(stderr, "fuserun: --procs: the job has %d ranks (WORLD_SIZE), --devices says %d\n", fz_group_ranks(*g), devices), e = 1;
	if (!e && rank) *rank = fz_group_rank(*g, 0);
	return e;
}

/* one group of `devices` (join: this process's rank of a job of them): the
   median wall time of a run (launches to this process's devices finished),
   and every output copied back into out[] */
static int time_group(const fr_opts *o, const rt_case *c, const char *size, int devices, int join, int *rank, double *ms, void **out)
{
	char err[FZ_ERRMSG_SIZE];
	const fz_artifact_info *info = c->info;
	fz_group *g = NULL;
	fz_sharded *s = NULL;
	double *t = calloc((size_t)o->reps, sizeof *t);
	int rc = EXIT_ERROR;
	if (!t) {
		fprintf(stderr, "fuserun: out of memory\n");
		goto out;
	}
	if (open_group(o, devices, join, rank, &g)) goto out;
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
	/* one device, then the group: the same inputs, the same code path; with
	   --procs the job first (every rank at once), then rank 0 alone */
	int rank = 0;
	if (o->procs && time_group(o, &c, size, o->devices, 1, &rank, &ms[1], out[1])) goto out;
	if (rank) { /* rank 0 reports */
		rc = EXIT_PASS;
		goto out;
	}
	if (time_group(o, &c, size, 1, 0, NULL, &ms[0], out[0]) || (!o->procs && time_group(o, &c, size, o->devices, 0, NULL, &ms[1], out[1])))
		goto out;
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
		printf(", \"sharded_over\": \"%s\", \"devices\": %d, \"processes\": %d, \"reps\": %d, \"one_device_ms\": ", size, o->devices,
		       o->procs ? o->devices : 1, o->reps);
		json_num(stdout, ms[0]), printf(", \"devices_ms\": "), json_num(stdout, ms[1]);
		printf(", \"speedup\": "), json_num(stdout, speedup);
		printf(", \"identical\": %s, \"reductions_identical\": %s}\n", same ? "true" : "false", combined_same ? "true" : "false");
	} else {
		printf("bench %s sharded over %s: median of %d runs (wall time, launches to every device finished)\n", info.fusion, size, o->reps);
		printf("  1 device  %10.4f ms\n  %d devices %10.4f ms%s   speed-up %.2fx; outputs %s%s\n", ms[0], o->devices, ms[1],
		       o->procs ? " (one process each; rank 0's time)" : "", speedup,
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

/* fuserun-launch -n N -- fuserun ARGS...: FUSERUN_LAUNCH, else the
   launcher beside this fuserun (bin/, or the installed bin/) */
int bench_relaunch(const fr_opts *o, int argc, char **argv)
{
	char self[PATH_MAX], launch[PATH_MAX + 32], n[16];
	ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
	const char *env = getenv("FUSERUN_LAUNCH");
	if (len <= 0) {
		fprintf(stderr, "fuserun: --procs: cannot find this program (/proc/self/exe)\n");
		return EXIT_ERROR;
	}
	self[len] = 0;
	if (env && *env) snprintf(launch, sizeof launch, "%s", env);
	else {
		char *slash = strrchr(self, '/');
		snprintf(launch, sizeof launch, "%.*s/fuserun-launch", slash ? (int)(slash - self) : 1, slash ? self : ".");
	}
	if (access(launch, R_OK)) {
		fprintf(stderr, "fuserun: --procs: no launcher %s (make builds bin/fuserun-launch; FUSERUN_LAUNCH may name it)\n", launch);
		return EXIT_ERROR;
	}
	char **av = calloc((size_t)argc + 8, sizeof *av);
	if (!av) return EXIT_ERROR;
	int k = 0;
	snprintf(n, sizeof n, "%d", o->devices);
	av[k++] = "sh", av[k++] = launch, av[k++] = "-n", av[k++] = n, av[k++] = "--", av[k++] = self;
	char seed[32];
	int seeded = 0;
	for (int i = 1; i < argc; i++) av[k++] = argv[i], seeded |= !strcmp(argv[i], "--seed");
	if (!seeded) { /* every rank the same inputs: this process's seed, not each its own */
		snprintf(seed, sizeof seed, "%llu", o->seed);
		av[k++] = "--seed", av[k++] = seed;
	}
	fflush(NULL);
	execv("/bin/sh", av);
	fprintf(stderr, "fuserun: --procs: cannot run /bin/sh %s\n", launch);
	free(av);
	return EXIT_ERROR;
}
