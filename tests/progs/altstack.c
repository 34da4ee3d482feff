/* SPDX-License-Identifier: MIT */
/*
 * altstack: clock_gettime in a signal handler on small alternate stacks
 * (altstack.h), for the accelerator: run under LD_PRELOAD (FASTCLOCK=force
 * where the kernel's clock is read by the vDSO), the handler's reads go
 * through the library's slow path, re-anchors included.
 *
 *   altstack
 *
 * Prints the depth the reads went on a 64 KiB stack and the kernel's
 * signal frame, then reads on a stack of the larger of the classic
 * MINSIGSTKSZ (2048) and AT_MINSIGSTKSZ plus FC_READ_STACK_BYTES and the
 * handler's own, and on glibc's MINSIGSTKSZ; one line each, "ok" or
 * "FAILED".  Exit 0 when the depth is within FC_READ_STACK_BYTES and every
 * stack held.
 */
#include <stdio.h>
#include <sys/auxv.h>

#include "altstack.h"

#ifndef AT_MINSIGSTKSZ
#define AT_MINSIGSTKSZ 51
#endif

int main(void)
{
	/* errno's function bound now: the loader's lazy binding, at a first
	 * call in the handler, puts the CPU's whole vector state on the stack
	 * (_dl_runtime_resolve_xsavec), which is not the library's doing */
	errno = 0;
	altstack_gettime = clock_gettime;
	long frame = 0, depth = altstack_run(65536, &frame);
	printf("depth=%ld frame=%ld at_minsigstksz=%lu\n", depth, frame, getauxval(AT_MINSIGSTKSZ));
	int bad = depth <= 0 || depth > FC_READ_STACK_BYTES;
	size_t base = (size_t)getauxval(AT_MINSIGSTKSZ);
	if (base < 2048)
		base = 2048;
	size_t sizes[] = { base + FC_READ_STACK_BYTES + ALTSTACK_HANDLER_SLACK, (size_t)MINSIGSTKSZ };
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		long d = altstack_run(sizes[i], NULL);
		printf("stack %zu: %s\n", sizes[i], d > 0 ? "ok" : "FAILED");
		bad |= d <= 0;
	}
	return bad;
}
