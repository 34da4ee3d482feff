/* SPDX-License-Identifier: MIT */
/* Unit tests of fix's record: the text it writes, and the parser that
 * refuses anything it would not have written. */
#include "persist/bootcfg_impl.h"
#include "unit.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_fnv(void)
{
	/* The published FNV-1a 64 test values. */
	CHECK(cd_fnv1a64("", 0) == 0xcbf29ce484222325ull);
	CHECK(cd_fnv1a64("a", 1) == 0xaf63dc4c8601ec8cull);
	CHECK(cd_fnv1a64("foobar", 6) == 0x85944171f73967e8ull);
}

static void test_paths(void)
{
	CHECK(cd_record_path_ok("/etc/default/grub.d/90-clockdoctor-tsc-reliable.cfg"));
	CHECK(cd_record_path_ok("/var"));
	CHECK(cd_record_path_ok("/a/.hidden"));
	static const char *bad[] = { "", "/", "etc/x", "/etc/../x", "/..", "/etc/..", "/./x", "/a//b",
	                             "/a/", "/a b", "/a\tb", "/a\nb", "/x/." };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		CHECK(!cd_record_path_ok(bad[i]));
}

/* The drop-in fix writes for token, as a record's file line holds it. */
static struct cd_change file_change(const char *token, bool add)
{
	struct cd_dropin d;
	(add ? cd_dropin_add : cd_dropin_remove)(&d, token);
	struct cd_change c = { .kind = CD_CH_FILE, .mode = 0644, .size = strlen(d.content),
	                       .hash = cd_fnv1a64(d.content, strlen(d.content)), .add = add };
	snprintf(c.path, sizeof c.path, "%s", d.path);
	snprintf(c.token, sizeof c.token, "%s", token);
	return c;
}

static void test_roundtrip(void)
{
	struct cd_record r = { .created = 1767225600, .family = "debian", .regen = "update-grub" };
	struct cd_change f = file_change("tsc=reliable", true);
	r.ch[r.n++] = (struct cd_change){ .kind = CD_CH_MKDIR, .path = "/var/lib/clockdoctor" };
	r.ch[r.n] = (struct cd_change){ .kind = CD_CH_REPLACED, .mode = 0600, .size = 21, .hash = 0x0123456789abcdefull };
	snprintf(r.ch[r.n].path, sizeof r.ch[r.n].path, "%s", f.path);
	snprintf(r.ch[r.n++].backup, sizeof f.path, "%.200s.clockdoctor-backup", f.path);
	r.ch[r.n++] = f;
	char text[4096], line[1024];
	int len = cd_record_format(&r, text, sizeof text);
	CHECK(len > 0);
	CHECK(strstr(text, "clockdoctor fix record 1\ncreated 1767225600\nfamily debian\nstate pending\n"
	                   "regen update-grub\n") == text);
	snprintf(line, sizeof line, "\nfile %s mode=0644 size=%llu fnv=%016llx add=tsc=reliable\n", f.path, f.size,
	         (unsigned long long)f.hash);
	CHECK(strstr(text, line));
	snprintf(line, sizeof line, "\nreplaced %s backup=%s.clockdoctor-backup mode=0600 size=21 fnv=0123456789abcdef\n",
	         f.path, f.path);
	CHECK(strstr(text, line));
	struct cd_record back;
	char err[200];
	CHECK_INT(cd_record_parse(text, &back, err, sizeof err), 0);
	CHECK_INT(back.n, 3);
	CHECK(back.created == 1767225600 && !back.done);
	CHECK_STR(back.family, "debian");
	CHECK_STR(back.regen, "update-grub");
	CHECK_INT(back.ch[2].kind, CD_CH_FILE);
	CHECK(back.ch[2].hash == f.hash);
	CHECK(back.ch[2].size == f.size && back.ch[2].mode == 0644 && back.ch[2].add);
	CHECK_STR(back.ch[2].token, "tsc=reliable");
	CHECK(back.ch[1].hash == 0x0123456789abcdefull && back.ch[1].size == 21 && back.ch[1].mode == 0600);
	r.done = true;
	CHECK(cd_record_format(&r, text, sizeof text) > 0);
	CHECK_INT(cd_record_parse(text, &back, err, sizeof err), 0);
	CHECK(back.done);

	/* The Red Hat family's lines; a record without a state line (an earlier
	 * version's) is done. */
	CHECK_INT(cd_record_parse("clockdoctor fix record 1\ncreated 7\nfamily redhat\n"
	                          "mkdir /var/lib/clockdoctor\nbackup /var/lib/clockdoctor/backup-7\n"
	                          "grubby remove=clocksource=acpi_pm\n", &back, err, sizeof err), 0);
	CHECK(back.done);
	CHECK_INT(back.ch[1].kind, CD_CH_BACKUP);
	CHECK(!back.ch[2].add);
	CHECK_STR(back.ch[2].token, "clocksource=acpi_pm");
	/* Too small a buffer is an error, never a cut record. */
	CHECK_INT(cd_record_format(&r, text, 40), -ENOSPC);
}

