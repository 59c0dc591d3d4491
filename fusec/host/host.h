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

/* grid.c: launch geometry, written from one place in two syntaxes: C over
   the header's `a` and `sm`, and the manifest's launch recipe (sizes by
   name, $sm, the functions of runtime/fuserun.h without their fz_) */
typedef enum { HS_C, HS_RECIPE } HostSyntax;
void host_dim(const Fusion *f, Dim d, FILE *out);   /* C */
void host_tensor_bytes(const Fusion *f, const Tensor *t, FILE *out);   /* C */
void host_grid_x(const Module *m, const Fusion *f, const Kernel *k, HostSyntax s, FILE *out);
/* grid.y, when the kind has one; 0 (nothing printed) for 1 */
int host_grid_y(const Fusion *f, const Kernel *k, HostSyntax s, FILE *out);
/* a row kernel's row width (the threads a row of a register-cached one) */
void host_row_width(const Fusion *f, const Kernel *k, HostSyntax s, FILE *out);
/* a split kernel's workspace: partials (parts) and counters (cnt), as C
   statements, and as the recipe's `parts` and `counter` lines */
void host_split_scratch(const Fusion *f, const Kernel *k, FILE *out);
void host_split_recipe(const Fusion *f, const Kernel *k, const char *variant, FILE *out);
/* an attention kernel's entry points and head size, as the recipe's op line has them */
void host_attn_recipe(const Fusion *f, const Kernel *k, FILE *out);
/* fz_split, for a header with a split kernel (guarded; runtime/fuserun.h's) */
extern const char host_split_fn[];

/* recipe.c: a variant's launch recipe as manifest lines (stored, parts,
   counter, op): what fz_call needs to run it without NAME.h */
void host_recipe(const Module *m, const Schedule *s, FILE *out);

/* emit_host.c: the decisions the header's op list and the recipe share */
/* whether kernel i of s zeroes something for later kernels (it always runs, one block at least) */
int host_kernel_resets(const Module *m, const Schedule *s, int i);
/* the tensors s clears before its kernels, in order: *n of them into t (ntensor entries) */
int host_memsets(const Module *m, const Schedule *s, int *t);

#endif
