/* SPDX-License-Identifier: MIT */
/*
 * test_nodeexporter.c: where node_exporter reads textfiles (probe/
 * nodeexporter.c), from its command line, its unit and Debian's defaults
 * file, on fake roots; and what check and watch say about the file they
 * write (output/promdest.c).
 */
#include "unit.h"
#include "output/promdest.h"
#include "probe/nodeexporter.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct cd_node_exporter parse(int argc, char **argv)
{
	struct cd_node_exporter ne;
	memset(&ne, 0, sizeof ne);
	cd_ne_parse_args(argc, argv, &ne);
	return ne;
}

static void test_args(void)
{
	/* Debian's binary reads its built-in folder; upstream's none. */
	char *deb[] = { "/usr/bin/prometheus-node-exporter" };
	struct cd_node_exporter ne = parse(1, deb);
	CHECK(ne.reads && !ne.disabled);
	CHECK_STR(ne.dir, "/var/lib/prometheus/node-exporter");
	char *up[] = { "/usr/local/bin/node_exporter", "--web.listen-address=:9100" };
	ne = parse(2, up);
	CHECK(!ne.reads && !ne.disabled);
	/* The flag, both spellings, the last winning. */
	char *both[] = { "node_exporter", "--collector.textfile.directory", "/a", "--collector.textfile.directory=/b" };
	ne = parse(4, both);
	CHECK(ne.reads);
	CHECK_STR(ne.dir, "/b");
	/* Off: --no-collector.textfile, or defaults disabled without it back. */
	char *off[] = { "prometheus-node-exporter", "--no-collector.textfile" };
	ne = parse(2, off);
	CHECK(!ne.reads && ne.disabled);
	char *nodef[] = { "node_exporter", "--collector.disable-defaults", "--collector.textfile.directory=/t" };
	ne = parse(3, nodef);
	CHECK(!ne.reads && ne.disabled);
	char *back[] = { "node_exporter", "--collector.disable-defaults", "--collector.textfile",
		         "--collector.textfile.directory=/t" };
	ne = parse(4, back);
	CHECK(ne.reads && !ne.disabled);
	/* A flag at the end without its value changes nothing. */
	char *dangling[] = { "prometheus-node-exporter", "--collector.textfile.directory" };
	ne = parse(2, dangling);
	CHECK_STR(ne.dir, "/var/lib/prometheus/node-exporter");
	/* Any user can run a program named node_exporter with any arguments:
	 * what is said of its folder is printable, never a terminal escape. */
	char *hostile[] = { "node_exporter", "--collector.textfile.directory=/t\x1b]0;owned\a\n/x" };
	ne = parse(2, hostile);
	CHECK_STR(ne.dir, "/t?]0;owned?" "?/x");
	CHECK(cd_ne_is_node_exporter("/opt/x/node_exporter") && cd_ne_is_node_exporter("prometheus-node-exporter"));
	CHECK(!cd_ne_is_node_exporter("node_exporter.sh") && !cd_ne_is_node_exporter("/usr/bin/prometheus"));
}

static void test_split_exec(void)
{
	char *env[] = { "ARGS=--a=1  --b \"x\"", "ONE=p q" };
	char *argv[16], buf[256];
	int n = cd_ne_split_exec("-/usr/bin/ne $ARGS ${ONE} 'lit $ARGS' \"\" end", env, 2, argv, 16, buf, sizeof buf);
	CHECK_INT(n, 8);
	if (n == 8) {
		CHECK_STR(argv[0], "/usr/bin/ne");
		CHECK_STR(argv[1], "--a=1");
		CHECK_STR(argv[2], "--b");
		CHECK_STR(argv[3], "\"x\"");      /* a variable's quotes are its text */
		CHECK_STR(argv[4], "p q");
		CHECK_STR(argv[5], "lit $ARGS");
		CHECK_STR(argv[6], "");
		CHECK_STR(argv[7], "end");
	}
	/* Unset variables are nothing; too small a buffer is -1. */
	CHECK_INT(cd_ne_split_exec("ne $NOPE", env, 2, argv, 16, buf, sizeof buf), 1);
	CHECK_INT(cd_ne_split_exec("ne $ARGS", env, 2, argv, 2, buf, sizeof buf), -1);
	CHECK_INT(cd_ne_split_exec("aaaaaaaaaaaaaaaa", env, 2, argv, 16, buf, 8), -1);
	CHECK_INT(cd_ne_split_exec("ne ${ARGS", env, 2, argv, 16, buf, sizeof buf), -1);
}

static void put_in(const char *root, const char *rel, const char *text)
{
	char path[512], dir[512];
	snprintf(path, sizeof path, "%s%s", root, rel);
	snprintf(dir, sizeof dir, "%s", path);
	*strrchr(dir, '/') = '\0';
	unit_mkdirs(dir);
	unit_put(path, text);
}

