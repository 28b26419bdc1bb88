// SPDX-License-Identifier: GPL-2.0
/*
 * AST-sync: mutexes with state-guarded entry and direct hand-off.
 *
 * After A. Ohki and Y. Kuno, "State Abstraction-based Synchronization for
 * Thread Libraries" (FreeBSD 6.0 libthr).  An object carries a small
 * abstract state; a thread enters its critical region naming the set of
 * states it may enter in (section 2.1), and leaves it naming the new
 * state.  The unlocking thread hands the lock directly to one waiter whose
 * set holds the new state (section 3.2: UMTX_OP_WAIT2/UMTX_OP_WAKE2 and
 * the umtx hand-off), so no thread is woken to find that it cannot run.
 *
 * The lock is one 32-bit user word (include/uapi/linux/ast_mutex.h): the
 * owner's TID while locked, AST_MUTEX_FREE | state while free.  User space
 * takes and releases an uncontended mutex with one compare-and-swap; these
 * system calls do the rest.
 *
 * The waiters are futex_q entries on the futex hash buckets, hashed on the
 * word's futex key: a waiter sets AST_MUTEX_WAITERS and queues under the
 * bucket lock, the unlocker picks the waiter and rewrites the word under
 * the same lock, so the choice and the word never disagree.  The futex_q
 * is embedded in a struct ast_waiter that carries the 64-bit entry set;
 * its bitset is FUTEX_BITSET_MATCH_ANY, so the robust-futex exit path
 * (handle_futex_death()), which wakes one waiter of a dead owner's word,
 * reaches it too.
 *
 * Hand-off order: the bucket's plist, i.e. by task priority (real-time
 * waiters first, by priority) and first-come first-served among equal
 * priorities, exactly as futex wake-ups; the unlocker picks the first
 * waiter in that order whose entry set holds the new state.
 *
 * Adaptive hand-off.  Handing the lock to a waiter that is asleep keeps
 * the lock held by a thread that is not running until the scheduler gets
 * to it; with more threads than CPUs every unlock then costs a context
 * switch and the lock convoys (the paper's benchmark ran with one lock
 * holder per CPU pair and never saw it).  So by default the unlocker
 * hands over only when that is cheap, i.e. the chosen waiter is still on
 * a CPU, or to the word's heir; otherwise it frees the word in the new
 * state and wakes the chosen waiter, which competes for the word like
 * any locker.  A waiter that loses queues again ahead of the non-real-time
 * waiters that were never woken.
 *
 * Starvation is bounded as the MUTEX_FLAG_HANDOFF of kernel/locking/mutex.c
 * bounds it: a waiter that has lost AST_HANDOFF_LOSSES (8) times, the
 * first time at least AST_HANDOFF_TIMEOUT (4 ms) before, claims the word's
 * hand-off as it queues again after a loss, if no other waiter holds the
 * claim.  As the heir it queues ahead of the other non-real-time waiters,
 * and instead of sleeping it polls the owner while the owner runs on a CPU
 * (at most one poller per word, need_resched()-aware), so the hand-off
 * that ends its starvation can go to a running task.  Only the heir is
 * handed the lock while it sleeps, and only once it has held the claim
 * for longer than AST_HANDOFF_TIMEOUT (ast_heir_due()): handing it to
 * every starved waiter, or to each new heir at once, would hand it mostly
 * to sleeping tasks, and the lock would sit with a task that is not
 * running (a convoy).  AST_MUTEX_HANDOFF and AST_MUTEX_WAKE_ONLY select
 * the two pure policies.
 */
#include <linux/debugfs.h>
#include <linux/hrtimer.h>
#include <linux/init.h>
#include <linux/percpu.h>
#include <linux/pid_namespace.h>
#include <linux/plist.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/wake_q.h>
#include <linux/seq_file.h>
#include <linux/syscalls.h>
#include <linux/time_namespace.h>
#include <linux/uaccess.h>

#include "ast_sync.h"

/*
 * Event counts for /sys/kernel/debug/ast_sync/stats, per CPU so that
 * counting writes no shared line: they say where a workload's kernel
 * time goes.  "scanned" is the number of hash-chain entries that the
 * unlocks walked to choose a waiter (ast_select_waiter()), the cost of
 * the paper's linear search.  Each CPU adds to its own counters with
 * this_cpu_add(), which is safe with preemption on or off; the reader
 * sums them without a lock, so a sum may miss adds in flight.
 */
enum ast_stat {
	AST_STAT_QUEUED,	/* a lock queued to sleep */
	AST_STAT_LOST,		/* woken to compete, found the word taken */
	AST_STAT_HEIR,		/* a starved waiter claimed the hand-off */
	AST_STAT_POLL_NS,	/* time the heir polled the owner, in ns */
	AST_STAT_UNLOCK,	/* unlocks in the kernel */
	AST_STAT_HANDOFF,	/* ... that handed the lock over */
	AST_STAT_WAKE,		/* ... that woke a waiter to compete */
	AST_STAT_SCANNED,	/* chain entries those unlocks walked */
	AST_NR_STATS
};

static const char *const ast_stat_names[AST_NR_STATS] = {
	[AST_STAT_QUEUED]	= "queued",
	[AST_STAT_LOST]		= "lost",
	[AST_STAT_HEIR]		= "heir",
	[AST_STAT_POLL_NS]	= "poll_ns",
	[AST_STAT_UNLOCK]	= "unlock",
	[AST_STAT_HANDOFF]	= "handoff",
	[AST_STAT_WAKE]		= "wake",
	[AST_STAT_SCANNED]	= "scanned",
};

static DEFINE_PER_CPU(u64 [AST_NR_STATS], ast_stats);

static inline void ast_stat_add(enum ast_stat stat, u64 n)
{
	this_cpu_add(ast_stats[stat], n);
}

/**
 * ast_wake() - wake function of an AST waiter
 * @wake_q: the wake queue of the waker
 * @q: the futex_q embedded in a struct ast_waiter
 *
 * Installed as futex_q->wake of every AST waiter, which also tags the
 * futex_q as one (see ast_is_waiter()); the wake-up half of the paper's
 * UMTX_OP_WAKE2 (Ohki & Kuno, section 3.2).  The unlocker hands the lock over
 * before it calls this; any other futex wake-up (a robust-futex death
 * wake, or a stray FUTEX_WAKE on the word) reaches the waiter with no
 * hand-off and it retries.
 *
 * Context: hb->lock of @q held.  Does not sleep.
 */
