// SPDX-License-Identifier: GPL-2.0
/*
 * ast_fuzz: a time-bounded, seeded fuzzer of the ast_mutex_lock() and
 * ast_mutex_unlock() system calls used as a hostile or careless program
 * would use them.
 *
 * Worker processes (-p, default 3) of several threads (-t, default 3)
 * each run random operations until the deadline (-d seconds, default
 * 15):
 *
 *   - ast_mutex_lock() with random entry sets (empty ones too), flags
 *     (private or shared, stray bits), clocks and short absolute
 *     timeouts, rarely none, on "chaos" words in shared memory and on a
 *     per-process private page; a lock that succeeds is held briefly and
 *     left with ast_mutex_unlock() into a random state and policy, or
 *     kept;
 *   - ast_mutex_unlock() of random words, states and flags;
 *   - user-space overwrites of the chaos words with random values: free
 *     words with and without the waiters bit, the own TID, other TIDs,
 *     dead owners, garbage;
 *   - plain and PI futex calls on the same words: FUTEX_WAKE, FUTEX_WAIT,
 *     FUTEX_WAKE_BITSET, FUTEX_CMP_REQUEUE (which moves AST waiters to
 *     another word), FUTEX_CMP_REQUEUE_PI, FUTEX_LOCK_PI, FUTEX_TRYLOCK_PI,
 *     FUTEX_UNLOCK_PI;
 *   - the private page is rewritten, made read-only or inaccessible, and
 *     mapped again (zeroed) under the other threads' calls;
 *   - robust mutexes (the ast_mutex.h library) locked and unlocked with
 *     timeouts.
 *
 * Meanwhile the parent sends SIGSTOP/SIGCONT and SIGKILL storms to the
 * workers (a killed worker is replaced), and now and then kills a
 * process blocked in ast_mutex_lock() on a word the parent owns, then
 * unlocks that word into the state the victim waits for, with a random
 * policy: the dead victim must never own it.
 *
 * Checked: every ast_mutex call returns a state or a documented errno
 * (lock: 0..63, -EOWNERDEAD, -EINVAL, -EFAULT, -EDEADLK, -ETIMEDOUT;
 * unlock: 0, 1, -EINVAL, -EFAULT, -EPERM); no mutex is owned by a task
 * that has exited (the victims' word; the robust words once every worker
 * is dead); every worker dies within 30 s of SIGKILL (no task is stuck
 * in the kernel).  The kernel's own checks (lockdep, KASAN, kmemleak,
 * the hung-task and soft-lockup detectors) do the rest in the debug boot.
 *
 * With -F (fault injection, as the torture kselftest runs it), every
 * worker thread and victim marks itself in /proc/thread-self/make-it-fail,
 * so that the kernel allocations of its calls (futex keys of shared
 * words, page faults, mmap) fail at random where failslab or
 * fail_page_alloc is set up, and -ENOMEM is then also a documented
 * answer.
 *
 * The seed (-s, default from the clock) is printed first: the same seed
 * gives every thread the same sequence of operations, though not the
 * same interleaving.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/futex.h>
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
#include <sys/syscall.h>
#include <sys/wait.h>

#include "../kselftest.h"
#include "ast_mutex.h"
#include "sched_util.h"
#include "sysfs_util.h"

#define NCHAOS		16
#define NROBUST		4
#define NFLAPPY		16
#define MAX_PROCS	16
#define MAX_THREADS	16

/* Everything the processes share, mapped before the first fork(). */
struct shared {
	__u32 chaos[NCHAOS];
	__u32 victim_word;
	struct ast_mutex robust[NROBUST];
	unsigned long deadline_ns;
	int stop;
	/* Counters, added to by every thread now and then. */
	unsigned long lock_calls, unlock_calls, futex_calls, other_ops;
	unsigned long locked, timeouts, faults, nomem;
	unsigned long bad;
	char bad_msg[160];
};

static struct shared *sh;
static unsigned long seed;
static int nprocs = 3, nthreads = 3, seconds = 15;
static bool fault_mode;

static __u64 mix(__u64 a, __u64 b)
{
	__u64 s = a ^ (b * 0x9e3779b97f4a7c15ULL);

	return s ? s : 1;
}

