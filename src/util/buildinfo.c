/* SPDX-License-Identifier: MIT */
/*
 * buildinfo.c: the build's identity (buildinfo.h).
 */
#include "util/buildinfo.h"

#ifndef CD_REVISION
#define CD_REVISION "unknown"
#endif
#ifndef CD_BUILD_DATE
#define CD_BUILD_DATE "unknown"
#endif

const char cd_build_revision[] = CD_REVISION;
const char cd_build_date[] = CD_BUILD_DATE;
const char cd_build_compiler[] =
#if defined(__clang__)
	"clang " __clang_version__;
#elif defined(__GNUC__)
	"gcc " __VERSION__;
#else
	"unknown";
#endif
