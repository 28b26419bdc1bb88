// SPDX-License-Identifier: GPL-2.0
/*
 * OpLog's counter kind (%OPLOG_COUNTER): a signed per-CPU delta instead of
 * a list of operations, folded into the shared counter by ->fold when the
 * object is synchronized (the CounterQueue of Boyd-Wickizer's thesis,
 * section 6.2).  Counter updates commute: no timestamps, no sort.
 *
 * The delta lives in &oplog_log.delta, outside the union that a retired
 * log's QDo head overwrites.  Its hit path, __oplog_add_hit() in
 * <linux/oplog.h>, adds with one atomic add and no lock.  Every other
 * access is under the log's lock, from the miss path or a collector:
 *   oplog_counter_append()  the miss path's add
 *   oplog_counter_take()    a collector's exchange, which leaves
 *                           %OPLOG_DELTA_DEAD in a log that leaves its
 *                           object
 *   oplog_counter_init()    a log (re)tagged for an object, by its owner
 * The fold decisions (alone, or with every CPU's delta) are taken with the
 * object lock held.
 */

#include <linux/export.h>
#include <linux/lockdep.h>
#include <linux/oplog.h>
#include <linux/sched.h>
#include <linux/spinlock.h>

#include "oplog_internal.h"

/**
 * oplog_counter_init() - give a log that is (re)tagged a zero delta
 * @log: a new log, or a vacant one that its owner reuses
 *
 * Clears the dead mark of a log emptied by a flush.  Only the owner CPU
 * tags its logs, outside its hit path, so no add races with this.
 *
 * Context: either @log->lock held (a vacant log retagged by oplog_reuse()),
 * or @log not yet published (a new log, before oplog_install_new() stores
 * it in its slot), so no lock is asserted here.
 */
void oplog_counter_init(struct oplog_log *log)
{
	atomic_long_set(&log->delta, 0);
}

/**
 * oplog_counter_append() - add to this CPU's delta from the miss path
 * @log: this CPU's log of the object
 * @delta: the signed amount
 *
 * Context: @log->lock held; the log is attached, so its delta is live.
 */
void oplog_counter_append(struct oplog_log *log, long delta)
{
	lockdep_assert_held(&log->lock);
	atomic_long_add(delta, &log->delta);
}

/**
 * oplog_counter_take() - take a log's delta for a synchronize
 * @log: a log of the object being synchronized
 * @detach: the log leaves its object (an eviction or a flush)
 *
 * Takes the delta with one atomic exchange, leaving zero, or
 * %OPLOG_DELTA_DEAD if the log leaves its object.  Pairs with the atomic
 * add of __oplog_add_hit(): an add that the owner's hit path made before
 * this exchange is taken here, and one after it is left for the next
 * synchronize, or finds the dead mark and misses.
 *
 * Context: @log->lock held.
 * Return: the delta taken.
 */
long oplog_counter_take(struct oplog_log *log, bool detach)
{
	lockdep_assert_held(&log->lock);
	return atomic_long_xchg(&log->delta, detach ? OPLOG_DELTA_DEAD : 0);
}

/**
 * oplog_counter_logged() - does a log hold a delta other than zero?
 * @log: an attached log
 *
 * Context: @log->lock held.
 * Return: true if a synchronize would change the shared counter.
 */
bool oplog_counter_logged(struct oplog_log *log)
{
	lockdep_assert_held(&log->lock);
	return atomic_long_read(&log->delta);
}

/**
 * oplog_counter_fold() - fold a delta into the shared counter
 * @type: the object's type
 * @obj: the object
 * @delta: the sum of the deltas taken, possibly zero
 *
 * Context: the object lock held; calls ->fold, which must not sleep.
 */
void oplog_counter_fold(struct oplog_type *type, struct oplog_obj *obj,
			long delta)
{
	oplog_assert_obj_locked(type, obj);
	if (delta)
		type->ops->fold(obj, delta);
}

