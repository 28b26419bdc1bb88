// SPDX-License-Identifier: GPL-2.0
/*
 * QDo: quiescent-state callbacks with a quiescence CPU set and an
 * execution CPU set (Tam, MASc thesis, University of Toronto, 2006; K42).
 *
 * Read-side sections are preempt-disabled regions (RCU-sched semantics).
 *
 * Detection.  Every CPU keeps a generation count, ->gen, that it advances
 * at quiescent points: a context switch (__schedule()), entry to the idle
 * loop (do_idle()), a tick that interrupted user mode or, with
 * CONFIG_PREEMPT_COUNT, kernel code outside any read-side section
 * (update_process_times()), and qdo_qs().  The hooks are patched out by a
 * static key while no request is pending anywhere, so an idle QDo costs
 * one no-op per hook.  Idle CPUs do not advance ->gen: the observing CPU
 * reads the context-tracking counter that RCU uses for dyntick-idle
 * (ct_rcu_watching_cpu_acquire()) and credits a CPU that is, or has been,
 * in an extended quiescent state without waking it.  Offline CPUs are
 * quiescent.  (The thesis, section 3.3.1, woke idle CPUs with its soft
 * timer and left idle detection as future work.)
 *
 * Global quiescence: the thesis's snapshot algorithm (section 3.3.2), over
 * the request's quiescence mask only.  Each CPU's daemon numbers its
 * passes with ->round; requests taken from the intake list in a pass are
 * tagged with that round.  For every remote CPU c a request still waits
 * on, the daemon keeps one outstanding snapshot of c's (gen, ct) and the
 * round it was taken in; when c's counters move, all requests tagged with
 * that round or earlier are quiescent on c.  The daemon's own CPU is
 * quiescent whenever the daemon runs.  A CPU outside a request's mask, for
 * instance one stuck in a long preempt-disabled loop, never delays it: the
 * subset property that QDo has over RCU (thesis section 3.1.3).
 *
 * Daemon: one smpboot kthread per CPU, "qdo/N", woken by a pinned per-CPU
 * hrtimer that is armed only while requests are pending on that CPU, so an
 * idle system sees no QDo wakeups at all.  The period is qdo.period_us.
 *
 * Execution: callbacks run in the daemons, in process context, on each
 * online CPU of the execution mask in turn (serially, thesis section
 * 4.9.2): a CPU's daemon runs the callback and then hands the request to
 * the next CPU's daemon.
 *
 * Hotplug: a CPU counts as quiescent only while QDo knows it runs no
 * kernel code at all: from the moment it is dead (CPUHP_BP_PREPARE_DYN
 * teardown, on a control CPU) until it is prepared to come up again (the
 * same state's startup, before it is kicked).  A CPU that is starting or
 * dying is out of cpu_online_mask but may still be inside a read-side
 * section, so it is snapshotted like any other.  When a CPU dies, the
 * control CPU moves its pending and to-be-executed requests to an online
 * CPU.
 *
 * Without CONFIG_PREEMPT_COUNT (PREEMPT_NONE and PREEMPT_VOLUNTARY
 * kernels) the tick cannot tell kernel code outside a read-side section
 * from code inside one, so a CPU that loops in the kernel without
 * scheduling delays the requests that wait for it until it calls
 * cond_resched() (which schedules only when needed) or qdo_qs(), or
 * returns to user mode.  QDo forces no quiescent state: no IPI, no
 * resched request.
 */

#define pr_fmt(fmt) "qdo: " fmt

#include <kunit/visibility.h>
#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/context_tracking_state.h>
#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/debugfs.h>
#include <linux/hrtimer.h>
#include <linux/init.h>
#include <linux/ktime.h>
#include <linux/log2.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/qdo.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/smpboot.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#undef MODULE_PARAM_PREFIX
#define MODULE_PARAM_PREFIX "qdo."

/*
 * Daemon period in microseconds while requests are pending: the longest
 * a request waits for the daemon to look at an idle CPU's quiescent
 * state.  The thesis used 10 ms (section 5.3.2); the default's choice is
 * in Documentation/core-api/qdo.rst.  Visible to KUnit, whose CPU hotplug
 * test lengthens it (kernel/qdo/qdo_kunit.c).
 */
VISIBLE_IF_KUNIT unsigned int qdo_period_us = 4000;
module_param_named(period_us, qdo_period_us, uint, 0644);
MODULE_PARM_DESC(period_us, "QDo daemon period while requests are pending (us)");

#define QDO_HIST_BUCKETS	24	/* log2 of the latency in us */

/*
 * Statistics are per CPU and written by one context at a time (the owning
 * CPU with interrupts off, its daemon, or the hotplug control CPU under
 * ->lock); debugfs reads them from any CPU with READ_ONCE().
 */
