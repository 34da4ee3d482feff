/* SPDX-License-Identifier: MIT */
/*
 * watchreport.c: watch's events as text, JSON, textfile metrics and hook
 * environment (watchreport.h).
 *
 * Metric names follow check's (output/prometheus.c), under
 * clockdoctor_watch_: node_exporter's textfile collector refuses a series
 * that two files both export, and a fleet may run `check --prometheus` from
 * a timer beside watch in the same folder.  The current clocksource itself
 * is not exported: node_exporter's node_time_clocksource_current_info has
 * it, read at each scrape.
 */
#include "output/watchreport.h"
#include "output/output.h"
#include "output/jsonw.h"
#include "util/printable.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *const cd_watch_types[CD_WATCH_N_TYPES] = {
	"clocksource-changed", "clocksource-unreadable", "clocksource-switched", "tsc-unstable",
	"watchdog-skew", "clocksource-unstable", "watchdog-readback", "tsc-warp", "tsc-adjust",
	"tsc-broken-bios", "sched-clock-unstable",
};

#define MAX_FIELDS 24

struct field {
	const char *key;
	char val[1100];
	bool num;                    /* a JSON number (or bool), not a string */
};

struct fields {
	int n;
	struct field f[MAX_FIELDS];
};

/* The next field, named key; NULL when there are MAX_FIELDS already. */
static struct field *next_field(struct fields *fs, const char *key, bool num)
{
	if (fs->n >= MAX_FIELDS)
		return NULL;
	struct field *f = &fs->f[fs->n++];
	f->key = key;
	f->num = num;
	return f;
}

/* A string field, as it is. */
static void put_str(struct fields *fs, const char *key, const char *s)
{
	struct field *f = next_field(fs, key, false);
	if (f)
		snprintf(f->val, sizeof f->val, "%s", s);
}

