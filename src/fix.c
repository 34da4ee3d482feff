/* SPDX-License-Identifier: MIT */
/*
 * fix.c: `clockdoctor fix`: carry out what check advises, safely.
 *
 * The plan is check's own diagnosis (probe, measure, diagnose) turned into
 * actions by diagnose/plan.c; without --apply, --persist or --undo nothing
 * is changed and the plan is printed.  --apply switches the clocksource
 * through measure/csapply.c (measured before and after, switched back unless
 * it got cheaper, restored on every exit path by csswitch); --persist and
 * --undo change the boot configuration through persist/.
 */
#include "commands.h"
#include "util/numarg.h"
#include "diagnose/plan.h"
#include "measure/csapply.h"
#include "measure/measure.h"
#include "diagnose/tscjudge.h"
#include "measure/tsc.h"
#include "output/fixreport.h"
#include "persist/csrestore.h"
#include "probe/probe.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXIT_DONE CD_EXIT_OK
#define EXIT_UNCHANGED CD_EXIT_WARNING
#define EXIT_FAILED CD_EXIT_FAILED
#define MEASURE_BUDGET_S 0.6   /* check's */
#define APPLY_BUDGET_S 0.3     /* each of the two measurements around the switch */
#define DEFAULT_MIN_GAIN 0.2

struct fix_opts {
	bool apply, persist, undo, dry_run, json;
	const char *root;          /* NULL: this machine */
	const char *to;            /* --to CLOCKSOURCE */
	double min_gain;
};

static void fix_usage(FILE *out)
{
	fprintf(out,
	        "usage: clockdoctor fix [--apply] [--persist | --undo] [--dry-run] [--root DIR]\n"
	        "                       [--to CLOCKSOURCE] [--min-gain PERCENT] [--json]\n"
	        "\n"
	        "Carries out what `clockdoctor check` advises.  Without --apply, --persist or\n"
	        "--undo it changes nothing and prints the plan: each step, the command it runs\n"
	        "or the file it writes, and the risk.\n"
	        "\n"
	        "  -a, --apply          switch now to the faster clocksource the kernel lists\n"
	        "                       (root); a time call is measured before and after, and\n"
	        "                       the switch is undone unless it got cheaper\n"
	        "      --persist        change the kernel command line for good (root): a GRUB\n"
	        "                       drop-in on Debian and Ubuntu, grubby on Red Hat; every\n"
	        "                       change is recorded in /var/lib/clockdoctor/fix.record\n"
	        "  -u, --undo           take back exactly what --persist recorded\n"
	        "  -n, --dry-run        with the above: say what would be done, do nothing\n"
	        "  -r, --root DIR       plan from a snapshot (`clockdoctor snapshot`); --persist\n"
	        "                       and --undo then write under DIR and run no tool\n"
	        "      --to CLOCKSOURCE\n"
	        "                       with --apply: switch to CLOCKSOURCE, not to the\n"
	        "                       plan's choice\n"
	        "      --min-gain PERCENT\n"
	        "                       keep a switch only when a call got PERCENT%% cheaper (20)\n"
	        "  -j, --json           write JSON (docs/fix.md)\n"
	        "\n"
	        "exit status: 0 done (or the plan printed, or nothing to do); 1 nothing changed\n"
	        "(switched back, refused or not cheaper; nothing can be done here); 2 a step\n"
	        "failed (the state things are in is said); 3 bad usage, not allowed, or the\n"
	        "report could not be written\n"
	        "\n"
	        "examples:\n"
	        "  clockdoctor fix                    # the plan, changing nothing\n"
	        "  sudo clockdoctor fix --apply       # switch now, keep it only if faster\n"
	        "  sudo clockdoctor fix --persist     # the kernel command line, for good\n"
	        "  sudo clockdoctor fix --undo        # take that back\n"
	        "  clockdoctor fix --root /tmp/snap --persist   # write into a scratch tree\n");
}

