// SPDX-License-Identifier: GPL-2.0
/*
 * Clustered objects (Gamsa 1999, chapter 4; Matthews 2006): lazily created
 * per-CPU, per-node or shared representatives behind a per-CPU translation
 * slot, an object table indexed by ID, CPU-hotplug folding, and phased
 * destruction whose quiescence wait covers only the CPUs that touched the
 * object (QDo, Tam 2006).
 *
 * Destruction (Tornado section 4.2.4):
 *  1. the owner removes every persistent reference, then calls
 *     clustered_destroy(), which marks the object dying (misses forward to
 *     the root from now on, so no new rep and no new ->accessed bit can
 *     appear; a CPU whose slot is already installed keeps hitting its
 *     rep until step 3, which the existence rule makes safe) and removes
 *     it from the table;
 *  2. QDo waits for a quiescent state on the CPUs of ->accessed only;
 *  3. the QDo callback frees the representatives;
 *  4. after an RCU grace period (lookups by ID run under RCU on any CPU)
 *     the slots are freed and ops->release() releases the root.
 *
 * PREEMPT_RT: the miss path allocates a rep and takes ->lock (spinlock_t)
 * inside the caller's preempt-disabled read-side section, which is not
 * allowed where spinlock_t and the slab allocator may sleep; and spinlock_t
 * sections there are no QDo read-side sections.  Clustered objects depend
 * on !PREEMPT_RT (see Documentation/core-api/qdo.rst).
 */

#define pr_fmt(fmt) "clustered: " fmt

#include <linux/clustered.h>
#include <linux/cpuhotplug.h>
#include <linux/debugfs.h>
#include <linux/export.h>
#include <linux/hardirq.h>
#include <linux/init.h>
#include <linux/nodemask.h>
#include <linux/rcupdate.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/topology.h>
#include <linux/xarray.h>

/*
 * The table lock is taken with interrupts off (XA_FLAGS_LOCK_IRQ), so that
 * clustered_init() and clustered_destroy() may be called with interrupts
 * disabled or from interrupt context when their allocations do not sleep.
 */
static DEFINE_XARRAY_FLAGS(clustered_table, XA_FLAGS_ALLOC | XA_FLAGS_LOCK_IRQ);
static u32 clustered_next_id;

static unsigned int clustered_group(struct clustered_obj *co, unsigned int cpu)
{
	return co->degree == CLUSTERED_PER_NODE ? cpu_to_node(cpu) : 0;
}

/**
 * clustered_init() - create a clustered object
 * @co: the root, embedded in the object
 * @ops: the type's operations (@ops->miss, ->free_rep, ->release required)
 * @degree: one rep per CPU, per node, or a single shared one
 * @gfp: allocation flags for the slot, the group array and the table entry
 *
 * No rep is created here: each CPU creates or finds its own on its first
 * access (Tornado section 4.2.2), so reps exist only where the object is
 * used.  The object is entered in the object table.
 *
 * Context: process context if @gfp may sleep; otherwise any context
 * except NMI, interrupts disabled or not (the table lock is irq-safe).
 * Takes the table lock.
 * Return: 0, -EINVAL for missing ops, -ENOMEM, or -EBUSY when the table is
 * full.
 */
int clustered_init(struct clustered_obj *co, const struct clustered_ops *ops,
		   enum clustered_degree degree, gfp_t gfp)
{
	unsigned int groups = degree == CLUSTERED_PER_NODE ? nr_node_ids : 1;
	unsigned long flags;
	int ret;

	if (!ops || !ops->miss || !ops->free_rep || !ops->release ||
	    degree > CLUSTERED_SHARED)
		return -EINVAL;
	memset(co, 0, sizeof(*co));
	co->ops = ops;
	co->degree = degree;
	spin_lock_init(&co->lock);
	co->slot = alloc_percpu_gfp(void *, gfp);
	if (!co->slot)
		return -ENOMEM;
	ret = -ENOMEM;
	if (degree != CLUSTERED_PER_CPU) {
		co->groups = kcalloc(groups, sizeof(*co->groups), gfp);
		if (!co->groups)
			goto err_slot;
	}
	if (!zalloc_cpumask_var(&co->accessed, gfp))
		goto err_groups;
	/* irqsave: callers may have interrupts off (non-sleeping @gfp). */
	xa_lock_irqsave(&clustered_table, flags);
	ret = __xa_alloc_cyclic(&clustered_table, &co->id, co, xa_limit_31b,
				&clustered_next_id, gfp);
	xa_unlock_irqrestore(&clustered_table, flags);
	if (ret < 0)
		goto err_mask;
	return 0;

err_mask:
	free_cpumask_var(co->accessed);
err_groups:
	kfree(co->groups);
err_slot:
	free_percpu(co->slot);
	return ret;
}
EXPORT_SYMBOL_GPL(clustered_init);