static inline void qdo_stat_inc(unsigned long *stat)
{
	WRITE_ONCE(*stat, *stat + 1);
}

/* One remote CPU as seen by one daemon: the snapshot algorithm's state. */
struct qdo_snap {
	unsigned long	gen;		/* remote ->gen at the snapshot */
	unsigned long	round;		/* our round when it was taken */
	unsigned long	done;		/* latest round known quiescent */
	int		ct;		/* remote context-tracking counter */
};

struct qdo_cpu {
	/* Written by this CPU at quiescent points, read by the others. */
	unsigned long		gen ____cacheline_aligned_in_smp;

	struct llist_head	intake ____cacheline_aligned_in_smp;
	struct llist_head	exec;
	bool			kick;		/* the daemon has work */

	/* Daemon-private. */
	struct llist_node	*wait;		/* awaiting quiescence, FIFO */
	struct llist_node	**wait_tail;
	unsigned long		round;
	struct qdo_snap		*snap;		/* [nr_cpu_ids], at first use */
	cpumask_var_t		outstanding;	/* CPUs with a snapshot in flight */
	cpumask_var_t		need;		/* CPUs to snapshot now */
	bool			busy;		/* counted in qdo_busy_cpus */

	struct hrtimer		timer;
	unsigned int		cpu;
	raw_spinlock_t		lock;		/* ->online vs. remote ->exec pushes */
	bool			online;		/* may run kernel code, see qdo_live() */

	/* Statistics, for debugfs. */
	unsigned long		nr_registered;
	unsigned long		nr_executed;	/* requests completed here */
	unsigned long		nr_invoked;	/* callback invocations here */
	unsigned long		nr_wakeups;	/* daemon passes */
	unsigned long		nr_timer;	/* timer expiries */
	unsigned long		nr_migrated;	/* requests moved by hotplug */
	u64			ns_busy;	/* time in daemon passes */
	unsigned long		hist[QDO_HIST_BUCKETS];

	/* qdo_barrier() counts, indexed by phase; summed over CPUs. */
	unsigned long		reg[2];
	unsigned long		done[2];
};

static DEFINE_PER_CPU_SHARED_ALIGNED(struct qdo_cpu, qdo_cpus);
static DEFINE_PER_CPU(struct task_struct *, qdo_task);

DEFINE_STATIC_KEY_FALSE(qdo_hooks_key);
EXPORT_SYMBOL_GPL(qdo_hooks_key);

static bool qdo_initialized __read_mostly;
static atomic_t qdo_busy_cpus = ATOMIC_INIT(0);

static unsigned int qdo_barrier_phase;
static DEFINE_MUTEX(qdo_barrier_mutex);
static DECLARE_WAIT_QUEUE_HEAD(qdo_barrier_wq);

/* ---------------------------------------------------------------- hooks */

/**
 * __qdo_qs() - record a quiescent state on this CPU
 * @full_barrier: order the increment before later accesses of this CPU
 *	(callers whose own path does not already do so)
 *
 * Called from the hooks with the static key enabled.  The increment is a
 * release store, so the accesses of the read-side section that just ended
 * are visible before it; an observer that reads the new value with
 * acquire semantics may then run the callback.  Only this CPU writes
 * ->gen; an interrupt that increments it in the middle of a task-context
 * increment can lose one step, which only delays detection.
 *
 * Context: preemption (or interrupts) disabled, outside a read-side
 * section: a task that migrated between picking the counter and storing
 * to it would move another CPU's generation.
 */
void __qdo_qs(bool full_barrier)
{
	struct qdo_cpu *qc = raw_cpu_ptr(&qdo_cpus);

	lockdep_assert_preemption_disabled();
	/* The section's accesses before the count; pairs with qdo_snap_moved(). */
	smp_store_release(&qc->gen, qc->gen + 1);
	/* The count before the next section's accesses (store buffering). */
	if (full_barrier)
		smp_mb();	/* the count before the next section */
}
EXPORT_SYMBOL_GPL(__qdo_qs);

/**
 * __qdo_tick() - tick hook
 * @user: the tick interrupted user mode
 *
 * A tick that interrupted user mode is a quiescent state; so is one that
 * interrupted kernel code with a zero preempt count, which can only be
 * known with CONFIG_PREEMPT_COUNT (as in rcu_flavor_sched_clock_irq()).
 * Without it, kernel code is never credited by the tick, and nothing
 * forces a quiescent state: see the top of this file.
 *
 * Context: hard interrupt (update_process_times()).
 */
void __qdo_tick(int user)
{
	lockdep_assert_in_irq();
	if (user || (IS_ENABLED(CONFIG_PREEMPT_COUNT) &&
		     preempt_count() == HARDIRQ_OFFSET))
		__qdo_qs(true);
}

