/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ast_mutex: the user-space half of AST-sync (header-only).
 *
 * A mutex whose entry is guarded by a set of abstract states and whose
 * exit names the new state (Ohki & Kuno, "State Abstraction-based
 * Synchronization for Thread Libraries", section 2.3), over the
 * ast_mutex_lock() and ast_mutex_unlock() system calls.  Uncontended
 * entry and exit are one compare-and-swap on the word and never enter
 * the kernel.  See Documentation/userspace-api/ast_mutex.rst.
 *
 *	struct ast_mutex m;
 *	ast_mutex_init(&m, S_EMPTY, 0);
 *	s = ast_mutex_lock(&m, AST_MUTEX_STATE_BIT(S_EMPTY) |
 *			       AST_MUTEX_STATE_BIT(S_MID));
 *	... s is the state entered in ...
 *	ast_mutex_unlock(&m, full ? S_FULL : S_MID);
 *
 * Every call returns a negative errno value on failure; the locks return
 * the state index entered in (>= 0) on success.
 *
 * Threads and fork: the owner is named by its TID, cached per thread;
 * the cache is reset in the child of fork() by a pthread_atfork()
 * handler that ast_mutex_init() installs.
 *
 * Robust mutexes (AST_MUTEX_ROBUST): the mutex is kept on a per-thread
 * robust list that this library registers with set_robust_list(); this
 * replaces the C library's list for that thread, so do not mix them with
 * robust pthread mutexes in one thread.  Robust mutexes use the
 * process-shared futex key, which is the one the kernel's dead-owner
 * wake-up uses.
 */
#ifndef _AST_MUTEX_USER_H
#define _AST_MUTEX_USER_H

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/futex.h>
#include <linux/ast_mutex.h>

#ifndef __NR_ast_mutex_lock
#define __NR_ast_mutex_lock	463
#endif
#ifndef __NR_ast_mutex_unlock
#define __NR_ast_mutex_unlock	464
#endif

/* User-level attribute flags of ast_mutex_init(), beside the uapi ones. */
#define AST_MUTEX_ROBUST	0x00010000U
/* Unlock with AST_MUTEX_WAKE_ONLY: wake a matching waiter, no hand-off. */
#define AST_MUTEX_COMPETE	0x00020000U
/* Unlock with AST_MUTEX_HANDOFF: always hand off (the paper's policy). */
#define AST_MUTEX_STRICT	0x00040000U

/*
 * Polls of a word that is locked, or free in a state outside the entry
 * set, before the lock sleeps in the kernel: a short critical section on
 * another CPU ends within them, and taking the mutex in user space saves
 * a sleep and a wake-up (a wake-up of another CPU is the dearest part of
 * a hand-over).  A thread whose affinity allows a single CPU does not
 * poll: the owner cannot run while it does (measured: polling cut the
 * 1-CPU bounded buffer from about 65 to 9 items/ms).  The affinity is read
 * once per thread, at its first contended lock.
 */
#ifndef AST_MUTEX_SPIN
#define AST_MUTEX_SPIN		200
#endif

/**
 * struct ast_mutex - an AST-sync mutex
 * @word: the 32-bit word the kernel knows (see linux/ast_mutex.h)
 * @flags: AST_MUTEX_PRIVATE and/or AST_MUTEX_ROBUST
 * @list: link on the owner's robust list (AST_MUTEX_ROBUST)
 */
struct ast_mutex {
	__u32 word;
	__u32 flags;
	struct robust_list list;
};

static __thread pid_t ast_tid_cache;
/* Calls this thread made into the kernel, for tests of the fast paths. */
static __thread unsigned long ast_kernel_calls;
static __thread int ast_robust_ready;
/* 1: this thread may run on several CPUs, 0: on one, -1: not known yet. */
static __thread int ast_multi_cpu = -1;
static __thread struct robust_list_head ast_robust_head;
static pthread_once_t ast_once = PTHREAD_ONCE_INIT;

static inline void ast_atfork_child(void)
{
	ast_tid_cache = 0;
	/* The child starts with no robust list (the kernel clears it). */
	ast_robust_ready = 0;
}

static inline void ast_install_atfork(void)
{
	pthread_atfork(NULL, NULL, ast_atfork_child);
}

static inline pid_t ast_gettid(void)
{
	if (!ast_tid_cache)
		ast_tid_cache = syscall(SYS_gettid);
	return ast_tid_cache;
}

/* Raw system calls; return 0/value or -errno. */
static inline long ast_sys_lock(__u32 *uaddr, __u64 mask,
				unsigned int flags,
				const struct timespec *abstime, clockid_t clk)
{
	long ret;

	ast_kernel_calls++;
	ret = syscall(__NR_ast_mutex_lock, uaddr, AST_MUTEX_MASK_LO(mask),
		      AST_MUTEX_MASK_HI(mask), flags, abstime, clk);

	return ret < 0 ? -errno : ret;
}

static inline long ast_sys_unlock(__u32 *uaddr, unsigned int state,
				  unsigned int flags)
{
	long ret;

	ast_kernel_calls++;
	ret = syscall(__NR_ast_mutex_unlock, uaddr, state, flags);

	return ret < 0 ? -errno : ret;
}

/**
 * ast_mutex_init() - initialise a mutex, free in @state
 * @m: the mutex (in shared memory for a process-shared one)
 * @state: initial abstract state, 0 .. AST_MUTEX_MAX_STATES - 1
 * @flags: AST_MUTEX_PRIVATE (one process only), AST_MUTEX_ROBUST, and at
 *	most one unlock policy: AST_MUTEX_COMPETE (unlocks wake a waiter
 *	instead of handing over) or AST_MUTEX_STRICT (unlocks always hand
 *	over); the default is the kernel's adaptive hand-off
 *
 * Return: 0, or -EINVAL.
 */
static inline int ast_mutex_init(struct ast_mutex *m, unsigned int state,
				 unsigned int flags)
{
	if (state >= AST_MUTEX_MAX_STATES ||
	    (flags & ~(AST_MUTEX_PRIVATE | AST_MUTEX_ROBUST |
		       AST_MUTEX_COMPETE | AST_MUTEX_STRICT)) ||
	    ((flags & AST_MUTEX_COMPETE) && (flags & AST_MUTEX_STRICT)) ||
	    ((flags & AST_MUTEX_ROBUST) && (flags & AST_MUTEX_PRIVATE)))
		return -EINVAL;
	pthread_once(&ast_once, ast_install_atfork);
	m->flags = flags;
	m->list.next = NULL;
	__atomic_store_n(&m->word, AST_MUTEX_WORD(state), __ATOMIC_RELEASE);
	return 0;
}

/**
 * ast_mutex_destroy() - destroy a mutex
 * @m: the mutex; it must be free and have no waiters
 *
 * Return: 0, or -EBUSY if it is locked or has waiters.
 */
static inline int ast_mutex_destroy(struct ast_mutex *m)
{
	__u32 v = __atomic_load_n(&m->word, __ATOMIC_ACQUIRE);

	if (!(v & AST_MUTEX_FREE) || (v & AST_MUTEX_WAITERS))
		return -EBUSY;
	m->word = 0;
	return 0;
}

static inline unsigned int ast_mutex_kflags(const struct ast_mutex *m)
{
	return m->flags & AST_MUTEX_FLAGS_MASK;
}

static inline int ast_robust_setup(void)
{
	if (ast_robust_ready)
		return 0;
	ast_robust_head.list.next = &ast_robust_head.list;
	ast_robust_head.futex_offset = (long)offsetof(struct ast_mutex, word) -
				       (long)offsetof(struct ast_mutex, list);
	ast_robust_head.list_op_pending = NULL;
	if (syscall(SYS_set_robust_list, &ast_robust_head,
		    sizeof(ast_robust_head)))
		return -errno;
	ast_robust_ready = 1;
	return 0;
}

static inline void ast_cpu_relax(void)
{
#if defined(__x86_64__)
	__builtin_ia32_pause();
#else
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
#endif
}

static inline int ast_word_enterable(__u32 v, __u64 mask)
{
	return (v & AST_MUTEX_FREE) &&
	       !(v & AST_MUTEX_TID_MASK & ~(AST_MUTEX_FREE | AST_MUTEX_STATE_MASK)) &&
	       (mask & AST_MUTEX_STATE_BIT(v & AST_MUTEX_STATE_MASK));
}

/* One CAS from an enterable word to the caller's TID (keeps WAITERS). */
static inline int ast_try_enter(struct ast_mutex *m, __u32 v)
{
	return __atomic_compare_exchange_n(&m->word, &v,
					   (__u32)ast_gettid() |
					   (v & AST_MUTEX_WAITERS), 0,
					   __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

/*
 * User-space part of a lock: the state entered in, or -1.  Polls while
 * the word is locked by another thread or free in a state outside
 * @mask, which another CPU may change at any moment.
 */
/* May polling pay off?  Only if another CPU can run the owner. */
static inline int ast_may_poll(void)
{
	unsigned long set[16];
	long n, i;
	int cpus = 0;

	if (ast_multi_cpu < 0) {
		n = syscall(SYS_sched_getaffinity, 0, sizeof(set), set);
		if (n <= 0) {
			ast_multi_cpu = 1;	/* more CPUs than the set holds */
		} else {
			for (i = 0; i < n / (long)sizeof(set[0]); i++)
				cpus += __builtin_popcountl(set[i]);
			ast_multi_cpu = cpus > 1;
		}
	}
	return ast_multi_cpu;
}

static inline int ast_lock_fast(struct ast_mutex *m, __u64 mask)
{
	__u32 v;
	int i;

	for (i = 0; i <= AST_MUTEX_SPIN; i++) {
		if (i == 1 && !ast_may_poll())
			return -1;
		v = __atomic_load_n(&m->word, __ATOMIC_RELAXED);
		if (ast_word_enterable(v, mask)) {
			if (ast_try_enter(m, v))
				return v & AST_MUTEX_STATE_MASK;
			continue;
		}
		/* Our own, a dead owner's or not an AST word: the kernel. */
		if (!(v & AST_MUTEX_TID_MASK) ||
		    (v & AST_MUTEX_TID_MASK) == (__u32)ast_gettid())
			return -1;
		ast_cpu_relax();
	}
	return -1;
}

static inline void ast_robust_pending(struct ast_mutex *m)
{
	__atomic_store_n(&ast_robust_head.list_op_pending,
			 m ? &m->list : NULL, __ATOMIC_SEQ_CST);
}

/**
 * ast_mutex_timedlock() - enter @m in one of the states of @mask
 * @m: the mutex
 * @mask: the entry set, AST_MUTEX_STATE_BIT(s) for every allowed s
 * @abstime: NULL, or an absolute timeout on @clk
 * @clk: CLOCK_MONOTONIC or CLOCK_REALTIME
 *
 * Return: the state entered in (>= 0); -EOWNERDEAD (locked, the previous
 * owner died, the state is lost: unlock into a valid state); -ETIMEDOUT,
 * -EDEADLK, -EINVAL, -EFAULT (not locked).
 */
static inline int ast_mutex_timedlock(struct ast_mutex *m, __u64 mask,
				      const struct timespec *abstime,
				      clockid_t clk)
{
	int robust = m->flags & AST_MUTEX_ROBUST;
	long ret;

	if (robust) {
		ret = ast_robust_setup();
		if (ret)
			return ret;
		ast_robust_pending(m);
	}
	/* Fast path: free in a state of the set, one CAS. */
	ret = mask ? ast_lock_fast(m, mask) : -1;
	if (ret < 0)
		ret = ast_sys_lock(&m->word, mask, ast_mutex_kflags(m),
				   abstime, clk);
	if (robust) {
		if (ret >= 0 || ret == -EOWNERDEAD) {
			m->list.next = ast_robust_head.list.next;
			__atomic_store_n(&ast_robust_head.list.next, &m->list,
					 __ATOMIC_SEQ_CST);
		}
		ast_robust_pending(NULL);
	}
	return ret;
}

/**
 * ast_mutex_lock() - enter @m in one of the states of @mask, no timeout
 * @m: the mutex
 * @mask: the entry set
 *
 * Return: as ast_mutex_timedlock(), never -ETIMEDOUT.
 */
static inline int ast_mutex_lock(struct ast_mutex *m, __u64 mask)
{
	return ast_mutex_timedlock(m, mask, NULL, CLOCK_MONOTONIC);
}

/**
 * ast_mutex_trylock() - enter @m if it is free in a state of @mask
 * @m: the mutex
 * @mask: the entry set
 *
 * Never enters the kernel.
 *
 * Return: the state entered in, or -EBUSY.
 */
static inline int ast_mutex_trylock(struct ast_mutex *m, __u64 mask)
{
	__u32 v = __atomic_load_n(&m->word, __ATOMIC_RELAXED);

	if (m->flags & AST_MUTEX_ROBUST)
		return -EINVAL;	/* keep the robust list simple */
	if (ast_word_enterable(v, mask) && ast_try_enter(m, v))
		return v & AST_MUTEX_STATE_MASK;
	return -EBUSY;
}

static inline void ast_robust_unlink(struct ast_mutex *m)
{
	struct robust_list *p = &ast_robust_head.list;

	while (p->next != &ast_robust_head.list) {
		if (p->next == &m->list) {
			__atomic_store_n(&p->next, m->list.next,
					 __ATOMIC_SEQ_CST);
			return;
		}
		p = p->next;
	}
}

/**
 * ast_mutex_unlock() - leave @m into @state
 * @m: the mutex, owned by the caller
 * @state: the new abstract state, 0 .. AST_MUTEX_MAX_STATES - 1
 *
 * With no waiter, one CAS; otherwise the kernel hands the lock to the
 * first waiter whose entry set holds @state or wakes that waiter to
 * compete (see the unlock policies of ast_mutex_init()), or frees it in
 * @state.
 *
 * Return: 0, or -EPERM (not the owner), -EINVAL, -EFAULT.
 */
static inline int ast_mutex_unlock(struct ast_mutex *m, unsigned int state)
{
	__u32 v = (__u32)ast_gettid();
	int robust = m->flags & AST_MUTEX_ROBUST;
	long ret;

	if (state >= AST_MUTEX_MAX_STATES)
		return -EINVAL;
	if (robust) {
		if ((__atomic_load_n(&m->word, __ATOMIC_RELAXED) &
		     AST_MUTEX_TID_MASK) != v)
			return -EPERM;
		ast_robust_pending(m);
		ast_robust_unlink(m);
	}
	if (__atomic_compare_exchange_n(&m->word, &v, AST_MUTEX_WORD(state),
					0, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		ret = 0;
	else
		ret = ast_sys_unlock(&m->word, state, ast_mutex_kflags(m) |
				     ((m->flags & AST_MUTEX_COMPETE) ?
				      AST_MUTEX_WAKE_ONLY : 0) |
				     ((m->flags & AST_MUTEX_STRICT) ?
				      AST_MUTEX_HANDOFF : 0));
	if (robust)
		ast_robust_pending(NULL);
	return ret < 0 ? ret : 0;
}

#endif /* _AST_MUTEX_USER_H */
