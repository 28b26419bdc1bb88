// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of the AST-sync internals: the word encoding, argument
 * validation, the choice of the waiter an unlock hands the lock to (or
 * wakes), on synthetic futex bucket queues, the adaptive hand-off
 * policy with its anti-starvation bound, and when the owner of a word
 * that one address space alone reaches is gone.
 */
#include <kunit/test.h>
#include <linux/kthread.h>
#include <linux/plist.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>

#include "ast_sync.h"

static void ast_test_word(struct kunit *test)
{
	u32 w;

	w = ast_word_free(0, false);
	KUNIT_EXPECT_EQ(test, w, AST_MUTEX_FREE);
	KUNIT_EXPECT_TRUE(test, ast_word_is_free(w));
	KUNIT_EXPECT_TRUE(test, ast_word_valid(w));
	KUNIT_EXPECT_EQ(test, ast_word_state(w), 0U);

	w = ast_word_free(63, true);
	KUNIT_EXPECT_EQ(test, w, AST_MUTEX_WAITERS | AST_MUTEX_FREE | 63U);
	KUNIT_EXPECT_TRUE(test, ast_word_is_free(w));
	KUNIT_EXPECT_EQ(test, ast_word_state(w), 63U);

	w = ast_word_owned(4194303, false);
	KUNIT_EXPECT_EQ(test, w, 4194303U);
	KUNIT_EXPECT_FALSE(test, ast_word_is_free(w));
	KUNIT_EXPECT_TRUE(test, ast_word_valid(w));
	w = ast_word_owned(1234, true);
	KUNIT_EXPECT_EQ(test, w & AST_MUTEX_TID_MASK, 1234U);
	KUNIT_EXPECT_TRUE(test, w & AST_MUTEX_WAITERS);

	/* The free bit lies above every possible TID. */
	KUNIT_EXPECT_GT(test, AST_MUTEX_FREE, (u32)PID_MAX_LIMIT);
	/* Same bits as the robust futex word, so handle_futex_death() works. */
	KUNIT_EXPECT_EQ(test, AST_MUTEX_WAITERS, FUTEX_WAITERS);
	KUNIT_EXPECT_EQ(test, AST_MUTEX_OWNER_DIED, FUTEX_OWNER_DIED);
	KUNIT_EXPECT_EQ(test, AST_MUTEX_TID_MASK, FUTEX_TID_MASK);

	/* Invalid words: uninitialised, stray bits next to a state. */
	KUNIT_EXPECT_FALSE(test, ast_word_valid(0));
	KUNIT_EXPECT_FALSE(test, ast_word_valid(AST_MUTEX_WAITERS));
	KUNIT_EXPECT_FALSE(test, ast_word_valid(AST_MUTEX_FREE | 0x40));
	KUNIT_EXPECT_FALSE(test, ast_word_valid(AST_MUTEX_FREE | 0x100000));
	/* The word a dead owner leaves (handle_futex_death()). */
	KUNIT_EXPECT_TRUE(test, ast_word_valid(AST_MUTEX_OWNER_DIED));
	KUNIT_EXPECT_TRUE(test, ast_word_valid(AST_MUTEX_OWNER_DIED |
					       AST_MUTEX_WAITERS));
}

