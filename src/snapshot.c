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
 * are never saved.  --root DIR makes the snapshot from an earlier one
 * instead of this machine: a snapshot taken before can be redacted.
 *
 * Root writes here, often into /tmp: DEST is made by this run (0700), or
 * is an existing empty folder of the caller's that nobody else may write
 * (anything else is refused), and every file is created beneath it with
 * O_EXCL|O_NOFOLLOW, so no link planted by another user is written
 * through.  Every source is read beneath its root (util/beneath.h): a link
 * out of DIR is refused and said, never copied.  The kernel log, and any
 * file its source kept from other users, are saved 0600.
 */
#include "commands.h"
#include "probe/probe.h"
#include "util/beneath.h"
#include "util/fsread.h"
#include "util/numarg.h"
#include "util/redact.h"
#include "util/shellquote.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

/* The kernel log: saved 0600, whatever its source. */
#define KERNEL_LOG "/dmesg.txt"
/* What is copied of each file at most (every text is held at once): the
 * log as check reads it, the others as large as a 1024-CPU cpuinfo. */
#define LOG_MAX (64u << 20)
#define FILE_MAX (4u << 20)

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
	/* The TSC verdict `clockdoctor tsc` saved, and the boot it must be of:
	 * measured evidence that check --root weighs (probe/verdictfact.c). */
	{ "/proc/sys/kernel/random/boot_id", false },
	{ "/run/clockdoctor/tsc-verdict", false },
	{ "/proc/uptime", false },
	{ "/sys/hypervisor/type", true },
	{ "/sys/class/dmi/id/sys_vendor", true },
	{ "/sys/class/dmi/id/product_name", true },
	/* a machine's own asset tag identifies it; Azure's is one constant */
	{ "/sys/class/dmi/id/chassis_asset_tag", true },
	{ "/etc/os-release", false },
	{ "/etc/lsb-release", false },
	{ "/etc/redhat-release", false },
	{ "/etc/SuSE-release", false },
	{ "/etc/debian_version", false },
	/* the platform's signs: the device tree's model, where the user stands
	 * (Podman's file names the container and its image) */
	{ "/sys/firmware/devicetree/base/model", false },
	{ "/run/systemd/container", false },
	{ "/.dockerenv", false },
	{ "/run/.containerenv", true },
	/* From an earlier snapshot (--root) only: this machine's are made. */
	{ "/cpuid.txt", false },
	{ "/adjtimex.txt", false },
	{ KERNEL_LOG, true },
};
#define N_FILES (sizeof files / sizeof files[0])
#define N_LIVE_FILES (N_FILES - 3)

