/* Helpers of the runtime's CPU tests. */
#include "testutil.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sha256.h"

int passed, failed;
const char *gen_dir, *fake_so, *nocuda_so, *tmp_dir;

int check(int cond, const char *name, const char *detail)
{
	if (cond) passed++, printf("PASS %s\n", name);
	else failed++, printf("FAIL %s%s%s\n", name, detail && *detail ? ": " : "", detail ? detail : "");
	return cond;
}

/* rc is code, and the message mentions every one of the NULL-terminated words */
int expect(const char *name, int rc, int code, const char *msg, ...)
{
	char detail[FZ_ERRMSG_SIZE + 128];
	int ok = rc == code;
	va_list ap;
	va_start(ap, msg);
	for (const char *w = va_arg(ap, const char *); w && ok; w = va_arg(ap, const char *))
		if (!msg || !strstr(msg, w)) ok = 0;
	va_end(ap);
	snprintf(detail, sizeof detail, "got %d (%s), want %d; message: %s", rc, fz_strerror(rc), code, msg ? msg : "(none)");
	return check(ok, name, detail);
}

/* ---- files ---- */

char *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	if (!f) return NULL;
	fseek(f, 0, SEEK_END);
	long len = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *p = malloc((size_t)len + 1);
	if (p && fread(p, 1, (size_t)len, f) != (size_t)len) free(p), p = NULL;
	fclose(f);
	if (p) p[len] = 0, *n = (size_t)len;
	return p;
}

void spit(const char *path, const char *data, size_t n)
{
	FILE *f = fopen(path, "wb");
	if (!f) { perror(path); exit(2); }
	fwrite(data, 1, n, f);
	fclose(f);
}

char *path2(char *buf, const char *dir, const char *name)
{
	snprintf(buf, 4096, "%s/%s", dir, name);
	return buf;
}

/* copies the artifact NAME into tmp/CASE/; returns the directory */
const char *copy_artifact(const char *name, const char *casename) { return copy_artifact_from(gen_dir, name, casename); }

const char *copy_artifact_from(const char *from, const char *name, const char *casename)
{
	static char dir[4096];
	char src[4096], dst[4096], err[FZ_ERRMSG_SIZE];
	snprintf(dir, sizeof dir, "%s/%s", tmp_dir, casename);
	mkdir(tmp_dir, 0777), mkdir(dir, 0777);
	snprintf(src, sizeof src, "%s/%s.manifest", from, name);
	fz_artifact_info info;
	if (fz_artifact_verify(src, &info, err)) { fprintf(stderr, "%s\n", err); exit(2); }
	const char *files[32];
	int nf = 0;
	for (int i = 0; i < info.ntargets; i++) files[nf++] = info.targets[i].file;
	for (int i = 0; i < info.nfiles; i++) files[nf++] = info.files[i].name;
	char mname[300];
	snprintf(mname, sizeof mname, "%s.manifest", name);
	files[nf++] = mname;
	for (int i = 0; i < nf; i++) {
		size_t n;
		char *data = slurp(path2(src, from, files[i]), &n);
		if (!data) { perror(src); exit(2); }
		spit(path2(dst, dir, files[i]), data, n);
		free(data);
	}
	fz_artifact_info_free(&info);
	return dir;
}

/* recomputes a manifest's manifest-sha256 line */
void rehash(const char *path)
{
	size_t n;
	char *t = slurp(path, &n), hex[65];
	char *last = NULL;
	for (char *s = strstr(t, "\nmanifest-sha256 "); s; s = strstr(s + 1, "\nmanifest-sha256 ")) last = s;
	size_t body = (size_t)(last - t) + 1;
	fr_sha256_hex(t, body, hex);
	char *out = malloc(body + 100);
	memcpy(out, t, body);
	int k = snprintf(out + body, 100, "manifest-sha256 %s\n", hex);
	spit(path, out, body + (size_t)k);
	free(out), free(t);
}

