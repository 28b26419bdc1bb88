// SPDX-License-Identifier: GPL-2.0
/*
 * OpLog's per-CPU log caches: eviction of a slot's log, the shrinker's
 * clock over the slots, the drain of a type, CPU hotplug, and the
 * clustered object whose per-CPU representatives the caches are (thesis
 * section 7: a table of logs per CPU, here two-way set associative).  Every path here
 * takes a victim's object lock with spin_trylock() under its cache lock
 * (lib/oplog.c states the lock order), and those that walk several CPUs
 * hold oplog_types_lock.
 */

#define pr_fmt(fmt) "oplog: " fmt

#include <linux/clustered.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/export.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/oplog.h>
#include <linux/sched.h>
#include <linux/shrinker.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include "oplog_internal.h"

/*
 * The body of oplog_evict_cpu() for slot @i of @cpu's @cache: detach its
 * log if it is idle (or @idle_only is false) and its object's lock can be
 * had.  A function of its own, so that the trylock and its unlock are not
 * in a loop (sparse cannot follow that).  Returns true if a log was
 * detached.
 */
static bool oplog_evict_slot(struct oplog_type *type, struct oplog_cache *cache,
			     unsigned int cpu, unsigned int i, bool idle_only)
{
	const struct oplog_type_ops *ops = type->ops;
	struct oplog_log *log;
	struct oplog_obj *obj;
	spinlock_t *lock;	/* @obj's object lock */
	LIST_HEAD(batch);
	bool used, left = false;
	long delta = 0;

	raw_spin_lock(&cache->lock);
	log = cache->slots[i];
	if (!log)
		goto out_unlock;
	if (!log->obj) {
		/* Vacant: no object to apply, only memory to give back. */
		WRITE_ONCE(cache->slots[i], NULL);
		WRITE_ONCE(cache->nr_vacant, cache->nr_vacant - 1);
		raw_spin_unlock(&cache->lock);
		oplog_retire(log);
		return true;
	}
	if (idle_only) {
		raw_spin_lock(&log->lock);
		used = READ_ONCE(log->referenced);
		WRITE_ONCE(log->referenced, false);
		raw_spin_unlock(&log->lock);
		if (used)
			goto out_unlock;
	}
	obj = log->obj;
	lock = oplog_lock_of(type, obj);
	if (!spin_trylock(lock))
		goto out_unlock;
	raw_spin_unlock(&cache->lock);

	log = oplog_collect(type, obj, cpu, U64_MAX, OPLOG_DETACH_FREE, &batch,
			    &delta, &left);
	if (log) {
		if (oplog_exact_bits())
			WRITE_ONCE(obj->cpus, obj->cpus & ~oplog_cpu_bit(cpu));
		oplog_retire(log);
		oplog_apply_evicted(type, obj, cpu, &batch, delta);
		if (ops->detach)
			ops->detach(obj);
	}
	spin_unlock(lock);
	return log;

out_unlock:
	raw_spin_unlock(&cache->lock);
	return false;
}

/*
 * Detach logs of @cpu's cache, scanning at most @scan slots from its clock
 * hand: every log (the CPU died), or those not used since the hand last
 * passed them (the shrinker's clock algorithm).  Each victim is trylocked
 * under the cache lock, which keeps it alive, then its operations are
 * applied under its lock by oplog_apply_evicted() (a counter folds @cpu's
 * delta alone).  A busy object is skipped: its log stays correct, as every
 * synchronize visits all possible CPUs, online or not.  Called with
 * oplog_types_lock held.  Returns the number of logs detached.
 */
static unsigned long oplog_evict_cpu(struct oplog_type *type, unsigned int cpu,
				     bool idle_only, unsigned long scan)
{
	struct oplog_cache *cache = oplog_cache_of(type, cpu);
	unsigned long done = 0;
	unsigned int i;

	lockdep_assert_held(&oplog_types_lock);

	if (!cache)
		return 0;
	for (scan = min_t(unsigned long, scan, type->nr_slots); scan; scan--) {
		cond_resched();
		i = cache->hand;
		cache->hand = (i + 1) & (type->nr_slots - 1);
		done += oplog_evict_slot(type, cache, cpu, i, idle_only);
	}
	return done;
}

/*
 * Sum every CPU's count of objects' logs, or of vacant logs if @vacant.
 * Each count is written under its cache lock; this reads them without it.
 */
