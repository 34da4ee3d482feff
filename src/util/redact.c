/* SPDX-License-Identifier: MIT */
/*
 * redact.c: identifying words out of a snapshot's text (redact.h).
 *
 * The text is read as words (letters, digits and . : @ % - _) between
 * separators, which are copied as they are.  A word is judged whole: an
 * address is what inet_pton(3) takes as one (so a PCI address 0000:00:1f.2,
 * a time 23:38:30.408 or a kernel release 2.6.32.59-0.7-default is none),
 * a MAC six or more two-digit hex groups, a UUID the 8-4-4-4-12 form (and
 * an MBR disk's 8-2 PARTUUID).  A word that is none of these but holds
 * colons is judged part by part, so that the kernel's
 * ip=CLIENT::GATEWAY:NETMASK:HOST:DEV:AUTOCONF loses each of its
 * addresses and its host name.  A UUID also counts inside a word
 * ("luks-UUID"), and as 32 hex digits alone (a machine id); the value of any
 * "...uuid=" is one whatever its form (a FAT volume's "1234-ABCD").  A MAC
 * is also Cisco's aabb.ccdd.eeff.
 *
 * Some identifiers are known by where they stand, to the end of their line:
 * a serial number after "SerialNumber:" or "Serial Number:" (USB devices,
 * DMI dumps) and after a /proc/cpuinfo "Serial\t\t: " (a Raspberry Pi's
 * SoC), the frame header a martian packet's report dumps after "ll header:"
 * (it holds both MACs); or by the folder they are in: the user in
 * /home/USER/ (an AppArmor denial names the file), the disk's model and
 * serial in /dev/disk/by-id/BUS-MODEL_SERIAL (cryptdevice=, resume=), the
 * folder of an nfsroot=SERVER:/PATH.
 */
#include "util/redact.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const markers[CD_REDACT_N] = {
	"<host>", "<ipv4>", "<ipv6>", "<mac>", "<uuid>", "<serial>", "<email>", "<user>", "<path>",
};

const char *cd_redact_marker(enum cd_redact_kind k)
{
	return k < CD_REDACT_N ? markers[k] : "<redacted>";
}

static bool word_char(unsigned char c)
{
	return isalnum(c) || c == '.' || c == ':' || c == '@' || c == '%' || c == '-' || c == '_';
}

static bool host_char(unsigned char c)
{
	return isalnum(c) || c == '.' || c == '-' || c == '_';
}

static void add_one(struct cd_redact *r, const char *name, size_t len)
{
	while (len && name[len - 1] == '.')
		len--;
	if (len < 2 || len >= CD_REDACT_NAME_MAX || r->n_names >= CD_REDACT_NAMES)
		return;
	for (size_t i = 0; i < len; i++)
		if (!host_char((unsigned char)name[i]))
			return;
	/* Names of nothing, and the markers' own words (redacting twice
	 * must change nothing). */
	static const char *const nobody[] = { "localhost", "localdomain", "localhost.localdomain", "none",
	                                      "host", "ipv4", "ipv6", "mac", "uuid", "serial", "email", "user",
	                                      "path" };
	for (size_t i = 0; i < sizeof nobody / sizeof nobody[0]; i++)
		if (strlen(nobody[i]) == len && strncasecmp(nobody[i], name, len) == 0)
			return;
	for (int i = 0; i < r->n_names; i++)
		if (strlen(r->names[i]) == len && strncasecmp(r->names[i], name, len) == 0)
			return;
	memcpy(r->names[r->n_names], name, len);
	r->names[r->n_names++][len] = '\0';
}

void cd_redact_add_name(struct cd_redact *r, const char *name)
{
	size_t len = strlen(name);
	add_one(r, name, len);
	/* db1.corp.example.com: db1 alone, and its domain when that has two
	 * labels or more. */
	const char *dot = memchr(name, '.', len);
	if (dot)
		add_one(r, name, (size_t)(dot - name));
	if (dot && memchr(dot + 1, '.', len - (size_t)(dot + 1 - name)))
		add_one(r, dot + 1, len - (size_t)(dot + 1 - name));
}

