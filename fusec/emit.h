/* Backends: CUDA (fused and unfused variants), float64 reference C, the
 * host header with launch plans, and the manifest. All write to FILE*s and
 * depend only on the Module and a Plan, so their output is a pure
 * function of the spec: no time, paths or addresses leak in. */
#ifndef FUSEC_EMIT_H
#define FUSEC_EMIT_H
#include <stdio.h>

#include "ir.h"
#include "plan.h"

#define FZ_MATMUL_TILE 64
#define FZ_MATMUL_BK 16
#define FZ_BLOCKS_PER_SM 8

void emit_cuda_prelude(FILE *out);
/* Kernels of one plan; prefix distinguishes variants ("f" fused, "u" unfused). */
void emit_cuda_kernels(const Module *m, int fusion, const Plan *p, const char *variant, FILE *out);
void emit_args_struct(const Module *m, int fusion, int device, FILE *out);
void emit_reference(const Module *m, int fusion, FILE *out);
void emit_host_plan(const Module *m, int fusion, const Plan *p, const char *variant, FILE *out);

/* Element i's row-major linear offset in tensor t, given rendered subscripts. */
void emit_linear(const Module *m, int fusion, int t, char **subs, const char *size_prefix, FILE *out);
char *render_expr(ExprWriter *w, int e); /* caller frees */
const char *tensor_device_type(const Tensor *t);

#endif
