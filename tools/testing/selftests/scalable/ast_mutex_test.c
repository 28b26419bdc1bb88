// SPDX-License-Identifier: GPL-2.0
/*
 * Functional tests of the AST-sync ast_mutex_lock()/ast_mutex_unlock()
 * system calls and of the ast_mutex.h user-space library: every error
 * path (and that an error leaves the word alone), guarded entry, direct
 * hand-off only to a waiter whose entry set holds the new state and in
 * FIFO order, the adaptive unlock's compete wake-ups and its
 * anti-starvation bound, timeouts on both clocks, transparent restart on signals,
 * process-shared use across fork(), robust owner death, a bounded-buffer
 * stress with hundreds of threads, and an argument fuzz.
 *
 * AST_STRESS_ITEMS (environment) sets the items per producer of the
 * stress test (default 40), AST_FUZZ_ITERS the fuzz iterations (default
 * 20000).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "../kselftest_harness.h"
#include "ast_mutex.h"
#include "sched_util.h"
#include "sysfs_util.h"

#define ALL_STATES	(~0ULL)
#define BIT(s)		AST_MUTEX_STATE_BIT(s)

static __u32 load(__u32 *w)
{
	return __atomic_load_n(w, __ATOMIC_SEQ_CST);
}

/* The kernel has the syscalls if unlocking a free word is refused. */
static bool ast_supported(void)
{
	__u32 w = AST_MUTEX_WORD(0);

	return syscall(__NR_ast_mutex_unlock, &w, 0, AST_MUTEX_PRIVATE) < 0 &&
	       errno == EPERM;
}

static void abs_in(struct timespec *ts, clockid_t clk, long ms)
{
	abs_time_ns(ts, clk, ms * 1000000LL);
}

static long ms_since(const struct timespec *t0, clockid_t clk)
{
	struct timespec t;

	clock_gettime(clk, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 +
	       (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/*
 * Wait up to about @ms milliseconds until thread @tid of process @pid
 * sleeps in syscall @nr (from /proc: the syscall file names it and the
 * thread's state is S).
 */
static int wait_task_in_syscall_ms(pid_t pid, pid_t tid, long nr, int ms)
{
	char path[64], buf[128];
	ssize_t n;
	int i;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", pid, tid);
	for (i = 0; i < ms; i++) {
		n = sysfs_read_file(path, buf, sizeof(buf));
		if (n < 0)
			return -1;	/* no such task */
		/* In the syscall; is it asleep? */
		if (n > 0 && atol(buf) == nr && buf[0] != '-' &&
		    proc_task_state(pid, tid) == 'S')
			return 0;
		usleep(1000);
	}
	return -1;
}

/* The same, for up to 20 s. */
static int wait_task_in_syscall(pid_t pid, pid_t tid, long nr)
{
	return wait_task_in_syscall_ms(pid, tid, nr, 20000);
}

/* Wait until thread @tid of this process sleeps in syscall @nr. */
static int wait_in_syscall(pid_t tid, long nr)
{
	return wait_task_in_syscall(getpid(), tid, nr);
}

/* Pin the calling thread to one CPU of its affinity mask; -1 if none. */
static int pin_to_one_cpu(cpu_set_t *old, int which)
{
	int k, seen = 0;

	if (sched_getaffinity(0, sizeof(*old), old))
		return -1;
	for (k = 0; k < CPU_SETSIZE; k++) {
		if (!CPU_ISSET(k, old))
			continue;
		if (seen++ == which)
			break;
	}
	if (k == CPU_SETSIZE)
		return -1;
	return pin_cpu(k) ? -1 : k;
}

static int set_fifo(int prio)
{
	struct sched_param sp = { .sched_priority = prio };

	return sched_setscheduler(0, prio ? SCHED_FIFO : SCHED_OTHER, &sp);
}

/* ---------------------------------------------------------------- errors */

TEST(einval)
{
	__u32 w[2] = { AST_MUTEX_WORD(0), AST_MUTEX_WORD(0) };
	struct timespec ts = { 0, 0 };

	if (!ast_supported())
		SKIP(return, "ast_mutex syscalls not supported");
	EXPECT_EQ(-EINVAL, ast_sys_lock(&w[0], 0, 0, NULL, 0));
	EXPECT_EQ(-EINVAL, ast_sys_lock(&w[0], 1, 2, NULL, 0));
	EXPECT_EQ(-EINVAL, ast_sys_lock(&w[0], 1, 0x80000000, NULL, 0));
	EXPECT_EQ(-EINVAL, ast_sys_lock((__u32 *)((char *)w + 1), 1, 0,
					NULL, 0));
	EXPECT_EQ(-EINVAL, ast_sys_lock((__u32 *)((char *)w + 2), 1,
					AST_MUTEX_PRIVATE, NULL, 0));
	/* Bad clock, bad timespec. */
	EXPECT_EQ(-EINVAL, ast_sys_lock(&w[0], 1, 0, &ts, CLOCK_BOOTTIME));
	EXPECT_EQ(-EINVAL, ast_sys_lock(&w[0], 1, 0, &ts, 12345));
	ts.tv_nsec = 1000000000L;
	EXPECT_EQ(-EINVAL, ast_sys_lock(&w[0], 1, 0, &ts, CLOCK_MONOTONIC));
	ts.tv_nsec = -1;
	EXPECT_EQ(-EINVAL, ast_sys_lock(&w[0], 1, 0, &ts, CLOCK_REALTIME));
	/* Not an AST word: uninitialised, or stray bits beside the state. */
	w[1] = 0;
	EXPECT_EQ(-EINVAL, ast_sys_lock(&w[1], ALL_STATES, 0, NULL, 0));
	EXPECT_EQ(0U, w[1]);
	w[1] = AST_MUTEX_FREE | 0x1000;
	EXPECT_EQ(-EINVAL, ast_sys_lock(&w[1], ALL_STATES, 0, NULL, 0));
	EXPECT_EQ(AST_MUTEX_FREE | 0x1000, w[1]);

	EXPECT_EQ(-EINVAL, ast_sys_unlock(&w[0], 64, 0));
	EXPECT_EQ(-EINVAL, ast_sys_unlock(&w[0], ~0U, 0));
	EXPECT_EQ(-EINVAL, ast_sys_unlock(&w[0], 0, 8));
	/* One unlock policy at most. */
	EXPECT_EQ(-EINVAL, ast_sys_unlock(&w[0], 0, AST_MUTEX_HANDOFF |
					  AST_MUTEX_WAKE_ONLY));
	EXPECT_EQ(-EINVAL, ast_sys_unlock((__u32 *)((char *)w + 3), 0, 0));
	EXPECT_EQ(AST_MUTEX_WORD(0), w[0]);
}

TEST(efault)
{
	long pg = sysconf(_SC_PAGESIZE);
	struct timespec ts;
	__u32 w = AST_MUTEX_WORD(1);
	char *map, *ro;

	if (!ast_supported())
		SKIP(return, "ast_mutex syscalls not supported");
	map = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, map);
	ro = map + pg;
	*(__u32 *)ro = AST_MUTEX_WORD(1);
	ASSERT_EQ(0, munmap(map, pg));
	ASSERT_EQ(0, mprotect(ro, pg, PROT_READ));

	EXPECT_EQ(-EFAULT, ast_sys_lock(NULL, 1, 0, NULL, 0));
	EXPECT_EQ(-EFAULT, ast_sys_lock((__u32 *)map, 1, 0, NULL, 0));
	EXPECT_EQ(-EFAULT, ast_sys_lock((__u32 *)map, 1,
					AST_MUTEX_PRIVATE, NULL, 0));
	EXPECT_EQ(-EFAULT, ast_sys_unlock((__u32 *)map, 0, 0));
	EXPECT_EQ(-EFAULT, ast_sys_unlock((__u32 *)map, 0,
					  AST_MUTEX_PRIVATE));
	/* Read-only word: entering would write it. */
	EXPECT_EQ(-EFAULT, ast_sys_lock((__u32 *)ro, 2, 0, NULL, 0));
	EXPECT_EQ(-EFAULT, ast_sys_lock((__u32 *)ro, 2, AST_MUTEX_PRIVATE,
					NULL, 0));
	EXPECT_EQ(AST_MUTEX_WORD(1), *(__u32 *)ro);
	/* Kernel address. */
	EXPECT_EQ(-EFAULT, ast_sys_lock((__u32 *)-4096L, 1,
					AST_MUTEX_PRIVATE, NULL, 0));
	/* Bad timeout pointer. */
	EXPECT_EQ(-EFAULT, ast_sys_lock(&w, 2, 0, (struct timespec *)map,
					CLOCK_MONOTONIC));
	EXPECT_EQ(AST_MUTEX_WORD(1), w);
	abs_in(&ts, CLOCK_MONOTONIC, 0);
	EXPECT_EQ(1, ast_sys_lock(&w, 2, 0, &ts, CLOCK_MONOTONIC));
	munmap(ro, pg);
}

TEST(eperm_edeadlk)
{
	__u32 w = AST_MUTEX_WORD(3);
	__u32 tid = syscall(SYS_gettid);

	if (!ast_supported())
		SKIP(return, "ast_mutex syscalls not supported");
	/* Unlock of a free word, or of one another task owns. */
	EXPECT_EQ(-EPERM, ast_sys_unlock(&w, 1, AST_MUTEX_PRIVATE));
	EXPECT_EQ(AST_MUTEX_WORD(3), w);
	w = tid + 1;
	EXPECT_EQ(-EPERM, ast_sys_unlock(&w, 1, AST_MUTEX_PRIVATE));
	EXPECT_EQ(tid + 1, w);
	w = (tid + 1) | AST_MUTEX_WAITERS;
	EXPECT_EQ(-EPERM, ast_sys_unlock(&w, 1, 0));
	EXPECT_EQ((tid + 1) | AST_MUTEX_WAITERS, w);

	w = AST_MUTEX_WORD(3);
	EXPECT_EQ(3, ast_sys_lock(&w, BIT(3), AST_MUTEX_PRIVATE, NULL, 0));
	EXPECT_EQ(tid, w);
	EXPECT_EQ(-EDEADLK, ast_sys_lock(&w, ALL_STATES, AST_MUTEX_PRIVATE,
					 NULL, 0));
	EXPECT_EQ(tid, w);
	EXPECT_EQ(0, ast_sys_unlock(&w, 7, AST_MUTEX_PRIVATE));
	EXPECT_EQ(AST_MUTEX_WORD(7), w);
	EXPECT_EQ(-EPERM, ast_sys_unlock(&w, 7, AST_MUTEX_PRIVATE));
}

/* -------------------------------------------------------- basic semantics */

TEST(guarded_entry_64_states)
{
	struct ast_mutex m;
	int s;

	if (!ast_supported())
		SKIP(return, "ast_mutex syscalls not supported");
	ASSERT_EQ(0, ast_mutex_init(&m, 5, AST_MUTEX_PRIVATE));
	EXPECT_EQ(-EINVAL, ast_mutex_init(&m, 64, 0));
	ASSERT_EQ(0, ast_mutex_init(&m, 5, AST_MUTEX_PRIVATE));
	EXPECT_EQ(5, ast_mutex_lock(&m, ALL_STATES));
	EXPECT_EQ(-EBUSY, ast_mutex_destroy(&m));
	EXPECT_EQ(0, ast_mutex_unlock(&m, 63));
	EXPECT_EQ(AST_MUTEX_WORD(63), m.word);
	EXPECT_EQ(-EBUSY, ast_mutex_trylock(&m, BIT(62)));
	EXPECT_EQ(63, ast_mutex_lock(&m, BIT(63)));
	EXPECT_EQ(0, ast_mutex_unlock(&m, 32));
	/* The kernel path returns the state too. */
	EXPECT_EQ(32, ast_sys_lock(&m.word, BIT(32) | BIT(0), 0, NULL, 0));
	EXPECT_EQ(0, ast_sys_unlock(&m.word, 0, 0));
	for (s = 0; s < 64; s++) {
		EXPECT_EQ(0, ast_mutex_init(&m, s, 0));
		EXPECT_EQ(s, ast_mutex_trylock(&m, BIT(s)));
		EXPECT_EQ(0, ast_mutex_unlock(&m, (s + 1) % 64));
	}
	EXPECT_EQ(0, ast_mutex_destroy(&m));
}

/* Uncontended entry and exit never enter the kernel. */
TEST(fast_path_stays_in_user_space)
{
	struct ast_mutex m;
	unsigned long calls;
	int i;

	if (!ast_supported())
		SKIP(return, "ast_mutex syscalls not supported");
	ASSERT_EQ(0, ast_mutex_init(&m, 0, AST_MUTEX_PRIVATE));
	calls = ast_kernel_calls;
	for (i = 0; i < 1000; i++) {
		EXPECT_EQ(i % 64, ast_mutex_lock(&m, BIT(i % 64)));
		EXPECT_EQ(0, ast_mutex_unlock(&m, (i + 1) % 64));
	}
	EXPECT_EQ(calls, ast_kernel_calls);
	/* A lock that must wait or fail does enter it. */
	EXPECT_EQ(40, ast_mutex_lock(&m, BIT(40)));
	EXPECT_EQ(-EDEADLK, ast_mutex_lock(&m, BIT(40)));
	EXPECT_EQ(calls + 1, ast_kernel_calls);
	EXPECT_EQ(0, ast_mutex_unlock(&m, 0));
	EXPECT_EQ(calls + 1, ast_kernel_calls);
}

/* ------------------------------------------------------------ hand-off */

struct waiter {
	struct ast_mutex *m;
	__u64 mask;
	unsigned int exit_state;
	pid_t tid;
	int got;
	__u32 word_at_entry;
	int *order, *nr_order;
	int id;
	int rt_prio;
	long timeout_ms;	/* 0: none */
	bool started;
};

static void *waiter_fn(void *arg)
{
	struct waiter *w = arg;

	w->tid = syscall(SYS_gettid);
	if (w->rt_prio) {
		struct sched_param sp = { .sched_priority = w->rt_prio };

		if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp))
			w->rt_prio = -1;
	}
	__atomic_store_n(&w->started, true, __ATOMIC_SEQ_CST);
	if (w->timeout_ms) {
		struct timespec ts;

		abs_in(&ts, CLOCK_MONOTONIC, w->timeout_ms);
		w->got = ast_mutex_timedlock(w->m, w->mask, &ts,
					     CLOCK_MONOTONIC);
	} else {
		w->got = ast_mutex_lock(w->m, w->mask);
	}
	if (w->got < 0 && w->got != -EOWNERDEAD)
		return NULL;
	w->word_at_entry = load(&w->m->word);
	if (w->order)
		w->order[(*w->nr_order)++] = w->id;
	ast_mutex_unlock(w->m, w->exit_state);
	return NULL;
}

