#include "front/ast.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const ast_assign_op_spelling[AOP_N] = {
#define X(k, s) s,
	ASSIGN_OPS(X)
#undef X
};
const char *const ast_expr_op_spelling[OP_N] = {
#define X(k, s) s,
	EXPR_OPS(X)
#undef X
};
static const char *const kind_names[AST_NKINDS] = {
#define X(k) #k,
	AST_KINDS(X)
#undef X
};

const char *ast_kind_name(AstKind k) { return kind_names[k]; }

void ast_init(Ast *t, const char *text)
{
	memset(t, 0, sizeof *t);
	t->text = text;
	ast_new(t, AST_FILE, 0, 0); /* node 0: "none" */
}

void ast_free(Ast *t)
{
	free(t->n);
	t->n = NULL;
}

int ast_new(Ast *t, AstKind k, unsigned off, unsigned len)
{
	if (t->len == t->cap) {
		int cap = t->cap ? t->cap * 2 : 256;
		Node *n = realloc(t->n, (size_t)cap * sizeof *n);
		if (!n) {
			t->oom = 1;
			return 0;
		}
		t->n = n, t->cap = cap;
	}
	Node *x = &t->n[t->len];
	memset(x, 0, sizeof *x);
	x->kind = k, x->off = off, x->len = len;
	return t->len++;
}

int ast_list(Ast *t, int head, int item)
{
	if (!item) return head;
	if (!head) {
		t->n[item].tail = item;
		return item;
	}
	/* a single node becomes a list without passing through here */
	int tail = t->n[head].tail ? t->n[head].tail : head;
	t->n[tail].next = item;
	t->n[head].tail = item;
	return head;
}

int ast_name_eq(const Ast *t, int node, const char *s)
{
	const Node *x = &t->n[node];
	return strlen(s) == x->len && memcmp(t->text + x->off, s, x->len) == 0;
}

static void indent(FILE *f, int d)
{
	for (int i = 0; i < d; i++) fputs("  ", f);
}

static void print_node(const Ast *t, int i, FILE *f, int d);

static void print_list(const Ast *t, const char *label, int i, FILE *f, int d)
{
	if (!i) return;
	indent(f, d);
	fprintf(f, "%s:\n", label);
	for (; i; i = t->n[i].next) print_node(t, i, f, d + 1);
}

static void print_node(const Ast *t, int i, FILE *f, int d)
{
	const Node *x = &t->n[i];
	indent(f, d);
	fputs(kind_names[x->kind], f);
	if (x->kind == AST_NUM || (x->kind == AST_DIM && x->flag) || x->kind == AST_CONST)
		fprintf(f, " %.17g", x->num);
	if (x->kind != AST_NUM && x->kind != AST_UNARY && x->kind != AST_BINARY &&
	    !(x->kind == AST_DIM && x->flag) && x->len)
		fprintf(f, " %.*s", (int)x->len, t->text + x->off);
	if (x->kind == AST_UNARY || x->kind == AST_BINARY)
		fprintf(f, " %s", ast_expr_op_spelling[x->op]);
	if (x->kind == AST_STMT) fprintf(f, " %s", ast_assign_op_spelling[x->op]);
	fputc('\n', f);
	switch (x->kind) {
	case AST_FUSION:
		print_list(t, "inputs", x->a, f, d + 1);
		print_list(t, "outputs", x->b, f, d + 1);
		print_list(t, "body", x->c, f, d + 1);
		break;
	case AST_PIPELINE:
		print_list(t, "fusion", x->a, f, d + 1);
		if (x->c) print_list(t, "repeat", x->c, f, d + 1);
		print_list(t, "carries", x->b, f, d + 1);
		break;
	case AST_CARRY: print_list(t, "from", x->a, f, d + 1); break;
	case AST_PARAM:
	case AST_TEMP:
		print_list(t, "type", x->a, f, d + 1);
		print_list(t, "dims", x->b, f, d + 1);
		if (x->c) print_node(t, x->c, f, d + 1);
		break;
	case AST_DOMAIN:
		indent(f, d + 1), fprintf(f, "%s%.17g, %.17g%s\n", x->flag & 1 ? "(" : "[", t->n[x->a].num, t->n[x->b].num, x->flag & 2 ? ")" : "]");
		break;
	case AST_STAGE:
		print_list(t, "attrs", x->a, f, d + 1);
		print_list(t, "stmts", x->b, f, d + 1);
		break;
	case AST_ATTR: print_list(t, "value", x->a, f, d + 1); break;
	case AST_STMT:
		print_list(t, "lhs", x->a, f, d + 1);
		if (x->e) print_list(t, "k", x->e, f, d + 1);
		print_list(t, "rhs", x->b, f, d + 1);
		print_list(t, "for", x->c, f, d + 1);
		print_list(t, "where", x->d, f, d + 1);
		break;
	case AST_APPEND:
		print_list(t, "count", x->a, f, d + 1);
		print_list(t, "value", x->b, f, d + 1);
		print_list(t, "where", x->d, f, d + 1);
		break;
	case AST_FOR:
		print_list(t, "lo", x->a, f, d + 1);
		print_list(t, "hi", x->b, f, d + 1);
		break;
	case AST_REF: print_list(t, "args", x->a, f, d + 1); break;
	case AST_UNARY: print_node(t, x->a, f, d + 1); break;
	case AST_BINARY:
		print_node(t, x->a, f, d + 1);
		print_node(t, x->b, f, d + 1);
		break;
	default: break;
	}
}

void ast_print(const Ast *t, int root, void *file)
{
	for (int i = root; i; i = t->n[i].next) print_node(t, i, file, 0);
}
