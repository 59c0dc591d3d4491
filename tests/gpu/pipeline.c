/* Persistent pipelines on a GPU: correctness, the watchdog, and the time of
 * one launch against launches on a stream and against a CUDA graph of them.
 *
 *   belief_steps (specs/belief_update.fuse): T belief updates in one launch.
 *     Checked bit-identical to T launch-at-a-time runs of the fused variant
 *     (its reductions are deterministic) and against T float64 reference
 *     steps, at awkward sizes and T = 1, 2, 3, 100 (the buffers' parity),
 *     1000 and 50 steps in a grid of one block, the gradient split across
 *     blocks.
 *   spike_burst_once (specs/spike_burst.fuse): the burst in one launch.
 *     Scatter-add order varies (float atomics): checked against the float64
 *     reference with the usual tolerance, spikes as a set.
 *   active_inference_once (specs/active_inference_step.fuse): prediction,
 *     error, accuracy, belief update and KL in one launch (fused: 2, unfused:
 *     7); also with the gradient split across blocks (2048x64, 4096x1024),
 *     where the KL phase shares the workspace and must wait for it. Per-
 *     element outputs bit-identical to the fused variant; the sums
 *     folded at the pipeline's block size, so checked run to run and against
 *     the reference (and the fused variant's bits reported).
 *   The watchdog: a block leaves before a barrier on purpose; the run must
 *     end with FZ_ERR_STALL naming the phase, and the next run be right.
 *
 * usage: pipeline [--quick] [ARTIFACT_DIR]   (--quick: small sizes, no timing,
 * for compute-sanitizer). Prints PASS/FAIL lines and a timing table; exits 1
 * on any failure, 2 without a GPU. */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuserun.h"
#include "active_inference_step.h"
#include "belief_update.h"
#include "spike_burst.h"

static fz_device *dev;
static int failures;

#define CHECK(call) do { int rc_ = (call); if (rc_) { \
	fprintf(stderr, "pipeline: %s:%d: %s: %s\n", __FILE__, __LINE__, #call, fz_device_error(dev)); exit(rc_ == FZ_ERR_NO_DRIVER || rc_ == FZ_ERR_NO_DEVICE ? 2 : 1); } } while (0)
#define ACHECK(art, call) do { int rc_ = (call); if (rc_) { \
	fprintf(stderr, "pipeline: %s:%d: %s: %s\n", __FILE__, __LINE__, #call, fz_artifact_error(art)); exit(1); } } while (0)

static uint64_t rng = 0x243f6a8885a308d3ull;
static double urand(void)
{
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	return (double)(rng >> 11) / 9007199254740992.0;
}

static fz_ptr dalloc(size_t bytes)
{
	fz_ptr p;
	CHECK(fz_alloc(dev, bytes ? bytes : 4, &p));
	return p;
}
static fz_ptr upload(const void *h, size_t bytes)
{
	fz_ptr p = dalloc(bytes);
	CHECK(fz_copy_to_device(dev, p, h, bytes, NULL));
	return p;
}
static void poison(fz_ptr p, size_t bytes) { CHECK(fz_memset(dev, p, 0xff, bytes, NULL)); } /* NaN in f32 */

static void result(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void result(int ok, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	printf("%s ", ok ? "PASS" : "FAIL");
	vprintf(fmt, ap);
	putchar('\n');
	va_end(ap);
	failures += !ok;
	fflush(stdout);
}

static int cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;
	return x < y ? -1 : x > y;
}
static float median(float *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_float);
	return v[n / 2];
}

/* ---- belief updates ------------------------------------------------ */

typedef struct Belief {
	long long M, N;
	float *W, *mu, *o, *pi;
	double lr;
	fz_ptr dW, dmu, do_, dpi, dout, dX, dY, fscratch, pscratch;
	fz_belief_update_args a;   /* launch-at-a-time */
	fz_belief_steps_params p;  /* the pipeline */
} Belief;

static void belief_init(Belief *b, long long M, long long N, int sm)
{
	memset(b, 0, sizeof *b);
	b->M = M, b->N = N;
	b->W = malloc(sizeof(float) * (size_t)(M * N)), b->mu = malloc(sizeof(float) * (size_t)N);
	b->o = malloc(sizeof(float) * (size_t)M), b->pi = malloc(sizeof(float) * (size_t)M);
	const double s = 1.0 / sqrt((double)(M > N ? M : N));
	for (long long i = 0; i < M * N; i++) b->W[i] = (float)((2 * urand() - 1) * s);
	for (long long i = 0; i < N; i++) b->mu[i] = (float)(2 * urand() - 1);
	for (long long i = 0; i < M; i++) b->o[i] = (float)(2 * urand() - 1), b->pi[i] = (float)(0.5 + 0.5 * urand());
	b->lr = 0.05;
	b->dW = upload(b->W, sizeof(float) * (size_t)(M * N)), b->dmu = upload(b->mu, sizeof(float) * (size_t)N);
	b->do_ = upload(b->o, sizeof(float) * (size_t)M), b->dpi = upload(b->pi, sizeof(float) * (size_t)M);
	b->dout = dalloc(sizeof(float) * (size_t)N), b->dX = dalloc(sizeof(float) * (size_t)N), b->dY = dalloc(sizeof(float) * (size_t)N);
	fz_belief_update_args a = {.t_W = b->dW, .t_mu = b->dmu, .t_o = b->do_, .t_pi = b->dpi, .t_lr = b->lr, .n_M = M, .n_N = N};
	unsigned long long need = fz_belief_update_fused_scratch(&a, 0, sm);
	b->fscratch = dalloc(need);
	CHECK(fz_memset(dev, b->fscratch, 0, need, NULL));
	fz_belief_update_fused_scratch(&a, b->fscratch, sm);
	b->a = a;
	b->p.a = a;
	b->p.a.t_mu_next = b->dout;
	b->p.stall_block = b->p.stall_op = -1;
	need = fz_belief_steps_scratch(&b->p, 0, sm);
	b->pscratch = dalloc(need);
	CHECK(fz_memset(dev, b->pscratch, 0, need, NULL));
	fz_belief_steps_scratch(&b->p, b->pscratch, sm);
}

static void belief_free(Belief *b)
{
	fz_ptr ps[] = {b->dW, b->dmu, b->do_, b->dpi, b->dout, b->dX, b->dY, b->fscratch, b->pscratch};
	for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++) fz_free(dev, ps[i]);
	free(b->W), free(b->mu), free(b->o), free(b->pi);
}

