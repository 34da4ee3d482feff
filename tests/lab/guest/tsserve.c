/* SPDX-License-Identifier: MIT */
/*
 * tsserve: a small request/response server over TCP loopback that reads the
 * clock per request the way event-loop servers do (nginx refreshes its
 * cached time with gettimeofday and CLOCK_MONOTONIC after each wait; servers
 * stamp a request's start and end for timeouts and latency, and its Date
 * header or log line from CLOCK_REALTIME), and its own load generator.
 *
 *   tsserve server PORT
 *       single-threaded, epoll; each request is one line ("GET /N\n"); per
 *       request: clock_gettime(MONOTONIC) at its start (the connection's
 *       idle deadline), clock_gettime(REALTIME) for its Date stamp,
 *       gettimeofday for its access-log line (kept in memory), and
 *       clock_gettime(MONOTONIC) at its end (latency): 4 time calls a
 *       request.  Answers "200 N SECS.USEC LATENCY_NS\n".  Runs until
 *       SIGTERM or SIGINT, then prints on stderr "requests=N
 *       time_call_ticks=T": T is the counter's ticks (rdtsc; cntvct on
 *       arm64; 0 elsewhere) spent inside its time calls, so that the share
 *       of its CPU in them is measured in the server itself, in the same
 *       time (a host's load included) as its CPU time.
 *   tsserve client PORT CONNS DEPTH REQUESTS
 *       CONNS connections, DEPTH requests in flight on each (sent together,
 *       as a pipelining client does), REQUESTS in all; checks every answer
 *       (its stamp within 2 s of this machine's CLOCK_REALTIME_COARSE) and prints
 *       "requests=N secs=S rps=R bad=B".
 *
 * The client runs on the kernel's clock (run it without the accelerator):
 * only the server differs between the two sides of an A/B.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
static unsigned long long ticks(void)
{
	return __rdtsc();
}
#elif defined(__aarch64__)
static unsigned long long ticks(void)
{
	unsigned long long v;
	__asm__ __volatile__("isb; mrs %0, cntvct_el0" : "=r"(v) : : "memory");
	return v;
}
#else
static unsigned long long ticks(void)
{
	return 0;
}
#endif

#define MAXCONN 64
#define MAXDEPTH 64
#define BUFSZ 4096

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static long long ns_of(const struct timespec *t)
{
	return t->tv_sec * 1000000000LL + t->tv_nsec;
}

struct conn {
	int fd;
	size_t have;
	long long deadline_ns;
	char in[BUFSZ];
};

/* The access log: the last lines, kept in memory (a server writes them out
 * in batches; the formatting is the per-request work that matters here). */
static char access_log[64][96];
static unsigned long log_next;
static unsigned long long time_call_ticks;

/* The time calls, each timed by the counter around it. */
#define TIMED(call) do { unsigned long long t0_ = ticks(); call; time_call_ticks += ticks() - t0_; } while (0)

static size_t answer(const char *req, size_t len, char *out, size_t cap)
{
	struct timespec start, wall, end;
	struct timeval tv;
	TIMED(clock_gettime(CLOCK_MONOTONIC, &start));
	TIMED(clock_gettime(CLOCK_REALTIME, &wall));
	long n = 0;
	if (len > 5 && memcmp(req, "GET /", 5) == 0)
		n = strtol(req + 5, NULL, 10);
	TIMED(gettimeofday(&tv, NULL));
	struct tm tm;
	gmtime_r(&tv.tv_sec, &tm);
	char stamp[32];
	strftime(stamp, sizeof stamp, "%d/%b/%Y:%H:%M:%S", &tm);
	snprintf(access_log[log_next++ % 64], sizeof access_log[0], "127.0.0.1 [%s.%06ld] \"GET /%ld\" 200",
		 stamp, (long)tv.tv_usec, n);
	TIMED(clock_gettime(CLOCK_MONOTONIC, &end));
	int w = snprintf(out, cap, "200 %ld %lld.%06ld %lld\n", n, (long long)wall.tv_sec,
			 wall.tv_nsec / 1000, ns_of(&end) - ns_of(&start));
	return w > 0 && (size_t)w < cap ? (size_t)w : 0;
}

/* A connection: no Nagle delay (one small answer at a time), in the epoll set. */
static void watch(int ep, struct conn *c, int fd)
{
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	c->fd = fd;
	c->have = 0;
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = c };
	epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
}

