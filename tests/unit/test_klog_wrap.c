/* SPDX-License-Identifier: MIT */
/*
 * test_klog_wrap.c: every kernel log in tests/fixtures, as a mail client, a
 * forum or quoted-printable would have passed it on (wrapped at 60, 72, 76
 * and 80 columns, at a blank or inside a word, quoted "> ", soft-broken
 * with "=" and "=3D"), reads as the same timekeeping events as the log
 * itself; and the reasons the kernel gives for dropping the TSC, each
 * recognised and explained.  Run from the top of the repository.
 */
#include "unit.h"
#include "probe/probe.h"
#include "probe/tsc_reasons.h"

#include <dirent.h>

static struct cd_klog A, B;

/* The events whose numbers a wrap could cut: the watchdog's report, the
 * read-back delay, the old delta line, the warp, the reasons. */
static bool wrap_matters(enum cd_event_kind k)
{
	return k == CD_EV_WATCHDOG_SKEW || k == CD_EV_WD_READBACK_EXCESSIVE || k == CD_EV_WD_NOISE ||
	       k == CD_EV_CS_UNSTABLE_DELTA || k == CD_EV_TSC_WARP || k == CD_EV_TSC_UNSTABLE;
}

/* text with each line longer than width cut: at the last blank before the
 * width (the blank dropped, as mail clients do) or, fold, at the width. */
static char *wrap(const char *text, size_t len, size_t width, bool fold, const char *quote)
{
	char *out = malloc(len * 4 + 64), *o = out;
	size_t pos = 0;

	while (pos < len) {
		const char *s = text + pos, *nl = memchr(s, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - s) : len - pos;
		pos += n + 1;
		for (;;) {
			size_t cut = n, skip = 0;
			if (n > width) {
				cut = width;
				if (!fold) {
					size_t b = width;
					while (b > 0 && s[b] != ' ')
						b--;
					if (b > 0)
						cut = b, skip = 1;
				}
			}
			o += sprintf(o, "%s", quote);
			memcpy(o, s, cut);
			o += cut;
			*o++ = '\n';
			if (cut == n)
				break;
			s += cut + skip;
			n -= cut + skip;
		}
	}
	*o = 0;
	return out;
}

/* Quoted-printable (RFC 2045): '=' as "=3D", lines soft-broken to 76. */
static char *qp_encode(const char *text, size_t len)
{
	char *out = malloc(len * 4 + 64), *o = out;
	size_t col = 0;

	for (size_t i = 0; i < len; i++) {
		char c = text[i];
		if (c == '\n') {
			*o++ = '\n';
			col = 0;
			continue;
		}
		size_t w = c == '=' ? 3 : 1;
		if (col + w > 75) {
			*o++ = '=';
			*o++ = '\n';
			col = 0;
		}
		o += c == '=' ? sprintf(o, "=3D") : sprintf(o, "%c", c);
		col += w;
	}
	*o = 0;
	return out;
}

/* s with each run of blanks made one, into out (CD_LINE_MAX). */
static const char *blanks_one(char *out, const char *s)
{
	size_t o = 0;
	for (; *s && o + 1 < CD_LINE_MAX; s++)
		if (*s != ' ' || o == 0 || out[o - 1] != ' ')
			out[o++] = *s;
	out[o] = 0;
	return out;
}

/* text parsed into B */
static const struct cd_klog *parse_b(const char *text)
{
	memset(&B, 0, sizeof B);
	cd_klog_parse(text, strlen(text), &B);
	return &B;
}

static void same_events(const char *name, const char *how, const char *text)
{
	parse_b(text);
	int ia = 0, ib = 0;
	for (;;) {
		while (ia < A.n_events && !wrap_matters(A.events[ia].kind))
			ia++;
		while (ib < B.n_events && !wrap_matters(B.events[ib].kind))
			ib++;
		if (ia >= A.n_events || ib >= B.n_events)
			break;
		const struct cd_event *a = &A.events[ia++], *b = &B.events[ib++];
		unit_case("%s, %s: %s", name, how, a->line);
		CHECK_INT(b->kind, a->kind);
		CHECK_STR(b->name, a->name);
		CHECK_STR(b->name2, a->name2);
		char la[CD_LINE_MAX], lb[CD_LINE_MAX];   /* a wrap may eat one of two blanks */
		CHECK_STR(blanks_one(lb, b->line), blanks_one(la, a->line));
		CHECK_INT(b->cpu_a, a->cpu_a);
		CHECK_INT(b->value, a->value);
		CHECK_INT(b->value2, a->value2);
		CHECK(b->wd_cycles == a->wd_cycles && b->cs_cycles == a->cs_cycles);
	}
	unit_case("%s, %s", name, how);
	CHECK(ia >= A.n_events && ib >= B.n_events);
	unit_case(NULL);
}