void cd_redact_learn(struct cd_redact *r, const char *text, size_t len)
{
	static const struct { const char *before; char end; } says[] = {
		{ "Hostname set to <", '>' },          /* systemd at boot */
		{ "Changed host name to '", '\'' },    /* systemd-hostnamed */
	};
	for (size_t k = 0; k < sizeof says / sizeof says[0]; k++) {
		size_t bl = strlen(says[k].before);
		for (const char *p = text; (p = memmem(p, len - (size_t)(p - text), says[k].before, bl)) != NULL;) {
			p += bl;
			const char *e = p;
			while ((size_t)(e - text) < len && e - p < CD_REDACT_NAME_MAX && *e != says[k].end && *e != '\n')
				e++;
			if ((size_t)(e - text) < len && *e == says[k].end && e > p) {
				char name[CD_REDACT_NAME_MAX];
				snprintf(name, sizeof name, "%.*s", (int)(e - p), p);
				cd_redact_add_name(r, name);
			}
		}
	}
}

/* ---- judging one word ---- */

#define PIECE_MAX 300   /* longer than any address, MAC, UUID or host name */

static bool all_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	return true;
}

static bool is_uuid(const char *w, size_t n)
{
	if (n == 11)   /* an MBR disk's PARTUUID: the disk signature and the partition */
		return w[8] == '-' && all_hex(w, 8) && all_hex(w + 9, 2);
	if (n == 32)   /* without its dashes: a machine id, a journal's folder */
		return all_hex(w, 32);
	if (n != 36 || w[8] != '-' || w[13] != '-' || w[18] != '-' || w[23] != '-')
		return false;
	return all_hex(w, 8) && all_hex(w + 9, 4) && all_hex(w + 14, 4) && all_hex(w + 19, 4) && all_hex(w + 24, 12);
}

/* Six or more two-digit hex groups joined by one separator, ':' or '-'
 * (a MAC; an EUI-64, a WWN, a netfilter MAC= field). */
static bool is_mac(const char *w, size_t n)
{
	/* Cisco's three groups of four: aabb.ccdd.eeff */
	if (n == 14 && w[4] == '.' && w[9] == '.')
		return all_hex(w, 4) && all_hex(w + 5, 4) && all_hex(w + 10, 4);
	if (n < 17 || (n + 1) % 3 != 0)
		return false;
	char sep = w[2];
	if (sep != ':' && sep != '-')
		return false;
	for (size_t i = 0; i < n; i++)
		if (i % 3 == 2 ? w[i] != sep : !isxdigit((unsigned char)w[i]))
			return false;
	return true;
}

static bool is_ip(const char *w, size_t n, int af)
{
	char buf[64];
	unsigned char addr[16];
	if (n == 0 || n >= sizeof buf)
		return false;
	memcpy(buf, w, n);
	buf[n] = '\0';
	if (af == AF_INET6) {
		/* A digit too: "a::b" is an address to inet_pton, and a C++
		 * name in a log line. */
		int colons = 0, digits = 0;
		for (size_t i = 0; i < n; i++) {
			colons += buf[i] == ':';
			digits += isdigit((unsigned char)buf[i]) != 0;
		}
		if (colons < 2 || digits == 0)
			return false;
		/* "::1.2.3.4", the deprecated IPv4-compatible form, is rather the
		 * kernel's ip=CLIENT::GATEWAY with no server between. */
		if (buf[0] == ':' && buf[1] == ':' && strchr(buf, '.') && !strchr(buf + 2, ':'))
			return false;
	} else {
		for (size_t i = 0; i < n; i++)
			if (!isdigit((unsigned char)buf[i]) && buf[i] != '.')
				return false;
	}
	return inet_pton(af, buf, addr) == 1;
}

/* user@host or user@host.domain: the kernel's builder names its machine
 * ("Linux version ... (builder@build7.corp)"). */
static bool is_email(const char *w, size_t n)
{
	const char *at = memchr(w, '@', n);
	if (!at || at == w || at == w + n - 1 || memchr(at + 1, '@', n - (size_t)(at + 1 - w)))
		return false;
	for (const char *p = at + 1; p < w + n; p++)
		if (!host_char((unsigned char)*p))
			return false;
	return isalnum((unsigned char)at[1]);
}

/* The name itself, the name before a domain (db1.corp.example.com), or a
 * name in that domain (nas01.corp.example.com). */
