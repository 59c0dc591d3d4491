/* The host side of any artifact, with no rebuild of fuserun: the
 * artifact's generated header (args, scratch layout, op lists) and its
 * float64 reference NAME_ref.c, compiled by the system C compiler into a
 * temporary shared object and loaded with dlopen.
 *
 * What is compiled is exactly what the manifest hashed: both files are read
 * once, re-hashed against the verified manifest and copied into a private
 * temporary folder (mkdtemp) before the compiler sees them, so a file
 * swapped after verification is not what runs. The compiler is run without
 * a shell ($FUSERUN_CC, else $CC, else cc; one word). After loading, the
 * object's layout fingerprint, args size and reference args size must be
 * the manifest's, and so must each param's and size's place and C type in
 * both structs (a table the wrapper computes from the manifest's names,
 * speccheck.c) and each param's and temp's shape in the reference's own
 * table (fz_NAME_ref_shapes, in NAME_ref.c). Running the reference executes the artifact's C code on
 * the host: validate only artifacts you would build (README, security). */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "registry.h"
#include "sha256.h"

extern char **environ;

/* a verified listed file, read again and checked against its hash */
static char *read_listed(const fz_artifact_info *info, const char *name, size_t *len, char *err)
{
	const char *want = NULL;
	for (int i = 0; i < info->nfiles; i++)
		if (!strcmp(info->files[i].name, name)) want = info->files[i].sha256;
	if (!want) return snprintf(err, FZ_ERRMSG_SIZE, "%s: the manifest lists no %s", info->manifest, name), NULL;
	char path[4096];
	const char *slash = strrchr(info->manifest, '/');
	snprintf(path, sizeof path, "%.*s%s", slash ? (int)(slash - info->manifest + 1) : 0, info->manifest, name);
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	char *buf = NULL;
	size_t n = 0;
	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size < FZ_MAX_FILE_BYTES &&
	    (buf = malloc((size_t)st.st_size + 1))) {
		ssize_t got;
		while (n < (size_t)st.st_size && (got = read(fd, buf + n, (size_t)st.st_size - n)) > 0) n += (size_t)got;
	}
	if (fd >= 0) close(fd);
	char hex[65];
	if (buf) fr_sha256_hex(buf, n, hex);
	if (!buf || strcmp(hex, want)) {
		free(buf);
		snprintf(err, FZ_ERRMSG_SIZE, "%.900s: cannot be read, or changed since the artifact was verified", path);
		return NULL;
	}
	buf[n] = 0, *len = n;
	return buf;
}

static int write_all(const char *path, const char *data, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) return -1;
	size_t done = 0;
	while (done < n) {
		ssize_t w = write(fd, data + done, n - done);
		if (w <= 0) break;
		done += (size_t)w;
	}
	return close(fd) == 0 && done == n ? 0 : -1;
}

/* the compiler: one word, no shell */
static const char *compiler(void)
{
	const char *cc = getenv("FUSERUN_CC");
	if (!cc || !*cc) cc = getenv("CC");
	if (!cc || !*cc || strchr(cc, ' ')) cc = "cc";
	return cc;
}

/* runs argv[0] with its output into log; 0, or -1 with err said */
static int run(char *const argv[], const char *log, char *err)
{
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	posix_spawn_file_actions_adddup2(&fa, 1, 2);
	pid_t pid;
	int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc) {
		snprintf(err, FZ_ERRMSG_SIZE,
		         "no C compiler: cannot run '%s' (%s); fuserun validate and bench compile the artifact's float64 reference "
		         "and header: install cc or set FUSERUN_CC", argv[0], strerror(rc));
		return -1;
	}
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) return snprintf(err, FZ_ERRMSG_SIZE, "waitpid: %s", strerror(errno)), -1;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return 0;
	char msg[600] = "";
	FILE *f = fopen(log, "r");
	if (f) {
		size_t n = fread(msg, 1, sizeof msg - 1, f);
		msg[n] = 0;
		fclose(f);
	}
	snprintf(err, FZ_ERRMSG_SIZE, "%s failed to compile the artifact's reference and header:\n%s", argv[0], msg);
	return -1;
}

static const char wrapper[] =
	"#include \"%1$s.h\"\n"
	"int fr_ref(const void *a) { return fz_%1$s_reference((const fz_%1$s_ref_args *)a); }\n"
	"unsigned long long fr_fs(void *a, unsigned long long b, int sm) { return fz_%1$s_fused_scratch((fz_%1$s_args *)a, b, sm); }\n"
	"unsigned long long fr_us(void *a, unsigned long long b, int sm) { return fz_%1$s_unfused_scratch((fz_%1$s_args *)a, b, sm); }\n"
	"int fr_fo(const void *a, int sm, fz_op *o, int max) { return fz_%1$s_fused_ops((const fz_%1$s_args *)a, sm, o, max); }\n"
	"int fr_uo(const void *a, int sm, fz_op *o, int max) { return fz_%1$s_unfused_ops((const fz_%1$s_args *)a, sm, o, max); }\n"
	"const unsigned long long fr_args_size = sizeof(fz_%1$s_args), fr_ref_args_size = sizeof(fz_%1$s_ref_args);\n"
	"const char fr_layout[] = FZ_%1$s_LAYOUT;\n"
	"const char *const (*const fr_shapes)[2] = fz_%1$s_ref_shapes;\n";

