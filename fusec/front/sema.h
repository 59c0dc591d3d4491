/* Name resolution, range and shape inference, type and attribute checks:
 * turns the Ast into a checked Module, reporting every independent error. */
#ifndef FUSEC_SEMA_H
#define FUSEC_SEMA_H
#include "front/ast.h"
#include "front/diag.h"
#include "core/ir.h"

/* Returns the number of errors reported (0: the Module is complete). */
int sema_check(const Ast *ast, int root, Diag *d, Module *m);
/* The file's pipeline declarations, after its fusions (pipeline_check.c). */
void sema_pipelines(const Ast *ast, int root, Diag *d, Module *m);

#endif
