/* SPDX-License-Identifier: GPL-2.0 */
/*
 * QDo: quiescent-state callbacks with a quiescence CPU set and an
 * execution CPU set.
 *
 * After Tam, "QDo: a quiescent-state callback facility", MASc thesis,
 * University of Toronto, 2006 (K42).  See kernel/qdo/qdo.c for the design.
 *
 * Read-side sections: a QDo reader is any region that runs with preemption
 * disabled (explicitly, or implicitly under a spinlock, with interrupts
 * disabled, or in hard/soft interrupt context): RCU-sched semantics.  A CPU
 * passes a quiescent state when it context-switches, when it is idle (or
 * offline), and when the tick interrupts user mode (or, with
 * CONFIG_PREEMPT_COUNT, kernel code outside any read-side section).
 * Without CONFIG_PREEMPT_COUNT, a CPU that loops in the kernel delays the
 * requests that wait for it until it schedules or calls qdo_qs(): QDo
 * forces no quiescent state.  On PREEMPT_RT, spinlock_t sections are
 * preemptible and are not read-side sections.
 *
 * See Documentation/core-api/qdo.rst.
 */
#ifndef _LINUX_QDO_H
#define _LINUX_QDO_H

#include <linux/cpumask.h>
#include <linux/irqflags.h>
#include <linux/jump_label.h>
#include <linux/llist.h>
#include <linux/lockdep.h>
#include <linux/preempt.h>
#include <linux/types.h>

struct qdo_head;

/**
 * typedef qdo_func_t - a QDo callback
 * @head: the &struct qdo_head that was registered; use container_of()
 *	to reach the enclosing object.
 *
 * Runs in process context (a per-CPU QDo kthread) and may sleep, but it
 * delays the other callbacks of that CPU while it runs.
 */
typedef void (*qdo_func_t)(struct qdo_head *head);

/**
 * struct qdo_head - a QDo request, embedded in the client's object
 * @node: list linkage inside QDo
 * @func: the callback
 * @qmask: CPUs on which quiescence is awaited
 * @emask: CPUs on which @func runs, one after the other
 * @round: detection round of the registering CPU (internal)
 * @t_reg: registration time in ns, for the latency histogram (internal)
 * @cursor: the execution CPU whose turn it is (internal)
 * @phase: barrier phase the request was counted in (internal)
 * @last: the invocation in progress is the last one (see qdo_is_last())
 *
 * Like &struct rcu_head, this is embedded in the object to be reclaimed,
 * so that registration never allocates.  All fields belong to QDo from
 * qdo_call() until the last invocation of @func.
 */
struct qdo_head {
	struct llist_node	node;
	qdo_func_t		func;
	const struct cpumask	*qmask;
	const struct cpumask	*emask;
	unsigned long		round;
	u64			t_reg;
	unsigned int		cursor;
	u8			phase;
	bool			last;
};

#ifdef CONFIG_QDO

DECLARE_STATIC_KEY_FALSE(qdo_hooks_key);

#if IS_ENABLED(CONFIG_KUNIT)
/* The daemon period in microseconds (qdo.period_us), for KUnit. */
extern unsigned int qdo_period_us;
#endif

void __qdo_qs(bool full_barrier);

/*
 * Scheduler, idle and tick hooks.  They are a patched-out jump while no
 * QDo request is pending anywhere, so that QDo costs nothing when unused.
 */

/**
 * qdo_note_context_switch() - scheduler hook: a context switch is quiescent
 *
 * Context: __schedule(), interrupts disabled.
 */
static __always_inline void qdo_note_context_switch(void)
{
	lockdep_assert_irqs_disabled();
	/* __schedule() orders this by rq->lock + smp_mb__after_spinlock(). */
	if (static_branch_unlikely(&qdo_hooks_key))
		__qdo_qs(false);
}

/**
 * qdo_idle_enter() - idle-loop hook: (re-)entering idle is quiescent
 *
 * Context: do_idle(), the idle task of this CPU.
 */
static __always_inline void qdo_idle_enter(void)
{
	if (static_branch_unlikely(&qdo_hooks_key))
		__qdo_qs(true);
}

void __qdo_tick(int user);

/**
 * qdo_tick() - tick hook, see __qdo_tick()
 * @user: the tick interrupted user mode
 *
 * Context: hard interrupt, from update_process_times().
 */
static __always_inline void qdo_tick(int user)
{
	if (static_branch_unlikely(&qdo_hooks_key))
		__qdo_tick(user);
}

/**
 * qdo_qs() - report a quiescent state on this CPU
 *
 * For long-running kernel loops that would otherwise delay QDo callbacks
 * whose quiescence mask includes this CPU (compare cond_resched() and
 * rcu_all_qs()).  Context: any context outside a QDo read-side section.
 */
static inline void qdo_qs(void)
{
	if (static_branch_unlikely(&qdo_hooks_key)) {
		/* Stay on the CPU whose generation is advanced. */
		preempt_disable();
		__qdo_qs(true);
		preempt_enable();
	}
}

/**
 * qdo_is_last() - is this the last invocation of a request's callback?
 * @head: the request, as passed to the callback
 *
 * With more than one CPU in its execution mask a callback runs once per
 * online CPU of the mask, one CPU after the other, and only the last
 * invocation may free or re-register @head.  QDo decides before each
 * invocation whether another one follows, from the CPUs online then; an
 * execution CPU that goes offline later is run in its place by another
 * CPU, so the answer stays exact under CPU hotplug.
 *
 * Context: only inside the callback of @head.
 * Return: true in the last invocation, false if another one follows.
 */
static inline bool qdo_is_last(const struct qdo_head *head)
{
	return head->last;
}

int qdo_call(struct qdo_head *head, qdo_func_t func,
	     const struct cpumask *qmask, const struct cpumask *emask);
void qdo_synchronize(const struct cpumask *qmask);
void qdo_barrier(void);
unsigned long qdo_get_state(void);
unsigned long qdo_start_poll(void);
bool qdo_poll_state(unsigned long cookie);
u64 qdo_daemon_ns(void);

#else /* !CONFIG_QDO */

static inline void qdo_note_context_switch(void) { }
static inline void qdo_idle_enter(void) { }
static inline void qdo_tick(int user) { }
static inline void qdo_qs(void) { }

#endif /* CONFIG_QDO */

#endif /* _LINUX_QDO_H */
