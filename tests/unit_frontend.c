/* Unit tests of the lexer, the parser and the diagnostics printer.
 *
 * Built by tests/run.sh from the front-end sources with ASan and UBSan:
 *   cc -Ifusec -Ibuild/gen -fsanitize=address,undefined tests/unit_frontend.c
 *      fusec/core/*.c fusec/front/*.c build/gen/lexer.c build/gen/grammar.c -lm
 * Prints one line per failing case and, last, "unit: P passed, F failed". */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "front/ast.h"
#include "front/diag.h"
#include "front/frontend.h"
#include "grammar.h"
#include "front/parse.h"

static int passed, failed;

/* One case: report() with the case's name once every assertion of it ran. */
static int case_ok;
static const char *case_name;
static void begin(const char *name) { case_name = name, case_ok = 1; }
static void end(void)
{
	if (case_ok) passed++;
	else failed++;
}
static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
	char msg[8192];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	/* one line per failure; the details, if any, indented under it */
	printf("FAIL unit/%s: ", case_name);
	for (const char *c = msg; *c; c++) {
		putchar(*c);
		if (*c == '\n' && c[1]) fputs("    ", stdout);
	}
	putchar('\n');
	case_ok = 0;
}
static void expect_str(const char *what, const char *got, const char *want)
{
	if (strcmp(got, want)) fail("%s:\ngot:  %s\nwant: %s", what, got, want);
}
static void expect_int(const char *what, long got, long want)
{
	if (got != want) fail("%s: got %ld, want %ld", what, got, want);
}

/* --- a growable string ---------------------------------------------- */

