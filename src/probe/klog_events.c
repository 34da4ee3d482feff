/* SPDX-License-Identifier: MIT */
/*
 * klog_events.c: the kernel log's lines that matter for timekeeping, each
 * recognised into a struct cd_event: the boot's first lines, the clocksource
 * watchdog's report (which spans lines), the switch to another clocksource,
 * the TSC's sync test, TSC_ADJUST, the frequencies the kernel logged, the
 * arm64 timer's errata, DMI, and lines whose wording alone is the fact.
 *
 * Each recogniser names the kernel source it follows; "about" marks a
 * version inferred from merge dates, not checked against a tag.  They read
 * the message klog.c copied and klog_prefix.c stripped: NUL-terminated and
 * bounded, so no input can make one read out of bounds.
 */
#include "probe/klog_impl.h"
#include "util/printable.h"
#include "util/table.h"

#include <stdio.h>
#include <stdlib.h>

/* ---- numbers and names in a message ---- */

/* A signed decimal after optional blanks; *out untouched when unparseable. */
static bool parse_i64(const char *p, int64_t *out)
{
	uint64_t v;

	p = skip_spaces(p);
	bool neg = *p == '-';
	p += neg;
	if (!parse_u64(&p, 10, &v) || v > (uint64_t)INT64_MAX + neg)
		return false;
	*out = !neg ? (int64_t)v : v > (uint64_t)INT64_MAX ? INT64_MIN : -(int64_t)v;
	return true;
}

/* The hexadecimal number after lit in *pp; *pp moves past it. */
static bool hex_after(const char **pp, const char *lit, uint64_t *out)
{
	const char *v = after(*pp, lit);

	if (!v)
		return false;
	*pp = skip_spaces(v);
	return parse_u64(pp, 16, out);
}

static bool parse_cpu(const char **pp, int *out)
{
	uint64_t v;

	if (!parse_u64(pp, 10, &v) || v > 0x7fffffff)
		return false;
	*out = (int)v;
	return true;
}

/* "2596.121" (MHz, printed "%lu.%03lu") into 2596121 kHz, in integers so
 * that no rounding can creep in; digits past the third decimal are dropped. */
static bool parse_khz(const char *p, uint32_t *khz)
{
	uint64_t mhz, frac = 0;
	int nd = 0;

	if (!parse_u64(&p, 10, &mhz) || mhz > UINT32_MAX / 1000)
		return false;
	for (p += *p == '.'; is_digit(*p); p++)
		if (nd < 3)
			frac = frac * 10 + (uint64_t)(*p - '0'), nd++;
	for (; nd < 3; nd++)
		frac *= 10;
	if (mhz * 1000 + frac > UINT32_MAX)
		return false;
	*khz = (uint32_t)(mhz * 1000 + frac);
	return true;
}

/* Copy at most n bytes of s (stopping at its NUL) into dst, printable
 * (util/printable.h), trailing blanks dropped. */
static void copy_clean(char *dst, size_t cap, const char *s, size_t n)
{
	size_t i = cd_printable_copy(dst, cap, s, strnlen(s, n));

	while (i > 0 && dst[i - 1] == ' ')
		i--;
	dst[i] = 0;
}

/* Into a name, s up to the first of stops, without the sentence's final dot. */
static void copy_upto(char *dst, const char *s, const char *stops)
{
	size_t n = strcspn(s, stops);

	while (n > 0 && (s[n - 1] == '.' || is_space(s[n - 1])))
		n--;
	copy_clean(dst, CD_NAME_MAX, s, n);
}

/* ---- where the kernel puts a message ----
 *
 * A line counts only when its message (what klog_prefix.c leaves once the
 * log's own prefix is gone) starts the way the kernel printed it: the
 * subsystem's prefix (pr_fmt, mostly KBUILD_MODNAME ": ", or a prefix
 * written by hand), or none, where a kernel printed the text without one.
 * The same words anywhere else in a line are some other program's text: a
 * USB device may call itself "tsc: Marking TSC unstable due to clocksource
 * watchdog" ("usb 1-1: Product: ..."), and that is no verdict of the
 * kernel's.  After the prefix, blanks are skipped (the watchdog pads its
 * report's lines).  Each table names the files that print its forms. */

/* arch/x86/kernel/tsc.c: plain printk() in 2.6.x ("Marking TSC unstable due
 * to %s", "Detected %lu.%03lu MHz processor.", "Refined TSC clocksource
 * calibration: ..."), pr_fmt "tsc: " (KBUILD_MODNAME) since about 4.x; the
 * calibration messages of 2.6.26 to 3.x wrote "TSC: " by hand, some none. */
