/* SPDX-License-Identifier: MIT */
/*
 * page.c: the page of `clockdoctor report` (report.h): the verdict first,
 * then each finding with its evidence and fixes, the machine's facts, the
 * figures (charts.c) and the JSON they were drawn from.  One file, nothing
 * fetched: the style sheet is inline (light, dark, print, narrow windows),
 * the charts are inline SVG, and no script is needed to read it.
 */
#include "report/report.h"
#include "output/html.h"
#include "output/output.h"

#include <stdlib.h>
#include <string.h>

static const char *const part_names[CD_RPT_N] = { "check", "bench", "tsc", "accuracy", "top" };

const char *cd_rpt_part_name(enum cd_rpt_part p)
{
	return p < CD_RPT_N ? part_names[p] : "?";
}

int cd_rpt_take(struct cd_rpt_input *in, enum cd_rpt_part p, char *text, size_t len, char *err, size_t errcap)
{
	int max = p == CD_RPT_TOP ? CD_RPT_TOP_MAX : 1;
	struct cd_json **doc = calloc((size_t)max, sizeof *doc);
	int n = 0;
	size_t at = 0, values = 0;
	if (!doc) {
		snprintf(err, errcap, "out of memory");
		free(text);
		return -1;
	}
	while (at < len && n < max) {
		size_t end = 0;
		doc[n] = cd_json_parse(text + at, len - at, &end, err, errcap);
		if (!doc[n])
			goto bad;
		const struct cd_jv *root = cd_json_root(doc[n]);
		if (!root || root->type != CD_JV_OBJECT) {
			snprintf(err, errcap, "not a JSON object");
			n++;
			goto bad;
		}
		n++;
		at += end;
		/* top's lines together hold no more values than one document
		 * may: each value costs far more memory than its text */
		values += cd_json_values(doc[n - 1]);
		if (values > CD_JSON_MAX_NODES) {
			snprintf(err, errcap, "more than %d values in all", CD_JSON_MAX_NODES);
			goto bad;
		}
		if (p != CD_RPT_TOP && at < len) {
			snprintf(err, errcap, "more after the JSON object (at byte %zu)", at);
			goto bad;
		}
	}
	if (n == 0) {
		snprintf(err, errcap, "empty");
		goto bad;
	}
	in->text = text;
	in->len = at;
	in->doc = doc;
	in->n = n;
	return 0;
bad:
	for (int i = 0; i < n; i++)
		cd_json_free(doc[i]);
	free(doc);
	free(text);
	return -1;
}

void cd_rpt_free(struct cd_rpt *r)
{
	for (int p = 0; p < CD_RPT_N; p++) {
		struct cd_rpt_input *in = &r->in[p];
		for (int i = 0; i < in->n; i++)
			cd_json_free(in->doc[i]);
		free(in->doc);
		free(in->text);
		in->doc = NULL;
		in->text = NULL;
		in->n = 0;
	}
}

const struct cd_jv *cd_rpt_doc(const struct cd_rpt *r, enum cd_rpt_part p)
{
	return r->in[p].n ? cd_json_root(r->in[p].doc[0]) : NULL;
}

/* ---- the style sheet ---- */

