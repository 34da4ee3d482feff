/* SPDX-License-Identifier: MIT */
/*
 * json.c: the report for programs.  The schema is documented in
 * docs/json.md; fields are only ever added, never renamed.  Unknown facts are
 * null, not empty strings, so that a consumer can tell "unknown" from "none".
 */
#include "output/jsonw.h"
#include "output/output.h"
#include "probe/probe.h"

static const char *event_kind_name(enum cd_event_kind k)
{
	switch (k) {
	case CD_EV_CS_SWITCHED: return "clocksource-switched";
	case CD_EV_TSC_UNSTABLE: return "tsc-unstable";
	case CD_EV_TSC_SYNC_HEADER: return "tsc-sync-pair";
	case CD_EV_TSC_WARP: return "tsc-warp";
	case CD_EV_TSC_SYNC_SKIPPED: return "tsc-sync-skipped";
	case CD_EV_WATCHDOG_SKEW: return "watchdog-skew";
	case CD_EV_CS_UNSTABLE_DELTA: return "clocksource-unstable-delta";
	case CD_EV_WD_READBACK_EXCESSIVE: return "watchdog-readback-excessive";
	case CD_EV_WD_NOISE: return "watchdog-noise";
	case CD_EV_TSC_BROKEN_BIOS: return "tsc-broken-bios";
	case CD_EV_SCHED_CLOCK_UNSTABLE: return "sched-clock-unstable";
	case CD_EV_TSC_ADJUST: return "tsc-adjust";
	case CD_EV_TSC_CALIBRATION: return "tsc-calibration";
	case CD_EV_TSC_FREQ: return "tsc-frequency";
	case CD_EV_HYPERVISOR: return "hypervisor-detected";
	case CD_EV_XEN_NO_VDSO: return "xen-no-vdso";
	case CD_EV_ARCH_TIMER_WORKAROUND: return "arch-timer-workaround";
	case CD_EV_KERNEL_VERSION: return "kernel-version";
	case CD_EV_CMDLINE: return "command-line";
	case CD_EV_DMI: return "dmi";
	case CD_EV_X86_32BIT: return "x86-32bit";
	case CD_EV_CS_REGISTERED: return "clocksource-registered";
	case CD_EV_PARAVIRT_BOOT: return "paravirt-boot";
	case CD_EV_MACHINE_MODEL: return "machine-model";
	case CD_EV_ARM_TIMER: return "arm-timer";
	case CD_EV_SANDBOX: return "sandbox";
	case CD_EV_ARCH_TIMER_TRAP: return "arch-timer-trap";
	}
	return "unknown";
}

static void string_or_null(struct cd_jsonw *w, const char *key, bool have, const char *s)
{
	if (have && s[0])
		cd_jsonw_string(w, key, s);
	else
		cd_jsonw_null(w, key);
}

static void cpu_object(struct cd_jsonw *w, const struct cd_facts *f)
{
	cd_jsonw_begin_object(w, "cpu");
	string_or_null(w, "arch", true, f->cpu.arch);
	string_or_null(w, "vendor", f->cpu.have_cpuinfo, f->cpu.vendor);
	string_or_null(w, "model", f->cpu.have_cpuinfo, f->cpu.model);
	if (f->cpu.have_cpuinfo) {
		cd_jsonw_int(w, "count", f->cpu.count);
		cd_jsonw_begin_array(w, "flags");
		for (int i = 0; i < CD_CPU_N_FLAGS; i++)
			if (f->cpu.flags & cd_cpu_flag_names[i].bit)
				cd_jsonw_string(w, NULL, cd_cpu_flag_names[i].name);
		cd_jsonw_end_array(w);
	} else {
		cd_jsonw_null(w, "count");
		cd_jsonw_null(w, "flags");
	}
	if (f->cpuid.has_invariant)
		cd_jsonw_bool(w, "invariant_tsc", f->cpuid.invariant_tsc);
	else
		cd_jsonw_null(w, "invariant_tsc");
	if (f->cpuid.have) {
		cd_jsonw_begin_object(w, "cpuid");
		cd_jsonw_bool(w, "hypervisor_bit", f->cpuid.hypervisor_bit);
		string_or_null(w, "hypervisor_signature", true, f->cpuid.hv_signature);
		if (f->cpuid.hv_tsc_khz)
			cd_jsonw_int(w, "hypervisor_tsc_khz", f->cpuid.hv_tsc_khz);
		if (f->cpuid.l15_denominator) {
			cd_jsonw_int(w, "leaf15_denominator", f->cpuid.l15_denominator);
			cd_jsonw_int(w, "leaf15_numerator", f->cpuid.l15_numerator);
			cd_jsonw_int(w, "leaf15_crystal_hz", f->cpuid.l15_crystal_hz);
		}
		if (f->cpuid.l16_base_mhz)
			cd_jsonw_int(w, "leaf16_base_mhz", f->cpuid.l16_base_mhz);
		cd_jsonw_end_object(w);
	} else {
		cd_jsonw_null(w, "cpuid");
	}
	cd_jsonw_end_object(w);
}

