// SPDX-License-Identifier: GPL-2.0
/*
 * On-demand stress test and benchmarks of QDo and clustered objects,
 * driven from debugfs by tools/testing/selftests/scalable/qdo_*.c:
 *
 *   /sys/kernel/debug/qdo_test/stress   reading runs a stress round: QDo
 *	requests with random quiescence and execution masks, clustered
 *	counters updated from every CPU and destroyed, the synchronous,
 *	polled and barrier forms; it prints "qdo_stress ok ..." or
 *	"qdo_stress FAIL ...".  Meant to run while CPUs go on and offline.
 *   /sys/kernel/debug/qdo_test/latency  reading measures callback latency
 *	and CPU cost of QDo against call_rcu() and
 *	synchronize_rcu_expedited(), also with one CPU stuck in a
 *	preempt-disabled loop, and prints RESULT lines (see struct lat_cost
 *	for how the CPU cost is measured).
 *   /sys/kernel/debug/qdo_test/counter  reading measures the clustered
 *	counter against a shared atomic and percpu_counter at 1..N CPUs.
 *
 * Benchmarks print numbers; nothing here asserts on speed.
 */

#include <linux/atomic.h>
#include <linux/clustered_counter.h>
#include <linux/completion.h>
#include <linux/cpu.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/init.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/mutex.h>
#include <linux/percpu_counter.h>
#include <linux/qdo.h>
#include <linux/random.h>
#include <linux/rcupdate.h>
#include <linux/sched/cputime.h>
#include <linux/sched/signal.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/tick.h>
#include <linux/workqueue.h>

static DEFINE_MUTEX(test_qdo_mutex);

/* ---------------------------------------------------------------- stress */

#define STRESS_REQS		256
#define STRESS_COUNTERS		4
#define STRESS_INCS		1000
#define STRESS_NS		(300 * NSEC_PER_MSEC)
#define STRESS_CPU_REQS		16

struct stress_req {
	struct qdo_head	head;
	atomic_t	invoked;
	bool		single;
};

static atomic_t stress_released;

static void stress_cb(struct qdo_head *head)
{
	atomic_inc(&container_of(head, struct stress_req, head)->invoked);
}

static void stress_cc_release(struct clustered_counter *cc)
{
	kfree(cc);
	atomic_inc(&stress_released);
}

struct stress_work {
	struct work_struct		work;
	struct clustered_counter	**cc;
	bool				registered;
	/* Registered on the work's CPU: pending there if it goes down. */
	struct stress_req		reqs[STRESS_CPU_REQS];
};

static void stress_inc_fn(struct work_struct *work)
{
	struct stress_work *sw = container_of(work, struct stress_work, work);
	int i, j;

	for (i = 0; i < STRESS_CPU_REQS; i++) {
		memset(&sw->reqs[i], 0, sizeof(sw->reqs[i]));
		sw->reqs[i].single = true;
		if (qdo_call(&sw->reqs[i].head, stress_cb, cpu_possible_mask,
			     cpumask_of(get_random_u32_below(nr_cpu_ids))))
			return;
	}
	sw->registered = true;

	for (i = 0; i < STRESS_INCS; i++)
		for (j = 0; j < STRESS_COUNTERS; j++)
			clustered_counter_add(sw->cc[j], 1);
}

/*
 * One round; false if a check failed, or (*@nomem set) if the counters
 * could not be allocated (fault injection: the kselftest torture), after
 * waiting for this round's requests, which point into @reqs.
 */
static bool stress_round(struct seq_file *m, struct stress_req *reqs,
			 struct stress_work *works, int *nr_counters, bool *nomem)
{
	struct clustered_counter *cc[STRESS_COUNTERS];
	unsigned long cookie;
	unsigned int cpu, queued = 0;
	bool ok = true;
	int i, n;

