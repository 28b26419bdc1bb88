// SPDX-License-Identifier: GPL-2.0
/*
 * OpLog reference counts for hot dentries.
 *
 * Boyd-Wickizer, "Optimizing Communication Bottlenecks in Multiprocessor
 * Operating System Kernels", PhD thesis, MIT, 2014, sections 3.4, 4.2 and
 * 6.2: stat() of one name from every CPU bounces the cache line of
 * d_lockref twice per call (the reference taken on the final component by
 * path lookup and its dput()).  With this file, that reference is counted
 * in a per-CPU OpLog counter (%OPLOG_COUNTER, <linux/oplog.h>) instead:
 * a hit touches only this CPU's log cache.
 *
 * The count.  Let A be the number of CPUs holding a log of dentry D and
 * delta(c) the signed count logged on CPU c.  Then
 *
 *	true count = d_lockref.count - A + sum over c of delta(c)
 *
 * because every attached log holds one pin on d_lockref.count (->attach
 * adds one, ->detach drops it, both under d_lock).  The pins are what keep
 * D alive while a per-CPU log points at it: D can only be killed with
 * d_lockref.count == 0, and no kill decision is taken before
 * dcache_oplog_sync() flushed D (folded every delta and dropped every pin),
 * after which d_lockref.count is exact.  Every reader that needs the exact
 * count calls dcache_oplog_sync() under d_lock first: dput()'s kill
 * decision (fast_dput(), lock_for_kill()), d_delete(), d_prune_aliases(),
 * the LRU shrinker (under its trylock), shrink_dcache_parent() (hence
 * d_invalidate(), rmdir and umount), umount_check(), dget_parent()'s slow
 * path, and ___d_drop(), which covers d_drop(), d_invalidate(), unlink
 * and rename (__d_move()).  The parent put in __dentry_kill() needs no
 * exact count: it drops the reference d_alloc() took on d_lockref, and a
 * parent that some CPU logs keeps that CPU's pin, so the put never finds
 * zero and never kills it; a parent whose true count fell to zero stays
 * hashed and goes to the LRU when its last log is detached.  Without a
 * flush there, creating and unlinking names in one directory from many
 * CPUs keeps each CPU's log of the directory.
 *
 * The shared part of the count (d_lockref.count minus the pins) never
 * drops below zero: a put on d_lockref of a dentry that some CPU may log
 * folds the logs first (fast_dput()), so d_lockref.count is never lower
 * than the number of pins outside d_lock.
 *
 * Which filesystems: only those whose superblock opts in with
 * %SB_I_DCACHE_OPLOG (tmpfs and ramfs, hence rootfs), because a filesystem
 * that reads d_count() or d_lockref.count would read a count that misses
 * the per-CPU parts.  An opt-in cannot miss a filesystem: one that is not
 * reviewed is never eligible.  autofs, for one, reads d_count() in
 * autofs_tree_busy() on directories that carry no managed flag, which a
 * rule based on d_flags let through.  "make check" runs a coccinelle
 * script (tools/testing/scalable/cocci/dcount_readers.cocci) that finds
 * every reader of d_count() and d_lockref.count in the tree and fails on
 * one that is not in its reviewed list, so that a new reader in an
 * opted-in filesystem or in the VFS cannot slip in.
 *
 * Hashed positive dentries only.  ->attach refuses a dead, unhashed, negative
 * or root dentry, one marked not to be cached, and one that revalidates,
 * automounts or is still being looked up (the d_flags in %DCACHE_OPLOG_NEVER),
 * whatever its filesystem.  As ___d_drop() flushes, an unhashed dentry never
 * has a log, so a dentry whose last reference goes away in ->detach (when
 * another dentry evicts it from a log cache, or OpLog's shrinker or CPU
 * hotplug detaches it, with locks held that forbid killing it) is hashed:
 * ->detach does what dput() does for a dentry worth retaining,
 * d_oplog_unpinned() puts it on the LRU.  Nothing is killed or freed from
 * inside OpLog.  The one difference from the lockref path of dput(): a dentry
 * whose ->d_delete() would have asked to free it at once (or one marked
 * %DCACHE_DONTCACHE after it got a log) waits on the LRU for the shrinker or
 * umount instead.  On tmpfs, whose ->d_delete() always asks, this does not
 * happen: a positive tmpfs dentry holds its own reference until unlink, and
 * unlink (d_delete()) flushes before the count can drop.
 *
 * The thesis's order: increment this CPU's count, then re-check d_seq; on
 * a change, decrement and let the caller retry (path walk falls back from
 * RCU to ref-walk, the lockref path's retry).  ___d_drop() flushes under d_lock
 * before it invalidates d_seq, and ->attach refuses unhashed dentries, so
 * a reference taken on a dying dentry is either folded by that flush or
 * seen as stale by the d_seq re-check.
 *
 * Which references are logged: the one legitimize_path() takes (the final
 * component of a path walk, symlinks being followed, scoped roots) and
 * dget_parent()'s (dcache_oplog_get_parent(): the parent that
 * fsnotify_parent() takes on every event in a watched directory), and,
 * on a CPU that already logs the dentry, the ones path_get() takes (the
 * f_path reference of an open file, the cwd and root references of
 * fs_struct), through the hit path alone (dcache_oplog_get_hit(): its
 * callers may hold any lock); every dput() of a dentry that some CPU logs
 * goes to this CPU's counter.  So open() and close() of a cached file,
 * whose walk legitimizes the file's dentry first, touch no shared line of
 * the dentry.
 *
 * Which dentries are hot: a CPU attaches a log only on its second miss on
 * a dentry within a short window (dcache_oplog_hot()), so that a walk of
 * more names than the log cache holds keeps the lockref path's cost instead of
 * attaching and evicting a log per name.  A miss on a hot dentry costs one
 * d_lock round trip, what a contended lockref costs anyway, and a log
 * cache slot pins at most one dentry per CPU and slot.
 *
 * Memory: none per dentry.  struct oplog_obj (one word) takes the last
 * word of the inline name (DNAME_INLINE_LEN 40 -> 32 on x86-64), so that
 * struct dentry stays at 192 bytes, three cache lines, and d_oplog shares
 * the read-mostly line of d_op and d_sb, not that of d_lockref.  The cost:
 * names of 32 to 39 bytes are allocated outside the dentry (an external
 * name, kmalloc'ed, with a reference count).  Plus the counter log cache
 * of OpLog: %OPLOG_DEFAULT_SLOTS slots per CPU.
 *
 * Switch: "dcache_oplog=on|off" on the command line (default on), and
 * /sys/kernel/debug/dcache_oplog/enabled at run time (dcache_oplog_switch()).
 * Two static keys: dcache_oplog_key says whether new references go to the
 * per-CPU counters, dcache_oplog_logged_key whether any log may exist.
 * Turning the switch off clears the first, so that ->attach refuses every
 * dentry, detaches every log of the type (oplog_type_drain()), then clears
 * the second: from then on fast_dput() does not read d_oplog at all, and
 * dput() takes the lockref path of 6.12.
 */

