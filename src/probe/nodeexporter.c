/* SPDX-License-Identifier: MIT */
/*
 * nodeexporter.c: where node_exporter reads textfiles (nodeexporter.h).
 */
#include "probe/nodeexporter.h"
#include "util/fsread.h"
#include "util/printable.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_ARGS 128
#define MAX_ENV 64
#define TEXT_MAX (64 * 1024)   /* a unit, a defaults file, a command line */

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

bool cd_ne_is_node_exporter(const char *argv0)
{
	const char *b = base_name(argv0);
	return strcmp(b, "node_exporter") == 0 || strcmp(b, CD_NE_DEBIAN_BINARY) == 0;
}

/* arg is --name or --name=VALUE: the value (NULL for the bare flag, next
 * taken from the following argument when needs_value). */
static bool flag_is(const char *arg, const char *name, const char **value)
{
	size_t n = strlen(name);
	if (strncmp(arg, name, n) != 0)
		return false;
	if (arg[n] == '\0') {
		*value = NULL;
		return true;
	}
	if (arg[n] == '=') {
		*value = arg + n + 1;
		return true;
	}
	return false;
}

void cd_ne_parse_args(int argc, char *const *argv, struct cd_node_exporter *ne)
{
	bool debian = argc > 0 && strcmp(base_name(argv[0]), CD_NE_DEBIAN_BINARY) == 0;
	const char *dir = debian ? CD_NE_DEBIAN_DIR : "";
	int on = -1;                 /* --collector.textfile / --no-: last one; -1 neither */
	bool no_defaults = false;
	for (int i = 1; i < argc; i++) {
		const char *v;
		if (flag_is(argv[i], "--collector.textfile.directory", &v)) {
			if (!v && i + 1 < argc)
				v = argv[++i];
			dir = v ? v : dir;
		} else if (flag_is(argv[i], "--collector.textfile", &v)) {
			on = !v || strcmp(v, "false") != 0;
		} else if (flag_is(argv[i], "--no-collector.textfile", &v)) {
			on = 0;
		} else if (flag_is(argv[i], "--collector.disable-defaults", &v)) {
			no_defaults = !v || strcmp(v, "false") != 0;
		}
	}
	ne->disabled = on == 0 || (on < 0 && no_defaults);
	cd_printable_copy(ne->dir, sizeof ne->dir, dir, strlen(dir));
	ne->reads = !ne->disabled && ne->dir[0] != '\0';
}

/* The value of NAME among env ("NAME=value"), NULL when not set. */
static const char *env_get(char *const *env, int n, const char *name, size_t len)
{
	for (int i = n - 1; i >= 0; i--)
		if (strncmp(env[i], name, len) == 0 && env[i][len] == '=')
			return env[i] + len + 1;
	return NULL;
}

struct words {
	char **argv;
	int argc, max;
	char *buf;
	size_t cap, used;
	bool open;                   /* a word is being written */
};

/* Begin a word, unless one is being written. */
static bool open_word(struct words *w)
{
	if (w->open)
		return true;
	if (w->argc >= w->max || w->used + 1 > w->cap)
		return false;
	w->argv[w->argc++] = w->buf + w->used;
	w->buf[w->used] = '\0';
	w->open = true;
	return true;
}

static bool put_char(struct words *w, char c)
{
	if (!open_word(w))
		return false;
	if (w->used + 2 > w->cap)
		return false;
	w->buf[w->used++] = c;
	w->buf[w->used] = '\0';
	return true;
}

static bool end_word(struct words *w)
{
	if (w->open) {
		w->used++;               /* past the NUL */
		w->open = false;
	}
	return true;
}

