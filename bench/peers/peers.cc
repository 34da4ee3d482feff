/* SPDX-License-Identifier: MIT */
// peers.cc: libfastclock and its peers in one process, one run: what each
// read costs as a multiple of a bare rdtsc, and how far each is from the
// kernel's clock it claims to follow after a minute.
//
// The peers: abseil's absl::GetCurrentTimeNanos (Debian's libabsl-dev),
// quanta's Clock::now and Clock::raw and minstant's Instant::now (crates.io,
// through the Rust staticlib in rust/, one extern "C" call each).  Our calls
// come from build/libfastclock.a.  C++ because abseil is C++; the statistics
// are clockdoctor's own (src/measure/accstats.c), so the accuracy figures
// mean exactly what `clockdoctor accuracy` prints.
//
// Cost: interleaved rounds.  In each round every way runs one batch of
// calls, timed by the thread's CPU time (a preempted batch does not look
// dear), starting with a different way each round; the figure is the median
// over the rounds of (way's ns a call) / (rdtsc's ns a call in that round),
// so a machine that is slower in one round is slower for all the ways.
//
// Accuracy: for --accuracy-seconds, one thread reads each peer between two
// reads of the kernel's clock that the peer claims to follow, all peers in
// the same loop, so they all see the same minute.  A peer that calibrates
// once at start shows its drift here; one that follows the kernel does not.
#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include <absl/time/clock.h>

#include "fastclock.h"

extern "C" {
#include "measure/accuracy.h"

uint64_t peers_init(void);
uint64_t peers_quanta_now(void);
uint64_t peers_quanta_raw(void);
uint64_t peers_minstant_now(void);
uint64_t peers_minstant_unix_ns(void);
int32_t peers_minstant_tsc(void);
void cd_cpu_describe_live(char *buf, size_t cap);  // src/probe/cpuid.c, from build/libcd.a
}

#ifndef PEERS_VERSIONS
#define PEERS_VERSIONS "unknown"
#endif

