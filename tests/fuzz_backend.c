/* libFuzzer target: any bytes through the front end and, when they check,
 * the planner (both variants, every target) and every emitter: --explain,
 * --emit=schedule, the CUDA, the host header and the float64 reference
 * (not NVRTC); and that every target's schedule is the same, as one .cu
 * serves them all (artifact.c). A die() is a crash here: internal errors
 * are bugs. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/cuda.h"
#include "front/frontend.h"
#include "host/host.h"
#include "plan/plan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *sink;
	if (!sink) sink = fopen("/dev/null", "w");
	FrontEnd fe = {0};
	fe.src.path = "fuzz.fuse";
	fe.src.text = malloc(size + 1);
	if (!fe.src.text) return 0;
	memcpy(fe.src.text, data, size);
	fe.src.text[size] = 0;
	fe.src.len = size;
	frontend_check(&fe, sink, 50);
	if (fe.diag.errors == 0) {
		for (int f = 0; f < fe.mod.nfusion; f++) {
			FusionPlan fp; /* the first target's: one .cu serves every target, the writers run once */
			plan_fusion(&fe.mod, f, (Target)0, &fp);
			sched_print(&fe.mod, &fp.fused, sink);
			sched_print(&fe.mod, &fp.unfused, sink);
			plan_explain(&fe.mod, f, &fp.fused, sink);
			cuda_file(&fe.mod, &fp, "/* fuzz */\n", sink);
			host_header(&fe.mod, &fp, "/* fuzz */\n", sink);
			host_reference(&fe.mod, f, sink);
			for (int t = 1; t < TGT_N; t++) {
				Schedule fu, un;
				plan_build(&fe.mod, f, 1, (Target)t, &fu);
				plan_build(&fe.mod, f, 0, (Target)t, &un);
				sched_print(&fe.mod, &fu, sink);
				sched_print(&fe.mod, &un, sink);
				/* ... as long as every target's schedule is the same (artifact.c) */
				if (!sched_same(&fe.mod, &fp.fused, &fu) || !sched_same(&fe.mod, &fp.unfused, &un)) abort();
				sched_free(&fu), sched_free(&un);
			}
			plan_fusion_free(&fp);
		}
	}
	frontend_free(&fe);
	return 0;
}
