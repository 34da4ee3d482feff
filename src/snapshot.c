/* SPDX-License-Identifier: MIT */
/*
 * snapshot.c: `clockdoctor snapshot DIR`: save this machine's facts in the
 * layout `check --root DIR` reads, so that someone else can diagnose them.
 *
 * Files are copied verbatim; the three facts that are not files (CPUID, the
 * kernel log and the NTP state) are written in the formats people already
 * produce by hand (`cpuid -r -1`, `dmesg` and `adjtimex --print`), so
 * hand-made snapshots and ours are alike.
 * Nothing is measured: a snapshot carries facts, not timings.
 *
 * --redact takes what identifies the machine out of the files that can
 * hold it (the kernel log, the command line, the kernel release, DMI and
 * hypervisor strings: util/redact.c), for a public bug report; the others
 * hold no identifier and are left byte for byte (os-release keeps ID=debian
 * even on a host named debian, which is Debian's default name).  DMI's
 * serial numbers and UUIDs (product_serial, product_uuid, board_serial)
 * are never saved.  --root SRC makes the snapshot from an earlier one
 * instead of this machine: a snapshot taken before can be redacted.
 */
#include "commands.h"
#include "probe/probe.h"
#include "util/fsread.h"
#include "util/numarg.h"
#include "util/redact.h"
#include "util/shellquote.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>

static const struct {
	const char *path;
	bool may_identify;       /* passed through the redaction under --redact */
} files[] = {
	{ "/sys/devices/system/clocksource/clocksource0/current_clocksource", false },
	{ "/sys/devices/system/clocksource/clocksource0/available_clocksource", false },
	{ "/proc/cpuinfo", true },      /* a Raspberry Pi's "Serial" */
	{ "/proc/cmdline", true },
	{ "/proc/sys/kernel/osrelease", true },
	{ "/proc/sys/kernel/arch", false },
	{ "/proc/uptime", false },
	{ "/sys/hypervisor/type", true },
	{ "/sys/class/dmi/id/sys_vendor", true },
	{ "/sys/class/dmi/id/product_name", true },
	{ "/etc/os-release", false },
	{ "/etc/lsb-release", false },
	{ "/etc/redhat-release", false },
	{ "/etc/SuSE-release", false },
	{ "/etc/debian_version", false },
	/* From an earlier snapshot (--root) only: this machine's are made. */
	{ "/cpuid.txt", false },
	{ "/adjtimex.txt", false },
	{ "/dmesg.txt", true },
};
#define N_FILES (sizeof files / sizeof files[0])
#define N_LIVE_FILES (N_FILES - 3)

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

/* Saved, redacted first when red is not NULL and the file may identify
 * the machine. */
static int save_maybe_redacted(const char *dir, const char *path, const char *data, size_t len,
                               struct cd_redact *red, bool may_identify, int *failed)
{
	if (!red || !may_identify)
		return save(dir, path, data, len, failed);
	size_t n;
	char *clean = cd_redact_text(red, data, len, &n);
	if (!clean) {
		fprintf(stderr, "clockdoctor snapshot: out of memory redacting %s: not saved\n", path);
		(*failed)++;
		return -ENOMEM;
	}
	int rc = save(dir, path, clean, n, failed);
	free(clean);
	return rc;
}

/* This machine's names (or those an earlier snapshot holds) and the names
 * its kernel log states, for --redact. */
static void learn_names(struct cd_redact *red, const char *src)
{
	char buf[CD_REDACT_NAME_MAX];
	if (!src) {
		struct utsname u;
		if (uname(&u) == 0)
			cd_redact_add_name(red, u.nodename);
	}
	static const char *const named[] = { "/proc/sys/kernel/hostname", "/proc/sys/kernel/domainname",
	                                     "/etc/hostname" };
	for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
		if (cd_read_small(src ? src : "/", named[i], buf, sizeof buf) > 0)
			cd_redact_add_name(red, buf);
}

static void say_redacted(const struct cd_redact *red)
{
	static const char *const what[CD_REDACT_N] = {
		"host names", "IPv4 addresses", "IPv6 addresses", "MAC addresses", "UUIDs", "serial numbers",
		"e-mail addresses", "user names", "NFS root folders",
	};
	unsigned long all = 0;
	printf("redacted:");
	for (int k = 0; k < CD_REDACT_N; k++)
		if (red->count[k]) {
			printf("%s %s %lu (now %s)", all ? "," : "", what[k], red->count[k], cd_redact_marker(k));
			all += red->count[k];
		}
	printf("%s\n", all ? "" : " nothing that identifies the machine was found");
}

