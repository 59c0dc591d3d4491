#include "front/parse.h"

#include <stdlib.h>

#include "grammar.h"

void *ParseAlloc(void *(*malloc_fn)(size_t), ParseCtx *ctx);
void ParseFree(void *p, void (*free_fn)(void *));
void Parse(void *p, int major, Token minor);

const char *token_name(int code)
{
	switch (code) {
	case 0: return "end of input";
	case FUSION: case STAGE: case CONST: case TEMP: case FOR: case IN: case WHERE: case PIPELINE: case REPEAT:
		return "keyword";
	case IDENT: return "identifier";
	case NUMBER: return "number";
	default: return "token";
	}
}

const char *token_spelling(int code)
{
	switch (code) {
	case OROR: return "'||'"; case ANDAND: return "'&&'"; case EQEQ: return "'=='"; case NE: return "'!='";
	case LT: return "'<'"; case LE: return "'<='"; case GT: return "'>'"; case GE: return "'>='";
	case PLUS: return "'+'"; case MINUS: return "'-'"; case STAR: return "'*'"; case SLASH: return "'/'";
	case PERCENT: return "'%'"; case NOT: return "'!'"; case RBRACE: return "'}'"; case CONST: return "'const'";
	case IDENT: return "an identifier"; case ASSIGN: return "'='"; case NUMBER: return "a number"; case SEMI: return "';'";
	case FUSION: return "'fusion'"; case LPAREN: return "'('"; case RPAREN: return "')'"; case ARROW: return "'->'";
	case LBRACE: return "'{'"; case COMMA: return "','"; case COLON: return "':'"; case LBRACKET: return "'['";
	case RBRACKET: return "']'"; case TEMP: return "'temp'"; case STAGE: return "'stage'"; case LARROW: return "'<-'";
	case WHERE: return "'where'"; case PLUSEQ: return "'+='"; case SUMINIT: return "'+=!'"; case BANGEQ: return "'=!'";
	case FOR: return "'for'"; case IN: return "'in'"; case DOTDOT: return "'..'";
	case PIPELINE: return "'pipeline'"; case REPEAT: return "'repeat'";
	default: return "a token";
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
