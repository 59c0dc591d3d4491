/* Out-of-range gathers must make the reference return 1, never crash
 * (ASan/UBSan watch this test): a synapse target col(s) = N, another
 * col(s) = -1, and a fired index whose row_ptr(fired(f) + 1) is past NP1. */
#include "spike_burst.h"
#include "check.h"

static int run(const int32_t *fired, long long nf, const int32_t *col)
{
	const int32_t row_ptr[5] = {0, 2, 3, 5, 6};
	const double w[6] = {0.5, 1.0, 7.0, 0.25, 2.0, 9.0}, v[4] = {1.0, 0.5, 0.2, -1.0};
	double vn[4] = {0};
	int32_t spikes[4] = {0}, nspikes = 0;
	fz_spike_burst_ref_args a = {.t_fired = fired, .t_row_ptr = row_ptr, .t_col = col, .t_w = w, .t_v = v,
	                             .t_decay = 0.5, .t_vth = 1.0, .t_vreset = -0.25,
	                             .t_v_next = vn, .t_spikes = spikes, .t_nspikes = &nspikes,
	                             .n_F = nf, .n_NP1 = 5, .n_S = 6, .n_N = 4};
	return fz_spike_burst_reference(&a);
}

int main(void)
{
	const int32_t good_col[6] = {1, 3, 0, 1, 2, 0};
	const int32_t col_n[6] = {1, 4, 0, 1, 2, 0};   /* col(1) = N */
	const int32_t col_neg[6] = {1, 3, 0, -1, 2, 0}; /* col(3) = -1 */
	const int32_t fired_ok[2] = {0, 2}, fired_past[1] = {4}, fired_neg[1] = {-1};
	ref_int("good data", 0, run(fired_ok, 2, good_col), 0);
	ref_int("col(s) = N", 0, run(fired_ok, 2, col_n), 1);
	ref_int("col(s) = -1", 0, run(fired_ok, 2, col_neg), 1);
	ref_int("row_ptr(fired(f) + 1) past NP1", 0, run(fired_past, 1, good_col), 1);
	ref_int("fired(f) = -1", 0, run(fired_neg, 1, good_col), 1);
	return ref_done("spike_burst (bad gathers)");
}
