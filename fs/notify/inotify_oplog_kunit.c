// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of the OpLog inotify notification queue
 * (fs/notify/inotify_oplog.c) on kernel-internal inotify groups: events
 * queued on several CPUs are applied in the order they were queued;
 * coalescing and overflow are decided when the logs are applied, against
 * the queue the reader sees; a group released with events still in
 * per-CPU logs frees them and its logs; the run-time switch drains the
 * logs in order; a CPU that goes offline has its events applied in order;
 * a full log applies itself; a synchronize with nothing left says so.
 */
#include <kunit/test.h>
#include <linux/cpu.h>
#include <linux/cpumask.h>
#include <linux/fsnotify_backend.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/workqueue.h>

#include "inotify/inotify.h"
#include "inotify_oplog.h"

#define IOT_MAX_CPUS	4

struct iot {
	unsigned int	cpus[IOT_MAX_CPUS];
	unsigned int	nr_cpus;
	bool		was_on;
};

static int iot_init(struct kunit *test)
{
	struct iot *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	unsigned int cpu;

	KUNIT_ASSERT_NOT_NULL(test, t);
	for_each_online_cpu(cpu) {
		if (t->nr_cpus == IOT_MAX_CPUS)
			break;
		t->cpus[t->nr_cpus++] = cpu;
	}
	test->priv = t;
	/* The cases need the per-CPU logs, whatever the boot switch. */
	t->was_on = static_key_enabled(&inotify_oplog_key);
	KUNIT_ASSERT_EQ(test, inotify_oplog_switch(true), 0);
	return 0;
}

static void iot_exit(struct kunit *test)
{
	struct iot *t = test->priv;

	inotify_oplog_switch(t->was_on);
}

static struct fsnotify_group *iot_group(struct kunit *test,
					unsigned int max_events)
{
	struct fsnotify_group *group = inotify_new_group(max_events);

	KUNIT_ASSERT_FALSE(test, IS_ERR(group));
	return group;
}

/* An event as inotify_handle_inode_event() builds it. */
static struct inotify_event_info *iot_event(struct kunit *test, int wd,
					    u32 mask, const char *name)
{
	size_t len = name ? strlen(name) : 0;
	struct inotify_event_info *event;

	event = kmalloc(sizeof(*event) + (len ? len + 1 : 0), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, event);
	fsnotify_init_event(&event->fse);
	event->mask = mask;
	event->wd = wd;
	event->sync_cookie = 0;
	event->name_len = len;
	if (len)
		strscpy(event->name, name, len + 1);
	return event;
}

struct iot_call {
	struct fsnotify_group		*group;
	struct inotify_event_info	*event;
};

static long iot_add_fn(void *arg)
{
	struct iot_call *c = arg;

	inotify_add_event(c->group, c->event);
	return 0;
}

/* Queue an event of @wd with @mask on @cpu, as a handler there would. */
static void iot_add_on(struct kunit *test, unsigned int cpu,
		       struct fsnotify_group *group, int wd, u32 mask)
{
	struct iot_call c = {
		.group = group,
		.event = iot_event(test, wd, mask, NULL),
	};

	KUNIT_ASSERT_EQ(test, work_on_cpu(cpu, iot_add_fn, &c), 0);
}

/*
 * Apply the logs as FIONREAD does and copy the queue's (wd, mask) pairs to
 * @wd and @mask, at most @max; returns the queue length.
 */
static int iot_snapshot(struct fsnotify_group *group, int *wd, u32 *mask,
			int max)
{
	struct fsnotify_event *fse;
	int n = 0;

	inotify_oplog_lock_queue(group, true);
	list_for_each_entry(fse, &group->notification_list, list) {
		if (n < max) {
			wd[n] = INOTIFY_E(fse)->wd;
			mask[n] = INOTIFY_E(fse)->mask;
		}
		n++;
	}
	spin_unlock(&group->notification_lock);
	return n;
}

