/* The checks of `pipeline` declarations: the fusion exists, the step count
 * has a name of its own, and every carried pair is an input fed by an
 * output of the same element type and shape (the buffers trade places
 * between steps, so they must be interchangeable). Runs after every fusion
 * of the file is checked; a pipeline over a fusion with errors is skipped
 * (its errors are already reported). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/fuserun.h" /* FZ_MAX_NAME */
#include "core/die.h"
#include "front/sema.h"

#define MAX_PIPELINES 16

static const Node *NODE(const Ast *t, int i) { return &t->n[i]; }
#define PNAME(t, i) (int)NODE(t, i)->len, (t)->text + NODE(t, i)->off

static char *dup_node(const Ast *t, int i)
{
	char *s = xcalloc(NODE(t, i)->len + 1, 1);
	memcpy(s, t->text + NODE(t, i)->off, NODE(t, i)->len);
	return s;
}

/* "f32[N, M]" */
static char *shape_of(const Module *m, const Fusion *f, const Tensor *x)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *o = xmemstream(&buf, &len);
	fputs(elem_info[x->type].name, o);
	if (x->rank) dim_write_list(m, f, x->dim, x->rank, ", ", o);
	fclose(o);
	return buf;
}

static int param_find(const Ast *t, const Module *m, const Fusion *f, int node)
{
	for (int i = f->first_tensor; i < f->first_tensor + f->ntensor; i++)
		if (m->tensor[i].kind != TK_TEMP && ast_name_eq(t, node, m->tensor[i].name)) return i;
	return -1;
}

static void check_carry(const Ast *t, Diag *d, const Module *m, const Fusion *f, Pipeline *p, int c)
{
	const int in = param_find(t, m, f, c), out = param_find(t, m, f, NODE(t, c)->a);
	const int on = NODE(t, c)->a;
	int bad = 0;
	if (in >= 0 && m->tensor[in].inplace) {
		diag_error(d, NODE(t, c)->off, "'%s' is updated in place; it carries itself from step to step without '<-'", m->tensor[in].name);
		return;
	}
	if (in < 0 || m->tensor[in].kind != TK_INPUT) {
		diag_error(d, NODE(t, c)->off, "'%.*s' is not an input of fusion '%s'; a carried value feeds an input", PNAME(t, c), f->name);
		bad = 1;
	}
	if (out < 0 || m->tensor[out].kind != TK_OUTPUT) {
		diag_error(d, NODE(t, on)->off, "'%.*s' is not an output of fusion '%s'; an input is fed by an output", PNAME(t, on), f->name);
		bad = 1;
	}
	if (bad) return;
	const Tensor *ti = &m->tensor[in], *to = &m->tensor[out];
	if (to->inplace) {
		diag_error(d, NODE(t, on)->off, "'%s' is updated in place; it carries itself from step to step without '<-'", to->name);
		return;
	}
	if (!ti->rank || !to->rank) {
		diag_error(d, NODE(t, !ti->rank ? c : on)->off, "'%s' is a scalar; only tensors can be carried (a scalar input is passed by value at launch)",
		           !ti->rank ? ti->name : to->name);
		return;
	}
	if (to->list_count >= 0) {
		diag_error(d, NODE(t, on)->off, "'%s' is a compacted list; its length changes from step to step, so it cannot be carried", to->name);
		return;
	}
	int same = ti->type == to->type && ti->rank == to->rank;
	for (int k = 0; same && k < ti->rank; k++) same = dim_same(ti->dim[k], to->dim[k]);
	if (!same) {
		char *a = shape_of(m, f, ti), *b = shape_of(m, f, to);
		diag_error(d, NODE(t, c)->off, "'%s' (%s) cannot be fed by '%s' (%s): a carried output must have its input's type and shape",
		           ti->name, a, to->name, b);
		free(a), free(b);
		return;
	}
	for (int k = 0; k < p->ncarry; k++) {
		if (p->carry_in[k] == in) {
			diag_error(d, NODE(t, c)->off, "'%s' is fed twice", ti->name);
			return;
		}
		if (p->carry_out[k] == out) {
			diag_error(d, NODE(t, on)->off, "'%s' already feeds '%s'; an output feeds one input", to->name, m->tensor[p->carry_in[k]].name);
			return;
		}
	}
	if (p->ncarry == MAX_CARRY) {
		diag_error(d, NODE(t, c)->off, "more than %d carried values in one pipeline", MAX_CARRY);
		return;
	}
	p->carry_in[p->ncarry] = in, p->carry_out[p->ncarry] = out, p->ncarry++;
}

