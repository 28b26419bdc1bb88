/* SPDX-License-Identifier: GPL-2.0 */
/*
 * OpLog: per-CPU operation logs for update-heavy data structures.
 *
 * After Boyd-Wickizer, "Optimizing Communication Bottlenecks in
 * Multiprocessor Operating System Kernels", PhD thesis, MIT, 2014,
 * chapters 5 to 7.  An update does not touch the shared object: it is
 * appended to a log of the CPU it runs on (oplog_queue(), the thesis's
 * Object::queue).  A reader calls oplog_synchronize() (Object::synchronize),
 * which locks the object, merges the logged operations of every CPU in
 * timestamp order and executes them, and returns with the object locked;
 * oplog_unlock() (Object::unlock) ends the read.  The object lock does not
 * stop other CPUs from queueing into their logs meanwhile;
 * oplog_flush_locked() does (see the comment above oplog_synchronize()).
 *
 * The thesis's Queue class becomes a log kind (&enum oplog_kind), as sv6's
 * critique of the paper's API recommends: an ordered log of timestamped
 * operations, a per-CPU counter (commutative updates, no timestamps, no
 * entries), and an absorbing log for sets (an add and a remove of the same
 * item cancel, on one CPU at queue time and across CPUs at synchronize).
 *
 * Logs live in per-type log caches (thesis section 7): one clustered object
 * (<linux/clustered.h>) per type whose per-CPU representative is a
 * two-way set-associative table of slots, each holding at most one log.  A
 * miss on a full set evicts a victim, applying what this CPU logged for it (a
 * counter folds this CPU's delta alone; an ordered log is merged with the
 * victim's other logs); a full log synchronizes; retired logs are freed
 * through QDo (<linux/qdo.h>) once the only CPU that can still reach them
 * has passed a quiescent state.  A shrinker per type frees idle logs on
 * every CPU; the number of logs is a sum of per-CPU counts.
 *
 * See Documentation/core-api/oplog.rst for the model, the ordering guarantee
 * and its dependency on the clock, and a worked conversion.
 */
#ifndef _LINUX_OPLOG_H
#define _LINUX_OPLOG_H

#include <linux/atomic.h>
#include <linux/clustered.h>
#include <linux/completion.h>
#include <linux/gfp_types.h>
#include <linux/hash.h>
#include <linux/limits.h>
#include <linux/list.h>
#include <linux/lockdep_types.h>
#include <linux/oplog_types.h>
#include <linux/preempt.h>
#include <linux/spinlock_types.h>
#include <linux/types.h>
#include <asm/local.h>

struct shrinker;

/* Thesis defaults (section 7 and 8.3.2): 4096 slots per CPU, 128 entries. */
#define OPLOG_DEFAULT_SLOTS	4096
#define OPLOG_DEFAULT_MAX_LEN	128
/*
 * Operations that the logs of one object may hold on all CPUs together,
 * hence the most that one synchronize, flush or eviction applies in one
 * hold of the object lock, whatever the number of CPUs: 16 CPUs' logs of
 * the default length.  See &struct oplog_type.max_pending.
 */
#define OPLOG_DEFAULT_MAX_PENDING	2048