/* A number, or true or false: JSON writes it bare. */
static void put_num(struct fields *fs, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void put_num(struct fields *fs, const char *key, const char *fmt, ...)
{
	struct field *f = next_field(fs, key, true);
	if (!f)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(f->val, sizeof f->val, fmt, ap);
	va_end(ap);
}

static void iso_time(char *buf, size_t cap, double t)
{
	time_t s = (time_t)t;
	struct tm tm;
	gmtime_r(&s, &tm);
	int ms = (int)((t - (double)s) * 1000);
	snprintf(buf, cap, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
	         tm.tm_hour, tm.tm_min, tm.tm_sec, ms < 0 ? 0 : ms > 999 ? 999 : ms);
}

/* The fields of a kernel log event, by kind. */
static void kernel_fields(struct fields *fs, const struct cd_kgroup_event *k)
{
	const struct cd_event *e = &k->ev;
	switch (e->kind) {
	case CD_EV_CS_SWITCHED:
		put_str(fs, "clocksource", e->name);
		break;
	case CD_EV_TSC_UNSTABLE:
		put_str(fs, "reason", e->name);
		break;
	case CD_EV_TSC_WARP:
		put_num(fs, "cycles", "%" PRId64, e->value);
		if (e->cpu_a >= 0)
			put_num(fs, "cpu_a", "%d", e->cpu_a);
		if (e->cpu_b >= 0)
			put_num(fs, "cpu_b", "%d", e->cpu_b);
		break;
	case CD_EV_WATCHDOG_SKEW:
		put_str(fs, "clocksource", e->name);
		if (e->name2[0])
			put_str(fs, "watchdog", e->name2);
		if (e->cpu_a >= 0)
			put_num(fs, "cpu", "%d", e->cpu_a);
		if (e->value || e->value2) {
			put_num(fs, "wd_nsec", "%" PRId64, e->value);
			put_num(fs, "cs_nsec", "%" PRId64, e->value2);
			put_num(fs, "skew_ns", "%lld", (long long)e->value2 - (long long)e->value);
		}
		if (e->wd_cycles)
			put_num(fs, "wd_cycles", "%" PRIu64, e->wd_cycles);
		if (e->cs_cycles)
			put_num(fs, "cs_cycles", "%" PRIu64, e->cs_cycles);
		break;
	case CD_EV_CS_UNSTABLE_DELTA:
		put_str(fs, "clocksource", e->name);
		put_num(fs, "delta_ns", "%" PRId64, e->value);
		break;
	case CD_EV_WD_READBACK_EXCESSIVE:
		if (e->name[0])
			put_str(fs, "clocksource", e->name);
		if (e->name2[0])
			put_str(fs, "watchdog", e->name2);
		if (e->cpu_a >= 0)
			put_num(fs, "cpu", "%d", e->cpu_a);
		put_num(fs, "delay_ns", "%" PRId64, e->value);
		if (e->value2)
			put_num(fs, "limit_ns", "%" PRId64, e->value2);
		break;
	case CD_EV_TSC_ADJUST:
		if (e->name[0])
			put_str(fs, "kind", e->name);
		if (e->cpu_a >= 0)
			put_num(fs, "cpu", "%d", e->cpu_a);
		put_num(fs, "value", "%" PRId64, e->value);
		if (e->cpu_b >= 0) {
			put_num(fs, "cpu_ref", "%d", e->cpu_b);
			put_num(fs, "value_ref", "%" PRId64, e->value2);
		}
		break;
	default:
		break;
	}
	if (e->ts >= 0)
		put_num(fs, "uptime", "%.6f", e->ts);
	if (k->facility >= 0) {
		put_num(fs, "facility", "%d", k->facility);
		put_num(fs, "level", "%d", k->level);
		/* A process may write to /dev/kmsg (facility user): such a line
		 * is no word of the kernel's, and says so. */
		put_num(fs, "from_kernel", "%s", k->facility == 0 ? "true" : "false");
	}
	put_str(fs, "raw", k->raw);
}

static void event_fields(const struct cd_watch_event *e, struct fields *fs)
{
	char iso[80];
	fs->n = 0;
	iso_time(iso, sizeof iso, e->unix_time);
	put_str(fs, "event", e->type);
	put_str(fs, "time", iso);
	put_num(fs, "unix_time", "%.3f", e->unix_time);
	put_str(fs, "source", e->source);
	if (strcmp(e->type, "clocksource-changed") == 0) {
		put_str(fs, "from", e->from[0] ? e->from : "unknown");
		put_str(fs, "to", e->to);
	}
	if (e->error[0])
		put_str(fs, "error", e->error);
	if (e->kernel)
		kernel_fields(fs, &e->k);
}

void cd_watch_text(FILE *out, const struct cd_watch_event *e)
{
	struct fields fs;
	event_fields(e, &fs);
	/* "TIME EVENT key=value ...", the raw log lines below. */
	fprintf(out, "%s %s", fs.f[1].val, e->type);
	for (int i = 3; i < fs.n; i++) {
		const struct field *f = &fs.f[i];
		if (strcmp(f->key, "raw") == 0 || strcmp(f->key, "facility") == 0 || strcmp(f->key, "level") == 0)
			continue;
		bool blank = strchr(f->val, ' ') != NULL;
		fprintf(out, " %s=%s%s%s", f->key, blank ? "\"" : "", f->val, blank ? "\"" : "");
	}
	fputc('\n', out);
	if (e->kernel) {
		char raw[sizeof e->k.raw];
		snprintf(raw, sizeof raw, "%s", e->k.raw);
		for (char *save = NULL, *l = strtok_r(raw, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
			cd_printable(l);
			fprintf(out, "    | %s\n", l);
		}
	}
}

void cd_watch_json(FILE *out, const struct cd_watch_event *e)
{
	struct fields fs;
	event_fields(e, &fs);
	struct cd_jsonw w;
	cd_jsonw_open(&w, out, 0, "watch", -1);
	for (int i = 0; i < fs.n; i++) {
		const struct field *f = &fs.f[i];
		if (!f->num) {
			cd_jsonw_string(&w, f->key, f->val);
		} else if (strcmp(f->val, "true") == 0 || strcmp(f->val, "false") == 0) {
			cd_jsonw_bool(&w, f->key, f->val[0] == 't');
		} else {
			/* As formatted: a 64-bit counter or a Unix time with its
			 * milliseconds must not round. */
			cd_jsonw_number_text(&w, f->key, f->val);
		}
	}
	cd_jsonw_end_object(&w);
	fputc('\n', out);
}

int cd_watch_env(const struct cd_watch_event *e, char *const *base, char *buf, size_t cap, char **env, int max)
{
	struct fields fs;
	event_fields(e, &fs);
	int n = 0;
	size_t used = 0;
	for (int i = 0; base && base[i]; i++)
		if (strncmp(base[i], "CLOCKDOCTOR_", 12) != 0) {
			if (n >= max - 1)
				return -ENOSPC;
			env[n++] = base[i];
		}
	/* The JSON line too, for a hook that wants everything at once. */
	char *json = NULL;
	size_t jlen = 0;
	FILE *mem = open_memstream(&json, &jlen);
	if (mem) {
		cd_watch_json(mem, e);
		fclose(mem);
	}
	if (json && jlen && json[jlen - 1] == '\n')
		json[--jlen] = '\0';
	for (int i = 0; i <= fs.n; i++) {
		char name[48];
		const char *val = i < fs.n ? fs.f[i].val : json ? json : "";
		const char *key = i < fs.n ? fs.f[i].key : "json";
		size_t k;
		for (k = 0; key[k] && k + 13 < sizeof name; k++)
			name[k] = (char)(key[k] >= 'a' && key[k] <= 'z' ? key[k] - 32 : key[k]);
		name[k] = '\0';
		int w = snprintf(buf + used, cap - used, "CLOCKDOCTOR_%s=%s", name, val);
		if (w < 0 || used + (size_t)w + 1 > cap || n >= max - 1) {
			free(json);
			return -ENOSPC;
		}
		env[n++] = buf + used;
		used += (size_t)w + 1;
	}
	free(json);
	env[n] = NULL;
	return n;
}

void cd_watch_count(struct cd_watch_state *s, const struct cd_watch_event *e)
{
	for (int i = 0; i < CD_WATCH_N_TYPES; i++)
		if (strcmp(cd_watch_types[i], e->type) == 0) {
			s->count[i]++;
			s->last[i] = e->unix_time;
		}
	if (strcmp(e->type, "clocksource-changed") == 0) {
		s->changes++;
		s->last_change = e->unix_time;
	}
}

static void head(FILE *out, const char *name, const char *type, const char *help)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

void cd_watch_textfile(FILE *out, const struct cd_watch_state *s, double now)
{
	head(out, "clockdoctor_watch_clocksource_readable", "gauge",
	     "1 when watch can read current_clocksource.");
	fprintf(out, "clockdoctor_watch_clocksource_readable %d\n", s->cs_readable ? 1 : 0);
	/* No sentinel for "unknown": the series is absent then (a clocksource
	 * watch cannot read, or one whose vDSO read depends on the host). */
	head(out, "clockdoctor_watch_clocksource_vdso", "gauge",
	     "1 when the vDSO reads the current clocksource, 0 when every time call is a system call; "
	     "absent when that depends on the host or is unknown.");
	if (s->cs_readable && s->vdso >= 0)
		fprintf(out, "clockdoctor_watch_clocksource_vdso %d\n", s->vdso);
	head(out, "clockdoctor_watch_clocksource_changes_total", "counter",
	     "Changes of the current clocksource watch saw since it started.");
	fprintf(out, "clockdoctor_watch_clocksource_changes_total %llu\n", s->changes);
	head(out, "clockdoctor_watch_last_change_timestamp_seconds", "gauge",
	     "When watch last saw the clocksource change (Unix time; 0: not since it started).");
	fprintf(out, "clockdoctor_watch_last_change_timestamp_seconds %.3f\n", s->last_change);
	head(out, "clockdoctor_watch_events_total", "counter",
	     "Clocksource events watch reported since it started, by type.");
	for (int i = 0; i < CD_WATCH_N_TYPES; i++)
		fprintf(out, "clockdoctor_watch_events_total{event=\"%s\"} %llu\n", cd_watch_types[i], s->count[i]);
	head(out, "clockdoctor_watch_last_event_timestamp_seconds", "gauge",
	     "When watch last reported each type of event (Unix time).");
	for (int i = 0; i < CD_WATCH_N_TYPES; i++)
		if (s->count[i])
			fprintf(out, "clockdoctor_watch_last_event_timestamp_seconds{event=\"%s\"} %.3f\n",
			        cd_watch_types[i], s->last[i]);
	head(out, "clockdoctor_watch_kernel_log_readable", "gauge",
	     "1 when watch follows the kernel log (/dev/kmsg), 0 when it may not read it.");
	fprintf(out, "clockdoctor_watch_kernel_log_readable %d\n", s->kmsg_readable ? 1 : 0);
	head(out, "clockdoctor_watch_kernel_log_lost_total", "counter",
	     "Times kernel log records were overwritten before watch read them.");
	fprintf(out, "clockdoctor_watch_kernel_log_lost_total %llu\n", s->kmsg_lost);
	if (s->syscalls_counting) {
		head(out, "clockdoctor_watch_time_syscalls_total", "counter",
		     "Time system calls (clock_gettime, gettimeofday, time that missed the vDSO), every "
		     "process, counted by watch --syscalls since it started, during its counts.");
		fprintf(out, "clockdoctor_watch_time_syscalls_total %llu\n", s->syscalls);
		head(out, "clockdoctor_watch_time_syscalls_counted_seconds_total", "counter",
		     "Seconds watch --syscalls spent counting since it started: the rate of time system "
		     "calls is rate(clockdoctor_watch_time_syscalls_total) divided by this one's rate.");
		fprintf(out, "clockdoctor_watch_time_syscalls_counted_seconds_total %.3f\n", s->syscall_count_s);
	}
	head(out, "clockdoctor_watch_start_time_seconds", "gauge", "When watch started (Unix time).");
	fprintf(out, "clockdoctor_watch_start_time_seconds %.3f\n", s->start_time);
	head(out, "clockdoctor_watch_last_update_timestamp_seconds", "gauge",
	     "When watch last wrote this file (Unix time): a stale value means watch is not running.");
	fprintf(out, "clockdoctor_watch_last_update_timestamp_seconds %.3f\n", now);
}