static void start_waiter(struct __test_metadata *_metadata, pthread_t *th,
			 struct waiter *w)
{
	ASSERT_EQ(0, pthread_create(th, NULL, waiter_fn, w));
	while (!__atomic_load_n(&w->started, __ATOMIC_SEQ_CST))
		usleep(100);
	ASSERT_EQ(0, wait_in_syscall(w->tid, __NR_ast_mutex_lock));
}

TEST(handoff_to_matching_waiter)
{
	struct ast_mutex m;
	struct waiter w[3] = {
		{ .mask = BIT(1), .exit_state = 1, .id = 0 },
		{ .mask = BIT(2), .exit_state = 1, .id = 1 },
		{ .mask = BIT(1) | BIT(40), .exit_state = 9, .id = 2 },
	};
	int order[3], nr = 0, i, r;
	pthread_t th[3];
	__u32 v;

	if (!ast_supported())
		SKIP(return, "ast_mutex syscalls not supported");
	/* The paper's strict policy: every unlock hands over. */
	ASSERT_EQ(0, ast_mutex_init(&m, 0, AST_MUTEX_PRIVATE |
				    AST_MUTEX_STRICT));
	ASSERT_EQ(0, ast_mutex_lock(&m, BIT(0)));
	for (i = 0; i < 3; i++) {
		w[i].m = &m;
		w[i].order = order;
		w[i].nr_order = &nr;
		start_waiter(_metadata, &th[i], &w[i]);
	}
	v = load(&m.word);
	EXPECT_EQ((__u32)ast_gettid() | AST_MUTEX_WAITERS, v);

	/* State 0 and 3 suit nobody: freed, every waiter stays asleep. */
	EXPECT_EQ(0, ast_mutex_unlock(&m, 3));
	EXPECT_EQ(AST_MUTEX_WORD(3) | AST_MUTEX_WAITERS, load(&m.word));
	EXPECT_EQ(3, ast_mutex_lock(&m, BIT(3)));
	EXPECT_EQ(0, ast_mutex_unlock(&m, 0));
	EXPECT_EQ(0, ast_mutex_lock(&m, BIT(0)));
	usleep(20000);
	EXPECT_EQ(0, nr);
	for (i = 0; i < 3; i++)
		EXPECT_EQ(0, wait_in_syscall(w[i].tid, __NR_ast_mutex_lock));

	/*
	 * Unlock into 2: handed to w[1] directly (the word names it before
	 * it even runs); w[1] leaves in 1, which goes to w[0] (first in
	 * FIFO order), which leaves in 1 again for w[2].
	 */
	r = ast_sys_unlock(&m.word, 2, AST_MUTEX_PRIVATE | AST_MUTEX_HANDOFF);
	EXPECT_EQ(1, r);
	v = load(&m.word);
	EXPECT_TRUE(v == ((__u32)w[1].tid | AST_MUTEX_WAITERS) ||
		    nr > 0);
	for (i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	ASSERT_EQ(3, nr);
	EXPECT_EQ(1, order[0]);
	EXPECT_EQ(0, order[1]);
	EXPECT_EQ(2, order[2]);
	EXPECT_EQ(2, w[1].got);
	EXPECT_EQ(1, w[0].got);
	EXPECT_EQ(1, w[2].got);
	EXPECT_EQ((__u32)w[1].tid | AST_MUTEX_WAITERS, w[1].word_at_entry);
	EXPECT_EQ((__u32)w[0].tid | AST_MUTEX_WAITERS, w[0].word_at_entry);
	/* The last one is alone: no waiters bit. */
	EXPECT_EQ((__u32)w[2].tid, w[2].word_at_entry);
	EXPECT_EQ(AST_MUTEX_WORD(9), load(&m.word));
}

/*
 * The kernel's event counts in debugfs follow the calls: a strict
 * hand-off to one sleeping waiter, then a compete wake-up of another.
 * The waiters leave alone, in user space.  Nothing else in the guest
 * uses the calls while the kselftests run one after another.
 */
#define AST_STATS	"/sys/kernel/debug/ast_sync/stats"

enum {
	ST_QUEUED, ST_LOST, ST_HEIR, ST_UNLOCK, ST_HANDOFF, ST_WAKE,
	ST_SCANNED, NR_ST
};

/* 0; -ENOENT without the file; -EINVAL if a counter is missing. */
static int read_ast_stats(long *v)
{
	static const char *const names[NR_ST] = {
		"queued", "lost", "heir", "unlock", "handoff", "wake",
		"scanned",
	};
	int found = sysfs_read_stats(AST_STATS, names, NR_ST, v);

	if (found < 0)
		return -ENOENT;
	return found == NR_ST ? 0 : -EINVAL;
}

TEST(debugfs_stats)
{
	struct waiter w1 = { .mask = BIT(1), .exit_state = 2 };
	struct waiter w2 = { .mask = BIT(3), .exit_state = 4 };
	long a[NR_ST], b[NR_ST];
	struct ast_mutex m;
	pthread_t th;
	int ret;

	if (!ast_supported())
		SKIP(return, "ast_mutex syscalls not supported");
	ret = read_ast_stats(a);
	if (ret == -ENOENT)
		SKIP(return, "no %s (debugfs not mounted?)", AST_STATS);
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, ast_mutex_init(&m, 0, AST_MUTEX_PRIVATE));
	ASSERT_EQ(0, ast_mutex_lock(&m, BIT(0)));
	w1.m = &m;
	start_waiter(_metadata, &th, &w1);
	/* A failed unlock leaves the waiter asleep: no pthread_join(). */
	ASSERT_EQ(1, ast_sys_unlock(&m.word, 1, AST_MUTEX_PRIVATE |
				    AST_MUTEX_HANDOFF));
	pthread_join(th, NULL);
	EXPECT_EQ(1, w1.got);
	ASSERT_EQ(2, ast_mutex_lock(&m, BIT(2)));
	w2.m = &m;
	start_waiter(_metadata, &th, &w2);
	ASSERT_EQ(1, ast_sys_unlock(&m.word, 3, AST_MUTEX_PRIVATE |
				    AST_MUTEX_WAKE_ONLY));
	pthread_join(th, NULL);
	EXPECT_EQ(3, w2.got);
	EXPECT_EQ(AST_MUTEX_WORD(4), load(&m.word));
	ASSERT_EQ(0, read_ast_stats(b));
	EXPECT_EQ(2, b[ST_UNLOCK] - a[ST_UNLOCK]);
	EXPECT_EQ(1, b[ST_HANDOFF] - a[ST_HANDOFF]);
	EXPECT_EQ(1, b[ST_WAKE] - a[ST_WAKE]);
	/* The woken waiter took the free word: no loss, no heir. */
	EXPECT_EQ(0, b[ST_LOST] - a[ST_LOST]);
	EXPECT_EQ(0, b[ST_HEIR] - a[ST_HEIR]);
	EXPECT_LE(2, b[ST_QUEUED] - a[ST_QUEUED]);
	EXPECT_LE(2, b[ST_SCANNED] - a[ST_SCANNED]);
}

