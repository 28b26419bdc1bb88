// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for OpLog (lib/oplog.c, include/linux/oplog.h): operations
 * queued from several CPUs and by a task that migrates between two queue
 * calls are applied in timestamp order; counter logs sum; local and global
 * absorption; eviction on a slot conflict (also with a busy victim); two
 * objects of one set keep their logs, and a third evicts by second chance; a
 * full log synchronizes; a flush detaches every log and leaves it vacant
 * for reuse; a dying CPU's logs are applied; an attach refusal logs
 * nothing; and a concurrent queue + synchronize stress that checks every
 * operation ran exactly once and in per-thread order, and a counter stress
 * that checks every delta added through the lockless hit path is folded
 * exactly once (both run by the debug kernel under lockdep and KASAN).
 *
 * After Boyd-Wickizer, "Optimizing Communication Bottlenecks in
 * Multiprocessor Operating System Kernels", MIT PhD thesis, 2014, ch. 5-7.
 */
#include <kunit/test.h>
#include <linux/bitops.h>
#include <linux/completion.h>
#include <linux/cpu.h>
#include <linux/cpuhplock.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/minmax.h>
#include <linux/oplog.h>
#include <linux/prandom.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>

#define OT_MAX_REC	256
#define OT_WAIT		(30 * HZ)

/* A logged object: records what OpLog did to it. */
struct ot_obj {
	struct oplog_obj	oo;
	spinlock_t		lock;		/* the object lock */
	bool			check_ts;	/* exec must see ts in order */
	bool			refuse;		/* ->attach refuses */
	u64			last_ts;
	int			ts_errors;
	int			unlocked_calls;	/* exec/fold without the lock */
	int			rec[OT_MAX_REC];	/* op ids in exec order */
	int			nr_exec;
	long			value;		/* counter kind */
	int			nr_folds;
	int			nr_absorbed;
	struct oplog_op		*absorbed_add;
	struct oplog_op		*absorbed_remove;
	int			attached;	/* CPUs with a log */
	int			attach_calls;
	int			detach_calls;
	/* stress */
	unsigned int		*next_seq;	/* per thread (CPU) */
	int			order_errors;
	/* ->reserve: room in logs granted within budget */
	unsigned int		budget;
	unsigned int		reserved;
	int			release_errors;
};

struct ot_op {
	/* @op is @kop.op (static_assert below): both kinds queue &@op. */
	union {
		struct oplog_op		op;
		struct oplog_keyed_op	kop;
	};
	int			id;
	int			nr_exec;
	int			nr_absorbed;
	/* stress */
	unsigned int		thread;
	unsigned int		seq;
};

static_assert(offsetof(struct oplog_keyed_op, op) == 0);

static struct ot_obj *ot_of(struct oplog_obj *oo)
{
	return container_of(oo, struct ot_obj, oo);
}

static struct ot_op *ot_op_of(struct oplog_op *op)
{
	return container_of(op, struct ot_op, op);
}

static spinlock_t *ot_lock(struct oplog_obj *oo)
{
	return &ot_of(oo)->lock;
}

/*
 * Is the object lock held?  Counted; lockdep (debug boot) checks that it
 * is ours.  OpLog is not built on PREEMPT_RT, where d_lock-like spinlocks
 * have no raw lock inside.
 */
static bool ot_held(struct ot_obj *o)
{
	lockdep_assert_held(&o->lock);
	return raw_spin_is_locked(&o->lock.rlock);
}

static void ot_exec(struct oplog_obj *oo, struct oplog_op *op)
{
	struct ot_obj *o = ot_of(oo);
	struct ot_op *t = ot_op_of(op);

	if (!ot_held(o))
		o->unlocked_calls++;
	if (o->check_ts) {
		if (op->ts < o->last_ts)
			o->ts_errors++;
		o->last_ts = op->ts;
	}
	if (o->next_seq) {
		if (t->seq != o->next_seq[t->thread])
			o->order_errors++;
		o->next_seq[t->thread] = t->seq + 1;
	}
	if (o->nr_exec < OT_MAX_REC)
		o->rec[o->nr_exec] = t->id;
	o->nr_exec++;
	t->nr_exec++;
}

static void ot_fold(struct oplog_obj *oo, long delta)
{
	struct ot_obj *o = ot_of(oo);

	if (!ot_held(o))
		o->unlocked_calls++;
	o->value += delta;
	o->nr_folds++;
}

/* Local absorption calls this without the object lock: count atomically. */
static void ot_absorb(struct oplog_obj *oo, struct oplog_op *add,
		      struct oplog_op *remove)
{
	struct ot_obj *o = ot_of(oo);

	WRITE_ONCE(o->absorbed_add, add);
	WRITE_ONCE(o->absorbed_remove, remove);
	ot_op_of(add)->nr_absorbed++;
	ot_op_of(remove)->nr_absorbed++;
	WRITE_ONCE(o->nr_absorbed, o->nr_absorbed + 1);
}

static bool ot_attach(struct oplog_obj *oo)
{
	struct ot_obj *o = ot_of(oo);

	if (!ot_held(o))
		o->unlocked_calls++;
	o->attach_calls++;
	if (o->refuse)
		return false;
	o->attached++;
	return true;
}

static void ot_detach(struct oplog_obj *oo)
{
	struct ot_obj *o = ot_of(oo);

	if (!ot_held(o))
		o->unlocked_calls++;
	o->detach_calls++;
	o->attached--;
}

/* Grants at most two units at a time, within the object's budget. */
static unsigned int ot_reserve(struct oplog_obj *oo, unsigned int want)
{
	struct ot_obj *o = ot_of(oo);
	unsigned int grant;

	if (!ot_held(o))
		o->unlocked_calls++;
	grant = min3(want, o->budget - o->reserved, 2U);
	o->reserved += grant;
	return grant;
}

static void ot_release(struct oplog_obj *oo, unsigned int n)
{
	struct ot_obj *o = ot_of(oo);

	if (!ot_held(o))
		o->unlocked_calls++;
	if (n > o->reserved) {
		o->release_errors++;
		n = o->reserved;
	}
	o->reserved -= n;
}

static const struct oplog_type_ops ot_reserve_ops = {
	.obj_lock	= ot_lock,
	.exec		= ot_exec,
	.attach		= ot_attach,
	.detach		= ot_detach,
	.reserve	= ot_reserve,
	.release	= ot_release,
};

static const struct oplog_type_ops ot_ops = {
	.obj_lock	= ot_lock,
	.exec		= ot_exec,
	.fold		= ot_fold,
	.absorb		= ot_absorb,
	.attach		= ot_attach,
	.detach		= ot_detach,
};

static struct oplog_type ot_ordered = {
	.name = "kunit_ordered", .kind = OPLOG_ORDERED, .ops = &ot_ops,
	.nr_slots = 16,
};

static struct oplog_type ot_counter = {
	.name = "kunit_counter", .kind = OPLOG_COUNTER, .ops = &ot_ops,
	.nr_slots = 16,
};

static struct oplog_type ot_local = {
	.name = "kunit_local", .kind = OPLOG_ABSORBING, .ops = &ot_ops,
	.nr_slots = 16, .flags = OPLOG_LOCAL_ABSORB | OPLOG_GLOBAL_ABSORB,
};

static struct oplog_type ot_global = {
	.name = "kunit_global", .kind = OPLOG_ABSORBING, .ops = &ot_ops,
	.nr_slots = 16, .flags = OPLOG_GLOBAL_ABSORB,
};

static struct oplog_type ot_noabsorb = {
	.name = "kunit_noabsorb", .kind = OPLOG_ABSORBING, .ops = &ot_ops,
	.nr_slots = 16,
};

static struct oplog_type ot_counter1 = {
	.name = "kunit_counter1", .kind = OPLOG_COUNTER, .ops = &ot_ops,
	.nr_slots = 1,
};

static struct oplog_type ot_oneslot = {
	.name = "kunit_oneslot", .kind = OPLOG_ORDERED, .ops = &ot_ops,
	.nr_slots = 1,
};

#define OT_SHORT_LEN	4

static struct oplog_type ot_short = {
	.name = "kunit_short", .kind = OPLOG_ORDERED, .ops = &ot_ops,
	.nr_slots = 16, .max_len = OT_SHORT_LEN,
};

/* Few slots and short logs: evictions and full logs all the time. */
static struct oplog_type ot_stress = {
	.name = "kunit_stress", .kind = OPLOG_ORDERED, .ops = &ot_ops,
	.nr_slots = 2, .max_len = 8,
};

/* Two slots: a counter's lockless hit races evictions and detaches. */
static struct oplog_type ot_cstress = {
	.name = "kunit_cstress", .kind = OPLOG_COUNTER, .ops = &ot_ops,
	.nr_slots = 2,
};

/* Every operation commutes: no stamps, applied in the order taken. */
static struct oplog_type ot_unstamped = {
	.name = "kunit_unstamped", .kind = OPLOG_ABSORBING, .ops = &ot_ops,
	.nr_slots = 16, .flags = OPLOG_LOCAL_ABSORB | OPLOG_UNSTAMPED,
};

/* As ot_unstamped, with short logs and no absorption: oplog_queue_after(). */
static struct oplog_type ot_after = {
	.name = "kunit_after", .kind = OPLOG_ABSORBING, .ops = &ot_ops,
	.nr_slots = 16, .max_len = OT_SHORT_LEN, .flags = OPLOG_UNSTAMPED,
};

/* As ot_after, one slot per CPU: every other object's miss evicts. */
static struct oplog_type ot_after1 = {
	.name = "kunit_after1", .kind = OPLOG_ABSORBING, .ops = &ot_ops,
	.nr_slots = 1, .max_len = OT_SHORT_LEN, .flags = OPLOG_UNSTAMPED,
};

/* Logs hold what ->reserve granted them, within OT_SHORT_LEN. */
static struct oplog_type ot_reserving = {
	.name = "kunit_reserving", .kind = OPLOG_ORDERED,
	.ops = &ot_reserve_ops, .nr_slots = 16, .max_len = OT_SHORT_LEN,
};

/* Long logs, few operations per object on all CPUs: max_pending rules. */
#define OT_PENDING	16

static struct oplog_type ot_pending = {
	.name = "kunit_pending", .kind = OPLOG_ORDERED, .ops = &ot_ops,
	.nr_slots = 16, .max_len = 64, .max_pending = OT_PENDING,
};

/* Queued to by one CPU only: the others never get a cache of it. */
static struct oplog_type ot_reader = {
	.name = "kunit_reader", .kind = OPLOG_ORDERED, .ops = &ot_ops,
	.nr_slots = 16,
};

static struct oplog_type *ot_types[] = {
	&ot_ordered, &ot_counter, &ot_local, &ot_global, &ot_noabsorb,
	&ot_oneslot, &ot_short, &ot_stress, &ot_counter1, &ot_cstress,
	&ot_unstamped, &ot_reserving, &ot_pending, &ot_after, &ot_after1,
	&ot_reader,
};

/* Other lock classes, for objects whose locks the test holds itself. */
static struct lock_class_key ot_held_key;
static struct lock_class_key ot_held2_key;

static struct ot_obj *ot_new(struct kunit *test, bool check_ts)
{
	struct ot_obj *o = kunit_kzalloc(test, sizeof(*o), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, o);
	oplog_obj_init(&o->oo);
	spin_lock_init(&o->lock);
	o->check_ts = check_ts;
	return o;
}

static struct ot_op *ot_ops_new(struct kunit *test, int n)
{
	struct ot_op *ops = kunit_kcalloc(test, n, sizeof(*ops), GFP_KERNEL);
	int i;

	KUNIT_ASSERT_NOT_NULL(test, ops);
	for (i = 0; i < n; i++)
		ops[i].id = i;
	return ops;
}