/* T fused runs, one after another on the stream; the result's buffer */
static fz_ptr belief_stepwise(fz_artifact *art, Belief *b, long long T, int sm, fz_stream *st)
{
	fz_belief_update_args a = b->a;
	for (long long t = 0; t < T; t++) {
		a.t_mu = t == 0 ? b->dmu : (t & 1) ? b->dX : b->dY;
		a.t_mu_next = (t & 1) ? b->dY : b->dX;
		ACHECK(art, fz_belief_update_fused_run(art, &a, sm, st));
	}
	return a.t_mu_next;
}

static void belief_check(fz_artifact *art, long long M, long long N, long long T, int sm)
{
	Belief b;
	belief_init(&b, M, N, sm);
	const size_t bytes = sizeof(float) * (size_t)N;
	float *ra = malloc(bytes), *rb = malloc(bytes);
	poison(b.dX, bytes), poison(b.dY, bytes), poison(b.dout, bytes);
	fz_ptr r = belief_stepwise(art, &b, T, sm, NULL);
	CHECK(fz_copy_to_host(dev, ra, r, bytes, NULL));
	unsigned int grid = 0;
	ACHECK(art, fz_belief_steps_run(art, &b.p, T, sm, 0, NULL, &grid));
	int rc = fz_belief_steps_wait(art, &b.p, sm, NULL);
	if (rc) fprintf(stderr, "pipeline: %s\n", fz_artifact_error(art));
	CHECK(fz_copy_to_host(dev, rb, b.dout, bytes, NULL));
	/* float64 reference, T steps */
	double *W = malloc(sizeof(double) * (size_t)(M * N)), *mu = malloc(sizeof(double) * (size_t)N);
	double *nx = malloc(sizeof(double) * (size_t)N), *o = malloc(sizeof(double) * (size_t)M), *pi = malloc(sizeof(double) * (size_t)M);
	for (long long i = 0; i < M * N; i++) W[i] = b.W[i];
	for (long long i = 0; i < N; i++) mu[i] = b.mu[i];
	for (long long i = 0; i < M; i++) o[i] = b.o[i], pi[i] = b.pi[i];
	for (long long t = 0; t < T; t++) {
		fz_belief_update_ref_args ra64 = {W, mu, o, pi, (double)(float)b.lr, nx, M, N};
		if (fz_belief_update_reference(&ra64)) fprintf(stderr, "pipeline: reference failed\n"), exit(1);
		memcpy(mu, nx, sizeof(double) * (size_t)N);
	}
	double maxerr = 0, maxref = 1e-3;
	long long diff = 0;
	for (long long i = 0; i < N; i++) {
		if (memcmp(&ra[i], &rb[i], sizeof(float))) diff++;
		double e = fabs((double)rb[i] - mu[i]);
		if (!(e <= maxerr)) maxerr = isnan(e) ? INFINITY : e;
		if (fabs(mu[i]) > maxref) maxref = fabs(mu[i]);
	}
	const double err = maxerr / maxref, tol = 1e-4 * (double)(T < 10 ? 1 : T / 10);
	result(!rc && !diff, "belief_steps M=%lld N=%lld T=%lld: one launch (%u blocks) vs %lld launch-at-a-time steps: %lld of %lld floats differ (bit-identical wanted)",
	       M, N, T, grid, T, diff, N);
	result(!rc && err <= tol, "belief_steps M=%lld N=%lld T=%lld: vs float64 reference: error %.3g (tolerance %.1g)", M, N, T, err, tol);
	free(W), free(mu), free(nx), free(o), free(pi), free(ra), free(rb);
	belief_free(&b);
}