/* Record this CPU as a holder of temporary references; false if dying. */
static bool clustered_touch(struct clustered_obj *co, unsigned int cpu)
{
	if (!cpumask_test_cpu(cpu, co->accessed)) {
		cpumask_set_cpu(cpu, co->accessed);
		/* Pairs with the barrier between ->dying and the QDo snapshot. */
		smp_mb__after_atomic();
	}
	return !READ_ONCE(co->dying);
}

/**
 * clustered_miss() - slow path of clustered_rep()
 * @co: the object
 *
 * Finds the rep this CPU should use: the node's or the shared one if it
 * exists, else a new one from @co->ops->miss, installed in this CPU's slot
 * (and in the group for shared degrees).  This CPU is added to
 * @co->accessed before the rep becomes reachable from it.
 *
 * Context: preemption disabled; any context.  Takes @co->lock.
 * Return: the rep, or NULL to forward the access to the root (NMI, no
 * memory, or the object is dying).
 */
void *clustered_miss(struct clustered_obj *co)
{
	unsigned int cpu = smp_processor_id();
	unsigned int g = clustered_group(co, cpu);
	void *rep = NULL, *new = NULL;
	unsigned long flags;

	lockdep_assert_preemption_disabled();
	if (in_nmi())
		return NULL;
	/* Rechecked under the lock; this only spares a dying object allocations. */
	if (READ_ONCE(co->dying))
		return NULL;
	if (co->degree == CLUSTERED_PER_CPU || !READ_ONCE(co->groups[g]))
		new = co->ops->miss(co, cpu, GFP_NOWAIT | __GFP_NOWARN);

	spin_lock_irqsave(&co->lock, flags);
	WRITE_ONCE(co->nr_misses, co->nr_misses + 1);
	if (co->dying)
		goto out;
	rep = this_cpu_read(*co->slot);
	if (rep)
		goto out;	/* an interrupt installed one meanwhile */
	if (co->degree != CLUSTERED_PER_CPU) {
		if (!co->groups[g] && new) {
			/*
			 * Release: clustered_next_rep() on another CPU reads
			 * the pointer without the lock and must see the rep
			 * initialised by ->miss().
			 */
			smp_store_release(&co->groups[g], new);
			WRITE_ONCE(co->nr_reps, co->nr_reps + 1);
			new = NULL;
		}
		rep = co->groups[g];
	} else if (new) {
		rep = new;
		new = NULL;
		WRITE_ONCE(co->nr_reps, co->nr_reps + 1);
	}
	if (rep) {
		cpumask_set_cpu(cpu, co->accessed);
		/* Release, as above: remote iterators read the slot. */
		smp_store_release(this_cpu_ptr(co->slot), rep);
	}
out:
	spin_unlock_irqrestore(&co->lock, flags);
	if (new)
		co->ops->free_rep(co, new);
	return rep;
}
EXPORT_SYMBOL_GPL(clustered_miss);

/**
 * clustered_lookup() - find an object by its ID
 * @id: @co->id
 *
 * Context: rcu_read_lock() and preemption disabled; the object is a
 * temporary reference (this CPU joins @co->accessed).
 * Return: the object, or NULL if there is none or it is being destroyed.
 */
struct clustered_obj *clustered_lookup(u32 id)
{
	struct clustered_obj *co;

	lockdep_assert_in_rcu_read_lock();
	lockdep_assert_preemption_disabled();
	co = xa_load(&clustered_table, id);
	if (co && !clustered_touch(co, smp_processor_id()))
		co = NULL;
	return co;
}
EXPORT_SYMBOL_GPL(clustered_lookup);

/**
 * clustered_iter_start() - start clustered_for_each_rep()
 * @co: the object
 * @repp: the caller's cursor
 *
 * Records this CPU in @co->accessed, so that the reps it meets stay valid
 * until the end of its read-side section.
 *
 * Context: preemption disabled.
 * Return: the iterator, already at its end if @co is dying.
 */
struct clustered_iter clustered_iter_start(struct clustered_obj *co, void **repp)
{
	struct clustered_iter it = {
		.co = co,
		.repp = repp,
	};

	lockdep_assert_preemption_disabled();
	it.pos = clustered_touch(co, smp_processor_id()) ? -1 : INT_MAX;
	return it;
}
EXPORT_SYMBOL_GPL(clustered_iter_start);

/**
 * clustered_next_rep() - step clustered_for_each_rep()
 * @co: the object
 * @pos: iterator state: a CPU (per-CPU degree) or group index
 *
 * Context: preemption disabled, after clustered_iter_start().
 * Return: the next instantiated rep, or NULL at the end.
 */
void *clustered_next_rep(struct clustered_obj *co, int *pos)
{
	unsigned int groups = co->degree == CLUSTERED_PER_NODE ? nr_node_ids : 1;
	void *rep;

	lockdep_assert_preemption_disabled();
	if (*pos == INT_MAX)
		return NULL;
	if (co->degree == CLUSTERED_PER_CPU) {
		for (;;) {
			*pos = cpumask_next(*pos, co->accessed);
			if (*pos >= nr_cpu_ids)
				break;
			rep = READ_ONCE(*per_cpu_ptr(co->slot, *pos));
			if (rep)
				return rep;
		}
	} else {
		while (++*pos < groups) {
			rep = READ_ONCE(co->groups[*pos]);
			if (rep)
				return rep;
		}
	}
	*pos = INT_MAX;
	return NULL;
}
EXPORT_SYMBOL_GPL(clustered_next_rep);