/* ---------------------------------------------------------------- registration */

static enum hrtimer_restart qdo_timer_fn(struct hrtimer *timer)
{
	struct qdo_cpu *qc = container_of(timer, struct qdo_cpu, timer);

	qdo_stat_inc(&qc->nr_timer);
	WRITE_ONCE(qc->kick, true);
	wake_up_process(per_cpu(qdo_task, qc->cpu));
	return HRTIMER_NORESTART;
}

static void qdo_arm(struct qdo_cpu *qc)
{
	/* At least 10 us: shorter periods only burn CPU (thesis 5.3.2). */
	u64 ns = (u64)max(READ_ONCE(qdo_period_us), 10U) * NSEC_PER_USEC;

	if (!hrtimer_is_queued(&qc->timer) && !READ_ONCE(qc->kick))
		hrtimer_start(&qc->timer, ns_to_ktime(ns), HRTIMER_MODE_REL_PINNED_HARD);
}

/**
 * qdo_call() - run a callback once some CPUs have passed a quiescent state
 * @head: request, embedded in the client's object; must not be registered
 *	already
 * @func: callback, called with @head
 * @qmask: CPUs that must pass a quiescent state after this call before
 *	@func runs (the thesis's quiescenceSet); CPUs outside it are never
 *	waited for.  Offline CPUs count as quiescent.
 * @emask: CPUs on which @func runs, in CPU order and one CPU at a time
 *	(the thesis's executeSet, section 4.9.2); offline CPUs are skipped,
 *	and if none is online @func runs once on some online CPU.
 *
 * The QDo interface of Tam 2006, section 3.2.1, with an embedded head
 * instead of an allocated request: registration never allocates.  The
 * caller must have removed every persistent reference to the data first
 * (section 2.2.2); QDo then waits for the temporary ones, which live in
 * read-side sections (preempt-disabled regions) on the CPUs of @qmask.
 *
 * @qmask and @emask are read until the last invocation of @func, so they
 * must stay valid that long: cpu_possible_mask, cpu_online_mask,
 * cpumask_of(), or a mask inside the object being reclaimed.  With more
 * than one CPU in @emask, @func runs once per CPU, and only the last
 * invocation, the one in which qdo_is_last() is true, may free or
 * re-register @head.
 *
 * Context: any context except NMI; does not sleep.
 * Return: 0, -EINVAL if @func, @qmask or @emask is missing or @emask is
 * empty, -EAGAIN before QDo is initialized (early boot).
 */
int qdo_call(struct qdo_head *head, qdo_func_t func,
	     const struct cpumask *qmask, const struct cpumask *emask)
{
	struct qdo_cpu *qc;
	unsigned long flags;
	unsigned int idx;

	if (!func || !qmask || !emask || cpumask_empty(emask))
		return -EINVAL;
	if (unlikely(!READ_ONCE(qdo_initialized)))
		return -EAGAIN;

	head->func = func;
	head->qmask = qmask;
	head->emask = emask;
	head->t_reg = ktime_get_ns();

	local_irq_save(flags);
	qc = this_cpu_ptr(&qdo_cpus);
	idx = READ_ONCE(qdo_barrier_phase) & 1;
	head->phase = idx;
	qdo_stat_inc(&qc->reg[idx]);
	qdo_stat_inc(&qc->nr_registered);
	/* Fully ordered: the caller's unlink before any snapshot of it. */
	llist_add(&head->node, &qc->intake);
	qdo_arm(qc);
	local_irq_restore(flags);
	return 0;
}
EXPORT_SYMBOL_GPL(qdo_call);

/* ---------------------------------------------------------------- detection */

/*
 * Might @cpu be running kernel code, a read-side section included?  True
 * from the hotplug prepare step until the CPU is dead, so starting and
 * dying CPUs, which are outside cpu_online_mask, are waited for too.  The
 * flag is cleared on the control CPU after the dead CPU's last accesses
 * (ordered by the hotplug completion); the daemon's fully ordered list
 * operations order this read before the callback.
 */
static bool qdo_live(unsigned int cpu)
{
	return READ_ONCE(per_cpu(qdo_cpus, cpu).online);
}

static bool qdo_snap_moved(struct qdo_snap *s, unsigned int cpu)
{
	if (ct_rcu_watching_cpu_acquire(cpu) != s->ct)
		return true;	/* passed through idle */
	/* Pairs with the release in __qdo_qs(): the section is over. */
	return smp_load_acquire(&per_cpu(qdo_cpus, cpu).gen) != s->gen;
}

