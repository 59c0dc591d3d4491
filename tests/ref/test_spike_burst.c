/* A 4-neuron network in CSR (row_ptr has N+1 = 5 entries, S = 6 synapses):
 *   neuron 0 -> 1 (w 0.5), 3 (w 1.0)
 *   neuron 1 -> 0 (w 7.0)
 *   neuron 2 -> 1 (w 0.25), 2 (w 2.0)
 *   neuron 3 -> 0 (w 9.0)
 * Neurons 0 and 2 fired: I = (0, 0.75, 2, 1).
 * v = (1, 0.5, 0.2, -1), decay = 0.5: u = decay v + I = (0.5, 1.0, 2.1, 0.5)
 * (0.25 + 0.75 is exactly 1.0, so u(1) >= vth = 1 is the boundary case).
 * spikes = {1, 2} in any order, nspikes = 2; v_next = (0.5, -0.25, -0.25, 0.5). */
#include "spike_burst.h"
#include "check.h"

int main(void)
{
	const int32_t fired[2] = {0, 2}, row_ptr[5] = {0, 2, 3, 5, 6}, col[6] = {1, 3, 0, 1, 2, 0};
	const double w[6] = {0.5, 1.0, 7.0, 0.25, 2.0, 9.0}, v[4] = {1.0, 0.5, 0.2, -1.0};
	double vn[4] = {0};
	int32_t spikes[4] = {-7, -7, -7, -7}, nspikes = -1;
	fz_spike_burst_ref_args a = {.t_fired = fired, .t_row_ptr = row_ptr, .t_col = col, .t_w = w, .t_v = v,
	                             .t_decay = 0.5, .t_vth = 1.0, .t_vreset = -0.25,
	                             .t_v_next = vn, .t_spikes = spikes, .t_nspikes = &nspikes,
	                             .n_F = 2, .n_NP1 = 5, .n_S = 6, .n_N = 4};
	ref_int("return", 0, fz_spike_burst_reference(&a), 0);
	const double want[4] = {0.5, -0.25, -0.25, 0.5};
	ref_near_all("v_next", vn, want, 4, 1e-15);
	ref_int("nspikes", 0, nspikes, 2);
	/* the set {1, 2}: order is unspecified */
	int seen[4] = {0};
	for (int i = 0; i < 2 && i < nspikes; i++)
		if (spikes[i] >= 0 && spikes[i] < 4) seen[spikes[i]]++;
		else ref_int("spike index in range", i, spikes[i], -1);
	const int wseen[4] = {0, 1, 1, 0};
	for (int n = 0; n < 4; n++) ref_int("times neuron listed in spikes", n, seen[n], wseen[n]);
	/* nothing written past nspikes */
	ref_int("spikes past nspikes untouched", 2, spikes[2], -7);
	ref_int("spikes past nspikes untouched", 3, spikes[3], -7);
	return ref_done("spike_burst");
}
