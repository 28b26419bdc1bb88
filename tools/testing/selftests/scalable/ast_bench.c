// SPDX-License-Identifier: GPL-2.0
/*
 * ast_bench: the bounded-buffer workload of Ohki & Kuno's AST-sync paper
 * (section 4.1): P producer and C consumer threads of one process share
 * one buffer of B slots; the result is the items moved through it per
 * millisecond.  Four implementations of the same buffer:
 *
 *   ast           ast_mutex with the kernel's adaptive hand-off (the
 *                 default unlock), states EMPTY/MID/FULL
 *   ast-handoff   the same, unlocking with AST_MUTEX_HANDOFF: the lock is
 *                 always handed to the waiter (the paper's policy)
 *   ast-compete   the same, unlocking with AST_MUTEX_WAKE_ONLY: the
 *                 waiter is woken and competes, no hand-off
 *   cv-bcast      pthread mutex + one condition variable, broadcast on
 *                 every exit (the paper's "repeated tests")
 *   cv-pair       pthread mutex + not-full/not-empty condition
 *                 variables, signal (the paper's "Cond. vars")
 *   futex-bitset  user-space AST over FUTEX_WAIT_BITSET/FUTEX_WAKE_BITSET:
 *                 no hand-off, wake one waiter whose mask holds the new
 *                 state, a waiter count so exits skip the wake when
 *                 nobody sleeps
 *
 * One RESULT line per (implementation, threads, buffer size, cpus), mode
 * "<impl>-t<threads>-b<size>"; the baselines carry ast_speedup=
 * (ast items/ms over theirs, > 1 when ast is faster).  Every line also
 * carries what the process spent per item during the measurement
 * (getrusage()): context switches (csw_per_item=, voluntary and
 * involuntary), user and system CPU time (usr_us_per_item=,
 * sys_us_per_item=), which tell a convoy (context switches) from
 * spinning (user time) and from kernel work; the baselines also carry
 * ast_cpu_speedup= (their CPU time per item, user and system, over
 * ast's).  When the threads keep every CPU busy, items/ms is the CPUs'
 * time over the CPU time per item, so the two ratios agree, and the
 * per-item times say where the time goes (user-space polling, kernel
 * work); under emulation (TCG) time a host takes from a vCPU is
 * accounted to the guest task that was running, so only the context
 * switches per item are counts that host load cannot inflate.  The
 * process is
 * restricted to the first N CPUs of its affinity mask with
 * sched_setaffinity() for each CPU count.  Each run also checks that
 * every item produced was consumed exactly once, or is still in the
 * buffer, and that every AST entry state matches the buffer.
 *
 * With -l, every line also carries the hand-off latency, as lock
 * benchmarks report it (LiTL): the time from an owner's release of the
 * buffer (just before its unlock) to the next owner's entry (the lock
 * held and the state right for its operation), in microseconds, at the
 * median and the 99th percentile of every entry in the measurements
 * (handoff_p50_us=, handoff_p99_us=).  It reads CLOCK_MONOTONIC twice per
 * item inside the critical section, so it is off by default, and
 * items/ms with -l are not those without.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <linux/futex.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include "../kselftest.h"
#include "ast_mutex.h"
#include "sched_util.h"
#include "sysfs_util.h"
#include "trace_mark.h"

enum { S_EMPTY, S_MID, S_FULL, S_STOP };
enum {
	IMPL_AST, IMPL_AST_HANDOFF, IMPL_AST_COMPETE, IMPL_CV_BCAST,
	IMPL_CV_PAIR, IMPL_FUTEX, NR_IMPLS
};

#define B(s)		(1ULL << (s))
#define MAX_LIST	16
#define L0_FREE		AST_MUTEX_FREE

static const char *const impl_names[NR_IMPLS] = {
	"ast", "ast-handoff", "ast-compete", "cv-bcast", "cv-pair", "futex-bitset",
};

struct counter {
	unsigned long n;
	char pad[64 - sizeof(unsigned long)];
};

/*
 * -l: a latency histogram, 8 buckets per power of two of nanoseconds
 * (12.5% resolution), one per thread so that recording shares no line.
 */
#define LAT_SUB		8
#define LAT_BUCKETS	(64 * LAT_SUB)
struct lat_hist {
	unsigned long long n[LAT_BUCKETS];
};

