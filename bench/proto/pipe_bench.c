/* Persistent pipelines, phase by phase (issue 23): the active-inference
 * step and T belief updates timed as one launch at 1..4 blocks an SM, each
 * phase of the one launch alone (the op list cut to it: timing only, the
 * results are not the step's), and the fused variant's kernels alone on a
 * stream. Built like tests/gpu/pipeline.c against one artifact folder's
 * headers (-IDIR), so a variant of fusec's output is timed by its own
 * header's op lists.
 *
 * usage: pipe_bench DIR [--ncu | --ncu-belief]   (--ncu: one fused step and
 * one launch at 8192^2; --ncu-belief: 100 belief updates at 1024^2 in one
 * launch; nothing timed, for Nsight Compute) */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuserun.h"
#include "active_inference_step.h"
#include "belief_update.h"

static fz_device *dev;

#define CHECK(call) do { int rc_ = (call); if (rc_) { \
	fprintf(stderr, "pipe_bench: %s:%d: %s: %s\n", __FILE__, __LINE__, #call, fz_device_error(dev)); exit(1); } } while (0)
#define ACHECK(art, call) do { int rc_ = (call); if (rc_) { \
	fprintf(stderr, "pipe_bench: %s:%d: %s: %s\n", __FILE__, __LINE__, #call, fz_artifact_error(art)); exit(1); } } while (0)

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static float urand(void)
{
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	return (float)((double)(rng >> 11) / 9007199254740992.0);
}
static fz_ptr rand_dev(size_t n, float lo, float hi)
{
	float *h = malloc(sizeof(float) * (n ? n : 1));
	for (size_t i = 0; i < n; i++) h[i] = lo + (hi - lo) * urand();
	fz_ptr p;
	CHECK(fz_alloc(dev, sizeof(float) * (n ? n : 1), &p));
	CHECK(fz_copy_to_device(dev, p, h, sizeof(float) * n, NULL));
	free(h);
	return p;
}
static fz_ptr zeros(unsigned long long bytes)
{
	fz_ptr p;
	CHECK(fz_alloc(dev, bytes ? bytes : 4, &p));
	CHECK(fz_memset(dev, p, 0, bytes ? bytes : 4, NULL));
	return p;
}
static int cmpf(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;
	return x < y ? -1 : x > y;
}

static fz_stream *st;
static fz_event *e0, *e1;

/* the median ms of reps calls of what(ctx) on st */
static float timeit(void (*what)(void *), void *ctx, int reps)
{
	float ms[256];
	if (reps > 256) reps = 256;
	for (int r = -3; r < reps; r++) {
		CHECK(fz_event_record(dev, e0, st));
		what(ctx);
		CHECK(fz_event_record(dev, e1, st));
		float x;
		CHECK(fz_event_elapsed(dev, e0, e1, &x));
		if (r >= 0) ms[r] = x;
	}
	qsort(ms, (size_t)reps, sizeof ms[0], cmpf);
	return ms[reps / 2];
}

/* ---- active inference ---- */
typedef struct Ai {
	fz_artifact *art;
	fz_active_inference_step_args a;
	fz_active_inference_once_params p;
	int sm, per_sm, first, nops; /* the phases [first, first + nops) of the one launch; nops 0: all */
	fz_op ops[8];
	int nfused, fop; /* the fused variant's op list; fop >= 0: that op alone */
} Ai;

static void ai_fused(void *v)
{
	Ai *x = v;
	if (x->fop < 0) ACHECK(x->art, fz_run(x->art, x->ops, x->nfused, &x->a, sizeof x->a, st));
	else ACHECK(x->art, fz_run(x->art, &x->ops[x->fop], 1, &x->a, sizeof x->a, st));
}
static void ai_once(void *v)
{
	Ai *x = v;
	if (fz_active_inference_once_prepare(&x->p, 1, x->sm)) exit(1);
	if (x->nops) {
		memmove(&x->p.op[0], &x->p.op[x->first], sizeof x->p.op[0] * (size_t)x->nops);
		x->p.nops = x->nops;
	}
	ACHECK(x->art, fz_pipeline_launch_capped(x->art, "active_inference_once", &x->p, sizeof x->p, FZ_active_inference_once_BLOCK,
	                                         x->per_sm, fz_active_inference_once_blocks(&x->p), st, NULL));
}

static void ai_bench(fz_artifact *art, long long M, long long N, int sm, int ncu)
{
	Ai x;
	memset(&x, 0, sizeof x);
	x.art = art, x.sm = sm, x.fop = -1;
	fz_active_inference_step_args a = {.t_W = rand_dev((size_t)(M * N), -1.0f / sqrtf((float)N), 1.0f / sqrtf((float)N)),
	                                   .t_mu = rand_dev((size_t)N, -1, 1), .t_o = rand_dev((size_t)M, -1, 1), .t_pi = rand_dev((size_t)M, 0.5f, 1),
	                                   .t_q = rand_dev((size_t)N, 0.01f, 1), .t_p = rand_dev((size_t)N, 0.01f, 1), .t_lr = 0.05,
	                                   .t_e = zeros(4ull * (unsigned long long)M), .t_mu_next = zeros(4ull * (unsigned long long)N),
	                                   .t_accuracy = zeros(4), .t_kl = zeros(4), .n_M = M, .n_N = N};
	unsigned long long need = fz_active_inference_step_fused_scratch(&a, 0, sm);
	fz_active_inference_step_fused_scratch(&a, zeros(need), sm);
	x.a = a;
	x.nfused = fz_active_inference_step_fused_ops(&a, sm, x.ops, 8);
	x.p.a = a, x.p.stall_block = x.p.stall_op = -1;
	need = fz_active_inference_once_scratch(&x.p, 0, sm);
	fz_active_inference_once_scratch(&x.p, zeros(need), sm);
	if (ncu) {
		ai_fused(&x), ai_once(&x);
		CHECK(fz_stream_sync(dev, st));
		return;
	}
	const int reps = M * N > 4000000 ? 40 : 100;
	printf("ai %lldx%lld fused %.4f ms (", M, N, timeit(ai_fused, &x, reps));
	for (x.fop = 0; x.fop < x.nfused; x.fop++) printf("%s%s %.4f", x.fop ? ", " : "", x.ops[x.fop].kernel, timeit(ai_fused, &x, reps));
	printf(")\n");
	x.fop = -1;
	for (x.per_sm = 0; x.per_sm <= 4; x.per_sm++) printf("ai %lldx%lld once per_sm=%d %.4f ms\n", M, N, x.per_sm, timeit(ai_once, &x, reps));
	x.per_sm = 0;
	if (fz_active_inference_once_prepare(&x.p, 1, sm)) exit(1);
	const int n = x.p.nops;
	for (x.first = 0; x.first < n; x.first++) {
		x.nops = 1;
		printf("ai %lldx%lld once phase %d alone (gx %u gy %u) %.4f ms\n", M, N, x.first, x.p.op[x.first].gx, x.p.op[x.first].gy, timeit(ai_once, &x, reps));
		if (fz_active_inference_once_prepare(&x.p, 1, sm)) exit(1);
	}
	x.nops = 0;
	CHECK(fz_active_inference_once_wait(art, &x.p, sm, st));
	fflush(stdout);
}

/* ---- belief updates ---- */
typedef struct Bu {
	fz_artifact *art;
	fz_belief_steps_params p;
	fz_belief_update_args a;
	fz_ptr x, y;
	long long T;
	int sm, per_sm;
} Bu;

static void bu_stream(void *v)
{
	Bu *b = v;
	fz_belief_update_args a = b->a;
	for (long long t = 0; t < b->T; t++) {
		a.t_mu = t == 0 ? b->a.t_mu : (t & 1) ? b->x : b->y;
		a.t_mu_next = (t & 1) ? b->y : b->x;
		ACHECK(b->art, fz_belief_update_fused_run(b->art, &a, b->sm, st));
	}
}
static void bu_once(void *v)
{
	Bu *b = v;
	ACHECK(b->art, fz_belief_steps_run(b->art, &b->p, b->T, b->sm, b->per_sm, st, NULL));
}
static fz_graph *g;
static void bu_graph(void *v)
{
	(void)v;
	CHECK(fz_graph_launch(dev, g, st));
}

static void bu_bench(fz_artifact *art, long long M, long long N, long long T, int sm, int ncu)
{
	Bu b;
	memset(&b, 0, sizeof b);
	b.art = art, b.sm = sm, b.T = T;
	fz_belief_update_args a = {.t_W = rand_dev((size_t)(M * N), -1.0f / sqrtf((float)N), 1.0f / sqrtf((float)N)),
	                           .t_mu = rand_dev((size_t)N, -1, 1), .t_o = rand_dev((size_t)M, -1, 1), .t_pi = rand_dev((size_t)M, 0.5f, 1),
	                           .t_lr = 0.05, .t_mu_next = zeros(4ull * (unsigned long long)N), .n_M = M, .n_N = N};
	unsigned long long need = fz_belief_update_fused_scratch(&a, 0, sm);
	fz_belief_update_fused_scratch(&a, zeros(need), sm);
	b.a = a, b.x = zeros(4ull * (unsigned long long)N), b.y = zeros(4ull * (unsigned long long)N);
	b.p.a = a, b.p.stall_block = b.p.stall_op = -1;
	need = fz_belief_steps_scratch(&b.p, 0, sm);
	fz_belief_steps_scratch(&b.p, zeros(need), sm);
	if (ncu) {
		bu_once(&b);
		CHECK(fz_belief_steps_wait(art, &b.p, sm, st));
		return;
	}
	const int reps = 30;
	CHECK(fz_graph_begin(dev, st));
	bu_stream(&b);
	CHECK(fz_graph_end(dev, st, &g));
	const float tg = timeit(bu_graph, &b, reps);
	fz_graph_destroy(dev, g);
	printf("belief %lldx%lld T=%lld graph %.4f ms\n", M, N, T, tg);
	for (b.per_sm = 0; b.per_sm <= 4; b.per_sm++) {
		const float to = timeit(bu_once, &b, reps);
		printf("belief %lldx%lld T=%lld once per_sm=%d %.4f ms (%.2f us a step, graph/one %.2fx)\n", M, N, T, b.per_sm, to, 1000 * to / T, tg / to);
	}
	CHECK(fz_belief_steps_wait(art, &b.p, sm, st));
	fflush(stdout);
}

int main(int argc, char **argv)
{
	if (argc < 2) return fprintf(stderr, "usage: pipe_bench DIR [--ncu | --ncu-belief]\n"), 2;
	const int ncu = argc > 2 && !strcmp(argv[2], "--ncu"), ncu_b = argc > 2 && !strcmp(argv[2], "--ncu-belief");
	char err[FZ_ERRMSG_SIZE], path[4096];
	if (fz_device_open(0, &dev, err)) return fprintf(stderr, "pipe_bench: no GPU: %s\n", err), 2;
	fz_device_props props;
	CHECK(fz_device_query(dev, &props));
	const int sm = props.sm_count;
	CHECK(fz_stream_create(dev, &st));
	CHECK(fz_event_create(dev, &e0));
	CHECK(fz_event_create(dev, &e1));
	fz_artifact *ai, *bu;
	snprintf(path, sizeof path, "%s/active_inference_step.manifest", argv[1]);
	CHECK(fz_artifact_load(dev, path, &ai));
	snprintf(path, sizeof path, "%s/belief_update.manifest", argv[1]);
	CHECK(fz_artifact_load(dev, path, &bu));
	printf("device: %s, %d SMs; artifacts %s\n", props.name, sm, argv[1]);
	if (ncu) {
		ai_bench(ai, 8192, 8192, sm, 1);
	} else if (ncu_b) {
		bu_bench(bu, 1024, 1024, 100, sm, 1);
	} else {
		ai_bench(ai, 1024, 1024, sm, 0);
		ai_bench(ai, 8192, 8192, sm, 0);
		bu_bench(bu, 1024, 1024, 100, sm, 0);
		bu_bench(bu, 8192, 8192, 4, sm, 0);
	}
	fz_artifact_unload(ai), fz_artifact_unload(bu);
	fz_device_close(dev);
	return 0;
}
