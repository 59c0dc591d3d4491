/* A pipeline's params struct (plan/pipeline.h): the persistent kernel's one
 * parameter, declared the same in the .cu and in the header. */
#include "emit/emit.h"

/* the params struct, the same bytes on both sides */
void emit_pipe_params(const Module *m, const Pipeline *pl, FILE *out)
{
	const Fusion *f = &m->fusion[pl->fusion];
	fprintf(out, "typedef struct fz_%s_params {\n", pl->name);
	fprintf(out, "\tfz_%s_args a; /* step 0's arguments; the carried outputs' final buffers */\n", f->name);
	fprintf(out, "\tunsigned long long carry[%d]; /* the carried outputs' other buffers (scratch) */\n", pl->ncarry ? pl->ncarry : 1);
	fputs("\tunsigned long long ctl; /* the barrier's words (scratch) */\n", out);
	fputs("\tlong long steps; /* launch-time step count */\n", out);
	fputs("\tlong long watchdog_ns; /* a barrier waits at most this long */\n", out);
	fputs("\tint stall_block, stall_op; /* testing: this block leaves before this phase's barrier of step 0 (-1: none) */\n", out);
	fputs("\tint nops, pad;\n", out);
	fprintf(out, "\tfz_pipe_op op[%d];\n", FZ_PIPE_MAX_OPS);
	fprintf(out, "} fz_%s_params;\n\n", pl->name);
}

