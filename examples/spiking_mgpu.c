/* A spiking network sharded across the GPUs of one host by neuron range:
 * device r owns neurons lo_r .. hi_r-1 (their potentials and the synapses
 * that end on them, as a CSR over every source neuron), runs one step of
 * spike_burst_shard on them, and the step's spike lists (global indices)
 * are all-gathered so that every device holds the whole network's fired
 * list for the next step. Each device count in the list runs in the same
 * process on the same network; the spike sets of every step and the final
 * potentials are compared with the first count's. Synaptic weights are
 * multiples of 1/1024, so the scatter-adds are exact in any order and the
 * dynamics do not depend on how many devices share them.
 *
 * The timed step is what a simulation does: the launches, the spike counts
 * read back (the host sizes the next launch by them), the all-gather, and
 * a device-to-device copy of the gathered list into a history on device 0
 * (a few microseconds). The spike sets are copied to the host and
 * checksummed only after the last step, from that history; where the
 * history cannot be allocated (steps x N x 4 bytes), each step's list is
 * copied and checksummed inside the step, and the result line says so
 * (history=inline: the step time then includes the check; the environment
 * variable SPIKING_MGPU_INLINE=1 asks for it, to compare the two: the
 * result line's digest of every step's set and the final potentials is the
 * same either way).
 *
 * usage: spiking_mgpu [ARTIFACT_DIR [N [STEPS [DEVICES]]]]   (default generated 1048576 50 1,2)
 * Prints one "result" line per device count (parsed by bench/mgpu.sh):
 * median time per step, its compute part (launches until every device's
 * spike count is on the host) and its exchange (the all-gather). Exit 0 ok,
 * 1 results differ or a failure, 2 no GPU. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fuserun.h"
#include "spike_burst_shard.h"

enum { SYN = 100 }; /* synapses a neuron */

static uint64_t mix(uint64_t z) /* splitmix64's finaliser */
{
	z += 0x9e3779b97f4a7c15ull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}
/* synapse s: its target and its weight (k/1024, k in 20 .. 220) */
static int32_t target(uint64_t s, int32_t n) { return (int32_t)(((mix(s) & 0xffffffffull) * (uint64_t)n) >> 32); }
static float weight(uint64_t s) { return (float)(20 + (int)((mix(s) >> 40) % 201)) / 1024.0f; }
static float v0(int32_t i) { return (float)(0.3 + 0.7 * (double)(mix(0x5eedull << 40 ^ (uint64_t)i) >> 11) / 9007199254740992.0); }

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

/* a stimulus: 1% of the neurons, a stride from a start drawn from the step */
static int32_t stimulus(int32_t *fired, int32_t n, int step)
{
	int32_t f = n / 100 > 0 ? n / 100 : 1, start = target(0xabcdull + (uint64_t)step, n);
	for (int32_t k = 0; k < f; k++) fired[k] = (int32_t)((start + (int64_t)k * (n / f)) % n);
	return f;
}

typedef struct run {
	int devices, steps;
	long long *count;               /* spikes each step */
	uint64_t *sum, *sq;             /* order-independent checksums of each step's set */
	float *v;                       /* final potentials */
	double step_ms, exchange_ms, compute_ms;
	long long total;
	int inline_check;               /* no room for the history: checked inside the step */
} run;

/* order-independent checksums of one step's spike set */
static void checksum(run *res, int step, const int32_t *list, long long n)
{
	for (long long k = 0; k < n; k++) res->sum[step] += (uint64_t)list[k], res->sq[step] += mix((uint64_t)list[k]);
}

#define FAIL(...) do { fprintf(stderr, "spiking_mgpu: " __VA_ARGS__); fputc('\n', stderr); goto out; } while (0)
#define DEV(r) fz_group_device(g, r)

