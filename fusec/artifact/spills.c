/* Register spills, said as warnings: each target's PTX assembled by the
 * toolkit's ptxas (-v) before the artifact is written, and every kernel
 * that stores registers to local memory named. Only a warning: the PTX is
 * what it is, and the driver assembles it again at load; but a spilling
 * kernel is slower than it should be, and users' specs are not checked by
 * make check's ptxas test as the shipped ones are. The warning is GCC's
 * style, the spec as it was named first:
 *   SPEC: warning: kernel K spills N bytes of registers on sm_XX (ptxas -v: N bytes spill stores, M bytes spill loads)
 * ptxas is $CUDA_HOME/bin/ptxas, else /usr/local/cuda/bin/ptxas, else the
 * first on PATH; without one nothing is said. (The toolkit's PTX compiler
 * library would say the same in-process, but it ships as a static archive
 * only, and not in every toolkit install: this machine's has none.) */
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "artifact/artifact_impl.h"

extern char **environ;

static const char *find_ptxas(char *buf, size_t cap)
{
	const char *home = getenv("CUDA_HOME");
	if (home && *home) {
		snprintf(buf, cap, "%s/bin/ptxas", home);
		if (access(buf, X_OK) == 0) return buf;
	}
	snprintf(buf, cap, "/usr/local/cuda/bin/ptxas");
	if (access(buf, X_OK) == 0) return buf;
	const char *path = getenv("PATH");
	while (path && *path) {
		const size_t n = strcspn(path, ":");
		if (n > 0 && n + sizeof "/ptxas" <= cap) {
			snprintf(buf, cap, "%.*s/ptxas", (int)n, path);
			if (buf[0] == '/' && access(buf, X_OK) == 0) return buf;
		}
		path += n + (path[n] == ':');
	}
	return NULL;
}

/* ptxas -arch=ARCH -v PTXFILE -o /dev/null, its output into LOG; -1 if it
   did not run, else its wait status */
static int run_ptxas(const char *ptxas, const char *arch, const char *ptx, const char *log)
{
	char archopt[32];
	snprintf(archopt, sizeof archopt, "-arch=%s", arch);
	char *argv[] = {(char *)ptxas, archopt, "-v", (char *)ptx, "-o", "/dev/null", NULL};
	posix_spawn_file_actions_t fa;
	if (posix_spawn_file_actions_init(&fa)) return -1;
	posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	posix_spawn_file_actions_adddup2(&fa, 1, 2);
	pid_t pid;
	int rc = posix_spawn(&pid, ptxas, &fa, NULL, argv, environ), st = 0;
	posix_spawn_file_actions_destroy(&fa);
	if (rc) return -1;
	while (waitpid(pid, &st, 0) < 0)
		;
	return st;
}

/* What ptxas said of each kernel, kept for --explain (artifact_registers):
   fusec is one process per run, and a run compiles a few dozen kernels. */
typedef struct KernelRegs {
	char kernel[128], arch[16];
	int regs, spill;
} KernelRegs;
static KernelRegs *counted;
static int ncounted, capcounted;

static KernelRegs *count_for(const char *kernel, const char *arch)
{
	for (int i = 0; i < ncounted; i++)
		if (!strcmp(counted[i].kernel, kernel) && !strcmp(counted[i].arch, arch)) return &counted[i];
	if (ncounted == capcounted) {
		const int cap = capcounted ? 2 * capcounted : 64;
		KernelRegs *n = realloc(counted, (size_t)cap * sizeof *n);
		if (!n) return NULL; /* only --explain's numbers go */
		counted = n, capcounted = cap;
	}
	KernelRegs *r = &counted[ncounted++];
	snprintf(r->kernel, sizeof r->kernel, "%s", kernel), snprintf(r->arch, sizeof r->arch, "%s", arch);
	r->regs = r->spill = -1;
	return r;
}

int artifact_registers(const char *kernel, const char *arch, int *spill)
{
	for (int i = 0; i < ncounted; i++)
		if (!strcmp(counted[i].kernel, kernel) && !strcmp(counted[i].arch, arch)) {
			if (spill) *spill = counted[i].spill;
			return counted[i].regs;
		}
	if (spill) *spill = -1;
	return -1;
}

/* The kernel a function of its own belongs to: a row path that is not
   inlined (static __device__ __noinline__ fz_TAG_KERNEL, kern_row.c) is
   reported by its mangled name, _ZN..<len>fz_TAG_KERNELE..; its spills are
   its kernel's, said with the path's tag. 0 when name is no such path. */
