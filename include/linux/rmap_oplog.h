/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The file reverse map on OpLog: what fork, exit and the inode code call.
 * The i_mmap_lock_*() helpers of <linux/fs.h> synchronize; the rules are
 * at the top of mm/oplog_rmap.c, the design in
 * Documentation/core-api/oplog.rst.
 */
#ifndef _LINUX_RMAP_OPLOG_H
#define _LINUX_RMAP_OPLOG_H

#include <linux/fs.h>
#include <linux/jump_label.h>
#include <linux/mm_types.h>

#ifdef CONFIG_RMAP_OPLOG
DECLARE_STATIC_KEY_FALSE(rmap_oplog_key);

/*
 * &oplog_keyed_op.code of a VMA whose removal from the tree is logged,
 * beyond OpLog's %OPLOG_REMOVE (logged; the VMA is still its owner's, the
 * task unmapping it): the hand-off of the VMA's free between that owner
 * (remove_vma()) and whoever applies the remove.  The second of the two
 * frees it; see "Lifetime" in mm/oplog_rmap.c.
 */
#define RMAP_OPLOG_CODE_HANDED_OFF	3	/* the owner is done: the log frees it */
#define RMAP_OPLOG_CODE_REMOVED		4	/* out of the tree: the owner frees it */
#define RMAP_OPLOG_CODE_UNREACHABLE	5	/* ... by exit_mmap(): no grace period */

/*
 * &oplog_keyed_op.code of a VMA whose insert is logged and whose range its
 * owner changes without i_mmap_rwsem (rmap_oplog_prepare_logged()): the
 * owner's mark, and the mark with a holder of the rwsem waiting for it.
 */
#define RMAP_OPLOG_CODE_PREPARING	6
#define RMAP_OPLOG_CODE_PREPARING_WAITED 7

void rmap_oplog_mapping_init(struct address_space *mapping);
void rmap_oplog_mapping_release(struct address_space *mapping);
bool __rmap_oplog_fork_insert(struct vm_area_struct *vma,
			      struct vm_area_struct *parent);
int __rmap_oplog_absorb_local(struct address_space *mapping,
			      struct vm_area_struct **vmas, int count);
int __rmap_oplog_log_removes(struct address_space *mapping,
			     struct vm_area_struct **vmas, int count);
bool __rmap_oplog_vma_release(struct vm_area_struct *vma, bool unreachable);
int __rmap_oplog_lock_unlink(struct address_space *mapping,
			     struct vm_area_struct **vmas, int count);
void __rmap_oplog_lock_insert(struct address_space *mapping,
			      struct vm_area_struct *parent);
bool __rmap_oplog_insert_logged(struct vm_area_struct *vma);
bool __rmap_oplog_mmap_insert(struct vm_area_struct *vma);
unsigned int __rmap_oplog_prepare_vmas(struct address_space *mapping,
				       struct vm_area_struct **vmas, int count);
bool __rmap_oplog_relog(struct address_space *mapping,
			struct vm_area_struct *vma);
bool __rmap_oplog_prepare_logged(struct address_space *mapping,
				 struct vm_area_struct **vmas, int count);
void __rmap_oplog_complete_logged(struct address_space *mapping,
				  struct vm_area_struct **vmas, int count,
				  struct vm_area_struct *insert);
void __rmap_oplog_lock_move(struct vm_area_struct *vma);
int rmap_oplog_switch(bool on);
#if IS_ENABLED(CONFIG_KUNIT)
/* Internals, for mm/oplog_rmap_kunit.c only. */
bool rmap_oplog_enabled(void);
bool rmap_oplog_eligible(struct vm_area_struct *vma,
			 struct vm_area_struct *parent);
bool rmap_oplog_queue_insert(struct address_space *mapping,
			     struct vm_area_struct *vma);
bool rmap_oplog_queue_behind(struct address_space *mapping,
			     struct vm_area_struct *vma,
			     struct vm_area_struct *parent);
#endif

/**
 * rmap_oplog_fork_insert() - log the insert of a child's file VMA
 * @vma: the child's new VMA, in the child's VMA tree, with its vm_file
 * @parent: the parent's VMA that @vma duplicates
 *
 * dup_mmap() calls this instead of inserting @vma into its file's i_mmap
 * tree under i_mmap_rwsem.  Context: task context, both mmap_locks held
 * for write; does not sleep.
 * Return: true if the insert was logged (the caller is done); false if
 * the caller must insert @vma itself, under i_mmap_lock_write().
 */
