// SPDX-License-Identifier: GPL-2.0
/*
 * Per-CPU OpLog notification queues for inotify
 *
 * inotify_handle_inode_event() appends the event it allocated to this
 * CPU's %OPLOG_ORDERED log of the group instead of the group's queue, and
 * readers apply the logs to the queue before they look at it
 * (inotify_oplog_lock_queue()).  The object lock is
 * group->notification_lock.  A logged event has happened but is not on
 * the queue yet; it counts against max_queued_events from the moment it
 * is logged.
 *
 * Rules the code must keep:
 *  - the queue holds a prefix, in timestamp order, of all the group's
 *    events, and the logs hold the rest: every application of logs
 *    applies them in timestamp order, and an event queued the locked way
 *    while logs may exist is queued after a flush, in the same hold of
 *    notification_lock (inotify_oplog_add_locked());
 *  - coalescing, overflow and shutdown are decided when an event is
 *    applied (inotify_oplog_exec()), on the queue that readers see;
 *  - queued events plus the room reserved for logs never exceed
 *    max_queued_events when notification_lock is released
 *    (inotify_oplog_reserve());
 *  - a writer wakes only a sleeping reader: wq_has_sleeper() in
 *    inotify_oplog_wake() pairs with the smp_mb() of
 *    inotify_oplog_sync_locked(), so that no wakeup is lost;
 *  - one writer wakes the readers between two of their looks at the
 *    logs: the one that sets bit 0 of inotify_data.oplog_waking, which
 *    inotify_oplog_sync_locked() clears before that smp_mb();
 *  - no log outlives its group: ->attach refuses once group->shutdown is
 *    set, and the group's release flushes the logs.
 *
 * Lock ordering:
 *   group->notification_lock	(the OpLog object lock)
 *     OpLog's per-CPU cache and log locks (raw)
 * A writer holds no fsnotify lock when it queues, and a reader takes only
 * notification_lock.  A writer's miss that evicts another group's log
 * from this CPU's cache only trylocks that group's notification_lock.
 *
 * Design: Documentation/core-api/oplog.rst, "inotify event queues".
 */

#include <kunit/visibility.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/fsnotify_backend.h>
#include <linux/init.h>
#include <linux/kstrtox.h>
#include <linux/minmax.h>
#include <linux/mutex.h>
#include <linux/preempt.h>
#include <linux/sched.h>
#include <linux/srcu.h>
#include <linux/stddef.h>
#include <linux/string.h>
#include <linux/wait.h>

#include "fsnotify.h"
#include "inotify/inotify.h"
#include "inotify_oplog.h"

DEFINE_STATIC_KEY_FALSE(inotify_oplog_key);

/* inotify_oplog=: 1 on, 0 off, -1 (default) on where the clock is the TSC */
static int inotify_oplog_boot __initdata = -1;
static bool inotify_oplog_registered;
static DEFINE_MUTEX(inotify_oplog_switch_lock);

static struct fsnotify_group *inotify_oplog_group(struct oplog_obj *obj)
{
	return container_of(obj, struct fsnotify_group, inotify_data.oplog);
}

static spinlock_t *inotify_oplog_lock(struct oplog_obj *obj)
{
	return &inotify_oplog_group(obj)->notification_lock;
}

/* A logged event's op shares the queued event's list head (inotify.h). */
static_assert(offsetof(struct inotify_event_info, op.node) ==
	      offsetof(struct inotify_event_info, fse.list));

/*
 * Apply one logged event, notification_lock held: what
 * fsnotify_add_event() does, without its wakeup (the writer did that when
 * it queued).  An event that is coalesced, lost to overflow, or arrives
 * after shutdown is freed here, as inotify_handle_inode_event() frees it
 * on the locked path; it was never on the queue, so fsnotify_destroy_event()
 * (which would take notification_lock to check) is not needed.
 */
static void inotify_oplog_exec(struct oplog_obj *obj, struct oplog_op *op)
{
	struct fsnotify_group *group = inotify_oplog_group(obj);
	struct inotify_event_info *event;
	bool queued;

	lockdep_assert_held(&group->notification_lock);
	event = container_of(op, struct inotify_event_info, op);
	if (fsnotify_insert_event_locked(group, &event->fse, inotify_merge,
					 NULL, &queued))
		group->ops->free_event(group, &event->fse);
}

/* No new log for a group that stopped queueing; notification_lock held. */
static bool inotify_oplog_attach(struct oplog_obj *obj)
{
	struct fsnotify_group *group = inotify_oplog_group(obj);

	lockdep_assert_held(&group->notification_lock);
	return !group->shutdown;
}

