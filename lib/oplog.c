// SPDX-License-Identifier: GPL-2.0
/*
 * OpLog: per-CPU operation logs, merged in timestamp order on synchronize.
 *
 * After Boyd-Wickizer, "Optimizing Communication Bottlenecks in
 * Multiprocessor Operating System Kernels", PhD thesis, MIT, 2014.
 * See include/linux/oplog.h and Documentation/core-api/oplog.rst.  This
 * file holds the logs, synchronize and queueing; lib/oplog_counter.c the
 * counter kind's delta, lib/oplog_cache.c the per-CPU log caches
 * (eviction, the shrinker, CPU hotplug), and lib/oplog_debugfs.c the
 * statistics, over lib/oplog_internal.h.
 *
 * Data structures.  Each registered type owns a clustered object whose
 * per-CPU representative is a log cache: a table of nr_slots slots in
 * two-way sets, the set hashed from the object pointer (thesis section 7,
 * whose cache is direct-mapped: two objects in use that hash alike would
 * evict each other on every operation).  A slot holds at most one log, a
 * cache at most one log of an object, and a log belongs to one (object,
 * CPU) pair, or to none: a flush leaves each log it empties in its slot,
 * vacant, and the owner's next miss on that set takes it, so that a reader
 * that flushes often (a truncate of a file that every CPU's forks map)
 * costs no log allocation and no QDo callback per CPU.  A miss on a full
 * set evicts a log not referenced since the set's last eviction or the
 * shrinker's last pass (second chance), else the first way's.
 *
 * Locks, outermost first:
 *   object lock (->obj_lock)         - held to attach or detach a log of the
 *                                      object, and to apply its operations;
 *                                      guards &oplog_obj.cpus
 *   cache->lock (raw, per CPU)       - guards the slots of one CPU's cache;
 *                                      taken by remote synchronizers and by
 *                                      the owner's miss path, never by the
 *                                      owner's hit path
 *   log->lock (raw, per log)         - guards one log's contents
 * Another object's lock is only ever trylocked with a cache lock held
 * (eviction, shrinker, CPU hotplug), so the order cannot invert.
 *
 * The hit path of oplog_queue()/oplog_add() reads this CPU's set without
 * a lock, with preemption disabled, then takes the log's own lock and checks
 * the log still belongs to the object.  A log that is taken out of its slot
 * (an eviction, the shrinker, a dead CPU) can therefore still be reached by
 * its owner CPU until that CPU passes a quiescent state, and by no other
 * CPU: retired logs are freed by a QDo callback whose quiescence mask is
 * that one CPU (Tam 2006, section 3.1.3).  A vacant log stays reachable
 * and is retagged only by its owner, like an evicted victim's log.
 *
 * Ordering.  Operations are stamped under their log's lock, so each log is
 * sorted.  A synchronize reads the clock once (the cutoff), then takes from
 * each log the operations stamped at or before it.  An operation stamped
 * at or before the cutoff was appended, under its log lock, before the
 * synchronizer took that lock, so none is missed; operations stamped later
 * stay queued and are applied by a later synchronize, after every earlier
 * one.  That keeps global timestamp order while other CPUs go on queueing
 * (the concurrent synchronize of the thesis's section 10.2).
 */

#define pr_fmt(fmt) "oplog: " fmt

#include <linux/cpuhotplug.h>
#include <linux/export.h>
#include <linux/hash.h>
#include <linux/list_sort.h>
#include <linux/log2.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/oplog.h>
#include <linux/overflow.h>
#include <linux/qdo.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/shrinker.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <asm/local.h>

#include "oplog_internal.h"

struct kmem_cache *oplog_log_cachep;
LIST_HEAD(oplog_types);
DEFINE_MUTEX(oplog_types_lock);	/* oplog_types, and hotplug/shrink */
static bool oplog_ready;

/* ---- clock ---- */

/*
 * Read by every timestamped queue: read-only after boot (__ro_after_init),
 * so that it shares no cache line with data that other CPUs write.
 */
static DEFINE_STATIC_KEY_FALSE_RO(oplog_tsc_key);
static atomic64_t oplog_seq = ATOMIC64_INIT(0);
static char oplog_clock_param[8] = "auto";
module_param_string(clock, oplog_clock_param, sizeof(oplog_clock_param), 0444);
MODULE_PARM_DESC(clock, "timestamp source: auto (TSC if synchronized), tsc, seq");

/**
 * oplog_clock() - the timestamp of an OpLog operation
 *
 * The x86 TSC (rdtsc_ordered()) when the kernel considered it constant-rate
 * and synchronized across CPUs at boot (thesis section 2.2: "modern hardware
 * keeps [cycle counters] synchronized"), otherwise a global sequence counter
 * (one atomic increment: correct on any machine, contended at scale).  The
 * choice is made once at boot; oplog.clock=seq forces the counter and
 * oplog.clock=tsc the TSC.  Never local_clock(), which may go backwards
 * across CPUs.  With the TSC, OpLog's guarantees assume that the skew
 * between any two CPUs' TSCs is below the latency of a cache-line transfer
 * between them (the thesis's assumption); a TSC that the clocksource
 * watchdog marks unstable after boot voids them (boot with oplog.clock=seq
 * on such machines).
 *
 * Context: any.
 * Return: a timestamp, monotonic across CPUs (see oplog.rst for the skew
 * assumption of the TSC).
 */
u64 oplog_clock(void)
{
	if (static_branch_likely(&oplog_tsc_key))
		return arch_oplog_clock();
	return atomic64_inc_return(&oplog_seq);
}
EXPORT_SYMBOL_GPL(oplog_clock);

/**
 * oplog_clock_is_tsc() - does oplog_clock() read the TSC?
 *
 * Context: any.
 * Return: true for the TSC, false for the global sequence counter.
 */
bool oplog_clock_is_tsc(void)
{
	return static_key_enabled(&oplog_tsc_key);
}
EXPORT_SYMBOL_GPL(oplog_clock_is_tsc);

static void __init oplog_clock_init(void)
{
	bool forced = !strcmp(oplog_clock_param, "tsc");

	/* oplog.clock=tsc: the user vouches for the counter (e.g. QEMU TCG). */
	if (arch_oplog_clock_present() &&
	    (forced || (arch_oplog_clock_synced() &&
			strcmp(oplog_clock_param, "seq"))))
		static_branch_enable(&oplog_tsc_key);
	pr_info("timestamps from the %s%s\n",
		oplog_clock_is_tsc() ? "TSC" : "global sequence counter",
		forced ? " (oplog.clock=tsc)" : "");
}

/* ---- helpers ---- */

/*
 * This CPU's counter @s: in its cache, or, for a CPU that has none (a
 * reader that only synchronizes never queues, so never gets one), in the
 * type's uncached statistics.  Preemption disabled.  A type that failed
 * to register has neither, and its users still synchronize and flush
 * their objects, which have no logs: NULL.
 */
static local_t *oplog_stat_ptr(struct oplog_type *type, enum oplog_stat s)
{
	struct oplog_cache *cache;

	/* Set by registration before the caches, cleared after them. */
	if (unlikely(!type->uncached_stats || !type->caches.slot))
		return NULL;
	cache = this_cpu_read(*type->caches.slot);
	if (cache)
		return &cache->stats[s];
	return this_cpu_ptr(type->uncached_stats) + s;
}

/* Count an event on this CPU; never allocates. */
void oplog_stat(struct oplog_type *type, enum oplog_stat s, long n)
{
	local_t *v;

	preempt_disable();
	v = oplog_stat_ptr(type, s);
	if (v)
		local_add(n, v);
	preempt_enable();
}

