/* Persistent pipelines and graphs under the fake libcuda: the grid of a
 * cooperative launch from the kernel's occupancy, a grid too large refused
 * as the driver does, the watchdog's report (status words written by hand,
 * as a stalled kernel leaves them) turned into FZ_ERR_STALL naming the
 * phase and step, the words cleared for the next launch, and the graph
 * calls. The GPU side of the same is tests/gpu/pipeline.c. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h" /* fuserun.h first: the headers' launchers need it */
#include "spike_burst.h"
#include "belief_update.h"
#include "active_inference_step.h"

/* A pipeline's phase may have more blocks than the fused kernel it comes
   from (a sliced reduction takes 8 points a block there, not 32): its
   scratch must hold a whole-grid partial for every block of every phase.
   Host arithmetic only (the scratch placed at a made-up address). */
static void pipeline_partials_room(int sm)
{
	static const long long sizes[][2] = {{1, 1}, {37, 1001}, {1024, 1024}, {8192, 8192}, {3, 100000}};
	for (int i = 0; i < 5; i++) {
		fz_active_inference_once_params p = {.a = {.n_M = sizes[i][0], .n_N = sizes[i][1]}};
		const unsigned long long base = 1ull << 32, need = fz_active_inference_once_scratch(&p, 0, sm);
		fz_active_inference_once_scratch(&p, base, sm);
		unsigned long long most = 0;
		const int ok = fz_active_inference_once_prepare(&p, 1, sm) == 0;
		for (int j = 0; ok && j < p.nops; j++)
			if (p.op[j].kind == 0 && (unsigned long long)p.op[j].gx * p.op[j].gy > most) most = (unsigned long long)p.op[j].gx * p.op[j].gy;
		check(ok && p.a.ws_part >= base && p.a.ws_part + 8 * most <= p.ctl && p.ctl + FZ_PIPE_CTL_BYTES <= base + need,
		      "active_inference_once: the scratch holds a partial for every block of every phase", NULL);
	}
}