TEST(handoff_fifo)
{
	enum { N = 6 };
	struct waiter w[N];
	struct ast_mutex m;
	int order[N], nr = 0, i;
	pthread_t th[N];

	if (!ast_supported())
		SKIP(return, "ast_mutex syscalls not supported");
	ASSERT_EQ(0, ast_mutex_init(&m, 0, 0));
	ASSERT_EQ(0, ast_mutex_lock(&m, BIT(0)));
	memset(w, 0, sizeof(w));
	for (i = 0; i < N; i++) {
		w[i].m = &m;
		w[i].mask = BIT(1) | BIT(2);
		w[i].exit_state = 1 + (i & 1);
		w[i].order = order;
		w[i].nr_order = &nr;
		w[i].id = i;
		start_waiter(_metadata, &th[i], &w[i]);
	}
	EXPECT_EQ(0, ast_mutex_unlock(&m, 2));
	for (i = 0; i < N; i++)
		pthread_join(th[i], NULL);
	ASSERT_EQ(N, nr);
	for (i = 0; i < N; i++)
		EXPECT_EQ(i, order[i]);
	EXPECT_EQ(AST_MUTEX_WORD(1 + ((N - 1) & 1)), load(&m.word));
}

/* AST_MUTEX_WAKE_ONLY frees the word and wakes the matching waiter. */
TEST(wake_only_unlock)
{
	struct waiter w = { .mask = BIT(1) | BIT(2), .exit_state = 3 };
	struct ast_mutex m;
	pthread_t th;
	__u32 v;

	if (!ast_supported())
		SKIP(return, "ast_mutex syscalls not supported");
	/* Not a lock flag. */
	EXPECT_EQ(-EINVAL, ast_sys_lock(&m.word, 1, AST_MUTEX_WAKE_ONLY, NULL,
					0));
	ASSERT_EQ(0, ast_mutex_init(&m, 0, AST_MUTEX_PRIVATE |
				    AST_MUTEX_COMPETE));
	ASSERT_EQ(0, ast_mutex_lock(&m, BIT(0)));
	EXPECT_EQ(0, ast_sys_unlock(&m.word, 1, AST_MUTEX_PRIVATE |
				    AST_MUTEX_WAKE_ONLY));
	EXPECT_EQ(AST_MUTEX_WORD(1), load(&m.word));
	ASSERT_EQ(1, ast_mutex_lock(&m, BIT(1)));
	w.m = &m;
	start_waiter(_metadata, &th, &w);
	/* Freed in state 2 (not handed over); the waiter takes it itself. */
	EXPECT_EQ(1, ast_sys_unlock(&m.word, 2, AST_MUTEX_PRIVATE |
				    AST_MUTEX_WAKE_ONLY));
	v = load(&m.word);
	EXPECT_TRUE(v == AST_MUTEX_WORD(2) || v == (__u32)w.tid ||
		    v == AST_MUTEX_WORD(3));
	pthread_join(th, NULL);
	EXPECT_EQ(2, w.got);
	EXPECT_EQ((__u32)w.tid, w.word_at_entry);
	EXPECT_EQ(AST_MUTEX_WORD(3), load(&m.word));
	/* The library's COMPETE attribute uses it. */
	EXPECT_EQ(3, ast_mutex_lock(&m, BIT(3)));
	EXPECT_EQ(0, ast_mutex_unlock(&m, 4));
	EXPECT_EQ(AST_MUTEX_WORD(4), load(&m.word));
}

/*
 * The adaptive (default) unlock wakes a sleeping matching waiter to
 * compete and frees the word; a thread that takes the word first wins.
 * Once the waiter has lost 8 times, the first time at least 4 ms ago, it
 * claims the hand-off, and the first unlock into a state of its set more
 * than 4 ms later hands the lock to it directly, asleep or not.  The
 * unlocker runs SCHED_FIFO on the waiter's CPU, so the waiter cannot run
 * between the unlock and the barging trylock; without SCHED_FIFO only
 * the bound is checked.  Unlocks are 50 ms apart, far beyond the bound.
 */
TEST(adaptive_anti_starvation)
{
	struct waiter w = { .mask = BIT(1), .exit_state = 0 };
	struct sched_param sp = { .sched_priority = 5 };
	cpu_set_t old;
	bool fifo, handed = false;
	struct ast_mutex m;
	int k, barged = 0;
	pthread_t th;
	__u32 v;

	if (!ast_supported())
		SKIP(return, "ast_mutex syscalls not supported");
	ASSERT_EQ(0, sched_getaffinity(0, sizeof(old), &old));
	for (k = 0; k < CPU_SETSIZE && !CPU_ISSET(k, &old); k++)
		;
	ASSERT_EQ(0, pin_cpu(k));
	ASSERT_EQ(0, ast_mutex_init(&m, 0, AST_MUTEX_PRIVATE));
	ASSERT_EQ(0, ast_mutex_lock(&m, BIT(0)));
	w.m = &m;
	start_waiter(_metadata, &th, &w);
	fifo = !pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);

	for (k = 0; k < 16; k++) {
		/* Let the waiter get off the CPU; the bound passes. */
		usleep(50000);
		EXPECT_EQ(1, ast_sys_unlock(&m.word, 1, AST_MUTEX_PRIVATE));
		v = load(&m.word);
		if ((v & AST_MUTEX_TID_MASK) == (__u32)w.tid) {
			handed = true;
			break;
		}
		/* Freed in state 1 for the waiter to compete: barge in. */
		if (ast_mutex_trylock(&m, BIT(1)) != 1)
			break;	/* it ran and took it (no SCHED_FIFO) */
		barged++;
		/* Let it run, lose and sleep again. */
		sp.sched_priority = 0;
		if (fifo)
			pthread_setschedparam(pthread_self(), SCHED_OTHER, &sp);
		EXPECT_EQ(0, wait_in_syscall(w.tid, __NR_ast_mutex_lock));
		sp.sched_priority = 5;
		if (fifo)
			pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	}
	sp.sched_priority = 0;
	pthread_setschedparam(pthread_self(), SCHED_OTHER, &sp);
	pthread_join(th, NULL);
	sched_setaffinity(0, sizeof(old), &old);
	/* The bound: 8 losses over 4 ms; the unlocks are 50 ms apart. */
	EXPECT_LE(barged, 8);
	EXPECT_EQ(1, w.got);
	EXPECT_EQ(AST_MUTEX_WORD(0), load(&m.word));
	if (fifo) {
		/* It competed (no hand-off to a sleeper), lost, then got it. */
		EXPECT_TRUE(handed);
		EXPECT_GE(barged, 1);
	}
}

/* The strict policy hands over even to a sleeping waiter. */
TEST(strict_handoff_unlock)
{
	struct waiter w = { .mask = BIT(1), .exit_state = 2 };
	struct ast_mutex m;
	pthread_t th;

	if (!ast_supported())
		SKIP(return, "ast_mutex syscalls not supported");
	EXPECT_EQ(-EINVAL, ast_sys_lock(&m.word, 1, AST_MUTEX_HANDOFF, NULL,
					0));
	EXPECT_EQ(-EINVAL, ast_mutex_init(&m, 0, AST_MUTEX_STRICT |
					  AST_MUTEX_COMPETE));
	ASSERT_EQ(0, ast_mutex_init(&m, 0, AST_MUTEX_PRIVATE |
				    AST_MUTEX_STRICT));
	ASSERT_EQ(0, ast_mutex_lock(&m, BIT(0)));
	w.m = &m;
	start_waiter(_metadata, &th, &w);
	usleep(20000);
	ASSERT_EQ(0, ast_mutex_unlock(&m, 1));
	/* The word names the waiter: a barging trylock must fail. */
	EXPECT_EQ(-EBUSY, ast_mutex_trylock(&m, BIT(1)));
	pthread_join(th, NULL);
	EXPECT_EQ(1, w.got);
	EXPECT_EQ((__u32)w.tid, w.word_at_entry);
	EXPECT_EQ(AST_MUTEX_WORD(2), load(&m.word));
}

