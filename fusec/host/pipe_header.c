/* A pipeline in the application's header (plan/pipeline.h has its plan):
 * the params struct, the scratch layout (the fused variant's, the carried
 * outputs' second buffers, the whole-grid partials, the barrier's words),
 * one step's phases as an op list, the grid's cap and the typed launchers.
 * The persistent kernel itself is cuda/pipe_kernel.c's. */
#include <stdlib.h>

#include "core/die.h"
#include "host/host.h"

/* the host side's copy of the same types, once per header */
static const char pipe_host_library[] =
	"#ifndef FZ_PIPE_DEFINED\n"
	"#define FZ_PIPE_DEFINED\n"
	"/* a phase of a pipeline step: a launch's virtual grid, or a memset */\n"
	"typedef struct fz_pipe_op { int kind, kernel; unsigned int gx, gy; unsigned long long ptr, bytes; } fz_pipe_op;\n"
	"enum { FZ_PIPE_CTL_BYTES = 256 };\n"
	"#define FZ_PIPE_WATCHDOG_NS 2000000000LL\n"
	"static inline int fz_pipe_streq(const char *a, const char *b)\n"
	"{\n"
	"\twhile (*a && *a == *b) a++, b++;\n"
	"\treturn *a == *b;\n"
	"}\n"
	"#endif\n\n";