/* the watchdog: block 0 leaves before phase `op`'s barrier of step 0 */
static void belief_stall(fz_artifact *art, int sm)
{
	Belief b;
	belief_init(&b, 256, 256, sm);
	b.p.stall_block = 0, b.p.stall_op = 1, b.p.watchdog_ns = 20000000; /* 20 ms */
	ACHECK(art, fz_belief_steps_run(art, &b.p, 3, sm, 0, NULL, NULL));
	int rc = fz_belief_steps_wait(art, &b.p, sm, NULL);
	const char *msg = fz_artifact_error(art);
	result(rc == FZ_ERR_STALL && strstr(msg, "phase 1 (belief_steps_k1)") && strstr(msg, "step 0"),
	       "watchdog: a block leaves before phase 1's barrier: %s: %s", fz_strerror(rc), rc ? msg : "(no error)");
	/* the next launch starts clean */
	const size_t bytes = sizeof(float) * 256;
	float *ra = malloc(bytes), *rb = malloc(bytes);
	b.p.stall_block = b.p.stall_op = -1, b.p.watchdog_ns = 0; /* the default: compute-sanitizer is slow */
	ACHECK(art, fz_belief_steps_run(art, &b.p, 3, sm, 0, NULL, NULL));
	rc = fz_belief_steps_wait(art, &b.p, sm, NULL);
	CHECK(fz_copy_to_host(dev, rb, b.dout, bytes, NULL));
	fz_ptr r = belief_stepwise(art, &b, 3, sm, NULL);
	CHECK(fz_copy_to_host(dev, ra, r, bytes, NULL));
	result(!rc && !memcmp(ra, rb, bytes), "watchdog: the launch after a stall runs clean and right (%s)", fz_strerror(rc));
	free(ra), free(rb);
	belief_free(&b);
}

/* ms per call of `what` (0 stream steps, 1 graph replay, 2 one launch), median of reps */
static float belief_time(fz_artifact *art, Belief *b, long long T, int sm, int what, int per_sm, fz_stream *st, int reps)
{
	fz_event *e0, *e1;
	CHECK(fz_event_create(dev, &e0));
	CHECK(fz_event_create(dev, &e1));
	fz_graph *g = NULL;
	if (what == 1) {
		CHECK(fz_graph_begin(dev, st));
		belief_stepwise(art, b, T, sm, st);
		CHECK(fz_graph_end(dev, st, &g));
	}
	float *ms = malloc(sizeof(float) * (size_t)reps);
	for (int r = -3; r < reps; r++) {
		CHECK(fz_event_record(dev, e0, st));
		if (what == 0) belief_stepwise(art, b, T, sm, st);
		else if (what == 1) CHECK(fz_graph_launch(dev, g, st));
		else ACHECK(art, fz_belief_steps_run(art, &b->p, T, sm, per_sm, st, NULL));
		CHECK(fz_event_record(dev, e1, st));
		float x;
		CHECK(fz_event_elapsed(dev, e0, e1, &x));
		if (r >= 0) ms[r] = x;
	}
	if (what == 2 && fz_belief_steps_wait(art, &b->p, sm, st)) fprintf(stderr, "pipeline: %s\n", fz_artifact_error(art)), failures++;
	float m = median(ms, reps);
	free(ms);
	fz_graph_destroy(dev, g);
	fz_event_destroy(dev, e0), fz_event_destroy(dev, e1);
	return m;
}

/* ---- an active-inference step ---------------------------------------- */

