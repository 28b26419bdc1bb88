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
 * ast_mutex_unlock() only: free the word in the new state and wake the
 * waiter a hand-off would have chosen, which then competes for the mutex
 * like any other locker, instead of handing the mutex to it.  Trades the
 * no-barging guarantee for throughput when the waiter is slow to run
 * (lock convoys).
 */
#define AST_MUTEX_WAKE_ONLY	0x00000002U
#define AST_MUTEX_UNLOCK_FLAGS_MASK	(AST_MUTEX_PRIVATE | AST_MUTEX_WAKE_ONLY)

#endif /* _UAPI_LINUX_AST_MUTEX_H */