static void test_fixtures_wrapped(void)
{
	static const size_t widths[] = { 60, 72, 76, 80 };
	DIR *d = opendir("tests/fixtures");
	struct dirent *de;
	int n = 0;

	CHECK(d != NULL);
	while (d && (de = readdir(d))) {
		size_t len;
		char *text = unit_read_fixture(de->d_name, "dmesg.txt", &len), how[64];
		/* its read-back line was cut mid-number at the source ("of 5252e"):
		 * no format fits it, so none says how a wrap of it goes on */
		if (!text || strcmp(de->d_name, "qemu-nested-l1-readback-delay-hpet") == 0) {
			free(text);
			continue;
		}
		memset(&A, 0, sizeof A);
		cd_klog_parse(text, len, &A);
		for (size_t w = 0; w < UNIT_COUNT(widths); w++)
			for (int fold = 0; fold < 2; fold++) {
				char *wrapped = wrap(text, len, widths[w], fold, fold ? "" : "> ");
				snprintf(how, sizeof how, "%s at %zu", fold ? "folded" : "wrapped and quoted", widths[w]);
				same_events(de->d_name, how, wrapped);
				free(wrapped);
			}
		char *qp = qp_encode(text, len);
		same_events(de->d_name, "quoted-printable", qp);
		free(qp);
		free(text);
		n++;
	}
	if (d)
		closedir(d);
	CHECK(n >= 9);
}

/* The issue's own case: a 6.x read-back line and the watchdog's report,
 * each cut by a mail client; the kernel's numbers come back. */
static void test_cut_lines(void)
{
	const char *t = "[ 4.1] clocksource: timekeeping watchdog on CPU1: wd-tsc-wd excessive read-back delay of\n"
	                "246001ns vs. limit of 125000ns, wd-wd read-back delay only 27ns, attempt 3,\n"
	                "marking tsc unstable.\n"
	                "[ 9.5] clocksource: timekeeping watchdog on CPU0: Marking clocksource 'tsc' as unstable because the skew is\n"
	                "too large:\n"
	                "[ 9.5] clocksource:                       'hpet' wd_nsec: 503484590 wd_now: 26d0ef4a wd_last:\n"
	                "2662ef33 mask: ffffffff\n";
	parse_b(t);
	CHECK_INT(B.n_events, 2);
	CHECK_INT(B.events[0].kind, CD_EV_WD_READBACK_EXCESSIVE);
	CHECK_INT(B.events[0].value, 246001);
	CHECK_INT(B.events[0].value2, 125000);
	CHECK_STR(B.events[0].name, "tsc");
	CHECK_INT(B.events[1].kind, CD_EV_WATCHDOG_SKEW);
	CHECK_STR(B.events[1].name, "tsc");
	CHECK_STR(B.events[1].name2, "hpet");
	CHECK_INT(B.events[1].value, 503484590);
	CHECK(B.events[1].wd_cycles == ((0x26d0ef4aULL - 0x2662ef33ULL) & 0xffffffffULL));
	CHECK_INT(B.lines, 7);

	/* Quiet: a line of its own after an unfinished one is never taken in
	 * (it has its stamp), nor text the kernel's format does not go on with. */
	t = "[ 4.1] clocksource: timekeeping watchdog on CPU1: wd-tsc-wd excessive read-back delay of\n"
	    "[ 4.2] 999ns vs. limit of 1ns\n"
	    "[ 9.5] Marking TSC unstable due to TSC halts\n"
	    "usb 1-1: Product: in idle\n";
	parse_b(t);
	CHECK_INT(B.n_events, 2);
	CHECK_INT(B.events[0].value, 0);
	CHECK_STR(B.events[1].name, "TSC halts");

	/* Forged: a device's text never starts a join, however it ends. */
	t = "[ 1.0] usb 1-1: Product: tsc: Marking TSC unstable due to TSC halts in\n"
	    "idle\n"
	    "[ 1.0] usb 1-1: Manufacturer: clocksource: timekeeping watchdog on CPU1: wd-tsc-wd excessive\n"
	    "read-back delay of 1ns vs. limit of 1ns, wd-wd read-back delay only 1ns, attempt 3, marking tsc unstable\n";
	parse_b(t);
	CHECK_INT(B.n_events, 0);

	/* Forum line numbers and a test driver's machine name */
	t = "12: [    0.428508] Marking TSC unstable due to TSC halts in idle states deeper than C2\n"
	    "  13 | [    0.5] clocksource: Switched to clocksource hpet\n"
	    "drbd1 # [    0.037211] Kernel command line: console=ttyS0 clock=acpi_pm\n"
	    "12: usb 1-1: Product: tsc: Marking TSC unstable due to cpufreq changes\n";
	parse_b(t);
	CHECK_INT(B.n_events, 3);
	CHECK_STR(B.events[0].name, "TSC halts in idle states deeper than C2");
	CHECK_STR(B.events[1].name, "hpet");
	CHECK_INT(B.events[2].kind, CD_EV_CMDLINE);
}