/* Names a pipeline's kernel (an extern "C" __global__ function of the .cu)
 * and its header's fz_NAME_* cannot take: C and C++ keywords, the CUDA
 * built-ins and types NVRTC declares, and the functions the generated code
 * calls. */
static const char *const c_keywords[] = {
	"auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum", "extern",
	"float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return", "short", "signed",
	"sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void", "volatile", "while",
	"alignas", "alignof", "bool", "constexpr", "false", "nullptr", "static_assert", "thread_local", "true",
	"typeof", "typeof_unqual", "asm", "catch", "char8_t", "char16_t", "char32_t", "class", "concept",
	"consteval", "constinit", "const_cast", "co_await", "co_return", "co_yield", "decltype", "delete",
	"dynamic_cast", "explicit", "export", "friend", "mutable", "namespace", "new", "noexcept", "operator",
	"private", "protected", "public", "reinterpret_cast", "requires", "static_cast", "template", "this",
	"throw", "try", "typeid", "typename", "using", "virtual", "wchar_t", "and", "and_eq", "bitand", "bitor",
	"compl", "not", "not_eq", "or", "or_eq", "xor", "xor_eq", "final", "override", NULL,
};
static const char *const cuda_builtins[] = {
	"main", "threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize", "dim3", "uint3", "float4", "ushort4",
	"make_uint3", "atomicAdd", "atomicSub", "atomicExch", "atomicCAS", "atomicMin", "atomicMax", "atomicInc",
	"atomicDec", "atomicAnd", "atomicOr", "atomicXor", "printf", "assert", "malloc", "free", "memcpy", "memset",
	"clock", "clock64", "min", "max", "abs", "labs", "llabs", "half", "nv_bfloat16", NULL,
};
static const char *const math_functions[] = {
	"rsqrt", "rsqrtf", "fabs", "fabsf", "fmax", "fmaxf", "fmin", "fminf", "fma", "fmaf", "tanh", "tanhf", NULL,
};

static int in_list(const char *const *list, const char *s)
{
	for (; *list; list++)
		if (!strcmp(*list, s)) return 1;
	return 0;
}

/* A math function of the built-ins' table, in either precision. */
static int builtin_function(const char *s)
{
	static const char *const names[] = {
#define X(o, n, d, f) d, f,
		IR_BUILTINS(X)
#undef X
	};
	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		if (names[i] && !strcmp(names[i], s)) return 1;
	return in_list(math_functions, s);
}

/* s is PREFIX followed by LETTER and one or more digits (then the end, or _...) */
static int numbered(const char *s, const char *prefix, const char *letters)
{
	const size_t n = strlen(prefix);
	if (strncmp(s, prefix, n) || s[n] != '_' || !s[n + 1] || !strchr(letters, s[n + 1])) return 0;
	const char *q = s + n + 2;
	if (*q < '0' || *q > '9') return 0;
	while (*q >= '0' && *q <= '9') q++;
	return *q == 0 || *q == '_';
}

/* The pipeline's name becomes the kernel NAME, its phases NAME_k0 ... and
 * the header's fz_NAME_* and FZ_NAME_*: refuses a name that one of them
 * would clash with. Returns 1 after an error. */
static int check_name(const Ast *t, int node, Diag *d, const Module *m)
{
	const size_t off = NODE(t, node)->off;
	char *s = dup_node(t, node);
	int bad = 1;
	if (in_list(c_keywords, s))
		diag_error(d, off, "'%s' cannot name a pipeline: it is a C or C++ keyword, and the pipeline's kernel is named after it", s);
	else if (in_list(cuda_builtins, s))
		diag_error(d, off, "'%s' cannot name a pipeline: it is a CUDA built-in, and the pipeline's kernel is named after it", s);
	else if (builtin_function(s))
		diag_error(d, off, "'%s' cannot name a pipeline: it is a math function the generated code calls", s);
	else if (!strncmp(s, "fz_", 3) || !strncmp(s, "FZ_", 3))
		diag_error(d, off, "'%s' cannot name a pipeline: names starting with fz_ or FZ_ are fusec's own", s);
	else if (s[0] == '_' && (s[1] == '_' || (s[1] >= 'A' && s[1] <= 'Z')))
		diag_error(d, off, "'%s' cannot name a pipeline: names starting with __ or _ and a capital letter are reserved to C and C++", s);
	else
		bad = 0;
	for (int i = 0; !bad && i < m->nfusion; i++) {
		const char *f = m->fusion[i].name;
		const size_t fl = strlen(f);
		if (numbered(s, f, "fu"))
			diag_error(d, off, "'%s' cannot name a pipeline: fusion '%s' names its kernels %s_f0, %s_f1, ... and %s_u0, ...", s, f, f, f, f), bad = 1;
		else if (!strncmp(s, f, fl) && (!strcmp(s + fl, "_fused") || !strcmp(s + fl, "_unfused")))
			diag_error(d, off, "'%s' cannot name a pipeline: fusion '%s' names its variants' functions fz_%s_fused_* and fz_%s_unfused_*", s, f, f, f), bad = 1;
	}
	for (int i = 0; !bad && i < m->npipeline; i++) {
		const char *q = m->pipeline[i].name;
		if (numbered(s, q, "k"))
			diag_error(d, off, "'%s' cannot name a pipeline: pipeline '%s' names its phases %s_k0, %s_k1, ...", s, q, q, q), bad = 1;
		else if (numbered(q, s, "k"))
			diag_error(d, off, "'%s' cannot name a pipeline: its phases %s_k0, %s_k1, ... would clash with pipeline '%s'", s, s, s, q), bad = 1;
	}
	free(s);
	return bad;
}

