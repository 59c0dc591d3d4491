/* Text pieces every writer shares (the CUDA, the header, the reference,
 * the manifest): expressions rendered, linear offsets, the argument
 * struct, the layout fingerprint, a pipeline's params struct, and the
 * definitions the generated code shares with runtime/fuserun.h. Writers
 * write to FILE*s and depend only on the Module and its plan, so their
 * output is a pure function of the spec: no time, paths or addresses. */
#ifndef FUSEC_EMIT_H
#define FUSEC_EMIT_H
#include <stdio.h>

#include "core/ir.h"
#include "plan/plan.h"

/* runtime/fuserun.h's FZ_OP_DEFINED block, as text: the op list's types
   and the grid helpers every header repeats (guarded, so either comes
   first); and its fz_row_lanes without the qualifier, for the kernels.
   Made from fuserun.h at build time (Makefile: build/gen/fz_op.inc), so
   the runtime and the generated code share one definition. */
extern const char emit_fz_op_block[];
extern const char emit_row_lanes_fn[];
extern const char emit_row_lanes_s_fn[]; /* fz_row_lanes_s, for kernels streaming wide rows */
extern const char emit_row_s_block[];    /* its guarded block, for their headers */
/* Has either variant of fp a row kernel whose wide rows stream by
   fz_row_lanes_s (KernelParams.row_stream)? */
int emit_row_streamed(const FusionPlan *fp);

/* A row kernel's width, its inner axes' product (parenthesized when
   several), its sizes spelled PREFIX NAME: the kernel's a.n_, the header's a->n_ */
void emit_row_width(const Fusion *f, const Kernel *k, const char *size_prefix, FILE *out);
/* Element i's row-major linear offset in tensor t, given rendered subscripts. */
void emit_linear(const Module *m, int fusion, int t, char **subs, const char *size_prefix, FILE *out);
char *emit_render(ExprWriter *w, int e); /* caller frees */
const char *emit_device_type(const Tensor *t);
/* The argument block every kernel takes, by value (device: the .cu's). */
void emit_args_struct(const Module *m, int fusion, int device, FILE *out);
/* "ROLE NAME KIND TYPE DIMS" of a tensor, as the manifest's param/temp
   lines and the layout fingerprint both write it */
void emit_tensor_words(const Module *m, const Fusion *f, const Tensor *t, FILE *out);
/* its DIMS alone: "-" for a scalar, else each dimension as written, joined
   by commas (the header's and the reference's shape tables, which the
   runtime compares with the manifest's) */
void emit_tensor_shape(const Module *m, const Fusion *f, const Tensor *t, FILE *out);
/* the layout fingerprint of a fusion (the manifest's `layout` line and the
   header's FZ_NAME_LAYOUT; runtime/manifest.c's fr_layout computes the same) */
void emit_layout(const Module *m, int fusion, char hex[65]);
/* a pipeline's params struct, the same bytes in the .cu and the header */
void emit_pipe_params(const Module *m, const Pipeline *pl, FILE *out);

#endif