static const char *const from_tsc[] = { "tsc:", "", NULL };
static const char *const from_tsc_calibration[] = { "tsc:", "TSC:", "", NULL };
/* kernel/time/clocksource.c: plain printk() before about 4.2 ("Clocksource
 * %s unstable (delta = ...)", "Switching to clocksource %s"), pr_fmt
 * "clocksource: " since. */
static const char *const from_clocksource[] = { "clocksource:", "", NULL };
/* kernel/time/clocksource.c cs_watchdog_read() and the read-back checks:
 * 5.14+, only ever with pr_fmt "clocksource: ". */
static const char *const from_clocksource_new[] = { "clocksource:", NULL };
/* arch/x86/kernel/tsc_sync.c (no pr_fmt): "checking TSC synchronization
 * [CPU#%d -> CPU#%d]:" in 2.6.x, "TSC synchronization [CPU#%d -> CPU#%d]:"
 * since; its TSC_ADJUST warnings are FW_BUG ("[Firmware Bug]: ") or plain. */
static const char *const from_tsc_sync[] = { "checking ", "", NULL };
static const char *const from_tsc_adjust[] = { "[Firmware Bug]:", "", NULL };
/* arch/x86/kernel/cpu/vmware.c: plain printk() before its pr_fmt
 * "vmware: " (about 4.x). */
static const char *const from_vmware[] = { "vmware:", "", NULL };
/* arch/x86/xen/time.c: "xen: " written by hand in the message. */
static const char *const from_xen[] = { "xen:", NULL };
/* Files that print the text with no prefix at all (kernel/sched/clock.c,
 * arch/x86/kernel/cpu/hypervisor.c, mshyperv.c, mm/init_32.c, the 2.6
 * vdso32-setup.c, lib/dump_stack.c). */
static const char *const from_plain[] = { "", NULL };
/* drivers/of/fdt.c: "Machine model: %s" (plain, pr_fmt "OF: fdt: " since
 * about 4.x); drivers/clocksource/arm_arch_timer.c: pr_fmt "arch_timer: ". */
static const char *const from_fdt[] = { "OF: fdt:", "", NULL };
static const char *const from_arch_timer[] = { "arch_timer:", NULL };

/* The text after lit, when m starts with one of prefixes, blanks, then lit;
 * NULL otherwise. */
static const char *lead(const char *m, const char *const *prefixes, const char *lit)
{
	for (const char *const *p = prefixes; *p; p++) {
		if (!starts(m, *p))
			continue;
		const char *q = skip_spaces(m + strlen(*p));
		if (starts(q, lit))
			return q + strlen(lit);
	}
	return NULL;
}

/* ---- events ---- */

/* A new event; past CD_MAX_EVENTS, the scratch one, so that no recogniser
 * needs to check. */
static struct cd_event *add(struct kstate *st, enum cd_event_kind kind)
{
	struct cd_klog *log = st->log;
	struct cd_event *ev = &st->scratch;

	if (log->n_events >= 0 && log->n_events < CD_MAX_EVENTS)
		ev = &log->events[log->n_events++];
	else
		log->truncated_events = true;
	memset(ev, 0, sizeof *ev);
	ev->kind = kind;
	ev->ts = st->ts;
	ev->cpu_a = ev->cpu_b = -1;
	copy_clean(ev->line, sizeof ev->line, st->msg, MSG_MAX);
	return ev;
}

/* "timekeeping watchdog on CPU3: X" at the message's start (with the
 * prefixes given): 3 into *cpu, and X. */
static const char *watchdog_cpu(const char *m, const char *const *prefixes, int *cpu)
{
	const char *c = lead(m, prefixes, "timekeeping watchdog on CPU");

	if (!c || !parse_cpu(&c, cpu))
		return NULL;
	return starts(c, ": ") ? c + 2 : NULL;
}

/* ---- recognisers: each returns true when the line was its own ---- */

/* init/version.c, every version: "Linux version %s (%s@%s) (%s) %s";
 * arch/x86/kernel/setup.c "Command line: %s" (x86, every version) and
 * init/main.c "Kernel command line: %s" (every architecture; x86 prints both,
 * so this one makes an event only when the other is missing). */
static bool rec_boot(struct kstate *st, const char *m)
{
	bool version = starts(m, "Linux version "), kernel = starts(m, "Kernel command line:");

	if (!version && !kernel && !starts(m, "Command line:"))
		return false;
	st->log->reaches_boot = true;
	for (int i = 0; kernel && i < st->log->n_events && i < CD_MAX_EVENTS; i++)
		if (st->log->events[i].kind == CD_EV_CMDLINE)
			return true;
	struct cd_event *ev = add(st, version ? CD_EV_KERNEL_VERSION : CD_EV_CMDLINE);
	if (version)
		copy_upto(ev->name, m + 14, " \t");
	return true;
}