static void check_pipeline(const Ast *t, int node, Diag *d, Module *m, int fusion_errors)
{
	const Node *n = NODE(t, node);
	for (int i = 0; i < m->nfusion; i++)
		if (ast_name_eq(t, node, m->fusion[i].name)) {
			diag_error(d, n->off, "'%.*s' is already the name of a fusion", PNAME(t, node));
			return;
		}
	for (int i = 0; i < m->npipeline; i++)
		if (ast_name_eq(t, node, m->pipeline[i].name)) {
			diag_error(d, n->off, "redefinition of pipeline '%.*s'", PNAME(t, node));
			return;
		}
	/* its kernels are NAME_k0 .. NAME_k15, within the runtime's 63 */
	if (n->len > FZ_MAX_NAME - 5) {
		diag_error(d, n->off, "the name of pipeline '%.24s...' is %u characters long: at most %d, so that its kernels' names "
		           "(NAME_k0 ...) are within the runtime's %d", t->text + n->off, n->len, FZ_MAX_NAME - 5, FZ_MAX_NAME);
		return;
	}
	if (check_name(t, node, d, m)) return;
	int fi = -1;
	for (int i = 0; i < m->nfusion; i++)
		if (ast_name_eq(t, n->a, m->fusion[i].name)) fi = i;
	if (fi < 0) {
		/* a fusion that failed its checks is not in the Module: say nothing more */
		if (!fusion_errors) diag_error(d, NODE(t, n->a)->off, "unknown fusion '%.*s'", PNAME(t, n->a));
		return;
	}
	const Fusion *f = &m->fusion[fi];
	if (f->failed) return; /* its sizes and parameters may be missing: its own errors say it */
	if (n->c) {
		for (int i = 0; i < f->nsym; i++)
			if (ast_name_eq(t, n->c, f->sym[i])) {
				diag_error(d, NODE(t, n->c)->off, "'%.*s' is a size of fusion '%s'; the step count needs a name of its own",
				           PNAME(t, n->c), f->name);
				return;
			}
		if (param_find(t, m, f, n->c) >= 0) {
			diag_error(d, NODE(t, n->c)->off, "'%.*s' is a parameter of fusion '%s'; the step count needs a name of its own",
			           PNAME(t, n->c), f->name);
			return;
		}
	}
	if (m->npipeline == MAX_PIPELINES) {
		diag_error(d, n->off, "more than %d pipelines in one file", MAX_PIPELINES);
		return;
	}
	Pipeline p = {.fusion = fi, .repeat = n->c != 0, .off = n->off};
	const int before = d->errors;
	for (int c = n->b; c; c = NODE(t, c)->next) check_carry(t, d, m, f, &p, c);
	if (d->errors != before) return;
	p.name = dup_node(t, node);
	p.steps = n->c ? dup_node(t, n->c) : NULL;
	m->pipeline = xrealloc(m->pipeline, (unsigned long)m->npipeline + 1, sizeof *m->pipeline);
	m->pipeline[m->npipeline++] = p;
}

void sema_pipelines(const Ast *ast, int root, Diag *d, Module *m)
{
	const int fusion_errors = d->errors;
	for (int it = root; it; it = ast->n[it].next)
		if (ast->n[it].kind == AST_PIPELINE) check_pipeline(ast, it, d, m, fusion_errors);
}
