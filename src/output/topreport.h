/* SPDX-License-Identifier: MIT */
/*
 * topreport.h: what `clockdoctor top` prints for one interval: a text table
 * like bcc's tools, or one JSON object on one line (docs/top.md).
 */
#ifndef CD_TOPREPORT_H
#define CD_TOPREPORT_H

#include "measure/trace.h"

#include <stdbool.h>
#include <stdio.h>
#include <time.h>

struct cd_top_interval {
	int index;                      /* 1, 2, ...: the report's number */
	double interval;                /* the seconds asked for a report (-i) */
	time_t when;                    /* the interval's end, wall clock */
	double secs;                    /* its length */
	uint64_t exact[CD_TSYS_N];      /* exact calls, every process */
	bool traced[CD_TSYS_N];         /* which system calls the kernel could trace */
	int pid;                        /* -p, else 0: then the totals are its threads' */
	int64_t pid_exact[CD_TSYS_N];   /* -p: exact calls of its threads; -1 unknown */
	uint64_t period;                /* the sample period at the interval's end */
	double call_ns;                 /* measured cost of one forced clock_gettime */
	int rows;                       /* at most this many processes in the text table */
	bool exact_procs;               /* each process's calls counted in the kernel (BPF) */
	const struct cd_top_table *t;   /* finished (cd_top_finish): sorted by cost */
};

void cd_top_print_text(FILE *out, const struct cd_top_interval *iv);
void cd_top_print_json(FILE *out, const struct cd_top_interval *iv);

#endif
