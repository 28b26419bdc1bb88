/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A clustered counter: the worked example of <linux/clustered.h>, after
 * Tornado's per-processor counter (Gamsa 1999, section 4.4.2, Fig. 4.11).
 * Increments go to this CPU's representative, created on the CPU's first
 * increment; a read folds the root and every representative.
 */
#ifndef _LINUX_CLUSTERED_COUNTER_H
#define _LINUX_CLUSTERED_COUNTER_H

#include <linux/atomic.h>
#include <linux/clustered.h>
#include <linux/preempt.h>
#include <asm/local.h>

/**
 * struct clustered_counter - a counter with per-CPU representatives
 * @co: the clustered object
 * @root: the count folded from dead CPUs, plus forwarded increments
 * @lock: serializes exact sums against hotplug folds
 * @release: called once destruction completes (may be NULL)
 */
struct clustered_counter {
	struct clustered_obj	co;
	atomic_long_t		root;
	spinlock_t		lock;		/* sums vs. hotplug folds */
	void			(*release)(struct clustered_counter *cc);
};

/**
 * struct clustered_counter_rep - one CPU's share of the count
 * @count: updated only by its CPU, with local_add(); read by everyone
 *
 * A cache line each, so that CPUs never share one.
 */
struct clustered_counter_rep {
	local_t	count;
} ____cacheline_aligned_in_smp;

int clustered_counter_init(struct clustered_counter *cc, gfp_t gfp);
void clustered_counter_destroy(struct clustered_counter *cc,
			       void (*release)(struct clustered_counter *cc));
long clustered_counter_sum(struct clustered_counter *cc);

/**
 * clustered_counter_add() - add to a clustered counter
 * @cc: the counter
 * @delta: the amount
 *
 * The hit path is clustered_rep() and a local_add() on this CPU's own
 * cache line: no atomic instruction, no shared line.  A CPU that cannot
 * get a representative (no memory, NMI) adds to the root atomically.
 *
 * Context: any context, NMI included.
 */
static inline void clustered_counter_add(struct clustered_counter *cc, long delta)
{
	struct clustered_counter_rep *rep;

	preempt_disable_notrace();
	rep = clustered_rep(&cc->co);
	if (likely(rep))
		local_add(delta, &rep->count);
	else
		atomic_long_add(delta, &cc->root);
	preempt_enable_notrace();
}

#endif /* _LINUX_CLUSTERED_COUNTER_H */
