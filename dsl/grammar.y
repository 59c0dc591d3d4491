/* The .fuse grammar, for the Lemon parser generator.
 * Actions are one line and only build nodes (fusec/front/ast.c). Semantic values
 * are node indices into ctx->ast; no value owns memory, so no non-terminal
 * needs a %destructor: on a syntax error Lemon may drop any of them. */
%name Parse
%token_type {Token}
%default_type {int}
%extra_context {ParseCtx *ctx}
%stack_size 400
%include {
#include <assert.h>
#include "front/parse.h"
#define MK(k, t) ast_new(ctx->ast, AST_##k, (t).off, (t).len)
#define LIST(h, i) ast_list(ctx->ast, (h), (i))
/* A function, not a macro: the node index must be computed (and the
 * array possibly moved by ast_new) before the array is indexed. */
#define SETF(node, field, v) setf_##field(ctx, (node), (v))
#define SETTER(field, type) \
	static int setf_##field(ParseCtx *ctx, int node, type v) { ctx->ast->n[node].field = v; return node; }
SETTER(num, double)
SETTER(flag, int)
SETTER(a, int)
SETTER(c, int)
SETTER(d, int)
static int bin(ParseCtx *ctx, int op, int a, Token t, int b)
{
	int x = ast_new(ctx->ast, AST_BINARY, t.off, t.len);
	ctx->ast->n[x].op = op, ctx->ast->n[x].a = a, ctx->ast->n[x].b = b;
	return x;
}
static int un(ParseCtx *ctx, int op, Token t, int a)
{
	int x = ast_new(ctx->ast, AST_UNARY, t.off, t.len);
	ctx->ast->n[x].op = op, ctx->ast->n[x].a = a;
	return x;
}
static int num(ParseCtx *ctx, Token t, int neg)
{
	int x = ast_new(ctx->ast, AST_NUM, t.off, t.len);
	ctx->ast->n[x].num = neg ? -t.num : t.num;
	ctx->ast->n[x].flag = t.is_int;
	return x;
}
static int domain(ParseCtx *ctx, Token t, int open, int lo, int hi)
{
	int x = ast_new(ctx->ast, AST_DOMAIN, t.off, t.len);
	ctx->ast->n[x].a = lo, ctx->ast->n[x].b = hi, ctx->ast->n[x].flag = open;
	return x;
}
static int node2(ParseCtx *ctx, AstKind k, Token t, int a, int b)
{
	int x = ast_new(ctx->ast, k, t.off, t.len);
	ctx->ast->n[x].a = a, ctx->ast->n[x].b = b;
	return x;
}
/* A reduction spelled NAME=! or NAME[k]=!; returns the operator. */
static int redop(ParseCtx *ctx, Token t, int has_k)
{
	static const struct { const char *name; int op, k; } ops[] = {
		{"max", AOP_MAX, 0}, {"min", AOP_MIN, 0}, {"kmin", AOP_KMIN, 1},
	};
	int x = ast_new(ctx->ast, AST_IDENT, t.off, t.len);
	for (unsigned i = 0; i < sizeof ops / sizeof ops[0]; i++)
		if (ast_name_eq(ctx->ast, x, ops[i].name) && ops[i].k == has_k)
			return ops[i].op;
	diag_error(ctx->diag, t.off, "unknown reduction '%.*s%s=!' (expected max=!, min=! or kmin[k]=!)",
	           (int)t.len, ctx->ast->text + t.off, has_k ? "[...]" : "");
	return has_k ? AOP_KMIN : AOP_SUM;
}
static int aop(ParseCtx *ctx, int op, int k)
{
	int x = ast_new(ctx->ast, AST_IDENT, 0, 0);
	ctx->ast->n[x].op = op, ctx->ast->n[x].a = k;
	return x;
}
static int stmt(ParseCtx *ctx, int lhs, int op, int rhs, int loop, int mask)
{
	int x = ast_new(ctx->ast, AST_STMT, ctx->ast->n[lhs].off, ctx->ast->n[lhs].len);
	Node *n = &ctx->ast->n[x];
	n->a = lhs, n->op = ctx->ast->n[op].op, n->e = ctx->ast->n[op].a;
	n->b = rhs, n->c = loop, n->d = mask;
	return x;
}
}

%syntax_error {
	/* What the parser could have taken here: the tokens this state does
	 * not reject, named when there are few enough to help. */
	char expected[256] = "";
	int nexp = 0, codes[8];
	for (int t = 1; t < YYNTOKEN; t++)
		if (yy_find_shift_action((YYCODETYPE)t, yypParser->yytos->stateno) != YY_ERROR_ACTION && nexp++ < 8)
			codes[nexp - 1] = t;
	if (nexp > 0 && nexp <= 6) {
		size_t n = 0;
		for (int i = 0; i < nexp; i++)
			n += (size_t)snprintf(expected + n, sizeof expected - n, "%s%s", i == 0 ? "; expected " : i == nexp - 1 ? " or " : ", ",
			                      token_spelling(codes[i]));
	}
	if (TOKEN.len == 0 && yymajor == 0)
		diag_error(ctx->diag, TOKEN.off, "unexpected end of input%s", expected);
	else
		diag_error(ctx->diag, TOKEN.off, "syntax error: unexpected %s '%.*s'%s",
		           token_name(yymajor), (int)TOKEN.len, ctx->ast->text + TOKEN.off, expected);
}
%stack_overflow {
	ctx->overflow = 1;
}