/**
 * enum oplog_kind - how a type logs its updates (the thesis's Queue class)
 * @OPLOG_ORDERED: a log of &struct oplog_op stamped with oplog_clock() and
 *	executed by ->exec in global timestamp order (the default Queue).
 * @OPLOG_COUNTER: a signed per-CPU delta; oplog_add() folds nothing until a
 *	synchronize hands the sum to ->fold (the thesis's CounterQueue,
 *	section 6.2).  Updates must commute.
 * @OPLOG_ABSORBING: a log of %OPLOG_ADD / %OPLOG_REMOVE operations on the
 *	items of a set, each a &struct oplog_keyed_op identified by its key.
 *	Operations on different items must commute; those on one item run in
 *	timestamp order.  An add
 *	followed by a remove of the same item cancel (absorption, section
 *	5.2.2) when the type asks for it with %OPLOG_LOCAL_ABSORB and
 *	%OPLOG_GLOBAL_ABSORB.  Global absorption is always safe.  Local
 *	absorption cancels an add still in this CPU's log against a remove,
 *	without looking at other CPUs' logs, so it requires the thesis's usage
 *	(a mapping is added once and removed once): an item must not be added
 *	again while an operation on it may still be logged on another CPU.
 *	With %OPLOG_UNSTAMPED, the type promises that its operations
 *	commute, those on one item included (it logs at most one operation
 *	per item at a time), except one logged behind another in the same
 *	log (oplog_queue_after()): nothing is stamped (no oplog_clock(),
 *	which is one global atomic where the TSC is not used), batches are
 *	applied in the order they were taken, which keeps each log's order,
 *	and every synchronize takes every logged operation.  Not with
 *	%OPLOG_GLOBAL_ABSORB, which needs the order.
 */
enum oplog_kind {
	OPLOG_ORDERED,
	OPLOG_COUNTER,
	OPLOG_ABSORBING,
};

/* &oplog_keyed_op.code values understood by %OPLOG_ABSORBING types. */
#define OPLOG_ADD		1
#define OPLOG_REMOVE		2

/* &oplog_type.flags */
#define OPLOG_LOCAL_ABSORB	0x1	/* cancel add+remove in one CPU's log */
#define OPLOG_GLOBAL_ABSORB	0x2	/* cancel add+remove across CPUs */
#define OPLOG_UNSTAMPED		0x4	/* no timestamps: operations commute */

/**
 * struct oplog_type_ops - what a user of OpLog provides
 * @obj_lock: return the object lock (the thesis's per-object lock), a
 *	spinlock_t that OpLog takes with spin_lock(), and with spin_trylock()
 *	to evict another object while per-CPU cache locks are held.  OpLog
 *	takes and releases it itself, so that sparse and lockdep see every
 *	acquisition.  Mandatory.
 * @exec: execute @op against the shared object (Op::exec).  Called with
 *	the object lock held, in task context, possibly from memory reclaim
 *	(the shrinker, only for __GFP_FS reclaim), from CPU hotplug, or while
 *	another object's lock of the same type is held (an eviction from that
 *	object's miss path).  Mandatory for %OPLOG_ORDERED and
 *	%OPLOG_ABSORBING.
 * @fold: add a CPU's @delta into the shared counter (CounterQueue::apply).
 *	Same context as @exec.  Mandatory for %OPLOG_COUNTER.
 * @absorb: @add and @remove cancelled each other and will not be executed;
 *	give the two ops back.  Object lock held (global absorption) or not
 *	(local absorption, called from oplog_queue()'s context).  Optional.
 * @attach: a CPU is about to get a log of this object: e.g. pin the object
 *	(the dentry counter takes one reference per attached CPU).  Object
 *	lock held.  Return false to refuse: oplog_queue() then fails with
 *	-ENOENT and nothing is logged.  Optional.
 * @detach: a CPU's log of this object was removed, after its operations
 *	were applied: undo @attach.  Object lock held, same context as @exec;
 *	the object lock is released afterwards, so @detach must not drop the
 *	last reference that keeps the object (and its lock) alive.
 *	Optional.
 * @reserve: a CPU's log of this object may take at most @want more
 *	operations: return how many it may take (0 to @want).  Each logged
 *	operation uses one unit of what a log was granted, and a log whose
 *	grant is used up misses and asks again; a type bounds by this the
 *	operations that sit in logs (inotify counts them against the queue's
 *	limit).  Object lock held, in oplog_queue()'s context; it may be
 *	called with OpLog's per-CPU raw locks held, so it must not sleep or
 *	take other locks.  With @reserve, oplog_queue() never executes an
 *	operation itself: where it would (no grant, no log memory, a busy
 *	victim, a full log) it fails with -ENOSPC and the caller takes its
 *	own locked path.  Only for %OPLOG_ORDERED; needs @release.
 * @release: @n units granted by @reserve went back: operations taken out
 *	of the logs to be applied (before their @exec), or a detached log's
 *	unused grant.  Same context as @reserve.
 *
 * None of the callbacks may call oplog_queue() or oplog_add() on the object
 * they were called for: its lock is held.
 */
