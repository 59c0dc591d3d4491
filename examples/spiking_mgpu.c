/* A spiking network sharded across GPUs by neuron range: rank r owns
 * neurons lo_r .. hi_r-1 (their potentials and the synapses that end on
 * them, as a CSR over every source neuron), runs one step of
 * spike_burst_shard on them, and the step's spike lists (global indices)
 * are all-gathered so that every rank holds the whole network's fired list
 * for the next step. The ranks are the devices of one process (fz_group_open)
 * or one process per GPU (DEVICES "procs": fz_group_join, as
 * fuserun-launch starts them). Synaptic weights are multiples of 1/1024,
 * so the scatter-adds are exact in any order and the dynamics do not depend
 * on how many ranks share them: every step's spike set and the final
 * potentials are compared bit for bit with a one-device run.
 *
 * The exchange stays on the devices (fz_exchange): each rank's list is
 * padded to the step's capacity with a sentinel neuron (index N, whose CSR
 * row is empty) and all-gathered with its count on a stream of its own.
 * A step (every launch on the rank's stream, the exchange on its own):
 *   1. scatter from this rank's own list of the last step (ready before the
 *      exchange: it overlaps it);
 *   2. the stream waits, on the device, for the last step's exchange;
 *   3. scatter from the other ranks' lists (two launches: the slots before
 *      and after this rank's);
 *   4. the list filled with the sentinel, then integrate, fire, reset;
 *   5. the exchange of this step's list and count is posted.
 * The step's capacity sizes the all-gather and every scatter launch (a warp
 * an entry, sentinels included), so it is the cost; SPIKING_MGPU_EXCHANGE
 * picks how it is chosen:
 *   lag: from the counts of two steps before (page-locked host
 *      memory the exchange's stream writes; the host waits for that step's
 *      exchange, never for a compute stream, so the queue stays full), the
 *      largest rank's count plus its growth over a step twice, plus a
 *      margin (SPIKING_MGPU_MARGIN percent, default 12). A count found past
 *      its step's capacity (a list was cut) is redone: the streams drained,
 *      that step's lists exchanged again at its largest count, and the one
 *      step queued after it run again (its inputs, the potentials and the
 *      own list, kept in two buffers each): the results stay exact;
 *   fixed (the default: the only one measured on GPUs, 2026-11-27): the
 *      largest rank's neuron count every step (commit 418fa9a: no list can
 *      be cut; at the benchmark's ~99% firing it moves what lag would);
 *   sync: the counts all-gathered first, the host waits for them, the
 *      lists sent at the largest count (exact, a host round trip a step:
 *      the host-synchronised exchange's sizes).
 * SPIKING_MGPU_URGENT=1 runs the exchange's streams at the device's
 * greatest priority, so the all-gather's blocks start ahead of the queued
 * blocks of the own list's scatter it overlaps (not yet measured).
 * The counts go to a history on the device, checked after the last step
 * against each step's capacity (SPIKING_MGPU_CAP lowers the largest). The
 * network is stimulated once: one that falls silent stays silent (the
 * result line counts such steps).
 *
 * usage: spiking_mgpu [ARTIFACT_DIR [N [STEPS [DEVICES]]]]   (default generated 1048576 50 1,2)
 * Prints one "result" line per device count (parsed by bench/mgpu.sh): the
 * mean step after the first, the exchange's time on its stream, and the
 * time the compute stream stood waiting for it (exposed). Exit 0 ok, 1
 * results differ or a failure, 2 no GPU. */
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

/* the first step's stimulus: 1% of the neurons, a stride from a start */
static int32_t stimulus(int32_t *fired, int32_t n)
{
	int32_t f = n / 100 > 0 ? n / 100 : 1, start = target(0xabcdull - 1, n);
	for (int32_t k = 0; k < f; k++) fired[k] = (int32_t)((start + (int64_t)k * (n / f)) % n);
	return f;
}

enum { FIXED, LAG, SYNC };
static const char *const mode_name[] = {"fixed", "lag", "sync"};

typedef struct run {
	int devices, procs, rank, silent, mode, redos, urgent;
	long long cap, sent;            /* sent: the capacities' sum over the steps (x ranks: the warps a rank scatters) */
	long long *count;               /* spikes each step */
	uint64_t *sum, *sq;             /* order-independent checksums of each step's set */
	float *v;                       /* final potentials */
	double step_ms, exchange_ms, exposed_ms;
	long long total;
} run;

