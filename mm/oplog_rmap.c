// SPDX-License-Identifier: GPL-2.0
/*
 * The file reverse map on OpLog
 *
 * fork and mmap() log the insert of an eligible file VMA into
 * mapping->i_mmap, and an unlink the removal of one that is in the tree,
 * in this CPU's %OPLOG_ABSORBING log of the mapping instead of writing
 * the tree under i_mmap_rwsem; the op is the VMA's i_mmap_op.  Its code
 * says where the VMA is: OPLOG_ADD, logged and not in the tree; 0, in the
 * tree (or, under the VMA's mmap_lock held for write, on its way in or
 * out: an unlink's absorption, vma_prepare() keeping it out); %OPLOG_REMOVE
 * or a RMAP_OPLOG_CODE_*, in the tree with its removal logged.
 *
 * Rules the code must keep:
 *  - the tree is used only under i_mmap_rwsem taken through the
 *    i_mmap_lock_*() helpers of <linux/fs.h>, which apply every logged
 *    operation first, or those of <linux/rmap_oplog.h>, which apply what
 *    the holder's own VMAs need; mm_take_all_locks() calls
 *    rmap_oplog_sync(), and rmap_oplog_mapping_release() needs no lock
 *    (and may sleep);
 *  - a holder that reads the tree sees nothing logged while it holds the
 *    rwsem: ->attach refuses while the rwsem is held (rmap_oplog_attach());
 *  - a VMA whose insert is logged may change its range without the rwsem
 *    (rmap_oplog_prepare_logged()) while its code says so: an apply
 *    claims an insert with a compare-and-exchange from OPLOG_ADD, and a
 *    holder that synchronizes waits for a marked one, as it would wait
 *    for the rwsem; others put it back on the spill list;
 *  - ->exec may run without the rwsem (an eviction, a full log, the
 *    shrinker, a dead CPU), so it only moves the op to ->i_mmap_spill,
 *    which every holder of the write lock applies;
 *  - an insert is logged only as rmap_oplog_eligible() allows (no page
 *    table entry copied at fork, or a parent in the tree that the child
 *    follows in walk order), or behind its parent's logged insert in the
 *    same per-CPU log (rmap_oplog_queue_behind()); a removal as
 *    rmap_oplog_remove_eligible();
 *  - Lifetime: a VMA whose insert is logged is freed only after its
 *    unlink cancelled or applied the insert; one whose removal is logged
 *    is freed by the later of its owner (rmap_oplog_vma_release()) and
 *    the apply (rmap_oplog_removed()); a log does not pin the file, so
 *    rmap_oplog_mapping_release() completes the removes and detaches the
 *    logs before the inode is freed.
 *
 * Lock ordering (within mm/rmap.c's):
 *   mm->mmap_lock
 *     mapping->i_mmap_rwsem		(not taken to log)
 *       a marked VMA (rmap_oplog_prepare_logged(); lockdep:
 *       "rmap_oplog_prepare", taken shared by the owner, waited for by
 *       a synchronizing holder)
 *         anon_vma->rwsem
 *       mapping->i_mmap_oplog_lock	(the OpLog object lock)
 *         OpLog's per-CPU cache and log locks (raw)
 * Another mapping's object lock is only trylocked (an eviction).  Freeing
 * a handed-off VMA under either lock only frees slab memory or queues an
 * RCU callback.
 *
 * rmap_oplog_key says whether fork, mmap() and unlinks log, and
 * rmap_oplog_logged_key whether the lock helpers synchronize; the latter
 * stays on once logging was ever on (rmap_oplog_switch()).
 *
 * Design: Documentation/core-api/oplog.rst, "The file reverse map".
 */

#include <kunit/visibility.h>
#include <linux/cacheflush.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/init.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/oplog.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/rmap_oplog.h>
#include <linux/rwsem.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/userfaultfd_k.h>

DEFINE_STATIC_KEY_FALSE(rmap_oplog_key);

/* Read by the i_mmap_lock_*() helpers, inline in modules too. */
DEFINE_STATIC_KEY_FALSE(rmap_oplog_logged_key);
EXPORT_SYMBOL(rmap_oplog_logged_key);

static bool rmap_oplog_boot_on __initdata = true;
static bool rmap_oplog_registered;
static DEFINE_MUTEX(rmap_oplog_switch_lock);

/* Per-CPU event counts, summed when read: nothing shared on the fast path. */
enum rmap_oplog_stat {
	RMAP_OPLOG_LOGGED,		/* inserts logged by fork or mmap() */
	RMAP_OPLOG_REFUSED,		/* inserts, removes refused: rwsem held */
	RMAP_OPLOG_ABSORBED_LOCAL,	/* cancelled in the forking CPU's log */
	RMAP_OPLOG_ABSORBED_GLOBAL,	/* cancelled at the remover's sync */
	RMAP_OPLOG_APPLIED,		/* inserts put into a tree */
	RMAP_OPLOG_SYNCS,		/* synchronizes that applied something */
	RMAP_OPLOG_UPGRADES,		/* readers that took the write lock */
	RMAP_OPLOG_LOGGED_MMAP,		/* ... of "logged": by mmap() */
	RMAP_OPLOG_PREPARED_LOCAL,	/* vma_prepare(): from this CPU's log */
	RMAP_OPLOG_PREPARED_GLOBAL,	/* ... applied from any CPU's log */
	RMAP_OPLOG_MOVED_LOGGED,	/* mremap: rmap locks for a logged VMA */
	RMAP_OPLOG_LOGGED_REMOVE,	/* removes of VMAs in a tree, logged */
	RMAP_OPLOG_APPLIED_REMOVE,	/* ... taken out of a tree */
	RMAP_OPLOG_HANDED_OFF,		/* VMAs whose free a logged remove took */
	RMAP_OPLOG_RELOGGED,		/* vma_complete(): logged again */
	RMAP_OPLOG_LOGGED_COPIED,	/* ... of "logged": fork, PTEs copied */
	RMAP_OPLOG_PREPARED_LOCKLESS,	/* vma_prepare(): no rwsem taken */
	RMAP_OPLOG_PREPARE_WAITS,	/* holders that waited for one */
	RMAP_OPLOG_LOGGED_BEHIND,	/* ... of "logged": behind the parent */
	RMAP_OPLOG_NR_STATS,
};

static const char * const rmap_oplog_stat_names[RMAP_OPLOG_NR_STATS] = {
	"logged", "refused", "absorbed_local", "absorbed_global", "applied",
	"syncs", "read_upgrades", "logged_mmap", "prepared_local",
	"prepared_global", "moved_logged", "logged_remove", "applied_remove",
	"handed_off", "relogged", "logged_copied", "prepared_lockless",
	"prepare_waits", "logged_behind",
};

static DEFINE_PER_CPU(unsigned long [RMAP_OPLOG_NR_STATS], rmap_oplog_stats);

static void rmap_oplog_count(enum rmap_oplog_stat s, unsigned long n)
{
	this_cpu_add(rmap_oplog_stats[s], n);
}

/*
 * A VMA marked by rmap_oplog_prepare_logged() is held by its owner as
 * i_mmap_rwsem is held for write: a holder that synchronizes waits for
 * it.  Lockdep sees the owner take this map shared and the holder take it
 * exclusively, so an owner that takes the rwsem while marking, or a
 * holder that waits under a lock the owner takes, is reported.
 */
