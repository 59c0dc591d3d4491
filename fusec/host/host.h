/* The application's side of an artifact: the header (argument structs,
 * scratch layout, op lists, typed launchers, pipelines) and the float64
 * reference C. Everything here prints what the plan says. */
#ifndef FUSEC_HOST_H
#define FUSEC_HOST_H
#include <stdio.h>

#include "emit/emit.h"

/* emit_host.c: the whole header of a fusion */
void host_header(const Module *m, const FusionPlan *fp, const char *banner, FILE *out);
/* static inline int FN(const fz_FUSION_args *a, int sm, fz_op *ops, int max_ops):
   s's launches and memsets in stream order */
void host_ops(const Module *m, const Schedule *s, const char *fn, FILE *out);
/* an attention kernel's entry point for the launch's head size (grid.c) */
void host_attn_entry(const Fusion *f, const Kernel *k, FILE *out);

/* emit_ref.c: the float64 reference C of a fusion */
void host_reference(const Module *m, int fusion, FILE *out);

/* pipe_header.c: a pipeline's part of the header */
void host_pipeline(const Module *m, const PipePlan *pp, FILE *out);

/* grid.c: launch geometry as C over the header's `a` and `sm` */
void host_dim(const Fusion *f, Dim d, FILE *out);
void host_tensor_bytes(const Fusion *f, const Tensor *t, FILE *out);
void host_grid_x(const Module *m, const Fusion *f, const Kernel *k, FILE *out);
/* grid.y, when the kind has one; 0 (nothing printed) for 1 */
int host_grid_y(const Fusion *f, const Kernel *k, FILE *out);
/* a split kernel's workspace: partials (parts) and counters (cnt) */
void host_split_scratch(const Fusion *f, const Kernel *k, FILE *out);
/* fz_split, for a header with a split kernel (guarded) */
extern const char host_split_fn[];

#endif
