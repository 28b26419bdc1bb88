/* SPDX-License-Identifier: GPL-2.0 */
/*
 * OpLog reference counts for hot dentries: the interface between
 * fs/dcache.c, fs/namei.c and fs/dcache_oplog.c.  See fs/dcache_oplog.c.
 */
#ifndef _FS_DCACHE_OPLOG_H
#define _FS_DCACHE_OPLOG_H

#include <linux/dcache.h>
#include <linux/jump_label.h>
#include <linux/oplog.h>

/**
 * enum dcache_oplog_ref - outcome of dcache_oplog_get()
 * @DCACHE_OPLOG_LOCKREF: not taken; take the reference on d_lockref instead
 * @DCACHE_OPLOG_GOT: reference taken on this CPU's counter, @seq still valid
 * @DCACHE_OPLOG_UNDONE: @seq changed after the increment, which was undone;
 *	no reference is held (the thesis's "decrement and retry")
 * @DCACHE_OPLOG_STALE: @seq changed and the undo could not be logged; the
 *	reference is held and must be dropped with dput()
 */
enum dcache_oplog_ref {
	DCACHE_OPLOG_LOCKREF,
	DCACHE_OPLOG_GOT,
	DCACHE_OPLOG_UNDONE,
	DCACHE_OPLOG_STALE,
};

#ifdef CONFIG_DCACHE_OPLOG

/* Entries of the per-CPU hotness filter, log2 (dcache_oplog_hot()). */
#define DCACHE_OPLOG_RECENT_BITS	8

DECLARE_STATIC_KEY_FALSE(dcache_oplog_key);
DECLARE_STATIC_KEY_FALSE(dcache_oplog_logged_key);
extern struct oplog_type dcache_oplog_type;

int dcache_oplog_switch(bool on);

enum dcache_oplog_ref __dcache_oplog_get_miss(struct dentry *dentry,
					      unsigned int seq);
enum dcache_oplog_ref __dcache_oplog_undo(struct dentry *dentry);
bool __dcache_oplog_get_parent_miss(struct dentry *dentry);
bool __dcache_oplog_put(struct dentry *dentry);
#if IS_ENABLED(CONFIG_KUNIT)
bool dcache_oplog_hot(const struct dentry *dentry);
bool dcache_oplog_eligible(const struct dentry *dentry);
#endif
#if IS_ENABLED(CONFIG_DCACHE_OPLOG_KUNIT_TEST)
void dcache_oplog_hot_reset(void);
#endif
void __dcache_oplog_sync(struct dentry *dentry);

/* fs/dcache.c: @dentry lost its last reference in a detach (d_lock held). */
void d_oplog_unpinned(struct dentry *dentry);

/**
 * dcache_oplog_get() - take a reference on this CPU's counter
 * @dentry: the dentry found by RCU-walk
 * @seq: the d_seq value the walk validated @dentry with
 *
 * The thesis's OpLog dentry reference (section 4.2): increment the local
 * count, then check that @dentry's sequence count did not change; if it
 * did, decrement again and report it, so that the caller retries.  The
 * hit (this CPU logs @dentry) is inline and takes no lock; a miss goes to
 * __dcache_oplog_get_miss().
 *
 * Context: under rcu_read_lock() (RCU-walk); may take d_lock on a log
 * cache miss of a hot dentry; does not sleep.
 * Return: %DCACHE_OPLOG_LOCKREF if the switch is off, or @dentry is not
 * eligible, not hot, or OpLog refused it (take the reference on
 * d_lockref), %DCACHE_OPLOG_GOT on success, %DCACHE_OPLOG_UNDONE if @seq
 * is stale and no reference is held, %DCACHE_OPLOG_STALE if @seq is stale
 * and the reference is held (the undo could not be logged; dput() it).
 */
static inline enum dcache_oplog_ref dcache_oplog_get(struct dentry *dentry,
						     unsigned int seq)
{
	lockdep_assert_in_rcu_read_lock();
	if (!static_branch_unlikely(&dcache_oplog_key))
		return DCACHE_OPLOG_LOCKREF;
	if (unlikely(!oplog_add_hit(&dcache_oplog_type, &dentry->d_oplog, 1)))
		return __dcache_oplog_get_miss(dentry, seq);
	if (likely(!read_seqcount_retry(&dentry->d_seq, seq)))
		return DCACHE_OPLOG_GOT;
	return __dcache_oplog_undo(dentry);
}