#ifdef CONFIG_DEBUG_LOCK_ALLOC
static struct lock_class_key rmap_oplog_prepare_key;
static struct lockdep_map rmap_oplog_prepare_map =
	STATIC_LOCKDEP_MAP_INIT("rmap_oplog_prepare", &rmap_oplog_prepare_key);
#define rmap_oplog_prepare_acquire_shared() \
	lock_acquire_shared(&rmap_oplog_prepare_map, 0, 0, NULL, _RET_IP_)
#define rmap_oplog_prepare_release() \
	lock_release(&rmap_oplog_prepare_map, _RET_IP_)
#define rmap_oplog_prepare_wait_acquire() \
	lock_map_acquire(&rmap_oplog_prepare_map)
#define rmap_oplog_prepare_wait_release() \
	lock_map_release(&rmap_oplog_prepare_map)
#else
#define rmap_oplog_prepare_acquire_shared()	do { } while (0)
#define rmap_oplog_prepare_release()		do { } while (0)
#define rmap_oplog_prepare_wait_acquire()	do { } while (0)
#define rmap_oplog_prepare_wait_release()	do { } while (0)
#endif

static bool rmap_oplog_code_marked(unsigned int code)
{
	return code == RMAP_OPLOG_CODE_PREPARING ||
	       code == RMAP_OPLOG_CODE_PREPARING_WAITED;
}

/*
 * Is the insert of @vma logged (in a per-CPU log or the spill list), not
 * in the tree?  &oplog_keyed_op.code is OPLOG_ADD from
 * rmap_oplog_queue_insert() until the insert is put into the tree or
 * absorbed, 0 while the VMA is in the tree (vm_area_alloc() zeroes it,
 * vm_area_dup() clears it), and a remove's code from its unlink on (see
 * "Lifetime").  Exact under
 * i_mmap_rwsem held for write, or in the VMA's own unlink.
 */
static bool rmap_oplog_logged(struct vm_area_struct *vma)
{
	return READ_ONCE(vma->i_mmap_op.code) == OPLOG_ADD;
}

/**
 * __rmap_oplog_insert_logged() - is a VMA's insert logged?
 * @vma: a file VMA
 *
 * The body of rmap_oplog_insert_logged() (<linux/rmap_oplog.h>), for
 * copy_vma().  Context: any: it reads @vma's code and nothing else.  The
 * answer is meaningful to copy_vma(), which asks with @vma's mm's
 * mmap_lock taken for write; that is not asserted, as the KUnit suite asks
 * about VMAs of no mm.
 * Return: true if @vma's insert is in a per-CPU log or a spill list.
 */
bool __rmap_oplog_insert_logged(struct vm_area_struct *vma)
{
	return rmap_oplog_logged(vma);
}

static struct address_space *obj_mapping(struct oplog_obj *obj)
{
	return container_of(obj, struct address_space, i_mmap_oplog);
}

static spinlock_t *rmap_oplog_obj_lock(struct oplog_obj *obj)
{
	return &obj_mapping(obj)->i_mmap_oplog_lock;
}

/*
 * An insert or a remove leaves a log: to the spill list, never to the
 * tree, as this may run without i_mmap_rwsem (an eviction, a full log,
 * the shrinker, a dead CPU).  Object lock held.
 */
static void rmap_oplog_exec(struct oplog_obj *obj, struct oplog_op *op)
{
	struct address_space *mapping = obj_mapping(obj);

	lockdep_assert_held(&mapping->i_mmap_oplog_lock);
	list_add_tail(&op->node, &mapping->i_mmap_spill);
}

/*
 * A CPU is about to log for @obj: refuse while anybody holds i_mmap_rwsem,
 * so that a holder that reads the tree sees nothing logged while it holds
 * it.  A truncate's walk must find a child forked during the walk, and an
 * exiting process must not free the page tables of a VMA that a walk
 * still meets; the refused fork or unlink takes the locked way, which
 * waits for the rwsem.  Object lock held.  A holder took the rwsem before
 * its own section under this lock (rmap_oplog_has_logged(),
 * __rmap_oplog_sync()), so if that section came first, this sees the
 * rwsem held; if this comes first, that section sees the log.
 */
static bool rmap_oplog_attach(struct oplog_obj *obj)
{
	struct address_space *mapping = obj_mapping(obj);

	lockdep_assert_held(&mapping->i_mmap_oplog_lock);
	return static_branch_likely(&rmap_oplog_key) &&
	       !rwsem_is_locked(&mapping->i_mmap_rwsem);
}

static const struct oplog_type_ops rmap_oplog_ops = {
	.obj_lock	= rmap_oplog_obj_lock,
	.exec		= rmap_oplog_exec,
	.attach		= rmap_oplog_attach,
};

/*
 * Inserts and removes, one op per VMA at a time; no absorption at queue
 * time: an insert is cancelled by oplog_absorb_hit() or under the lock,
 * and a remove is logged only for a VMA in the tree.  They commute
 * (rmap_oplog_apply()), except a fork's child logged behind its parent,
 * which the order of one log keeps (an unstamped type's batches are
 * applied in the order taken), so none is stamped: where oplog_clock()
 * is one global counter, a stamp would write a line shared by every CPU.
 */
static struct oplog_type rmap_oplog_type = {
	.name	= "rmap",
	.kind	= OPLOG_ABSORBING,
	.ops	= &rmap_oplog_ops,
	.flags	= OPLOG_UNSTAMPED,
};

/**
 * rmap_oplog_mapping_init() - initialise the OpLog part of an address space
 * @mapping: the address space, from address_space_init_once()
 *
 * Context: any; once per address space object (a slab constructor).
 */
void rmap_oplog_mapping_init(struct address_space *mapping)
{
	oplog_obj_init(&mapping->i_mmap_oplog);
	spin_lock_init(&mapping->i_mmap_oplog_lock);
	INIT_LIST_HEAD(&mapping->i_mmap_spill);
}

/*
 * A logged remove of @vma is done: the VMA is out of the tree, or its
 * address space is dying.  Whoever of its owner (__rmap_oplog_vma_release())
 * and this comes second frees it.  Pairs with the owner's try_cmpxchg():
 * the first side's successful one orders its accesses to @vma before it,
 * and the second side's failed one, read with acquire ordering, orders
 * the free after them.  Must be the last access to @vma.
 */
static void rmap_oplog_removed(struct vm_area_struct *vma)
{
	unsigned int code = OPLOG_REMOVE;

	if (try_cmpxchg(&vma->i_mmap_op.code, &code, RMAP_OPLOG_CODE_REMOVED))
		return;
	/* Anything but a hand-off: leak it rather than free it in use. */
	if (WARN_ON_ONCE(code != RMAP_OPLOG_CODE_HANDED_OFF &&
			 code != RMAP_OPLOG_CODE_UNREACHABLE))
		return;
	/* The owner handed it off in remove_vma(): it is ours. */
	smp_acquire__after_ctrl_dep();
	/*
	 * Free it as remove_vma() would have: after a grace period for
	 * lock_vma_under_rcu(), or at once for exit_mmap()'s VMAs, which no
	 * RCU walker of their mm can reach.  The log's own accesses to the
	 * VMA are all under its locks and need no grace period.
	 */
	if (code == RMAP_OPLOG_CODE_UNREACHABLE)
		__vm_area_free(vma);
	else
		vm_area_free(vma);
}