static const char CSS[] =
	":root{color-scheme:light dark;--bg:#fff;--fg:#1f2328;--mut:#59636e;--line:#d1d9e0;--panel:#f6f8fa;"
	"--ok:#1a7f37;--warn:#9a6700;--crit:#cf222e;--info:#0969da;--vdso:#0969da;--kern:#bc4c00;--sys:#cf222e;"
	"--ctr:#8250df;--lib:#1a7f37;--band:rgba(9,105,218,.16);--h0:#dafbe1;--h1:#aceebb;--h2:#6fdd8b;--h3:#2da44e;"
	"--h4:#116329}\n"
	"@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--mut:#9198a1;--line:#3d444d;"
	"--panel:#151b23;--ok:#3fb950;--warn:#d29922;--crit:#f85149;--info:#4493f8;--vdso:#4493f8;--kern:#db6d28;"
	"--sys:#f85149;--ctr:#ab7df8;--lib:#3fb950;--band:rgba(68,147,248,.22);--h0:#033a16;--h1:#04561f;"
	"--h2:#1a7f37;--h3:#2ea043;--h4:#56d364}}\n"
	"*{box-sizing:border-box}\n"
	"body{margin:0 auto;max-width:960px;padding:16px;background:var(--bg);color:var(--fg);"
	"font:15px/1.5 system-ui,-apple-system,'Segoe UI',sans-serif;overflow-wrap:break-word}\n"
	"h1{font-size:1.6em;margin:.2em 0}h2{font-size:1.25em;border-bottom:1px solid var(--line);padding-bottom:.2em;"
	"margin-top:1.6em}h3{font-size:1.05em;margin:.2em 0}\n"
	".meta{color:var(--mut);margin:.2em 0}\n"
	".verdict{border-left:6px solid var(--mut);background:var(--panel);padding:10px 14px;margin:12px 0;"
	"border-radius:6px}\n"
	".verdict .status{font-weight:700;text-transform:uppercase;letter-spacing:.04em}\n"
	".verdict p{margin:.25em 0}\n"
	".st-ok{border-color:var(--ok)}.st-ok .status{color:var(--ok)}\n"
	".st-warning{border-color:var(--warn)}.st-warning .status{color:var(--warn)}\n"
	".st-critical{border-color:var(--crit)}.st-critical .status{color:var(--crit)}\n"
	".st-unknown .status{color:var(--mut)}\n"
	".finding{border:1px solid var(--line);border-left:5px solid var(--info);border-radius:6px;padding:8px 12px;"
	"margin:10px 0;break-inside:avoid}\n"
	".finding.sev-warning{border-left-color:var(--warn)}.finding.sev-critical{border-left-color:var(--crit)}\n"
	".sev{font-size:.8em;font-weight:700;text-transform:uppercase;padding:1px 6px;border-radius:4px;"
	"background:var(--info);color:#fff;margin-right:6px}\n"
	".sev-warning .sev{background:var(--warn)}.sev-critical .sev{background:var(--crit)}\n"
	".code{color:var(--mut);font:12px ui-monospace,monospace}\n"
	"ul.evidence{margin:.3em 0;padding-left:1.3em}\n"
	"dl.fix{margin:.3em 0}dl.fix dt{font-weight:600;margin-top:.3em}dl.fix dd{margin:0 0 0 1em}\n"
	"pre{background:var(--panel);border:1px solid var(--line);border-radius:4px;padding:6px 8px;margin:.25em 0;"
	"overflow-x:auto;white-space:pre-wrap;word-break:break-all;font:13px ui-monospace,monospace}\n"
	"table.facts{border-collapse:collapse;width:100%}table.facts th,table.facts td{text-align:left;"
	"vertical-align:top;padding:3px 8px;border-bottom:1px solid var(--line)}table.facts th{width:12em;"
	"color:var(--mut);font-weight:500}table.facts td{word-break:break-word}\n"
	".fig{margin:18px 0;break-inside:avoid}.fig figcaption p{color:var(--mut);margin:.2em 0 .5em}\n"
	".nothing{border:1px dashed var(--line);border-radius:6px;padding:10px;color:var(--mut)}\n"
	".absent{color:var(--mut);font-size:.9em}\n"
	".multiples{display:flex;flex-wrap:wrap;gap:8px}\n"
	"svg.chart{display:block;max-width:100%;height:auto;font:11px system-ui,sans-serif}\n"
	"svg .tick,svg .val{fill:var(--mut)}svg .name{fill:var(--fg);font-size:12px}svg .label{fill:var(--fg);"
	"font-size:12px}svg .reflabel{fill:var(--fg);font-size:11px;font-weight:600}\n"
	"svg .grid{stroke:var(--line);stroke-width:.6}svg .frame{stroke:var(--mut);stroke-width:1}\n"
	"svg .frame-box{fill:none;stroke:var(--line)}svg .self{fill:var(--panel);stroke:var(--line);stroke-width:.5}\n"
	"svg .vdso{fill:var(--vdso)}svg .kern{fill:var(--kern)}svg .sys{fill:var(--sys)}svg .ctr{fill:var(--ctr)}"
	"svg .lib{fill:var(--lib)}\n"
	"svg .ref{stroke-width:1.5;stroke-dasharray:5 3}svg .ref-vdso{stroke:var(--vdso)}svg .ref-sys{stroke:var(--sys)}"
	"svg .ref-ctr{stroke:var(--ctr)}svg .ref-kern{stroke:var(--kern)}\n"
	"svg .hbar{fill:var(--vdso)}svg .hbar.at-bound{fill:var(--warn)}\n"
	"svg .dot{fill:var(--kern);stroke:var(--bg);stroke-width:1.5}svg .dot.measured{fill:var(--vdso)}"
	"svg .errbar{stroke:var(--mut);stroke-width:2}\n"
	"svg .cell.h0{fill:var(--h0)}svg .cell.h1{fill:var(--h1)}svg .cell.h2{fill:var(--h2)}svg .cell.h3{fill:var(--h3)}"
	"svg .cell.h4{fill:var(--h4)}svg .cell.fail{fill:var(--crit)}svg .cell.refused{fill:var(--mut)}"
	"svg .cell{stroke:var(--bg);stroke-width:.5}svg .cell.mirror{opacity:.55}svg .cross{stroke:#fff;stroke-width:1.5}\n"
	"svg .band{fill:var(--band);stroke:var(--vdso);stroke-width:.8}svg .err{fill:var(--fg)}svg .err.over{fill:var(--crit)}\n"
	"svg .line{fill:none;stroke-width:1.8}svg .key{stroke:none}\n"
	"svg .s0 .line{stroke:var(--fg)}svg .s0 .pt,svg .s0 .key{fill:var(--fg)}\n"
	"svg .s1 .line{stroke:var(--sys)}svg .s1 .pt,svg .s1 .key{fill:var(--sys)}\n"
	"svg .s2 .line{stroke:var(--vdso)}svg .s2 .pt,svg .s2 .key{fill:var(--vdso)}\n"
	"svg .s3 .line{stroke:var(--ctr)}svg .s3 .pt,svg .s3 .key{fill:var(--ctr)}\n"
	"svg .s4 .line{stroke:var(--lib)}svg .s4 .pt,svg .s4 .key{fill:var(--lib)}\n"
	"svg .s5 .line,svg .s6 .line,svg .s7 .line,svg .s8 .line{stroke:var(--kern)}"
	"svg .s5 .pt,svg .s6 .pt,svg .s7 .pt,svg .s8 .pt,svg .s5 .key,svg .s6 .key,svg .s7 .key,svg .s8 .key"
	"{fill:var(--kern)}\n"
	"details{margin:.4em 0}summary{cursor:pointer}\n"
	"footer{color:var(--mut);font-size:.85em;margin-top:2em;border-top:1px solid var(--line);padding-top:.5em}\n"
	"@media (max-width:640px){body{padding:8px;font-size:14px}table.facts th{width:auto}}\n"
	"@media print{:root{--bg:#fff;--fg:#000;--mut:#444;--line:#bbb;--panel:#f4f4f4}body{max-width:none;"
	"font-size:11pt}.fig,.finding,.verdict{break-inside:avoid}details{display:none}a{color:inherit}}\n";