void ast_wake(struct wake_q_head *wake_q, struct futex_q *q)
{
	lockdep_assert_held(q->lock_ptr);
	futex_wake_mark(wake_q, q);
}

/**
 * ast_is_waiter() - is this futex_q an AST waiter?
 * @q: a futex_q on a hash bucket
 *
 * AST waiters share the futex hash chains with plain futex waiters, as
 * the paper's waiters shared the umtx chains (Ohki & Kuno, section 3.2).
 *
 * Context: any.  Reads only @q->wake, which is set before @q is queued
 * and never changed, so no lock is asserted: the callers in this file
 * walk a bucket's chain under its lock, but the KUnit suite also asks
 * about futex_qs on no bucket.
 * Return: true if @q is embedded in a struct ast_waiter.
 */
bool ast_is_waiter(struct futex_q *q)
{
	return q->wake == ast_wake;
}

/*
 * The AST waiter of @q if @q waits on the word of @key, else NULL.  A plain
 * FUTEX_CMP_REQUEUE moves a futex_q to another word and rewrites its key,
 * so the key of the word the waiter locks (ast_waiter.key) must match as
 * well: a waiter moved away from its word must never be handed, or woken
 * for, the word it was moved to.  It would return owning a mutex that its
 * caller never asked for, and a dying one would pass on its own word
 * (-EPERM) and leave the other one owned by a dead task.
 */
static struct ast_waiter *ast_waiter_on(struct futex_q *q,
					union futex_key *key)
{
	struct ast_waiter *w;

	if (!futex_match(&q->key, key) || !ast_is_waiter(q))
		return NULL;
	w = container_of(q, struct ast_waiter, q);
	return futex_match(&w->key, key) ? w : NULL;
}

/**
 * ast_select_waiter() - choose the waiter to hand an AST mutex over to
 * @hb: the hash bucket of @key
 * @key: the futex key of the AST word
 * @state: the new abstract state, or -1 to select nobody
 * @others: set to whether another AST waiter on @key remains queued
 *
 * Walks @hb's chain in its order (priority, then FIFO among equal priorities)
 * and returns the first AST waiter on @key whose entry set holds @state.
 * This is the linear search of UMTX_OP_WAKE2 (Ohki & Kuno, section 3.2),
 * but over a FIFO queue where libthr queued LIFO.  Futex waiters on the
 * same word that are not AST waiters are ignored, and so are AST waiters
 * that a plain FUTEX_CMP_REQUEUE moved here from another word.
 *
 * Context: @hb->lock held.  Does not sleep.
 * Return: the chosen waiter, or NULL if no queued entry set holds @state.
 */
struct ast_waiter *ast_select_waiter(struct futex_hash_bucket *hb,
				     union futex_key *key, int state,
				     bool *others)
{
	struct ast_waiter *found = NULL, *w;
	unsigned long scanned = 0;
	struct futex_q *q;

	lockdep_assert_held(&hb->lock);

	*others = false;
	plist_for_each_entry(q, &hb->chain, list) {
		scanned++;
		w = ast_waiter_on(q, key);
		if (!w)
			continue;
		if (!found && state >= 0 && (w->mask & BIT_ULL(state))) {
			found = w;
			continue;
		}
		*others = true;
		if (found || state < 0)
			break;
	}
	if (state >= 0)
		ast_stat_add(AST_STAT_SCANNED, scanned);
	return found;
}

/**
 * ast_word_heir() - the queued waiter that holds the hand-off claim of a word
 * @hb: the hash bucket of @key
 * @key: the futex key of the AST word
 *
 * The heir queues at AST_HEIR_PRIO, behind the real-time waiters only, so
 * the walk stops at the first entry queued after it.  An heir that was
 * woken to compete is not queued until it looks at the word again, and is
 * not found.
 *
 * Context: @hb->lock held.  Does not sleep.
 * Return: the queued AST waiter on @key that is the heir, or NULL.
 */
struct ast_waiter *ast_word_heir(struct futex_hash_bucket *hb,
				 union futex_key *key)
{
	struct ast_waiter *w;
	struct futex_q *q;

	lockdep_assert_held(&hb->lock);

	plist_for_each_entry(q, &hb->chain, list) {
		if (q->list.prio > AST_HEIR_PRIO)
			break;
		w = ast_waiter_on(q, key);
		if (w && w->heir)
			return w;
	}
	return NULL;
}

/**
 * ast_claim_heir() - settle the hand-off claim as a waiter queues after a loss
 * @hb: the hash bucket of @w's word
 * @w: the waiter, woken to compete and lost, not queued
 * @now: the current jiffies
 *
 * A starved waiter (ast_waiter_starved()) claims the word's hand-off if no
 * queued waiter of the word holds it.  An heir woken to compete (its claim
 * was not due, ast_heir_due()) is off the queue until it runs, so another
 * waiter may have claimed meanwhile; as it queues again the older claim
 * stays and the younger one is dropped, a queued heir's by requeueing it
 * among the waiters that lost, so that a word keeps one heir.
 *
 * Context: @hb->lock held.  Does not sleep.
 * Return: true if @w claimed the hand-off now.
 */
bool ast_claim_heir(struct futex_hash_bucket *hb, struct ast_waiter *w,
		    unsigned long now)
{
	struct ast_waiter *other;

	lockdep_assert_held(&hb->lock);

	/* Walk the chain only for a starved waiter or an heir. */
	if (!w->heir && !ast_waiter_starved(w, now))
		return false;
	other = ast_word_heir(hb, &w->key);
	if (!w->heir) {
		if (other)
			return false;
		WRITE_ONCE(w->heir, true);
		w->heir_at = now;
		return true;
	}
	if (!other)
		return false;
	if (time_before(other->heir_at, w->heir_at)) {
		WRITE_ONCE(w->heir, false);
		return false;
	}
	/* Pairs with READ_ONCE() in its ast_wait_queue() and polling. */
	WRITE_ONCE(other->heir, false);
	if (other->q.list.prio == AST_HEIR_PRIO) {
		plist_del(&other->q.list, &hb->chain);
		plist_node_init(&other->q.list, AST_RETRY_PRIO);
		plist_add(&other->q.list, &hb->chain);
	}
	return false;
}