static int fix_option(void *ctx, int ch, char *arg)
{
	struct fix_opts *o = ctx;
	double v;
	switch (ch) {
	case 'a': o->apply = true; break;
	case 'P': o->persist = true; break;
	case 'p': return cd_moved_option("fix", 'p', "--persist");
	case 'u': o->undo = true; break;
	case 'n': o->dry_run = true; break;
	case 'r': o->root = arg; break;
	case 'T': o->to = arg; break;
	case 't': return cd_moved_option("fix", 't', "--to");
	case 'j': o->json = true; break;
	case 'G':
		if (!cd_parse_number(arg, 0, 100, &v) || v >= 100)
			return cd_usage_error("fix", "--min-gain takes a percentage from 0 to 99, not '%s'", arg);
		o->min_gain = v / 100;
		break;
	}
	return -1;
}

/* Returns -1 to go on, else the exit status. */
static int parse_opts(int argc, char **argv, struct fix_opts *o)
{
	static const struct option longs[] = {
		{ "apply", no_argument, NULL, 'a' },         { "persist", no_argument, NULL, 'P' },
		{ "undo", no_argument, NULL, 'u' },          { "dry-run", no_argument, NULL, 'n' },
		{ "root", required_argument, NULL, 'r' },    { "to", required_argument, NULL, 'T' },
		{ "min-gain", required_argument, NULL, 'G' }, { "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	static const struct cd_options fix_options = { "fix", "aunr:jpt", longs, fix_usage, fix_option, false };
	int rc = cd_parse_options(&fix_options, argc, argv, o);
	if (rc >= 0)
		return rc;
	if (o->persist && o->undo)
		return cd_usage_error("fix", "--persist and --undo do not go together");
	if (o->undo && o->apply)
		return cd_usage_error("fix", "--undo takes back --persist only: a switch lasts until the next "
		                   "reboot, or switch back with --apply --to CLOCKSOURCE");
	if (o->apply && o->root)
		return cd_usage_error("fix", "--apply switches this machine's clocksource: it does not take --root");
	if (o->to && !o->apply)
		return cd_usage_error("fix", "--to goes with --apply");
	if (o->to && !cd_cs_name_valid(o->to))
		return cd_usage_error("fix", "--to: '%s' is not a clocksource name", o->to);
	return o->root ? cd_folder_arg("fix", "--root", o->root) : -1;
}

/* The finding text for doing the lasting change by hand. */
static const char *manual_text(const struct cd_report *r)
{
	for (int i = 0; i < r->n; i++)
		if (r->f[i].act_add[0] || r->f[i].act_remove[0])
			return r->f[i].fix_lasting;
	return NULL;
}

/* --to CLOCKSOURCE: the operator's choice replaces the plan's switch. */
static int choose_target(struct cd_plan *p, const struct cd_facts *f, const char *to)
{
	if (!cd_clocksource_available(&f->cs, to)) {
		char list[300] = "";
		for (int i = 0; i < f->cs.n_available; i++)
			snprintf(list + strlen(list), sizeof list - strlen(list), " %s", f->cs.available[i]);
		fprintf(stderr, "clockdoctor fix: --to %s: not an available clocksource (available:%s)\n", to, list);
		return CD_EXIT_USAGE;
	}
	p->have_switch = true;
	snprintf(p->switch_from, sizeof p->switch_from, "%s", f->cs.have_current ? f->cs.current : "unknown");
	snprintf(p->switch_to, sizeof p->switch_to, "%s", to);
	snprintf(p->switch_finding, sizeof p->switch_finding, "--to");
	snprintf(p->switch_risk, sizeof p->switch_risk, "Chosen by hand: it is kept only if a time "
	         "call gets cheaper, and lasts until the next reboot.");
	return -1;
}

/* Probe, measure and diagnose as check does.  Live, the clocksource is
 * read through csswitch's paths, which are the ones --apply writes
 * ($CLOCKDOCTOR_SYSFS in tests). */
static void diagnose(const struct fix_opts *o, struct cd_facts *f, struct cd_measurements *m,
                     struct cd_report *r)
{
	bool live = o->root == NULL;
	cd_probe(live ? "/" : o->root, live, f);
	if (live) {
		struct cd_cs cs;
		char names[CD_CS_MAX][CD_CS_NAME_MAX], cur[CD_CS_NAME_MAX];
		if (cd_cs_init(&cs, NULL, NULL) == 0) {
			if (cd_cs_current(&cs, cur, sizeof cur) == 0)
				cd_parse_clocksource_current(cur, &f->cs);
			int n = cd_cs_available(&cs, names, CD_CS_MAX);
			if (n > 0) {
				char list[CD_CS_MAX * (CD_CS_NAME_MAX + 1) + 1] = "";
				for (int i = 0; i < n; i++) {
					strcat(list, names[i]); /* fits: at most CD_CS_MAX names */
					strcat(list, " ");
				}
				f->cs.n_available = 0;
				cd_parse_clocksource_list(list, &f->cs);
			}
		}
		if (!o->json && isatty(STDERR_FILENO))
			fprintf(stderr, "Measuring the cost of 9 ways of reading the time (about 1 s)...\n");
		cd_measure_check(m, MEASURE_BUDGET_S);
	}
	cd_diagnose(f, m->done ? m : NULL, r);
}

/* The TSC judged now, before switching to it.  Returns false when it
 * measured unsound (no switch). */
static bool tsc_sound_enough(const struct cd_facts *f, struct cd_tsc_report *t, struct cd_fix_outcome *out,
                             char *note, size_t cap)
{
	struct cd_tsc_opts topts;
	cd_tsc_opts_deep(&topts);
	if (!out->dry_run && isatty(STDERR_FILENO))
		fprintf(stderr, "Measuring whether the TSC can be trusted (about %.2g s)...\n", topts.seconds);
	cd_tsc_measure(f, &topts, t);
	cd_tsc_judge(f, t);
	out->tsc_verdict = cd_tsc_verdict_name(t->verdict);
	out->tsc_summary = t->summary;
	if (t->verdict != CD_TSC_UNSOUND)
		return true;
	snprintf(note, cap, "not switched to tsc: it measured unsound just now (%s); `clockdoctor tsc` "
	         "shows the full measurement", t->summary);
	return false;
}

static int do_apply(const struct fix_opts *o, const struct cd_facts *f, const struct cd_plan *p,
                    struct cd_fix_outcome *out, struct cd_apply_result *res, struct cd_tsc_report *t,
                    char *note, size_t cap)
{
	if (!p->have_switch) {
		snprintf(note, cap, "nothing switched: %s", p->no_switch_why);
		out->apply_note = note;
		return p->serious ? EXIT_UNCHANGED : EXIT_DONE;
	}
	struct cd_cs cs;
	char err[512];
	if (cd_cs_init(&cs, NULL, NULL) != 0)
		return cd_usage_error("fix", "a path is too long (CLOCKDOCTOR_SYSFS, CLOCKDOCTOR_STATE_DIR)");
	if (!o->dry_run && cd_cs_writable(&cs, err, sizeof err) != 0) {
		fprintf(stderr, "clockdoctor fix: --apply: %s\n", err);
		return CD_EXIT_USAGE;
	}
	if (strncmp(p->switch_to, "tsc", 3) == 0 && !tsc_sound_enough(f, t, out, note, cap)) {
		out->apply_note = note;
		return EXIT_UNCHANGED;
	}
	if (o->dry_run) {
		snprintf(note, cap, "would switch from %s to %s, measure, and keep it only if a time call "
		         "gets %.0f%% cheaper (dry run: nothing switched)", p->switch_from, p->switch_to,
		         o->min_gain * 100);
		out->apply_note = note;
		return EXIT_DONE;
	}
	/* A record left by a run that could not restore (SIGKILL): put that
	 * right first, as bench does. */
	enum cd_cs_recovery rec = cd_cs_recover(&cs, err, sizeof err);
	if (rec != CD_CS_NO_RECORD)
		fprintf(stderr, "clockdoctor fix: %s\n", err);
	if (rec == CD_CS_OWNER_RUNNING || rec == CD_CS_FAILED || rec == CD_CS_CORRUPT)
		return EXIT_FAILED;
	char now[CD_CS_NAME_MAX];
	if (cd_cs_current(&cs, now, sizeof now) == 0 && strcmp(now, p->switch_to) == 0) {
		snprintf(note, cap, "nothing switched: the clocksource is %s already", now);
		out->apply_note = note;
		return EXIT_DONE;
	}
	if (!o->json && isatty(STDERR_FILENO))
		fprintf(stderr, "Switching %s -> %s, measuring before and after (about 1 s)...\n", p->switch_from,
		        p->switch_to);
	double budget = APPLY_BUDGET_S;
	cd_apply_switch(&cs, p->switch_to, o->min_gain, cd_apply_measure_monotonic, &budget, res);
	out->apply = res;
	switch (res->outcome) {
	case CD_APPLY_KEPT: return EXIT_DONE;
	case CD_APPLY_NOT_CHEAPER:
	case CD_APPLY_REFUSED: return EXIT_UNCHANGED;
	default: return EXIT_FAILED;
	}
}

static int do_persist(const struct fix_opts *o, struct cd_persist_job *job, bool prepared,
                      const struct cd_plan *p, struct cd_fix_outcome *out, struct cd_steps *steps)
{
	out->persist = steps;
	if (p->n_params == 0) {
		cd_step(steps, "no kernel command line change is advised here");
		out->persist_result = "nothing";
		return p->serious ? EXIT_UNCHANGED : EXIT_DONE;
	}
	if (!prepared) {
		out->persist_result = "unsupported";
		return CD_EXIT_USAGE;
	}
	if (o->dry_run) {
		cd_persist_describe(job, steps);
		out->persist_result = "dry-run";
		return EXIT_DONE;
	}
	for (int i = 0; i < job->n_warnings; i++)
		cd_step(steps, "note: %s", job->warnings[i]);
	int rc = cd_persist_run(job, steps);
	out->persist_result = rc == 0 ? (job->in_place ? "in-place" : "done") : rc == -EEXIST ? "record-exists" :
	                      rc == -EBUSY ? "busy" : rc == -EDOM ? "overridden" :
	                      rc == -ECANCELED ? "not-regenerated" : "failed";
	return rc == 0 ? EXIT_DONE : rc == -EEXIST || rc == -EBUSY ? CD_EXIT_USAGE : rc == -EDOM ? EXIT_UNCHANGED :
	       EXIT_FAILED;
}

static int worst(int a, int b)
{
	/* 3 (refused to start) and 2 (failed) outrank 1 (unchanged) and 0. */
	return a > b ? a : b;
}

/* Everything one run of fix holds, on the heap: the facts and the plan
 * are large. */
struct fix_work {
	struct cd_facts f;
	struct cd_measurements m;
	struct cd_report r;
	struct cd_plan p;
	struct cd_persist_job job;
	bool prepared;                 /* job is ready for --persist */
	struct cd_steps persist_plan;  /* what --persist would do */
	struct cd_steps steps;         /* what --persist or --undo did */
	struct cd_apply_result res;
	struct cd_tsc_report t;
	char note[700], unsupported[600];
};

/* --undo, or with --dry-run what it would take back. */
static int undo(const struct fix_opts *o, struct cd_fix_outcome *out, struct cd_steps *steps)
{
	out->mode = "undo";
	out->dry_run = o->dry_run;
	out->undo = steps;
	const char *root = o->root ? o->root : "/";
	if (!o->dry_run) {
		bool had;
		int rc = cd_persist_undo(root, &had, steps);
		out->undo_result = rc == 0 ? (had ? "done" : "nothing") : rc == -EBUSY ? "busy" : "failed";
		return rc == 0 ? EXIT_DONE : rc == -EBUSY ? CD_EXIT_USAGE : EXIT_FAILED;
	}
	int rc = cd_persist_describe_undo(root, steps);
	out->undo_result = rc == 0 ? "dry-run" : "failed";
	return rc == 0 ? EXIT_DONE : EXIT_FAILED;
}

/* The plan from check's diagnosis, --to's choice in it, and the boot
 * configuration change prepared (or why it cannot be).  Returns -1 to go
 * on, else the exit status (--to refused: no report). */
static int plan(const struct fix_opts *o, struct fix_work *w, struct cd_fix_outcome *out)
{
	diagnose(o, &w->f, &w->m, &w->r);
	cd_plan_build(&w->f, &w->r, &w->p);
	out->plan = &w->p;
	int rc;
	if (o->to && (rc = choose_target(&w->p, &w->f, o->to)) >= 0)
		return rc;
	if (w->p.n_params == 0)
		return -1;
	char err[500];
	w->prepared = cd_persist_prepare(o->root ? o->root : "/", w->f.os.family, &w->p, &w->job, err, sizeof err) == 0;
	if (w->prepared) {
		for (int i = 0; i < w->job.n_warnings; i++)
			cd_step(&w->persist_plan, "note: %s", w->job.warnings[i]);
		cd_persist_describe(&w->job, &w->persist_plan);
		out->persist_plan = &w->persist_plan;
		out->persist_in_place = w->job.in_place;
	} else {
		snprintf(w->unsupported, sizeof w->unsupported, "%s", err);
		out->persist_unsupported = w->unsupported;
		out->persist_manual = manual_text(&w->r);
	}
	return -1;
}

/* --apply and --persist, as asked; without them the plan is all. */
static int act(const struct fix_opts *o, struct fix_work *w, struct cd_fix_outcome *out)
{
	if (!o->apply && !o->persist)
		return EXIT_DONE;
	out->dry_run = o->dry_run;
	out->mode = o->apply && o->persist ? "apply+persist" : o->apply ? "apply" : "persist";
	int status = EXIT_DONE;
	if (o->apply)
		status = do_apply(o, &w->f, &w->p, out, &w->res, &w->t, w->note, sizeof w->note);
	if (o->persist && status != CD_EXIT_USAGE && status != EXIT_FAILED)
		status = worst(status, do_persist(o, &w->job, w->prepared, &w->p, out, &w->steps));
	return status;
}

static int run_fix(const struct fix_opts *o)
{
	struct fix_work *w = calloc(1, sizeof *w);
	if (!w) {
		fprintf(stderr, "clockdoctor fix: out of memory\n");
		return cd_report_written("fix", EXIT_FAILED);
	}
	w->job.rootfd = -1;
	struct cd_fix_outcome out = { .mode = "plan", .dry_run = true };
	int status;
	if (o->undo)
		status = undo(o, &out, &w->steps);
	else if ((status = plan(o, w, &out)) < 0)
		status = act(o, w, &out);
	else
		goto done;   /* --to refused, and said so: no report */
	out.exit_status = status;
	if (o->json)
		cd_fix_output_json(stdout, &out);
	else
		cd_fix_output_text(stdout, &out);
done:
	cd_persist_release(&w->job);
	cd_tsc_report_free(&w->t);
	free(w);
	return cd_report_written("fix", status);
}

int cd_cmd_fix(int argc, char **argv)
{
	struct fix_opts o = { .min_gain = DEFAULT_MIN_GAIN };
	int rc = parse_opts(argc, argv, &o);
	if (rc >= 0)
		return rc;
	bool changes = (o.apply || o.persist || o.undo) && !o.dry_run;
	/* The live boot configuration is root's; --apply checks its own file
	 * (cd_cs_writable), which tests point at a fake tree. */
	if (changes && !o.root && (o.persist || o.undo) && geteuid() != 0) {
		fprintf(stderr, "clockdoctor fix: --%s changes the boot configuration: it needs root\n",
		        o.persist ? "persist" : "undo");
		return CD_EXIT_USAGE;
	}
	return run_fix(&o);
}