static bool is_host(const struct cd_redact *r, const char *w, size_t n)
{
	for (int i = 0; i < r->n_names; i++) {
		size_t l = strlen(r->names[i]);
		if (n < l)
			continue;
		if (strncasecmp(w, r->names[i], l) == 0 && (n == l || (w[l] == '.' && n > l + 1)))
			return true;
		if (n > l && w[n - l - 1] == '.' && strncasecmp(w + n - l, r->names[i], l) == 0)
			return true;
	}
	return false;
}

static int judge(const struct cd_redact *r, const char *w, size_t n)
{
	if (n > PIECE_MAX)
		return -1;
	if (is_uuid(w, n))
		return CD_REDACT_UUID;
	if (is_mac(w, n))
		return CD_REDACT_MAC;
	if (is_ip(w, n, AF_INET6))
		return CD_REDACT_IPV6;
	if (is_ip(w, n, AF_INET))
		return CD_REDACT_IPV4;
	if (is_email(w, n))
		return CD_REDACT_EMAIL;
	if (is_host(r, w, n))
		return CD_REDACT_HOST;
	return -1;
}

/* ---- the output ---- */

struct out {
	char *buf;
	size_t len, cap;
	bool failed;
};

static void put(struct out *o, const char *s, size_t n)
{
	if (o->failed)
		return;
	if (o->len + n + 1 > o->cap) {
		size_t cap = o->cap * 2 + n + 64;
		char *b = realloc(o->buf, cap);
		if (!b) {
			o->failed = true;
			return;
		}
		o->buf = b;
		o->cap = cap;
	}
	memcpy(o->buf + o->len, s, n);
	o->len += n;
	o->buf[o->len] = '\0';
}

static void put_marker(struct cd_redact *r, struct out *o, int kind)
{
	r->count[kind]++;
	put(o, markers[kind], strlen(markers[kind]));
}

#define COLON_RUN_MAX 64  /* an IPv6 address is at most 45 characters, a 20-byte MAC 59 */

/* The identifier w begins with, and its length (0 when none); its kind in
 * *kind.  Over colons only an IPv6 address or a MAC can run: the longest
 * such run of hex digits, dots and colons that ends at the word's end or
 * by a colon (at most 8 colons, or 19 for a MAC), so that
 * "00:11:22:33:44:55::ffff:1.2.3.4" begins with an IPv6 address and
 * "10.0.0.5::10.0.0.1:..." with an IPv4 one.  Else the part before the
 * first colon, any kind, trailing dots and dashes left out ("10.0.0.1."
 * ends a sentence).  Each start costs at most a few dozen short checks,
 * so that a hostile line of "1:1:1:..." is read in linear time. */
static size_t ident_at(const struct cd_redact *r, const char *w, size_t n, int *kind)
{
	size_t first = 0;
	while (first < n && w[first] != ':' && w[first] != '%')
		first++;
	if (first < n && w[first] == ':') {
		bool mac_like = n >= 3 && isxdigit((unsigned char)w[0]) && isxdigit((unsigned char)w[1]) &&
		                (w[2] == ':' || w[2] == '-');
		size_t run = 0;
		int colons = 0, max_colons = mac_like ? 19 : 8;
		while (run < n && run < COLON_RUN_MAX &&
		       (isxdigit((unsigned char)w[run]) || w[run] == '.' || w[run] == ':')) {
			if (w[run] == ':' && ++colons > max_colons)
				break;
			run++;
		}
		for (size_t e = run; e > first; e--) {
			if (e != n && w[e] != ':' && w[e] != '%' && w[e - 1] != ':')
				continue;
			if (is_mac(w, e)) {
				*kind = CD_REDACT_MAC;
				return e;
			}
			if (is_ip(w, e, AF_INET6)) {
				*kind = CD_REDACT_IPV6;
				return e;
			}
		}
	}
	size_t s = first;
	int k = judge(r, w, s);
	while (k < 0 && s > 1 && (w[s - 1] == '.' || w[s - 1] == '-')) {
		s--;
		k = judge(r, w, s);
	}
	if (k < 0)
		return 0;
	*kind = k;
	return s;
}

/* A word up to its first identifier: from its start, and again after
 * each colon, the identifier it begins with becomes its marker; the rest
 * is copied.  Returns the bytes read: all n, or up to the end of the first
 * identifier, after which the caller reads a new word, as it will when the
 * text is read again (the marker ends a word): redacting twice changes
 * nothing.  *kind: the identifier's, or -1. */