/**
 * ast_owner_gone() - has a word that one mm alone reaches lost its owner?
 * @mm: the only address space that reaches the word
 * @uval: the word
 *
 * A word that only @mm reaches (an AST_MUTEX_PRIVATE word, whose key is
 * the mm and the address, or a process-shared one in private anonymous
 * memory) can only be unlocked by a task of @mm: the unlock must run with
 * the owner's TID and reach the word.  If the word names a TID that is no
 * task of @mm, or one that is exiting, nobody will ever unlock it: a
 * thread that exited holding it, or, in a child of fork(), a thread of
 * the parent, whose TID the child's copy of the word inherited (the
 * parent's owner, or the waiter an unlock of the parent had just handed
 * the lock to, before it even ran).  The lock then takes the word as a
 * dead owner's, with -EOWNERDEAD, instead of sleeping until its timeout.
 *
 * The TID is looked up in the caller's PID namespace, which is every
 * thread's of the process.  A CLONE_VM process that is no thread of it
 * (MMF_MULTIPROCESS) may count its TIDs in another namespace, so then the
 * owner is never taken for gone: a wrong answer would break mutual
 * exclusion, where "no" only keeps the lock waiting as before.
 *
 * Context: any; takes the RCU read lock.
 * Return: true if @uval is locked by a TID that no live task of @mm has.
 */
bool ast_owner_gone(struct mm_struct *mm, u32 uval)
{
	pid_t owner = uval & AST_MUTEX_TID_MASK;
	struct task_struct *p;
	bool gone;

	if (!mm || ast_word_is_free(uval) || !owner ||
	    test_bit(MMF_MULTIPROCESS, &mm->flags))
		return false;
	rcu_read_lock();
	p = find_task_by_vpid(owner);
	/* p->mm and p->flags may change under us: gone stays gone. */
	gone = !p || READ_ONCE(p->mm) != mm ||
	       (READ_ONCE(p->flags) & PF_EXITING);
	rcu_read_unlock();
	return gone;
}

/**
 * ast_waiter_starved() - has a waiter lost the competition for too long?
 * @w: a queued AST waiter
 * @now: the current jiffies
 *
 * A waiter woken to compete can lose the word to a thread that runs
 * while it waits for a CPU; that is what keeps the lock busy, but only
 * for a while.  Neither a count nor a time alone is a good bound: with
 * room in a buffer the running threads win most races, so two losses
 * come quickly, and with many waiters most of them lost once long ago
 * while they waited their turn; either way nearly every unlock would
 * hand off and the convoy would be back.  So it takes both, and a starved
 * waiter only becomes the heir (struct ast_waiter) if no other waiter of
 * the word is.
 *
 * Context: any; reads only @w's loss count and time, which the waiter
 * itself writes (ast_lock()).
 * Return: true if @w lost at least AST_HANDOFF_LOSSES times, the first
 * time at least AST_HANDOFF_TIMEOUT jiffies before @now.
 */
bool ast_waiter_starved(const struct ast_waiter *w, unsigned long now)
{
	return w->lost >= AST_HANDOFF_LOSSES &&
	       time_after_eq(now, w->lost_at + AST_HANDOFF_TIMEOUT);
}

/**
 * ast_heir_due() - may a sleeping heir be handed the lock?
 * @w: the chosen AST waiter
 * @now: the current jiffies
 *
 * A sleeping waiter handed the lock must be scheduled before the lock
 * moves on; when threads outnumber CPUs that takes a scheduling latency,
 * with the lock held by a task that is not running, and every waiter woken
 * meanwhile loses and comes closer to starving: handing the lock to each
 * new heir at once feeds a convoy.  So an heir is handed the lock while it
 * sleeps only once it has held the claim for longer than
 * AST_HANDOFF_TIMEOUT; until then it is woken first to compete, and an heir
 * that polls a running owner is on a CPU and handed the lock anyway.  At
 * most one heir per word, so at most one sleeping hand-off per word every
 * AST_HANDOFF_TIMEOUT; and a starved waiter gets the lock at the latest at
 * the first unlock into a state of its set after that.
 *
 * Context: any; the caller holds the bucket lock, under which the waiter
 * wrote @w->heir and @w->heir_at.
 * Return: true if @w holds the claim and claimed it more than
 * AST_HANDOFF_TIMEOUT jiffies before @now.
 */
bool ast_heir_due(const struct ast_waiter *w, unsigned long now)
{
	return w->heir && time_after(now, w->heir_at + AST_HANDOFF_TIMEOUT);
}

/**
 * ast_handoff_policy() - hand the lock over, or wake the waiter to compete?
 * @flags: the unlock flags (AST_MUTEX_HANDOFF, AST_MUTEX_WAKE_ONLY)
 * @heir: the chosen waiter is the word's heir and its claim is due
 *	(ast_heir_due())
 * @on_cpu: the chosen waiter is still running on a CPU
 *
 * The paper hands the lock over on every exit (Ohki & Kuno, section 3.2);
 * that is AST_MUTEX_HANDOFF.  The adaptive default hands over only when
 * it cannot convoy (@on_cpu: the waiter runs at once, which includes an
 * heir polling the owner) or to end starvation (@heir, at most one waiter
 * of the word, at most once per AST_HANDOFF_TIMEOUT).
 *
 * Context: any.
 * Return: true to hand the lock directly to the waiter, false to free the
 * word and wake the waiter to compete.
 */
bool ast_handoff_policy(unsigned int flags, bool heir, bool on_cpu)
{
	if (flags & AST_MUTEX_HANDOFF)
		return true;
	if (flags & AST_MUTEX_WAKE_ONLY)
		return false;
	return on_cpu || heir;
}

