/* Transfer entropy on several GPUs of one host: the points of the KSG
 * estimator are shared among the devices (fz_sharded over M of
 * transfer_entropy_shard), every device holding the whole series. Each
 * device count in the list runs in the same process on the same series;
 * the per-point terms psi come back in point order and are summed on the
 * host in that order, so te has the same bits for every device count
 * (checked: psi and te compared bit for bit with the first count's). The
 * partial sums psi_sum, combined in device order, are reported too (their
 * last bits may differ between device counts), and the one-kernel estimator
 * (transfer_entropy, one device) as a cross-check.
 *
 * usage: te_mgpu [ARTIFACT_DIR [N [DEVICES [REPS]]]]   (default generated 65536 1,2 20)
 * DEVICES: device counts to run, comma-separated; counts beyond what the
 * machine has are skipped with a message. DEVICES "procs": this process is
 * one rank of a job of one process per GPU (fz_group_join: RANK,
 * WORLD_SIZE, LOCAL_RANK and FUSERUN_NCCL_ID_FILE, as fuserun-launch sets
 * them): the ranks run the sharded estimator together, then rank 0 alone
 * runs it on one device and the one-kernel estimator, and compares. Prints one "result" line per
 * count (parsed by bench/mgpu.sh). Exit 0 ok, 1 results differ or a
 * failure, 2 no GPU. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fuserun.h"
#include "transfer_entropy.h"
#include "transfer_entropy_shard.h"

FZ_SHARD_VARIANT(transfer_entropy_shard, fused)

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
static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* digamma(4) = 1 + 1/2 + 1/3 - Euler's gamma */
static const double DIGAMMA4 = 1.0 + 0.5 + 1.0 / 3.0 - 0.57721566490153286061;

static uint64_t rng = 0x243f6a8885a308d3ull;
static double gauss(void)
{
	double u, v;
	do {
		rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
		u = (double)(rng >> 11) / 9007199254740992.0;
	} while (u <= 0);
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	v = (double)(rng >> 11) / 9007199254740992.0;
	return sqrt(-2 * log(u)) * cos(6.283185307179586 * v);
}

typedef struct result {
	int devices, rank, procs;
	double ms, kernel_ms, te, te_partials;
	double *psi;
} result;

#define FAIL(...) do { fprintf(stderr, "te_mgpu: " __VA_ARGS__); fputc('\n', stderr); goto out; } while (0)

/* one device count: open (D = 0: join the job's other processes), shard,
   time, fetch */
static int run_count(const char *dir, int D, long long N, const float *xn, const float *xp, const float *yp, int reps, result *res)
{
	char err[FZ_ERRMSG_SIZE], path[4096];
	fz_group *g = NULL;
	fz_sharded *s = NULL;
	fz_event *ev[FZ_MAX_GROUP][2] = {{0}};
	double *wall = calloc((size_t)reps, sizeof *wall), *kern = calloc((size_t)reps, sizeof *kern);
	int rc = 1, L = 0; /* L: the devices this process drives */
	res->devices = D, res->procs = D == 0;
	res->psi = malloc((size_t)N * sizeof *res->psi);
	if (!wall || !kern || !res->psi) FAIL("out of memory");
	if (D && fz_group_open(D, NULL, &g, err)) FAIL("%d devices: %s", D, err);
	if (!D && fz_group_join(NULL, &g, err)) FAIL("%s", err);
	L = fz_group_size(g), res->devices = fz_group_ranks(g), res->rank = fz_group_rank(g, 0);
	fz_transfer_entropy_shard_args a;
	memset(&a, 0, sizeof a);
	a.n_M = N, a.n_N = N;
	snprintf(path, sizeof path, "%s/transfer_entropy_shard.manifest", dir);
	if (fz_sharded_create(g, path, "M", FZ_transfer_entropy_shard_LAYOUT, &a, sizeof a, fz_transfer_entropy_shard_fused_scratch_v,
	                      fz_transfer_entropy_shard_fused_ops_v, &s, err))
		FAIL("%s", err);
	if (fz_sharded_view(s, "qxn", "xn") || fz_sharded_view(s, "qxp", "xp") || fz_sharded_view(s, "qyp", "yp") ||
	    fz_sharded_offset(s, "off"))
		FAIL("%s", fz_sharded_error(s));
	if (fz_sharded_put(s, "xn", xn, (size_t)N * 4) || fz_sharded_put(s, "xp", xp, (size_t)N * 4) || fz_sharded_put(s, "yp", yp, (size_t)N * 4))
		FAIL("%s", fz_sharded_error(s));
	for (int r = 0; r < L; r++)
		for (int k = 0; k < 2; k++)
			if (fz_event_create(fz_group_device(g, r), &ev[r][k])) FAIL("%s", fz_device_error(fz_group_device(g, r)));
	/* a timed run: the launches, the kernels, and the estimate's partial sums
	   combined on the host (what a caller needs for te) */
	for (int i = -3; i < reps; i++) { /* three warm-ups */
		double t0 = now_ms(), part = 0;
		for (int r = 0; r < L; r++) fz_event_record(fz_group_device(g, r), ev[r][0], fz_group_stream(g, r));
		if (fz_sharded_run(s)) FAIL("%s", fz_sharded_error(s));
		for (int r = 0; r < L; r++) fz_event_record(fz_group_device(g, r), ev[r][1], fz_group_stream(g, r));
		if (fz_sharded_get(s, "psi_sum", &part, 8)) FAIL("%s", fz_sharded_error(s));
		double t1 = now_ms(), k = 0;
		for (int r = 0; r < L; r++) { /* the slowest device's kernel time */
			float ms = 0;
			if (fz_event_elapsed(fz_group_device(g, r), ev[r][0], ev[r][1], &ms)) FAIL("%s", fz_device_error(fz_group_device(g, r)));
			if (ms > k) k = ms;
		}
		if (i >= 0) wall[i] = t1 - t0, kern[i] = k;
	}
	if (fz_sharded_get(s, "psi", res->psi, (size_t)N * 8) || fz_sharded_get(s, "psi_sum", &res->te_partials, 8))
		FAIL("%s", fz_sharded_error(s));
	double sum = 0;
	for (long long i = 0; i < N; i++) sum += res->psi[i]; /* point order: the same for every device count */
	res->te = DIGAMMA4 + sum / (double)N;
	res->te_partials = DIGAMMA4 + res->te_partials / (double)N;
	res->ms = median(wall, reps), res->kernel_ms = median(kern, reps);
	rc = 0;
out:
	for (int r = 0; g && r < L; r++)
		for (int k = 0; k < 2; k++) fz_event_destroy(fz_group_device(g, r), ev[r][k]);
	fz_sharded_destroy(s);
	fz_group_close(g);
	free(wall), free(kern);
	return rc;
}