/* Flush, then check that every attach was undone and no CPU holds a log. */
static void ot_flush_check(struct kunit *test, struct oplog_type *type,
			   struct ot_obj *o)
{
	oplog_flush(type, &o->oo);
	KUNIT_EXPECT_EQ(test, o->attached, 0);
	KUNIT_EXPECT_EQ(test, o->detach_calls, o->attach_calls);
	KUNIT_EXPECT_EQ(test, o->oo.cpus, 0UL);
	KUNIT_EXPECT_FALSE(test, oplog_obj_has_logs(&o->oo));
	KUNIT_EXPECT_EQ(test, o->unlocked_calls, 0);
	KUNIT_EXPECT_EQ(test, o->ts_errors, 0);
}

/* Every op executed exactly once, in id order. */
static void ot_expect_order(struct kunit *test, struct ot_obj *o,
			    struct ot_op *ops, int n)
{
	int i;

	KUNIT_EXPECT_EQ(test, o->nr_exec, n);
	for (i = 0; i < n && i < o->nr_exec && i < OT_MAX_REC; i++)
		KUNIT_EXPECT_EQ_MSG(test, o->rec[i], i, "exec position %d", i);
	for (i = 0; i < n; i++)
		KUNIT_EXPECT_EQ_MSG(test, ops[i].nr_exec, 1, "op %d", i);
}

struct ot_call {
	struct oplog_type	*type;
	struct ot_obj		*o;
	struct oplog_op		*op;
	long			delta;
};

static long ot_queue_fn(void *arg)
{
	struct ot_call *c = arg;

	return oplog_queue(c->type, &c->o->oo, c->op);
}

static long ot_add_fn(void *arg)
{
	struct ot_call *c = arg;

	return oplog_add(c->type, &c->o->oo, c->delta);
}

/* oplog_queue() from a kworker bound to @cpu; returns its result. */
static int ot_queue_on(unsigned int cpu, struct oplog_type *type,
		       struct ot_obj *o, struct ot_op *op)
{
	struct ot_call c = { .type = type, .o = o, .op = &op->op };

	return work_on_cpu(cpu, ot_queue_fn, &c);
}

static int ot_add_on(unsigned int cpu, struct oplog_type *type,
		     struct ot_obj *o, long delta)
{
	struct ot_call c = { .type = type, .o = o, .delta = delta };

	return work_on_cpu(cpu, ot_add_fn, &c);
}

/* Move the test task to @cpu (set_cpus_allowed_ptr() migrates it now). */
static void ot_pin(struct kunit *test, unsigned int cpu)
{
	KUNIT_ASSERT_EQ(test, set_cpus_allowed_ptr(current, cpumask_of(cpu)), 0);
	KUNIT_EXPECT_EQ(test, raw_smp_processor_id(), (int)cpu);
}

static void ot_unpin(void)
{
	set_cpus_allowed_ptr(current, cpu_possible_mask);
}

static void ot_set_op(struct ot_op *op, unsigned int code, unsigned long key)
{
	op->kop.code = code;
	op->kop.key = key;
}

/*
 * A causal chain of operations hops from CPU to CPU (each queue call
 * completes before the next starts on another CPU): synchronize applies
 * them in chain order, with increasing timestamps, under the object lock.
 */
static void oplog_test_order_cpus(struct kunit *test)
{
	unsigned int cpus[4], nr = 0, cpu;
	struct ot_obj *o = ot_new(test, true);
	const int n = 48;
	struct ot_op *ops = ot_ops_new(test, n);
	int i;

	for_each_online_cpu(cpu) {
		if (nr == ARRAY_SIZE(cpus))
			break;
		cpus[nr++] = cpu;
	}
	for (i = 0; i < n; i++)
		KUNIT_EXPECT_EQ(test, ot_queue_on(cpus[i % nr], &ot_ordered, o, &ops[i]), 0);
	KUNIT_EXPECT_EQ(test, o->nr_exec, 0);
	KUNIT_EXPECT_EQ(test, o->attached, (int)nr);
	KUNIT_EXPECT_TRUE(test, oplog_obj_has_logs(&o->oo));
	for (i = 1; i < n; i++)
		KUNIT_EXPECT_LT_MSG(test, ops[i - 1].op.ts, ops[i].op.ts, "op %d", i);

	oplog_synchronize(&ot_ordered, &o->oo);
	lockdep_assert_held(&o->lock);
	KUNIT_EXPECT_TRUE(test, ot_held(o));
	ot_expect_order(test, o, ops, n);
	oplog_unlock(&ot_ordered, &o->oo);

	/* Nothing is applied twice. */
	oplog_synchronize(&ot_ordered, &o->oo);
	KUNIT_EXPECT_EQ(test, o->nr_exec, n);
	oplog_unlock(&ot_ordered, &o->oo);
	ot_flush_check(test, &ot_ordered, o);
}

/*
 * The thesis's example (section 5.1): a task queues on one CPU, migrates,
 * queues on another; the later operation must run after the earlier one.
 */
static void oplog_test_migrate(struct kunit *test)
{
	struct ot_obj *o = ot_new(test, true), *s = ot_new(test, false);
	const int n = 16;
	struct ot_op *ops = ot_ops_new(test, n), *sops = ot_ops_new(test, 4);
	unsigned int a, b;
	int i;

	if (num_online_cpus() < 2)
		kunit_skip(test, "needs two CPUs");
	a = cpumask_first(cpu_online_mask);
	b = cpumask_next(a, cpu_online_mask);
	for (i = 0; i < n; i++) {
		ot_pin(test, i % 2 ? b : a);
		KUNIT_EXPECT_EQ(test, oplog_queue(&ot_ordered, &o->oo, &ops[i].op), 0);
	}

	/* Add on a, migrate, remove on b, add again on a: one item, in order. */
	ot_set_op(&sops[0], OPLOG_ADD, 1);
	ot_set_op(&sops[1], OPLOG_REMOVE, 1);
	ot_set_op(&sops[2], OPLOG_ADD, 1);
	ot_pin(test, a);
	KUNIT_EXPECT_EQ(test, oplog_queue(&ot_noabsorb, &s->oo, &sops[0].op), 0);
	ot_pin(test, b);
	KUNIT_EXPECT_EQ(test, oplog_queue(&ot_noabsorb, &s->oo, &sops[1].op), 0);
	ot_pin(test, a);
	KUNIT_EXPECT_EQ(test, oplog_queue(&ot_noabsorb, &s->oo, &sops[2].op), 0);
	ot_unpin();

	oplog_synchronize(&ot_ordered, &o->oo);
	ot_expect_order(test, o, ops, n);
	oplog_unlock(&ot_ordered, &o->oo);
	oplog_synchronize(&ot_noabsorb, &s->oo);
	ot_expect_order(test, s, sops, 3);
	KUNIT_EXPECT_EQ(test, s->nr_absorbed, 0);
	oplog_unlock(&ot_noabsorb, &s->oo);
	ot_flush_check(test, &ot_ordered, o);
	ot_flush_check(test, &ot_noabsorb, s);
}

/* Counter logs: per-CPU deltas, summed into the object by ->fold. */
static void oplog_test_counter(struct kunit *test)
{
	struct ot_obj *o = ot_new(test, false);
	unsigned int cpu, nr = 0;
	long expect = 0;
	int round;

	for (round = 0; round < 2; round++) {
		for_each_online_cpu(cpu) {
			long d = (long)cpu + 1 + round * 100;

			KUNIT_EXPECT_EQ(test, ot_add_on(cpu, &ot_counter, o, d), 0);
			KUNIT_EXPECT_EQ(test, ot_add_on(cpu, &ot_counter, o, d), 0);
			KUNIT_EXPECT_EQ(test, ot_add_on(cpu, &ot_counter, o, -1), 0);
			expect += 2 * d - 1;
			if (!round)
				nr++;
		}
		KUNIT_EXPECT_EQ(test, oplog_add(&ot_counter, &o->oo, -7), 0);
		expect -= 7;
		/* Nothing reaches the shared value before a synchronize. */
		if (!round)
			KUNIT_EXPECT_EQ(test, o->value, 0L);
		oplog_synchronize(&ot_counter, &o->oo);
		KUNIT_EXPECT_EQ(test, o->value, expect);
		KUNIT_EXPECT_GT(test, o->nr_folds, 0);
		oplog_unlock(&ot_counter, &o->oo);
	}
	KUNIT_EXPECT_LE(test, o->attached, (int)nr);
	KUNIT_EXPECT_EQ(test, o->nr_exec, 0);
	ot_flush_check(test, &ot_counter, o);
	KUNIT_EXPECT_EQ(test, o->value, expect);
}

/*
 * oplog_add_hit(): nothing without this CPU's log (no attach, no lock, no
 * fold); with it, the delta is logged and folded by the next synchronize;
 * after a flush detached the log, nothing again.  Another CPU's log of the
 * object does not count.
 */
static void oplog_test_add_hit(struct kunit *test)
{
	struct ot_obj *o = ot_new(test, false);
	unsigned int other;

	ot_pin(test, 0);
	KUNIT_EXPECT_FALSE(test, oplog_add_hit(&ot_counter, &o->oo, 5));
	KUNIT_EXPECT_EQ(test, o->attach_calls, 0);
	KUNIT_EXPECT_FALSE(test, oplog_obj_has_logs(&o->oo));

	KUNIT_ASSERT_EQ(test, oplog_add(&ot_counter, &o->oo, 1), 0);
	KUNIT_EXPECT_EQ(test, o->attach_calls, 1);
	KUNIT_EXPECT_TRUE(test, oplog_add_hit(&ot_counter, &o->oo, 5));
	KUNIT_EXPECT_TRUE(test, oplog_add_hit(&ot_counter, &o->oo, -2));
	KUNIT_EXPECT_EQ(test, o->attach_calls, 1);
	KUNIT_EXPECT_EQ(test, o->value, 0L);
	oplog_synchronize(&ot_counter, &o->oo);
	KUNIT_EXPECT_EQ(test, o->value, 4L);
	oplog_unlock(&ot_counter, &o->oo);
	/* a synchronize leaves the log attached: still a hit */
	KUNIT_EXPECT_TRUE(test, oplog_add_hit(&ot_counter, &o->oo, 1));

	ot_flush_check(test, &ot_counter, o);
	KUNIT_EXPECT_EQ(test, o->value, 5L);
	KUNIT_EXPECT_FALSE(test, oplog_add_hit(&ot_counter, &o->oo, 100));
	KUNIT_EXPECT_FALSE(test, oplog_obj_has_logs(&o->oo));

	/* a log on another CPU is not this CPU's hit */
	other = cpumask_next(0, cpu_online_mask);
	if (other < nr_cpu_ids) {
		KUNIT_ASSERT_EQ(test, ot_add_on(other, &ot_counter, o, 1), 0);
		KUNIT_EXPECT_TRUE(test, oplog_obj_has_logs(&o->oo));
		KUNIT_EXPECT_FALSE(test, oplog_add_hit(&ot_counter, &o->oo, 100));
		ot_flush_check(test, &ot_counter, o);
		KUNIT_EXPECT_EQ(test, o->value, 6L);
	}
	ot_unpin();
}

/*
 * Local absorption: an add and a remove of one item in this CPU's log
 * cancel at queue time; ->absorb gets both, nothing is executed.
 */