/**
 * ast_spin_budget_ns() - how long the heir may poll a running owner
 * @cpus: the number of online CPUs
 *
 * A user-space owner can compute for as long as it likes with its lock
 * held; polling it all that time would burn the heir's CPU in the kernel.
 * So the polling is bounded in time, as rwsem_rspin_threshold() bounds
 * optimistic spinning on a reader-owned rwsem, whose owners cannot be
 * watched either: 25 us plus 2 us per CPU, at most 300 us.  A mutex's
 * spinners stop when the owner stops running (owner_on_cpu(), which also
 * covers a preempted vCPU) or need_resched() is set; the heir does too.
 *
 * Context: any.
 * Return: the polling budget in nanoseconds.
 */
u64 ast_spin_budget_ns(unsigned int cpus)
{
	u64 us = AST_SPIN_BASE_US + (u64)AST_SPIN_PER_CPU_US * cpus;

	return min_t(u64, us, AST_SPIN_MAX_US) * NSEC_PER_USEC;
}

/**
 * ast_queue_prio() - the futex plist priority an AST waiter queues with
 * @normal_prio: the waiter's normal_prio
 * @lost: how often the waiter was woken to compete and lost
 * @heir: the waiter holds the word's hand-off claim
 *
 * As __futex_queue(): real-time waiters by priority, in FIFO order
 * within one; the others after them: the heir first (AST_HEIR_PRIO),
 * then the waiters that were woken and lost (AST_RETRY_PRIO), then the
 * ones never woken (AST_WAIT_PRIO), FIFO within each, so that a waiter
 * that lost is chosen again soon and the heir's starvation ends at the
 * first unlock into a state of its set once its claim is due
 * (ast_heir_due()), or when it wins the word.
 *
 * Context: any.
 * Return: the plist priority.
 */
int ast_queue_prio(int normal_prio, unsigned int lost, bool heir)
{
	if (normal_prio < MAX_RT_PRIO)
		return normal_prio;
	if (heir)
		return AST_HEIR_PRIO;
	return lost ? AST_RETRY_PRIO : AST_WAIT_PRIO;
}

static int ast_check_common(unsigned long uaddr, unsigned int flags,
			    unsigned int valid)
{
	if (flags & ~valid)
		return -EINVAL;
	if (uaddr % sizeof(u32))
		return -EINVAL;
	return 0;
}

/**
 * ast_check_lock_args() - validate the arguments of ast_mutex_lock()
 * @uaddr: user address of the word
 * @mask: the entry set
 * @flags: AST_MUTEX_* flags
 *
 * The paper leaves the errors of ast_mutex_enter() open (Ohki & Kuno,
 * section 2.3); an empty entry set could never be entered.
 *
 * Context: any.
 * Return: 0, or -EINVAL for unknown flags, an empty entry set or a word
 * that is not 32-bit aligned.
 */
int ast_check_lock_args(unsigned long uaddr, u64 mask, unsigned int flags)
{
	if (!mask)
		return -EINVAL;
	return ast_check_common(uaddr, flags, AST_MUTEX_FLAGS_MASK);
}

/**
 * ast_check_unlock_args() - validate the arguments of ast_mutex_unlock()
 * @uaddr: user address of the word
 * @state: the new abstract state
 * @flags: AST_MUTEX_PRIVATE, AST_MUTEX_WAKE_ONLY, AST_MUTEX_HANDOFF
 *
 * States are indices into the 64-bit entry sets, the paper's "one bit per
 * state" representation (Ohki & Kuno, section 2.1).
 *
 * Context: any.
 * Return: 0, or -EINVAL for unknown flags, both AST_MUTEX_WAKE_ONLY and
 * AST_MUTEX_HANDOFF, a state outside 0 .. AST_MUTEX_MAX_STATES - 1 or a
 * word that is not 32-bit aligned.
 */
int ast_check_unlock_args(unsigned long uaddr, unsigned int state,
			  unsigned int flags)
{
	if (state >= AST_MUTEX_MAX_STATES)
		return -EINVAL;
	if ((flags & AST_MUTEX_HANDOFF) && (flags & AST_MUTEX_WAKE_ONLY))
		return -EINVAL;
	return ast_check_common(uaddr, flags, AST_MUTEX_UNLOCK_FLAGS_MASK);
}

static unsigned int ast_futex_flags(unsigned int flags)
{
	return FLAGS_SIZE_32 | ((flags & AST_MUTEX_PRIVATE) ? 0 : FLAGS_SHARED);
}

/*
 * A failed user access under the bucket lock (the lock is dropped by the
 * caller): fault the page in and retry (0), or fail with -EFAULT.
 */
static int ast_fault(u32 __user *uaddr, int err)
{
	if (err == -EFAULT)
		return fault_in_user_writeable(uaddr) ? -EFAULT : 0;
	cond_resched();
	return 0;
}

/*
 * A waiter leaves without the lock (timeout, signal): if no AST waiter is
 * left on the word, clear AST_MUTEX_WAITERS, whichever waiter set it, so
 * that the bit does not outlive the waiters (a stale bit reads as a
 * queued waiter to whoever watches the word).  @key is the word's key
 * (ast_waiter.key), not the one in the waiter's futex_q: a stray
 * FUTEX_CMP_REQUEUE may have moved the futex_q to another word, and the
 * waiters that count are the word's.  It is not computed again, which
 * could fail with a fatal signal pending (see ast_lock()).  Best effort: a
 * stale bit only sends one unlock through the kernel.
 */
static void ast_drop_waiters_bit(u32 __user *uaddr, union futex_key *key)
{
	struct futex_hash_bucket *hb = futex_hash(key);
	u32 uval, cur;
	bool others;
	int tries;

	spin_lock(&hb->lock);
	ast_select_waiter(hb, key, -1, &others);
	for (tries = 0; !others && tries < 8; tries++) {
		if (futex_get_value_locked(&uval, uaddr) ||
		    !(uval & AST_MUTEX_WAITERS))
			break;
		if (futex_cmpxchg_value_locked(&cur, uaddr, uval,
					       uval & ~AST_MUTEX_WAITERS) ||
		    cur == uval)
			break;
	}
	spin_unlock(&hb->lock);
}

