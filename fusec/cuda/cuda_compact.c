/* Compaction, list <- value where mask: an atomic slot an item, or, with
 * unrolled copies, one atomic a block for all its copies' items. */
#include <stdlib.h>
#include <string.h>

#include "cuda/cuda.h"
#include "core/die.h"

/* Unrolled compaction, first half: each copy's test and value. */
void cuda_compact_operands(Cx *cx, int sid, int u)
{
	const Stmt *s = &cx->m->stmt[sid];
	const char *nm = cx->m->tensor[s->out].name;
	char *vd = NULL, *md = NULL;
	char *v = cuda_value_of(cx, s, s->rhs, &vd);
	char *mk = s->mask ? cuda_value_of(cx, s, s->mask, &md) : xstrdup("true");
	cuda_put_decls(cx->out, md, 2);
	fprintf(cx->out, "\t\tconst bool cp_%s_%d = ok_%d && (%s);\n", nm, u, u, mk);
	cuda_put_decls(cx->out, vd, 2);
	fprintf(cx->out, "\t\tconst long long cv_%s_%d = (long long)(%s);\n", nm, u, v);
	free(v), free(mk), free(vd), free(md);
}

/* Second half: one atomic a block for all its warps' items (the kernel's
 * loop runs the same batches in every thread of a block, kern_point.c):
 * each warp's count by ballots, the warps' offsets in shared memory, one
 * thread's atomicAdd on the count; each item's slot is the block's base,
 * its warp's offset, then the items before it (by copy, then lane). One
 * atomic a warp was 8192 on one word at 2^20 points (spike_burst). */
void cuda_compact_warp(Cx *cx, int sid, int U)
{
	const Module *m = cx->m;
	const Stmt *s = &m->stmt[sid];
	const Tensor *list = &m->tensor[s->out], *cnt = &m->tensor[list->list_count];
	const char *nm = list->name;
	FILE *out = cx->out;
	fprintf(out, "\t\t{\n\t\t\t__shared__ unsigned int fz_cw_%s[32], fz_cb_%s;\n", nm, nm);
	fputs("\t\t\tconst unsigned fz_act = __activemask();\n", out);
	for (int u = 0; u < U; u++) fprintf(out, "\t\t\tconst unsigned fz_b%d = __ballot_sync(fz_act, cp_%s_%d);\n", u, nm, u);
	fputs("\t\t\tconst int fz_tot = ", out);
	for (int u = 0; u < U; u++) fprintf(out, "%s__popc(fz_b%d)", u ? " + " : "", u);
	fputs(";\n\t\t\tconst int fz_wid = threadIdx.x >> 5;\n", out);
	fprintf(out, "\t\t\tif ((int)(threadIdx.x & 31) == __ffs(fz_act) - 1) fz_cw_%s[fz_wid] = (unsigned int)fz_tot;\n", nm);
	fputs("\t\t\t__syncthreads();\n\t\t\tif (threadIdx.x == 0) {\n\t\t\t\tunsigned int fz_s = 0;\n", out);
	fprintf(out, "\t\t\t\tfor (int fz_w = 0; fz_w < (int)((blockDim.x + 31) >> 5); fz_w++) { const unsigned int fz_c = fz_cw_%s[fz_w]; fz_cw_%s[fz_w] = fz_s; fz_s += fz_c; }\n", nm, nm);
	fprintf(out, "\t\t\t\tfz_cb_%s = fz_s ? atomicAdd((unsigned int *)a.t_%s, fz_s) : 0u;\n\t\t\t}\n\t\t\t__syncthreads();\n", nm, cnt->name);
	fputs("\t\t\tif (fz_tot) {\n", out);
	fputs("\t\t\t\tconst unsigned fz_lt = (1u << (threadIdx.x & 31)) - 1u;\n", out);
	fprintf(out, "\t\t\t\tconst unsigned int fz_base = fz_cb_%s + fz_cw_%s[fz_wid];\n", nm, nm);
	for (int u = 0; u < U; u++) {
		fprintf(out, "\t\t\t\tif (cp_%s_%d) {\n\t\t\t\t\tconst long long slot = (long long)fz_base", nm, u);
		for (int v = 0; v < u; v++) fprintf(out, " + __popc(fz_b%d)", v);
		fprintf(out, " + __popc(fz_b%d & fz_lt);\n\t\t\t\t\tif (slot < ", u);
		cuda_dim(cx, list->dim[0], out);
		fprintf(out, ") a.t_%s[slot] = (%s)cv_%s_%d;\n\t\t\t\t}\n", nm, emit_device_type(list), nm, u);
	}
	fputs("\t\t\t}\n\t\t\t__syncthreads(); /* the offsets read before the next batch's */\n\t\t}\n", out);
}

void cuda_compact(Cx *cx, int sid, int depth)
{
	const Module *m = cx->m;
	const Stmt *s = &m->stmt[sid];
	const Tensor *list = &m->tensor[s->out], *cnt = &m->tensor[list->list_count];
	char *vd = NULL, *md = NULL;
	char *v = cuda_value_of(cx, s, s->rhs, &vd);
	char *mk = s->mask ? cuda_value_of(cx, s, s->mask, &md) : xstrdup("true");
	FILE *out = cx->out;
	cuda_put_decls(out, md, depth);
	cuda_ind(out, depth), fprintf(out, "if (%s(%s)) {\n", cx->sliced ? "fz_slice == 0 && fz_live && " : "", mk);
	cuda_put_decls(out, vd, depth + 1);
	cuda_ind(out, depth + 1), fprintf(out, "const long long slot = (long long)atomicAdd((unsigned int *)a.t_%s, 1u);\n", cnt->name);
	cuda_ind(out, depth + 1), fprintf(out, "if (slot < ");
	cuda_dim(cx, list->dim[0], out);
	fprintf(out, ") a.t_%s[slot] = (%s)(%s);\n", list->name, emit_device_type(list), v);
	cuda_ind(out, depth), fputs("}\n", out);
	free(v), free(mk), free(vd), free(md);
}