/* What fix never writes, though well formed: refused, with why. */
static void test_not_fixs(void)
{
	struct cd_change f = file_change("tsc=reliable", true);
	char good_file[600], text[2048], err[200];
	snprintf(good_file, sizeof good_file, "file %s mode=0644 size=%llu fnv=%016llx add=tsc=reliable\n", f.path,
	         f.size, (unsigned long long)f.hash);
	const char *head = "clockdoctor fix record 1\ncreated 5\nfamily debian\n";
	struct { const char *lines; const char *why; } bad[] = {
		{ "mkdir /etc\nbackup /etc\n", "not the backup folder" },                 /* deleted TREE/etc */
		{ "mkdir /usr\n", "a folder fix does not create" },
		{ "file /etc/default/grub mode=0644 size=1 fnv=0123456789abcdef add=tsc=reliable\n",
		  "not the drop-in fix writes" },
		{ "file /etc/default/grub.d/90-clockdoctor-tsc-reliable.cfg mode=0644 size=1 fnv=0123456789abcdef "
		  "add=tsc=reliable\n", "not the content fix writes" },
		{ "replaced /etc/default/grub.d/90-clockdoctor-tsc-reliable.cfg backup=/elsewhere mode=0644 size=1 "
		  "fnv=0123456789abcdef\n%s", "own name" },
		{ "replaced /etc/default/grub.d/x.cfg backup=/etc/default/grub.d/x.cfg.clockdoctor-backup mode=0644 "
		  "size=1 fnv=0123456789abcdef\n", "set aside for no drop-in" },
		{ "replaced /etc/default/grub.d/90-clockdoctor-tsc-reliable.cfg backup=/etc/default/grub.d/"
		  "90-clockdoctor-tsc-reliable.cfg.clockdoctor-backup\n%s", "needs backup, mode, size and fnv" },
		{ "grubby add=tsc=reliable\n", "grubby in a record of Debian" },
		{ "state maybe\n", "unknown state" },
	};
	struct cd_record r;
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char lines[1200];
		snprintf(lines, sizeof lines, bad[i].lines, good_file);
		snprintf(text, sizeof text, "%s%s", head, lines);
		CHECK_INT(cd_record_parse(text, &r, err, sizeof err), -EINVAL);
		if (!strstr(err, bad[i].why))
			fprintf(stderr, "  %zu: '%s' lacks '%s'\n", i, err, bad[i].why);
		CHECK(strstr(err, bad[i].why) != NULL);
	}
	snprintf(text, sizeof text, "%s%s", head, good_file);
	CHECK_INT(cd_record_parse(text, &r, err, sizeof err), 0);
	snprintf(text, sizeof text, "clockdoctor fix record 1\ncreated 5\nfamily redhat\nbackup /var/lib/clockdoctor/backup-6\n");
	CHECK_INT(cd_record_parse(text, &r, err, sizeof err), -EINVAL);
}

static void test_refused(void)
{
	static const char *bad[] = {
		"",
		"clockdoctor fix record 2\ncreated 1\nfamily debian\n",
		"clockdoctor fix record 1\nfamily debian\n",                       /* no created */
		"clockdoctor fix record 1\ncreated 1\n",                           /* no family */
		"clockdoctor fix record 1\ncreated 1\nfamily suse\n",
		"clockdoctor fix record 1\ncreated x\nfamily debian\n",
		"clockdoctor fix record 1\ncreated 1\nfamily debian\nregen rm -rf /\n",
		"clockdoctor fix record 1\ncreated 1\nfamily debian\nmkdir /../../etc\n",
		"clockdoctor fix record 1\ncreated 1\nfamily debian\nmkdir etc\n",
		"clockdoctor fix record 1\ncreated 1\nfamily debian\nmkdir /etc mode=0644\n",
		"clockdoctor fix record 1\ncreated 1\nfamily debian\nfile /x mode=0644 size=1 fnv=0123456789abcdef\n",
		"clockdoctor fix record 1\ncreated 1\nfamily debian\nfile /x mode=0644 size=1 fnv=12 add=a\n",
		"clockdoctor fix record 1\ncreated 1\nfamily debian\nfile /x mode=9 size=1 fnv=0123456789abcdef add=a\n",
		"clockdoctor fix record 1\ncreated 1\nfamily debian\nfile /x mode=0644 size=-1 fnv=0123456789abcdef add=a\n",
		"clockdoctor fix record 1\ncreated 1\nfamily debian\ngrubby add=$(reboot)\n",
		"clockdoctor fix record 1\ncreated 1\nfamily debian\ngrubby\n",
		"clockdoctor fix record 1\ncreated 1\nfamily debian\nreplaced /x\n",
		"clockdoctor fix record 1\ncreated 1\nfamily debian\nreplaced /x backup=/../y\n",
		"clockdoctor fix record 1\ncreated 1\nfamily debian\nrmrf /x\n",
		"clockdoctor fix record 1\ncreated 1\nfamily debian\nmkdir /x colour=red\n",
	};
	struct cd_record r;
	char err[200];
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		int rc = cd_record_parse(bad[i], &r, err, sizeof err);
		CHECK_INT(rc, -EINVAL);
		if (rc != -EINVAL)
			fprintf(stderr, "  accepted: %s\n", bad[i]);
		CHECK(err[0] != '\0');
	}
	/* Too many changes. */
	char big[8192] = "clockdoctor fix record 1\ncreated 1\nfamily debian\n";
	for (int i = 0; i <= CD_RECORD_MAX_CHANGES; i++)
		snprintf(big + strlen(big), sizeof big - strlen(big), "mkdir /var\n");
	CHECK_INT(cd_record_parse(big, &r, err, sizeof err), -EINVAL);
	CHECK(strstr(err, "too many") != NULL);
}

int main(void)
{
	test_fnv();
	test_paths();
	test_roundtrip();
	test_not_fixs();
	test_refused();
	return unit_done("record");
}
