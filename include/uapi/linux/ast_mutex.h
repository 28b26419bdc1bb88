/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * AST-sync: mutexes with state-guarded entry and direct hand-off.
 *
 * After A. Ohki and Y. Kuno, "State Abstraction-based Synchronization for
 * Thread Libraries" (section 2.1: abstract states, guarded entry, exit into
 * a state; section 3.2: kernel hand-off).  See
 * Documentation/userspace-api/ast_mutex.rst.
 *
 * An AST mutex is one aligned 32-bit word in user memory:
 *
 *   bit 31      AST_MUTEX_WAITERS     a task may be queued in the kernel
 *   bit 30      AST_MUTEX_OWNER_DIED  the owner died holding it (robust)
 *   bits 29..0  AST_MUTEX_TID_MASK:
 *     locked:   the owner's TID (never has bit 29 set)
 *     free:     AST_MUTEX_FREE (bit 29) | the state index (bits 5..0)
 *     0, with AST_MUTEX_OWNER_DIED: the owner died, the state is lost
 *
 * The three top bits and the TID field match FUTEX_WAITERS,
 * FUTEX_OWNER_DIED and FUTEX_TID_MASK, so a word on a thread's robust list
 * is recovered by the kernel's robust-futex exit handling.
 *
 * A state is an index 0 .. AST_MUTEX_MAX_STATES - 1; an entry set is a
 * 64-bit mask with bit i set for state i.
 *
 * The owner TID is the owner's TID in its own PID namespace, i.e. what
 * gettid() returns to the owner, whether user space or the kernel wrote
 * it (as for PI and robust futexes).  A process-shared mutex must only be
 * used by tasks of one PID namespace: the kernel compares the word with
 * the caller's TID for -EPERM and -EDEADLK and does not translate TIDs.
 *
 * System calls (the entry set is passed as two 32-bit halves, so that
 * the call has the same register layout on 32-bit, 64-bit and compat
 * ABIs and needs no compat entry point):
 *
 *   long ast_mutex_lock(__u32 *uaddr, __u32 mask_lo, __u32 mask_hi,
 *			 unsigned int flags,
 *			 const struct __kernel_timespec *timeout,
 *			 clockid_t clockid);
 *   long ast_mutex_unlock(__u32 *uaddr, unsigned int new_state,
 *			   unsigned int flags);
 *
 * mask_lo holds states 0..31 and mask_hi states 32..63:
 * AST_MUTEX_MASK_LO(mask) and AST_MUTEX_MASK_HI(mask) split a __u64 set.
 */
#ifndef _UAPI_LINUX_AST_MUTEX_H
#define _UAPI_LINUX_AST_MUTEX_H

#include <linux/types.h>

#define AST_MUTEX_WAITERS	0x80000000U
#define AST_MUTEX_OWNER_DIED	0x40000000U
#define AST_MUTEX_TID_MASK	0x3fffffffU
#define AST_MUTEX_FREE		0x20000000U
#define AST_MUTEX_STATE_MASK	0x0000003fU

/* Number of abstract states: an entry set is a __u64 bit mask. */
#define AST_MUTEX_MAX_STATES	64

/* The word of a free mutex in abstract state @s. */
#define AST_MUTEX_WORD(s)	(AST_MUTEX_FREE | ((__u32)(s) & AST_MUTEX_STATE_MASK))

/* The entry-set bit of state @s. */
#define AST_MUTEX_STATE_BIT(s)	(1ULL << (s))

/* The mask_lo and mask_hi arguments of ast_mutex_lock() for entry set @m. */
#define AST_MUTEX_MASK_LO(m)	((__u32)((__u64)(m) & 0xffffffffU))
#define AST_MUTEX_MASK_HI(m)	((__u32)((__u64)(m) >> 32))

/*
 * Flags of ast_mutex_lock() and ast_mutex_unlock().
 *
 * AST_MUTEX_PRIVATE: the word is only used by the threads of one process
 * (the kernel hashes it by address in the mm, not by the backing object).
 * Do not use it for a robust mutex: the kernel wakes the waiters of a dead
 * owner through the process-shared key, as for robust futexes.
 */
#define AST_MUTEX_PRIVATE	0x00000001U
#define AST_MUTEX_FLAGS_MASK	AST_MUTEX_PRIVATE

/*
 * Unlock policy (ast_mutex_unlock() only).  With neither flag the unlock
 * is adaptive: when a queued waiter's entry set holds the new state, the
 * lock is handed to it directly if that is cheap (the waiter is still on
 * a CPU) or if the waiter was woken to compete and lost 8 times, the first
 * time at least 4 ms ago (at least one tick); otherwise the
 * word is freed in the new state and that waiter is woken to compete for
 * it, and a waiter that loses is chosen again first.  This avoids the
 * lock convoy of handing the lock to a thread that is not running while
 * bounding barging.
 *
 * AST_MUTEX_HANDOFF: always hand the lock directly to the waiter (the
 * paper's strict semantics: nobody can barge in).
 * AST_MUTEX_WAKE_ONLY: never hand off; free the word and wake the waiter
 * to compete (no anti-starvation bound).
 * Both at once are invalid.
 */
#define AST_MUTEX_WAKE_ONLY	0x00000002U
#define AST_MUTEX_HANDOFF	0x00000004U
#define AST_MUTEX_UNLOCK_FLAGS_MASK	(AST_MUTEX_PRIVATE | AST_MUTEX_WAKE_ONLY | \
					 AST_MUTEX_HANDOFF)

#endif /* _UAPI_LINUX_AST_MUTEX_H */