void test_pipeline_fake(void)
{
	char err[FZ_ERRMSG_SIZE], p[4096];
	void *h = dlopen(fake_so, RTLD_NOW | RTLD_LOCAL);
	long (*coop)(void) = h ? (long (*)(void))dlsym(h, "fakecuda_coop_launches") : NULL;
	long (*graphs)(void) = h ? (long (*)(void))dlsym(h, "fakecuda_graph_launches") : NULL;
	if (!check(coop && graphs, "the fake libcuda counts cooperative and graph launches", h ? dlerror() : "dlopen")) return;
	pipeline_partials_room(132);
	pipeline_partials_room(7);
	setenv("FAKECUDA_CC", "90", 1);
	fz_device *d = NULL;
	if (!expect("open the fake device", fz_device_open(0, &d, err), FZ_OK, err, NULL)) return;
	fz_device_props props;
	fz_device_query(d, &props);
	const int sm = props.sm_count;
	fz_artifact *a = NULL;
	if (!expect("load spike_burst", fz_artifact_load(d, path2(p, gen_dir, "spike_burst.manifest"), &a), FZ_OK, fz_device_error(d), NULL)) {
		fz_device_close(d);
		return;
	}
	/* buffers: sizes only matter to the host side here */
	const long long N = 1000, F = 10, S = 7000;
	fz_spike_burst_args args = {.n_F = F, .n_NP1 = N + 1, .n_S = S, .n_N = N, .t_decay = 0.9, .t_vth = 1, .t_vreset = 0};
	fz_ptr bufs[8];
	const size_t bytes[8] = {4 * F, 4 * (N + 1), 4 * S, 4 * S, 4 * N, 4 * N, 4 * N, 4};
	int rc = 0;
	for (int i = 0; i < 8; i++) rc |= fz_alloc(d, bytes[i], &bufs[i]);
	args.t_fired = bufs[0], args.t_row_ptr = bufs[1], args.t_col = bufs[2], args.t_w = bufs[3], args.t_v = bufs[4];
	args.t_v_next = bufs[5], args.t_spikes = bufs[6], args.t_nspikes = bufs[7];
	fz_spike_burst_once_params pp = {.a = args, .stall_block = -1, .stall_op = -1};
	const unsigned long long need = fz_spike_burst_once_scratch(&pp, 0, sm);
	fz_ptr scratch = 0;
	rc |= fz_alloc(d, need, &scratch) || fz_memset(d, scratch, 0, need, NULL);
	fz_spike_burst_once_scratch(&pp, scratch, sm);
	check(!rc && pp.ctl > scratch && pp.ctl + FZ_PIPE_CTL_BYTES <= scratch + need && pp.a.ws_count >= scratch,
	      "the pipeline's scratch holds the fused scratch and the barrier's words", fz_device_error(d));

	/* before any launch worked (the function and its occupancy are kept after one) */
	setenv("FAKECUDA_OCCUPANCY", "0", 1);
	expect("no block fits on an SM", fz_spike_burst_once_run(a, &pp, 1, sm, 0, NULL, NULL), FZ_ERR_CUDA, fz_artifact_error(a),
	       "no block of", "spike_burst_once", NULL);
	unsetenv("FAKECUDA_OCCUPANCY");

	/* the grid: occupancy (the fake says 2 an SM) times the SM count, or capped
	   by max_per_sm, or by the blocks the largest phase can use */
	unsigned int grid = 0;
	const long before = coop();
	rc = fz_spike_burst_once_run(a, &pp, 1, sm, 0, NULL, &grid);
	expect("one cooperative launch", rc, FZ_OK, fz_artifact_error(a), NULL);
	const unsigned long long want = fz_spike_burst_once_blocks(&pp);
	check(want >= 1 && want < 2u * (unsigned)sm && grid == want && coop() == before + 1,
	      "1000 neurons: the grid is the blocks its largest phase can use, fewer than fit", NULL);
	const long long small_n = args.n_N;
	pp.a.n_N = 1 << 20, pp.a.n_NP1 = pp.a.n_N + 1; /* sizes only: the fake runs nothing */
	rc = fz_spike_burst_once_run(a, &pp, 1, sm, 0, NULL, &grid);
	check(rc == FZ_OK && fz_spike_burst_once_blocks(&pp) > 2u * (unsigned)sm && grid == 2u * (unsigned)sm,
	      "2^20 neurons: the grid is the occupancy's blocks on every SM", fz_artifact_error(a));
	rc = fz_spike_burst_once_run(a, &pp, 1, sm, 1, NULL, &grid);
	check(rc == FZ_OK && grid == (unsigned)sm, "at most max_per_sm blocks an SM when asked", fz_artifact_error(a));
	pp.a.n_N = small_n, pp.a.n_NP1 = small_n + 1;
	rc = fz_spike_burst_once_run(a, &pp, 1, sm, 0, NULL, &grid);
	check(pp.nops >= 2 && pp.steps == 1 && pp.watchdog_ns > 0, "the phase table: the fused op list, one step, a watchdog", NULL);
	int kinds_ok = 1;
	for (int i = 0; i < pp.nops; i++)
		if (pp.op[i].kind == 0 && (pp.op[i].kernel < 0 || pp.op[i].kernel > 1 || !pp.op[i].gx)) kinds_ok = 0;
	check(kinds_ok, "every launch phase names one of the pipeline's kernels, with a grid", NULL);
	expect("nothing stalled: wait returns 0", fz_spike_burst_once_wait(a, &pp, sm, NULL), FZ_OK, fz_artifact_error(a), NULL);
	expect("no steps is refused", fz_spike_burst_once_run(a, &pp, 0, sm, 0, NULL, NULL), FZ_ERR_INVALID, "", NULL);
	expect("a pipeline kernel the artifact lacks", fz_pipeline_launch(a, "nope", &pp, sizeof pp, 256, 0, NULL, NULL),
	       FZ_ERR_UNKNOWN_KERNEL, fz_artifact_error(a), "nope", NULL);
	expect("a block size that is not a multiple of 32", fz_pipeline_launch(a, "spike_burst_once", &pp, sizeof pp, 100, 0, NULL, NULL),
	       FZ_ERR_INVALID, fz_artifact_error(a), "multiple of 32", NULL);
	/* the params are the size the kernel declares, as fz_run checks an op list's args */
	char wide[sizeof pp + 64];
	memcpy(wide, &pp, sizeof pp);
	char want_bytes[64];
	snprintf(want_bytes, sizeof want_bytes, "takes %zu (its PTX)", sizeof pp);
	const long coop_before = coop();
	expect("params larger than the kernel's are refused", fz_pipeline_launch(a, "spike_burst_once", wide, sizeof wide, 256, 0, NULL, NULL),
	       FZ_ERR_ARGS_SIZE, fz_artifact_error(a), "spike_burst_once", want_bytes, NULL);
	expect("params smaller than the kernel's are refused", fz_pipeline_launch(a, "spike_burst_once", wide, 8, 256, 0, NULL, NULL),
	       FZ_ERR_ARGS_SIZE, fz_artifact_error(a), "params are 8 bytes", want_bytes, NULL);
	expect("another kernel's args size is refused", fz_pipeline_launch(a, "spike_burst_once", &args, sizeof args, 256, 0, NULL, NULL),
	       FZ_ERR_ARGS_SIZE, fz_artifact_error(a), want_bytes, NULL);
	check(coop() == coop_before, "refused pipeline launches launch nothing", NULL);
	expect("a kernel name that is not an identifier", fz_pipeline_launch(a, "a b", &pp, sizeof pp, 256, 0, NULL, NULL),
	       FZ_ERR_INVALID, fz_artifact_error(a), "C identifier", NULL);

	/* the watchdog: the words as a kernel stalled after phase 1 of step 3 leaves them */
	unsigned int words[4] = {5, 77, 2, 3}, back[4] = {9, 9, 9, 9}, ctr = 41;
	rc = fz_copy_to_device(d, pp.ctl, words, sizeof words, NULL) || fz_copy_to_device(d, pp.a.ws_count, &ctr, 4, NULL);
	check(!rc, "the stalled words written", fz_device_error(d));
	rc = fz_spike_burst_once_wait(a, &pp, sm, NULL);
	expect("a stall is FZ_ERR_STALL naming the phase's kernel and the step", rc, FZ_ERR_STALL, fz_artifact_error(a),
	       "spike_burst_once stalled", "phase 1 (spike_burst_once_k1)", "step 3", "watchdog", NULL);
	fz_copy_to_host(d, back, pp.ctl, sizeof back, NULL);
	fz_copy_to_host(d, &ctr, pp.a.ws_count, 4, NULL);
	check(!back[0] && !back[1] && !back[2] && !back[3] && !ctr, "the barrier's words and the reduction counter are cleared", NULL);
	expect("the next wait is clean", fz_spike_burst_once_wait(a, &pp, sm, NULL), FZ_OK, fz_artifact_error(a), NULL);
	words[2] = 200; /* a phase past the table */
	fz_copy_to_device(d, pp.ctl, words, sizeof words, NULL);
	expect("a phase number past the table is reported, not read", fz_spike_burst_once_wait(a, &pp, sm, NULL), FZ_ERR_STALL,
	       fz_artifact_error(a), "phase 199 (?)", NULL);

	/* graphs */
	fz_stream *st = NULL;
	fz_graph *g = NULL;
	rc = fz_stream_create(d, &st);
	expect("capture refuses the default stream", fz_graph_begin(d, NULL), FZ_ERR_INVALID, fz_device_error(d), "default stream", NULL);
	const long gl = graphs();
	rc = rc || fz_graph_begin(d, st) || fz_spike_burst_fused_run(a, &args, sm, st) || fz_graph_end(d, st, &g) ||
	     fz_graph_launch(d, g, st) || fz_graph_launch(d, g, st);
	check(!rc && g && graphs() == gl + 2, "a graph captured from a stream and launched twice", fz_device_error(d));
	expect("destroying the graph", fz_graph_destroy(d, g), FZ_OK, fz_device_error(d), NULL);
	expect("destroying no graph", fz_graph_destroy(d, NULL), FZ_OK, "", NULL);
	fz_stream_destroy(d, st);

	/* another fusion's pipeline: T steps, the carried output's second buffer */
	fz_artifact *b = NULL;
	if (expect("load belief_update", fz_artifact_load(d, path2(p, gen_dir, "belief_update.manifest"), &b), FZ_OK, fz_device_error(d), NULL)) {
		fz_belief_steps_params bp = {.a = {.n_M = 64, .n_N = 96, .t_lr = 0.1}, .stall_block = -1, .stall_op = -1};
		fz_ptr bb[5], bs = 0;
		const size_t bbytes[5] = {4 * 64 * 96, 4 * 96, 4 * 64, 4 * 64, 4 * 96};
		rc = 0;
		for (int i = 0; i < 5; i++) rc |= fz_alloc(d, bbytes[i], &bb[i]);
		bp.a.t_W = bb[0], bp.a.t_mu = bb[1], bp.a.t_o = bb[2], bp.a.t_pi = bb[3], bp.a.t_mu_next = bb[4];
		const unsigned long long bneed = fz_belief_steps_scratch(&bp, 0, sm);
		rc |= fz_alloc(d, bneed, &bs) || fz_memset(d, bs, 0, bneed, NULL);
		fz_belief_steps_scratch(&bp, bs, sm);
		check(!rc && bp.carry[0] >= bs && bp.carry[0] + 4 * 96 <= bp.ctl, "belief_steps: a second buffer for mu_next before the words", NULL);
		expect("belief_steps: 100 steps in one launch", fz_belief_steps_run(b, &bp, 100, sm, 0, NULL, NULL), FZ_OK, fz_artifact_error(b), NULL);
		check(bp.steps == 100, "belief_steps: the step count is the launch's", NULL);
		for (int i = 0; i < 5; i++) fz_free(d, bb[i]);
		fz_free(d, bs);
		fz_artifact_unload(b);
	}
	for (int i = 0; i < 8; i++) fz_free(d, bufs[i]);
	fz_free(d, scratch);
	fz_artifact_unload(a);
	fz_device_close(d);
	dlclose(h);
}