/* a local rank's share: buffers, args, events */
typedef struct shard {
	fz_device *d;
	fz_stream *st;
	fz_artifact *art;
	int sm, rank;                   /* rank: the job-wide one */
	long long lo, hi;
	fz_ptr row, col, w, v[2], spk[2], recv, stim, scratch, vall; /* spk: this rank's lists of even and odd steps */
	fz_event **eb, **ec;            /* each step: after the own list's scatter, after the wait */
	fz_spike_burst_shard_args a;
} shard;

typedef struct sim {
	fz_group *g;
	fz_exchange *x;
	int L, W, steps;                /* local ranks, the job's ranks */
	int mode, margin, redos, force; /* force: a test's step treated as cut (-1 none) */
	int urgent;                     /* the exchange's streams at the greatest priority */
	int32_t N, F0;
	long long C;                    /* the exchange's capacity, a rank's list */
	long long *cap;                 /* each step's capacity */
	int *cnt;                       /* steps x W: the counts the host has read */
	fz_ptr hist;                    /* rank 0: every step's gathered lists (W x C a step) */
	shard s[FZ_MAX_GROUP];
} sim;

#define FAIL(...) do { fprintf(stderr, "spiking_mgpu: " __VA_ARGS__); fputc('\n', stderr); return 1; } while (0)

/* the synapses ending on [lo, hi) as a CSR over every source neuron, and
   the row of the sentinel N (empty): rp has N + 2 entries */
static int build_csr(int32_t N, long long lo, long long hi, int32_t *rp, int32_t **cl, float **wt, size_t *ns)
{
	size_t cap = (size_t)N * SYN, s_r = 0;
	*cl = malloc(cap * 4), *wt = malloc(cap * 4);
	if (!*cl || !*wt) return 1;
	rp[0] = 0;
	for (int32_t p = 0; p < N; p++) {
		for (uint64_t s = (uint64_t)p * SYN; s < (uint64_t)(p + 1) * SYN; s++) {
			int32_t t = target(s, N);
			if (t >= lo && t < hi) (*cl)[s_r] = (int32_t)(t - lo), (*wt)[s_r] = weight(s), s_r++;
		}
		rp[p + 1] = (int32_t)s_r;
	}
	rp[N + 1] = (int32_t)s_r;
	*ns = s_r;
	return 0;
}

/* device buffers of one shard (every one zeroed or filled: nothing read
   is left undefined, on a device or under the CPU tests' fake driver) */
static int alloc_shard(sim *m, shard *h, const int32_t *rp, const int32_t *cl, const float *wt, size_t s_r, const int32_t *stim)
{
	fz_device *d = h->d;
	size_t n = (size_t)(h->hi - h->lo), nl = n > (size_t)m->C ? n : (size_t)m->C, S = s_r ? s_r : 1, N = (size_t)m->N;
	float *vh = malloc((n ? n : 1) * 4);
	if (!vh) return FZ_ERR_NO_MEMORY;
	for (size_t i = 0; i < n; i++) vh[i] = v0((int32_t)(h->lo + (long long)i));
	int e = fz_alloc(d, (N + 2) * 4, &h->row) || fz_copy_to_device(d, h->row, rp, (N + 2) * 4, NULL) || fz_alloc(d, S * 4, &h->col) ||
	        fz_alloc(d, S * 4, &h->w) || fz_memset(d, h->col, 0, S * 4, NULL) || fz_memset(d, h->w, 0, S * 4, NULL) ||
	        (s_r && fz_copy_to_device(d, h->col, cl, s_r * 4, NULL)) || (s_r && fz_copy_to_device(d, h->w, wt, s_r * 4, NULL)) ||
	        fz_alloc(d, (n ? n : 1) * 4, &h->v[0]) || fz_alloc(d, (n ? n : 1) * 4, &h->v[1]) ||
	        fz_copy_to_device(d, h->v[0], vh, n * 4, NULL) || fz_memset(d, h->v[1], 0, (n ? n : 1) * 4, NULL) ||
	        fz_alloc(d, nl * 4, &h->spk[0]) || fz_memset(d, h->spk[0], 0xff, nl * 4, NULL) ||
	        fz_alloc(d, nl * 4, &h->spk[1]) || fz_memset(d, h->spk[1], 0xff, nl * 4, NULL) ||
	        fz_alloc(d, (size_t)m->F0 * 4, &h->stim) || fz_copy_to_device(d, h->stim, stim, (size_t)m->F0 * 4, NULL) ||
	        fz_alloc(d, N * 4, &h->vall) || fz_memset(d, h->vall, 0, N * 4, NULL);
	if (!e) e = fz_alloc(d, (size_t)m->W * (size_t)m->C * 4, &h->recv);
	free(vh);
	return e;
}