/*
 * Grant this CPU's log of the group room for at most @want more events,
 * notification_lock held.  Invariant: q_len + oplog_reserved <=
 * max_events, where oplog_reserved counts the events sitting in logs plus
 * what the logs may still take; so queued and logged events together
 * never exceed max_events, the locked queue's bound.  Each grant is at
 * most the CPU's share of the limit, so that every CPU can get room while
 * the queue is short.  No room left: oplog_queue() fails with -ENOSPC and
 * the event takes inotify_oplog_add_locked(), which flushes the logs (their
 * unused grants come back) before it queues the event the locked way.
 */
static unsigned int inotify_oplog_reserve(struct oplog_obj *obj,
					  unsigned int want)
{
	struct fsnotify_group *group = inotify_oplog_group(obj);
	unsigned int *reserved = &group->inotify_data.oplog_reserved;
	unsigned int used = group->q_len + *reserved, grant;

	lockdep_assert_held(&group->notification_lock);
	if (used >= group->max_events)
		return 0;
	grant = min3(want, group->max_events - used,
		     max(group->max_events / nr_cpu_ids, 1U));
	*reserved += grant;
	return grant;
}

/* @n granted units came back: events taken to be applied, unused room. */
static void inotify_oplog_release(struct oplog_obj *obj, unsigned int n)
{
	struct fsnotify_group *group = inotify_oplog_group(obj);
	unsigned int *reserved = &group->inotify_data.oplog_reserved;

	lockdep_assert_held(&group->notification_lock);
	if (WARN_ON_ONCE(n > *reserved))
		n = *reserved;
	*reserved -= n;
}

static const struct oplog_type_ops inotify_oplog_ops = {
	.obj_lock	= inotify_oplog_lock,
	.exec		= inotify_oplog_exec,
	.attach		= inotify_oplog_attach,
	.reserve	= inotify_oplog_reserve,
	.release	= inotify_oplog_release,
};

/*
 * Few inotify instances are written to at a time: 64 slots per CPU.  A log
 * applies itself when it holds 1024 events, eight times the thesis's
 * default: when the writers outpace the reader, a full log makes its
 * writer apply every CPU's events under notification_lock, which is the
 * locked queue's contention again, so a full log must be rare.  The events
 * are the group's (charged to its memcg), as the locked queue holds up to
 * max_queued_events (16384 by default) of them.  One group's logs hold at
 * most 8192 events on all CPUs together, so that no apply under
 * notification_lock handles more, whatever the CPU count: eight full logs,
 * so that OpLog shortens each CPU's log only beyond 8 CPUs.
 */
#define INOTIFY_OPLOG_MAX_LEN		1024
#define INOTIFY_OPLOG_MAX_PENDING	8192

VISIBLE_IF_KUNIT struct oplog_type inotify_oplog_type = {
	.name		= "inotify",
	.kind		= OPLOG_ORDERED,
	.ops		= &inotify_oplog_ops,
	.nr_slots	= 64,
	.max_len	= INOTIFY_OPLOG_MAX_LEN,
	.max_pending	= INOTIFY_OPLOG_MAX_PENDING,
};

/*
 * Wake a reader sleeping in read(), poll() or epoll, and send SIGIO, after
 * an event was queued to a log.  Pairs with the smp_mb() in
 * inotify_oplog_sync_locked(): wq_has_sleeper() orders the append before
 * its look at the wait queue and at oplog_waking.  A writer that finds
 * the bit set leaves the wake-up to the one that set it: the readers have
 * not looked at the logs since, and when they do, they find this event.
 */
static void inotify_oplog_wake(struct fsnotify_group *group)
{
	unsigned long *waking = &group->inotify_data.oplog_waking;

	if (wq_has_sleeper(&group->notification_waitq) &&
	    !test_bit(0, waking) && !test_and_set_bit(0, waking))
		wake_up(&group->notification_waitq);
	kill_fasync(&group->fsn_fa, SIGIO, POLL_IN);
}

/*
 * Queue @event the locked way, after every logged event: the logs are
 * flushed under the same hold of notification_lock, so that no event
 * logged before is overtaken, and no reader sees @event before them.  The
 * flush gives the logs' unused grants back (inotify_oplog_reserve()).
 */
static void inotify_oplog_add_locked(struct fsnotify_group *group,
				     struct inotify_event_info *event)
{
	bool queued;
	int ret;

