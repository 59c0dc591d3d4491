/* A ragged range whose bounds come from bad data: row_ptr(4) = 40 > S = 6, so
 * the synapse loop of neuron 3 runs s = 5 .. 39 and col(s), w(s) are read out
 * of range. Like a bad gather this must return 1, never read out of bounds. */
#include "spike_burst.h"
#include "check.h"

int main(void)
{
	const int32_t fired[1] = {3}, row_ptr[5] = {0, 2, 3, 5, 40}, col[6] = {1, 3, 0, 1, 2, 0};
	const double w[6] = {0.5, 1.0, 7.0, 0.25, 2.0, 9.0}, v[4] = {1.0, 0.5, 0.2, -1.0};
	double vn[4] = {0};
	int32_t spikes[4] = {0}, nspikes = 0;
	fz_spike_burst_ref_args a = {.t_fired = fired, .t_row_ptr = row_ptr, .t_col = col, .t_w = w, .t_v = v,
	                             .t_decay = 0.5, .t_vth = 1.0, .t_vreset = -0.25,
	                             .t_v_next = vn, .t_spikes = spikes, .t_nspikes = &nspikes,
	                             .n_F = 1, .n_NP1 = 5, .n_S = 6, .n_N = 4};
	ref_int("return", 0, fz_spike_burst_reference(&a), 1);
	return ref_done("spike_burst (bad ragged range)");
}
