/* SPDX-License-Identifier: MIT */
/* Unit tests of fix's record: the text it writes, and the parser that
 * refuses anything it would not have written. */
#include "persist/persist.h"
#include "unit.h"

#include <errno.h>
#include <stdlib.h>

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

static void test_roundtrip(void)
{
	struct cd_record r = { .created = 1767225600, .family = "debian", .regen = "update-grub" };
	r.ch[r.n++] = (struct cd_change){ .kind = CD_CH_MKDIR, .path = "/var/lib/clockdoctor" };
	r.ch[r.n++] = (struct cd_change){ .kind = CD_CH_REPLACED, .path = "/etc/default/grub.d/a.cfg",
	                                  .backup = "/etc/default/grub.d/a.cfg.clockdoctor-backup" };
	r.ch[r.n++] = (struct cd_change){ .kind = CD_CH_FILE, .path = "/etc/default/grub.d/a.cfg",
	                                  .mode = 0644, .size = 312, .hash = 0x0123456789abcdefull,
	                                  .add = true, .token = "tsc=reliable" };
	r.ch[r.n++] = (struct cd_change){ .kind = CD_CH_GRUBBY, .token = "clocksource=acpi_pm" };
	r.ch[r.n++] = (struct cd_change){ .kind = CD_CH_BACKUP, .path = "/var/lib/clockdoctor/backup-1" };
	char text[4096];
	int len = cd_record_format(&r, text, sizeof text);
	CHECK(len > 0);
	CHECK(strstr(text, "clockdoctor fix record 1\ncreated 1767225600\nfamily debian\nregen update-grub\n") == text);
	CHECK(strstr(text, "\nfile /etc/default/grub.d/a.cfg mode=0644 size=312 fnv=0123456789abcdef add=tsc=reliable\n"));
	CHECK(strstr(text, "\ngrubby remove=clocksource=acpi_pm\n"));
	CHECK(strstr(text, "\nreplaced /etc/default/grub.d/a.cfg backup=/etc/default/grub.d/a.cfg.clockdoctor-backup\n"));
	struct cd_record back;
	char err[200];
	CHECK_INT(cd_record_parse(text, &back, err, sizeof err), 0);
	CHECK_INT(back.n, 5);
	CHECK(back.created == 1767225600);
	CHECK_STR(back.family, "debian");
	CHECK_STR(back.regen, "update-grub");
	CHECK_INT(back.ch[2].kind, CD_CH_FILE);
	CHECK(back.ch[2].hash == 0x0123456789abcdefull);
	CHECK(back.ch[2].size == 312 && back.ch[2].mode == 0644 && back.ch[2].add);
	CHECK_STR(back.ch[2].token, "tsc=reliable");
	CHECK_STR(back.ch[1].backup, "/etc/default/grub.d/a.cfg.clockdoctor-backup");
	CHECK(!back.ch[3].add);
	CHECK_STR(back.ch[3].token, "clocksource=acpi_pm");
	CHECK_INT(back.ch[4].kind, CD_CH_BACKUP);
	/* Too small a buffer is an error, never a cut record. */
	CHECK_INT(cd_record_format(&r, text, 40), -ENOSPC);
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
		snprintf(big + strlen(big), sizeof big - strlen(big), "mkdir /d%d\n", i);
	CHECK_INT(cd_record_parse(big, &r, err, sizeof err), -EINVAL);
	CHECK(strstr(err, "too many") != NULL);
}

int main(void)
{
	test_fnv();
	test_paths();
	test_roundtrip();
	test_refused();
	return unit_done("record");
}