static unsigned long oplog_type_sum(struct oplog_type *type, bool vacant)
{
	struct oplog_cache *cache;
	unsigned long n = 0;
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		cache = oplog_cache_of(type, cpu);
		if (cache)
			n += vacant ? READ_ONCE(cache->nr_vacant) :
				      READ_ONCE(cache->nr_logs);
	}
	return n;
}

/**
 * oplog_type_nr_logs() - how many logs a type has
 * @type: a registered type
 *
 * Sums the per-CPU counts of logs in the slots of @type's log caches, at
 * the time of the call: there is no global counter for the hit or miss
 * paths to write.  Only logs of an object count: not the vacant ones that
 * flushes leave in their slots for reuse, nor logs retired but not yet
 * freed.
 *
 * Context: any; lockless, so only a snapshot while CPUs queue.
 * Return: the number of (object, CPU) logs of @type.
 */
unsigned long oplog_type_nr_logs(struct oplog_type *type)
{
	return oplog_type_sum(type, false);
}
EXPORT_SYMBOL_GPL(oplog_type_nr_logs);

/* Vacant logs of @type in every CPU's cache: a snapshot. */
unsigned long oplog_type_nr_vacant(struct oplog_type *type)
{
	return oplog_type_sum(type, true);
}

/*
 * Logs in @cpu's cache of @type, objects' and vacant ones (0 if it has no
 * cache).  Read under the cache lock: a flush moves a log from one count
 * to the other under it, and oplog_cpu_dead() must not see the log in
 * neither.  Context: may not be called under a cache lock.
 */
unsigned int oplog_cpu_nr_logs(struct oplog_type *type, unsigned int cpu)
{
	struct oplog_cache *cache = oplog_cache_of(type, cpu);
	unsigned int n;

	if (!cache)
		return 0;
	raw_spin_lock(&cache->lock);
	n = cache->nr_logs + cache->nr_vacant;
	raw_spin_unlock(&cache->lock);
	return n;
}

/**
 * oplog_type_drain() - detach every log of a type
 * @type: a registered type
 *
 * Applies and detaches the logs of every CPU's cache, as CPU hotplug does
 * for a dead CPU, and retries the objects whose lock was busy until no log
 * is left.  The caller must make sure that no new log is attached
 * meanwhile (its ->attach refuses), or this may not return; a user's
 * switch that turns its OpLog path off uses it so that, afterwards, no
 * object has a log at all (fs/dcache_oplog.c).
 *
 * Context: process context, sleeps; not with an object lock held.
 */
void oplog_type_drain(struct oplog_type *type)
{
	unsigned int cpu;

	for (;;) {
		mutex_lock(&oplog_types_lock);
		for_each_possible_cpu(cpu)
			oplog_evict_cpu(type, cpu, false, ULONG_MAX);
		mutex_unlock(&oplog_types_lock);
		if (!oplog_type_nr_logs(type))
			return;
		usleep_range(500, 1000);
	}
}
EXPORT_SYMBOL_GPL(oplog_type_drain);

/* ---- log caches: the clustered object ---- */

static void oplog_cache_free(struct clustered_obj *co, void *rep)
{
	struct oplog_cache *cache = rep;

	if (cache) {
		kvfree(cache->slots);
		kfree(cache);
	}
}

struct oplog_cache *oplog_cache_alloc(struct oplog_type *type,
				      unsigned int cpu, gfp_t gfp)
{
	struct oplog_cache *cache;
	int node = cpu_to_node(cpu);

	cache = kzalloc_node(sizeof(*cache), gfp, node);
	if (!cache)
		return NULL;
	/* A one-slot cache's second way stays NULL: oplog_hit_log(). */
	cache->slots = kvcalloc_node(max(type->nr_slots, OPLOG_WAYS),
				     sizeof(*cache->slots), gfp, node);
	if (!cache->slots) {
		kfree(cache);
		return NULL;
	}
	raw_spin_lock_init(&cache->lock);
	lockdep_set_class(&cache->lock, &type->cache_key);
	return cache;
}

/*
 * The caches' miss handler: hand @cpu the cache reserved for it at
 * registration, so that the hit path never depends on an atomic order-3
 * allocation (it only allocates if that reservation failed).
 */
static void *oplog_cache_miss(struct clustered_obj *co, unsigned int cpu,
			      gfp_t gfp)
{
	struct oplog_type *type = container_of(co, struct oplog_type, caches);
	void *cache = xchg(per_cpu_ptr(type->spares, cpu), NULL);

	return cache ?: oplog_cache_alloc(type, cpu, gfp);
}

