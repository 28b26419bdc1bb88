/* SPDX-License-Identifier: GPL-2.0 */
/*
 * AST-sync internals shared by kernel/locking/ast_sync.c and its KUnit
 * test.  Not an interface for the rest of the kernel.
 */
#ifndef _KERNEL_LOCKING_AST_SYNC_H
#define _KERNEL_LOCKING_AST_SYNC_H

#include <linux/types.h>
#include <uapi/linux/ast_mutex.h>

#include "../futex/futex.h"

/* ast_waiter.handoff while the waiter has not been handed the lock. */
#define AST_NO_HANDOFF		(-1)

/**
 * struct ast_waiter - a task queued on an AST word
 * @q: the futex queue entry, hashed on the word's futex key; its bitset is
 *	FUTEX_BITSET_MATCH_ANY so that the robust-futex death wake finds it
 * @mask: the entry set, one bit per abstract state
 * @handoff: the state the lock was handed over in, or AST_NO_HANDOFF;
 *	written by the unlocker under the bucket lock before it unqueues
 *	the waiter
 */
struct ast_waiter {
	struct futex_q q;
	u64 mask;
	int handoff;
};

/* The word of a free mutex holds a state index and no stray bits. */
static inline bool ast_word_is_free(u32 uval)
{
	return uval & AST_MUTEX_FREE;
}

static inline bool ast_word_valid(u32 uval)
{
	u32 tid = uval & AST_MUTEX_TID_MASK;

	if (uval & AST_MUTEX_FREE)
		return !(tid & ~(AST_MUTEX_FREE | AST_MUTEX_STATE_MASK));
	/* Locked by a TID, or the owner died: 0 alone is uninitialised. */
	return tid || (uval & AST_MUTEX_OWNER_DIED);
}

static inline unsigned int ast_word_state(u32 uval)
{
	return uval & AST_MUTEX_STATE_MASK;
}

static inline u32 ast_word_free(unsigned int state, bool waiters)
{
	return AST_MUTEX_WORD(state) | (waiters ? AST_MUTEX_WAITERS : 0);
}

static inline u32 ast_word_owned(pid_t tid, bool waiters)
{
	return ((u32)tid & AST_MUTEX_TID_MASK) |
	       (waiters ? AST_MUTEX_WAITERS : 0);
}

void ast_wake(struct wake_q_head *wake_q, struct futex_q *q);
bool ast_is_waiter(struct futex_q *q);
struct ast_waiter *ast_select_waiter(struct plist_head *chain,
				     union futex_key *key, int state,
				     bool *others);
int ast_check_lock_args(unsigned long uaddr, u64 mask, unsigned int flags);
int ast_check_unlock_args(unsigned long uaddr, unsigned int state,
			  unsigned int flags);

#endif /* _KERNEL_LOCKING_AST_SYNC_H */