static void klog_object(struct cd_jsonw *w, const struct cd_facts *f)
{
	const struct cd_klog *l = &f->klog;
	cd_jsonw_begin_object(w, "kernel_log");
	cd_jsonw_string(w, "source", cd_klog_source_name(l->source));
	cd_jsonw_bool(w, "readable", l->readable);
	cd_jsonw_bool(w, "reaches_boot", l->reaches_boot);
	string_or_null(w, "note", true, l->why_not);
	cd_jsonw_int(w, "lines", l->lines);
	cd_jsonw_begin_array(w, "events");
	for (int i = 0; i < l->n_events; i++) {
		const struct cd_event *e = &l->events[i];
		cd_jsonw_begin_object(w, NULL);
		cd_jsonw_string(w, "kind", event_kind_name(e->kind));
		if (e->ts >= 0)
			cd_jsonw_number(w, "ts", e->ts);
		else
			cd_jsonw_null(w, "ts");
		if (e->name[0])
			cd_jsonw_string(w, "name", e->name);
		if (e->name2[0])
			cd_jsonw_string(w, "name2", e->name2);
		if (e->cpu_a >= 0)
			cd_jsonw_int(w, "cpu_a", e->cpu_a);
		if (e->cpu_b >= 0)
			cd_jsonw_int(w, "cpu_b", e->cpu_b);
		if (e->value)
			cd_jsonw_int(w, "value", e->value);
		if (e->value2)
			cd_jsonw_int(w, "value2", e->value2);
		if (e->wd_cycles)
			cd_jsonw_int(w, "wd_cycles", (long long)e->wd_cycles);
		if (e->cs_cycles)
			cd_jsonw_int(w, "cs_cycles", (long long)e->cs_cycles);
		if (e->khz)
			cd_jsonw_int(w, "khz", e->khz);
		cd_jsonw_string(w, "line", e->line);
		if (e->detail[0])
			cd_jsonw_string(w, "detail", e->detail);
		cd_jsonw_end_object(w);
	}
	cd_jsonw_end_array(w);
	cd_jsonw_bool(w, "events_truncated", l->truncated_events);
	cd_jsonw_end_object(w);
}

static void measurements_object(struct cd_jsonw *w, const struct cd_measurements *m)
{
	if (!m || !m->done) {
		cd_jsonw_null(w, "measurements");
		return;
	}
	cd_jsonw_begin_object(w, "measurements");
	for (int i = 0; i < m->n; i++) {
		const struct cd_clock_cost *c = &m->c[i];
		cd_jsonw_begin_object(w, c->spec->name);
		cd_jsonw_bool(w, "measured", c->measured);
		if (c->measured) {
			cd_jsonw_number(w, "ns_per_call", c->ns_per_call);
			cd_jsonw_number(w, "ns_min", c->ns_min);
			cd_jsonw_number(w, "ns_max", c->ns_max);
			cd_jsonw_bool(w, "syscall", c->syscall);
			cd_jsonw_number(w, "syscall_ns", c->syscall_ns);
			cd_jsonw_number(w, "ratio_to_syscall", c->ratio);
			if (c->sys_share >= 0)
				cd_jsonw_number(w, "sys_share", c->sys_share);
			else
				cd_jsonw_null(w, "sys_share");
			cd_jsonw_string(w, "verdict_from", c->exact ? "seccomp" : "timing");
			if (c->exact) {
				cd_jsonw_int(w, "kernel_calls", c->kernel_calls);
				cd_jsonw_int(w, "calls_probed", CD_KERNEL_PATH_CALLS);
			}
		} else {
			cd_jsonw_null(w, "ns_per_call");
			cd_jsonw_null(w, "syscall");
			cd_jsonw_int(w, "errno", -c->err);
		}
		cd_jsonw_bool(w, "high_resolution", c->spec->high_res);
		cd_jsonw_end_object(w);
	}
	cd_jsonw_end_object(w);
}

static void findings_array(struct cd_jsonw *w, const struct cd_report *r)
{
	cd_jsonw_begin_array(w, "findings");
	for (int i = 0; i < r->n; i++) {
		const struct cd_finding *x = &r->f[i];
		cd_jsonw_begin_object(w, NULL);
		cd_jsonw_string(w, "code", x->code);
		cd_jsonw_string(w, "severity", cd_severity_name(x->severity));
		cd_jsonw_string(w, "title", x->title);
		cd_jsonw_begin_array(w, "evidence");
		for (int e = 0; e < x->n_evidence; e++)
			cd_jsonw_string(w, NULL, x->evidence[e]);
		cd_jsonw_end_array(w);
		cd_jsonw_begin_object(w, "fix");
		string_or_null(w, "now", true, x->fix_now);
		string_or_null(w, "lasting", true, x->fix_lasting);
		string_or_null(w, "hypervisor", true, x->fix_hypervisor);
		string_or_null(w, "risk", true, x->risk);
		cd_jsonw_end_object(w);
		cd_jsonw_end_object(w);
	}
	cd_jsonw_end_array(w);
}