/* A real-time waiter is queued ahead of earlier SCHED_OTHER waiters. */
TEST(handoff_priority)
{
	struct waiter w[3] = {
		{ .mask = BIT(1), .exit_state = 1, .id = 0 },
		{ .mask = BIT(1), .exit_state = 1, .id = 1 },
		{ .mask = BIT(1), .exit_state = 1, .id = 2, .rt_prio = 10 },
	};
	int order[3], nr = 0, i;
	struct ast_mutex m;
	pthread_t th[3];

	if (!ast_supported())
		SKIP(return, "ast_mutex syscalls not supported");
	ASSERT_EQ(0, ast_mutex_init(&m, 0, AST_MUTEX_PRIVATE));
	ASSERT_EQ(0, ast_mutex_lock(&m, BIT(0)));
	for (i = 0; i < 3; i++) {
		w[i].m = &m;
		w[i].order = order;
		w[i].nr_order = &nr;
		start_waiter(_metadata, &th[i], &w[i]);
	}
	if (w[2].rt_prio < 0) {
		EXPECT_EQ(0, ast_mutex_unlock(&m, 1));
		for (i = 0; i < 3; i++)
			pthread_join(th[i], NULL);
		SKIP(return, "SCHED_FIFO not permitted");
	}
	EXPECT_EQ(0, ast_mutex_unlock(&m, 1));
	for (i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	ASSERT_EQ(3, nr);
	EXPECT_EQ(2, order[0]);
	EXPECT_EQ(0, order[1]);
	EXPECT_EQ(1, order[2]);
}

/* ------------------------------------------------------------- timeouts */

/* Takes the mutex and exits holding it. */
static void *hold_fn(void *arg)
{
	struct ast_mutex *m = arg;

	ast_mutex_lock(m, ALL_STATES);
	return NULL;
}

/* Takes the mutex in @mask and keeps it until told to leave it in 4. */
struct keeper {
	struct ast_mutex *m;
	__u64 mask;
	pid_t tid;
	int got;
	bool started, release;
};

static void *keeper_fn(void *arg)
{
	struct keeper *k = arg;

	k->tid = syscall(SYS_gettid);
	__atomic_store_n(&k->started, true, __ATOMIC_SEQ_CST);
	k->got = ast_mutex_lock(k->m, k->mask);
	while (!__atomic_load_n(&k->release, __ATOMIC_SEQ_CST))
		usleep(1000);
	if (k->got >= 0 || k->got == -EOWNERDEAD)
		ast_mutex_unlock(k->m, 4);
	return NULL;
}

static void start_keeper(struct __test_metadata *_metadata, pthread_t *th,
			 struct keeper *k)
{
	ASSERT_EQ(0, pthread_create(th, NULL, keeper_fn, k));
	while (!__atomic_load_n(&k->started, __ATOMIC_SEQ_CST))
		usleep(100);
}

static void check_timeout(struct __test_metadata *_metadata, clockid_t clk,
			  unsigned int flags)
{
	struct keeper k = { 0 };
	struct timespec t0, ts;
	struct ast_mutex m;
	pthread_t th;
	__u32 v;

	/* Free but in the wrong state. */
	ASSERT_EQ(0, ast_mutex_init(&m, 4, flags));
	clock_gettime(clk, &t0);
	abs_in(&ts, clk, 100);
	EXPECT_EQ(-ETIMEDOUT, ast_mutex_timedlock(&m, BIT(5), &ts, clk));
	EXPECT_GE(ms_since(&t0, clk), 99);
	EXPECT_EQ(AST_MUTEX_WORD(4), load(&m.word));

	/* Locked by another thread, which stays the owner. */
	k.m = &m;
	k.mask = ALL_STATES;
	start_keeper(_metadata, &th, &k);
	while ((v = load(&m.word)) & AST_MUTEX_FREE)
		usleep(100);
	EXPECT_EQ((__u32)k.tid, v);
	clock_gettime(clk, &t0);
	abs_in(&ts, clk, 100);
	EXPECT_EQ(-ETIMEDOUT, ast_mutex_timedlock(&m, ALL_STATES, &ts, clk));
	EXPECT_GE(ms_since(&t0, clk), 99);
	EXPECT_EQ(v, load(&m.word));
	__atomic_store_n(&k.release, true, __ATOMIC_SEQ_CST);
	pthread_join(th, NULL);
	EXPECT_EQ(AST_MUTEX_WORD(4), load(&m.word));

	/*
	 * Locked by a thread that exited: the word is on this stack, which
	 * only this process reaches, so no task can unlock it any more.  A
	 * lock that would sleep on it takes it as a dead owner's instead.
	 */
	ASSERT_EQ(0, pthread_create(&th, NULL, hold_fn, &m));
	pthread_join(th, NULL);
	v = load(&m.word);
	EXPECT_FALSE(v & AST_MUTEX_FREE);
	abs_in(&ts, clk, 100);
	EXPECT_EQ(-EOWNERDEAD, ast_mutex_timedlock(&m, ALL_STATES, &ts, clk));
	EXPECT_EQ((__u32)ast_gettid(), load(&m.word));
	EXPECT_EQ(0, ast_mutex_unlock(&m, 4));

	/* A timeout in the past does not stop a free, matching entry. */
	ASSERT_EQ(0, ast_mutex_init(&m, 4, flags));
	ts.tv_sec = 0;
	ts.tv_nsec = 0;
	EXPECT_EQ(4, ast_sys_lock(&m.word, BIT(4), flags, &ts, clk));
	EXPECT_EQ(0, ast_mutex_unlock(&m, 4));
}

TEST(timeout_monotonic)
{
	if (!ast_supported())
		SKIP(return, "ast_mutex syscalls not supported");
	check_timeout(_metadata, CLOCK_MONOTONIC, AST_MUTEX_PRIVATE);
	check_timeout(_metadata, CLOCK_MONOTONIC, 0);
}

TEST(timeout_realtime)
{
	if (!ast_supported())
		SKIP(return, "ast_mutex syscalls not supported");
	check_timeout(_metadata, CLOCK_REALTIME, AST_MUTEX_PRIVATE);
	check_timeout(_metadata, CLOCK_REALTIME, 0);
}

/* A positive integer from the environment, else @def. */
static int env_int(const char *name, int def)
{
	const char *v = getenv(name);

	return v && atoi(v) > 0 ? atoi(v) : def;
}

/*
 * A child forked while a thread of its parent waits for a private mutex
 * locks its own copy of the word.  The copy names a thread of the parent:
 * the parent's owner, with the waiters bit its waiter set (even rounds),
 * or, once an unlock has handed the mutex to that waiter, the waiter
 * itself, whether or not it has run yet (odd rounds, a strict unlock).  No
 * task of the child can unlock that copy and no waiter of the child is
 * queued to be handed it, so the lock must take it as a dead owner's,
 * with EOWNERDEAD, at once, not sleep until its timeout.  The parent's
 * word stays its own.  AST_FORK_RUNS (environment, default 1) repeats
 * both rounds.
 */
FIXTURE(fork) {
	int dummy;
};

FIXTURE_SETUP(fork)
{
}

FIXTURE_TEARDOWN(fork)
{
}

/* Up to 300 s: AST_FORK_RUNS may ask for many runs under TCG. */
TEST_F_TIMEOUT(fork, child_of_waiting_parent, 300)
{
	int runs = env_int("AST_FORK_RUNS", 1);
	struct ast_mutex m;
	struct timespec ts;
	struct keeper k;
	pthread_t th;
	int round, st;
	pid_t pid;
	__u32 v;
	long r;

	if (!ast_supported())
		SKIP(return, "ast_mutex syscalls not supported");
	for (round = 0; round < 2 * runs; round++) {
		ASSERT_EQ(0, ast_mutex_init(&m, 0, AST_MUTEX_PRIVATE |
					    AST_MUTEX_STRICT));
		ASSERT_EQ(0, ast_mutex_lock(&m, BIT(0)));
		memset(&k, 0, sizeof(k));
		k.m = &m;
		k.mask = BIT(1);
		start_keeper(_metadata, &th, &k);
		ASSERT_EQ(0, wait_in_syscall(k.tid, __NR_ast_mutex_lock));
		if (round & 1)
			ASSERT_EQ(0, ast_mutex_unlock(&m, 1));
		v = load(&m.word);
		EXPECT_EQ(round & 1 ? (__u32)k.tid :
			  (__u32)ast_gettid() | AST_MUTEX_WAITERS, v);
		pid = fork();
		ASSERT_GE(pid, 0);
		if (!pid) {
			abs_in(&ts, CLOCK_MONOTONIC, 2000);
			r = ast_mutex_timedlock(&m, ALL_STATES, &ts,
						CLOCK_MONOTONIC);
			if (r != -EOWNERDEAD)
				_exit(r == -ETIMEDOUT ? 10 : 11);
			if (load(&m.word) != (__u32)syscall(SYS_gettid))
				_exit(12);
			if (ast_mutex_unlock(&m, 5) ||
			    load(&m.word) != AST_MUTEX_WORD(5))
				_exit(13);
			_exit(0);
		}
		ASSERT_EQ(pid, waitpid(pid, &st, 0));
		EXPECT_TRUE(WIFEXITED(st));
		EXPECT_EQ(0, WEXITSTATUS(st)) {
			TH_LOG("round %d: the child's lock of its copy %#x %s",
			       round, v, WEXITSTATUS(st) == 10 ? "timed out" :
			       "failed");
		}
		/* The parent's word is not the child's copy. */
		EXPECT_EQ(v, load(&m.word));
		if (!(round & 1))
			EXPECT_EQ(0, ast_mutex_unlock(&m, 1));
		__atomic_store_n(&k.release, true, __ATOMIC_SEQ_CST);
		pthread_join(th, NULL);
		EXPECT_EQ(1, k.got);
		EXPECT_EQ(AST_MUTEX_WORD(4), load(&m.word));
	}
}

/* -------------------------------------------------------------- signals */

static int nr_signals;

static void on_sigusr1(int sig)
{
	__atomic_fetch_add(&nr_signals, 1, __ATOMIC_SEQ_CST);
}

TEST(signals_restart)
{
	struct sigaction sa = { .sa_handler = on_sigusr1 };
	struct waiter w = { .mask = BIT(6), .exit_state = 0 };
	struct ast_mutex m;
	pthread_t th;
	int i;

	if (!ast_supported())
		SKIP(return, "ast_mutex syscalls not supported");
	/* No SA_RESTART: the lock must restart anyway, never EINTR. */
	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, NULL));
	ASSERT_EQ(0, ast_mutex_init(&m, 0, AST_MUTEX_PRIVATE));
	w.m = &m;
	start_waiter(_metadata, &th, &w);
	for (i = 0; i < 10; i++) {
		ASSERT_EQ(0, pthread_kill(th, SIGUSR1));
		while (__atomic_load_n(&nr_signals, __ATOMIC_SEQ_CST) != i + 1)
			usleep(100);
		ASSERT_EQ(0, wait_in_syscall(w.tid, __NR_ast_mutex_lock));
	}
	EXPECT_EQ(10, __atomic_load_n(&nr_signals, __ATOMIC_SEQ_CST));
	EXPECT_EQ(AST_MUTEX_WORD(0) | AST_MUTEX_WAITERS, load(&m.word));
	EXPECT_EQ(0, ast_mutex_lock(&m, BIT(0)));
	EXPECT_EQ(0, ast_mutex_unlock(&m, 6));
	pthread_join(th, NULL);
	EXPECT_EQ(6, w.got);
	EXPECT_EQ(AST_MUTEX_WORD(0), load(&m.word));
}

/* -------------------------------------------------------- shared / robust */

static struct ast_mutex *shared_mutex(struct __test_metadata *_metadata)
{
	struct ast_mutex *m = mmap(NULL, sysconf(_SC_PAGESIZE),
				   PROT_READ | PROT_WRITE,
				   MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	ASSERT_NE(MAP_FAILED, m) {
		return NULL;
	}
	return m;
}

TEST(process_shared)
{
	struct ast_mutex *m = shared_mutex(_metadata);
	int st, i;
	pid_t pid;

	if (!ast_supported())
		SKIP(return, "ast_mutex syscalls not supported");
	ASSERT_EQ(0, ast_mutex_init(m, 0, 0));
	ASSERT_EQ(0, ast_mutex_lock(m, BIT(0)));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		int s = ast_mutex_lock(m, BIT(1));

		if (s != 1)
			_exit(10);
		if ((load(&m->word) & AST_MUTEX_TID_MASK) !=
		    (__u32)syscall(SYS_gettid))
			_exit(11);
		_exit(ast_mutex_unlock(m, 2) ? 12 : 0);
	}
	for (i = 0; i < 5000 && !(load(&m->word) & AST_MUTEX_WAITERS); i++)
		usleep(1000);
	EXPECT_TRUE(load(&m->word) & AST_MUTEX_WAITERS);
	EXPECT_EQ(0, ast_mutex_unlock(m, 1));
	EXPECT_EQ(2, ast_mutex_lock(m, BIT(2)));
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));
	EXPECT_EQ(0, ast_mutex_unlock(m, 0));
	munmap(m, sysconf(_SC_PAGESIZE));
}

TEST(robust_owner_death)
{
	struct waiter w = { .mask = BIT(9), .exit_state = 9 };
	struct ast_mutex *m = shared_mutex(_metadata);
	int st, p[2];
	pthread_t th;
	pid_t pid;
	char c;

	if (!ast_supported())
		SKIP(return, "ast_mutex syscalls not supported");
	ASSERT_EQ(0, ast_mutex_init(m, 2, AST_MUTEX_ROBUST));
	EXPECT_EQ(-EINVAL, ast_mutex_init(m, 2, AST_MUTEX_ROBUST |
					  AST_MUTEX_PRIVATE));
	ASSERT_EQ(0, ast_mutex_init(m, 2, AST_MUTEX_ROBUST));
	ASSERT_EQ(0, pipe(p));

	/* 1: the owner dies, nobody waits; the next locker gets it. */
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		if (ast_mutex_lock(m, BIT(2)) != 2)
			_exit(1);
		_exit(0);	/* dies holding it */
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_EQ(0, WEXITSTATUS(st));
	EXPECT_EQ(AST_MUTEX_OWNER_DIED, load(&m->word));
	EXPECT_EQ(-EOWNERDEAD, ast_mutex_lock(m, BIT(7)));
	EXPECT_EQ((__u32)ast_gettid(), load(&m->word));
	EXPECT_EQ(0, ast_mutex_unlock(m, 3));
	EXPECT_EQ(3, ast_mutex_lock(m, BIT(3)));
	EXPECT_EQ(0, ast_mutex_unlock(m, 3));

	/* 2: the owner dies while a thread waits for a state it never makes. */
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		if (ast_mutex_lock(m, BIT(3)) != 3)
			_exit(1);
		if (write(p[1], "x", 1) != 1)
			_exit(2);
		pause();
		_exit(0);
	}
	ASSERT_EQ(1, read(p[0], &c, 1));
	w.m = m;
	start_waiter(_metadata, &th, &w);
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	pthread_join(th, NULL);
	EXPECT_EQ(-EOWNERDEAD, w.got);
	EXPECT_EQ((__u32)w.tid, w.word_at_entry);
	EXPECT_EQ(AST_MUTEX_WORD(9), load(&m->word));
	EXPECT_EQ(9, ast_mutex_lock(m, BIT(9)));
	EXPECT_EQ(0, ast_mutex_unlock(m, 1));
	EXPECT_EQ(AST_MUTEX_WORD(1), load(&m->word));
	munmap(m, sysconf(_SC_PAGESIZE));
}