/*
 * Take every logged operation of @mapping: flush every CPU's log to the
 * spill list and move that to @batch.  Object lock held.
 */
static void rmap_oplog_take(struct address_space *mapping,
			    struct list_head *batch)
{
	lockdep_assert_held(&mapping->i_mmap_oplog_lock);
	if (mapping->i_mmap_oplog.cpus)
		oplog_flush_locked(&rmap_oplog_type, &mapping->i_mmap_oplog);
	list_splice_tail_init(&mapping->i_mmap_spill, batch);
}

/**
 * rmap_oplog_mapping_release() - detach every log of a dying address space
 * @mapping: the address space of an inode being destroyed
 *
 * No VMA maps @mapping any more, so no insert is logged for it; but removes
 * of its last VMAs may be, and a CPU may still hold a log of it, which
 * would point to freed memory.  Flushes them (oplog_flush_locked(), at
 * most the type's max_pending operations under the object lock) and
 * completes the removes, freeing the VMAs their owners handed off, after
 * dropping that lock: the spill list may hold a remove for every VMA
 * unmapped since the last holder of i_mmap_rwsem, and once taken off it
 * nobody else can reach them, nor the tree, so neither the object lock nor
 * i_mmap_rwsem is needed.
 * Takes the object lock even when no log is seen, so that an eviction of
 * one, which holds that lock, is over.  The walk of the taken list may
 * reschedule after each VMA, so that its length, which no constant
 * bounds, is never spent with preemption off.
 * Context: task context, from __destroy_inode(), whose callers (evict(),
 * and the inode allocators' error paths) may sleep; may sleep.
 */
void rmap_oplog_mapping_release(struct address_space *mapping)
{
	struct vm_area_struct *vma, *next;
	unsigned long removes = 0;
	LIST_HEAD(batch);

	might_sleep();
	if (!static_branch_unlikely(&rmap_oplog_logged_key))
		return;
	spin_lock(&mapping->i_mmap_oplog_lock);
	rmap_oplog_take(mapping, &batch);
	spin_unlock(&mapping->i_mmap_oplog_lock);
	list_for_each_entry_safe(vma, next, &batch, i_mmap_op.op.node) {
		list_del(&vma->i_mmap_op.op.node);
		/* An insert of a VMA that no longer exists: a lost unlink. */
		if (WARN_ON_ONCE(READ_ONCE(vma->i_mmap_op.code) == OPLOG_ADD ||
				 rmap_oplog_code_marked(READ_ONCE(vma->i_mmap_op.code))))
			continue;
		vma_interval_tree_remove(vma, &mapping->i_mmap);
		rmap_oplog_removed(vma);
		removes++;
		cond_resched();
	}
	rmap_oplog_count(RMAP_OPLOG_APPLIED_REMOVE, removes);
}

/*
 * Apply the logged inserts and removes of @batch to the tree, and move the
 * inserts of VMAs marked by their owners (rmap_oplog_prepare_logged()) to
 * @busy.  i_mmap_rwsem held for write.  An insert's code is OPLOG_ADD
 * until here, or a mark; a remove's is OPLOG_REMOVE or a hand-off,
 * RMAP_OPLOG_CODE_HANDED_OFF or _UNREACHABLE (its owner may change the
 * first into one of the others meanwhile, and nothing else touches it).
 * Operations on different VMAs commute, and no VMA has both logged,
 * except that a child logged behind its parent (rmap_oplog_queue_behind())
 * must go into the tree after it: apply @batch in list order.
 */
static void rmap_oplog_apply(struct address_space *mapping,
			     struct list_head *batch, struct list_head *busy)
{
	unsigned long inserts = 0, removes = 0;
	struct vm_area_struct *vma, *next;

	i_mmap_assert_write_locked(mapping);
	list_for_each_entry_safe(vma, next, batch, i_mmap_op.op.node) {
		unsigned int code = READ_ONCE(vma->i_mmap_op.code);

		list_del(&vma->i_mmap_op.op.node);
		if (code == OPLOG_ADD || rmap_oplog_code_marked(code)) {
			/*
			 * Claim the insert.  Pairs with
			 * __rmap_oplog_log_removes(): its unlink may queue a
			 * remove in this op as soon as it reads 0, so the
			 * list_del() above must be visible first.  Pairs with
			 * __rmap_oplog_prepare_logged()'s try_cmpxchg() and
			 * rwsem_is_locked(): this holder's down_write() came
			 * before, and this claim is fully ordered (its barrier,
			 * not down_write()'s acquire, orders the rwsem's store
			 * before the read of the code: do not weaken it), so
			 * either the owner sees the rwsem held and unmarks the
			 * VMA, or this sees the mark.  A stale OPLOG_ADD read
			 * above still comes here.
			 */
			if (code != OPLOG_ADD ||
			    !try_cmpxchg(&vma->i_mmap_op.code, &code, 0)) {
				list_add_tail(&vma->i_mmap_op.op.node, busy);
				continue;
			}
			flush_dcache_mmap_lock(mapping);
			vma_interval_tree_insert(vma, &mapping->i_mmap);
			flush_dcache_mmap_unlock(mapping);
			inserts++;
			continue;
		}
		if (WARN_ON_ONCE(code != OPLOG_REMOVE &&
				 code != RMAP_OPLOG_CODE_HANDED_OFF &&
				 code != RMAP_OPLOG_CODE_UNREACHABLE))
			continue;
		flush_dcache_mmap_lock(mapping);
		vma_interval_tree_remove(vma, &mapping->i_mmap);
		flush_dcache_mmap_unlock(mapping);
		rmap_oplog_removed(vma);
		removes++;
	}
	if (inserts || removes) {
		rmap_oplog_count(RMAP_OPLOG_APPLIED, inserts);
		rmap_oplog_count(RMAP_OPLOG_APPLIED_REMOVE, removes);
		rmap_oplog_count(RMAP_OPLOG_SYNCS, 1);
	}
}

/*
 * Put the marked inserts of @busy (rmap_oplog_apply()) back on the spill
 * list, for a holder that does not wait for their owners: the next holder
 * that synchronizes does.  i_mmap_rwsem held for write.
 */
static void rmap_oplog_respill(struct address_space *mapping,
			       struct list_head *busy)
{
	if (list_empty(busy))
		return;
	spin_lock(&mapping->i_mmap_oplog_lock);
	list_splice_tail_init(busy, &mapping->i_mmap_spill);
	spin_unlock(&mapping->i_mmap_oplog_lock);
}

/*
 * Apply what evictions, full logs, the shrinker or a dead CPU spilled, for
 * a holder that synchronizes only its own VMAs: keeps the removes (and
 * their VMAs' memory) from piling up where no reader comes.  Inserts go in
 * too: a VMA in the tree is removed by a logged remove later, which is
 * cheaper than global absorption under the lock.  i_mmap_rwsem held for
 * write.
 */