struct oplog_type_ops {
	spinlock_t *(*obj_lock)(struct oplog_obj *obj);
	void	(*exec)(struct oplog_obj *obj, struct oplog_op *op);
	void	(*fold)(struct oplog_obj *obj, long delta);
	void	(*absorb)(struct oplog_obj *obj, struct oplog_op *add,
			  struct oplog_op *remove);
	bool	(*attach)(struct oplog_obj *obj);
	void	(*detach)(struct oplog_obj *obj);
	unsigned int (*reserve)(struct oplog_obj *obj, unsigned int want);
	void	(*release)(struct oplog_obj *obj, unsigned int n);
};

/**
 * struct oplog_type - one kind of logged object and its per-CPU log cache
 * @name: name in debugfs (oplog/<name>/)
 * @kind: the log kind
 * @ops: the callbacks
 * @nr_slots: log-cache slots per CPU, a power of two (0: 4096), in sets of
 *	%OPLOG_WAYS
 * @max_len: operations per log before it synchronizes (0: 128); ignored
 *	by %OPLOG_COUNTER.  Registration lowers it to @max_pending divided by
 *	the number of possible CPUs (at least 1)
 * @max_pending: operations the logs of one object may hold on all CPUs
 *	together (0: %OPLOG_DEFAULT_MAX_PENDING), so that an apply under
 *	the object lock is bounded by a constant, not by the CPU count; a
 *	machine with more possible CPUs than @max_pending holds at most one
 *	operation per CPU
 * @flags: %OPLOG_LOCAL_ABSORB, %OPLOG_GLOBAL_ABSORB, %OPLOG_UNSTAMPED
 *
 * Must be statically allocated (it carries lockdep keys).
 */
struct oplog_type {
	const char			*name;
	enum oplog_kind			kind;
	const struct oplog_type_ops	*ops;
	unsigned int			nr_slots;
	unsigned int			max_len;
	unsigned int			max_pending;
	unsigned int			flags;

	/* private: */
	unsigned int			slot_bits;
	unsigned int			shrink_cpu;
	void * __percpu			*spares;
	local_t __percpu		*uncached_stats;
	struct clustered_obj		caches;
	struct list_head		list;
	struct lock_class_key		log_key;
	struct lock_class_key		cache_key;
	struct shrinker			*shrinker;
	struct completion		released;
	struct dentry			*debugfs;
};

#ifdef CONFIG_OPLOG

/*
 * Private to lib/oplog.c, and to the counter's hit path below, which is
 * inline so that a hot counter update costs its callers no call: a log
 * cache, its logs, and their statistics.  Nothing else may touch them.
 */
enum oplog_stat {
	OPLOG_STAT_QUEUED,		/* operations accepted (shown: + hits) */
	OPLOG_STAT_HITS,		/* ... through the lockless hit path */
	OPLOG_STAT_MISSES,		/* slow path: no log of the object */
	OPLOG_STAT_EVICTIONS,		/* misses that evicted a victim */
	OPLOG_STAT_EVICT_BUSY,		/* ... whose victims were all locked */
	OPLOG_STAT_FULL,		/* full logs */
	OPLOG_STAT_DIRECT,		/* operations applied without a log */
	OPLOG_STAT_SYNCS,		/* synchronizes (and flushes) */
	OPLOG_STAT_FLUSHES,		/* flushes */
	OPLOG_STAT_APPLIED,		/* operations executed from logs */
	OPLOG_STAT_ABSORBED_LOCAL,	/* add+remove pairs cancelled at queue */
	OPLOG_STAT_ABSORBED_GLOBAL,	/* ... at synchronize */
	OPLOG_STAT_RETIRED,		/* logs handed to QDo */
	OPLOG_STAT_LOCAL_FOLDS,		/* counter deltas folded alone */
	OPLOG_STAT_REUSED,		/* misses that took a vacant log */
	OPLOG_STAT_MAX_APPLY,		/* most operations one apply handled */
	OPLOG_NR_STATS,
};