static void cleanup(fr_spec *s)
{
	static const char *const names[] = {"wrap.c", "ref.so", "cc.log", NULL};
	char p[640];
	for (int i = 0; s->tmpdir[0] && names[i]; i++) snprintf(p, sizeof p, "%s/%s", s->tmpdir, names[i]), unlink(p);
	if (s->tmpdir[0] && s->name) {
		snprintf(p, sizeof p, "%s/%s.h", s->tmpdir, s->name), unlink(p);
		snprintf(p, sizeof p, "%s/%s_ref.c", s->tmpdir, s->name), unlink(p);
	}
	if (s->tmpdir[0]) rmdir(s->tmpdir);
	s->tmpdir[0] = 0;
}

int fr_spec_load(const fz_artifact_info *info, fr_spec *s, char *err)
{
	memset(s, 0, sizeof *s);
	s->name = info->fusion;
	const char *tmp = getenv("TMPDIR");
	snprintf(s->tmpdir, sizeof s->tmpdir, "%s/fuserun-XXXXXX", tmp && *tmp && strlen(tmp) < 400 ? tmp : "/tmp");
	if (!mkdtemp(s->tmpdir)) {
		snprintf(err, FZ_ERRMSG_SIZE, "cannot make a temporary folder %.500s: %s", s->tmpdir, strerror(errno));
		s->tmpdir[0] = 0;
		return -1;
	}
	char hname[FZ_MAX_NAME + 16], rname[FZ_MAX_NAME + 16], p[640], src[640], so[640], log[640], inc[640];
	snprintf(hname, sizeof hname, "%s.h", info->fusion);
	snprintf(rname, sizeof rname, "%s_ref.c", info->fusion);
	int rc = 0;
	const char *names[2] = {hname, rname};
	for (int i = 0; i < 2 && !rc; i++) {
		size_t n;
		char *data = read_listed(info, names[i], &n, err);
		snprintf(p, sizeof p, "%s/%s", s->tmpdir, names[i]);
		if (!data) rc = -1;
		else if (write_all(p, data, n)) rc = -1, snprintf(err, FZ_ERRMSG_SIZE, "%.600s: %s", p, strerror(errno));
		free(data);
	}
	snprintf(src, sizeof src, "%s/wrap.c", s->tmpdir);
	snprintf(so, sizeof so, "%s/ref.so", s->tmpdir);
	snprintf(log, sizeof log, "%s/cc.log", s->tmpdir);
	snprintf(inc, sizeof inc, "-I%s", s->tmpdir);
	char wsrc[sizeof wrapper + 16 * (FZ_MAX_NAME + 1)];
	snprintf(wsrc, sizeof wsrc, wrapper, info->fusion);
	char *table = rc ? NULL : fr_spec_fields_source(info), *whole = NULL;
	if (!rc && (!table || !(whole = malloc(strlen(wsrc) + strlen(table) + 1))))
		rc = -1, snprintf(err, FZ_ERRMSG_SIZE, "out of memory");
	if (!rc) strcpy(whole, wsrc), strcat(whole, table);
	if (!rc && write_all(src, whole, strlen(whole))) rc = -1, snprintf(err, FZ_ERRMSG_SIZE, "%.600s: %s", src, strerror(errno));
	free(table), free(whole);
	if (!rc) {
		snprintf(p, sizeof p, "%s/%s", s->tmpdir, rname);
		/* FZ_NO_FUSERUN_H: the header alone, never a fuserun.h the compiler
		   finds on its own (an installed one of another version, whose
		   fz_op would be the shim's), once NAME.h includes fuserun.h where
		   it can (issue 24; runtime/README.md, the order of the headers) */
		char *argv[] = {(char *)compiler(), "-std=c11", "-O2", "-fPIC", "-shared", "-w", "-DFZ_NO_FUSERUN_H", inc, src, p,
		                "-lm", "-o", so, NULL};
		rc = run(argv, log, err);
	}
	if (!rc && !(s->handle = dlopen(so, RTLD_NOW | RTLD_LOCAL)))
		rc = -1, snprintf(err, FZ_ERRMSG_SIZE, "dlopen %.300s: %.600s", so, dlerror());
	if (!rc) {
		const unsigned long long *as = dlsym(s->handle, "fr_args_size"), *rs = dlsym(s->handle, "fr_ref_args_size");
		const char *layout = dlsym(s->handle, "fr_layout");
		const long long (*fields)[4] = dlsym(s->handle, "fr_fields");
		const char *const (*const *shapes)[2] = dlsym(s->handle, "fr_shapes");
		*(void **)&s->reference = dlsym(s->handle, "fr_ref");
		*(void **)&s->scratch[0] = dlsym(s->handle, "fr_fs");
		*(void **)&s->scratch[1] = dlsym(s->handle, "fr_us");
		*(void **)&s->ops[0] = dlsym(s->handle, "fr_fo");
		*(void **)&s->ops[1] = dlsym(s->handle, "fr_uo");
		if (!as || !rs || !layout || !fields || !shapes || !s->reference || !s->scratch[0] || !s->scratch[1] || !s->ops[0] || !s->ops[1])
			rc = -1, snprintf(err, FZ_ERRMSG_SIZE, "%s: the compiled header lacks a function", info->fusion);
		else rc = fr_spec_check(info, s, layout, *as, *rs, err);
		if (!rc) rc = fr_spec_check_fields(info, fields, err);
		if (!rc) rc = fr_spec_check_shapes(info, *shapes, err);
	}
	cleanup(s); /* the loaded object stays mapped */
	if (rc) fr_spec_unload(s);
	return rc;
}

void fr_spec_unload(fr_spec *s)
{
	if (s->handle) dlclose(s->handle);
	cleanup(s);
	memset(s, 0, sizeof *s);
}
