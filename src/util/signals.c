/*
 * signals.c: a stop signal's handler, installed without SA_RESTART
 * (signals.h).
 */
#include "util/signals.h"

#include <signal.h>
#include <string.h>

void cd_catch_signal(int sig, void (*handler)(int))
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = handler;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}
