#include "front/diag.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int source_load(Source *s, const char *path, FILE *err)
{
	memset(s, 0, sizeof *s);
	s->path = path;
	/* O_NONBLOCK and a regular file only: a FIFO or a device given as a
	   spec is refused at once instead of blocking or reading forever */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0) {
		fprintf(err, "fusec: error: %s: %s\n", path, strerror(errno));
		if (fd >= 0) close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		fprintf(err, "fusec: error: %s: %s\n", path, S_ISDIR(st.st_mode) ? strerror(EISDIR) : "not a regular file");
		close(fd);
		return -1;
	}
	FILE *f = fdopen(fd, "rb");
	if (!f) {
		fprintf(err, "fusec: error: %s: %s\n", path, strerror(errno));
		close(fd);
		return -1;
	}
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap + 1);
	for (;;) {
		if (!buf) break;
		size_t got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (got == 0) break;
		if (n == cap) {
			if (cap > ((size_t)64 << 20)) { /* a spec is text, not a dataset */
				fprintf(err, "fusec: error: %s: file larger than 64 MiB\n", path);
				free(buf), fclose(f);
				return -1;
			}
			char *nb = realloc(buf, cap * 2 + 1);
			if (!nb) { free(buf); buf = NULL; break; }
			buf = nb, cap *= 2;
		}
	}
	int bad = ferror(f) || !buf;
	if (!bad && n > ((size_t)64 << 20)) {
		fprintf(err, "fusec: error: %s: file larger than 64 MiB\n", path);
		free(buf), fclose(f);
		return -1;
	}
	fclose(f);
	if (bad) {
		fprintf(err, "fusec: error: %s: cannot read file\n", path);
		free(buf);
		return -1;
	}
	buf[n] = 0;
	s->text = buf, s->len = n;
	return 0;
}

void source_free(Source *s)
{
	free(s->text);
	s->text = NULL;
}

/* A line ends at "\n", "\r\n" or a lone "\r" (old Mac files): each counts once. */
static int line_break(const Source *s, size_t i)
{
	return s->text[i] == '\n' || (s->text[i] == '\r' && (i + 1 >= s->len || s->text[i + 1] != '\n'));
}

void source_linecol(const Source *s, size_t off, int *line, int *col)
{
	int l = 1, c = 1;
	if (off > s->len) off = s->len;
	for (size_t i = 0; i < off; i++) {
		if (line_break(s, i)) l++, c = 1;
		else if (s->text[i] != '\r') c++;
	}
	*line = l, *col = c;
}

static void show_line(Diag *d, size_t off)
{
	const Source *s = d->src;
	if (off > s->len) off = s->len;
	size_t b = off, e = off;
	while (b > 0 && !line_break(s, b - 1)) b--;
	while (e < s->len && s->text[e] != '\n' && s->text[e] != '\r') e++;
	/* Show at most a window of a very long line, around the column. */
	int cut_left = 0, cut_right = 0;
	if (off - b > 100) b = off - 60, cut_left = 1;
	if (e - off > 100) e = off + 60, cut_right = 1;
	/* Print the line with non-printing bytes made visible so binary input
	 * cannot mess up the terminal; the caret column counts them the same. */
	fputs(cut_left ? " ..." : " ", d->out);
	for (size_t i = b; i < e; i++) {
		unsigned char ch = (unsigned char)s->text[i];
		fputc(ch == '\t' || (ch >= 32 && ch < 127) ? ch : '?', d->out);
	}
	fputs(cut_right ? "...\n " : "\n ", d->out);
	if (cut_left) fputs("   ", d->out);
	for (size_t i = b; i < off; i++) fputc(s->text[i] == '\t' ? '\t' : ' ', d->out);
	fputs("^\n", d->out);
}

static void report(Diag *d, size_t off, const char *kind, const char *fmt, va_list ap)
{
	int line, col;
	source_linecol(d->src, off, &line, &col);
	fprintf(d->out, "%s:%d:%d: %s: ", d->src->path, line, col, kind);
	vfprintf(d->out, fmt, ap);
	fputc('\n', d->out);
	show_line(d, off);
}

void diag_error(Diag *d, size_t off, const char *fmt, ...)
{
	d->errors++;
	if (d->max_errors && d->errors > d->max_errors) return;
	va_list ap;
	va_start(ap, fmt);
	report(d, off, "error", fmt, ap);
	va_end(ap);
}

void diag_warning(Diag *d, size_t off, const char *fmt, ...)
{
	d->warnings++;
	va_list ap;
	va_start(ap, fmt);
	report(d, off, "warning", fmt, ap);
	va_end(ap);
}

void diag_note(Diag *d, size_t off, const char *fmt, ...)
{
	if (d->max_errors && d->errors > d->max_errors) return;
	va_list ap;
	va_start(ap, fmt);
	report(d, off, "note", fmt, ap);
	va_end(ap);
}