/* replaces the first `from` in the file with `to`; rehashes if asked */
void edit(const char *path, const char *from, const char *to, int re)
{
	size_t n;
	char *t = slurp(path, &n);
	char *at = strstr(t, from);
	if (!at) { fprintf(stderr, "edit: '%s' not in %s\n", from, path); exit(2); }
	size_t pre = (size_t)(at - t), fl = strlen(from), tl = strlen(to);
	char *out = malloc(n - fl + tl + 1);
	memcpy(out, t, pre), memcpy(out + pre, to, tl), memcpy(out + pre + tl, at + fl, n - pre - fl);
	spit(path, out, n - fl + tl);
	free(out), free(t);
	if (re) rehash(path);
}

/* the line of the manifest starting with `prefix` (without its newline) */
void manifest_line(const char *path, const char *prefix, char *line, size_t cap)
{
	size_t n;
	char *t = slurp(path, &n), *s = strstr(t, prefix);
	size_t len = s ? strcspn(s, "\n") : 0;
	snprintf(line, cap, "%.*s", (int)len, s ? s : "");
	free(t);
}

/* the manifest with its layout line recomputed (as an attacker would) from
   its fusion, size, param and temp lines without by= and domain= */
void relayout(const char *path)
{
	size_t n;
	char *t = slurp(path, &n), *text = calloc(n + 1, 1), line[8192], old[8200] = "", hex[65];
	size_t k = 0;
	for (char *s = t; *s;) {
		size_t l = strcspn(s, "\n");
		snprintf(line, sizeof line, "%.*s", (int)l, s);
		if (!strncmp(line, "layout ", 7)) snprintf(old, sizeof old, "%s", line);
		if (!strncmp(line, "fusion ", 7) || !strncmp(line, "size ", 5) || !strncmp(line, "param ", 6) || !strncmp(line, "temp ", 5)) {
			char *by = strstr(line, " by=");
			if (by) *by = 0;
			k += (size_t)sprintf(text + k, "%s\n", line);
		}
		s += l + (s[l] == '\n');
	}
	fr_sha256_hex(text, k, hex);
	char neu[100];
	snprintf(neu, sizeof neu, "layout %s", hex);
	free(t), free(text);
	edit(path, old, neu, 1);
}

/* relayout, and the header's FZ_NAME_LAYOUT and its file line made to
   agree: a consistent artifact whose manifest was edited (what fusec would
   have written had it produced those lines) */
void refingerprint(const char *dir, const char *fusion)
{
	char p[4096], h[4096], old[200], neu[200], name[300], hex[65];
	snprintf(name, sizeof name, "%s.manifest", fusion);
	path2(p, dir, name);
	manifest_line(p, "layout ", old, sizeof old);
	relayout(p);
	manifest_line(p, "layout ", neu, sizeof neu);
	snprintf(name, sizeof name, "%s.h", fusion);
	edit(path2(h, dir, name), old + 7, neu + 7, 0);
	size_t n;
	char *t = slurp(h, &n);
	fr_sha256_hex(t, n, hex);
	free(t);
	snprintf(old, sizeof old, "file %s.h ", fusion);
	manifest_line(p, old, neu, sizeof neu);
	snprintf(name, sizeof name, "file %s.h %s", fusion, hex);
	edit(p, neu, name, 1);
}

int verify(const char *dir, const char *name, char *err)
{
	char p[4096];
	fz_artifact_info info;
	snprintf(p, sizeof p, "%s/%s", dir, name);
	int rc = fz_artifact_verify(p, &info, err);
	if (!rc) fz_artifact_info_free(&info);
	else if (info.fusion || info.storage_ || info.ntensors) strcat(err, " [info not cleared]"), rc = -1;
	return rc;
}

void insert_before(const char *path, const char *before, const char *extra)
{
	size_t n;
	char *t = slurp(path, &n), *at = strstr(t, before);
	size_t pre = (size_t)(at - t), el = strlen(extra);
	char *out = malloc(n + el + 1);
	memcpy(out, t, pre), memcpy(out + pre, extra, el), memcpy(out + pre + el, at, n - pre);
	spit(path, out, n + el);
	free(out), free(t);
	rehash(path);
}
