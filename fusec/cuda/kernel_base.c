/* What every kernel template starts and ends with: the entry point's
 * head (a __global__ function, or a pipeline phase's __device__ body), a
 * linear point split into the space's coordinates, the space's size, the
 * temps zeroed for the next run, and the closing fold and brace. */
#include <stdlib.h>

#include "cuda/cuda.h"

void cuda_kernel_head(Cx *cx)
{
	const Kernel *k = cx->k;
	cx->flat = 0;
	int minb = k->par.min_blocks;
	if (cx->persist)
		fprintf(cx->out, "static __device__ void %s(const fz_%s_args a, const uint3 fz_vb, const dim3 fz_vg, const uint3 fz_vt, const dim3 fz_vd)\n{\n",
		        k->name, cx->m->fusion[cx->fusion].name);
	else if (k->par.regs) /* a cap alone: the block is the launch's (up to 1024) */
		fprintf(cx->out, "extern \"C\" __global__ void __maxnreg__(%d) %s(const fz_%s_args a)\n{\n", k->par.regs, k->name,
		        cx->m->fusion[cx->fusion].name);
	else
		fprintf(cx->out, "extern \"C\" __global__ void __launch_bounds__(%d, %d) %s(const fz_%s_args a)\n{\n", k->par.block,
		        minb, k->name, cx->m->fusion[cx->fusion].name);
	const Fusion *f = &cx->m->fusion[cx->fusion];
	for (int t = f->first_tensor; t < f->first_tensor + f->ntensor; t++)
		if (cx->p->reset_by[t - cx->p->first_tensor] == cx->kernel_id && cx->m->tensor[t].rank == 0)
			fprintf(cx->out, "\tif (blockIdx.x == 0 && threadIdx.x == 0) a.t_%s[0] = 0; /* for a later kernel */\n",
			        cx->m->tensor[t].name);
}

/* the point's rest divided by extent i as a shift (the extent a power of
   two): the quotient of CUDA_DIV_SHIFT, and CUDA_DIV_TEST's first branch */
static void put_shift(Cx *cx, int i, FILE *out)
{
	fprintf(out, "fz_rem%s >> (__ffsll(", cx->sfx);
	cuda_dim(cx, cx->k->space[i], out);
	fputs(") - 1)", out);
}

void cuda_decompose(Cx *cx, const char *lin, int depth)
{
	const Kernel *k = cx->k;
	FILE *out = cx->out;
	if (k->nspace == 1) {
		cuda_ind(out, depth), fprintf(out, "const long long s0%s = %s;\n", cx->sfx, lin);
		return;
	}
	if (k->mode == KM_POINT) { /* the flat index, for cuda_linear_at */
		cuda_ind(out, depth), fprintf(out, "const long long fz_p%s = %s;\n", cx->sfx, lin);
		cx->flat = 1;
		cuda_ind(out, depth), fprintf(out, "long long fz_rem%s = fz_p%s;\n", cx->sfx, cx->sfx);
	} else {
		cuda_ind(out, depth), fprintf(out, "long long fz_rem%s = %s;\n", cx->sfx, lin);
	}
	for (int i = k->nspace - 1; i >= 0; i--) {
		cuda_ind(out, depth);
		if (i == 0) {
			fprintf(out, "const long long s0%s = fz_rem%s;\n", cx->sfx, cx->sfx);
		} else if (cx->div == CUDA_DIV_SHIFT) {
			/* every extent a power of two (the point kernel's fz_p2) */
			fprintf(out, "const long long fz_q%d%s = ", i, cx->sfx), put_shift(cx, i, out), fputs(";\n", out);
			cuda_ind(out, depth);
			fprintf(out, "const long long s%d%s = fz_rem%s & (", i, cx->sfx, cx->sfx);
			cuda_dim(cx, k->space[i], out);
			fprintf(out, " - 1); fz_rem%s = fz_q%d%s;\n", cx->sfx, i, cx->sfx);
		} else {
			/* 64-bit division is dozens of instructions: shift by a power
			   of two (a uniform test; not in a point kernel, CUDA_DIV_PLAIN),
			   else divide in 32 bits whenever the dimension allows */
			fprintf(out, "const long long fz_q%d%s = ", i, cx->sfx);
			if (cx->div == CUDA_DIV_TEST) {
				fputs("fz_pow2(", out), cuda_dim(cx, k->space[i], out), fputs(") ? ", out);
				put_shift(cx, i, out), fputs(" : ", out);
			}
			cuda_dim(cx, k->space[i], out);
			fprintf(out, " <= 0xffffffffLL && fz_rem%s <= 0xffffffffLL ? (long long)((unsigned)fz_rem%s / (unsigned)", cx->sfx, cx->sfx);
			cuda_dim(cx, k->space[i], out);
			fprintf(out, ") : fz_rem%s / ", cx->sfx);
			cuda_dim(cx, k->space[i], out);
			fputs(";\n", out);
			cuda_ind(out, depth);
			fprintf(out, "const long long s%d%s = fz_rem%s - fz_q%d%s * ", i, cx->sfx, cx->sfx, i, cx->sfx);
			cuda_dim(cx, k->space[i], out);
			fprintf(out, "; fz_rem%s = fz_q%d%s;\n", cx->sfx, i, cx->sfx);
		}
	}
}

void cuda_space_total(Cx *cx, FILE *out)
{
	if (!cx->k->nspace) fputs("1LL", out);
	for (int i = 0; i < cx->k->nspace; i++) {
		if (i) fputs(" * ", out);
		cuda_dim(cx, cx->k->space[i], out);
	}
}

/* Temps this kernel reads for the last time are left zeroed for the next run. */
void cuda_resets(Cx *cx, int depth)
{
	const Fusion *f = &cx->m->fusion[cx->fusion];
	for (int t = f->first_tensor; t < f->first_tensor + f->ntensor; t++) {
		const Tensor *x = &cx->m->tensor[t];
		if (cx->p->reset_by[t - cx->p->first_tensor] != cx->kernel_id || x->rank == 0) continue;
		char names[MAX_RANK][24], *subs[MAX_RANK];
		for (int i = 0; i < x->rank; i++) snprintf(names[i], sizeof names[i], "s%d%s", i, cx->sfx), subs[i] = names[i];
		char *lin = cuda_linear(cx, t, subs);
		FILE *o = cx->sink ? cx->sink : cx->out;
		cuda_ind(o, depth);
		if (cx->sliced) fputs("if (fz_slice == 0 && fz_live) ", o);
		fprintf(o, "a.t_%s[%s] = 0; /* zero again for the next run */\n", x->name, lin);
		free(lin);
	}
}

/* After the space loop: the whole-grid fold, if any, and the closing brace.
 * Locals die with the loop, and the tail's with the kernel. */
void cuda_finish_kernel(Cx *cx)
{
	cuda_clear_locals(cx);
	if (cx->k->has_tail) cuda_tail(cx, 1);
	cuda_clear_locals(cx);
	fputs("}\n\n", cx->out);
}
