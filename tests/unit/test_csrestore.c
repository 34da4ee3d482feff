/* SPDX-License-Identifier: MIT */
/* Unit tests of csrestore.c's record: what it holds, where and with which
 * modes it is written, that it never replaces another run's, and its
 * removal.  The recovery that reads it is tested with the switch it undoes,
 * against a fake sysfs, in test_csswitch.c. */
#include "persist/csrestore.h"
#include "persist/statedir.h"
#include "unit.h"

#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[64];

int main(void)
{
	unit_tempdir(dir, sizeof dir, "csrestore");
	char state[96], err[512], boot[64], want[160], cmd[160];
	struct cd_cs cs;
	struct stat st;
	snprintf(state, sizeof state, "%s/run/clockdoctor", dir);
	CHECK_INT(cd_cs_init(&cs, dir, state), 0);
	snprintf(cs.original, sizeof cs.original, "hpet");
	CHECK_INT(cd_cs_record_write(&cs, err, sizeof err), 0);

	const char *text = unit_get(cs.record_path);
	CHECK(strncmp(text, "clockdoctor clocksource record 1\noriginal hpet\npid ", 51) == 0);
	snprintf(want, sizeof want, "\npid %ld\ncomm ", (long)getpid());
	CHECK(strstr(text, want) != NULL);
	CHECK_INT(cd_boot_id(boot, sizeof boot), 0);
	snprintf(want, sizeof want, "\nboot %s\nstart ", boot);
	CHECK(strstr(text, want) != NULL);
	CHECK_INT(stat(state, &st), 0);
	CHECK_INT(st.st_mode & 07777, 0700);
	CHECK_INT(stat(cs.record_path, &st), 0);
	CHECK_INT(st.st_mode & 07777, 0600);

	/* Another run's record is never replaced, and no temporary file stays. */
	snprintf(cs.original, sizeof cs.original, "tsc");
	CHECK_INT(cd_cs_record_write(&cs, err, sizeof err), -EEXIST);
	CHECK(strstr(err, "another run's record appeared") != NULL);
	CHECK(strstr(unit_get(cs.record_path), "original hpet\n") != NULL);
	snprintf(cmd, sizeof cmd, "test $(ls -A %s | wc -l) = 1", state);
	CHECK_INT(system(cmd), 0);

	CHECK_INT(cd_cs_record_remove(&cs), 0);
	CHECK(access(cs.record_path, F_OK) != 0);
	CHECK_INT(cd_cs_record_remove(&cs), 0); /* none there: removed already */

	return unit_done("csrestore");
}