#include <kunit/visibility.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/hash.h>
#include <linux/init.h>
#include <linux/kernel.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/seqlock.h>
#include <linux/spinlock.h>
#include <linux/stddef.h>
#include <linux/string.h>

#include "dcache_oplog.h"

/* d_flags that make a dentry ineligible for per-CPU reference counts. */
#define DCACHE_OPLOG_NEVER	(DCACHE_OP_REVALIDATE | DCACHE_OP_WEAK_REVALIDATE | \
				 DCACHE_OP_REAL | DCACHE_DISCONNECTED | \
				 DCACHE_DONTCACHE | DCACHE_NEED_AUTOMOUNT | \
				 DCACHE_MANAGE_TRANSIT | DCACHE_PAR_LOOKUP)

DEFINE_STATIC_KEY_FALSE(dcache_oplog_key);
DEFINE_STATIC_KEY_FALSE(dcache_oplog_logged_key);

static bool dcache_oplog_boot_on __initdata = true;
static bool dcache_oplog_registered;
static DEFINE_MUTEX(dcache_oplog_switch_lock);

static struct dentry *obj_dentry(struct oplog_obj *obj)
{
	return container_of(obj, struct dentry, d_oplog);
}

/* The object lock of a dentry's counter: d_lock, taken by OpLog. */
static spinlock_t *dcache_oplog_lock(struct oplog_obj *obj)
{
	return &obj_dentry(obj)->d_lock;
}

/*
 * Add one CPU's logged references into d_lockref.count.  d_lock is held,
 * so the lockless lockref paths (which need the lock free) never see the
 * transient value while several CPUs are folded one after the other.
 */
static void dcache_oplog_fold(struct oplog_obj *obj, long delta)
{
	struct dentry *dentry = obj_dentry(obj);

	lockdep_assert_held(&dentry->d_lock);
	dentry->d_lockref.count += (int)delta;
}