static void oplog_test_local_absorb(struct kunit *test)
{
	struct ot_obj *o = ot_new(test, false);
	struct ot_op *ops = ot_ops_new(test, 4);

	ot_pin(test, cpumask_first(cpu_online_mask));
	ot_set_op(&ops[0], OPLOG_ADD, 1);
	ot_set_op(&ops[1], OPLOG_REMOVE, 1);
	ot_set_op(&ops[2], OPLOG_ADD, 2);
	ot_set_op(&ops[3], OPLOG_REMOVE, 3);
	KUNIT_EXPECT_EQ(test, oplog_queue(&ot_local, &o->oo, &ops[0].op), 0);
	KUNIT_EXPECT_EQ(test, READ_ONCE(o->nr_absorbed), 0);
	KUNIT_EXPECT_EQ(test, oplog_queue(&ot_local, &o->oo, &ops[1].op), 0);
	/* Absorbed at queue time, before any synchronize. */
	KUNIT_EXPECT_EQ(test, READ_ONCE(o->nr_absorbed), 1);
	KUNIT_EXPECT_PTR_EQ(test, o->absorbed_add, &ops[0].op);
	KUNIT_EXPECT_PTR_EQ(test, o->absorbed_remove, &ops[1].op);
	KUNIT_EXPECT_EQ(test, oplog_queue(&ot_local, &o->oo, &ops[2].op), 0);
	KUNIT_EXPECT_EQ(test, oplog_queue(&ot_local, &o->oo, &ops[3].op), 0);
	ot_unpin();
	KUNIT_EXPECT_EQ(test, o->nr_exec, 0);

	oplog_synchronize(&ot_local, &o->oo);
	KUNIT_EXPECT_EQ(test, o->nr_absorbed, 1);
	KUNIT_EXPECT_EQ(test, o->nr_exec, 2);
	KUNIT_EXPECT_EQ(test, ops[0].nr_exec + ops[1].nr_exec, 0);
	KUNIT_EXPECT_EQ(test, ops[0].nr_absorbed, 1);
	KUNIT_EXPECT_EQ(test, ops[1].nr_absorbed, 1);
	KUNIT_EXPECT_EQ(test, ops[2].nr_exec, 1);
	KUNIT_EXPECT_EQ(test, ops[3].nr_exec, 1);
	oplog_unlock(&ot_local, &o->oo);
	ot_flush_check(test, &ot_local, o);
}

/*
 * oplog_absorb_hit(): an add still in this CPU's log is taken out and never
 * executed; one in another CPU's log, one already applied, or one absorbed
 * before is not found, and nothing is logged by the attempt.  The type
 * needs no absorption flag.
 */
static void oplog_test_absorb_hit(struct kunit *test)
{
	struct ot_obj *o = ot_new(test, false);
	struct ot_op *ops = ot_ops_new(test, 4);
	unsigned int a, b;
	int i;

	if (num_online_cpus() < 2)
		kunit_skip(test, "needs two CPUs");
	a = cpumask_first(cpu_online_mask);
	b = cpumask_next(a, cpu_online_mask);
	for (i = 0; i < 4; i++)
		ot_set_op(&ops[i], OPLOG_ADD, i);

	ot_pin(test, a);
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_EQ(test, oplog_queue(&ot_noabsorb, &o->oo,
						  &ops[i].op), 0);
	KUNIT_EXPECT_TRUE(test, oplog_absorb_hit(&ot_noabsorb, &o->oo,
						 &ops[1].op));
	KUNIT_EXPECT_TRUE(test, list_empty(&ops[1].op.node));
	/* Absorbed once: not there any more. */
	KUNIT_EXPECT_FALSE(test, oplog_absorb_hit(&ot_noabsorb, &o->oo,
						  &ops[1].op));
	/* Never queued. */
	KUNIT_EXPECT_FALSE(test, oplog_absorb_hit(&ot_noabsorb, &o->oo,
						  &ops[3].op));
	ot_pin(test, b);
	/* In CPU a's log, not in this CPU's. */
	KUNIT_EXPECT_FALSE(test, oplog_absorb_hit(&ot_noabsorb, &o->oo,
						  &ops[0].op));
	ot_unpin();
	/* Nothing was logged on CPU b by the attempts, nor executed. */
	KUNIT_EXPECT_EQ(test, READ_ONCE(o->attached), 1);
	KUNIT_EXPECT_EQ(test, READ_ONCE(o->nr_exec), 0);

	oplog_synchronize(&ot_noabsorb, &o->oo);
	KUNIT_EXPECT_EQ(test, o->nr_exec, 2);
	KUNIT_EXPECT_EQ(test, ops[0].nr_exec, 1);
	KUNIT_EXPECT_EQ(test, ops[1].nr_exec, 0);
	KUNIT_EXPECT_EQ(test, ops[2].nr_exec, 1);
	KUNIT_EXPECT_EQ(test, o->nr_absorbed, 0);
	oplog_unlock(&ot_noabsorb, &o->oo);

	/* Applied: the log is still attached, but the add is gone. */
	ot_pin(test, a);
	KUNIT_EXPECT_FALSE(test, oplog_absorb_hit(&ot_noabsorb, &o->oo,
						  &ops[2].op));
	ot_unpin();
	ot_flush_check(test, &ot_noabsorb, o);
}

/*
 * oplog_queue_after(): an operation logged behind one still in this CPU's
 * log is executed after it, by a synchronize and by a flush; behind one
 * never queued, one in another CPU's log, or in a full log, nothing is
 * logged and the operation stays the caller's.
 */
static void oplog_test_queue_after(struct kunit *test)
{
	struct ot_obj *o = ot_new(test, false);
	struct ot_op *ops = ot_ops_new(test, 2 * OT_SHORT_LEN + 1);
	struct ot_op *spare = &ops[2 * OT_SHORT_LEN];
	unsigned int a = cpumask_first(cpu_online_mask);
	int i, round;

	/* Registration shortens logs on machines with many possible CPUs. */
	if (ot_after.max_len < OT_SHORT_LEN)
		kunit_skip(test, "logs of %u operations", ot_after.max_len);
	for (i = 0; i <= 2 * OT_SHORT_LEN; i++)
		ot_set_op(&ops[i], OPLOG_ADD, i);
	/* Round 0 is applied by a synchronize, round 1 by a flush. */
	for (round = 0; round < 2; round++) {
		struct ot_op *r = ops + round * OT_SHORT_LEN;

		ot_pin(test, a);
		KUNIT_EXPECT_EQ(test, oplog_queue(&ot_after, &o->oo, &r[0].op), 0);
		KUNIT_EXPECT_EQ(test, oplog_queue(&ot_after, &o->oo, &r[1].op), 0);
		/* Behind an older one than the newest: still after both. */
		KUNIT_EXPECT_TRUE(test, oplog_queue_after(&ot_after, &o->oo,
							  &r[0].op, &r[2].op));
		/* Behind one never queued. */
		KUNIT_EXPECT_FALSE(test, oplog_queue_after(&ot_after, &o->oo,
							   &spare->op, &r[3].op));
		KUNIT_EXPECT_TRUE(test, oplog_queue_after(&ot_after, &o->oo,
							  &r[2].op, &r[3].op));
		/* The log is full (OT_SHORT_LEN operations). */
		KUNIT_EXPECT_FALSE(test, oplog_queue_after(&ot_after, &o->oo,
							   &r[3].op, &spare->op));
		if (num_online_cpus() >= 2) {
			ot_pin(test, cpumask_next(a, cpu_online_mask));
			/* In CPU a's log: nothing is attached on this one. */
			KUNIT_EXPECT_FALSE(test, oplog_queue_after(&ot_after, &o->oo,
								   &r[0].op,
								   &spare->op));
			KUNIT_EXPECT_EQ(test, READ_ONCE(o->attached), 1);
		}
		ot_unpin();
		if (!round) {
			KUNIT_EXPECT_EQ(test, READ_ONCE(o->nr_exec), 0);
			oplog_synchronize(&ot_after, &o->oo);
			oplog_unlock(&ot_after, &o->oo);
		}
	}
	ot_flush_check(test, &ot_after, o);
	ot_expect_order(test, o, ops, 2 * OT_SHORT_LEN);
	KUNIT_EXPECT_EQ(test, spare->nr_exec, 0);
}

/*
 * An operation logged behind another is executed after it when another
 * object's miss evicts their log: the eviction applies the log in order.
 */
static void oplog_test_queue_after_evict(struct kunit *test)
{
	struct ot_obj *a = ot_new(test, false), *b = ot_new(test, false);
	struct ot_op *aops = ot_ops_new(test, 3), *bops = ot_ops_new(test, 1);
	int i;

	if (ot_after1.max_len < 3)
		kunit_skip(test, "logs of %u operations", ot_after1.max_len);
	lockdep_set_class(&b->lock, &ot_held_key);
	for (i = 0; i < 3; i++)
		ot_set_op(&aops[i], OPLOG_ADD, i);
	ot_set_op(&bops[0], OPLOG_ADD, 0);
	ot_pin(test, cpumask_first(cpu_online_mask));
	KUNIT_EXPECT_EQ(test, oplog_queue(&ot_after1, &a->oo, &aops[0].op), 0);
	KUNIT_EXPECT_EQ(test, oplog_queue(&ot_after1, &a->oo, &aops[1].op), 0);
	KUNIT_EXPECT_TRUE(test, oplog_queue_after(&ot_after1, &a->oo,
						  &aops[0].op, &aops[2].op));
	KUNIT_EXPECT_EQ(test, a->nr_exec, 0);
	/* b's miss takes the only slot: a's log is applied, in order. */
	KUNIT_EXPECT_EQ(test, oplog_queue(&ot_after1, &b->oo, &bops[0].op), 0);
	ot_unpin();
	ot_expect_order(test, a, aops, 3);
	KUNIT_EXPECT_EQ(test, a->attached, 0);
	KUNIT_EXPECT_EQ(test, b->nr_exec, 0);

	oplog_synchronize(&ot_after1, &b->oo);
	ot_expect_order(test, b, bops, 1);
	oplog_unlock(&ot_after1, &b->oo);
	ot_flush_check(test, &ot_after1, a);
	ot_flush_check(test, &ot_after1, b);
}

/*
 * oplog_synchronize_all_locked() takes even an operation stamped after its
 * start (as from a CPU whose clock runs ahead), which
 * oplog_synchronize_locked() leaves in the log, and keeps the log attached.
 */
static void oplog_test_sync_all(struct kunit *test)
{
	struct ot_obj *o = ot_new(test, false);
	struct ot_op *ops = ot_ops_new(test, 2);

	ot_pin(test, cpumask_first(cpu_online_mask));
	ot_set_op(&ops[0], OPLOG_ADD, 1);
	ot_set_op(&ops[1], OPLOG_ADD, 2);
	KUNIT_EXPECT_EQ(test, oplog_queue(&ot_noabsorb, &o->oo, &ops[0].op), 0);
	KUNIT_EXPECT_EQ(test, oplog_queue(&ot_noabsorb, &o->oo, &ops[1].op), 0);
	ot_unpin();
	/* From the future: nobody else touches the log meanwhile. */
	WRITE_ONCE(ops[1].op.ts, U64_MAX - 1);

	spin_lock(&o->lock);
	KUNIT_EXPECT_TRUE(test, oplog_synchronize_locked(&ot_noabsorb, &o->oo));
	KUNIT_EXPECT_EQ(test, ops[0].nr_exec, 1);
	KUNIT_EXPECT_EQ(test, ops[1].nr_exec, 0);
	oplog_synchronize_all_locked(&ot_noabsorb, &o->oo);
	KUNIT_EXPECT_EQ(test, ops[1].nr_exec, 1);
	KUNIT_EXPECT_EQ(test, o->attached, 1);
	spin_unlock(&o->lock);
	ot_flush_check(test, &ot_noabsorb, o);
}

/*
 * Global absorption: an add on one CPU and a remove of the same item on
 * another cancel at synchronize; a remove followed by an add does not
 * cancel, nor does a pair split by a synchronize, nor a type without the
 * flag.
 */