/* the args, the scratch, the per-step events */
static int setup_args(sim *m, shard *h, size_t s_r)
{
	fz_device_props props;
	if (fz_device_query(h->d, &props)) return 1;
	h->sm = props.sm_count;
	fz_spike_burst_shard_args *x = &h->a;
	memset(x, 0, sizeof *x);
	x->t_row_ptr = h->row, x->t_col = h->col, x->t_w = h->w;
	x->t_decay = 0.9, x->t_vth = 1.0, x->t_vreset = 0.0, x->t_base = h->lo;
	x->n_NP1 = (long long)m->N + 2, x->n_S = s_r ? (long long)s_r : 1, x->n_N = h->hi - h->lo, x->n_F = m->N; /* scratch sized once */
	if (x->n_N < 1) return fprintf(stderr, "spiking_mgpu: rank %d owns no neuron\n", h->rank), 1;
	unsigned long long need = fz_spike_burst_shard_fused_scratch(x, 0, h->sm);
	if (fz_alloc(h->d, need, &h->scratch) || fz_memset(h->d, h->scratch, 0, need, NULL)) return 1;
	fz_spike_burst_shard_fused_scratch(x, h->scratch, h->sm);
	h->eb = calloc((size_t)m->steps, sizeof *h->eb), h->ec = calloc((size_t)m->steps, sizeof *h->ec);
	if (!h->eb || !h->ec) return 1;
	for (int t = 0; t < m->steps; t++)
		if (fz_event_create(h->d, &h->eb[t]) || fz_event_create(h->d, &h->ec[t])) return 1;
	int nf, rc = fz_artifact_check_layout(h->art, FZ_spike_burst_shard_LAYOUT);
	const fz_field *fields = fz_spike_burst_shard_fields(&nf);
	return rc || fz_artifact_check_fields(h->art, fields, nf);
}

static int setup(sim *m, const char *dir)
{
	char path[4096];
	fz_artifact *arts[FZ_MAX_GROUP] = {0};
	snprintf(path, sizeof path, "%s/spike_burst_shard.manifest", dir);
	if (fz_group_load(m->g, path, arts)) FAIL("%s", fz_group_error(m->g));
	int32_t *rp = malloc(((size_t)m->N + 2) * 4), *stim = malloc((size_t)m->N * 4), *cl = NULL;
	float *wt = NULL;
	int rc = !rp || !stim;
	if (!rc) m->F0 = stimulus(stim, m->N);
	for (int r = 0; r < m->L; r++) {
		shard *h = &m->s[r];
		h->d = fz_group_device(m->g, r), h->st = fz_group_stream(m->g, r), h->art = arts[r], h->rank = fz_group_rank(m->g, r);
	}
	for (int r = 0; !rc && r < m->L; r++) {
		shard *h = &m->s[r];
		size_t s_r = 0;
		fz_group_range(m->N, m->W, h->rank, &h->lo, &h->hi);
		rc = build_csr(m->N, h->lo, h->hi, rp, &cl, &wt, &s_r);
		if (!rc) rc = alloc_shard(m, h, rp, cl, wt, s_r, stim) || setup_args(m, h, s_r);
		free(cl), free(wt), cl = NULL, wt = NULL;
		if (rc) fprintf(stderr, "spiking_mgpu: rank %d: %s%s\n", h->rank, fz_device_error(h->d), fz_artifact_error(h->art));
	}
	free(rp), free(stim);
	if (rc) return 1;
	int fl = FZ_EXCHANGE_TIMED | FZ_EXCHANGE_HOST_COUNTS | (m->urgent ? FZ_EXCHANGE_URGENT : 0);
	if (fz_exchange_create(m->g, 4, m->C, m->steps, fl, &m->x)) FAIL("%s", fz_group_error(m->g));
	/* the history on rank 0: steps x W x C x 4 bytes (1.6 GB at 2^22 neurons, 100 steps) */
	if (m->s[0].rank == 0 && fz_alloc(m->s[0].d, (size_t)m->steps * (size_t)m->W * (size_t)m->C * 4, &m->hist))
		FAIL("rank 0: no room for the spike history (%d steps of %lld): %s", m->steps, (long long)m->W * m->C, fz_device_error(m->s[0].d));
	return 0;
}