/* The watchdog's report spans lines.  Each continuation line completes the
 * open watchdog event; when that part of it is already filled, or there is
 * no open event within a second (the header was cut off, or grepped away),
 * the line starts an event of its own. */
static struct cd_event *wd_open(struct kstate *st, struct cd_event *ev)
{
	st->wd = ev == &st->scratch ? -1 : (int)(ev - st->log->events);
	st->wd_ts = st->ts;
	st->wd_has_wd = st->wd_has_cs = st->wd_has_skew = false;
	return ev;
}

static struct cd_event *wd_part(struct kstate *st, bool *has_part)
{
	bool near = st->wd_ts < 0 || st->ts < 0 ||
		    (st->ts - st->wd_ts < 1.0 && st->wd_ts - st->ts < 1.0);

	if (st->wd < 0 || st->wd >= st->log->n_events || *has_part || !near)
		wd_open(st, add(st, CD_EV_WATCHDOG_SKEW));
	*has_part = true;
	struct cd_event *ev = st->wd >= 0 ? &st->log->events[st->wd] : &st->scratch;
	/* A header that lost its time stamp (a log pasted from a console) is
	 * dated by the first line of its report that kept one. */
	if (ev->ts < 0 && st->ts >= 0)
		ev->ts = st->wd_ts = st->ts;
	return ev;
}

/* A continuation line of the watchdog's report, kept as the kernel printed
 * it: the evidence quotes these numbers beside any figure derived from them. */
static void wd_detail(struct cd_event *ev, const char *m)
{
	size_t used = strnlen(ev->detail, sizeof ev->detail);

	/* A report cut down to this line (a grepped log) is its own event,
	 * whose line already quotes it. */
	if (strncmp(ev->line, m, sizeof ev->line - 1) == 0)
		return;

	if (used && used + 2 < sizeof ev->detail)
		ev->detail[used++] = '\n';
	/* The kernel pads these lines with blanks to align them: one is kept. */
	for (size_t i = 0; m[i] && used + 1 < sizeof ev->detail; i++)
		if (!is_space(m[i]) || (used > 0 && !is_space(ev->detail[used - 1])))
			ev->detail[used++] = m[i] >= 0x20 && m[i] < 0x7f ? m[i] : '?';
	ev->detail[used] = 0;
}

/* kernel/time/clocksource.c clocksource_watchdog(), the header: 4.1 to about
 * 4.18 "timekeeping watchdog: Marking clocksource '%s' as unstable because the
 * skew is too large:", then "timekeeping watchdog on CPU%d: Marking ..." (4.19
 * to 6.x). */
static bool rec_wd_header(struct kstate *st, const char *m)
{
	int cpu = -1;
	const char *q = watchdog_cpu(m, from_clocksource, &cpu);

	if (!q && (q = lead(m, from_clocksource, "timekeeping watchdog:")))
		q = skip_spaces(q);
	if (!q || !starts(q, "Marking clocksource '") || !strstr(q += 21, "' as unstable"))
		return false;
	struct cd_event *ev = wd_open(st, add(st, CD_EV_WATCHDOG_SKEW));
	copy_upto(ev->name, q, "'");
	ev->cpu_a = cpu;
	return true;
}

/* Same function, the next two lines, after pr_fmt "clocksource: " and blanks:
 * "'%s' wd_now: %llx wd_last: %llx mask: %llx", "'%s' cs_now: ..." (4.1 to
 * 5.13); since 5.14 "wd_nsec: %lld " / "cs_nsec: %lld " come before wd_now /
 * cs_now ("wd_nesc" in the 2021 -next trees, which some logs show). */
static bool rec_wd_counters(struct kstate *st, const char *m)
{
	const char *p = skip_spaces(starts(m, "clocksource:") ? m + 12 : m), *v;
	const char *q = *p == '\'' ? strchr(p + 1, '\'') : NULL;
	uint64_t now, last, mask;

	if (!q || !strstr(q, "_now:") || (!starts(q = skip_spaces(q + 1), "wd_") && !starts(q, "cs_")))
		return false;
	bool wd = q[0] == 'w';
	struct cd_event *ev = wd_part(st, wd ? &st->wd_has_wd : &st->wd_has_cs);
	wd_detail(ev, m);
	if (wd || !ev->name[0])
		copy_upto(wd ? ev->name2 : ev->name, p + 1, "'");
	if ((v = after(q, wd ? "wd_nsec:" : "cs_nsec:")) || (wd && (v = after(q, "wd_nesc:"))))
		parse_i64(v, wd ? &ev->value : &ev->value2);
	v = q;
	if (hex_after(&v, "_now:", &now) && hex_after(&v, "_last:", &last) &&
	    hex_after(&v, "mask:", &mask))
		*(wd ? &ev->wd_cycles : &ev->cs_cycles) = (now - last) & mask;
	return true;
}