%left OROR.
%left ANDAND.
%left EQEQ NE.
%left LT LE GT GE.
%left PLUS MINUS.
%left STAR SLASH PERCENT.
%right NOT.

file ::= tops(T).                         { ctx->root = T; }
tops(A) ::= .                             { A = 0; }
tops(A) ::= tops(B) top(C).               { A = LIST(B, C); }
top(A) ::= const_decl(C).                 { A = C; }
top(A) ::= fusion(F).                     { A = F; }
top(A) ::= pipeline(P).                   { A = P; }
top(A) ::= error RBRACE.                  { A = 0; }

const_decl(A) ::= CONST IDENT(N) ASSIGN number(V) semi.   { A = SETF(SETF(MK(CONST, N), num, ctx->ast->n[V].num), flag, ctx->ast->n[V].flag); }
number(A) ::= NUMBER(T).                  { A = num(ctx, T, 0); }
number(A) ::= MINUS NUMBER(T).            { A = num(ctx, T, 1); }
semi ::= .
semi ::= SEMI.

/* pipeline NAME = FUSION                       all of a fusion's kernels in one launch
   pipeline NAME = repeat T FUSION(in <- out, ...)   T steps in one launch, out feeding in */
pipeline(A) ::= PIPELINE IDENT(N) ASSIGN IDENT(F) semi.
                                          { A = node2(ctx, AST_PIPELINE, N, MK(IDENT, F), 0); }
pipeline(A) ::= PIPELINE IDENT(N) ASSIGN REPEAT IDENT(T) IDENT(F) LPAREN carries(C) RPAREN semi.
                                          { A = SETF(node2(ctx, AST_PIPELINE, N, MK(IDENT, F), C), c, MK(IDENT, T)); }
carries(A) ::= carry(C).                  { A = C; }
carries(A) ::= carries(B) COMMA carry(C). { A = LIST(B, C); }
carry(A) ::= IDENT(I) LARROW IDENT(O).    { A = node2(ctx, AST_CARRY, I, MK(IDENT, O), 0); }

fusion(A) ::= FUSION IDENT(N) LPAREN params(I) RPAREN ARROW LPAREN oparams(O) RPAREN LBRACE items(B) RBRACE.
                                          { A = SETF(node2(ctx, AST_FUSION, N, I, O), c, B); }
params(A) ::= .                           { A = 0; }
params(A) ::= plist(B).                   { A = B; }
plist(A) ::= param(P).                    { A = P; }
plist(A) ::= plist(B) COMMA param(P).     { A = LIST(B, P); }
param(A) ::= IDENT(N) COLON IDENT(T) dims(D) domain(V). { A = SETF(node2(ctx, AST_PARAM, N, MK(IDENT, T), D), c, V); }
/* An output named alone is the input of that name, updated in place. */
oparams(A) ::= .                          { A = 0; }
oparams(A) ::= oplist(B).                 { A = B; }
oplist(A) ::= oparam(P).                  { A = P; }
oplist(A) ::= oplist(B) COMMA oparam(P).  { A = LIST(B, P); }
oparam(A) ::= param(P).                   { A = P; }
oparam(A) ::= IDENT(N).                   { A = MK(PARAM, N); }
domain(A) ::= .                           { A = 0; }
domain(A) ::= IN(T) lbound(L) number(LO) COMMA number(HI) rbound(R). { A = domain(ctx, T, L | R, LO, HI); }
lbound(A) ::= LPAREN.                     { A = 1; }
lbound(A) ::= LBRACKET.                   { A = 0; }
rbound(A) ::= RPAREN.                     { A = 2; }
rbound(A) ::= RBRACKET.                   { A = 0; }
dims(A) ::= .                             { A = 0; }
dims(A) ::= LBRACKET dimlist(D) RBRACKET.  { A = D; }
dimlist(A) ::= dim(D).                    { A = D; }
dimlist(A) ::= dimlist(B) COMMA dim(D).   { A = LIST(B, D); }
dim(A) ::= IDENT(N).                      { A = MK(DIM, N); }
dim(A) ::= NUMBER(T).                     { A = SETF(SETF(MK(DIM, T), flag, 1), num, T.num); }

items(A) ::= .                            { A = 0; }
items(A) ::= items(B) item(I).            { A = LIST(B, I); }
item(A) ::= const_decl(C).                { A = C; }
item(A) ::= TEMP IDENT(N) COLON IDENT(T) LBRACKET dimlist(D) RBRACKET semi.
                                          { A = node2(ctx, AST_TEMP, N, MK(IDENT, T), D); }
