/* SPDX-License-Identifier: MIT */
/* Unit tests of watch's output: the text line, the JSON line (every field,
 * numbers as numbers), the hook's environment, the textfile's metrics. */
#include "output/output.h"
#include "output/watchreport.h"
#include "unit.h"

#include <errno.h>
#include <stdlib.h>

/* The watchdog's report, grouped as kmsg.c does. */
static void skew_event(struct cd_watch_event *e)
{
	struct cd_kgroup g;
	struct cd_kgroup_event ev[4];
	cd_kgroup_init(&g);
	cd_kgroup_feed(&g, "12,900,5000000,-;clocksource: timekeeping watchdog on CPU1: Marking clocksource "
	               "'tsc' as unstable because the skew is too large:", 1, ev, 4);
	cd_kgroup_feed(&g, "12,901,5000100,-;clocksource:                       'hpet' wd_nsec: 500000000 "
	               "wd_now: 10 wd_last: 5 mask: ffffffff", 1, ev, 4);
	cd_kgroup_feed(&g, "12,902,5000200,-;clocksource:                       'tsc' cs_nsec: 1000000000 "
	               "cs_now: 20 cs_last: 10 mask: ffffffffffffffff", 1, ev, 4);
	CHECK_INT(cd_kgroup_flush(&g, 1, true, ev, 4), 1);
	cd_kgroup_free(&g);
	memset(e, 0, sizeof *e);
	e->type = cd_watch_event_type(ev[0].ev.kind);
	e->source = "kmsg";
	e->unix_time = 1767225600.25;
	e->kernel = true;
	e->k = ev[0];
}

static void test_skew(void)
{
	struct cd_watch_event e;
	skew_event(&e);
	char *text;
	UNIT_CAPTURE(text, cd_watch_text(out, &e));
	CHECK(strncmp(text, "2026-01-01T00:00:00.250Z watchdog-skew source=kmsg clocksource=tsc watchdog=hpet "
	              "cpu=1 wd_nsec=500000000 cs_nsec=1000000000 skew_ns=500000000 ", 115) == 0);
	CHECK(strstr(text, " from_kernel=false\n") != NULL);
	CHECK(strstr(text, "\n    | clocksource: timekeeping watchdog on CPU1: Marking") != NULL);
	free(text);
	char *json;
	UNIT_CAPTURE(json, cd_watch_json(out, &e));
	CHECK(json[0] == '{' && strchr(json, '\n') == json + strlen(json) - 1); /* one line */
	static const char *const fields[] = {
		"\"event\":\"watchdog-skew\"",
		"\"time\":\"2026-01-01T00:00:00.250Z\"",
		"\"unix_time\":1767225600.250,",
		"\"uptime\":5.000000,",
		"\"wd_nsec\":500000000,",
		"\"cs_nsec\":1000000000,",
		"\"skew_ns\":500000000,",
		"\"cpu\":1,",
		"\"facility\":1,",
		"\"from_kernel\":false,",
		"\"raw\":\"clocksource: timekeeping watchdog on CPU1: Marking clocksource 'tsc' as "
		"unstable because the skew is too large:\\nclocksource:",
	};
	CHECK_HAS_ALL(json, fields);
	free(json);

	char *base[] = { "PATH=/bin", "CLOCKDOCTOR_EVENT=stale", "HOME=/root", NULL };
	char buf[16384], *env[64];
	int n = cd_watch_env(&e, base, buf, sizeof buf, env, 64);
	CHECK(n > 10);
	CHECK(env[n] == NULL);
	CHECK_STR(env[0], "PATH=/bin");
	CHECK_STR(env[1], "HOME=/root");      /* the stale CLOCKDOCTOR_EVENT is gone */
	CHECK_STR(env[2], "CLOCKDOCTOR_EVENT=watchdog-skew");
	bool wd = false, js = false, raw = false;
	for (int i = 0; i < n; i++) {
		wd |= strcmp(env[i], "CLOCKDOCTOR_WD_NSEC=500000000") == 0;
		js |= strncmp(env[i], "CLOCKDOCTOR_JSON={\"tool\":\"clockdoctor\",", 37) == 0 &&
		      strstr(env[i], ",\"exit_status\":null,\"event\":\"watchdog-skew\"") != NULL;
		raw |= strncmp(env[i], "CLOCKDOCTOR_RAW=clocksource: timekeeping", 40) == 0;
		CHECK(strcmp(env[i], "CLOCKDOCTOR_EVENT=stale") != 0);
	}
	CHECK(wd && js && raw);
	CHECK_INT(cd_watch_env(&e, base, buf, 100, env, 64), -ENOSPC);
	CHECK_INT(cd_watch_env(&e, base, buf, sizeof buf, env, 5), -ENOSPC);
}