typedef struct { char *s; size_t n, cap; } Buf;
static void bprintf(Buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void bprintf(Buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (b->n + (size_t)k + 1 > b->cap) {
		b->cap = (b->n + (size_t)k + 1) * 2;
		b->s = realloc(b->s, b->cap);
		if (!b->s) abort();
	}
	va_start(ap, fmt);
	vsnprintf(b->s + b->n, (size_t)k + 1, fmt, ap);
	va_end(ap);
	b->n += (size_t)k;
}
static const char *bstr(Buf *b) { return b->s ? b->s : ""; }
static void bfree(Buf *b) { free(b->s), b->s = NULL, b->n = b->cap = 0; }

/* --- a source with captured diagnostics ------------------------------ */

typedef struct {
	Source src;
	Diag diag;
	char *msgs;      /* everything printed, after fin() */
	size_t msgs_len;
	FILE *out;
} Env;

static void env_init(Env *e, const char *text, size_t len)
{
	memset(e, 0, sizeof *e);
	e->src.path = "t.fuse";
	e->src.text = malloc(len + 1);
	if (!e->src.text) abort();
	memcpy(e->src.text, text, len);
	e->src.text[len] = 0; /* the lexer's sentinel */
	e->src.len = len;
	e->out = open_memstream(&e->msgs, &e->msgs_len);
	if (!e->out) abort();
	e->diag = (Diag){.src = &e->src, .out = e->out, .max_errors = 50};
}
static const char *env_msgs(Env *e)
{
	fflush(e->out);
	return e->msgs ? e->msgs : "";
}
static void env_free(Env *e)
{
	fclose(e->out);
	free(e->msgs);
	free(e->src.text);
}

/* --- lexer ------------------------------------------------------------ */

static const char *tok_name(int code)
{
	static const struct { int code; const char *name; } t[] = {
#define T(x) {x, #x},
		T(OROR) T(ANDAND) T(EQEQ) T(NE) T(LT) T(LE) T(GT) T(GE) T(PLUS) T(MINUS)
		T(STAR) T(SLASH) T(PERCENT) T(NOT) T(RBRACE) T(CONST) T(IDENT) T(ASSIGN)
		T(NUMBER) T(SEMI) T(FUSION) T(LPAREN) T(RPAREN) T(ARROW) T(LBRACE) T(COMMA)
		T(COLON) T(LBRACKET) T(RBRACKET) T(TEMP) T(STAGE) T(LARROW) T(WHERE)
		T(PLUSEQ) T(SUMINIT) T(BANGEQ) T(FOR) T(IN) T(DOTDOT)
#undef T
	};
	static char other[16];
	if (code == 0) return "EOF";
	for (unsigned i = 0; i < sizeof t / sizeof t[0]; i++)
		if (t[i].code == code) return t[i].name;
	snprintf(other, sizeof other, "T%d", code);
	return other;
}

/* Token stream as "NAME@off:len" words; numbers add "=value" and "i" for an
 * integer; the end is "EOF@off"; lexical errors add " errors=N". */
static void lex_dump(const char *text, size_t len, Buf *out, Env *e)
{
	env_init(e, text, len);
	Lexer lx;
	lexer_init(&lx, e->src.text, len, &e->diag);
	for (int guard = 0; guard < 10000; guard++) {
		Token t;
		memset(&t, 0xa5, sizeof t);
		int code = lexer_next(&lx, &t);
		if (out->n) bprintf(out, " ");
		if (!code) {
			bprintf(out, "EOF@%u", t.off);
			if (t.len) bprintf(out, ":%u", t.len);
			break;
		}
		bprintf(out, "%s@%u:%u", tok_name(code), t.off, t.len);
		if (code == NUMBER) bprintf(out, "=%g%s", t.num, t.is_int ? "i" : "");
	}
	if (e->diag.errors) bprintf(out, " errors=%d", e->diag.errors);
}

static void lex_case_n(const char *name, const char *text, size_t len, const char *want, const char *msg)
{
	Buf b = {0};
	Env e;
	begin(name);
	lex_dump(text, len, &b, &e);
	expect_str("tokens", bstr(&b), want);
	if (msg && !strstr(env_msgs(&e), msg)) fail("diagnostics lack \"%s\"; got:\n%s", msg, env_msgs(&e));
	if (!msg && e.diag.errors) fail("unexpected diagnostics:\n%s", env_msgs(&e));
	env_free(&e);
	bfree(&b);
	end();
}
static void lex_case(const char *name, const char *text, const char *want)
{
	lex_case_n(name, text, strlen(text), want, NULL);
}

static void test_lexer(void)
{
	/* multi-character operators: longest match, '=!' is one token */
	lex_case("lex +=! is one token", "+=!", "SUMINIT@0:3 EOF@3");
	lex_case("lex += then !", "+= !", "PLUSEQ@0:2 NOT@3:1 EOF@4");
	lex_case("lex += ident", "+=x", "PLUSEQ@0:2 IDENT@2:1 EOF@3");
	lex_case("lex =! alone", "=!", "BANGEQ@0:2 EOF@2");
	lex_case("lex max=!", "y max=! x", "IDENT@0:1 IDENT@2:3 BANGEQ@5:2 IDENT@8:1 EOF@9");
	lex_case("lex max= ! is not a reduction", "max= !", "IDENT@0:3 ASSIGN@3:1 NOT@5:1 EOF@6");
	lex_case("lex kmin[4]=!", "kmin[4]=!", "IDENT@0:4 LBRACKET@4:1 NUMBER@5:1=4i RBRACKET@6:1 BANGEQ@7:2 EOF@9");
	lex_case("lex a=!b", "a=!b", "IDENT@0:1 BANGEQ@1:2 IDENT@3:1 EOF@4");
	lex_case("lex == beats =!", "a==!b", "IDENT@0:1 EQEQ@1:2 NOT@3:1 IDENT@4:1 EOF@5");
	lex_case("lex != <= >= < >", "!= <= >= < >", "NE@0:2 LE@3:2 GE@6:2 LT@9:1 GT@11:1 EOF@12");
	lex_case("lex && || !", "&&||!", "ANDAND@0:2 OROR@2:2 NOT@4:1 EOF@5");
	lex_case("lex -> and <-", "->,<-", "ARROW@0:2 COMMA@2:1 LARROW@3:2 EOF@5");
	lex_case("lex a<-1 is an arrow", "a<-1", "IDENT@0:1 LARROW@1:2 NUMBER@3:1=1i EOF@4");
	lex_case("lex a< -1", "a< -1", "IDENT@0:1 LT@1:1 MINUS@3:1 NUMBER@4:1=1i EOF@5");
	lex_case("lex a-->b", "a-->b", "IDENT@0:1 MINUS@1:1 ARROW@2:2 IDENT@4:1 EOF@5");
	lex_case("lex punctuation", "(){}[],:;+-*/%",
	         "LPAREN@0:1 RPAREN@1:1 LBRACE@2:1 RBRACE@3:1 LBRACKET@4:1 RBRACKET@5:1 COMMA@6:1 "
	         "COLON@7:1 SEMI@8:1 PLUS@9:1 MINUS@10:1 STAR@11:1 SLASH@12:1 PERCENT@13:1 EOF@14");

	/* numbers and '..' */
	lex_case("lex 0..5", "0..5", "NUMBER@0:1=0i DOTDOT@1:2 NUMBER@3:1=5i EOF@4");
	lex_case("lex 0 .. 5", "0 .. 5", "NUMBER@0:1=0i DOTDOT@2:2 NUMBER@5:1=5i EOF@6");
	lex_case("lex 1.5..2", "1.5..2", "NUMBER@0:3=1.5 DOTDOT@3:2 NUMBER@5:1=2i EOF@6");
	lex_case("lex 1e-5", "1e-5", "NUMBER@0:4=1e-05 EOF@4");
	lex_case("lex 2.5e3 1E6 1e+2", "2.5e3 1E6 1e+2", "NUMBER@0:5=2500 NUMBER@6:3=1e+06 NUMBER@10:4=100 EOF@14");
	lex_case("lex 1e is number then ident", "1e", "NUMBER@0:1=1i IDENT@1:1 EOF@2");
	lex_case("lex 1e- ", "1e-", "NUMBER@0:1=1i IDENT@1:1 MINUS@2:1 EOF@3");
	lex_case("lex 0.5", "0.5", "NUMBER@0:3=0.5 EOF@3");
	lex_case("lex 8192", "8192", "NUMBER@0:4=8192i EOF@4");
	lex_case("lex 007", "007", "NUMBER@0:3=7i EOF@3");
	lex_case("lex 12abc", "12abc", "NUMBER@0:2=12i IDENT@2:3 EOF@5");
	lex_case("lex r+1 in for bounds", "row_ptr(r+1)",
	         "IDENT@0:7 LPAREN@7:1 IDENT@8:1 PLUS@9:1 NUMBER@10:1=1i RPAREN@11:1 EOF@12");
	lex_case_n("lex .5 is an error", ".5", 2, "NUMBER@1:1=5i EOF@2 errors=1", "unexpected character '.'");
	lex_case_n("lex 1. is an error", "1. ", 3, "NUMBER@0:1=1i EOF@3 errors=1", "unexpected character '.'");

	/* keywords are whole words */
	lex_case("lex keywords", "fusion stage const temp for in where",
	         "FUSION@0:6 STAGE@7:5 CONST@13:5 TEMP@19:4 FOR@24:3 IN@28:2 WHERE@31:5 EOF@36");
	lex_case("lex keyword prefixes are identifiers", "fusions stages constant temps format int wherever",
	         "IDENT@0:7 IDENT@8:6 IDENT@15:8 IDENT@24:5 IDENT@30:6 IDENT@37:3 IDENT@41:8 EOF@49");
	lex_case("lex keyword suffixes are identifiers", "_fusion xin in2 For FUSION",
	         "IDENT@0:7 IDENT@8:3 IDENT@12:3 IDENT@16:3 IDENT@20:6 EOF@26");
	lex_case("lex types and built-ins are identifiers", "f32 bf16 max kmin select",
	         "IDENT@0:3 IDENT@4:4 IDENT@9:3 IDENT@13:4 IDENT@18:6 EOF@24");
	lex_case("lex identifier chars", "_a1_B2 a_", "IDENT@0:6 IDENT@7:2 EOF@9");

	/* comments and whitespace */
	lex_case("lex line comment", "# c1 ( ]\nx # c2", "IDENT@9:1 EOF@15");
	lex_case("lex block comment", "/* a\n * b */y", "IDENT@12:1 EOF@13");
	lex_case("lex block comment with stars", "/***/a/* ** / */b/**/c", "IDENT@5:1 IDENT@16:1 IDENT@21:1 EOF@22");
	lex_case("lex block comments do not nest", "/* /* */ x */", "IDENT@9:1 STAR@11:1 SLASH@12:1 EOF@13");
	lex_case("lex # inside block comment", "/* # */z", "IDENT@7:1 EOF@8");
	lex_case("lex /* inside line comment", "# /*\nw", "IDENT@5:1 EOF@6");
	lex_case("lex all whitespace kinds", " \t\r\n\f\va", "IDENT@6:1 EOF@7");
	lex_case("lex empty", "", "EOF@0");
	lex_case("lex division is not a comment", "a/b", "IDENT@0:1 SLASH@1:1 IDENT@2:1 EOF@3");

	/* lexical errors are reported and skipped */
	lex_case_n("lex unterminated comment", "x /* never", 10, "IDENT@0:1 EOF@10 errors=1", "t.fuse:1:3: error: unterminated comment");
	lex_case_n("lex unterminated comment ending in star", "/* *", 4, "EOF@4 errors=1", "unterminated comment");
	lex_case_n("lex unexpected character", "a $ b", 5, "IDENT@0:1 IDENT@4:1 EOF@5 errors=1", "t.fuse:1:3: error: unexpected character '$'");
	lex_case_n("lex unexpected byte", "a\x80" "b", 3, "IDENT@0:1 IDENT@2:1 EOF@3 errors=1", "unexpected byte 0x80");
	lex_case_n("lex NUL byte in the middle", "a\0b", 3, "IDENT@0:1 IDENT@2:1 EOF@3 errors=1", "t.fuse:1:2: error: NUL byte in source");
	lex_case_n("lex NUL in a line comment ends it", "# a\0b", 5, "IDENT@4:1 EOF@5 errors=1", "NUL byte");
	lex_case_n("lex single &", "a & b", 5, "IDENT@0:1 IDENT@4:1 EOF@5 errors=1", "unexpected character '&'");
	{
		/* a long run of bad bytes stops after a bounded number of reports */
		char junk[200];
		memset(junk, '$', sizeof junk);
		Buf b = {0};
		Env e;
		begin("lex error flood is bounded");
		lex_dump(junk, sizeof junk, &b, &e);
		if (e.diag.errors > 25 || e.diag.errors < 20) fail("errors = %d, want 21..25", e.diag.errors);
		if (!strstr(bstr(&b), "EOF@200")) fail("tokens: %s", bstr(&b));
		env_free(&e);
		bfree(&b);
		end();
	}
}

/* --- parser ----------------------------------------------------------- */

typedef struct {
	Env env;
	Ast ast;
	int root;
} Parsed;

static void parse_text(Parsed *p, const char *text)
{
	env_init(&p->env, text, strlen(text));
	ast_init(&p->ast, p->env.src.text);
	p->root = parse_source(&p->ast, &p->env.diag, &p->env.src);
}
static void parsed_free(Parsed *p)
{
	ast_free(&p->ast);
	env_free(&p->env);
}

static const Node *NN(const Parsed *p, int i) { return &p->ast.n[i]; }

static void name(const Parsed *p, int i, Buf *b)
{
	bprintf(b, "%.*s", (int)NN(p, i)->len, p->ast.text + NN(p, i)->off);
}

/* Expressions as S-expressions: (+ a (* b c)), f(x, y), 1.5 */
static void sexpr(const Parsed *p, int i, Buf *b)
{
	const Node *x = NN(p, i);
	if (!i) {
		bprintf(b, "<none>");
		return;
	}
	switch (x->kind) {
	case AST_NUM: bprintf(b, "%g", x->num); break;
	case AST_IDENT: name(p, i, b); break;
	case AST_REF:
		name(p, i, b);
		if (x->flag) {
			bprintf(b, "(");
			for (int a = x->a; a; a = NN(p, a)->next) {
				sexpr(p, a, b);
				if (NN(p, a)->next) bprintf(b, ", ");
			}
			bprintf(b, ")");
		}
		break;
	case AST_UNARY:
		bprintf(b, "(%s ", ast_expr_op_spelling[x->op]);
		sexpr(p, x->a, b);
		bprintf(b, ")");
		break;
	case AST_BINARY:
		bprintf(b, "(%s ", ast_expr_op_spelling[x->op]);
		sexpr(p, x->a, b);
		bprintf(b, " ");
		sexpr(p, x->b, b);
		bprintf(b, ")");
		break;
	default: bprintf(b, "<%s>", ast_kind_name(x->kind)); break;
	}
}

/* Statements: "y(i) +=! rhs [k=K] [for s lo hi] [where p]" and
 * "l[c] <- v where p". */
static void sstmt(const Parsed *p, int i, Buf *b)
{
	const Node *x = NN(p, i);
	if (x->kind == AST_APPEND) {
		name(p, i, b);
		bprintf(b, "[");
		name(p, x->a, b);
		bprintf(b, "] <- ");
		sexpr(p, x->b, b);
		bprintf(b, " where ");
		sexpr(p, x->d, b);
		return;
	}
	if (x->kind != AST_STMT) {
		bprintf(b, "<%s>", ast_kind_name(x->kind));
		return;
	}
	sexpr(p, x->a, b);
	bprintf(b, " %s ", ast_assign_op_spelling[x->op]);
	sexpr(p, x->b, b);
	if (x->e) bprintf(b, " k="), sexpr(p, x->e, b);
	if (x->c) {
		bprintf(b, " for ");
		name(p, x->c, b);
		bprintf(b, " ");
		sexpr(p, NN(p, x->c)->a, b);
		bprintf(b, " ");
		sexpr(p, NN(p, x->c)->b, b);
	}
	if (x->d) bprintf(b, " where "), sexpr(p, x->d, b);
}

/* The statements of the first stage of the first fusion, ' | '-separated. */
static void first_stage_stmts(const Parsed *p, Buf *b)
{
	int f = p->root;
	while (f && NN(p, f)->kind != AST_FUSION) f = NN(p, f)->next;
	if (!f) { bprintf(b, "<no fusion>"); return; }
	int st = NN(p, f)->c;
	while (st && NN(p, st)->kind != AST_STAGE) st = NN(p, st)->next;
	if (!st) { bprintf(b, "<no stage>"); return; }
	for (int s = NN(p, st)->b; s; s = NN(p, s)->next) {
		sstmt(p, s, b);
		if (NN(p, s)->next) bprintf(b, " | ");
	}
}

static void stmt_case(const char *nm, const char *stmts, const char *want)
{
	char text[2048];
	snprintf(text, sizeof text, "fusion f(x: f32[N]) -> (y: f32) { stage s { %s } }", stmts);
	Parsed p;
	Buf b = {0};
	begin(nm);
	parse_text(&p, text);
	expect_int("errors", p.env.diag.errors, 0);
	if (p.env.diag.errors) fail("%s", env_msgs(&p.env));
	first_stage_stmts(&p, &b);
	expect_str("statements", bstr(&b), want);
	parsed_free(&p);
	bfree(&b);
	end();
}

static void expr_case(const char *nm, const char *expr, const char *want)
{
	char text[1024];
	snprintf(text, sizeof text, "y = %s", expr);
	char full[1100];
	snprintf(full, sizeof full, "y = %s", want);
	stmt_case(nm, text, full);
}

/* Parses text and checks the number of errors and that every message in
 * msgs (NULL-terminated) appears, in order. */
static void error_case(const char *nm, const char *text, int nerrors, const char *const *msgs)
{
	Parsed p;
	begin(nm);
	parse_text(&p, text);
	expect_int("errors", p.env.diag.errors, nerrors);
	const char *out = env_msgs(&p.env);
	for (int i = 0; msgs && msgs[i]; i++) {
		const char *at = strstr(out, msgs[i]);
		if (!at) {
			fail("diagnostics lack \"%s\"; got:\n%s", msgs[i], out);
			break;
		}
		out = at + strlen(msgs[i]);
	}
	parsed_free(&p);
	end();
}

static void names_of(const Parsed *p, int list, Buf *b)
{
	for (int i = list; i; i = NN(p, i)->next) {
		name(p, i, b);
		if (NN(p, i)->next) bprintf(b, ",");
	}
}

static void test_parser(void)
{
	/* precedence and associativity */
	expr_case("parse a+b*c", "a+b*c", "(+ a (* b c))");
	expr_case("parse a*b+c", "a*b+c", "(+ (* a b) c)");
	expr_case("parse -a*b", "-a*b", "(* (- a) b)");
	expr_case("parse -a-b", "-a-b", "(- (- a) b)");
	expr_case("parse a-b-c left assoc", "a-b-c", "(- (- a b) c)");
	expr_case("parse a/b/c left assoc", "a/b/c", "(/ (/ a b) c)");
	expr_case("parse a%b*c same level", "a%b*c", "(* (% a b) c)");
	expr_case("parse a<b && c<d || e", "a<b && c<d || e", "(|| (&& (< a b) (< c d)) e)");
	expr_case("parse a || b && c", "a || b && c", "(|| a (&& b c))");
	expr_case("parse a == b < c", "a == b < c", "(== a (< b c))");
	expr_case("parse a == b != c", "a == b != c", "(!= (== a b) c)");
	expr_case("parse a < b < c", "a < b < c", "(< (< a b) c)");
	expr_case("parse a+b <= c*d", "a+b <= c*d", "(<= (+ a b) (* c d))");
	expr_case("parse !a == b", "!a == b", "(== (! a) b)");
	expr_case("parse !a && !b", "!a && !b", "(&& (! a) (! b))");
	expr_case("parse - - a", "- - a", "(- (- a))");
	expr_case("parse -(a+b)", "-(a+b)", "(- (+ a b))");
	expr_case("parse (a+b)*c", "(a+b)*c", "(* (+ a b) c)");
	expr_case("parse ((a))", "((a))", "a");
	expr_case("parse a >= b > c", "a >= b > c", "(> (>= a b) c)");
	expr_case("parse calls and accesses", "select(a < b, x(i, j+1), max(c, 2.5))",
	          "select((< a b), x(i, (+ j 1)), max(c, 2.5))");
	expr_case("parse nested gathers", "row_ptr(fired(f) + 1)", "row_ptr((+ fired(f) 1))");
	expr_case("parse numbers", "1e-5 + 8192 * 0.5", "(+ 1e-05 (* 8192 0.5))");
	{
		Parsed p;
		begin("parse operator nodes point at the operator");
		parse_text(&p, "fusion f() -> (y: f32) { stage s { y = a + b * c } }");
		int f = p.root, st = NN(&p, f)->c, s = NN(&p, st)->b, rhs = NN(&p, s)->b;
		expect_int("'+' kind", NN(&p, rhs)->kind, AST_BINARY);
		expect_int("'+' offset", NN(&p, rhs)->off, (long)(strstr(p.ast.text, "+ b") - p.ast.text));
		expect_int("'*' offset", NN(&p, NN(&p, rhs)->b)->off, (long)(strstr(p.ast.text, "* c") - p.ast.text));
		expect_int("'a' offset", NN(&p, NN(&p, rhs)->a)->off, (long)(strstr(p.ast.text, "a +") - p.ast.text));
		parsed_free(&p);
		end();
	}

	/* statement forms */
	stmt_case("parse =", "y(i) = x(i)", "y(i) = x(i)");
	stmt_case("parse scalar lhs", "y = 1", "y = 1");
	stmt_case("parse +=", "y(i) += x(i)", "y(i) += x(i)");
	stmt_case("parse +=!", "y +=! x(i)", "y +=! x(i)");
	stmt_case("parse max=!", "y(r) max=! X(r,c)", "y(r) max=! X(r, c)");
	stmt_case("parse min=!", "y(r) min=! X(r,c)", "y(r) min=! X(r, c)");
	stmt_case("parse kmin[K]=! where", "e(i) kmin[K]=! d(i,j) where i != j",
	          "e(i) kmin[k]=! d(i, j) k=K where (!= i j)");
	stmt_case("parse kmin with expression k", "e(i) kmin[2+1]=! d(i,j)", "e(i) kmin[k]=! d(i, j) k=(+ 2 1)");
	stmt_case("parse max =! with a space", "y max =! x(i)", "y max=! x(i)");
	stmt_case("parse += !p is accumulate of a negation", "y(i) += !p(i)", "y(i) += (! p(i))");
	stmt_case("parse for", "y(r) +=! v(s) for s in row_ptr(r + 0) .. row_ptr(r + 1)",
	          "y(r) +=! v(s) for s row_ptr((+ r 0)) row_ptr((+ r 1))");
	stmt_case("parse for and where", "I(col(s)) += w(s) for s in a(f) .. a(f+1) where w(s) > 0.0",
	          "I(col(s)) += w(s) for s a(f) a((+ f 1)) where (> w(s) 0)");
	stmt_case("parse compaction", "l[c] <- n where u(n) >= vth", "l[c] <- n where (>= u(n) vth)");
	stmt_case("parse several statements with and without ';'", "a(i) = 1; b(i) = 2 c(i) = 3;",
	          "a(i) = 1 | b(i) = 2 | c(i) = 3");
	stmt_case("parse count where", "n(i) +=! 1 where i != j && d(i,j) < e(i)",
	          "n(i) +=! 1 where (&& (!= i j) (< d(i, j) e(i)))");

	/* lists keep source order */
	{
		Parsed p;
		Buf b = {0};
		begin("parse parameter, dimension, attribute and item lists");
		parse_text(&p, "const A0 = 1\n"
		               "fusion g(A: f32[M,N,4], x: f32[N], alpha: f32) -> (y: f32[M], s: i32) {\n"
		               "  const K = 2; temp T: f32[M, 8]\n"
		               "  stage one [reduction, precision = f64, deterministic] { y(m) +=! A(m,n,k) }\n"
		               "  stage two { s = 1 }\n"
		               "}\n"
		               "const Z = -3\n");
		expect_int("errors", p.env.diag.errors, 0);
		int c = p.root, f = NN(&p, c)->next, z = NN(&p, f)->next;
		expect_int("top kinds", NN(&p, c)->kind * 100 + NN(&p, f)->kind * 10 + NN(&p, z)->kind,
		           AST_CONST * 100 + AST_FUSION * 10 + AST_CONST);
		expect_int("no fourth top item", NN(&p, z)->next, 0);
		expect_int("negative const value", (long)NN(&p, z)->num, -3);
		names_of(&p, NN(&p, f)->a, &b);
		expect_str("inputs", bstr(&b), "A,x,alpha");
		bfree(&b);
		names_of(&p, NN(&p, f)->b, &b);
		expect_str("outputs", bstr(&b), "y,s");
		bfree(&b);
		int A = NN(&p, f)->a;
		names_of(&p, NN(&p, A)->b, &b);
		expect_str("dims of A", bstr(&b), "M,N,4");
		bfree(&b);
		int d3 = NN(&p, NN(&p, NN(&p, A)->b)->next)->next;
		expect_int("literal dim flag", NN(&p, d3)->flag, 1);
		expect_int("literal dim value", (long)NN(&p, d3)->num, 4);
		int alpha = NN(&p, NN(&p, A)->next)->next;
		expect_int("scalar param has no dims", NN(&p, alpha)->b, 0);
		names_of(&p, NN(&p, f)->c, &b);
		expect_str("items", bstr(&b), "K,T,one,two");
		bfree(&b);
		int one = NN(&p, NN(&p, NN(&p, f)->c)->next)->next;
		names_of(&p, NN(&p, one)->a, &b);
		expect_str("attributes", bstr(&b), "reduction,precision,deterministic");
		bfree(&b);
		int prec = NN(&p, NN(&p, one)->a)->next;
		expect_int("precision has a value", NN(&p, prec)->a != 0, 1);
		if (NN(&p, prec)->a) {
			name(&p, NN(&p, prec)->a, &b);
			expect_str("precision value", bstr(&b), "f64");
			bfree(&b);
		}
		expect_int("reduction has no value", NN(&p, NN(&p, one)->a)->a, 0);
		expect_int("tail kept on list head", NN(&p, NN(&p, f)->a)->tail, alpha);
		parsed_free(&p);
		end();
	}
	{
		Parsed p;
		Buf b = {0};
		begin("parse empty lists");
		parse_text(&p, "fusion h() -> (y: f32) { stage s { } stage t [] { } }");
		/* '[]' is not an attribute list: expect exactly one error */
		expect_int("errors", p.env.diag.errors, 1);
		parsed_free(&p);
		parse_text(&p, "fusion h() -> (y: f32) { stage s { } }");
		expect_int("errors", p.env.diag.errors, 0);
		int f = p.root;
		expect_int("no inputs", NN(&p, f)->a, 0);
		int st = NN(&p, f)->c;
		expect_int("empty stage has no statements", NN(&p, st)->b, 0);
		expect_int("empty stage has no attributes", NN(&p, st)->a, 0);
		parsed_free(&p);
		parse_text(&p, "# only a comment\n");
		expect_int("comment-only file: root", p.root, 0);
		expect_int("comment-only file: errors", p.env.diag.errors, 0);
		parsed_free(&p);
		bfree(&b);
		end();
	}

	/* syntax errors and recovery */
	{
		static const char *const m1[] = {"t.fuse:1:62: error: syntax error: unexpected token '*'", NULL};
		error_case("recover: one bad statement", "fusion f(x: f32[N]) -> (y: f32[N]) { stage a { y(i) = x(i) + * 2 } }", 1, m1);
	}
	{
		static const char *const m[] = {"3:27: error: syntax error: unexpected token '*'",
		                                "5:25: error: syntax error: unexpected token ')'", NULL};
		error_case("recover: errors in two stages",
		           "fusion f(x: f32[N]) -> (y: f32[N]) {\n"
		           "  stage a { t(i) = x(i) }\n"
		           "  stage b { u(i) = t(i) + * 2.0 }\n"
		           "  stage c { y(i) = u(i) }\n"
		           "  stage d { y(i) = t(i) ) }\n"
		           "}\n",
		           2, m);
	}
	{
		static const char *const m[] = {"1:12: error: syntax error: unexpected token ')'",
		                                "2:12: error: syntax error: unexpected identifier 'y'", NULL};
		error_case("recover: errors in two fusions",
		           "fusion f(x ) -> (y: f32) { stage s { y = 1 } }\n"
		           "fusion g() y -> (y: f32) { stage s { y = 1 } }\n",
		           2, m);
	}
	{
		static const char *const m[] = {"unexpected end of input", NULL};
		error_case("error: end of input inside a stage", "fusion f() -> (y: f32) { stage s { y = 1", 1, m);
		error_case("error: end of input after '->'", "fusion f() ->", 1, m);
		error_case("error: end of input in an expression", "fusion f() -> (y: f32) { stage s { y = (1 + ", 1, m);
	}
	{
		static const char *const m[] = {"unexpected number '2'", NULL};
		error_case("error: two numbers in a row", "fusion f() -> (y: f32) { stage s { y = 1 2 } }", 1, m);
	}
	{
		static const char *const m[] = {"unexpected keyword 'stage'", NULL};
		error_case("error: keyword out of place", "stage s { }", 1, m);
	}
	{
		static const char *const m[] = {"unknown reduction 'foo=!'", NULL};
		error_case("error: unknown reduction", "fusion f() -> (y: f32) { stage s { y foo=! 1 } }", 1, m);
	}
	{
		static const char *const m[] = {"unknown reduction 'max[...]=!'", NULL};
		error_case("error: max with k", "fusion f() -> (y: f32) { stage s { y max[2]=! 1 } }", 1, m);
	}
	{
		static const char *const m[] = {"syntax error", NULL};
		error_case("error: compaction needs where", "fusion f() -> (l: i32[N], c: i32) { stage s { l[c] <- 1 } }", 1, m);
		error_case("error: empty argument list", "fusion f() -> (y: f32) { stage s { y = g() } }", 1, m);
		error_case("error: two for clauses",
		           "fusion f() -> (y: f32) { stage s { y +=! 1 for s in 0 .. 1 for t in 0 .. 1 } }", 1, m);
		error_case("error: temp without dims", "fusion f() -> (y: f32) { temp T: f32\n stage s { y = 1 } }", 1, m);
		error_case("error: dimension expression", "fusion f(x: f32[N+1]) -> (y: f32) { stage s { y = 1 } }", 1, m);
		error_case("error: const with an expression", "const K = 1 + 1", 1, m);
		error_case("error: const with a name", "const K = N", 1, m);
	}
	{
		/* the parser stack is bounded: deep nesting is an error, not a crash */
		size_t n = 5000;
		char *text = malloc(n * 2 + 100);
		strcpy(text, "fusion f() -> (y: f32) { stage s { y = ");
		size_t k = strlen(text);
		memset(text + k, '(', n);
		strcpy(text + k + n, "1");
		memset(text + k + n + 1, ')', n);
		strcpy(text + k + 2 * n + 1, " } }");
		Parsed p;
		begin("parse deep nesting stops cleanly");
		parse_text(&p, text);
		expect_int("errors", p.env.diag.errors, 1);
		expect_int("root after overflow", p.root, 0);
		if (!strstr(env_msgs(&p.env), "nesting too deep")) fail("message: %s", env_msgs(&p.env));
		parsed_free(&p);
		end();
		/* ... while moderate nesting parses */
		n = 100;
		memset(text + k, '(', n);
		strcpy(text + k + n, "1");
		memset(text + k + n + 1, ')', n);
		strcpy(text + k + 2 * n + 1, " } }");
		begin("parse 100 nested parentheses");
		parse_text(&p, text);
		expect_int("errors", p.env.diag.errors, 0);
		parsed_free(&p);
		end();
		free(text);
	}
	{
		/* a long flat chain does not grow the parser stack */
		size_t n = 20000;
		char *text = malloc(n * 2 + 100);
		strcpy(text, "fusion f() -> (y: f32) { stage s { y = a");
		size_t k = strlen(text);
		for (size_t i = 0; i < n; i++) text[k + 2 * i] = '+', text[k + 2 * i + 1] = 'a';
		strcpy(text + k + 2 * n, " } }");
		Parsed p;
		begin("parse 20000-term chain");
		parse_text(&p, text);
		expect_int("errors", p.env.diag.errors, 0);
		int depth = 0;
		int f = p.root, st = f ? NN(&p, f)->c : 0, s = st ? NN(&p, st)->b : 0;
		for (int e = s ? NN(&p, s)->b : 0; e && NN(&p, e)->kind == AST_BINARY; e = NN(&p, e)->a) depth++;
		expect_int("left-leaning depth", depth, (long)n);
		parsed_free(&p);
		end();
		free(text);
	}
}

/* --- diagnostics printer --------------------------------------------- */

static void test_diag(void)
{
	{
		Env e;
		begin("diag line and column");
		env_init(&e, "ab\ncd\n\nx", 8);
		int l, c;
		source_linecol(&e.src, 0, &l, &c);
		expect_int("off 0", l * 100 + c, 101);
		source_linecol(&e.src, 2, &l, &c);
		expect_int("off 2 (the newline)", l * 100 + c, 103);
		source_linecol(&e.src, 3, &l, &c);
		expect_int("off 3", l * 100 + c, 201);
		source_linecol(&e.src, 6, &l, &c);
		expect_int("off 6 (empty line)", l * 100 + c, 301);
		source_linecol(&e.src, 7, &l, &c);
		expect_int("off 7", l * 100 + c, 401);
		source_linecol(&e.src, 8, &l, &c);
		expect_int("off 8 (end of input)", l * 100 + c, 402);
		source_linecol(&e.src, 999, &l, &c);
		expect_int("past the end clamps", l * 100 + c, 402);
		env_free(&e);
		end();
	}
	{
		Env e;
		begin("diag caret under a tab-indented token");
		env_init(&e, "\tab\tcd\n", 7);
		diag_error(&e.diag, 4, "msg %d", 7);
		expect_str("output", env_msgs(&e), "t.fuse:1:5: error: msg 7\n \tab\tcd\n \t  \t^\n");
		expect_int("errors", e.diag.errors, 1);
		env_free(&e);
		end();
	}
	{
		Env e;
		begin("diag note and warning do not count as errors");
		env_init(&e, "x", 1);
		diag_warning(&e.diag, 0, "w");
		diag_note(&e.diag, 0, "n");
		expect_int("errors", e.diag.errors, 0);
		expect_int("warnings", e.diag.warnings, 1);
		expect_str("output", env_msgs(&e), "t.fuse:1:1: warning: w\n x\n ^\nt.fuse:1:1: note: n\n x\n ^\n");
		env_free(&e);
		end();
	}
	{
		Env e;
		begin("diag max_errors stops printing, not counting");
		env_init(&e, "x", 1);
		e.diag.max_errors = 2;
		for (int i = 0; i < 5; i++) diag_error(&e.diag, 0, "e%d", i);
		diag_note(&e.diag, 0, "hidden");
		expect_int("errors", e.diag.errors, 5);
		expect_str("output", env_msgs(&e), "t.fuse:1:1: error: e0\n x\n ^\nt.fuse:1:1: error: e1\n x\n ^\n");
		env_free(&e);
		end();
	}
	{
		Env e;
		char line[500];
		memset(line, 'a', sizeof line);
		line[300] = 'Z';
		begin("diag long line is windowed around the column");
		env_init(&e, line, sizeof line);
		diag_error(&e.diag, 300, "here");
		const char *out = env_msgs(&e);
		expect_int("starts with the location", strncmp(out, "t.fuse:1:301: error: here\n ...", 30), 0);
		const char *src = strchr(out, '\n') + 1, *caret = strchr(src, '\n') + 1;
		const char *z = strchr(src, 'Z'), *hat = strchr(caret, '^');
		if (!z || !hat) fail("no Z or caret in:\n%s", out);
		else expect_int("caret under Z", (long)(hat - caret), (long)(z - src));
		if (strchr(src, '\n') - src > 130 || !strstr(src, "a...\n")) fail("source line not windowed on both sides:\n%s", out);
		env_free(&e);
		end();
	}
	{
		Env e;
		begin("diag non-printing bytes are shown as '?'");
		env_init(&e, "a\x01\x7f\xff" "b", 5);
		diag_error(&e.diag, 4, "x");
		expect_str("output", env_msgs(&e), "t.fuse:1:5: error: x\n a???b\n     ^\n");
		env_free(&e);
		end();
	}
}

/* --- the whole front end on a string ---------------------------------- */

static void test_frontend(void)
{
	static const struct { const char *name, *text; int errors; } cases[] = {
		{"frontend: valid spec", "fusion f(x: f32[N]) -> (y: f32[N]) { stage s { y(i) = x(i) } }", 0},
		{"frontend: empty file", "", 1},
		{"frontend: syntax errors skip the checker",
		 "fusion f(x: f32[N]) -> (y: f32[N]) { stage s { y(i) = x(i) + } stage t { z(i) = q(i) } }", 1},
		/* fp8: e5m2 under e4m3's rules, and one of each in a contraction */
		{"frontend: e4m3 x e5m2 contraction",
		 "fusion f(A: f8e4m3[M,K], B: f8e5m2[N,K]) -> (C: f32[M,N]) { stage m [tensor_eligible] { C(m,n) +=! A(m,k) * B(n,k) } }", 0},
		{"frontend: batched e5m2 contraction",
		 "fusion f(A: f8e5m2[Q,M,K], B: f8e5m2[Q,N,K]) -> (C: f32[Q,M,N]) { stage m [tensor_eligible] { C(b,m,n) +=! A(b,m,k) * B(b,n,k) } }", 0},
		{"frontend: e5m2 read outside a contraction", "fusion f(A: f8e5m2[M,K]) -> (C: f32[M,K]) { stage s { C(m,k) = A(m,k) } }", 1},
		/* fp8 outputs: stored saturated by a pointwise statement, never read, never temps */
		{"frontend: e5m2 output", "fusion f(A: f32[M,K]) -> (C: f8e5m2[M,K]) { stage s { C(m,k) = A(m,k) } }", 0},
		{"frontend: e4m3 vector output", "fusion f(A: f32[N], s: f32) -> (C: f8e4m3[N]) { stage q { C(i) = A(i) / s } }", 0},
		{"frontend: an fp8 output read", "fusion f(A: f32[N]) -> (C: f8e4m3[N], D: f32[N]) { stage q { C(i) = A(i) } stage r { D(i) = C(i) } }", 1},
		{"frontend: an fp8 output reduced", "fusion f(A: f32[M,K]) -> (C: f8e4m3[M]) { stage r [reduction] { C(m) +=! A(m,k) } }", 1},
		{"frontend: an fp8 temp", "fusion f(A: f32[N]) -> (D: f32[N]) { temp t: f8e4m3[N] stage q { t(i) +=! A(i) } stage r { D(i) = A(i) } }", 1},
	};
	for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		FrontEnd fe = {0};
		char *msgs = NULL;
		size_t len = 0;
		FILE *out = open_memstream(&msgs, &len);
		begin(cases[i].name);
		fe.src.path = "t.fuse";
		fe.src.len = strlen(cases[i].text);
		fe.src.text = malloc(fe.src.len + 1);
		memcpy(fe.src.text, cases[i].text, fe.src.len + 1);
		int n = frontend_check(&fe, out, 50);
		fflush(out);
		expect_int("errors", n, cases[i].errors);
		if (n != cases[i].errors) fail("%s", msgs ? msgs : "");
		if (n == 0) expect_int("module has one fusion", fe.mod.nfusion, 1);
		frontend_free(&fe);
		fclose(out);
		free(msgs);
		end();
	}
}

/* the element types: f8e5m2 beside f8e4m3, one byte, fp8 (elem_is_fp8) */
static void test_elem_types(void)
{
	begin("elem: f8e5m2 is an element type");
	expect_int("lookup f8e5m2", elem_lookup("f8e5m2", 6), ET_F8E5M2);
	expect_int("lookup f8e4m3", elem_lookup("f8e4m3", 6), ET_F8E4M3);
	expect_int("lookup f8e5m3", elem_lookup("f8e5m3", 6), -1);
	expect_int("bytes", elem_info[ET_F8E5M2].bytes, 1);
	expect_str("name", elem_info[ET_F8E5M2].name, "f8e5m2");
	end();
	begin("elem: fp8 types");
	expect_int("e4m3", elem_is_fp8(ET_F8E4M3), 1);
	expect_int("e5m2", elem_is_fp8(ET_F8E5M2), 1);
	expect_int("f16", elem_is_fp8(ET_F16), 0);
	expect_int("i32", elem_is_fp8(ET_I32), 0);
	end();
}

int main(void)
{
	test_lexer();
	test_parser();
	test_diag();
	test_frontend();
	test_elem_types();
	printf("unit: %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