/* Same function, about 6.1+: "Clocksource '%s' skewed %lld ns (%lld ms) over
 * watchdog '%s' interval of %lld ns (%lld ms)": value/value2 when no
 * wd_nsec/cs_nsec line gave them; alone (a grepped log) it is an event. */
static bool rec_wd_skewed(struct kstate *st, const char *m)
{
	const char *p = lead(m, from_clocksource_new, "Clocksource '"), *q = p ? strchr(p, '\'') : NULL, *w;
	int64_t skew, wd, cs;

	if (!q || !starts(q, "' skewed "))
		return false;
	struct cd_event *ev = wd_part(st, &st->wd_has_skew);
	wd_detail(ev, m);
	if (!ev->name[0])
		copy_upto(ev->name, p, "'");
	if ((w = after(q, "over watchdog '")) && !ev->name2[0])
		copy_upto(ev->name2, w, "'");
	if (parse_i64(q + 9, &skew) && (w = after(q, "interval of ")) && parse_i64(w, &wd) &&
	    !__builtin_add_overflow(wd, skew, &cs) && !ev->value && !ev->value2) {
		ev->value = wd;
		ev->value2 = cs;
	}
	return true;
}

/* kernel/time/clocksource.c cs_watchdog_read(), since 5.14, demoting:
 *  5.14-about 5.19 "timekeeping watchdog on CPU%d: %s read-back delay of
 *    %lldns, attempt %d, marking unstable" (%s the watchdog),
 *  about 6.0-6.1 "... wd-%s-wd read-back delay of %lldns, attempt %d, marking
 *    unstable" (%s the clocksource),
 *  about 6.2+ "... wd-%s-wd excessive read-back delay of %lldns vs. limit of
 *    %ldns, wd-wd read-back delay only %lldns, attempt %d, marking %s unstable";
 * and demoting nothing: "... %s wd-wd read-back delay of %lldns", "wd-%s-wd
 * read-back delay of %lldns, clock-skew test skipped!" (about 5.16+), "... %s
 * retried %d times before success", and clocksource_watchdog()'s "Long readout
 * interval, skipping watchdog check: cs_nsec: %lld wd_nsec: %lld" (about 6.3+). */
static bool rec_readback(struct kstate *st, const char *m)
{
	int cpu = -1;
	const char *on_cpu = watchdog_cpu(m, from_clocksource_new, &cpu), *wd = lead(m, from_clocksource_new, "wd-");
	const char *body = on_cpu ? on_cpu : wd ? wd - 3 : NULL;
	const char *d = body ? after(body, "read-back delay") : NULL, *w, *e;
	bool longr = lead(m, from_clocksource_new, "Long readout interval, skipping watchdog check");

	if (!d && !longr && !(on_cpu && strstr(on_cpu, "times before success")))
		return false;
	struct cd_event *ev = add(st, d && strstr(d, "marking") && strstr(d, "unstable") ?
				  CD_EV_WD_READBACK_EXCESSIVE : CD_EV_WD_NOISE);
	ev->cpu_a = cpu;
	if (on_cpu && !starts(on_cpu, "wd-"))
		copy_upto(ev->name2, on_cpu, " \t");
	if (body && (w = after(body, "wd-")) && (e = strstr(w, "-wd ")))
		copy_clean(ev->name, sizeof ev->name, w, (size_t)(e - w));
	if (d) {
		parse_i64(starts(skip_spaces(d), "of") ? skip_spaces(d) + 2 : d, &ev->value);
		if ((w = after(m, "limit of ")))
			parse_i64(w, &ev->value2);
	} else if (longr && (w = after(m, "wd_nsec:")) && (e = after(m, "cs_nsec:"))) {
		parse_i64(w, &ev->value);
		parse_i64(e, &ev->value2);
	}
	return true;
}

/* kernel/time/clocksource.c clocksource_unstable(), 2.6.21 to 4.0:
 * "Clocksource %s unstable (delta = %Ld ns)"; RHEL 6 appends ".  Enable
 * clocksource failover by adding clocksource_failover kernel parameter." */
static bool rec_cs_delta(struct kstate *st, const char *m)
{
	const char *p = lead(m, from_clocksource, "Clocksource ");
	size_t n = p ? strcspn(p, " ") : 0;

	if (n == 0 || !starts(p + n, " unstable (delta = "))
		return false;
	struct cd_event *ev = add(st, CD_EV_CS_UNSTABLE_DELTA);
	copy_clean(ev->name, sizeof ev->name, p, n);
	parse_i64(p + n + 19, &ev->value);
	return true;
}