/*
 * A word in shared memory may be owned by a task of another process: the
 * kernel cannot tell that its owner is gone, so a process-shared word
 * locked by a thread that exited stays locked (use a robust mutex).
 */
TEST(exited_owner_shared_memory)
{
	struct ast_mutex *m = shared_mutex(_metadata);
	struct timespec ts;
	pthread_t th;
	__u32 v;

	if (!ast_supported())
		SKIP(return, "ast_mutex syscalls not supported");
	ASSERT_EQ(0, ast_mutex_init(m, 0, 0));
	ASSERT_EQ(0, pthread_create(&th, NULL, hold_fn, m));
	pthread_join(th, NULL);
	v = load(&m->word);
	EXPECT_FALSE(v & AST_MUTEX_FREE);
	abs_in(&ts, CLOCK_MONOTONIC, 100);
	EXPECT_EQ(-ETIMEDOUT, ast_mutex_timedlock(m, ALL_STATES, &ts,
						  CLOCK_MONOTONIC));
	EXPECT_EQ(v, load(&m->word));
	munmap(m, sysconf(_SC_PAGESIZE));
}

/* ------------------------------------------------------------ hardening */

/* Tests that may run longer than the harness's default 30 s. */
FIXTURE(stress) {
	int dummy;
};

FIXTURE_SETUP(stress)
{
}

FIXTURE_TEARDOWN(stress)
{
}

/*
 * A page shared across fork(): MAP_SHARED anonymous memory (shmem), or
 * with @file a MAP_SHARED mapping of a file on the file system of the
 * test's directory (the current directory, else the program's, else
 * /tmp), unlinked at once so that a killed test leaves nothing behind.
 * Returns MAP_FAILED on failure.
 */
static void *map_shared_page(bool file)
{
	static const char *const dirs[] = { ".", NULL, "/tmp" };
	long pg = sysconf(_SC_PAGESIZE);
	char path[PATH_MAX], exe[PATH_MAX - 32], *slash;
	void *p;
	ssize_t n;
	int i, fd = -1;

	if (!file)
		return mmap(NULL, pg, PROT_READ | PROT_WRITE,
			    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	for (i = 0; i < (int)ARRAY_SIZE(dirs) && fd < 0; i++) {
		if (dirs[i]) {
			snprintf(path, sizeof(path), "%s/ast_mutex_test.XXXXXX",
				 dirs[i]);
		} else {
			n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
			if (n <= 0)
				continue;
			exe[n] = 0;
			slash = strrchr(exe, '/');
			if (!slash)
				continue;
			*slash = 0;
			snprintf(path, sizeof(path), "%s/ast_mutex_test.XXXXXX",
				 exe);
		}
		fd = mkstemp(path);
	}
	if (fd < 0)
		return MAP_FAILED;
	unlink(path);
	if (ftruncate(fd, pg)) {
		close(fd);
		return MAP_FAILED;
	}
	p = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	return p;
}

/*
 * A thread of a waiter process that drops the process's page table entry
 * of the word's page (MADV_DONTNEED on a shared mapping keeps the data),
 * so that the waiter's next access to the word faults and GUP-fast fails
 * on it: once on request (@period_us 0), or every @period_us.  Writeback
 * that cleans a file page has the same effect on a real file system (the
 * entry is write-protected); this works on any, tmpfs included.  The
 * requests are in another page, which the zapping leaves alone.
 */
struct zapper {
	void *page;
	int *req, *done;
	int period_us;
};

static void *zapper_fn(void *arg)
{
	struct zapper *z = arg;
	long pg = sysconf(_SC_PAGESIZE);

	for (;;) {
		if (z->period_us)
			usleep(z->period_us);
		else
			while (!__atomic_load_n(z->req, __ATOMIC_SEQ_CST))
				usleep(100);
		madvise(z->page, pg, MADV_DONTNEED);
		if (!z->period_us) {
			__atomic_store_n(z->done, 1, __ATOMIC_SEQ_CST);
			return NULL;
		}
	}
}

/*
 * A waiter SIGKILLed while queued never ends up owning the mutex: the
 * unlocker runs SCHED_FIFO on the one CPU that the waiters may use, so a
 * killed waiter is still queued (woken, not yet running) when the unlock
 * picks it, under every unlock policy.  It must pass the lock on (here
 * to a second waiter queued behind it), not die holding it.
 *
 * With @zap the victim's page table entry of the word is gone when it
 * runs, as after writeback cleaned a file page or a migration: the word
 * can only be reached through a fault or GUP's slow path, which gives up
 * (-EINTR) when a fatal signal is pending.  The pass-on used to look the
 * futex key up again with GUP: with a hand-off it failed and the dead
 * victim kept the word, and after a compete wake-up the victim returned
 * without taking the free word and the second waiter was never woken.
 * @file puts the word in a file on the test's file system, which the
 * parent also writes back (msync()) before the unlock.
 */
static void check_killed_waiter(struct __test_metadata *_metadata,
				unsigned int policy, bool file, bool zap)
{
	struct ast_mutex *m = map_shared_page(file);
	long pg = sysconf(_SC_PAGESIZE);
	pid_t victim = 0, heir = 0, pid;
	struct zapper z;
	struct timespec ts;
	pthread_t zt;
	cpu_set_t old;
	int st, k, i, *ctl;
	long r;
	__u32 v;

	ASSERT_NE(MAP_FAILED, m);
	ctl = mmap(NULL, pg, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ctl);
	z.page = m;
	z.req = &ctl[0];
	z.done = &ctl[1];
	z.period_us = 0;
	ASSERT_LE(0, pin_to_one_cpu(&old, 0));
	ASSERT_EQ(0, ast_mutex_init(m, 0, 0));
	ASSERT_EQ(0, ast_mutex_lock(m, BIT(0)));
	for (k = 0; k < 2; k++) {
		pid = fork();
		ASSERT_GE(pid, 0);
		if (!pid) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (zap && !k && pthread_create(&zt, NULL, zapper_fn,
							&z))
				_exit(12);
			/* The second waiter gives up after 3 s. */
			abs_in(&ts, CLOCK_MONOTONIC, 3000);
			r = ast_sys_lock(&m->word, BIT(1), 0, k ? &ts : NULL,
					 CLOCK_MONOTONIC);
			if (r != 1)
				_exit(10);
			_exit(ast_sys_unlock(&m->word, 2, 0) ? 11 : 0);
		}
		ASSERT_EQ(0, wait_task_in_syscall(pid, pid,
						  __NR_ast_mutex_lock));
		if (k)
			heir = pid;
		else
			victim = pid;
	}
	if (zap) {
		__atomic_store_n(z.req, 1, __ATOMIC_SEQ_CST);
		for (i = 0; i < 5000 && !__atomic_load_n(z.done,
							 __ATOMIC_SEQ_CST); i++)
			usleep(1000);
		EXPECT_EQ(1, __atomic_load_n(z.done, __ATOMIC_SEQ_CST));
		if (file)
			msync(m, pg, MS_SYNC);
	}
	if (set_fifo(5)) {
		kill(victim, SIGKILL);
		kill(heir, SIGKILL);
		waitpid(victim, &st, 0);
		waitpid(heir, &st, 0);
		sched_setaffinity(0, sizeof(old), &old);
		munmap(ctl, pg);
		munmap(m, pg);
		SKIP(return, "SCHED_FIFO not permitted");
	}
	/* The victim cannot run before the unlock has chosen it. */
	ASSERT_EQ(0, kill(victim, SIGKILL));
	r = ast_sys_unlock(&m->word, 1, policy);
	set_fifo(0);
	EXPECT_EQ(1, r);
	ASSERT_EQ(victim, waitpid(victim, &st, 0));
	EXPECT_TRUE(WIFSIGNALED(st));
	/* The lock went on to the second waiter, which left it in 2. */
	ASSERT_EQ(heir, waitpid(heir, &st, 0));
	EXPECT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st)) {
		TH_LOG("the second waiter was not handed the lock (policy %#x%s%s)",
		       policy, file ? ", file" : "", zap ? ", zapped" : "");
	}
	v = load(&m->word);
	EXPECT_NE((__u32)victim, v & AST_MUTEX_TID_MASK) {
		TH_LOG("the killed waiter %d owns the word %#x (policy %#x%s%s)",
		       victim, v, policy, file ? ", file" : "",
		       zap ? ", zapped" : "");
	}
	EXPECT_EQ(AST_MUTEX_WORD(2), v);
	sched_setaffinity(0, sizeof(old), &old);
	munmap(ctl, pg);
	munmap(m, pg);
}

TEST(killed_waiter_adaptive)
{
	if (!ast_supported())
		SKIP(return, "ast_mutex syscalls not supported");
	check_killed_waiter(_metadata, 0, false, false);
}

TEST(killed_waiter_handoff)
{
	if (!ast_supported())
		SKIP(return, "ast_mutex syscalls not supported");
	check_killed_waiter(_metadata, AST_MUTEX_HANDOFF, false, false);
}

TEST(killed_waiter_wake_only)
{
	if (!ast_supported())
		SKIP(return, "ast_mutex syscalls not supported");
	check_killed_waiter(_metadata, AST_MUTEX_WAKE_ONLY, false, false);
}

static const unsigned int unlock_policies[] = {
	0, AST_MUTEX_HANDOFF, AST_MUTEX_WAKE_ONLY
};

/* The victim's page table entry of the word is gone: shared memory. */
TEST(killed_waiter_unmapped_anon)
{
	int i;

	if (!ast_supported())
		SKIP(return, "ast_mutex syscalls not supported");
	for (i = 0; i < (int)ARRAY_SIZE(unlock_policies); i++)
		check_killed_waiter(_metadata, unlock_policies[i], false, true);
}

/* The same with the word in a file on the test's file system. */
TEST(killed_waiter_unmapped_file)
{
	int i;

	if (!ast_supported())
		SKIP(return, "ast_mutex syscalls not supported");
	for (i = 0; i < (int)ARRAY_SIZE(unlock_policies); i++)
		check_killed_waiter(_metadata, unlock_policies[i], true, true);
}

/*
 * A plain FUTEX_CMP_REQUEUE moves the first AST waiter to another word,
 * where it times out; the waiter still queued on the AST word keeps the
 * waiters bit, so the owner's unlock goes through the kernel and wakes
 * it.
 */