/*
 * Raise this CPU's high-water mark @s to @n.  The mark is read as the
 * maximum over CPUs (lib/oplog_debugfs.c), not summed.  Compare and
 * exchange: an interrupt on this CPU may raise it between the read and
 * the write, and must not be undone.
 */
static void oplog_stat_max(struct oplog_type *type, enum oplog_stat s, long n)
{
	local_t *v;
	long old;

	preempt_disable();
	v = oplog_stat_ptr(type, s);
	if (v) {
		old = local_read(v);
		while (old < n && !local_try_cmpxchg(v, &old, n))
			;
	}
	preempt_enable();
}

static void oplog_log_free(struct oplog_log *log)
{
	kmem_cache_free(oplog_log_cachep, log);
}

static void oplog_log_free_qdo(struct qdo_head *head)
{
	oplog_log_free(container_of(head, struct oplog_log, qdo));
}

static void oplog_log_free_rcu(struct rcu_head *head)
{
	oplog_log_free(container_of(head, struct oplog_log, rcu));
}

/*
 * A detached log can still be reached by its owner CPU's hit path (it read
 * the slot before the log was detached): free it after that CPU alone has
 * passed a quiescent state.  QDo is not up in early boot; RCU covers that
 * (a preempt-disabled region is an RCU reader too).
 */
void oplog_retire(struct oplog_log *log)
{
	unsigned int cpu = log->cpu;

	oplog_stat(log->type, OPLOG_STAT_RETIRED, 1);
	if (qdo_call(&log->qdo, oplog_log_free_qdo, cpumask_of(cpu),
		     cpumask_of(cpu)))
		call_rcu(&log->rcu, oplog_log_free_rcu);
}

/*
 * Move the operations of @log stamped at or before @cutoff to the tail of
 * @batch (all of them for U64_MAX); add a counter's delta to *@delta (see
 * oplog_counter_take()).  Logs are sorted, so this is a prefix.  @detach:
 * the log leaves its object (it is retired, or left vacant for its CPU's
 * next miss).  Called with @log->lock held.  Returns true if operations
 * stamped after @cutoff stay in the log.
 */
static bool oplog_take(struct oplog_type *type, struct oplog_log *log,
		       u64 cutoff, bool detach, struct list_head *batch,
		       long *delta)
{
	struct oplog_op *op;
	LIST_HEAD(prefix);
	unsigned int n = 0;

	lockdep_assert_held(&log->lock);

	if (oplog_is_counter(type)) {
		*delta += oplog_counter_take(log, detach);
		return false;
	}
	if (cutoff == U64_MAX) {
		list_splice_tail_init(&log->ops, batch);
		log->len = 0;
		return false;
	}
	list_for_each_entry(op, &log->ops, node) {
		if (op->ts > cutoff)
			break;
		n++;
	}
	if (n) {
		/* @op is the first one to keep, or the head itself. */
		list_cut_before(&prefix, &log->ops, &op->node);
		list_splice_tail(&prefix, batch);
		log->len -= n;
	}
	return !list_empty(&log->ops);
}

/* Is @batch in timestamp order already?  One pass, no indirect calls. */
static bool oplog_sorted_by_ts(const struct list_head *batch)
{
	const struct oplog_op *op, *prev = NULL;

	list_for_each_entry(op, batch, node) {
		if (prev && prev->ts > op->ts)
			return false;
		prev = op;
	}
	return true;
}

static int oplog_cmp_ts(void *priv, const struct list_head *a,
			const struct list_head *b)
{
	const struct oplog_op *x = list_entry(a, struct oplog_op, node);
	const struct oplog_op *y = list_entry(b, struct oplog_op, node);

	return x->ts > y->ts;
}

/* An %OPLOG_ABSORBING type's operation, with its key and code. */
static inline struct oplog_keyed_op *oplog_keyed(struct oplog_op *op)
{
	return container_of(op, struct oplog_keyed_op, op);
}

static int oplog_cmp_key_ts(void *priv, const struct list_head *a,
			    const struct list_head *b)
{
	const struct oplog_keyed_op *x =
		list_entry(a, struct oplog_keyed_op, op.node);
	const struct oplog_keyed_op *y =
		list_entry(b, struct oplog_keyed_op, op.node);

	if (x->key != y->key)
		return x->key > y->key;
	return x->op.ts > y->op.ts;
}

/*
 * Apply a batch to @obj (object lock held): the thesis's Queue::apply.
 * ORDERED: every op in timestamp order.  ABSORBING: ordered by item, then
 * timestamp (operations on different items commute), an add directly
 * followed by a remove of the same item cancelled (try_absorb); unstamped,
 * in the order taken, which keeps each log's order (oplog_queue_after()
 * relies on it; other operations commute).  COUNTER: the delta is
 * folded in.
 */
static void oplog_apply(struct oplog_type *type, struct oplog_obj *obj,
			struct list_head *batch, long delta)
{
	const struct oplog_type_ops *ops = type->ops;
	struct oplog_op *op, *next;
	long applied = 0, absorbed = 0;

	oplog_assert_obj_locked(type, obj);

	if (oplog_is_counter(type)) {
		oplog_counter_fold(type, obj, delta);
		return;
	}
	if (list_empty(batch))
		return;
	if (type->kind == OPLOG_ORDERED) {
		/* One CPU's log, the common case for a reader, is sorted. */
		if (!oplog_sorted_by_ts(batch))
			list_sort(NULL, batch, oplog_cmp_ts);
	} else if (oplog_stamped(type)) {
		list_sort(NULL, batch, oplog_cmp_key_ts);
	}

	while (!list_empty(batch)) {
		op = list_first_entry(batch, struct oplog_op, node);
		list_del(&op->node);
		if ((type->flags & OPLOG_GLOBAL_ABSORB) &&
		    oplog_keyed(op)->code == OPLOG_ADD && !list_empty(batch)) {
			next = list_first_entry(batch, struct oplog_op, node);
			if (oplog_keyed(next)->key == oplog_keyed(op)->key &&
			    oplog_keyed(next)->code == OPLOG_REMOVE) {
				list_del(&next->node);
				if (ops->absorb)
					ops->absorb(obj, op, next);
				absorbed++;
				continue;
			}
		}
		ops->exec(obj, op);
		applied++;
	}
	/* Every logged operation of a reserving type used one unit. */
	if (ops->release && applied)
		ops->release(obj, applied);
	oplog_stat(type, OPLOG_STAT_APPLIED, applied);
	if (absorbed)
		oplog_stat(type, OPLOG_STAT_ABSORBED_GLOBAL, absorbed);
	oplog_stat_max(type, OPLOG_STAT_MAX_APPLY, applied + 2 * absorbed);
}

/*
 * @obj's log in @cache, and its slot in *@slot; NULL if @cache holds none.
 * @cache->lock held: only the owner tags a log, and under that lock.
 */
static struct oplog_log *oplog_find(struct oplog_type *type,
				    struct oplog_cache *cache,
				    struct oplog_obj *obj, unsigned int *slot)
{
	unsigned int i = oplog_set(type, obj), end = i + oplog_ways(type);
	struct oplog_log *log;

	lockdep_assert_held(&cache->lock);
	for (; i < end; i++) {
		log = cache->slots[i];
		if (log && log->obj == obj) {
			*slot = i;
			return log;
		}
	}
	return NULL;
}

/*
 * Take @obj's operations out of @cpu's log (those up to @cutoff, or all of
 * them if it is detached).  A flush leaves the emptied log in its slot
 * with no object (a vacant log), for @cpu's next miss on that set to take
 * without a new allocation or a QDo grace period (oplog_reuse()); only an
 * eviction, which frees memory, takes it out of the slot.  Returns the log
 * unless @how is %OPLOG_DETACH_NONE.  Sets *@left if operations stamped
 * after @cutoff stay in the log.  Object lock held.
 */
