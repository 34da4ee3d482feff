/* SPDX-License-Identifier: MIT */
/* Unit tests of statedir.c: where the state folder is, and this boot's
 * id as the kernel gives it. */
#include "persist/statedir.h"
#include "unit.h"

#include <ctype.h>
#include <stdbool.h>

int main(void)
{
	unsetenv("CLOCKDOCTOR_STATE_DIR");
	CHECK_STR(cd_state_dir(), "/run/clockdoctor");
	setenv("CLOCKDOCTOR_STATE_DIR", "", 1);
	CHECK_STR(cd_state_dir(), CD_STATE_DIR_DEFAULT);
	setenv("CLOCKDOCTOR_STATE_DIR", "/tmp/cd-state", 1);
	CHECK_STR(cd_state_dir(), "/tmp/cd-state");

	char boot[64], again[64], tiny[8];
	CHECK_INT(cd_boot_id(boot, sizeof boot), 0);
	CHECK_INT(strlen(boot), 36); /* 5d1c7a2e-0000-4000-8000-0123456789ab */
	bool shape = true;
	for (int i = 0; i < 36; i++)
		shape &= i == 8 || i == 13 || i == 18 || i == 23 ? boot[i] == '-' : isxdigit((unsigned char)boot[i]) != 0;
	CHECK(shape);
	CHECK_INT(cd_boot_id(again, sizeof again), 0);
	CHECK_STR(again, boot);
	/* A buffer too small for it is cut, never overrun. */
	CHECK_INT(cd_boot_id(tiny, sizeof tiny), 0);
	CHECK_INT(strlen(tiny), 7);
	return unit_done("statedir");
}
