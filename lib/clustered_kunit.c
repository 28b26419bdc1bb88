// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for clustered objects (lib/clustered.c) and the clustered
 * counter (lib/clustered_counter.c): hit and miss paths, representatives
 * only on CPUs that touch the object, shared degrees, forwarding to the
 * root, lookup and iteration, and phased destruction that waits for the
 * CPUs that touched the object and only for them.
 */
#include <kunit/test.h>
#include <linux/clustered.h>
#include <linux/clustered_counter.h>
#include <linux/completion.h>
#include <linux/cpu.h>
#include <linux/delay.h>
#include <linux/rcupdate.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include "../kernel/qdo/qdo_spinner.h"

#define CT_WAIT	(10 * HZ)

struct ct_obj {
	struct clustered_obj	co;
	bool			fail_miss;
	atomic_t		reps;		/* live reps */
	atomic_t		freed;		/* reps freed */
	struct completion	released;
};

struct ct_rep {
	unsigned int	cpu;
	unsigned long	hits;
};

static void *ct_miss(struct clustered_obj *co, unsigned int cpu, gfp_t gfp)
{
	struct ct_obj *o = container_of(co, struct ct_obj, co);
	struct ct_rep *rep;

	if (o->fail_miss)
		return NULL;
	rep = kzalloc(sizeof(*rep), gfp);
	if (rep) {
		rep->cpu = cpu;
		atomic_inc(&o->reps);
	}
	return rep;
}

static void ct_free_rep(struct clustered_obj *co, void *rep)
{
	struct ct_obj *o = container_of(co, struct ct_obj, co);

	atomic_dec(&o->reps);
	atomic_inc(&o->freed);
	kfree(rep);
}

static void ct_release(struct clustered_obj *co)
{
	complete(&container_of(co, struct ct_obj, co)->released);
}

static const struct clustered_ops ct_ops = {
	.miss		= ct_miss,
	.free_rep	= ct_free_rep,
	.release	= ct_release,
};

static struct ct_obj *ct_new(struct kunit *test, enum clustered_degree degree)
{
	struct ct_obj *o = kzalloc(sizeof(*o), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, o);
	KUNIT_ASSERT_EQ(test, clustered_init(&o->co, &ct_ops, degree, GFP_KERNEL), 0);
	init_completion(&o->released);
	return o;
}

/*
 * Wait for the release of a destroyed object, check that @freed reps were
 * freed (-1: any number) and none is left, and free it; unless it is not
 * released: then it is leaked, as phase 3 or the release may still run.
 */
static void ct_wait_release(struct kunit *test, struct ct_obj *o, int freed)
{
	if (!wait_for_completion_timeout(&o->released, CT_WAIT)) {
		KUNIT_FAIL(test, "object %u not released", o->co.id);
		return;
	}
	KUNIT_EXPECT_EQ(test, atomic_read(&o->reps), 0);
	if (freed >= 0)
		KUNIT_EXPECT_EQ(test, atomic_read(&o->freed), freed);
	kfree(o);
}

/* Destroy, wait for the release, free. */
static void ct_destroy_wait(struct kunit *test, struct ct_obj *o)
{
	clustered_destroy(&o->co);
	ct_wait_release(test, o, -1);
}

/*
 * The hit path and a plain per-CPU load, as small functions whose code
 * can be compared with objdump -d: the hit path is the per-CPU load and a
 * test for a missing representative.
 */
static noinline void *clustered_test_hit(struct clustered_obj *co)
{
	return clustered_rep(co);
}

static noinline void *clustered_test_plain(struct clustered_obj *co)
{
	return this_cpu_read(*co->slot);
}

