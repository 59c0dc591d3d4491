#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) { /* nvc SRC ARCH OUT */
	FILE *f = fopen(argv[1], "rb"); fseek(f, 0, SEEK_END); long n = ftell(f); rewind(f);
	char *s = malloc(n + 1); fread(s, 1, n, f); s[n] = 0; fclose(f);
	nvrtcProgram p; nvrtcCreateProgram(&p, s, argv[1], 0, NULL, NULL);
	char a[64]; snprintf(a, sizeof a, "--gpu-architecture=compute_%s", argv[2] + 3);
	const char *o[] = {a, "--std=c++17"};
	nvrtcResult r = nvrtcCompileProgram(p, 2, o);
	size_t ln; nvrtcGetProgramLogSize(p, &ln); char *log = malloc(ln); nvrtcGetProgramLog(p, log); if (ln > 1) fputs(log, stderr);
	if (r) return 1;
	size_t pn; nvrtcGetPTXSize(p, &pn); char *ptx = malloc(pn); nvrtcGetPTX(p, ptx);
	f = fopen(argv[3], "wb"); fwrite(ptx, 1, pn - 1, f); fclose(f); return 0;
}