static void oplog_test_global_absorb(struct kunit *test)
{
	struct ot_obj *g = ot_new(test, false), *n = ot_new(test, false);
	struct ot_obj *l = ot_new(test, false);
	struct ot_op *gops = ot_ops_new(test, 6), *nops = ot_ops_new(test, 2);
	struct ot_op *lops = ot_ops_new(test, 2);
	unsigned int a, b;

	if (num_online_cpus() < 2)
		kunit_skip(test, "needs two CPUs");
	a = cpumask_first(cpu_online_mask);
	b = cpumask_next(a, cpu_online_mask);

	ot_set_op(&gops[0], OPLOG_ADD, 7);
	ot_set_op(&gops[1], OPLOG_REMOVE, 7);
	ot_set_op(&gops[2], OPLOG_REMOVE, 8);
	ot_set_op(&gops[3], OPLOG_ADD, 8);
	KUNIT_EXPECT_EQ(test, ot_queue_on(a, &ot_global, g, &gops[0]), 0);
	KUNIT_EXPECT_EQ(test, ot_queue_on(b, &ot_global, g, &gops[1]), 0);
	KUNIT_EXPECT_EQ(test, ot_queue_on(a, &ot_global, g, &gops[2]), 0);
	KUNIT_EXPECT_EQ(test, ot_queue_on(b, &ot_global, g, &gops[3]), 0);
	KUNIT_EXPECT_EQ(test, READ_ONCE(g->nr_absorbed), 0);
	oplog_synchronize(&ot_global, &g->oo);
	KUNIT_EXPECT_EQ(test, g->nr_absorbed, 1);
	KUNIT_EXPECT_PTR_EQ(test, g->absorbed_add, &gops[0].op);
	KUNIT_EXPECT_PTR_EQ(test, g->absorbed_remove, &gops[1].op);
	KUNIT_EXPECT_EQ(test, gops[0].nr_exec + gops[1].nr_exec, 0);
	/* Remove then add of item 8: both run, remove first. */
	KUNIT_EXPECT_EQ(test, g->nr_exec, 2);
	KUNIT_EXPECT_EQ(test, g->rec[0], 2);
	KUNIT_EXPECT_EQ(test, g->rec[1], 3);
	oplog_unlock(&ot_global, &g->oo);

	/* A synchronize between the add and the remove: both execute. */
	ot_set_op(&gops[4], OPLOG_ADD, 9);
	ot_set_op(&gops[5], OPLOG_REMOVE, 9);
	KUNIT_EXPECT_EQ(test, ot_queue_on(a, &ot_global, g, &gops[4]), 0);
	oplog_synchronize(&ot_global, &g->oo);
	KUNIT_EXPECT_EQ(test, gops[4].nr_exec, 1);
	oplog_unlock(&ot_global, &g->oo);
	KUNIT_EXPECT_EQ(test, ot_queue_on(b, &ot_global, g, &gops[5]), 0);
	oplog_synchronize(&ot_global, &g->oo);
	KUNIT_EXPECT_EQ(test, gops[5].nr_exec, 1);
	KUNIT_EXPECT_EQ(test, g->nr_absorbed, 1);
	oplog_unlock(&ot_global, &g->oo);

	/* Without OPLOG_GLOBAL_ABSORB: add then remove, both executed. */
	ot_set_op(&nops[0], OPLOG_ADD, 7);
	ot_set_op(&nops[1], OPLOG_REMOVE, 7);
	KUNIT_EXPECT_EQ(test, ot_queue_on(a, &ot_noabsorb, n, &nops[0]), 0);
	KUNIT_EXPECT_EQ(test, ot_queue_on(b, &ot_noabsorb, n, &nops[1]), 0);
	oplog_synchronize(&ot_noabsorb, &n->oo);
	ot_expect_order(test, n, nops, 2);
	KUNIT_EXPECT_EQ(test, n->nr_absorbed, 0);
	oplog_unlock(&ot_noabsorb, &n->oo);

	/* Local + global type, pair split across CPUs: absorbed at sync. */
	ot_set_op(&lops[0], OPLOG_ADD, 5);
	ot_set_op(&lops[1], OPLOG_REMOVE, 5);
	KUNIT_EXPECT_EQ(test, ot_queue_on(a, &ot_local, l, &lops[0]), 0);
	KUNIT_EXPECT_EQ(test, ot_queue_on(b, &ot_local, l, &lops[1]), 0);
	KUNIT_EXPECT_EQ(test, READ_ONCE(l->nr_absorbed), 0);
	oplog_synchronize(&ot_local, &l->oo);
	KUNIT_EXPECT_EQ(test, l->nr_absorbed, 1);
	KUNIT_EXPECT_EQ(test, l->nr_exec, 0);
	oplog_unlock(&ot_local, &l->oo);

	ot_flush_check(test, &ot_global, g);
	ot_flush_check(test, &ot_noabsorb, n);
	ot_flush_check(test, &ot_local, l);
}

/*
 * One slot per CPU: queueing for a second object evicts the first by
 * synchronizing it.  With the victim's lock held elsewhere the eviction
 * cannot happen and the new operation is applied directly instead.
 */
static void oplog_test_evict(struct kunit *test)
{
	struct ot_obj *a = ot_new(test, true), *b = ot_new(test, true);
	struct ot_op *aops = ot_ops_new(test, 3), *bops = ot_ops_new(test, 1);

	lockdep_set_class(&b->lock, &ot_held_key);
	ot_pin(test, cpumask_first(cpu_online_mask));
	KUNIT_EXPECT_EQ(test, oplog_queue(&ot_oneslot, &a->oo, &aops[0].op), 0);
	KUNIT_EXPECT_EQ(test, oplog_queue(&ot_oneslot, &a->oo, &aops[1].op), 0);
	KUNIT_EXPECT_EQ(test, a->nr_exec, 0);
	KUNIT_EXPECT_EQ(test, a->attached, 1);

	KUNIT_EXPECT_EQ(test, oplog_queue(&ot_oneslot, &b->oo, &bops[0].op), 0);
	/* a was evicted: its operations ran and its log is gone. */
	ot_expect_order(test, a, aops, 2);
	KUNIT_EXPECT_EQ(test, a->attached, 0);
	KUNIT_EXPECT_EQ(test, a->detach_calls, a->attach_calls);
	KUNIT_EXPECT_FALSE(test, oplog_obj_has_logs(&a->oo));
	KUNIT_EXPECT_EQ(test, b->nr_exec, 0);
	KUNIT_EXPECT_EQ(test, b->attached, 1);

	/* The victim b is busy: a's new operation is applied at once. */
	spin_lock(&b->lock);
	KUNIT_EXPECT_EQ(test, oplog_queue(&ot_oneslot, &a->oo, &aops[2].op), 0);
	spin_unlock(&b->lock);
	ot_unpin();
	ot_expect_order(test, a, aops, 3);
	KUNIT_EXPECT_EQ(test, b->nr_exec, 0);

	oplog_synchronize(&ot_oneslot, &b->oo);
	ot_expect_order(test, b, bops, 1);
	oplog_unlock(&ot_oneslot, &b->oo);
	ot_flush_check(test, &ot_oneslot, a);
	ot_flush_check(test, &ot_oneslot, b);
}

/*
 * A counter's eviction and its direct fallback fold this CPU's delta alone
 * (sv6's critique of the thesis: flush only this CPU's log of the victim;
 * counter updates commute): the other CPUs' logs of the victim stay
 * attached and unfolded.  A negative delta is the exception while another
 * CPU may hold a log (a shared count with a floor, like the dentry's pins,
 * must see the positive deltas first).  oplog_type_nr_logs() sums every
 * CPU's logs.
 */
static void oplog_test_counter_evict(struct kunit *test)
{
	struct ot_obj *a = ot_new(test, false), *b = ot_new(test, false);
	struct ot_obj *c = ot_new(test, false);
	unsigned int home, other;

	if (num_online_cpus() < 2)
		kunit_skip(test, "needs two online CPUs");
	home = cpumask_first(cpu_online_mask);
	other = cpumask_next(home, cpu_online_mask);
	lockdep_set_class(&b->lock, &ot_held_key);
	KUNIT_EXPECT_EQ(test, oplog_type_nr_logs(&ot_counter1), 0UL);

	KUNIT_EXPECT_EQ(test, ot_add_on(other, &ot_counter1, a, 5), 0);
	KUNIT_EXPECT_EQ(test, ot_add_on(home, &ot_counter1, a, 3), 0);
	KUNIT_EXPECT_EQ(test, oplog_type_nr_logs(&ot_counter1), 2UL);
	KUNIT_EXPECT_EQ(test, a->attached, 2);

	/* b evicts a from home's only slot: home's +3 alone is folded. */
	KUNIT_EXPECT_EQ(test, ot_add_on(home, &ot_counter1, b, 1), 0);
	KUNIT_EXPECT_EQ(test, a->value, 3L);
	KUNIT_EXPECT_EQ(test, a->nr_folds, 1);
	KUNIT_EXPECT_EQ(test, a->attached, 1);
	KUNIT_EXPECT_TRUE(test, oplog_obj_has_logs(&a->oo));
	KUNIT_EXPECT_EQ(test, oplog_type_nr_logs(&ot_counter1), 2UL);

	/* Busy victim b: a's +2 is folded at once, other's +5 is left. */
	ot_pin(test, home);
	spin_lock(&b->lock);
	KUNIT_EXPECT_EQ(test, oplog_add(&ot_counter1, &a->oo, 2), 0);
	spin_unlock(&b->lock);
	ot_unpin();
	KUNIT_EXPECT_EQ(test, a->value, 5L);
	KUNIT_EXPECT_EQ(test, a->nr_folds, 2);
	KUNIT_EXPECT_EQ(test, a->attached, 1);

	/* A negative delta evicted while other holds +5: both are folded. */
	KUNIT_EXPECT_EQ(test, ot_add_on(home, &ot_counter1, a, -4), 0);
	KUNIT_EXPECT_EQ(test, b->value, 1L);
	KUNIT_EXPECT_EQ(test, ot_add_on(home, &ot_counter1, c, 1), 0);
	if (nr_cpu_ids <= BITS_PER_LONG) {
		KUNIT_EXPECT_EQ(test, a->value, 6L);
		KUNIT_EXPECT_EQ(test, a->attached, 1);
	}

	ot_flush_check(test, &ot_counter1, a);
	ot_flush_check(test, &ot_counter1, b);
	ot_flush_check(test, &ot_counter1, c);
	KUNIT_EXPECT_EQ(test, a->value, 6L);
	KUNIT_EXPECT_EQ(test, c->value, 1L);
	KUNIT_EXPECT_EQ(test, oplog_type_nr_logs(&ot_counter1), 0UL);
}

/* A log never holds more than max_len operations: a full log synchronizes. */
static void oplog_test_full(struct kunit *test)
{
	struct ot_obj *o = ot_new(test, true);
	const int n = 3 * OT_SHORT_LEN + 1;
	struct ot_op *ops = ot_ops_new(test, n);
	int i;

	ot_pin(test, cpumask_first(cpu_online_mask));
	for (i = 0; i < n; i++) {
		KUNIT_EXPECT_EQ(test, oplog_queue(&ot_short, &o->oo, &ops[i].op), 0);
		KUNIT_EXPECT_LE_MSG(test, i + 1 - o->nr_exec, OT_SHORT_LEN, "after op %d", i);
	}
	ot_unpin();
	/* Some ran without any synchronize of ours, as a prefix in order. */
	KUNIT_EXPECT_GT(test, o->nr_exec, 0);
	for (i = 0; i < o->nr_exec && i < n; i++)
		KUNIT_EXPECT_EQ(test, o->rec[i], i);
	oplog_synchronize(&ot_short, &o->oo);
	ot_expect_order(test, o, ops, n);
	oplog_unlock(&ot_short, &o->oo);
	ot_flush_check(test, &ot_short, o);
}