static void test_changed_and_textfile(void)
{
	struct cd_watch_event e = { .type = "clocksource-changed", .source = "sysfs", .unix_time = 1767225601.5,
	                            .from = "hpet", .to = "acpi_pm" };
	char *text;
	UNIT_CAPTURE(text, cd_watch_text(out, &e));
	CHECK_STR(text, "2026-01-01T00:00:01.500Z clocksource-changed source=sysfs from=hpet to=acpi_pm\n");
	free(text);
	char *json;
	UNIT_CAPTURE(json, cd_watch_json(out, &e));
	CHECK_STR(json, "{\"tool\":\"clockdoctor\",\"version\":\"" CD_VERSION "\",\"command\":\"watch\","
	          "\"schema_version\":1,\"exit_status\":null,"
	          "\"event\":\"clocksource-changed\",\"time\":\"2026-01-01T00:00:01.500Z\","
	          "\"unix_time\":1767225601.500,\"source\":\"sysfs\",\"from\":\"hpet\",\"to\":\"acpi_pm\"}\n");
	free(json);

	struct cd_watch_state st = { .start_time = 1767225600, .cs_readable = true, .current = "acpi_pm",
	                             .vdso = 0, .kmsg_readable = true };
	cd_watch_count(&st, &e);
	struct cd_watch_event s;
	skew_event(&s);
	cd_watch_count(&st, &s);
	CHECK(st.changes == 1);
	char *buf;
	UNIT_CAPTURE(buf, cd_watch_textfile(out, &st, 1767225602));
	/* The clocksource's name is node_exporter's to export, not watch's. */
	CHECK_LACKS(buf, "current_info");
	static const char *const metrics[] = {
		"\nclockdoctor_watch_clocksource_changes_total 1\n",
		"# TYPE clockdoctor_watch_clocksource_changes_total counter\n",
		"\nclockdoctor_watch_last_change_timestamp_seconds 1767225601.500\n",
		"\nclockdoctor_watch_events_total{event=\"watchdog-skew\"} 1\n",
		"\nclockdoctor_watch_events_total{event=\"tsc-unstable\"} 0\n",
		"\nclockdoctor_watch_last_event_timestamp_seconds{event=\"watchdog-skew\"} 1767225600.250\n",
		"\nclockdoctor_watch_clocksource_vdso 0\n",
		"\nclockdoctor_watch_kernel_log_readable 1\n",
		"\nclockdoctor_watch_last_update_timestamp_seconds 1767225602.000\n",
	};
	CHECK_HAS_ALL(buf, metrics);
	CHECK_LACKS(buf, "last_event_timestamp_seconds{event=\"tsc-unstable\"}");
	CHECK_LACKS(buf, "time_syscalls");   /* not counted: not there */
	/* Every sample line is NAME{labels} VALUE or NAME VALUE. */
	for (char *save = NULL, *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
		CHECK(l[0] == '#' || (strncmp(l, "clockdoctor_", 12) == 0 && strchr(l, ' ')));
	free(buf);
	/* Unreadable: no vdso sample (no sentinel value); the syscall
	 * counters, counters both. */
	st.cs_readable = false;
	st.syscalls_counting = true;
	st.syscalls = 523456;
	st.syscall_count_s = 3.0004;
	UNIT_CAPTURE(buf, cd_watch_textfile(out, &st, 1));
	CHECK(strstr(buf, "current_info{") == NULL);
	CHECK(strstr(buf, "\nclockdoctor_watch_clocksource_readable 0\n") != NULL);
	CHECK(strstr(buf, "\nclockdoctor_watch_clocksource_vdso ") == NULL);
	CHECK(strstr(buf, "\n# TYPE clockdoctor_watch_time_syscalls_total counter\n"
	                  "clockdoctor_watch_time_syscalls_total 523456\n") != NULL);
	CHECK(strstr(buf, "\n# TYPE clockdoctor_watch_time_syscalls_counted_seconds_total counter\n"
	                  "clockdoctor_watch_time_syscalls_counted_seconds_total 3.000\n") != NULL);
	CHECK_LACKS(buf, "per_second");
	free(buf);
	/* Readable, but a clocksource whose vDSO read depends on the host: absent too. */
	st.cs_readable = true;
	st.vdso = -1;
	UNIT_CAPTURE(buf, cd_watch_textfile(out, &st, 1));
	CHECK(strstr(buf, "\nclockdoctor_watch_clocksource_vdso ") == NULL);
	CHECK(strstr(buf, "\nclockdoctor_watch_clocksource_readable 1\n") != NULL);
	free(buf);
}

static void test_escaping(void)
{
	/* A log line with quotes, a backslash and a control byte stays one
	 * valid JSON line. */
	struct cd_watch_event e = { .type = "tsc-unstable", .source = "kmsg", .unix_time = 1, .kernel = true };
	e.k.ev.kind = CD_EV_TSC_UNSTABLE;
	e.k.ev.ts = -1;
	e.k.facility = -1;
	snprintf(e.k.ev.name, sizeof e.k.ev.name, "a \"quoted\" \\ reason");
	snprintf(e.k.raw, sizeof e.k.raw, "tsc: Marking TSC unstable due to a \"quoted\" \\ reason\x01");
	char *json;
	UNIT_CAPTURE(json, cd_watch_json(out, &e));
	CHECK(strstr(json, "\"reason\":\"a \\\"quoted\\\" \\\\ reason\"") != NULL);
	CHECK(strstr(json, "\\u0001") != NULL);
	CHECK(strchr(json, '\n') == json + strlen(json) - 1);
	CHECK(strstr(json, "uptime") == NULL);  /* no time in the line: none given */
	free(json);
	char *text;
	UNIT_CAPTURE(text, cd_watch_text(out, &e));
	CHECK(strstr(text, "reason=\"a \"quoted\" \\ reason\"") != NULL);
	free(text);
}

int main(void)
{
	test_skew();
	test_changed_and_textfile();
	test_escaping();
	return unit_done("watchreport");
}