static void rmap_oplog_apply_spill(struct address_space *mapping)
{
	LIST_HEAD(batch);
	LIST_HEAD(busy);

	i_mmap_assert_write_locked(mapping);
	/* A hint: a spill made after it waits for the next holder. */
	if (list_empty(&mapping->i_mmap_spill))
		return;
	spin_lock(&mapping->i_mmap_oplog_lock);
	list_splice_tail_init(&mapping->i_mmap_spill, &batch);
	spin_unlock(&mapping->i_mmap_oplog_lock);
	rmap_oplog_apply(mapping, &batch, &busy);
	rmap_oplog_respill(mapping, &busy);
}

/*
 * Wait until the owner of @vma, whose insert it marked, unmarks it
 * (rmap_oplog_complete_logged()).  i_mmap_rwsem held for write; sleeps.
 * Pairs with rmap_oplog_unmark()'s xchg(): either that sees the waiter's
 * mark and wakes it, or the waiter sees the mark gone.
 */
static void rmap_oplog_wait_marked(struct vm_area_struct *vma)
{
	unsigned int code = READ_ONCE(vma->i_mmap_op.code);

	while (code == RMAP_OPLOG_CODE_PREPARING) {
		if (try_cmpxchg(&vma->i_mmap_op.code, &code,
				RMAP_OPLOG_CODE_PREPARING_WAITED))
			break;
	}
	wait_var_event(&vma->i_mmap_op.code,
		       READ_ONCE(vma->i_mmap_op.code) !=
		       RMAP_OPLOG_CODE_PREPARING_WAITED);
}

/*
 * The synchronize of a holder that reads the whole tree: take and apply
 * every logged operation, then wait for the owners of marked VMAs and
 * take again, since an owner logs the part it split off before it
 * unmarks (rmap_oplog_complete_logged()).  An owner that marks after the
 * rwsem was taken sees it held and unmarks at once, then waits for the
 * rwsem in rmap_oplog_prepare_vmas(); and nothing new is logged while the
 * rwsem is held.  So the passes are bounded by the owners that began
 * before, and this ends.  With @trylock, gives up instead of
 * waiting: the marked inserts go back on the spill list.  i_mmap_rwsem
 * held for write; sleeps unless @trylock.  Returns true when nothing of
 * @mapping is logged any more.
 */
static bool rmap_oplog_sync_all(struct address_space *mapping, bool trylock)
{
	struct vm_area_struct *vma;
	LIST_HEAD(batch);
	LIST_HEAD(busy);

	i_mmap_assert_write_locked(mapping);
	if (!trylock)
		rmap_oplog_prepare_wait_acquire();
	for (;;) {
		spin_lock(&mapping->i_mmap_oplog_lock);
		rmap_oplog_take(mapping, &batch);
		spin_unlock(&mapping->i_mmap_oplog_lock);
		rmap_oplog_apply(mapping, &batch, &busy);
		if (list_empty(&busy))
			break;
		if (trylock) {
			rmap_oplog_respill(mapping, &busy);
			return false;
		}
		list_for_each_entry(vma, &busy, i_mmap_op.op.node)
			rmap_oplog_wait_marked(vma);
		rmap_oplog_count(RMAP_OPLOG_PREPARE_WAITS, 1);
		list_splice_init(&busy, &batch);
	}
	if (!trylock)
		rmap_oplog_prepare_wait_release();
	return true;
}

/**
 * __rmap_oplog_sync() - apply every logged operation of a mapping to its tree
 * @mapping: the address space
 *
 * The synchronize of the thesis (section 6.1) for the reverse map: flushes
 * every CPU's log of @mapping and applies the inserts and removes, and
 * those spilled by evictions, to @mapping->i_mmap (freeing the VMAs whose
 * owners handed them off).  A VMA whose owner changes its range without
 * the rwsem (rmap_oplog_prepare_logged()) is waited for and then put in.
 * Afterwards no CPU holds a log of @mapping, and none can attach one
 * until i_mmap_rwsem is released.
 *
 * Context: i_mmap_rwsem held for write (the i_mmap_lock_write() helpers);
 * takes the object lock and OpLog's raw per-CPU locks; may sleep, waiting
 * for such an owner.
 */
void __rmap_oplog_sync(struct address_space *mapping)
{
	rmap_oplog_sync_all(mapping, false);
}
EXPORT_SYMBOL(__rmap_oplog_sync);

/* Is anything of @mapping logged or spilled?  Exact: object lock taken. */
static bool rmap_oplog_has_logged(struct address_space *mapping)
{
	bool logged;

	spin_lock(&mapping->i_mmap_oplog_lock);
	logged = mapping->i_mmap_oplog.cpus ||
		 !list_empty(&mapping->i_mmap_spill);
	spin_unlock(&mapping->i_mmap_oplog_lock);
	return logged;
}

/**
 * __rmap_oplog_sync_read() - synchronize a mapping for a reader
 * @mapping: the address space, its i_mmap_rwsem held for read
 * @trylock: the caller took the read lock with a trylock
 *
 * If nothing is logged for @mapping, return at once: nothing can be
 * logged until the read lock is released (->attach refuses).  Otherwise
 * trade the read lock for the write lock (waiting, or trying once when
 * @trylock), synchronize, and downgrade: the tree may be written only by a
 * holder of the write lock, whatever other readers do meanwhile.  With
 * @trylock, a VMA whose owner is changing it without the rwsem
 * (rmap_oplog_prepare_logged()) makes it give up rather than wait.
 *
 * Context: i_mmap_rwsem held for read; may sleep unless @trylock.
 * Return: true with i_mmap_rwsem held for read; false (only if @trylock)
 * with it not held.
 */
bool __rmap_oplog_sync_read(struct address_space *mapping, bool trylock)
{
	lockdep_assert_held_read(&mapping->i_mmap_rwsem);
	if (likely(!rmap_oplog_has_logged(mapping)))
		return true;
	up_read(&mapping->i_mmap_rwsem);
	if (trylock) {
		if (!down_write_trylock(&mapping->i_mmap_rwsem))
			return false;
	} else {
		down_write(&mapping->i_mmap_rwsem);
	}
	if (!rmap_oplog_sync_all(mapping, trylock)) {
		up_write(&mapping->i_mmap_rwsem);
		return false;
	}
	downgrade_write(&mapping->i_mmap_rwsem);
	rmap_oplog_count(RMAP_OPLOG_UPGRADES, 1);
	return true;
}
EXPORT_SYMBOL(__rmap_oplog_sync_read);

/**
 * __rmap_oplog_pending() - may a VMA of this mapping be logged, not in i_mmap?
 * @mapping: the address space
 *
 * A hint for mapping_mapped(), like that function's own test: logs that
 * are attached but empty (every insert absorbed by its VMA's unlink) do
 * not count, so that the last unmap makes mapping_mapped() false as it
 * does without the logs (a logged removal's VMA is still in the tree).
 * Not counted either: the inserts that a holder of i_mmap_rwsem has taken
 * off the logs and not yet put in, which include those it waits for while
 * their owners change them (rmap_oplog_sync_all()).  The architectures
 * whose cache flushes depend on mapping_mapped() cannot enable
 * CONFIG_RMAP_OPLOG.
 * Context: not in hard interrupt context: takes OpLog's per-CPU cache and
 * log locks (oplog_obj_maybe_logged()), not the object lock.  Does not
 * sleep.
 * Return: true if operations are spilled or some CPU's log of @mapping
 * holds one.
 */
