// SPDX-License-Identifier: GPL-2.0
/*
 * Clustered counter: per-CPU representatives created on first use, folded
 * on read and on CPU hotplug, destroyed after QDo quiescence on the CPUs
 * that used it.  See <linux/clustered_counter.h>.
 */

#include <linux/clustered_counter.h>
#include <linux/export.h>
#include <linux/slab.h>
#include <linux/topology.h>

static void *clustered_counter_miss(struct clustered_obj *co, unsigned int cpu, gfp_t gfp)
{
	return kzalloc_node(sizeof(struct clustered_counter_rep), gfp, cpu_to_node(cpu));
}

static void clustered_counter_cpu_dead(struct clustered_obj *co, unsigned int cpu, void *p)
{
	struct clustered_counter *cc = container_of(co, struct clustered_counter, co);
	struct clustered_counter_rep *rep = p;
	unsigned long flags;

	/* Interrupts disabled: see struct clustered_ops. */
	lockdep_assert_irqs_disabled();
	spin_lock_irqsave(&cc->lock, flags);
	atomic_long_add(local_xchg(&rep->count, 0), &cc->root);
	spin_unlock_irqrestore(&cc->lock, flags);
}

static void clustered_counter_free_rep(struct clustered_obj *co, void *rep)
{
	kfree(rep);
}

static void clustered_counter_release(struct clustered_obj *co)
{
	struct clustered_counter *cc = container_of(co, struct clustered_counter, co);

	if (cc->release)
		cc->release(cc);
}

static const struct clustered_ops clustered_counter_ops = {
	.miss		= clustered_counter_miss,
	.cpu_dead	= clustered_counter_cpu_dead,
	.free_rep	= clustered_counter_free_rep,
	.release	= clustered_counter_release,
};

/**
 * clustered_counter_init() - set up a clustered counter at zero
 * @cc: the counter
 * @gfp: allocation flags (for the per-CPU slot and the table entry)
 *
 * Context: process context if @gfp may sleep.
 * Return: 0 or a negative errno from clustered_init().
 */
int clustered_counter_init(struct clustered_counter *cc, gfp_t gfp)
{
	atomic_long_set(&cc->root, 0);
	spin_lock_init(&cc->lock);
	cc->release = NULL;
	return clustered_init(&cc->co, &clustered_counter_ops, CLUSTERED_PER_CPU, gfp);
}
EXPORT_SYMBOL_GPL(clustered_counter_init);

/**
 * clustered_counter_sum() - the exact value of a clustered counter
 * @cc: the counter
 *
 * Folds the root and every representative, O(CPUs that used the counter)
 * (Tornado Fig. 4.11b: reads pay for cheap increments).  Exact when no
 * increment runs concurrently; hotplug folds are excluded by @cc->lock.
 *
 * Context: any context except NMI; takes @cc->lock.
 * Return: the sum.
 */
long clustered_counter_sum(struct clustered_counter *cc)
{
	struct clustered_counter_rep *rep;
	unsigned long flags;
	long sum;

	spin_lock_irqsave(&cc->lock, flags);
	sum = atomic_long_read(&cc->root);
	clustered_for_each_rep(&cc->co, rep)
		sum += local_read(&rep->count);
	spin_unlock_irqrestore(&cc->lock, flags);
	return sum;
}
EXPORT_SYMBOL_GPL(clustered_counter_sum);

/**
 * clustered_counter_destroy() - destroy a clustered counter
 * @cc: the counter; no one may use it any more (phase 1 is done)
 * @release: called in process context when the counter's memory may be
 *	freed, or NULL
 *
 * Context: process context.  See clustered_destroy().
 */
void clustered_counter_destroy(struct clustered_counter *cc,
			       void (*release)(struct clustered_counter *cc))
{
	cc->release = release;
	clustered_destroy(&cc->co);
}
EXPORT_SYMBOL_GPL(clustered_counter_destroy);