/* Is @h quiescent on every CPU of its mask?  Collect what is missing. */
static bool qdo_ready(struct qdo_cpu *qc, struct qdo_head *h, unsigned int self)
{
	bool ready = true;
	unsigned int c;

	for_each_cpu(c, h->qmask) {
		if (c == self || !qdo_live(c))
			continue;
		if (ULONG_CMP_GE(qc->snap[c].done, h->round))
			continue;
		ready = false;
		if (!cpumask_test_cpu(c, qc->outstanding))
			__cpumask_set_cpu(c, qc->need);
	}
	return ready;
}

static void qdo_push_exec(struct qdo_cpu *self, struct qdo_head *h, unsigned int cpu)
{
	struct qdo_cpu *qc = per_cpu_ptr(&qdo_cpus, cpu);
	unsigned long flags;
	bool queued = false;

	h->cursor = cpu;
	if (qc != self) {
		raw_spin_lock_irqsave(&qc->lock, flags);
		if (qc->online) {
			llist_add(&h->node, &qc->exec);
			WRITE_ONCE(qc->kick, true);
			queued = true;
		}
		raw_spin_unlock_irqrestore(&qc->lock, flags);
		if (queued) {
			wake_up_process(per_cpu(qdo_task, cpu));
			return;
		}
	}
	/* Our turn, or @cpu went offline: run it here in its place. */
	llist_add(&h->node, &self->exec);
}

static void qdo_dispatch(struct qdo_cpu *qc, struct qdo_head *h)
{
	unsigned int cpu = cpumask_first_and(h->emask, cpu_online_mask);

	if (cpu < nr_cpu_ids) {
		qdo_push_exec(qc, h, cpu);
		return;
	}
	/*
	 * No CPU of the execution mask is online: run the callback once
	 * here, in place of the whole mask, and end the walk there.  With
	 * the cursor left on this CPU, a mask CPU that came online before
	 * qdo_run_exec() would have run it a second time.  Only this daemon
	 * sees @h until qdo_run_exec(), so setting the cursor after the
	 * local push is safe.
	 */
	qdo_push_exec(qc, h, qc->cpu);
	h->cursor = nr_cpu_ids - 1;
}

static void qdo_snapshot(struct qdo_cpu *qc, unsigned int c, bool *retry)
{
	struct qdo_snap *s = &qc->snap[c];

	s->round = qc->round;
	s->ct = ct_rcu_watching_cpu_acquire(c);
	/* Pairs with the release in __qdo_qs(). */
	s->gen = smp_load_acquire(&per_cpu(qdo_cpus, c).gen);
	if (!(s->ct & CT_RCU_WATCHING)) {
		/* Idle now: no reader can be left from before. */
		s->done = s->round;
		*retry = true;
	} else {
		cpumask_set_cpu(c, qc->outstanding);
	}
}

static void qdo_scan(struct qdo_cpu *qc, unsigned int self)
{
	struct llist_node **pp, *n;
	struct qdo_head *h;
	bool retry;
	unsigned int c;

	/* Outstanding snapshots that have seen a quiescent state. */
	for_each_cpu(c, qc->outstanding) {
		if (!qdo_live(c) || qdo_snap_moved(&qc->snap[c], c)) {
			qc->snap[c].done = qc->snap[c].round;
			__cpumask_clear_cpu(c, qc->outstanding);
		}
	}
again:
	cpumask_clear(qc->need);
	pp = &qc->wait;
	while ((n = *pp)) {
		h = llist_entry(n, struct qdo_head, node);
		if (qdo_ready(qc, h, self)) {
			*pp = n->next;
			if (qc->wait_tail == &n->next)
				qc->wait_tail = pp;
			qdo_dispatch(qc, h);
			continue;
		}
		pp = &n->next;
	}
	/*
	 * Snapshots are taken after this pass's requests were taken from
	 * the intake list (a full barrier), so after their registration.
	 * A CPU found idle is credited at once; the others on a later pass.
	 */
	retry = false;
	for_each_cpu(c, qc->need)
		qdo_snapshot(qc, c, &retry);
	if (retry)
		goto again;	/* at most once: ->need is empty next time */
}

/* ---------------------------------------------------------------- execution */

static void qdo_complete(struct qdo_cpu *qc, unsigned int phase, u64 t_reg)
{
	u64 us = div_u64(ktime_get_ns() - t_reg, NSEC_PER_USEC);
	unsigned int b = us ? min_t(unsigned int, ilog2(us) + 1, QDO_HIST_BUCKETS - 1) : 0;

	qdo_stat_inc(&qc->hist[b]);
	qdo_stat_inc(&qc->nr_executed);
	this_cpu_inc(qdo_cpus.done[phase]);
	/* wq_has_sleeper() orders the count before the waiter check. */
	if (wq_has_sleeper(&qdo_barrier_wq))
		wake_up(&qdo_barrier_wq);
}