/* ---- sections ---- */

static void head(FILE *out, const struct cd_rpt *r)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	      "<meta name=\"generator\" content=\"clockdoctor " CD_VERSION "\">\n"
	      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
	      "img-src data:\">\n<title>clockdoctor report",
	      out);
	const struct cd_jv *check = cd_rpt_doc(r, CD_RPT_CHECK);
	const char *status = cd_jv_getstr(check, "status", NULL);
	if (status) {
		fputs(": ", out);
		cd_html_esc(out, status);
	}
	fputs("</title>\n<style>\n", out);
	fputs(CSS, out);
	fputs("</style>\n</head>\n<body>\n", out);
}

static void header(FILE *out, const struct cd_rpt *r)
{
	const struct cd_jv *check = cd_rpt_doc(r, CD_RPT_CHECK);
	fputs("<header>\n<h1>clockdoctor report</h1>\n<p class=\"meta\" id=\"source\">", out);
	switch (r->origin) {
	case CD_RPT_LIVE: fputs("Measured on this machine", out); break;
	case CD_RPT_SNAPSHOT:
		fputs("From the snapshot <code>", out);
		cd_html_esc(out, r->root);
		fputs("</code>. <b id=\"measured-nothing\">Measured: nothing</b>: a snapshot holds the machine's files, "
		      "not measurements; the figures need a run on the machine itself",
		      out);
		break;
	case CD_RPT_FILES: fputs("From the files sent (--from)", out); break;
	}
	fprintf(out, "; made %s by clockdoctor %s", r->generated, CD_VERSION);
	if (r->seconds >= 0.05)
		fprintf(out, " (%.1f s measuring)", r->seconds);
	fputs(".</p>\n", out);
	if (check) {
		fputs("<p class=\"meta\">clocksource <b>", out);
		cd_html_esc(out, cd_jv_str(cd_jv_path(check, "clocksource.current"), "unknown"));
		fputs("</b>; kernel ", out);
		cd_html_esc(out, cd_jv_str(cd_jv_path(check, "kernel.release"), "unknown"));
		fputs("; ", out);
		cd_html_esc(out, cd_jv_str(cd_jv_path(check, "hypervisor.display"),
		                           cd_jv_str(cd_jv_path(check, "hypervisor.name"), "hypervisor unknown")));
		fputs("; CPU ", out);
		cd_html_esc(out, cd_jv_str(cd_jv_path(check, "cpu.model"), "unknown"));
		double n = cd_jv_num(cd_jv_path(check, "cpu.count"), -1);
		if (n >= 0)
			fprintf(out, " (%.0f CPUs)", n);
		fputs("</p>\n", out);
	}
	fputs("</header>\n", out);
}