static void clustered_test_hit_miss(struct kunit *test)
{
	struct ct_obj *o = ct_new(test, CLUSTERED_PER_CPU);
	struct ct_rep *r1, *r2;
	unsigned long misses;
	int cpu;

	cpu = get_cpu();
	KUNIT_EXPECT_NULL(test, clustered_test_plain(&o->co));
	r1 = clustered_test_hit(&o->co);		/* miss */
	misses = o->co.nr_misses;
	r2 = clustered_test_hit(&o->co);		/* hit */
	KUNIT_EXPECT_PTR_EQ(test, clustered_test_plain(&o->co), (void *)r1);
	put_cpu();
	KUNIT_ASSERT_NOT_NULL(test, r1);
	KUNIT_EXPECT_PTR_EQ(test, r1, r2);
	KUNIT_EXPECT_EQ(test, r1->cpu, cpu);
	KUNIT_EXPECT_EQ(test, misses, 1UL);
	KUNIT_EXPECT_EQ(test, o->co.nr_misses, 1UL);
	KUNIT_EXPECT_EQ(test, o->co.nr_reps, 1U);
	KUNIT_EXPECT_TRUE(test, cpumask_equal(o->co.accessed, cpumask_of(cpu)));
	ct_destroy_wait(test, o);
}

/* A miss handler that cannot allocate forwards to the root. */
static void clustered_test_forward(struct kunit *test)
{
	struct ct_obj *o = ct_new(test, CLUSTERED_PER_CPU);
	void *rep;

	o->fail_miss = true;
	preempt_disable();
	rep = clustered_rep(&o->co);
	preempt_enable();
	KUNIT_EXPECT_NULL(test, rep);
	KUNIT_EXPECT_EQ(test, o->co.nr_reps, 0U);
	KUNIT_EXPECT_TRUE(test, cpumask_empty(o->co.accessed));
	o->fail_miss = false;
	preempt_disable();
	rep = clustered_rep(&o->co);
	preempt_enable();
	KUNIT_EXPECT_NOT_NULL(test, rep);
	ct_destroy_wait(test, o);
}

static long ct_touch_fn(void *arg)
{
	struct clustered_obj *co = arg;
	struct ct_rep *rep;

	preempt_disable();
	rep = clustered_rep(co);
	if (rep)
		rep->hits++;
	preempt_enable();
	return (long)rep;
}

/* Reps exist only on the CPUs that touched the object. */
static void clustered_test_lazy(struct kunit *test)
{
	unsigned int cpu, n = 0;
	struct ct_rep *rep;
	struct ct_obj *o;
	int seen = 0;

	if (num_online_cpus() < 2)
		kunit_skip(test, "needs two CPUs");
	o = ct_new(test, CLUSTERED_PER_CPU);
	cpu = cpumask_last(cpu_online_mask);
	KUNIT_EXPECT_NE(test, work_on_cpu(cpu, ct_touch_fn, &o->co), 0L);
	KUNIT_EXPECT_EQ(test, o->co.nr_reps, 1U);
	KUNIT_EXPECT_TRUE(test, cpumask_equal(o->co.accessed, cpumask_of(cpu)));
	for_each_online_cpu(cpu) {
		KUNIT_EXPECT_NE(test, work_on_cpu(cpu, ct_touch_fn, &o->co), 0L);
		n++;
	}
	KUNIT_EXPECT_EQ(test, o->co.nr_reps, n);
	KUNIT_EXPECT_EQ(test, atomic_read(&o->reps), (int)n);
	preempt_disable();
	clustered_for_each_rep(&o->co, rep) {
		seen++;
		KUNIT_EXPECT_TRUE(test, cpumask_test_cpu(rep->cpu, cpu_online_mask));
	}
	preempt_enable();
	KUNIT_EXPECT_EQ(test, seen, (int)n);
	ct_destroy_wait(test, o);
}

/*
 * Shared and per-node degrees: the CPUs of a node share one rep, CPUs of
 * different nodes never do (a two-node guest: the KCSAN boot), and the
 * shared degree has a single rep.
 */