static void snapshot_usage(FILE *out)
{
	fprintf(out, "usage: clockdoctor snapshot [--force] [--redact] [--root SRC] DIR\n\n"
	        "Saves this machine's clock facts under DIR for `clockdoctor check --root DIR`.\n"
	        "DIR must be empty or missing unless --force is given.\n\n"
	        "  -f, --force      write into a DIR that is not empty\n"
	        "  -R, --redact     replace host names, IP and MAC addresses, serial numbers,\n"
	        "                   UUIDs, user names and e-mail addresses in the kernel log,\n"
	        "                   the command line, cpuinfo and DMI with <host>, <ipv4>, ...\n"
	        "                   (for a public report)\n"
	        "  -r, --root SRC   copy an earlier snapshot instead of this machine\n\n"
	        "exit status: 0 saved (facts this machine lacks are listed), 2 some files\n"
	        "could not be written, 3 bad usage, the folder refused, or the report could\n"
	        "not be written\n\n"
	        "examples:\n  clockdoctor snapshot /tmp/snap && tar czf snap.tgz -C /tmp snap\n"
	        "  clockdoctor snapshot --redact /tmp/public-snap\n"
	        "  clockdoctor snapshot --redact --root ./snap-of-db1 ./snap-public\n");
}

struct snapshot_opts {
	bool force, redact;
	const char *dir;
	const char *src;           /* --root: NULL, this machine */
};

/* Options anywhere among the operands, each one word (no getopt: "-fR"
 * is no option).  Returns -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, struct snapshot_opts *o)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			snapshot_usage(stdout);
			return cd_report_written("snapshot", 0);
		} else if (strcmp(argv[i], "-f") == 0 || strcmp(argv[i], "--force") == 0) {
			o->force = true;
		} else if (strcmp(argv[i], "-R") == 0 || strcmp(argv[i], "--redact") == 0) {
			o->redact = true;
		} else if (strcmp(argv[i], "-r") == 0 || strcmp(argv[i], "--root") == 0) {
			if (i + 1 >= argc)
				return cd_usage_error("snapshot", "%s takes a snapshot folder", argv[i]);
			o->src = argv[++i];
		} else if (argv[i][0] == '-' && argv[i][1]) {
			return cd_usage_error("snapshot", "unknown option '%s'", argv[i]);
		} else if (!o->dir) {
			o->dir = argv[i];
		} else {
			return cd_usage_error("snapshot", "one folder only");
		}
	}
	if (!o->dir)
		return cd_usage_error("snapshot", "no folder given: clockdoctor snapshot [--force] [--redact] "
		                      "[--root SRC] DIR");
	if (o->src) {
		char a[PATH_MAX], b[PATH_MAX];
		int rc = cd_folder_arg("snapshot", "--root", o->src);
		if (rc >= 0)
			return rc;
		if (realpath(o->src, a) && realpath(o->dir, b) && strcmp(a, b) == 0)
			return cd_usage_error("snapshot", "--root and DIR are the same folder");
	}
	return -1;
}

/* DIR, new or empty (or any folder with --force), created.  Returns -1 to
 * go on, else the exit status. */
static int make_folder(const struct snapshot_opts *o)
{
	/* A file where the folder should be: one refusal, --force or not (it
	 * cannot be written into, and is not ours to replace). */
	struct stat st;
	if (stat(o->dir, &st) == 0 && !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "clockdoctor snapshot: %s is not a folder: a snapshot is a folder of files; "
		        "name a new or empty folder\n", o->dir);
		return CD_EXIT_USAGE;
	}
	if (!o->force && !dir_empty_or_missing(o->dir)) {
		fprintf(stderr, "clockdoctor snapshot: %s is not empty (use --force to write into it)\n", o->dir);
		return CD_EXIT_USAGE;
	}
	if (mkdir(o->dir, 0755) != 0 && errno != EEXIST) {
		fprintf(stderr, "clockdoctor snapshot: cannot create %s: %s\n", o->dir, strerror(errno));
		return CD_EXIT_USAGE;
	}
	return -1;
}

/* What was saved, what this machine (or SRC) lacks, what could not be
 * written. */
struct tally {
	int saved, missing, failed;
};

/* The files of the table and the kernel log: every text read before any
 * is saved, so that the names the kernel log states are redacted
 * everywhere. */