bool __rmap_oplog_pending(struct address_space *mapping)
{
	return !list_empty(&mapping->i_mmap_spill) ||
	       oplog_obj_maybe_logged(&rmap_oplog_type, &mapping->i_mmap_oplog);
}
EXPORT_SYMBOL(__rmap_oplog_pending);

/*
 * May a VMA of this kind be logged at all, whatever its place in the walk
 * order?  See rmap_oplog_eligible().
 */
static bool rmap_oplog_kind_eligible(struct vm_area_struct *vma,
				     struct vm_area_struct *parent)
{
	if ((vma->vm_flags | parent->vm_flags) &
	    (VM_HUGETLB | VM_PFNMAP | VM_MIXEDMAP | VM_IO))
		return false;
	return !userfaultfd_wp(vma) && !vma_is_dax(vma) &&
	       !vma_is_shared_maywrite(vma);
}

/**
 * rmap_oplog_eligible() - may the insert of this child VMA be logged?
 * @vma: the child's file VMA
 * @parent: the parent's VMA it duplicates
 *
 * A child that gets page table entries at fork (copy_page_range() copies
 * them for a VMA with an anon_vma, a PFN or mixed map, or uffd-wp:
 * vma_needs_copy()) must come after its parent in the tree's walk order,
 * so that a walk racing with the copy meets the parent first: the locked
 * insert puts it right after (vma_interval_tree_insert_after()).  A logged
 * insert of a child with an anon_vma keeps that order as long as the
 * parent is in the tree (its i_mmap_op.code is 0) when the insert is
 * logged: the child has the parent's vm_pgoff, the interval tree puts an
 * insert after every node of an equal start (its in-order walk is sorted
 * by start, which vma_interval_tree_insert_after() keeps), and the parent
 * cannot leave the tree before dup_mmap() is done copying, as that needs
 * the parent's mmap_lock; a child whose parent's insert is logged is
 * logged only behind it, in this CPU's log (rmap_oplog_queue_behind()),
 * or takes the locked way, which puts the parent into the tree first.
 * A child without copied
 * entries gets one only by a fault after the insert was logged, so any
 * walker that can see it synchronized the insert into the tree first.  A
 * PFN or mixed map and uffd-wp stay on the locked path.  Not hugetlb (its
 * own i_mmap_rwsem rules for PMD sharing), DAX or VM_IO, and not a shared
 * writable mapping, whose i_mmap_writable count stays exact because it is
 * never logged.  A new VMA (mmap()) is its own @parent: it has no
 * anon_vma.
 * Context: any; for a fork, both mmap_locks held for write, so that
 * @parent stays in the tree.
 * Return: true if the insert may be logged; if false for a child with
 * copied entries whose parent's insert is logged, the caller may still
 * log it behind the parent's (rmap_oplog_queue_behind()).
 */
VISIBLE_IF_KUNIT bool rmap_oplog_eligible(struct vm_area_struct *vma,
					  struct vm_area_struct *parent)
{
	if (!rmap_oplog_kind_eligible(vma, parent))
		return false;
	/*
	 * A parent's code 0 means in the tree, or going in under the write
	 * lock of a holder that applies it before any later logged insert:
	 * the other states with code 0 need its mmap_lock, which dup_mmap()
	 * holds.
	 */
	if ((vma->anon_vma || parent->anon_vma) &&
	    (vma == parent || READ_ONCE(parent->i_mmap_op.code)))
		return false;
	return true;
}
EXPORT_SYMBOL_IF_KUNIT(rmap_oplog_eligible);

/**
 * rmap_oplog_queue_insert() - log the insert of a VMA into a mapping's tree
 * @mapping: the address space, @vma's file's
 * @vma: the VMA, not in the tree
 *
 * Context: task context, without @mapping's i_mmap_rwsem or object lock;
 * does not sleep.
 * Return: true if logged (or spilled); false if refused (i_mmap_rwsem is
 * held, or logging is off): the caller inserts @vma itself.
 */
VISIBLE_IF_KUNIT bool rmap_oplog_queue_insert(struct address_space *mapping,
					      struct vm_area_struct *vma)
{
	vma->i_mmap_op.key = (unsigned long)vma;
	WRITE_ONCE(vma->i_mmap_op.code, OPLOG_ADD);
	if (oplog_queue(&rmap_oplog_type, &mapping->i_mmap_oplog,
			&vma->i_mmap_op.op)) {
		WRITE_ONCE(vma->i_mmap_op.code, 0);
		rmap_oplog_count(RMAP_OPLOG_REFUSED, 1);
		return false;
	}
	rmap_oplog_count(RMAP_OPLOG_LOGGED, 1);
	return true;
}
EXPORT_SYMBOL_IF_KUNIT(rmap_oplog_queue_insert);

/**
 * rmap_oplog_queue_behind() - log a fork's insert behind its parent's
 * @mapping: the address space, @vma's file's
 * @vma: the child's VMA, not in the tree, whose page table entries
 *	dup_mmap() copies after this
 * @parent: the VMA @vma duplicates, whose insert is logged
 *
 * Logs the insert of @vma behind @parent's, which must still be in this
 * CPU's log of @mapping (oplog_queue_after()): every apply puts @parent
 * into the tree first, so @vma comes after it in walk order, where
 * vma_interval_tree_insert_after() would put it (rmap_oplog_eligible()).
 * The two leave the log together and in that order (a synchronize, a
 * flush, an eviction, a full log, a dead CPU), or one is taken out alone
 * by its owner (oplog_absorb_hit()) or passed over while its owner marks
 * it, which needs its mm's mmap_lock: dup_mmap() holds both mms' for
 * write while it copies.  The idea is the
 * thesis's per-CPU log order (section 5.1), used for two operations that
 * do not commute.
 *
 * Context: task context, without @mapping's i_mmap_rwsem or object lock;
 * does not sleep.
 * Return: true if logged; false, with nothing logged, if @parent's insert
 * is anywhere else (another CPU's log, the spill list) or the log is
 * full: the caller takes the locked way.
 */
VISIBLE_IF_KUNIT bool rmap_oplog_queue_behind(struct address_space *mapping,
					      struct vm_area_struct *vma,
					      struct vm_area_struct *parent)
{
	vma->i_mmap_op.key = (unsigned long)vma;
	WRITE_ONCE(vma->i_mmap_op.code, OPLOG_ADD);
	if (!oplog_queue_after(&rmap_oplog_type, &mapping->i_mmap_oplog,
			       &parent->i_mmap_op.op, &vma->i_mmap_op.op)) {
		WRITE_ONCE(vma->i_mmap_op.code, 0);
		return false;
	}
	rmap_oplog_count(RMAP_OPLOG_LOGGED, 1);
	rmap_oplog_count(RMAP_OPLOG_LOGGED_BEHIND, 1);
	return true;
}
EXPORT_SYMBOL_IF_KUNIT(rmap_oplog_queue_behind);

/**
 * __rmap_oplog_fork_insert() - see rmap_oplog_fork_insert()
 * @vma: the child's new VMA
 * @parent: the parent's VMA
 *
 * Context: see rmap_oplog_fork_insert().
 * Return: true if the insert was logged.
 */
bool __rmap_oplog_fork_insert(struct vm_area_struct *vma,
			      struct vm_area_struct *parent)
{
	struct address_space *mapping = vma->vm_file->f_mapping;