/* Read (and free) the first @n events, as read() does. */
static void iot_read(struct kunit *test, struct fsnotify_group *group, int n)
{
	struct fsnotify_event *fse;

	while (n--) {
		inotify_oplog_lock_queue(group, false);
		fse = fsnotify_peek_first_event(group);
		if (fse)
			fsnotify_remove_first_event(group);
		spin_unlock(&group->notification_lock);
		KUNIT_ASSERT_NOT_NULL(test, fse);
		fsnotify_destroy_event(group, fse);
	}
}

/*
 * A causal chain of events hopping over the CPUs (each queued after the
 * previous one returned) goes to per-CPU logs and comes out of the queue
 * in chain order, once each.
 */
static void inotify_oplog_test_order(struct kunit *test)
{
	struct iot *t = test->priv;
	struct fsnotify_group *group = iot_group(test, 1024);
	const int n = 24;
	int wd[24], i, len;
	u32 mask[24];
	bool left;

	for (i = 0; i < n; i++)
		iot_add_on(test, t->cpus[i % t->nr_cpus], group, i + 1,
			   IN_MODIFY);
	KUNIT_EXPECT_TRUE(test, inotify_oplog_maybe_logged(group));
	KUNIT_EXPECT_TRUE(test, list_empty(&group->notification_list));
	len = iot_snapshot(group, wd, mask, n);
	KUNIT_EXPECT_EQ(test, len, n);
	KUNIT_EXPECT_EQ(test, group->q_len, (unsigned int)n);
	for (i = 0; i < n && i < len; i++)
		KUNIT_EXPECT_EQ_MSG(test, wd[i], i + 1, "position %d", i);
	/*
	 * Nothing is left in the logs: a synchronize says so, and a reader
	 * about to sleep does not synchronize again (the lost-wakeup loop
	 * of inotify_oplog_sync_locked() relies on this answer).
	 */
	spin_lock(&group->notification_lock);
	left = oplog_synchronize_locked(&inotify_oplog_type,
					&group->inotify_data.oplog);
	spin_unlock(&group->notification_lock);
	KUNIT_EXPECT_FALSE(test, left);
	fsnotify_destroy_group(group);
}

struct iot_many {
	struct fsnotify_group		*group;
	struct inotify_event_info	**events;
	int				n;
};

static long iot_add_many_fn(void *arg)
{
	struct iot_many *m = arg;
	int i;

	for (i = 0; i < m->n; i++)
		inotify_add_event(m->group, m->events[i]);
	return 0;
}

/*
 * A log that fills up applies itself: more events than a log holds, all
 * queued on one CPU with nobody reading, reach the queue without a reader
 * (the first max_len at least), and all of them in order once read.
 */
static void inotify_oplog_test_full_log(struct kunit *test)
{
	struct iot *t = test->priv;
	unsigned int max_len = inotify_oplog_type.max_len;
	struct iot_many m = { .n = max_len + max_len / 8 };
	int *wd, i, len;
	u32 *mask;

	wd = kunit_kcalloc(test, m.n, sizeof(*wd), GFP_KERNEL);
	mask = kunit_kcalloc(test, m.n, sizeof(*mask), GFP_KERNEL);
	m.events = kunit_kcalloc(test, m.n, sizeof(*m.events), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, wd);
	KUNIT_ASSERT_NOT_NULL(test, mask);
	KUNIT_ASSERT_NOT_NULL(test, m.events);
	/* Allocated here: a KUnit assertion may only fail in the test. */
	for (i = 0; i < m.n; i++)
		m.events[i] = iot_event(test, i + 1, IN_MODIFY, NULL);
	m.group = iot_group(test, 4 * max_len);
	KUNIT_ASSERT_EQ(test, work_on_cpu(t->cpus[0], iot_add_many_fn, &m), 0);
	KUNIT_EXPECT_GE(test, READ_ONCE(m.group->q_len), max_len);
	len = iot_snapshot(m.group, wd, mask, m.n);
	KUNIT_ASSERT_EQ(test, len, m.n);
	for (i = 0; i < len; i++)
		KUNIT_EXPECT_EQ_MSG(test, wd[i], i + 1, "position %d", i);
	fsnotify_destroy_group(m.group);
}

