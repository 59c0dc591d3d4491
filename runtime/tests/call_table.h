/* Every shipped fusion's typed header functions, with the args as void *
 * (build/rt/call_table.c, written by call_table.sh): what test_call.c
 * compares the generic call (fz_call, the manifest's recipe) with. */
#ifndef FUSERUN_CALL_TABLE_H
#define FUSERUN_CALL_TABLE_H
#include "fuserun.h"

typedef int (*call_run_fn)(fz_artifact *art, const void *args, int sm, fz_stream *stream);
typedef struct call_spec {
	const char *name;
	size_t args_size;
	fz_scratch_fn scratch[2];   /* [1] fused, [0] unfused: fz_NAME_V_scratch */
	fz_ops_fn ops[2];           /* fz_NAME_V_ops */
	call_run_fn run[2];         /* the typed launchers fz_NAME_V_run */
} call_spec;
extern const call_spec call_specs[];
extern const int ncall_specs;

#endif