static void qdo_run_exec(struct qdo_cpu *qc)
{
	struct llist_node *n, *next;
	struct qdo_head *h;
	unsigned int cpu, phase;
	u64 t_reg;

	while ((n = llist_del_all(&qc->exec))) {
		n = llist_reverse_order(n);
		for (; n; n = next) {
			next = n->next;
			h = llist_entry(n, struct qdo_head, node);
			cpu = cpumask_next_and(h->cursor, h->emask, cpu_online_mask);
			phase = h->phase;
			t_reg = h->t_reg;
			/* Decided now, so that qdo_is_last() is exact. */
			h->last = cpu >= nr_cpu_ids;
			qdo_stat_inc(&qc->nr_invoked);
			h->func(h);
			if (cpu >= nr_cpu_ids)
				qdo_complete(qc, phase, t_reg);	/* @h may be gone */
			else
				qdo_push_exec(qc, h, cpu);
			cond_resched();
		}
	}
}

/* ---------------------------------------------------------------- daemon */

static void qdo_key_fn(struct work_struct *work)
{
	if (atomic_read(&qdo_busy_cpus))
		static_branch_enable(&qdo_hooks_key);
	else
		static_branch_disable(&qdo_hooks_key);
}

static DECLARE_DELAYED_WORK(qdo_key_work, qdo_key_fn);

static void qdo_set_busy(struct qdo_cpu *qc, bool busy)
{
	if (qc->busy == busy)
		return;
	qc->busy = busy;
	if (busy) {
		/*
		 * Always (re)queue on the first busy CPU, even if the key
		 * still looks enabled: qdo_key_fn() may have read a zero
		 * count and be about to disable it.  Queueing a running work
		 * item runs it once more, and that run sees this increment.
		 */
		if (atomic_inc_return(&qdo_busy_cpus) == 1)
			mod_delayed_work(system_wq, &qdo_key_work, 0);
	} else if (atomic_dec_and_test(&qdo_busy_cpus)) {
		/* Keep the hooks a while: requests tend to come in bursts. */
		mod_delayed_work(system_wq, &qdo_key_work, HZ);
	}
}

static int qdo_should_run(unsigned int cpu)
{
	return READ_ONCE(per_cpu(qdo_cpus, cpu).kick);
}

static void qdo_daemon(unsigned int cpu)
{
	struct qdo_cpu *qc = this_cpu_ptr(&qdo_cpus);
	struct llist_node *n, *next;
	u64 t0 = ktime_get_ns();

	WRITE_ONCE(qc->kick, false);
	qdo_stat_inc(&qc->nr_wakeups);
	smp_mb();	/* ->kick clear before looking at the lists */

	/*
	 * The snapshot table is nr_cpu_ids entries per daemon: allocate it
	 * only on CPUs that get requests, so that a big machine does not
	 * pay nr_cpu_ids^2 up front.  Without memory, new requests stay in
	 * the intake list and the daemon tries again a period later.
	 */
	if (unlikely(!qc->snap))
		qc->snap = kvcalloc(nr_cpu_ids, sizeof(*qc->snap), GFP_KERNEL);

	n = qc->snap ? llist_del_all(&qc->intake) : NULL;
	if (n) {
		qc->round++;
		for (n = llist_reverse_order(n); n; n = next) {
			next = n->next;
			llist_entry(n, struct qdo_head, node)->round = qc->round;
			n->next = NULL;
			*qc->wait_tail = n;
			qc->wait_tail = &n->next;
		}
		qdo_set_busy(qc, true);
	}
	smp_mb();	/* registrations before the snapshots */
	qdo_scan(qc, cpu);	/* with no table, ->wait and ->outstanding are empty */
	qdo_run_exec(qc);

	if (qc->wait || !llist_empty(&qc->intake)) {
		local_irq_disable();
		qdo_arm(qc);
		local_irq_enable();
	}
	if (!qc->wait)
		qdo_set_busy(qc, false);
	WRITE_ONCE(qc->ns_busy, qc->ns_busy + ktime_get_ns() - t0);
}

/**
 * qdo_daemon_ns() - CPU time spent in QDo daemon passes, all CPUs
 *
 * Detection, execution hand-off and the callbacks themselves, for cost
 * measurements.  Context: any.
 * Return: the total in nanoseconds since boot.
 */
u64 qdo_daemon_ns(void)
{
	unsigned int cpu;
	u64 ns = 0;

	for_each_possible_cpu(cpu)
		ns += READ_ONCE(per_cpu(qdo_cpus, cpu).ns_busy);
	return ns;
}
EXPORT_SYMBOL_GPL(qdo_daemon_ns);