static void clustered_test_shared(struct kunit *test)
{
	enum clustered_degree d;

	for (d = CLUSTERED_PER_NODE; d <= CLUSTERED_SHARED; d++) {
		struct ct_obj *o = ct_new(test, d);
		nodemask_t nodes = NODE_MASK_NONE;
		unsigned int cpu, g;
		void *want;
		long rep;

		for_each_online_cpu(cpu) {
			rep = work_on_cpu(cpu, ct_touch_fn, &o->co);
			KUNIT_EXPECT_NE(test, rep, 0L);
			/* The rep of the CPU's node (the shared one: group 0). */
			g = d == CLUSTERED_SHARED ? 0 : cpu_to_node(cpu);
			want = READ_ONCE(o->co.groups[g]);
			KUNIT_EXPECT_PTR_EQ(test, (void *)rep, want);
			node_set(cpu_to_node(cpu), nodes);
		}
		if (d == CLUSTERED_PER_NODE) {
			/* One rep per node: none shared across nodes. */
			KUNIT_EXPECT_EQ(test, o->co.nr_reps, nodes_weight(nodes));
			kunit_info(test, "per-node: %u reps for %u nodes\n",
				   o->co.nr_reps, nodes_weight(nodes));
		} else {
			KUNIT_EXPECT_EQ(test, o->co.nr_reps, 1U);
		}
		KUNIT_EXPECT_EQ(test, cpumask_weight(o->co.accessed), num_online_cpus());
		ct_destroy_wait(test, o);
	}
}

static void clustered_test_lookup(struct kunit *test)
{
	struct ct_obj *o = ct_new(test, CLUSTERED_PER_CPU);
	struct clustered_obj *found;
	u32 id = o->co.id;

	rcu_read_lock();
	preempt_disable();
	found = clustered_lookup(id);
	preempt_enable();
	rcu_read_unlock();
	KUNIT_EXPECT_PTR_EQ(test, found, &o->co);
	clustered_destroy(&o->co);
	rcu_read_lock();
	preempt_disable();
	found = clustered_lookup(id);
	preempt_enable();
	rcu_read_unlock();
	KUNIT_EXPECT_NULL(test, found);
	ct_wait_release(test, o, -1);
}

/* A CPU holding a temporary reference inside a preempt-disabled region. */
static struct {
	struct qdo_spinner	s;
	struct clustered_obj	*co;
	void			*rep;
} ct_spin;

static void ct_spin_enter(struct qdo_spinner *s)
{
	ct_spin.rep = clustered_rep(ct_spin.co);
}

/* The rep must still be ours: KASAN catches a use after free. */
static void ct_spin_leave(struct qdo_spinner *s)
{
	if (ct_spin.rep)
		((struct ct_rep *)ct_spin.rep)->hits++;
}

/*
 * Destruction waits for the CPUs that touched the object (never frees a
 * rep under a CPU that holds it) and for no other CPU.
 *
 * A spinner disturbed by a boot-time stop_machine() (see
 * kernel/qdo/qdo_spinner.h) voids the observations: try again, up to three
 * times.
 */