/*
 * May @delta, taken out of @cpu's log of @obj, be folded without the other
 * CPUs' deltas?  Counter updates commute, so the sum comes out the same;
 * but a user whose shared count has a floor (the dentry's d_lockref.count
 * never drops below its pins) must not see a negative delta before another
 * CPU's positive one.  A delta of zero or more is always safe, and so is
 * any delta when no other CPU can hold a log of @obj.  Object lock held.
 */
static bool oplog_fold_alone(struct oplog_type *type, struct oplog_obj *obj,
			     unsigned int cpu, long delta)
{
	oplog_assert_obj_locked(type, obj);
	return delta >= 0 ||
	       (oplog_exact_bits() && !(obj->cpus & ~oplog_cpu_bit(cpu)));
}

/**
 * oplog_counter_apply_evicted() - fold the delta of an evicted log
 * @type: the object's type
 * @obj: the object whose log left @cpu's cache
 * @cpu: the CPU whose log it was; its bit is already cleared where bits
 *	are exact
 * @delta: the delta taken out of that log
 *
 * Folds @delta alone where oplog_fold_alone() allows, touching no other
 * CPU's log (sv6's critique of the thesis: an eviction flushes only this
 * CPU's log of the victim); otherwise synchronizes @obj, folding every
 * CPU's delta with @delta.
 *
 * Context: the object lock held; takes cache and log locks (raw) when it
 * synchronizes.
 */
void oplog_counter_apply_evicted(struct oplog_type *type,
				 struct oplog_obj *obj, unsigned int cpu,
				 long delta)
{
	LIST_HEAD(none);

	oplog_assert_obj_locked(type, obj);

	if (oplog_fold_alone(type, obj, cpu, delta)) {
		oplog_counter_fold(type, obj, delta);
		oplog_stat(type, OPLOG_STAT_LOCAL_FOLDS, 1);
		return;
	}
	__oplog_sync(type, obj, false, &none, delta, 0);
}

/**
 * oplog_counter_direct() - fold a delta that no log could take
 * @type: the object's type
 * @obj: the object
 * @delta: the signed amount of the update
 *
 * Folds @delta at once: alone where oplog_fold_alone() allows for this
 * CPU, otherwise after every CPU's delta, so that a shared count with a
 * floor never sees it early.
 *
 * Context: the object lock held, task context.
 */
void oplog_counter_direct(struct oplog_type *type, struct oplog_obj *obj,
			  long delta)
{
	LIST_HEAD(none);

	oplog_assert_obj_locked(type, obj);

	if (!oplog_fold_alone(type, obj, raw_smp_processor_id(), delta))
		__oplog_sync(type, obj, false, &none, 0, 0);
	oplog_counter_fold(type, obj, delta);
}

/**
 * oplog_add() - add to a distributed counter (CounterQueue::push)
 * @type: the object's type, %OPLOG_COUNTER
 * @obj: the object
 * @delta: the signed amount
 *
 * Adds @delta to this CPU's delta for @obj; a synchronize folds the sum of
 * every CPU's delta into the shared counter with ->fold (thesis section
 * 6.2).  No timestamps and no log entries: the updates commute.  A miss
 * attaches a log as oplog_queue() does; without one, @delta is folded at
 * once under the object lock.
 *
 * Context: as oplog_queue().
 * Return: 0; -ENOENT if ->attach refused (nothing was added); -EINVAL (and
 * a warning) for a type that is not a counter or outside task context.
 */
int oplog_add(struct oplog_type *type, struct oplog_obj *obj, long delta)
{
	if (WARN_ON_ONCE(!oplog_is_counter(type) || !in_task()))
		return -EINVAL;
	if (likely(__oplog_add_hit(type, obj, delta)))
		return 0;
	return oplog_slow(type, obj, NULL, delta);
}
EXPORT_SYMBOL_GPL(oplog_add);