int cd_ne_split_exec(const char *line, char *const *env, int n, char **argv, int max, char *buf, size_t cap)
{
	struct words w = { argv, 0, max, buf, cap, 0, false };
	if (cap == 0)
		return -1;
	buf[0] = '\0';
	const char *s = line;
	while (*s == ' ' || *s == '\t')
		s++;
	while (*s && strchr("-@:+!", *s))
		s++;
	char quote = 0;
	for (; *s; s++) {
		char c = *s;
		bool ok = true;
		if (quote && c == quote) {
			quote = 0;
		} else if (!quote && (c == '"' || c == '\'')) {
			quote = c;
			ok = open_word(&w);          /* "" is a word too */
		} else if (!quote && (c == ' ' || c == '\t' || c == '\n')) {
			ok = end_word(&w);
		} else if (c == '$' && quote != '\'' && (s[1] == '{' || s[1] == '_' || (s[1] >= 'A' && s[1] <= 'Z') ||
		                                          (s[1] >= 'a' && s[1] <= 'z'))) {
			bool braced = s[1] == '{';
			const char *name = s + 1 + braced;
			size_t len = strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_");
			if (braced && name[len] != '}')
				return -1;
			const char *v = env_get(env, n, name, len);
			s = name + len - 1 + braced;
			/* $NAME alone is split into words, as systemd does;
			 * ${NAME} (or inside quotes) is one. */
			bool split = !braced && !quote;
			for (; v && *v && ok; v++)
				ok = split && (*v == ' ' || *v == '\t' || *v == '\n') ? end_word(&w) : put_char(&w, *v);
		} else if (c == '\\' && s[1] && quote != '\'') {
			ok = put_char(&w, *++s);
		} else {
			ok = put_char(&w, c);
		}
		if (!ok)
			return -1;
	}
	end_word(&w);
	return w.argc;
}

/* An environment file's KEY=VALUE lines, added to env (strings in store). */
static void read_env_file(const char *root, const char *path, char **env, int *n, char *store, size_t cap,
                          size_t *used)
{
	size_t len;
	int err, trunc;
	char *text = cd_read_file(root, path, TEXT_MAX, &len, &err, &trunc);
	if (!text)
		return;
	for (char *save = NULL, *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		l += strspn(l, " \t");
		char *eq = strchr(l, '=');
		if (*l == '#' || *l == ';' || !eq || eq == l || *n >= MAX_ENV)
			continue;
		char *v = eq + 1;
		size_t vl = strlen(v);
		while (vl > 0 && (v[vl - 1] == ' ' || v[vl - 1] == '\t' || v[vl - 1] == '\r'))
			v[--vl] = '\0';
		if (vl >= 2 && (v[0] == '"' || v[0] == '\'') && v[vl - 1] == v[0]) {
			v[vl - 1] = '\0';
			v++;
		}
		int w = snprintf(store + *used, cap - *used, "%.*s=%s", (int)(eq - l), l, v);
		if (w < 0 || (size_t)w >= cap - *used)
			break;
		env[(*n)++] = store + *used;
		*used += (size_t)w + 1;
	}
	free(text);
}

/* The textfile folder of argv (from a unit or the defaults file) into ne. */
static bool from_argv(int argc, char **argv, enum cd_ne_from from, const char *source,
                      struct cd_node_exporter *ne)
{
	if (argc < 1 || !cd_ne_is_node_exporter(argv[0]))
		return false;
	memset(ne, 0, sizeof *ne);
	ne->from = from;
	cd_printable_copy(ne->source, sizeof ne->source, source, strlen(source));
	cd_ne_parse_args(argc, argv, ne);
	return true;
}

/* The unit at path, when it starts node_exporter. */
static bool from_unit(const char *root, const char *path, struct cd_node_exporter *ne)
{
	size_t len;
	int err, trunc;
	char *text = cd_read_file(root, path, TEXT_MAX, &len, &err, &trunc);
	if (!text)
		return false;
	char store[16384], words[8192];
	char *env[MAX_ENV], *argv[MAX_ARGS];
	int n = 0;
	size_t used = 0;
	const char *exec = NULL;
	for (char *save = NULL, *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		l += strspn(l, " \t");
		if (strncmp(l, "EnvironmentFile=", 16) == 0) {
			const char *f = l + 16;
			f += *f == '-';
			read_env_file(root, f, env, &n, store, sizeof store, &used);
		} else if (strncmp(l, "Environment=", 12) == 0) {
			char *ws[MAX_ENV];
			int k = cd_ne_split_exec(l + 12, NULL, 0, ws, MAX_ENV, words, sizeof words);
			for (int i = 0; i < k && n < MAX_ENV; i++) {
				int w = snprintf(store + used, sizeof store - used, "%s", ws[i]);
				if (w < 0 || (size_t)w >= sizeof store - used || !strchr(ws[i], '='))
					continue;
				env[n++] = store + used;
				used += (size_t)w + 1;
			}
		} else if (strncmp(l, "ExecStart=", 10) == 0) {
			exec = l + 10;        /* the last one (an empty one resets) */
		}
	}
	bool found = false;
	if (exec && *exec) {
		int argc = cd_ne_split_exec(exec, env, n, argv, MAX_ARGS, words, sizeof words);
		found = from_argv(argc, argv, CD_NE_UNIT, path, ne);
	}
	free(text);
	return found;
}