/*
 * The heir polls the owner instead of sleeping while the owner runs, so
 * that the unlock that hands it the lock finds it on a CPU (as the first
 * waiter of a struct mutex spins with MUTEX_FLAG_HANDOFF set).  It stops
 * when it is dequeued (handed the lock, or woken) or loses the claim to an
 * older heir (ast_claim_heir()), when the owner is not
 * running or the word is free, when it should give up the CPU, on a
 * signal or timeout, or when its budget (ast_spin_budget_ns()) is spent;
 * the caller then sleeps if it is still queued.  Called in
 * TASK_INTERRUPTIBLE, queued, without the bucket lock; the word is read
 * with page faults disabled, and a fault ends the polling.
 */
static void ast_spin_on_owner(u32 __user *uaddr, struct ast_waiter *w,
			      struct hrtimer_sleeper *to)
{
	u64 start = local_clock(), end;
	struct task_struct *owner = NULL;
	pid_t tid = 0;
	u32 uval;

	end = start + ast_spin_budget_ns(num_online_cpus());
	rcu_read_lock();
	while (READ_ONCE(w->q.lock_ptr) && READ_ONCE(w->heir)) {
		if (need_resched() || signal_pending(current) ||
		    (to && !READ_ONCE(to->task)) || local_clock() > end)
			break;
		if (futex_get_value_locked(&uval, uaddr) ||
		    ast_word_is_free(uval) || !(uval & AST_MUTEX_TID_MASK))
			break;
		if ((pid_t)(uval & AST_MUTEX_TID_MASK) != tid) {
			tid = uval & AST_MUTEX_TID_MASK;
			owner = find_task_by_vpid(tid);
		}
		if (!owner || !owner_on_cpu(owner))
			break;
		cpu_relax();
	}
	rcu_read_unlock();
	ast_stat_add(AST_STAT_POLL_NS, local_clock() - start);
}

/*
 * futex_wait_queue(), but queued at ast_queue_prio() (the heir first, then
 * the waiters that lost, then the others), and the heir polls the owner
 * before it sleeps.  Called with hb->lock held (futex_q_lock()); releases
 * it.
 */
static void ast_wait_queue(struct futex_hash_bucket *hb, struct ast_waiter *w,
			   u32 __user *uaddr, struct hrtimer_sleeper *to)
{
	struct futex_q *q = &w->q;
	int prio = ast_queue_prio(current->normal_prio, w->lost, w->heir);

	/* Taken by the caller's futex_q_lock(), which sparse cannot see. */
	__acquire(&hb->lock);
	lockdep_assert_held(&hb->lock);
	set_current_state(TASK_INTERRUPTIBLE | TASK_FREEZABLE);
	__futex_queue(q, hb, current);
	if (q->list.prio != prio) {
		plist_del(&q->list, &hb->chain);
		plist_node_init(&q->list, prio);
		plist_add(&q->list, &hb->chain);
	}
	spin_unlock(&hb->lock);

	if (to)
		hrtimer_sleeper_start_expires(to, HRTIMER_MODE_ABS);
	if (READ_ONCE(w->heir))
		ast_spin_on_owner(uaddr, w, to);
	/* Dequeued already (handed the lock, or woken): do not sleep. */
	if (likely(!plist_node_empty(&q->list)) && (!to || to->task))
		schedule();
	__set_current_state(TASK_RUNNING);
}

/*
 * The lock; *@policy is set to the unlock policy of the unlock that
 * handed the lock over or woke the caller to compete for it (0 if none),
 * and *@key to the word's futex key, with which a dying caller passes the
 * lock on (ast_pass_on()).
 */
static int ast_lock(u32 __user *uaddr, u64 mask, unsigned int flags,
		    struct hrtimer_sleeper *to, unsigned int *policy,
		    union futex_key *key)
{
	unsigned int fflags = ast_futex_flags(flags);
	pid_t tid = task_pid_vnr(current);
	struct futex_hash_bucket *hb;
	bool others, died, woken = false;
	struct ast_waiter w;
	u32 uval, cur;
	int ret;

	w.q = futex_q_init;
	w.q.bitset = FUTEX_BITSET_MATCH_ANY;
	w.q.wake = ast_wake;
	w.mask = mask;
	w.handoff = AST_NO_HANDOFF;
	w.lost = 0;
	w.lost_at = 0;
	w.heir_at = 0;
	w.policy = 0;
	w.heir = false;
	*policy = 0;

	/*
	 * The word's key, once per call: every look again (after a wake-up,
	 * a fault or a change of the word) uses it.  For a shared word,
	 * get_futex_key() pins the page with GUP, whose slow path fails with
	 * -EINTR once a fatal signal is pending (a page not mapped writable
	 * here: written back and cleaned, zapped, migrated); a waiter woken
	 * to compete would then return without looking at the word and the
	 * wake-up would be lost, and a dying owner could not pass the lock
	 * on.  A stray FUTEX_CMP_REQUEUE moves only w.q.key.
	 */
	*key = FUTEX_KEY_INIT;
	ret = get_futex_key(uaddr, fflags, key, FUTEX_WRITE);
	if (ret)
		return ret;
	w.key = *key;
retry:
	w.q.key = w.key;
	hb = futex_q_lock(&w.q);
	ret = futex_get_value_locked(&uval, uaddr);
	if (ret)
		goto fault;
	if (!ast_word_valid(uval)) {
		futex_q_unlock(hb);
		return -EINVAL;
	}
	if ((uval & AST_MUTEX_TID_MASK) == tid) {
		futex_q_unlock(hb);
		return -EDEADLK;
	}

	died = (uval & AST_MUTEX_OWNER_DIED) && !(uval & AST_MUTEX_TID_MASK);
	/*
	 * A word that only this mm reaches (a private key, or a shared key
	 * of private anonymous memory), locked by no task of this mm: in a
	 * child of fork(), a thread of the parent (which owned it, or had
	 * just been handed it, when the child's copy was made), or a thread
	 * that exited holding it.  Nobody can unlock it; sleeping would last
	 * until the timeout.  Take it as a dead owner's.
	 */
	if (!died && !(w.key.both.offset & FUT_OFF_INODE))
		died = ast_owner_gone(current->mm, uval);
	if (died || (ast_word_is_free(uval) &&
		     (mask & BIT_ULL(ast_word_state(uval))))) {
		/* Guarded entry: free in a state of the set, take it. */
		ast_select_waiter(hb, &w.key, -1, &others);
		ret = futex_cmpxchg_value_locked(&cur, uaddr, uval,
						 ast_word_owned(tid, others));
		if (ret)
			goto fault;
		futex_q_unlock(hb);
		if (cur != uval)
			goto changed;
		return died ? -EOWNERDEAD : ast_word_state(uval);
	}