static void verdict(FILE *out, const struct cd_rpt *r)
{
	const struct cd_jv *check = cd_rpt_doc(r, CD_RPT_CHECK);
	const struct cd_jv *tsc = cd_rpt_doc(r, CD_RPT_TSC);
	const struct cd_jv *acc = cd_rpt_doc(r, CD_RPT_ACCURACY);
	const char *status = cd_jv_getstr(check, "status", "unknown");
	static const char *const known[] = { "ok", "warning", "critical", "unknown" };
	const char *cls = "unknown";
	for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
		if (strcmp(status, known[i]) == 0)
			cls = known[i];
	fprintf(out, "<section class=\"verdict st-%s\" id=\"verdict\" data-status=\"%s\">\n<h2>Verdict</h2>\n", cls, cls);
	if (check) {
		fprintf(out, "<p><span class=\"status\">%s</span>: ", cls);
		cd_html_esc(out, cd_jv_getstr(check, "verdict", ""));
		fputs("</p>\n", out);
	} else {
		fputs("<p><span class=\"status\">unknown</span>: no check in this report, so no verdict on the machine "
		      "as a whole (give check --json with --from).</p>\n",
		      out);
	}
	if (tsc) {
		fputs("<p id=\"verdict-tsc\">TSC: ", out);
		cd_html_esc(out, cd_jv_getstr(tsc, "summary", cd_jv_getstr(tsc, "verdict", "?")));
		fputs("</p>\n", out);
	}
	if (acc) {
		fputs("<p id=\"verdict-accuracy\">libfastclock: ", out);
		const char *e = cd_jv_getstr(acc, "error", NULL);
		if (e) {
			fputs("the comparison could not run: ", out);
			cd_html_esc(out, e);
		} else {
			const char *src = cd_jv_str(cd_jv_path(acc, "library.source"), "");
			if (strcmp(src, "counter") != 0) {
				fputs("reads the kernel's clock here (", out);
				cd_html_esc(out, cd_jv_str(cd_jv_path(acc, "library.reason_text"), src));
				fputs("); ", out);
			}
			fputs(cd_jv_getbool(acc, "ok", false) ? "within its stated bound and never backwards"
			                                      : "OUTSIDE its stated bound or backwards",
			      out);
			fprintf(out, " over %.1f s", cd_jv_getnum(acc, "elapsed_s", 0));
			double lo = cd_jv_num(cd_jv_path(acc, "error_bound.min_ns"), 0);
			double hi = cd_jv_num(cd_jv_path(acc, "error_bound.max_ns"), 0);
			if (hi > 0)
				fprintf(out, " (bound %.0f-%.0f ns)", lo, hi);
		}
		fputs("</p>\n", out);
	}
	fputs("</section>\n", out);
}

