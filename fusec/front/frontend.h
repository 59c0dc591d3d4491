/* One source file through lexer, parser and checker. */
#ifndef FUSEC_FRONTEND_H
#define FUSEC_FRONTEND_H
#include "front/ast.h"
#include "front/diag.h"
#include "core/ir.h"

typedef struct FrontEnd {
	Source src;
	Diag diag;
	Ast ast;
	int root;
	Module mod;
} FrontEnd;

/* Checks src (already loaded into fe->src); returns the error count. */
int frontend_check(FrontEnd *fe, FILE *diag_out, int max_errors);
void frontend_free(FrontEnd *fe);

#endif