/* one launch of the fused variant's op `which` (0 the scatter over fired,
   1 integrate-fire-reset), on the shard's stream */
static int launch(shard *h, int which, fz_ptr fired, long long F)
{
	fz_op ops[4];
	h->a.t_fired = fired, h->a.n_F = F;
	if (fz_spike_burst_shard_fused_ops(&h->a, h->sm, ops, 4) != 2) return FZ_ERR_INVALID;
	return fz_run(h->art, &ops[which], 1, &h->a, sizeof h->a, h->st);
}

/* where step t's gathered lists land: one rank alone reads its own list in place */
static fz_ptr recv_of(const sim *m, const shard *h, int t) { return m->W == 1 ? h->spk[t & 1] : h->recv; }

/* 3. of a step: the other ranks' lists of the last step (t-1, each padded
   to its capacity), and rank 0's history of them */
static int scatter_remote(sim *m, shard *h, int t)
{
	long long R = h->rank, C = m->cap[t - 1];
	fz_ptr in = recv_of(m, h, t - 1);
	int rc = R > 0 ? launch(h, 0, in, R * C) : 0;
	if (!rc && R < m->W - 1) rc = launch(h, 0, in + (fz_ptr)((R + 1) * C * 4), (m->W - R - 1) * C);
	if (!rc && m->hist && h == &m->s[0])
		rc = fz_copy_on_device(h->d, m->hist + (fz_ptr)(t - 1) * (fz_ptr)(m->W * m->C * 4), in, (size_t)(m->W * C * 4), h->st);
	return rc;
}

/* the largest count of step t the host has read */
static long long top(const sim *m, int t)
{
	long long x = 0;
	for (int k = 0; k < m->W; k++) x = m->cnt[t * m->W + k] > x ? m->cnt[t * m->W + k] : x;
	return x;
}

/* lag: step t's capacity from the counts of step t-2 (read) and t-3: the
   largest plus twice its growth over a step, a margin, to 256 items; every
   rank computes the same from the same gathered counts */
static long long lag_cap(const sim *m, int t)
{
	long long c2 = top(m, t - 2), c3 = t >= 3 ? top(m, t - 3) : c2, g = c2 > c3 ? c2 - c3 : 0;
	long long est = c2 + 2 * g + c2 * m->margin / 100 + 256;
	est = (est + 255) / 256 * 256;
	return est < m->C ? est : m->C;
}

/* 5. of a step: the exchange of step t's lists, at its capacity (sync: the
   counts first, then the lists at the largest) */
static int post(sim *m, int t)
{
	fz_ptr spk[FZ_MAX_GROUP], recv[FZ_MAX_GROUP];
	for (int r = 0; r < m->L; r++) spk[r] = m->s[r].spk[t & 1], recv[r] = recv_of(m, &m->s[r], t);
	if (m->mode != SYNC) return fz_exchange_post_sized(m->x, t, m->cap[t], spk, recv);
	int rc = fz_exchange_post_counts(m->x, t) || fz_exchange_host_counts(m->x, t, m->cnt + t * m->W);
	m->cap[t] = top(m, t) > 0 ? top(m, t) : 1;
	return rc || fz_exchange_post_lists(m->x, t, m->cap[t], spk, recv);
}

/* a step's own list (of step t-1, or the stimulus) scattered first */
static int scatter_own(sim *m, shard *h, int t)
{
	h->a.t_nspikes = fz_exchange_count(m->x, (int)(h - m->s), t);
	return t ? launch(h, 0, h->spk[(t - 1) & 1], m->cap[t - 1]) : launch(h, 0, h->stim, m->F0);
}

