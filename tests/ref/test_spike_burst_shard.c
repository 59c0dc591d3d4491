/* The 4-neuron network of test_spike_burst.c cut in two devices' shares,
 * neurons 0-1 (base 0) and 2-3 (base 2): each share's CSR runs over all 4
 * source neurons and holds only the synapses ending on its neurons, with
 * local target indices. Neurons 0 and 2 fired (global indices in both).
 *   share 0: 0 -> 1 (0.5); 1 -> 0 (7.0); 2 -> 1 (0.25); 3 -> 0 (9.0)
 *   share 1: 0 -> 3 (1.0) as local 1; 2 -> 2 (2.0) as local 0
 * The union of the shares' results is the whole network's: spikes {1} and
 * {2} as global indices (n + base), v_next (0.5, -0.25) and (-0.25, 0.5). */
#include "spike_burst_shard.h"
#include "check.h"

static void share(const int32_t *row_ptr, const int32_t *col, const double *w, long long S, const double *v, int64_t base,
                  const double *want_v, int32_t want_spike)
{
	const int32_t fired[2] = {0, 2};
	double vn[2] = {0};
	int32_t spikes[2] = {-7, -7}, nspikes = -1;
	fz_spike_burst_shard_ref_args a = {.t_fired = fired, .t_row_ptr = row_ptr, .t_col = col, .t_w = w, .t_v = v,
	                                   .t_decay = 0.5, .t_vth = 1.0, .t_vreset = -0.25, .t_base = base,
	                                   .t_v_next = vn, .t_spikes = spikes, .t_nspikes = &nspikes,
	                                   .n_F = 2, .n_NP1 = 5, .n_S = S, .n_N = 2};
	ref_int("return", base, fz_spike_burst_shard_reference(&a), 0);
	ref_near_all("v_next", vn, want_v, 2, 1e-15);
	ref_int("nspikes", base, nspikes, 1);
	ref_int("the spike as a global index", base, spikes[0], want_spike);
	ref_int("spikes past nspikes untouched", base, spikes[1], -7);
}

int main(void)
{
	const int32_t rp0[5] = {0, 1, 2, 3, 4}, col0[4] = {1, 0, 1, 0};
	const double w0[4] = {0.5, 7.0, 0.25, 9.0}, v0[2] = {1.0, 0.5}, want0[2] = {0.5, -0.25};
	const int32_t rp1[5] = {0, 1, 1, 2, 2}, col1[2] = {1, 0};
	const double w1[2] = {1.0, 2.0}, v1[2] = {0.2, -1.0}, want1[2] = {-0.25, 0.5};
	share(rp0, col0, w0, 4, v0, 0, want0, 1);
	share(rp1, col1, w1, 2, v1, 2, want1, 2);
	return ref_done("spike_burst_shard");
}