void oplog_free_spares(struct oplog_type *type)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu)
		oplog_cache_free(&type->caches,
				 xchg(per_cpu_ptr(type->spares, cpu), NULL));
	free_percpu(type->spares);
	type->spares = NULL;
	free_percpu(type->uncached_stats);
	type->uncached_stats = NULL;
}

static void oplog_cache_release(struct clustered_obj *co)
{
	complete(&container_of(co, struct oplog_type, caches)->released);
}

const struct clustered_ops oplog_cache_ops = {
	.miss		= oplog_cache_miss,
	.free_rep	= oplog_cache_free,
	.release	= oplog_cache_release,
};

/*
 * A CPU died: apply and detach all its logs, so that their memory and the
 * objects' attachments go (what it logged would not be lost otherwise:
 * every synchronize visits offline CPUs' logs too).  oplog_evict_cpu()
 * skips an object whose lock is busy; nothing attaches a log to a dead
 * CPU's cache (only a CPU's own queue() does), so retrying until the
 * cache is empty ends once those holders unlock.  Empty counts vacant
 * logs too: the holder may be a flush that vacates the log after the
 * pass has scanned its slot, and the next pass frees it.  The mutex is
 * dropped between passes, for the shrinker's trylock.
 */
int oplog_cpu_dead(unsigned int cpu)
{
	unsigned long passes = 0;
	struct oplog_type *type;
	bool left;

	for (;; passes++) {
		left = false;
		mutex_lock(&oplog_types_lock);
		list_for_each_entry(type, &oplog_types, list) {
			oplog_evict_cpu(type, cpu, false, ULONG_MAX);
			left |= oplog_cpu_nr_logs(type, cpu) != 0;
		}
		mutex_unlock(&oplog_types_lock);
		if (!left)
			return 0;
		/* An object lock held for seconds: say who waits, once. */
		if (passes == 10000)
			pr_warn("CPU %u: offline, still holding logs of busy objects\n",
				cpu);
		usleep_range(100, 200);
	}
}

/* Objects' logs and vacant ones: both are memory the scan can free. */
unsigned long oplog_shrink_count(struct shrinker *s,
				 struct shrink_control *sc)
{
	unsigned long n = oplog_type_nr_logs(s->private_data) +
			  oplog_type_nr_vacant(s->private_data);

	return n ?: SHRINK_EMPTY;
}

/*
 * Free the logs nobody used since the previous pass (a clock algorithm on
 * the referenced flag); their objects' operations are applied first.  Each
 * call scans @sc->nr_to_scan slots, round robin over the CPUs that have a
 * cache: from the slot and the CPU where the previous call stopped to the
 * end of that CPU's table, then on to the next CPU, so that every CPU's
 * logs are reached (the shrinker asks for batches of 128 slots, 4096
 * slots per CPU is the default).  No cpus_read_lock() here (reclaim may
 * run under the hotplug lock): a CPU that dies meanwhile is drained by
 * oplog_cpu_dead(), which waits for the mutex we hold.
 */
unsigned long oplog_shrink_scan(struct shrinker *s,
				struct shrink_control *sc)
{
	struct oplog_type *type = s->private_data;
	unsigned long scan = sc->nr_to_scan, freed = 0, n;
	struct oplog_cache *cache;
	unsigned int cpu, visited;

	/* Users' callbacks may take filesystem locks. */
	if (!(sc->gfp_mask & __GFP_FS) || !mutex_trylock(&oplog_types_lock))
		return SHRINK_STOP;
	/* Every CPU once, and the first one's slots before its hand. */
	for (visited = 0; scan && visited <= nr_cpu_ids; visited++) {
		cpu = type->shrink_cpu;
		cache = oplog_cache_of(type, cpu);
		if (cache) {
			n = min_t(unsigned long, scan,
				  type->nr_slots - cache->hand);
			freed += oplog_evict_cpu(type, cpu, true, n);
			scan -= n;
			/* Stopped inside this CPU's table: go on there. */
			if (cache->hand)
				break;
		}
		cpu = cpumask_next(cpu, cpu_possible_mask);
		type->shrink_cpu = cpu < nr_cpu_ids ? cpu :
				   cpumask_first(cpu_possible_mask);
	}
	mutex_unlock(&oplog_types_lock);
	return freed;
}