/* Where a UUID (8-4-4-4-12) begins inside the piece w[0..n) after a
 * prefix ("luks-UUID", "dm-uuid-CRYPT-LUKS2-UUID"), neither letter nor digit
 * on either side; 0 when none. */
static size_t uuid_inside(const char *w, size_t n)
{
	for (size_t j = 1; j + 36 <= n; j++)
		if (!isalnum((unsigned char)w[j - 1]) && is_uuid(w + j, 36) &&
		    (j + 36 == n || !isalnum((unsigned char)w[j + 36])))
			return j;
	return 0;
}

static size_t word(struct cd_redact *r, struct out *o, const char *w, size_t n, int *found)
{
	size_t i = 0;
	*found = -1;
	while (i < n) {
		int kind;
		size_t id = ident_at(r, w + i, n - i, &kind);
		if (id) {
			put_marker(r, o, kind);
			*found = kind;
			return i + id;
		}
		size_t piece = 0, in;
		while (i + piece < n && w[i + piece] != ':' && w[i + piece] != '%')
			piece++;
		if ((in = uuid_inside(w + i, piece)) != 0) {
			put(o, w + i, in);
			put_marker(r, o, CD_REDACT_UUID);
			*found = CD_REDACT_UUID;
			return i + in + 36;
		}
		/* Up to the next colon or '%' (fe80::1%eth0: the zone), which
		 * are copied too. */
		size_t e = i;
		while (e < n && w[e] != ':' && w[e] != '%')
			e++;
		if (e < n)
			e++;
		put(o, w + i, e - i);
		i = e;
	}
	return n;
}

/* A word that labels a serial number, "SerialNumber:", "Serial Number:"
 * (prev is the word before, or empty), "serial_number=", "SerialNumber:X":
 * the label's length, its ':' included (what follows on the line is the
 * number); 0 when it is none.  after is the byte after the word. */
static size_t serial_label(const char *w, size_t n, char after, const char *prev, size_t pn)
{
	static const char *const keys[] = { "serialnumber", "serial_number", "serial-number", "serialno", "number" };
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		size_t k = strlen(keys[i]);
		if (n < k || strncasecmp(keys[i], w, k) != 0)
			continue;
		if (i == sizeof keys / sizeof keys[0] - 1 && !(pn == 6 && strncasecmp(prev, "serial", 6) == 0))
			continue;   /* "Number:" only after "Serial" */
		if (n > k && w[k] == ':')
			return k + 1;
		if (n == k && after == '=')
			return k;
	}
	return 0;
}

/* The word text[s..e) as a label after which the rest of the line is an
 * identifier: the label's length (to keep), its kind in *kind; 0 when it
 * is none. */
static size_t line_label(const char *text, size_t len, size_t s, size_t e, const char *prev, size_t pn, int *kind)
{
	size_t n = e - s, l;
	if ((l = serial_label(text + s, n, e < len ? text[e] : '\0', prev, pn)) != 0) {
		*kind = CD_REDACT_SERIAL;
		return l;
	}
	/* /proc/cpuinfo's "Serial\t\t: 10000000abcdef01" (arm's c_show()) */
	if (n == 6 && memcmp(text + s, "Serial", 6) == 0 && (s == 0 || text[s - 1] == '\n')) {
		while (e < len && (text[e] == ' ' || text[e] == '\t'))
			e++;
		if (e < len && text[e] == ':') {
			*kind = CD_REDACT_SERIAL;
			return e + 1 - s;
		}
	}
	/* net/ipv4/route.c ip_handle_martian_source(): "ll header: " and the
	 * frame's first bytes (destination and source MAC), as
	 * print_hex_dump() writes them ("00000000: ff ff ... 08 00  ......"),
	 * or "aa:bb:..." in older kernels */
	if (n == 7 && memcmp(text + s, "header:", 7) == 0 && pn == 2 && memcmp(prev, "ll", 2) == 0) {
		*kind = CD_REDACT_MAC;
		return 7;
	}
	return 0;
}

/* Whether the word at s stands right after dir ("/home/"). */
static bool in_folder(const char *text, size_t s, const char *dir)
{
	size_t n = strlen(dir);
	return s >= n && memcmp(text + s - n, dir, n) == 0;
}