static int step(sim *m, int t)
{
	int p = t & 1;
	for (int r = 0; r < m->L; r++) { /* this rank's own list first: it overlaps the exchange */
		shard *h = &m->s[r];
		if (scatter_own(m, h, t) || fz_event_record(h->d, h->eb[t], h->st))
			FAIL("step %d rank %d: %s%s", t, h->rank, fz_artifact_error(h->art), fz_device_error(h->d));
	}
	if (t && fz_exchange_wait(m->x)) FAIL("step %d: %s", t, fz_group_error(m->g));
	for (int r = 0; r < m->L; r++) {
		shard *h = &m->s[r];
		int rc = fz_event_record(h->d, h->ec[t], h->st) || (t && scatter_remote(m, h, t));
		size_t words = (size_t)(h->hi - h->lo) > (size_t)m->C ? (size_t)(h->hi - h->lo) : (size_t)m->C;
		if (!rc) rc = fz_memset32(h->d, h->spk[p], (unsigned)m->N, words, h->st); /* the sentinel past the count, any capacity */
		h->a.t_v = h->v[p], h->a.t_v_next = h->v[1 - p], h->a.t_spikes = h->spk[p];
		if (!rc) rc = launch(h, 1, h->spk[p], m->C);
		if (rc) FAIL("step %d rank %d: %s%s", t, h->rank, fz_artifact_error(h->art), fz_device_error(h->d));
	}
	if (post(m, t)) FAIL("step %d: %s", t, fz_group_error(m->g));
	return 0;
}

/* step s's lists were cut (a count past its capacity), found while step
   s+1 is queued and s+2 not: drain, send s's lists again at its largest
   count, and run s+1 again (its potentials in, v[(s+1)&1], and s's own
   list, spk[s&1], are untouched until s+2) */
static int redo(sim *m, int s)
{
	m->redos++;
	if (fz_exchange_wait(m->x) || fz_group_sync(m->g) || fz_exchange_rewind(m->x, s)) FAIL("redo of step %d: %s", s, fz_group_error(m->g));
	long long c = top(m, s);
	m->cap[s] = c > m->cap[s] ? (c < m->C ? c : m->C) : m->cap[s];
	if (post(m, s)) FAIL("redo of step %d: %s", s, fz_group_error(m->g));
	if (s + 1 == m->steps) return 0;
	m->cap[s + 1] = lag_cap(m, s + 2) > m->cap[s + 1] ? lag_cap(m, s + 2) : m->cap[s + 1];
	return step(m, s + 1);
}

/* before step t (lag): the counts of step t-2 read, its overflow redone,
   step t's capacity */
static int plan(sim *m, int t)
{
	m->cap[t] = m->C;
	if (m->mode != LAG || t < 2) return 0;
	if (fz_exchange_host_counts(m->x, t - 2, m->cnt + (t - 2) * m->W)) FAIL("step %d: %s", t - 2, fz_group_error(m->g));
	if ((top(m, t - 2) > m->cap[t - 2] || t - 2 == m->force) && redo(m, t - 2)) return 1;
	m->cap[t] = lag_cap(m, t);
	return 0;
}

static int advance(sim *m, int t) { return plan(m, t) || step(m, t); }

/* after the last step (lag): the last two steps' counts, not yet read */
static int settle(sim *m)
{
	for (int s = m->steps >= 2 ? m->steps - 2 : 0; m->mode == LAG && s < m->steps; s++) {
		if (fz_exchange_host_counts(m->x, s, m->cnt + s * m->W)) FAIL("step %d: %s", s, fz_group_error(m->g));
		if ((top(m, s) > m->cap[s] || s == m->force) && redo(m, s)) return 1;
	}
	return 0;
}

/* every step's spike set from rank 0's history: each rank's slot up to
   its count; read in pieces of whole steps, up to 256 MB each */
