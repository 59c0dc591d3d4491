/* The syntax tree: plain structs in one growable array, linked by index.
 * Nothing in a node is owned, so the parser stack owns no memory and an
 * abandoned parse leaks nothing (the whole array is freed at once). */
#ifndef FUSEC_AST_H
#define FUSEC_AST_H
#include <stddef.h>

#define AST_KINDS(X) \
	X(FILE)   /* a = first top-level item */ \
	X(FUSION) /* a = inputs, b = outputs, c = items */ \
	X(PIPELINE) /* name; a = fusion (IDENT), b = CARRY list, c = step count (IDENT, 0: one step) */ \
	X(CARRY)  /* name = the input fed; a = the output feeding it (IDENT) */ \
	X(PARAM)  /* name; a = type name (IDENT node, 0: an output updating the input of that name); b = dims; c = DOMAIN */ \
	X(DOMAIN) /* an input's values: a = lo, b = hi (NUM nodes); flag = 1 lo open, 2 hi open */ \
	X(TEMP)   /* like PARAM */ \
	X(CONST)  /* name; num */ \
	X(DIM)    /* name (IDENT) or num (flag = 1) */ \
	X(STAGE)  /* name; a = attrs, b = stmts */ \
	X(ATTR)   /* name; a = value node (IDENT or NUM) or 0 */ \
	X(STMT)   /* a = lhs REF, b = rhs, c = FOR, d = where, op = assign op, e = kmin k */ \
	X(APPEND) /* name = list; a = count IDENT, b = value, d = where */ \
	X(FOR)    /* name = index; a = lo, b = hi */ \
	X(REF)    /* name; a = args; flag = has () */ \
	X(IDENT)  /* name */ \
	X(NUM)    /* num; flag = written as an integer */ \
	X(UNARY)  /* op; a */ \
	X(BINARY) /* op; a, b */

typedef enum {
#define X(k) AST_##k,
	AST_KINDS(X)
#undef X
	AST_NKINDS
} AstKind;

/* Assignment operators of a statement. */
#define ASSIGN_OPS(X) \
	X(SET, "=") \
	X(ACCUM, "+=") \
	X(SUM, "+=!") \
	X(MAX, "max=!") \
	X(MIN, "min=!") \
	X(KMIN, "kmin[k]=!")

typedef enum {
#define X(k, s) AOP_##k,
	ASSIGN_OPS(X)
#undef X
	AOP_N
} AssignOp;

/* Operators of expressions; the spelling is what the user wrote. */
#define EXPR_OPS(X) \
	X(NEG, "-") X(NOT, "!") \
	X(ADD, "+") X(SUB, "-") X(MUL, "*") X(DIV, "/") X(MOD, "%") \
	X(LT, "<") X(LE, "<=") X(GT, ">") X(GE, ">=") X(EQ, "==") X(NE, "!=") \
	X(AND, "&&") X(OR, "||")

typedef enum {
#define X(k, s) OP_##k,
	EXPR_OPS(X)
#undef X
	OP_N
} ExprOp;

typedef struct Node {
	AstKind kind;
	int op;
	unsigned off, len;  /* the token that names or starts this node */
	int a, b, c, d, e;  /* children, 0 = none (node 0 is a sentinel) */
	int next;           /* next sibling in a list */
	int tail;           /* last element, kept on a list's head only */
	int flag;
	double num;
} Node;

typedef struct Ast {
	Node *n;
	int len, cap;
	const char *text; /* the source the offsets point into */
	int oom;
} Ast;

void ast_init(Ast *t, const char *text);
void ast_free(Ast *t);
int ast_new(Ast *t, AstKind k, unsigned off, unsigned len);
int ast_list(Ast *t, int head, int item); /* append; returns head */
int ast_name_eq(const Ast *t, int node, const char *s);
void ast_print(const Ast *t, int root, void *file);
const char *ast_kind_name(AstKind k);
extern const char *const ast_assign_op_spelling[AOP_N];
extern const char *const ast_expr_op_spelling[OP_N];

#endif
