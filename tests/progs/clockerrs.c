/* SPDX-License-Identifier: MIT */
/*
 * clockerrs CASE: one bad (or good) time call, then "RETURN ERRNO".  Run
 * with and without the accelerator, the output must be the same: the
 * kernel's errors (EINVAL, EFAULT) and errno untouched on success.  Where
 * the vDSO reads the clocksource itself, a NULL or kernel pointer faults in
 * the vDSO, with and without the accelerator alike; on hpet it is EFAULT.
 *
 * cases: ok badid dynid null kernelptr page0 tz tvnull tvbad tsgbase
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

int main(int argc, char **argv)
{
	struct timespec ts;
	struct timezone tz;
	const char *c = argc > 1 ? argv[1] : "";
	int r = 0;
	/* volatile: the prototypes say nonnull, and these calls mean it */
	struct timespec *volatile no_ts = NULL;
	struct timeval *volatile no_tv = NULL;
	errno = 1234;
	if (!strcmp(c, "ok"))
		r = clock_gettime(CLOCK_MONOTONIC, &ts);
	else if (!strcmp(c, "badid"))
		r = clock_gettime(12345, &ts);
	else if (!strcmp(c, "dynid"))
		r = clock_gettime(-7, &ts);
	else if (!strcmp(c, "null"))
		r = clock_gettime(CLOCK_MONOTONIC, no_ts);
	else if (!strcmp(c, "kernelptr"))
		r = clock_gettime(CLOCK_REALTIME, (struct timespec *)-64L);
	else if (!strcmp(c, "page0"))
		r = clock_gettime(CLOCK_TAI, (struct timespec *)8);
	else if (!strcmp(c, "tz"))
		r = gettimeofday(no_tv, &tz);
	else if (!strcmp(c, "tvnull"))
		r = gettimeofday(no_tv, NULL);
	else if (!strcmp(c, "tvbad"))
		r = gettimeofday((struct timeval *)-64L, NULL);
	else if (!strcmp(c, "tsgbase"))
		r = timespec_get(&ts, 12345);
	else {
		fprintf(stderr, "clockerrs: unknown case '%s'\n", c);
		return 2;
	}
	printf("%d %d\n", r, errno);
	return 0;
}