/*
 * One (object, CPU) log.  While it sits in a slot, ->obj is its tag; a
 * detached log has ->obj == NULL, so that a stale reader on the owner CPU
 * sees a mismatch, whether it stays in its slot, vacant, until its CPU
 * retags it, or is retired and freed.  The union's queueing fields are dead
 * once the log is retired, when the QDo or RCU head takes their place.
 * A counter's ->delta is outside the union: the owner's lockless hit path
 * may still add to a retired log (see __oplog_add_hit()), and must find
 * the dead mark there, not a QDo head that its add would corrupt.
 * ->len, ->ops and ->credit are guarded by ->lock.  For a type with
 * ->reserve, ->len + ->credit is what the type granted this log and has
 * not had back through ->release (the log's ops and its unused room);
 * without ->reserve, ->credit is UINT_MAX and never runs out.
 */
struct oplog_log {
	raw_spinlock_t		lock;
	unsigned int		len;
	unsigned int		credit;	/* ->reserve's grant left, or UINT_MAX */
	struct oplog_obj	*obj;
	struct oplog_type	*type;
	unsigned int		cpu;
	bool			referenced;
	atomic_long_t		delta;	/* COUNTER, see __oplog_add_hit() */
	union {
		struct list_head	ops;	/* ORDERED, ABSORBING */
		struct qdo_head		qdo;	/* retired */
		struct rcu_head		rcu;	/* retired before QDo is up */
	};
};

/*
 * A CPU's log cache: the per-CPU representative of &oplog_type.caches.  The
 * slot array (8 bytes per slot) is a separate allocation of nr_slots
 * pointers, at least %OPLOG_WAYS (32 KiB, an order-3 page, for 4096
 * slots).
 */
struct oplog_cache {
	/* Read by the owner's hit path; written by the owner only. */
	struct oplog_log	**slots;
	local_t			stats[OPLOG_NR_STATS];
	/* Used by remote CPUs: keep them off the owner's hot cache line. */
	raw_spinlock_t		lock ____cacheline_aligned_in_smp;
	/*
	 * Written under ->lock.  oplog_type_sum() reads them locklessly (a
	 * snapshot); oplog_cpu_nr_logs() takes ->lock, since a flush moves a
	 * log from one to the other and CPU hotplug must see it in either.
	 */
	unsigned int		nr_logs;	/* objects' logs in the slots */
	unsigned int		nr_vacant;	/* vacant logs in the slots */
	unsigned int		hand;	/* clock hand, under oplog_types_lock */
};

/*
 * A counter log's delta once the log was detached from its object.  The
 * owner's lockless hit path, which may still hold a pointer to the log,
 * adds to it anyway, finds an old value near this one, and misses (see
 * __oplog_add_hit()).  The mark is far from both a live sum (which never
 * comes near %OPLOG_DELTA_LIVE_MIN) and LONG_MIN: adds to a dead log,
 * negative ones included, must not wrap it around into the live range.
 */
#define OPLOG_DELTA_DEAD	(LONG_MIN / 2)
#define OPLOG_DELTA_LIVE_MIN	(LONG_MIN / 4)

/*
 * A log cache is two-way set associative: @obj's log sits in either slot of
 * its set, two adjacent slots in one cache line, so that two objects in
 * use whose pointers hash alike do not evict each other on every
 * operation.  A one-slot cache has one way.
 */
#define OPLOG_WAYS	2U