/* A fix text: lines; a line that starts with "$ " is a command, shown as
 * one to copy. */
static void fix_text(FILE *out, const char *text)
{
	const char *p = text;
	enum { NONE, PARA, CMDS } in = NONE;
	while (*p) {
		size_t n = strcspn(p, "\n");
		bool cmd = n >= 2 && p[0] == '$' && p[1] == ' ';
		if (cmd || n > 0) {
			if (in != (cmd ? CMDS : PARA)) {
				fputs(in == PARA ? "</p>" : in == CMDS ? "</code></pre>" : "", out);
				fputs(cmd ? "<pre><code>" : "<p>", out);
				in = cmd ? CMDS : PARA;
			} else {
				fputs(cmd ? "\n" : "<br>", out);
			}
			cd_html_escn(out, p, n);
		}
		p += n + (p[n] == '\n');
	}
	fputs(in == PARA ? "</p>" : in == CMDS ? "</code></pre>" : "", out);
}

static void findings(FILE *out, const struct cd_rpt *r)
{
	const struct cd_jv *check = cd_rpt_doc(r, CD_RPT_CHECK);
	const struct cd_jv *list = cd_jv_get(check, "findings");
	fprintf(out, "<section id=\"findings\" data-count=\"%zu\">\n<h2>Findings</h2>\n",
	        list && list->type == CD_JV_ARRAY ? list->n : (size_t)0);
	if (!check)
		fputs("<p class=\"nothing\">No check in this report: no findings.</p>\n", out);
	else if (!cd_jv_first(list))
		fputs("<p>No finding: nothing here makes reading the time slow.</p>\n", out);
	int i = 0;
	for (const struct cd_jv *f = cd_jv_first(list); f; f = f->next, i++) {
		const char *sev = cd_jv_getstr(f, "severity", "info");
		if (strcmp(sev, "critical") != 0 && strcmp(sev, "warning") != 0)
			sev = "info";
		fprintf(out, "<article class=\"finding sev-%s\" id=\"finding-%d\" data-code=\"", sev, i);
		cd_html_esc(out, cd_jv_getstr(f, "code", ""));
		fprintf(out, "\">\n<h3><span class=\"sev\">%s</span>", sev);
		cd_html_esc(out, cd_jv_getstr(f, "title", ""));
		fputs(" <span class=\"code\">", out);
		cd_html_esc(out, cd_jv_getstr(f, "code", ""));
		fputs("</span></h3>\n", out);
		const struct cd_jv *ev = cd_jv_first(cd_jv_get(f, "evidence"));
		if (ev) {
			fputs("<ul class=\"evidence\">", out);
			for (; ev; ev = ev->next) {
				fputs("<li>", out);
				cd_html_esc(out, cd_jv_str(ev, ""));
				fputs("</li>", out);
			}
			fputs("</ul>\n", out);
		}
		static const char *const keys[] = { "now", "lasting", "hypervisor", "risk" };
		static const char *const heads[] = { "Fix now (as root, no reboot)", "Lasting fix",
			                             "What only the hypervisor's owner can do", "Risk" };
		bool any = false;
		for (int k = 0; k < 4; k++) {
			const char *t = cd_jv_str(cd_jv_path(f, "fix") ? cd_jv_get(cd_jv_get(f, "fix"), keys[k]) : NULL, NULL);
			if (!t || !t[0])
				continue;
			if (!any)
				fputs("<dl class=\"fix\">", out);
			any = true;
			fprintf(out, "<dt>%s</dt><dd>", heads[k]);
			fix_text(out, t);
			fputs("</dd>", out);
		}
		if (any)
			fputs("</dl>\n", out);
		fputs("</article>\n", out);
	}
	fputs("</section>\n", out);
}