struct oplog_log *oplog_collect(struct oplog_type *type,
				struct oplog_obj *obj, unsigned int cpu,
				u64 cutoff, enum oplog_detach how,
				struct list_head *batch, long *delta,
				bool *left)
{
	bool detach = how != OPLOG_DETACH_NONE;
	struct oplog_cache *cache = oplog_cache_of(type, cpu);
	struct oplog_log *log;
	unsigned int i, credit = 0;

	oplog_assert_obj_locked(type, obj);

	if (!cache)
		return NULL;
	raw_spin_lock(&cache->lock);
	log = oplog_find(type, cache, obj, &i);
	if (!log) {
		raw_spin_unlock(&cache->lock);
		return NULL;
	}
	raw_spin_lock(&log->lock);
	if (oplog_take(type, log, detach ? U64_MAX : cutoff, detach, batch,
		       delta))
		*left = true;
	if (detach) {
		credit = log->credit;
		WRITE_ONCE(log->obj, NULL);
		WRITE_ONCE(cache->nr_logs, cache->nr_logs - 1);
		if (how == OPLOG_DETACH_FREE)
			WRITE_ONCE(cache->slots[i], NULL);
		else
			WRITE_ONCE(cache->nr_vacant, cache->nr_vacant + 1);
	}
	raw_spin_unlock(&log->lock);
	raw_spin_unlock(&cache->lock);
	/* A detached log's unused grant goes back to its object. */
	if (detach && credit && type->ops->release)
		type->ops->release(obj, credit);
	return detach ? log : NULL;
}

/*
 * The body of synchronize and flush, object lock held.  @batch and @delta
 * carry operations already taken out of a log (an evicted one); @cutoff is
 * the timestamp up to which operations are applied (0: now).  Returns true
 * if operations stamped after the cutoff stay in some log.
 */
bool __oplog_sync(struct oplog_type *type, struct oplog_obj *obj,
		  bool flush, struct list_head *batch, long delta,
		  u64 cutoff)
{
	unsigned long cpus = READ_ONCE(obj->cpus);
	unsigned int cpu, detached = 0;
	struct oplog_log *log;
	bool left = false;

	oplog_assert_obj_locked(type, obj);

	if (cpus) {
		if (!cutoff)
			cutoff = oplog_stamped(type) ? oplog_clock() : U64_MAX;
		for_each_possible_cpu(cpu) {
			if (!(cpus & oplog_cpu_bit(cpu)))
				continue;
			log = oplog_collect(type, obj, cpu, cutoff,
					    flush ? OPLOG_DETACH_VACATE :
					    OPLOG_DETACH_NONE,
					    batch, &delta, &left);
			if (log)
				detached++;
		}
	}
	if (flush)
		WRITE_ONCE(obj->cpus, 0);
	oplog_apply(type, obj, batch, delta);
	if (type->ops->detach)
		while (detached--)
			type->ops->detach(obj);
	oplog_stat(type, OPLOG_STAT_SYNCS, 1);
	if (flush)
		oplog_stat(type, OPLOG_STAT_FLUSHES, 1);
	return left;
}

/*
 * Apply what was taken out of @cpu's log of @obj when that log was evicted
 * or detached (@cpu's bit already cleared where bits are exact): object
 * lock held.  An ordered or absorbing log is merged with the other CPUs'
 * logs, since timestamp order needs them, which visits only the CPUs whose
 * bit is set: none when this was the object's only log.  A counter's delta
 * may be folded alone (oplog_counter_apply_evicted()).
 */
void oplog_apply_evicted(struct oplog_type *type, struct oplog_obj *obj,
			 unsigned int cpu, struct list_head *batch,
			 long delta)
{
	oplog_assert_obj_locked(type, obj);

	if (oplog_is_counter(type))
		oplog_counter_apply_evicted(type, obj, cpu, delta);
	else
		__oplog_sync(type, obj, false, batch, delta, 0);
}

/**
 * oplog_synchronize_locked() - apply every logged operation of an object
 * @type: the object's type
 * @obj: the object, locked by the caller
 *
 * Object::synchronize without the lock: merges the logs of every CPU that
 * holds one for @obj and executes their operations in global timestamp
 * order (thesis section 6.1), or folds their deltas.  Every operation whose
 * oplog_queue() or oplog_add() returned before this call started is
 * applied; other CPUs may keep queueing meanwhile, and what they queue stays
 * logged, in order, for the next synchronize (thesis section 10.2).  The
 * logs stay attached.
 *
 * Holding the object lock does not exclude other CPUs' oplog_queue() and
 * oplog_add(): their hit path takes only their own log's lock (a counter's none).  So after
 * this call the shared object reflects every update that returned before
 * it, not every update that returns while the caller holds the lock.  A
 * reader that needs the latter (no operation pending anywhere until it
 * unlocks, e.g. an rmap walk that must see every mapping) calls
 * oplog_flush_locked() instead, which detaches every CPU's log: a new
 * queue() then misses and needs the object lock.
 *
 * A reader that sleeps when it finds nothing (inotify's read()) needs to
 * know about operations that were already in a log but stamped after the
 * cutoff, which this call leaves there: the return value tells, so that it
 * synchronizes again instead of sleeping on an update whose queuer may
 * already have looked for sleepers.
 *
 * Context: the object lock held; takes per-CPU cache and log locks (raw);
 * calls ->exec, ->fold and ->absorb with the object lock held.  Does not
 * sleep unless the callbacks do.
 * Return: true if operations stamped after this call's cutoff were left in
 * some log (never for a counter).
 */
bool oplog_synchronize_locked(struct oplog_type *type, struct oplog_obj *obj)
{
	LIST_HEAD(batch);

	oplog_assert_obj_locked(type, obj);
	return __oplog_sync(type, obj, false, &batch, 0, 0);
}
EXPORT_SYMBOL_GPL(oplog_synchronize_locked);

/**
 * oplog_synchronize_all_locked() - apply everything logged, logs attached
 * @type: the object's type
 * @obj: the object, locked by the caller
 *
 * Like oplog_synchronize_locked(), but with no cutoff: every operation in
 * every CPU's log is applied, including those stamped after this call
 * started (a CPU whose TSC runs ahead of this one's), and the logs stay
 * attached, so that other CPUs keep queueing without a miss.  Operations
 * queued by another CPU while this runs may be applied before ones stamped
 * earlier that are appended after their log was taken, so this is only
 * for types whose operations on different items commute and that need no
 * order for one item beyond queue order on one CPU (the file reverse map,
 * which logs one operation per VMA at a time).  A caller that must find an operation it knows
 * was queued before (its own item's) gets it, whatever the clocks say.
 *
 * Context: the object lock held; see oplog_synchronize_locked().
 */
void oplog_synchronize_all_locked(struct oplog_type *type, struct oplog_obj *obj)
{
	LIST_HEAD(batch);

	oplog_assert_obj_locked(type, obj);
	__oplog_sync(type, obj, false, &batch, 0, U64_MAX);
}
EXPORT_SYMBOL_GPL(oplog_synchronize_all_locked);

