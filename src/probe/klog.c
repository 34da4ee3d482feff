/* SPDX-License-Identifier: MIT */
/*
 * klog.c: what the kernel log says about timekeeping.
 *
 * The kernel explains each of its clocksource decisions in its log: the TSC
 * failing the boot-time sync test, the watchdog demoting it at run time, the
 * switch to hpet or acpi_pm.  This module turns the lines that matter into
 * struct cd_event, whatever layout the log was saved in (dmesg, the raw
 * syslog(2) buffer, /dev/kmsg, journalctl, a syslog file) and whichever
 * kernel generation wrote it.  Reading the live machine's log is
 * klog_live.c's job.
 *
 * This file takes the text line by line and makes the bounded,
 * NUL-terminated copy every line is matched on (printk never stores a
 * record longer than 1 KiB), so no input, however long or binary, can make
 * a recogniser read out of bounds; klog_prefix.c strips the layout's
 * prefix, klog_events.c recognises the events.
 */
#include "probe/klog_impl.h"
#include "probe/probe.h"
#include "probe/span.h"
#include "util/table.h"

/* One line of n bytes (no '\n'), matched on a bounded copy in buf. */
static void parse_line(struct kstate *st, const char *raw, size_t n, char *buf)
{
	size_t k = n < MSG_MAX - 1 ? n : MSG_MAX - 1;
	bool kmsg;

	for (size_t i = 0; i < k; i++)   /* a NUL would end the message early */
		buf[i] = raw[i] ? raw[i] : '?';
	while (k > 0 && (buf[k - 1] == '\r' || is_space(buf[k - 1])))
		k--;
	buf[k] = 0;
	if (st->after_kmsg && buf[0] == ' ')   /* /dev/kmsg's " KEY=value" lines */
		return;
	st->msg = cd_klog_strip_prefix(buf, &st->ts, &kmsg);
	st->after_kmsg = kmsg;
	if (st->ts >= 0 && st->ts < 1.0)
		st->log->reaches_boot = true;
	cd_klog_recognise(st);
}

void cd_klog_parse(const char *text, size_t len, struct cd_klog *log)
{
	struct kstate st = { .log = log, .ts = -1, .sync_a = -1, .sync_b = -1, .wd = -1 };
	char buf[MSG_MAX];
	size_t pos = 0;

	for (struct cd_span line; cd_next_line(text, len, &pos, &line); log->lines++)
		parse_line(&st, line.p, line.n, buf);
}

const char *cd_klog_source_name(enum cd_klog_source s)
{
	static const char *const names[] = { "none", "file", "ring", "journal" };

	return CD_NAME_OF(names, s, "none");
}