/* Visible to KUnit: the root is refused here and nowhere else. */
VISIBLE_IF_KUNIT bool dcache_oplog_eligible(const struct dentry *dentry)
{
	unsigned int flags = READ_ONCE(dentry->d_flags);

	return (dentry->d_sb->s_iflags & SB_I_DCACHE_OPLOG) &&
	       !(flags & DCACHE_OPLOG_NEVER) &&
	       (flags & DCACHE_ENTRY_TYPE) != DCACHE_MISS_TYPE &&
	       !IS_ROOT(dentry);
}

/* A CPU gets a log of the dentry: pin it, unless it is dying. */
static bool dcache_oplog_attach(struct oplog_obj *obj)
{
	struct dentry *dentry = obj_dentry(obj);

	lockdep_assert_held(&dentry->d_lock);
	/* Switched off: dcache_oplog_switch() is draining every log. */
	if (!static_branch_unlikely(&dcache_oplog_key))
		return false;
	if (dentry->d_lockref.count < 0 || d_unhashed(dentry) ||
	    !dcache_oplog_eligible(dentry))
		return false;
	dentry->d_lockref.count++;
	return true;
}

/*
 * A CPU's log is gone, its references folded: drop its pin.  This may be
 * the last reference, with locks held (another dentry's d_lock and a
 * per-CPU cache lock) under which the dentry cannot be killed; it is
 * hashed and eligible (see the comment at the top), so it is kept on the
 * LRU as dput() would keep it.
 */
static void dcache_oplog_detach(struct oplog_obj *obj)
{
	struct dentry *dentry = obj_dentry(obj);

	lockdep_assert_held(&dentry->d_lock);
	if (WARN_ON_ONCE(dentry->d_lockref.count <= 0))
		return;
	if (!--dentry->d_lockref.count)
		d_oplog_unpinned(dentry);
}

static const struct oplog_type_ops dcache_oplog_ops = {
	.obj_lock	= dcache_oplog_lock,
	.fold		= dcache_oplog_fold,
	.attach		= dcache_oplog_attach,
	.detach		= dcache_oplog_detach,
};

/* The inline hit paths of fs/dcache_oplog.h use it too. */
struct oplog_type dcache_oplog_type = {
	.name	= "dentry",
	.kind	= OPLOG_COUNTER,
	.ops	= &dcache_oplog_ops,
};

/*
 * The hotness filter: per CPU, a direct-mapped table of the dentries whose
 * reference last missed the log cache, one word per entry, indexed by a
 * hash of the dentry's address.  A miss on a dentry that is in its entry
 * finds it hot and attaches a log; any other miss records the dentry and
 * takes a lockref reference.  So a CPU logs a dentry from its second miss
 * on it within the last few hundred misses of other dentries that hash to
 * the same entry, and a walk of more distinct names than the log cache
 * holds (find, a build, stat_bench's "many" mode) never attaches, evicts
 * or takes d_lock for them: it costs the lockref path plus this lookup.
 * Contention as the criterion (a failed cmpxchg on d_lockref) would need a
 * change to lib/lockref.c and still log a dentry that two CPUs happen to
 * share once; the second reference from one CPU is what a log pays off on.
 * The entries are hints: a stale one (a freed dentry whose address is
 * reused, or a race with migration) costs one premature log or one lockref
 * reference, never a wrong count.
 */
static DEFINE_PER_CPU(unsigned long [1 << DCACHE_OPLOG_RECENT_BITS],
		      dcache_oplog_recent);

/**
 * dcache_oplog_hot() - has this CPU referenced @dentry recently?
 * @dentry: a dentry whose reference missed this CPU's log cache
 *
 * Records @dentry as this CPU's latest miss in its filter entry.
 *
 * Context: any task context; preemption may be enabled (a migration in
 * between only makes the answer wrong once).
 * Return: true if @dentry was the last miss recorded in its entry.
 */
VISIBLE_IF_KUNIT bool dcache_oplog_hot(const struct dentry *dentry)
{
	unsigned long d = (unsigned long)dentry;
	unsigned int i = hash_ptr((void *)dentry, DCACHE_OPLOG_RECENT_BITS);

	if (this_cpu_read(dcache_oplog_recent[i]) == d)
		return true;
	this_cpu_write(dcache_oplog_recent[i], d);
	return false;
}

#if IS_ENABLED(CONFIG_DCACHE_OPLOG_KUNIT_TEST)
/* KUnit: forget this CPU's recent misses (caller keeps it on this CPU). */
void dcache_oplog_hot_reset(void)
{
	unsigned int i;

	for (i = 0; i < 1 << DCACHE_OPLOG_RECENT_BITS; i++)
		this_cpu_write(dcache_oplog_recent[i], 0);
}
#endif