/**
 * oplog_synchronize() - lock an object and apply its logged operations
 * @type: the object's type
 * @obj: the object
 *
 * Object::synchronize (thesis Fig 6-1): takes the object lock (the
 * spinlock that ->obj_lock returns), then does oplog_synchronize_locked().
 * Returns with the object locked: the caller reads the shared structure,
 * then calls oplog_unlock().  Other CPUs' oplog_queue() and oplog_add() go
 * on meanwhile, into their logs: this is not mutual exclusion with
 * updaters (see oplog_synchronize_locked(); oplog_flush_locked() gives
 * that).
 *
 * Context: a context that may take the object lock (->obj_lock, a
 * spinlock_t); does not sleep.
 */
void oplog_synchronize(struct oplog_type *type, struct oplog_obj *obj)
	__acquires(obj)
{
	spin_lock(oplog_lock_of(type, obj));
	oplog_synchronize_locked(type, obj);
}
EXPORT_SYMBOL_GPL(oplog_synchronize);

/**
 * oplog_unlock() - end a read started by oplog_synchronize()
 * @type: the object's type
 * @obj: the object
 *
 * Object::unlock (thesis Fig 6-1).  Context: the object lock held.
 */
void oplog_unlock(struct oplog_type *type, struct oplog_obj *obj)
	__releases(obj)
{
	spinlock_t *lock = oplog_lock_of(type, obj);

	lockdep_assert_held(lock);
	spin_unlock(lock);
}
EXPORT_SYMBOL_GPL(oplog_unlock);

/**
 * oplog_flush_locked() - apply everything and detach every log of an object
 * @type: the object's type
 * @obj: the object, locked by the caller
 *
 * Like oplog_synchronize_locked(), but takes all logged operations (also
 * those queued concurrently) and detaches the object's log from every CPU,
 * calling ->detach once per log.  Afterwards no CPU holds a log of @obj
 * until the lock is dropped (attaching one needs it), so no oplog_queue()
 * or oplog_add() of @obj completes on any CPU while the caller holds the
 * lock, and the shared state is exact: the dentry counter's kill decision
 * relies on this (the thesis's "synchronize ... clears the bitmap",
 * section 7).
 *
 * Context: the object lock held; see oplog_synchronize_locked().
 */
void oplog_flush_locked(struct oplog_type *type, struct oplog_obj *obj)
{
	LIST_HEAD(batch);

	oplog_assert_obj_locked(type, obj);
	__oplog_sync(type, obj, true, &batch, 0, 0);
}
EXPORT_SYMBOL_GPL(oplog_flush_locked);

/**
 * oplog_flush() - flush an object before it is freed
 * @type: the object's type
 * @obj: the object
 *
 * Locks the object, does oplog_flush_locked() and unlocks it.  The caller
 * must make sure nobody queues to @obj any more; the object may be freed as
 * soon as this returns (retired logs never dereference it).
 *
 * Context: a context that may take the object lock (->obj_lock, a
 * spinlock_t); does not sleep.
 */
void oplog_flush(struct oplog_type *type, struct oplog_obj *obj)
{
	spinlock_t *lock = oplog_lock_of(type, obj);

	spin_lock(lock);
	oplog_flush_locked(type, obj);
	spin_unlock(lock);
}
EXPORT_SYMBOL_GPL(oplog_flush);

/**
 * oplog_obj_maybe_logged() - does any CPU's log of an object hold operations?
 * @type: the object's type
 * @obj: the object
 *
 * For a reader that only asks whether a synchronize would change the
 * object, and must not pay for logs that are attached but empty (every
 * logged operation was absorbed, or applied by a synchronize that left the
 * logs attached): looks at each attached CPU's log under its cache and log
 * locks, not the object lock.  A snapshot: a CPU may log right after its
 * log was looked at.
 *
 * Context: any context but hard interrupts and NMIs; takes each attached
 * CPU's cache and log locks (raw), one CPU at a time.  Does not sleep.
 * Return: true if some CPU's log of @obj held operations (or, for a
 * counter, a delta other than zero).
 */
bool oplog_obj_maybe_logged(struct oplog_type *type, struct oplog_obj *obj)
{
	unsigned long cpus = READ_ONCE(obj->cpus);
	struct oplog_cache *cache;
	struct oplog_log *log;
	unsigned int cpu, i;
	bool logged = false;

	if (!cpus)
		return false;
	for_each_possible_cpu(cpu) {
		if (!(cpus & oplog_cpu_bit(cpu)))
			continue;
		cache = oplog_cache_of(type, cpu);
		if (!cache)
			continue;
		raw_spin_lock(&cache->lock);
		log = oplog_find(type, cache, obj, &i);
		if (log) {
			raw_spin_lock(&log->lock);
			if (oplog_is_counter(type))
				logged = oplog_counter_logged(log);
			else
				logged = log->len;
			raw_spin_unlock(&log->lock);
		}
		raw_spin_unlock(&cache->lock);
		if (logged)
			return true;
	}
	return false;
}
EXPORT_SYMBOL_GPL(oplog_obj_maybe_logged);

/*
 * Append to @log (its lock held): the thesis's Queue::append.  Returns
 * false if the log is full.  With local absorption, a remove whose item was
 * added in this same log cancels the add; *@absorbed gets the add.  The
 * caller counts the operation (the hit path as a hit, the miss path as
 * queued), so that a hit increments one statistic only.  @list is
 * oplog_has_list(@type), a constant on oplog_queue()'s hit path.  A
 * counter's miss path adds here under the log lock; its hit path,
 * __oplog_add_hit(), adds without it.
 */
static __always_inline bool oplog_append(struct oplog_type *type,
					 struct oplog_cache *cache,
					 struct oplog_log *log, bool list,
					 struct oplog_op *op, long delta,
					 struct oplog_op **absorbed)
{
	struct oplog_op *prev;

	lockdep_assert_held(&log->lock);

	if (!list) {
		oplog_counter_append(log, delta);
		goto done;
	}
	if ((type->flags & OPLOG_LOCAL_ABSORB) &&
	    oplog_keyed(op)->code == OPLOG_REMOVE) {
		list_for_each_entry_reverse(prev, &log->ops, node) {
			if (oplog_keyed(prev)->key != oplog_keyed(op)->key)
				continue;
			if (oplog_keyed(prev)->code == OPLOG_ADD) {
				list_del(&prev->node);
				log->len--;
				*absorbed = prev;
				local_inc(&cache->stats[OPLOG_STAT_ABSORBED_LOCAL]);
				goto done;
			}
			break;
		}
	}
	if (log->len >= type->max_len || !log->credit)
		return false;
	op->ts = oplog_stamped(type) ? oplog_clock() : 0;
	list_add_tail(&op->node, &log->ops);
	log->len++;
	if (log->credit != UINT_MAX)
		log->credit--;
done:
	if (!READ_ONCE(log->referenced))
		WRITE_ONCE(log->referenced, true);
	return true;
}

/* A local absorption cancelled @add with @remove: hand both back. */
static void oplog_absorbed(struct oplog_type *type, struct oplog_obj *obj,
			   struct oplog_op *add, struct oplog_op *remove)
{
	if (type->ops->absorb)
		type->ops->absorb(obj, add, remove);
}

/*
 * The hit path of oplog_queue(): this CPU already has a log of @obj with
 * room in it.  A counter's is __oplog_add_hit(), inline in its callers.
 */
static __always_inline bool oplog_hit(struct oplog_type *type,
				      struct oplog_obj *obj,
				      struct oplog_op *op,
				      struct oplog_op **absorbed)
{
	struct oplog_cache *cache;
	struct oplog_log *log;
	bool done = false;