static int checksums(sim *m, run *res, const int *counts)
{
	size_t slot = (size_t)m->W * (size_t)m->C, per = ((size_t)256 << 20) / (slot * 4); /* a step's slot: W x C, its lists W x cap[t] */
	per = per < 1 ? 1 : per > (size_t)m->steps ? (size_t)m->steps : per;
	int32_t *list = malloc(per * slot * 4);
	if (!list) FAIL("out of memory");
	for (int t0 = 0; t0 < m->steps; t0 += (int)per) {
		int n = m->steps - t0 < (int)per ? m->steps - t0 : (int)per;
		if (fz_copy_to_host(m->s[0].d, list, m->hist + (fz_ptr)t0 * slot * 4, (size_t)n * slot * 4, NULL)) {
			free(list);
			FAIL("%s", fz_device_error(m->s[0].d));
		}
		for (int t = t0; t < t0 + n; t++)
			for (int k = 0; k < m->W; k++)
				for (long long i = 0; i < counts[t * m->W + k]; i++) {
					uint64_t e = (uint64_t)list[(size_t)(t - t0) * slot + (size_t)k * (size_t)m->cap[t] + (size_t)i];
					res->sum[t] += e, res->sq[t] += mix(e);
				}
	}
	free(list);
	return 0;
}

/* the times: the mean step after the first, and per step the exchange on
   its stream and the compute stream's wait for it (the most of any local rank) */
static void timings(sim *m, run *res, double wall_ms)
{
	int n = m->steps > 1 ? m->steps - 1 : 1, o = m->steps > 1;
	double xs = 0, ws = 0;
	for (int t = o; t < m->steps; t++) {
		float mx = 0, mw = 0, ms;
		for (int r = 0; r < m->L; r++) {
			if (!fz_exchange_elapsed(m->x, r, t, &ms) && ms > mx) mx = ms;
			if (!fz_event_elapsed(m->s[r].d, m->s[r].eb[t], m->s[r].ec[t], &ms) && ms > mw) mw = ms;
		}
		xs += mx, ws += mw;
	}
	res->step_ms = wall_ms / n, res->exchange_ms = xs / n, res->exposed_ms = ws / n;
}

/* after the last step: its lists into the history, every count checked,
   the spike sets and the final potentials (rank 0) */
static int finish(sim *m, run *res)
{
	if (fz_exchange_wait(m->x)) FAIL("%s", fz_group_error(m->g));
	shard *h0 = &m->s[0];
	size_t slot = (size_t)m->W * (size_t)m->C * 4;
	if (m->hist && fz_copy_on_device(h0->d, m->hist + (fz_ptr)(m->steps - 1) * slot, recv_of(m, h0, m->steps - 1),
	                                 (size_t)m->W * (size_t)m->cap[m->steps - 1] * 4, h0->st))
		FAIL("%s", fz_device_error(h0->d));
	int *counts = malloc((size_t)m->steps * (size_t)m->W * sizeof *counts);
	if (!counts) FAIL("out of memory");
	int rc = fz_exchange_counts(m->x, m->steps, counts);
	if (rc) fprintf(stderr, "spiking_mgpu: %s\n", fz_group_error(m->g));
	for (int t = 0; !rc && t < m->steps; t++) {
		for (int k = 0; k < m->W; k++) res->count[t] += counts[t * m->W + k];
		res->total += res->count[t], res->silent += !res->count[t];
	}
	if (!rc && m->hist) rc = checksums(m, res, counts);
	free(counts);
	size_t bytes[FZ_MAX_WORLD];
	fz_ptr vs[FZ_MAX_GROUP], va[FZ_MAX_GROUP];
	for (int k = 0; k < m->W; k++) {
		long long lo, hi;
		fz_group_range(m->N, m->W, k, &lo, &hi);
		bytes[k] = (size_t)(hi - lo) * 4;
	}
	for (int r = 0; r < m->L; r++) vs[r] = m->s[r].v[m->steps & 1], va[r] = m->s[r].vall;
	if (!rc && (fz_group_allgatherv(m->g, vs, bytes, va) || fz_group_sync(m->g))) FAIL("%s", fz_group_error(m->g));
	if (!rc && h0->rank == 0 && fz_copy_to_host(h0->d, res->v, h0->vall, (size_t)m->N * 4, NULL)) FAIL("%s", fz_device_error(h0->d));
	return rc;
}

static void teardown(sim *m)
{
	fz_exchange_destroy(m->x);
	for (int r = 0; r < m->L; r++) {
		shard *h = &m->s[r];
		fz_ptr b[] = {h->row, h->col, h->w, h->v[0], h->v[1], h->spk[0], h->spk[1], h->recv, h->stim, h->scratch, h->vall,
		              r ? 0 : m->hist};
		for (size_t i = 0; i < sizeof b / sizeof b[0]; i++) fz_free(h->d, b[i]);
		for (int t = 0; t < m->steps && h->eb && h->ec; t++) fz_event_destroy(h->d, h->eb[t]), fz_event_destroy(h->d, h->ec[t]);
		free(h->eb), free(h->ec);
		fz_artifact_unload(h->art);
	}
	fz_group_close(m->g);
}

