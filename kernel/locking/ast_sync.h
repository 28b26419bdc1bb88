/* SPDX-License-Identifier: GPL-2.0 */
/*
 * AST-sync internals shared by kernel/locking/ast_sync.c and its KUnit
 * test.  Not an interface for the rest of the kernel.
 */
#ifndef _KERNEL_LOCKING_AST_SYNC_H
#define _KERNEL_LOCKING_AST_SYNC_H

#include <linux/jiffies.h>
#include <linux/types.h>
#include <uapi/linux/ast_mutex.h>

#include "../futex/futex.h"

/* ast_waiter.handoff while the waiter has not been handed the lock. */
#define AST_NO_HANDOFF		(-1)

/**
 * struct ast_waiter - a task queued on an AST word
 * @q: the futex queue entry, hashed on the word's futex key; its bitset is
 *	FUTEX_BITSET_MATCH_ANY so that the robust-futex death wake finds it
 * @key: the futex key of the word the waiter locks, computed once per
 *	call: a plain FUTEX_CMP_REQUEUE may move @q (and rewrite @q.key) to
 *	another word, and a waiter is only ever chosen for its own word
 * @mask: the entry set, one bit per abstract state
 * @handoff: the state the lock was handed over in, or AST_NO_HANDOFF;
 *	written by the unlocker under the bucket lock before it unqueues
 *	the waiter
 * @lost: how often an unlock woke this waiter to compete and it found
 *	the mutex taken or in a state outside @mask
 * @lost_at: jiffies when it lost the first time
 * @heir: the waiter is starved (ast_waiter_starved()) and holds the
 *	word's hand-off claim: it polls the owner instead of sleeping while
 *	the owner runs, and once the claim is due (ast_heir_due()) the
 *	adaptive unlock hands the lock to it even while it sleeps; at most
 *	one waiter per word holds the claim
 * @heir_at: jiffies when it claimed the hand-off
 * @policy: the unlock policy (AST_MUTEX_HANDOFF, AST_MUTEX_WAKE_ONLY or
 *	0) of the unlock that handed the lock over or woke the waiter;
 *	written with @handoff.  A waiter that is dying passes the lock on
 *	with it.
 *
 * @lost, @lost_at, @heir and @heir_at are written by the waiter before it
 * queues again and read by the unlocker, both under the bucket lock; a
 * waiter with an older claim may also clear a queued waiter's @heir under
 * that lock (ast_claim_heir()), which the waiter reads with READ_ONCE()
 * while it polls.
 */
struct ast_waiter {
	struct futex_q q;
	union futex_key key;
	u64 mask;
	int handoff;
	unsigned int lost;
	unsigned long lost_at;
	unsigned long heir_at;
	unsigned int policy;
	bool heir;
};

/*
 * A waiter that has lost the competition for the lock AST_HANDOFF_LOSSES
 * times, the first time at least AST_HANDOFF_TIMEOUT ago (4 ms, at least
 * one tick), claims the hand-off; the adaptive unlock hands the lock to
 * it while it sleeps once it has held the claim for longer than
 * AST_HANDOFF_TIMEOUT.
 */
#define AST_HANDOFF_LOSSES	8
#define AST_HANDOFF_TIMEOUT	(msecs_to_jiffies(4) ?: 1)

/*
 * The heir polls a running owner for at most 25 us plus 2 us per online
 * CPU, and never more than 300 us: the bound of rwsem's optimistic
 * spinning on a reader-owned rwsem (rwsem_rspin_threshold()), whose
 * owners, like a user-space owner, can neither be watched for the end of
 * their critical section nor be trusted to keep it short.
 */
#define AST_SPIN_BASE_US	25
#define AST_SPIN_PER_CPU_US	2
#define AST_SPIN_MAX_US		300

/*
 * The plist priorities of non-real-time AST waiters, all after every
 * real-time waiter (0..98; deadline tasks are -1): the heir of the word
 * first (no task has this normal_prio: SCHED_FIFO/RR priority 0 does not
 * exist), then the waiters that were woken and lost, FIFO among
 * themselves, then the ones never woken, FIFO.  AST waiters share the
 * bucket with plain futex waiters (at MAX_RT_PRIO and below), but only
 * the order among the waiters of one word matters.
 */
#define AST_HEIR_PRIO		(MAX_RT_PRIO - 1)
#define AST_RETRY_PRIO		MAX_RT_PRIO
#define AST_WAIT_PRIO		(MAX_RT_PRIO + 1)

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
struct ast_waiter *ast_select_waiter(struct futex_hash_bucket *hb,
				     union futex_key *key, int state,
				     bool *others);
struct ast_waiter *ast_word_heir(struct futex_hash_bucket *hb,
				 union futex_key *key);
bool ast_claim_heir(struct futex_hash_bucket *hb, struct ast_waiter *w,
		    unsigned long now);
bool ast_owner_gone(struct mm_struct *mm, u32 uval);
bool ast_waiter_starved(const struct ast_waiter *w, unsigned long now);
bool ast_heir_due(const struct ast_waiter *w, unsigned long now);
bool ast_handoff_policy(unsigned int flags, bool heir, bool on_cpu);
u64 ast_spin_budget_ns(unsigned int cpus);
int ast_queue_prio(int normal_prio, unsigned int lost, bool heir);
int ast_check_lock_args(unsigned long uaddr, u64 mask, unsigned int flags);
int ast_check_unlock_args(unsigned long uaddr, unsigned int state,
			  unsigned int flags);

#endif /* _KERNEL_LOCKING_AST_SYNC_H */