TEST(requeued_waiter_timeout)
{
	struct waiter w[2] = {
		{ .mask = BIT(1), .exit_state = 1, .timeout_ms = 300 },
		{ .mask = BIT(1), .exit_state = 3, .timeout_ms = 5000 },
	};
	struct ast_mutex m;
	__u32 other = 0, v;
	pthread_t th[2];
	int i;

	if (!ast_supported())
		SKIP(return, "ast_mutex syscalls not supported");
	ASSERT_EQ(0, ast_mutex_init(&m, 0, AST_MUTEX_PRIVATE));
	ASSERT_EQ(0, ast_mutex_lock(&m, BIT(0)));
	for (i = 0; i < 2; i++) {
		w[i].m = &m;
		start_waiter(_metadata, &th[i], &w[i]);
	}
	v = load(&m.word);
	ASSERT_EQ((__u32)ast_gettid() | AST_MUTEX_WAITERS, v);
	/* Move the first (FIFO) waiter, which set the bit, to @other. */
	EXPECT_EQ(1, syscall(SYS_futex, &m.word, FUTEX_CMP_REQUEUE_PRIVATE,
			     0, 1, &other, v));
	pthread_join(th[0], NULL);
	EXPECT_EQ(-ETIMEDOUT, w[0].got);
	EXPECT_EQ(v, load(&m.word));
	/* No kernel call if the bit went: the second waiter sleeps on. */
	EXPECT_EQ(0, ast_mutex_unlock(&m, 1));
	pthread_join(th[1], NULL);
	EXPECT_EQ(1, w[1].got);
	EXPECT_EQ(AST_MUTEX_WORD(3), load(&m.word));
}

/*
 * A word that is not writable fails with -EFAULT, also when the lock
 * would not write it (the waiters bit is already set): a private
 * read-only mapping.
 */
TEST(efault_read_only_waiters_bit)
{
	static const unsigned int flags[] = { AST_MUTEX_PRIVATE, 0 };
	long pg = sysconf(_SC_PAGESIZE);
	__u32 tid = syscall(SYS_gettid);
	__u32 vals[4], *ro;
	struct timespec ts;
	int i, j;

	if (!ast_supported())
		SKIP(return, "ast_mutex syscalls not supported");
	vals[0] = AST_MUTEX_WORD(1) | AST_MUTEX_WAITERS;
	vals[1] = (tid + 1) | AST_MUTEX_WAITERS;
	vals[2] = AST_MUTEX_OWNER_DIED | AST_MUTEX_WAITERS;
	vals[3] = tid | AST_MUTEX_WAITERS;
	ro = mmap(NULL, pg, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ro);
	for (i = 0; i < 4; i++) {
		for (j = 0; j < 2; j++) {
			ASSERT_EQ(0, mprotect(ro, pg, PROT_READ | PROT_WRITE));
			*ro = vals[i];
			ASSERT_EQ(0, mprotect(ro, pg, PROT_READ));
			abs_in(&ts, CLOCK_MONOTONIC, 200);
			/*
			 * A shared key needs write access (EFAULT at once); a
			 * private one reads the word first: our own word is
			 * EDEADLK, and only the owner's unlock would write.
			 */
			EXPECT_EQ(i == 3 && flags[j] ? -EDEADLK : -EFAULT,
				  ast_sys_lock(ro, BIT(2), flags[j], &ts,
					       CLOCK_MONOTONIC)) {
				TH_LOG("word %#x, flags %u", vals[i], flags[j]);
			}
			EXPECT_EQ(i == 3 || !flags[j] ? -EFAULT : -EPERM,
				  ast_sys_unlock(ro, 2, flags[j]));
			EXPECT_EQ(vals[i], *ro);
		}
	}
	munmap(ro, pg);
}

/*
 * Waiters that time out leave no waiters bit behind, whichever of them
 * set it.  A stale bit is what made a strict hand-off to a forked child
 * return 0: the parent took the bit for the child's and unlocked before
 * the child had queued.  Here the parent waits for the child's bit as
 * the process_shared test does, and every strict unlock hands over.
 */
TEST_F_TIMEOUT(stress, timed_out_waiters_clear_bit, 300)
{
	struct ast_mutex *m = shared_mutex(_metadata);
	/*
	 * start_waiter() must see each waiter asleep in the lock before its
	 * timeout: long enough for a debug kernel under emulation.
	 */
	struct waiter w[2] = {
		{ .mask = BIT(1), .exit_state = 1, .timeout_ms = 1000 },
		{ .mask = BIT(1), .exit_state = 1, .timeout_ms = 2000 },
	};
	int i, k, st, zero = 0;
	pthread_t th[2];
	pid_t pid;
	long r;

	if (!ast_supported())
		SKIP(return, "ast_mutex syscalls not supported");
	ASSERT_EQ(0, ast_mutex_init(m, 0, 0));
	for (k = 0; k < 20; k++) {
		ASSERT_EQ(0, ast_mutex_lock(m, BIT(0)));
		if (k < 3) {
			/* Two waiters time out, the first one set the bit. */
			for (i = 0; i < 2; i++) {
				w[i].m = m;
				w[i].started = false;
				start_waiter(_metadata, &th[i], &w[i]);
			}
			for (i = 0; i < 2; i++) {
				pthread_join(th[i], NULL);
				EXPECT_EQ(-ETIMEDOUT, w[i].got);
			}
			EXPECT_EQ((__u32)ast_gettid(), load(&m->word));
		}
		pid = fork();
		ASSERT_GE(pid, 0);
		if (!pid) {
			r = ast_mutex_lock(m, BIT(1));
			if (r != 1)
				_exit(10);
			if ((load(&m->word) & AST_MUTEX_TID_MASK) !=
			    (__u32)syscall(SYS_gettid))
				_exit(11);
			_exit(ast_mutex_unlock(m, 2) ? 12 : 0);
		}
		for (i = 0; i < 5000 && !(load(&m->word) & AST_MUTEX_WAITERS);
		     i++)
			usleep(1000);
		/* 0: nobody queued, freed in 1; the child takes it itself. */
		r = ast_sys_unlock(&m->word, 1, AST_MUTEX_HANDOFF);
		if (r != 1)
			zero++;
		ASSERT_EQ(pid, waitpid(pid, &st, 0));
		EXPECT_TRUE(WIFEXITED(st) && !WEXITSTATUS(st));
		EXPECT_EQ(2, ast_mutex_lock(m, BIT(2)));
		EXPECT_EQ(0, ast_mutex_unlock(m, 0));
	}
	EXPECT_EQ(0, zero) {
		TH_LOG("%d of 20 strict hand-offs found nobody", zero);
	}
	munmap(m, sysconf(_SC_PAGESIZE));
}

/*
 * The heir polls the owner only for a bounded time: an owner that
 * computes for 300 ms on another CPU does not keep the heir spinning in
 * the kernel.  The waiter becomes the heir by losing 8 times over more
 * than 4 ms: plain FUTEX_WAKEs on the word wake it to look again while
 * the word stays locked.
 */
struct heir_arg {
	struct ast_mutex *m;
	int cpu;
	pid_t tid;
	int got;
	double sys_ms;
	bool started;
};

static void *heir_fn(void *arg)
{
	struct heir_arg *h = arg;
	struct rusage r0, r1;

	pin_cpu(h->cpu);
	h->tid = syscall(SYS_gettid);
	__atomic_store_n(&h->started, true, __ATOMIC_SEQ_CST);
	getrusage(RUSAGE_THREAD, &r0);
	h->got = ast_sys_lock(&h->m->word, BIT(1), AST_MUTEX_PRIVATE, NULL,
			      0);
	getrusage(RUSAGE_THREAD, &r1);
	h->sys_ms = (tv_us(&r1.ru_stime) - tv_us(&r0.ru_stime)) / 1e3;
	if (h->got == 1)
		ast_sys_unlock(&h->m->word, 0, AST_MUTEX_PRIVATE);
	return NULL;
}

TEST(heir_polling_bounded)
{
	struct heir_arg h = { 0 };
	struct timespec t0;
	struct ast_mutex m;
	cpu_set_t old;
	pthread_t th;
	int cpu, k;

	if (!ast_supported())
		SKIP(return, "ast_mutex syscalls not supported");
	h.cpu = pin_to_one_cpu(&old, 1);
	sched_setaffinity(0, sizeof(old), &old);
	if (h.cpu < 0)
		SKIP(return, "needs two CPUs");
	cpu = pin_to_one_cpu(&old, 0);
	ASSERT_LE(0, cpu);
	ASSERT_EQ(0, ast_mutex_init(&m, 0, AST_MUTEX_PRIVATE));
	ASSERT_EQ(0, ast_mutex_lock(&m, BIT(0)));
	h.m = &m;
	ASSERT_EQ(0, pthread_create(&th, NULL, heir_fn, &h));
	while (!__atomic_load_n(&h.started, __ATOMIC_SEQ_CST))
		usleep(100);
	ASSERT_EQ(0, wait_in_syscall(h.tid, __NR_ast_mutex_lock));
	/* Eight losses, 2 ms apart: the last one makes it the heir. */
	for (k = 0; k < 8; k++) {
		usleep(2000);
		EXPECT_EQ(1, syscall(SYS_futex, &m.word, FUTEX_WAKE_PRIVATE,
				     1, NULL, NULL, 0));
		usleep(1000);
		ASSERT_EQ(0, wait_in_syscall(h.tid, __NR_ast_mutex_lock));
	}
	/* One more loss while the owner computes: the heir polls it. */
	EXPECT_EQ(1, syscall(SYS_futex, &m.word, FUTEX_WAKE_PRIVATE, 1, NULL,
			     NULL, 0));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (ms_since(&t0, CLOCK_MONOTONIC) < 300)
		;
	EXPECT_EQ(1, ast_sys_unlock(&m.word, 1, AST_MUTEX_PRIVATE));
	pthread_join(th, NULL);
	sched_setaffinity(0, sizeof(old), &old);
	EXPECT_EQ(1, h.got);
	TH_LOG("the heir spent %.1f ms in the kernel", h.sys_ms);
	EXPECT_LT(h.sys_ms, 100);
}

/*
 * A lock that keeps losing the race for the word to user space (another
 * CPU rewrites it all the time, so the compare-and-swap under the bucket
 * lock fails and the call retries) gives up its CPU when another task
 * needs it: a thread on the same CPU that wakes every 5 ms is never late
 * by much.  Without a reschedule point in the retry loop it waited, under
 * CONFIG_PREEMPT_VOLUNTARY, as long as the storm lasted.
 */
struct storm {
	__u32 word;
	int cpu;
	bool stop;
	pid_t tid;
	pid_t owner;
	long ret;
	long max_late_us;
};

static void *storm_writer(void *arg)
{
	struct storm *s = arg;
	__u32 self = syscall(SYS_gettid), v = self;

	pin_cpu(s->cpu);
	/*
	 * Locked by live threads of this process that are not the locker,
	 * never free: the main thread and this one, in turn (a TID that no
	 * thread of the process has would be an owner that is gone, which
	 * the lock takes over on a private word).
	 */
	while (!__atomic_load_n(&s->stop, __ATOMIC_RELAXED)) {
		__atomic_store_n(&s->word, v, __ATOMIC_RELAXED);
		v = v == self ? s->owner : self;
	}
	return NULL;
}