/*
 * Logged events count against max_queued_events when they are logged:
 * with nobody reading, a group of 8 that is sent 32 distinct events from
 * every CPU in turn holds the first 8 and the overflow event, queued
 * before any reader comes (the locked queue's bound, not 8 plus a log per
 * CPU), and queued events (but the overflow event) plus the room granted
 * to logs never exceed the limit.  The flush gives every grant back.
 */
static void inotify_oplog_test_bounded(struct kunit *test)
{
	struct iot *t = test->priv;
	struct fsnotify_group *group = iot_group(test, 8);
	unsigned int overflow, queued;
	int wd[16], i;
	u32 mask[16];

	for (i = 0; i < 32; i++) {
		iot_add_on(test, t->cpus[i % t->nr_cpus], group, i + 1,
			   IN_MODIFY);
		spin_lock(&group->notification_lock);
		overflow = !list_empty(&group->overflow_event->list);
		KUNIT_EXPECT_LE_MSG(test, group->q_len - overflow +
				    group->inotify_data.oplog_reserved, 8U,
				    "after event %d", i + 1);
		spin_unlock(&group->notification_lock);
	}
	queued = READ_ONCE(group->q_len);
	KUNIT_EXPECT_EQ(test, queued, 9U);
	KUNIT_ASSERT_EQ(test, iot_snapshot(group, wd, mask, 16), 9);
	for (i = 0; i < 8; i++)
		KUNIT_EXPECT_EQ_MSG(test, wd[i], i + 1, "position %d", i);
	KUNIT_EXPECT_EQ(test, mask[8], (u32)FS_Q_OVERFLOW);
	inotify_oplog_flush(group);
	KUNIT_EXPECT_EQ(test, group->inotify_data.oplog_reserved, 0U);
	fsnotify_destroy_group(group);
}

/*
 * Coalescing is decided when the logs are applied, against the tail of the
 * queue: identical events queued on two CPUs while the first is unread
 * become one; a different event in between keeps all three; an event
 * identical to one already read is queued again.
 */
static void inotify_oplog_test_merge(struct kunit *test)
{
	struct iot *t = test->priv;
	unsigned int a = t->cpus[0], b = t->cpus[t->nr_cpus - 1];
	struct fsnotify_group *group = iot_group(test, 1024);
	int wd[4];
	u32 mask[4];

	iot_add_on(test, a, group, 1, IN_MODIFY);
	iot_add_on(test, b, group, 1, IN_MODIFY);
	KUNIT_EXPECT_EQ(test, iot_snapshot(group, wd, mask, 4), 1);

	iot_add_on(test, a, group, 2, IN_MODIFY);
	iot_add_on(test, b, group, 1, IN_MODIFY);
	KUNIT_EXPECT_EQ(test, iot_snapshot(group, wd, mask, 4), 3);
	KUNIT_EXPECT_EQ(test, wd[0], 1);
	KUNIT_EXPECT_EQ(test, wd[1], 2);
	KUNIT_EXPECT_EQ(test, wd[2], 1);

	iot_read(test, group, 3);
	iot_add_on(test, a, group, 1, IN_MODIFY);
	KUNIT_EXPECT_EQ(test, iot_snapshot(group, wd, mask, 4), 1);
	/* Same wd, another mask: not identical. */
	iot_add_on(test, b, group, 1, IN_CLOSE_WRITE);
	KUNIT_EXPECT_EQ(test, iot_snapshot(group, wd, mask, 4), 2);
	fsnotify_destroy_group(group);
}

