/* libfuserun's CPU tests: artifact verification (every generated artifact,
 * and damaged copies), the argument checks, fuserun's comparison logic, and
 * the driver paths against a missing library, a library without the Driver
 * API and a fake libcuda (with fault injection: every failing call must be
 * reported and leave nothing behind). Built with AddressSanitizer, so a
 * leak fails the run.
 * usage: test_runtime GENERATED_DIR FAKE_LIBCUDA NOT_A_LIBCUDA TMP_DIR
 * (from the repository root; prints PASS/FAIL lines) */
#include <stdio.h>

#include "testutil.h"

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: test_runtime GENERATED_DIR FAKE_LIBCUDA NOT_A_LIBCUDA TMP_DIR\n");
		return 2;
	}
	gen_dir = argv[1], fake_so = argv[2], nocuda_so = argv[3], tmp_dir = argv[4];
	setvbuf(stdout, NULL, _IOLBF, 0); /* LeakSanitizer ends the process without flushing */
	test_generated();
	test_op_block();
	test_refusals();
	test_values_lines();
	test_hostile();
	test_shapes();
	test_strerror();
	test_checks();
	test_fits_lines();
	test_compare();
	test_fp8();
	test_no_driver(); /* before anything loads the fake: a load that worked is kept */
	bind_fake();
	test_fake_device();
	test_fault_injection();
	test_pipeline_fake();
	test_fits_fake();
	unbind_fake();
	printf("test_runtime: %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}

