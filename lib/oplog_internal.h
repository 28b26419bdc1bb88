/* SPDX-License-Identifier: GPL-2.0 */
/*
 * OpLog internals shared by lib/oplog.c (logs, synchronize, queueing,
 * registration), lib/oplog_counter.c (the counter kind),
 * lib/oplog_cache.c (eviction, the shrinker, CPU hotplug, the per-CPU log
 * caches) and lib/oplog_debugfs.c (statistics).  Nothing outside
 * lib/oplog*.c may include it.
 *
 * Lock order (lib/oplog.c states the rules): object lock (->obj_lock),
 * then cache->lock, then log->lock; oplog_types_lock is a mutex taken
 * outside all of them.
 */
#ifndef _LIB_OPLOG_INTERNAL_H
#define _LIB_OPLOG_INTERNAL_H

#include <linux/bits.h>
#include <linux/cpumask.h>
#include <linux/init.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/oplog.h>
#include <linux/percpu.h>
#include <linux/shrinker.h>
#include <linux/spinlock.h>

#ifdef CONFIG_ARCH_HAS_OPLOG_CLOCK
#include <asm/oplog.h>
#else
/*
 * No cycle counter that orders events across CPUs: oplog_clock() is the
 * global sequence counter, and oplog.clock=tsc has nothing to force.  An
 * architecture with one selects ARCH_HAS_OPLOG_CLOCK and provides these
 * three in <asm/oplog.h>.
 */
static inline u64 arch_oplog_clock(void)
{
	return 0;
}

static inline bool arch_oplog_clock_present(void)
{
	return false;
}

static inline bool arch_oplog_clock_synced(void)
{
	return false;
}
#endif

struct kmem_cache;

/* Cache of &struct oplog_log, every type's logs. */
extern struct kmem_cache *oplog_log_cachep;
/* Registered types; oplog_types_lock also serializes hotplug and shrink. */
extern struct list_head oplog_types;
extern struct mutex oplog_types_lock;

static inline unsigned long oplog_cpu_bit(unsigned int cpu)
{
	return BIT(cpu % BITS_PER_LONG);
}

/* Does the type stamp its operations?  See %OPLOG_UNSTAMPED. */
static inline bool oplog_stamped(const struct oplog_type *type)
{
	return !(type->flags & OPLOG_UNSTAMPED);
}

/* Exact bits: a CPU's bit can be cleared when its log goes away. */
static inline bool oplog_exact_bits(void)
{
	return nr_cpu_ids <= BITS_PER_LONG;
}

/* @cpu's log cache, if it was ever instantiated; caches live until unregister. */
static inline struct oplog_cache *oplog_cache_of(struct oplog_type *type,
						 unsigned int cpu)
{
	return READ_ONCE(*per_cpu_ptr(type->caches.slot, cpu));
}

static inline bool oplog_is_counter(const struct oplog_type *type)
{
	return type->kind == OPLOG_COUNTER;
}

/* Does the type log operations (ordered, absorbing), not a delta? */
static inline bool oplog_has_list(const struct oplog_type *type)
{
	return !oplog_is_counter(type);
}

/* The object lock, from the type's ->obj_lock. */
static inline spinlock_t *oplog_lock_of(const struct oplog_type *type,
					struct oplog_obj *obj)
{
	return type->ops->obj_lock(obj);
}

/*
 * Assert that @obj's lock is held.  Only under lockdep: finding the lock
 * calls ->obj_lock, which lockdep_assert_held() would evaluate even
 * without CONFIG_LOCKDEP.
 */
#define oplog_assert_obj_locked(type, obj)				\
	do {								\
		if (IS_ENABLED(CONFIG_LOCKDEP))				\
			lockdep_assert_held(oplog_lock_of(type, obj));	\
	} while (0)

/* What oplog_collect() does with the log it empties. */
enum oplog_detach {
	OPLOG_DETACH_NONE,	/* stays @obj's log (a synchronize) */
	OPLOG_DETACH_VACATE,	/* stays in its slot, vacant (a flush) */
	OPLOG_DETACH_FREE,	/* leaves its slot, to be retired (an eviction) */
};

/* lib/oplog.c */
void oplog_stat(struct oplog_type *type, enum oplog_stat s, long n);
bool __oplog_sync(struct oplog_type *type, struct oplog_obj *obj,
		  bool flush, struct list_head *batch, long delta,
		  u64 cutoff);
int oplog_slow(struct oplog_type *type, struct oplog_obj *obj,
	       struct oplog_op *op, long delta);
void oplog_retire(struct oplog_log *log);
struct oplog_log *oplog_collect(struct oplog_type *type,
				struct oplog_obj *obj, unsigned int cpu,
				u64 cutoff, enum oplog_detach how,
				struct list_head *batch, long *delta,
				bool *left);
void oplog_apply_evicted(struct oplog_type *type, struct oplog_obj *obj,
			 unsigned int cpu, struct list_head *batch,
			 long delta);

/* lib/oplog_counter.c: the %OPLOG_COUNTER kind */
void oplog_counter_init(struct oplog_log *log);
void oplog_counter_append(struct oplog_log *log, long delta);
long oplog_counter_take(struct oplog_log *log, bool detach);
bool oplog_counter_logged(struct oplog_log *log);
void oplog_counter_fold(struct oplog_type *type, struct oplog_obj *obj,
			long delta);
void oplog_counter_apply_evicted(struct oplog_type *type,
				 struct oplog_obj *obj, unsigned int cpu,
				 long delta);
void oplog_counter_direct(struct oplog_type *type, struct oplog_obj *obj,
			  long delta);

/* lib/oplog_cache.c */
extern const struct clustered_ops oplog_cache_ops;
struct oplog_cache *oplog_cache_alloc(struct oplog_type *type,
				      unsigned int cpu, gfp_t gfp);
void oplog_free_spares(struct oplog_type *type);
unsigned long oplog_type_nr_vacant(struct oplog_type *type);
unsigned int oplog_cpu_nr_logs(struct oplog_type *type, unsigned int cpu);
int oplog_cpu_dead(unsigned int cpu);
unsigned long oplog_shrink_count(struct shrinker *s,
				 struct shrink_control *sc);
unsigned long oplog_shrink_scan(struct shrinker *s,
				struct shrink_control *sc);

/* lib/oplog_debugfs.c */
void __init oplog_debugfs_init(void);
void oplog_debugfs_add_type(struct oplog_type *type);
void oplog_debugfs_remove_type(struct oplog_type *type);

#endif /* _LIB_OPLOG_INTERNAL_H */