static int same_bits(const float *a, const float *b, long long n)
{
	long long d = 0;
	for (long long i = 0; i < n; i++) d += memcmp(&a[i], &b[i], sizeof(float)) != 0;
	return (int)(d > 1000000 ? 1000000 : d);
}

/* ms of one call: 0 fused stream (2 launches), 1 unfused stream, 2 graph of the fused, 3 one launch */
static float ai_time(fz_artifact *art, fz_active_inference_step_args *a, fz_active_inference_step_args *u,
                     fz_active_inference_once_params *p, int sm, int what, fz_stream *st, int reps)
{
	fz_event *e0, *e1;
	CHECK(fz_event_create(dev, &e0));
	CHECK(fz_event_create(dev, &e1));
	fz_graph *g = NULL;
	if (what == 2) {
		CHECK(fz_graph_begin(dev, st));
		ACHECK(art, fz_active_inference_step_fused_run(art, a, sm, st));
		CHECK(fz_graph_end(dev, st, &g));
	}
	float *ms = malloc(sizeof(float) * (size_t)reps);
	for (int r = -3; r < reps; r++) {
		CHECK(fz_event_record(dev, e0, st));
		if (what == 0) ACHECK(art, fz_active_inference_step_fused_run(art, a, sm, st));
		else if (what == 1) ACHECK(art, fz_active_inference_step_unfused_run(art, u, sm, st));
		else if (what == 2) CHECK(fz_graph_launch(dev, g, st));
		else ACHECK(art, fz_active_inference_once_run(art, p, 1, sm, 0, st, NULL));
		CHECK(fz_event_record(dev, e1, st));
		float x;
		CHECK(fz_event_elapsed(dev, e0, e1, &x));
		if (r >= 0) ms[r] = x;
	}
	if (what == 3 && fz_active_inference_once_wait(art, p, sm, st)) fprintf(stderr, "pipeline: %s\n", fz_artifact_error(art)), failures++;
	float m = median(ms, reps);
	free(ms);
	fz_graph_destroy(dev, g);
	fz_event_destroy(dev, e0), fz_event_destroy(dev, e1);
	return m;
}

