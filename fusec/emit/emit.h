/* Backends: CUDA (fused and unfused variants), float64 reference C, the
 * host header with launch lists, and the manifest. All write to FILE*s and
 * depend only on the Module and its Schedules, so their output is a pure
 * function of the spec: no time, paths or addresses leak in. They read the
 * schedule (schedule.h) and decide nothing of their own. */
#ifndef FUSEC_EMIT_H
#define FUSEC_EMIT_H
#include <stdio.h>

#include "core/ir.h"
#include "plan/schedule.h"

/* fz_row_lanes after its qualifier: the row kernels (the prelude) and their
   launch (the header, and runtime/fuserun.h's copy of it) must choose the
   same group of threads for a row, so both print this one text. */
#define FZ_ROW_LANES_FN \
	"int fz_row_lanes(long long cols, int per)\n" \
	"{\n" \
	"\tconst long long nv = (cols + 3) / 4;\n" \
	"\tint g = nv > 1 ? 2 : 1; /* a group reads at least 32 bytes a step */\n" \
	"\twhile (g < 1024 && (long long)g * per < nv) g *= 2;\n" \
	"\treturn g;\n" \
	"}\n"

void emit_cuda_prelude(FILE *out);
/* The kernels of one schedule (its variant letter names them). */
void emit_cuda_kernels(const Module *m, const Schedule *s, FILE *out);
/* The same as __device__ functions of (args, block index, grid size): the
   phases of a persistent kernel (pipeline.c); written: per tensor, inputs
   the launch writes (no read-only loads), or NULL */
void emit_cuda_bodies(const Module *m, const Schedule *s, const unsigned char *written, FILE *out);
/* The whole .cu of a fusion: banner, prelude, args, fused then unfused. */
void emit_cuda_file(const Module *m, const Schedule *fused, const Schedule *unfused, const char *banner, FILE *out);
/* The tensors a TILE kernel reads as A(m,k) and B(k,n): the runtime makes
   their tensor maps (the manifest's tma=A,B). kern_tile.c */
void tile_operands(const Module *m, const Kernel *k, const char **a, const char **b);
void emit_args_struct(const Module *m, int fusion, int device, FILE *out);
void emit_reference(const Module *m, int fusion, FILE *out);
void emit_host_plan(const Module *m, const Schedule *s, FILE *out);
void emit_host_ops(const Module *m, const Schedule *s, const char *fn, FILE *out);
void emit_header(const Module *m, const Schedule *fused, const Schedule *unfused, const char *banner, FILE *out);

/* Element i's row-major linear offset in tensor t, given rendered subscripts. */
void emit_linear(const Module *m, int fusion, int t, char **subs, const char *size_prefix, FILE *out);
char *render_expr(ExprWriter *w, int e); /* caller frees */
const char *tensor_device_type(const Tensor *t);

#endif