/**
 * __dcache_oplog_undo() - undo a reference taken against a stale d_seq
 * @dentry: the dentry whose d_seq changed after the reference was taken
 *
 * The thesis's "decrement and retry" (section 4.2), out of line: it is
 * rare.
 *
 * Context: as dcache_oplog_get().
 * Return: %DCACHE_OPLOG_UNDONE if the reference was dropped again,
 * %DCACHE_OPLOG_STALE if the decrement could not be logged and the
 * reference is still held (dput() it).
 */
enum dcache_oplog_ref __dcache_oplog_undo(struct dentry *dentry)
{
	if (!oplog_add(&dcache_oplog_type, &dentry->d_oplog, -1))
		return DCACHE_OPLOG_UNDONE;
	return DCACHE_OPLOG_STALE;
}

/**
 * __dcache_oplog_get_miss() - dcache_oplog_get() of a dentry not logged here
 * @dentry: the dentry found by RCU-walk
 * @seq: the d_seq value the walk validated @dentry with
 *
 * The miss path of dcache_oplog_get(): this CPU has no log of @dentry.  It
 * gets one only if the dentry is hot here (dcache_oplog_hot()) and
 * eligible; a cold one takes a lockref reference.  The eligibility check
 * is made only for a hot dentry, so that a cold one costs no read of d_sb
 * (the dentry's second cache line, which the lockref walk does not read); a
 * hit needs none, as ->attach made it and the log is still attached.
 *
 * Context: under rcu_read_lock() (RCU-walk); may take d_lock on a log
 * cache miss of a hot dentry; does not sleep.
 * Return: as dcache_oplog_get().
 */
enum dcache_oplog_ref __dcache_oplog_get_miss(struct dentry *dentry,
					      unsigned int seq)
{
	if (!dcache_oplog_hot(dentry) || !dcache_oplog_eligible(dentry) ||
	    oplog_add(&dcache_oplog_type, &dentry->d_oplog, 1))
		return DCACHE_OPLOG_LOCKREF;
	if (!read_seqcount_retry(&dentry->d_seq, seq))
		return DCACHE_OPLOG_GOT;
	return __dcache_oplog_undo(dentry);
}

/**
 * __dcache_oplog_get_parent_miss() - dcache_oplog_get_parent() on a miss
 * @dentry: the parent, read under rcu_read_lock(); no reference is held
 *
 * Attaches this CPU's log of @dentry and takes the reference on it if
 * @dentry is hot here and eligible; ->attach pins @dentry under its
 * d_lock unless it is dying or unhashed.
 *
 * Context: under rcu_read_lock(); may take @dentry->d_lock; does not sleep.
 * Return: true if the reference was taken, false if the caller must take
 * it on d_lockref.
 */
bool __dcache_oplog_get_parent_miss(struct dentry *dentry)
{
	return in_task() && dcache_oplog_hot(dentry) &&
	       dcache_oplog_eligible(dentry) &&
	       !oplog_add(&dcache_oplog_type, &dentry->d_oplog, 1);
}

/**
 * __dcache_oplog_put() - drop a reference through this CPU's counter
 * @dentry: a dentry the caller holds a reference to, logged by some CPU
 *
 * The miss path of dcache_oplog_put(): this CPU has no log of @dentry (or
 * lost it meanwhile), so one is attached for it, or the decrement is
 * folded at once.  The reference may have been taken on any CPU's counter
 * or on d_lockref: only the sum matters.  Never the last put that kills: a
 * logged dentry is pinned until a synchronize point flushes it.
 *
 * Context: process context; may take d_lock on a log cache miss.
 * Return: true if the reference was dropped, false if the caller must
 * drop it through the lockref path of dput() (OpLog refused the dentry).
 */
bool __dcache_oplog_put(struct dentry *dentry)
{
	return !oplog_add(&dcache_oplog_type, &dentry->d_oplog, -1);
}

/**
 * __dcache_oplog_sync() - make d_lockref.count exact
 * @dentry: the dentry
 *
 * Fold every CPU's count into d_lockref.count and detach every log
 * (oplog_flush_locked()), dropping their pins; the dentry may be left with
 * a count of zero on the LRU (see dcache_oplog_detach()).
 *
 * Context: d_lock of @dentry held; does not sleep.
 */
void __dcache_oplog_sync(struct dentry *dentry)
{
	lockdep_assert_held(&dentry->d_lock);
	oplog_flush_locked(&dcache_oplog_type, &dentry->d_oplog);
}