void host_pipeline(const Module *m, const PipePlan *pp, FILE *out)
{
	const Pipeline *pl = pp->pl;
	const Schedule *s = &pp->s;
	const int block = pp->block;
	const Fusion *f = &m->fusion[pl->fusion];
	const char *P = pl->name;
	fprintf(out, "/* ---- pipeline %s: %s%s of %s in one cooperative launch of %d-thread blocks ---- */\n", P,
	        pl->repeat ? pl->steps : "one", pl->repeat ? " steps" : " step", f->name, block);
	fputs(pipe_host_library, out);
	emit_pipe_params(m, pl, out);
	fprintf(out, "#define FZ_%s_BLOCK %d\n\n", P, block);
	/* scratch */
	fprintf(out, "/* The pipeline's scratch: the fused variant's, the carried outputs' second\n"
	             "   buffers, the pipeline's whole-grid partials (if any), the barrier's\n"
	             "   words. Zero it once when you allocate it. */\n");
	fprintf(out, "static inline unsigned long long fz_%s_scratch(fz_%s_params *p, unsigned long long base, int sm)\n{\n", P, P);
	fprintf(out, "\tunsigned long long off = fz_%s_fused_scratch(&p->a, base, sm);\n", f->name);
	fputs("\tconst fz_", out), fprintf(out, "%s_args *a = &p->a;\n\t(void)a;\n", f->name);
	for (int i = 0; i < pl->ncarry; i++) {
		fprintf(out, "\tif (base) p->carry[%d] = base + off;\n\toff += fz_align(", i);
		host_tensor_bytes(f, &m->tensor[pl->carry_out[i]], out);
		fputs(");\n", out);
	}
	/* whole-grid and split partials, and a split's counters: a phase may
	   have more (virtual) blocks than the fused kernel had (a sliced
	   reduction's 8 points a block, not 32), so the pipeline sizes its own */
	int tails = 0, split = 0;
	for (int i = 0; i < s->nk; i++) {
		const Kernel *k = &s->k[i];
		if (!k->ntail && !k->par.split) continue;
		if (!tails++) fputs("\tunsigned long long parts = 0;\n", out);
		if (k->par.split && !split++) fputs("\tunsigned long long cnt = 256;\n", out);
		if (k->par.split) {
			host_split_scratch(f, k, out);
			continue;
		}
		fputs("\tparts = fz_max_u64(parts, (unsigned long long)(", out);
		host_grid_x(m, f, k, HS_C, out);
		fprintf(out, ") * %d * 8);\n", k->ntail);
	}
	if (tails) fputs("\tif (base) p->a.ws_part = base + off;\n\toff += fz_align(parts);\n", out);
	if (split) fputs("\tif (base) p->a.ws_count = base + off;\n\toff += cnt;\n", out);
	fputs("\tif (base) p->ctl = base + off;\n\toff += FZ_PIPE_CTL_BYTES;\n\treturn off;\n}\n\n", out);
	/* the phases: the fused op list at this block size */
	fprintf(out, "/* One step's phases, in order, as an op list at FZ_%s_BLOCK threads a block. */\n", P);
	char *fn = xasprintf("fz_%s_ops", P);
	host_ops(m, s, fn, out);
	free(fn);
	fprintf(out, "/* Fills p's phase table for `steps` steps (watchdog and stall fields left\n"
	             "   as they are: zero watchdog_ns means FZ_PIPE_WATCHDOG_NS). 0, or -1. */\n");
	fprintf(out, "static inline int fz_%s_prepare(fz_%s_params *p, long long steps, int sm)\n{\n", P, P);
	fprintf(out, "\tstatic const char *const kernels[%d] = {", s->nk);
	for (int i = 0; i < s->nk; i++) fprintf(out, "%s\"%s\"", i ? ", " : "", s->k[i].name);
	fputs("};\n", out);
	fprintf(out, "\tfz_op ops[%d];\n", FZ_PIPE_MAX_OPS);
	fprintf(out, "\tconst int n = fz_%s_ops(&p->a, sm, ops, %d);\n", P, FZ_PIPE_MAX_OPS);
	fputs("\tif (n < 0 || steps < 1) return -1;\n", out);
	fputs("\tp->steps = steps, p->nops = n, p->pad = 0;\n", out);
	fputs("\tif (p->watchdog_ns <= 0) p->watchdog_ns = FZ_PIPE_WATCHDOG_NS;\n", out);
	fputs("\tfor (int i = 0; i < n; i++) {\n", out);
	fputs("\t\tp->op[i].kind = ops[i].kind, p->op[i].kernel = -1, p->op[i].ptr = ops[i].ptr, p->op[i].bytes = ops[i].bytes;\n", out);
	fputs("\t\tp->op[i].gx = ops[i].grid[0], p->op[i].gy = ops[i].grid[1];\n", out);
	fprintf(out, "\t\tfor (int k = 0; k < %d && ops[i].kind == FZ_OP_LAUNCH; k++)\n", s->nk);
	fputs("\t\t\tif (fz_pipe_streq(ops[i].kernel, kernels[k])) p->op[i].kernel = k;\n", out);
	fputs("\t\tif (ops[i].kind == FZ_OP_LAUNCH && p->op[i].kernel < 0) return -1;\n\t}\n\treturn 0;\n}\n", out);
	/* the grid's cap: the blocks the largest phase can keep busy */
	fprintf(out, "/* The blocks of FZ_%s_BLOCK threads the largest of p's phases can keep busy\n"
	             "   (a kernel of smaller blocks runs several in one): the launch's grid\n"
	             "   needs no more. */\n", P);
	fprintf(out, "static inline unsigned long long fz_%s_blocks(const fz_%s_params *p)\n{\n", P, P);
	fprintf(out, "\tstatic const unsigned int per[%d] = {", s->nk);
	for (int i = 0; i < s->nk; i++) fprintf(out, "%s%d", i ? ", " : "", pp->split[i] ? block / s->k[i].par.block : 1);
	fputs("};\n\tunsigned long long want = 1;\n", out);
	fputs("\tfor (int i = 0; i < p->nops && i < (int)(sizeof p->op / sizeof p->op[0]); i++) {\n", out);
	fputs("\t\tconst fz_pipe_op *o = &p->op[i];\n", out);
	fprintf(out, "\t\tconst unsigned long long n = o->kind == 1 ? (o->bytes / 4 + %d) / %d\n", block - 1, block);
	fprintf(out, "\t\t\t: o->kernel >= 0 && o->kernel < %d ? ((unsigned long long)o->gx * o->gy + per[o->kernel] - 1) / per[o->kernel] : 1;\n", s->nk);
	fputs("\t\tif (n > want) want = n;\n\t}\n\treturn want;\n}\n", out);
	/* typed launchers */
	fputs("#ifdef FUSERUN_H\n", out);
	fprintf(out, "/* Launches `steps` steps as one cooperative launch on stream, its grid the\n"
	             "   blocks that fit on the device at once (at most max_per_sm an SM when > 0)\n"
	             "   or fz_%s_blocks, the fewer,\n", P);
	fprintf(out, "   p's scratch placed by fz_%s_scratch with the same sm. Asynchronous:\n"
	             "   fz_%s_wait reports a watchdog's expiry. */\n", P, P);
	fprintf(out, "static inline int fz_%s_run(fz_artifact *art, fz_%s_params *p, long long steps, int sm, int max_per_sm,\n"
	             "                                  fz_stream *stream, unsigned int *grid)\n{\n", P, P);
	fprintf(out, "\tif (fz_%s_prepare(p, steps, sm)) return FZ_ERR_INVALID;\n", P);
	fprintf(out, "\tint rc = fz_artifact_check_layout(art, FZ_%s_LAYOUT), nf;\n", f->name);
	fprintf(out, "\tconst fz_field *fields = fz_%s_fields(&nf);\n\tif (!rc) rc = fz_artifact_check_fields(art, fields, nf);\n", f->name);
	fprintf(out, "\tif (!rc) rc = fz_check_sizes(fz_artifact_get_info(art), &p->a, sizeof p->a, NULL);\n");
	fprintf(out, "\treturn rc ? rc : fz_pipeline_launch_capped(art, \"%s\", p, sizeof *p, FZ_%s_BLOCK, max_per_sm, fz_%s_blocks(p), stream, grid);\n}\n", P, P, P);
	fprintf(out, "/* Waits for the stream; FZ_ERR_STALL naming the phase whose barrier's\n"
	             "   watchdog expired (the barrier's words are cleared for the next launch). */\n");
	fprintf(out, "static inline int fz_%s_wait(fz_artifact *art, const fz_%s_params *p, int sm, fz_stream *stream)\n{\n", P, P);
	fprintf(out, "\tfz_op ops[%d];\n\tconst char *names[%d];\n", FZ_PIPE_MAX_OPS, FZ_PIPE_MAX_OPS);
	fprintf(out, "\tint n = fz_%s_ops(&p->a, sm, ops, %d);\n", P, FZ_PIPE_MAX_OPS);
	fputs("\tif (n < 0) n = 0;\n\tfor (int i = 0; i < n; i++) names[i] = ops[i].kernel;\n", out);
	fprintf(out, "\treturn fz_pipeline_wait(art, \"%s\", p->ctl, p->a.ws_count, names, n, stream);\n}\n", P);
	fputs("#endif\n\n", out);
}