/*
 * An event logged while an identical one waits unread at the tail of the
 * queue merges into it when the reader takes that tail: the reader applies
 * the logs first (inotify_oplog_lock_queue() with one event queued), as the
 * locked queue merged it on arrival.  Nothing is left to read afterwards.
 */
static void inotify_oplog_test_merge_tail(struct kunit *test)
{
	struct iot *t = test->priv;
	unsigned int a = t->cpus[0], b = t->cpus[t->nr_cpus - 1];
	struct fsnotify_group *group = iot_group(test, 1024);
	int wd[4];
	u32 mask[4];

	iot_add_on(test, a, group, 1, IN_MODIFY);
	KUNIT_EXPECT_EQ(test, iot_snapshot(group, wd, mask, 4), 1);
	iot_add_on(test, b, group, 1, IN_MODIFY);
	iot_read(test, group, 1);
	KUNIT_EXPECT_EQ(test, iot_snapshot(group, wd, mask, 4), 0);
	fsnotify_destroy_group(group);
}

/*
 * Overflow is decided at apply time: with room for 4 events, 7 queued on
 * several CPUs leave the first 4 and one IN_Q_OVERFLOW where the fifth was
 * lost.  After 2 are read, one more fits; the next is lost without a
 * second overflow event, since one is still queued.
 */
static void inotify_oplog_test_overflow(struct kunit *test)
{
	struct iot *t = test->priv;
	struct fsnotify_group *group = iot_group(test, 4);
	int wd[8], i, len;
	u32 mask[8];

	for (i = 0; i < 7; i++)
		iot_add_on(test, t->cpus[i % t->nr_cpus], group, i + 1,
			   IN_MODIFY);
	len = iot_snapshot(group, wd, mask, 8);
	KUNIT_ASSERT_EQ(test, len, 5);
	for (i = 0; i < 4; i++)
		KUNIT_EXPECT_EQ(test, wd[i], i + 1);
	KUNIT_EXPECT_EQ(test, wd[4], -1);
	KUNIT_EXPECT_EQ(test, mask[4], (u32)FS_Q_OVERFLOW);

	iot_read(test, group, 2);
	iot_add_on(test, t->cpus[0], group, 8, IN_MODIFY);
	iot_add_on(test, t->cpus[t->nr_cpus - 1], group, 9, IN_MODIFY);
	len = iot_snapshot(group, wd, mask, 8);
	KUNIT_ASSERT_EQ(test, len, 4);
	KUNIT_EXPECT_EQ(test, wd[0], 3);
	KUNIT_EXPECT_EQ(test, wd[1], 4);
	KUNIT_EXPECT_EQ(test, wd[2], -1);
	KUNIT_EXPECT_EQ(test, wd[3], 8);
	fsnotify_destroy_group(group);
}

/*
 * A group released with events still in per-CPU logs frees them (kmemleak
 * in the debug boot would report one that is not) and leaves no log.
 */
static void inotify_oplog_test_release(struct kunit *test)
{
	struct iot *t = test->priv;
	unsigned long before = oplog_type_nr_logs(&inotify_oplog_type);
	struct fsnotify_group *group = iot_group(test, 1024);
	int i;

	for (i = 0; i < 16; i++)
		iot_add_on(test, t->cpus[i % t->nr_cpus], group, i + 1,
			   IN_MODIFY);
	KUNIT_EXPECT_TRUE(test, inotify_oplog_maybe_logged(group));
	KUNIT_EXPECT_GE(test, oplog_type_nr_logs(&inotify_oplog_type),
			before + 1);
	fsnotify_destroy_group(group);
	KUNIT_EXPECT_EQ(test, oplog_type_nr_logs(&inotify_oplog_type), before);
}

/*
 * Turning the switch off applies the logged events to the queue in order
 * and drops the logs; an event queued with the switch off comes after
 * them.
 */
