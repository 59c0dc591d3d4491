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

#include "emit/emit.h"
#include "front/frontend.h"
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
			Schedule fu0, un0;
			for (int t = 0; t < TGT_N; t++) {
				Schedule fu, un;
				plan_build(&fe.mod, f, 1, (Target)t, &fu);
				plan_build(&fe.mod, f, 0, (Target)t, &un);
				sched_print(&fe.mod, &fu, sink);
				sched_print(&fe.mod, &un, sink);
				if (t == 0) { /* one .cu serves every target: the emitters run once */
					plan_explain(&fe.mod, f, &fu, sink);
					emit_cuda_file(&fe.mod, &fu, &un, "/* fuzz */\n", sink);
					emit_header(&fe.mod, &fu, &un, "/* fuzz */\n", sink);
					emit_reference(&fe.mod, f, sink);
					fu0 = fu, un0 = un;
					continue;
				}
				/* ... as long as every target's schedule is the same (artifact.c) */
				if (!sched_same(&fe.mod, &fu0, &fu) || !sched_same(&fe.mod, &un0, &un)) abort();
				sched_free(&fu), sched_free(&un);
			}
			sched_free(&fu0), sched_free(&un0);
		}
	}
	frontend_free(&fe);
	return 0;
}