namespace {

#if defined(__x86_64__)
inline uint64_t rdtsc_bare()
{
	uint32_t lo, hi;
	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

inline uint64_t rdtsc_ordered()
{
	uint32_t lo, hi;
	__asm__ __volatile__("lfence\n\trdtsc" : "=a"(lo), "=d"(hi) : : "memory");
	return ((uint64_t)hi << 32) | lo;
}
#elif defined(__aarch64__)
inline uint64_t rdtsc_bare()
{
	uint64_t v;
	__asm__ __volatile__("mrs %0, cntvct_el0" : "=r"(v));
	return v;
}

inline uint64_t rdtsc_ordered()
{
	uint64_t v;
	__asm__ __volatile__("isb\n\tmrs %0, cntvct_el0\n\tisb" : "=r"(v) : : "memory");
	return v;
}
#else
#error "peers needs a CPU counter (x86-64 or arm64)"
#endif

// A bare counter read behind a call, as every library read is: the floor a
// library function can reach.
__attribute__((noinline)) uint64_t rdtsc_call()
{
	return rdtsc_bare();
}

int64_t kernel_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

double thread_cpu_ns()
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

volatile uint64_t sink;

// n calls of f, timed by this thread's CPU time; ns in all.
template <typename F> double batch(F f, long n)
{
	uint64_t acc = 0;
	double t0 = thread_cpu_ns();
	for (long i = 0; i < n; i++)
		acc += (uint64_t)f();
	double t1 = thread_cpu_ns();
	sink = acc;
	return t1 - t0;
}

struct Way {
	const char *name;
	double (*run)(long n);
	long n = 0;                  // calls a batch
	std::vector<double> ns, ratio, ordered;  // ordered: over lfence;rdtsc in the round
	Way(const char *name_, double (*run_)(long)) : name(name_), run(run_) {}
};

#define WAY(NAME, EXPR) Way(NAME, [](long n) { return batch([] { return (uint64_t)(EXPR); }, n); })

std::vector<Way> ways()
{
	return {
		WAY("rdtsc", rdtsc_bare()),
		WAY("rdtsc (a call)", rdtsc_call()),
		WAY("lfence;rdtsc", rdtsc_ordered()),
		WAY("clock_gettime(MONO)", kernel_ns(CLOCK_MONOTONIC)),
		WAY("clock_gettime(REAL)", kernel_ns(CLOCK_REALTIME)),
		WAY("fc_now_ns", fc_now_ns()),
		WAY("fc_now_ns_unordered", fc_now_ns_unordered()),
		WAY("fc_realtime_ns", fc_realtime_ns()),
		WAY("absl GetCurrentTimeNanos", absl::GetCurrentTimeNanos()),
		WAY("quanta Clock::now", peers_quanta_now()),
		WAY("quanta Clock::raw", peers_quanta_raw()),
		WAY("minstant Instant::now", peers_minstant_now()),
		WAY("minstant now+as_unix_nanos", peers_minstant_unix_ns()),
	};
}

// ways()'s lfence;rdtsc: the floor of an ordered read.
const size_t ORDERED = 2;

size_t way_index(const std::vector<Way> &w, const char *name)
{
	for (size_t i = 0; i < w.size(); i++)
		if (strcmp(w[i].name, name) == 0)
			return i;
	return 0;
}

double median(std::vector<double> v)
{
	if (v.empty())
		return NAN;
	std::sort(v.begin(), v.end());
	return v[v.size() / 2];
}

// Size each way's batch to about batch_ms of CPU time.
void size_batches(std::vector<Way> &w, double batch_ms)
{
	for (auto &x : w) {
		long n = 1000;
		double t;
		while ((t = x.run(n)) < 200e3 && n < (1L << 26))
			n *= 2;
		double per = t / (double)n;
		x.n = std::max(1000L, (long)(batch_ms * 1e6 / (per > 0.1 ? per : 0.1)));
	}
}

void cost(std::vector<Way> &w, int rounds)
{
	size_t k = w.size();
	for (int r = 0; r < rounds; r++) {
		std::vector<double> per(k);
		for (size_t j = 0; j < k; j++) {
			size_t i = (j + (size_t)r) % k;
			per[i] = w[i].run(w[i].n) / (double)w[i].n;
		}
		for (size_t i = 0; i < k; i++) {
			w[i].ns.push_back(per[i]);
			w[i].ratio.push_back(per[i] / per[0]);
			w[i].ordered.push_back(per[i] / per[ORDERED]);
		}
	}
}

// The ordered reads: each a read that does not take its counter value
// before the loads and stores before it (lfence;rdtsc, the vDSO's
// clock_gettime, fc_now_ns, fc_realtime_ns), over lfence;rdtsc and over
// the kernel's clock in the same round.  abseil, quanta and minstant have
// none: each reads a bare rdtsc (absl/base/internal/unscaledcycleclock.h,
// quanta src/clocks/counter.rs, minstant src/tsc_now.rs).
void ordered_table(const std::vector<Way> &w)
{
	static const struct {
		const char *name, *kernel;
	} rows[] = {
		{ "lfence;rdtsc", nullptr },
		{ "clock_gettime(MONO)", nullptr },
		{ "clock_gettime(REAL)", nullptr },
		{ "fc_now_ns", "clock_gettime(MONO)" },
		{ "fc_realtime_ns", "clock_gettime(REAL)" },
	};
	printf("ordered reads (no peer has one: abseil, quanta and minstant read a bare\n"
	       "rdtsc); medians over the same rounds of the ratio in each round\n\n");
	printf("  %-27s %8s %12s %16s\n", "call", "ns/call", "x lfence;rdtsc", "x kernel's clock");
	for (auto &r : rows) {
		const Way &x = w[way_index(w, r.name)];
		printf("  %-27s %8.1f %12.2f", x.name, median(x.ns), median(x.ordered));
		if (r.kernel) {
			const Way &k = w[way_index(w, r.kernel)];
			std::vector<double> q;
			for (size_t i = 0; i < x.ns.size() && i < k.ns.size(); i++)
				q.push_back(x.ns[i] / k.ns[i]);
			printf(" %16.2f", median(q));
		}
		printf("\n");
	}
	printf("\n");
}

// ---- accuracy ----

struct Peer {
	const char *name;
	clockid_t kernel;
	const char *kernel_name;
	const char *claim;           // what the peer says it follows
	int64_t (*read)();
	int64_t cut = 0;
	cd_acc_stats *st = nullptr;
	cd_acc_point first{}, last{}, block{};
	cd_acc_summary sum{};
	double ppm = NAN, ppm_err = NAN;
	Peer(const char *name_, clockid_t kernel_, const char *kernel_name_, const char *claim_, int64_t (*read_)())
		: name(name_), kernel(kernel_), kernel_name(kernel_name_), claim(claim_), read(read_)
	{
	}
};

std::vector<Peer> peers()
{
	return {
		Peer("fc_now_ns", CLOCK_MONOTONIC, "MONOTONIC", "CLOCK_MONOTONIC (its epoch and scale)",
		     [] { return fc_now_ns(); }),
		Peer("fc_realtime_ns", CLOCK_REALTIME, "REALTIME", "CLOCK_REALTIME", [] { return fc_realtime_ns(); }),
		Peer("absl GetCurrentTimeNanos", CLOCK_REALTIME, "REALTIME", "the wall clock (Unix ns)",
		     [] { return (int64_t)absl::GetCurrentTimeNanos(); }),
		Peer("quanta Clock::now", CLOCK_MONOTONIC, "MONOTONIC", "CLOCK_MONOTONIC, calibrated at start",
		     [] { return (int64_t)peers_quanta_now(); }),
		Peer("minstant as_unix_nanos", CLOCK_REALTIME, "REALTIME", "the wall clock via an Anchor made at start",
		     [] { return (int64_t)peers_minstant_unix_ns(); }),
	};
}

int64_t median_bracket(const Peer &p)
{
	std::vector<int64_t> v(20001);
	for (auto &x : v) {
		int64_t k1 = kernel_ns(p.kernel);
		int64_t f = p.read();
		int64_t k2 = kernel_ns(p.kernel);
		sink = (uint64_t)f;
		x = k2 - k1;
	}
	std::nth_element(v.begin(), v.begin() + (long)v.size() / 2, v.end());
	return v[v.size() / 2];
}

void accuracy(std::vector<Peer> &ps, double seconds)
{
	for (auto &p : ps) {
		p.st = static_cast<cd_acc_stats *>(calloc(1, sizeof *p.st));
		if (!p.st) {
			fprintf(stderr, "peers: out of memory\n");
			exit(2);
		}
		p.cut = cd_acc_cut(median_bracket(p));
	}
	int64_t end = kernel_ns(CLOCK_MONOTONIC) + (int64_t)(seconds * 1e9);
	for (;;) {
		for (auto &p : ps)
			p.block = cd_acc_point{};
		for (int i = 0; i < 4096; i++) {
			for (auto &p : ps) {
				cd_acc_sample s;
				s.k1 = kernel_ns(p.kernel);
				s.f = p.read();
				s.k2 = kernel_ns(p.kernel);
				// No peer states a bound: 0, and the count is not reported.
				cd_acc_add(p.st, &s, p.cut, 0);
				cd_acc_point_offer(&p.block, &s);
			}
		}
		for (auto &p : ps) {
			if (!p.first.set)
				p.first = p.block;
			p.last = p.block;
		}
		if (kernel_ns(CLOCK_MONOTONIC) >= end)
			break;
	}
	for (auto &p : ps) {
		cd_acc_summarize(p.st, &p.sum);
		p.ppm = cd_acc_ppm(&p.first, &p.last, &p.ppm_err);
	}
}

std::string first_line(const char *path, const char *key)
{
	FILE *f = fopen(path, "r");
	char buf[512];
	std::string out;
	while (f && fgets(buf, sizeof buf, f)) {
		if (!key || strncmp(buf, key, strlen(key)) == 0) {
			out = buf;
			break;
		}
	}
	if (f)
		fclose(f);
	if (key) {
		size_t c = out.find(':');
		out = c == std::string::npos ? "" : out.substr(c + 2);
	}
	while (!out.empty() && (out.back() == '\n' || out.back() == ' '))
		out.pop_back();
	return out;
}

void usage(FILE *out)
{
	fprintf(out, "usage: peers [--accuracy-seconds SECONDS] [--rounds N]\n"
	             "  --accuracy-seconds  how long each peer is held against the kernel (default 60;\n"
	             "                      0 skips the accuracy part)\n"
	             "  --rounds            interleaved rounds for the cost (default 31)\n");
}

} // namespace

int main(int argc, char **argv)
{
	double seconds = 60;
	int rounds = 31;
	for (int i = 1; i < argc; i++) {
		char *end = nullptr;
		if (strcmp(argv[i], "--accuracy-seconds") == 0 && i + 1 < argc) {
			seconds = strtod(argv[++i], &end);
			if (*end || !(seconds >= 0) || seconds > 86400) {
				fprintf(stderr, "peers: --accuracy-seconds takes 0 to 86400: '%s'\n", argv[i]);
				return 3;
			}
		} else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
			long r = strtol(argv[++i], &end, 10);
			if (*end || r < 3 || r > 1001) {
				fprintf(stderr, "peers: --rounds takes 3 to 1001: '%s'\n", argv[i]);
				return 3;
			}
			rounds = (int)r;
		} else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			usage(stdout);
			return 0;
		} else {
			usage(stderr);
			return 3;
		}
	}

	// Start-up as each library does it, timed: quanta calibrates, minstant
	// anchors; libfastclock starts on its first call.
	int64_t t0 = kernel_ns(CLOCK_MONOTONIC);
	int64_t first = fc_now_ns();
	int64_t fc_start = kernel_ns(CLOCK_MONOTONIC) - t0;
	(void)first;
	uint64_t rust_start = peers_init();
	t0 = kernel_ns(CLOCK_MONOTONIC);
	sink = (uint64_t)absl::GetCurrentTimeNanos();
	int64_t absl_start = kernel_ns(CLOCK_MONOTONIC) - t0;

	struct fc_info info;
	fc_info(&info);
	time_t now = time(nullptr);
	char date[64];
	strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&now));
	printf("peers: %s\n", date);
	char cpu[200];
	cd_cpu_describe_live(cpu, sizeof cpu);
	printf("machine: %s; clocksource %s; kernel %s\n", cpu,
	       first_line("/sys/devices/system/clocksource/clocksource0/current_clocksource", nullptr).c_str(),
	       first_line("/proc/sys/kernel/osrelease", nullptr).c_str());
	printf("versions: %s\n", PEERS_VERSIONS);
	printf("libfastclock: source %s (%s), counter %s at %.6f MHz from %s\n", fc_source_name(info.source),
	       fc_reason_name(info.reason), info.counter, info.counter_hz / 1e6, info.freq_from);
	printf("minstant on the TSC: %s\n", peers_minstant_tsc() ? "yes" : "no (it reads the wall clock)");
	printf("start-up: fc first call %.1f us; quanta calibration + minstant anchor %.1f ms; "
	       "absl first call %.1f us\n\n",
	       (double)fc_start / 1e3, (double)rust_start / 1e6, (double)absl_start / 1e3);

	// The cost is taken at start-up and again after the accuracy minute:
	// a clock that adapts (abseil widens the stretch it serves from the
	// counter as its samples of the kernel agree) costs differently then.
	std::vector<Way> w = ways();
	size_batches(w, 2.0);
	cost(w, rounds);
	std::vector<Peer> ps = peers();
	std::vector<Way> later = ways();
	if (seconds > 0) {
		fprintf(stderr, "peers: holding %zu clocks against the kernel's for %.0f s...\n", ps.size(), seconds);
		accuracy(ps, seconds);
		size_batches(later, 2.0);
		cost(later, rounds);
	}
	printf("cost: %d interleaved rounds, batches of about 2 ms of thread CPU time;\n"
	       "x rdtsc: median over the rounds of ns a call / rdtsc's ns a call in that\n"
	       "round; at start-up, and again after the accuracy run\n\n",
	       rounds);
	printf("  %-27s %8s %7s %11s %8s %7s\n", "call", "ns/call", "x rdtsc", "(min-max)", "later ns", "x rdtsc");
	for (size_t i = 0; i < w.size(); i++) {
		auto r = w[i].ratio;
		std::sort(r.begin(), r.end());
		printf("  %-27s %8.1f %7.2f %5.2f-%5.2f", w[i].name, median(w[i].ns), median(w[i].ratio), r.front(), r.back());
		if (seconds > 0)
			printf(" %8.1f %7.2f", median(later[i].ns), median(later[i].ratio));
		printf("\n");
	}
	printf("\n");
	ordered_table(w);
	if (seconds <= 0)
		return 0;
	printf("accuracy: %.0f s, one thread, all clocks in the same loop; diff = value - the\n"
	       "midpoint of two reads of the kernel clock it follows (ns); brackets over\n"
	       "twice the median left out; ppm = its slope over the kernel's - 1, first\n"
	       "block to last\n\n", seconds);
	printf("  %-24s %-9s %7s %8s %8s %10s %10s %8s\n", "clock", "vs", "max", "median", "p99.9", ">1us", ">10us",
	       "ppm");
	bool inexact = false;
	for (auto &p : ps) {
		// A percentile past 16 us is the upper edge of its power-of-two
		// bin: marked, never passed off as exact.
		bool e50, e999;
		uint64_t p50 = cd_acc_hist_percentile(&p.st->abs_hist, 50, &e50);
		uint64_t p999 = cd_acc_hist_percentile(&p.st->abs_hist, 99.9, &e999);
		inexact |= !e50 || !e999;
		// The bin's edge can lie past the largest value seen.
		p50 = std::min(p50, (uint64_t)p.sum.max_abs_ns);
		p999 = std::min(p999, (uint64_t)p.sum.max_abs_ns);
		printf("  %-24s %-9s %7.0f %7" PRIu64 "%s %7" PRIu64 "%s %10" PRIu64 " %10" PRIu64 " %+8.3f\n", p.name,
		       p.kernel_name, p.sum.max_abs_ns, p50, e50 ? " " : "*", p999, e999 ? " " : "*", p.st->over_1us,
		       p.st->over_10us, p.ppm);
	}
	if (inexact)
		printf("  (*: at most this: the upper edge of the percentile's power-of-two bin)\n");
	printf("\n  what each follows, mean diff, readings, brackets left out:\n");
	for (auto &p : ps)
		printf("    %-24s %s\n      %+.1f ns, %" PRIu64 ", %.3f%%\n", p.name, p.claim, p.sum.mean_ns, p.st->reads,
		       p.sum.wide_share * 100);
	for (auto &p : ps)
		free(p.st);
	return 0;
}