/* Whether the open folder fd holds nothing. */
static bool dir_empty(int fd)
{
	int dup_fd = dup(fd);
	DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
	if (!d) {
		if (dup_fd >= 0)
			close(dup_fd);
		return false;
	}
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

/* Where the snapshot goes: DIR, open, and how files are written there. */
struct dest {
	const char *name;        /* DIR as given, for messages */
	int fd;
	bool replace;            /* --force: a file already there is replaced */
	bool restricted;         /* a file only its owner may read was saved */
	bool ours;               /* made by this run, or empty when taken: its mode is ours to set */
};

/* The kernel log, and what its source kept from other users, only the
 * owner may read. */
#define MODE_OPEN 0644
#define MODE_OWNER 0600

static int save(struct dest *to, const char *path, const char *data, size_t len, mode_t mode, int *failed)
{
	int rc = cd_write_beneath(to->fd, path, data, len, mode, to->replace);
	if (rc < 0) {
		fprintf(stderr, "clockdoctor snapshot: cannot write %s%s: %s\n", to->name, path,
		        rc == -EEXIST ? "something is already there (a file or link made after the folder was "
		                        "checked): not written through"
		                      : cd_beneath_strerror(rc));
		(*failed)++;
	} else if (mode == MODE_OWNER) {
		to->restricted = true;
	}
	return rc;
}

/* Saved, redacted first when red is not NULL and the file may identify
 * the machine. */
static int save_maybe_redacted(struct dest *to, const char *path, const char *data, size_t len, mode_t mode,
                               struct cd_redact *red, bool may_identify, int *failed)
{
	if (!red || !may_identify)
		return save(to, path, data, len, mode, failed);
	size_t n;
	char *clean = cd_redact_text(red, data, len, &n);
	if (!clean) {
		fprintf(stderr, "clockdoctor snapshot: out of memory redacting %s: not saved\n", path);
		(*failed)++;
		return -ENOMEM;
	}
	int rc = save(to, path, clean, n, mode, failed);
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
	fprintf(out, "usage: clockdoctor snapshot [--force] [--redact] [--root DIR] DEST\n\n"
	        "Saves this machine's clock facts under DEST, for `clockdoctor check --root`.\n"
	        "DEST is made (0700); an existing one must be an empty folder of yours\n"
	        "that no other user may write (not empty: --force).\n\n"
	        "  -f, --force      write into a DEST that is not empty\n"
	        "  -R, --redact     replace host names, IP and MAC addresses, serial numbers,\n"
	        "                   UUIDs, user names and e-mail addresses in the kernel log,\n"
	        "                   the command line, cpuinfo and DMI with <host>, <ipv4>, ...\n"
	        "                   (for a public report)\n"
	        "  -r, --root DIR   copy the earlier snapshot in DIR instead of this machine\n\n"
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

static int snapshot_option(void *ctx, int ch, char *arg)
{
	struct snapshot_opts *o = ctx;
	switch (ch) {
	case 'f': o->force = true; break;
	case 'R': o->redact = true; break;
	case 'r': o->src = arg; break;
	}
	return -1;
}

/* Options anywhere among the operands.  Returns -1 to go on, else the exit
 * status. */
static int parse_args(int argc, char **argv, struct snapshot_opts *o)
{
	static const struct option longs[] = {
		{ "force", no_argument, NULL, 'f' }, { "redact", no_argument, NULL, 'R' },
		{ "root", required_argument, NULL, 'r' },
		{ NULL, 0, NULL, 0 },
	};
	static const struct cd_options snapshot_options = { "snapshot", "fRr:", longs, snapshot_usage,
	                                                    snapshot_option, true };
	int rc = cd_parse_options(&snapshot_options, argc, argv, o);
	if (rc >= 0)
		return rc;
	if (optind < argc)
		o->dir = argv[optind];
	if (optind + 1 < argc)
		return cd_usage_error("snapshot", "one folder only");
	if (!o->dir)
		return cd_usage_error("snapshot", "no folder given: clockdoctor snapshot [--force] [--redact] "
		                      "[--root DIR] DEST");
	if (o->src) {
		char a[PATH_MAX], b[PATH_MAX];
		rc = cd_folder_arg("snapshot", "--root", o->src);
		if (rc >= 0)
			return rc;
		if (realpath(o->src, a) && realpath(o->dir, b) && strcmp(a, b) == 0)
			return cd_usage_error("snapshot", "--root and DEST are the same folder");
	}
	if (strlen(o->dir) >= PATH_MAX)
		return cd_usage_error("snapshot", "the folder's name is %zu bytes long, more than the %d a path may have",
		                      strlen(o->dir), PATH_MAX - 1);
	return -1;
}

/* DIR made by this run (0700), or an existing one this run can trust: a
 * real folder (not a link), the caller's (or root's), writable by nobody
 * else, and empty (unless --force).  Another user's folder, or one they
 * may write, could have links planted in it after any check.  Returns -1
 * with to->fd open, else the exit status. */
static int open_folder(const struct snapshot_opts *o, struct dest *to)
{
	to->name = o->dir;
	to->replace = o->force;
	bool made = mkdir(o->dir, 0700) == 0;
	if (!made && errno != EEXIST) {
		fprintf(stderr, "clockdoctor snapshot: cannot create %s: %s\n", o->dir, strerror(errno));
		return CD_EXIT_USAGE;
	}
	to->fd = open(o->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (to->fd < 0) {
		int e = errno;
		struct stat lst;
		if (lstat(o->dir, &lst) == 0 && !S_ISDIR(lst.st_mode))
			fprintf(stderr, "clockdoctor snapshot: %s is not a folder%s: a snapshot is a folder of files; "
			        "name a new or empty folder\n", o->dir, S_ISLNK(lst.st_mode) ? " but a symbolic link" : "");
		else
			fprintf(stderr, "clockdoctor snapshot: cannot open %s: %s\n", o->dir, strerror(e));
		return CD_EXIT_USAGE;
	}
	const char *why = NULL;
	if (fstat(to->fd, &st) != 0)
		why = strerror(errno);
	else if (cd_is_process_root(to->fd))
		why = "it is this machine's root folder, whose files a snapshot would replace";
	else if (st.st_uid != geteuid() && st.st_uid != 0)
		why = "it belongs to another user, who could plant links in it";
	else if (st.st_mode & 022)
		why = "other users may write in it, and could plant links there";
	/* even a folder this run made is looked into: in a folder others
	 * may write, another could have been renamed into its place */
	else if (!(to->ours = dir_empty(to->fd)) && !o->force)
		why = "it is not empty (use --force to write into it)";
	if (why) {
		fprintf(stderr, "clockdoctor snapshot: %s refused: %s; name a new folder, which snapshot makes "
		        "itself\n", o->dir, why);
		close(to->fd);
		to->fd = -1;
		return CD_EXIT_USAGE;
	}
	return -1;
}

/* A folder that holds a file only its owner may read is not listed by
 * others either; but a folder that held other things before (--force:
 * /srv/reports, or /etc typed by mistake) keeps its mode, which other
 * programs and users rely on: the file itself is private. */
static void close_folder(struct dest *to)
{
	struct stat st;
	if (to->restricted && to->ours && fstat(to->fd, &st) == 0 && (st.st_mode & 007))
		fchmod(to->fd, st.st_mode & 07770);
	close(to->fd);
}

/* What was saved, what this machine (or DIR) lacks, what could not be
 * written. */
struct tally {
	int saved, missing, failed;
};

/* The files of the table and the kernel log: every text read before any
 * is saved, so that the names the kernel log states are redacted
 * everywhere. */
static void save_texts(const struct snapshot_opts *o, struct dest *to, struct cd_redact *red, struct tally *n)
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
	mode_t modes[N_FILES];
	int srcfd = cd_root_open(o->src ? o->src : "/");
	for (size_t i = 0; i < n_files; i++) {
		int err = srcfd, trunc;
		struct stat st;
		bool is_log = strcmp(files[i].path, KERNEL_LOG) == 0;
		if (srcfd >= 0)
			texts[i] = cd_read_beneath(srcfd, files[i].path, is_log ? LOG_MAX : FILE_MAX, &lens[i], &err,
			                           &trunc, &st);
		if (!texts[i]) {
			fprintf(stderr, "  not saved: %s (%s)\n", files[i].path, cd_beneath_strerror(err));
			n->missing++;
			continue;
		}
		/* what its source kept from other users stays so */
		modes[i] = is_log || !(st.st_mode & S_IROTH) ? MODE_OWNER : MODE_OPEN;
		if (red && files[i].may_identify)
			cd_redact_learn(red, texts[i], lens[i]);
	}
	if (srcfd >= 0)
		close(srcfd);
	for (size_t i = 0; i < n_files; i++)
		if (texts[i] && save_maybe_redacted(to, files[i].path, texts[i], lens[i], modes[i], red,
		                                    files[i].may_identify, &n->failed) == 0)
			n->saved++;
	for (size_t i = 0; i < n_files; i++)
		free(texts[i]);
	/* the kernel log: root's alone where dmesg_restrict keeps it so */
	if (log && save_maybe_redacted(to, KERNEL_LOG, log, log_len, MODE_OWNER, red, true, &n->failed) == 0)
		n->saved++;
	free(log);
}

/* Init's environment, of which check reads only container= (LXC and
 * others name the container there when no systemd inside writes
 * /run/systemd/container): saved as that one variable, never the rest,
 * which may hold the container's secrets; root's alone, as its source. */
static void save_init_container(const struct snapshot_opts *o, struct dest *to, struct tally *n)
{
	size_t len;
	int err, trunc;
	char *env = cd_read_file(o->src ? o->src : "/", "/proc/1/environ", 65536, &len, &err, &trunc);
	char value[CD_NAME_MAX], kept[CD_NAME_MAX + 16];
	if (env && cd_platform_container_from_environ(env, len, value, sizeof value)) {
		int k = snprintf(kept, sizeof kept, "container=%s", value);
		if (k > 0 && (size_t)k < sizeof kept &&
		    save(to, "/proc/1/environ", kept, (size_t)k + 1, MODE_OWNER, &n->failed) == 0)
			n->saved++;
	}
	free(env);
}

/* This machine's facts that are not files: CPUID as `cpuid -r -1` writes
 * it, the NTP state as `adjtimex --print` does. */
static void save_made(struct dest *to, struct tally *n)
{
	struct cd_cpuid *c = calloc(1, sizeof *c);
	if (c) {
		cd_cpuid_live(c);
		if (c->have) {
			char buf[16384];
			int len = cd_format_cpuid_txt(c, buf, sizeof buf);
			if (len > 0 && (size_t)len < sizeof buf && save(to, "/cpuid.txt", buf, (size_t)len, MODE_OPEN, &n->failed) == 0)
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
		if (save(to, "/adjtimex.txt", ntp_txt, (size_t)ntp_len, MODE_OPEN, &n->failed) == 0)
			n->saved++;
	} else {
		fprintf(stderr, "  not saved: adjtimex.txt (adjtimex(2) refused)\n");
		n->missing++;
	}
}

/* --redact: the note that says so in the snapshot, and what was replaced. */
static void end_redaction(struct dest *to, const struct cd_redact *red, struct tally *n)
{
	static const char note[] =
		"This snapshot was redacted by `clockdoctor snapshot --redact`: in the kernel log, the\n"
		"command line, the kernel release, /proc/cpuinfo and the DMI strings, host names read\n"
		"<host>, IPv4 and IPv6 addresses <ipv4> and <ipv6>, MAC addresses <mac>, UUIDs <uuid>,\n"
		"serial numbers (disks' among them) <serial>, e-mail addresses <email>, user names in\n"
		"/home/ <user>, an NFS root's folder <path>.\n";
	if (save(to, "/REDACTED.txt", note, sizeof note - 1, MODE_OPEN, &n->failed) == 0)
		n->saved++;
	say_redacted(red);
}

int cd_cmd_snapshot(int argc, char **argv)
{
	struct snapshot_opts o = { 0 };
	int rc = parse_args(argc, argv, &o);
	struct dest to = { .fd = -1 };
	if (rc >= 0 || (rc = open_folder(&o, &to)) >= 0)
		return rc;
	struct cd_redact *red = NULL;
	if (o.redact) {
		red = calloc(1, sizeof *red);
		if (!red) {
			fprintf(stderr, "clockdoctor snapshot: out of memory\n");
			close(to.fd);
			return CD_EXIT_FAILED;
		}
		learn_names(red, o.src);
	}
	struct tally n = { 0 };
	save_texts(&o, &to, red, &n);
	save_init_container(&o, &to, &n);
	if (!o.src)
		save_made(&to, &n);
	if (red) {
		end_redaction(&to, red, &n);
		free(red);
	}
	close_folder(&to);
	printf("clockdoctor: saved %d files to %s (%d not available)%s\n", n.saved, o.dir, n.missing,
	       n.failed ? "; some could not be written" : "");
	char word[PATH_MAX * 4 + 3];
	printf("diagnose it with: clockdoctor check --root %s\n", cd_shell_word_or(word, sizeof word, o.dir, "DEST"));
	return cd_report_written("snapshot", n.failed ? CD_EXIT_FAILED : CD_EXIT_OK);
}