static struct smp_hotplug_thread qdo_threads = {
	.store			= &qdo_task,
	.thread_should_run	= qdo_should_run,
	.thread_fn		= qdo_daemon,
	.thread_comm		= "qdo/%u",
};

/* ---------------------------------------------------------------- hotplug */

/*
 * Runs on a control CPU before @cpu is kicked: from now on it may run
 * kernel code, so it is waited for, and its daemon takes requests (it
 * runs them once smpboot unparks it).
 */
static int qdo_cpu_prepare(unsigned int cpu)
{
	struct qdo_cpu *qc = per_cpu_ptr(&qdo_cpus, cpu);

	raw_spin_lock_irq(&qc->lock);
	WRITE_ONCE(qc->online, true);
	raw_spin_unlock_irq(&qc->lock);
	return 0;
}

static unsigned long qdo_count(struct llist_node *first)
{
	unsigned long nr = 0;

	for (; first; first = first->next)
		nr++;
	return nr;
}

/*
 * Runs on a control CPU after @cpu died and its daemon was parked: move
 * everything the dead CPU held to an online CPU.  Waiting requests are
 * registered again there (later snapshots are still after their
 * registration); requests due to execute on @cpu run on the new CPU
 * instead and then go on with the CPU after @cpu in their mask.
 */
static int qdo_cpu_dead(unsigned int cpu)
{
	struct qdo_cpu *dead = per_cpu_ptr(&qdo_cpus, cpu);
	struct llist_node *in, *ex, *last;
	struct qdo_cpu *qc;
	unsigned long moved;
	unsigned int target;

	/* No more pushes to @cpu, and it counts as quiescent from now on. */
	raw_spin_lock_irq(&dead->lock);
	WRITE_ONCE(dead->online, false);
	raw_spin_unlock_irq(&dead->lock);
	hrtimer_cancel(&dead->timer);
	WRITE_ONCE(dead->kick, false);

	in = llist_del_all(&dead->intake);
	if (dead->wait) {
		*dead->wait_tail = in;
		in = dead->wait;
		dead->wait = NULL;
		dead->wait_tail = &dead->wait;
	}
	ex = llist_del_all(&dead->exec);
	cpumask_clear(dead->outstanding);
	qdo_set_busy(dead, false);
	if (!in && !ex)
		return 0;

	moved = qdo_count(in) + qdo_count(ex);
	target = cpumask_any(cpu_online_mask);
	qc = per_cpu_ptr(&qdo_cpus, target);
	raw_spin_lock_irq(&qc->lock);
	WRITE_ONCE(qc->nr_migrated, qc->nr_migrated + moved);
	if (in) {
		for (last = in; last->next; last = last->next)
			;
		llist_add_batch(in, last, &qc->intake);
	}
	if (ex) {
		for (last = ex; last->next; last = last->next)
			;
		llist_add_batch(ex, last, &qc->exec);
	}
	WRITE_ONCE(qc->kick, true);
	raw_spin_unlock_irq(&qc->lock);
	wake_up_process(per_cpu(qdo_task, target));
	return 0;
}

/* ---------------------------------------------------------------- wait forms */

struct qdo_sync {
	struct qdo_head		head;
	struct completion	done;
};

static void qdo_sync_cb(struct qdo_head *head)
{
	complete(&container_of(head, struct qdo_sync, head)->done);
}

/**
 * qdo_synchronize() - wait for a quiescent state on some CPUs
 * @qmask: CPUs that must pass a quiescent state (see qdo_call())
 *
 * Returns once every online CPU of @qmask has passed a quiescent state
 * after the call, so every read-side section that was running on those
 * CPUs when it was called has ended.  An addition to the thesis, whose
 * interface was asynchronous only.
 *
 * Context: process context, may sleep; not from a QDo callback (the
 * daemon would wait for itself).
 */
void qdo_synchronize(const struct cpumask *qmask)
{
	struct qdo_sync s;

	might_sleep();
	init_completion(&s.done);
	if (qdo_call(&s.head, qdo_sync_cb, qmask, cpumask_of(raw_smp_processor_id()))) {
		/* Early boot: a single task, nothing else can be reading. */
		return;
	}
	wait_for_completion(&s.done);
}
EXPORT_SYMBOL_GPL(qdo_synchronize);

static unsigned long qdo_inflight(unsigned int idx)
{
	unsigned long reg = 0, done = 0;
	unsigned int cpu;

	/*
	 * Completions first: a completion that is seen has its registration
	 * seen too, so an in-flight request can never be cancelled out.
	 */
	for_each_possible_cpu(cpu)
		done += READ_ONCE(per_cpu(qdo_cpus, cpu).done[idx]);
	smp_mb();	/* completions read before registrations */
	for_each_possible_cpu(cpu)
		reg += READ_ONCE(per_cpu(qdo_cpus, cpu).reg[idx]);
	return reg - done;
}