/*
 * The logs of one object hold at most max_pending operations on all CPUs
 * together (max_len is lowered at registration), so no apply, whether a
 * full log's inside oplog_queue() or a reader's synchronize, handles more,
 * whatever the number of CPUs.
 */
static void oplog_test_max_pending(struct kunit *test)
{
	unsigned int bound = max(OT_PENDING, num_possible_cpus());
	struct ot_obj *o = ot_new(test, true);
	const int per_cpu = 3 * 64;
	int n = per_cpu * num_online_cpus(), i = 0, j, before;
	struct ot_op *ops = ot_ops_new(test, n);
	unsigned int cpu;

	KUNIT_EXPECT_EQ(test, ot_pending.max_len,
			clamp(OT_PENDING / num_possible_cpus(), 1U, 64U));
	for_each_online_cpu(cpu) {
		ot_pin(test, cpu);
		for (j = 0; j < per_cpu; j++, i++) {
			before = o->nr_exec;
			KUNIT_EXPECT_EQ(test, oplog_queue(&ot_pending, &o->oo,
							  &ops[i].op), 0);
			/* One apply: what was pending, and this op at most. */
			KUNIT_EXPECT_LE(test, o->nr_exec - before, bound + 1);
			KUNIT_EXPECT_LE_MSG(test, i + 1 - o->nr_exec, bound,
					    "pending after op %d", i);
		}
		ot_unpin();
	}
	spin_lock(&o->lock);
	before = o->nr_exec;
	oplog_synchronize_locked(&ot_pending, &o->oo);
	KUNIT_EXPECT_LE(test, o->nr_exec - before, bound);
	spin_unlock(&o->lock);
	ot_expect_order(test, o, ops, n);
	ot_flush_check(test, &ot_pending, o);
}

/* Teardown: a flush applies everything and detaches every CPU's log. */
static void oplog_test_flush(struct kunit *test)
{
	struct ot_obj *o = ot_new(test, true);
	unsigned int cpu, nr = 0;
	struct ot_op *ops = ot_ops_new(test, 2 * num_online_cpus());
	int i = 0;

	for_each_online_cpu(cpu) {
		KUNIT_EXPECT_EQ(test, ot_queue_on(cpu, &ot_ordered, o, &ops[i]), 0);
		i++;
		nr++;
	}
	KUNIT_EXPECT_EQ(test, o->attached, (int)nr);
	KUNIT_EXPECT_EQ(test, o->attach_calls, (int)nr);
	KUNIT_EXPECT_NE(test, o->oo.cpus, 0UL);
	oplog_flush(&ot_ordered, &o->oo);
	KUNIT_EXPECT_EQ(test, o->attached, 0);
	KUNIT_EXPECT_EQ(test, o->detach_calls, (int)nr);
	KUNIT_EXPECT_EQ(test, o->oo.cpus, 0UL);
	ot_expect_order(test, o, ops, i);

	/* Queueing again re-attaches; the locked form leaves it locked. */
	for_each_online_cpu(cpu) {
		KUNIT_EXPECT_EQ(test, ot_queue_on(cpu, &ot_ordered, o, &ops[i]), 0);
		i++;
	}
	KUNIT_EXPECT_EQ(test, o->attached, (int)nr);
	spin_lock(&o->lock);
	oplog_flush_locked(&ot_ordered, &o->oo);
	lockdep_assert_held(&o->lock);
	KUNIT_EXPECT_TRUE(test, ot_held(o));
	KUNIT_EXPECT_EQ(test, o->attached, 0);
	KUNIT_EXPECT_EQ(test, o->oo.cpus, 0UL);
	spin_unlock(&o->lock);
	ot_expect_order(test, o, ops, i);
	KUNIT_EXPECT_EQ(test, o->detach_calls, 2 * (int)nr);
	ot_flush_check(test, &ot_ordered, o);
}

/*
 * @type's log of @o in @cpu's cache, else a vacant log (no object) in the
 * set of @o, else NULL.  Read without the cache lock: @cpu is idle in
 * OpLog (the caller is pinned there, or it queues nothing).
 */
static struct oplog_log *ot_slot_log(struct oplog_type *type, unsigned int cpu,
				     struct ot_obj *o)
{
	struct oplog_cache *cache = *per_cpu_ptr(type->caches.slot, cpu);
	struct oplog_log *log, *vacant = NULL;
	unsigned int i, set = oplog_set(type, &o->oo);

	if (!cache)
		return NULL;
	for (i = set; i < set + oplog_ways(type); i++) {
		log = READ_ONCE(cache->slots[i]);
		if (log && READ_ONCE(log->obj) == &o->oo)
			return log;
		if (log && !READ_ONCE(log->obj) && !vacant)
			vacant = log;
	}
	return vacant;
}

static long ot_stat(struct oplog_type *type, unsigned int cpu,
		    enum oplog_stat s)
{
	struct oplog_cache *cache = *per_cpu_ptr(type->caches.slot, cpu);

	return cache ? local_read(&cache->stats[s]) : 0;
}

static long ot_reused(struct oplog_type *type, unsigned int cpu)
{
	return ot_stat(type, cpu, OPLOG_STAT_REUSED);
}

/*
 * Fill @out with @k of @n new objects whose pointers hash to one set of
 * @type's caches; @n is chosen so that some set must get @k of them.
 */
static void ot_same_set(struct kunit *test, struct oplog_type *type,
			unsigned int n, unsigned int k, struct ot_obj **out)
{
	struct ot_obj **o = kunit_kcalloc(test, n, sizeof(*o), GFP_KERNEL);
	unsigned int i, j, got;

	KUNIT_ASSERT_NOT_NULL(test, o);
	for (i = 0; i < n; i++)
		o[i] = ot_new(test, true);
	for (i = 0; i < n; i++) {
		for (got = 0, j = i; j < n && got < k; j++)
			if (oplog_set(type, &o[j]->oo) ==
			    oplog_set(type, &o[i]->oo))
				out[got++] = o[j];
		if (got == k)
			return;
	}
	KUNIT_FAIL(test, "no %u objects in one set", k);
}

/* Three new objects in one set of ot_ordered's caches (two ways). */
static void ot_three_in_set(struct kunit *test, struct ot_obj **a,
			    struct ot_obj **b, struct ot_obj **c)
{
	struct ot_obj *abc[3] = { NULL };

	/* One more object than twice the sets: some set gets three. */
	ot_same_set(test, &ot_ordered, ot_ordered.nr_slots / OPLOG_WAYS * 2 + 1,
		    3, abc);
	KUNIT_ASSERT_NOT_NULL(test, abc[2]);
	*a = abc[0];
	*b = abc[1];
	*c = abc[2];
}

/*
 * Two objects whose pointers hash to one set both keep their logs, in its
 * two ways, and both hit.  A third evicts the first way's log when both
 * were referenced (not the older one), and a log not referenced since the
 * set's last eviction when there is one (not the first way's): second
 * chance.  The shrinker also clears referenced flags; it does not run
 * during boot-time KUnit.
 */
static void oplog_test_assoc(struct kunit *test)
{
	struct ot_op *aops = ot_ops_new(test, 3), *bops = ot_ops_new(test, 3);
	struct ot_op *cops = ot_ops_new(test, 2);
	unsigned int cpu = cpumask_first(cpu_online_mask);
	struct ot_obj *a, *b, *c;
	long evictions, hits;

	ot_three_in_set(test, &a, &b, &c);

	oplog_type_drain(&ot_ordered);
	ot_pin(test, cpu);
	evictions = ot_stat(&ot_ordered, cpu, OPLOG_STAT_EVICTIONS);
	KUNIT_EXPECT_EQ(test, oplog_queue(&ot_ordered, &a->oo, &aops[0].op), 0);
	KUNIT_EXPECT_EQ(test, oplog_queue(&ot_ordered, &b->oo, &bops[0].op), 0);
	hits = ot_stat(&ot_ordered, cpu, OPLOG_STAT_HITS);
	KUNIT_EXPECT_EQ(test, oplog_queue(&ot_ordered, &a->oo, &aops[1].op), 0);
	KUNIT_EXPECT_EQ(test, oplog_queue(&ot_ordered, &b->oo, &bops[1].op), 0);
	KUNIT_EXPECT_EQ(test, ot_stat(&ot_ordered, cpu, OPLOG_STAT_HITS),
			hits + 2);
	KUNIT_EXPECT_EQ(test, ot_stat(&ot_ordered, cpu, OPLOG_STAT_EVICTIONS),
			evictions);
	KUNIT_EXPECT_EQ(test, a->nr_exec + b->nr_exec, 0);
	KUNIT_EXPECT_EQ(test, a->attached + b->attached, 2);

	/* Both referenced: c takes the first way, a's, and a's ops run. */
	KUNIT_EXPECT_EQ(test, oplog_queue(&ot_ordered, &c->oo, &cops[0].op), 0);
	KUNIT_EXPECT_EQ(test, ot_stat(&ot_ordered, cpu, OPLOG_STAT_EVICTIONS),
			evictions + 1);
	ot_expect_order(test, a, aops, 2);
	KUNIT_EXPECT_EQ(test, a->attached, 0);
	KUNIT_EXPECT_EQ(test, b->attached, 1);

	/* b, the older log, is referenced again: a takes c's way. */
	KUNIT_EXPECT_EQ(test, oplog_queue(&ot_ordered, &b->oo, &bops[2].op), 0);
	KUNIT_EXPECT_EQ(test, oplog_queue(&ot_ordered, &a->oo, &aops[2].op), 0);
	ot_expect_order(test, c, cops, 1);
	KUNIT_EXPECT_EQ(test, c->attached, 0);
	KUNIT_EXPECT_EQ(test, b->nr_exec, 0);
	KUNIT_EXPECT_EQ(test, b->attached, 1);

	/* b was not referenced since: c comes back in its way, not a's. */
	KUNIT_EXPECT_EQ(test, oplog_queue(&ot_ordered, &c->oo, &cops[1].op), 0);
	ot_expect_order(test, b, bops, 3);
	KUNIT_EXPECT_EQ(test, b->attached, 0);
	KUNIT_EXPECT_EQ(test, a->nr_exec, 2);
	KUNIT_EXPECT_EQ(test, a->attached, 1);
	KUNIT_EXPECT_EQ(test, c->attached, 1);
	KUNIT_EXPECT_EQ(test, ot_stat(&ot_ordered, cpu, OPLOG_STAT_EVICTIONS),
			evictions + 3);
	ot_unpin();

	ot_flush_check(test, &ot_ordered, a);
	ot_flush_check(test, &ot_ordered, b);
	ot_flush_check(test, &ot_ordered, c);
	ot_expect_order(test, a, aops, 3);
	ot_expect_order(test, c, cops, 2);
	oplog_type_drain(&ot_ordered);
}

/*
 * A busy victim does not send a miss to the locked path while the set's
 * other way holds a victim whose lock can be had: with a's lock held
 * elsewhere, c evicts b, the other way's, and is logged; only with both
 * victims busy does a miss apply its operation at once.
 */