/* the one-kernel estimator on device 0, timed the same way: the kernel by
   CUDA events (ms), and the launch until te is on the host (wall) */
static int run_single(const char *dir, long long N, const float *xn, const float *xp, const float *yp, int reps, double *te, double *ms,
                      double *wall)
{
	char err[FZ_ERRMSG_SIZE], path[4096];
	fz_device *d = NULL;
	fz_artifact *art = NULL;
	fz_ptr buf[4] = {0}, scratch = 0;
	fz_event *e0 = NULL, *e1 = NULL;
	double *t = calloc((size_t)reps, sizeof *t), *w = calloc((size_t)reps, sizeof *w);
	int rc = 1;
	if (!t || !w) FAIL("out of memory");
	if (fz_device_open(0, &d, err)) FAIL("%s", err);
	snprintf(path, sizeof path, "%s/transfer_entropy.manifest", dir);
	if (fz_artifact_load(d, path, &art)) FAIL("%s", fz_device_error(d));
	fz_device_props p;
	fz_transfer_entropy_args a;
	memset(&a, 0, sizeof a);
	a.n_N = N, a.t_nf = (double)N;
	const float *host[3] = {xn, xp, yp};
	for (int i = 0; i < 3; i++)
		if (fz_alloc(d, (size_t)N * 4, &buf[i]) || fz_copy_to_device(d, buf[i], host[i], (size_t)N * 4, NULL)) FAIL("%s", fz_device_error(d));
	if (fz_alloc(d, 8, &buf[3]) || fz_device_query(d, &p)) FAIL("%s", fz_device_error(d));
	a.t_xn = buf[0], a.t_xp = buf[1], a.t_yp = buf[2], a.t_te = buf[3];
	unsigned long long need = fz_transfer_entropy_fused_scratch(&a, 0, p.sm_count);
	if (fz_alloc(d, need, &scratch) || fz_memset(d, scratch, 0, need, NULL)) FAIL("%s", fz_device_error(d));
	fz_transfer_entropy_fused_scratch(&a, scratch, p.sm_count);
	if (fz_event_create(d, &e0) || fz_event_create(d, &e1)) FAIL("%s", fz_device_error(d));
	for (int i = -3; i < reps; i++) {
		float m = 0;
		double t0 = now_ms();
		fz_event_record(d, e0, NULL);
		if (fz_transfer_entropy_fused_run(art, &a, p.sm_count, NULL)) FAIL("%s", fz_artifact_error(art));
		fz_event_record(d, e1, NULL);
		if (fz_copy_to_host(d, te, buf[3], 8, NULL)) FAIL("%s", fz_device_error(d));
		double t1 = now_ms();
		if (fz_event_elapsed(d, e0, e1, &m)) FAIL("%s", fz_device_error(d));
		if (i >= 0) t[i] = m, w[i] = t1 - t0;
	}
	*ms = median(t, reps), *wall = median(w, reps);
	rc = 0;
out:
	if (d) {
		for (int i = 0; i < 4; i++) fz_free(d, buf[i]);
		fz_free(d, scratch), fz_event_destroy(d, e0), fz_event_destroy(d, e1);
	}
	fz_artifact_unload(art);
	fz_device_close(d);
	free(t), free(w);
	return rc;
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "generated", *list = argc > 3 ? argv[3] : "1,2";
	long long N = argc > 2 ? atoll(argv[2]) : 65536;
	int reps = argc > 4 ? atoi(argv[4]) : 20;
	if (N < 5 || N > (1LL << 24) || reps < 1 || reps > 10000)
		return fprintf(stderr, "usage: te_mgpu [ARTIFACT_DIR [N (5 .. 2^24) [DEVICES (e.g. 1,2) [REPS]]]]\n"), 2;
	char err[FZ_ERRMSG_SIZE];
	int have = 0;
	if (fz_device_count(&have, err)) return fprintf(stderr, "te_mgpu: no GPU to run on: %s\n", err), 2;
	if (have < 1) return fprintf(stderr, "te_mgpu: no GPU to run on: the driver sees no device\n"), 2;

	/* x driven by y: x(t+1) = 0.6 x(t) + 0.4 y(t) + noise; embedded as (x(t+1), x(t), y(t)) */
	float *xn = malloc((size_t)N * 4), *xp = malloc((size_t)N * 4), *yp = malloc((size_t)N * 4);
	if (!xn || !xp || !yp) return fprintf(stderr, "te_mgpu: out of memory\n"), 1;
	double x = 0, y = gauss();
	for (long long t = 0; t < N; t++) {
		double yn = gauss(), x1 = 0.6 * x + 0.4 * y + 0.3 * gauss();
		xp[t] = (float)x, yp[t] = (float)y, xn[t] = (float)x1;
		x = x1, y = yn;
	}
	result res[8];
	int nres = 0, status = 0;
	if (!strcmp(list, "procs")) { /* the job's ranks together, then rank 0 on one device for the comparison */
		memset(res, 0, 2 * sizeof res[0]);
		status = run_count(dir, 0, N, xn, xp, yp, reps, &res[1]);
		if (!status && res[1].rank != 0) {
			printf("te_mgpu: rank %d of %d done\n", res[1].rank, res[1].devices);
			free(res[1].psi), free(xn), free(xp), free(yp);
			return 0;
		}
		if (!status) status = run_count(dir, 1, N, xn, xp, yp, reps, &res[0]);
		nres = status ? 0 : 2;
		if (status) free(res[0].psi), free(res[1].psi);
		list = "";
	}
	for (const char *c = list; *c && nres < 8;) {
		int D = atoi(c);
		while (*c && *c != ',') c++;
		if (*c == ',') c++;
		if (D < 1 || D > FZ_MAX_GROUP) return fprintf(stderr, "te_mgpu: bad device count in '%s'\n", list), 2;
		if (D > have) {
			printf("te_mgpu: %d devices asked, this machine has %d: skipped\n", D, have);
			continue;
		}
		memset(&res[nres], 0, sizeof res[nres]);
		if (run_count(dir, D, N, xn, xp, yp, reps, &res[nres])) {
			free(res[nres].psi);
			status = 1;
			break;
		}
		nres++;
	}
	double te1 = 0, ms1 = 0, wall1 = 0;
	int single = !status && run_single(dir, N, xn, xp, yp, reps, &te1, &ms1, &wall1) == 0;
	if (!single) status = 1;
	/* the best one-GPU time, launch to te on the host: the one-kernel
	   estimator's, or the sharded run's on one device if that is faster */
	double best1 = single ? wall1 : 0;
	for (int i = 0; i < nres; i++)
		if (res[i].devices == 1 && (!best1 || res[i].ms < best1)) best1 = res[i].ms;
	if (single) printf("result te_one_kernel N=%lld devices=1 ms=%.4f kernel_ms=%.4f te=%.17g\n", N, wall1, ms1, te1);
	for (int i = 0; i < nres; i++) {
		int same = !memcmp(res[i].psi, res[0].psi, (size_t)N * 8) && !memcmp(&res[i].te, &res[0].te, 8);
		if (!same) status = 1;
		uint64_t bits;
		memcpy(&bits, &res[i].te, 8);
		printf("result te N=%lld devices=%d%s ms=%.4f kernel_ms=%.4f speedup=%.3f te=%.17g te_bits=%016llx identical_to_%d=%s "
		       "te_partials=%.17g vs_one_kernel=%.3g speedup_vs_best_1gpu=%.3f\n",
		       N, res[i].devices, res[i].procs ? " procs=yes" : "", res[i].ms, res[i].kernel_ms, res[0].ms / res[i].ms, res[i].te,
		       (unsigned long long)bits, res[0].devices, same ? "yes" : "NO", res[i].te_partials,
		       single ? fabs(res[i].te - te1) / fmax(fabs(te1), 1e-300) : -1.0, best1 > 0 ? best1 / res[i].ms : 0.0);
	}
	for (int i = 0; i < nres; i++) free(res[i].psi);
	free(xn), free(xp), free(yp);
	if (single && nres && fabs(res[0].te - te1) > 1e-9 * fmax(fabs(te1), 1.0)) {
		fprintf(stderr, "te_mgpu: the sharded estimate %.17g and the one-kernel estimate %.17g disagree\n", res[0].te, te1);
		status = 1;
	}
	printf("%s\n", status ? "FAILED" : "ok");
	return status;
}