	mmap_assert_write_locked(vma->vm_mm);
	mmap_assert_write_locked(parent->vm_mm);
	if (!rmap_oplog_eligible(vma, parent)) {
		/* Copied entries, and the parent's insert is logged. */
		if (vma == parent || !rmap_oplog_kind_eligible(vma, parent) ||
		    !rmap_oplog_logged(parent) ||
		    !rmap_oplog_queue_behind(mapping, vma, parent))
			return false;
	} else if (!rmap_oplog_queue_insert(mapping, vma)) {
		return false;
	}
	if (vma->anon_vma)
		rmap_oplog_count(RMAP_OPLOG_LOGGED_COPIED, 1);
	return true;
}

/**
 * __rmap_oplog_mmap_insert() - see rmap_oplog_mmap_insert()
 * @vma: the new VMA
 *
 * A new VMA is its own parent for rmap_oplog_eligible(): nothing is
 * copied into it, and it must not be hugetlb, DAX, VM_IO, a PFN or mixed
 * map (a driver's ->mmap() may have filled its page table already) or
 * shared writable.
 * Context: see rmap_oplog_mmap_insert().
 * Return: true if the insert was logged.
 */
bool __rmap_oplog_mmap_insert(struct vm_area_struct *vma)
{
	mmap_assert_write_locked(vma->vm_mm);
	if (!rmap_oplog_eligible(vma, vma) ||
	    !rmap_oplog_queue_insert(vma->vm_file->f_mapping, vma))
		return false;
	rmap_oplog_count(RMAP_OPLOG_LOGGED_MMAP, 1);
	return true;
}

/**
 * __rmap_oplog_absorb_local() - see rmap_oplog_absorb_local()
 * @mapping: the address space
 * @vmas: the VMAs to remove
 * @count: their number
 *
 * Context: see rmap_oplog_absorb_local().
 * Return: the number of VMAs left in @vmas.
 */
int __rmap_oplog_absorb_local(struct address_space *mapping,
			      struct vm_area_struct **vmas, int count)
{
	int i, left = 0;

	for (i = 0; i < count; i++) {
		/* Racy: a reader may be putting it into the tree meanwhile. */
		if (rmap_oplog_logged(vmas[i]) &&
		    oplog_absorb_hit(&rmap_oplog_type, &mapping->i_mmap_oplog,
				     &vmas[i]->i_mmap_op.op)) {
			WRITE_ONCE(vmas[i]->i_mmap_op.code, 0);
			rmap_oplog_count(RMAP_OPLOG_ABSORBED_LOCAL, 1);
			continue;
		}
		vmas[left++] = vmas[i];
	}
	return left;
}

/*
 * May the removal of @vma from the tree be logged?  Not hugetlb (its PMD
 * sharing walks i_mmap under its own rules), DAX, VM_IO or a PFN or mixed
 * map (drivers' own i_mmap users), nor a shared writable mapping, whose
 * i_mmap_writable count goes down at the unlink, as it went up at a locked
 * insert.  A VMA with an anon_vma may: its removal, unlike its insert at
 * fork, races with no page table copy.
 */
static bool rmap_oplog_remove_eligible(struct vm_area_struct *vma)
{
	return !(vma->vm_flags & (VM_HUGETLB | VM_PFNMAP | VM_MIXEDMAP |
				  VM_IO)) &&
	       !vma_is_dax(vma) && !vma_is_shared_maywrite(vma);
}

/**
 * __rmap_oplog_log_removes() - see rmap_oplog_log_removes()
 * @mapping: the address space
 * @vmas: the VMAs to remove
 * @count: their number
 *
 * Context: see rmap_oplog_log_removes().
 * Return: the number of VMAs left in @vmas.
 */
int __rmap_oplog_log_removes(struct address_space *mapping,
			     struct vm_area_struct **vmas, int count)
{
	struct vm_area_struct *vma;
	unsigned long logged = 0;
	unsigned int code;
	int i, left = 0;

	for (i = 0; i < count; i++) {
		vma = vmas[i];
		/*
		 * Pairs with rmap_oplog_apply()'s store-release: read 0, the
		 * op is off its list.
		 */
		code = smp_load_acquire(&vma->i_mmap_op.code);
		/* Code 0: in the tree, or going in under the write lock. */
		if (!static_branch_likely(&rmap_oplog_key) || code ||
		    !rmap_oplog_remove_eligible(vma))
			goto keep;
		vma->i_mmap_op.key = (unsigned long)vma;
		WRITE_ONCE(vma->i_mmap_op.code, OPLOG_REMOVE);
		if (!oplog_queue(&rmap_oplog_type, &mapping->i_mmap_oplog,
				 &vma->i_mmap_op.op)) {
			logged++;
			continue;
		}
		/* Refused: i_mmap_rwsem is held; remove it under the lock. */
		WRITE_ONCE(vma->i_mmap_op.code, 0);
		rmap_oplog_count(RMAP_OPLOG_REFUSED, 1);
keep:
		vmas[left++] = vma;
	}
	rmap_oplog_count(RMAP_OPLOG_LOGGED_REMOVE, logged);
	return left;
}

/**
 * __rmap_oplog_vma_release() - see rmap_oplog_vma_release()
 * @vma: the VMA, its i_mmap_op.code not 0
 * @unreachable: no RCU walker of @vma's mm can reach @vma
 *
 * Context: see rmap_oplog_vma_release().
 * Return: true if the log frees @vma.
 */
bool __rmap_oplog_vma_release(struct vm_area_struct *vma, bool unreachable)
{
	unsigned int code = OPLOG_REMOVE;

	/* Pairs with rmap_oplog_removed()'s try_cmpxchg(). */
	if (try_cmpxchg(&vma->i_mmap_op.code, &code,
			unreachable ? RMAP_OPLOG_CODE_UNREACHABLE :
				      RMAP_OPLOG_CODE_HANDED_OFF)) {
		rmap_oplog_count(RMAP_OPLOG_HANDED_OFF, 1);
		return true;
	}
	/*
	 * An insert still logged would be a lost unlink: leak the VMA rather
	 * than free it under the log.
	 */
	if (WARN_ON_ONCE(code != RMAP_OPLOG_CODE_REMOVED))
		return true;
	/* Removed already: the apply is done with it. */
	smp_acquire__after_ctrl_dep();
	return false;
}

/**
 * __rmap_oplog_lock_unlink() - see rmap_oplog_lock_unlink()
 * @mapping: the address space
 * @vmas: the VMAs to remove
 * @count: their number
 *
 * Context: see rmap_oplog_lock_unlink().
 * Return: the number of VMAs left in @vmas, with i_mmap_rwsem held for
 * write.
 */
int __rmap_oplog_lock_unlink(struct address_space *mapping,
			     struct vm_area_struct **vmas, int count)
{
	unsigned long absorbed = 0;
	bool logged = false;
	int i;