	/*
	 * Locked, or free in a state outside the set: queue and sleep.  The
	 * waiters bit is set, or was already; then the same compare-and-swap
	 * writes nothing but proves the word writable, as the documentation
	 * promises (-EFAULT), where a private key never looked.  With the
	 * bit set before and after, a change is harmless: user space cannot
	 * free a word with the bit set, only the unlock in the kernel can,
	 * under the bucket lock, and it will find this waiter queued.
	 * Retrying then would only make the waiters fight for the bucket
	 * lock while user space takes the word.
	 */
	ret = futex_cmpxchg_value_locked(&cur, uaddr, uval,
					 uval | AST_MUTEX_WAITERS);
	if (ret)
		goto fault;
	if (cur != uval &&
	    !(uval & cur & AST_MUTEX_WAITERS)) {
		futex_q_unlock(hb);
		goto changed;
	}
	/* Woken to compete (or by a robust death wake) and lost. */
	if (woken) {
		woken = false;
		if (!w.lost++)
			w.lost_at = jiffies;
		ast_stat_add(AST_STAT_LOST, 1);
		/* Starved: claim the hand-off, unless another waiter has. */
		if (ast_claim_heir(hb, &w, jiffies))
			ast_stat_add(AST_STAT_HEIR, 1);
	}
	ast_stat_add(AST_STAT_QUEUED, 1);
	ast_wait_queue(hb, &w, uaddr, to);

	if (!futex_unqueue(&w.q)) {
		/*
		 * Dequeued by a waker.  An unlocker that handed us the lock
		 * wrote ->handoff before it released ->lock_ptr; pairs with
		 * smp_store_release() in __futex_wake_mark().  Then we own
		 * the lock, whatever else happened (signal, timeout).
		 */
		smp_rmb();
		ret = READ_ONCE(w.handoff);
		*policy = READ_ONCE(w.policy);
		if (ret != AST_NO_HANDOFF)
			return ret;
		/*
		 * Woken to compete (adaptive or AST_MUTEX_WAKE_ONLY unlock),
		 * or any other wake-up (robust death, FUTEX_WAKE): look at
		 * the word again.
		 */
		woken = true;
		goto retry;
	}

	if (to && !to->task)
		ret = -ETIMEDOUT;
	else if (signal_pending(current))
		ret = -ERESTARTNOINTR;
	else
		goto retry;	/* spurious wake-up */
	ast_drop_waiters_bit(uaddr, &w.key);
	return ret;

changed:
	/*
	 * Only user space can have changed the word under the bucket lock:
	 * look again, but let others run (futex_lock_pi() on -EAGAIN), as
	 * a writer on another CPU can make every compare-and-swap fail.
	 */
	cond_resched();
	goto retry;

fault:
	futex_q_unlock(hb);
	ret = ast_fault(uaddr, ret);
	if (ret)
		return ret;
	goto retry;
}

/*
 * The TID of @p as @p sees it (its own PID namespace): the value it
 * compares the word with when it unlocks, and the one the user-space
 * fast path writes (gettid()).  task_pid_vnr() would give the TID in the
 * unlocker's namespace.
 */
static pid_t ast_task_tid(struct task_struct *p)
{
	return task_pid_nr_ns(p, task_active_pid_ns(p));
}

/*
 * The unlock of the word at @uaddr, whose futex key is @key.  A failed
 * access to the word is resolved by fault_in_user_writeable(), which,
 * unlike GUP, does not give up on a fatal signal (fixup_user_fault()
 * without FAULT_FLAG_KILLABLE): the pass-on of a dying task relies on it.
 */
static int __ast_unlock(u32 __user *uaddr, union futex_key *key,
			unsigned int state, unsigned int flags)
{
	pid_t tid = task_pid_vnr(current);
	struct futex_hash_bucket *hb;
	struct ast_waiter *w;
	DEFINE_WAKE_Q(wake_q);
	u32 uval, cur, newval;
	bool others, handoff;
	int ret;

	hb = futex_hash(key);
retry:
	spin_lock(&hb->lock);
	ret = futex_get_value_locked(&uval, uaddr);
	if (ret)
		goto fault;
	if ((uval & AST_MUTEX_TID_MASK) != tid) {
		spin_unlock(&hb->lock);
		return -EPERM;
	}

	w = ast_select_waiter(hb, key, state, &others);
	handoff = w && ast_handoff_policy(flags, ast_heir_due(w, jiffies),
					  task_curr(w->q.task));
	if (handoff)
		newval = ast_word_owned(ast_task_tid(w->q.task), others);
	else
		newval = ast_word_free(state, others);
	ret = futex_cmpxchg_value_locked(&cur, uaddr, uval, newval);
	if (ret)
		goto fault;
	if (cur != uval) {
		/* Only user space can have changed it: look again. */
		spin_unlock(&hb->lock);
		cond_resched();
		goto retry;
	}
	ast_stat_add(AST_STAT_UNLOCK, 1);
	if (w) {
		ast_stat_add(handoff ? AST_STAT_HANDOFF : AST_STAT_WAKE, 1);
		w->policy = flags & (AST_MUTEX_HANDOFF | AST_MUTEX_WAKE_ONLY);
		/* Direct hand-off: the word already names the new owner. */
		if (handoff)
			w->handoff = state;
		/* Otherwise the waiter looks at the word again, and competes. */
		futex_wake_mark(&wake_q, &w->q);
	}
	spin_unlock(&hb->lock);
	wake_up_q(&wake_q);
	return w ? 1 : 0;

fault:
	spin_unlock(&hb->lock);
	ret = ast_fault(uaddr, ret);
	if (ret)
		return ret;
	goto retry;
}

