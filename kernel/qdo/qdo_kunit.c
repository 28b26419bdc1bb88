// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for QDo (kernel/qdo/qdo.c): registration and execution,
 * serial execution over an execution mask, subset quiescence against a CPU
 * stuck in a preempt-disabled loop, the synchronous form, the barrier,
 * polled cookies, and requests moved off a CPU that went offline.
 */
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/qdo.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "qdo_spinner.h"

#define QDO_TEST_WAIT	(10 * HZ)
#define QDO_TEST_CPUS	64

struct qdo_test_req {
	struct qdo_head		head;
	struct completion	done;
	atomic_t		calls;
	atomic_t		running;	/* invocations in progress */
	bool			overlap;	/* two ran at once */
	bool			atomic_ctx;	/* ran in atomic context */
	int			cpus[QDO_TEST_CPUS];	/* CPU of each invocation */
	int			expected;	/* invocations before done */
	int			nr_last;	/* invocations that were last */
	int			last_at;	/* index of the last of them */
	bool			spinner_active;	/* spinner state at the call */
};

static struct qdo_spinner qdo_spin;

static void qdo_test_cb(struct qdo_head *head)
{
	struct qdo_test_req *r = container_of(head, struct qdo_test_req, head);
	int n;

	if (atomic_inc_return(&r->running) > 1)
		r->overlap = true;
	if (in_atomic() || irqs_disabled())
		r->atomic_ctx = true;
	r->spinner_active = qdo_spinner_spinning(&qdo_spin);
	fsleep(1000);	/* process context: may sleep */
	n = atomic_inc_return(&r->calls) - 1;
	if (n < QDO_TEST_CPUS)
		r->cpus[n] = raw_smp_processor_id();
	if (qdo_is_last(head)) {
		r->nr_last++;
		r->last_at = n;
	}
	atomic_dec(&r->running);
	if (n + 1 == r->expected)
		complete(&r->done);
}

static void qdo_test_init(struct qdo_test_req *r, int expected)
{
	memset(r, 0, sizeof(*r));
	init_completion(&r->done);
	r->expected = expected;
}

static void qdo_test_basic(struct kunit *test)
{
	struct qdo_test_req *r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	int cpu;

	KUNIT_ASSERT_NOT_NULL(test, r);
	qdo_test_init(r, 1);
	cpu = get_cpu();
	KUNIT_ASSERT_EQ(test, qdo_call(&r->head, qdo_test_cb, cpu_online_mask,
				       cpumask_of(cpu)), 0);
	put_cpu();
	KUNIT_ASSERT_GT(test, wait_for_completion_timeout(&r->done, QDO_TEST_WAIT), 0);
	msleep(20);
	KUNIT_EXPECT_EQ(test, atomic_read(&r->calls), 1);
	KUNIT_EXPECT_EQ(test, r->cpus[0], cpu);
	KUNIT_EXPECT_FALSE(test, r->atomic_ctx);
	KUNIT_EXPECT_EQ(test, r->nr_last, 1);
}

static void qdo_test_invalid(struct kunit *test)
{
	struct qdo_test_req *r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, r);
	KUNIT_EXPECT_EQ(test, qdo_call(&r->head, qdo_test_cb, cpu_online_mask,
				       cpu_none_mask), -EINVAL);
	KUNIT_EXPECT_EQ(test, qdo_call(&r->head, NULL, cpu_online_mask,
				       cpu_online_mask), -EINVAL);
}

/* Thesis section 4.9.2: once per CPU of the execution mask, serially. */
static void qdo_test_serial_execute(struct kunit *test)
{
	struct qdo_test_req *r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	int i, n;

	KUNIT_ASSERT_NOT_NULL(test, r);
	n = num_online_cpus();
	qdo_test_init(r, n);
	KUNIT_ASSERT_EQ(test, qdo_call(&r->head, qdo_test_cb, cpu_online_mask,
				       cpu_online_mask), 0);
	KUNIT_EXPECT_GT(test, wait_for_completion_timeout(&r->done, QDO_TEST_WAIT), 0);
	msleep(20);
	KUNIT_EXPECT_EQ(test, atomic_read(&r->calls), n);
	KUNIT_EXPECT_FALSE(test, r->overlap);
	KUNIT_EXPECT_FALSE(test, r->atomic_ctx);
	/* qdo_is_last(): exactly one invocation, the final one. */
	KUNIT_EXPECT_EQ(test, r->nr_last, 1);
	KUNIT_EXPECT_EQ(test, r->last_at, n - 1);
	for (i = 0; i < n && i < QDO_TEST_CPUS; i++) {
		KUNIT_EXPECT_TRUE(test, cpu_online(r->cpus[i]));
		if (i)
			KUNIT_EXPECT_GT(test, r->cpus[i], r->cpus[i - 1]);
	}
}