static void report_bad(const char *what, long r, __u32 word)
{
	if (__atomic_fetch_add(&sh->bad, 1, __ATOMIC_SEQ_CST) == 0)
		snprintf(sh->bad_msg, sizeof(sh->bad_msg),
			 "%s returned %ld (word %#x)", what, r, word);
}

/* -ENOMEM, counted: a failed allocation, only under -F. */
static bool nomem(long r)
{
	if (r != -ENOMEM || !fault_mode)
		return false;
	__atomic_fetch_add(&sh->nomem, 1, __ATOMIC_RELAXED);
	return true;
}

static bool lock_ok(long r)
{
	return (r >= 0 && r < AST_MUTEX_MAX_STATES) || r == -EOWNERDEAD ||
	       r == -EINVAL || r == -EFAULT || r == -EDEADLK ||
	       r == -ETIMEDOUT || nomem(r);
}

static bool unlock_ok(long r)
{
	return r == 0 || r == 1 || r == -EINVAL || r == -EFAULT ||
	       r == -EPERM || nomem(r);
}

/* -F: this thread's kernel allocations fail at random from now on. */
static void mark_for_faults(void)
{
	int ret;

	if (!fault_mode)
		return;
	ret = sysfs_write_str("/proc/thread-self/make-it-fail", "1");
	if (ret)
		report_bad("make-it-fail", ret, 0);
}

/* A per-process private page that one thread keeps remapping. */
static char *flappy;
static long pagesz;

struct worker {
	int proc, idx, gen;
	__u64 rnd;
	unsigned long lock_calls, unlock_calls, futex_calls, other_ops;
	unsigned long locked, timeouts, faults;
};

static void flush(struct worker *w)
{
	__atomic_fetch_add(&sh->lock_calls, w->lock_calls, __ATOMIC_RELAXED);
	__atomic_fetch_add(&sh->unlock_calls, w->unlock_calls,
			   __ATOMIC_RELAXED);
	__atomic_fetch_add(&sh->futex_calls, w->futex_calls, __ATOMIC_RELAXED);
	__atomic_fetch_add(&sh->other_ops, w->other_ops, __ATOMIC_RELAXED);
	__atomic_fetch_add(&sh->locked, w->locked, __ATOMIC_RELAXED);
	__atomic_fetch_add(&sh->timeouts, w->timeouts, __ATOMIC_RELAXED);
	__atomic_fetch_add(&sh->faults, w->faults, __ATOMIC_RELAXED);
	w->lock_calls = 0;
	w->unlock_calls = 0;
	w->futex_calls = 0;
	w->other_ops = 0;
	w->locked = 0;
	w->timeouts = 0;
	w->faults = 0;
}

static __u32 *pick_word(struct worker *w, bool *kernel_only)
{
	__u64 x = rand_next(&w->rnd);

	*kernel_only = false;
	switch (x % 8) {
	case 0:
		/* Another word's neighbour, misaligned, or NULL. */
		*kernel_only = true;
		if (x & 0x100)
			return NULL;
		return (__u32 *)((char *)&sh->chaos[(x >> 8) % NCHAOS] + 1 +
				 (x >> 16) % 3);
	case 1:
	case 2:
		*kernel_only = true;
		return (__u32 *)flappy + (x >> 8) % NFLAPPY;
	default:
		return &sh->chaos[(x >> 8) % NCHAOS];
	}
}

static __u32 random_value(struct worker *w, __u32 tid)
{
	__u64 x = rand_next(&w->rnd);
	__u32 waiters = (x & 0x10) ? AST_MUTEX_WAITERS : 0;

	switch ((x >> 8) % 7) {
	case 0:
	case 1:
		return AST_MUTEX_WORD((x >> 16) % 64) | waiters;
	case 2:
		return tid | waiters;
	case 3:
		return (tid + 1 + (x >> 16) % 3) | waiters;
	case 4:
		return AST_MUTEX_OWNER_DIED | waiters;
	case 5:
		return 0;
	default:
		return (__u32)(x >> 24);
	}
}

static unsigned int random_flags(struct worker *w, bool unlock)
{
	__u64 x = rand_next(&w->rnd);
	unsigned int f = (x & 1) ? AST_MUTEX_PRIVATE : 0;

	if (unlock && (x & 6) == 2)
		f |= AST_MUTEX_HANDOFF;
	if (unlock && (x & 6) == 4)
		f |= AST_MUTEX_WAKE_ONLY;
	if ((x & 0xf0) == 0)
		f |= 1U << ((x >> 8) % 32);	/* stray bit */
	return f;
}