static void ai_run(fz_artifact *art, long long M, long long N, int sm, int timing)
{
	float *W = malloc(sizeof(float) * (size_t)(M * N)), *mu = malloc(sizeof(float) * (size_t)N), *o = malloc(sizeof(float) * (size_t)M);
	float *pi = malloc(sizeof(float) * (size_t)M), *q = malloc(sizeof(float) * (size_t)N), *pr = malloc(sizeof(float) * (size_t)N);
	const double sc = 1.0 / sqrt((double)(M > N ? M : N));
	for (long long i = 0; i < M * N; i++) W[i] = (float)((2 * urand() - 1) * sc);
	for (long long i = 0; i < N; i++) mu[i] = (float)(2 * urand() - 1), q[i] = (float)(0.01 + 0.99 * urand()), pr[i] = (float)(0.01 + 0.99 * urand());
	for (long long i = 0; i < M; i++) o[i] = (float)(2 * urand() - 1), pi[i] = (float)(0.5 + 0.5 * urand());
	fz_active_inference_step_args a = {
		.t_W = upload(W, sizeof(float) * (size_t)(M * N)), .t_mu = upload(mu, sizeof(float) * (size_t)N),
		.t_o = upload(o, sizeof(float) * (size_t)M), .t_pi = upload(pi, sizeof(float) * (size_t)M),
		.t_q = upload(q, sizeof(float) * (size_t)N), .t_p = upload(pr, sizeof(float) * (size_t)N), .t_lr = 0.05,
		.t_e = dalloc(sizeof(float) * (size_t)M), .t_mu_next = dalloc(sizeof(float) * (size_t)N),
		.t_accuracy = dalloc(4), .t_kl = dalloc(4), .n_M = M, .n_N = N};
	fz_active_inference_step_args u = a;
	unsigned long long need = fz_active_inference_step_fused_scratch(&a, 0, sm);
	fz_ptr fs = dalloc(need), us, ps;
	CHECK(fz_memset(dev, fs, 0, need, NULL));
	fz_active_inference_step_fused_scratch(&a, fs, sm);
	need = fz_active_inference_step_unfused_scratch(&u, 0, sm);
	us = dalloc(need);
	CHECK(fz_memset(dev, us, 0, need, NULL));
	fz_active_inference_step_unfused_scratch(&u, us, sm);
	fz_active_inference_once_params p = {.a = a, .stall_block = -1, .stall_op = -1};
	need = fz_active_inference_once_scratch(&p, 0, sm);
	ps = dalloc(need);
	CHECK(fz_memset(dev, ps, 0, need, NULL));
	fz_active_inference_once_scratch(&p, ps, sm);
	/* fused, then the pipeline twice; outputs poisoned before each */
	float *ge[3], *gm[3], gs[3][2];
	unsigned int grid = 0;
	int rc = 0;
	for (int v = 0; v < 3; v++) {
		ge[v] = malloc(sizeof(float) * (size_t)M), gm[v] = malloc(sizeof(float) * (size_t)N);
		poison(a.t_e, sizeof(float) * (size_t)M), poison(a.t_mu_next, sizeof(float) * (size_t)N), poison(a.t_accuracy, 4), poison(a.t_kl, 4);
		if (v == 0) ACHECK(art, fz_active_inference_step_fused_run(art, &a, sm, NULL));
		else {
			ACHECK(art, fz_active_inference_once_run(art, &p, 1, sm, 0, NULL, &grid));
			if ((rc = fz_active_inference_once_wait(art, &p, sm, NULL))) fprintf(stderr, "pipeline: %s\n", fz_artifact_error(art));
		}
		CHECK(fz_copy_to_host(dev, ge[v], a.t_e, sizeof(float) * (size_t)M, NULL));
		CHECK(fz_copy_to_host(dev, gm[v], a.t_mu_next, sizeof(float) * (size_t)N, NULL));
		CHECK(fz_copy_to_host(dev, &gs[v][0], a.t_accuracy, 4, NULL));
		CHECK(fz_copy_to_host(dev, &gs[v][1], a.t_kl, 4, NULL));
	}
	/* float64 reference */
	double *Wd = malloc(sizeof(double) * (size_t)(M * N)), *mud = malloc(sizeof(double) * (size_t)N), *od = malloc(sizeof(double) * (size_t)M);
	double *pid = malloc(sizeof(double) * (size_t)M), *qd = malloc(sizeof(double) * (size_t)N), *pd = malloc(sizeof(double) * (size_t)N);
	double *re = malloc(sizeof(double) * (size_t)M), *rm = malloc(sizeof(double) * (size_t)N), racc = 0, rkl = 0;
	for (long long i = 0; i < M * N; i++) Wd[i] = W[i];
	for (long long i = 0; i < N; i++) mud[i] = mu[i], qd[i] = q[i], pd[i] = pr[i];
	for (long long i = 0; i < M; i++) od[i] = o[i], pid[i] = pi[i];
	fz_active_inference_step_ref_args ra = {.t_W = Wd, .t_mu = mud, .t_o = od, .t_pi = pid, .t_q = qd, .t_p = pd,
	                                        .t_lr = (double)(float)0.05, .t_e = re, .t_mu_next = rm, .t_accuracy = &racc,
	                                        .t_kl = &rkl, .n_M = M, .n_N = N};
	if (fz_active_inference_step_reference(&ra)) fprintf(stderr, "pipeline: reference failed\n"), exit(1);
	double err = 0, big = 1e-3;
	for (long long i = 0; i < M; i++) err = fmax(err, fabs(ge[1][i] - re[i])), big = fmax(big, fabs(re[i]));
	for (long long i = 0; i < N; i++) err = fmax(err, fabs(gm[1][i] - rm[i])), big = fmax(big, fabs(rm[i]));
	const double e_acc = fabs(gs[1][0] - racc) / fmax(fabs(racc), 1e-3), e_kl = fabs(gs[1][1] - rkl) / fmax(fabs(rkl), 1e-3);
	const int d_e = same_bits(ge[0], ge[1], M), d_m = same_bits(gm[0], gm[1], N);
	const int rerun = same_bits(ge[1], ge[2], M) + same_bits(gm[1], gm[2], N) + same_bits(gs[1], gs[2], 2);
	result(!rc && !isnan(err) && err / big <= 1e-4 && e_acc <= 1e-4 && e_kl <= 1e-4,
	       "active_inference_once M=%lld N=%lld (%u blocks): vs float64 reference: e, mu_next %.3g, accuracy %.3g, kl %.3g", M, N, grid,
	       err / big, e_acc, e_kl);
	result(!rc && !d_e && !d_m && !rerun,
	       "active_inference_once M=%lld N=%lld: e and mu_next bit-identical to the fused variant (%d, %d differ), two launches "
	       "identical (%d differ); sums vs fused: accuracy %s, kl %s",
	       M, N, d_e, d_m, rerun, memcmp(&gs[0][0], &gs[1][0], 4) ? "differs in its last bits (folded at another block size)" : "identical",
	       memcmp(&gs[0][1], &gs[1][1], 4) ? "differs" : "identical");
	if (timing) {
		fz_stream *st;
		CHECK(fz_stream_create(dev, &st));
		const int reps = 100;
		float t[4];
		for (int w = 0; w < 4; w++) t[w] = ai_time(art, &a, &u, &p, sm, w, st, reps);
		printf("TIME active_inference_step M=%lld N=%lld: unfused stream %.4f ms (7 launches), fused stream %.4f ms (2 launches), "
		       "graph of the fused %.4f ms, one launch %.4f ms; graph/one %.2fx, fused/one %.2fx\n",
		       M, N, t[1], t[0], t[2], t[3], t[2] / t[3], t[0] / t[3]);
		fz_stream_destroy(dev, st);
	}
	fz_ptr all[] = {a.t_W, a.t_mu, a.t_o, a.t_pi, a.t_q, a.t_p, a.t_e, a.t_mu_next, a.t_accuracy, a.t_kl, fs, us, ps};
	for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) fz_free(dev, all[i]);
	for (int v = 0; v < 3; v++) free(ge[v]), free(gm[v]);
	free(W), free(mu), free(o), free(pi), free(q), free(pr), free(Wd), free(mud), free(od), free(pid), free(qd), free(pd), free(re), free(rm);
}