static unsigned int lat_bucket(unsigned long long ns)
{
	unsigned int e;

	if (ns < 2 * LAT_SUB)
		return ns;
	e = 63 - __builtin_clzll(ns);
	return (e - 2) * LAT_SUB + ((ns >> (e - 3)) & (LAT_SUB - 1));
}

/* The smallest latency of bucket @i, in nanoseconds. */
static unsigned long long lat_floor(unsigned int i)
{
	if (i < 2 * LAT_SUB)
		return i;
	return (unsigned long long)(LAT_SUB + i % LAT_SUB) << (i / LAT_SUB - 1);
}

/* The @q quantile (0 < q < 1) of @h, in microseconds; 0 if empty. */
static double lat_quantile(const struct lat_hist *h, double q)
{
	unsigned long long total = 0, seen = 0;
	unsigned int i;

	for (i = 0; i < LAT_BUCKETS; i++)
		total += h->n[i];
	if (!total)
		return 0;
	for (i = 0; i < LAT_BUCKETS; i++) {
		seen += h->n[i];
		if (seen >= q * total)
			break;
	}
	return lat_floor(i) / 1e3;
}

struct bbuf {
	int size, count, head, tail, impl;
	unsigned long *slot;
	bool stop;
	/* ast */
	struct ast_mutex am;
	/* cv-* */
	pthread_mutex_t mu;
	pthread_cond_t all, notfull, notempty;
	/* futex-bitset: the word and the number of sleepers */
	char pad[64];
	__u32 l0;
	__u32 l0_waiters;
	int errors;
	struct counter *puts, *gets;
	/*
	 * Set by stop_all() before it competes for the lock: the workers stop
	 * entering, so that it gets the lock even where an implementation
	 * lets it starve (futex-bitset at 1 CPU and 1000 threads did for
	 * minutes).  Padded to a cache line of its own, read-only until then.
	 */
	char pad2[64];
	int stopping;
	/*
	 * The start gate: workers wait on it until every thread of the run
	 * exists, so that creating 1000 threads does not compete with the
	 * first ones' traffic.
	 */
	char pad4[64];
	__u32 go;
	char pad3[64];
	/* -l: written by the owner before it unlocks, read by the next one */
	__u64 released_ns;
	int measuring;
	struct lat_hist *hist;	/* one per thread */
};

/* The kernel's AST-sync event counts (kernel/locking/ast_sync.c). */
#define AST_STATS	"/sys/kernel/debug/ast_sync/stats"
enum kstat {
	K_QUEUED, K_LOST, K_UNLOCK, K_HANDOFF, K_WAKE, K_SCANNED, K_HEIR,
	K_POLL_NS, NR_KSTATS
};

static const char *const kstat_names[NR_KSTATS] = {
	[K_QUEUED] = "queued", [K_LOST] = "lost", [K_UNLOCK] = "unlock",
	[K_HANDOFF] = "handoff", [K_WAKE] = "wake", [K_SCANNED] = "scanned",
	[K_HEIR] = "heir", [K_POLL_NS] = "poll_ns",
};

/*
 * Per-item costs of a run, from getrusage() over the measurement, and
 * (kstats: AST_STATS was read) the growth of the kernel's counts per
 * item, except k[K_SCANNED], per unlock call, and k[K_POLL_NS], in us.
 */
struct cost {
	double csw, usr_us, sys_us;
	bool kstats;
	double k[NR_KSTATS];
};

/* -v: one line per run, with the rates and the kernel's counts. */
static bool verbose;
static const char *const run_fmt[] = {
	"ast_bench: %s-t%d-b%d run: %.1f items/ms; per item: csw %.3f, usr %.3f us, sys %.3f us, queued %.3f, lost %.3f, unlock %.3f, handoff %.3f, wake %.3f, heir %.3f, polled %.3f us; chain entries per unlock %.1f\n",
};

/* -l: measure the hand-off latency. */
static bool latency;

/* Lock held, state right: the latency since the previous owner's release. */
static void lat_enter(struct bbuf *b, int thread)
{
	unsigned long long now;

	if (!latency || !b->released_ns ||
	    !__atomic_load_n(&b->measuring, __ATOMIC_RELAXED))
		return;
	now = now_ns();
	if (now > b->released_ns)
		b->hist[thread].n[lat_bucket(now - b->released_ns)]++;
}

