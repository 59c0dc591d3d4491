/* libFuzzer target: any bytes through lexer, parser and checker. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "front/frontend.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *sink;
	if (!sink) sink = fopen("/dev/null", "w");
	FrontEnd fe = {0};
	fe.src.path = "fuzz.fuse";
	fe.src.text = malloc(size + 1);
	if (!fe.src.text) return 0;
	memcpy(fe.src.text, data, size);
	fe.src.text[size] = 0;
	fe.src.len = size;
	frontend_check(&fe, sink, 50);
	if (fe.diag.errors == 0) {
		ir_print(&fe.mod, sink);
		ast_print(&fe.ast, fe.root, sink);
	}
	frontend_free(&fe);
	return 0;
}