/* ---- the spiking burst ---------------------------------------------- */

static void spike_run(fz_artifact *art, long long N, int syn, double rate, int sm, int timing)
{
	const long long S = N * syn;
	int32_t *row_ptr = malloc(sizeof(int32_t) * (size_t)(N + 1)), *col = malloc(sizeof(int32_t) * (size_t)S);
	float *w = malloc(sizeof(float) * (size_t)S), *v = malloc(sizeof(float) * (size_t)N);
	long long F = (long long)(N * rate);
	if (F < 1) F = 1;
	int32_t *fired = malloc(sizeof(int32_t) * (size_t)F);
	for (long long i = 0; i <= N; i++) row_ptr[i] = (int32_t)(i * syn);
	for (long long s = 0; s < S; s++) col[s] = (int32_t)(urand() * N), w[s] = (float)(0.02 * urand());
	for (long long i = 0; i < N; i++) v[i] = (float)(1.06 * urand()); /* about 1% fire */
	for (long long k = 0; k < F; k++) fired[k] = (int32_t)((k * (N / F)) % N);
	fz_spike_burst_args a = {.t_fired = upload(fired, sizeof(int32_t) * (size_t)F), .t_row_ptr = upload(row_ptr, sizeof(int32_t) * (size_t)(N + 1)),
	                         .t_col = upload(col, sizeof(int32_t) * (size_t)S), .t_w = upload(w, sizeof(float) * (size_t)S),
	                         .t_v = upload(v, sizeof(float) * (size_t)N), .t_decay = 0.95, .t_vth = 1.0, .t_vreset = 0.0,
	                         .t_v_next = dalloc(sizeof(float) * (size_t)N), .t_spikes = dalloc(sizeof(int32_t) * (size_t)N),
	                         .t_nspikes = dalloc(sizeof(int32_t)), .n_F = F, .n_NP1 = N + 1, .n_S = S, .n_N = N};
	unsigned long long need = fz_spike_burst_fused_scratch(&a, 0, sm);
	fz_ptr fs = dalloc(need);
	CHECK(fz_memset(dev, fs, 0, need, NULL));
	fz_spike_burst_fused_scratch(&a, fs, sm);
	fz_spike_burst_once_params p = {.a = a, .stall_block = -1, .stall_op = -1};
	need = fz_spike_burst_once_scratch(&p, 0, sm);
	fz_ptr ps = dalloc(need);
	CHECK(fz_memset(dev, ps, 0, need, NULL));
	fz_spike_burst_once_scratch(&p, ps, sm);
	/* float64 reference */
	double *wd = malloc(sizeof(double) * (size_t)S), *vd = malloc(sizeof(double) * (size_t)N), *vn = malloc(sizeof(double) * (size_t)N);
	int32_t *sp = malloc(sizeof(int32_t) * (size_t)N), nsp = 0;
	for (long long s = 0; s < S; s++) wd[s] = w[s];
	for (long long i = 0; i < N; i++) vd[i] = v[i];
	fz_spike_burst_ref_args ra = {fired, row_ptr, col, wd, vd, 0.95, 1.0, 0.0, vn, sp, &nsp, F, N + 1, S, N};
	if (fz_spike_burst_reference(&ra)) fprintf(stderr, "pipeline: spike reference failed\n"), exit(1);
	char *ref_set = calloc((size_t)N, 1);
	for (int32_t k = 0; k < nsp; k++) ref_set[sp[k]] = 1;
	float *gv = malloc(sizeof(float) * (size_t)N);
	int32_t *gs = malloc(sizeof(int32_t) * (size_t)N), gn = -1;
	for (int variant = 0; variant < 2; variant++) {
		poison(a.t_v_next, sizeof(float) * (size_t)N), poison(a.t_spikes, sizeof(int32_t) * (size_t)N), poison(a.t_nspikes, 4);
		unsigned int grid = 0;
		int rc = 0;
		if (variant == 0) ACHECK(art, fz_spike_burst_fused_run(art, &a, sm, NULL));
		else {
			ACHECK(art, fz_spike_burst_once_run(art, &p, 1, sm, 0, NULL, &grid));
			rc = fz_spike_burst_once_wait(art, &p, sm, NULL);
		}
		if (rc) fprintf(stderr, "pipeline: %s\n", fz_artifact_error(art));
		CHECK(fz_copy_to_host(dev, gv, a.t_v_next, sizeof(float) * (size_t)N, NULL));
		CHECK(fz_copy_to_host(dev, &gn, a.t_nspikes, 4, NULL));
		CHECK(fz_copy_to_host(dev, gs, a.t_spikes, sizeof(int32_t) * (size_t)N, NULL));
		double maxerr = 0, maxref = 1e-3;
		for (long long i = 0; i < N; i++) {
			double e = fabs((double)gv[i] - vn[i]);
			if (!(e <= maxerr)) maxerr = isnan(e) ? INFINITY : e;
			if (fabs(vn[i]) > maxref) maxref = fabs(vn[i]);
		}
		int set_ok = gn == nsp;
		char *seen = calloc((size_t)N, 1);
		for (int32_t k = 0; set_ok && k < gn; k++) {
			if (gs[k] < 0 || gs[k] >= N || seen[gs[k]] || !ref_set[gs[k]]) set_ok = 0;
			else seen[gs[k]] = 1;
		}
		free(seen);
		result(!rc && maxerr / maxref <= 1e-4 && set_ok, "spike_burst %s N=%lld F=%lld: v_next error %.3g, spikes %d (reference %d) %s",
		       variant ? "one launch (spike_burst_once)" : "fused, 2 launches", N, F, maxerr / maxref, gn, nsp,
		       set_ok ? "same set" : "DIFFERENT set");
		if (variant) printf("     grid %u blocks of %d\n", grid, FZ_spike_burst_once_BLOCK);
	}
	if (timing) {
		fz_stream *st;
		CHECK(fz_stream_create(dev, &st));
		fz_event *e0, *e1;
		CHECK(fz_event_create(dev, &e0));
	CHECK(fz_event_create(dev, &e1));
		const int reps = 200;
		float *ms = malloc(sizeof(float) * reps);
		int per_sm[] = {-1, 1, 2, 4, 0};
		for (int c = 0; c < 5; c++) {
			for (int r = -5; r < reps; r++) {
				CHECK(fz_event_record(dev, e0, st));
				if (per_sm[c] < 0) ACHECK(art, fz_spike_burst_fused_run(art, &a, sm, st));
				else ACHECK(art, fz_spike_burst_once_run(art, &p, 1, sm, per_sm[c], st, NULL));
				CHECK(fz_event_record(dev, e1, st));
				float x;
				CHECK(fz_event_elapsed(dev, e0, e1, &x));
				if (r >= 0) ms[r] = x;
			}
			if (per_sm[c] >= 0 && fz_spike_burst_once_wait(art, &p, sm, st)) fprintf(stderr, "pipeline: %s\n", fz_artifact_error(art)), failures++;
			if (per_sm[c] < 0) printf("TIME spike_burst N=%lld F=%lld syn=%d: fused variant, 2 launches on a stream: %.4f ms\n", N, F, syn, median(ms, reps));
			else printf("TIME spike_burst N=%lld F=%lld syn=%d: one launch, %s blocks an SM: %.4f ms\n", N, F, syn,
			            per_sm[c] ? (char[2]){(char)('0' + per_sm[c]), 0} : "occupancy's", median(ms, reps));
		}
		free(ms);
		fz_event_destroy(dev, e0), fz_event_destroy(dev, e1);
		fz_stream_destroy(dev, st);
	}
	fz_ptr all[] = {a.t_fired, a.t_row_ptr, a.t_col, a.t_w, a.t_v, a.t_v_next, a.t_spikes, a.t_nspikes, fs, ps};
	for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) fz_free(dev, all[i]);
	free(row_ptr), free(col), free(w), free(v), free(fired), free(wd), free(vd), free(vn), free(sp), free(ref_set), free(gv), free(gs);
}