static void ast_test_args(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, ast_check_lock_args(0x1000, 1, 0), 0);
	KUNIT_EXPECT_EQ(test, ast_check_lock_args(0x1000, ~0ULL,
						  AST_MUTEX_PRIVATE), 0);
	KUNIT_EXPECT_EQ(test, ast_check_lock_args(0x1000, 0, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, ast_check_lock_args(0x1002, 1, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, ast_check_lock_args(0x1000, 1, 2), -EINVAL);
	KUNIT_EXPECT_EQ(test, ast_check_lock_args(0x1000, 1, 0x80000000),
			-EINVAL);

	KUNIT_EXPECT_EQ(test, ast_check_unlock_args(0x1000, 0, 0), 0);
	KUNIT_EXPECT_EQ(test, ast_check_unlock_args(0x1000, 63, 1), 0);
	KUNIT_EXPECT_EQ(test, ast_check_unlock_args(0x1000, 5,
						    AST_MUTEX_WAKE_ONLY), 0);
	KUNIT_EXPECT_EQ(test, ast_check_unlock_args(0x1000, 5, 3), 0);
	/* Wake-only is an unlock flag. */
	KUNIT_EXPECT_EQ(test, ast_check_lock_args(0x1000, 1,
						  AST_MUTEX_WAKE_ONLY), -EINVAL);
	KUNIT_EXPECT_EQ(test, ast_check_unlock_args(0x1000, 64, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, ast_check_unlock_args(0x1000, ~0U, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, ast_check_unlock_args(0x1001, 0, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, ast_check_unlock_args(0x1000, 0, 8), -EINVAL);
	KUNIT_EXPECT_EQ(test, ast_check_unlock_args(0x1000, 0,
						    AST_MUTEX_HANDOFF), 0);
	KUNIT_EXPECT_EQ(test, ast_check_unlock_args(0x1000, 0,
						    AST_MUTEX_HANDOFF |
						    AST_MUTEX_PRIVATE), 0);
	/* One unlock policy at most. */
	KUNIT_EXPECT_EQ(test, ast_check_unlock_args(0x1000, 0,
						    AST_MUTEX_HANDOFF |
						    AST_MUTEX_WAKE_ONLY),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, ast_check_lock_args(0x1000, 1,
						  AST_MUTEX_HANDOFF), -EINVAL);
}

/* The adaptive unlock policy and its anti-starvation bound. */
static void ast_test_policy(struct kunit *test)
{
	struct ast_waiter w = { .lost = 0 };
	unsigned long now = jiffies;
	int i;

	/* Strict hand-off and pure wake-and-compete ignore the waiter. */
	for (i = 0; i < 4; i++) {
		KUNIT_EXPECT_TRUE(test, ast_handoff_policy(AST_MUTEX_HANDOFF,
							   i & 1, i & 2));
		KUNIT_EXPECT_FALSE(test, ast_handoff_policy(AST_MUTEX_WAKE_ONLY,
							    i & 1, i & 2));
	}
	/* Adaptive: compete while the waiter sleeps and is not starved, */
	KUNIT_EXPECT_FALSE(test, ast_handoff_policy(0, false, false));
	KUNIT_EXPECT_FALSE(test, ast_handoff_policy(AST_MUTEX_PRIVATE, false,
						    false));
	/* hand off to a waiter still on a CPU (no convoy) or the heir. */
	KUNIT_EXPECT_TRUE(test, ast_handoff_policy(0, false, true));
	KUNIT_EXPECT_TRUE(test, ast_handoff_policy(0, true, false));

	/* Never lost: not starved, however long it has waited. */
	w.lost_at = now - 100 * HZ;
	KUNIT_EXPECT_FALSE(test, ast_waiter_starved(&w, now));
	/* Lost long ago, but not often enough. */
	w.lost = AST_HANDOFF_LOSSES - 1;
	KUNIT_EXPECT_FALSE(test, ast_waiter_starved(&w, now));
	/* Lost often, but just now, or less than the timeout ago: not yet. */
	w.lost = AST_HANDOFF_LOSSES;
	w.lost_at = now;
	KUNIT_EXPECT_FALSE(test, ast_waiter_starved(&w, now));
	KUNIT_EXPECT_FALSE(test,
			   ast_waiter_starved(&w, now + AST_HANDOFF_TIMEOUT - 1));
	/* The timeout after the first loss: starved, across a wrap too. */
	KUNIT_EXPECT_TRUE(test,
			  ast_waiter_starved(&w, now + AST_HANDOFF_TIMEOUT));
	w.lost = AST_HANDOFF_LOSSES + 5;
	w.lost_at = ULONG_MAX - 1;
	KUNIT_EXPECT_TRUE(test, ast_waiter_starved(&w, AST_HANDOFF_TIMEOUT));
	KUNIT_EXPECT_FALSE(test,
			   ast_waiter_starved(&w, w.lost_at +
					      AST_HANDOFF_TIMEOUT - 1));
	/* About 4 ms, never less than a tick. */
	KUNIT_EXPECT_GE(test, AST_HANDOFF_TIMEOUT, 1UL);
	KUNIT_EXPECT_LE(test, jiffies_to_msecs(AST_HANDOFF_TIMEOUT),
			4U + jiffies_to_msecs(1));
}

/*
 * A sleeping heir is handed the lock only after it has held the claim for
 * longer than the timeout: a whole AST_HANDOFF_TIMEOUT, whenever in a
 * tick it claimed, so at most one such hand-off per word per timeout.
 */
static void ast_test_heir_due(struct kunit *test)
{
	struct ast_waiter w = { .lost = AST_HANDOFF_LOSSES };
	unsigned long now = jiffies;

	/* Starved long ago, but no claim: never due. */
	w.lost_at = now - 100 * HZ;
	w.heir_at = now - 100 * HZ;
	KUNIT_EXPECT_FALSE(test, ast_heir_due(&w, now));
	/* Claimed just now, or one timeout ago to the tick: not yet. */
	w.heir = true;
	w.heir_at = now;
	KUNIT_EXPECT_FALSE(test, ast_heir_due(&w, now));
	KUNIT_EXPECT_FALSE(test,
			   ast_heir_due(&w, now + AST_HANDOFF_TIMEOUT));
	/* A tick more: due, and across a wrap of jiffies too. */
	KUNIT_EXPECT_TRUE(test,
			  ast_heir_due(&w, now + AST_HANDOFF_TIMEOUT + 1));
	w.heir_at = ULONG_MAX - 1;
	KUNIT_EXPECT_FALSE(test, ast_heir_due(&w, AST_HANDOFF_TIMEOUT - 2));
	KUNIT_EXPECT_TRUE(test, ast_heir_due(&w, AST_HANDOFF_TIMEOUT - 1));
	/* What the unlock does with it: a sleeping heir waits its turn. */
	w.heir_at = now;
	KUNIT_EXPECT_FALSE(test, ast_handoff_policy(0, ast_heir_due(&w, now),
						    false));
	KUNIT_EXPECT_TRUE(test, ast_handoff_policy(0, ast_heir_due(&w, now),
						   true));
}

/*
 * After RT: the heir, then the waiters that lost, then the ones never
 * woken.
 */
static void ast_test_queue_prio(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, ast_queue_prio(MAX_RT_PRIO + 20, 0, false),
			AST_WAIT_PRIO);
	KUNIT_EXPECT_EQ(test, ast_queue_prio(MAX_PRIO - 1, 0, false),
			AST_WAIT_PRIO);
	KUNIT_EXPECT_EQ(test, ast_queue_prio(MAX_RT_PRIO + 20, 1, false),
			AST_RETRY_PRIO);
	KUNIT_EXPECT_EQ(test, ast_queue_prio(MAX_RT_PRIO, 5, false),
			AST_RETRY_PRIO);
	KUNIT_EXPECT_EQ(test, ast_queue_prio(MAX_RT_PRIO, 9, true),
			AST_HEIR_PRIO);
	/* Real-time (and deadline) waiters keep their priority. */
	KUNIT_EXPECT_EQ(test, ast_queue_prio(10, 0, false), 10);
	KUNIT_EXPECT_EQ(test, ast_queue_prio(10, 3, false), 10);
	KUNIT_EXPECT_EQ(test, ast_queue_prio(10, 9, true), 10);
	KUNIT_EXPECT_EQ(test, ast_queue_prio(0, 1, false), 0);
	KUNIT_EXPECT_EQ(test, ast_queue_prio(-1, 1, true), -1);
	/* Behind every real-time priority (SCHED_FIFO 1 is prio 98). */
	KUNIT_EXPECT_GT(test, AST_HEIR_PRIO, MAX_RT_PRIO - 1 - 1);
	KUNIT_EXPECT_LT(test, AST_HEIR_PRIO, AST_RETRY_PRIO);
	KUNIT_EXPECT_LT(test, AST_RETRY_PRIO, AST_WAIT_PRIO);
}

#define NR_W	6

struct ast_test_queue {
	struct futex_hash_bucket hb;
	struct ast_waiter w[NR_W];
	struct futex_q plain;
	union futex_key key, other_key;
};

static void ast_test_key(union futex_key *key, unsigned long addr)
{
	*key = FUTEX_KEY_INIT;
	key->both.ptr = addr;
	key->both.word = 0x1234;
	key->both.offset = 0;
}

static void ast_test_add(struct ast_test_queue *tq, struct futex_q *q,
			 union futex_key *key, int prio)
{
	q->key = *key;
	q->task = current;
	plist_node_init(&q->list, prio);
	plist_add(&q->list, &tq->hb.chain);
}

static void ast_test_add_waiter(struct ast_test_queue *tq, int i, u64 mask,
				union futex_key *key, int prio)
{
	struct ast_waiter *w = &tq->w[i];

	w->q = futex_q_init;
	w->q.wake = ast_wake;
	w->q.bitset = FUTEX_BITSET_MATCH_ANY;
	w->key = *key;
	w->mask = mask;
	w->handoff = AST_NO_HANDOFF;
	ast_test_add(tq, &w->q, key, prio);
}

static struct ast_test_queue *ast_test_queue(struct kunit *test)
{
	struct ast_test_queue *tq = kunit_kzalloc(test, sizeof(*tq),
						  GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, tq);
	spin_lock_init(&tq->hb.lock);
	plist_head_init(&tq->hb.chain);
	ast_test_key(&tq->key, 0x1000);
	ast_test_key(&tq->other_key, 0x2000);
	return tq;
}

/* ast_select_waiter() under the bucket lock, as the unlock calls it. */
static struct ast_waiter *ast_test_select(struct ast_test_queue *tq,
					  union futex_key *key, int state,
					  bool *others)
{
	struct ast_waiter *w;

	spin_lock(&tq->hb.lock);
	w = ast_select_waiter(&tq->hb, key, state, others);
	spin_unlock(&tq->hb.lock);
	return w;
}

static bool ast_test_has_heir(struct ast_test_queue *tq, union futex_key *key)
{
	bool heir;

	spin_lock(&tq->hb.lock);
	heir = !!ast_word_heir(&tq->hb, key);
	spin_unlock(&tq->hb.lock);
	return heir;
}

/* First matching waiter in FIFO order; the others are reported. */
static void ast_test_select_fifo(struct kunit *test)
{
	struct ast_test_queue *tq = ast_test_queue(test);
	bool others;

	KUNIT_EXPECT_NULL(test, ast_test_select(tq, &tq->key, 0, &others));
	KUNIT_EXPECT_FALSE(test, others);

	ast_test_add_waiter(tq, 0, BIT_ULL(1), &tq->key, MAX_RT_PRIO);
	ast_test_add_waiter(tq, 1, BIT_ULL(2), &tq->key, MAX_RT_PRIO);
	ast_test_add_waiter(tq, 2, BIT_ULL(1) | BIT_ULL(2), &tq->key,
			    MAX_RT_PRIO);

	KUNIT_EXPECT_PTR_EQ(test, ast_test_select(tq, &tq->key, 2,
						  &others), &tq->w[1]);
	KUNIT_EXPECT_TRUE(test, others);
	KUNIT_EXPECT_PTR_EQ(test, ast_test_select(tq, &tq->key, 1,
						  &others), &tq->w[0]);
	KUNIT_EXPECT_TRUE(test, others);
	/* Nobody waits for state 3: freed, the waiters stay. */
	KUNIT_EXPECT_NULL(test, ast_test_select(tq, &tq->key, 3, &others));
	KUNIT_EXPECT_TRUE(test, others);
	/* state -1 only asks whether anybody waits. */
	KUNIT_EXPECT_NULL(test, ast_test_select(tq, &tq->key, -1, &others));
	KUNIT_EXPECT_TRUE(test, others);

	/* Dequeue w[1]: state 2 now goes to w[2], the last waiter for it. */
	plist_del(&tq->w[1].q.list, &tq->hb.chain);
	plist_del(&tq->w[0].q.list, &tq->hb.chain);
	KUNIT_EXPECT_PTR_EQ(test, ast_test_select(tq, &tq->key, 2,
						  &others), &tq->w[2]);
	KUNIT_EXPECT_FALSE(test, others);
}

/* Other keys on the bucket and plain futex waiters are not candidates. */
static void ast_test_select_filter(struct kunit *test)
{
	struct ast_test_queue *tq = ast_test_queue(test);
	bool others;

	tq->plain = futex_q_init;
	ast_test_add(tq, &tq->plain, &tq->key, MAX_RT_PRIO);
	ast_test_add_waiter(tq, 0, ~0ULL, &tq->other_key, MAX_RT_PRIO);
	ast_test_add_waiter(tq, 1, BIT_ULL(63), &tq->key, MAX_RT_PRIO);

	KUNIT_EXPECT_NULL(test, ast_test_select(tq, &tq->key, 0, &others));
	KUNIT_EXPECT_TRUE(test, others);
	KUNIT_EXPECT_PTR_EQ(test, ast_test_select(tq, &tq->key, 63,
						  &others), &tq->w[1]);
	KUNIT_EXPECT_FALSE(test, others);
	KUNIT_EXPECT_PTR_EQ(test, ast_test_select(tq,
						  &tq->other_key, 5,
						  &others), &tq->w[0]);
	KUNIT_EXPECT_FALSE(test, others);
	KUNIT_EXPECT_TRUE(test, ast_is_waiter(&tq->w[0].q));
	KUNIT_EXPECT_FALSE(test, ast_is_waiter(&tq->plain));
}

/*
 * Expect @want to be the waiter chosen for @state, then dequeue it as its
 * wake-up would, so that the next call sees the rest of the queue.
 */
static void ast_expect_select_del(struct kunit *test, struct ast_test_queue *tq,
				  int state, struct ast_waiter *want)
{
	bool others;

	KUNIT_EXPECT_PTR_EQ(test, ast_test_select(tq, &tq->key, state,
						  &others), want);
	plist_del(&want->q.list, &tq->hb.chain);
}

/* Real-time waiters come first, by priority; FIFO within a priority. */
static void ast_test_select_prio(struct kunit *test)
{
	struct ast_test_queue *tq = ast_test_queue(test);
	bool others;

	ast_test_add_waiter(tq, 0, BIT_ULL(0), &tq->key, MAX_RT_PRIO);
	ast_test_add_waiter(tq, 1, BIT_ULL(0), &tq->key, 50);
	ast_test_add_waiter(tq, 2, BIT_ULL(0), &tq->key, 10);
	ast_test_add_waiter(tq, 3, BIT_ULL(0), &tq->key, 10);
	ast_test_add_waiter(tq, 4, BIT_ULL(1), &tq->key, 0);

	ast_expect_select_del(test, tq, 0, &tq->w[2]);
	ast_expect_select_del(test, tq, 0, &tq->w[3]);
	ast_expect_select_del(test, tq, 0, &tq->w[1]);
	KUNIT_EXPECT_PTR_EQ(test, ast_test_select(tq, &tq->key, 0,
						  &others), &tq->w[0]);
	KUNIT_EXPECT_TRUE(test, others);
	KUNIT_EXPECT_PTR_EQ(test, ast_test_select(tq, &tq->key, 1,
						  &others), &tq->w[4]);
	KUNIT_EXPECT_TRUE(test, others);
}

/*
 * A non-real-time waiter that was woken to compete and lost queues at
 * ast_queue_prio(): chosen before the waiters never woken, after RT ones.
 */
static void ast_test_select_retry(struct kunit *test)
{
	struct ast_test_queue *tq = ast_test_queue(test);
	bool others;

	ast_test_add_waiter(tq, 0, BIT_ULL(0), &tq->key,
			    ast_queue_prio(MAX_RT_PRIO, 0, false));
	ast_test_add_waiter(tq, 1, BIT_ULL(1), &tq->key,
			    ast_queue_prio(MAX_RT_PRIO, 0, false));
	ast_test_add_waiter(tq, 2, BIT_ULL(0), &tq->key,
			    ast_queue_prio(MAX_RT_PRIO + 5, 1, false));
	ast_test_add_waiter(tq, 3, BIT_ULL(0), &tq->key,
			    ast_queue_prio(MAX_RT_PRIO, 2, false));
	ast_test_add_waiter(tq, 4, BIT_ULL(0), &tq->key,
			    ast_queue_prio(30, 1, false));

	/* The RT waiter first, then the losers in FIFO order. */
	ast_expect_select_del(test, tq, 0, &tq->w[4]);
	ast_expect_select_del(test, tq, 0, &tq->w[2]);
	ast_expect_select_del(test, tq, 0, &tq->w[3]);
	KUNIT_EXPECT_PTR_EQ(test, ast_test_select(tq, &tq->key, 0,
						  &others), &tq->w[0]);
	KUNIT_EXPECT_TRUE(test, others);
	/* A loser does not take a state outside its set. */
	KUNIT_EXPECT_PTR_EQ(test, ast_test_select(tq, &tq->key, 1,
						  &others), &tq->w[1]);
}

/*
 * The heir: found only on its own word, chosen first among the non-RT
 * waiters of its states but after RT ones, and never for a state outside
 * its set; plain futex waiters (even at MAX_RT_PRIO) do not stop the walk
 * before it.
 */
static void ast_test_heir(struct kunit *test)
{
	struct ast_test_queue *tq = ast_test_queue(test);
	bool others;

	tq->plain = futex_q_init;
	ast_test_add(tq, &tq->plain, &tq->key, 50);
	ast_test_add_waiter(tq, 0, BIT_ULL(0), &tq->key,
			    ast_queue_prio(MAX_RT_PRIO, 1, false));
	ast_test_add_waiter(tq, 1, BIT_ULL(0), &tq->key,
			    ast_queue_prio(MAX_RT_PRIO, 0, false));
	KUNIT_EXPECT_FALSE(test, ast_test_has_heir(tq, &tq->key));

	/* The heir of another word on the same bucket is not ours. */
	tq->w[2].heir = true;
	ast_test_add_waiter(tq, 2, ~0ULL, &tq->other_key,
			    ast_queue_prio(MAX_RT_PRIO, 9, true));
	KUNIT_EXPECT_FALSE(test, ast_test_has_heir(tq, &tq->key));
	KUNIT_EXPECT_TRUE(test, ast_test_has_heir(tq, &tq->other_key));

	tq->w[3].heir = true;
	ast_test_add_waiter(tq, 3, BIT_ULL(0) | BIT_ULL(2), &tq->key,
			    ast_queue_prio(MAX_RT_PRIO, 9, true));
	ast_test_add_waiter(tq, 4, BIT_ULL(0), &tq->key,
			    ast_queue_prio(20, 0, false));
	KUNIT_EXPECT_TRUE(test, ast_test_has_heir(tq, &tq->key));
	/* Not for a state outside its set: the FIFO order holds. */
	KUNIT_EXPECT_NULL(test, ast_test_select(tq, &tq->key, 1, &others));
	KUNIT_EXPECT_TRUE(test, others);
	/* RT first, then the heir ahead of the earlier loser. */
	ast_expect_select_del(test, tq, 0, &tq->w[4]);
	KUNIT_EXPECT_PTR_EQ(test, ast_test_select(tq, &tq->key, 2,
						  &others), &tq->w[3]);
	ast_expect_select_del(test, tq, 0, &tq->w[3]);
	KUNIT_EXPECT_FALSE(test, ast_test_has_heir(tq, &tq->key));
	ast_expect_select_del(test, tq, 0, &tq->w[0]);
	KUNIT_EXPECT_PTR_EQ(test, ast_test_select(tq, &tq->key, 0,
						  &others), &tq->w[1]);
	KUNIT_EXPECT_FALSE(test, others);
}

static bool ast_test_claim(struct ast_test_queue *tq, struct ast_waiter *w,
			   unsigned long now)
{
	bool claimed;

	spin_lock(&tq->hb.lock);
	claimed = ast_claim_heir(&tq->hb, w, now);
	spin_unlock(&tq->hb.lock);
	return claimed;
}

/*
 * One heir per word.  A starved waiter claims only if no queued waiter of
 * the word holds the claim; an heir woken to compete, off the queue, may
 * meet a younger heir when it queues again after a loss: the older claim
 * stays, and the younger heir is requeued among the waiters that lost.
 */
static void ast_test_heir_claim(struct kunit *test)
{
	struct ast_test_queue *tq = ast_test_queue(test);
	unsigned long now = jiffies;
	struct ast_waiter *a = &tq->w[0], *b = &tq->w[1], *c = &tq->w[2];

	/* a, starved, not queued: claims when nobody holds the claim. */
	a->key = tq->key;
	a->lost = AST_HANDOFF_LOSSES;
	a->lost_at = now - AST_HANDOFF_TIMEOUT;
	KUNIT_EXPECT_TRUE(test, ast_test_claim(tq, a, now));
	KUNIT_EXPECT_TRUE(test, a->heir);
	KUNIT_EXPECT_EQ(test, a->heir_at, now);
	/* Not starved yet: no claim. */
	c->key = tq->key;
	c->lost = AST_HANDOFF_LOSSES - 1;
	c->lost_at = now - 100 * HZ;
	KUNIT_EXPECT_FALSE(test, ast_test_claim(tq, c, now));
	KUNIT_EXPECT_FALSE(test, c->heir);

	/* While a is out competing, b claims, queues and polls. */
	b->lost = AST_HANDOFF_LOSSES;
	b->lost_at = now - AST_HANDOFF_TIMEOUT;
	b->key = tq->key;
	KUNIT_EXPECT_TRUE(test, ast_test_claim(tq, b, now + 1));
	ast_test_add_waiter(tq, 1, BIT_ULL(0), &tq->key,
			    ast_queue_prio(MAX_RT_PRIO, b->lost, true));
	KUNIT_EXPECT_TRUE(test, ast_test_has_heir(tq, &tq->key));
	/* A third starved waiter finds b's claim and does not claim. */
	c->lost = AST_HANDOFF_LOSSES;
	KUNIT_EXPECT_FALSE(test, ast_test_claim(tq, c, now + 2));
	KUNIT_EXPECT_FALSE(test, c->heir);

	/* a lost and queues again: its older claim stays, b's goes. */
	KUNIT_EXPECT_FALSE(test, ast_test_claim(tq, a, now + 3));
	KUNIT_EXPECT_TRUE(test, a->heir);
	KUNIT_EXPECT_EQ(test, a->heir_at, now);
	KUNIT_EXPECT_FALSE(test, b->heir);
	KUNIT_EXPECT_EQ(test, b->q.list.prio, AST_RETRY_PRIO);
	KUNIT_EXPECT_FALSE(test, ast_test_has_heir(tq, &tq->key));

	/* The other way round: a queued older heir keeps its claim. */
	b->heir = true;
	b->heir_at = now;
	plist_del(&b->q.list, &tq->hb.chain);
	ast_test_add_waiter(tq, 1, BIT_ULL(0), &tq->key, AST_HEIR_PRIO);
	a->heir_at = now + 1;
	KUNIT_EXPECT_FALSE(test, ast_test_claim(tq, a, now + 3));
	KUNIT_EXPECT_FALSE(test, a->heir);
	KUNIT_EXPECT_TRUE(test, b->heir);
	KUNIT_EXPECT_EQ(test, b->q.list.prio, AST_HEIR_PRIO);
}

/*
 * A plain FUTEX_CMP_REQUEUE moved an AST waiter of another word onto our
 * word's queue (its futex_q's key is ours, its own word's is not): it is
 * never chosen, never counted as a waiter of our word, and never its heir,
 * even with a matching entry set.  Handing it our word would make its
 * lock call return owning a mutex it never asked for (and a dying one
 * would pass on its own word, leaving ours owned by a dead task).
 */
static void ast_test_select_requeued(struct kunit *test)
{
	struct ast_test_queue *tq = ast_test_queue(test);
	bool others;

	tq->w[0].heir = true;
	ast_test_add_waiter(tq, 0, ~0ULL, &tq->other_key,
			    ast_queue_prio(MAX_RT_PRIO, 9, true));
	/* Requeued: the futex_q now hashes on tq->key. */
	tq->w[0].q.key = tq->key;

	KUNIT_EXPECT_NULL(test, ast_test_select(tq, &tq->key, 0, &others));
	KUNIT_EXPECT_FALSE(test, others);
	KUNIT_EXPECT_FALSE(test, ast_test_has_heir(tq, &tq->key));
	/* Nor is it found for its own word: it is not queued there. */
	KUNIT_EXPECT_NULL(test, ast_test_select(tq,
						&tq->other_key, 0,
						&others));
	KUNIT_EXPECT_FALSE(test, others);

	/* A waiter of our word behind it is chosen, and is the only one. */
	ast_test_add_waiter(tq, 1, BIT_ULL(1), &tq->key, MAX_RT_PRIO);
	KUNIT_EXPECT_PTR_EQ(test, ast_test_select(tq, &tq->key, 1,
						  &others), &tq->w[1]);
	KUNIT_EXPECT_FALSE(test, others);
	KUNIT_EXPECT_NULL(test, ast_test_select(tq, &tq->key, 0, &others));
	KUNIT_EXPECT_TRUE(test, others);
}

/*
 * ast_owner_gone(): a word that only one mm reaches is taken from an owner
 * that is no live task of that mm, never from one that is, and never
 * where a CLONE_VM process shares the mm.  The test's kthread stands for
 * the owner, first without an mm, then using @mm.
 */
static void ast_test_owner_gone(struct kunit *test)
{
	u32 self = ast_word_owned(task_pid_vnr(current), true);
	u32 nobody = ast_word_owned(PID_MAX_LIMIT + 1, false);
	struct mm_struct *mm = mm_alloc();

	KUNIT_ASSERT_NOT_NULL(test, mm);
	/* Free, a dead owner's (no TID), or no mm: nothing to decide. */
	KUNIT_EXPECT_FALSE(test, ast_owner_gone(mm, ast_word_free(3, true)));
	KUNIT_EXPECT_FALSE(test, ast_owner_gone(mm, AST_MUTEX_OWNER_DIED |
						AST_MUTEX_WAITERS));
	KUNIT_EXPECT_FALSE(test, ast_owner_gone(NULL, nobody));
	/* No task has the TID; a task that does not use @mm. */
	KUNIT_EXPECT_TRUE(test, ast_owner_gone(mm, nobody));
	KUNIT_EXPECT_TRUE(test, ast_owner_gone(mm, self));

	/* A live task of @mm owns it. */
	kthread_use_mm(mm);
	KUNIT_EXPECT_FALSE(test, ast_owner_gone(mm, self));
	KUNIT_EXPECT_FALSE(test, ast_owner_gone(mm, self | AST_MUTEX_OWNER_DIED));
	kthread_unuse_mm(mm);

	/* A CLONE_VM process shares @mm: its TIDs may be another namespace's. */
	set_bit(MMF_MULTIPROCESS, &mm->flags);
	KUNIT_EXPECT_FALSE(test, ast_owner_gone(mm, nobody));
	KUNIT_EXPECT_FALSE(test, ast_owner_gone(mm, self));
	mmput(mm);
}

/* The heir's polling budget: rwsem_rspin_threshold()'s 25 us + 2 us/CPU. */
static void ast_test_spin_budget(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, ast_spin_budget_ns(1), 27 * NSEC_PER_USEC);
	KUNIT_EXPECT_EQ(test, ast_spin_budget_ns(2), 29 * NSEC_PER_USEC);
	KUNIT_EXPECT_EQ(test, ast_spin_budget_ns(64), 153 * NSEC_PER_USEC);
	KUNIT_EXPECT_EQ(test, ast_spin_budget_ns(137), 299 * NSEC_PER_USEC);
	KUNIT_EXPECT_EQ(test, ast_spin_budget_ns(138), 300 * NSEC_PER_USEC);
	KUNIT_EXPECT_EQ(test, ast_spin_budget_ns(8192), 300 * NSEC_PER_USEC);
	KUNIT_EXPECT_EQ(test, ast_spin_budget_ns(UINT_MAX),
			300 * NSEC_PER_USEC);
}

static struct kunit_case ast_sync_test_cases[] = {
	KUNIT_CASE(ast_test_word),
	KUNIT_CASE(ast_test_args),
	KUNIT_CASE(ast_test_select_fifo),
	KUNIT_CASE(ast_test_select_filter),
	KUNIT_CASE(ast_test_select_prio),
	KUNIT_CASE(ast_test_select_retry),
	KUNIT_CASE(ast_test_heir),
	KUNIT_CASE(ast_test_heir_claim),
	KUNIT_CASE(ast_test_select_requeued),
	KUNIT_CASE(ast_test_owner_gone),
	KUNIT_CASE(ast_test_policy),
	KUNIT_CASE(ast_test_heir_due),
	KUNIT_CASE(ast_test_queue_prio),
	KUNIT_CASE(ast_test_spin_budget),
	{}
};

static struct kunit_suite ast_sync_test_suite = {
	.name = "ast_sync",
	.test_cases = ast_sync_test_cases,
};

kunit_test_suite(ast_sync_test_suite);

MODULE_DESCRIPTION("KUnit tests for AST-sync state-guarded mutexes");
MODULE_LICENSE("GPL");