/**
 * dcache_oplog_get_hit() - take a reference on this CPU's counter, hit only
 * @dentry: the dentry; the caller holds a reference to it, or is under
 *	rcu_read_lock() and re-checks that it reached @dentry validly
 *
 * dget() for a dentry this CPU already logs: path_get() (the f_path
 * reference of open(), the cwd and root references) and dget_parent().
 * Only this CPU's log is touched; a dentry it does not log is left to
 * dget() on d_lockref, so that no caller takes d_lock here.  A log found by
 * oplog_add_hit() holds a pin (see the top of fs/dcache_oplog.c), so the
 * dentry is alive and hashed and the reference is valid even if the
 * caller had none.
 *
 * Context: any (false outside task context); does not sleep.
 * Return: true if the reference was taken, false if the caller must take
 * it on d_lockref.
 */
static inline bool dcache_oplog_get_hit(struct dentry *dentry)
{
	if (!static_branch_unlikely(&dcache_oplog_key) ||
	    !oplog_obj_has_logs(&dentry->d_oplog))
		return false;
	return oplog_add_hit(&dcache_oplog_type, &dentry->d_oplog, 1);
}

/**
 * dcache_oplog_get_parent() - dget_parent()'s reference on this CPU's counter
 * @dentry: the parent, read under rcu_read_lock(); no reference is held
 *
 * As dcache_oplog_get_hit(), but a miss on a parent that is hot on this
 * CPU attaches this CPU's log (__dcache_oplog_get_parent_miss()): the
 * parent that fsnotify_parent() takes on every event in a watched
 * directory is then logged by those events, not only by walks that
 * happened to take a reference on it.  ->attach takes @dentry's d_lock,
 * as dget_parent()'s own slow path does, and refuses a dying or unhashed
 * dentry; dget_parent() checks the child's d_seq afterwards either way.
 *
 * Context: under rcu_read_lock(); may take @dentry->d_lock; does not sleep.
 * Return: true if the reference was taken, false if the caller must take
 * it on d_lockref.
 */
static inline bool dcache_oplog_get_parent(struct dentry *dentry)
{
	lockdep_assert_in_rcu_read_lock();
	if (!static_branch_unlikely(&dcache_oplog_key))
		return false;
	if (likely(oplog_add_hit(&dcache_oplog_type, &dentry->d_oplog, 1)))
		return true;
	return __dcache_oplog_get_parent_miss(dentry);
}

/**
 * dcache_oplog_put() - dput() through this CPU's counter
 * @dentry: a dentry the caller holds a reference to
 *
 * A dentry that some CPU logs is pinned, so this put is never the last:
 * it goes to this CPU's counter inline if this CPU logs @dentry, and to
 * __dcache_oplog_put() otherwise.
 *
 * Context: process context; may take d_lock on a log cache miss.
 * Return: true if the reference was dropped, false if the caller must drop
 * it through the lockref path of dput() (the switch is off, no CPU logs
 * @dentry, or OpLog refused it).
 */
static inline bool dcache_oplog_put(struct dentry *dentry)
{
	if (!static_branch_unlikely(&dcache_oplog_key) ||
	    !oplog_obj_has_logs(&dentry->d_oplog))
		return false;
	if (likely(oplog_add_hit(&dcache_oplog_type, &dentry->d_oplog, -1)))
		return true;
	return __dcache_oplog_put(dentry);
}

/*
 * May some CPU count references to @dentry?  Lockless hint, for
 * fast_dput(): with the switch off and the logs drained it does not read
 * d_oplog (see dcache_oplog_switch()).
 */
static inline bool dcache_oplog_maybe_logged(const struct dentry *dentry)
{
	return static_branch_unlikely(&dcache_oplog_logged_key) &&
	       oplog_obj_has_logs(&dentry->d_oplog);
}

/*
 * Make d_lockref.count exact: fold and detach every CPU's counter.
 * Caller holds d_lock.  Independent of the switch, so that turning it off
 * at run time leaves nothing behind.
 */
static inline void dcache_oplog_sync(struct dentry *dentry)
{
	lockdep_assert_held(&dentry->d_lock);
	if (unlikely(oplog_obj_has_logs(&dentry->d_oplog)))
		__dcache_oplog_sync(dentry);
}

#else /* !CONFIG_DCACHE_OPLOG */

static inline enum dcache_oplog_ref dcache_oplog_get(struct dentry *dentry,
						     unsigned int seq)
{
	return DCACHE_OPLOG_LOCKREF;
}

static inline bool dcache_oplog_get_hit(struct dentry *dentry)
{
	return false;
}

static inline bool dcache_oplog_get_parent(struct dentry *dentry)
{
	return false;
}

static inline bool dcache_oplog_put(struct dentry *dentry)
{
	return false;
}

static inline bool dcache_oplog_maybe_logged(const struct dentry *dentry)
{
	return false;
}

static inline void dcache_oplog_sync(struct dentry *dentry)
{
}

#endif /* CONFIG_DCACHE_OPLOG */
#endif /* _FS_DCACHE_OPLOG_H */
