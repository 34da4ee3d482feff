/* SPDX-License-Identifier: MIT */
/*
 * unit.c: the harness's counters and checks, and the helpers the unit test
 * programs share (unit.h says what each does): reading fixtures and files,
 * writing files, scratch folders under /tmp removed at the end, a fake sysfs
 * clocksource tree.  Linked into every test program by the Makefile's
 * unit-test rule; it depends on libc only, never on the modules under test.
 */
#include "unit.h"

#include <errno.h>
#include <ftw.h>
#include <stdalign.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int unit_passed, unit_failed;
static char unit_case_name[256];
static char *unit_exact_copy; /* unit_exact's, freed by unit_done */

/* ---- checks ---- */

/* Counts one check; a failure prints "FILE:LINE: what", and the case. */
static void count(bool ok, const char *file, int line, const char *fmt, va_list ap)
{
	if (ok) {
		unit_passed++;
		return;
	}
	unit_failed++;
	fprintf(stderr, "%s:%d: ", file, line);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	if (unit_case_name[0])
		fprintf(stderr, "  in case: %s\n", unit_case_name);
}

void unit_check(bool ok, const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	count(ok, file, line, fmt, ap);
	va_end(ap);
}

void unit_check_int(long long a, long long b, const char *a_text, const char *b_text, const char *file, int line)
{
	unit_check(a == b, file, line, "%s == %lld, expected %s == %lld", a_text, a, b_text, b);
}

void unit_check_str(const char *a, const char *b, const char *a_text, const char *file, int line)
{
	unit_check(a && b && strcmp(a, b) == 0, file, line, "%s == \"%s\", expected \"%s\"", a_text,
	           a ? a : "(null)", b ? b : "(null)");
}

void unit_check_has(const char *text, const char *needle, bool want, const char *text_name, const char *file,
                    int line)
{
	bool has = text && needle && strstr(text, needle) != NULL;
	unit_check(has == want, file, line, "%s %s \"%s\"", text ? text_name : "(null)",
	           want ? "lacks" : "holds", needle ? needle : "(null)");
}

bool unit_rows_have(const void *rows, size_t stride, int n, const char *needle)
{
	for (int i = 0; i < n; i++)
		if (strstr((const char *)rows + (size_t)i * stride, needle))
			return true;
	return false;
}

const void *unit_found(const void *p, size_t size, const char *what, const char *file, int line)
{
	static alignas(max_align_t) unsigned char zero[1 << 18];
	unit_check(p != NULL, file, line, "%s is NULL", what);
	if (p)
		return p;
	if (size > sizeof zero) {
		fprintf(stderr, "%s:%d: unit_found: %zu bytes is larger than its zeroed object\n", file, line, size);
		exit(2);
	}
	memset(zero, 0, size);
	return zero;
}

void unit_case(const char *fmt, ...)
{
	unit_case_name[0] = '\0';
	if (!fmt)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(unit_case_name, sizeof unit_case_name, fmt, ap);
	va_end(ap);
}

/* ---- folders made, removed at the end ---- */

static char unit_dirs[8][64];
static int unit_n_dirs;

void unit_tempdir(char *dir, size_t size, const char *name)
{
	snprintf(dir, size, "/tmp/cd-%s-XXXXXX", name);
	if (unit_n_dirs == (int)UNIT_COUNT(unit_dirs) || strlen(dir) >= sizeof unit_dirs[0] || !mkdtemp(dir)) {
		perror(dir);
		exit(2);
	}
	snprintf(unit_dirs[unit_n_dirs++], sizeof unit_dirs[0], "%s", dir);
}

int unit_done(const char *name)
{
	unit_case(NULL);
	for (int i = 0; i < unit_n_dirs; i++)
		unit_check(unit_rmtree(unit_dirs[i]) == 0, __FILE__, __LINE__, "could not remove %s", unit_dirs[i]);
	unit_n_dirs = 0;
	free(unit_exact_copy);
	unit_exact_copy = NULL;
	printf("%s: %d passed, %d failed\n", name, unit_passed, unit_failed);
	return unit_failed ? 1 : 0;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path) == 0 || errno == ENOENT ? 0 : -1;
}

int unit_rmtree(const char *path)
{
	if (nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS) != 0 && errno != ENOENT)
		return -1;
	return unit_exists(path) ? -1 : 0;
}

