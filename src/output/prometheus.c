/*
 * prometheus.c: the report as node_exporter textfile metrics.
 *
 * Names are prefixed clockdoctor_ so that they sit beside node_exporter's own
 * node_time_clocksource_* without clashing; label values are escaped as the
 * exposition format requires (backslash, double quote, newline).
 */
#include "output/output.h"

void cd_prom_label(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fprintf(out, "\\%c", *s);
		else if (*s == '\n')
			fputs("\\n", out);
		else
			fputc(*s, out);
	}
}

static void head(FILE *out, const char *name, const char *help)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
}

void cd_output_prometheus(FILE *out, const struct cd_facts *f, const struct cd_measurements *m,
                          const struct cd_report *r)
{
	head(out, "clockdoctor_status", "Verdict of the last check: 0 ok, 1 warning, 2 critical, 3 unknown.");
	fprintf(out, "clockdoctor_status %d\n", (int)r->status);

	head(out, "clockdoctor_finding", "Findings of the last check (1 for each code present).");
	for (int i = 0; i < r->n; i++)
		fprintf(out, "clockdoctor_finding{code=\"%s\",severity=\"%s\"} 1\n", r->f[i].code,
		        cd_severity_name(r->f[i].severity));

	if (f->cs.have_current) {
		head(out, "clockdoctor_clocksource_current_info", "The kernel's current clocksource.");
		fputs("clockdoctor_clocksource_current_info{clocksource=\"", out);
		cd_prom_label(out, f->cs.current);
		fputs("\"} 1\n", out);
	}

	head(out, "clockdoctor_measured", "1 when the last check measured the clocks.");
	fprintf(out, "clockdoctor_measured %d\n", m && m->done ? 1 : 0);
	if (m && m->done) {
		head(out, "clockdoctor_clock_call_seconds", "Median cost of one call of each way of reading the time.");
		for (int i = 0; i < m->n; i++)
			if (m->c[i].measured)
				fprintf(out, "clockdoctor_clock_call_seconds{clock=\"%s\"} %.9g\n", m->c[i].spec->name,
				        m->c[i].ns_per_call / 1e9);
		head(out, "clockdoctor_clock_syscall", "1 when the call was measured going through the kernel.");
		for (int i = 0; i < m->n; i++)
			if (m->c[i].measured)
				fprintf(out, "clockdoctor_clock_syscall{clock=\"%s\"} %d\n", m->c[i].spec->name,
				        m->c[i].syscall ? 1 : 0);
	}
}