static void *storm_locker(void *arg)
{
	struct storm *s = arg;
	struct timespec ts;

	s->tid = syscall(SYS_gettid);
	abs_in(&ts, CLOCK_MONOTONIC, 1500);
	s->ret = ast_sys_lock(&s->word, ALL_STATES, AST_MUTEX_PRIVATE, &ts,
			      CLOCK_MONOTONIC);
	return NULL;
}

static void *storm_ticker(void *arg)
{
	struct storm *s = arg;
	struct timespec t0, t1;
	long late;

	while (!__atomic_load_n(&s->stop, __ATOMIC_RELAXED)) {
		clock_gettime(CLOCK_MONOTONIC, &t0);
		usleep(5000);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		late = (t1.tv_sec - t0.tv_sec) * 1000000L +
		       (t1.tv_nsec - t0.tv_nsec) / 1000 - 5000;
		if (late > s->max_late_us)
			s->max_late_us = late;
	}
	return NULL;
}

TEST(retry_loop_reschedules)
{
	pthread_t writer, locker, ticker;
	struct storm s = { .owner = syscall(SYS_gettid) };
	cpu_set_t old;
	int cpu;

	s.word = s.owner;
	if (!ast_supported())
		SKIP(return, "ast_mutex syscalls not supported");
	/* Locker and ticker on one CPU, the writer on another. */
	s.cpu = pin_to_one_cpu(&old, 1);
	sched_setaffinity(0, sizeof(old), &old);
	if (s.cpu < 0)
		SKIP(return, "needs two CPUs");
	cpu = pin_to_one_cpu(&old, 0);
	ASSERT_LE(0, cpu);
	ASSERT_EQ(0, pthread_create(&writer, NULL, storm_writer, &s));
	usleep(20000);
	ASSERT_EQ(0, pthread_create(&ticker, NULL, storm_ticker, &s));
	ASSERT_EQ(0, pthread_create(&locker, NULL, storm_locker, &s));
	usleep(1000000);
	__atomic_store_n(&s.stop, true, __ATOMIC_RELAXED);
	pthread_join(writer, NULL);
	pthread_join(locker, NULL);
	pthread_join(ticker, NULL);
	sched_setaffinity(0, sizeof(old), &old);
	EXPECT_EQ(-ETIMEDOUT, s.ret);
	TH_LOG("a 5 ms sleeper beside the retrying lock was up to %ld us late",
	       s.max_late_us);
	EXPECT_LT(s.max_late_us, 100000);
}

/*
 * The same for an unlock: 300 waiters for a state that never comes make
 * the unlock walk a long chain between its read of the word and its
 * compare-and-swap, while another CPU flips a bit of the word.
 */
struct ustorm {
	__u32 word;
	int cpu;
	bool stop, go, owned;
	long ret;
	struct storm st;	/* ticker */
};

static void *ustorm_flipper(void *arg)
{
	struct ustorm *u = arg;

	pin_cpu(u->cpu);
	while (!__atomic_load_n(&u->stop, __ATOMIC_RELAXED))
		__atomic_fetch_xor(&u->word, AST_MUTEX_OWNER_DIED,
				   __ATOMIC_RELAXED);
	__atomic_fetch_and(&u->word, ~AST_MUTEX_OWNER_DIED, __ATOMIC_SEQ_CST);
	return NULL;
}

static void *ustorm_owner(void *arg)
{
	struct ustorm *u = arg;

	ast_sys_lock(&u->word, BIT(0), AST_MUTEX_PRIVATE, NULL, 0);
	__atomic_store_n(&u->owned, true, __ATOMIC_SEQ_CST);
	while (!__atomic_load_n(&u->go, __ATOMIC_SEQ_CST))
		usleep(1000);
	u->ret = ast_sys_unlock(&u->word, 1, AST_MUTEX_PRIVATE);
	return NULL;
}

static void *ustorm_waiter(void *arg)
{
	struct ustorm *u = arg;

	if (ast_sys_lock(&u->word, BIT(5), AST_MUTEX_PRIVATE, NULL, 0) == 5)
		ast_sys_unlock(&u->word, 5, AST_MUTEX_PRIVATE);
	return NULL;
}

TEST_F_TIMEOUT(stress, unlock_retry_reschedules, 300)
{
	enum { NW = 300 };
	pthread_t flipper, owner, ticker, *th;
	struct ustorm u = { .word = AST_MUTEX_WORD(0) };
	pthread_attr_t attr;
	cpu_set_t old;
	int i;

	if (!ast_supported())
		SKIP(return, "ast_mutex syscalls not supported");
	u.cpu = pin_to_one_cpu(&old, 1);
	sched_setaffinity(0, sizeof(old), &old);
	if (u.cpu < 0)
		SKIP(return, "needs two CPUs");
	ASSERT_LE(0, pin_to_one_cpu(&old, 0));
	th = calloc(NW, sizeof(*th));
	ASSERT_NE(NULL, th);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	ASSERT_EQ(0, pthread_create(&owner, NULL, ustorm_owner, &u));
	while (!__atomic_load_n(&u.owned, __ATOMIC_SEQ_CST))
		usleep(1000);
	for (i = 0; i < NW; i++)
		ASSERT_EQ(0, pthread_create(&th[i], &attr, ustorm_waiter, &u));
	usleep(500000);
	EXPECT_TRUE(load(&u.word) & AST_MUTEX_WAITERS);
	ASSERT_EQ(0, pthread_create(&flipper, NULL, ustorm_flipper, &u));
	ASSERT_EQ(0, pthread_create(&ticker, NULL, storm_ticker, &u.st));
	usleep(20000);
	__atomic_store_n(&u.go, true, __ATOMIC_SEQ_CST);
	usleep(1000000);
	__atomic_store_n(&u.stop, true, __ATOMIC_SEQ_CST);
	__atomic_store_n(&u.st.stop, true, __ATOMIC_SEQ_CST);
	pthread_join(flipper, NULL);
	pthread_join(owner, NULL);
	pthread_join(ticker, NULL);
	EXPECT_EQ(0, u.ret);
	/* Free in 1: take it and leave it in 5 for the waiters. */
	EXPECT_EQ(1, ast_sys_lock(&u.word, BIT(1), AST_MUTEX_PRIVATE, NULL, 0));
	EXPECT_EQ(1, ast_sys_unlock(&u.word, 5, AST_MUTEX_PRIVATE));
	for (i = 0; i < NW; i++)
		pthread_join(th[i], NULL);
	sched_setaffinity(0, sizeof(old), &old);
	free(th);
	EXPECT_EQ(AST_MUTEX_WORD(5), load(&u.word));
	TH_LOG("a 5 ms sleeper beside the retrying unlock was up to %ld us late",
	       u.st.max_late_us);
	EXPECT_LT(u.st.max_late_us, 100000);
}

/* --------------------------------------------------------------- stress */

enum { S_EMPTY = 0, S_MID = 33, S_FULL = 63 };

struct bbuf {
	struct ast_mutex m;
	int size, count, head, tail;
	int *slot;
	int *seen;
	int items_per_producer;
	int errors;
};

static void *producer(void *arg)
{
	struct bbuf *b = ((void **)arg)[0];
	long id = (long)((void **)arg)[1];
	int i, s;

	for (i = 0; i < b->items_per_producer; i++) {
		s = ast_mutex_lock(&b->m, BIT(S_EMPTY) | BIT(S_MID));
		if (s != (b->count ? S_MID : S_EMPTY) || b->count >= b->size)
			__atomic_fetch_add(&b->errors, 1, __ATOMIC_RELAXED);
		b->slot[b->tail] = id * b->items_per_producer + i;
		b->tail = (b->tail + 1) % b->size;
		b->count++;
		ast_mutex_unlock(&b->m, b->count == b->size ? S_FULL : S_MID);
	}
	return NULL;
}

