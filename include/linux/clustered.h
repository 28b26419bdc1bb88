/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Clustered objects: one logical object made of a root and representatives
 * ("reps") that serve one CPU, one NUMA node or every CPU, reached through a
 * per-CPU translation slot and created lazily on a miss.
 *
 * After Gamsa, "Tornado: maximizing locality and concurrency in a shared
 * memory multiprocessor operating system", PhD thesis, Toronto, 1999,
 * chapter 4, and Matthews, "SCOPE", MASc thesis, Toronto, 2006.  The
 * percpu allocator plays the part of Tornado's aliased per-processor
 * translation table: the hit path is one per-CPU load and a NULL test.
 *
 * Existence of temporary references (Tornado section 4.2.4).  A rep
 * pointer returned by clustered_rep() or met by clustered_for_each_rep(),
 * and an object returned by clustered_lookup(), is a temporary reference:
 * it may be used only inside the QDo read-side section (preempt-disabled
 * region, see <linux/qdo.h>) in which it was obtained, and never stored.
 * Every CPU that obtains one is recorded in the object's ->accessed mask
 * before it can, so phase 2 of clustered_destroy() waits for quiescence on
 * exactly those CPUs: a subset, not all CPUs.  Persistent references
 * (pointers to the object kept in other data structures) are the owner's
 * business and must all be gone before clustered_destroy() is called.
 */
#ifndef _LINUX_CLUSTERED_H
#define _LINUX_CLUSTERED_H

#include <linux/cpumask.h>
#include <linux/gfp_types.h>
#include <linux/percpu.h>
#include <linux/qdo.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/workqueue.h>

struct clustered_obj;

/**
 * enum clustered_degree - how many CPUs one representative serves
 * @CLUSTERED_PER_CPU: one rep per CPU that touches the object
 * @CLUSTERED_PER_NODE: one rep per NUMA node, shared by its CPUs
 * @CLUSTERED_SHARED: a single rep shared by every CPU
 */
enum clustered_degree {
	CLUSTERED_PER_CPU,
	CLUSTERED_PER_NODE,
	CLUSTERED_SHARED,
};

/**
 * struct clustered_ops - what an object type provides
 * @miss: the miss handler (Tornado's miss-handling object, section 4.2.2):
 *	return a new rep to serve @cpu, or NULL to have this access forwarded
 *	to the root.  Called with preemption disabled, possibly from interrupt
 *	context, so it must allocate with @gfp (GFP_NOWAIT).  Mandatory.
 * @cpu_dead: fold the state of @rep into the root after @cpu went offline
 *	(called on a control CPU, with the object table locked and
 *	interrupts disabled: must not sleep).  For shared degrees @rep
 *	serves other CPUs too.  Optional.
 * @free_rep: free a rep: in phase 3 of destruction, or when a miss lost a
 *	race to install its rep.  May be called in atomic context.  Mandatory.
 * @release: release the root, the last step of destruction; called in
 *	process context after an RCU grace period.  Mandatory.
 */
struct clustered_ops {
	void	*(*miss)(struct clustered_obj *co, unsigned int cpu, gfp_t gfp);
	void	(*cpu_dead)(struct clustered_obj *co, unsigned int cpu, void *rep);
	void	(*free_rep)(struct clustered_obj *co, void *rep);
	void	(*release)(struct clustered_obj *co);
};

/**
 * struct clustered_obj - the root of a clustered object
 * @slot: per-CPU translation slot: this CPU's rep, or NULL (a miss)
 * @ops: the type's operations
 * @degree: how reps are shared
 * @id: index in the object table
 * @dying: destruction started: misses forward to the root
 * @lock: serializes misses and destruction; a spinlock_t taken with
 *	preemption disabled, hence the !PREEMPT_RT dependency
 * @groups: per-node (or the single shared) reps
 * @nr_reps: reps instantiated
 * @nr_misses: slow-path entries
 * @accessed: CPUs that may hold temporary references (Tornado's
 *	processor set, section 4.2.4): the QDo quiescence mask of phase 2
 * @qdo: phase 2 request
 * @rwork: phase 4: release of the root after an RCU grace period
 *
 * Embed it in the root of the object; container_of() gets back to it.
 */
struct clustered_obj {
	void * __percpu			*slot;
	const struct clustered_ops	*ops;
	enum clustered_degree		degree;
	u32				id;
	bool				dying;
	spinlock_t			lock;		/* misses vs. destruction */
	void				**groups;
	unsigned int			nr_reps;
	unsigned long			nr_misses;
	cpumask_var_t			accessed;
	struct qdo_head			qdo;
	struct rcu_work			rwork;
};

int clustered_init(struct clustered_obj *co, const struct clustered_ops *ops,
		   enum clustered_degree degree, gfp_t gfp);
void clustered_destroy(struct clustered_obj *co);
void *clustered_miss(struct clustered_obj *co);
struct clustered_obj *clustered_lookup(u32 id);
void *clustered_next_rep(struct clustered_obj *co, int *pos);

/**
 * struct clustered_iter - state of clustered_for_each_rep()
 * @co: the object
 * @repp: the caller's cursor variable
 * @pos: a CPU (per-CPU degree) or a group index; INT_MAX at the end
 */
struct clustered_iter {
	struct clustered_obj	*co;
	void			**repp;
	int			pos;
};

struct clustered_iter clustered_iter_start(struct clustered_obj *co, void **repp);

/**
 * clustered_rep() - this CPU's representative of a clustered object
 * @co: the object
 *
 * The hit path: one per-CPU load and a NULL test (Tornado's one extra
 * instruction, section 4.2.1).  A miss calls the type's miss handler out
 * of line, which installs a new rep, shares an existing one, or forwards.
 *
 * Context: preemption disabled (the returned rep is a temporary reference,
 * see the top of this file); any context, NMI included (NMI forwards).
 * Return: the rep, or NULL if this access must be forwarded to the root
 * (no memory, NMI, or a miss on an object being destroyed; a CPU whose
 * slot is installed keeps getting its rep until the reps are freed).
 */
static __always_inline void *clustered_rep(struct clustered_obj *co)
{
	void *rep;

	lockdep_assert_preemption_disabled();
	rep = this_cpu_read(*co->slot);
	if (likely(rep))
		return rep;
	return clustered_miss(co);
}

/**
 * clustered_iter_next() - step clustered_for_each_rep()
 * @it: the iterator
 *
 * Return: true with the next rep in the cursor, false at the end.
 */
static inline bool clustered_iter_next(struct clustered_iter *it)
{
	*it->repp = clustered_next_rep(it->co, &it->pos);
	return *it->repp;
}

/**
 * clustered_for_each_rep - iterate over the instantiated representatives
 * @co: the object
 * @rep: cursor, a pointer to the type's rep
 *
 * Each rep is met once, shared ones included.  Context: preemption
 * disabled; records this CPU in @co->accessed (temporary references).
 * Reps may appear concurrently; a dying object yields nothing.
 */
#define clustered_for_each_rep(co, rep)					\
	for (struct clustered_iter __cl_it =				\
		clustered_iter_start(co, (void **)&(rep));		\
	     clustered_iter_next(&__cl_it);)

#endif /* _LINUX_CLUSTERED_H */