/* Every reason of probe/tsc_reasons.c, as each kernel printed it, read and
 * explained; the 2.6.21-2.6.23 "due to: %s." form too. */
static void test_reasons(void)
{
	static const struct {
		const char *line, *reason;
		enum cd_tsc_reason_class cls;
	} cases[] = {
		{ "[    0.39] Marking TSC unstable due to TSC halts in idle", "TSC halts in idle", CD_REASON_IDLE },
		{ "[    0.42] Marking TSC unstable due to TSC halts in idle states deeper than C2",
		  "TSC halts in idle states deeper than C2", CD_REASON_IDLE },
		{ "[    7.09] Marking TSC unstable due to: possible TSC halt in C2.", "possible TSC halt in C2",
		  CD_REASON_IDLE },
		{ "[    7.09] Marking TSC unstable due to: TSC halts in C3.", "TSC halts in C3", CD_REASON_IDLE },
		{ "[    0.1] tsc: Marking TSC unstable due to TSCs unsynchronized", "TSCs unsynchronized", CD_REASON_SYNC },
		{ "[   14.0] Marking TSC unstable due to: check_tsc_sync_source failed.", "check_tsc_sync_source failed",
		  CD_REASON_SYNC },
		{ "[  300.2] tsc: Marking TSC unstable due to clocksource watchdog", "clocksource watchdog",
		  CD_REASON_WATCHDOG },
		{ "[    2.0] Marking TSC unstable due to cpufreq changes", "cpufreq changes", CD_REASON_CPUFREQ },
		{ "[    0.0] tsc: Marking TSC unstable due to running on Hyper-V", "running on Hyper-V",
		  CD_REASON_HYPERVISOR },
		{ "[ 3600.0] tsc: Marking TSC unstable due to KVM discovered backwards TSC", "KVM discovered backwards TSC",
		  CD_REASON_HOST },
		{ "[    0.0] tsc: Marking TSC unstable due to could not calculate TSC khz", "could not calculate TSC khz",
		  CD_REASON_FIRMWARE },
		{ "[    0.0] Marking TSC unstable due to: cyrix 5510/5520 detected.", "cyrix 5510/5520 detected",
		  CD_REASON_FIRMWARE },
		{ "[    0.0] tsc: Marking TSC unstable due to boot parameter", "boot parameter", CD_REASON_PARAMETER },
		{ "[    0.0] tsc: Marking TSC unstable due to boot parameter notsc", "boot parameter notsc",
		  CD_REASON_PARAMETER },
		{ "[    0.0] Marking TSC unstable due to: user disabled TSC.", "user disabled TSC", CD_REASON_PARAMETER },
		{ "[    0.5] tsc: Marking TSC unstable due to TSC halt in AMD C1E", "TSC halt in AMD C1E", CD_REASON_IDLE },
		{ "[    0.0] tsc: Marking TSC unstable due to UV BIOS", "UV BIOS", CD_REASON_FIRMWARE },
		{ "[    0.0] Marking TSC unstable due to: Summit based system.", "Summit based system",
		  CD_REASON_FIRMWARE },
	};
	for (size_t i = 0; i < UNIT_COUNT(cases); i++) {
		unit_case("%s", cases[i].line);
		parse_b(cases[i].line);
		CHECK_INT(B.n_events, 1);
		CHECK_INT(B.events[0].kind, CD_EV_TSC_UNSTABLE);
		CHECK_STR(B.events[0].name, cases[i].reason);
		const struct cd_tsc_reason *r = cd_tsc_reason_find(B.events[0].name);
		CHECK(r != NULL);
		if (r) {
			CHECK_INT(r->cls, cases[i].cls);
			CHECK(strlen(r->meaning) > 40);
			CHECK_LACKS(r->meaning, "look up");
		}
	}
	unit_case(NULL);
	/* Quiet: words that are no reason of the kernel's; the start of one */
	CHECK(cd_tsc_reason_find("TSC halts") == NULL);
	CHECK(cd_tsc_reason_find("TSC halts in idle states deeper than C3") == NULL);
	CHECK(cd_tsc_reason_find("") == NULL);
	CHECK(cd_tsc_reason_is_beginning("TSC halts in idle st", 20));
	CHECK(!cd_tsc_reason_is_beginning("TSC halts in idle", 17) || cd_tsc_reason_find("TSC halts in idle"));
	CHECK(!cd_tsc_reason_is_beginning("cpufreq chang!", 14));
	/* a device's text is no reason of the kernel's */
	const char *t = "[ 1.0] usb 1-1: Product: Marking TSC unstable due to: TSC halts in C3.";
	parse_b(t);
	CHECK_INT(B.n_events, 0);
}

int main(void)
{
	test_reasons();
	test_cut_lines();
	test_fixtures_wrapped();
	return unit_done("klog_wrap");
}