/* Lock held, about to release it. */
static void lat_exit(struct bbuf *b)
{
	if (latency)
		b->released_ns = now_ns();
}

/* The counts of AST_STATS, 0 for one it lacks; false without the file. */
static bool read_kstats(long *v)
{
	memset(v, 0, NR_KSTATS * sizeof(*v));
	return sysfs_read_stats(AST_STATS, kstat_names, NR_KSTATS, v) >= 0;
}

static long warmup_ms = 1000, measure_ms = 5000, runs = 3;
static int threads[MAX_LIST], nr_threads;
static int sizes[MAX_LIST], nr_sizes;
static int cpus[MAX_LIST], nr_cpus;
static int impl_mask = (1 << NR_IMPLS) - 1;
static int cpu_list[1024], nproc;

static int parse_list(const char *s, int *out, int max, int lo, int hi)
{
	char *copy = strdup(s), *tok, *save = NULL;
	int n = 0;
	long v;

	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		char *end;

		v = strtol(tok, &end, 10);
		if (*end || v < lo || v > hi || n == max) {
			free(copy);
			return -1;
		}
		out[n++] = v;
	}
	free(copy);
	return n;
}

/* ------------------------------------------------- futex-bitset (level 0) */

static long futex(__u32 *uaddr, int op, __u32 val, __u32 bitset)
{
	return syscall(SYS_futex, uaddr, op, val, NULL, NULL, bitset);
}

static int l0_enter(struct bbuf *b, __u32 mask)
{
	__u32 tid = ast_gettid(), v;

	for (;;) {
		v = __atomic_load_n(&b->l0, __ATOMIC_ACQUIRE);
		if ((v & L0_FREE) && (mask & (1U << (v & 31)))) {
			if (__atomic_compare_exchange_n(&b->l0, &v, tid, 0,
							__ATOMIC_ACQUIRE,
							__ATOMIC_RELAXED))
				return v & 31;
			continue;
		}
		__atomic_fetch_add(&b->l0_waiters, 1, __ATOMIC_SEQ_CST);
		futex(&b->l0, FUTEX_WAIT_BITSET_PRIVATE, v, mask);
		__atomic_fetch_sub(&b->l0_waiters, 1, __ATOMIC_SEQ_CST);
	}
}

static void l0_exit(struct bbuf *b, unsigned int s)
{
	__atomic_store_n(&b->l0, L0_FREE | s, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&b->l0_waiters, __ATOMIC_SEQ_CST))
		futex(&b->l0, FUTEX_WAKE_BITSET_PRIVATE, 1, 1U << s);
}

/* ------------------------------------------------------- the buffer ops */

static void check_state(struct bbuf *b, int s)
{
	bool ok;

	switch (s) {
	case S_EMPTY:
		ok = b->count == 0;
		break;
	case S_FULL:
		ok = b->count == b->size;
		break;
	case S_MID:
		ok = b->count > 0 && b->count < b->size;
		break;
	default:
		ok = b->stop;
	}
	if (!ok)
		__atomic_fetch_add(&b->errors, 1, __ATOMIC_RELAXED);
}

static unsigned int new_state(struct bbuf *b)
{
	if (!b->count)
		return S_EMPTY;
	return b->count == b->size ? S_FULL : S_MID;
}

static bool ast_like_enter(struct bbuf *b, __u64 mask)
{
	int s;

	if (b->impl != IMPL_FUTEX)
		s = ast_mutex_lock(&b->am, mask | B(S_STOP));
	else
		s = l0_enter(b, mask | B(S_STOP));
	check_state(b, s);
	if (s != S_STOP)
		return true;
	if (b->impl != IMPL_FUTEX)
		ast_mutex_unlock(&b->am, S_STOP);
	else
		l0_exit(b, S_STOP);
	return false;
}

static void ast_like_exit(struct bbuf *b)
{
	if (b->impl != IMPL_FUTEX)
		ast_mutex_unlock(&b->am, new_state(b));
	else
		l0_exit(b, new_state(b));
}

/*
 * Set once the measurement is over: a worker enters no more, and one
 * that enters or wakes from now on leaves at once without an operation,
 * so that the stop drains the queued threads instead of letting each do
 * one more operation, competing with the stopper for the lock.
 */
static bool stopping(struct bbuf *b)
{
	return __atomic_load_n(&b->stopping, __ATOMIC_RELAXED);
}