void unit_mkdirs(const char *path)
{
	char p[512];
	snprintf(p, sizeof p, "%s", path);
	for (char *s = p + 1;; s++) {
		if (*s != '/' && *s != '\0')
			continue;
		char c = *s;
		*s = '\0';
		if (mkdir(p, 0755) != 0 && errno != EEXIST) {
			perror(p);
			exit(2);
		}
		*s = c;
		if (!c)
			return;
	}
}

/* ---- files ---- */

static void write_text(const char *path, const char *text, const char *how)
{
	FILE *f = fopen(path, how);
	if (!f) {
		perror(path);
		exit(2);
	}
	fputs(text, f);
	fclose(f);
}

void unit_put(const char *path, const char *text)
{
	write_text(path, text, "w");
}

void unit_put_mode(const char *path, const char *text, mode_t mode)
{
	write_text(path, text, "w");
	chmod(path, mode);
}

void unit_append(const char *path, const char *text)
{
	write_text(path, text, "a");
}

const char *unit_get(const char *path)
{
	static char buf[4096];
	FILE *f = fopen(path, "r");
	if (!f)
		return "(absent)";
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

bool unit_exists(const char *path)
{
	return access(path, F_OK) == 0;
}

char *unit_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	*len = 0;
	if (!f)
		return NULL;
	char *buf = NULL;
	size_t cap = 0;
	for (;;) {
		if (*len + 1 >= cap) {
			char *more = realloc(buf, cap = cap ? 2 * cap : 65536);
			if (!more)
				break;
			buf = more;
		}
		size_t n = fread(buf + *len, 1, cap - 1 - *len, f);
		*len += n;
		if (n == 0)
			break;
	}
	fclose(f);
	if (buf)
		buf[*len] = '\0';
	return buf;
}

char *unit_read_fixture(const char *dir, const char *file, size_t *len)
{
	char path[512];
	snprintf(path, sizeof path, "tests/fixtures/%s/%s", dir, file);
	return unit_read_file(path, len);
}

char *unit_need_fixture(const char *dir, const char *file, size_t *len)
{
	char *text = unit_read_fixture(dir, file, len);
	unit_check(text != NULL, __FILE__, __LINE__,
	           "cannot read tests/fixtures/%s/%s (run from the top of the tree)", dir, file);
	return text;
}

const char *unit_exact(const void *data, size_t len)
{
	free(unit_exact_copy);
	unit_exact_copy = malloc(len ? len : 1);
	if (!unit_exact_copy)
		exit(2);
	memcpy(unit_exact_copy, data, len);
	return unit_exact_copy;
}

/* ---- a fake sysfs ---- */

void unit_cs_tree(struct unit_cs_tree *t, const char *name, const char *record_name)
{
	unit_tempdir(t->root, sizeof t->root, name);
	snprintf(t->sysfs, sizeof t->sysfs, "%s/sys", t->root);
	snprintf(t->state, sizeof t->state, "%s/state", t->root);
	snprintf(t->cur, sizeof t->cur, "%s%s/current_clocksource", t->sysfs, UNIT_CS_DIR);
	snprintf(t->avail, sizeof t->avail, "%s%s/available_clocksource", t->sysfs, UNIT_CS_DIR);
	snprintf(t->record, sizeof t->record, "%s/%s", t->state, record_name);
}

void unit_cs_fresh(const struct unit_cs_tree *t, const char *current, const char *available)
{
	char dir[256];
	if (unit_rmtree(t->sysfs) != 0 || unit_rmtree(t->state) != 0) {
		fprintf(stderr, "cannot empty %s\n", t->root);
		exit(2);
	}
	snprintf(dir, sizeof dir, "%s%s", t->sysfs, UNIT_CS_DIR);
	unit_mkdirs(dir);
	unit_put(t->cur, current);
	unit_put(t->avail, available);
}

int unit_self_output(const char *arg, char *const envp[], void *out, size_t len, int *status)
{
	int fd[2];
	*status = -1;
	if (pipe(fd) != 0)
		return -1;
	pid_t p = fork();
	if (p == 0) {
		dup2(fd[1], 1);
		char *argv[] = { "unit-child", (char *)arg, NULL };
		execve("/proc/self/exe", argv, envp);
		_exit(127);
	}
	close(fd[1]);
	ssize_t n = p < 0 ? -1 : read(fd[0], out, len);
	close(fd[0]);
	if (p > 0)
		waitpid(p, status, 0);
	return n == (ssize_t)len ? 0 : -1;
}
