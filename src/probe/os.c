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

void cd_parse_os_release(const char *text, struct cd_os *os)
{
	char like[128];
	os_value(text, "ID", os->id, sizeof os->id);
	os_value(text, "ID_LIKE", like, sizeof like);
	os_value(text, "PRETTY_NAME", os->pretty, sizeof os->pretty);
	os->family = family_of(os->id, like);
}

void cd_os_guess_from_release(const char *release, struct cd_os *os)
{
	if (os->family != CD_OS_UNKNOWN)
		return;
	if (strstr(release, ".el") || strstr(release, ".fc") || strstr(release, ".amzn")) {
		os->family = CD_OS_REDHAT;
		snprintf(os->id, sizeof os->id, "%s", strstr(release, ".fc") ? "fedora" : "rhel");
	} else if (strstr(release, "-amd64") || strstr(release, "-686") || strstr(release, "bpo") ||
	           strstr(release, "-arm64") || strstr(release, "-generic") || strstr(release, "-aws")) {
		os->family = CD_OS_DEBIAN;
		snprintf(os->id, sizeof os->id, "%s", strstr(release, "-generic") || strstr(release, "-aws") ? "ubuntu" : "debian");
	}
}