/* Every worker waits here until its run's threads all exist. */
static void wait_for_go(struct bbuf *b)
{
	while (!__atomic_load_n(&b->go, __ATOMIC_ACQUIRE))
		syscall(SYS_futex, &b->go, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
}

static bool put(struct bbuf *b, int thread, unsigned long item)
{
	if (stopping(b))
		return false;
	switch (b->impl) {
	case IMPL_AST:
	case IMPL_AST_HANDOFF:
	case IMPL_AST_COMPETE:
	case IMPL_FUTEX:
		if (!ast_like_enter(b, B(S_EMPTY) | B(S_MID)))
			return false;
		if (stopping(b)) {
			ast_like_exit(b);
			return false;
		}
		break;
	default:
		pthread_mutex_lock(&b->mu);
		while (b->count == b->size && !b->stop && !stopping(b))
			pthread_cond_wait(b->impl == IMPL_CV_BCAST ? &b->all :
					  &b->notfull, &b->mu);
		if (b->stop || stopping(b)) {
			pthread_mutex_unlock(&b->mu);
			return false;
		}
	}
	lat_enter(b, thread);
	b->slot[b->tail] = item;
	b->tail = (b->tail + 1) % b->size;
	b->count++;
	lat_exit(b);
	switch (b->impl) {
	case IMPL_AST:
	case IMPL_AST_HANDOFF:
	case IMPL_AST_COMPETE:
	case IMPL_FUTEX:
		ast_like_exit(b);
		break;
	case IMPL_CV_BCAST:
		pthread_cond_broadcast(&b->all);
		pthread_mutex_unlock(&b->mu);
		break;
	default:
		pthread_cond_signal(&b->notempty);
		pthread_mutex_unlock(&b->mu);
	}
	return true;
}

static bool get(struct bbuf *b, int thread, unsigned long *item)
{
	if (stopping(b))
		return false;
	switch (b->impl) {
	case IMPL_AST:
	case IMPL_AST_HANDOFF:
	case IMPL_AST_COMPETE:
	case IMPL_FUTEX:
		if (!ast_like_enter(b, B(S_FULL) | B(S_MID)))
			return false;
		if (stopping(b)) {
			ast_like_exit(b);
			return false;
		}
		break;
	default:
		pthread_mutex_lock(&b->mu);
		while (!b->count && !b->stop && !stopping(b))
			pthread_cond_wait(b->impl == IMPL_CV_BCAST ? &b->all :
					  &b->notempty, &b->mu);
		if (b->stop || stopping(b)) {
			pthread_mutex_unlock(&b->mu);
			return false;
		}
	}
	lat_enter(b, thread);
	*item = b->slot[b->head];
	b->head = (b->head + 1) % b->size;
	b->count--;
	lat_exit(b);
	switch (b->impl) {
	case IMPL_AST:
	case IMPL_AST_HANDOFF:
	case IMPL_AST_COMPETE:
	case IMPL_FUTEX:
		ast_like_exit(b);
		break;
	case IMPL_CV_BCAST:
		pthread_cond_broadcast(&b->all);
		pthread_mutex_unlock(&b->mu);
		break;
	default:
		pthread_cond_signal(&b->notfull);
		pthread_mutex_unlock(&b->mu);
	}
	return true;
}

struct targ {
	struct bbuf *b;
	int idx;	/* among the producers, or the consumers */
	int thread;	/* among all threads */
};

static void *producer(void *arg)
{
	struct targ *t = arg;
	unsigned long seq = 0;

	wait_for_go(t->b);
	while (put(t->b, t->thread, ((unsigned long)t->idx << 32) | seq++))
		__atomic_store_n(&t->b->puts[t->idx].n, seq, __ATOMIC_RELAXED);
	return NULL;
}

static void *consumer(void *arg)
{
	struct targ *t = arg;
	unsigned long item, n = 0;

	wait_for_go(t->b);
	while (get(t->b, t->thread, &item))
		__atomic_store_n(&t->b->gets[t->idx].n, ++n, __ATOMIC_RELAXED);
	return NULL;
}

static unsigned long sum(struct counter *c, int n)
{
	unsigned long s = 0;
	int i;

	for (i = 0; i < n; i++)
		s += __atomic_load_n(&c[i].n, __ATOMIC_RELAXED);
	return s;
}

static void stop_all(struct bbuf *b)
{
	__atomic_store_n(&b->stopping, 1, __ATOMIC_RELAXED);
	switch (b->impl) {
	case IMPL_AST:
	case IMPL_AST_HANDOFF:
	case IMPL_AST_COMPETE:
		ast_mutex_lock(&b->am, ~0ULL);
		b->stop = true;
		ast_mutex_unlock(&b->am, S_STOP);
		break;
	case IMPL_FUTEX:
		l0_enter(b, ~0U);
		b->stop = true;
		l0_exit(b, S_STOP);
		break;
	default:
		pthread_mutex_lock(&b->mu);
		b->stop = true;
		pthread_cond_broadcast(&b->all);
		pthread_cond_broadcast(&b->notfull);
		pthread_cond_broadcast(&b->notempty);
		pthread_mutex_unlock(&b->mu);
	}
}

/*
 * One run; returns items/ms and fills @cost, or -1 on an error.  With -l,
 * adds the hand-off latencies of the measurement to @lat.
 */
static double run_once(int impl, int nthreads, int size, struct cost *cost,
		       struct lat_hist *lat)
{
	struct rusage ru0, ru1;
	int np = nthreads / 2, nc = nthreads - np, i, k, ret = 0;
	long k0[NR_KSTATS], k1[NR_KSTATS];
	unsigned long g0, g1, n, puts, gets;
	bool is_ast = impl != IMPL_CV_BCAST && impl != IMPL_CV_PAIR &&
		      impl != IMPL_FUTEX;
	pthread_t *th = calloc(nthreads, sizeof(*th));
	struct targ *ta = calloc(nthreads, sizeof(*ta));
	struct bbuf *b = aligned_alloc(64, (sizeof(*b) + 63) & ~63UL);
	pthread_attr_t attr;
	double t0, t1;

	memset(cost, 0, sizeof(*cost));
	if (!th || !ta || !b)
		return -1;
	memset(b, 0, sizeof(*b));
	b->size = size;
	b->impl = impl;
	b->slot = calloc(size, sizeof(*b->slot));
	if (latency) {
		b->hist = calloc(nthreads, sizeof(*b->hist));
		if (!b->hist)
			return -1;
	}
	b->puts = aligned_alloc(64, np * sizeof(struct counter));
	b->gets = aligned_alloc(64, nc * sizeof(struct counter));
	if (!b->slot || !b->puts || !b->gets)
		return -1;
	memset(b->puts, 0, np * sizeof(struct counter));
	memset(b->gets, 0, nc * sizeof(struct counter));
	ast_mutex_init(&b->am, S_EMPTY, AST_MUTEX_PRIVATE |
		       (impl == IMPL_AST_COMPETE ? AST_MUTEX_COMPETE : 0) |
		       (impl == IMPL_AST_HANDOFF ? AST_MUTEX_STRICT : 0));
	pthread_mutex_init(&b->mu, NULL);
	pthread_cond_init(&b->all, NULL);
	pthread_cond_init(&b->notfull, NULL);
	pthread_cond_init(&b->notempty, NULL);
	b->l0 = L0_FREE | S_EMPTY;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (i = 0; i < nthreads; i++) {
		ta[i].b = b;
		ta[i].idx = i < np ? i : i - np;
		ta[i].thread = i;
		if (pthread_create(&th[i], &attr, i < np ? producer : consumer,
				   &ta[i])) {
			ksft_print_msg("pthread_create: %s\n", strerror(errno));
			nthreads = i;
			ret = -1;
			break;
		}
	}
	__atomic_store_n(&b->go, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &b->go, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
	if (!ret) {
		sleep_ms(warmup_ms);
		getrusage(RUSAGE_SELF, &ru0);
		trace_window_start();
		cost->kstats = is_ast && read_kstats(k0);
		g0 = sum(b->gets, nc);
		t0 = now_ns() / 1e6;
		__atomic_store_n(&b->measuring, 1, __ATOMIC_RELAXED);
		sleep_ms(measure_ms);
		__atomic_store_n(&b->measuring, 0, __ATOMIC_RELAXED);
		g1 = sum(b->gets, nc);
		t1 = now_ns() / 1e6;
		cost->kstats = cost->kstats && read_kstats(k1);
		trace_window_stop();
		if (trace_enabled()) {
			char mode[64];
			cpu_set_t set;

			snprintf(mode, sizeof(mode), "%s-t%d-b%d",
				 impl_names[impl], nthreads, size);
			sched_getaffinity(0, sizeof(set), &set);
			trace_window_report("ast_bench", mode, CPU_COUNT(&set),
					    g1 > g0 ? g1 - g0 : 0, g1 > g0);
		}
		getrusage(RUSAGE_SELF, &ru1);
		n = g1 > g0 ? g1 - g0 : 1;
		cost->csw = (double)(ru1.ru_nvcsw + ru1.ru_nivcsw -
				     ru0.ru_nvcsw - ru0.ru_nivcsw) / n;
		cost->usr_us = (tv_us(&ru1.ru_utime) - tv_us(&ru0.ru_utime)) / n;
		cost->sys_us = (tv_us(&ru1.ru_stime) - tv_us(&ru0.ru_stime)) / n;
		if (cost->kstats) {
			for (i = 0; i < NR_KSTATS; i++)
				cost->k[i] = (double)(k1[i] - k0[i]) / n;
			/* Chain entries walked per unlock, not per item. */
			cost->k[K_SCANNED] = k1[K_UNLOCK] > k0[K_UNLOCK] ?
				(double)(k1[K_SCANNED] - k0[K_SCANNED]) /
				(k1[K_UNLOCK] - k0[K_UNLOCK]) : 0;
			cost->k[K_POLL_NS] /= 1000;
		}
		if (verbose)
			ksft_print_msg(run_fmt[0], impl_names[impl], nthreads, size,
				       (g1 - g0) / (t1 - t0), cost->csw,
				       cost->usr_us, cost->sys_us,
				       cost->k[K_QUEUED], cost->k[K_LOST],
				       cost->k[K_UNLOCK], cost->k[K_HANDOFF],
				       cost->k[K_WAKE], cost->k[K_HEIR],
				       cost->k[K_POLL_NS], cost->k[K_SCANNED]);
	}
	stop_all(b);
	for (i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);

	puts = sum(b->puts, np);
	gets = sum(b->gets, nc);
	if (!ret && (puts - gets != (unsigned long)b->count || b->errors)) {
		ksft_print_msg("%s: %lu puts, %lu gets, %d left, %d state errors\n",
			       impl_names[impl], puts, gets, b->count,
			       b->errors);
		ret = -1;
	}
	for (i = 0; b->hist && !ret && i < nthreads; i++)
		for (k = 0; k < LAT_BUCKETS; k++)
			lat->n[k] += b->hist[i].n[k];
	pthread_attr_destroy(&attr);
	free(b->hist);
	free(b->slot);
	free(b->puts);
	free(b->gets);
	free(b);
	free(th);
	free(ta);
	return ret ? -1 : (g1 - g0) / (t1 - t0);
}

/* The RESULT line: mode=<impl>-t<threads>-b<size>, then extra fields. */
static const char *const result_fmt[] = {
	"RESULT bench=ast_bench mode=%s-t%d-b%d cpus=%d ops_per_ms=%.3f runs=%d stddev=%.3f impl=%s threads=%d buffer=%d csw_per_item=%.3f usr_us_per_item=%.3f sys_us_per_item=%.3f%s%s\n",
};

/* Every implementation on one (threads, size, cpus): RESULT and TAP lines. */
static void run_tuple(int nthreads, int size, int ncpus)
{
	double rate[NR_IMPLS] = { 0 }, cpu[NR_IMPLS] = { 0 };
	double sum_r, sum_sq, r, v, sd;
	struct lat_hist *lat = calloc(1, sizeof(*lat));
	struct cost c, tot;
	int impl, k, done, nk, i;
	char extra[320];

	for (impl = 0; impl < NR_IMPLS; impl++) {
		if (!(impl_mask & (1 << impl)))
			continue;
		sum_r = 0;
		sum_sq = 0;
		memset(&tot, 0, sizeof(tot));
		nk = 0;
		if (lat)
			memset(lat, 0, sizeof(*lat));
		for (k = 0, done = 0; k < runs; k++) {
			r = lat ? run_once(impl, nthreads, size, &c, lat) : -1;
			if (r < 0)
				break;
			sum_r += r;
			sum_sq += r * r;
			tot.csw += c.csw;
			tot.usr_us += c.usr_us;
			tot.sys_us += c.sys_us;
			if (c.kstats) {
				for (i = 0; i < NR_KSTATS; i++)
					tot.k[i] += c.k[i];
				nk++;
			}
			done++;
		}
		rate[impl] = done ? sum_r / done : 0;
		v = done > 1 ? (sum_sq - done * rate[impl] * rate[impl]) /
			       (done - 1) : 0;
		sd = v > 0 ? sqrt(v) : 0;
		cpu[impl] = done ? (tot.usr_us + tot.sys_us) / done : 0;
		extra[0] = 0;
		if (impl != IMPL_AST && (impl_mask & 1) && rate[impl] > 0)
			snprintf(extra, sizeof(extra), " ast_speedup=%.3f",
				 rate[IMPL_AST] / rate[impl]);
		if (impl != IMPL_AST && (impl_mask & 1) && cpu[IMPL_AST] > 0)
			snprintf(extra + strlen(extra),
				 sizeof(extra) - strlen(extra),
				 " ast_cpu_speedup=%.3f", cpu[impl] / cpu[IMPL_AST]);
		if (nk)
			snprintf(extra + strlen(extra),
				 sizeof(extra) - strlen(extra),
				 " lost_per_item=%.3f handoff_per_item=%.3f wake_per_item=%.3f heir_per_item=%.4f poll_us_per_item=%.3f scan_per_unlock=%.1f",
				 tot.k[K_LOST] / nk, tot.k[K_HANDOFF] / nk,
				 tot.k[K_WAKE] / nk, tot.k[K_HEIR] / nk,
				 tot.k[K_POLL_NS] / nk, tot.k[K_SCANNED] / nk);
		if (latency && lat)
			snprintf(extra + strlen(extra),
				 sizeof(extra) - strlen(extra),
				 " handoff_p50_us=%.2f handoff_p99_us=%.2f",
				 lat_quantile(lat, 0.5), lat_quantile(lat, 0.99));
		ksft_print_msg(result_fmt[0], impl_names[impl], nthreads, size,
			       ncpus, rate[impl], done, sd, impl_names[impl],
			       nthreads, size, done ? tot.csw / done : 0,
			       done ? tot.usr_us / done : 0,
			       done ? tot.sys_us / done : 0, extra,
			       done == runs ? "" : " status=fail");
		ksft_test_result(done == runs, "ast_bench %s-t%d-b%d cpus=%d\n",
				 impl_names[impl], nthreads, size, ncpus);
	}
	free(lat);
}

static int restrict_cpus(int n)
{
	cpu_set_t set;
	int i;

	CPU_ZERO(&set);
	for (i = 0; i < n; i++)
		CPU_SET(cpu_list[i], &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

static void print_usage(FILE *f)
{
	fprintf(f,
		"usage: ast_bench [-w ms] [-m ms] [-r runs] [-q] [-c cpus] [-t threads] [-b sizes] [-i impls] [-v] [-l]\n"
		"  -w/-m/-r  warm-up, measurement (ms) and runs (default 1000, 5000, 3)\n"
		"  -q        quick: -w 100 -m 400 -r 2\n"
		"  -c LIST   CPU counts (default 1, 2, 4, ... and N)\n"
		"  -t LIST   thread counts, half producers (default 10,100,1000; quick 10,100;\n"
		"            with -m 250 or less 10,100)\n"
		"  -b LIST   buffer sizes (default 1,10,100; with -m 250 or less 1,16)\n"
		"  -i LIST   implementations: ast,ast-handoff,ast-compete,cv-bcast,cv-pair,\n"
		"            futex-bitset\n"
		"  -v        one line per run, with the kernel's counts from\n"
		"            " AST_STATS "\n"
		"  -l        hand-off latency, release to the next owner's entry:\n"
		"            handoff_p50_us= and handoff_p99_us= (slows every\n"
		"            implementation: two clock reads per item)\n");
}

static int parse_impls(const char *s)
{
	char *copy = strdup(s), *tok, *save = NULL;
	int i, mask = 0;

	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < NR_IMPLS; i++)
			if (!strcmp(tok, impl_names[i]))
				break;
		if (i == NR_IMPLS) {
			free(copy);
			return -1;
		}
		mask |= 1 << i;
	}
	free(copy);
	return mask;
}

int main(int argc, char **argv)
{
	const char *opt_t = NULL, *opt_b = NULL, *opt_c = NULL;
	__u32 probe = AST_MUTEX_WORD(0);
	int opt, ci, ti, si, k, done, quick = 0;

	while ((opt = getopt(argc, argv, "w:m:r:qc:t:b:i:vlh")) != -1) {
		switch (opt) {
		case 'w':
			warmup_ms = atol(optarg);
			break;
		case 'm':
			measure_ms = atol(optarg);
			break;
		case 'r':
			runs = atol(optarg);
			break;
		case 'v':
			verbose = true;
			break;
		case 'l':
			latency = true;
			break;
		case 'q':
			warmup_ms = 100;
			measure_ms = 400;
			runs = 2;
			quick = 1;
			break;
		case 'c':
			opt_c = optarg;
			break;
		case 't':
			opt_t = optarg;
			break;
		case 'b':
			opt_b = optarg;
			break;
		case 'i':
			impl_mask = parse_impls(optarg);
			if (impl_mask <= 0) {
				print_usage(stderr);
				return KSFT_FAIL;
			}
			break;
		case 'h':
			print_usage(stdout);
			return KSFT_PASS;
		default:
			print_usage(stderr);
			return KSFT_FAIL;
		}
	}
	if (warmup_ms < 0 || measure_ms < 1 || runs < 1) {
		print_usage(stderr);
		return KSFT_FAIL;
	}
	if (!opt_t)
		opt_t = quick || measure_ms <= 250 ? "10,100" : "10,100,1000";
	if (!opt_b)
		opt_b = measure_ms <= 250 ? "1,16" : "1,10,100";
	nr_threads = parse_list(opt_t, threads, MAX_LIST, 2, 4096);
	nr_sizes = parse_list(opt_b, sizes, MAX_LIST, 1, 1 << 20);

	nproc = affinity_cpus(cpu_list, ARRAY_SIZE(cpu_list));
	if (nproc < 0)
		return KSFT_FAIL;
	if (opt_c) {
		nr_cpus = parse_list(opt_c, cpus, MAX_LIST, 1, 1024);
	} else {
		/* 1, 2, 4, ... and all of them: the sweep stays short. */
		for (k = 1; k < nproc && nr_cpus < MAX_LIST - 1; k *= 2)
			cpus[nr_cpus++] = k;
		cpus[nr_cpus++] = nproc;
	}
	if (nr_threads <= 0 || nr_sizes <= 0 || nr_cpus <= 0) {
		print_usage(stderr);
		return KSFT_FAIL;
	}

	ksft_print_header();
	/* The syscalls exist if unlocking a free word is refused. */
	if ((impl_mask & (1 << IMPL_AST)) &&
	    (syscall(__NR_ast_mutex_unlock, &probe, 0, AST_MUTEX_PRIVATE) != -1 ||
	     errno != EPERM))
		ksft_exit_skip("ast_mutex syscalls not supported\n");
	for (k = 0, done = 0; k < nr_cpus; k++)
		done += cpus[k] <= nproc;
	ksft_set_plan(done * nr_threads * nr_sizes *
		      __builtin_popcount(impl_mask));
	ksft_print_msg("ast_bench: warmup %ld ms, measure %ld ms, %ld runs, %d cpus online\n",
		       warmup_ms, measure_ms, runs, nproc);
	/* The plan line of bench.c, which the host checks its schedule by. */
	ksft_print_msg("ast_bench: %d modes x %d counts, about %.1f s of windows\n",
		       nr_threads * nr_sizes * __builtin_popcount(impl_mask), done,
		       (double)nr_threads * nr_sizes * __builtin_popcount(impl_mask) *
		       done * runs * (warmup_ms + measure_ms) / 1000);

	for (ci = 0; ci < nr_cpus; ci++) {
		if (cpus[ci] > nproc) {
			ksft_print_msg("ast_bench: skipping cpus=%d (only %d)\n",
				       cpus[ci], nproc);
			continue;
		}
		if (restrict_cpus(cpus[ci]))
			ksft_exit_fail_msg("sched_setaffinity: %s\n",
					   strerror(errno));
		for (ti = 0; ti < nr_threads; ti++)
			for (si = 0; si < nr_sizes; si++)
				run_tuple(threads[ti], sizes[si], cpus[ci]);
	}
	restrict_cpus(nproc);
	ksft_finished();
}
