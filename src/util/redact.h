/* SPDX-License-Identifier: MIT */
/*
 * redact.h: taking what identifies a machine out of a snapshot's text (the
 * kernel log, the command line, DMI strings), so that the snapshot can be
 * attached to a public bug report: `snapshot --redact`.
 *
 * Each replaced word becomes a marker of its kind: <host>, <ipv4>, <ipv6>,
 * <mac>, <uuid>, <serial>, <email>, <user> (the name in /home/NAME/), <path>
 * (an NFS root's folder, which names its owner or its machine).  What the diagnosis reads is left as it
 * was: clocksource names, the kernel's numbers (hex counters, PCI
 * addresses, timestamps, versions such as 2.6.32.59-0.7-default), the
 * lines' layout.  Host names are the ones given (this machine's) and the
 * ones the text names itself ("Hostname set to <NAME>"), with any domain
 * after them, and every name in the domain of one given as an FQDN; other
 * machines' names in other domains stay (there is no telling a host name
 * from a file name such as tsc.c in a log line).
 */
#ifndef CD_REDACT_H
#define CD_REDACT_H

#include <stddef.h>

enum cd_redact_kind {
	CD_REDACT_HOST, CD_REDACT_IPV4, CD_REDACT_IPV6, CD_REDACT_MAC, CD_REDACT_UUID, CD_REDACT_SERIAL,
	CD_REDACT_EMAIL, CD_REDACT_USER, CD_REDACT_PATH, CD_REDACT_N
};

#define CD_REDACT_NAMES 16
#define CD_REDACT_NAME_MAX 256

struct cd_redact {
	int n_names;
	char names[CD_REDACT_NAMES][CD_REDACT_NAME_MAX];
	unsigned long count[CD_REDACT_N];   /* words replaced, by kind, over every call */
};

/* The marker of a kind, "<host>" and so on. */
const char *cd_redact_marker(enum cd_redact_kind k);

/* A host name to remove wherever it stands as a word (case-insensitive),
 * alone or before a domain ("db1" removes "db1.corp.example.com" too); an
 * FQDN also adds its first label and its domain.  Names that identify nothing ("localhost",
 * "(none)", shorter than 2 characters) are ignored. */
void cd_redact_add_name(struct cd_redact *r, const char *name);

/* Add the host names text states itself (systemd's "Hostname set to
 * <NAME>"). */
void cd_redact_learn(struct cd_redact *r, const char *text, size_t len);

/* text (len bytes) with every identifying word replaced; a malloc'd,
 * NUL-terminated copy whose length is in *out_len, or NULL when out of
 * memory. */
char *cd_redact_text(struct cd_redact *r, const char *text, size_t len, size_t *out_len);

#endif