	preempt_disable();
	cache = clustered_rep(&type->caches);
	if (likely(cache)) {
		/*
		 * A set without a log of @obj is a miss: tell without the log
		 * lock (the tag is written under it, and re-checked below).
		 */
		log = oplog_hit_log(type, cache, obj);
		if (likely(log)) {
			raw_spin_lock(&log->lock);
			if (likely(log->obj == obj))
				done = oplog_append(type, cache, log, true,
						    op, 0, absorbed);
			raw_spin_unlock(&log->lock);
			if (done)
				local_inc(&cache->stats[OPLOG_STAT_HITS]);
		}
	}
	preempt_enable();
	return done;
}

/*
 * Apply @op (or @delta) at once, object lock held.  An operation is
 * stamped, everything stamped before it is applied, then it is executed,
 * so that timestamp order holds.  A counter's delta: see
 * oplog_counter_direct().
 */
static void oplog_direct(struct oplog_type *type, struct oplog_obj *obj,
			 struct oplog_op *op, long delta)
{
	LIST_HEAD(batch);

	oplog_assert_obj_locked(type, obj);

	if (oplog_is_counter(type)) {
		oplog_counter_direct(type, obj, delta);
	} else {
		op->ts = oplog_stamped(type) ? oplog_clock() : 0;
		__oplog_sync(type, obj, false, &batch, 0, op->ts ?: U64_MAX);
		type->ops->exec(obj, op);
	}
	oplog_stat(type, OPLOG_STAT_DIRECT, 1);
}

/* What oplog_install() did with the operation of a miss. */
enum oplog_miss {
	OPLOG_MISS_LOGGED,	/* in a log attached by this call */
	OPLOG_MISS_RACED,	/* in a log of the object that was there */
	OPLOG_MISS_DIRECT,	/* not logged: apply it at once */
};

/*
 * Take over @log, this CPU's log of another object (the victim), for @obj:
 * move the victim's operations to @batch and its delta to *@delta, and
 * retag the log.
 * Only this CPU reads the log without its cache lock, so it can be reused
 * at once.  Called with @cache->lock and the victim's lock held.
 */
static void oplog_take_over(struct oplog_type *type, struct oplog_cache *cache,
			    struct oplog_log *log, struct oplog_obj *obj,
			    struct list_head *batch, long *delta)
{
	struct oplog_obj *victim = log->obj;
	unsigned int credit;

	lockdep_assert_held(&cache->lock);
	oplog_assert_obj_locked(type, victim);

	raw_spin_lock(&log->lock);
	oplog_take(type, log, U64_MAX, false, batch, delta);
	credit = log->credit;
	WRITE_ONCE(log->obj, obj);
	WRITE_ONCE(log->referenced, false);
	raw_spin_unlock(&log->lock);
	/* The victim's unused grant goes back to it (its lock is held). */
	if (credit && type->ops->release)
		type->ops->release(victim, credit);
	if (oplog_exact_bits())
		WRITE_ONCE(victim->cpus, victim->cpus & ~oplog_cpu_bit(log->cpu));
	local_inc(&cache->stats[OPLOG_STAT_EVICTIONS]);
}

/*
 * Give @obj a vacant log in its set (emptied and untagged by a flush,
 * oplog_collect()).  Only this CPU tags its logs and reads them without
 * its cache lock, and it is not in its hit path now, so the log is reused
 * at once, like a victim's (oplog_take_over()): no allocation and no QDo
 * grace period.  A counter's dead mark is cleared
 * (oplog_counter_init()).  Called with
 * @cache->lock held.
 */
static void oplog_reuse(struct oplog_type *type, struct oplog_cache *cache,
			struct oplog_log *log, struct oplog_obj *obj)
{
	lockdep_assert_held(&cache->lock);

	raw_spin_lock(&log->lock);
	if (oplog_is_counter(type))
		oplog_counter_init(log);
	WRITE_ONCE(log->referenced, false);
	WRITE_ONCE(log->obj, obj);
	raw_spin_unlock(&log->lock);
	WRITE_ONCE(cache->nr_vacant, cache->nr_vacant - 1);
	WRITE_ONCE(cache->nr_logs, cache->nr_logs + 1);
	local_inc(&cache->stats[OPLOG_STAT_REUSED]);
}

/*
 * The slot of @obj's set that a miss fills: a vacant log's (reused), else
 * an empty one (a new log), else a victim's: the first log not referenced
 * lately, else the first way's (second chance: an eviction clears the
 * set's referenced flags, oplog_clear_referenced()).  Exact under
 * @cache->lock; a hint without it (oplog_needs_log()).
 */
static unsigned int oplog_pick(struct oplog_type *type,
			       struct oplog_cache *cache, struct oplog_obj *obj)
{
	unsigned int set = oplog_set(type, obj), end = set + oplog_ways(type);
	unsigned int i, empty = UINT_MAX, victim = UINT_MAX;
	struct oplog_log *log;

	for (i = set; i < end; i++) {
		log = READ_ONCE(cache->slots[i]);
		if (!log) {
			if (empty == UINT_MAX)
				empty = i;
		} else if (!READ_ONCE(log->obj)) {
			return i;
		} else if (victim == UINT_MAX && !READ_ONCE(log->referenced)) {
			victim = i;
		}
	}
	if (empty != UINT_MAX)
		return empty;
	return victim != UINT_MAX ? victim : set;
}

/* An eviction from @set: its logs start again unreferenced. */
static void oplog_clear_referenced(struct oplog_type *type,
				   struct oplog_cache *cache, unsigned int set)
{
	unsigned int i;

	lockdep_assert_held(&cache->lock);
	for (i = set; i < set + oplog_ways(type); i++)
		if (cache->slots[i])
			WRITE_ONCE(cache->slots[i]->referenced, false);
}

/*
 * Trylock the object lock of a victim in @obj's full set: the one in slot
 * *@i (oplog_pick()'s choice) first, then the other ways' in order, since
 * a victim's lock holder may be waiting for our cache lock.  Returns the
 * lock taken, with *@i set to the victim's slot, or NULL if every victim
 * is busy; the caller unlocks it (for sparse, the caller's __acquire()
 * takes it over).  @cache->lock held: the set's slots cannot change.
 */
static spinlock_t *oplog_trylock_victim(struct oplog_type *type,
					struct oplog_cache *cache,
					struct oplog_obj *obj, unsigned int *i)
{
	unsigned int set = oplog_set(type, obj), ways = oplog_ways(type);
	unsigned int k, j;
	spinlock_t *vlock;	/* a victim's object lock */

	lockdep_assert_held(&cache->lock);
	for (k = 0; k < ways; k++) {
		j = set + (*i - set + k) % ways;
		if (!cache->slots[j] || !cache->slots[j]->obj)
			continue;
		vlock = oplog_lock_of(type, cache->slots[j]->obj);
		if (spin_trylock(vlock)) {
			__release(vlock);
			*i = j;
			return vlock;
		}
	}
	return NULL;
}

/* Initialise @log, this CPU's new log of @obj, and publish it in slot @i. */
static void oplog_install_new(struct oplog_type *type, struct oplog_cache *cache,
			      struct oplog_log *log, struct oplog_obj *obj,
			      unsigned int cpu, unsigned int i)
{
	raw_spin_lock_init(&log->lock);
	lockdep_set_class(&log->lock, &type->log_key);
	log->len = 0;
	log->credit = 0;
	log->obj = obj;
	log->type = type;
	log->cpu = cpu;
	log->referenced = false;
	if (oplog_is_counter(type))
		oplog_counter_init(log);
	else
		INIT_LIST_HEAD(&log->ops);
	WRITE_ONCE(cache->nr_logs, cache->nr_logs + 1);
	/* Publish the initialised log to the lockless hit path. */
	smp_store_release(&cache->slots[i], log);
}