static int ast_unlock(u32 __user *uaddr, unsigned int state,
		      unsigned int flags)
{
	union futex_key key = FUTEX_KEY_INIT;
	int ret;

	ret = get_futex_key(uaddr, ast_futex_flags(flags), &key, FUTEX_WRITE);
	if (ret)
		return ret;
	return __ast_unlock(uaddr, &key, state, flags);
}

/*
 * The caller owns a word whose owner died (-EOWNERDEAD) and is dying
 * itself: give the word back in the dead-owner state, and wake the first
 * AST waiter, which takes it with -EOWNERDEAD, as handle_futex_death()
 * would have.  As __ast_unlock(), with the key the lock computed and
 * faults resolved whatever signal is pending.
 */
static void ast_pass_on_died(u32 __user *uaddr, union futex_key *key)
{
	struct futex_hash_bucket *hb = futex_hash(key);
	pid_t tid = task_pid_vnr(current);
	struct ast_waiter *w;
	DEFINE_WAKE_Q(wake_q);
	struct futex_q *q;
	u32 uval, cur;
	int ret;

retry:
	w = NULL;
	spin_lock(&hb->lock);
	plist_for_each_entry(q, &hb->chain, list) {
		w = ast_waiter_on(q, key);
		if (w)
			break;
	}
	ret = futex_get_value_locked(&uval, uaddr);
	if (ret)
		goto fault;
	if ((uval & AST_MUTEX_TID_MASK) != tid)
		goto out;
	ret = futex_cmpxchg_value_locked(&cur, uaddr, uval,
					 AST_MUTEX_OWNER_DIED |
					 (w ? AST_MUTEX_WAITERS : 0));
	if (ret)
		goto fault;
	if (cur != uval) {
		spin_unlock(&hb->lock);
		cond_resched();
		goto retry;
	}
	if (w)
		futex_wake_mark(&wake_q, &w->q);
out:
	spin_unlock(&hb->lock);
	wake_up_q(&wake_q);
	return;

fault:
	spin_unlock(&hb->lock);
	if (!ast_fault(uaddr, ret))
		goto retry;
}

/*
 * The lock was taken, or handed over, while the caller has a fatal signal
 * pending: it dies on the way back to user space and would die owning the
 * mutex, locked forever unless it is robust.  A waiter woken by SIGKILL is
 * on a CPU, so the adaptive unlock even prefers it.  Pass the lock on as
 * an unlock by the caller would, into the state it was entered in and
 * with the policy of the unlock that handed it over; a futex-based mutex
 * never loses the lock this way either.
 *
 * This must not fail because of the signal.  So it uses the key that the
 * lock computed (@key) instead of calling get_futex_key() again, whose GUP
 * slow path returns -EINTR with a fatal signal pending (a shared word
 * whose page is not mapped writable in this mm, e.g. a file page that
 * writeback cleaned, so that GUP-fast fails), and it resolves a fault on
 * the word with fault_in_user_writeable(), which is not killable.  It can
 * then only fail where no unlock by the caller could succeed either: the
 * word was unmapped or made read-only, the fault itself failed (out of
 * memory, a file page that has to be read back in, userfaultfd), or user
 * space overwrote it.  The word then keeps the dying caller's TID, as if
 * it had died owning the mutex; a robust one is still recovered, through
 * the list_op_pending that user space set before the call.
 */
static void ast_pass_on(u32 __user *uaddr, union futex_key *key, int state,
			unsigned int flags, unsigned int policy)
{
	if (state == -EOWNERDEAD)
		ast_pass_on_died(uaddr, key);
	else
		__ast_unlock(uaddr, key, state,
			     (flags & AST_MUTEX_PRIVATE) | policy);
}

static int ast_setup_timeout(struct __kernel_timespec __user *utime,
			     clockid_t clockid, struct hrtimer_sleeper *to)
{
	struct timespec64 ts;
	int fflags = 0;
	ktime_t t;

	if (clockid == CLOCK_REALTIME)
		fflags = FLAGS_CLOCKRT;
	else if (clockid != CLOCK_MONOTONIC)
		return -EINVAL;
	if (get_timespec64(&ts, utime))
		return -EFAULT;
	if (!timespec64_valid(&ts))
		return -EINVAL;
	t = timespec64_to_ktime(ts);
	if (clockid == CLOCK_MONOTONIC)
		t = timens_ktime_to_host(CLOCK_MONOTONIC, t);
	futex_setup_timer(&t, to, fflags, current->timer_slack_ns);
	return 0;
}

/**
 * sys_ast_mutex_lock - enter an AST mutex in one of a set of states
 * @uaddr: the 32-bit AST word (see include/uapi/linux/ast_mutex.h)
 * @mask_lo: the entry set, states 0..31: bit i allows entry in state i
 * @mask_hi: the entry set, states 32..63: bit i allows state 32 + i
 * @flags: AST_MUTEX_PRIVATE or 0
 * @timeout: NULL, or an absolute time on @clockid to give up at
 * @clockid: CLOCK_MONOTONIC or CLOCK_REALTIME (only read with @timeout)
 *
 * Guarded entry (Ohki & Kuno, section 2.1, rules 2 and 3; the paper's
 * ast_mutex_enter() of section 2.3 and UMTX_OP_WAIT2 of section 3.2): if
 * the word is free in a state of the entry set, store the caller's TID in
 * it and return.  Otherwise queue on the word's futex hash bucket and
 * sleep until an unlocker hands the lock over in a state of the set, or
 * wakes the caller to compete for a word it freed in such a state
 * (sys_ast_mutex_unlock()); a caller that loses queues again.  Unlike the
 * paper's void enter, the state entered in is returned, so the caller
 * knows it without reading data.
 *
 * The 64-bit entry set comes in two 32-bit halves so that every ABI,
 * 32-bit and compat ones included, passes it the same way: no register
 * pairs, no compat entry point.
 *
 * Signals are handled and the call restarted transparently (as
 * FUTEX_LOCK_PI does): it never fails with -EINTR.  The timeout is
 * absolute, so a restart needs no restart block.
 *
 * Context: process context, may sleep.  Takes the futex hash bucket lock.
 * Return: the state index (0 .. AST_MUTEX_MAX_STATES - 1) the mutex was
 * entered in; the caller owns it.  -EOWNERDEAD: the caller owns it, but
 * the previous owner died holding it (robust list), or, for a word that
 * only the caller's process reaches, is no task of that process (a thread
 * that exited holding it; in a child of fork(), a thread of the parent:
 * ast_owner_gone()), and the state is lost; it must unlock into a state
 * that it has made true.  Errors, which leave
 * the word unchanged but for a waiters bit that no queued waiter needs
 * any more: -EINVAL (empty entry set, unknown @flags, a word not 32-bit
 * aligned or not an AST word, a bad @clockid or timespec), -EFAULT
 * (@uaddr or @timeout not accessible, or @uaddr not writable, also where
 * the call would not write it), -ENOMEM (the page of a shared word could
 * not be faulted in, as for futexes), -EDEADLK (the caller already owns
 * it), -ETIMEDOUT.  A caller with a fatal signal pending never returns owning
 * the mutex: one it took or was handed is passed on as its unlock would,
 * in a way that the signal cannot make fail (ast_pass_on()).
 */