static void clustered_release_fn(struct work_struct *work)
{
	struct clustered_obj *co = container_of(to_rcu_work(work),
						struct clustered_obj, rwork);

	free_percpu(co->slot);
	kfree(co->groups);
	free_cpumask_var(co->accessed);
	co->ops->release(co);
}

/* Phase 3, in process context once every CPU of ->accessed was quiescent. */
static void clustered_phase3(struct qdo_head *head)
{
	struct clustered_obj *co = container_of(head, struct clustered_obj, qdo);
	unsigned int cpu, g, groups;
	void *rep;

	if (co->degree == CLUSTERED_PER_CPU) {
		for_each_cpu(cpu, co->accessed) {
			rep = *per_cpu_ptr(co->slot, cpu);
			if (rep)
				co->ops->free_rep(co, rep);
		}
	} else {
		groups = co->degree == CLUSTERED_PER_NODE ? nr_node_ids : 1;
		for (g = 0; g < groups; g++)
			if (co->groups[g])
				co->ops->free_rep(co, co->groups[g]);
	}
	/* Phase 4: lookups by ID may run on any CPU, under RCU. */
	INIT_RCU_WORK(&co->rwork, clustered_release_fn);
	queue_rcu_work(system_wq, &co->rwork);
}

/**
 * clustered_destroy() - phased destruction of a clustered object
 * @co: the object; the owner must have removed every persistent reference
 *
 * Marks @co dying (accesses that miss now forward to the root), removes it
 * from the object table, and registers a QDo callback that waits for a
 * quiescent state on the CPUs that may hold temporary references, the
 * CPUs of @co->accessed only, then frees the representatives; the root is
 * released through @co->ops->release after a further RCU grace period.
 * Returns at once: destruction completes asynchronously (qdo_barrier()
 * followed by rcu_barrier() and flush_workqueue(system_wq) waits for it).
 *
 * Context: process context.  Does not sleep once QDo is initialized
 * (before, it waits for an RCU grace period), so it may be called inside a
 * QDo read-side section.  Takes @co->lock and the table lock.
 */
void clustered_destroy(struct clustered_obj *co)
{
	unsigned long flags;

	spin_lock_irqsave(&co->lock, flags);
	WRITE_ONCE(co->dying, true);
	spin_unlock_irqrestore(&co->lock, flags);
	xa_lock_irqsave(&clustered_table, flags);
	__xa_erase(&clustered_table, co->id);
	xa_unlock_irqrestore(&clustered_table, flags);
	/* ->dying before QDo reads ->accessed; pairs with clustered_touch(). */
	smp_mb();
	if (WARN_ON_ONCE(qdo_call(&co->qdo, clustered_phase3, co->accessed,
				  cpumask_of(raw_smp_processor_id())))) {
		synchronize_rcu();
		clustered_phase3(&co->qdo);
	}
}
EXPORT_SYMBOL_GPL(clustered_destroy);

/* A CPU died: let every object fold that CPU's rep into its root. */
static int clustered_cpu_dead(unsigned int cpu)
{
	struct clustered_obj *co;
	unsigned long id;
	void *rep;

	xa_lock_irq(&clustered_table);
	xa_for_each(&clustered_table, id, co) {
		rep = READ_ONCE(*per_cpu_ptr(co->slot, cpu));
		if (rep && co->ops->cpu_dead)
			co->ops->cpu_dead(co, cpu, rep);
	}
	xa_unlock_irq(&clustered_table);
	return 0;
}

static const char * const clustered_degree_names[] = {
	[CLUSTERED_PER_CPU] = "per-cpu",
	[CLUSTERED_PER_NODE] = "per-node",
	[CLUSTERED_SHARED] = "shared",
};

static int clustered_objects_show(struct seq_file *m, void *v)
{
	struct clustered_obj *co;
	unsigned long id;

	seq_puts(m, "id degree reps misses accessed\n");
	xa_lock_irq(&clustered_table);
	xa_for_each(&clustered_table, id, co)
		seq_printf(m, "%lu %s %u %lu %*pbl\n", id, clustered_degree_names[co->degree],
			   READ_ONCE(co->nr_reps), READ_ONCE(co->nr_misses),
			   cpumask_pr_args(co->accessed));
	xa_unlock_irq(&clustered_table);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(clustered_objects);

static int __init clustered_init_table(void)
{
	int ret;

	ret = cpuhp_setup_state_nocalls(CPUHP_BP_PREPARE_DYN, "clustered:dead", NULL,
					clustered_cpu_dead);
	if (ret < 0)
		return ret;
	debugfs_create_file("objects", 0444, debugfs_create_dir("clustered", NULL), NULL,
			    &clustered_objects_fops);
	return 0;
}
core_initcall(clustered_init_table);