	down_write(&mapping->i_mmap_rwsem);
	for (i = 0; i < count; i++)
		logged |= rmap_oplog_logged(vmas[i]);
	if (!logged) {
		rmap_oplog_apply_spill(mapping);
		return count;
	}
	spin_lock(&mapping->i_mmap_oplog_lock);
	/*
	 * Apply everything every CPU logged, and leave the logs attached:
	 * this holder reads nothing in the tree, so other CPUs may go on
	 * logging.  No cutoff: a logged insert of ours must be in the spill
	 * list afterwards even if the forking CPU's clock runs ahead of this
	 * one's, since list_del() below does not take that CPU's log lock.
	 */
	if (mapping->i_mmap_oplog.cpus)
		oplog_synchronize_all_locked(&rmap_oplog_type,
					     &mapping->i_mmap_oplog);
	for (i = 0; i < count; i++) {
		if (!rmap_oplog_logged(vmas[i]))
			continue;
		/* Global absorption: a logged insert meets its VMA's removal. */
		list_del(&vmas[i]->i_mmap_op.op.node);
		WRITE_ONCE(vmas[i]->i_mmap_op.code, 0);
		vmas[i--] = vmas[--count];
		absorbed++;
	}
	spin_unlock(&mapping->i_mmap_oplog_lock);
	rmap_oplog_count(RMAP_OPLOG_ABSORBED_GLOBAL, absorbed);
	/* The others, now spilled, need not wait for their own unlinks. */
	rmap_oplog_apply_spill(mapping);
	return count;
}

/*
 * Put the logged inserts among @vmas (NULL entries allowed) into the tree,
 * leaving every CPU's log attached: one still in this CPU's log is taken
 * from there (oplog_absorb_hit()); for one in another CPU's log, every
 * CPU's log is applied to the spill list (no cutoff, so that ours is among
 * them whatever the clocks say) and the whole spill list goes in, as
 * rmap_oplog_apply_spill() does.  The holder reads nothing in the tree but
 * @vmas, so other CPUs may go on logging.  With @keep, one found in this
 * CPU's log is left out of the tree instead, not logged any more, and bit
 * i of *@keep set for @vmas[i] (for the first 32).  Counts the VMAs
 * found in this CPU's log in *@local, the others in *@global.
 * i_mmap_rwsem held for write.
 */
static void rmap_oplog_apply_own(struct address_space *mapping,
				 struct vm_area_struct **vmas, int count,
				 unsigned long *local, unsigned long *global,
				 unsigned int *keep)
{
	struct vm_area_struct *vma;
	LIST_HEAD(batch);
	LIST_HEAD(busy);
	int i;

	i_mmap_assert_write_locked(mapping);
	*local = *global = 0;
	for (i = 0; i < count; i++) {
		vma = vmas[i];
		if (!vma || !rmap_oplog_logged(vma))
			continue;
		/*
		 * Still in this CPU's log: it is ours to put in the tree (its
		 * code stays OPLOG_ADD for rmap_oplog_apply()), or to keep out.
		 */
		if (oplog_absorb_hit(&rmap_oplog_type, &mapping->i_mmap_oplog,
				     &vma->i_mmap_op.op)) {
			if (keep && i < 32) {
				WRITE_ONCE(vma->i_mmap_op.code, 0);
				*keep |= BIT(i);
			} else {
				list_add_tail(&vma->i_mmap_op.op.node, &batch);
			}
			(*local)++;
		} else {
			(*global)++;
		}
	}
	if (*global) {
		spin_lock(&mapping->i_mmap_oplog_lock);
		if (mapping->i_mmap_oplog.cpus)
			oplog_synchronize_all_locked(&rmap_oplog_type,
						     &mapping->i_mmap_oplog);
		list_splice_tail_init(&mapping->i_mmap_spill, &batch);
		spin_unlock(&mapping->i_mmap_oplog_lock);
	}
	/* Marked VMAs are others': this holder does not wait for them. */
	rmap_oplog_apply(mapping, &batch, &busy);
	rmap_oplog_respill(mapping, &busy);
	if (!*global)
		rmap_oplog_apply_spill(mapping);
}

/**
 * __rmap_oplog_lock_insert() - see rmap_oplog_lock_insert()
 * @mapping: the address space
 * @parent: the VMA that the caller inserts after
 *
 * If @parent's own insert is still logged, puts it into the tree (the
 * caller inserts after it) without detaching any CPU's log: a fork of a
 * process whose file VMA is partly locked (it got an anon_vma after its
 * insert was logged) leaves the other CPUs' forks and exits logging.
 *
 * Context: see rmap_oplog_lock_insert().
 */
void __rmap_oplog_lock_insert(struct address_space *mapping,
			      struct vm_area_struct *parent)
{
	unsigned long local, global;

	down_write(&mapping->i_mmap_rwsem);
	rmap_oplog_apply_own(mapping, &parent, parent ? 1 : 0, &local,
			     &global, NULL);
}

/**
 * __rmap_oplog_prepare_vmas() - see rmap_oplog_prepare_vmas()
 * @mapping: the address space
 * @vmas: the VMAs that the caller changes in the tree, or NULL
 * @count: the number of entries in @vmas
 *
 * Context: see rmap_oplog_prepare_vmas().
 * Return: see rmap_oplog_prepare_vmas().
 */
unsigned int __rmap_oplog_prepare_vmas(struct address_space *mapping,
				       struct vm_area_struct **vmas, int count)
{
	unsigned long local, global;
	unsigned int mine = 0;

	down_write(&mapping->i_mmap_rwsem);
	/* Ours stay out of the tree: the caller logs them again. */
	rmap_oplog_apply_own(mapping, vmas, count, &local, &global, &mine);
	rmap_oplog_count(RMAP_OPLOG_PREPARED_LOCAL, local);
	rmap_oplog_count(RMAP_OPLOG_PREPARED_GLOBAL, global);
	return mine;
}

/**
 * __rmap_oplog_relog() - see rmap_oplog_relog()
 * @mapping: the address space
 * @vma: the VMA
 *
 * Context: see rmap_oplog_relog().
 * Return: see rmap_oplog_relog().
 */
bool __rmap_oplog_relog(struct address_space *mapping,
			struct vm_area_struct *vma)
{
	i_mmap_assert_write_locked(mapping);
	VM_WARN_ON_ONCE(rmap_oplog_logged(vma) || vma_is_shared_maywrite(vma));
	if (!static_branch_unlikely(&rmap_oplog_key) ||
	    !rmap_oplog_queue_insert(mapping, vma))
		return false;
	rmap_oplog_count(RMAP_OPLOG_RELOGGED, 1);
	return true;
}

/*
 * Unmark @vma (rmap_oplog_prepare_logged()): its insert is logged with its
 * range as it is now.  Fully ordered: the owner's changes of the range
 * before, the check for a waiter after.  Pairs with
 * rmap_oplog_wait_marked()'s try_cmpxchg().
 */
static void rmap_oplog_unmark(struct vm_area_struct *vma)
{
	if (xchg(&vma->i_mmap_op.code, OPLOG_ADD) ==
	    RMAP_OPLOG_CODE_PREPARING_WAITED)
		wake_up_var(&vma->i_mmap_op.code);
}

/**
 * __rmap_oplog_prepare_logged() - see rmap_oplog_prepare_logged()
 * @mapping: the address space
 * @vmas: the VMAs that the caller changes, or NULL
 * @count: the number of entries in @vmas
 *
 * Context: see rmap_oplog_prepare_logged().
 * Return: see rmap_oplog_prepare_logged().
 */
bool __rmap_oplog_prepare_logged(struct address_space *mapping,
				 struct vm_area_struct **vmas, int count)
{
	unsigned int code;
	int i;