item(A) ::= STAGE IDENT(N) attrs(T) LBRACE stmts(S) RBRACE. { A = node2(ctx, AST_STAGE, N, T, S); }
item(A) ::= STAGE IDENT attrs LBRACE error RBRACE.        { A = 0; }

attrs(A) ::= .                            { A = 0; }
attrs(A) ::= LBRACKET attrlist(L) RBRACKET. { A = L; }
attrlist(A) ::= attr(T).                  { A = T; }
attrlist(A) ::= attrlist(B) COMMA attr(T). { A = LIST(B, T); }
attr(A) ::= IDENT(N).                     { A = MK(ATTR, N); }
attr(A) ::= IDENT(N) ASSIGN IDENT(V).     { A = SETF(MK(ATTR, N), a, MK(IDENT, V)); }
attr(A) ::= IDENT(N) ASSIGN NUMBER(V).    { A = SETF(MK(ATTR, N), a, num(ctx, V, 0)); }

stmts(A) ::= .                            { A = 0; }
stmts(A) ::= stmts(B) stmt(S).            { A = LIST(B, S); }
stmt(A) ::= ref(L) aop(O) expr(R) loop(F) mask(M) semi.  { A = stmt(ctx, L, O, R, F, M); }
stmt(A) ::= IDENT(N) LBRACKET IDENT(C) RBRACKET LARROW expr(V) WHERE expr(M) semi.
                                          { A = SETF(node2(ctx, AST_APPEND, N, MK(IDENT, C), V), d, M); }

/* An assignment operator is an IDENT node carrying op and kmin's k. */
aop(A) ::= ASSIGN.                        { A = aop(ctx, AOP_SET, 0); }
aop(A) ::= PLUSEQ.                        { A = aop(ctx, AOP_ACCUM, 0); }
aop(A) ::= SUMINIT.                       { A = aop(ctx, AOP_SUM, 0); }
aop(A) ::= IDENT(N) BANGEQ.               { A = aop(ctx, redop(ctx, N, 0), 0); }
aop(A) ::= IDENT(N) LBRACKET expr(K) RBRACKET BANGEQ. { A = aop(ctx, redop(ctx, N, 1), K); }

loop(A) ::= .                             { A = 0; }
loop(A) ::= FOR IDENT(N) IN expr(L) DOTDOT expr(H). { A = node2(ctx, AST_FOR, N, L, H); }
mask(A) ::= .                             { A = 0; }
mask(A) ::= WHERE expr(M).                { A = M; }

ref(A) ::= IDENT(N).                      { A = MK(REF, N); }
ref(A) ::= IDENT(N) LPAREN args(X) RPAREN. { A = SETF(SETF(MK(REF, N), a, X), flag, 1); }
args(A) ::= expr(E).                      { A = E; }
args(A) ::= args(B) COMMA expr(E).        { A = LIST(B, E); }

expr(A) ::= expr(B) OROR(T) expr(C).      { A = bin(ctx, OP_OR, B, T, C); }
expr(A) ::= expr(B) ANDAND(T) expr(C).    { A = bin(ctx, OP_AND, B, T, C); }
expr(A) ::= expr(B) EQEQ(T) expr(C).      { A = bin(ctx, OP_EQ, B, T, C); }
expr(A) ::= expr(B) NE(T) expr(C).        { A = bin(ctx, OP_NE, B, T, C); }
expr(A) ::= expr(B) LT(T) expr(C).        { A = bin(ctx, OP_LT, B, T, C); }
expr(A) ::= expr(B) LE(T) expr(C).        { A = bin(ctx, OP_LE, B, T, C); }
expr(A) ::= expr(B) GT(T) expr(C).        { A = bin(ctx, OP_GT, B, T, C); }
expr(A) ::= expr(B) GE(T) expr(C).        { A = bin(ctx, OP_GE, B, T, C); }
expr(A) ::= expr(B) PLUS(T) expr(C).      { A = bin(ctx, OP_ADD, B, T, C); }
expr(A) ::= expr(B) MINUS(T) expr(C).     { A = bin(ctx, OP_SUB, B, T, C); }
expr(A) ::= expr(B) STAR(T) expr(C).      { A = bin(ctx, OP_MUL, B, T, C); }
expr(A) ::= expr(B) SLASH(T) expr(C).     { A = bin(ctx, OP_DIV, B, T, C); }
expr(A) ::= expr(B) PERCENT(T) expr(C).   { A = bin(ctx, OP_MOD, B, T, C); }
expr(A) ::= MINUS(T) expr(B). [NOT]       { A = un(ctx, OP_NEG, T, B); }
expr(A) ::= NOT(T) expr(B).               { A = un(ctx, OP_NOT, T, B); }
expr(A) ::= LPAREN expr(B) RPAREN.        { A = B; }
expr(A) ::= NUMBER(T).                    { A = num(ctx, T, 0); }
expr(A) ::= ref(R).                       { A = R; }
