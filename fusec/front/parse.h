/* Front door of the front end: lex and parse one source into an Ast. */
#ifndef FUSEC_PARSE_H
#define FUSEC_PARSE_H
#include "front/ast.h"
#include "front/diag.h"

typedef struct Token {
	unsigned off, len;
	double num;
	int is_int;
} Token;

/* The parser's %extra_context: everything the grammar actions touch. */
typedef struct ParseCtx {
	Ast *ast;
	Diag *diag;
	int root;      /* first top-level item */
	int overflow;  /* nesting exhausted the parser stack */
} ParseCtx;

typedef struct Lexer {
	const char *base, *cur, *lim;
	Diag *diag;
} Lexer;

void lexer_init(Lexer *lx, const char *text, size_t len, Diag *d);
/* Returns a grammar token code, 0 at end of input. Lexical errors are
 * reported and skipped, so the parser only ever sees valid tokens. */
int lexer_next(Lexer *lx, Token *tok);
const char *token_name(int code);
const char *token_spelling(int code); /* "'('", "identifier", ... */

/* Parses the whole source; returns the first top-level node (0 if none). */
int parse_source(Ast *ast, Diag *d, const Source *src);

#endif