static __always_inline unsigned int oplog_ways(const struct oplog_type *type)
{
	return type->slot_bits ? OPLOG_WAYS : 1;
}

/* The first slot of @obj's set in a log cache of @type. */
static __always_inline unsigned int oplog_set(const struct oplog_type *type,
					      const struct oplog_obj *obj)
{
	/* hash_ptr(p, 0) would shift a u64 by 64. */
	if (!type->slot_bits)
		return 0;
	return hash_ptr((void *)obj, type->slot_bits) & ~(OPLOG_WAYS - 1);
}

/*
 * This CPU's log of @obj in @cache, found without a lock, or NULL: the log
 * tagged @obj in either way of its set.  A hint, with preemption disabled:
 * the tag is written under the log lock, so the caller checks it again
 * there (an ordered log) or through the dead mark (a counter's delta).
 * A one-slot cache has a second slot that stays NULL, so that no branch
 * here asks how many ways there are.
 */
static __always_inline struct oplog_log *
oplog_hit_log(const struct oplog_type *type, struct oplog_cache *cache,
	      const struct oplog_obj *obj)
{
	struct oplog_log **set = &cache->slots[oplog_set(type, obj)];
	struct oplog_log *log;

	log = READ_ONCE(set[0]);
	if (likely(log) && likely(READ_ONCE(log->obj) == obj))
		return log;
	log = READ_ONCE(set[1]);
	if (log && READ_ONCE(log->obj) == obj)
		return log;
	return NULL;
}

/*
 * The counter's hit path, without the context check of oplog_add_hit().
 * One per-CPU load finds this CPU's log cache, a hash and two loads (four
 * in the set's second way) its log of @obj and the log's tag, and one
 * atomic add on a line that no other CPU touches until it synchronizes
 * @obj adds @delta; no lock.
 *
 * A collector on another CPU (a synchronize, the shrinker) takes a log's
 * delta with one atomic exchange under the log lock, and one that detaches
 * the log leaves %OPLOG_DELTA_DEAD in its place.  The add here and that
 * exchange are ordered on the one word: an add before it is taken, an add
 * after it finds a dead old value, and the caller misses (what it added
 * to the dead log is never read; the delta is not in the union that the
 * retired log's QDo head overwrites).  The tag check cannot be fooled by a
 * log reused for another object: only this CPU retags its logs
 * (oplog_take_over() and oplog_reuse(), never while this runs, preemption
 * being disabled, and the latter clears the dead mark),
 * and a detached log is freed only after this CPU's next quiescent state
 * (oplog_retire()).  The referenced flag is a hint for the shrinker's
 * clock and a full set's choice of victim; a racing clear only makes the
 * log look idle once.
 */
static __always_inline bool __oplog_add_hit(struct oplog_type *type,
					    struct oplog_obj *obj, long delta)
{
	struct oplog_cache *cache;
	struct oplog_log *log;
	bool done = false;

	preempt_disable();
	cache = this_cpu_read(*type->caches.slot);
	if (likely(cache)) {
		log = oplog_hit_log(type, cache, obj);
		/* Pairs with the exchange in oplog_take(). */
		if (likely(log) &&
		    likely(atomic_long_fetch_add(delta, &log->delta) >=
			   OPLOG_DELTA_LIVE_MIN)) {
			if (!READ_ONCE(log->referenced))
				WRITE_ONCE(log->referenced, true);
			local_inc(&cache->stats[OPLOG_STAT_HITS]);
			done = true;
		}
	}
	preempt_enable();
	return done;
}

