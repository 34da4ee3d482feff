/* SPDX-License-Identifier: MIT */
/*
 * os.c: which distribution this is, so that the lasting fix names the right
 * tool (a /etc/default/grub.d drop-in and update-grub on Debian and Ubuntu,
 * grubby on the Red Hat family).
 */
#include "probe/probe.h"
#include "util/printable.h"

#include <stdio.h>
#include <string.h>

/* Copy the value of KEY=value (quotes removed) from text, or "" */
static void os_value(const char *text, const char *key, char *out, size_t cap)
{
	size_t kl = strlen(key);
	out[0] = '\0';
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, key, kl) != 0 || p[kl] != '=')
			continue;
		const char *v = p + kl + 1;
		size_t n = strcspn(v, "\n");
		if (n >= 2 && (v[0] == '"' || v[0] == '\'') && v[n - 1] == v[0]) {
			v++;
			n -= 2;
		}
		cd_printable_copy(out, cap, v, n);
		return;
	}
}

static bool has_word(const char *list, const char *word)
{
	size_t wl = strlen(word);
	for (const char *p = list; (p = strstr(p, word)) != NULL; p += wl) {
		bool start = p == list || p[-1] == ' ';
		bool end = p[wl] == '\0' || p[wl] == ' ';
		if (start && end)
			return true;
	}
	return false;
}

static enum cd_os_family family_of(const char *id, const char *like)
{
	static const char *debian[] = { "debian", "ubuntu", "raspbian", "linuxmint", "pop", NULL };
	static const char *redhat[] = { "rhel", "centos", "fedora", "rocky", "almalinux", "amzn", "ol", NULL };
	static const char *suse[] = { "suse", "opensuse", "sles", "opensuse-leap", "opensuse-tumbleweed", NULL };
	for (int i = 0; debian[i]; i++)
		if (strcmp(id, debian[i]) == 0 || has_word(like, debian[i]))
			return CD_OS_DEBIAN;
	for (int i = 0; redhat[i]; i++)
		if (strcmp(id, redhat[i]) == 0 || has_word(like, redhat[i]))
			return CD_OS_REDHAT;
	for (int i = 0; suse[i]; i++)
		if (strcmp(id, suse[i]) == 0 || has_word(like, suse[i]))
			return CD_OS_SUSE;
	return id[0] ? CD_OS_OTHER : CD_OS_UNKNOWN;
}

/* A release is digits and dots ("8.04", "7", "15.5"); anything else in a
 * file is no release, and never reaches a terminal. */
static void keep_version(struct cd_os *os)
{
	size_t n = strspn(os->version, "0123456789.");
	if (os->version[n] != '\0')
		os->version[0] = '\0';
}

void cd_parse_os_release(const char *text, struct cd_os *os)
{
	char like[128];
	os_value(text, "ID", os->id, sizeof os->id);
	os_value(text, "ID_LIKE", like, sizeof like);
	os_value(text, "PRETTY_NAME", os->pretty, sizeof os->pretty);
	os_value(text, "VERSION_ID", os->version, sizeof os->version);
	keep_version(os);
	os->family = family_of(os->id, like);
}

/* Before os-release (about 2012) a distribution said what it was in its own
 * file: /etc/lsb-release on Ubuntu ("DISTRIB_ID=Ubuntu", "DISTRIB_RELEASE=8.04"),
 * /etc/debian_version ("7.11", or "lenny/sid" on a testing system),
 * /etc/redhat-release ("CentOS release 6.5 (Final)"), /etc/SuSE-release
 * (SLES 11 and older).  path names which. */
void cd_parse_os_legacy(const char *path, const char *text, struct cd_os *os)
{
	char id[CD_NAME_MAX] = "";
	const char *v = NULL;
	if (strstr(path, "lsb-release")) {
		os_value(text, "DISTRIB_ID", id, sizeof id);
		os_value(text, "DISTRIB_RELEASE", os->version, sizeof os->version);
		os_value(text, "DISTRIB_DESCRIPTION", os->pretty, sizeof os->pretty);
	} else if (strstr(path, "debian_version")) {
		snprintf(id, sizeof id, "debian");
		v = text;
	} else if (strstr(path, "SuSE-release")) {
		/* "SUSE Linux Enterprise Server 11 (x86_64)\nVERSION = 11\nPATCHLEVEL = 4" */
		snprintf(id, sizeof id, "%s", strstr(text, "Enterprise Server") ? "sles" : "opensuse");
		v = strstr(text, "VERSION = ");
		v = v ? v + 10 : NULL;
		snprintf(os->pretty, sizeof os->pretty, "%.*s", (int)strcspn(text, "\n"), text);
	} else if (strstr(path, "redhat-release")) {
		snprintf(id, sizeof id, "%s", strstr(text, "CentOS") ? "centos" : strstr(text, "Fedora") ? "fedora" : "rhel");
		v = strstr(text, "release ");
		v = v ? v + 8 : NULL;
		snprintf(os->pretty, sizeof os->pretty, "%.*s", (int)strcspn(text, "\n"), text);
	}
	for (char *c = id; *c; c++)
		if (*c >= 'A' && *c <= 'Z')
			*c = (char)(*c - 'A' + 'a');
	if (v && *v >= '0' && *v <= '9')
		snprintf(os->version, sizeof os->version, "%.*s", (int)strspn(v, "0123456789"), v);
	snprintf(os->id, sizeof os->id, "%s", id);
	keep_version(os);
	os->family = family_of(os->id, "");
}

void cd_os_guess_from_release(const char *release, struct cd_os *os)
{
	if (os->family != CD_OS_UNKNOWN)
		return;
	os->guessed = true;
	if (strstr(release, ".el") || strstr(release, ".fc") || strstr(release, ".amzn")) {
		os->family = CD_OS_REDHAT;
		snprintf(os->id, sizeof os->id, "%s", strstr(release, ".fc") ? "fedora" : "rhel");
		/* "2.6.32-358.el6.x86_64": the release is in the kernel's name. */
		const char *el = strstr(release, ".el");
		if (el && el[3] >= '0' && el[3] <= '9')
			snprintf(os->version, sizeof os->version, "%.*s", (int)strspn(el + 3, "0123456789"), el + 3);
	} else if (strstr(release, "-amd64") || strstr(release, "-686") || strstr(release, "bpo") ||
	           strstr(release, "-arm64") || strstr(release, "-generic") || strstr(release, "-aws")) {
		os->family = CD_OS_DEBIAN;
		snprintf(os->id, sizeof os->id, "%s", strstr(release, "-generic") || strstr(release, "-aws") ? "ubuntu" : "debian");
	} else {
		os->guessed = false;
	}
}
