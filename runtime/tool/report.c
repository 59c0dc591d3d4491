/* Small helpers of fuserun's output: sizes and JSON values. */
#include <math.h>
#include <string.h>

#include "tool.h"

int sizes_resolve(const fr_opts *o, const fz_artifact_info *info, long long *sizes)
{
	int bad = 0;
	for (int j = 0; j < o->nsize; j++) {
		int known = 0;
		for (int i = 0; i < info->nsizes; i++) known |= !strcmp(info->sizes[i], o->size_name[j]);
		if (!known) fprintf(stderr, "fuserun: %s has no size %s\n", info->fusion, o->size_name[j]), bad = 1;
	}
	for (int i = 0; i < info->nsizes; i++) {
		sizes[i] = 0;
		for (int j = 0; j < o->nsize; j++)
			if (!strcmp(info->sizes[i], o->size_name[j])) sizes[i] = o->size_value[j];
		if (sizes[i] <= 0) {
			fprintf(stderr, "fuserun: size %s of %s not given or not positive (--size %s=...)\n", info->sizes[i],
			        info->fusion, info->sizes[i]);
			bad = 1;
		}
	}
	return bad;
}

void sizes_format(const fz_artifact_info *info, const long long *sizes, char *buf, size_t n)
{
	buf[0] = 0;
	for (int i = 0; i < info->nsizes; i++) {
		size_t l = strlen(buf);
		snprintf(buf + l, n - l, "%s%s=%lld", i ? "," : "", info->sizes[i], sizes[i]);
	}
}

/* The length (1 to 4) of the well-formed UTF-8 sequence at s, its code
   point in *cp; 0 for a byte that starts none (a stray continuation, an
   overlong form, a surrogate, past U+10FFFF, cut short). */
static int utf8_next(const unsigned char *s, unsigned *cp)
{
	static const unsigned min[5] = {0, 0, 0x80, 0x800, 0x10000};
	int n = s[0] < 0x80 ? 1 : (s[0] & 0xe0) == 0xc0 ? 2 : (s[0] & 0xf0) == 0xe0 ? 3 : (s[0] & 0xf8) == 0xf0 ? 4 : 0;
	if (!n) return 0;
	unsigned c = n == 1 ? s[0] : s[0] & (0x7f >> n);
	for (int i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80) return 0; /* also the terminating NUL */
		c = c << 6 | (s[i] & 0x3f);
	}
	if (c < min[n] || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff)) return 0;
	*cp = c;
	return n;
}

/* JSON is UTF-8: a manifest's free text (plan lines, the spec's name) and a
   path may hold any byte but controls, so everything outside printable
   ASCII is written as \u escapes (a pair above U+FFFF) and a byte that is
   not UTF-8 as U+FFFD: the output is ASCII and always valid JSON. */
void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; p && *p;) {
		unsigned c;
		int n = utf8_next(p, &c);
		if (!n) c = 0xfffd, n = 1;
		p += n;
		if (c == '"' || c == '\\') fprintf(f, "\\%c", (int)c);
		else if (c >= 0x20 && c < 0x7f) fputc((int)c, f);
		else if (c < 0x10000) fprintf(f, "\\u%04x", c);
		else fprintf(f, "\\u%04x\\u%04x", 0xd800 + ((c - 0x10000) >> 10), 0xdc00 + ((c - 0x10000) & 0x3ff));
	}
	fputc('"', f);
}

const char *text_safe(const char *s, char *buf, size_t n)
{
	size_t k = 0;
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	while (*p && k + 16 + 4 <= n) { /* room for one sequence escaped (16) and "..." */
		unsigned c;
		int len = utf8_next(p, &c);
		/* C0 and C1 controls and DEL move a terminal's cursor or start an
		   escape sequence (0x9b is CSI on an 8-bit terminal); stray bytes
		   may too: written as \xNN. Well-formed UTF-8 stays as it is. */
		if (!len || c < 0x20 || (c >= 0x7f && c <= 0x9f)) {
			for (int i = 0; i < (len ? len : 1); i++) k += (size_t)snprintf(buf + k, n - k, "\\x%02x", p[i]);
			p += len ? len : 1;
		} else {
			memcpy(buf + k, p, (size_t)len), k += (size_t)len, p += len;
		}
	}
	memcpy(buf + k, *p ? "..." : "", *p ? 4 : 1);
	return buf;
}

void json_num(FILE *f, double v)
{
	if (isfinite(v)) fprintf(f, "%.6g", v);
	else fputs("null", f);
}