static int __init dcache_oplog_setup(char *str)
{
	if (!str)
		return 0;
	if (!strcmp(str, "on"))
		dcache_oplog_boot_on = true;
	else if (!strcmp(str, "off"))
		dcache_oplog_boot_on = false;
	else
		return 0;
	return 1;
}
__setup("dcache_oplog=", dcache_oplog_setup);

static int dcache_oplog_enabled_get(void *data, u64 *val)
{
	*val = static_key_enabled(&dcache_oplog_key);
	return 0;
}

/**
 * dcache_oplog_switch() - turn the per-CPU dentry reference counts on or off
 * @on: true to count new references per CPU, false for the lockref path
 *
 * On: dcache_oplog_logged_key first (fast_dput() checks d_oplog), then
 * dcache_oplog_key (references go to the per-CPU counters).  Off: the
 * reverse, with every log detached in between: once dcache_oplog_key is
 * off, ->attach refuses, synchronize_rcu() waits for the path walks that
 * saw it on, and oplog_type_drain() folds and detaches every CPU's log,
 * retrying the dentries whose d_lock was busy, so that no dentry has a
 * per-CPU count when fast_dput() stops looking for one.
 *
 * Context: process context, sleeps; not with d_lock or i_rwsem held.
 * Return: 0; -ENODEV if the OpLog type could not be registered at boot.
 */
int dcache_oplog_switch(bool on)
{
	if (!dcache_oplog_registered)
		return -ENODEV;
	mutex_lock(&dcache_oplog_switch_lock);
	if (on) {
		static_branch_enable(&dcache_oplog_logged_key);
		static_branch_enable(&dcache_oplog_key);
	} else if (static_key_enabled(&dcache_oplog_logged_key)) {
		static_branch_disable(&dcache_oplog_key);
		synchronize_rcu();
		oplog_type_drain(&dcache_oplog_type);
		static_branch_disable(&dcache_oplog_logged_key);
	}
	mutex_unlock(&dcache_oplog_switch_lock);
	return 0;
}

static int dcache_oplog_enabled_set(void *data, u64 val)
{
	if (val > 1)
		return -EINVAL;
	return dcache_oplog_switch(val);
}
DEFINE_DEBUGFS_ATTRIBUTE(dcache_oplog_enabled_fops, dcache_oplog_enabled_get,
			 dcache_oplog_enabled_set, "%llu\n");

/* Pins held by per-CPU logs: one per log, summed over the CPUs now. */
static int dcache_oplog_pinned_get(void *data, u64 *val)
{
	*val = oplog_type_nr_logs(&dcache_oplog_type);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(dcache_oplog_pinned_fops, dcache_oplog_pinned_get,
			 NULL, "%llu\n");

static int __init dcache_oplog_init(void)
{
	struct dentry *dir;
	int err;

	/* d_oplog is the last word of the inline name, before d_op. */
	BUILD_BUG_ON(offsetof(struct dentry, d_oplog) !=
		     offsetof(struct dentry, d_iname) + DNAME_INLINE_LEN);
	BUILD_BUG_ON(offsetof(struct dentry, d_op) !=
		     offsetof(struct dentry, d_oplog) + sizeof(struct oplog_obj));
	if (IS_ENABLED(CONFIG_64BIT) && sizeof(spinlock_t) == 4) {
		/* The 6.12 x86-64 layout: 128 + 64 bytes, d_oplog on line 1. */
		BUILD_BUG_ON(offsetof(struct dentry, d_oplog) / 64 != 1);
		BUILD_BUG_ON(offsetof(struct dentry, d_lockref) != 128);
		BUILD_BUG_ON(sizeof(struct dentry) != 192);
	}

	err = oplog_type_register(&dcache_oplog_type);
	if (err) {
		pr_warn("dcache_oplog: cannot register the OpLog type: %d\n",
			err);
		return err;
	}
	dcache_oplog_registered = true;
	if (dcache_oplog_boot_on)
		dcache_oplog_switch(true);
	pr_info("dcache_oplog: per-CPU dentry reference counts %s\n",
		dcache_oplog_boot_on ? "on" : "off");

	dir = debugfs_create_dir("dcache_oplog", NULL);
	debugfs_create_file_unsafe("enabled", 0600, dir, NULL,
				   &dcache_oplog_enabled_fops);
	debugfs_create_file_unsafe("logs", 0400, dir, NULL,
				   &dcache_oplog_pinned_fops);
	return 0;
}
fs_initcall(dcache_oplog_init);