	for (i = 0; i < count; i++) {
		if (!vmas[i])
			continue;
		code = OPLOG_ADD;
		/* Fully ordered; pairs with rmap_oplog_apply()'s claim. */
		if (!try_cmpxchg(&vmas[i]->i_mmap_op.code, &code,
				 RMAP_OPLOG_CODE_PREPARING))
			goto undo;
	}
	/*
	 * Pairs with a synchronizing holder's down_write() and its claim in
	 * rmap_oplog_apply(): if this sees the rwsem free, that claim comes
	 * later and sees the marks, so the holder waits; a later holder is
	 * waited for only by a preparation that saw the rwsem free.
	 */
	if (rwsem_is_locked(&mapping->i_mmap_rwsem))
		goto undo;
	rmap_oplog_prepare_acquire_shared();
	rmap_oplog_count(RMAP_OPLOG_PREPARED_LOCKLESS, 1);
	return true;
undo:
	while (--i >= 0)
		if (vmas[i])
			rmap_oplog_unmark(vmas[i]);
	return false;
}

/**
 * __rmap_oplog_complete_logged() - see rmap_oplog_complete_logged()
 * @mapping: the address space
 * @vmas: the marked VMAs, or NULL
 * @count: the number of entries in @vmas
 * @insert: the VMA split off, or NULL
 *
 * Context: see rmap_oplog_complete_logged().
 */
void __rmap_oplog_complete_logged(struct address_space *mapping,
				  struct vm_area_struct **vmas, int count,
				  struct vm_area_struct *insert)
{
	int i;

	/*
	 * Before the unmark: a holder that waited for a marked VMA takes the
	 * logs and the spill list again after it, and finds @insert there.
	 */
	if (insert && !rmap_oplog_queue_insert(mapping, insert)) {
		spin_lock(&mapping->i_mmap_oplog_lock);
		insert->i_mmap_op.key = (unsigned long)insert;
		WRITE_ONCE(insert->i_mmap_op.code, OPLOG_ADD);
		list_add_tail(&insert->i_mmap_op.op.node, &mapping->i_mmap_spill);
		spin_unlock(&mapping->i_mmap_oplog_lock);
	}
	for (i = 0; i < count; i++)
		if (vmas[i])
			rmap_oplog_unmark(vmas[i]);
	rmap_oplog_prepare_release();
}

/**
 * __rmap_oplog_lock_move() - see rmap_oplog_lock_move()
 * @vma: the file VMA whose page table entries are moved
 *
 * Counts the moves of a VMA whose insert is logged ("moved_logged"): the
 * ones copy_vma() takes the rmap locks for, which no test could tell
 * from a lockless move otherwise.
 * Context: see rmap_oplog_lock_move().
 */
void __rmap_oplog_lock_move(struct vm_area_struct *vma)
{
	mmap_assert_write_locked(vma->vm_mm);
	down_write(&vma->vm_file->f_mapping->i_mmap_rwsem);
	if (rmap_oplog_logged(vma))
		rmap_oplog_count(RMAP_OPLOG_MOVED_LOGGED, 1);
}

static int __init rmap_oplog_setup(char *str)
{
	if (!str)
		return 0;
	if (!strcmp(str, "on"))
		rmap_oplog_boot_on = true;
	else if (!strcmp(str, "off"))
		rmap_oplog_boot_on = false;
	else
		return 0;
	return 1;
}
__setup("rmap_oplog=", rmap_oplog_setup);

/**
 * rmap_oplog_switch() - turn logging of reverse-map updates on or off
 * @on: true to log, false for inserts and removes under i_mmap_rwsem
 *
 * On: rmap_oplog_logged_key first, then (after a grace period, so that no
 * CPU can still read it off) rmap_oplog_key.  Off: rmap_oplog_key, then
 * every log is detached (oplog_type_drain(); ->attach refuses from then
 * on); operations left in spill lists are applied by the next lock
 * holder, so rmap_oplog_logged_key stays on.
 *
 * Context: process context, sleeps; not with i_mmap_rwsem held.
 * Return: 0; -ENODEV if the OpLog type could not be registered at boot.
 */
int rmap_oplog_switch(bool on)
{
	if (!rmap_oplog_registered)
		return -ENODEV;
	mutex_lock(&rmap_oplog_switch_lock);
	if (on) {
		if (!static_key_enabled(&rmap_oplog_logged_key)) {
			static_branch_enable(&rmap_oplog_logged_key);
			synchronize_rcu();
		}
		static_branch_enable(&rmap_oplog_key);
	} else if (static_key_enabled(&rmap_oplog_key)) {
		static_branch_disable(&rmap_oplog_key);
		oplog_type_drain(&rmap_oplog_type);
	}
	mutex_unlock(&rmap_oplog_switch_lock);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(rmap_oplog_switch);

/**
 * rmap_oplog_enabled() - are reverse-map inserts and removes logged now?
 *
 * Context: any.
 * Return: true if rmap_oplog_key is on.
 */
VISIBLE_IF_KUNIT bool rmap_oplog_enabled(void)
{
	return static_key_enabled(&rmap_oplog_key);
}
EXPORT_SYMBOL_IF_KUNIT(rmap_oplog_enabled);

static int rmap_oplog_enabled_get(void *data, u64 *val)
{
	*val = rmap_oplog_enabled();
	return 0;
}

static int rmap_oplog_enabled_set(void *data, u64 val)
{
	if (val > 1)
		return -EINVAL;
	return rmap_oplog_switch(val);
}
DEFINE_DEBUGFS_ATTRIBUTE(rmap_oplog_enabled_fops, rmap_oplog_enabled_get,
			 rmap_oplog_enabled_set, "%llu\n");

static int rmap_oplog_stats_show(struct seq_file *m, void *v)
{
	unsigned long sum[RMAP_OPLOG_NR_STATS] = { };
	unsigned int cpu;
	int i;

	for_each_possible_cpu(cpu)
		for (i = 0; i < RMAP_OPLOG_NR_STATS; i++)
			sum[i] += per_cpu(rmap_oplog_stats, cpu)[i];
	for (i = 0; i < RMAP_OPLOG_NR_STATS; i++)
		seq_printf(m, "%s %lu\n", rmap_oplog_stat_names[i], sum[i]);
	seq_printf(m, "logs %lu\n", oplog_type_nr_logs(&rmap_oplog_type));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(rmap_oplog_stats);

static int __init rmap_oplog_init(void)
{
	struct dentry *dir;
	int err;

	err = oplog_type_register(&rmap_oplog_type);
	if (err) {
		pr_warn("rmap_oplog: cannot register the OpLog type: %d\n", err);
		return err;
	}
	rmap_oplog_registered = true;
	if (rmap_oplog_boot_on)
		rmap_oplog_switch(true);
	pr_info("rmap_oplog: file reverse-map inserts and removes logged per CPU: %s\n",
		rmap_oplog_boot_on ? "on" : "off");

	dir = debugfs_create_dir("rmap_oplog", NULL);
	debugfs_create_file_unsafe("enabled", 0600, dir, NULL,
				   &rmap_oplog_enabled_fops);
	debugfs_create_file("stats", 0400, dir, NULL, &rmap_oplog_stats_fops);
	return 0;
}
fs_initcall(rmap_oplog_init);