static inline bool rmap_oplog_fork_insert(struct vm_area_struct *vma,
					  struct vm_area_struct *parent)
{
	return static_branch_unlikely(&rmap_oplog_key) &&
	       __rmap_oplog_fork_insert(vma, parent);
}

/**
 * rmap_oplog_mmap_insert() - log the insert of a VMA that mmap() created
 * @vma: the new VMA, in its mm's VMA tree and write-locked, not in i_mmap
 *
 * __mmap_region() calls this instead of vma_link_file().  The VMA has no
 * page table entry yet, and gets one only by a fault after mmap_lock is
 * released, so any walker that can meet one synchronizes the insert into
 * the tree first.  A process that maps and unmaps a file on one CPU then
 * never takes i_mmap_rwsem (local absorption at the unmap).
 * Context: task context, mmap_lock held for write; does not sleep.
 * Return: true if the insert was logged (the caller is done); false if
 * the caller must link @vma itself with vma_link_file().
 */
static inline bool rmap_oplog_mmap_insert(struct vm_area_struct *vma)
{
	return static_branch_unlikely(&rmap_oplog_key) && vma->vm_file &&
	       __rmap_oplog_mmap_insert(vma);
}

/**
 * rmap_oplog_prepare_vmas() - lock i_mmap for changing VMAs already in it
 * @mapping: the address space that every VMA of @vmas maps
 * @vmas: the VMAs that the caller takes out of the tree, resizes and puts
 *	back, or removes; NULL entries are skipped
 * @count: the number of entries in @vmas; only the first 32 can be kept
 *	out of the tree
 *
 * For vma_prepare() (split, merge, expand, shrink): takes i_mmap_rwsem
 * for write.  A VMA of @vmas whose insert is still in this CPU's log is
 * taken out of the log (local absorption of the logged insert) and left
 * out of the tree: bit i of the result says so for @vmas[i], and the
 * caller neither takes it out of the tree nor puts it back, but hands it
 * to rmap_oplog_relog() (or removes nothing, if it frees it) before
 * unlocking.  Such a VMA is in neither the tree nor a log meanwhile,
 * which no walker can tell: walkers read the tree only under i_mmap_rwsem
 * and synchronize after taking it.  A VMA whose insert is logged on
 * another CPU is put into the tree by applying every CPU's log, the logs
 * left attached (oplog_synchronize_all_locked()).  Nothing else still in a
 * per-CPU log is applied, so an exec's ld.so, which splits the VMAs of
 * the libraries it maps, neither writes the tree of libc for its own
 * VMAs nor applies other CPUs' logs of it.  What was already spilled
 * (evictions, full logs) is applied, so that logged removes do not pile
 * up.
 * Context: task context; sleeps.  Unlock with i_mmap_unlock_write().
 * Return: the mask of the VMAs of @vmas left out of the tree.
 */
static inline unsigned int rmap_oplog_prepare_vmas(struct address_space *mapping,
						   struct vm_area_struct **vmas,
						   int count)
{
	if (static_branch_unlikely(&rmap_oplog_logged_key))
		return __rmap_oplog_prepare_vmas(mapping, vmas, count);
	i_mmap_lock_write(mapping);
	return 0;
}

/**
 * rmap_oplog_relog() - log the insert of a VMA that vma_prepare() changed
 * @mapping: the address space, its i_mmap_rwsem held for write
 * @vma: a VMA that rmap_oplog_prepare_vmas() left out of the tree (or
 *	the part split off such a VMA), in neither the tree nor a log
 *
 * Logs the insert of @vma in this CPU's log of @mapping, as mmap() would,
 * before the caller releases i_mmap_rwsem: the next holder synchronizes it
 * into the tree with @vma's range as it is then.  This CPU's log is
 * usually still attached (the VMA was taken out of it); a log that is not
 * cannot be attached while the rwsem is held, and the caller puts @vma
 * into the tree itself.
 * Context: task context, i_mmap_rwsem held for write; does not sleep.
 * Return: true if logged; false if the caller must insert @vma.
 */
static inline bool rmap_oplog_relog(struct address_space *mapping,
				    struct vm_area_struct *vma)
{
	return static_branch_unlikely(&rmap_oplog_logged_key) &&
	       __rmap_oplog_relog(mapping, vma);
}