/* kernel/time/clocksource.c clocksource_select(): "Switching to clocksource
 * %s" (2.6.28 to about 3.10), "Switched to clocksource %s" since (pr_fmt
 * "clocksource: " from about 4.2); kernel/time/timekeeping.c 2.6.18 to about
 * 2.6.27: "Time: %s clocksource has been installed." */
static bool rec_switch(struct kstate *st, const char *m)
{
	const char *p = lead(m, from_clocksource, "Switched to clocksource ");

	if (!p)
		p = lead(m, from_clocksource, "Switching to clocksource ");
	if (!p && starts(m, "Time: ") && strstr(m, " clocksource has been installed"))
		p = m + 6;
	if (p)
		copy_upto(add(st, CD_EV_CS_SWITCHED)->name, p, " \t");
	return p != NULL;
}

/* kernel/time/clocksource.c __clocksource_update_freq_scale(), about 4.1+:
 * "%s: mask: 0x%llx max_cycles: 0x%llx, max_idle_ns: %lld ns" (pr_fmt
 * "clocksource: " from about 4.2), once for each clocksource registered:
 * name = the clocksource. */
static bool rec_registered(struct kstate *st, const char *m)
{
	const char *p = starts(m, "clocksource: ") ? m + 13 : m;
	size_t n = strcspn(p, ": \t");

	if (n == 0 || n >= CD_NAME_MAX || !starts(p + n, ": mask: 0x") || !strstr(p + n, " max_cycles: "))
		return false;
	copy_clean(add(st, CD_EV_CS_REGISTERED)->name, CD_NAME_MAX, p, n);
	return true;
}

/* arch/x86/kernel/tsc_sync.c check_tsc_sync_source(), 2.6.18 to 6.x: "TSC
 * synchronization [CPU#%d -> CPU#%d]:" then "Measured %Ld cycles TSC warp
 * between CPUs, turning off TSC clock." (the pr_debug "...]: passed" is no
 * failure, and makes no event). */
static bool rec_sync(struct kstate *st, const char *m)
{
	const char *p = lead(m, from_tsc_sync, "TSC synchronization [CPU#");
	struct cd_event *ev;
	int a, b;

	if (p) {
		if (parse_cpu(&p, &a) && starts(p, " -> CPU#") && (p += 8, parse_cpu(&p, &b)) &&
		    starts(p, "]:") && !strstr(p, "passed")) {
			ev = add(st, CD_EV_TSC_SYNC_HEADER);
			ev->cpu_a = st->sync_a = a;
			ev->cpu_b = st->sync_b = b;
		}
		return true;
	}
	if (!(p = lead(m, from_plain, "Measured ")) || !strstr(p, " cycles TSC warp between CPUs"))
		return false;
	ev = add(st, CD_EV_TSC_WARP);
	parse_i64(p, &ev->value);
	ev->cpu_a = st->sync_a;
	ev->cpu_b = st->sync_b;
	st->sync_a = st->sync_b = -1;
	return true;
}

/* arch/x86/kernel/tsc_sync.c, about 4.10+ (FW_BUG is "[Firmware Bug]: "):
 *  "TSC ADJUST differs: Reference CPU%u: %lld CPU%u: %lld" (and "TSC ADJUST
 *     synchronize: ..."): cpu_b/value2 the reference, cpu_a/value the other
 *  "TSC ADJUST differs: CPU%u %lld --> %lld. Restoring": value the new value
 *  "TSC ADJUST: CPU%u: %lld force to 0"
 *  "TSC ADJUST compensate: CPU%u observed %lld warp. Adjust: %lld": value the
 *     adjustment, value2 the warp */
static bool rec_tsc_adjust(struct kstate *st, const char *m)
{
	const char *p = lead(m, from_tsc_adjust, "TSC ADJUST"), *q, *r, *name = "";

	if (!p)
		return false;
	struct cd_event *ev = add(st, CD_EV_TSC_ADJUST);
	if ((q = after(p, "Reference CPU")) && parse_cpu(&q, &ev->cpu_b) && *q == ':') {
		parse_i64(q + 1, &ev->value2);
		if ((q = after(q, "CPU")) && parse_cpu(&q, &ev->cpu_a) && *q == ':')
			parse_i64(q + 1, &ev->value);
		name = starts(p, " synchronize") ? "synchronize" : "differs";
	} else if ((q = after(p, "CPU")) && parse_cpu(&q, &ev->cpu_a)) {
		if ((r = after(q, "--> ")) && parse_i64(r, &ev->value)) {
			parse_i64(q, &ev->value2);
			name = "restoring";
		} else if ((r = after(q, "observed ")) && parse_i64(r, &ev->value2) &&
			   (r = after(r, "Adjust: "))) {
			parse_i64(r, &ev->value);
			name = "compensate";
		} else if (*q == ':' && strstr(q, "force to 0")) {
			parse_i64(q + 1, &ev->value);
			name = "force-to-0";
		}
	}
	copy_upto(ev->name, name, "");
	return true;
}