SYSCALL_DEFINE6(ast_mutex_lock, u32 __user *, uaddr, u32, mask_lo,
		u32, mask_hi, unsigned int, flags,
		struct __kernel_timespec __user *, timeout, clockid_t, clockid)
{
	u64 state_mask = ((u64)mask_hi << 32) | mask_lo;
	struct hrtimer_sleeper to, *tp = NULL;
	union futex_key key;
	unsigned int policy;
	int ret;

	ret = ast_check_lock_args((unsigned long)uaddr, state_mask, flags);
	if (ret)
		return ret;
	if (timeout) {
		ret = ast_setup_timeout(timeout, clockid, &to);
		if (ret)
			return ret;
		tp = &to;
	}

	ret = ast_lock(uaddr, state_mask, flags, tp, &policy, &key);

	if (tp) {
		hrtimer_cancel(&tp->timer);
		destroy_hrtimer_on_stack(&tp->timer);
	}
	if ((ret >= 0 || ret == -EOWNERDEAD) && fatal_signal_pending(current)) {
		ast_pass_on(uaddr, &key, ret, flags, policy);
		ret = -EINTR;	/* never seen: the caller dies */
	}
	return ret;
}

/**
 * sys_ast_mutex_unlock - leave an AST mutex into a new state
 * @uaddr: the 32-bit AST word, owned by the caller
 * @new_state: the abstract state the object is left in
 * @flags: AST_MUTEX_PRIVATE or 0, as given to the lock, plus optionally
 *	one of AST_MUTEX_HANDOFF and AST_MUTEX_WAKE_ONLY
 *
 * Exit into a state (Ohki & Kuno, section 2.1, rule 4; ast_mutex_exit()
 * of section 2.3 and UMTX_OP_WAKE2 of section 3.2).  The waiter chosen is
 * the first queued one whose entry set holds @new_state, in the bucket's
 * order: by priority, first-come first-served among equal priorities
 * (the paper's libthr queued LIFO; the paper makes no ordering promise),
 * except that among non-real-time waiters the word's heir (below) comes
 * first and a waiter woken to compete that lost goes back ahead of the
 * ones never woken.  No other waiter is woken, and no waiter whose set
 * lacks @new_state.
 *
 * What happens to the chosen waiter depends on @flags:
 *
 * - AST_MUTEX_HANDOFF: the word is rewritten to its TID and it is woken:
 *   the lock passes directly and nobody can barge in (the paper).
 * - AST_MUTEX_WAKE_ONLY: the word is freed in @new_state and the waiter
 *   woken to compete for it like any other locker.
 * - neither (adaptive): as AST_MUTEX_HANDOFF if the waiter is still on a
 *   CPU, or is the word's heir and claimed that more than 4 ms ago
 *   (ast_heir_due()), else as AST_MUTEX_WAKE_ONLY.  The heir is the one
 *   waiter that claimed the hand-off after it was woken to compete and
 *   lost 8 times, the first time at least 4 ms ago
 *   (ast_waiter_starved()); it polls the owner while the owner runs, so
 *   that it is usually on a CPU when it is handed the lock.  Handing the
 *   lock to a sleeping thread convoys when threads outnumber CPUs;
 *   barging is bounded.
 *
 * With no chosen waiter the word is freed in @new_state.
 * AST_MUTEX_WAITERS is left set exactly when AST waiters remain queued.
 *
 * Context: process context.  Takes the futex hash bucket lock; does not
 * sleep except to fault the word in.
 * Return: 1 if a waiter was handed the lock or woken to compete for it,
 * 0 if nobody was woken.  Errors, which leave the word unchanged: -EINVAL
 * (@new_state not below AST_MUTEX_MAX_STATES, unknown @flags, both
 * AST_MUTEX_HANDOFF and AST_MUTEX_WAKE_ONLY, a word not 32-bit aligned),
 * -EFAULT (@uaddr not accessible or not writable), -ENOMEM (the page of
 * a shared word could not be faulted in), -EPERM (the caller does not own
 * the mutex).
 */
SYSCALL_DEFINE3(ast_mutex_unlock, u32 __user *, uaddr, unsigned int, new_state,
		unsigned int, flags)
{
	int ret;

	ret = ast_check_unlock_args((unsigned long)uaddr, new_state, flags);
	if (ret)
		return ret;
	return ast_unlock(uaddr, new_state, flags);
}

static int ast_stats_show(struct seq_file *m, void *v)
{
	u64 sum[AST_NR_STATS] = { };
	int cpu, i;

	for_each_possible_cpu(cpu)
		for (i = 0; i < AST_NR_STATS; i++)
			/* Racy: another CPU may be adding (see ast_stats). */
			sum[i] += data_race(per_cpu(ast_stats, cpu)[i]);
	for (i = 0; i < AST_NR_STATS; i++)
		seq_printf(m, "%s %llu\n", ast_stat_names[i], sum[i]);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(ast_stats);

static int __init ast_sync_debugfs_init(void)
{
	struct dentry *dir = debugfs_create_dir("ast_sync", NULL);

	debugfs_create_file("stats", 0400, dir, NULL, &ast_stats_fops);
	return 0;
}
late_initcall(ast_sync_debugfs_init);