/**
 * qdo_barrier() - wait for all QDo callbacks registered before the call
 *
 * Returns after the last invocation of every callback whose qdo_call()
 * returned before qdo_barrier() was called; for teardown, as rcu_barrier()
 * is.  Requests are counted in one of two phases; the barrier drains the
 * other phase (stragglers of an earlier barrier), flips, and drains the
 * old one, so new registrations cannot starve it.  Not in the thesis.
 *
 * Context: process context, may sleep; not from a QDo callback.
 */
void qdo_barrier(void)
{
	unsigned int idx;

	might_sleep();
	mutex_lock(&qdo_barrier_mutex);
	idx = qdo_barrier_phase & 1;
	wait_event(qdo_barrier_wq, qdo_inflight(idx ^ 1) == 0);
	smp_mb();	/* the drain above before the flip */
	WRITE_ONCE(qdo_barrier_phase, qdo_barrier_phase + 1);
	smp_mb();	/* the flip before the drain below */
	wait_event(qdo_barrier_wq, qdo_inflight(idx) == 0);
	mutex_unlock(&qdo_barrier_mutex);
}
EXPORT_SYMBOL_GPL(qdo_barrier);

/*
 * Polled grace periods over all CPUs.  ->seq is odd while a QDo grace
 * period is in flight and even otherwise, as rcu_seq is.
 */
static DEFINE_RAW_SPINLOCK(qdo_poll_lock);
static unsigned long qdo_poll_seq;
static unsigned long qdo_poll_want;
static bool qdo_poll_busy;
static struct qdo_head qdo_poll_head;

static void qdo_poll_cb(struct qdo_head *head);

/* Called with qdo_poll_lock held. */
static void qdo_poll_start_gp(void)
{
	lockdep_assert_held(&qdo_poll_lock);

	WRITE_ONCE(qdo_poll_seq, qdo_poll_seq + 1);
	smp_mb();	/* the start before the request's snapshots */
	if (qdo_call(&qdo_poll_head, qdo_poll_cb, cpu_possible_mask,
		     cpumask_of(raw_smp_processor_id()))) {
		/*
		 * Early boot: undo the start, so that ->seq stays even while
		 * no grace period is in flight; the next qdo_start_poll()
		 * starts it again.
		 */
		WRITE_ONCE(qdo_poll_seq, qdo_poll_seq - 1);
		qdo_poll_busy = false;
	}
}

static void qdo_poll_cb(struct qdo_head *head)
{
	raw_spin_lock_irq(&qdo_poll_lock);
	smp_mb();	/* the readers' end before the end of the GP */
	WRITE_ONCE(qdo_poll_seq, qdo_poll_seq + 1);
	if (ULONG_CMP_LT(qdo_poll_seq, qdo_poll_want))
		qdo_poll_start_gp();
	else
		qdo_poll_busy = false;
	raw_spin_unlock_irq(&qdo_poll_lock);
}

/**
 * qdo_get_state() - cookie for a later QDo grace period over all CPUs
 *
 * Like get_state_synchronize_rcu(): the cookie is satisfied once a QDo
 * grace period over all CPUs that started after this call has ended.  It
 * does not start one; use qdo_start_poll() for that.
 *
 * Context: any context except NMI.
 * Return: the cookie, for qdo_poll_state().
 */
unsigned long qdo_get_state(void)
{
	smp_mb();	/* the caller's accesses before the snapshot */
	return (READ_ONCE(qdo_poll_seq) + 3) & ~1UL;
}
EXPORT_SYMBOL_GPL(qdo_get_state);

/**
 * qdo_start_poll() - get a cookie and make sure a grace period will end it
 *
 * Like start_poll_synchronize_rcu(), without allocation: one internal
 * request at a time serves every poller, and the next grace period starts
 * when it completes if someone still waits.
 *
 * Context: any context except NMI; does not sleep.
 * Return: the cookie, for qdo_poll_state().
 */
unsigned long qdo_start_poll(void)
{
	unsigned long cookie, flags;

	raw_spin_lock_irqsave(&qdo_poll_lock, flags);
	cookie = qdo_get_state();
	if (ULONG_CMP_LT(qdo_poll_want, cookie))
		qdo_poll_want = cookie;
	if (!qdo_poll_busy) {
		qdo_poll_busy = true;
		qdo_poll_start_gp();
	}
	raw_spin_unlock_irqrestore(&qdo_poll_lock, flags);
	return cookie;
}
EXPORT_SYMBOL_GPL(qdo_start_poll);

/**
 * qdo_poll_state() - has the grace period of a cookie ended?
 * @cookie: from qdo_get_state() or qdo_start_poll()
 *
 * Context: any context except NMI.
 * Return: true if every CPU has passed a quiescent state since @cookie
 * was taken, so that the caller may now reclaim.
 */