static void oplog_test_assoc_busy(struct kunit *test)
{
	struct ot_op *aops = ot_ops_new(test, 2), *bops = ot_ops_new(test, 2);
	struct ot_op *cops = ot_ops_new(test, 2);
	unsigned int cpu = cpumask_first(cpu_online_mask);
	struct ot_obj *a, *b, *c;
	long evictions, busy;

	ot_three_in_set(test, &a, &b, &c);
	/* Held here while oplog_queue() takes another object's lock. */
	lockdep_set_class(&a->lock, &ot_held_key);
	lockdep_set_class(&c->lock, &ot_held2_key);

	oplog_type_drain(&ot_ordered);
	ot_pin(test, cpu);
	evictions = ot_stat(&ot_ordered, cpu, OPLOG_STAT_EVICTIONS);
	busy = ot_stat(&ot_ordered, cpu, OPLOG_STAT_EVICT_BUSY);
	KUNIT_EXPECT_EQ(test, oplog_queue(&ot_ordered, &a->oo, &aops[0].op), 0);
	KUNIT_EXPECT_EQ(test, oplog_queue(&ot_ordered, &b->oo, &bops[0].op), 0);
	KUNIT_EXPECT_EQ(test, a->attached + b->attached, 2);

	/* Both referenced: a's way is the victim, but a is busy: b goes. */
	spin_lock(&a->lock);
	KUNIT_EXPECT_EQ(test, oplog_queue(&ot_ordered, &c->oo, &cops[0].op), 0);
	spin_unlock(&a->lock);
	KUNIT_EXPECT_EQ(test, ot_stat(&ot_ordered, cpu, OPLOG_STAT_EVICTIONS),
			evictions + 1);
	KUNIT_EXPECT_EQ(test, ot_stat(&ot_ordered, cpu, OPLOG_STAT_EVICT_BUSY),
			busy);
	ot_expect_order(test, b, bops, 1);
	KUNIT_EXPECT_EQ(test, b->attached, 0);
	KUNIT_EXPECT_EQ(test, a->nr_exec, 0);
	KUNIT_EXPECT_EQ(test, a->attached, 1);
	KUNIT_EXPECT_EQ(test, c->nr_exec, 0);
	KUNIT_EXPECT_EQ(test, c->attached, 1);

	/* Both victims busy: b's operation is applied at once. */
	spin_lock(&a->lock);
	spin_lock(&c->lock);
	KUNIT_EXPECT_EQ(test, oplog_queue(&ot_ordered, &b->oo, &bops[1].op), 0);
	spin_unlock(&c->lock);
	spin_unlock(&a->lock);
	KUNIT_EXPECT_EQ(test, ot_stat(&ot_ordered, cpu, OPLOG_STAT_EVICT_BUSY),
			busy + 1);
	ot_expect_order(test, b, bops, 2);
	KUNIT_EXPECT_EQ(test, b->attached, 0);
	KUNIT_EXPECT_EQ(test, a->nr_exec + c->nr_exec, 0);
	ot_unpin();

	ot_flush_check(test, &ot_ordered, a);
	ot_flush_check(test, &ot_ordered, c);
	ot_expect_order(test, a, aops, 1);
	ot_expect_order(test, c, cops, 1);
	oplog_type_drain(&ot_ordered);
}

/*
 * A miss by an object whose log sits in its set's second way finds that
 * log before it looks for a vacant one: a cache never holds two logs of
 * one object.  b's grant runs out (ot_reserve() grants two at a time), so
 * its third operation misses while a's flushed log lies vacant in the
 * first way.
 */
static void oplog_test_assoc_find(struct kunit *test)
{
	struct ot_op *aops = ot_ops_new(test, 1), *bops = ot_ops_new(test, 3);
	unsigned int cpu = cpumask_first(cpu_online_mask), i;
	struct ot_obj *ab[2], *a, *b;
	long reused;

	ot_same_set(test, &ot_reserving,
		    ot_reserving.nr_slots / OPLOG_WAYS + 1, 2, ab);
	a = ab[0];
	b = ab[1];
	a->budget = 1;
	b->budget = 3;

	oplog_type_drain(&ot_reserving);
	ot_pin(test, cpu);
	KUNIT_EXPECT_EQ(test, oplog_queue(&ot_reserving, &a->oo, &aops[0].op), 0);
	KUNIT_EXPECT_EQ(test, oplog_queue(&ot_reserving, &b->oo, &bops[0].op), 0);
	KUNIT_EXPECT_EQ(test, oplog_queue(&ot_reserving, &b->oo, &bops[1].op), 0);
	oplog_flush(&ot_reserving, &a->oo);
	ot_expect_order(test, a, aops, 1);
	reused = ot_reused(&ot_reserving, cpu);
	KUNIT_EXPECT_EQ(test, oplog_queue(&ot_reserving, &b->oo, &bops[2].op), 0);
	KUNIT_EXPECT_EQ(test, ot_reused(&ot_reserving, cpu), reused);
	KUNIT_EXPECT_EQ(test, b->attached, 1);
	KUNIT_EXPECT_EQ(test, hweight_long(b->oo.cpus), 1);
	KUNIT_EXPECT_EQ(test, b->nr_exec, 0);
	ot_unpin();

	ot_flush_check(test, &ot_reserving, a);
	ot_flush_check(test, &ot_reserving, b);
	ot_expect_order(test, b, bops, 3);
	for (i = 0; i < 2; i++)
		KUNIT_EXPECT_EQ(test, ab[i]->reserved, 0U);
	oplog_type_drain(&ot_reserving);
}

/*
 * A flush leaves each log it empties in its slot, vacant: the owner's next
 * miss there takes it back (no allocation, no QDo callback), and a
 * counter's reused log starts from zero, not from the dead mark.  A drain
 * (as the shrinker, a dead CPU) gives the memory back.
 */
static void oplog_test_vacant(struct kunit *test)
{
	struct ot_obj *o = ot_new(test, true), *c = ot_new(test, false);
	struct ot_op *ops = ot_ops_new(test, 2);
	unsigned int cpu = cpumask_first(cpu_online_mask);
	struct oplog_log *log;
	long reused;

	/* Earlier cases' flushes left vacant logs: start from empty slots. */
	oplog_type_drain(&ot_ordered);
	oplog_type_drain(&ot_counter);
	ot_pin(test, cpu);
	reused = ot_reused(&ot_ordered, cpu);
	KUNIT_ASSERT_EQ(test, oplog_queue(&ot_ordered, &o->oo, &ops[0].op), 0);
	KUNIT_EXPECT_EQ(test, ot_reused(&ot_ordered, cpu), reused);
	log = ot_slot_log(&ot_ordered, cpu, o);
	KUNIT_ASSERT_NOT_NULL(test, log);
	KUNIT_EXPECT_PTR_EQ(test, READ_ONCE(log->obj), &o->oo);
	oplog_flush(&ot_ordered, &o->oo);
	KUNIT_EXPECT_EQ(test, o->attached, 0);
	KUNIT_EXPECT_PTR_EQ(test, ot_slot_log(&ot_ordered, cpu, o), log);
	KUNIT_EXPECT_NULL(test, READ_ONCE(log->obj));

	KUNIT_ASSERT_EQ(test, oplog_queue(&ot_ordered, &o->oo, &ops[1].op), 0);
	KUNIT_EXPECT_PTR_EQ(test, ot_slot_log(&ot_ordered, cpu, o), log);
	KUNIT_EXPECT_PTR_EQ(test, READ_ONCE(log->obj), &o->oo);
	KUNIT_EXPECT_EQ(test, ot_reused(&ot_ordered, cpu), reused + 1);
	KUNIT_EXPECT_EQ(test, o->attached, 1);
	ot_flush_check(test, &ot_ordered, o);
	ot_expect_order(test, o, ops, 2);

	/* A counter: 5, flushed (the log's delta is dead), then 1 and 2. */
	KUNIT_ASSERT_EQ(test, oplog_add(&ot_counter, &c->oo, 5), 0);
	ot_flush_check(test, &ot_counter, c);
	reused = ot_reused(&ot_counter, cpu);
	KUNIT_ASSERT_EQ(test, oplog_add(&ot_counter, &c->oo, 1), 0);
	KUNIT_EXPECT_EQ(test, ot_reused(&ot_counter, cpu), reused + 1);
	KUNIT_EXPECT_TRUE(test, oplog_add_hit(&ot_counter, &c->oo, 2));
	ot_flush_check(test, &ot_counter, c);
	KUNIT_EXPECT_EQ(test, c->value, 8L);

	oplog_type_drain(&ot_ordered);
	KUNIT_EXPECT_NULL(test, ot_slot_log(&ot_ordered, cpu, o));
	ot_unpin();
}

/* Operations pending on a CPU that goes offline are applied, not lost. */
static void oplog_test_hotplug(struct kunit *test)
{
	struct ot_obj *o = ot_new(test, true), *c = ot_new(test, false);
	struct ot_op *ops = ot_ops_new(test, 5);
	const unsigned int victim = 1;
	unsigned int home;
	int ret;

	if (!IS_ENABLED(CONFIG_HOTPLUG_CPU))
		kunit_skip(test, "needs CONFIG_HOTPLUG_CPU");
	if (num_online_cpus() < 2 || !cpu_online(victim))
		kunit_skip(test, "needs CPU %u online and another CPU", victim);
	home = cpumask_first(cpu_online_mask);
	if (home == victim)
		home = cpumask_next(victim, cpu_online_mask);

	ot_pin(test, home);
	KUNIT_EXPECT_EQ(test, oplog_queue(&ot_ordered, &o->oo, &ops[0].op), 0);
	KUNIT_EXPECT_EQ(test, ot_queue_on(victim, &ot_ordered, o, &ops[1]), 0);
	KUNIT_EXPECT_EQ(test, ot_queue_on(victim, &ot_ordered, o, &ops[2]), 0);
	KUNIT_EXPECT_EQ(test, oplog_queue(&ot_ordered, &o->oo, &ops[3].op), 0);
	KUNIT_EXPECT_EQ(test, ot_add_on(victim, &ot_counter, c, 5), 0);
	KUNIT_EXPECT_EQ(test, ot_add_on(victim, &ot_counter, c, 6), 0);
	KUNIT_EXPECT_EQ(test, o->nr_exec, 0);

	ret = remove_cpu(victim);
	if (ret) {
		ot_unpin();
		ot_flush_check(test, &ot_ordered, o);
		ot_flush_check(test, &ot_counter, c);
		kunit_skip(test, "remove_cpu(%u) failed: %d", victim, ret);
	}
	/* The dead CPU's operations ran, after those queued before them. */
	KUNIT_EXPECT_EQ(test, ops[1].nr_exec, 1);
	KUNIT_EXPECT_EQ(test, ops[2].nr_exec, 1);
	KUNIT_EXPECT_GE(test, o->nr_exec, 3);
	KUNIT_EXPECT_EQ(test, o->rec[0], 0);
	KUNIT_EXPECT_EQ(test, o->rec[1], 1);
	KUNIT_EXPECT_EQ(test, o->rec[2], 2);
	KUNIT_EXPECT_GE(test, o->detach_calls, 1);
	KUNIT_EXPECT_EQ(test, c->value, 11L);
	spin_lock(&o->lock);
	KUNIT_EXPECT_FALSE(test, o->oo.cpus & BIT(victim % BITS_PER_LONG));
	spin_unlock(&o->lock);

	KUNIT_EXPECT_EQ(test, add_cpu(victim), 0);
	KUNIT_EXPECT_EQ(test, ot_queue_on(victim, &ot_ordered, o, &ops[4]), 0);
	ot_unpin();
	oplog_synchronize(&ot_ordered, &o->oo);
	ot_expect_order(test, o, ops, 5);
	oplog_unlock(&ot_ordered, &o->oo);
	oplog_synchronize(&ot_counter, &c->oo);
	KUNIT_EXPECT_EQ(test, c->value, 11L);
	oplog_unlock(&ot_counter, &c->oo);
	ot_flush_check(test, &ot_ordered, o);
	ot_flush_check(test, &ot_counter, c);
}

