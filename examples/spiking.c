/* A spiking network run burst after burst through libfuserun: the neurons
 * that fire in one burst (spikes, nspikes) are the fired list (fired, F) of
 * the next, and v_next becomes v; the buffers ping-pong, nothing is copied.
 * When the network falls silent, a stimulus fires 1% of the neurons.
 * Every burst's spike list is checked: indices in range, no duplicates.
 *
 * usage: spiking [ARTIFACT_DIR [N [BURSTS]]]   (default generated 262144 50) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuserun.h"
#include "spike_burst.h"

enum { SYN = 100 }; /* synapses a neuron */

static fz_device *dev;

#define CHECK(call) do { int rc_ = (call); if (rc_) { \
	fprintf(stderr, "spiking: %s: %s\n", #call, fz_device_error(dev)); exit(rc_ == FZ_ERR_NO_DRIVER || rc_ == FZ_ERR_NO_DEVICE ? 2 : 1); } } while (0)

static uint64_t rng = 0x13198a2e03707344ull;
static double urand(void)
{
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	return (double)(rng >> 11) / 9007199254740992.0;
}

static fz_ptr upload(const void *host, size_t bytes)
{
	fz_ptr p;
	CHECK(fz_alloc(dev, bytes, &p));
	CHECK(fz_copy_to_device(dev, p, host, bytes, NULL));
	return p;
}

/* a stimulus: F distinct neurons (a stride from a random start) */
static int32_t stimulus(int32_t *fired, int32_t n)
{
	int32_t f = n / 100 > 0 ? n / 100 : 1, start = (int32_t)(urand() * n);
	for (int32_t k = 0; k < f; k++) fired[k] = (int32_t)((start + (int64_t)k * (n / f)) % n);
	return f;
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "generated";
	long long n = argc > 2 ? atoll(argv[2]) : 262144;
	int bursts = argc > 3 ? atoi(argv[3]) : 50;
	if (n <= 0 || n > (1 << 24) || bursts <= 0) return fprintf(stderr, "usage: spiking [ARTIFACT_DIR [N [BURSTS]]]\n"), 2;
	char err[FZ_ERRMSG_SIZE], path[4096];
	if (fz_device_open(0, &dev, err)) {
		fprintf(stderr, "spiking: no GPU to run on: %s\n", err);
		return 2;
	}
	fz_device_props props;
	CHECK(fz_device_query(dev, &props));
	fz_artifact *art;
	snprintf(path, sizeof path, "%s/spike_burst.manifest", dir);
	CHECK(fz_artifact_load(dev, path, &art));
	int32_t N = (int32_t)n;
	size_t S = (size_t)N * SYN;
	printf("spiking network on %s (%s): %d neurons, %zu synapses, %d bursts\n", props.name, fz_artifact_target(art), N, S, bursts);

	/* the network: SYN random targets a neuron, positive weights */
	int32_t *row_ptr = malloc((size_t)(N + 1) * 4), *col = malloc(S * 4), *list = malloc((size_t)N * 4);
	float *w = malloc(S * 4), *v = malloc((size_t)N * 4);
	unsigned char *seen = calloc((size_t)N, 1);
	if (!row_ptr || !col || !list || !w || !v || !seen) return fprintf(stderr, "spiking: out of memory\n"), 1;
	for (int32_t i = 0; i <= N; i++) row_ptr[i] = i * SYN;
	for (size_t s = 0; s < S; s++) col[s] = (int32_t)(urand() * N), w[s] = (float)(0.02 + 0.2 * urand());
	for (int32_t i = 0; i < N; i++) v[i] = (float)(0.3 + 0.7 * urand());
	fz_ptr d_row = upload(row_ptr, (size_t)(N + 1) * 4), d_col = upload(col, S * 4), d_w = upload(w, S * 4);
	fz_ptr d_v[2] = {upload(v, (size_t)N * 4), upload(v, (size_t)N * 4)};
	fz_ptr d_list[2], d_count;
	CHECK(fz_alloc(dev, (size_t)N * 4, &d_list[0]));
	CHECK(fz_alloc(dev, (size_t)N * 4, &d_list[1]));
	CHECK(fz_alloc(dev, 4, &d_count));
	int32_t F = stimulus(list, N);
	CHECK(fz_copy_to_device(dev, d_list[0], list, (size_t)F * 4, NULL));
	free(row_ptr), free(col), free(w), free(v);

	fz_spike_burst_args a;
	memset(&a, 0, sizeof a);
	a.t_row_ptr = d_row, a.t_col = d_col, a.t_w = d_w, a.t_decay = 0.9, a.t_vth = 1.0, a.t_vreset = 0.0;
	a.t_nspikes = d_count, a.n_NP1 = N + 1, a.n_S = (long long)S, a.n_N = N;
	a.n_F = N; /* the scratch does not depend on F; size it once */
	fz_ptr scratch;
	unsigned long long need = fz_spike_burst_fused_scratch(&a, 0, props.sm_count);
	CHECK(fz_alloc(dev, need, &scratch));
	CHECK(fz_memset(dev, scratch, 0, need, NULL));
	fz_spike_burst_fused_scratch(&a, scratch, props.sm_count);
	fz_stream *st;
	CHECK(fz_stream_create(dev, &st));

	long long total = 0, stimuli = 1;
	int bad = 0;
	for (int b = 0; b < bursts && !bad; b++) {
		int p = b & 1;
		a.t_fired = d_list[p], a.n_F = F, a.t_v = d_v[p];
		a.t_spikes = d_list[1 - p], a.t_v_next = d_v[1 - p];
		/* the generated header's typed launcher: op list and launches in one call */
		if (fz_spike_burst_fused_run(art, &a, props.sm_count, st)) {
			fprintf(stderr, "spiking: burst %d: %s\n", b, fz_artifact_error(art));
			return 1;
		}
		int32_t count;
		CHECK(fz_copy_to_host(dev, &count, d_count, 4, st));
		CHECK(fz_stream_sync(dev, st));
		if (count < 0 || count > N) {
			fprintf(stderr, "spiking: burst %d: nspikes = %d is out of range\n", b, count);
			bad = 1;
			break;
		}
		/* the list: in range and distinct */
		CHECK(fz_copy_to_host(dev, list, d_list[1 - p], (size_t)count * 4, NULL));
		for (int32_t k = 0; k < count && !bad; k++) {
			if (list[k] < 0 || list[k] >= N || seen[list[k]]) {
				fprintf(stderr, "spiking: burst %d: spike %d (neuron %d) out of range or repeated\n", b, k, list[k]);
				bad = 1;
			} else {
				seen[list[k]] = 1;
			}
		}
		for (int32_t k = 0; k < count && list[k] >= 0 && list[k] < N; k++) seen[list[k]] = 0;
		total += count;
		if (b % 10 == 0 || b == bursts - 1) printf("  burst %3d: %d fired in, %d spikes out\n", b, F, count);
		F = count;
		if (F == 0) { /* silent: stimulate, as the next burst's fired list */
			F = stimulus(list, N), stimuli++;
			CHECK(fz_copy_to_device(dev, d_list[1 - p], list, (size_t)F * 4, NULL));
		}
	}
	fz_ptr bufs[] = {d_row, d_col, d_w, d_v[0], d_v[1], d_list[0], d_list[1], d_count, scratch};
	for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) CHECK(fz_free(dev, bufs[i]));
	CHECK(fz_stream_destroy(dev, st));
	fz_artifact_unload(art);
	fz_device_close(dev);
	free(list), free(seen);
	printf("%s: %lld spikes in %d bursts, %lld stimuli\n", bad ? "FAILED" : "ok", total, bursts, stimuli);
	return bad;
}