/*
 * The subset property: a callback that waits only for CPU a completes
 * while CPU b sits in a preempt-disabled loop; one that waits for b
 * cannot complete until b leaves it.  Also the synchronous form and the
 * polled cookies against the same stuck CPU.
 *
 * A spinner disturbed by a boot-time stop_machine() (see qdo_spinner.h)
 * voids the observations: try again, up to three times.
 */
static void qdo_test_subset(struct kunit *test)
{
	struct qdo_test_req *ra = kunit_kzalloc(test, sizeof(*ra), GFP_KERNEL);
	struct qdo_test_req *rb = kunit_kzalloc(test, sizeof(*rb), GFP_KERNEL);
	bool a_done, a_during, sync_during, b_waits, poll_waits, spinning;
	unsigned long cookie;
	bool disturbed;
	int a, b, i, attempt;

	KUNIT_ASSERT_NOT_NULL(test, ra);
	KUNIT_ASSERT_NOT_NULL(test, rb);
	if (num_online_cpus() < 2)
		kunit_skip(test, "needs two CPUs");
	a = raw_smp_processor_id();
	b = cpumask_any_but(cpu_online_mask, a);
	KUNIT_ASSERT_EQ(test, set_cpus_allowed_ptr(current, cpumask_of(a)), 0);

	for (attempt = 0; attempt < 3; attempt++) {
		KUNIT_ASSERT_EQ(test, qdo_spinner_start(&qdo_spin, b), 0);

		qdo_test_init(ra, 1);
		qdo_test_init(rb, 1);
		KUNIT_EXPECT_EQ(test, qdo_call(&rb->head, qdo_test_cb, cpumask_of(b),
					       cpumask_of(a)), 0);
		KUNIT_EXPECT_EQ(test, qdo_call(&ra->head, qdo_test_cb, cpumask_of(a),
					       cpumask_of(a)), 0);
		cookie = qdo_start_poll();

		/* Only CPU a matters: done while b still spins. */
		a_done = wait_for_completion_timeout(&ra->done, 2 * HZ) > 0;
		a_during = ra->spinner_active;
		qdo_synchronize(cpumask_of(a));
		sync_during = qdo_spinner_spinning(&qdo_spin);

		/* CPU b is stuck: neither its request nor the all-CPU cookie end. */
		msleep(100);
		b_waits = atomic_read(&rb->calls) == 0;
		poll_waits = !qdo_poll_state(cookie);
		spinning = qdo_spinner_spinning(&qdo_spin);

		disturbed = qdo_spinner_stop(&qdo_spin);
		KUNIT_EXPECT_GT(test, wait_for_completion_timeout(&rb->done, QDO_TEST_WAIT), 0);
		KUNIT_EXPECT_FALSE(test, rb->spinner_active);
		for (i = 0; i < 1000 && !qdo_poll_state(cookie); i++)
			fsleep(10000);
		KUNIT_EXPECT_TRUE(test, qdo_poll_state(cookie));
		if (!a_done)
			wait_for_completion_timeout(&ra->done, QDO_TEST_WAIT);
		if (disturbed) {
			kunit_info(test, "attempt %d disturbed (stop_machine?), again\n", attempt);
			continue;
		}
		KUNIT_EXPECT_TRUE(test, a_done);
		KUNIT_EXPECT_TRUE(test, a_during);
		KUNIT_EXPECT_TRUE(test, sync_during);
		KUNIT_EXPECT_TRUE(test, b_waits);
		KUNIT_EXPECT_TRUE(test, poll_waits);
		KUNIT_EXPECT_TRUE(test, spinning);
		break;
	}
	KUNIT_EXPECT_LT(test, attempt, 3);
	set_cpus_allowed_ptr(current, cpu_possible_mask);
}