	spin_lock(&group->notification_lock);
	oplog_flush_locked(&inotify_oplog_type, &group->inotify_data.oplog);
	ret = fsnotify_insert_event_locked(group, &event->fse, inotify_merge,
					   NULL, &queued);
	spin_unlock(&group->notification_lock);
	if (ret)
		group->ops->free_event(group, &event->fse);
	if (queued) {
		wake_up(&group->notification_waitq);
		kill_fasync(&group->fsn_fa, SIGIO, POLL_IN);
	}
}

/**
 * __inotify_oplog_queue() - queue an event on this CPU's log of its group
 * @group: the inotify group
 * @event: the event, allocated (and charged to the group's memcg) and
 *	filled in by inotify_handle_inode_event()
 *
 * Appends @event to this CPU's ordered log of @group (the thesis's
 * Object::queue, section 5.1): on a hit only this CPU's log lock is taken.
 * A miss takes notification_lock to attach a log and reserve room for it
 * (inotify_oplog_reserve()); with no room or no log, @event is queued the
 * locked way after the logged events (inotify_oplog_add_locked()).  Then
 * wakes a sleeping reader.
 *
 * Context: task context (OpLog's per-CPU locks are not interrupt-safe; the
 * locked queue's notification_lock is not either, so inotify events come
 * from task context only: a caller in another context is a bug, warned
 * about once, and its event takes the locked path unordered with the
 * logged ones), as inotify_handle_inode_event(): from fsnotify() under
 * fsnotify_mark_srcu, or, for IN_IGNORED, from fsnotify_free_mark(), which
 * runs after the group's mark_mutex is dropped and, but for a oneshot
 * mark's, outside the srcu (its caller holds a reference to the mark, and
 * so to the group).  Does not sleep.
 * Return: true if @event belongs to OpLog now; false if the group is
 * shutting down (->attach refused), and the caller must queue @event the
 * locked way, which drops it on shutdown.
 */
bool __inotify_oplog_queue(struct fsnotify_group *group,
			   struct inotify_event_info *event)
{
	int err;

	if (WARN_ON_ONCE(!in_task()))
		return false;
	err = oplog_queue(&inotify_oplog_type, &group->inotify_data.oplog,
			  &event->op);
	if (err == -ENOSPC) {
		inotify_oplog_add_locked(group, event);
		return true;
	}
	if (err)
		return false;
	inotify_oplog_wake(group);
	return true;
}

/**
 * inotify_oplog_sync_locked() - apply @group's logged events to its queue
 * @group: the inotify group, its notification_lock held
 *
 * Applies, in timestamp order, every event logged before the call (the
 * thesis's Object::synchronize, with section 10.2's concurrent appenders).
 * If the queue is still empty and events stamped after the cutoff were
 * left in a log, synchronizes again: a reader that is about to sleep must
 * not leave behind an event whose writer may already have looked for
 * sleepers.
 *
 * No lost wakeup: a sleeping reader (read(), poll(), epoll) is on the wait
 * queue before it gets here, and the smp_mb() below orders that before its
 * look at the logs; a writer appends to its log, then looks at the wait
 * queue behind wq_has_sleeper()'s barrier.  So either the writer sees the
 * reader and wakes it, or the reader sees the event, applied (stamped
 * before the cutoff) or left (stamped after it: then it synchronizes again
 * with a later cutoff).  A writer that attaches a new log does so under
 * notification_lock, after this reader released it, and sees it too.
 * The reader clears oplog_waking before that smp_mb().  A writer that
 * finds the bit set, and so does not wake, read a set that some reader's
 * clear comes after: the setter wakes the sleeping readers, and each looks
 * again, clearing first.  The same pairing then puts the writer's event in
 * the look that follows that clear.
 * The loop ends at the second pass at the latest: the first left only
 * events stamped after its cutoff, which the second applies, and ->exec
 * leaves the queue empty only for a group that shut down, which has no
 * reader and is not synchronized again.
 *
 * Context: group->notification_lock held; does not sleep.
 */
void inotify_oplog_sync_locked(struct fsnotify_group *group)
{
	bool left;

	lockdep_assert_held(&group->notification_lock);
	if (test_bit(0, &group->inotify_data.oplog_waking))
		clear_bit(0, &group->inotify_data.oplog_waking);
	/* Pairs with wq_has_sleeper() in inotify_oplog_wake(). */
	smp_mb();
	do {
		left = oplog_synchronize_locked(&inotify_oplog_type,
						&group->inotify_data.oplog);
	} while (left && fsnotify_notify_queue_is_empty(group) &&
		 !group->shutdown);
}