static void *consumer(void *arg)
{
	struct bbuf *b = ((void **)arg)[0];
	int i, s, item;

	for (i = 0; i < b->items_per_producer; i++) {
		s = ast_mutex_lock(&b->m, BIT(S_FULL) | BIT(S_MID));
		if (s != (b->count == b->size ? S_FULL : S_MID) || b->count <= 0)
			__atomic_fetch_add(&b->errors, 1, __ATOMIC_RELAXED);
		item = b->slot[b->head];
		b->head = (b->head + 1) % b->size;
		b->count--;
		ast_mutex_unlock(&b->m, b->count ? S_MID : S_EMPTY);
		__atomic_fetch_add(&b->seen[item], 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

TEST_F_TIMEOUT(stress, bounded_buffers, 600)
{
	static const int sizes[] = { 1, 3, 16, 256 };
	int pairs = 100, k, i, n, bad;
	pthread_attr_t attr;
	pthread_t *th;
	void **args;
	struct bbuf b;

	if (!ast_supported())
		SKIP(return, "ast_mutex syscalls not supported");
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	th = calloc(2 * pairs, sizeof(*th));
	args = calloc(4 * pairs, sizeof(*args));
	ASSERT_TRUE(th && args);
	for (k = 0; k < (int)ARRAY_SIZE(sizes); k++) {
		memset(&b, 0, sizeof(b));
		b.size = sizes[k];
		b.items_per_producer = env_int("AST_STRESS_ITEMS", 40);
		n = pairs * b.items_per_producer;
		b.slot = calloc(b.size, sizeof(int));
		b.seen = calloc(n, sizeof(int));
		ASSERT_TRUE(b.slot && b.seen);
		ASSERT_EQ(0, ast_mutex_init(&b.m, S_EMPTY, AST_MUTEX_PRIVATE));
		for (i = 0; i < pairs; i++) {
			args[2 * i] = &b;
			args[2 * i + 1] = (void *)(long)i;
			ASSERT_EQ(0, pthread_create(&th[2 * i], &attr, producer,
						    &args[2 * i]));
			ASSERT_EQ(0, pthread_create(&th[2 * i + 1], &attr,
						    consumer, &args[2 * i]));
		}
		for (i = 0; i < 2 * pairs; i++)
			pthread_join(th[i], NULL);
		for (i = 0, bad = 0; i < n; i++)
			bad += b.seen[i] != 1;
		EXPECT_EQ(0, bad);
		EXPECT_EQ(0, b.errors);
		EXPECT_EQ(0, b.count);
		EXPECT_EQ(AST_MUTEX_WORD(S_EMPTY), load(&b.m.word));
		TH_LOG("buffer size %d: %d threads, %d items, exactly once",
		       b.size, 2 * pairs, n);
		free(b.slot);
		free(b.seen);
	}
	free(th);
	free(args);
}

/* ----------------------------------------------------------------- fuzz */

static __u64 rnd_state = 0x9e3779b97f4a7c15ULL;

static __u64 rnd(void)
{
	return rand_next(&rnd_state);
}

static bool allowed(long r, const long *set, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (r == set[i])
			return true;
	return false;
}

TEST_F_TIMEOUT(stress, fuzz, 600)
{
	static const long lock_err[] = { -EINVAL, -EFAULT, -EDEADLK,
					 -ETIMEDOUT, -EOWNERDEAD };
	static const long unlock_err[] = { -EINVAL, -EFAULT, -EPERM, 0, 1 };
	long pg = sysconf(_SC_PAGESIZE), r;
	int iters = env_int("AST_FUZZ_ITERS", 20000), i, bad = 0;
	__u32 tid = syscall(SYS_gettid), before, after;
	char *rw, *ro, *gone;
	struct timespec past = { 0, 1 }, *tp;
	__u32 *addr;
	bool readable;

	if (!ast_supported())
		SKIP(return, "ast_mutex syscalls not supported");
	rw = mmap(NULL, 3 * pg, PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, rw);
	ro = rw + pg;
	gone = rw + 2 * pg;
	ASSERT_EQ(0, munmap(gone, pg));
	for (i = 0; i < iters; i++) {
		__u64 x = rnd();
		unsigned int flags = (x & 1) ? AST_MUTEX_PRIVATE : 0;
		__u32 val;
		int kind = (x >> 1) % 8;

		if (x & (1ULL << 60))
			flags |= 1U << ((x >> 40) % 32);
		switch ((x >> 8) % 4) {
		case 0:
			val = AST_MUTEX_WORD(rnd() % 64) |
			      ((x & 0x100000) ? AST_MUTEX_WAITERS : 0);
			break;
		case 1:
			val = (x & 0x200000) ? tid : tid + 1 + (rnd() % 5);
			break;
		case 2:
			val = (__u32)rnd();
			break;
		default:
			val = AST_MUTEX_OWNER_DIED;
			break;
		}
		readable = true;
		switch ((x >> 12) % 6) {
		case 0:
			addr = (__u32 *)(rw + (rnd() % (pg / 4)) * 4);
			break;
		case 1:
			addr = (__u32 *)(rw + 1 + (rnd() % (pg - 8)));
			break;
		case 2:
			addr = (__u32 *)ro;
			break;
		case 3:
			addr = (__u32 *)gone;
			readable = false;
			break;
		case 4:
			addr = NULL;
			readable = false;
			break;
		default:
			addr = (__u32 *)(uintptr_t)(0xffff800000000000ULL |
						      (rnd() & ~3ULL));
			readable = false;
			break;
		}
		if (addr == (__u32 *)ro) {
			mprotect(ro, pg, PROT_READ | PROT_WRITE);
			*addr = val;
			mprotect(ro, pg, PROT_READ);
		} else if (readable) {
			*addr = val;
		}
		before = readable ? *addr : 0;
		/* Never block: a timeout in the past, or a bad pointer. */
		tp = (x & (1ULL << 50)) ? (struct timespec *)gone : &past;
		if (kind < 5) {
			r = ast_sys_lock(addr, (x & (1ULL << 51)) ? 0 : rnd(),
					 flags, tp,
					 (x & (1ULL << 52)) ? CLOCK_REALTIME :
					 (x & (1ULL << 53)) ? (int)(rnd() % 16) :
					 CLOCK_MONOTONIC);
			after = readable ? *addr : 0;
			if (r >= 0 && r < 64)
				;
			else if (!allowed(r, lock_err, 5))
				bad++;
			/*
			 * A lock that gave up may clear a waiters bit that
			 * no queued waiter needs; nothing else changes.
			 */
			else if (r != -EOWNERDEAD && before != after &&
				 !(r == -ETIMEDOUT &&
				   after == (before & ~AST_MUTEX_WAITERS)))
				bad++;
		} else {
			r = ast_sys_unlock(addr, (x & (1ULL << 54)) ?
					   rnd() % 70 : (__u32)rnd(), flags);
			after = readable ? *addr : 0;
			if (!allowed(r, unlock_err, 5))
				bad++;
			else if (r < 0 && before != after)
				bad++;
		}
		if (bad == 1) {
			TH_LOG("iteration %d: r=%ld word %#x -> %#x", i, r,
			       before, after);
			bad++;
		}
	}
	EXPECT_EQ(0, bad);
	munmap(rw, 2 * pg);
}

/* ------------------------------------------------------------ kill storm */

/*
 * A SIGKILL storm against processes blocked in ast_mutex_lock() on a
 * process-shared word, in shared anonymous memory and then in a file on
 * the test's file system, for AST_KILL_STORM_SECONDS (environment,
 * default 3, at most 3600) each.  The test owns the word; three waiter
 * processes wait for state 1, some with short timeouts that they renew
 * (so that timeouts race the kills), and a thread in each drops the
 * process's page table entry of the word every few milliseconds (see
 * zapper_fn()); a file word is also written back now and then (msync()).
 * A waiter without a timeout touches the word only in the kernel, so its
 * entry is mostly gone when it is killed.
 * Each round kills the oldest waiter, first in line, while it sleeps in
 * the call, then unlocks into 1 with a random policy, so that the unlock
 * hands the lock to the dying waiter, wakes it to compete, or finds it
 * gone, and the waiter that gets the word leaves it in 0.  After each
 * kill the dead waiter must not own the word, and the test must get the
 * word back.  (A fatal signal kills every thread of a process, so no
 * thread survives to see a private word of the dead process; the
 * pass-on of private words is the same code.)
 */
static void storm_kid_run(__u32 *word, int timeout_ms, int zap_us)
{
	struct zapper z = { .page = word, .period_us = zap_us };
	struct timespec ts;
	pthread_t zt;
	long r;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (zap_us && pthread_create(&zt, NULL, zapper_fn, &z))
		_exit(30);
	for (;;) {
		abs_in(&ts, CLOCK_MONOTONIC, timeout_ms);
		r = ast_sys_lock(word, BIT(1), 0, timeout_ms ? &ts : NULL,
				 CLOCK_MONOTONIC);
		if (r == 1)
			_exit(ast_sys_unlock(word, 0, 0) < 0 ? 31 : 0);
		if (r != -ETIMEDOUT)
			_exit(32);
	}
}

static pid_t storm_spawn(__u32 *word, __u64 x)
{
	int timeout_ms = (x & 1) ? 5 + (x >> 8) % 45 : 0;
	pid_t pid = fork();

	if (!pid)
		storm_kid_run(word, timeout_ms, 1000 + (x >> 16) % 4000);
	return pid;
}

/* Replace the waiters that entered and left (exit status 0); count them. */
static int storm_reap(struct __test_metadata *_metadata, __u32 *word,
		      pid_t *kids, int n)
{
	int i, st, done = 0;

	for (i = 0; i < n; i++) {
		if (waitpid(kids[i], &st, WNOHANG) != kids[i])
			continue;
		done++;
		EXPECT_TRUE(WIFEXITED(st) && !WEXITSTATUS(st)) {
			TH_LOG("waiter %d: status %#x", kids[i], st);
		}
		kids[i] = storm_spawn(word, rnd());
		ASSERT_LT(0, kids[i]);
	}
	return done;
}

static void kill_storm(struct __test_metadata *_metadata, bool file,
		       int seconds)
{
	enum { NK = 3 };
	long pg = sysconf(_SC_PAGESIZE);
	__u32 *word = map_shared_page(file);
	unsigned long kills = 0, chosen = 0, entered = 0;
	__u32 me = syscall(SYS_gettid), v;
	struct timespec t0, ts;
	pid_t kids[NK], pid;
	int i, st, bad = 0;
	__u64 x;
	long r;

	ASSERT_NE(MAP_FAILED, word) {
		TH_LOG("no %s mapping", file ? "file" : "shared anonymous");
	}
	*word = AST_MUTEX_WORD(0);
	ASSERT_EQ(0, ast_sys_lock(word, BIT(0), 0, NULL, 0));
	for (i = 0; i < NK; i++) {
		kids[i] = storm_spawn(word, rnd());
		ASSERT_LT(0, kids[i]);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!bad && ms_since(&t0, CLOCK_MONOTONIC) < seconds * 1000L) {
		x = rnd();
		/*
		 * The oldest waiter, asleep in the call: one that entered
		 * and left is replaced, one with a timeout may be between
		 * two calls.
		 */
		for (i = 0; ; i++) {
			entered += storm_reap(_metadata, word, kids, NK);
			pid = kids[0];
			if (!wait_task_in_syscall_ms(pid, pid,
						     __NR_ast_mutex_lock, 20))
				break;
			if (i == 500) {
				TH_LOG("waiter %d never slept in ast_mutex_lock()",
				       pid);
				bad++;
				break;
			}
		}
		if (bad)
			break;
		if (file && !(x & 0xc))
			msync(word, pg, MS_SYNC);	/* clean, write-protect */
		if (x & 0x10)
			usleep((x >> 8) % 300);
		ASSERT_EQ(0, kill(pid, SIGKILL));
		if (x & 0x20)
			usleep((x >> 20) % 100);
		r = ast_sys_unlock(word, 1, unlock_policies[(x >> 32) % 3]);
		EXPECT_TRUE(r == 0 || r == 1);
		ASSERT_EQ(pid, waitpid(pid, &st, 0));
		EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
		kills++;
		chosen += r == 1;
		v = load(word);
		if ((v & AST_MUTEX_TID_MASK) == (__u32)pid) {
			TH_LOG("kill %lu: the killed waiter %d owns the word %#x (policy %#x)",
			       kills, pid, v, unlock_policies[(x >> 32) % 3]);
			bad++;
			break;
		}
		/* Back to the test: free in 1, or left in 0 by a waiter. */
		abs_in(&ts, CLOCK_MONOTONIC, 5000);
		r = ast_sys_lock(word, BIT(0) | BIT(1), 0, &ts,
				 CLOCK_MONOTONIC);
		if (r != 0 && r != 1) {
			TH_LOG("kill %lu: the word %#x cannot be taken back (%ld)",
			       kills, load(word), r);
			bad++;
			break;
		}
		/* Replace the victim, behind the others. */
		for (i = 0; i < NK - 1; i++)
			kids[i] = kids[i + 1];
		kids[NK - 1] = storm_spawn(word, rnd());
		ASSERT_LT(0, kids[NK - 1]);
	}
	for (i = 0; i < NK; i++) {
		kill(kids[i], SIGKILL);
		waitpid(kids[i], &st, 0);
	}
	TH_LOG("%s word: %lu waiters killed in the call, %lu chosen, %lu entered",
	       file ? "file" : "shared anonymous", kills, chosen, entered);
	/* Summed over runs by make soak, like torture's totals. */
	ksft_print_msg("totals: phase %s kills %lu chosen %lu entered %lu failures %d\n",
		       "kill_storm", kills, chosen, entered, bad);
	EXPECT_EQ(0, bad);
	if (!bad)
		EXPECT_EQ(me, load(word) & AST_MUTEX_TID_MASK);
	munmap(word, pg);
}

/*
 * At most an hour per kind of word (make soak runs it for half its time
 * on each); the timeout only has to outlast that, the runner's own
 * timeout (run_kselftest.sh -o) bounds a short run.
 */
TEST_F_TIMEOUT(stress, kill_storm, 7500)
{
	int seconds = env_int("AST_KILL_STORM_SECONDS", 3);

	if (!ast_supported())
		SKIP(return, "ast_mutex syscalls not supported");
	if (seconds > 3600)
		seconds = 3600;
	kill_storm(_metadata, false, seconds);
	kill_storm(_metadata, true, seconds);
}

TEST_HARNESS_MAIN