static void ast_op(struct worker *w, __u32 tid)
{
	__u64 x = rand_next(&w->rnd);
	bool kernel_only;
	__u32 *word = pick_word(w, &kernel_only);
	unsigned int flags = random_flags(w, false);
	clockid_t clk = (x & 2) ? CLOCK_REALTIME : CLOCK_MONOTONIC;
	struct timespec ts, *tp = &ts;
	__u64 mask;
	long r, u;

	abs_time_ns(&ts, clk, (x >> 8) % 3000000);
	if ((x >> 32) % 64 == 0)
		tp = NULL;	/* may sleep until SIGKILL */
	mask = (x & 0x4000) ? rand_next(&w->rnd) :
	       AST_MUTEX_STATE_BIT((x >> 16) % 64) |
	       AST_MUTEX_STATE_BIT((x >> 24) % 64);
	if ((x >> 40) % 32 == 0)
		mask = 0;
	w->lock_calls++;
	r = ast_sys_lock(word, mask, flags, tp, clk);
	if (!lock_ok(r))
		report_bad("ast_mutex_lock", r, kernel_only ? 0 : *word);
	if (r == -ETIMEDOUT)
		w->timeouts++;
	if (r == -EFAULT)
		w->faults++;
	if (r < 0 && r != -EOWNERDEAD)
		return;
	w->locked++;
	if ((x >> 48) % 16 == 0)
		return;		/* keep it: the others time out */
	if ((x >> 52) % 4 == 0)
		sched_yield();
	w->unlock_calls++;
	u = ast_sys_unlock(word, (x >> 56) % 64,
			   (flags & AST_MUTEX_PRIVATE) |
			   (random_flags(w, true) & ~AST_MUTEX_PRIVATE));
	if (!unlock_ok(u))
		report_bad("ast_mutex_unlock", u, kernel_only ? 0 : *word);
}

static void unlock_op(struct worker *w)
{
	__u64 x = rand_next(&w->rnd);
	bool kernel_only;
	__u32 *word = pick_word(w, &kernel_only);
	long r;

	w->unlock_calls++;
	r = ast_sys_unlock(word, (x & 1) ? (__u32)(x >> 8) : (x >> 8) % 64,
			   random_flags(w, true));
	if (!unlock_ok(r))
		report_bad("ast_mutex_unlock", r, kernel_only ? 0 : *word);
}

static void overwrite_op(struct worker *w, __u32 tid)
{
	__u64 x = rand_next(&w->rnd);

	w->other_ops++;
	__atomic_store_n(&sh->chaos[x % NCHAOS], random_value(w, tid),
			 __ATOMIC_RELAXED);
}

static void futex_op(struct worker *w, __u32 tid)
{
	__u64 x = rand_next(&w->rnd);
	int priv = (x & 1) ? FUTEX_PRIVATE_FLAG : 0;
	__u32 *a = &sh->chaos[(x >> 8) % NCHAOS];
	__u32 *b = &sh->chaos[(x >> 16) % NCHAOS];
	struct timespec rel = { 0, (x >> 24) % 2000000 }, abs;

	w->futex_calls++;
	switch ((x >> 4) % 9) {
	case 0:
		syscall(SYS_futex, a, FUTEX_WAKE | priv, (int)(x >> 32) % 4,
			NULL, NULL, 0);
		break;
	case 1:
		syscall(SYS_futex, a, FUTEX_WAIT | priv, *a, &rel, NULL, 0);
		break;
	case 2:
		syscall(SYS_futex, a, FUTEX_WAKE_BITSET | priv, 2, NULL, NULL,
			(__u32)(x >> 32) | 1);
		break;
	case 3:
	case 4:
		/* Moves AST waiters to another word. */
		syscall(SYS_futex, a, FUTEX_CMP_REQUEUE | priv,
			(int)(x >> 32) % 2, (unsigned long)((x >> 40) % 3), b,
			*a);
		break;
	case 5:
		syscall(SYS_futex, a, FUTEX_CMP_REQUEUE_PI | priv, 1,
			1UL, b, *a);
		break;
	case 6:
		abs_time_ns(&abs, CLOCK_REALTIME, rel.tv_nsec);
		if (!syscall(SYS_futex, a, FUTEX_LOCK_PI | priv, 0, &abs,
			     NULL, 0))
			syscall(SYS_futex, a, FUTEX_UNLOCK_PI | priv, 0, NULL,
				NULL, 0);
		break;
	case 7:
		if (!syscall(SYS_futex, a, FUTEX_TRYLOCK_PI | priv, 0, NULL,
			     NULL, 0) && (x & 0x10000))
			syscall(SYS_futex, a, FUTEX_UNLOCK_PI | priv, 0, NULL,
				NULL, 0);
		break;
	default:
		syscall(SYS_futex, a, FUTEX_UNLOCK_PI | priv, 0, NULL, NULL,
			0);
		break;
	}
	(void)tid;
}