static int simulate(const char *dir, int D, int32_t N, int steps, run *res)
{
	char err[FZ_ERRMSG_SIZE], path[4096];
	fz_group *g = NULL;
	fz_artifact *arts[FZ_MAX_GROUP] = {0};
	fz_ptr row[FZ_MAX_GROUP] = {0}, col[FZ_MAX_GROUP] = {0}, w[FZ_MAX_GROUP] = {0}, v[2][FZ_MAX_GROUP] = {{0}};
	fz_ptr out[FZ_MAX_GROUP] = {0}, fired[2][FZ_MAX_GROUP] = {{0}}, cnt[FZ_MAX_GROUP] = {0}, scratch[FZ_MAX_GROUP] = {0};
	fz_ptr hist = 0; /* device 0: every step's gathered list, back to back */
	long long *at = calloc((size_t)steps, sizeof *at); /* where each step's list starts in hist */
	fz_event *ex[FZ_MAX_GROUP][2] = {{0}};
	long long lo[FZ_MAX_GROUP], hi[FZ_MAX_GROUP];
	fz_spike_burst_shard_args a[FZ_MAX_GROUP];
	int sm[FZ_MAX_GROUP], rc = 1;
	int32_t *rp = malloc(((size_t)N + 1) * 4), *cl = NULL, *list = malloc((size_t)N * 4);
	float *wt = NULL, *vh = malloc((size_t)N * 4);
	double *t_step = calloc((size_t)steps, sizeof(double)), *t_x = calloc((size_t)steps, sizeof(double)),
	       *t_c = calloc((size_t)steps, sizeof(double));
	memset(res, 0, sizeof *res);
	res->devices = D, res->steps = steps;
	res->count = calloc((size_t)steps, sizeof *res->count);
	res->sum = calloc((size_t)steps, 8), res->sq = calloc((size_t)steps, 8);
	res->v = malloc((size_t)N * 4);
	if (!rp || !list || !vh || !t_step || !t_x || !t_c || !at || !res->count || !res->sum || !res->sq || !res->v) FAIL("out of memory");
	if (fz_group_open(D, NULL, &g, err)) FAIL("%d devices: %s", D, err);
	snprintf(path, sizeof path, "%s/spike_burst_shard.manifest", dir);
	if (fz_group_load(g, path, arts)) FAIL("%s", fz_group_error(g));

	/* each rank's share of the network: the synapses ending on its neurons */
	for (int r = 0; r < D; r++) fz_group_range(N, D, r, &lo[r], &hi[r]);
	for (int r = 0; r < D; r++) {
		fz_device_props props;
		int32_t n = (int32_t)(hi[r] - lo[r]);
		size_t cap = (size_t)N * SYN, s_r = 0;
		cl = malloc(cap * 4), wt = malloc(cap * 4);
		if (!cl || !wt) FAIL("out of memory");
		rp[0] = 0;
		for (int32_t p = 0; p < N; p++) {
			for (uint64_t s = (uint64_t)p * SYN; s < (uint64_t)(p + 1) * SYN; s++) {
				int32_t t = target(s, N);
				if (t >= lo[r] && t < hi[r]) cl[s_r] = (int32_t)(t - lo[r]), wt[s_r] = weight(s), s_r++;
			}
			rp[p + 1] = (int32_t)s_r;
		}
		for (int32_t i = 0; i < n; i++) vh[i] = v0((int32_t)lo[r] + i);
		fz_device *d = DEV(r);
		if (fz_device_query(d, &props)) FAIL("%s", fz_device_error(d));
		sm[r] = props.sm_count;
		int e = fz_alloc(d, ((size_t)N + 1) * 4, &row[r]) || fz_copy_to_device(d, row[r], rp, ((size_t)N + 1) * 4, NULL) ||
		        fz_alloc(d, s_r ? s_r * 4 : 4, &col[r]) || fz_alloc(d, s_r ? s_r * 4 : 4, &w[r]) ||
		        (s_r && fz_copy_to_device(d, col[r], cl, s_r * 4, NULL)) || (s_r && fz_copy_to_device(d, w[r], wt, s_r * 4, NULL)) ||
		        fz_alloc(d, (size_t)n * 4, &v[0][r]) || fz_alloc(d, (size_t)n * 4, &v[1][r]) ||
		        fz_copy_to_device(d, v[0][r], vh, (size_t)n * 4, NULL) || fz_alloc(d, (size_t)n * 4, &out[r]) ||
		        fz_alloc(d, (size_t)N * 4, &fired[0][r]) || fz_alloc(d, (size_t)N * 4, &fired[1][r]) || fz_alloc(d, 4, &cnt[r]) ||
		        fz_event_create(d, &ex[r][0]) || fz_event_create(d, &ex[r][1]);
		free(cl), free(wt), cl = NULL, wt = NULL;
		if (e) FAIL("rank %d: %s", r, fz_device_error(d));
		fz_spike_burst_shard_args *x = &a[r];
		memset(x, 0, sizeof *x);
		x->t_row_ptr = row[r], x->t_col = col[r], x->t_w = w[r];
		x->t_decay = 0.9, x->t_vth = 1.0, x->t_vreset = 0.0, x->t_base = lo[r];
		x->t_nspikes = cnt[r];
		x->n_NP1 = (long long)N + 1, x->n_S = s_r ? (long long)s_r : 1, x->n_N = n, x->n_F = N; /* scratch sized once, for any F */
		unsigned long long need = fz_spike_burst_shard_fused_scratch(x, 0, sm[r]);
		if (fz_alloc(d, need, &scratch[r]) || fz_memset(d, scratch[r], 0, need, NULL)) FAIL("rank %d: %s", r, fz_device_error(d));
		fz_spike_burst_shard_fused_scratch(x, scratch[r], sm[r]);
	}
	/* the history: at most N spikes a step (no room: checked inside the step) */
	const char *in = getenv("SPIKING_MGPU_INLINE");
	res->inline_check = (in && !strcmp(in, "1")) || (unsigned long long)steps * (unsigned long long)N > (1ull << 40) / 4 ||
	                    fz_alloc(DEV(0), (size_t)steps * (size_t)N * 4, &hist);
	int32_t F = stimulus(list, N, -1);
	for (int r = 0; r < D; r++)
		if (fz_copy_to_device(DEV(r), fired[0][r], list, (size_t)F * 4, NULL)) FAIL("%s", fz_device_error(DEV(r)));
	int have_x = 0;
	double t_prev = now_ms();
	for (int step = 0; step < steps; step++) {
		int p = step & 1, f = step & 1; /* potentials and fired lists ping-pong */
		for (int r = 0; r < D; r++) {
			fz_spike_burst_shard_args *x = &a[r];
			x->t_fired = fired[f][r], x->n_F = F;
			x->t_v = v[p][r], x->t_v_next = v[1 - p][r];
			/* one device: its list is the next fired list; several: gathered into it */
			x->t_spikes = D == 1 ? fired[1 - f][r] : out[r];
			if (fz_spike_burst_shard_fused_run(arts[r], x, sm[r], fz_group_stream(g, r))) FAIL("step %d rank %d: %s", step, r, fz_artifact_error(arts[r]));
		}
		int32_t c[FZ_MAX_GROUP];
		for (int r = 0; r < D; r++)
			if (fz_copy_to_host(DEV(r), &c[r], cnt[r], 4, fz_group_stream(g, r))) FAIL("%s", fz_device_error(DEV(r)));
		if (fz_group_sync(g)) FAIL("step %d: %s", step, fz_group_error(g));
		double t_sync = now_ms();
		if (have_x) { /* the previous step's exchange, finished by now */
			float m = 0, mx = 0;
			for (int r = 0; r < D; r++)
				if (!fz_event_elapsed(DEV(r), ex[r][0], ex[r][1], &m) && m > mx) mx = m;
			t_x[step - 1] += mx;
		}
		size_t bytes[FZ_MAX_GROUP];
		long long total = 0;
		for (int r = 0; r < D; r++) {
			if (c[r] < 0 || c[r] > hi[r] - lo[r]) FAIL("step %d rank %d: nspikes = %d is out of range", step, r, c[r]);
			bytes[r] = (size_t)c[r] * 4, total += c[r];
		}
		if (D > 1 && total) {
			for (int r = 0; r < D; r++) fz_event_record(DEV(r), ex[r][0], fz_group_stream(g, r));
			double t0 = now_ms();
			if (fz_group_allgatherv(g, out, bytes, fired[1 - f])) FAIL("step %d: %s", step, fz_group_error(g));
			t_x[step] = now_ms() - t0; /* the host's part; the devices' part is added at the next sync */
			for (int r = 0; r < D; r++) fz_event_record(DEV(r), ex[r][1], fz_group_stream(g, r));
			have_x = 1;
		} else {
			have_x = 0;
		}
		/* the step's spike set, from rank 0's copy of the whole list: kept on the
		   device and checked after the last step (or here, without a history) */
		res->count[step] = total;
		at[step] = step ? at[step - 1] + res->count[step - 1] : 0;
		if (total && !res->inline_check &&
		    fz_copy_on_device(DEV(0), hist + (fz_ptr)at[step] * 4, fired[1 - f][0], (size_t)total * 4, fz_group_stream(g, 0)))
			FAIL("%s", fz_device_error(DEV(0)));
		if (total && res->inline_check) {
			if (fz_copy_to_host(DEV(0), list, fired[1 - f][0], (size_t)total * 4, fz_group_stream(g, 0)) ||
			    fz_stream_sync(DEV(0), fz_group_stream(g, 0)))
				FAIL("%s", fz_device_error(DEV(0)));
			checksum(res, step, list, total);
		}
		res->total += total;
		F = (int32_t)total;
		if (!F) { /* silent: stimulate (not timed as exchange: every device count does the same) */
			F = stimulus(list, N, step);
			for (int r = 0; r < D; r++)
				if (fz_copy_to_device(DEV(r), fired[1 - f][r], list, (size_t)F * 4, NULL)) FAIL("%s", fz_device_error(DEV(r)));
		}
		double t_end = now_ms();
		t_c[step] = t_sync - t_prev;
		t_step[step] = t_end - t_prev;
		t_prev = t_end;
	}
	if (fz_group_sync(g)) FAIL("%s", fz_group_error(g));
	for (int step = 0; step < steps && !res->inline_check; step++) { /* the spike sets, untimed */
		if (res->count[step] && fz_copy_to_host(DEV(0), list, hist + (fz_ptr)at[step] * 4, (size_t)res->count[step] * 4, NULL))
			FAIL("%s", fz_device_error(DEV(0)));
		checksum(res, step, list, res->count[step]);
	}
	if (have_x) {
		float m = 0, mx = 0;
		for (int r = 0; r < D; r++)
			if (!fz_event_elapsed(DEV(r), ex[r][0], ex[r][1], &m) && m > mx) mx = m;
		t_x[steps - 1] += mx;
	}
	for (int r = 0; r < D; r++)
		if (fz_copy_to_host(DEV(r), res->v + lo[r], v[steps & 1][r], (size_t)(hi[r] - lo[r]) * 4, NULL)) FAIL("%s", fz_device_error(DEV(r)));
	/* medians over the steps after the first (which pays first-launch costs) */
	int m = steps > 1 ? steps - 1 : 1, o = steps > 1 ? 1 : 0;
	double xs = 0, ss = 0;
	for (int i = o; i < steps; i++) xs += t_x[i], ss += t_step[i];
	res->step_ms = median(t_step + o, m), res->compute_ms = median(t_c + o, m);
	res->exchange_ms = ss > 0 ? xs / ss * res->step_ms : 0; /* the exchange's share of the time, applied to the median step */
	rc = 0;
out:
	for (int r = 0; g && r < D; r++) {
		fz_device *d = DEV(r);
		fz_ptr b[] = {row[r], col[r], w[r], v[0][r], v[1][r], out[r], fired[0][r], fired[1][r], cnt[r], scratch[r], r ? 0 : hist};
		for (size_t i = 0; i < sizeof b / sizeof b[0]; i++) fz_free(d, b[i]);
		fz_event_destroy(d, ex[r][0]), fz_event_destroy(d, ex[r][1]);
	}
	fz_group_unload(g, arts);
	fz_group_close(g);
	free(rp), free(list), free(vh), free(cl), free(wt), free(t_step), free(t_x), free(t_c), free(at);
	return rc;
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "generated", *devlist = argc > 4 ? argv[4] : "1,2";
	long long n = argc > 2 ? atoll(argv[2]) : 1048576;
	int steps = argc > 3 ? atoi(argv[3]) : 50;
	if (n < 16 || n > (1 << 24) || steps < 1 || steps > 100000)
		return fprintf(stderr, "usage: spiking_mgpu [ARTIFACT_DIR [N (16 .. 2^24) [STEPS [DEVICES (e.g. 1,2)]]]]\n"), 2;
	char err[FZ_ERRMSG_SIZE];
	int have = 0;
	if (fz_device_count(&have, err)) return fprintf(stderr, "spiking_mgpu: no GPU to run on: %s\n", err), 2;
	if (have < 1) return fprintf(stderr, "spiking_mgpu: no GPU to run on: the driver sees no device\n"), 2;
	run res[8];
	int nres = 0, status = 0;
	for (const char *c = devlist; *c && nres < 8;) {
		int D = atoi(c);
		while (*c && *c != ',') c++;
		if (*c == ',') c++;
		if (D < 1 || D > FZ_MAX_GROUP) return fprintf(stderr, "spiking_mgpu: bad device count in '%s'\n", devlist), 2;
		if (D > have) {
			printf("spiking_mgpu: %d devices asked, this machine has %d: skipped\n", D, have);
			continue;
		}
		if (simulate(dir, D, (int32_t)n, steps, &res[nres])) {
			status = 1;
			nres++;
			break;
		}
		nres++;
	}
	for (int i = 0; !status && i < nres; i++) {
		int same = !memcmp(res[i].count, res[0].count, (size_t)steps * sizeof *res[0].count) &&
		           !memcmp(res[i].sum, res[0].sum, (size_t)steps * 8) && !memcmp(res[i].sq, res[0].sq, (size_t)steps * 8) &&
		           !memcmp(res[i].v, res[0].v, (size_t)n * 4);
		if (!same) status = 1;
		uint64_t digest = 0; /* every step's count and checksums, then the potentials' bits */
		for (int k = 0; k < steps; k++) digest = mix(digest ^ (uint64_t)res[i].count[k]) ^ mix(res[i].sum[k]) ^ res[i].sq[k];
		for (long long k = 0; k < n; k++) {
			uint32_t b;
			memcpy(&b, &res[i].v[k], 4);
			digest = mix(digest ^ b);
		}
		printf("result spiking N=%lld steps=%d devices=%d step_ms=%.4f compute_ms=%.4f exchange_ms=%.4f exchange_share=%.3f "
		       "speedup=%.3f spikes=%lld identical_to_%d=%s history=%s digest=%016llx\n",
		       n, steps, res[i].devices, res[i].step_ms, res[i].compute_ms, res[i].exchange_ms,
		       res[i].step_ms > 0 ? res[i].exchange_ms / res[i].step_ms : 0.0, res[0].step_ms / res[i].step_ms, res[i].total,
		       res[0].devices, same ? "yes" : "NO", res[i].inline_check ? "inline" : "device", (unsigned long long)digest);
	}
	for (int i = 0; i < nres; i++) free(res[i].count), free(res[i].sum), free(res[i].sq), free(res[i].v);
	printf("%s\n", status ? "FAILED" : "ok");
	return status;
}