/**
 * rmap_oplog_prepare_logged() - change logged VMAs without i_mmap_rwsem
 * @mapping: the address space that every VMA of @vmas maps
 * @vmas: the VMAs that the caller resizes (split, expand, shrink); NULL
 *	entries are skipped
 * @count: the number of entries in @vmas
 *
 * For vma_prepare() when it removes no VMA.  If the insert of every VMA
 * of @vmas is still logged, in any CPU's log or a spill list, marks each
 * of them (%RMAP_OPLOG_CODE_PREPARING) and returns true: the caller
 * changes their ranges and ends with rmap_oplog_complete_logged(), taking
 * no i_mmap_rwsem, so that an exec's ld.so, whose mprotect() splits the
 * VMAs it has just mapped of libc, writes no line of libc's address space.
 * A marked insert stays where it is; a holder of the rwsem that would put
 * it into the tree waits for the owner's rmap_oplog_complete_logged(), as
 * it would have waited for the rwsem, and then puts it in with its new
 * range; a holder that reads only its own VMAs passes it over.  Marks
 * nothing and returns false if a VMA is in the tree, or i_mmap_rwsem is
 * held (the holder may be putting the VMAs into the tree): the caller
 * takes the locked way, rmap_oplog_prepare_vmas().
 * Context: task context, the VMAs' mmap_lock held for write; does not
 * sleep.  Until rmap_oplog_complete_logged(), the caller holds what
 * amounts to i_mmap_rwsem for write against synchronizing holders: it may
 * take only what it could take under that rwsem (an anon_vma lock), and
 * must not allocate memory that reclaim could free through @mapping.
 * Return: true if every VMA of @vmas is marked.
 */
static inline bool rmap_oplog_prepare_logged(struct address_space *mapping,
					     struct vm_area_struct **vmas,
					     int count)
{
	return static_branch_unlikely(&rmap_oplog_key) &&
	       __rmap_oplog_prepare_logged(mapping, vmas, count);
}

/**
 * rmap_oplog_complete_logged() - end a change of logged VMAs
 * @mapping: the address space, as given to rmap_oplog_prepare_logged()
 * @vmas: the VMAs marked by rmap_oplog_prepare_logged(); NULL entries are
 *	skipped
 * @count: the number of entries in @vmas
 * @insert: the VMA split off one of @vmas, in neither the tree nor a log,
 *	or NULL
 *
 * Logs the insert of @insert (in this CPU's log, or the spill list if the
 * log refuses), then unmarks @vmas, whose inserts stay logged with their
 * new ranges, and wakes a holder of the rwsem waiting for them.
 * Context: task context, after rmap_oplog_prepare_logged() returned true,
 * the VMAs' mmap_lock still held for write; does not sleep.
 */
static inline void rmap_oplog_complete_logged(struct address_space *mapping,
					      struct vm_area_struct **vmas,
					      int count,
					      struct vm_area_struct *insert)
{
	__rmap_oplog_complete_logged(mapping, vmas, count, insert);
}

/**
 * rmap_oplog_lock_move() - lock i_mmap to keep walkers out of a page table move
 * @vma: the file VMA whose page table entries mremap() moves
 *
 * For take_rmap_locks().  The move reads and changes nothing in the tree;
 * it needs only that no rmap walker runs while entries travel between
 * @vma and the new VMA (copy_vma() asks for the rmap locks when @vma's
 * insert is still logged, and whole PMD and PUD moves always do).  Takes
 * i_mmap_rwsem for write and synchronizes nothing: a logged insert of
 * @vma stays logged, to be cancelled when the old range is unmapped, and
 * every CPU's log of the file stays attached.  A walker waits for the
 * rwsem and then synchronizes everything itself; while it is held, no
 * CPU attaches a new log.
 * Context: task context, @vma's mm's mmap_lock held for write; sleeps.
 * Unlock with i_mmap_unlock_write().
 */
static inline void rmap_oplog_lock_move(struct vm_area_struct *vma)
{
	if (static_branch_unlikely(&rmap_oplog_logged_key))
		__rmap_oplog_lock_move(vma);
	else
		i_mmap_lock_write(vma->vm_file->f_mapping);
}

/**
 * rmap_oplog_absorb_local() - drop file VMAs whose insert is still logged here
 * @mapping: the address space that every VMA of @vmas maps
 * @vmas: VMAs about to be removed from @mapping->i_mmap
 * @count: the number of @vmas
 *
 * Local absorption: a VMA whose insert is still in this CPU's log was never
 * put into the tree; its insert is cancelled and it is dropped from @vmas.
 * The others are packed at the start of @vmas, in no particular order.
 * Context: task context, without i_mmap_rwsem; does not sleep.
 * Return: how many VMAs the caller must still remove.
 */
static inline int rmap_oplog_absorb_local(struct address_space *mapping,
					  struct vm_area_struct **vmas,
					  int count)
{
	if (static_branch_unlikely(&rmap_oplog_logged_key))
		return __rmap_oplog_absorb_local(mapping, vmas, count);
	return count;
}