/* /dev/disk/by-id/BUS-MODEL_SERIAL[-partN]: the bus kept ("nvme-",
 * "ata-", "wwn-"), the rest a serial, "-partN" kept; w[0..n) is the word,
 * which may run on past the name (":cryptroot").  Returns the bytes read. */
static size_t by_id_name(struct cd_redact *r, struct out *o, const char *w, size_t n)
{
	size_t end = 0, bus;
	while (end < n && w[end] != ':')
		end++;
	const char *dash = memchr(w, '-', end);
	bus = dash ? (size_t)(dash + 1 - w) : 0;
	size_t part = end;
	for (size_t k = bus; k + 5 < end; k++)
		if (memcmp(w + k, "-part", 5) == 0 && strspn(w + k + 5, "0123456789") == end - k - 5)
			part = k;
	put(o, w, bus);
	if (part > bus)
		put_marker(r, o, CD_REDACT_SERIAL);
	put(o, w + part, end - part);
	return end;
}

/* Whether w[0..n) labels a UUID whatever its form ("UUID", "PARTUUID",
 * "rd.luks.uuid"), its value after '='. */
static bool uuid_label(const char *w, size_t n)
{
	return n >= 4 && strncasecmp(w + n - 4, "uuid", 4) == 0;
}

char *cd_redact_text(struct cd_redact *r, const char *text, size_t len, size_t *out_len)
{
	struct out o = { .buf = malloc(len + 64), .cap = len + 64 };
	if (!o.buf)
		return NULL;
	o.buf[0] = '\0';
	const char *prev = "";
	size_t pn = 0;
	size_t i = 0;
	size_t word_end = 0;  /* where the word being read ends */
	bool nfs_path = false;   /* in nfsroot='s value, before its folder */
	size_t uuid_value = (size_t)-1;   /* where a "...uuid=" label's value starts */
	while (i < len) {
		if (!word_char((unsigned char)text[i])) {
			if (text[i] == '/' && nfs_path) {
				/* nfsroot=[SERVER:]/PATH[,OPTIONS] */
				while (i < len && text[i] != ',' && text[i] != ' ' && text[i] != '\t' && text[i] != '\n' &&
				       text[i] != '\r' && text[i] != '"')
					i++;
				put_marker(r, &o, CD_REDACT_PATH);
				nfs_path = false;
				continue;
			}
			if (text[i] == ' ' || text[i] == '\t' || text[i] == '\n')
				nfs_path = false;
			put(&o, text + i, 1);
			if (text[i] == '\n')
				pn = 0;
			i++;
			continue;
		}
		size_t s = i;
		if (word_end <= s)
			for (word_end = s; word_end < len && word_char((unsigned char)text[word_end]);)
				word_end++;
		i = word_end;
		if (s == uuid_value) {
			put_marker(r, &o, CD_REDACT_UUID);
			continue;
		}
		if (in_folder(text, s, "/home/")) {
			put_marker(r, &o, CD_REDACT_USER);
			continue;
		}
		if (in_folder(text, s, "/by-id/")) {
			i = s + by_id_name(r, &o, text + s, i - s);
			continue;
		}
		int lkind = -1;
		size_t label = line_label(text, len, s, i, prev, pn, &lkind);
		if (!label) {
			if (uuid_label(text + s, i - s) && i < len && text[i] == '=')
				uuid_value = i + 1;
			if (i - s == 7 && strncasecmp(text + s, "nfsroot", 7) == 0 && i < len && text[i] == '=')
				nfs_path = true;
			int kind;
			size_t used = word(r, &o, text + s, i - s, &kind);
			if (kind >= 0) {
				/* A new word after the marker (as the marker ends it when
				 * the text is read again); the word before it is the
				 * marker's. */
				i = s + used;
				prev = markers[kind] + 1;
				pn = strlen(markers[kind]) - 2;
				continue;
			}
		} else {
			/* The label, blanks and an '=' kept, the rest of the line replaced. */
			put(&o, text + s, label);
			i = s + label;
			while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '='))
				put(&o, text + i++, 1);
			if (i < len && text[i] != '\n' && text[i] != '\r') {
				while (i < len && text[i] != '\n' && text[i] != '\r')
					i++;
				put_marker(r, &o, lkind);
			}
			pn = 0;
			continue;
		}
		prev = text + s;
		pn = i - s;
	}
	if (o.failed) {
		free(o.buf);
		return NULL;
	}
	*out_len = o.len;
	return o.buf;
}