static void clustered_test_destroy(struct kunit *test)
{
	bool local_freed, spinning1, held_kept, spinning2;
	struct ct_obj *held, *local;
	bool disturbed;
	int a, b, i, attempt;

	if (num_online_cpus() < 2)
		kunit_skip(test, "needs two CPUs");
	a = raw_smp_processor_id();
	b = cpumask_any_but(cpu_online_mask, a);
	KUNIT_ASSERT_EQ(test, set_cpus_allowed_ptr(current, cpumask_of(a)), 0);
	for (attempt = 0; attempt < 3; attempt++) {
		held = ct_new(test, CLUSTERED_PER_CPU);
		local = ct_new(test, CLUSTERED_PER_CPU);
		KUNIT_EXPECT_NE(test, ct_touch_fn(&held->co), 0L);
		KUNIT_EXPECT_NE(test, ct_touch_fn(&local->co), 0L);

		/* b takes a rep of @held and keeps it in a preempt-disabled loop. */
		ct_spin.co = &held->co;
		ct_spin.rep = NULL;
		ct_spin.s.enter = ct_spin_enter;
		ct_spin.s.leave = ct_spin_leave;
		KUNIT_ASSERT_EQ(test, qdo_spinner_start(&ct_spin.s, b), 0);
		KUNIT_EXPECT_NOT_NULL(test, ct_spin.rep);
		KUNIT_EXPECT_TRUE(test, cpumask_test_cpu(b, held->co.accessed));
		KUNIT_EXPECT_FALSE(test, cpumask_test_cpu(b, local->co.accessed));

		clustered_destroy(&local->co);
		clustered_destroy(&held->co);
		/* @local was only touched by a: its reps go while b still spins. */
		for (i = 0; i < 200 && atomic_read(&local->freed) < 1; i++)
			fsleep(10000);
		local_freed = atomic_read(&local->freed) == 1;
		spinning1 = qdo_spinner_spinning(&ct_spin.s);
		/* @held: b holds a temporary reference, nothing may be freed. */
		msleep(100);
		held_kept = atomic_read(&held->freed) == 0;
		spinning2 = qdo_spinner_spinning(&ct_spin.s);

		disturbed = qdo_spinner_stop(&ct_spin.s);
		ct_wait_release(test, held, 2);
		ct_wait_release(test, local, 1);
		if (disturbed) {
			kunit_info(test, "attempt %d disturbed (stop_machine?), again\n", attempt);
			continue;
		}
		KUNIT_EXPECT_TRUE(test, local_freed);
		KUNIT_EXPECT_TRUE(test, spinning1);
		KUNIT_EXPECT_TRUE(test, held_kept);
		KUNIT_EXPECT_TRUE(test, spinning2);
		break;
	}
	KUNIT_EXPECT_LT(test, attempt, 3);
	set_cpus_allowed_ptr(current, cpu_possible_mask);
}

/*
 * An object being destroyed, touched by a CPU that holds a temporary
 * reference (its preempt-disabled section keeps phase 3 away, so the root
 * and the reps are still there): a miss forwards to the root and installs
 * no rep, and iteration meets nothing, although another CPU's rep exists.
 */
static void clustered_test_dying(struct kunit *test)
{
	int before = 0, seen = 0, reps, live;
	struct ct_obj *o;
	struct ct_rep *rep;
	unsigned int a, b;
	void *fwd;

	if (num_online_cpus() < 2)
		kunit_skip(test, "needs two CPUs");
	a = raw_smp_processor_id();
	b = cpumask_any_but(cpu_online_mask, a);
	KUNIT_ASSERT_EQ(test, set_cpus_allowed_ptr(current, cpumask_of(a)), 0);
	o = ct_new(test, CLUSTERED_PER_CPU);
	KUNIT_EXPECT_NE(test, work_on_cpu(b, ct_touch_fn, &o->co), 0L);

	preempt_disable();
	/* Joins ->accessed without a rep: this CPU's slot stays empty. */
	clustered_for_each_rep(&o->co, rep)
		before++;
	clustered_destroy(&o->co);
	fwd = clustered_rep(&o->co);
	clustered_for_each_rep(&o->co, rep)
		seen++;
	reps = READ_ONCE(o->co.nr_reps);
	live = atomic_read(&o->reps);
	preempt_enable();

	KUNIT_EXPECT_EQ(test, before, 1);
	KUNIT_EXPECT_NULL(test, fwd);
	KUNIT_EXPECT_EQ(test, seen, 0);
	KUNIT_EXPECT_EQ(test, reps, 1);
	KUNIT_EXPECT_EQ(test, live, 1);
	ct_wait_release(test, o, 1);
	set_cpus_allowed_ptr(current, cpu_possible_mask);
}

static long ct_count_fn(void *arg)
{
	struct clustered_counter *cc = arg;
	int i;

	for (i = 0; i < 1000; i++)
		clustered_counter_add(cc, 1);
	clustered_counter_add(cc, -10);
	return 0;
}

static struct completion ct_cc_released;

static void ct_cc_release(struct clustered_counter *cc)
{
	kfree(cc);
	complete(&ct_cc_released);
}

