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
 *       SIGTERM or SIGINT, then prints "requests=N" on stderr.
 *   tsserve client PORT CONNS REQUESTS
 *       CONNS connections, one request in flight on each, REQUESTS in all;
 *       checks every answer (its number, its stamp within 2 s of this
 *       machine's CLOCK_REALTIME) and prints
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

#define MAXCONN 64
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

static size_t answer(const char *req, size_t len, char *out, size_t cap)
{
	struct timespec start, wall, end;
	struct timeval tv;
	clock_gettime(CLOCK_MONOTONIC, &start);
	clock_gettime(CLOCK_REALTIME, &wall);
	long n = 0;
	if (len > 5 && memcmp(req, "GET /", 5) == 0)
		n = strtol(req + 5, NULL, 10);
	gettimeofday(&tv, NULL);
	struct tm tm;
	gmtime_r(&tv.tv_sec, &tm);
	char stamp[32];
	strftime(stamp, sizeof stamp, "%d/%b/%Y:%H:%M:%S", &tm);
	snprintf(access_log[log_next++ % 64], sizeof access_log[0], "127.0.0.1 [%s.%06ld] \"GET /%ld\" 200",
		 stamp, (long)tv.tv_usec, n);
	clock_gettime(CLOCK_MONOTONIC, &end);
	int w = snprintf(out, cap, "200 %ld %lld.%06ld %lld\n", n, (long long)wall.tv_sec,
			 wall.tv_nsec / 1000, ns_of(&end) - ns_of(&start));
	return w > 0 && (size_t)w < cap ? (size_t)w : 0;
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
				int one = 1;
				setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
				conns[i].fd = fd;
				conns[i].have = 0;
				struct epoll_event ce = { .events = EPOLLIN, .data.ptr = &conns[i] };
				epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ce);
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
	fprintf(stderr, "requests=%llu\n", served);
	return 0;
}

static int client(int port, int nconn, long total)
{
	if (nconn < 1 || nconn > MAXCONN || total < nconn)
		return 2;
	int ep = epoll_create1(0);
	static struct conn conns[MAXCONN];
	long sent = 0, done = 0, bad = 0;
	char req[64];
	struct timespec t0, t1;
	for (int i = 0; i < nconn; i++) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((unsigned short)port) };
		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
			perror("tsserve: connect");
			return 1;
		}
		int one = 1;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		conns[i].fd = fd;
		conns[i].have = 0;
		struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &conns[i] };
		epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < nconn; i++) {
		int n = snprintf(req, sizeof req, "GET /%ld\n", sent++);
		if (write(conns[i].fd, req, (size_t)n) != n)
			return 1;
	}
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
			while ((nl = memchr(c->in, '\n', c->have)) != NULL) {
				*nl = 0;
				long n;
				long long secs;
				struct timespec now;
				clock_gettime(CLOCK_REALTIME, &now);
				if (sscanf(c->in, "200 %ld %lld.", &n, &secs) != 2 || llabs(secs - now.tv_sec) > 2)
					bad++;
				done++;
				size_t len = (size_t)(nl - c->in) + 1;
				memmove(c->in, nl + 1, c->have - len);
				c->have -= len;
				if (sent < total) {
					int w = snprintf(req, sizeof req, "GET /%ld\n", sent++);
					if (write(c->fd, req, (size_t)w) != w)
						return 1;
				}
			}
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
	if (argc == 5 && strcmp(argv[1], "client") == 0)
		return client(atoi(argv[2]), atoi(argv[3]), atol(argv[4]));
	fprintf(stderr, "usage: tsserve server PORT | tsserve client PORT CONNS REQUESTS\n");
	return 2;
}