	for (i = 0; i < STRESS_REQS; i++) {
		struct stress_req *r = &reqs[i];
		const struct cpumask *q, *e;

		memset(r, 0, sizeof(*r));
		cpu = get_random_u32_below(nr_cpu_ids);
		switch (i % 4) {
		case 0:
			q = cpu_possible_mask;
			break;
		case 1:
			q = cpu_online_mask;
			break;
		case 2:
			q = cpumask_of(cpu);
			break;
		default:
			q = cpumask_of(raw_smp_processor_id());
			break;
		}
		r->single = i % 3;
		e = r->single ? cpumask_of(get_random_u32_below(nr_cpu_ids)) : cpu_possible_mask;
		if (qdo_call(&r->head, stress_cb, q, e)) {
			seq_puts(m, "qdo_call failed\n");
			qdo_barrier();
			return false;
		}
	}

	for (i = 0; i < STRESS_COUNTERS; i++) {
		cc[i] = kzalloc(sizeof(*cc[i]), GFP_KERNEL);
		if (!cc[i] || clustered_counter_init(cc[i], GFP_KERNEL)) {
			kfree(cc[i]);
			while (i--)
				clustered_counter_destroy(cc[i], stress_cc_release);
			*nomem = true;
			qdo_barrier();
			return false;
		}
		(*nr_counters)++;
	}
	for_each_online_cpu(cpu) {
		works[cpu].cc = cc;
		INIT_WORK(&works[cpu].work, stress_inc_fn);
		queue_work_on(cpu, system_wq, &works[cpu].work);
		queued++;
	}
	for_each_possible_cpu(cpu)
		if (works[cpu].cc)
			flush_work(&works[cpu].work);
	for (i = 0; i < STRESS_COUNTERS; i++) {
		long sum = clustered_counter_sum(cc[i]);

		if (sum != (long)queued * STRESS_INCS) {
			seq_printf(m, "counter %d: sum %ld, expected %ld\n", i, sum,
				   (long)queued * STRESS_INCS);
			ok = false;
		}
		clustered_counter_destroy(cc[i], stress_cc_release);
	}
	qdo_synchronize(cpu_online_mask);
	cookie = qdo_start_poll();
	qdo_barrier();
	for_each_possible_cpu(cpu) {
		if (works[cpu].cc && !works[cpu].registered) {
			seq_printf(m, "cpu %u: qdo_call failed\n", cpu);
			ok = false;
		}
		for (i = 0; works[cpu].registered && i < STRESS_CPU_REQS; i++) {
			n = atomic_read(&works[cpu].reqs[i].invoked);
			if (n != 1) {
				seq_printf(m, "cpu %u request %d invoked %d times\n", cpu, i, n);
				ok = false;
			}
		}
		works[cpu].cc = NULL;
		works[cpu].registered = false;
	}
	for (i = 0; i < STRESS_REQS; i++) {
		n = atomic_read(&reqs[i].invoked);
		if (n < 1 || n > nr_cpu_ids || (reqs[i].single && n != 1)) {
			seq_printf(m, "request %d invoked %d times\n", i, n);
			ok = false;
		}
	}
	for (i = 0; i < 1000 && !qdo_poll_state(cookie); i++)
		fsleep(10000);
	if (!qdo_poll_state(cookie)) {
		seq_puts(m, "polled cookie never completed\n");
		ok = false;
	}
	return ok;
}