/* arch/x86/kernel/tsc.c: "Detected %lu.%03lu MHz processor" ('.' at the end
 * before about 3.14), "Detected %lu.%03lu MHz TSC" (about 4.x+, when it
 * differs), "Refined TSC clocksource calibration: %lu.%03lu MHz" (2.6.37+);
 * arch/x86/kernel/cpu/vmware.c: "TSC freq read from hypervisor : %lu.%03lu MHz". */
static bool rec_freq(struct kstate *st, const char *m)
{
	static const struct {
		const char *text, *name;
		const char *const *from;
	} forms[] = {
		{ "Refined TSC clocksource calibration: ", "refined", from_tsc },
		{ "TSC freq read from hypervisor : ", "hypervisor", from_vmware },
		{ "Detected ", "detected", from_tsc },
	};

	for (size_t i = 0; i < CD_ARRAY_LEN(forms); i++) {
		const char *p = lead(m, forms[i].from, forms[i].text), *q = p;
		while (q && (is_digit(*q) || *q == '.'))
			q++;
		if (!p || !is_digit(*p) || !starts(q, " MHz") ||
		    (i == 2 && !starts(q, " MHz processor") && !starts(q, " MHz TSC")))
			continue;
		struct cd_event *ev = add(st, CD_EV_TSC_FREQ);
		copy_upto(ev->name, forms[i].name, "");
		parse_khz(p, &ev->khz);
		return true;
	}
	return false;
}

/* arch/x86/xen/time.c xen_setup_vsyscall_time_info(): "xen: VCLOCK_PVCLOCK
 * not supported (err %d)" or "(tsc unstable)" (about 4.11 to 5.6), then
 * VDSO_CLOCKMODE_PVCLOCK (about 5.7+): name = the reason, value = err. */
static bool rec_xen(struct kstate *st, const char *m)
{
	const char *p = lead(m, from_xen, "VDSO_CLOCKMODE_PVCLOCK not supported");

	if (!p && !(p = lead(m, from_xen, "VCLOCK_PVCLOCK not supported")))
		return false;
	struct cd_event *ev = add(st, CD_EV_XEN_NO_VDSO);
	if ((p = strchr(p, '(')))
		copy_upto(ev->name, p + 1, ")");
	if (p && starts(p, "(err "))
		parse_i64(p + 5, &ev->value);
	return true;
}

/* drivers/clocksource/arm_arch_timer.c: "arch_timer: Enabling workaround for
 * %s" (4.10), "Enabling global workaround for %s" (4.11), "Enabling %s
 * workaround for %s" local/global (4.12 to 6.x): name = the erratum. */
static bool rec_arch_timer(struct kstate *st, const char *m)
{
	const char *p = after(m, "workaround for ");
	const char *c = lead(m, from_arch_timer, "CPU");
	int cpu;

	/* arch_counter_set_user_access() (4.10 to 6.x) when a workaround
	 * replaces the counter read: "CPU%d: Trapping CNTVCT access", EL0's
	 * access to cntvct_el0 left off (CNTKCTL_EL1.EL0VCTEN), each user-space
	 * read an exception the kernel emulates.  One line per CPU: the
	 * first is kept. */
	if (c && parse_cpu(&c, &cpu) && starts(c, ": Trapping CNTVCT access")) {
		for (int i = 0; i < st->log->n_events && i < CD_MAX_EVENTS; i++)
			if (st->log->events[i].kind == CD_EV_ARCH_TIMER_TRAP)
				return true;
		add(st, CD_EV_ARCH_TIMER_TRAP)->cpu_a = cpu;
		return true;
	}

	if (!p || !starts(m, "arch_timer: Enabling "))
		return false;
	copy_upto(add(st, CD_EV_ARCH_TIMER_WORKAROUND)->name, p, "");
	return true;
}

/* drivers/firmware/dmi_scan.c dmi_setup() (about 3.10+): "DMI: %s" with
 * "VENDOR PRODUCT/BOARD, BIOS VERSION DATE"; the same string follows
 * "Hardware name: " in every backtrace (lib/dump_stack.c).  Other "DMI: "
 * lines ("DMI: Memory slots populated: 1/1") name no machine. */
static bool rec_dmi(struct kstate *st, const char *m)
{
	const char *p = starts(m, "DMI: ") ? m + 5 : lead(m, from_plain, "Hardware name: ");

	/* a console that lost the newline between dump_stack's two lines
	 * ("CPU: %d PID: %d Comm: %.20s %s%s %s %.*s", then "Hardware name: ") */
	if (!p && starts(m, "CPU: ") && strstr(m, " PID: "))
		p = after(m, " Hardware name: ");

	if (!p || starts(p, "Memory slots") || !*p)
		return false;
	add(st, CD_EV_DMI);
	return true;
}

