/* Template: POINT kernels, a thread per point of the space, grid-stride.
 * Grid: enough blocks for every point (unrolled: U points a thread;
 * sliced: 32 points a block); with a whole-grid fold, no more blocks than
 * fit at once, since the partials are sized by the grid. */
#include <stdlib.h>
#include <string.h>

#include "cuda.h"
#include "die.h"

/* A thread per point, grid-stride. Unrolled: U points a thread, every
 * copy's values (and so its loads) before any copy's stores. Sliced: 32
 * points a block, each point's reduction loop shared by FZ_SLICES warps. */
static void emit(Cx *cx)
{
	const Module *m = cx->m;
	const Kernel *k = cx->k;
	FILE *out = cx->out;
	int U = k->par.unroll > 1 ? k->par.unroll : 1;
	kernel_head(cx);
	if (k->has_tail) fputs("\t__shared__ double fz_sh[32];\n", out);
	emit_tail_decls(cx, 1);
	fputs("\tconst long long total = ", out);
	space_total(cx, out);
	fputs(";\n", out);
	if (k->par.slices > 1) {
		fprintf(out, "#define FZ_SLICES %d\n", k->par.slices);
		fputs("\tconst int fz_lane = threadIdx.x & 31, fz_slice = threadIdx.x >> 5;\n", out);
		fputs("\tfor (long long pb = (long long)blockIdx.x * 32; pb < total; pb += (long long)gridDim.x * 32) {\n", out);
		fputs("\t\tconst bool fz_live = pb + fz_lane < total;\n", out);
		fputs("\t\tconst long long p = fz_live ? pb + fz_lane : pb;\n", out);
		cx->sliced = 1;
	} else if (U > 1) {
		fprintf(out, "\tconst long long stride = (long long)gridDim.x * blockDim.x;\n");
		fprintf(out, "\tfor (long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x; p < total; p += %d * stride) {\n", U);
	} else {
		fputs("\tfor (long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x; p < total; p += (long long)gridDim.x * blockDim.x) {\n", out);
	}
	char *deferred[8] = {0};
	size_t dlen[8] = {0};
	for (int u = 0; u < U; u++) {
		char sfx[16] = "", lin[64];
		FILE *dfr = NULL;
		if (U > 1) {
			snprintf(sfx, sizeof sfx, "_%d", u);
			/* a copy past the end reads point p (valid) and stores nothing */
			fprintf(out, "\t\tconst bool ok%s = p + %d * stride < total;\n", sfx, u);
			snprintf(lin, sizeof lin, "(ok%s ? p + %d * stride : p)", sfx, u);
			dfr = open_memstream(&deferred[u], &dlen[u]);
			cx->sink = dfr;
		} else {
			snprintf(lin, sizeof lin, "p");
		}
		cx->sfx = sfx;
		decompose(cx, lin, 2);
		const Phase *ph = &k->phase[0]; /* the epilogue phase, if any, follows the fold */
		for (int sid = ph->first_stmt; sid < ph->first_stmt + ph->nstmt; sid++) {
			const StepOp op = cx->p->op[sid];
			bind_point(cx, &m->stmt[sid], k->nspace);
			FILE *keep = cx->out;
			if (dfr && op == STEP_GRID_REDUCE) cx->out = dfr;
			switch (op) {
			case STEP_GRID_REDUCE: emit_tail_accumulate(cx, sid, 2, 0); break;
			case STEP_COMPACT:
				if (U > 1) compact_operands(cx, sid, u);
				else emit_compact(cx, sid, 2);
				break;
			case STEP_REDUCE: sid += emit_reductions(cx, sid, 2, 0) - 1; break;
			case STEP_MAP: case STEP_ACCUM: emit_map(cx, sid, 2, 0); break;
			default: die("step %s in point kernel %s", step_op_name[op], k->name);
			}
			cx->out = keep;
		}
		emit_resets(cx, 2);
		if (dfr) fclose(dfr);
		cx->sink = NULL;
	}
	for (int u = 0; u < U && U > 1; u++) {
		fprintf(out, "\t\tif (ok_%d) {\n%s\t\t}\n", u, deferred[u] ? deferred[u] : "");
		free(deferred[u]);
	}
	for (int sid = k->first_stmt; sid < k->first_stmt + k->nstmt && U > 1; sid++)
		if (cx->p->op[sid] == STEP_COMPACT) compact_warp(cx, sid, U);
	cx->sfx = "";
	cx->sliced = 0;
	fputs("\t}\n", out);
	if (k->par.slices > 1) fputs("#undef FZ_SLICES\n", out);
	finish_kernel(cx);
}

static void tail_cap(const Kernel *k, FILE *out)
{
	if (k->has_tail) fprintf(out, "(long long)sm * %d", k->par.min_blocks);
	else fputs("0", out);
}

static void grid_x(const Module *m, const Fusion *f, const Kernel *k, FILE *out)
{
	fputs("fz_grid(", out), host_space_product(m, f, k, out);
	fprintf(out, ", %d, ", k->par.slices > 1 ? k->par.block / k->par.slices : k->par.block * k->par.unroll);
	tail_cap(k, out);
	fputc(')', out);
}

const KernTemplate kern_point = {emit, grid_x, NULL};