/*
 * Append the first operation to @log, this CPU's log of @obj just installed
 * in its slot or taken over, then release the cache lock and let the CPU
 * go.  An empty log has room, and nothing to absorb.  Called with
 * @cache->lock held and preemption disabled (oplog_install()).
 */
static void oplog_append_first(struct oplog_type *type,
			       struct oplog_cache *cache, struct oplog_log *log,
			       struct oplog_obj *obj, unsigned int cpu,
			       struct oplog_op *op, long delta,
			       unsigned int grant)
	__releases(&cache->lock)
{
	struct oplog_op *none = NULL;

	lockdep_assert_held(&cache->lock);
	lockdep_assert_preemption_disabled();
	WRITE_ONCE(obj->cpus, obj->cpus | oplog_cpu_bit(cpu));
	raw_spin_lock(&log->lock);
	log->credit = grant;
	oplog_append(type, cache, log, oplog_has_list(type), op, delta, &none);
	raw_spin_unlock(&log->lock);
	raw_spin_unlock(&cache->lock);
	local_inc(&cache->stats[OPLOG_STAT_QUEUED]);
	preempt_enable();
}

/*
 * The body of a miss, with the object lock held and the object attached
 * (thesis section 7): find or install this CPU's log of @obj and append to
 * it.  *@new is a preallocated log, consumed if installed.  In a full set,
 * another object's log (the victim's, oplog_pick()) is taken over if the
 * victim's lock can be had (its holder may be waiting for our cache
 * lock), else the other way's if its lock can (oplog_trylock_victim());
 * the victim's operations are applied under that lock once ours is
 * logged, by oplog_apply_evicted().
 */
static enum oplog_miss oplog_install(struct oplog_type *type,
				     struct oplog_obj *obj,
				     struct oplog_op *op, long delta,
				     unsigned int grant,
				     struct oplog_log **new,
				     struct oplog_op **absorbed)
{
	struct oplog_cache *cache;
	struct oplog_obj *victim;
	struct oplog_log *log;
	unsigned int cpu, i;
	LIST_HEAD(evicted);
	spinlock_t *vlock;	/* the victim's object lock */
	long vdelta = 0;
	bool done;

	oplog_assert_obj_locked(type, obj);

	preempt_disable();
	cache = clustered_rep(&type->caches);
	if (!cache)
		goto direct;
	cpu = smp_processor_id();
	local_inc(&cache->stats[OPLOG_STAT_MISSES]);
	raw_spin_lock(&cache->lock);
	log = oplog_find(type, cache, obj, &i);
	if (log) {
		/* Attached by another task meanwhile, full, or its grant used. */
		raw_spin_lock(&log->lock);
		if (grant != UINT_MAX)
			log->credit += grant;
		done = oplog_append(type, cache, log, oplog_has_list(type), op,
				    delta, absorbed);
		/* Full: the caller gives the grant back. */
		if (!done && grant != UINT_MAX)
			log->credit -= grant;
		raw_spin_unlock(&log->lock);
		raw_spin_unlock(&cache->lock);
		if (!done) {
			local_inc(&cache->stats[OPLOG_STAT_FULL]);
			goto direct;
		}
		local_inc(&cache->stats[OPLOG_STAT_QUEUED]);
		preempt_enable();
		return OPLOG_MISS_RACED;
	}
	i = oplog_pick(type, cache, obj);
	log = cache->slots[i];
	if (log && !log->obj) {
		oplog_reuse(type, cache, log, obj);
		oplog_append_first(type, cache, log, obj, cpu, op, delta,
				   grant);
		return OPLOG_MISS_LOGGED;
	}
	if (log) {
		vlock = oplog_trylock_victim(type, cache, obj, &i);
		if (!vlock) {
			raw_spin_unlock(&cache->lock);
			local_inc(&cache->stats[OPLOG_STAT_EVICT_BUSY]);
			goto direct;
		}
		__acquire(vlock);
		log = cache->slots[i];
		victim = log->obj;
		oplog_clear_referenced(type, cache, oplog_set(type, obj));
		oplog_take_over(type, cache, log, obj, &evicted, &vdelta);
		oplog_append_first(type, cache, log, obj, cpu, op, delta,
				   grant);
		/* Thesis section 7: an evicted object is synchronized. */
		oplog_apply_evicted(type, victim, cpu, &evicted, vdelta);
		if (type->ops->detach)
			type->ops->detach(victim);
		spin_unlock(vlock);
		return OPLOG_MISS_LOGGED;
	}
	if (!*new) {
		raw_spin_unlock(&cache->lock);
		goto direct;
	}
	log = *new;
	*new = NULL;
	oplog_install_new(type, cache, log, obj, cpu, i);
	oplog_append_first(type, cache, log, obj, cpu, op, delta, grant);
	return OPLOG_MISS_LOGGED;

direct:
	preempt_enable();
	return OPLOG_MISS_DIRECT;
}

/*
 * Does a miss on @obj need new log memory?  Only if this CPU has no log of
 * it and its set has an empty slot and no vacant log (oplog_pick()): a
 * vacant log is reused, another object's taken over.  A hint, read without
 * the cache lock, with the object lock held (so on this CPU until
 * oplog_install()): should a slot empty meanwhile (the shrinker),
 * oplog_install() finds no memory and the operation is
 * applied at once, as when an allocation fails.
 */
static bool oplog_needs_log(struct oplog_type *type, struct oplog_obj *obj)
{
	struct oplog_cache *cache;
	bool empty = true;

	preempt_disable();
	cache = clustered_rep(&type->caches);
	if (cache)
		empty = !oplog_hit_log(type, cache, obj) &&
			!READ_ONCE(cache->slots[oplog_pick(type, cache, obj)]);
	preempt_enable();
	return empty;
}

/*
 * The miss path: take the object lock, attach, and install a log with
 * oplog_install(); apply the operation directly when no log can be had
 * (no cache or log memory in this context, a busy victim, a full log).
 * The attachment is kept by a log this call installed, and undone
 * otherwise.
 */
int oplog_slow(struct oplog_type *type, struct oplog_obj *obj,
	       struct oplog_op *op, long delta)
{
	const struct oplog_type_ops *ops = type->ops;
	spinlock_t *lock = oplog_lock_of(type, obj);
	struct oplog_op *absorbed = NULL;
	unsigned int grant = UINT_MAX;
	struct oplog_log *new;
	int err = 0;

	spin_lock(lock);
	if (ops->attach && !ops->attach(obj)) {
		spin_unlock(lock);
		return -ENOENT;
	}
	if (ops->reserve) {
		grant = ops->reserve(obj, type->max_len);
		/* ->reserve grants at most what it is asked for. */
		if (WARN_ON_ONCE(grant > type->max_len))
			grant = type->max_len;
		if (!grant) {
			if (ops->detach)
				ops->detach(obj);
			spin_unlock(lock);
			return -ENOSPC;
		}
	}
	new = NULL;
	if (oplog_needs_log(type, obj))
		new = kmem_cache_alloc(oplog_log_cachep,
				       GFP_NOWAIT | __GFP_NOWARN);
	switch (oplog_install(type, obj, op, delta, grant, &new, &absorbed)) {
	case OPLOG_MISS_LOGGED:
		break;
	case OPLOG_MISS_DIRECT:
		if (ops->reserve) {
			/* The caller applies @op its own way. */
			ops->release(obj, grant);
			err = -ENOSPC;
		} else {
			oplog_direct(type, obj, op, delta);
		}
		fallthrough;
	case OPLOG_MISS_RACED:
		if (ops->detach)
			ops->detach(obj);
		break;
	}
	spin_unlock(lock);
	if (absorbed)
		oplog_absorbed(type, obj, absorbed, op);
	if (new)
		kmem_cache_free(oplog_log_cachep, new);
	return err;
}