void cd_output_json(FILE *out, const struct cd_facts *f, const struct cd_measurements *m,
                    const struct cd_report *r)
{
	struct cd_jsonw w;
	cd_jsonw_open(&w, out, 2, "check", (int)r->status);
	cd_jsonw_string(&w, "status", cd_status_name(r->status));
	cd_jsonw_string(&w, "verdict", r->summary);
	cd_jsonw_string(&w, "source", f->live ? "live" : "snapshot");
	cd_jsonw_string(&w, "root", f->root);

	cd_jsonw_begin_object(&w, "clocksource");
	string_or_null(&w, "current", f->cs.have_current, f->cs.current);
	if (f->cs.from_log)
		cd_jsonw_string(&w, "from", "kernel log");
	if (f->cs.have_available) {
		cd_jsonw_begin_array(&w, "available");
		for (int i = 0; i < f->cs.n_available; i++)
			cd_jsonw_string(&w, NULL, f->cs.available[i]);
		cd_jsonw_end_array(&w);
	} else {
		cd_jsonw_null(&w, "available");
	}
	cd_jsonw_end_object(&w);

	cd_jsonw_begin_object(&w, "kernel");
	string_or_null(&w, "release", f->kernel.have_release, f->kernel.release);
	string_or_null(&w, "cmdline", f->kernel.have_cmdline, f->kernel.cmdline);
	if (f->kernel.have_uptime)
		cd_jsonw_number(&w, "uptime_s", f->kernel.uptime_s);
	else
		cd_jsonw_null(&w, "uptime_s");
	string_or_null(&w, "os", true, f->os.id);
	cd_jsonw_end_object(&w);

	cpu_object(&w, f);

	cd_jsonw_begin_object(&w, "hypervisor");
	cd_jsonw_string(&w, "name", cd_hv_name(f->hv.kind));
	string_or_null(&w, "display", true, f->hv.display);
	string_or_null(&w, "from", true, f->hv.from);
	string_or_null(&w, "cpuid_signature", true, f->hv.cpuid_signature);
	string_or_null(&w, "sys_hypervisor_type", true, f->hv.sys_hypervisor_type);
	string_or_null(&w, "dmi_sys_vendor", true, f->hv.dmi_sys_vendor);
	string_or_null(&w, "dmi_product_name", true, f->hv.dmi_product_name);
	string_or_null(&w, "kernel_log", true, f->hv.klog_detected);
	string_or_null(&w, "kernel_log_dmi", true, f->hv.klog_dmi);
	if (f->hv.interface != CD_HV_UNKNOWN)
		cd_jsonw_string(&w, "interface", cd_hv_name(f->hv.interface));
	string_or_null(&w, "kernel_log_paravirt", true, f->hv.klog_paravirt);
	string_or_null(&w, "machine_model", true, f->hv.machine_model);
	string_or_null(&w, "container", true, f->hv.container);
	string_or_null(&w, "utility_vm", true, f->hv.utility_vm);
	cd_jsonw_end_object(&w);

	klog_object(&w, f);

	if (f->ntp.have) {
		cd_jsonw_begin_object(&w, "ntp");
		cd_jsonw_bool(&w, "synchronized", f->ntp.synchronized);
		cd_jsonw_int(&w, "state", f->ntp.state);
		cd_jsonw_int(&w, "status", f->ntp.status);
		cd_jsonw_number(&w, "freq_ppm", f->ntp.freq_ppm);
		cd_jsonw_int(&w, "maxerror_us", f->ntp.maxerror_us);
		cd_jsonw_int(&w, "esterror_us", f->ntp.esterror_us);
		cd_jsonw_end_object(&w);
	} else {
		cd_jsonw_null(&w, "ntp");
	}

	cd_jsonw_bool(&w, "measured", m && m->done);
	if (m && m->done)
		cd_jsonw_number(&w, "measure_seconds", m->elapsed_s);
	measurements_object(&w, m);
	findings_array(&w, r);

	cd_jsonw_begin_array(&w, "unknown");
	for (int i = 0; i < f->n_unknown; i++)
		cd_jsonw_string(&w, NULL, f->unknown[i]);
	cd_jsonw_end_array(&w);
	cd_jsonw_end_object(&w);
}