static int listen_on(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	int one = 1;
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((unsigned short)port) };
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(fd, 64) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static int server(int port)
{
	int lfd = listen_on(port);
	if (lfd < 0) {
		perror("tsserve: listen");
		return 1;
	}
	struct sigaction sa = { .sa_handler = on_signal };
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	int ep = epoll_create1(0);
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };
	epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev);
	static struct conn conns[MAXCONN];
	for (int i = 0; i < MAXCONN; i++)
		conns[i].fd = -1;
	unsigned long long served = 0;
	char out[BUFSZ];
	while (!stop) {
		struct epoll_event evs[MAXCONN];
		int k = epoll_wait(ep, evs, MAXCONN, 1000);
		if (k < 0 && errno != EINTR)
			break;
		for (int e = 0; e < k; e++) {
			struct conn *c = evs[e].data.ptr;
			if (!c) {
				int fd = accept(lfd, NULL, NULL);
				if (fd < 0)
					continue;
				int i = 0;
				while (i < MAXCONN && conns[i].fd >= 0)
					i++;
				if (i == MAXCONN) {
					close(fd);
					continue;
				}
				watch(ep, &conns[i], fd);
				continue;
			}
			ssize_t r = read(c->fd, c->in + c->have, sizeof c->in - c->have);
			if (r <= 0) {
				close(c->fd);      /* closing removes it from the epoll set */
				c->fd = -1;
				continue;
			}
			c->have += (size_t)r;
			size_t used = 0, olen = 0;
			char *nl;
			while ((nl = memchr(c->in + used, '\n', c->have - used)) != NULL) {
				size_t len = (size_t)(nl - (c->in + used));
				if (olen + 128 > sizeof out)
					break;
				olen += answer(c->in + used, len, out + olen, sizeof out - olen);
				used += len + 1;
				served++;
			}
			memmove(c->in, c->in + used, c->have - used);
			c->have -= used;
			if (c->have == sizeof c->in)
				c->have = 0;       /* a line longer than the buffer: dropped */
			if (olen && write(c->fd, out, olen) != (ssize_t)olen) {
				close(c->fd);
				c->fd = -1;
			}
		}
	}
	fprintf(stderr, "requests=%llu time_call_ticks=%llu\n", served, time_call_ticks);
	return 0;
}

/* Up to n requests in one write: as a pipelining client sends them. */
static int send_requests(int fd, long *sent, long total, int n)
{
	char req[MAXDEPTH * 24];
	size_t len = 0;
	for (; n > 0 && *sent < total; n--)
		len += (size_t)snprintf(req + len, sizeof req - len, "GET /%ld\n", (*sent)++);
	return len == 0 || write(fd, req, len) == (ssize_t)len ? 0 : -1;
}

static int client(int port, int nconn, int depth, long total)
{
	if (nconn < 1 || nconn > MAXCONN || depth < 1 || depth > MAXDEPTH || total < nconn)
		return 2;
	int ep = epoll_create1(0);
	static struct conn conns[MAXCONN];
	long sent = 0, done = 0, bad = 0;
	struct timespec t0, t1;
	for (int i = 0; i < nconn; i++) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((unsigned short)port) };
		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
			perror("tsserve: connect");
			return 1;
		}
		watch(ep, &conns[i], fd);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < nconn; i++)
		if (send_requests(conns[i].fd, &sent, total, depth) < 0)
			return 1;
	while (done < total) {
		struct epoll_event evs[MAXCONN];
		int k = epoll_wait(ep, evs, MAXCONN, 10000);
		if (k <= 0) {
			fprintf(stderr, "tsserve: no answer for 10 s (%ld of %ld)\n", done, total);
			return 1;
		}
		for (int e = 0; e < k; e++) {
			struct conn *c = evs[e].data.ptr;
			ssize_t r = read(c->fd, c->in + c->have, sizeof c->in - 1 - c->have);
			if (r <= 0) {
				fprintf(stderr, "tsserve: the server closed a connection\n");
				return 1;
			}
			c->have += (size_t)r;
			char *nl;
			int answered = 0;
			while ((nl = memchr(c->in, '\n', c->have)) != NULL) {
				*nl = 0;
				long n;
				long long secs;
				struct timespec now;
				/* coarse: the vDSO's, never a system call, so that the
				 * load generator adds no time calls of its own */
				clock_gettime(CLOCK_REALTIME_COARSE, &now);
				if (sscanf(c->in, "200 %ld %lld.", &n, &secs) != 2 || llabs(secs - now.tv_sec) > 2)
					bad++;
				done++;
				size_t len = (size_t)(nl - c->in) + 1;
				memmove(c->in, nl + 1, c->have - len);
				c->have -= len;
				answered++;
			}
			if (send_requests(c->fd, &sent, total, answered) < 0)
				return 1;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double secs = (ns_of(&t1) - ns_of(&t0)) / 1e9;
	printf("requests=%ld secs=%.3f rps=%.1f bad=%ld\n", done, secs, done / secs, bad);
	return bad != 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "server") == 0)
		return server(atoi(argv[2]));
	if (argc == 6 && strcmp(argv[1], "client") == 0)
		return client(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]), atol(argv[5]));
	fprintf(stderr, "usage: tsserve server PORT | tsserve client PORT CONNS DEPTH REQUESTS\n");
	return 2;
}
