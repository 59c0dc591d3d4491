#include "parse.h"

#include <stdlib.h>

#include "grammar.h"

void *ParseAlloc(void *(*malloc_fn)(size_t), ParseCtx *ctx);
void ParseFree(void *p, void (*free_fn)(void *));
void Parse(void *p, int major, Token minor);

const char *token_name(int code)
{
	switch (code) {
	case 0: return "end of input";
	case FUSION: case STAGE: case CONST: case TEMP: case FOR: case IN: case WHERE:
		return "keyword";
	case IDENT: return "identifier";
	case NUMBER: return "number";
	default: return "token";
	}
}

int parse_source(Ast *ast, Diag *d, const Source *src)
{
	ParseCtx ctx = {ast, d, 0, 0};
	Lexer lx;
	lexer_init(&lx, src->text, src->len, d);
	void *p = ParseAlloc(malloc, &ctx);
	if (!p) {
		diag_error(d, 0, "out of memory");
		return 0;
	}
	Token tok;
	int code;
	do {
		code = lexer_next(&lx, &tok);
		Parse(p, code, tok);
		if (ctx.overflow) {
			diag_error(d, tok.off, "nesting too deep: the parser stack is exhausted here");
			break;
		}
		if (ast->oom) {
			diag_error(d, tok.off, "out of memory");
			break;
		}
	} while (code != 0);
	ParseFree(p, free);
	return ctx.overflow || ast->oom ? 0 : ctx.root;
}
