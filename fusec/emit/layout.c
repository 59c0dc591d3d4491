/* The layout fingerprint: a fusion's sizes and tensors (names, roles,
 * types, dimensions) hashed, so that the runtime can tell that a header's
 * structs and a manifest describe the same arguments. */
#include <stdlib.h>

#include "core/die.h"
#include "emit/emit.h"
#include "runtime/sha256.h" /* one SHA-256 for fusec and the runtime */

void emit_tensor_words(const Module *m, const Fusion *f, const Tensor *t, FILE *out)
{
	static const char *const kind[] = {"input", "output", "temp"};
	fprintf(out, "%s %s %s %s", t->kind == TK_TEMP ? "temp" : "param", t->name, t->inplace ? "inout" : kind[t->kind],
	        elem_info[t->type].name);
	fputc(' ', out), emit_tensor_shape(m, f, t, out);
}

void emit_tensor_shape(const Module *m, const Fusion *f, const Tensor *t, FILE *out)
{
	if (!t->rank) fputc('-', out);
	for (int d = 0; d < t->rank; d++) fputs(d ? "," : "", out), dim_write(m, f, t->dim[d], out);
}

void emit_layout(const Module *m, int fusion, char hex[65])
{
	const Fusion *f = &m->fusion[fusion];
	char *p = NULL;
	size_t n = 0;
	FILE *b = xmemstream(&p, &n);
	fprintf(b, "fusion %s\n", f->name);
	for (int i = 0; i < f->nsym; i++) fprintf(b, "size %s\n", f->sym[i]);
	for (int i = f->first_tensor; i < f->first_tensor + f->ntensor; i++) emit_tensor_words(m, f, &m->tensor[i], b), fputc('\n', b);
	fclose(b);
	fr_sha256_hex(p, n, hex);
	free(p);
}
