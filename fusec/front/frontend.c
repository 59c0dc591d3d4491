#include "front/frontend.h"

#include "front/parse.h"
#include "front/sema.h"

int frontend_check(FrontEnd *fe, FILE *diag_out, int max_errors)
{
	fe->diag = (Diag){.src = &fe->src, .out = diag_out, .max_errors = max_errors};
	ast_init(&fe->ast, fe->src.text);
	ir_init(&fe->mod);
	if (fe->src.len == 0 || fe->src.len > 0x7fffffffu) {
		diag_error(&fe->diag, 0, fe->src.len ? "file too large" : "empty file: expected a fusion");
		return fe->diag.errors;
	}
	fe->root = parse_source(&fe->ast, &fe->diag, &fe->src);
	/* Syntax errors leave holes in the tree: check meaning only when whole. */
	if (fe->diag.errors == 0) sema_check(&fe->ast, fe->root, &fe->diag, &fe->mod);
	return fe->diag.errors;
}

void frontend_free(FrontEnd *fe)
{
	ast_free(&fe->ast);
	ir_free(&fe->mod);
	source_free(&fe->src);
}