/**
 * rmap_oplog_log_removes() - log the removal of file VMAs that are in i_mmap
 * @mapping: the address space that every VMA of @vmas maps
 * @vmas: VMAs about to be removed from @mapping->i_mmap, whose logged
 *	inserts rmap_oplog_absorb_local() did not find
 * @count: the number of @vmas
 *
 * Logs, in this CPU's log of @mapping, the removal of each VMA of @vmas
 * that is in the tree (its insert is not logged) and eligible (not
 * hugetlb, DAX, VM_IO, a PFN or mixed map, or shared writable), and drops
 * it from @vmas.  The VMA stays in the tree until somebody synchronizes
 * @mapping; every walker does so before reading the tree, so none meets
 * it after its page tables are freed.  Its memory then belongs to the log
 * as much as to the caller: remove_vma() must ask rmap_oplog_vma_release()
 * before freeing it.  A VMA whose removal cannot be logged (i_mmap_rwsem
 * is held: ->attach refuses) is kept, packed at the start of @vmas.
 * Context: task context, without i_mmap_rwsem, @vmas' mm's page table
 * entries of @vmas already zapped; does not sleep.
 * Return: how many VMAs the caller must still remove.
 */
static inline int rmap_oplog_log_removes(struct address_space *mapping,
					 struct vm_area_struct **vmas,
					 int count)
{
	if (static_branch_unlikely(&rmap_oplog_logged_key))
		return __rmap_oplog_log_removes(mapping, vmas, count);
	return count;
}

/**
 * rmap_oplog_vma_release() - the owner of an unlinked VMA is done with it
 * @vma: a VMA on its way out of remove_vma(), closed, its file put
 * @unreachable: remove_vma()'s: no RCU walker of @vma's mm can reach it
 *
 * The hand-off of a VMA whose removal from i_mmap is logged
 * (rmap_oplog_log_removes()): if the remove is still logged, the log
 * takes the VMA and frees it once the remove is applied, as the caller
 * would have: by vm_area_free(), or by __vm_area_free() if @unreachable;
 * otherwise (the remove was applied, or never logged) the caller frees it
 * as usual.  The log needs no more than the VMA's memory: its mm, file
 * and policy may go.
 * Context: any; does not sleep.
 * Return: true if the caller must not free @vma.
 */
static inline bool rmap_oplog_vma_release(struct vm_area_struct *vma,
					  bool unreachable)
{
	return static_branch_unlikely(&rmap_oplog_logged_key) &&
	       READ_ONCE(vma->i_mmap_op.code) &&
	       __rmap_oplog_vma_release(vma, unreachable);
}

/**
 * rmap_oplog_lock_unlink() - lock i_mmap for removing VMAs, absorbing first
 * @mapping: the address space that every VMA of @vmas maps
 * @vmas: VMAs about to be removed from @mapping->i_mmap
 * @count: the number of @vmas
 *
 * Takes i_mmap_rwsem for write.  If a VMA of @vmas has its insert still
 * logged, applies what every CPU logged (oplog_synchronize_all_locked(),
 * the logs stay attached) and cancels that insert against the removal (global
 * absorption); such VMAs are dropped from @vmas as
 * rmap_oplog_absorb_local() does.  What other CPUs logged is applied
 * only as far as it was spilled (by this call, or earlier by evictions and
 * full logs); their logs stay attached.  The caller may only take VMAs of
 * @vmas out of the tree.  Returns with i_mmap_rwsem held for write:
 * unlock with i_mmap_unlock_write().
 * Context: task context; sleeps.
 * Return: how many VMAs the caller must still remove from the tree.
 */
static inline int rmap_oplog_lock_unlink(struct address_space *mapping,
					 struct vm_area_struct **vmas,
					 int count)
{
	if (static_branch_unlikely(&rmap_oplog_logged_key))
		return __rmap_oplog_lock_unlink(mapping, vmas, count);
	i_mmap_lock_write(mapping);
	return count;
}

/**
 * rmap_oplog_lock_insert() - lock i_mmap for inserting a VMA
 * @mapping: the address space
 * @parent: the VMA that the caller inserts after, or NULL
 *
 * For fork's locked insert (vma_interval_tree_insert_after()) and
 * vma_link_file() (@parent NULL): takes i_mmap_rwsem for write and, only
 * if @parent's own insert is still logged, puts @parent into the tree
 * (from this CPU's log, or by applying every CPU's, as
 * rmap_oplog_prepare_vmas() does), leaving every CPU's log attached.
 * Nothing else needs to be: the caller reads nothing but @parent's place,
 * so fork, mmap() and exec do not flush every CPU's logs of the file.
 * What was already spilled is applied.
 * Context: task context; sleeps.  Unlock with i_mmap_unlock_write().
 */
