/* A variant's launch recipe: the manifest lines from which libfuserun
 * runs it without the generated header (fz_call; runtime/fuserun.h gives
 * the syntax). The same decisions as the header's scratch function and op
 * list (emit_host.c), the formulas from the same place (grid.c):
 *
 *   stored V TEMP                  a temp kept in the scratch, in placement order
 *   parts V EXPR                   per-block partials: the workspace is the largest
 *   counter V EXPR                 the counters' bytes: the largest, at least 256
 *   op V memset TENSOR             zero the tensor (all of it) before the kernels
 *   op V launch KERNEL grid=X,Y block=B [always]
 *   op V launch E:64,F:128 head=D grid=X,Y block=B [always]
 *
 * V is fused or unfused. `always`: the kernel runs (one block at least)
 * even when its grid is empty, as it zeroes something for later kernels.
 * An attention kernel launches the first entry whose head-size bound holds
 * the head size D. */
#include <stdlib.h>

#include "core/die.h"
#include "host/host.h"

static void recipe_scratch(const Module *m, const Schedule *p, const char *v, FILE *out)
{
	const Fusion *f = &m->fusion[p->fusion];
	for (int i = f->first_tensor; i < f->first_tensor + f->ntensor; i++)
		if (m->tensor[i].kind == TK_TEMP && sched_stored(p, i)) fprintf(out, "stored %s %s\n", v, m->tensor[i].name);
	for (int i = 0; i < p->nk; i++) {
		const Kernel *k = &p->k[i];
		if (!k->ntail) continue;
		fprintf(out, "parts %s (", v), host_grid_x(m, f, k, HS_RECIPE, out), fprintf(out, ")*%d*8\n", k->ntail);
	}
	for (int i = 0; i < p->nk; i++)
		if (p->k[i].par.split) host_split_recipe(f, &p->k[i], v, out);
}

void host_recipe(const Module *m, const Schedule *p, FILE *out)
{
	const Fusion *f = &m->fusion[p->fusion];
	const char *v = p->fused ? "fused" : "unfused";
	recipe_scratch(m, p, v, out);
	int *zero = xcalloc((size_t)f->ntensor * 2 + 1, sizeof *zero);
	const int nzero = host_memsets(m, p, zero);
	for (int i = 0; i < nzero; i++) fprintf(out, "op %s memset %s\n", v, m->tensor[zero[i]].name);
	free(zero);
	for (int i = 0; i < p->nk; i++) {
		const Kernel *k = &p->k[i];
		fprintf(out, "op %s launch ", v);
		if (k->mode == KM_ATTN) host_attn_recipe(f, k, out);
		else fputs(k->name, out);
		fputs(" grid=", out), host_grid_x(m, f, k, HS_RECIPE, out), fputc(',', out);
		if (!host_grid_y(f, k, HS_RECIPE, out)) fputc('1', out);
		if (k->mode == KM_ROW && k->par.rcache)
			fputs(k->par.row_stream ? " block=row_threads_s(" : " block=row_threads(", out), host_row_width(f, k, HS_RECIPE, out), fprintf(out, ",%d)", k->par.rcache);
		else
			fprintf(out, " block=%d", k->par.block);
		fputs(host_kernel_resets(m, p, i) ? " always\n" : "\n", out);
	}
}