static int path_kernel(const char *name, char *kernel, size_t cap, char *tag, size_t tcap)
{
	if (strncmp(name, "_ZN", 3)) return 0;
	const char *p = name + 3, *last = NULL;
	size_t lastn = 0;
	while (*p >= '0' && *p <= '9') { /* the nested name's <len><identifier>s, up to E */
		char *end;
		const unsigned long n = strtoul(p, &end, 10);
		if (n == 0 || strlen(end) < n) return 0;
		last = end, lastn = n, p = end + n;
	}
	if (*p != 'E' || !last || lastn < 4 || strncmp(last, "fz_", 3)) return 0;
	const char *us = memchr(last + 3, '_', lastn - 3);
	if (!us || (size_t)(us - last) + 1 >= lastn) return 0;
	snprintf(tag, tcap, "%.*s", (int)lastn, last); /* the function's own name, as in NAME.cu */
	snprintf(kernel, cap, "%.*s", (int)(lastn - (size_t)(us + 1 - last)), us + 1);
	return 1;
}

/* "Function properties for K" then "N bytes stack frame, S bytes spill
   stores, L bytes spill loads" and "Used R registers" */
static void report(FILE *log, const char *spec, const char *arch)
{
	char line[1024], kernel[256] = "";
	while (fgets(line, sizeof line, log)) {
		const char *u = strstr(line, "Used ");
		int regs;
		KernelRegs *r;
		if (*kernel && u && sscanf(u, "Used %d registers", &regs) == 1 && (r = count_for(kernel, arch))) r->regs = regs;
		const char *p = strstr(line, "Function properties for ");
		if (p) {
			snprintf(kernel, sizeof kernel, "%s", p + 24);
			kernel[strcspn(kernel, "\r\n")] = 0;
			continue;
		}
		long frame, stores, loads;
		const int props = sscanf(line, " %ld bytes stack frame, %ld bytes spill stores, %ld bytes spill loads", &frame, &stores,
		                         &loads) == 3;
		if (!props || !*kernel) continue;
		char owner[256], tag[256];
		const int path = path_kernel(kernel, owner, sizeof owner, tag, sizeof tag);
		const int spill = (int)(stores > loads ? stores : loads);
		if ((r = count_for(path ? owner : kernel, arch)) && spill > r->spill) r->spill = spill; /* a kernel spills what its worst part does */
		if (!stores && !loads) continue;
		if (path)
			fprintf(stderr, "%s: warning: kernel %s spills %ld bytes of registers on %s in its row path %s, a function of its own (ptxas -v: %ld bytes "
			        "spill stores, %ld bytes spill loads)\n", spec, owner, stores ? stores : loads, arch, tag, stores, loads);
		else
			fprintf(stderr, "%s: warning: kernel %s spills %ld bytes of registers on %s (ptxas -v: %ld bytes spill stores, "
			        "%ld bytes spill loads)\n", spec, kernel, stores ? stores : loads, arch, stores, loads);
	}
}

/* ptxas's own lines with "error" in them, on stderr, after the caller's
   first line (a PTX that ptxas refuses is an artifact no GPU loads) */
static void refusal(FILE *log)
{
	char line[1024];
	int n = 0;
	while (fgets(line, sizeof line, log) && n < 8)
		if (strstr(line, "error")) fputs(line, stderr), n++;
	if (!n) fputs("(ptxas said no error line)\n", stderr);
}

int artifact_warn_spills(const char *spec_path, const char *arch, const char *ptx, size_t n, const char *fusion)
{
	char ptxas[4096];
	if (!find_ptxas(ptxas, sizeof ptxas)) return 0;
	char dir[] = "/tmp/fusec-ptxas.XXXXXX";
	if (!mkdtemp(dir)) return 0;
	char src[64], log[64];
	snprintf(src, sizeof src, "%s/k.ptx", dir), snprintf(log, sizeof log, "%s/log", dir);
	FILE *f = fopen(src, "wb");
	int ok = f && fwrite(ptx, 1, n, f) == n, refused = 0;
	if (f && fclose(f)) ok = 0;
	const int st = ok ? run_ptxas(ptxas, arch, src, log) : -1;
	FILE *l = st != -1 ? fopen(log, "r") : NULL;
	if (l && WIFEXITED(st) && WEXITSTATUS(st) == 0) {
		report(l, spec_path, arch);
	} else if (l && WIFEXITED(st)) { /* it ran and refused: not a tool's failure to start (127) */
		refused = WEXITSTATUS(st) != 127 && WEXITSTATUS(st) != 126;
		if (refused) {
			fprintf(stderr, "fusec: internal error: ptxas refused the PTX generated for %s (%s):\n", fusion, arch);
			refusal(l);
		}
	}
	if (l) fclose(l);
	unlink(src), unlink(log), rmdir(dir);
	return refused ? -1 : 0;
}
