/* SPDX-License-Identifier: MIT */
/*
 * sandbox.c: whether a seccomp filter may stand between libfastclock and a
 * system call outside systemd's @system-service set (sandbox.h).
 */
#include "sandbox.h"

#include <errno.h>
#include <stdatomic.h>
#include <sys/prctl.h>

static atomic_bool filtered;

bool fc_unfiltered(void)
{
	if (atomic_load_explicit(&filtered, memory_order_relaxed))
		return false;
	int saved = errno;
	/* 0: no filter; 2: a filter; -1 (EINVAL): a kernel without seccomp,
	 * where nothing can filter, but nothing says so for certain */
	int mode = prctl(PR_GET_SECCOMP, 0, 0, 0, 0);
	errno = saved;
	if (mode != 0) {
		atomic_store_explicit(&filtered, true, memory_order_relaxed);
		return false;
	}
	return true;
}
