/* SPDX-License-Identifier: MIT */
/*
 * fastclock-example.c: libfastclock in a program.  Build it against an
 * installed library with
 *
 *     cc -O2 fastclock-example.c $(pkg-config --cflags --libs fastclock)
 *
 * It says which source the library chose and why, times a loop with
 * fc_now_ns(), and reads the wall clock through the clock_gettime drop-in.
 */
#include <fastclock.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

int main(void)
{
	struct fc_info info;
	int r = fc_info(&info);
	if (r != 0) {
		fprintf(stderr, "fc_info: %s\n", strerror(-r));
		return 1;
	}
	printf("source: %s (%s): %s\n", fc_source_name(info.source), fc_reason_name(info.reason),
	       info.reason_text);
	if (info.source == FC_SOURCE_COUNTER)
		printf("counter: %s at %.6f MHz (from %s, +-%.3g ppm), error bound %" PRId64 " ns\n", info.counter,
		       info.counter_hz / 1e6, info.freq_from, info.freq_err_ppm, info.error_bound_ns);

	/* an interval: a million reads of the clock itself */
	int64_t start = fc_now_ns();
	int64_t last = start;
	for (int i = 0; i < 1000000; i++) {
		int64_t now = fc_now_ns();
		if (now < last) {
			fprintf(stderr, "time went backwards: %" PRId64 " < %" PRId64 "\n", now, last);
			return 1;
		}
		last = now;
	}
	printf("1000000 reads of fc_now_ns took %.2f ms (%.1f ns a read)\n", fc_elapsed_ns(start) / 1e6,
	       (double)fc_elapsed_ns(start) / 1e6);

	/* clock_gettime's clocks, with the library's errors: -errno, errno untouched */
	struct timespec ts;
	r = fc_gettime(CLOCK_REALTIME, &ts);
	if (r != 0) {
		fprintf(stderr, "fc_gettime: %s\n", strerror(-r));
		return 1;
	}
	char buf[64];
	struct tm tm;
	strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", gmtime_r(&ts.tv_sec, &tm));
	printf("now: %s.%09ld UTC\n", buf, (long)ts.tv_nsec);
	return 0;
}