static inline void rmap_oplog_lock_insert(struct address_space *mapping,
					  struct vm_area_struct *parent)
{
	if (static_branch_unlikely(&rmap_oplog_logged_key))
		__rmap_oplog_lock_insert(mapping, parent);
	else
		i_mmap_lock_write(mapping);
}

/**
 * rmap_oplog_insert_logged() - is a VMA's insert logged, not in i_mmap yet?
 * @vma: a file VMA of the caller's mm
 *
 * For mremap()'s copy_vma(), which links a new VMA for the moved range and
 * moves the page table entries without the rmap locks when the new VMA
 * follows the old one in rmap walk order (see move_ptes()).  A logged
 * insert of the old VMA goes into the tree at the next synchronize, after
 * the new VMA, so a walk would visit the new range first and could miss a
 * PTE moving past it; the caller then takes the rmap locks for the move.
 * Ask before linking the new VMA: false then means @vma is in the tree, or
 * a synchronize holding i_mmap_rwsem for write is putting it there and the
 * new VMA's insert waits for it, so the new VMA follows @vma (an insert put
 * into the tree is never logged again).  Asked after the link, false says
 * nothing about the order: a synchronize in between puts @vma behind the
 * new VMA and clears the answer.
 * Context: any.  The answer means the above to copy_vma(), which asks
 * with @vma's mm's mmap_lock taken for write (not asserted: the KUnit
 * suite asks about VMAs of no mm).
 * Return: true if @vma's insert may still be logged or spilled.
 */
static inline bool rmap_oplog_insert_logged(struct vm_area_struct *vma)
{
	return static_branch_unlikely(&rmap_oplog_logged_key) &&
	       __rmap_oplog_insert_logged(vma);
}

/**
 * rmap_oplog_vma_init() - a copied VMA's insert is not logged
 * @vma: the new VMA, a copy of another (vm_area_dup())
 *
 * Context: any.
 */
static inline void rmap_oplog_vma_init(struct vm_area_struct *vma)
{
	vma->i_mmap_op.code = 0;
}
#else
static inline void rmap_oplog_vma_init(struct vm_area_struct *vma)
{
}

static inline bool rmap_oplog_mmap_insert(struct vm_area_struct *vma)
{
	return false;
}

static inline unsigned int rmap_oplog_prepare_vmas(struct address_space *mapping,
						   struct vm_area_struct **vmas,
						   int count)
{
	i_mmap_lock_write(mapping);
	return 0;
}

static inline bool rmap_oplog_relog(struct address_space *mapping,
				    struct vm_area_struct *vma)
{
	return false;
}

static inline bool rmap_oplog_prepare_logged(struct address_space *mapping,
					     struct vm_area_struct **vmas,
					     int count)
{
	return false;
}

static inline void rmap_oplog_complete_logged(struct address_space *mapping,
					      struct vm_area_struct **vmas,
					      int count,
					      struct vm_area_struct *insert)
{
}

static inline void rmap_oplog_lock_insert(struct address_space *mapping,
					  struct vm_area_struct *parent)
{
	i_mmap_lock_write(mapping);
}

static inline void rmap_oplog_lock_move(struct vm_area_struct *vma)
{
	i_mmap_lock_write(vma->vm_file->f_mapping);
}

static inline bool rmap_oplog_insert_logged(struct vm_area_struct *vma)
{
	return false;
}

static inline void rmap_oplog_mapping_init(struct address_space *mapping)
{
}

static inline void rmap_oplog_mapping_release(struct address_space *mapping)
{
}

static inline bool rmap_oplog_fork_insert(struct vm_area_struct *vma,
					  struct vm_area_struct *parent)
{
	return false;
}

static inline int rmap_oplog_absorb_local(struct address_space *mapping,
					  struct vm_area_struct **vmas,
					  int count)
{
	return count;
}

static inline int rmap_oplog_log_removes(struct address_space *mapping,
					 struct vm_area_struct **vmas,
					 int count)
{
	return count;
}

static inline bool rmap_oplog_vma_release(struct vm_area_struct *vma,
					  bool unreachable)
{
	return false;
}

static inline int rmap_oplog_lock_unlink(struct address_space *mapping,
					 struct vm_area_struct **vmas,
					 int count)
{
	i_mmap_lock_write(mapping);
	return count;
}
#endif /* CONFIG_RMAP_OPLOG */

#endif /* _LINUX_RMAP_OPLOG_H */
