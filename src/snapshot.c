/*
 * snapshot.c: `clockdoctor snapshot DIR`: save this machine's facts in the
 * layout `check --root DIR` reads, so that someone else can diagnose them.
 *
 * Files are copied verbatim; the two facts that are not files (CPUID and the
 * kernel log) are written in the formats people already produce by hand
 * (`cpuid -r -1` and `dmesg`), so hand-made snapshots and ours are alike.
 * Nothing is measured: a snapshot carries facts, not timings.
 */
#include "commands.h"
#include "probe/probe.h"
#include "util/fsread.h"
#include "util/numarg.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *const files[] = {
	"/sys/devices/system/clocksource/clocksource0/current_clocksource",
	"/sys/devices/system/clocksource/clocksource0/available_clocksource",
	"/proc/cpuinfo",
	"/proc/cmdline",
	"/proc/sys/kernel/osrelease",
	"/proc/sys/kernel/arch",
	"/proc/uptime",
	"/sys/hypervisor/type",
	"/sys/class/dmi/id/sys_vendor",
	"/sys/class/dmi/id/product_name",
	"/etc/os-release",
	"/etc/lsb-release",
	"/etc/redhat-release",
	"/etc/SuSE-release",
	"/etc/debian_version",
};

static bool dir_empty_or_missing(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return errno == ENOENT;
	struct dirent *e;
	bool empty = true;
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
			empty = false;
			break;
		}
	closedir(d);
	return empty;
}

static int save(const char *dir, const char *path, const char *data, size_t len, int *failed)
{
	int rc = cd_write_file(dir, path, data, len);
	if (rc < 0) {
		fprintf(stderr, "clockdoctor snapshot: cannot write %s%s: %s\n", dir, path, strerror(-rc));
		(*failed)++;
	}
	return rc;
}

int cd_cmd_snapshot(int argc, char **argv)
{
	bool force = false;
	const char *dir = NULL;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			printf("usage: clockdoctor snapshot [--force] DIR\n\n"
			       "Saves this machine's clock facts under DIR for `clockdoctor check --root DIR`.\n"
			       "DIR must be empty or missing unless --force is given.\n\n"
			       "exit status: 0 saved (facts this machine lacks are listed), 2 some files\n"
			       "could not be written, 3 bad usage, the folder refused, or the report could\n"
			       "not be written\n\n"
			       "example:\n  clockdoctor snapshot /tmp/snap && tar czf snap.tgz -C /tmp snap\n");
			return cd_report_written("snapshot", 0);
		} else if (strcmp(argv[i], "-f") == 0 || strcmp(argv[i], "--force") == 0) {
			force = true;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			return cd_usage_error("snapshot", "unknown option '%s'", argv[i]);
		} else if (!dir) {
			dir = argv[i];
		} else {
			return cd_usage_error("snapshot", "one folder only");
		}
	}
	if (!dir)
		return cd_usage_error("snapshot", "no folder given: clockdoctor snapshot [--force] DIR");
	/* A file where the folder should be: one refusal, --force or not (it
	 * cannot be written into, and is not ours to replace). */
	struct stat st;
	if (stat(dir, &st) == 0 && !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "clockdoctor snapshot: %s is not a folder: a snapshot is a folder of files; "
		        "name a new or empty folder\n", dir);
		return CD_EXIT_USAGE;
	}
	if (!force && !dir_empty_or_missing(dir)) {
		fprintf(stderr, "clockdoctor snapshot: %s is not empty (use --force to write into it)\n", dir);
		return CD_EXIT_USAGE;
	}
	if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
		fprintf(stderr, "clockdoctor snapshot: cannot create %s: %s\n", dir, strerror(errno));
		return CD_EXIT_USAGE;
	}

	int saved = 0, missing = 0, failed = 0;
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		size_t len;
		int err, trunc;
		char *data = cd_read_file("/", files[i], 4u << 20, &len, &err, &trunc);
		if (!data) {
			fprintf(stderr, "  not saved: %s (%s)\n", files[i], strerror(-err));
			missing++;
			continue;
		}
		if (save(dir, files[i], data, len, &failed) == 0)
			saved++;
		free(data);
	}

	struct cd_cpuid *c = calloc(1, sizeof *c);
	if (c) {
		cd_cpuid_live(c);
		if (c->have) {
			char buf[16384];
			int n = cd_format_cpuid_txt(c, buf, sizeof buf);
			if (n > 0 && (size_t)n < sizeof buf && save(dir, "/cpuid.txt", buf, (size_t)n, &failed) == 0)
				saved++;
		} else {
			fprintf(stderr, "  not saved: cpuid.txt (no CPUID on this CPU)\n");
			missing++;
		}
		free(c);
	}

	size_t len = 0;
	enum cd_klog_source src;
	char why[CD_LINE_MAX] = "";
	char *log = cd_klog_live_text(&len, &src, why, sizeof why);
	if (log) {
		if (save(dir, "/dmesg.txt", log, len, &failed) == 0)
			saved++;
		free(log);
	} else {
		fprintf(stderr, "  not saved: dmesg.txt (%s)\n", why[0] ? why : "kernel log not readable");
		missing++;
	}
	printf("clockdoctor: saved %d files to %s (%d not available)%s\n", saved, dir, missing,
	       failed ? "; some could not be written" : "");
	printf("diagnose it with: clockdoctor check --root %s\n", dir);
	return cd_report_written("snapshot", failed ? CD_EXIT_FAILED : CD_EXIT_OK);
}