/* An attach refusal fails the queue with -ENOENT and logs nothing. */
static void oplog_test_refuse(struct kunit *test)
{
	struct ot_obj *o = ot_new(test, false);
	struct ot_op *ops = ot_ops_new(test, 2);

	o->refuse = true;
	KUNIT_EXPECT_EQ(test, oplog_queue(&ot_ordered, &o->oo, &ops[0].op), -ENOENT);
	KUNIT_EXPECT_EQ(test, o->attached, 0);
	KUNIT_EXPECT_EQ(test, o->oo.cpus, 0UL);
	KUNIT_EXPECT_EQ(test, o->nr_exec, 0);
	oplog_synchronize(&ot_ordered, &o->oo);
	KUNIT_EXPECT_EQ(test, o->nr_exec, 0);
	KUNIT_EXPECT_EQ(test, ops[0].nr_exec, 0);
	oplog_unlock(&ot_ordered, &o->oo);

	o->refuse = false;
	KUNIT_EXPECT_EQ(test, oplog_queue(&ot_ordered, &o->oo, &ops[1].op), 0);
	KUNIT_EXPECT_EQ(test, o->attached, 1);
	oplog_synchronize(&ot_ordered, &o->oo);
	KUNIT_EXPECT_EQ(test, o->nr_exec, 1);
	KUNIT_EXPECT_EQ(test, ops[1].nr_exec, 1);
	oplog_unlock(&ot_ordered, &o->oo);
	oplog_flush(&ot_ordered, &o->oo);
	KUNIT_EXPECT_EQ(test, o->attached, 0);
	KUNIT_EXPECT_EQ(test, o->detach_calls, 1);
	KUNIT_EXPECT_EQ(test, o->unlocked_calls, 0);
}

/*
 * ->reserve bounds the logged operations: a log takes what it was granted
 * (asking again on a miss when that is used up), a queue that gets no
 * grant fails with -ENOSPC and leaves its operation to the caller, and
 * every unit comes back through ->release: applied operations at a
 * synchronize, a detached log's unused grant at a flush.  A grant without
 * ->release, or on a kind other than ordered, is refused at registration.
 */
static void oplog_test_reserve(struct kunit *test)
{
	static const struct oplog_type_ops half_ops = {
		.obj_lock = ot_lock, .exec = ot_exec, .reserve = ot_reserve,
	};
	static const struct oplog_type_ops counter_ops = {
		.obj_lock = ot_lock, .fold = ot_fold, .reserve = ot_reserve,
		.release = ot_release,
	};
	static struct oplog_type bad_half = {
		.name = "kunit_bad_half", .kind = OPLOG_ORDERED, .ops = &half_ops,
	};
	static struct oplog_type bad_counter = {
		.name = "kunit_bad_counter", .kind = OPLOG_COUNTER,
		.ops = &counter_ops,
	};
	struct ot_obj *o = ot_new(test, true);
	struct ot_op *ops = ot_ops_new(test, 4);
	unsigned int cpu = cpumask_first(cpu_online_mask);
	int i;

	KUNIT_EXPECT_EQ(test, oplog_type_register(&bad_half), -EINVAL);
	KUNIT_EXPECT_EQ(test, oplog_type_register(&bad_counter), -EINVAL);

	o->budget = 3;
	/* Two by the first grant, the third by a second one on a miss. */
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_EQ(test, ot_queue_on(cpu, &ot_reserving, o, &ops[i]), 0);
	KUNIT_EXPECT_EQ(test, o->nr_exec, 0);
	KUNIT_EXPECT_EQ(test, o->reserved, 3U);
	/* The budget is used up: the caller keeps its operation. */
	KUNIT_EXPECT_EQ(test, ot_queue_on(cpu, &ot_reserving, o, &ops[3]), -ENOSPC);
	KUNIT_EXPECT_EQ(test, o->nr_exec, 0);
	KUNIT_EXPECT_EQ(test, o->attached, 1);

	oplog_synchronize(&ot_reserving, &o->oo);
	KUNIT_EXPECT_EQ(test, o->nr_exec, 3);
	KUNIT_EXPECT_EQ(test, o->reserved, 0U);
	oplog_unlock(&ot_reserving, &o->oo);

	/* Room again; the grant's unused unit comes back at the flush. */
	KUNIT_EXPECT_EQ(test, ot_queue_on(cpu, &ot_reserving, o, &ops[3]), 0);
	KUNIT_EXPECT_EQ(test, o->reserved, 2U);
	ot_flush_check(test, &ot_reserving, o);
	ot_expect_order(test, o, ops, 4);
	KUNIT_EXPECT_EQ(test, o->reserved, 0U);
	KUNIT_EXPECT_EQ(test, o->release_errors, 0);
}

/*
 * %OPLOG_UNSTAMPED: no operation gets a timestamp, a synchronize applies
 * them in the order taken (a stamped absorbing type sorts them by key),
 * local absorption still works, and every logged operation is taken (no
 * cutoff leaves one behind).  oplog_obj_maybe_logged() tells the attached
 * log that holds them from the same log emptied.  Registering the flag with
 * global absorption, or on another kind, is refused.
 */
static void oplog_test_unstamped(struct kunit *test)
{
	static struct oplog_type bad_global = {
		.name = "kunit_bad", .kind = OPLOG_ABSORBING, .ops = &ot_ops,
		.flags = OPLOG_UNSTAMPED | OPLOG_GLOBAL_ABSORB,
	};
	static struct oplog_type bad_kind = {
		.name = "kunit_bad", .kind = OPLOG_ORDERED, .ops = &ot_ops,
		.flags = OPLOG_UNSTAMPED,
	};
	struct ot_obj *o = ot_new(test, false);
	struct ot_op *ops = ot_ops_new(test, 5);
	int i;

	KUNIT_EXPECT_EQ(test, oplog_type_register(&bad_global), -EINVAL);
	KUNIT_EXPECT_EQ(test, oplog_type_register(&bad_kind), -EINVAL);

	ot_pin(test, cpumask_first(cpu_online_mask));
	ot_set_op(&ops[0], OPLOG_ADD, 3);
	ot_set_op(&ops[1], OPLOG_ADD, 2);
	ot_set_op(&ops[2], OPLOG_ADD, 9);
	ot_set_op(&ops[3], OPLOG_REMOVE, 9);
	ot_set_op(&ops[4], OPLOG_ADD, 1);
	for (i = 0; i < 5; i++) {
		ops[i].op.ts = U64_MAX;
		KUNIT_EXPECT_EQ(test, oplog_queue(&ot_unstamped, &o->oo,
						  &ops[i].op), 0);
	}
	ot_unpin();
	KUNIT_EXPECT_EQ(test, READ_ONCE(o->nr_absorbed), 1);
	KUNIT_EXPECT_EQ(test, ops[0].op.ts, 0ULL);
	KUNIT_EXPECT_EQ(test, ops[1].op.ts, 0ULL);
	KUNIT_EXPECT_EQ(test, ops[4].op.ts, 0ULL);

	KUNIT_EXPECT_TRUE(test, oplog_obj_maybe_logged(&ot_unstamped, &o->oo));

	spin_lock(&o->lock);
	KUNIT_EXPECT_FALSE(test, oplog_synchronize_locked(&ot_unstamped,
							  &o->oo));
	spin_unlock(&o->lock);
	/* The log stays attached, empty: nothing is logged any more. */
	KUNIT_EXPECT_TRUE(test, oplog_obj_has_logs(&o->oo));
	KUNIT_EXPECT_FALSE(test, oplog_obj_maybe_logged(&ot_unstamped, &o->oo));
	KUNIT_ASSERT_EQ(test, o->nr_exec, 3);
	/* Queue order, not key order. */
	KUNIT_EXPECT_EQ(test, o->rec[0], 0);
	KUNIT_EXPECT_EQ(test, o->rec[1], 1);
	KUNIT_EXPECT_EQ(test, o->rec[2], 4);
	ot_flush_check(test, &ot_unstamped, o);
}

/*
 * A user whose type failed to register (oplog_type_register() returned an
 * error at boot) still synchronizes and flushes its objects, which never got
 * a log: both must do nothing, without touching the type's missing caches.
 */
static void oplog_test_unregistered(struct kunit *test)
{
	static struct oplog_type never = {
		.name = "kunit_never", .kind = OPLOG_ORDERED, .ops = &ot_ops,
	};
	struct ot_obj *o = ot_new(test, false);

	spin_lock(&o->lock);
	KUNIT_EXPECT_FALSE(test, oplog_synchronize_locked(&never, &o->oo));
	spin_unlock(&o->lock);
	oplog_flush(&never, &o->oo);
	KUNIT_EXPECT_EQ(test, o->nr_exec, 0);
	KUNIT_EXPECT_EQ(test, o->detach_calls, 0);
	KUNIT_EXPECT_EQ(test, o->oo.cpus, 0UL);
}

/*
 * A CPU that never queued to a type (a reader that only synchronizes) has
 * no cache of it; its synchronizes and applies still count, so that
 * max_apply is the largest apply of any CPU.
 */
static void oplog_test_reader_stats(struct kunit *test)
{
	unsigned int writer = cpumask_first(cpu_online_mask);
	unsigned int reader = cpumask_next(writer, cpu_online_mask);
	struct ot_obj *o = ot_new(test, true);
	struct ot_op *ops = ot_ops_new(test, 3);
	local_t *v;
	int i;

	if (reader >= nr_cpu_ids)
		kunit_skip(test, "needs two online CPUs");
	for (i = 0; i < 3; i++)
		KUNIT_ASSERT_EQ(test, ot_queue_on(writer, &ot_reader, o, &ops[i]), 0);
	ot_pin(test, reader);
	spin_lock(&o->lock);
	oplog_synchronize_locked(&ot_reader, &o->oo);
	spin_unlock(&o->lock);
	ot_unpin();
	ot_expect_order(test, o, ops, 3);
	KUNIT_EXPECT_NULL(test, *per_cpu_ptr(ot_reader.caches.slot, reader));
	v = per_cpu_ptr(ot_reader.uncached_stats, reader);
	KUNIT_EXPECT_EQ(test, local_read(&v[OPLOG_STAT_SYNCS]), 1);
	KUNIT_EXPECT_EQ(test, local_read(&v[OPLOG_STAT_APPLIED]), 3);
	KUNIT_EXPECT_EQ(test, local_read(&v[OPLOG_STAT_MAX_APPLY]), 3);
	ot_flush_check(test, &ot_reader, o);
}

/* ---------------------------------------------------------------- stress */

#define ST_OBJS		4
#define ST_MAX_OPS	65536
#define ST_NS		(1000 * NSEC_PER_MSEC)

struct st_thread {
	struct ot_obj		**objs;
	struct ot_op		*ops;
	unsigned int		cpu;
	int			nr_ops;
	int			errors;
	unsigned int		seq[ST_OBJS];
	u64			end;
	struct completion	done;
};

static int st_queue_fn(void *arg)
{
	struct st_thread *t = arg;
	struct rnd_state rnd;
	int i;

	prandom_seed_state(&rnd, t->cpu + 1);
	for (i = 0; i < ST_MAX_OPS; i++) {
		unsigned int k = prandom_u32_state(&rnd) % ST_OBJS;
		struct ot_op *op = &t->ops[i];

		if (!(i % 64)) {
			cond_resched();
			if (ktime_get_ns() > t->end)
				break;
		}
		op->thread = t->cpu;
		op->seq = t->seq[k]++;
		op->id = k;
		if (oplog_queue(&ot_stress, &t->objs[k]->oo, &op->op))
			t->errors++;
	}
	t->nr_ops = i;
	complete(&t->done);
	while (!kthread_should_stop())
		schedule_timeout_interruptible(1);
	return 0;
}

struct st_sync {
	struct ot_obj	**objs;
	unsigned long	syncs;
	unsigned long	flushes;
};

static int st_sync_fn(void *arg)
{
	struct st_sync *s = arg;
	unsigned long i = 0;

	while (!kthread_should_stop()) {
		struct ot_obj *o = s->objs[i % ST_OBJS];

		if (i % 16 == 15) {
			oplog_flush(&ot_stress, &o->oo);
			s->flushes++;
		} else {
			oplog_synchronize(&ot_stress, &o->oo);
			s->syncs++;
			oplog_unlock(&ot_stress, &o->oo);
		}
		i++;
		cond_resched();
	}
	return 0;
}