static void inotify_oplog_test_switch(struct kunit *test)
{
	struct iot *t = test->priv;
	struct fsnotify_group *group = iot_group(test, 1024);
	int wd[8], i, len;
	u32 mask[8];

	for (i = 0; i < 6; i++)
		iot_add_on(test, t->cpus[i % t->nr_cpus], group, i + 1,
			   IN_MODIFY);
	KUNIT_ASSERT_EQ(test, inotify_oplog_switch(false), 0);
	KUNIT_EXPECT_FALSE(test, inotify_oplog_maybe_logged(group));
	KUNIT_EXPECT_EQ(test, group->q_len, 6U);
	iot_add_on(test, t->cpus[0], group, 7, IN_MODIFY);
	KUNIT_EXPECT_FALSE(test, inotify_oplog_maybe_logged(group));
	KUNIT_ASSERT_EQ(test, inotify_oplog_switch(true), 0);
	iot_add_on(test, t->cpus[0], group, 8, IN_MODIFY);
	len = iot_snapshot(group, wd, mask, 8);
	KUNIT_ASSERT_EQ(test, len, 8);
	for (i = 0; i < len; i++)
		KUNIT_EXPECT_EQ(test, wd[i], i + 1);
	fsnotify_destroy_group(group);
}

/*
 * A CPU that goes offline with events in its log of a group: OpLog's
 * hotplug callback applies them, in order with the other CPUs' events.
 */
static void inotify_oplog_test_hotplug(struct kunit *test)
{
	struct iot *t = test->priv;
	struct fsnotify_group *group;
	unsigned int victim;
	int wd[8], i, len;
	u32 mask[8];

	if (!IS_ENABLED(CONFIG_HOTPLUG_CPU) || t->nr_cpus < 2)
		kunit_skip(test, "needs CPU hotplug and two CPUs");
	victim = t->cpus[1];
	group = iot_group(test, 1024);
	for (i = 0; i < 6; i++)
		iot_add_on(test, i % 2 ? victim : t->cpus[0], group, i + 1,
			   IN_MODIFY);
	if (remove_cpu(victim)) {
		fsnotify_destroy_group(group);
		kunit_skip(test, "CPU %u cannot go offline", victim);
	}
	/*
	 * The dead CPU's events were applied without a reader; the queue
	 * holds a prefix of the events in timestamp order, and the last one
	 * was the dead CPU's, so it holds all six.
	 */
	KUNIT_EXPECT_EQ(test, READ_ONCE(group->q_len), 6U);
	KUNIT_EXPECT_EQ(test, add_cpu(victim), 0);
	len = iot_snapshot(group, wd, mask, 8);
	KUNIT_ASSERT_EQ(test, len, 6);
	for (i = 0; i < len; i++)
		KUNIT_EXPECT_EQ(test, wd[i], i + 1);
	fsnotify_destroy_group(group);
}

static struct kunit_case inotify_oplog_test_cases[] = {
	KUNIT_CASE(inotify_oplog_test_order),
	KUNIT_CASE(inotify_oplog_test_merge),
	KUNIT_CASE(inotify_oplog_test_merge_tail),
	KUNIT_CASE(inotify_oplog_test_overflow),
	KUNIT_CASE(inotify_oplog_test_full_log),
	KUNIT_CASE(inotify_oplog_test_bounded),
	KUNIT_CASE(inotify_oplog_test_release),
	KUNIT_CASE(inotify_oplog_test_switch),
	KUNIT_CASE(inotify_oplog_test_hotplug),
	{}
};

static struct kunit_suite inotify_oplog_test_suite = {
	.name = "inotify_oplog",
	.init = iot_init,
	.exit = iot_exit,
	.test_cases = inotify_oplog_test_cases,
};

kunit_test_suite(inotify_oplog_test_suite);

MODULE_DESCRIPTION("KUnit tests for the OpLog inotify notification queue");
MODULE_LICENSE("GPL");