static void fact_row(FILE *out, const char *name, const char *value)
{
	fprintf(out, "<tr><th>%s</th><td>", name);
	cd_html_esc(out, value ? value : "unknown");
	fputs("</td></tr>\n", out);
}

static void facts(FILE *out, const struct cd_rpt *r)
{
	const struct cd_jv *check = cd_rpt_doc(r, CD_RPT_CHECK);
	if (!check)
		return;
	fputs("<section id=\"facts\">\n<h2>The machine</h2>\n<table class=\"facts\">\n", out);
	fact_row(out, "clocksource", cd_jv_str(cd_jv_path(check, "clocksource.current"), NULL));
	fputs("<tr><th>available</th><td>", out);
	int i = 0;
	for (const struct cd_jv *a = cd_jv_first(cd_jv_path(check, "clocksource.available")); a; a = a->next) {
		fputs(i++ ? ", " : "", out);
		cd_html_esc(out, cd_jv_str(a, "?"));
	}
	fputs(i ? "</td></tr>\n" : "unknown</td></tr>\n", out);
	fact_row(out, "kernel", cd_jv_str(cd_jv_path(check, "kernel.release"), NULL));
	fact_row(out, "command line", cd_jv_str(cd_jv_path(check, "kernel.cmdline"), NULL));
	fact_row(out, "CPU vendor", cd_jv_str(cd_jv_path(check, "cpu.vendor"), NULL));
	fact_row(out, "CPU model", cd_jv_str(cd_jv_path(check, "cpu.model"), NULL));
	fputs("<tr><th>CPU flags</th><td>", out);
	i = 0;
	for (const struct cd_jv *a = cd_jv_first(cd_jv_path(check, "cpu.flags")); a; a = a->next) {
		fputs(i++ ? " " : "", out);
		cd_html_esc(out, cd_jv_str(a, "?"));
	}
	fputs(i ? "</td></tr>\n" : "unknown</td></tr>\n", out);
	fact_row(out, "hypervisor", cd_jv_str(cd_jv_path(check, "hypervisor.display"),
	                                      cd_jv_str(cd_jv_path(check, "hypervisor.name"), NULL)));
	fact_row(out, "kernel log", cd_jv_str(cd_jv_path(check, "kernel_log.source"), NULL));
	const struct cd_jv *ntp = cd_jv_get(check, "ntp");
	fact_row(out, "NTP", ntp && ntp->type == CD_JV_OBJECT
	                             ? (cd_jv_getbool(ntp, "synchronized", false) ? "synchronized" : "not synchronized")
	                             : NULL);
	fputs("</table>\n", out);
	const struct cd_jv *ev = cd_jv_first(cd_jv_path(check, "kernel_log.events"));
	if (ev) {
		fputs("<details id=\"klog\"><summary>What the kernel log says about its clocks</summary><pre>", out);
		for (int k = 0; ev && k < 200; ev = ev->next, k++) {
			cd_html_esc(out, cd_jv_getstr(ev, "line", ""));
			fputc('\n', out);
		}
		fputs("</pre></details>\n", out);
	}
	const struct cd_jv *unk = cd_jv_first(cd_jv_get(check, "unknown"));
	if (unk) {
		fputs("<p class=\"absent\">Could not be read: ", out);
		for (int k = 0; unk; unk = unk->next, k++) {
			fputs(k ? "; " : "", out);
			cd_html_esc(out, cd_jv_str(unk, "?"));
		}
		fputs(".</p>\n", out);
	}
	fputs("</section>\n", out);
}