/* Only thread 0 of a process touches its private page from user space. */
static void flap_op(struct worker *w, __u32 tid)
{
	__u64 x = rand_next(&w->rnd);
	__u32 *p = (__u32 *)flappy;
	int i;

	w->other_ops++;
	switch (x % 4) {
	case 0:
		if (mprotect(flappy, pagesz, PROT_READ | PROT_WRITE))
			break;
		for (i = 0; i < NFLAPPY; i++)
			__atomic_store_n(&p[i], random_value(w, tid),
					 __ATOMIC_RELAXED);
		if (x & 0x100)
			mprotect(flappy, pagesz, PROT_READ);
		break;
	case 1:
		mprotect(flappy, pagesz, PROT_READ);
		break;
	case 2:
		/*
		 * "Unmapped": no access at all, but the address stays
		 * reserved, so no other mapping can land there.
		 */
		mmap(flappy, pagesz, PROT_NONE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		break;
	default:
		mmap(flappy, pagesz, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		break;
	}
}

static void robust_op(struct worker *w)
{
	__u64 x = rand_next(&w->rnd);
	struct ast_mutex *m = &sh->robust[x % NROBUST];
	struct timespec ts;
	long r;

	abs_time_ns(&ts, CLOCK_MONOTONIC, 1000000 + (x >> 8) % 4000000);
	w->lock_calls++;
	r = ast_mutex_timedlock(m, AST_MUTEX_STATE_BIT((x >> 16) % 4) |
				AST_MUTEX_STATE_BIT((x >> 20) % 4), &ts,
				CLOCK_MONOTONIC);
	if (!lock_ok(r) || r == -EINVAL || r == -EFAULT || r == -EDEADLK)
		report_bad("robust ast_mutex_lock", r, m->word);
	if (r < 0 && r != -EOWNERDEAD) {
		if (r == -ETIMEDOUT)
			w->timeouts++;
		return;
	}
	w->locked++;
	if ((x >> 32) % 4 == 0)
		sched_yield();
	w->unlock_calls++;
	r = ast_mutex_unlock(m, (x >> 40) % 4);
	if (r && !nomem(r))
		report_bad("robust ast_mutex_unlock", r, m->word);
}

static void *worker_fn(void *arg)
{
	struct worker *w = arg;
	__u32 tid = syscall(SYS_gettid);
	unsigned long n = 0;
	__u64 x;

	mark_for_faults();
	while (!__atomic_load_n(&sh->stop, __ATOMIC_RELAXED) &&
	       now_ns() < sh->deadline_ns) {
		x = rand_next(&w->rnd) % 100;
		if (x < 35)
			ast_op(w, tid);
		else if (x < 50)
			unlock_op(w);
		else if (x < 62)
			overwrite_op(w, tid);
		else if (x < 80)
			futex_op(w, tid);
		else if (x < 85 && w->idx == 0)
			flap_op(w, tid);
		else
			robust_op(w);
		if (++n % 64 == 0)
			flush(w);
	}
	flush(w);
	return NULL;
}

static void worker_process(int proc, int gen)
{
	struct worker w[MAX_THREADS];
	pthread_t th[MAX_THREADS];
	int i;

	flappy = mmap(NULL, pagesz, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (flappy == MAP_FAILED)
		_exit(2);
	for (i = 0; i < NFLAPPY; i++)
		((__u32 *)flappy)[i] = AST_MUTEX_WORD(i);
	for (i = 0; i < nthreads; i++) {
		memset(&w[i], 0, sizeof(w[i]));
		w[i].proc = proc;
		w[i].idx = i;
		w[i].gen = gen;
		w[i].rnd = mix(seed, (__u64)proc << 32 | (__u64)gen << 8 | i);
		if (pthread_create(&th[i], NULL, worker_fn, &w[i]))
			_exit(3);
	}
	for (i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	_exit(0);
}

static pid_t spawn(int proc, int gen)
{
	pid_t pid = fork();

	if (!pid)
		worker_process(proc, gen);
	return pid;
}

/* SIGKILL @pid and reap it; false if it is still there after 30 s. */
static bool kill_and_reap(pid_t pid)
{
	int st;

	kill(pid, SIGCONT);
	kill(pid, SIGKILL);
	if (waitpid_ms(pid, &st, 30000) == pid)
		return true;
	ksft_print_msg("process %d did not die within 30 s of SIGKILL\n", pid);
	return false;
}

/*
 * Kill a process that waits in ast_mutex_lock() for a word the parent
 * owns, then unlock into the state it waits for: the dead process must
 * not own the word.  Returns 1 if it was handed or woken, 0 if not, -1
 * on a violation, -2 if the victim did not die.
 */
static int victim_round(__u64 *rnd, __u32 me)
{
	static const unsigned int policies[] = {
		0, AST_MUTEX_HANDOFF, AST_MUTEX_WAKE_ONLY
	};
	__u64 x = rand_next(rnd);
	unsigned long t0;
	long r;
	__u32 v;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return 0;
	if (!pid) {
		mark_for_faults();
		ast_sys_lock(&sh->victim_word, AST_MUTEX_STATE_BIT(1), 0, NULL,
			     0);
		_exit(0);
	}
	/* The waiters bit: the victim is in the kernel, about to sleep. */
	t0 = now_ns();
	while (!(__atomic_load_n(&sh->victim_word, __ATOMIC_SEQ_CST) &
		 AST_MUTEX_WAITERS) && now_ns() - t0 < 2000000000UL)
		usleep(200);
	if ((x >> 8) % 2)
		usleep((x >> 16) % 500);
	kill(pid, SIGKILL);
	r = ast_sys_unlock(&sh->victim_word, 1, policies[x % 3]);
	if (!kill_and_reap(pid))
		return -2;
	v = __atomic_load_n(&sh->victim_word, __ATOMIC_SEQ_CST);
	if ((v & AST_MUTEX_TID_MASK) == (__u32)pid) {
		ksft_print_msg("victim %d died owning the word %#x (policy %u)\n",
			       pid, v, policies[x % 3]);
		__atomic_store_n(&sh->victim_word, me, __ATOMIC_SEQ_CST);
		return -1;
	}
	/* Take it back: the unlock, or the victim's pass-on, freed it in 1. */
	if (ast_sys_lock(&sh->victim_word, AST_MUTEX_STATE_BIT(1), 0, NULL,
			 0) != 1) {
		ksft_print_msg("victim word %#x cannot be taken back\n", v);
		__atomic_store_n(&sh->victim_word, me, __ATOMIC_SEQ_CST);
		return -1;
	}
	return r == 1;
}

static void bad_args(void)
{
	fprintf(stderr, "usage: %s [-s seed] [-d seconds] [-p procs] [-t threads] [-F]\n",
		"ast_fuzz");
	exit(KSFT_FAIL);
}

int main(int argc, char **argv)
{
	pid_t pids[MAX_PROCS];
	int gens[MAX_PROCS];
	unsigned long kills = 0, stops = 0, victims = 0, handed = 0;
	int i, c, bad_victims = 0, hung = 0, robust_bad = 0;
	__u32 me = syscall(SYS_gettid), v;
	__u64 rnd;

	seed = now_ns() ^ getpid();
	while ((c = getopt(argc, argv, "s:d:p:t:Fh")) != -1) {
		switch (c) {
		case 's':
			seed = strtoul(optarg, NULL, 0);
			break;
		case 'd':
			seconds = atoi(optarg);
			break;
		case 'p':
			nprocs = atoi(optarg);
			break;
		case 't':
			nthreads = atoi(optarg);
			break;
		case 'F':
			fault_mode = true;
			break;
		default:
			bad_args();
		}
	}
	if (nprocs < 1 || nprocs > MAX_PROCS || nthreads < 1 ||
	    nthreads > MAX_THREADS || seconds < 1)
		bad_args();

	ksft_print_header();
	ksft_print_msg("seed=%lu duration=%d s processes=%d threads=%d",
		       seed, seconds, nprocs, nthreads);
	printf(" (replay: ast_fuzz -s %lu%s)\n", seed, fault_mode ? " -F" : "");
	pagesz = sysconf(_SC_PAGESIZE);
	{
		__u32 w = AST_MUTEX_WORD(0);

		if (!(syscall(__NR_ast_mutex_unlock, &w, 0, 0) < 0 &&
		      errno == EPERM))
			ksft_exit_skip("ast_mutex syscalls not supported\n");
	}
	ksft_set_plan(4);
	sh = mmap(NULL, (sizeof(*sh) + pagesz - 1) & ~(pagesz - 1),
		  PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		ksft_exit_fail_msg("mmap: %s\n", strerror(errno));
	for (i = 0; i < NCHAOS; i++)
		sh->chaos[i] = AST_MUTEX_WORD(i % 4);
	for (i = 0; i < NROBUST; i++)
		ast_mutex_init(&sh->robust[i], 0, AST_MUTEX_ROBUST);
	/* The parent owns the victims' word. */
	sh->victim_word = me;
	sh->deadline_ns = now_ns() + seconds * 1000000000UL;
	rnd = mix(seed, 0xfeedULL);

	for (i = 0; i < nprocs; i++) {
		gens[i] = 0;
		pids[i] = spawn(i, 0);
	}
	while (now_ns() < sh->deadline_ns) {
		__u64 x = rand_next(&rnd);

		i = x % nprocs;
		switch ((x >> 8) % 10) {
		case 0:
		case 1:
		case 2:
			if (pids[i] > 0 && !kill(pids[i], SIGSTOP)) {
				stops++;
				usleep((x >> 16) % 3000);
				kill(pids[i], SIGCONT);
			}
			break;
		case 3:
		case 4:
			if (pids[i] > 0) {
				kills++;
				if (!kill_and_reap(pids[i])) {
					hung++;
					goto out;
				}
			}
			pids[i] = spawn(i, ++gens[i]);
			break;
		case 5:
		case 6:
			c = victim_round(&rnd, me);
			victims++;
			if (c == -2) {
				hung++;
				goto out;
			}
			if (c < 0)
				bad_victims++;
			else
				handed += c;
			break;
		default:
			usleep((x >> 16) % 5000);
			break;
		}
	}

out:
	/* Let the workers stop, then kill them: each must die. */
	__atomic_store_n(&sh->stop, 1, __ATOMIC_SEQ_CST);
	usleep(200000);
	for (i = 0; i < nprocs; i++)
		if (pids[i] > 0 && !kill_and_reap(pids[i]))
			hung++;

	/* Every worker is dead: no robust word may name one of them. */
	for (i = 0; i < NROBUST; i++) {
		v = __atomic_load_n(&sh->robust[i].word, __ATOMIC_SEQ_CST);
		if (!(v & AST_MUTEX_FREE) && (v & AST_MUTEX_TID_MASK)) {
			ksft_print_msg("robust mutex %d owned by dead task: %#x\n",
				       i, v);
			robust_bad++;
		}
	}

	ksft_print_msg("calls: %lu lock, %lu unlock, %lu futex, %lu other;",
		       sh->lock_calls, sh->unlock_calls, sh->futex_calls,
		       sh->other_ops);
	printf(" %lu locked, %lu timed out, %lu faulted, %lu ENOMEM\n",
	       sh->locked, sh->timeouts, sh->faults, sh->nomem);
	ksft_print_msg("storms: %lu SIGKILL, %lu SIGSTOP;", kills, stops);
	printf(" %lu waiters killed in ast_mutex_lock, %lu chosen by the unlock\n",
	       victims, handed);
	if (sh->bad)
		ksft_print_msg("%lu bad returns, the first: %s\n", sh->bad,
			       sh->bad_msg);
	ksft_test_result(!sh->bad, "every call returned a state or a documented errno\n");
	ksft_test_result(!bad_victims, "no killed waiter owns a mutex (%lu victims)\n",
			 victims);
	ksft_test_result(!robust_bad, "no robust mutex owned by a dead task\n");
	ksft_test_result(!hung, "every worker died on SIGKILL\n");
	ksft_print_msg("seed=%lu\n", seed);
	ksft_finished();
	return 0;
}