/* Lines whose wording alone is the fact, at the message's start after one
 * of the prefixes from[] (a count first when from is NULL: "%ldMB ...").
 * name is a fixed tag, or (NULL) the rest of the line after the text. */
static const struct plain {
	const char *text;
	enum cd_event_kind kind;
	const char *name;
	const char *const *from;
} plain[] = {
	/* arch/x86/kernel/tsc.c mark_tsc_unstable(), 2.6.18 to 6.x (pr_fmt "tsc: "
	 * from about 4.2), and tsc_cs_mark_unstable() for the watchdog (4.11+);
	 * 2.6.21 to 2.6.23's arch/i386/kernel/tsc.c "due to: %s." (rec_plain
	 * skips the colon).  The reasons: probe/tsc_reasons.c. */
	{ "Marking TSC unstable due to", CD_EV_TSC_UNSTABLE, NULL, from_tsc },
	/* arch/x86/kernel/tsc_sync.c, 2.6.29 to about 5.x */
	{ "Skipped synchronization checks as TSC is reliable", CD_EV_TSC_SYNC_SKIPPED, "", from_plain },
	/* kernel/sched/clock.c, about 4.11 to 6.x: "TSC found unstable after boot,
	 * most likely due to broken BIOS. Use 'tsc=unstable'." and "sched_clock:
	 * Marking unstable (%lld, %lld)<-(%lld, %lld)" */
	{ "TSC found unstable after boot", CD_EV_TSC_BROKEN_BIOS, "", from_plain },
	{ "sched_clock: Marking unstable", CD_EV_SCHED_CLOCK_UNSTABLE, "", from_plain },
	/* arch/x86/kernel/tsc.c native_calibrate_tsc() and quick_pit_calibrate(),
	 * 2.6.26 to 6.x ("TSC: " before about 4.2, "tsc: " after), and
	 * tsc_refine_calibration_work() with tsc=recalibrate (about 5.x+) */
	{ "Fast TSC calibration failed", CD_EV_TSC_CALIBRATION, "fast-failed", from_tsc_calibration },
	{ "Unable to calibrate against PIT", CD_EV_TSC_CALIBRATION, "pit-failed", from_tsc_calibration },
	{ "PIT calibration deviates from ", CD_EV_TSC_CALIBRATION, "pit-deviates", from_tsc_calibration },
	{ "HPET/PMTIMER calibration failed", CD_EV_TSC_CALIBRATION, "ref-failed", from_tsc_calibration },
	{ "No reference (HPET/PMTIMER) available", CD_EV_TSC_CALIBRATION, "no-reference", from_tsc_calibration },
	{ "Warning: TSC freq calibrated by CPUID/MSR differs", CD_EV_TSC_CALIBRATION, "cpuid-differs", from_tsc_calibration },
	/* arch/x86/kernel/cpu/hypervisor.c, 2.6.30 to 6.x */
	{ "Hypervisor detected: ", CD_EV_HYPERVISOR, NULL, from_plain },
	/* Only Linux's Hyper-V guest code prints the host's build: x86
	 * ms_hyperv_init_platform() "Hyper-V Host Build:%d-%d.%d-%d-%d.%d"
	 * (arch/x86/kernel/cpu/mshyperv.c; older vmbus code in
	 * drivers/hv/connection.c the same with "; Vmbus version:%d.%d"), arm64
	 * and later kernels "Hyper-V: Host Build %d.%d.%d.%d-%d-%d"
	 * (drivers/hv/hv_common.c).  A log whose "Hypervisor detected:" line is
	 * gone still names Hyper-V by them. */
	{ "Hyper-V Host Build:", CD_EV_HYPERVISOR, "Microsoft Hyper-V", from_plain },
	{ "Hyper-V: Host Build ", CD_EV_HYPERVISOR, "Microsoft Hyper-V", from_plain },
	/* Only a 32-bit x86 kernel prints these: arch/x86/mm/init_32.c "%ldMB
	 * HIGHMEM available." / "%ldMB LOWMEM available.", and the 32-bit
	 * compat vDSO of 2.6.x kernels at the fixmap address ffffe000
	 * (vdso32-setup.c: "Compat vDSO mapped to %08lx."). */
	{ "MB HIGHMEM available", CD_EV_X86_32BIT, "highmem", NULL },
	{ "MB LOWMEM available", CD_EV_X86_32BIT, "lowmem", NULL },
	{ "Compat vDSO mapped to ffffe000", CD_EV_X86_32BIT, "compat-vdso", from_plain },
	/* A decoded backtrace through the 32-bit kernel's entry code
	 * ("ret_from_fork (arch/x86/entry/entry_32.S:772)"): entry_32.S is
	 * built only for CONFIG_X86_32 (arch/x86/entry/Makefile; before 4.2
	 * arch/x86/kernel/entry_32.S); a 64-bit kernel's compat entry is
	 * entry_64_compat.S. */
	{ "/entry_32.S:", CD_EV_X86_32BIT, "entry_32", NULL },
	/* x86 setup_arch() (arch/x86/kernel/setup.c, 2.6.21+): the paravirt
	 * backend's pv_info.name, "bare hardware" when none took over. */
	{ "Booting paravirtualized kernel on ", CD_EV_PARAVIRT_BOOT, NULL, from_plain },
	/* the device tree's model (else its compatible): "linux,dummy-virt"
	 * for QEMU's virt board, a board's name otherwise */
	{ "Machine model: ", CD_EV_MACHINE_MODEL, NULL, from_fdt },
	/* arm_arch_timer.c: the timer running ("cp15 timer(s) running at",
	 * "cp15 and mmio timer(s) running at", "mmio timer running at") or
	 * refused ("Unable to find a suitable frame in timer @ ...", "No
	 * interrupt available, giving up", "frequency not available") */
	{ "cp15 ", CD_EV_ARM_TIMER, "running", from_arch_timer },
	{ "mmio timer", CD_EV_ARM_TIMER, "running", from_arch_timer },
	{ "Unable to find a suitable frame", CD_EV_ARM_TIMER, "refused", from_arch_timer },
	{ "No interrupt available", CD_EV_ARM_TIMER, "refused", from_arch_timer },
	{ "frequency not available", CD_EV_ARM_TIMER, "refused", from_arch_timer },
	/* gVisor's Sentry writes a kernel log of its own, which starts so
	 * (pkg/sentry/kernel/syslog.go) */
	{ "Starting gVisor", CD_EV_SANDBOX, "gvisor", from_plain },
};

