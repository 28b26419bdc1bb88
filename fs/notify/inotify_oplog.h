/* SPDX-License-Identifier: GPL-2.0 */
/*
 * OpLog notification queues for inotify: the interface between
 * fs/notify/inotify/ and fs/notify/inotify_oplog.c.  See
 * fs/notify/inotify_oplog.c.
 */
#ifndef _FS_NOTIFY_INOTIFY_OPLOG_H
#define _FS_NOTIFY_INOTIFY_OPLOG_H

#include <linux/fsnotify_backend.h>
#include <linux/jump_label.h>
#include <linux/oplog.h>

struct inotify_event_info;

#ifdef CONFIG_INOTIFY_OPLOG

DECLARE_STATIC_KEY_FALSE(inotify_oplog_key);
#if IS_ENABLED(CONFIG_KUNIT)
extern struct oplog_type inotify_oplog_type;
#endif

int inotify_oplog_switch(bool on);
bool __inotify_oplog_queue(struct fsnotify_group *group,
			   struct inotify_event_info *event);
void inotify_oplog_sync_locked(struct fsnotify_group *group);
void inotify_oplog_flush(struct fsnotify_group *group);

/* A new group has no logs (inotify_new_group()). */
static inline void inotify_oplog_init(struct fsnotify_group *group)
{
	oplog_obj_init(&group->inotify_data.oplog);
	group->inotify_data.oplog_reserved = 0;
	group->inotify_data.oplog_waking = 0;
}

/*
 * May some CPU hold a log of @group's events?  Lockless hint; exact under
 * group->notification_lock.  Independent of the switch, so that turning it
 * off at run time leaves no event behind.
 */
static inline bool inotify_oplog_maybe_logged(struct fsnotify_group *group)
{
	return oplog_obj_has_logs(&group->inotify_data.oplog);
}

/**
 * inotify_oplog_queue() - queue an inotify event on this CPU's log
 * @group: the inotify group
 * @event: the event, allocated and filled in by the caller
 *
 * With the switch on, hands @event to __inotify_oplog_queue().  With it
 * off, makes sure no event logged before is overtaken by @event, which the
 * caller then queues the locked way.
 *
 * Context: as inotify_handle_inode_event().
 * Return: true if @event belongs to OpLog now (logged, queued or freed);
 * false if the caller must queue it with fsnotify_add_event().
 */
static inline bool inotify_oplog_queue(struct fsnotify_group *group,
				       struct inotify_event_info *event)
{
	if (static_branch_likely(&inotify_oplog_key))
		return __inotify_oplog_queue(group, event);
	if (unlikely(inotify_oplog_maybe_logged(group)))
		inotify_oplog_flush(group);
	return false;
}

/**
 * inotify_oplog_lock_queue() - lock @group's queue for a reader
 * @group: the inotify group
 * @exact: apply every logged event even if the queue is not empty (FIONREAD)
 *
 * Takes group->notification_lock.  If the queue holds at most one event
 * (or @exact), the events logged on every CPU are applied to it first, in
 * timestamp order.  The queue holds the oldest events, a prefix of all of
 * them, so a reader that finds two or more may read the head without
 * looking at the logs.  A reader about to take the last one, the tail,
 * applies the logs first: an identical event logged while the tail was
 * unread merges into it (inotify_merge() looks at the tail only), as it
 * would have on the locked queue.
 *
 * Context: process context; not with notification_lock held.
 */
static inline void inotify_oplog_lock_queue(struct fsnotify_group *group,
					    bool exact)
	__acquires(&group->notification_lock)
{
	spin_lock(&group->notification_lock);
	if ((exact || group->q_len <= 1) &&
	    inotify_oplog_maybe_logged(group))
		inotify_oplog_sync_locked(group);
}

#else /* !CONFIG_INOTIFY_OPLOG */

static inline void inotify_oplog_init(struct fsnotify_group *group)
{
}

static inline bool inotify_oplog_queue(struct fsnotify_group *group,
				       struct inotify_event_info *event)
{
	return false;
}

static inline void inotify_oplog_flush(struct fsnotify_group *group)
{
}

static inline void inotify_oplog_lock_queue(struct fsnotify_group *group,
					    bool exact)
	__acquires(&group->notification_lock)
{
	spin_lock(&group->notification_lock);
}

#endif /* CONFIG_INOTIFY_OPLOG */
#endif /* _FS_NOTIFY_INOTIFY_OPLOG_H */