/* A running process, when it is node_exporter. */
static bool from_process(const char *root, int pid, struct cd_node_exporter *ne)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/cmdline", pid);
	size_t len;
	int err, trunc;
	char *text = cd_read_file(root, path, TEXT_MAX, &len, &err, &trunc);
	if (!text)
		return false;
	char *argv[MAX_ARGS];
	int argc = 0;
	for (size_t i = 0; i < len && argc < MAX_ARGS; i += strlen(text + i) + 1)
		argv[argc++] = text + i;
	bool found = argc > 0 && cd_ne_is_node_exporter(argv[0]);
	if (found) {
		memset(ne, 0, sizeof *ne);
		ne->from = CD_NE_PROCESS;
		ne->pid = pid;
		snprintf(ne->source, sizeof ne->source, "%s", path);
		cd_ne_parse_args(argc, argv, ne);
		/* A relative folder is relative to the process's own. */
		char cwd[512], link[64], full[4096];
		snprintf(link, sizeof link, "/proc/%d/cwd", pid);
		ssize_t r = cd_path_join(full, sizeof full, root, link) == 0 ? readlink(full, cwd, sizeof cwd - 1) : -1;
		if (ne->reads && ne->dir[0] != '/' && r > 0) {
			cwd[r] = '\0';
			char joined[sizeof cwd + sizeof ne->dir + 2];
			snprintf(joined, sizeof joined, "%s/%s", cwd, ne->dir);
			cd_printable_copy(ne->dir, sizeof ne->dir, joined, strlen(joined));
		}
	}
	free(text);
	return found;
}

int cd_node_exporters(const char *root, struct cd_node_exporter *ne, int max)
{
	int n = 0;
	char proc[4096];
	DIR *d = max > 0 && cd_path_join(proc, sizeof proc, root, "/proc") == 0 ? opendir(proc) : NULL;
	for (struct dirent *e; d && n < max && (e = readdir(d));) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		if (*end == '\0' && pid > 0 && pid < (1L << 30) && from_process(root, (int)pid, &ne[n]))
			n++;
	}
	if (d)
		closedir(d);
	if (n > 0 || max < 1)
		return n;
	static const char *const dirs[] = { "/etc/systemd/system", "/run/systemd/system", "/usr/lib/systemd/system",
		                            "/lib/systemd/system" };
	static const char *const names[] = { "prometheus-node-exporter.service", "node_exporter.service",
		                             "node-exporter.service" };
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
		for (size_t j = 0; j < sizeof names / sizeof names[0]; j++) {
			char path[128];
			snprintf(path, sizeof path, "%s/%s", dirs[i], names[j]);
			if (from_unit(root, path, ne))
				return 1;
		}
	/* Debian's defaults file, with Debian's binary (a system without
	 * systemd starts it from there). */
	char bin[4096];
	if (cd_path_join(bin, sizeof bin, root, "/usr/bin/" CD_NE_DEBIAN_BINARY) == 0 && access(bin, F_OK) == 0) {
		char store[8192], words[8192];
		char *env[MAX_ENV], *argv[MAX_ARGS];
		int k = 0;
		size_t used = 0;
		read_env_file(root, CD_NE_DEBIAN_DEFAULTS, env, &k, store, sizeof store, &used);
		int argc = cd_ne_split_exec("/usr/bin/" CD_NE_DEBIAN_BINARY " $ARGS", env, k, argv, MAX_ARGS, words,
		                            sizeof words);
		if (from_argv(argc, argv, CD_NE_DEFAULTS, CD_NE_DEBIAN_DEFAULTS, ne))
			return 1;
	}
	return 0;
}