static int stress_show(struct seq_file *m, void *v)
{
	struct stress_req *reqs;
	struct stress_work *works;
	int rounds = 0, counters = 0, i;
	u64 end = ktime_get_ns() + STRESS_NS;
	bool ok = true, nomem = false;

	reqs = kcalloc(STRESS_REQS, sizeof(*reqs), GFP_KERNEL);
	works = kcalloc(nr_cpu_ids, sizeof(*works), GFP_KERNEL);
	if (!reqs || !works) {
		kfree(reqs);
		kfree(works);
		return -ENOMEM;
	}
	mutex_lock(&test_qdo_mutex);
	atomic_set(&stress_released, 0);
	while (ok && (rounds < 3 || ktime_get_ns() < end)) {
		ok = stress_round(m, reqs, works, &counters, &nomem);
		rounds++;
	}
	/* Phases 3 and 4 of every counter's destruction. */
	for (i = 0; i < 2000 && atomic_read(&stress_released) < counters; i++)
		fsleep(10000);
	if (atomic_read(&stress_released) != counters) {
		seq_printf(m, "released %d of %d counters\n", atomic_read(&stress_released),
			   counters);
		ok = false;
	}
	mutex_unlock(&test_qdo_mutex);
	kfree(reqs);
	kfree(works);
	/* Out of memory, and nothing else wrong: a clean error for the reader. */
	if (nomem && atomic_read(&stress_released) == counters)
		return -ENOMEM;
	seq_printf(m, "qdo_stress %s rounds=%d requests=%d counters=%d online=%u\n",
		   ok ? "ok" : "FAIL", rounds, rounds * STRESS_REQS, counters,
		   num_online_cpus());
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(stress);

/* ---------------------------------------------------------------- latency */

#define LAT_CHAIN	100
#define STUCK_NS	(300 * NSEC_PER_MSEC)

enum lat_kind { LAT_QDO_LOCAL, LAT_QDO_ALL, LAT_CALL_RCU };

struct lat_chain {
	struct qdo_head		qh;
	struct rcu_head		rh;
	enum lat_kind		kind;
	int			left;
	int			n;
	u64			t_reg;
	u64			sum, sumsq, max;
	struct completion	done;
};

static void lat_register(struct lat_chain *c);

static void lat_step(struct lat_chain *c)
{
	u64 d = ktime_get_ns() - c->t_reg;

	c->sum += d;
	c->sumsq += d * d;
	c->max = max(c->max, d);
	c->n++;
	if (--c->left > 0)
		lat_register(c);
	else
		complete(&c->done);
}

static void lat_qdo_cb(struct qdo_head *head)
{
	lat_step(container_of(head, struct lat_chain, qh));
}

static void lat_rcu_cb(struct rcu_head *head)
{
	lat_step(container_of(head, struct lat_chain, rh));
}

static void lat_register(struct lat_chain *c)
{
	int cpu = raw_smp_processor_id();

	c->t_reg = ktime_get_ns();
	switch (c->kind) {
	case LAT_QDO_LOCAL:
		qdo_call(&c->qh, lat_qdo_cb, cpumask_of(cpu), cpumask_of(cpu));
		break;
	case LAT_QDO_ALL:
		qdo_call(&c->qh, lat_qdo_cb, cpu_online_mask, cpumask_of(cpu));
		break;
	case LAT_CALL_RCU:
		call_rcu(&c->rh, lat_rcu_cb);
		break;
	}
}

static const char * const lat_names[] = {
	[LAT_QDO_LOCAL] = "qdo_local",
	[LAT_QDO_ALL] = "qdo_all",
	[LAT_CALL_RCU] = "call_rcu",
};

/*
 * CPU cost of a run, by two methods, both taken around every run of the
 * same boot so that QDo and RCU are measured alike:
 *
 * busy: CPU time not spent idle, summed over the online CPUs, from the
 *	NOHZ idle accounting (get_cpu_idle_time_us(): exact timestamps at
 *	idle entry and exit; an interrupt or softirq that hits an idle CPU
 *	counts as busy), less the busy rate of a quiet baseline (the
 *	least busy of three 100 ms windows) times the run's length.  It
 *	covers everything a mechanism costs: for call_rcu() the
 *	grace-period kthread, the scheduler-tick work, the ticks that stay
 *	on while callbacks are queued and the RCU_SOFTIRQ that invokes
 *	them; for QDo the daemons, their hrtimer and the hooks.  Only
 *	meaningful on an otherwise idle system, so it is left out when the
 *	baseline shows the CPUs more than half busy (the loaded runs of
 *	qdo_latency) or without NOHZ.
 * kthread: run time (task_sched_runtime()) of the mechanism's kthreads:
 *	"qdo/N" for QDo; "rcu_preempt"/"rcu_sched", "rcu_exp_*", "rcuc/N",
 *	"rcuog/N", "rcuop/N", "rcub/N" for RCU (not "rcu_tasks*").  Valid
 *	under load, but without IRQ_TIME_ACCOUNTING softirq time is charged
 *	to the task it interrupted, so for call_rcu() (callbacks invoked
 *	from RCU_SOFTIRQ) it is a lower bound; the QDo daemons run the
 *	callbacks themselves.
 */
struct lat_cost {
	u64	wall_ns;
	u64	idle_us;
	u64	qdo_ns;
	u64	rcu_ns;
	bool	idle_ok;
};

/* Busy nanoseconds per second of wall time in a quiet window. */
static u64 lat_base_busy;
static bool lat_base_ok;

static bool lat_rcu_thread(const char *comm)
{
	return !strncmp(comm, "rcu", 3) && strncmp(comm, "rcu_tasks", 9);
}

static void lat_cost_read(struct lat_cost *c)
{
	struct task_struct *g, *t;
	char comm[TASK_COMM_LEN];
	unsigned int cpu;
	u64 us;

	memset(c, 0, sizeof(*c));
	c->idle_ok = true;
	for_each_online_cpu(cpu) {
		us = get_cpu_idle_time_us(cpu, NULL);
		if (us == (u64)-1)
			c->idle_ok = false;
		else
			c->idle_us += us;
	}
	rcu_read_lock();
	for_each_process_thread(g, t) {
		if (!(t->flags & PF_KTHREAD))
			continue;
		get_task_comm(comm, t);
		if (!strncmp(comm, "qdo/", 4))
			c->qdo_ns += task_sched_runtime(t);
		else if (lat_rcu_thread(comm))
			c->rcu_ns += task_sched_runtime(t);
	}
	rcu_read_unlock();
	c->wall_ns = ktime_get_ns();
}

/* Turn @c, read before a run, into the run's cost. */
static void lat_cost_end(struct lat_cost *c)
{
	struct lat_cost e;

	lat_cost_read(&e);
	c->idle_ok &= e.idle_ok;
	c->wall_ns = e.wall_ns - c->wall_ns;
	c->idle_us = e.idle_us - c->idle_us;
	c->qdo_ns = e.qdo_ns - c->qdo_ns;
	c->rcu_ns = e.rcu_ns - c->rcu_ns;
}

/* Busy time over all online CPUs during the run, in ns. */
static u64 lat_cost_busy(const struct lat_cost *c)
{
	u64 all = c->wall_ns * num_online_cpus();
	u64 idle = c->idle_us * NSEC_PER_USEC;

	return all > idle ? all - idle : 0;
}

/*
 * The quiet baseline: how busy the CPUs are while nothing is measured.
 * Background activity only adds busy time, so take the least busy of
 * three 100 ms windows.
 */
static void lat_baseline(void)
{
	struct lat_cost c;
	u64 rate;
	int i;

	lat_base_busy = U64_MAX;
	lat_base_ok = true;
	for (i = 0; i < 3; i++) {
		lat_cost_read(&c);
		msleep(100);
		lat_cost_end(&c);
		rate = c.wall_ns ? div64_u64(lat_cost_busy(&c) * NSEC_PER_SEC, c.wall_ns) : 0;
		lat_base_busy = min(lat_base_busy, rate);
		lat_base_ok &= c.idle_ok;
	}
	/* More than half of the CPU time busy: a loaded system. */
	lat_base_ok &= lat_base_busy * 2 <= (u64)num_online_cpus() * NSEC_PER_SEC;
}

static void lat_print_us(struct seq_file *m, const char *key, u64 ns, int n)
{
	u64 per = div_u64(ns, n);

	seq_printf(m, " %s=%llu.%03llu", key, div_u64(per, 1000), per % 1000);
}

/*
 * @cost: the run's cost, or NULL; @rcu: the run used RCU, not QDo;
 * @daemon_ns: qdo_daemon_ns() over the run, or U64_MAX.
 */
static void lat_print(struct seq_file *m, const char *mode, int n, u64 sum, u64 sumsq, u64 max,
		      const struct lat_cost *cost, bool rcu, u64 daemon_ns)
{
	u64 mean = n ? div_u64(sum, n) : 0;
	u64 sq = n ? div_u64(sumsq, n) : 0;
	u64 var = sq > mean * mean ? sq - mean * mean : 0;
	u64 busy, base;

	/* ops_per_ms: callbacks per ms of a chain, i.e. 1 / latency. */
	seq_printf(m, "RESULT bench=qdo_latency mode=%s cpus=%u ops_per_ms=%llu.%03llu runs=%d stddev=0 lat_us=%llu.%03llu lat_sd_us=%llu lat_max_us=%llu",
		   mode, num_online_cpus(),
		   mean ? div64_u64(NSEC_PER_MSEC, mean) : 0,
		   mean ? div64_u64(NSEC_PER_MSEC * 1000ULL, mean) % 1000 : 0,
		   n, div_u64(mean, 1000), mean % 1000, div_u64(int_sqrt64(var), 1000),
		   div_u64(max, 1000));
	if (n && daemon_ns != U64_MAX)
		lat_print_us(m, "daemon_us_per_cb", daemon_ns, n);
	if (n && cost) {
		lat_print_us(m, "kthread_us_per_cb", rcu ? cost->rcu_ns : cost->qdo_ns, n);
		if (lat_base_ok && cost->idle_ok) {
			busy = lat_cost_busy(cost);
			base = div64_u64(lat_base_busy * cost->wall_ns, NSEC_PER_SEC);
			lat_print_us(m, "cpu_us_per_cb", busy > base ? busy - base : 0, n);
		}
	}
	seq_putc(m, '\n');
}

static void lat_run_chain(struct seq_file *m, enum lat_kind kind, const char *prefix)
{
	struct lat_chain *c = kzalloc(sizeof(*c), GFP_KERNEL);
	struct lat_cost cost;
	char mode[48];
	u64 ns0;

	if (!c)
		return;
	c->kind = kind;
	c->left = LAT_CHAIN;
	init_completion(&c->done);
	lat_cost_read(&cost);
	ns0 = qdo_daemon_ns();
	lat_register(c);
	wait_for_completion(&c->done);
	ns0 = qdo_daemon_ns() - ns0;
	lat_cost_end(&cost);
	snprintf(mode, sizeof(mode), "%s%s", prefix, lat_names[kind]);
	lat_print(m, mode, c->n, c->sum, c->sumsq, c->max, &cost, kind == LAT_CALL_RCU,
		  kind == LAT_CALL_RCU ? U64_MAX : ns0);
	kfree(c);
}

static void lat_run_sync(struct seq_file *m, bool expedited, const char *prefix)
{
	u64 sum = 0, sumsq = 0, max = 0, t, d;
	struct lat_cost cost;
	char mode[48];
	int i, n = expedited ? LAT_CHAIN : LAT_CHAIN / 4;

	lat_cost_read(&cost);
	for (i = 0; i < n; i++) {
		t = ktime_get_ns();
		if (expedited)
			synchronize_rcu_expedited();
		else
			qdo_synchronize(cpu_online_mask);
		d = ktime_get_ns() - t;
		sum += d;
		sumsq += d * d;
		max = max(max, d);
	}
	lat_cost_end(&cost);
	snprintf(mode, sizeof(mode), "%s%s", prefix,
		 expedited ? "sync_rcu_expedited" : "qdo_synchronize_all");
	lat_print(m, mode, n, sum, sumsq, max, &cost, expedited, U64_MAX);
}

static atomic_t stuck_state;

static int stuck_fn(void *unused)
{
	u64 end = ktime_get_ns() + STUCK_NS;

	preempt_disable();
	atomic_set(&stuck_state, 1);
	while (ktime_get_ns() < end)
		cpu_relax();
	atomic_set(&stuck_state, 2);
	preempt_enable();
	return 0;
}

/*
 * One CPU outside the quiescence mask sits in a preempt-disabled loop for
 * STUCK_NS: a QDo request that waits only for this CPU is not delayed,
 * while call_rcu() and an all-CPU QDo request wait for the loop to end.
 */
static void lat_stuck(struct seq_file *m)
{
	struct lat_chain *c[3];
	struct task_struct *t;
	int a, b, i, k;

	if (num_online_cpus() < 2)
		return;
	a = raw_smp_processor_id();
	b = cpumask_any_but(cpu_online_mask, a);
	if (set_cpus_allowed_ptr(current, cpumask_of(a)))
		return;
	for (k = 0; k < 3; k++) {
		c[k] = kzalloc(sizeof(*c[k]), GFP_KERNEL);
		if (!c[k])
			goto out;
	}
	for (i = 0; i < 3; i++) {
		atomic_set(&stuck_state, 0);
		t = kthread_run_on_cpu(stuck_fn, NULL, b, "qdo_stuck/%u");
		if (IS_ERR(t))
			break;
		while (atomic_read(&stuck_state) == 0)
			usleep_range(100, 200);
		for (k = 0; k < 3; k++) {
			c[k]->kind = k;
			c[k]->left = 1;
			init_completion(&c[k]->done);
			lat_register(c[k]);
		}
		for (k = 0; k < 3; k++)
			wait_for_completion(&c[k]->done);
		while (atomic_read(&stuck_state) != 2)
			fsleep(1000);
		msleep(20);
	}
	for (k = 0; k < 3; k++) {
		char mode[48];

		snprintf(mode, sizeof(mode), "stuck_%s", lat_names[k]);
		lat_print(m, mode, c[k]->n, c[k]->sum, c[k]->sumsq, c[k]->max, NULL, false,
			  U64_MAX);
	}
out:
	for (k = 0; k < 3; k++)
		kfree(c[k]);
	set_cpus_allowed_ptr(current, cpu_possible_mask);
}

static int latency_show(struct seq_file *m, void *v)
{
	mutex_lock(&test_qdo_mutex);
	lat_baseline();
	lat_run_chain(m, LAT_QDO_LOCAL, "");
	lat_run_chain(m, LAT_QDO_ALL, "");
	lat_run_chain(m, LAT_CALL_RCU, "");
	lat_run_sync(m, true, "");
	lat_run_sync(m, false, "");
	lat_stuck(m);
	mutex_unlock(&test_qdo_mutex);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(latency);

/* ---------------------------------------------------------------- counter */

#define CNT_NS		(100 * NSEC_PER_MSEC)
#define CNT_BATCH	256
#define CNT_READS	1000

enum cnt_kind { CNT_CLUSTERED, CNT_ATOMIC, CNT_PERCPU, CNT_KINDS };

static const char * const cnt_names[] = {
	[CNT_CLUSTERED] = "clustered",
	[CNT_ATOMIC] = "atomic",
	[CNT_PERCPU] = "percpu_counter",
};

static struct {
	struct clustered_counter	cc;
	atomic_long_t			at;
	struct percpu_counter		pc;
	enum cnt_kind			kind;
	atomic_t			ready;
	bool				go;
	bool				stop;
	unsigned long			*ops;
} cnt;

static int cnt_worker(void *arg)
{
	unsigned int cpu = (unsigned long)arg;
	unsigned long n = 0;
	int i;

	atomic_inc(&cnt.ready);
	while (!READ_ONCE(cnt.go))
		cond_resched();
	while (!READ_ONCE(cnt.stop)) {
		for (i = 0; i < CNT_BATCH; i++) {
			switch (cnt.kind) {
			case CNT_CLUSTERED:
				clustered_counter_add(&cnt.cc, 1);
				break;
			case CNT_ATOMIC:
				atomic_long_inc(&cnt.at);
				break;
			default:
				percpu_counter_add(&cnt.pc, 1);
				break;
			}
		}
		n += CNT_BATCH;
		cond_resched();
	}
	cnt.ops[cpu] = n;
	while (!kthread_should_stop())
		schedule_timeout_interruptible(1);
	return 0;
}

static u64 cnt_read_ns(void)
{
	u64 t = ktime_get_ns();
	long sum = 0;
	int i;

	for (i = 0; i < CNT_READS; i++) {
		switch (cnt.kind) {
		case CNT_CLUSTERED:
			sum += clustered_counter_sum(&cnt.cc);
			break;
		case CNT_ATOMIC:
			sum += atomic_long_read(&cnt.at);
			break;
		default:
			sum += percpu_counter_sum(&cnt.pc);
			break;
		}
	}
	/* Keep the reads. */
	return div_u64(ktime_get_ns() - t, CNT_READS) + (sum == LONG_MIN);
}

/*
 * One pinned kthread per CPU on the first @k online CPUs increments for
 * CNT_NS; then CNT_READS exact reads are timed (Tornado Fig. 4.11a/b).
 */
static void cnt_run(struct seq_file *m, enum cnt_kind kind, unsigned int k)
{
	struct task_struct **t = kcalloc(nr_cpu_ids, sizeof(*t), GFP_KERNEL);
	unsigned long total = 0;
	unsigned int cpu, n = 0;
	u64 read_ns;

	if (!t)
		return;
	cnt.kind = kind;
	cnt.go = false;
	cnt.stop = false;
	atomic_set(&cnt.ready, 0);
	memset(cnt.ops, 0, nr_cpu_ids * sizeof(*cnt.ops));
	for_each_online_cpu(cpu) {
		if (n == k)
			break;
		t[cpu] = kthread_create_on_cpu(cnt_worker, (void *)(unsigned long)cpu, cpu,
					       "qdo_cnt/%u");
		if (IS_ERR(t[cpu])) {
			t[cpu] = NULL;
			continue;
		}
		get_task_struct(t[cpu]);
		wake_up_process(t[cpu]);
		n++;
	}
	while (atomic_read(&cnt.ready) < n)
		fsleep(1000);
	WRITE_ONCE(cnt.go, true);
	fsleep(div_u64(CNT_NS, NSEC_PER_USEC));
	WRITE_ONCE(cnt.stop, true);
	for_each_possible_cpu(cpu) {
		if (!t[cpu])
			continue;
		kthread_stop(t[cpu]);
		put_task_struct(t[cpu]);
		total += cnt.ops[cpu];
	}
	kfree(t);
	read_ns = cnt_read_ns();
	seq_printf(m, "RESULT bench=counter_bench mode=%s cpus=%u ops_per_ms=%lu runs=1 stddev=0 read_ns=%llu reps=%u\n",
		   cnt_names[kind], n, (unsigned long)div_u64((u64)total * NSEC_PER_MSEC, CNT_NS),
		   read_ns, kind == CNT_CLUSTERED ? READ_ONCE(cnt.cc.co.nr_reps) : 0);
}

static DECLARE_COMPLETION(cnt_released);

static void cnt_cc_release(struct clustered_counter *cc)
{
	complete(&cnt_released);
}

static int counter_show(struct seq_file *m, void *v)
{
	unsigned int k;
	int kind;

	mutex_lock(&test_qdo_mutex);
	cnt.ops = kcalloc(nr_cpu_ids, sizeof(*cnt.ops), GFP_KERNEL);
	if (!cnt.ops)
		goto out;
	if (percpu_counter_init(&cnt.pc, 0, GFP_KERNEL))
		goto out_ops;
	atomic_long_set(&cnt.at, 0);
	for (kind = 0; kind < CNT_KINDS; kind++) {
		for (k = 1; k <= num_online_cpus(); k++) {
			/* A fresh counter each time: reps only where it ran. */
			if (kind == CNT_CLUSTERED && clustered_counter_init(&cnt.cc, GFP_KERNEL))
				break;
			cnt_run(m, kind, k);
			if (kind == CNT_CLUSTERED) {
				reinit_completion(&cnt_released);
				clustered_counter_destroy(&cnt.cc, cnt_cc_release);
				wait_for_completion(&cnt_released);
			}
		}
	}
	percpu_counter_destroy(&cnt.pc);
out_ops:
	kfree(cnt.ops);
out:
	mutex_unlock(&test_qdo_mutex);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(counter);

static int __init test_qdo_init(void)
{
	struct dentry *dir = debugfs_create_dir("qdo_test", NULL);

	debugfs_create_file("stress", 0400, dir, NULL, &stress_fops);
	debugfs_create_file("latency", 0400, dir, NULL, &latency_fops);
	debugfs_create_file("counter", 0400, dir, NULL, &counter_fops);
	return 0;
}
late_initcall(test_qdo_init);
