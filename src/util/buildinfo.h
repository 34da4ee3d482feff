/* SPDX-License-Identifier: MIT */
/*
 * buildinfo.h: what this binary was built from and with, said by
 * `clockdoctor --version` and by the Prometheus file's build_info: the
 * source revision and the day of the build come from the Makefile
 * (buildinfo.o alone is rebuilt when they change), the compiler from the
 * compiler itself.
 */
#ifndef CD_BUILDINFO_H
#define CD_BUILDINFO_H

extern const char cd_build_revision[];  /* git describe, or "unknown" */
extern const char cd_build_date[];      /* YYYY-MM-DD, SOURCE_DATE_EPOCH's when set */
extern const char cd_build_compiler[];  /* "gcc 12.2.0", "clang ..." */

#endif