/* An idle CPU is credited without running anything on it. */
static void qdo_test_idle_cpu(struct kunit *test)
{
	struct qdo_test_req *r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	int a, b;

	KUNIT_ASSERT_NOT_NULL(test, r);
	if (num_online_cpus() < 2)
		kunit_skip(test, "needs two CPUs");
	a = raw_smp_processor_id();
	b = cpumask_any_but(cpu_online_mask, a);
	KUNIT_ASSERT_EQ(test, set_cpus_allowed_ptr(current, cpumask_of(a)), 0);
	qdo_test_init(r, 1);
	KUNIT_EXPECT_EQ(test, qdo_call(&r->head, qdo_test_cb, cpumask_of(b),
				       cpumask_of(a)), 0);
	KUNIT_EXPECT_GT(test, wait_for_completion_timeout(&r->done, QDO_TEST_WAIT), 0);
	KUNIT_EXPECT_EQ(test, r->cpus[0], a);
	set_cpus_allowed_ptr(current, cpu_possible_mask);
}

struct qdo_test_many {
	struct qdo_head	head;
	atomic_t	*count;
};

static void qdo_test_many_cb(struct qdo_head *head)
{
	struct qdo_test_many *m = container_of(head, struct qdo_test_many, head);

	fsleep(2000);	/* slow callbacks: a barrier that returns early is seen */
	atomic_inc(m->count);
	kfree(m);
}

/* qdo_barrier() returns only after every earlier callback has run. */
static void qdo_test_barrier(struct kunit *test)
{
	static atomic_t count;
	struct qdo_test_many *m;
	int i, n = 64;

	atomic_set(&count, 0);
	for (i = 0; i < n; i++) {
		m = kzalloc(sizeof(*m), GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, m);
		m->count = &count;
		KUNIT_ASSERT_EQ(test, qdo_call(&m->head, qdo_test_many_cb,
					       i & 1 ? cpu_online_mask :
					       cpumask_of(raw_smp_processor_id()),
					       cpumask_of(cpumask_any(cpu_online_mask))), 0);
	}
	qdo_barrier();
	KUNIT_EXPECT_EQ(test, atomic_read(&count), n);
	/* Nothing pending: returns at once. */
	qdo_barrier();
	KUNIT_EXPECT_EQ(test, atomic_read(&count), n);
}

/*
 * Cookies: a cookie taken while a grace period runs needs the next one,
 * so it is strictly later than the running one's; and a poller that
 * waits for it without calling qdo_start_poll() again is served, because
 * the end of a grace period starts the next one while a poller still
 * wants it.
 */
static void qdo_test_poll(struct kunit *test)
{
	unsigned long c1, c2;
	bool running;
	int i;

	c1 = qdo_start_poll();
	c2 = qdo_start_poll();
	/* c1's grace period was still running when c2 was taken. */
	running = !qdo_poll_state(c1);
	if (running)
		KUNIT_EXPECT_TRUE(test, ULONG_CMP_LT(c1, c2));
	else
		KUNIT_EXPECT_TRUE(test, ULONG_CMP_GE(c2, c1));
	for (i = 0; i < 1000 && !qdo_poll_state(c2); i++)
		fsleep(10000);
	KUNIT_EXPECT_TRUE(test, qdo_poll_state(c1));
	KUNIT_EXPECT_TRUE(test, qdo_poll_state(c2));
	if (!running)
		kunit_info(test, "c1's grace period ended before c2 was taken\n");
	/* A cookie taken now needs a grace period that has not started. */
	KUNIT_EXPECT_FALSE(test, qdo_poll_state(qdo_get_state()));
}

/*
 * A request left on a CPU that goes offline is moved to an online CPU by
 * qdo_cpu_dead() and runs there, once.  A cpuhp teardown callback of the
 * test registers it on the outgoing CPU (CPUHP_AP_ONLINE_DYN runs there,
 * before the CPU's daemon is parked); with the daemon period lengthened to
 * a second, the daemon is parked before its timer would have taken the
 * request, so the request is still in the CPU's intake list when it dies.
 */
