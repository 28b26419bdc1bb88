/* SPDX-License-Identifier: GPL-2.0 */
/*
 * OpLog: per-CPU operation logs for update-heavy data structures.
 *
 * After Boyd-Wickizer, "Optimizing Communication Bottlenecks in
 * Multiprocessor Operating System Kernels", PhD thesis, MIT, 2014,
 * chapters 5 to 7.  An update does not touch the shared object: it is
 * appended to a log of the CPU it runs on (oplog_queue(), the thesis's
 * Object::queue).  A reader calls oplog_synchronize() (Object::synchronize),
 * which locks the object, merges the logged operations of every CPU in
 * timestamp order and executes them, and returns with the object locked;
 * oplog_unlock() (Object::unlock) ends the read.  The object lock does not
 * stop other CPUs from queueing into their logs meanwhile;
 * oplog_flush_locked() does (see the comment above oplog_synchronize()).
 *
 * The thesis's Queue class becomes a log kind (&enum oplog_kind), as sv6's
 * critique of the paper's API recommends: an ordered log of timestamped
 * operations, a per-CPU counter (commutative updates, no timestamps, no
 * entries), and an absorbing log for sets (an add and a remove of the same
 * item cancel, on one CPU at queue time and across CPUs at synchronize).
 *
 * Logs live in per-type log caches (thesis section 7): one clustered object
 * (<linux/clustered.h>) per type whose per-CPU representative is a
 * direct-mapped table of slots, each holding at most one log.  A slot
 * conflict evicts the victim, applying what this CPU logged for it (a
 * counter folds this CPU's delta alone; an ordered log is merged with the
 * victim's other logs); a full log synchronizes; retired logs are freed
 * through QDo (<linux/qdo.h>) once the only CPU that can still reach them
 * has passed a quiescent state.  A shrinker per type frees idle logs on
 * every CPU; the number of logs is a sum of per-CPU counts.
 *
 * See Documentation/core-api/oplog.rst for the model, the ordering guarantee
 * and its dependency on the clock, and a worked conversion.
 */
#ifndef _LINUX_OPLOG_H
#define _LINUX_OPLOG_H

#include <linux/clustered.h>
#include <linux/completion.h>
#include <linux/gfp_types.h>
#include <linux/list.h>
#include <linux/lockdep_types.h>
#include <linux/oplog_types.h>
#include <linux/spinlock_types.h>
#include <linux/types.h>

struct shrinker;

/* Thesis defaults (section 7 and 8.3.2): 4096 slots per CPU, 128 entries. */
#define OPLOG_DEFAULT_SLOTS	4096
#define OPLOG_DEFAULT_MAX_LEN	128

/**
 * enum oplog_kind - how a type logs its updates (the thesis's Queue class)
 * @OPLOG_ORDERED: a log of &struct oplog_op stamped with oplog_clock() and
 *	executed by ->exec in global timestamp order (the default Queue).
 * @OPLOG_COUNTER: a signed per-CPU delta; oplog_add() folds nothing until a
 *	synchronize hands the sum to ->fold (the thesis's CounterQueue,
 *	section 6.2).  Updates must commute.
 * @OPLOG_ABSORBING: a log of %OPLOG_ADD / %OPLOG_REMOVE operations on the
 *	items of a set, identified by &oplog_op.key.  Operations on different
 *	items must commute; those on one item run in timestamp order.  An add
 *	followed by a remove of the same item cancel (absorption, section
 *	5.2.2) when the type asks for it with %OPLOG_LOCAL_ABSORB and
 *	%OPLOG_GLOBAL_ABSORB.  Global absorption is always safe.  Local
 *	absorption cancels an add still in this CPU's log against a remove,
 *	without looking at other CPUs' logs, so it requires the thesis's usage
 *	(a mapping is added once and removed once): an item must not be added
 *	again while an operation on it may still be logged on another CPU.
 */
enum oplog_kind {
	OPLOG_ORDERED,
	OPLOG_COUNTER,
	OPLOG_ABSORBING,
};

/* &oplog_op.code values understood by %OPLOG_ABSORBING types. */
#define OPLOG_ADD		1
#define OPLOG_REMOVE		2

/* &oplog_type.flags */
#define OPLOG_LOCAL_ABSORB	0x1	/* cancel add+remove in one CPU's log */
#define OPLOG_GLOBAL_ABSORB	0x2	/* cancel add+remove across CPUs */

/**
 * struct oplog_op - one logged update (the thesis's Op)
 * @node: link in a per-CPU log, then in the batch being applied
 * @ts: timestamp from oplog_clock(), set by oplog_queue()
 * @key: the item, for %OPLOG_ABSORBING types; free for others
 * @code: %OPLOG_ADD or %OPLOG_REMOVE for %OPLOG_ABSORBING types; free for
 *	others (e.g. the type's own opcode)
 *
 * Embedded in the caller's structure, so that queueing never allocates.
 * The op belongs to OpLog from oplog_queue() until ->exec or ->absorb is
 * called on it; those callbacks hand it back (they may free it).
 */
struct oplog_op {
	struct list_head	node;
	u64			ts;
	unsigned long		key;
	unsigned int		code;
};

