/* SPDX-License-Identifier: MIT */
/*
 * test_shellquote.c: a word for a pasted command is bare only when no shell
 * gives any of its bytes a meaning, single-quoted otherwise (a quote inside
 * as '\''), and refused when it holds a byte no quoting makes safe to paste;
 * a word that does not fit is refused, never cut.
 */
#include "unit.h"
#include "util/shellquote.h"

static void word_is(const char *in, const char *want)
{
	char buf[128];
	unit_case("%s", in);
	CHECK(cd_shell_word(buf, sizeof buf, in));
	CHECK_STR(buf, want);
	unit_case(NULL);
}

static void refused(const char *in)
{
	char buf[128] = "x";
	unit_case("%s", in);
	CHECK(!cd_shell_word(buf, sizeof buf, in));
	CHECK_STR(buf, "");
	unit_case(NULL);
}

int main(void)
{
	word_is("tsc=reliable", "tsc=reliable");
	word_is("clocksource=acpi_pm", "clocksource=acpi_pm");
	word_is("/etc/default/grub.d/90-clockdoctor-tsc-reliable.cfg",
	        "/etc/default/grub.d/90-clockdoctor-tsc-reliable.cfg");
	word_is("clocksource=acpi_pm$(touch${IFS}/tmp/pwned)", "'clocksource=acpi_pm$(touch${IFS}/tmp/pwned)'");
	word_is("a`id`b", "'a`id`b'");
	word_is("a;b", "'a;b'");
	word_is("a b", "'a b'");
	word_is("it's", "'it'\\''s'");
	word_is("'", "''\\'''");
	word_is("\"$HOME\"", "'\"$HOME\"'");
	word_is("*", "'*'");
	word_is("a\\b", "'a\\b'");
	word_is("~root", "'~root'");
	word_is("=ls", "'=ls'");
	word_is("-rf", "'-rf'");
	word_is("", "''");
	word_is("tsc=reliable tsc=noirqtime", "'tsc=reliable tsc=noirqtime'");
	refused("a\nb");
	refused("a\x1b[2Jb");
	refused("a\rb");
	refused("a\tb");
	refused("a\x7f");
	refused("caf\xc3\xa9");
	refused("\xe2\x80\xae" "evil");     /* U+202E, right-to-left override */
	/* fits exactly, one byte short */
	char small[8];
	CHECK(cd_shell_word(small, sizeof small, "1234567"));
	CHECK(!cd_shell_word(small, sizeof small, "12345678"));
	CHECK(!cd_shell_word(small, sizeof small, "'a b'"));  /* ''\''a b'\''' is 13 bytes */
	CHECK(!cd_shell_word(small, 6, "a b c"));
	CHECK(cd_shell_word(small, 8, "a b c"));
	CHECK_STR(small, "'a b c'");
	CHECK(cd_shell_plain("tsc=reliable"));
	CHECK(!cd_shell_plain("a\"b"));
	CHECK(!cd_shell_plain("$x"));
	CHECK(!cd_shell_plain(""));
	return unit_done("test_shellquote");
}