/*
 * Every online CPU queues for about a second to a few objects of a type
 * with two slots and eight-entry logs (evictions and full logs all the
 * time) while another thread synchronizes and flushes them: every
 * operation must run exactly once, each thread's operations on an object
 * in the order it queued them, and every object's operations in global
 * timestamp order (->exec checks each stamp against the last one), which
 * a synchronize that took operations stamped after its cutoff, while
 * other CPUs keep queueing, would break.
 */
static void oplog_test_stress(struct kunit *test)
{
	struct st_thread *ts = kunit_kcalloc(test, nr_cpu_ids, sizeof(*ts), GFP_KERNEL);
	struct task_struct **tasks = kunit_kcalloc(test, nr_cpu_ids, sizeof(*tasks),
						   GFP_KERNEL);
	struct ot_obj *objs[ST_OBJS];
	struct st_sync sync = { .objs = objs };
	struct task_struct *syncer;
	unsigned long queued = 0, executed = 0;
	unsigned int cpu, k;
	int i, bad = 0;
	u64 end;

	KUNIT_ASSERT_NOT_NULL(test, ts);
	KUNIT_ASSERT_NOT_NULL(test, tasks);
	for (k = 0; k < ST_OBJS; k++) {
		objs[k] = ot_new(test, true);
		objs[k]->next_seq = kunit_kcalloc(test, nr_cpu_ids, sizeof(unsigned int),
						  GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, objs[k]->next_seq);
	}

	end = ktime_get_ns() + ST_NS;
	for_each_online_cpu(cpu) {
		struct st_thread *t = &ts[cpu];

		t->objs = objs;
		t->cpu = cpu;
		t->end = end;
		init_completion(&t->done);
		t->ops = kvcalloc(ST_MAX_OPS, sizeof(*t->ops), GFP_KERNEL);
		if (!t->ops)
			break;
		tasks[cpu] = kthread_create_on_cpu(st_queue_fn, t, cpu, "oplog_st/%u");
		if (IS_ERR(tasks[cpu])) {
			tasks[cpu] = NULL;
			break;
		}
		get_task_struct(tasks[cpu]);
		wake_up_process(tasks[cpu]);
	}
	syncer = kthread_run(st_sync_fn, &sync, "oplog_st_sync");

	for_each_possible_cpu(cpu) {
		if (!tasks[cpu])
			continue;
		KUNIT_EXPECT_GT(test, wait_for_completion_timeout(&ts[cpu].done, OT_WAIT), 0);
		kthread_stop(tasks[cpu]);
		put_task_struct(tasks[cpu]);
	}
	if (!IS_ERR(syncer))
		kthread_stop(syncer);
	KUNIT_EXPECT_FALSE(test, IS_ERR(syncer));

	for (k = 0; k < ST_OBJS; k++)
		ot_flush_check(test, &ot_stress, objs[k]);
	for_each_possible_cpu(cpu) {
		struct st_thread *t = &ts[cpu];

		if (!t->ops)
			continue;
		KUNIT_EXPECT_EQ(test, t->errors, 0);
		for (i = 0; i < t->nr_ops; i++)
			if (t->ops[i].nr_exec != 1)
				bad++;
		queued += t->nr_ops;
		kvfree(t->ops);
	}
	for (k = 0; k < ST_OBJS; k++) {
		executed += objs[k]->nr_exec;
		KUNIT_EXPECT_EQ(test, objs[k]->order_errors, 0);
	}
	KUNIT_EXPECT_EQ(test, bad, 0);
	KUNIT_EXPECT_EQ(test, executed, queued);
	KUNIT_EXPECT_GT(test, queued, 0UL);
	kunit_info(test, "%lu ops queued on %u CPUs, %lu synchronizes, %lu flushes\n",
		   queued, num_online_cpus(), sync.syncs, sync.flushes);
}

#define CS_OBJS		8

struct cs_thread {
	struct ot_obj		**objs;
	unsigned int		cpu;
	long			added[CS_OBJS];	/* what this thread added */
	unsigned long		nr_adds;
	unsigned long		nr_hits;	/* oplog_add_hit() took it */
	int			errors;
	u64			end;
	struct completion	done;
};

static int cs_add_fn(void *arg)
{
	struct cs_thread *t = arg;
	struct rnd_state rnd;
	unsigned long i;

	prandom_seed_state(&rnd, t->cpu + 1);
	for (i = 0; ; i++) {
		u32 r = prandom_u32_state(&rnd);
		unsigned int k = r % CS_OBJS;
		long d = (long)((r >> 8) % 7) - 3;

		if (!(i % 64)) {
			cond_resched();
			if (ktime_get_ns() > t->end)
				break;
		}
		/* Half the adds through the hit path alone, as path_get(). */
		if ((r >> 16) & 1 && oplog_add_hit(&ot_cstress, &t->objs[k]->oo, d)) {
			t->nr_hits++;
		} else if (oplog_add(&ot_cstress, &t->objs[k]->oo, d)) {
			t->errors++;
			continue;
		}
		t->added[k] += d;
		t->nr_adds++;
	}
	complete(&t->done);
	while (!kthread_should_stop())
		schedule_timeout_interruptible(1);
	return 0;
}

static int cs_sync_fn(void *arg)
{
	struct st_sync *s = arg;
	unsigned long i = 0;

	while (!kthread_should_stop()) {
		struct ot_obj *o = s->objs[i % CS_OBJS];

		if (i % 4 == 3) {
			oplog_flush(&ot_cstress, &o->oo);
			s->flushes++;
		} else {
			oplog_synchronize(&ot_cstress, &o->oo);
			s->syncs++;
			oplog_unlock(&ot_cstress, &o->oo);
		}
		i++;
		cond_resched();
	}
	return 0;
}

/*
 * The counter's lockless hit path under fire: every online CPU adds small
 * signed amounts to eight objects of a two-slot counter type (evictions
 * all the time), half of them through oplog_add_hit(), while another
 * thread synchronizes (takes the deltas, logs stay) and flushes (takes
 * them and marks the logs dead).  Each object's value must end at the
 * exact sum of what was added to it: a delta added after a collector took
 * the log's delta but before the log was marked dead, or one added to a
 * dead log, would be lost.
 */
static void oplog_test_counter_stress(struct kunit *test)
{
	struct cs_thread *ts = kunit_kcalloc(test, nr_cpu_ids, sizeof(*ts), GFP_KERNEL);
	struct task_struct **tasks = kunit_kcalloc(test, nr_cpu_ids, sizeof(*tasks),
						   GFP_KERNEL);
	struct ot_obj *objs[CS_OBJS];
	struct st_sync sync = { .objs = objs };
	unsigned long adds = 0, hits = 0;
	struct task_struct *syncer;
	long want[CS_OBJS] = { 0 };
	unsigned int cpu, k;
	u64 end;

	KUNIT_ASSERT_NOT_NULL(test, ts);
	KUNIT_ASSERT_NOT_NULL(test, tasks);
	for (k = 0; k < CS_OBJS; k++)
		objs[k] = ot_new(test, false);

	end = ktime_get_ns() + ST_NS;
	for_each_online_cpu(cpu) {
		struct cs_thread *t = &ts[cpu];

		t->objs = objs;
		t->cpu = cpu;
		t->end = end;
		init_completion(&t->done);
		tasks[cpu] = kthread_create_on_cpu(cs_add_fn, t, cpu, "oplog_cs/%u");
		if (IS_ERR(tasks[cpu])) {
			tasks[cpu] = NULL;
			break;
		}
		get_task_struct(tasks[cpu]);
		wake_up_process(tasks[cpu]);
	}
	syncer = kthread_run(cs_sync_fn, &sync, "oplog_cs_sync");

	for_each_possible_cpu(cpu) {
		if (!tasks[cpu])
			continue;
		KUNIT_EXPECT_GT(test, wait_for_completion_timeout(&ts[cpu].done, OT_WAIT), 0);
		kthread_stop(tasks[cpu]);
		put_task_struct(tasks[cpu]);
	}
	if (!IS_ERR(syncer))
		kthread_stop(syncer);
	KUNIT_EXPECT_FALSE(test, IS_ERR(syncer));

	for_each_possible_cpu(cpu) {
		KUNIT_EXPECT_EQ(test, ts[cpu].errors, 0);
		for (k = 0; k < CS_OBJS; k++)
			want[k] += ts[cpu].added[k];
		adds += ts[cpu].nr_adds;
		hits += ts[cpu].nr_hits;
	}
	for (k = 0; k < CS_OBJS; k++) {
		ot_flush_check(test, &ot_cstress, objs[k]);
		KUNIT_EXPECT_EQ_MSG(test, objs[k]->value, want[k], "object %u", k);
	}
	KUNIT_EXPECT_GT(test, adds, 0UL);
	KUNIT_EXPECT_GT(test, hits, 0UL);
	kunit_info(test, "%lu adds (%lu by add_hit) on %u CPUs, %lu synchronizes, %lu flushes\n",
		   adds, hits, num_online_cpus(), sync.syncs, sync.flushes);
}

static int oplog_test_suite_init(struct kunit_suite *suite)
{
	int i, ret;

	for (i = 0; i < ARRAY_SIZE(ot_types); i++) {
		ret = oplog_type_register(ot_types[i]);
		if (ret) {
			while (i--)
				oplog_type_unregister(ot_types[i]);
			return ret;
		}
	}
	return 0;
}

static void oplog_test_suite_exit(struct kunit_suite *suite)
{
	int i;

	for (i = ARRAY_SIZE(ot_types) - 1; i >= 0; i--)
		oplog_type_unregister(ot_types[i]);
}

static struct kunit_case oplog_test_cases[] = {
	KUNIT_CASE(oplog_test_order_cpus),
	KUNIT_CASE(oplog_test_migrate),
	KUNIT_CASE(oplog_test_counter),
	KUNIT_CASE(oplog_test_add_hit),
	KUNIT_CASE(oplog_test_local_absorb),
	KUNIT_CASE(oplog_test_absorb_hit),
	KUNIT_CASE(oplog_test_queue_after),
	KUNIT_CASE(oplog_test_queue_after_evict),
	KUNIT_CASE(oplog_test_sync_all),
	KUNIT_CASE(oplog_test_global_absorb),
	KUNIT_CASE(oplog_test_evict),
	KUNIT_CASE(oplog_test_counter_evict),
	KUNIT_CASE(oplog_test_full),
	KUNIT_CASE(oplog_test_max_pending),
	KUNIT_CASE(oplog_test_flush),
	KUNIT_CASE(oplog_test_vacant),
	KUNIT_CASE(oplog_test_assoc),
	KUNIT_CASE(oplog_test_assoc_find),
	KUNIT_CASE(oplog_test_assoc_busy),
	KUNIT_CASE(oplog_test_hotplug),
	KUNIT_CASE(oplog_test_refuse),
	KUNIT_CASE(oplog_test_unstamped),
	KUNIT_CASE(oplog_test_reserve),
	KUNIT_CASE(oplog_test_unregistered),
	KUNIT_CASE(oplog_test_reader_stats),
	KUNIT_CASE(oplog_test_stress),
	KUNIT_CASE(oplog_test_counter_stress),
	{}
};

static struct kunit_suite oplog_test_suite = {
	.name = "oplog",
	.suite_init = oplog_test_suite_init,
	.suite_exit = oplog_test_suite_exit,
	.test_cases = oplog_test_cases,
};

kunit_test_suite(oplog_test_suite);

MODULE_DESCRIPTION("KUnit tests for OpLog per-CPU operation logs");
MODULE_LICENSE("GPL");