/**
 * oplog_queue() - log an update of an object (Object::queue)
 * @type: the object's type, %OPLOG_ORDERED or %OPLOG_ABSORBING
 * @obj: the object
 * @op: the operation, embedded in the caller's memory; for an absorbing
 *	type, the @op of a &struct oplog_keyed_op whose key and code are set
 *
 * Stamps @op with oplog_clock() (unless the type is %OPLOG_UNSTAMPED) and
 * appends it to this CPU's log of @obj.
 * The hit path takes only that log's lock, a cache line no other CPU writes
 * until somebody synchronizes @obj (thesis section 5.3).  A miss takes the
 * object lock to attach a log, evicting another object from the set by
 * synchronizing it; a full log synchronizes @obj.  When no log can be had
 * (no memory in this context, a busy victim, a full log), @op is executed at
 * once, after every operation logged before it.  With local absorption, a
 * remove that finds the add of its item in this CPU's log cancels it: both
 * go back through ->absorb and nothing is logged.
 *
 * Context: task context (the per-CPU locks are not interrupt-safe), without
 * @obj's lock held (a miss takes it, ->obj_lock).  Allocates a
 * log with GFP_NOWAIT on a miss only.
 * Return: 0 if @op was logged, absorbed or executed; -ENOENT if ->attach
 * refused, -ENOSPC if a type with ->reserve got no grant or no log (in both
 * cases @op is untouched and still the caller's, to apply its own way
 * after oplog_flush()); -EINVAL (and a warning) for a counter type or
 * outside task context.
 */
int oplog_queue(struct oplog_type *type, struct oplog_obj *obj,
		struct oplog_op *op)
{
	struct oplog_op *absorbed = NULL;

	if (WARN_ON_ONCE(!oplog_has_list(type) || !in_task()))
		return -EINVAL;
	if (likely(oplog_hit(type, obj, op, &absorbed))) {
		if (absorbed)
			oplog_absorbed(type, obj, absorbed, op);
		return 0;
	}
	return oplog_slow(type, obj, op, 0);
}
EXPORT_SYMBOL_GPL(oplog_queue);

/*
 * This CPU's log of @obj, locked, if it holds @op (found by address, the
 * newest first: an add is mostly cancelled or followed soon), and *@cache
 * its cache; otherwise NULL and nothing held.  The caller unlocks it (for
 * sparse, the caller's __acquire() takes it over).  Walks at most the
 * type's max_len operations.  Preemption disabled by the caller.
 */
static struct oplog_log *oplog_lock_holding(struct oplog_type *type,
					    struct oplog_obj *obj,
					    struct oplog_op *op,
					    struct oplog_cache **cache)
{
	struct oplog_log *log;
	struct oplog_op *pos;

	lockdep_assert_preemption_disabled();
	*cache = clustered_rep(&type->caches);
	if (unlikely(!*cache))
		return NULL;
	log = oplog_hit_log(type, *cache, obj);
	if (!log)
		return NULL;
	raw_spin_lock(&log->lock);
	if (likely(log->obj == obj)) {
		list_for_each_entry_reverse(pos, &log->ops, node) {
			if (pos == op) {
				__release(&log->lock);
				return log;
			}
		}
	}
	raw_spin_unlock(&log->lock);
	return NULL;
}

/**
 * oplog_absorb_hit() - cancel an add that is still in this CPU's log
 * @type: the object's type, %OPLOG_ABSORBING
 * @obj: the object
 * @add: an %OPLOG_ADD of @obj, queued earlier with oplog_queue()
 *
 * The hit path of a remove that only absorbs (local absorption, thesis
 * section 5.2.2): if @add is still in this CPU's log of @obj, take it out
 * and return true; @add will never be executed and is the caller's again.
 * Otherwise do nothing and return false: nothing is logged, and the
 * caller applies its remove another way (it synchronizes @obj and removes
 * the item from the shared object itself).
 *
 * Unlike a remove queued with %OPLOG_LOCAL_ABSORB, this never leaves a
 * remove in a log, so a user whose item is freed right after its remove
 * (the file reverse map, mm/oplog_rmap.c, frees the VMA) gets local
 * absorption without a logged pointer to a freed item.  Only @add's
 * address is compared: @add is not read unless it is found in this CPU's
 * log, so it may meanwhile sit in another CPU's log, or be applied.
 *
 * Context: task context, without @obj's lock held; takes this CPU's log
 * lock (raw) with preemption disabled.  Does not sleep.
 * Return: true if @add was absorbed, false if it is not in this CPU's log.
 */
bool oplog_absorb_hit(struct oplog_type *type, struct oplog_obj *obj,
		      struct oplog_op *add)
{
	struct oplog_cache *cache;
	struct oplog_log *log;
	bool done = false;

	if (WARN_ON_ONCE(type->kind != OPLOG_ABSORBING || !in_task()))
		return false;
	preempt_disable();
	log = oplog_lock_holding(type, obj, add, &cache);
	if (log) {
		__acquire(&log->lock);
		list_del_init(&add->node);
		log->len--;
		raw_spin_unlock(&log->lock);
		local_inc(&cache->stats[OPLOG_STAT_ABSORBED_LOCAL]);
		done = true;
	}
	preempt_enable();
	return done;
}
EXPORT_SYMBOL_GPL(oplog_absorb_hit);

/**
 * oplog_queue_after() - log an update behind one still in this CPU's log
 * @type: the object's type, %OPLOG_ABSORBING and %OPLOG_UNSTAMPED, without
 *	%OPLOG_LOCAL_ABSORB
 * @obj: the object
 * @prev: an operation of @obj queued earlier with oplog_queue() or this
 * @op: the operation, as for oplog_queue()
 *
 * For an update that must be applied after @prev, in a type whose
 * operations otherwise commute: the thesis's causal order (section 5.1)
 * kept by log position, as an unstamped type has no timestamps.  If @prev
 * is still in this CPU's log of @obj and the log has room, append @op to
 * that log.
 * Every apply then executes @prev first: a log moves in one piece and in
 * order, to a batch or to the type's ->exec (a synchronize, a flush, an
 * eviction, a full log, a dead CPU), and an unstamped absorbing type's
 * apply executes a batch in the order taken.  Only a caller that takes
 * @prev back out of the log (oplog_absorb_hit()) can break the order.
 * Otherwise nothing is logged: @prev is in another CPU's log, has been
 * applied, or the log is full; the caller applies @op its own way.  @prev
 * is not read unless it is found in this CPU's log (its address only is
 * compared, as in oplog_absorb_hit()).
 *
 * Context: task context, without @obj's lock held; takes this CPU's log
 * lock (raw) with preemption disabled, and walks at most the type's
 * max_len operations under it.  Does not sleep.
 * Return: true if @op was logged behind @prev; false otherwise, with @op
 * untouched and still the caller's.
 */
bool oplog_queue_after(struct oplog_type *type, struct oplog_obj *obj,
		       struct oplog_op *prev, struct oplog_op *op)
{
	struct oplog_op *absorbed = NULL;
	struct oplog_cache *cache;
	struct oplog_log *log;
	bool done = false;