/* SPIKING_MGPU_EXCHANGE, SPIKING_MGPU_MARGIN, and the tests' SPIKING_MGPU_FORCE_REDO
   (that step's lists redone as if cut: the path an overflow takes) */
static int pick_mode(sim *m)
{
	const char *e = getenv("SPIKING_MGPU_EXCHANGE"), *g = getenv("SPIKING_MGPU_MARGIN"), *f = getenv("SPIKING_MGPU_FORCE_REDO");
	m->mode = !e || !*e || !strcmp(e, "fixed") ? FIXED : !strcmp(e, "lag") ? LAG : !strcmp(e, "sync") ? SYNC : -1;
	if (m->mode < 0) FAIL("SPIKING_MGPU_EXCHANGE=%s: lag, fixed or sync", e);
	m->margin = g && *g ? atoi(g) : 12, m->force = f && *f ? atoi(f) : -1;
	const char *u = getenv("SPIKING_MGPU_URGENT");
	m->urgent = u && !strcmp(u, "1");
	if (m->margin < 0 || m->margin > 1000) FAIL("SPIKING_MGPU_MARGIN=%s: a percentage, 0 to 1000", g);
	m->cap = calloc((size_t)m->steps, sizeof *m->cap), m->cnt = calloc((size_t)m->steps * (size_t)m->W, sizeof *m->cnt);
	if (!m->cap || !m->cnt) FAIL("out of memory");
	return 0;
}

/* one run: D devices of this process, or (D = 0) this process's rank of a job */
static int simulate(const char *dir, int D, int32_t N, int steps, run *res)
{
	char err[FZ_ERRMSG_SIZE];
	static sim m;
	memset(&m, 0, sizeof m);
	memset(res, 0, sizeof *res);
	m.N = N, m.steps = steps;
	res->count = calloc((size_t)steps, sizeof *res->count);
	res->sum = calloc((size_t)steps, 8), res->sq = calloc((size_t)steps, 8);
	res->v = malloc((size_t)N * 4);
	if (!res->count || !res->sum || !res->sq || !res->v) FAIL("out of memory");
	if (D ? fz_group_open(D, NULL, &m.g, err) : fz_group_join(NULL, &m.g, err)) FAIL("%s", err);
	m.L = fz_group_size(m.g), m.W = fz_group_ranks(m.g);
	res->devices = m.W, res->procs = !D, res->rank = fz_group_rank(m.g, 0);
	long long lo, hi;
	fz_group_range(N, m.W, 0, &lo, &hi);
	const char *cap = getenv("SPIKING_MGPU_CAP");
	m.C = cap && atoll(cap) > 0 && atoll(cap) < hi - lo ? atoll(cap) : hi - lo; /* rank 0's range: the largest */
	res->cap = m.C;
	if (pick_mode(&m)) return 1;
	res->mode = m.mode, res->urgent = m.urgent;
	int rc = setup(&m, dir) || advance(&m, 0) || fz_exchange_wait(m.x) || fz_group_sync(m.g);
	double t0 = now_ms();
	for (int t = 1; !rc && t < steps; t++) rc = advance(&m, t);
	if (!rc) rc = settle(&m);
	if (!rc && (fz_exchange_wait(m.x) || fz_group_sync(m.g))) rc = fprintf(stderr, "spiking_mgpu: %s\n", fz_group_error(m.g)) > 0;
	double wall = now_ms() - t0;
	res->redos = m.redos;
	for (int t = 0; t < steps; t++) res->sent += m.cap[t];
	if (!rc) rc = finish(&m, res);
	if (!rc) timings(&m, res, wall);
	if (rc && fz_group_error(m.g)[0]) fprintf(stderr, "spiking_mgpu: rank %d: %s\n", res->rank, fz_group_error(m.g));
	teardown(&m);
	free(m.cap), free(m.cnt);
	return rc;
}

static void free_run(run *r) { free(r->count), free(r->sum), free(r->sq), free(r->v); }