/* The worked example: per-CPU reps, folded on read. */
static void clustered_test_counter(struct kunit *test)
{
	struct clustered_counter *cc = kzalloc(sizeof(*cc), GFP_KERNEL);
	unsigned int cpu, n = 0;

	KUNIT_ASSERT_NOT_NULL(test, cc);
	KUNIT_ASSERT_EQ(test, clustered_counter_init(cc, GFP_KERNEL), 0);
	KUNIT_EXPECT_EQ(test, clustered_counter_sum(cc), 0L);
	KUNIT_EXPECT_EQ(test, cc->co.nr_reps, 0U);
	for_each_online_cpu(cpu) {
		work_on_cpu(cpu, ct_count_fn, cc);
		n++;
		KUNIT_EXPECT_EQ(test, clustered_counter_sum(cc), 990L * n);
	}
	KUNIT_EXPECT_EQ(test, cc->co.nr_reps, n);
	init_completion(&ct_cc_released);
	clustered_counter_destroy(cc, ct_cc_release);
	KUNIT_EXPECT_GT(test, wait_for_completion_timeout(&ct_cc_released, CT_WAIT), 0);
}

/*
 * A CPU that goes offline has its rep folded into the root by the type's
 * ->cpu_dead (clustered_cpu_dead()): the sum is unchanged, the root holds
 * the dead CPU's part and its rep nothing; the rep serves the CPU again
 * when it comes back.
 */
static void clustered_test_cpu_dead(struct kunit *test)
{
	struct clustered_counter_rep *rep;
	struct clustered_counter *cc;
	unsigned int b;
	int ret;

	b = cpumask_last(cpu_online_mask);
	if (!b || !cpu_is_hotpluggable(b))
		kunit_skip(test, "needs a second CPU that can go offline");
	cc = kzalloc(sizeof(*cc), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, cc);
	KUNIT_ASSERT_EQ(test, clustered_counter_init(cc, GFP_KERNEL), 0);
	work_on_cpu(b, ct_count_fn, cc);
	KUNIT_EXPECT_EQ(test, clustered_counter_sum(cc), 990L);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&cc->root), 0L);
	rep = READ_ONCE(*per_cpu_ptr(cc->co.slot, b));
	KUNIT_EXPECT_NOT_NULL(test, rep);

	ret = remove_cpu(b);
	KUNIT_EXPECT_EQ_MSG(test, ret, 0, "remove_cpu(%u)", b);
	if (!ret) {
		KUNIT_EXPECT_EQ(test, atomic_long_read(&cc->root), 990L);
		if (rep)
			KUNIT_EXPECT_EQ(test, local_read(&rep->count), 0L);
		KUNIT_EXPECT_EQ(test, clustered_counter_sum(cc), 990L);
		KUNIT_EXPECT_EQ_MSG(test, add_cpu(b), 0, "add_cpu(%u)", b);
	}
	if (cpu_online(b)) {
		work_on_cpu(b, ct_count_fn, cc);
		KUNIT_EXPECT_EQ(test, clustered_counter_sum(cc), 1980L);
		KUNIT_EXPECT_PTR_EQ(test, READ_ONCE(*per_cpu_ptr(cc->co.slot, b)),
				    (void *)rep);
	}
	init_completion(&ct_cc_released);
	clustered_counter_destroy(cc, ct_cc_release);
	KUNIT_EXPECT_GT(test, wait_for_completion_timeout(&ct_cc_released, CT_WAIT), 0);
}

static struct kunit_case clustered_test_cases[] = {
	KUNIT_CASE(clustered_test_hit_miss),
	KUNIT_CASE(clustered_test_forward),
	KUNIT_CASE(clustered_test_lazy),
	KUNIT_CASE(clustered_test_shared),
	KUNIT_CASE(clustered_test_lookup),
	KUNIT_CASE(clustered_test_destroy),
	KUNIT_CASE(clustered_test_dying),
	KUNIT_CASE(clustered_test_counter),
	KUNIT_CASE(clustered_test_cpu_dead),
	{}
};

static struct kunit_suite clustered_test_suite = {
	.name = "clustered",
	.test_cases = clustered_test_cases,
};

kunit_test_suite(clustered_test_suite);

MODULE_DESCRIPTION("KUnit tests for clustered objects");
MODULE_LICENSE("GPL");
