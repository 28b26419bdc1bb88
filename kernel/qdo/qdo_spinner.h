/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A kthread that spins with preemption disabled on one CPU: a QDo
 * read-side section that lasts until it is released.  Shared by the KUnit
 * tests of QDo (kernel/qdo/qdo_kunit.c) and of clustered objects
 * (lib/clustered_kunit.c) to show the subset property: a CPU outside a
 * request's quiescence mask that never passes a quiescent state must not
 * delay it.
 *
 * A boot-time stop_machine() (the TSC clocksource switch, for one) cannot
 * run while the spinner holds its CPU, and stalls the other CPUs too; the
 * spinner gives up after QDO_SPINNER_NS and sets ->timed_out, and the
 * caller treats its observations as void.
 */
#ifndef _KERNEL_QDO_SPINNER_H
#define _KERNEL_QDO_SPINNER_H

#include <linux/atomic.h>
#include <linux/delay.h>
#include <linux/err.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/preempt.h>
#include <linux/sched/task.h>

#define QDO_SPINNER_NS	(4 * NSEC_PER_SEC)

/**
 * struct qdo_spinner - a kthread in a long preempt-disabled section
 * @enter: called first inside the section (to take temporary references),
 *	or NULL; set before qdo_spinner_start()
 * @leave: called last inside the section (to use them once more), or NULL
 * @state: 0 starting, 1 spinning, 2 done
 * @release: set by qdo_spinner_stop() to end the section
 * @timed_out: the spinner gave up after QDO_SPINNER_NS
 * @task: the kthread
 */
struct qdo_spinner {
	void			(*enter)(struct qdo_spinner *s);
	void			(*leave)(struct qdo_spinner *s);
	atomic_t		state;
	bool			release;
	bool			timed_out;
	struct task_struct	*task;
};

static inline int qdo_spinner_fn(void *arg)
{
	struct qdo_spinner *s = arg;
	u64 deadline = ktime_get_ns() + QDO_SPINNER_NS;

	preempt_disable();
	if (s->enter)
		s->enter(s);
	atomic_set(&s->state, 1);
	while (!READ_ONCE(s->release)) {
		if (ktime_get_ns() > deadline) {
			WRITE_ONCE(s->timed_out, true);
			break;
		}
		cpu_relax();
	}
	if (s->leave)
		s->leave(s);
	atomic_set(&s->state, 2);
	preempt_enable();
	return 0;
}

/**
 * qdo_spinner_start() - start spinning on a CPU
 * @s: the spinner, with @s->enter and @s->leave set
 * @cpu: the CPU, online
 *
 * Context: process context, sleeps until the spinner is in its section.
 * Return: 0, or a negative errno from kthread_create_on_cpu().
 */
static inline int qdo_spinner_start(struct qdo_spinner *s, unsigned int cpu)
{
	struct task_struct *t;

	atomic_set(&s->state, 0);
	s->release = false;
	s->timed_out = false;
	t = kthread_create_on_cpu(qdo_spinner_fn, s, cpu, "qdo_spin/%u");
	if (IS_ERR(t))
		return PTR_ERR(t);
	get_task_struct(t);
	s->task = t;
	wake_up_process(t);
	while (atomic_read(&s->state) == 0)
		fsleep(1000);
	return 0;
}

/**
 * qdo_spinner_spinning() - is the spinner still in its section?
 * @s: the spinner
 *
 * Return: true while it spins.
 */
static inline bool qdo_spinner_spinning(struct qdo_spinner *s)
{
	return atomic_read(&s->state) == 1;
}

/**
 * qdo_spinner_stop() - end the section and reap the kthread
 * @s: a started spinner
 *
 * Context: process context, sleeps.
 * Return: true if the spinner had given up on its own (->timed_out): the
 * observations made while it was supposed to spin are void.
 */
static inline bool qdo_spinner_stop(struct qdo_spinner *s)
{
	WRITE_ONCE(s->release, true);
	kthread_stop(s->task);
	put_task_struct(s->task);
	s->task = NULL;
	return READ_ONCE(s->timed_out);
}

#endif /* _KERNEL_QDO_SPINNER_H */