static void figures(FILE *out, const struct cd_rpt *r)
{
	fputs("<section id=\"figures\">\n<h2>Figures</h2>\n", out);
	if (r->origin == CD_RPT_SNAPSHOT)
		fputs("<p class=\"nothing\">Measured: nothing. This page was made from a snapshot, which holds the "
		      "machine's files; run <code>clockdoctor report</code> on the machine itself for the figures.</p>\n",
		      out);
	cd_rpt_chart_cost(out, r);
	cd_rpt_chart_latency(out, r);
	cd_rpt_chart_tsc_freq(out, r);
	cd_rpt_chart_warp(out, r);
	cd_rpt_chart_accuracy(out, r);
	cd_rpt_chart_top(out, r);
	fputs("</section>\n", out);
}

/* Which parts fit in the page as data (CD_RPT_EMBED_MAX), in the order
 * that matters most first. */
static void embedded_parts(const struct cd_rpt *r, bool fits[CD_RPT_N])
{
	static const enum cd_rpt_part order[] = { CD_RPT_CHECK, CD_RPT_TSC, CD_RPT_ACCURACY, CD_RPT_BENCH, CD_RPT_TOP };
	size_t used = 0;
	for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
		const struct cd_rpt_input *in = &r->in[order[i]];
		fits[order[i]] = in->n && in->len <= CD_RPT_EMBED_MAX - used;
		if (fits[order[i]])
			used += in->len;
	}
}

/* top's lines joined into one array, as data. */
static void embed_lines(FILE *out, const char *id, const struct cd_rpt_input *in)
{
	size_t cap = in->len + 3 + (size_t)in->n;
	char *joined = malloc(cap);
	if (!joined)
		return;
	size_t n = 0, at = 0;
	joined[n++] = '[';
	for (int i = 0; i < in->n && at < in->len; i++) {
		size_t end = 0;
		struct cd_json *d = cd_json_parse(in->text + at, in->len - at, &end, NULL, 0);
		cd_json_free(d);
		if (!d)
			break;
		if (i)
			joined[n++] = ',';
		memcpy(joined + n, in->text + at, end);
		n += end;
		at += end;
	}
	joined[n++] = ']';
	cd_html_json_data(out, id, joined, n);
	free(joined);
}

/* Each part's JSON as data; top's lines as one array. */
static void data(FILE *out, const struct cd_rpt *r)
{
	bool fits[CD_RPT_N];
	embedded_parts(r, fits);
	fputs("<section id=\"data\">\n<h2>The data</h2>\n<p>The JSON this page was drawn from is in it, each in a "
	      "<code>&lt;script type=\"application/json\"&gt;</code> element (data, not a script) with the id "
	      "<code>data-COMMAND</code>, as the command wrote it (top: its lines as one array).</p>\n<ul>\n",
	      out);
	for (int p = 0; p < CD_RPT_N; p++) {
		const struct cd_rpt_input *in = &r->in[p];
		fprintf(out, "<li><b>%s</b>: ", part_names[p]);
		if (in->n) {
			cd_html_esc(out, in->from);
			fprintf(out, " (%zu bytes of JSON%s)", in->len,
			        fits[p] ? "" : ": too large to embed here; the figures hold its numbers");
		} else {
			cd_html_esc(out, in->missing[0] ? in->missing : "none");
		}
		fputs("</li>\n", out);
	}
	fputs("</ul>\n", out);
	for (int p = 0; p < CD_RPT_N; p++) {
		if (!fits[p])
			continue;
		char id[32];
		snprintf(id, sizeof id, "data-%s", part_names[p]);
		if (p == CD_RPT_TOP)
			embed_lines(out, id, &r->in[p]);
		else
			cd_html_json_data(out, id, r->in[p].text, r->in[p].len);
	}
	fputs("</section>\n", out);
}

void cd_rpt_page(FILE *out, const struct cd_rpt *r)
{
	head(out, r);
	header(out, r);
	fputs("<main>\n", out);
	verdict(out, r);
	findings(out, r);
	figures(out, r);
	facts(out, r);
	data(out, r);
	fputs("</main>\n<footer>Made by <code>clockdoctor report</code>: one file, nothing fetched, no script. "
	      "man clockdoctor-report says how each figure is measured.</footer>\n</body>\n</html>\n",
	      out);
}
