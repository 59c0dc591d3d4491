/* Reading an artifact's files: regular files only, never through a
 * symbolic link, never more than a bound. A FIFO or a device in
 * generated/ would otherwise block a read forever or feed it without end,
 * and a link could make an artifact hash a file anywhere on the machine. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

#define WHAT(w) (w), *(w) ? " " : ""

int fr_read_file(const char *path, const char *what, size_t max, char **data, size_t *len, char *err)
{
	*data = NULL, *len = 0;
	/* O_NONBLOCK: opening a FIFO must not wait for a writer; fstat refuses it next */
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ELOOP)
			return fr_err(err, FZ_ERR_IO, "%s%s%s: a symbolic link: refused (artifacts are read without following links)",
			              WHAT(what), path);
		return fr_err(err, FZ_ERR_IO, "%s%s%s: %s", WHAT(what), path, strerror(errno));
	}
	struct stat st;
	int rc = FZ_OK;
	if (fstat(fd, &st) != 0) rc = fr_err(err, FZ_ERR_IO, "%s%s%s: %s", WHAT(what), path, strerror(errno));
	else if (!S_ISREG(st.st_mode)) rc = fr_err(err, FZ_ERR_IO, "%s%s%s: not a regular file", WHAT(what), path);
	else if (st.st_size < 0 || (unsigned long long)st.st_size > max)
		rc = fr_err(err, FZ_ERR_FORMAT, "%s%s%s: larger than %zu bytes", WHAT(what), path, max);
	char *buf = NULL;
	size_t cap = rc ? 0 : (size_t)st.st_size + 1, n = 0;
	if (!rc && !(buf = malloc(cap + 1))) rc = fr_err(err, FZ_ERR_NO_MEMORY, "%s: out of memory", path);
	/* one byte more than fstat said: a file that grows while read is refused */
	while (!rc && n < cap) {
		ssize_t got = read(fd, buf + n, cap - n);
		if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
		if (got < 0) rc = fr_err(err, FZ_ERR_IO, "%s%s%s: %s", WHAT(what), path, strerror(errno));
		else if (got == 0) break;
		else n += (size_t)got;
	}
	if (!rc && n == cap) rc = fr_err(err, FZ_ERR_IO, "%s%s%s: changed while it was read", WHAT(what), path);
	close(fd);
	if (rc) {
		free(buf);
		return rc;
	}
	buf[n] = 0;
	*data = buf, *len = n;
	return FZ_OK;
}

char *fr_path_join(const char *dir, const char *name)
{
	size_t n = strlen(dir) + strlen(name) + 2;
	char *p = malloc(n);
	if (p) snprintf(p, n, "%s/%s", dir, name);
	return p;
}

char *fr_dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	size_t n = slash ? (size_t)(slash - path) : 1;
	char *d = malloc(n + 1);
	if (!d) return NULL;
	if (!slash) memcpy(d, ".", 2);
	else if (n == 0) memcpy(d, "/", 2);
	else memcpy(d, path, n), d[n] = 0;
	return d;
}