static struct {
	struct qdo_head		head;
	struct completion	done;
	atomic_t		calls;
	unsigned int		cpu;		/* the CPU going offline */
	int			ran_on;
	int			registered;	/* qdo_call()'s result, or 1 */
} qdo_dead;

static void qdo_dead_cb(struct qdo_head *head)
{
	WRITE_ONCE(qdo_dead.ran_on, raw_smp_processor_id());
	atomic_inc(&qdo_dead.calls);
	complete(&qdo_dead.done);
}

static int qdo_dead_teardown(unsigned int cpu)
{
	if (cpu == READ_ONCE(qdo_dead.cpu) && READ_ONCE(qdo_dead.registered) == 1)
		WRITE_ONCE(qdo_dead.registered,
			   qdo_call(&qdo_dead.head, qdo_dead_cb, cpumask_of(cpu),
				    cpumask_of(cpu)));
	return 0;
}

static void qdo_test_cpu_dead(struct kunit *test)
{
	unsigned int b = cpumask_last(cpu_online_mask);
	unsigned int period = READ_ONCE(qdo_period_us);
	int state, i, ret, moved = 0;

	if (!b || !cpu_is_hotpluggable(b))
		kunit_skip(test, "needs a second CPU that can go offline");
	state = cpuhp_setup_state_nocalls(CPUHP_AP_ONLINE_DYN, "qdo_test:offline",
					  NULL, qdo_dead_teardown);
	KUNIT_ASSERT_GE(test, state, 0);
	WRITE_ONCE(qdo_period_us, USEC_PER_SEC);
	for (i = 0; i < 3; i++) {
		init_completion(&qdo_dead.done);
		atomic_set(&qdo_dead.calls, 0);
		WRITE_ONCE(qdo_dead.ran_on, -1);
		WRITE_ONCE(qdo_dead.cpu, b);
		WRITE_ONCE(qdo_dead.registered, 1);
		ret = remove_cpu(b);
		WRITE_ONCE(qdo_dead.cpu, UINT_MAX);
		KUNIT_EXPECT_EQ_MSG(test, ret, 0, "remove_cpu(%u)", b);
		if (ret)
			break;
		KUNIT_EXPECT_EQ(test, READ_ONCE(qdo_dead.registered), 0);
		/* Stranded on the dead CPU: the head must not be reused. */
		if (!wait_for_completion_timeout(&qdo_dead.done, QDO_TEST_WAIT)) {
			KUNIT_FAIL(test, "the request of offline CPU %u never ran", b);
			add_cpu(b);
			break;
		}
		KUNIT_EXPECT_EQ(test, atomic_read(&qdo_dead.calls), 1);
		if (READ_ONCE(qdo_dead.ran_on) != b)
			moved++;
		KUNIT_EXPECT_EQ_MSG(test, add_cpu(b), 0, "add_cpu(%u)", b);
	}
	WRITE_ONCE(qdo_period_us, period);
	cpuhp_remove_state_nocalls(state);
	kunit_info(test, "%d of %d requests ran after their CPU died\n", moved, i);
	KUNIT_EXPECT_GT(test, moved, 0);
}

static struct kunit_case qdo_test_cases[] = {
	KUNIT_CASE(qdo_test_basic),
	KUNIT_CASE(qdo_test_invalid),
	KUNIT_CASE(qdo_test_serial_execute),
	KUNIT_CASE(qdo_test_subset),
	KUNIT_CASE(qdo_test_idle_cpu),
	KUNIT_CASE(qdo_test_barrier),
	KUNIT_CASE(qdo_test_poll),
	KUNIT_CASE(qdo_test_cpu_dead),
	{}
};

static struct kunit_suite qdo_test_suite = {
	.name = "qdo",
	.test_cases = qdo_test_cases,
};

kunit_test_suite(qdo_test_suite);

MODULE_DESCRIPTION("KUnit tests for QDo quiescent-state callbacks");
MODULE_LICENSE("GPL");