/* A frame of a decoded backtrace (scripts/decode_stacktrace.sh):
 * "[? ]SYMBOL[+OFF/LEN] (PATH:LINE)", PATH ending in path_end; the text
 * after path_end, or NULL. */
static const char *backtrace_frame(const char *m, const char *path_end)
{
	const char *p = starts(m, "? ") ? m + 2 : m, *e;
	size_t n = strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.+/");

	if (n == 0 || !starts(p += n, " (") || !(e = after(p, path_end)) || strcspn(p + 2, " ()") < (size_t)(e - p - 2))
		return NULL;
	return is_digit(*e) && e[strspn(e, "0123456789")] == ')' ? e : NULL;
}

static const char *plain_match(const char *m, const struct plain *w)
{
	if (w->from)
		return lead(m, w->from, w->text);
	if (w->text[0] == '/')
		return backtrace_frame(m, w->text);
	const char *p = m + strspn(m, "0123456789");   /* "%ldMB HIGHMEM available." */
	return p > m && starts(p, w->text) ? p + strlen(w->text) : NULL;
}

static bool rec_plain(struct kstate *st, const char *m)
{
	for (size_t i = 0; i < CD_ARRAY_LEN(plain); i++) {
		const char *p = plain_match(m, &plain[i]), *q;
		if (p && plain[i].kind == CD_EV_TSC_UNSTABLE)
			p = *p == ':' || is_space(*p) ? skip_spaces(p + (*p == ':')) : NULL;
		if (!p)
			continue;
		struct cd_event *ev = add(st, plain[i].kind);
		copy_upto(ev->name, plain[i].name ? plain[i].name : p, "");
		/* "PIT calibration deviates from %s: %lu %lu": the PIT's kHz, the reference's */
		if (plain[i].kind == CD_EV_TSC_CALIBRATION && (q = strchr(p, ':')) &&
		    parse_i64(q = skip_spaces(q + 1), &ev->value))
			parse_i64(q + strspn(q, "0123456789"), &ev->value2);
		return true;
	}
	return false;
}

typedef bool (*recogniser)(struct kstate *st, const char *m);

/* Tried in order; the watchdog's own lines come before the plain phrases. */
static const recogniser recognisers[] = {
	rec_boot, rec_wd_counters, rec_wd_skewed, rec_wd_header, rec_readback,
	rec_cs_delta, rec_switch, rec_registered, rec_sync, rec_tsc_adjust, rec_freq, rec_xen,
	rec_arch_timer, rec_dmi, rec_plain,
};

bool cd_klog_recognise(struct kstate *st)
{
	for (size_t i = 0; i < CD_ARRAY_LEN(recognisers); i++)
		if (recognisers[i](st, st->msg))
			return true;
	return false;
}