bool qdo_poll_state(unsigned long cookie)
{
	bool done = ULONG_CMP_GE(READ_ONCE(qdo_poll_seq), cookie);

	smp_mb();	/* the check before the caller's reclaim */
	return done;
}
EXPORT_SYMBOL_GPL(qdo_poll_state);

/* ---------------------------------------------------------------- debugfs */

static int qdo_stats_show(struct seq_file *m, void *v)
{
	unsigned long hist[QDO_HIST_BUCKETS] = { };
	unsigned long reg = 0, exe = 0, inv = 0, wak = 0, tim = 0, mig = 0;
	unsigned int cpu, b;

	seq_puts(m, "cpu registered executed invoked wakeups timer migrated\n");
	for_each_possible_cpu(cpu) {
		struct qdo_cpu *qc = per_cpu_ptr(&qdo_cpus, cpu);

		seq_printf(m, "%u %lu %lu %lu %lu %lu %lu\n", cpu,
			   READ_ONCE(qc->nr_registered), READ_ONCE(qc->nr_executed),
			   READ_ONCE(qc->nr_invoked), READ_ONCE(qc->nr_wakeups),
			   READ_ONCE(qc->nr_timer), READ_ONCE(qc->nr_migrated));
		reg += READ_ONCE(qc->nr_registered);
		exe += READ_ONCE(qc->nr_executed);
		inv += READ_ONCE(qc->nr_invoked);
		wak += READ_ONCE(qc->nr_wakeups);
		tim += READ_ONCE(qc->nr_timer);
		mig += READ_ONCE(qc->nr_migrated);
		for (b = 0; b < QDO_HIST_BUCKETS; b++)
			hist[b] += READ_ONCE(qc->hist[b]);
	}
	seq_printf(m, "registered %lu\nexecuted %lu\ninvoked %lu\nwakeups %lu\n",
		   reg, exe, inv, wak);
	seq_printf(m, "timer %lu\nmigrated %lu\npending %lu\nhooks %d\nperiod_us %u\n",
		   tim, mig, qdo_inflight(0) + qdo_inflight(1),
		   static_key_enabled(&qdo_hooks_key), READ_ONCE(qdo_period_us));
	seq_printf(m, "daemon_ns %llu\n", qdo_daemon_ns());
	seq_puts(m, "latency_us_histogram (bucket: [2^(b-1), 2^b) us)\n");
	for (b = 0; b < QDO_HIST_BUCKETS; b++)
		if (hist[b])
			seq_printf(m, "lat_le_%lu %lu\n", 1UL << b, hist[b]);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(qdo_stats);

/* ---------------------------------------------------------------- init */

static void __init qdo_free_masks(void)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		free_cpumask_var(per_cpu(qdo_cpus, cpu).outstanding);
		free_cpumask_var(per_cpu(qdo_cpus, cpu).need);
	}
}

static int __init qdo_init(void)
{
	unsigned int cpu;
	int ret;

	for_each_possible_cpu(cpu) {
		struct qdo_cpu *qc = per_cpu_ptr(&qdo_cpus, cpu);

		qc->cpu = cpu;
		qc->wait_tail = &qc->wait;
		raw_spin_lock_init(&qc->lock);
		init_llist_head(&qc->intake);
		init_llist_head(&qc->exec);
		hrtimer_init(&qc->timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_PINNED_HARD);
		qc->timer.function = qdo_timer_fn;
		if (!zalloc_cpumask_var(&qc->outstanding, GFP_KERNEL) ||
		    !zalloc_cpumask_var(&qc->need, GFP_KERNEL)) {
			ret = -ENOMEM;
			goto err_masks;
		}
	}
	ret = smpboot_register_percpu_thread(&qdo_threads);
	if (ret)
		goto err_masks;
	/* With calls: the boot CPU is prepared here, the others as they come up. */
	ret = cpuhp_setup_state(CPUHP_BP_PREPARE_DYN, "qdo:prepare", qdo_cpu_prepare,
				qdo_cpu_dead);
	if (ret < 0)
		goto err_threads;
	WRITE_ONCE(qdo_initialized, true);
	return 0;

err_threads:
	smpboot_unregister_percpu_thread(&qdo_threads);
err_masks:
	qdo_free_masks();
	pr_err("not initialized: %d\n", ret);
	return ret;
}
early_initcall(qdo_init);

static int __init qdo_debugfs_init(void)
{
	struct dentry *dir = debugfs_create_dir("qdo", NULL);

	debugfs_create_file("stats", 0444, dir, NULL, &qdo_stats_fops);
	return 0;
}
late_initcall(qdo_debugfs_init);