/**
 * struct oplog_type_ops - what a user of OpLog provides
 * @obj_lock: return the object lock (the thesis's per-object lock), a
 *	spinlock_t that OpLog takes with spin_lock(), and with spin_trylock()
 *	to evict another object while per-CPU cache locks are held.  OpLog
 *	takes and releases it itself, so that sparse and lockdep see every
 *	acquisition.  Mandatory.
 * @exec: execute @op against the shared object (Op::exec).  Called with
 *	the object lock held, in task context, possibly from memory reclaim
 *	(the shrinker, only for __GFP_FS reclaim), from CPU hotplug, or while
 *	another object's lock of the same type is held (an eviction from that
 *	object's miss path).  Mandatory for %OPLOG_ORDERED and
 *	%OPLOG_ABSORBING.
 * @fold: add a CPU's @delta into the shared counter (CounterQueue::apply).
 *	Same context as @exec.  Mandatory for %OPLOG_COUNTER.
 * @absorb: @add and @remove cancelled each other and will not be executed;
 *	give the two ops back.  Object lock held (global absorption) or not
 *	(local absorption, called from oplog_queue()'s context).  Optional.
 * @attach: a CPU is about to get a log of this object: e.g. pin the object
 *	(the dentry counter takes one reference per attached CPU).  Object
 *	lock held.  Return false to refuse: oplog_queue() then fails with
 *	-ENOENT and nothing is logged.  Optional.
 * @detach: a CPU's log of this object was removed, after its operations
 *	were applied: undo @attach.  Object lock held, same context as @exec;
 *	the object lock is released afterwards, so @detach must not drop the
 *	last reference that keeps the object (and its lock) alive.
 *	Optional.
 *
 * None of the callbacks may call oplog_queue() or oplog_add() on the object
 * they were called for: its lock is held.
 */
struct oplog_type_ops {
	spinlock_t *(*obj_lock)(struct oplog_obj *obj);
	void	(*exec)(struct oplog_obj *obj, struct oplog_op *op);
	void	(*fold)(struct oplog_obj *obj, long delta);
	void	(*absorb)(struct oplog_obj *obj, struct oplog_op *add,
			  struct oplog_op *remove);
	bool	(*attach)(struct oplog_obj *obj);
	void	(*detach)(struct oplog_obj *obj);
};

/**
 * struct oplog_type - one kind of logged object and its per-CPU log cache
 * @name: name in debugfs (oplog/<name>/)
 * @kind: the log kind
 * @ops: the callbacks
 * @nr_slots: log-cache slots per CPU, a power of two (0: 4096)
 * @max_len: operations per log before it synchronizes (0: 128); ignored
 *	by %OPLOG_COUNTER
 * @flags: %OPLOG_LOCAL_ABSORB, %OPLOG_GLOBAL_ABSORB
 *
 * Must be statically allocated (it carries lockdep keys).
 */
struct oplog_type {
	const char			*name;
	enum oplog_kind			kind;
	const struct oplog_type_ops	*ops;
	unsigned int			nr_slots;
	unsigned int			max_len;
	unsigned int			flags;

	/* private: */
	unsigned int			slot_bits;
	unsigned int			shrink_cpu;
	void * __percpu			*spares;
	struct clustered_obj		caches;
	struct list_head		list;
	struct lock_class_key		log_key;
	struct lock_class_key		cache_key;
	struct shrinker			*shrinker;
	struct completion		released;
	struct dentry			*debugfs;
};

#ifdef CONFIG_OPLOG

int oplog_type_register(struct oplog_type *type);
void oplog_type_unregister(struct oplog_type *type);

int oplog_queue(struct oplog_type *type, struct oplog_obj *obj,
		struct oplog_op *op);
int oplog_add(struct oplog_type *type, struct oplog_obj *obj, long delta);
bool oplog_add_hit(struct oplog_type *type, struct oplog_obj *obj, long delta);

/*
 * oplog_synchronize() and oplog_synchronize_locked() apply every operation
 * queued before the call, but holding the object lock does NOT exclude
 * other CPUs' oplog_queue() or oplog_add(): their hit path never takes it,
 * and appends to their own logs while the reader holds the lock.  To keep
 * every CPU's updates out until the lock is dropped (e.g. a reader that
 * must see every pending update, such as an rmap walk), call
 * oplog_flush_locked() under the lock instead: it detaches every CPU's
 * log, so that an update must miss and take the object lock to log again.
 */
void oplog_synchronize(struct oplog_type *type, struct oplog_obj *obj)
	__acquires(obj);
void oplog_synchronize_locked(struct oplog_type *type, struct oplog_obj *obj);
void oplog_unlock(struct oplog_type *type, struct oplog_obj *obj)
	__releases(obj);
void oplog_flush_locked(struct oplog_type *type, struct oplog_obj *obj);
void oplog_flush(struct oplog_type *type, struct oplog_obj *obj);

unsigned long oplog_type_nr_logs(struct oplog_type *type);
void oplog_type_drain(struct oplog_type *type);

u64 oplog_clock(void);
bool oplog_clock_is_tsc(void);

#endif /* CONFIG_OPLOG */

/**
 * oplog_obj_init() - initialise the OpLog metadata of an object
 * @obj: the metadata embedded in the object
 *
 * Context: any.
 */
static inline void oplog_obj_init(struct oplog_obj *obj)
{
	obj->cpus = 0;
}

/**
 * oplog_obj_has_logs() - may some CPU hold a log of this object?
 * @obj: the object
 *
 * A lockless hint (e.g. to skip a synchronize on an object nobody logged
 * to); exact only under the object lock.  Context: any.
 * Return: false if no CPU holds a log of @obj.
 */
static inline bool oplog_obj_has_logs(const struct oplog_obj *obj)
{
	return READ_ONCE(obj->cpus) != 0;
}

#endif /* _LINUX_OPLOG_H */