static uint64_t digest(const run *r, long long n, int steps)
{
	uint64_t h = 0; /* every step's count and checksums, then the potentials' bits */
	for (int k = 0; k < steps; k++) h = mix(h ^ (uint64_t)r->count[k]) ^ mix(r->sum[k]) ^ r->sq[k];
	for (long long k = 0; k < n; k++) {
		uint32_t b;
		memcpy(&b, &r->v[k], 4);
		h = mix(h ^ b);
	}
	return h;
}

static int report(const run *res, int nres, long long n, int steps)
{
	int status = 0;
	for (int i = 0; i < nres; i++) {
		int same = !memcmp(res[i].count, res[0].count, (size_t)steps * sizeof *res[0].count) &&
		           !memcmp(res[i].sum, res[0].sum, (size_t)steps * 8) && !memcmp(res[i].sq, res[0].sq, (size_t)steps * 8) &&
		           !memcmp(res[i].v, res[0].v, (size_t)n * 4);
		if (!same) status = 1;
		const run *r = &res[i];
		printf("result spiking N=%lld steps=%d devices=%d%s step_ms=%.4f compute_ms=%.4f exchange_ms=%.4f exposed_ms=%.4f "
		       "exchange_share=%.3f speedup=%.3f spikes=%lld silent_steps=%d capacity=%lld exchange=%s urgent=%s mean_capacity=%lld redos=%d "
		       "identical_to_%d=%s history=device digest=%016llx\n",
		       n, steps, r->devices, r->procs ? " procs=yes" : "", r->step_ms, r->step_ms - r->exposed_ms, r->exchange_ms, r->exposed_ms,
		       r->step_ms > 0 ? r->exchange_ms / r->step_ms : 0.0, r->step_ms > 0 ? res[0].step_ms / r->step_ms : 0.0, r->total,
		       r->silent, r->cap, mode_name[r->mode], r->urgent ? "yes" : "no", r->sent / steps, r->redos, res[0].devices, same ? "yes" : "NO",
		       (unsigned long long)digest(r, n, steps));
	}
	return status;
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "generated", *devlist = argc > 4 ? argv[4] : "1,2";
	long long n = argc > 2 ? atoll(argv[2]) : 1048576;
	int steps = argc > 3 ? atoi(argv[3]) : 50;
	if (n < 16 || n > (1 << 24) || steps < 1 || steps > 100000)
		return fprintf(stderr, "usage: spiking_mgpu [ARTIFACT_DIR [N (16 .. 2^24) [STEPS [DEVICES (e.g. 1,2, or procs)]]]]\n"), 2;
	setvbuf(stdout, NULL, _IOLBF, 0);
	char err[FZ_ERRMSG_SIZE];
	int have = 0;
	if (fz_device_count(&have, err)) return fprintf(stderr, "spiking_mgpu: no GPU to run on: %s\n", err), 2;
	if (have < 1) return fprintf(stderr, "spiking_mgpu: no GPU to run on: the driver sees no device\n"), 2;
	run res[8];
	int nres = 0, status = 0;
	memset(res, 0, sizeof res);
	if (!strcmp(devlist, "procs")) { /* the job's ranks together, then rank 0 alone on one device to compare */
		status = simulate(dir, 0, (int32_t)n, steps, &res[1]);
		if (!status && res[1].rank != 0) {
			printf("spiking_mgpu: rank %d of %d done\n", res[1].rank, res[1].devices);
			free_run(&res[1]);
			return 0;
		}
		if (!status) status = simulate(dir, 1, (int32_t)n, steps, &res[0]);
		nres = 2;
		devlist = "";
	}
	for (const char *c = devlist; *c && nres < 8 && !status;) {
		int D = atoi(c);
		while (*c && *c != ',') c++;
		if (*c == ',') c++;
		if (D < 1 || D > FZ_MAX_GROUP) return fprintf(stderr, "spiking_mgpu: bad device count in '%s'\n", devlist), 2;
		if (D > have) {
			printf("spiking_mgpu: %d devices asked, this machine has %d: skipped\n", D, have);
			continue;
		}
		status = simulate(dir, D, (int32_t)n, steps, &res[nres++]);
	}
	if (!status) status = report(res, nres, n, steps);
	for (int i = 0; i < nres; i++) free_run(&res[i]);
	printf("%s\n", status ? "FAILED" : "ok");
	return status;
}