	if (WARN_ON_ONCE(type->kind != OPLOG_ABSORBING || oplog_stamped(type) ||
			 (type->flags & OPLOG_LOCAL_ABSORB) || !in_task()))
		return false;
	preempt_disable();
	log = oplog_lock_holding(type, obj, prev, &cache);
	if (log) {
		__acquire(&log->lock);
		done = oplog_append(type, cache, log, true, op, 0, &absorbed);
		raw_spin_unlock(&log->lock);
		if (done)
			local_inc(&cache->stats[OPLOG_STAT_HITS]);
	}
	preempt_enable();
	/* Without local absorption, oplog_append() absorbs nothing. */
	WARN_ON_ONCE(absorbed);
	return done;
}
EXPORT_SYMBOL_GPL(oplog_queue_after);

/* ---- registration ---- */

/**
 * oplog_type_register() - set up a type and its per-CPU log caches
 * @type: a statically allocated type with @name, @kind, @ops and optionally
 *	@nr_slots, @max_len and @flags set
 *
 * Creates the type's log caches as a per-CPU clustered object: a CPU gets
 * its cache (8 bytes per slot, plus a header) on its first operation, from
 * memory reserved here for every possible CPU.
 *
 * Context: process context, may sleep; after core_initcall.
 * Lowers @max_len so that the logs of one object hold at most
 * @max_pending operations on all possible CPUs together: every apply
 * under the object lock (a synchronize, a flush, an eviction, a full
 * log) then handles at most that many, whatever the number of CPUs.
 *
 * Return: 0; -EINVAL for missing callbacks, @nr_slots not a power of two or
 * above 2^20, @max_len above 65536, @max_pending above 2^20, flags on a
 * type that is not
 * %OPLOG_ABSORBING, or %OPLOG_UNSTAMPED with %OPLOG_GLOBAL_ABSORB; -EAGAIN
 * before OpLog is initialised; -ENOMEM.
 */
int oplog_type_register(struct oplog_type *type)
{
	const struct oplog_type_ops *ops = type->ops;
	unsigned int slots = type->nr_slots ?: OPLOG_DEFAULT_SLOTS;
	unsigned int max_len = type->max_len ?: OPLOG_DEFAULT_MAX_LEN;
	unsigned int pending = type->max_pending ?: OPLOG_DEFAULT_MAX_PENDING;
	unsigned int cpu;
	int ret;

	if (!READ_ONCE(oplog_ready))
		return -EAGAIN;
	if (!ops || !ops->obj_lock || type->kind > OPLOG_ABSORBING)
		return -EINVAL;
	if (oplog_has_list(type) ? !ops->exec : !ops->fold)
		return -EINVAL;
	if (type->flags & ~(OPLOG_LOCAL_ABSORB | OPLOG_GLOBAL_ABSORB |
			    OPLOG_UNSTAMPED) ||
	    (type->flags && type->kind != OPLOG_ABSORBING))
		return -EINVAL;
	/* A grant bounds logged operations: those of an ordered log. */
	if ((ops->reserve || ops->release) &&
	    (!ops->reserve || !ops->release || type->kind != OPLOG_ORDERED))
		return -EINVAL;
	/* Global absorption needs an item's add ordered before its remove. */
	if ((type->flags & OPLOG_UNSTAMPED) &&
	    (type->flags & OPLOG_GLOBAL_ABSORB))
		return -EINVAL;
	if (!is_power_of_2(slots) || slots > (1U << 20) || max_len > 65536 ||
	    pending > (1U << 20))
		return -EINVAL;
	type->nr_slots = slots;
	type->max_pending = pending;
	type->max_len = clamp(pending / num_possible_cpus(), 1U, max_len);
	type->slot_bits = ilog2(slots);
	type->shrink_cpu = cpumask_first(cpu_possible_mask);
	init_completion(&type->released);

	/* Reserve every possible CPU's cache now: queueing never allocates it. */
	type->spares = alloc_percpu(void *);
	if (!type->spares)
		return -ENOMEM;
	type->uncached_stats = __alloc_percpu(OPLOG_NR_STATS * sizeof(local_t),
					      __alignof__(local_t));
	if (!type->uncached_stats) {
		oplog_free_spares(type);
		return -ENOMEM;
	}
	for_each_possible_cpu(cpu) {
		*per_cpu_ptr(type->spares, cpu) =
			oplog_cache_alloc(type, cpu, GFP_KERNEL);
		if (!*per_cpu_ptr(type->spares, cpu)) {
			oplog_free_spares(type);
			return -ENOMEM;
		}
	}
	/* One shrinker per type: its count and its scan cursor are its own. */
	type->shrinker = shrinker_alloc(0, "oplog-%s", type->name ?: "unnamed");
	if (!type->shrinker) {
		oplog_free_spares(type);
		return -ENOMEM;
	}
	type->shrinker->count_objects = oplog_shrink_count;
	type->shrinker->scan_objects = oplog_shrink_scan;
	type->shrinker->seeks = DEFAULT_SEEKS;
	type->shrinker->private_data = type;
	ret = clustered_init(&type->caches, &oplog_cache_ops,
			     CLUSTERED_PER_CPU, GFP_KERNEL);
	if (ret) {
		shrinker_free(type->shrinker);
		oplog_free_spares(type);
		return ret;
	}
	mutex_lock(&oplog_types_lock);
	list_add_tail(&type->list, &oplog_types);
	mutex_unlock(&oplog_types_lock);
	shrinker_register(type->shrinker);
	oplog_debugfs_add_type(type);
	return 0;
}
EXPORT_SYMBOL_GPL(oplog_type_register);

/**
 * oplog_type_unregister() - tear down a type
 * @type: a registered type
 *
 * Every object of the type must have been flushed (oplog_flush()) and no
 * CPU may queue to the type any more.  Waits for retired logs to be freed,
 * then destroys the log caches through the clustered object's phased
 * destruction, and returns when they are gone, so @type may be registered
 * again.  Logs left behind by an object that was not flushed are reported
 * once and leaked rather than applied to a possibly freed object.
 *
 * Context: process context, sleeps (QDo and RCU barriers).
 */
void oplog_type_unregister(struct oplog_type *type)
{
	struct oplog_cache *cache;
	struct oplog_log *log;
	unsigned int cpu, i;
	long leaked = 0;

	/* Waits for a scan in progress. */
	shrinker_free(type->shrinker);
	type->shrinker = NULL;
	mutex_lock(&oplog_types_lock);
	list_del(&type->list);
	mutex_unlock(&oplog_types_lock);
	oplog_debugfs_remove_type(type);

	for_each_possible_cpu(cpu) {
		cache = oplog_cache_of(type, cpu);
		if (!cache)
			continue;
		for (i = 0; i < type->nr_slots; i++) {
			log = cache->slots[i];
			if (!log)
				continue;
			if (log->obj) {
				leaked++;
				continue;
			}
			/* Vacant: freed after the barriers below. */
			cache->slots[i] = NULL;
			oplog_retire(log);
		}
	}
	WARN(leaked, "oplog: type %s unregistered with %ld logs of unflushed objects\n",
	     type->name, leaked);
	qdo_barrier();
	rcu_barrier();
	clustered_destroy(&type->caches);
	wait_for_completion(&type->released);
	oplog_free_spares(type);
}
EXPORT_SYMBOL_GPL(oplog_type_unregister);

static int __init oplog_init(void)
{
	int ret;

	oplog_clock_init();
	oplog_log_cachep = KMEM_CACHE(oplog_log, SLAB_HWCACHE_ALIGN | SLAB_PANIC);
	ret = cpuhp_setup_state_nocalls(CPUHP_BP_PREPARE_DYN, "oplog:dead",
					NULL, oplog_cpu_dead);
	if (ret < 0)
		pr_warn("no CPU hotplug callback (%d): offline CPUs keep their logs\n",
			ret);
	oplog_debugfs_init();
	WRITE_ONCE(oplog_ready, true);
	return 0;
}
core_initcall(oplog_init);