int main(int argc, char **argv)
{
	int quick = 0;
	const char *dir = "generated";
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quick")) quick = 1;
		else dir = argv[i];
	}
	char err[FZ_ERRMSG_SIZE], path[4096];
	if (fz_device_open(0, &dev, err)) return fprintf(stderr, "pipeline: no GPU: %s\n", err), 2;
	fz_device_props props;
	CHECK(fz_device_query(dev, &props));
	const int sm = props.sm_count;
	printf("device: %s, %d SMs\n", props.name, sm);
	fz_artifact *bu, *sb;
	snprintf(path, sizeof path, "%s/belief_update.manifest", dir);
	CHECK(fz_artifact_load(dev, path, &bu));
	snprintf(path, sizeof path, "%s/spike_burst.manifest", dir);
	CHECK(fz_artifact_load(dev, path, &sb));
	fz_artifact *ai;
	snprintf(path, sizeof path, "%s/active_inference_step.manifest", dir);
	CHECK(fz_artifact_load(dev, path, &ai));
	ai_run(ai, 1, 1, sm, 0);
	ai_run(ai, 37, 1001, sm, 0);
	/* the gradient split across blocks (gy 2, 4): its partials share the
	   workspace with the KL sum's, so that phase waits at a barrier */
	ai_run(ai, 2048, 64, sm, 0);
	if (!quick) ai_run(ai, 4096, 1024, sm, 0);
	ai_run(ai, quick ? 129 : 1024, quick ? 67 : 1024, sm, !quick);
	if (!quick) ai_run(ai, 8192, 8192, sm, 1);

	/* {1, 1, 1000} and {5, 3, 50}: a grid of one block (its barrier is
	   __syncthreads); {3000, 40, 3}: the gradient split across 2 blocks */
	const long long sizes[][3] = {{1, 1, 1}, {37, 1000, 2}, {1000, 37, 3}, {257, 131, 5}, {1, 1, 1000}, {5, 3, 50}, {3000, 40, 3},
	                              {1024, 1024, 100}};
	const int nsizes = (int)(sizeof sizes / sizeof sizes[0]);
	for (int i = 0; i < nsizes; i++) {
		if (quick && i == nsizes - 1) belief_check(bu, 64, 96, 4, sm);
		else belief_check(bu, sizes[i][0], sizes[i][1], quick && sizes[i][2] > 20 ? 20 : sizes[i][2], sm); /* racecheck is slow */
	}
	belief_stall(bu, sm);
	spike_run(sb, quick ? 4099 : 1LL << 20, quick ? 7 : 100, 0.01, sm, !quick);
	spike_run(sb, 1, 1, 1.0, sm, 0);

	if (!quick) {
		fz_stream *st;
		CHECK(fz_stream_create(dev, &st));
		/* the last row: no work, so a step is two barriers and the phase loop */
		const long long Ts[] = {1, 10, 100, 1000}, MN[] = {1024, 1024, 1024, 1};
		for (int i = 0; i < 4; i++) {
			const long long T = Ts[i];
			Belief b;
			belief_init(&b, MN[i], MN[i], sm);
			const int reps = 50;
			float ts = belief_time(bu, &b, T, sm, 0, 0, st, reps);
			float tg = belief_time(bu, &b, T, sm, 1, 0, st, reps);
			float tp = belief_time(bu, &b, T, sm, 2, 0, st, reps);
			printf("TIME belief_update %lldx%lld T=%lld: stream %.4f ms (%lld launches), graph replay %.4f ms (%lld kernel nodes, 1 graph launch), "
			       "one launch %.4f ms; graph/one %.2fx, stream/one %.2fx\n",
			       MN[i], MN[i], T, ts, 2 * T, tg, 2 * T, tp, tg / tp, ts / tp);
			belief_free(&b);
		}
		fz_stream_destroy(dev, st);
	}
	fz_artifact_unload(bu), fz_artifact_unload(sb), fz_artifact_unload(ai);
	fz_device_close(dev);
	printf("%s: %d failure%s\n", failures ? "FAIL" : "PASS", failures, failures == 1 ? "" : "s");
	return failures ? 1 : 0;
}