static void save_texts(const struct snapshot_opts *o, struct cd_redact *red, struct tally *n)
{
	size_t log_len = 0;
	char *log = NULL;
	if (!o->src) {
		enum cd_klog_source klog_src;
		char why[CD_LINE_MAX] = "";
		log = cd_klog_live_text(&log_len, &klog_src, why, sizeof why);
		if (!log) {
			fprintf(stderr, "  not saved: dmesg.txt (%s)\n", why[0] ? why : "kernel log not readable");
			n->missing++;
		} else if (red) {
			cd_redact_learn(red, log, log_len);
		}
	}
	size_t n_files = o->src ? N_FILES : N_LIVE_FILES;
	char *texts[N_FILES] = { NULL };
	size_t lens[N_FILES] = { 0 };
	for (size_t i = 0; i < n_files; i++) {
		int err, trunc;
		texts[i] = cd_read_file(o->src ? o->src : "/", files[i].path, 64u << 20, &lens[i], &err, &trunc);
		if (!texts[i]) {
			fprintf(stderr, "  not saved: %s (%s)\n", files[i].path, strerror(-err));
			n->missing++;
		} else if (red && files[i].may_identify) {
			cd_redact_learn(red, texts[i], lens[i]);
		}
	}
	for (size_t i = 0; i < n_files; i++)
		if (texts[i] && save_maybe_redacted(o->dir, files[i].path, texts[i], lens[i], red, files[i].may_identify,
		                                    &n->failed) == 0)
			n->saved++;
	for (size_t i = 0; i < n_files; i++)
		free(texts[i]);
	if (log && save_maybe_redacted(o->dir, "/dmesg.txt", log, log_len, red, true, &n->failed) == 0)
		n->saved++;
	free(log);
}

/* This machine's facts that are not files: CPUID as `cpuid -r -1` writes
 * it, the NTP state as `adjtimex --print` does. */
static void save_made(const char *dir, struct tally *n)
{
	struct cd_cpuid *c = calloc(1, sizeof *c);
	if (c) {
		cd_cpuid_live(c);
		if (c->have) {
			char buf[16384];
			int len = cd_format_cpuid_txt(c, buf, sizeof buf);
			if (len > 0 && (size_t)len < sizeof buf && save(dir, "/cpuid.txt", buf, (size_t)len, &n->failed) == 0)
				n->saved++;
		} else {
			fprintf(stderr, "  not saved: cpuid.txt (no CPUID on this CPU)\n");
			n->missing++;
		}
		free(c);
	}
	struct cd_ntp ntp;
	cd_ntp_live(&ntp);
	char ntp_txt[512];
	int ntp_len = cd_format_adjtimex_txt(&ntp, ntp_txt, sizeof ntp_txt);
	if (ntp_len > 0) {
		if (save(dir, "/adjtimex.txt", ntp_txt, (size_t)ntp_len, &n->failed) == 0)
			n->saved++;
	} else {
		fprintf(stderr, "  not saved: adjtimex.txt (adjtimex(2) refused)\n");
		n->missing++;
	}
}

/* --redact: the note that says so in the snapshot, and what was replaced. */
static void end_redaction(const char *dir, const struct cd_redact *red, struct tally *n)
{
	static const char note[] =
		"This snapshot was redacted by `clockdoctor snapshot --redact`: in the kernel log, the\n"
		"command line, the kernel release, /proc/cpuinfo and the DMI strings, host names read\n"
		"<host>, IPv4 and IPv6 addresses <ipv4> and <ipv6>, MAC addresses <mac>, UUIDs <uuid>,\n"
		"serial numbers (disks' among them) <serial>, e-mail addresses <email>, user names in\n"
		"/home/ <user>, an NFS root's folder <path>.\n";
	if (save(dir, "/REDACTED.txt", note, sizeof note - 1, &n->failed) == 0)
		n->saved++;
	say_redacted(red);
}

int cd_cmd_snapshot(int argc, char **argv)
{
	struct snapshot_opts o = { 0 };
	int rc = parse_args(argc, argv, &o);
	if (rc >= 0 || (rc = make_folder(&o)) >= 0)
		return rc;
	struct cd_redact *red = NULL;
	if (o.redact) {
		red = calloc(1, sizeof *red);
		if (!red) {
			fprintf(stderr, "clockdoctor snapshot: out of memory\n");
			return CD_EXIT_FAILED;
		}
		learn_names(red, o.src);
	}
	struct tally n = { 0 };
	save_texts(&o, red, &n);
	if (!o.src)
		save_made(o.dir, &n);
	if (red) {
		end_redaction(o.dir, red, &n);
		free(red);
	}
	printf("clockdoctor: saved %d files to %s (%d not available)%s\n", n.saved, o.dir, n.missing,
	       n.failed ? "; some could not be written" : "");
	char word[PATH_MAX * 4 + 3];
	printf("diagnose it with: clockdoctor check --root %s\n", cd_shell_word_or(word, sizeof word, o.dir, "DIR"));
	return cd_report_written("snapshot", n.failed ? CD_EXIT_FAILED : CD_EXIT_OK);
}