/**
 * oplog_add_hit() - add to this CPU's counter only if it logs the object
 * @type: the object's type, %OPLOG_COUNTER
 * @obj: the object
 * @delta: the signed amount
 *
 * The hit path of oplog_add() alone, inline: if this CPU already holds a
 * log of @obj, add @delta to it and return true; otherwise do nothing and
 * return false, without taking the object lock, allocating or evicting.
 * For callers that may not take the object lock (the dentry reference that
 * path_get() takes, whose caller may hold anything), or that want a log
 * only for objects shown to be hot (fs/dcache_oplog.c), and for every
 * caller's fast path: a miss then calls oplog_add().
 *
 * A log found here is attached: whatever its ->attach pinned stays pinned
 * until a synchronize detaches the log, which takes its delta and marks it
 * dead with one atomic exchange; the add here is one atomic add on the
 * same word, so @delta is either folded by that synchronize or found to
 * have gone to a dead log, and false is returned.  The thesis's per-log
 * lock (section 7) is kept for ordered and absorbing logs; a counter's hit
 * needs none, as only the owner CPU adds to its delta and a collector only
 * exchanges it (the CounterQueue of section 6.2).
 *
 * Context: any; outside task context (the per-CPU cache locks of the miss
 * path are not interrupt-safe) it returns false.  Does not sleep.
 * Return: true if @delta was added, false if the caller must account it
 * another way.
 */
static __always_inline bool oplog_add_hit(struct oplog_type *type,
					  struct oplog_obj *obj, long delta)
{
	return in_task() && __oplog_add_hit(type, obj, delta);
}

int oplog_type_register(struct oplog_type *type);
void oplog_type_unregister(struct oplog_type *type);

int oplog_queue(struct oplog_type *type, struct oplog_obj *obj,
		struct oplog_op *op);
int oplog_add(struct oplog_type *type, struct oplog_obj *obj, long delta);
bool oplog_absorb_hit(struct oplog_type *type, struct oplog_obj *obj,
		      struct oplog_op *add);
bool oplog_queue_after(struct oplog_type *type, struct oplog_obj *obj,
		       struct oplog_op *prev, struct oplog_op *op);

/*
 * oplog_synchronize() and oplog_synchronize_locked() apply every operation
 * queued before the call, but holding the object lock does NOT exclude
 * other CPUs' oplog_queue() or oplog_add(): their hit path never takes it,
 * and appends to their own logs while the reader holds the lock.  To keep
 * every CPU's updates out until the lock is dropped (e.g. a reader that
 * must see every pending update, such as an rmap walk), call
 * oplog_flush_locked() under the lock instead: it detaches every CPU's
 * log, so that an update must miss and take the object lock to log again.
 */
void oplog_synchronize(struct oplog_type *type, struct oplog_obj *obj)
	__acquires(obj);
bool oplog_synchronize_locked(struct oplog_type *type, struct oplog_obj *obj);
void oplog_synchronize_all_locked(struct oplog_type *type,
				  struct oplog_obj *obj);
void oplog_unlock(struct oplog_type *type, struct oplog_obj *obj)
	__releases(obj);
void oplog_flush_locked(struct oplog_type *type, struct oplog_obj *obj);
void oplog_flush(struct oplog_type *type, struct oplog_obj *obj);
bool oplog_obj_maybe_logged(struct oplog_type *type, struct oplog_obj *obj);

unsigned long oplog_type_nr_logs(struct oplog_type *type);
void oplog_type_drain(struct oplog_type *type);

u64 oplog_clock(void);
bool oplog_clock_is_tsc(void);

#endif /* CONFIG_OPLOG */

/**
 * oplog_obj_init() - initialise the OpLog metadata of an object
 * @obj: the metadata embedded in the object
 *
 * Context: any.
 */
static inline void oplog_obj_init(struct oplog_obj *obj)
{
	obj->cpus = 0;
}

/**
 * oplog_obj_has_logs() - may some CPU hold a log of this object?
 * @obj: the object
 *
 * A lockless hint (e.g. to skip a synchronize on an object nobody logged
 * to); exact only under the object lock.  Context: any.
 * Return: false if no CPU holds a log of @obj.
 */
static inline bool oplog_obj_has_logs(const struct oplog_obj *obj)
{
	return READ_ONCE(obj->cpus) != 0;
}

#endif /* _LINUX_OPLOG_H */