static void test_found_on_a_root(void)
{
	char root[256];
	struct cd_node_exporter ne[4];
	unit_tempdir(root, sizeof root, "ne-root");
	CHECK_INT(cd_node_exporters(root, ne, 4), 0);

	/* Debian as shipped: the unit, its defaults file with ARGS="". */
	put_in(root, "/lib/systemd/system/prometheus-node-exporter.service",
	       "[Service]\nEnvironmentFile=/etc/default/prometheus-node-exporter\n"
	       "ExecStart=/usr/bin/prometheus-node-exporter $ARGS\n");
	put_in(root, "/etc/default/prometheus-node-exporter", "# Set the command-line arguments\nARGS=\"\"\n");
	CHECK_INT(cd_node_exporters(root, ne, 4), 1);
	CHECK_INT(ne[0].from, CD_NE_UNIT);
	CHECK_STR(ne[0].dir, "/var/lib/prometheus/node-exporter");
	CHECK_STR(ne[0].source, "/lib/systemd/system/prometheus-node-exporter.service");

	/* The operator's ARGS choose another folder. */
	put_in(root, "/etc/default/prometheus-node-exporter",
	       "ARGS=\"--collector.textfile.directory=/srv/textfiles --web.listen-address=:9101\"\n");
	CHECK_INT(cd_node_exporters(root, ne, 4), 1);
	CHECK_STR(ne[0].dir, "/srv/textfiles");

	/* An override in /etc wins over the package's unit; Environment= too. */
	put_in(root, "/etc/systemd/system/node_exporter.service",
	       "[Service]\nEnvironment=\"DIR=/var/lib/node_exporter/textfile_collector\" OTHER=1\n"
	       "ExecStart=/usr/local/bin/node_exporter --collector.textfile.directory=${DIR}\n");
	CHECK_INT(cd_node_exporters(root, ne, 4), 1);
	CHECK_STR(ne[0].source, "/etc/systemd/system/node_exporter.service");
	CHECK_STR(ne[0].dir, "/var/lib/node_exporter/textfile_collector");

	/* A running node_exporter says it best, whatever the units say; a
	 * process that is not node_exporter is not one. */
	put_in(root, "/proc/812/cmdline", "");
	char p[512];
	snprintf(p, sizeof p, "%s/proc/812/cmdline", root);
	FILE *f = fopen(p, "w");
	if (f) {
		static const char cmd[] = "/usr/bin/prometheus-node-exporter\0--collector.textfile.directory\0/run/tf";
		fwrite(cmd, 1, sizeof cmd, f);
		fclose(f);
	}
	put_in(root, "/proc/900/cmdline", "bash");
	put_in(root, "/proc/self/cmdline", "node_exporter");
	CHECK_INT(cd_node_exporters(root, ne, 4), 1);
	CHECK_INT(ne[0].from, CD_NE_PROCESS);
	CHECK_INT(ne[0].pid, 812);
	CHECK_STR(ne[0].dir, "/run/tf");
	unit_rmtree(root);
}

static void test_debian_defaults_alone(void)
{
	char root[256];
	struct cd_node_exporter ne[2];
	unit_tempdir(root, sizeof root, "ne-defaults");
	put_in(root, "/usr/bin/prometheus-node-exporter", "");
	put_in(root, "/etc/default/prometheus-node-exporter", "ARGS='--no-collector.textfile'\n");
	CHECK_INT(cd_node_exporters(root, ne, 2), 1);
	CHECK_INT(ne[0].from, CD_NE_DEFAULTS);
	CHECK(ne[0].disabled && !ne[0].reads);
}

static char *said(const char *path, const struct cd_node_exporter *ne, int n, int *warnings)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	if (!out)
		exit(2);
	*warnings = cd_prom_dest_say(out, "check", path, ne, n);
	fclose(out);
	/* Wrapped for people (a line of a message goes on indented by 2):
	 * one line again, to look for phrases. */
	char *o = buf;
	for (const char *i = buf; *i; i++) {
		if (i[0] == '\n' && i[1] == ' ' && i[2] == ' ') {
			*o++ = ' ';
			i += 2;
		} else {
			*o++ = *i;
		}
	}
	*o = '\0';
	return buf;
}

static void test_said(void)
{
	struct cd_node_exporter ne = { .from = CD_NE_PROCESS, .pid = 812, .source = "/proc/812/cmdline",
		                       .reads = true, .dir = "/tmp" };
	int w;
	char *s = said("/tmp/clockdoctor.prom", &ne, 1, &w);
	CHECK_INT(w, 0);
	CHECK_HAS(s, "metrics to /tmp/clockdoctor.prom, a folder node_exporter reads (pid 812:");
	CHECK_LACKS(s, "warning");
	free(s);
	/* Not .prom, or hidden: never read, even in its folder. */
	s = said("/tmp/x.txt", &ne, 1, &w);
	CHECK_INT(w, 1);
	CHECK_HAS(s, "reads only files named *.prom");
	free(s);
	s = said("/tmp/.x.prom", &ne, 1, &w);
	CHECK_INT(w, 1);
	free(s);
	/* Another folder: said, with the folder it reads. */
	s = said("/var/tmp/clockdoctor.prom", &ne, 1, &w);
	CHECK_INT(w, 1);
	CHECK_HAS(s, "warning: metrics to /var/tmp/clockdoctor.prom, but node_exporter");
	CHECK_HAS(s, "--collector.textfile.directory=/var/tmp");
	free(s);
	/* None found; one reading nothing. */
	s = said("/tmp/c.prom", &ne, 0, &w);
	CHECK_INT(w, 1);
	CHECK_HAS(s, "no node_exporter was found here");
	free(s);
	ne.reads = false;
	ne.disabled = true;
	s = said("/tmp/c.prom", &ne, 1, &w);
	CHECK_INT(w, 1);
	CHECK_HAS(s, "its textfile collector is off");
	free(s);
}

int main(void)
{
	test_args();
	test_split_exec();
	test_found_on_a_root();
	test_debian_defaults_alone();
	test_said();
	return unit_done("nodeexporter");
}
