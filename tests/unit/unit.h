/* SPDX-License-Identifier: MIT */
/*
 * unit.h: the smallest test harness that does the job, and the helpers the
 * test programs share (their code is in unit.c, linked into every test
 * program).  Each test program includes this, calls CHECK* in functions run
 * by main, and ends with unit_done(), which prints "N passed, M failed" and
 * returns the exit status.  A failed check prints its file, line and the
 * values, and the program goes on, so one run shows every failure; in a
 * table-driven test unit_case() names the case a failure belongs to.
 */
#ifndef CD_UNIT_H
#define CD_UNIT_H

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#define UNIT_PRINTF(f, a) __attribute__((format(printf, f, a)))

/* ---- checks ---- */

#define CHECK(cond) unit_check(!!(cond), __FILE__, __LINE__, "CHECK(%s) failed", #cond)
#define CHECK_INT(a, b) unit_check_int((long long)(a), (long long)(b), #a, #b, __FILE__, __LINE__)
#define CHECK_STR(a, b) unit_check_str((a), (b), #a, __FILE__, __LINE__)
/* text holds needle (CHECK_HAS), or does not (CHECK_LACKS) */
#define CHECK_HAS(text, needle) unit_check_has((text), (needle), true, #text, __FILE__, __LINE__)
#define CHECK_LACKS(text, needle) unit_check_has((text), (needle), false, #text, __FILE__, __LINE__)
/* Every string of the array needles in text: one check each. */
#define CHECK_HAS_ALL(text, needles) do { \
	for (size_t unit_i_ = 0; unit_i_ < UNIT_COUNT(needles); unit_i_++) \
		CHECK_HAS((text), (needles)[unit_i_]); \
} while (0)

/* Whether any of the first n rows of a char [][] array holds needle. */
#define UNIT_ROWS_HAVE(rows, n, needle) unit_rows_have((rows), sizeof (rows)[0], (n), (needle))

/* A checked lookup: p itself when it is not NULL (a passed check); else a
 * failed check and a zeroed object of p's type, so that the checks on its
 * fields fail one by one where a NULL would crash the program:
 * CHECK_STR(UNIT_FOUND(cd_report_find(r, "x"))->title, "...").  The zeroed
 * object is shared: zeroed again at each miss. */
#define UNIT_FOUND(p) ((__typeof__(p))unit_found((p), sizeof *(p), #p, __FILE__, __LINE__))

#define UNIT_COUNT(a) (sizeof(a) / sizeof((a)[0]))

void unit_check(bool ok, const char *file, int line, const char *fmt, ...) UNIT_PRINTF(4, 5);
void unit_check_int(long long a, long long b, const char *a_text, const char *b_text, const char *file, int line);
void unit_check_str(const char *a, const char *b, const char *a_text, const char *file, int line);
void unit_check_has(const char *text, const char *needle, bool want, const char *text_name, const char *file,
                    int line);
bool unit_rows_have(const void *rows, size_t stride, int n, const char *needle);
const void *unit_found(const void *p, size_t size, const char *what, const char *file, int line);

/* The case the following checks belong to, printed with each failure until
 * the next call (NULL: none). */
void unit_case(const char *fmt, ...) UNIT_PRINTF(1, 2);

/* Prints "NAME: N passed, M failed" and returns the exit status, after
 * removing the folders unit_tempdir made (a check each). */
int unit_done(const char *name);

/* This test program run again as /proc/self/exe ARG with the environment
 * envp, its stdout read into out: 0 when it wrote len bytes, else -1;
 * *status is waitpid's (exit 127: it could not exec itself). */
int unit_self_output(const char *arg, char *const envp[], void *out, size_t len, int *status);

/* ---- files ---- */

/* Writes text to path (the tests' fake sysfs and state files); exits 2 when
 * it cannot, since every check after it would be meaningless.  _mode sets
 * the file's mode after; unit_append adds to the end. */
void unit_put(const char *path, const char *text);
void unit_put_mode(const char *path, const char *text, mode_t mode);
void unit_append(const char *path, const char *text);

/* The first 4095 bytes of path, or "(absent)"; a static buffer, overwritten
 * by the next call. */
const char *unit_get(const char *path);

bool unit_exists(const char *path);

/* The whole file, NUL-terminated (malloc'd: the caller frees it), its length
 * in *len; NULL when it cannot be read. */
char *unit_read_file(const char *path, size_t *len);

/* The file FILE of the fixture DIR (tests/fixtures/DIR/FILE), read as
 * unit_read_file does (the test programs run from the top of the tree).
 * unit_read_fixture says nothing when it is missing; unit_need_fixture
 * makes that a failed check. */
char *unit_read_fixture(const char *dir, const char *file, size_t *len);
char *unit_need_fixture(const char *dir, const char *file, size_t *len);

/* A heap copy of exactly len bytes, not terminated, kept until the next
 * call: AddressSanitizer catches a parser reading past len. */
const char *unit_exact(const void *data, size_t len);

/* ---- folders ---- */

/* Makes a fresh folder /tmp/cd-NAME-XXXXXX into dir (exits 2 when it cannot);
 * unit_done removes it. */
void unit_tempdir(char *dir, size_t size, const char *name);

/* mkdir -p (exits 2 when it cannot); rm -rf (0, or -1 when something
 * stayed). */
void unit_mkdirs(const char *path);
int unit_rmtree(const char *path);

/* ---- a fake sysfs ---- */

/* Where the clocksource files are under a sysfs root. */
#define UNIT_CS_DIR "/devices/system/clocksource/clocksource0"

/* A scratch tree for the clocksource switch: sysfs (a fake /sys) and state
 * (the folder of its record) in one temporary folder; cur and avail are the
 * fake current_clocksource and available_clocksource, record the record's
 * path in state. */
struct unit_cs_tree {
	char root[64], sysfs[128], state[128], cur[256], avail[256], record[256];
};

/* The tree's folder and paths, the record named record_name (nothing
 * written yet); unit_done removes it. */
void unit_cs_tree(struct unit_cs_tree *t, const char *name, const char *record_name);

/* The tree as new: no state folder, the sysfs files holding current and
 * available. */
void unit_cs_fresh(const struct unit_cs_tree *t, const char *current, const char *available);

/* ---- output ---- */

/* What a writer printed: runs call with `out` a memory stream, and leaves
 * the text in buf (malloc'd: the caller frees it). */
#define UNIT_CAPTURE(buf, call) do { \
	size_t unit_len_ = 0; \
	(buf) = NULL; \
	FILE *out = open_memstream(&(buf), &unit_len_); \
	call; \
	fclose(out); \
} while (0)

#endif