/**
 * inotify_oplog_flush() - apply @group's logged events and drop its logs
 * @group: the inotify group
 *
 * Applies every logged event in timestamp order and detaches every CPU's
 * log of @group (oplog_flush()).  Called where an event must not overtake
 * the logged ones (the locked path with the switch off, an overflow on
 * allocation failure) and on group release, where the events are freed
 * (the group is shut down) and no log may outlive the group.
 *
 * Context: process context, not with notification_lock held; does not
 * sleep.
 */
void inotify_oplog_flush(struct fsnotify_group *group)
{
	oplog_flush(&inotify_oplog_type, &group->inotify_data.oplog);
}

static int __init inotify_oplog_setup(char *str)
{
	bool on;

	if (kstrtobool(str, &on))
		return 0;
	inotify_oplog_boot = on;
	return 1;
}
__setup("inotify_oplog=", inotify_oplog_setup);

/**
 * inotify_oplog_switch() - turn the per-CPU inotify queues on or off
 * @on: true to queue new events on per-CPU logs, false for the locked queue
 *
 * Off: new events take the locked path, which first flushes a group that
 * still has logs (inotify_oplog_queue()), so no event overtakes a logged
 * one; synchronize_srcu() waits for the handlers under fsnotify_mark_srcu
 * that saw the switch on, and oplog_type_drain() applies and detaches
 * every log left.  An IN_IGNORED handler run by fsnotify_free_mark()
 * for inotify_rm_watch() or the teardown of an inode's marks holds
 * neither the srcu nor the group's mark_mutex, and may still attach a log
 * after the drain; that log is applied by the group's readers and flushed
 * by its next locked-path event or its release, like any other.  Readers
 * look at the logs whenever a group has one, whatever the switch says.
 *
 * Context: process context, sleeps; no fsnotify lock held.
 * Return: 0; -ENODEV if the OpLog type could not be registered at boot.
 */
int inotify_oplog_switch(bool on)
{
	if (!inotify_oplog_registered)
		return -ENODEV;
	mutex_lock(&inotify_oplog_switch_lock);
	if (on) {
		static_branch_enable(&inotify_oplog_key);
	} else if (static_key_enabled(&inotify_oplog_key)) {
		static_branch_disable(&inotify_oplog_key);
		synchronize_srcu(&fsnotify_mark_srcu);
		oplog_type_drain(&inotify_oplog_type);
	}
	mutex_unlock(&inotify_oplog_switch_lock);
	return 0;
}

static int inotify_oplog_enabled_get(void *data, u64 *val)
{
	*val = static_key_enabled(&inotify_oplog_key);
	return 0;
}

static int inotify_oplog_enabled_set(void *data, u64 val)
{
	if (val > 1)
		return -EINVAL;
	return inotify_oplog_switch(val);
}
DEFINE_DEBUGFS_ATTRIBUTE(inotify_oplog_enabled_fops, inotify_oplog_enabled_get,
			 inotify_oplog_enabled_set, "%llu\n");

/* Logs of every group on every CPU now. */
static int inotify_oplog_logs_get(void *data, u64 *val)
{
	*val = oplog_type_nr_logs(&inotify_oplog_type);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(inotify_oplog_logs_fops, inotify_oplog_logs_get,
			 NULL, "%llu\n");

static int __init inotify_oplog_register(void)
{
	struct dentry *dir;
	bool on;
	int err;

	err = oplog_type_register(&inotify_oplog_type);
	if (err) {
		pr_warn("inotify_oplog: cannot register the OpLog type: %d\n",
			err);
		return err;
	}
	inotify_oplog_registered = true;
	on = inotify_oplog_boot >= 0 ? inotify_oplog_boot : oplog_clock_is_tsc();
	if (on)
		inotify_oplog_switch(true);
	pr_info("inotify_oplog: per-CPU notification queues %s (%s)\n",
		on ? "on" : "off", inotify_oplog_boot >= 0 ? "inotify_oplog=" :
		oplog_clock_is_tsc() ? "TSC clock" : "no TSC clock");

	dir = debugfs_create_dir("inotify_oplog", NULL);
	debugfs_create_file_unsafe("enabled", 0600, dir, NULL,
				   &inotify_oplog_enabled_fops);
	debugfs_create_file_unsafe("logs", 0400, dir, NULL,
				   &inotify_oplog_logs_fops);
	return 0;
}
fs_initcall(inotify_oplog_register);
