/* Active inference as an application would run it: a loop of fused chains
 * on one stream, through libfuserun and three generated headers.
 *
 * A linear generative model o ~ W mu with precisions pi. Each step
 *   gemv_axpby_sum:   g = W mu                      (the prediction)
 *   prediction_error: e = o - g, total = sum pi e^2 (twice the free energy)
 *   belief_update:    mu <- mu + lr W^T (pi (o - W mu))
 * runs as three fused op lists; mu ping-pongs between two buffers and the
 * free energy is read back every few steps. It must go down.
 *
 * usage: active_inference [ARTIFACT_DIR [N [STEPS]]]   (default generated 2048 100) */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuserun.h" /* first: the generated headers' typed launchers need it */
#include "belief_update.h"
#include "gemv_axpby_sum.h"
#include "prediction_error.h"

static fz_device *dev;

#define CHECK(call) do { int rc_ = (call); if (rc_) { \
	fprintf(stderr, "active_inference: %s: %s\n", #call, fz_device_error(dev)); exit(rc_ == FZ_ERR_NO_DRIVER || rc_ == FZ_ERR_NO_DEVICE ? 2 : 1); } } while (0)
#define CHECK_ART(a, call) do { if (call) { fprintf(stderr, "active_inference: %s: %s\n", #call, fz_artifact_error(a)); exit(1); } } while (0)

static uint64_t rng = 0x243f6a8885a308d3ull;
static double urand(void)
{
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	return (double)(rng >> 11) / 9007199254740992.0;
}

static fz_ptr upload(const float *host, size_t n)
{
	fz_ptr p;
	CHECK(fz_alloc(dev, n * sizeof *host, &p));
	CHECK(fz_copy_to_device(dev, p, host, n * sizeof *host, NULL));
	return p;
}

static fz_ptr zeros(unsigned long long bytes)
{
	fz_ptr p;
	CHECK(fz_alloc(dev, bytes, &p));
	CHECK(fz_memset(dev, p, 0, bytes, NULL));
	return p;
}

static fz_artifact *load(const char *dir, const char *name)
{
	char path[4096];
	fz_artifact *a;
	snprintf(path, sizeof path, "%s/%s.manifest", dir, name);
	CHECK(fz_artifact_load(dev, path, &a));
	return a;
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "generated";
	long long n = argc > 2 ? atoll(argv[2]) : 2048;
	int steps = argc > 3 ? atoi(argv[3]) : 100;
	if (n <= 0 || steps <= 0) return fprintf(stderr, "usage: active_inference [ARTIFACT_DIR [N [STEPS]]]\n"), 2;
	char err[FZ_ERRMSG_SIZE];
	int rc = fz_device_open(0, &dev, err);
	if (rc) {
		fprintf(stderr, "active_inference: no GPU to run on: %s\n", err);
		return 2;
	}
	fz_device_props props;
	CHECK(fz_device_query(dev, &props));
	int sm = props.sm_count;
	fz_artifact *gemv = load(dir, "gemv_axpby_sum"), *pe = load(dir, "prediction_error"), *bu = load(dir, "belief_update");
	printf("active inference on %s (%s): N = M = %lld, %d steps\n", props.name, fz_artifact_target(bu), n, steps);

	/* the model and the observation */
	size_t N = (size_t)n;
	float *W = malloc(N * N * sizeof *W), *o = malloc(N * sizeof *o), *pi = malloc(N * sizeof *pi), *mu = malloc(N * sizeof *mu);
	if (!W || !o || !pi || !mu) return fprintf(stderr, "active_inference: out of memory\n"), 1;
	for (size_t i = 0; i < N * N; i++) W[i] = (float)((2 * urand() - 1) / sqrt((double)n));
	for (size_t i = 0; i < N; i++) o[i] = (float)(2 * urand() - 1), pi[i] = (float)(0.5 + 0.5 * urand()), mu[i] = 0.0f;
	fz_ptr dW = upload(W, N * N), d_o = upload(o, N), dpi = upload(pi, N);
	fz_ptr dmu[2] = {upload(mu, N), zeros(N * sizeof(float))};
	fz_ptr dg = zeros(N * 4), de = zeros(N * 4), dacc = zeros(N * 4), dgsum = zeros(4), dtotal = zeros(4);
	free(W), free(o), free(pi), free(mu);

	/* the args of each fusion, for even and odd steps (mu and mu_next swap) */
	fz_gemv_axpby_sum_args ga[2];
	fz_prediction_error_args pa = {0};
	fz_belief_update_args ba[2];
	pa.t_o = d_o, pa.t_g = dg, pa.t_pi = dpi, pa.t_e = de, pa.t_accuracy = dacc, pa.t_total = dtotal, pa.n_N = n;
	for (int p = 0; p < 2; p++) {
		memset(&ga[p], 0, sizeof ga[p]), memset(&ba[p], 0, sizeof ba[p]);
		ga[p].t_A = dW, ga[p].t_x = dmu[p], ga[p].t_z = d_o, ga[p].t_alpha = 1.0, ga[p].t_beta = 0.0;
		ga[p].t_y = dg, ga[p].t_s = dgsum, ga[p].n_M = n, ga[p].n_N = n;
		ba[p].t_W = dW, ba[p].t_mu = dmu[p], ba[p].t_o = d_o, ba[p].t_pi = dpi, ba[p].t_lr = 0.5;
		ba[p].t_mu_next = dmu[1 - p], ba[p].n_M = n, ba[p].n_N = n;
	}
	/* scratch, zeroed once, shared by the two parities (one stream runs them in turn) */
	fz_ptr gs = zeros(fz_gemv_axpby_sum_fused_scratch(&ga[0], 0, sm));
	fz_ptr ps = zeros(fz_prediction_error_fused_scratch(&pa, 0, sm));
	fz_ptr bs = zeros(fz_belief_update_fused_scratch(&ba[0], 0, sm));
	fz_prediction_error_fused_scratch(&pa, ps, sm);
	fz_op gops[2][8], pops[8], bops[2][8];
	int ng[2], nb[2], np;
	np = fz_prediction_error_fused_ops(&pa, sm, pops, 8);
	for (int p = 0; p < 2; p++) {
		fz_gemv_axpby_sum_fused_scratch(&ga[p], gs, sm);
		fz_belief_update_fused_scratch(&ba[p], bs, sm);
		ng[p] = fz_gemv_axpby_sum_fused_ops(&ga[p], sm, gops[p], 8);
		nb[p] = fz_belief_update_fused_ops(&ba[p], sm, bops[p], 8);
		if (ng[p] < 0 || nb[p] < 0 || np < 0) return fprintf(stderr, "active_inference: op lists too long\n"), 1;
	}

	fz_stream *st;
	CHECK(fz_stream_create(dev, &st));
	double first = 0, last = 0;
	int rising = 0;
	for (int t = 0; t < steps; t++) {
		int p = t & 1;
		CHECK_ART(gemv, fz_run(gemv, gops[p], ng[p], &ga[p], sizeof ga[p], st));
		CHECK_ART(pe, fz_run(pe, pops, np, &pa, sizeof pa, st));
		CHECK_ART(bu, fz_run(bu, bops[p], nb[p], &ba[p], sizeof ba[p], st));
		if (t % 10 == 0 || t == steps - 1) {
			float total;
			CHECK(fz_copy_to_host(dev, &total, dtotal, 4, st));
			CHECK(fz_stream_sync(dev, st));
			double f = 0.5 * total;
			if (t == 0) first = f;
			else rising |= f > last * (1 + 1e-5);
			last = f;
			printf("  step %4d  free energy %.6f\n", t, f);
		}
	}
	CHECK(fz_stream_sync(dev, st));
	fz_ptr bufs[] = {dW, d_o, dpi, dmu[0], dmu[1], dg, de, dacc, dgsum, dtotal, gs, ps, bs};
	for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) CHECK(fz_free(dev, bufs[i]));
	CHECK(fz_stream_destroy(dev, st));
	fz_artifact_unload(gemv), fz_artifact_unload(pe), fz_artifact_unload(bu);
	fz_device_close(dev);
	int ok = isfinite(last) && (steps == 1 || (last < first && !rising));
	printf("%s: free energy %.6f -> %.6f\n", ok ? "ok" : "FAILED (did not decrease)", first, last);
	return ok ? 0 : 1;
}
