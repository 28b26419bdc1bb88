// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the file reverse map on OpLog (mm/oplog_rmap.c): logged
 * inserts of VMAs into a private address space's i_mmap tree, absorbed on
 * the logging CPU and at another CPU's unlink, put into the tree by every
 * taker of i_mmap_rwsem (readers upgrade; a trylock reader gives up if
 * the upgrade is contended), refused while the rwsem is held, spilled by
 * an eviction or a dead CPU, and flushed when the address space dies;
 * logged removes of VMAs in the tree, and the hand-off of a VMA's free
 * between its owner and the log.  The VMAs are bare structures in no mm:
 * only the fields the interval tree reads are set; those that the log may
 * free come from vm_area_alloc().
 */

#include <kunit/test.h>
#include <kunit/visibility.h>
#include <linux/cpu.h>
#include <linux/cpumask.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/oplog.h>
#include <linux/rmap.h>
#include <linux/rmap_oplog.h>
#include <linux/sched.h>
#include <linux/slab.h>

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

#define RT_NR_VMAS	4

struct rt_ctx {
	struct address_space	*mapping;
	struct vm_area_struct	*vmas[RT_NR_VMAS];
};

static void rt_pin(struct kunit *test, unsigned int cpu)
{
	KUNIT_ASSERT_EQ(test, set_cpus_allowed_ptr(current, cpumask_of(cpu)), 0);
	KUNIT_EXPECT_EQ(test, raw_smp_processor_id(), (int)cpu);
}

static void rt_unpin(void)
{
	set_cpus_allowed_ptr(current, cpu_possible_mask);
}

/* Two online CPUs, or skip. */
static void rt_two_cpus(struct kunit *test, unsigned int *a, unsigned int *b)
{
	if (num_online_cpus() < 2)
		kunit_skip(test, "needs two CPUs");
	*a = cpumask_first(cpu_online_mask);
	*b = cpumask_next(*a, cpu_online_mask);
}

/* A private address space and RT_NR_VMAS VMAs of 4 pages at pgoff 4 * i. */
static struct rt_ctx *rt_new(struct kunit *test)
{
	struct rt_ctx *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	int i;

	if (!rmap_oplog_enabled())
		kunit_skip(test, "rmap_oplog is off");
	KUNIT_ASSERT_NOT_NULL(test, t);
	t->mapping = kunit_kzalloc(test, sizeof(*t->mapping), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t->mapping);
	address_space_init_once(t->mapping);
	for (i = 0; i < RT_NR_VMAS; i++) {
		struct vm_area_struct *vma;

		vma = kunit_kzalloc(test, sizeof(*vma), GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, vma);
		vma->vm_start = 0x100000UL + i * 4 * PAGE_SIZE;
		vma->vm_end = vma->vm_start + 4 * PAGE_SIZE;
		vma->vm_pgoff = i * 4;
		vm_flags_init(vma, VM_READ | VM_MAYREAD);
		t->vmas[i] = vma;
	}
	return t;
}

/* VMAs in the tree over [first, last] (pgoffs), i_mmap_rwsem held. */
static int rt_count(struct rt_ctx *t, pgoff_t first, pgoff_t last)
{
	struct vm_area_struct *vma;
	int n = 0;

	i_mmap_assert_locked(t->mapping);
	vma_interval_tree_foreach(vma, &t->mapping->i_mmap, first, last)
		n++;
	return n;
}

static bool rt_in_tree(struct rt_ctx *t, struct vm_area_struct *want)
{
	struct vm_area_struct *vma;

	i_mmap_assert_locked(t->mapping);
	vma_interval_tree_foreach(vma, &t->mapping->i_mmap, 0, ULONG_MAX)
		if (vma == want)
			return true;
	return false;
}

/*
 * A VMA that the log may free (vm_area_free() or __vm_area_free()): from
 * vm_area_alloc(), over pgoff @pgoff, in @t's tree.
 */
static struct vm_area_struct *rt_alloc_in_tree(struct kunit *test,
					       struct rt_ctx *t, pgoff_t pgoff)
{
	struct vm_area_struct *vma = vm_area_alloc(&init_mm);

	KUNIT_ASSERT_NOT_NULL(test, vma);
	vma->vm_start = 0x200000UL + pgoff * PAGE_SIZE;
	vma->vm_end = vma->vm_start + 4 * PAGE_SIZE;
	vma->vm_pgoff = pgoff;
	vm_flags_init(vma, VM_READ | VM_MAYREAD);
	i_mmap_lock_write(t->mapping);
	vma_interval_tree_insert(vma, &t->mapping->i_mmap);
	i_mmap_unlock_write(t->mapping);
	return vma;
}

/* Empty the tree and release the address space: nothing may be left. */
static void rt_done(struct kunit *test, struct rt_ctx *t)
{
	int i;

	i_mmap_lock_write(t->mapping);
	for (i = 0; i < RT_NR_VMAS; i++)
		if (rt_in_tree(t, t->vmas[i]))
			vma_interval_tree_remove(t->vmas[i], &t->mapping->i_mmap);
	KUNIT_EXPECT_EQ(test, rt_count(t, 0, ULONG_MAX), 0);
	i_mmap_unlock_write(t->mapping);
	rmap_oplog_mapping_release(t->mapping);
	KUNIT_EXPECT_EQ(test, READ_ONCE(t->mapping->i_mmap_oplog.cpus), 0UL);
	KUNIT_EXPECT_TRUE(test, list_empty(&t->mapping->i_mmap_spill));
}

/*
 * Local absorption: the insert of a VMA removed on the CPU that logged it
 * is cancelled and never reaches the tree; the other one does, with the
 * first writer.  Before that, the logged VMA counts for mapping_mapped(); a
 * log left attached but empty does not.
 */
static void rmap_oplog_test_local_absorb(struct kunit *test)
{
	struct rt_ctx *t = rt_new(test);
	struct vm_area_struct *vmas[1];

	rt_pin(test, cpumask_first(cpu_online_mask));
	KUNIT_EXPECT_TRUE(test, rmap_oplog_queue_insert(t->mapping, t->vmas[0]));
	KUNIT_EXPECT_TRUE(test, rmap_oplog_queue_insert(t->mapping, t->vmas[1]));
	KUNIT_EXPECT_TRUE(test, RB_EMPTY_ROOT(&t->mapping->i_mmap.rb_root));
	KUNIT_EXPECT_TRUE(test, mapping_mapped(t->mapping));
	vmas[0] = t->vmas[0];
	KUNIT_EXPECT_EQ(test, rmap_oplog_absorb_local(t->mapping, vmas, 1), 0);
	/* Not in the log any more: a second attempt finds nothing. */
	KUNIT_EXPECT_EQ(test, rmap_oplog_absorb_local(t->mapping, vmas, 1), 1);
	vmas[0] = t->vmas[1];
	KUNIT_EXPECT_EQ(test, rmap_oplog_absorb_local(t->mapping, vmas, 1), 0);
	/* The log stays attached, empty: nothing is mapped any more. */
	KUNIT_EXPECT_TRUE(test, oplog_obj_has_logs(&t->mapping->i_mmap_oplog));
	KUNIT_EXPECT_FALSE(test, mapping_mapped(t->mapping));
	KUNIT_EXPECT_TRUE(test, rmap_oplog_queue_insert(t->mapping, t->vmas[1]));
	KUNIT_EXPECT_TRUE(test, mapping_mapped(t->mapping));
	rt_unpin();

	i_mmap_lock_write(t->mapping);
	KUNIT_EXPECT_EQ(test, rt_count(t, 0, ULONG_MAX), 1);
	KUNIT_EXPECT_FALSE(test, rt_in_tree(t, t->vmas[0]));
	KUNIT_EXPECT_TRUE(test, rt_in_tree(t, t->vmas[1]));
	KUNIT_EXPECT_EQ(test, t->mapping->i_mmap_oplog.cpus, 0UL);
	i_mmap_unlock_write(t->mapping);
	rt_done(test, t);
}

/*
 * Global absorption: a VMA logged on CPU a and unlinked on CPU b is not
 * in b's log; the unlink's flush cancels it against the removal instead
 * of putting it into the tree.  The others, spilled by that flush, go in
 * (their removal is logged later, which is cheaper than absorbing them
 * under the lock), and the logs stay attached.
 */
static void rmap_oplog_test_global_absorb(struct kunit *test)
{
	struct rt_ctx *t = rt_new(test);
	struct vm_area_struct *vmas[2];
	unsigned int a, b;

	rt_two_cpus(test, &a, &b);
	/* vmas[3] is in the tree already, as a locked insert puts it. */
	i_mmap_lock_write(t->mapping);
	vma_interval_tree_insert(t->vmas[3], &t->mapping->i_mmap);
	i_mmap_unlock_write(t->mapping);

	rt_pin(test, a);
	KUNIT_EXPECT_TRUE(test, rmap_oplog_queue_insert(t->mapping, t->vmas[0]));
	KUNIT_EXPECT_TRUE(test, rmap_oplog_queue_insert(t->mapping, t->vmas[1]));
	rt_pin(test, b);
	KUNIT_EXPECT_TRUE(test, rmap_oplog_queue_insert(t->mapping, t->vmas[2]));
	vmas[0] = t->vmas[0];
	vmas[1] = t->vmas[3];
	KUNIT_EXPECT_EQ(test, rmap_oplog_absorb_local(t->mapping, vmas, 2), 2);
	rt_unpin();

	KUNIT_EXPECT_EQ(test, rmap_oplog_lock_unlink(t->mapping, vmas, 2), 1);
	KUNIT_EXPECT_PTR_EQ(test, vmas[0], t->vmas[3]);
	/* Left to the caller: it removes vmas[3] from the tree itself. */
	vma_interval_tree_remove(vmas[0], &t->mapping->i_mmap);
	KUNIT_EXPECT_FALSE(test, rt_in_tree(t, t->vmas[0]));
	KUNIT_EXPECT_TRUE(test, rt_in_tree(t, t->vmas[1]));
	KUNIT_EXPECT_TRUE(test, rt_in_tree(t, t->vmas[2]));
	KUNIT_EXPECT_EQ(test, rt_count(t, 0, ULONG_MAX), 2);
	KUNIT_EXPECT_FALSE(test, rmap_oplog_insert_logged(t->vmas[1]));
	KUNIT_EXPECT_TRUE(test, oplog_obj_has_logs(&t->mapping->i_mmap_oplog));
	i_mmap_unlock_write(t->mapping);

	/* Removing only VMAs inserted under the lock synchronizes nothing. */
	i_mmap_lock_write(t->mapping);
	vma_interval_tree_insert(t->vmas[3], &t->mapping->i_mmap);
	i_mmap_unlock_write(t->mapping);
	KUNIT_EXPECT_TRUE(test, rmap_oplog_queue_insert(t->mapping, t->vmas[0]));
	vmas[0] = t->vmas[3];
	KUNIT_EXPECT_EQ(test, rmap_oplog_lock_unlink(t->mapping, vmas, 1), 1);
	vma_interval_tree_remove(t->vmas[3], &t->mapping->i_mmap);
	KUNIT_EXPECT_TRUE(test, rmap_oplog_insert_logged(t->vmas[0]));
	KUNIT_EXPECT_EQ(test, rt_count(t, 0, ULONG_MAX), 2);
	i_mmap_unlock_write(t->mapping);

	/* The next writer puts the last one in. */
	i_mmap_lock_write(t->mapping);
	KUNIT_EXPECT_EQ(test, rt_count(t, 0, ULONG_MAX), 3);
	KUNIT_EXPECT_TRUE(test, rt_in_tree(t, t->vmas[0]));
	i_mmap_unlock_write(t->mapping);
	rt_done(test, t);
}

/*
 * A reader sees every insert logged before it, from every CPU: the read
 * lock trades itself for the write lock, synchronizes, and downgrades.
 * Afterwards no CPU logs the mapping, and a reader finds nothing to do.
 */
static void rmap_oplog_test_reader(struct kunit *test)
{
	struct rt_ctx *t = rt_new(test);
	unsigned int a, b;

	rt_two_cpus(test, &a, &b);
	rt_pin(test, a);
	KUNIT_EXPECT_TRUE(test, rmap_oplog_queue_insert(t->mapping, t->vmas[0]));
	rt_pin(test, b);
	KUNIT_EXPECT_TRUE(test, rmap_oplog_queue_insert(t->mapping, t->vmas[1]));
	KUNIT_EXPECT_TRUE(test, rmap_oplog_queue_insert(t->mapping, t->vmas[2]));
	rt_unpin();

	i_mmap_lock_read(t->mapping);
	KUNIT_EXPECT_EQ(test, rt_count(t, 0, ULONG_MAX), 3);
	KUNIT_EXPECT_EQ(test, rt_count(t, 4, 4), 1);
	KUNIT_EXPECT_EQ(test, READ_ONCE(t->mapping->i_mmap_oplog.cpus), 0UL);
	i_mmap_unlock_read(t->mapping);

	KUNIT_EXPECT_EQ(test, i_mmap_trylock_read(t->mapping), 1);
	KUNIT_EXPECT_EQ(test, rt_count(t, 0, ULONG_MAX), 3);
	i_mmap_unlock_read(t->mapping);
	rt_done(test, t);
}

/*
 * A trylock reader (folio_referenced(), which reclaim must not make wait)
 * finds an insert logged but cannot take the write lock to put it in:
 * another reader that found it logged too (the test itself stands for
 * it) still holds the read lock on its way to the upgrade.  The trylock
 * fails as if the rwsem had been contended from the start: no lock left
 * held, nothing applied, the insert still logged.  With the other reader
 * gone, the next trylock reader puts it in.
 */
static void rmap_oplog_test_trylock_busy(struct kunit *test)
{
	struct rt_ctx *t = rt_new(test);
	struct rw_semaphore *sem = &t->mapping->i_mmap_rwsem;
	int locked;

	KUNIT_EXPECT_TRUE(test, rmap_oplog_queue_insert(t->mapping, t->vmas[0]));
	down_read(sem);
	/* The helper's own down_read_trylock() succeeds: only the upgrade fails. */
	KUNIT_ASSERT_TRUE(test, down_read_trylock(sem));
	up_read(sem);
	locked = i_mmap_trylock_read(t->mapping);
	KUNIT_EXPECT_EQ(test, locked, 0);
	if (locked)
		i_mmap_unlock_read(t->mapping);
	KUNIT_EXPECT_TRUE(test, rmap_oplog_insert_logged(t->vmas[0]));
	KUNIT_EXPECT_TRUE(test, RB_EMPTY_ROOT(&t->mapping->i_mmap.rb_root));
	up_read(sem);
	KUNIT_EXPECT_FALSE(test, rwsem_is_locked(sem));

	KUNIT_EXPECT_EQ(test, i_mmap_trylock_read(t->mapping), 1);
	KUNIT_EXPECT_TRUE(test, rt_in_tree(t, t->vmas[0]));
	KUNIT_EXPECT_FALSE(test, rmap_oplog_insert_logged(t->vmas[0]));
	i_mmap_unlock_read(t->mapping);
	rt_done(test, t);
}

/*
 * While anybody holds i_mmap_rwsem, reader or writer, no insert can be
 * logged (the caller then inserts it under the lock); once
 * the lock is free, it can.
 */
static void rmap_oplog_test_refuse(struct kunit *test)
{
	struct rt_ctx *t = rt_new(test);

	i_mmap_lock_read(t->mapping);
	KUNIT_EXPECT_FALSE(test, rmap_oplog_queue_insert(t->mapping, t->vmas[0]));
	i_mmap_unlock_read(t->mapping);
	i_mmap_lock_write(t->mapping);
	KUNIT_EXPECT_FALSE(test, rmap_oplog_queue_insert(t->mapping, t->vmas[0]));
	KUNIT_EXPECT_EQ(test, t->mapping->i_mmap_oplog.cpus, 0UL);
	i_mmap_unlock_write(t->mapping);

	KUNIT_EXPECT_TRUE(test, rmap_oplog_queue_insert(t->mapping, t->vmas[0]));
	i_mmap_lock_write(t->mapping);
	KUNIT_EXPECT_TRUE(test, rt_in_tree(t, t->vmas[0]));
	i_mmap_unlock_write(t->mapping);
	rt_done(test, t);
}

/*
 * Detached without i_mmap_rwsem (here by turning logging off, which
 * drains every log as an eviction does), an insert waits in the spill
 * list, still counted by mapping_mapped(), and the next reader puts it in.
 */
static void rmap_oplog_test_spill(struct kunit *test)
{
	struct rt_ctx *t = rt_new(test);

	KUNIT_EXPECT_TRUE(test, rmap_oplog_queue_insert(t->mapping, t->vmas[0]));
	KUNIT_ASSERT_EQ(test, rmap_oplog_switch(false), 0);
	KUNIT_EXPECT_EQ(test, READ_ONCE(t->mapping->i_mmap_oplog.cpus), 0UL);
	KUNIT_EXPECT_FALSE(test, list_empty_careful(&t->mapping->i_mmap_spill));
	KUNIT_EXPECT_TRUE(test, RB_EMPTY_ROOT(&t->mapping->i_mmap.rb_root));
	KUNIT_EXPECT_TRUE(test, mapping_mapped(t->mapping));
	/* Off: nothing is logged. */
	KUNIT_EXPECT_FALSE(test, rmap_oplog_queue_insert(t->mapping, t->vmas[1]));
	KUNIT_ASSERT_EQ(test, rmap_oplog_switch(true), 0);

	i_mmap_lock_read(t->mapping);
	KUNIT_EXPECT_TRUE(test, rt_in_tree(t, t->vmas[0]));
	KUNIT_EXPECT_TRUE(test, list_empty(&t->mapping->i_mmap_spill));
	i_mmap_unlock_read(t->mapping);
	rt_done(test, t);
}

/*
 * A VMA whose insert is logged is split (vma_prepare() and vma_complete(),
 * under rmap_oplog_prepare_vmas()).  One still in this CPU's log is taken
 * out of it and kept out of the tree: it is shrunk there, and it and the
 * new part are logged again (rmap_oplog_relog()), so that the next holder
 * of the rwsem puts both into the tree with their new ranges, and nothing
 * else moves.  One in another CPU's log is put in through a synchronize
 * that leaves the logs attached, so that it can be taken out, shrunk and
 * put back with the new part beside it, and the other inserts that
 * synchronize spilled go in with it.
 */
static void rmap_oplog_test_split(struct kunit *test)
{
	struct rt_ctx *t = rt_new(test);
	struct vm_area_struct *vma = t->vmas[0], *tail = t->vmas[1];
	struct vm_area_struct *vmas[2];
	unsigned int a, b;

	rt_two_cpus(test, &a, &b);
	rt_pin(test, a);
	KUNIT_EXPECT_TRUE(test, rmap_oplog_queue_insert(t->mapping, t->vmas[3]));
	rt_pin(test, b);
	KUNIT_EXPECT_TRUE(test, rmap_oplog_queue_insert(t->mapping, vma));
	KUNIT_EXPECT_TRUE(test, rmap_oplog_queue_insert(t->mapping, t->vmas[2]));

	/* From b's own log: out of the log, in no tree; nothing else moves. */
	vmas[0] = NULL;
	vmas[1] = vma;
	KUNIT_EXPECT_EQ(test, rmap_oplog_prepare_vmas(t->mapping, vmas, 2), 2U);
	KUNIT_EXPECT_FALSE(test, rt_in_tree(t, vma));
	KUNIT_EXPECT_FALSE(test, rmap_oplog_insert_logged(vma));
	KUNIT_EXPECT_EQ(test, rt_count(t, 0, ULONG_MAX), 0);
	KUNIT_EXPECT_TRUE(test, rmap_oplog_insert_logged(t->vmas[2]));
	KUNIT_EXPECT_TRUE(test, rmap_oplog_insert_logged(t->vmas[3]));
	KUNIT_EXPECT_TRUE(test, oplog_obj_has_logs(&t->mapping->i_mmap_oplog));
	tail->vm_start = vma->vm_start + 2 * PAGE_SIZE;
	tail->vm_end = vma->vm_end;
	tail->vm_pgoff = 2;
	vma->vm_end = tail->vm_start;
	/* Logged again in b's log, which is still attached. */
	KUNIT_EXPECT_TRUE(test, rmap_oplog_relog(t->mapping, vma));
	KUNIT_EXPECT_TRUE(test, rmap_oplog_relog(t->mapping, tail));
	KUNIT_EXPECT_TRUE(test, rmap_oplog_insert_logged(vma));
	KUNIT_EXPECT_TRUE(test, rmap_oplog_insert_logged(tail));
	KUNIT_EXPECT_EQ(test, rt_count(t, 0, ULONG_MAX), 0);
	i_mmap_unlock_write(t->mapping);
	/* A reader puts them in with their new ranges. */
	i_mmap_lock_read(t->mapping);
	KUNIT_EXPECT_EQ(test, rt_count(t, 0, 1), 1);
	KUNIT_EXPECT_EQ(test, rt_count(t, 2, 3), 1);
	KUNIT_EXPECT_TRUE(test, rt_in_tree(t, vma));
	KUNIT_EXPECT_TRUE(test, rt_in_tree(t, tail));
	/* ... and the others logged before, on both CPUs. */
	KUNIT_EXPECT_EQ(test, rt_count(t, 0, ULONG_MAX), 4);
	i_mmap_unlock_read(t->mapping);

	/* Taken out of the tree again, to check the other case alone. */
	i_mmap_lock_write(t->mapping);
	vma_interval_tree_remove(vma, &t->mapping->i_mmap);
	vma_interval_tree_remove(tail, &t->mapping->i_mmap);
	vma_interval_tree_remove(t->vmas[2], &t->mapping->i_mmap);
	vma_interval_tree_remove(t->vmas[3], &t->mapping->i_mmap);
	i_mmap_unlock_write(t->mapping);
	rt_pin(test, a);
	KUNIT_EXPECT_TRUE(test, rmap_oplog_queue_insert(t->mapping, t->vmas[3]));
	rt_pin(test, b);
	KUNIT_EXPECT_TRUE(test, rmap_oplog_queue_insert(t->mapping, t->vmas[2]));

	/* From a's log, on b: applied with the logs left attached. */
	vmas[0] = t->vmas[3];
	vmas[1] = NULL;
	KUNIT_EXPECT_EQ(test, rmap_oplog_prepare_vmas(t->mapping, vmas, 2), 0U);
	KUNIT_EXPECT_TRUE(test, rt_in_tree(t, t->vmas[3]));
	KUNIT_EXPECT_FALSE(test, rmap_oplog_insert_logged(t->vmas[3]));
	KUNIT_EXPECT_TRUE(test, rt_in_tree(t, t->vmas[2]));
	KUNIT_EXPECT_FALSE(test, rmap_oplog_insert_logged(t->vmas[2]));
	KUNIT_EXPECT_EQ(test, rt_count(t, 0, ULONG_MAX), 2);
	KUNIT_EXPECT_TRUE(test, oplog_obj_has_logs(&t->mapping->i_mmap_oplog));
	i_mmap_unlock_write(t->mapping);

	/*
	 * No log attached (the writer's flush detached them): none may be
	 * attached while the rwsem is held, so relogging is refused and
	 * vma_complete() puts the VMA into the tree itself.
	 */
	i_mmap_lock_write(t->mapping);
	KUNIT_EXPECT_FALSE(test, oplog_obj_has_logs(&t->mapping->i_mmap_oplog));
	KUNIT_EXPECT_FALSE(test, rmap_oplog_relog(t->mapping, tail));
	KUNIT_EXPECT_FALSE(test, rmap_oplog_insert_logged(tail));
	i_mmap_unlock_write(t->mapping);
	rt_unpin();
	rt_done(test, t);
}

/*
 * A holder of i_mmap_rwsem in a thread of its own, bound to a CPU.  The
 * owner of a marked VMA must neither take the rwsem nor allocate (lockdep
 * would see the inversion, through fs_reclaim for the latter), so the
 * test, which owns the marks, makes its threads before it marks and only
 * wakes them while it holds the marks.
 */
struct rt_walker {
	struct rt_ctx		*t;
	struct task_struct	*task;
	struct completion	done;
	bool			woken;
	int			head, tail, all;
};

/*
 * One that synchronizes: what it sees over pgoffs 0-1, 2-3, and all.
 * Both complete @done for every waiter: the test and rt_walker_end().
 */
static int rt_walker_sync(void *data)
{
	struct rt_walker *w = data;

	i_mmap_lock_write(w->t->mapping);
	w->head = rt_count(w->t, 0, 1);
	w->tail = rt_count(w->t, 2, 3);
	w->all = rt_count(w->t, 0, ULONG_MAX);
	i_mmap_unlock_write(w->t->mapping);
	complete_all(&w->done);
	return 0;
}

/* One that needs its own VMA only: a locked insert after vmas[2]. */
static int rt_walker_lock_insert(void *data)
{
	struct rt_walker *w = data;

	rmap_oplog_lock_insert(w->t->mapping, w->t->vmas[2]);
	w->head = rt_in_tree(w->t, w->t->vmas[2]);
	w->tail = rt_in_tree(w->t, w->t->vmas[3]);
	i_mmap_unlock_write(w->t->mapping);
	complete_all(&w->done);
	return 0;
}

/* A thread that runs @fn on @cpu once woken; NULL on failure. */
static struct rt_walker *rt_walker_new(struct rt_ctx *t, int (*fn)(void *),
				       unsigned int cpu)
{
	struct rt_walker *w = kzalloc(sizeof(*w), GFP_KERNEL);

	if (!w)
		return NULL;
	w->t = t;
	init_completion(&w->done);
	w->task = kthread_create(fn, w, "rt_walker");
	if (IS_ERR(w->task)) {
		kfree(w);
		return NULL;
	}
	get_task_struct(w->task);
	kthread_bind(w->task, cpu);
	return w;
}

static void rt_walker_go(struct rt_walker *w)
{
	w->woken = true;
	wake_up_process(w->task);
}

/*
 * Done with @w: stop it if it was never woken, else wait for it to
 * finish.  True if it is gone; after a timeout it may still use @w,
 * which is then leaked.
 */
static bool rt_walker_end(struct rt_walker *w)
{
	if (!w)
		return true;
	if (w->woken && !wait_for_completion_timeout(&w->done, 30 * HZ))
		return false;
	/* Its thread function never runs, or has returned. */
	kthread_stop(w->task);
	put_task_struct(w->task);
	kfree(w);
	return true;
}

/*
 * vma_prepare() of VMAs whose inserts are all still logged, in any CPU's
 * log, takes no rwsem: they are marked while their owner changes them.  A
 * trylock reader gives up rather than wait; a holder that synchronizes
 * waits for the owner, and then puts in the VMA with its new range and
 * the part split off; one that needs only its own VMAs passes a marked
 * one over.  A VMA in the tree, or the rwsem held, takes the locked way,
 * nothing marked.  Every failure leaves no mark held and no log behind.
 */
static void rmap_oplog_test_split_lockless(struct kunit *test)
{
	struct rt_ctx *t = rt_new(test);
	struct vm_area_struct *vma = t->vmas[0], *tail = t->vmas[1];
	struct vm_area_struct *vmas[2] = { NULL, vma };
	struct rt_walker *sync = NULL, *own = NULL;
	unsigned long timeout;
	unsigned int a, b;

	rt_two_cpus(test, &a, &b);
	sync = rt_walker_new(t, rt_walker_sync, a);
	own = rt_walker_new(t, rt_walker_lock_insert, b);
	if (!sync || !own) {
		KUNIT_FAIL(test, "cannot make the walker threads");
		goto out;
	}
	/* Logged on a, changed on b. */
	rt_pin(test, a);
	KUNIT_EXPECT_TRUE(test, rmap_oplog_queue_insert(t->mapping, vma));
	KUNIT_EXPECT_TRUE(test, rmap_oplog_queue_insert(t->mapping, t->vmas[2]));
	rt_pin(test, b);
	if (!rmap_oplog_prepare_logged(t->mapping, vmas, 2)) {
		KUNIT_FAIL(test, "a logged VMA was not marked");
		goto out;
	}
	KUNIT_EXPECT_EQ(test, READ_ONCE(vma->i_mmap_op.code),
			RMAP_OPLOG_CODE_PREPARING);
	KUNIT_EXPECT_FALSE(test, rwsem_is_locked(&t->mapping->i_mmap_rwsem));

	/* It applies the other insert, and puts the marked one back. */
	KUNIT_EXPECT_EQ(test, i_mmap_trylock_read(t->mapping), 0);
	KUNIT_EXPECT_FALSE(test, rwsem_is_locked(&t->mapping->i_mmap_rwsem));
	KUNIT_EXPECT_FALSE(test, rmap_oplog_insert_logged(t->vmas[2]));
	KUNIT_EXPECT_FALSE(test, list_empty(&t->mapping->i_mmap_spill));

	rt_walker_go(sync);
	/* The walker marks the VMA as waited for before it sleeps. */
	timeout = jiffies + 30 * HZ;
	while (READ_ONCE(vma->i_mmap_op.code) != RMAP_OPLOG_CODE_PREPARING_WAITED &&
	       time_before(jiffies, timeout))
		msleep(20);
	KUNIT_EXPECT_EQ(test, READ_ONCE(vma->i_mmap_op.code),
			RMAP_OPLOG_CODE_PREPARING_WAITED);
	KUNIT_EXPECT_FALSE(test, completion_done(&sync->done));
	/* The split: the tail takes pgoffs 2-3. */
	tail->vm_start = vma->vm_start + 2 * PAGE_SIZE;
	tail->vm_end = vma->vm_end;
	tail->vm_pgoff = 2;
	vma->vm_end = tail->vm_start;
	rmap_oplog_complete_logged(t->mapping, vmas, 2, tail);
	KUNIT_EXPECT_TRUE(test, wait_for_completion_timeout(&sync->done, 30 * HZ) > 0);
	KUNIT_EXPECT_EQ(test, sync->head, 1);
	KUNIT_EXPECT_EQ(test, sync->tail, 1);
	KUNIT_EXPECT_EQ(test, sync->all, 3);
	KUNIT_EXPECT_EQ(test, READ_ONCE(vma->i_mmap_op.code), 0U);
	KUNIT_EXPECT_EQ(test, READ_ONCE(tail->i_mmap_op.code), 0U);

	/* In the tree: the locked way. */
	KUNIT_EXPECT_FALSE(test, rmap_oplog_prepare_logged(t->mapping, vmas, 2));
	KUNIT_EXPECT_EQ(test, READ_ONCE(vma->i_mmap_op.code), 0U);
	/* vmas[2] out of the tree again, for the last case. */
	i_mmap_lock_write(t->mapping);
	vma_interval_tree_remove(t->vmas[2], &t->mapping->i_mmap);
	i_mmap_unlock_write(t->mapping);

	/* Logged, but a reader holds the rwsem: the locked way. */
	vmas[1] = t->vmas[3];
	KUNIT_EXPECT_TRUE(test, rmap_oplog_queue_insert(t->mapping, t->vmas[3]));
	down_read(&t->mapping->i_mmap_rwsem);
	KUNIT_EXPECT_FALSE(test, rmap_oplog_prepare_logged(t->mapping, vmas, 2));
	up_read(&t->mapping->i_mmap_rwsem);
	KUNIT_EXPECT_TRUE(test, rmap_oplog_insert_logged(t->vmas[3]));

	/*
	 * A locked insert on b after a parent logged on a synchronizes every
	 * CPU's log, and passes the marked VMA over.
	 */
	rt_pin(test, a);
	KUNIT_EXPECT_TRUE(test, rmap_oplog_queue_insert(t->mapping, t->vmas[2]));
	rt_pin(test, b);
	if (!rmap_oplog_prepare_logged(t->mapping, vmas, 2)) {
		KUNIT_FAIL(test, "a logged VMA was not marked");
		goto out;
	}
	rt_walker_go(own);
	KUNIT_EXPECT_TRUE(test, wait_for_completion_timeout(&own->done, 30 * HZ) > 0);
	KUNIT_EXPECT_EQ(test, own->head, 1);
	KUNIT_EXPECT_EQ(test, own->tail, 0);
	KUNIT_EXPECT_EQ(test, READ_ONCE(t->vmas[3]->i_mmap_op.code),
			RMAP_OPLOG_CODE_PREPARING);
	KUNIT_EXPECT_FALSE(test, list_empty(&t->mapping->i_mmap_spill));
	rmap_oplog_complete_logged(t->mapping, vmas, 2, NULL);
	KUNIT_EXPECT_TRUE(test, rmap_oplog_insert_logged(t->vmas[3]));
	i_mmap_lock_read(t->mapping);
	KUNIT_EXPECT_TRUE(test, rt_in_tree(t, t->vmas[3]));
	KUNIT_EXPECT_EQ(test, rt_count(t, 0, ULONG_MAX), 4);
	i_mmap_unlock_read(t->mapping);
out:
	KUNIT_EXPECT_TRUE(test, rt_walker_end(sync));
	KUNIT_EXPECT_TRUE(test, rt_walker_end(own));
	rt_unpin();
	rt_done(test, t);
}

/*
 * A locked insert synchronizes only if the parent it goes after has its own
 * insert still logged: then the parent is in the tree to insert after;
 * otherwise (or for a new VMA, without a parent) the other logged inserts
 * stay logged.
 */
static void rmap_oplog_test_lock_insert(struct kunit *test)
{
	struct rt_ctx *t = rt_new(test);

	KUNIT_EXPECT_TRUE(test, rmap_oplog_queue_insert(t->mapping, t->vmas[0]));
	/* A new VMA (vma_link_file()): nothing is synchronized. */
	rmap_oplog_lock_insert(t->mapping, NULL);
	KUNIT_EXPECT_FALSE(test, rt_in_tree(t, t->vmas[0]));
	i_mmap_unlock_write(t->mapping);
	KUNIT_EXPECT_TRUE(test, rmap_oplog_queue_insert(t->mapping, t->vmas[1]));
	/* vmas[2] after vmas[3], inserted locked: nothing is synchronized. */
	i_mmap_lock_write(t->mapping);
	KUNIT_EXPECT_EQ(test, rt_count(t, 0, ULONG_MAX), 2);
	vma_interval_tree_remove(t->vmas[0], &t->mapping->i_mmap);
	vma_interval_tree_remove(t->vmas[1], &t->mapping->i_mmap);
	vma_interval_tree_insert(t->vmas[3], &t->mapping->i_mmap);
	i_mmap_unlock_write(t->mapping);
	KUNIT_EXPECT_TRUE(test, rmap_oplog_queue_insert(t->mapping, t->vmas[0]));
	rmap_oplog_lock_insert(t->mapping, t->vmas[3]);
	KUNIT_EXPECT_FALSE(test, rt_in_tree(t, t->vmas[0]));
	t->vmas[2]->vm_pgoff = t->vmas[3]->vm_pgoff;
	vma_interval_tree_insert_after(t->vmas[2], t->vmas[3], &t->mapping->i_mmap);
	i_mmap_unlock_write(t->mapping);

	/* vmas[1] after vmas[0], whose insert is logged: it is put in first. */
	rmap_oplog_lock_insert(t->mapping, t->vmas[0]);
	KUNIT_EXPECT_TRUE(test, rt_in_tree(t, t->vmas[0]));
	t->vmas[1]->vm_pgoff = t->vmas[0]->vm_pgoff;
	vma_interval_tree_insert_after(t->vmas[1], t->vmas[0], &t->mapping->i_mmap);
	KUNIT_EXPECT_EQ(test, rt_count(t, 0, ULONG_MAX), 4);
	i_mmap_unlock_write(t->mapping);
	rt_done(test, t);
}

/*
 * A locked insert after a parent whose insert another CPU logged puts the
 * parent into the tree without detaching any CPU's log: the other CPUs'
 * forks and exits of the file go on logging (a flush would detach them).
 */
static void rmap_oplog_test_lock_insert_remote(struct kunit *test)
{
	struct rt_ctx *t = rt_new(test);
	unsigned int a, b;

	rt_two_cpus(test, &a, &b);
	rt_pin(test, b);
	KUNIT_EXPECT_TRUE(test, rmap_oplog_queue_insert(t->mapping, t->vmas[0]));
	KUNIT_EXPECT_TRUE(test, rmap_oplog_queue_insert(t->mapping, t->vmas[2]));
	rt_pin(test, a);
	rmap_oplog_lock_insert(t->mapping, t->vmas[0]);
	KUNIT_EXPECT_TRUE(test, rt_in_tree(t, t->vmas[0]));
	/* b's log stays attached, emptied into the tree. */
	KUNIT_EXPECT_TRUE(test, oplog_obj_has_logs(&t->mapping->i_mmap_oplog));
	KUNIT_EXPECT_TRUE(test, rt_in_tree(t, t->vmas[2]));
	t->vmas[1]->vm_pgoff = t->vmas[0]->vm_pgoff;
	vma_interval_tree_insert_after(t->vmas[1], t->vmas[0], &t->mapping->i_mmap);
	KUNIT_EXPECT_EQ(test, rt_count(t, 0, ULONG_MAX), 3);
	i_mmap_unlock_write(t->mapping);
	/* b logs again, into its log still attached. */
	rt_pin(test, b);
	KUNIT_EXPECT_TRUE(test, rmap_oplog_queue_insert(t->mapping, t->vmas[3]));
	rt_unpin();
	rt_done(test, t);
}

/*
 * The removal of a VMA in the tree is logged: the VMA stays there, still
 * counted by mapping_mapped(), until a reader synchronizes; a VMA whose
 * insert is logged is not taken (rmap_oplog_absorb_local() and the lock
 * deal with it).  Whoever of the VMA's owner (remove_vma()) and the
 * synchronize comes second frees it: vmas[0] is released after, and its
 * owner frees it (here: the test); the other is handed off before, as
 * exit_mmap() does (unreachable: freed without a grace period), and the
 * synchronize frees it (KASAN and kmemleak see a double or lost free).
 * While i_mmap_rwsem is held with no log attached, the removal is refused
 * and left to the caller.
 */
static void rmap_oplog_test_remove(struct kunit *test)
{
	struct rt_ctx *t = rt_new(test);
	struct vm_area_struct *vma, *vmas[3];

	vma = rt_alloc_in_tree(test, t, 16);
	i_mmap_lock_write(t->mapping);
	vma_interval_tree_insert(t->vmas[0], &t->mapping->i_mmap);
	i_mmap_unlock_write(t->mapping);

	i_mmap_lock_read(t->mapping);
	vmas[0] = t->vmas[0];
	KUNIT_EXPECT_EQ(test, rmap_oplog_log_removes(t->mapping, vmas, 1), 1);
	KUNIT_EXPECT_FALSE(test, rmap_oplog_vma_release(t->vmas[0], false));
	KUNIT_EXPECT_EQ(test, rt_count(t, 0, ULONG_MAX), 2);
	i_mmap_unlock_read(t->mapping);

	KUNIT_EXPECT_TRUE(test, rmap_oplog_queue_insert(t->mapping, t->vmas[1]));
	vmas[0] = t->vmas[1];
	vmas[1] = t->vmas[0];
	vmas[2] = vma;
	KUNIT_EXPECT_EQ(test, rmap_oplog_log_removes(t->mapping, vmas, 3), 1);
	KUNIT_EXPECT_PTR_EQ(test, vmas[0], t->vmas[1]);
	KUNIT_EXPECT_TRUE(test, mapping_mapped(t->mapping));
	/* From exit_mmap(): the log frees it without a grace period. */
	KUNIT_EXPECT_TRUE(test, rmap_oplog_vma_release(vma, true));
	/* Still allocated: only this test's synchronize applies the remove. */
	KUNIT_EXPECT_EQ(test, READ_ONCE(vma->i_mmap_op.code),
			RMAP_OPLOG_CODE_UNREACHABLE);

	i_mmap_lock_read(t->mapping);
	KUNIT_EXPECT_EQ(test, rt_count(t, 0, ULONG_MAX), 1);
	KUNIT_EXPECT_TRUE(test, rt_in_tree(t, t->vmas[1]));
	i_mmap_unlock_read(t->mapping);
	KUNIT_EXPECT_FALSE(test, rmap_oplog_vma_release(t->vmas[0], false));
	rt_done(test, t);
}

/* Log the removal of @vma, in @t's tree, and have it spilled. */
static void rt_spill_remove(struct kunit *test, struct rt_ctx *t,
			    struct vm_area_struct *vma)
{
	KUNIT_EXPECT_EQ(test, rmap_oplog_log_removes(t->mapping, &vma, 1), 0);
	/* Logging off drains the logs, as evictions and full logs do. */
	KUNIT_ASSERT_EQ(test, rmap_oplog_switch(false), 0);
	KUNIT_ASSERT_EQ(test, rmap_oplog_switch(true), 0);
	KUNIT_EXPECT_FALSE(test, list_empty_careful(&t->mapping->i_mmap_spill));
}

/*
 * Spilled removes are applied by every holder of the write lock that
 * synchronizes only its own VMAs (a locked insert, an unlink, a split),
 * not only by readers: a file that nobody reads does not collect the
 * VMAs of its exited processes.
 */
static void rmap_oplog_test_remove_spill(struct kunit *test)
{
	struct rt_ctx *t = rt_new(test);
	struct vm_area_struct *vmas[3], *stock = t->vmas[0];

	vmas[0] = rt_alloc_in_tree(test, t, 16);
	vmas[1] = rt_alloc_in_tree(test, t, 20);
	vmas[2] = rt_alloc_in_tree(test, t, 24);
	i_mmap_lock_write(t->mapping);
	vma_interval_tree_insert(stock, &t->mapping->i_mmap);
	i_mmap_unlock_write(t->mapping);

	/* A locked insert's lock; the owner handed the VMA off before. */
	rt_spill_remove(test, t, vmas[0]);
	KUNIT_EXPECT_TRUE(test, rmap_oplog_vma_release(vmas[0], false));
	/* Still allocated: the mapping is this test's own. */
	KUNIT_EXPECT_EQ(test, READ_ONCE(vmas[0]->i_mmap_op.code),
			RMAP_OPLOG_CODE_HANDED_OFF);
	rmap_oplog_lock_insert(t->mapping, NULL);
	KUNIT_EXPECT_EQ(test, rt_count(t, 0, ULONG_MAX), 3);
	KUNIT_EXPECT_TRUE(test, list_empty(&t->mapping->i_mmap_spill));
	i_mmap_unlock_write(t->mapping);

	/* An unlink's, of a VMA in the tree; the owner comes after: it frees. */
	rt_spill_remove(test, t, vmas[1]);
	KUNIT_EXPECT_EQ(test, rmap_oplog_lock_unlink(t->mapping, &stock, 1), 1);
	vma_interval_tree_remove(stock, &t->mapping->i_mmap);
	KUNIT_EXPECT_EQ(test, rt_count(t, 0, ULONG_MAX), 1);
	i_mmap_unlock_write(t->mapping);
	KUNIT_EXPECT_EQ(test, READ_ONCE(vmas[1]->i_mmap_op.code),
			RMAP_OPLOG_CODE_REMOVED);
	KUNIT_EXPECT_FALSE(test, rmap_oplog_vma_release(vmas[1], false));
	vm_area_free(vmas[1]);

	/* A split's (vma_prepare()), of nothing logged. */
	rt_spill_remove(test, t, vmas[2]);
	KUNIT_EXPECT_TRUE(test, rmap_oplog_vma_release(vmas[2], false));
	KUNIT_EXPECT_EQ(test, rmap_oplog_prepare_vmas(t->mapping, &stock, 1), 0U);
	KUNIT_EXPECT_EQ(test, rt_count(t, 0, ULONG_MAX), 0);
	KUNIT_EXPECT_TRUE(test, list_empty(&t->mapping->i_mmap_spill));
	i_mmap_unlock_write(t->mapping);
	rt_done(test, t);
}

/*
 * Which removes may be logged: not those of hugetlb VMAs (PMD sharing)
 * nor of shared writable ones (i_mmap_writable goes down at the unlink).
 * The kept VMAs stay in order at the start of the array.
 */
static void rmap_oplog_test_remove_eligible(struct kunit *test)
{
	struct rt_ctx *t = rt_new(test);
	struct vm_area_struct *vmas[3], *vma;

	vm_flags_init(t->vmas[0], VM_READ | VM_MAYREAD | VM_SHARED |
		      VM_MAYWRITE);
	vm_flags_init(t->vmas[2], VM_READ | VM_MAYREAD | VM_HUGETLB);
	i_mmap_lock_write(t->mapping);
	vma_interval_tree_insert(t->vmas[0], &t->mapping->i_mmap);
	vma_interval_tree_insert(t->vmas[2], &t->mapping->i_mmap);
	i_mmap_unlock_write(t->mapping);
	vma = rt_alloc_in_tree(test, t, 16);
	vmas[0] = t->vmas[0];
	vmas[1] = vma;
	vmas[2] = t->vmas[2];
	KUNIT_EXPECT_EQ(test, rmap_oplog_log_removes(t->mapping, vmas, 3), 2);
	KUNIT_EXPECT_PTR_EQ(test, vmas[0], t->vmas[0]);
	KUNIT_EXPECT_PTR_EQ(test, vmas[1], t->vmas[2]);
	KUNIT_EXPECT_FALSE(test, rmap_oplog_vma_release(t->vmas[0], false));
	i_mmap_lock_write(t->mapping);
	KUNIT_EXPECT_EQ(test, rt_count(t, 0, ULONG_MAX), 2);
	KUNIT_EXPECT_FALSE(test, rt_in_tree(t, vma));
	i_mmap_unlock_write(t->mapping);
	/* Applied before its owner was done: the owner frees it. */
	KUNIT_EXPECT_FALSE(test, rmap_oplog_vma_release(vma, false));
	vm_area_free(vma);
	rt_done(test, t);
}

/* The first VMA over pgoff @index in rmap walk order, i_mmap_rwsem held. */
static struct vm_area_struct *rt_first(struct rt_ctx *t, pgoff_t index)
{
	i_mmap_assert_locked(t->mapping);
	return vma_interval_tree_iter_first(&t->mapping->i_mmap, index, index);
}

/*
 * mremap() (copy_vma()) links a copy of the moved VMA and moves its page
 * table entries without the rmap locks, relying on the copy following the
 * source in walk order.  A logged source goes into the tree at the next
 * synchronize, after a copy linked meanwhile: the walk would see the copy
 * first, and by then rmap_oplog_insert_logged() says false.  So copy_vma()
 * asks before linking the copy, and when the source is logged takes
 * i_mmap_lock_write() for the move, which puts the source in first.
 */
static void rmap_oplog_test_move_order(struct kunit *test)
{
	struct rt_ctx *t = rt_new(test);
	struct vm_area_struct *src = t->vmas[0], *copy = t->vmas[1];

	copy->vm_pgoff = src->vm_pgoff;
	KUNIT_EXPECT_FALSE(test, rmap_oplog_insert_logged(src));
	KUNIT_EXPECT_TRUE(test, rmap_oplog_queue_insert(t->mapping, src));
	KUNIT_EXPECT_TRUE(test, rmap_oplog_insert_logged(src));

	/* The copy linked by vma_link_file() while the source is logged. */
	rmap_oplog_lock_insert(t->mapping, NULL);
	vma_interval_tree_insert(copy, &t->mapping->i_mmap);
	i_mmap_unlock_write(t->mapping);
	KUNIT_EXPECT_TRUE(test, rmap_oplog_insert_logged(src));
	i_mmap_lock_write(t->mapping);
	KUNIT_EXPECT_FALSE(test, rmap_oplog_insert_logged(src));
	/* The hazard: the walk meets the copy first; asked now: false. */
	KUNIT_EXPECT_PTR_EQ(test, rt_first(t, src->vm_pgoff), copy);
	vma_interval_tree_remove(copy, &t->mapping->i_mmap);
	vma_interval_tree_remove(src, &t->mapping->i_mmap);
	i_mmap_unlock_write(t->mapping);

	/* With the rmap locks taken first, the source precedes the copy. */
	KUNIT_EXPECT_TRUE(test, rmap_oplog_queue_insert(t->mapping, src));
	i_mmap_lock_write(t->mapping);
	vma_interval_tree_insert(copy, &t->mapping->i_mmap);
	KUNIT_EXPECT_PTR_EQ(test, rt_first(t, src->vm_pgoff), src);
	KUNIT_EXPECT_EQ(test, rt_count(t, 0, ULONG_MAX), 2);
	i_mmap_unlock_write(t->mapping);
	rt_done(test, t);
}

/*
 * A CPU with a logged insert and a logged remove goes offline: OpLog
 * detaches its logs, both are spilled, and the next writer applies them.
 */
static void rmap_oplog_test_hotplug(struct kunit *test)
{
	struct rt_ctx *t = rt_new(test);
	const unsigned int victim = 1;
	struct vm_area_struct *vma;
	unsigned int home;
	int ret;

	if (!IS_ENABLED(CONFIG_HOTPLUG_CPU))
		kunit_skip(test, "needs CONFIG_HOTPLUG_CPU");
	if (num_online_cpus() < 2 || !cpu_online(victim))
		kunit_skip(test, "needs CPU %u online and another CPU", victim);
	home = cpumask_first(cpu_online_mask);
	if (home == victim)
		home = cpumask_next(victim, cpu_online_mask);

	vma = rt_alloc_in_tree(test, t, 16);
	rt_pin(test, victim);
	KUNIT_EXPECT_TRUE(test, rmap_oplog_queue_insert(t->mapping, t->vmas[0]));
	KUNIT_EXPECT_EQ(test, rmap_oplog_log_removes(t->mapping, &vma, 1), 0);
	KUNIT_EXPECT_TRUE(test, rmap_oplog_vma_release(vma, true));
	rt_pin(test, home);
	ret = remove_cpu(victim);
	if (ret) {
		rt_unpin();
		rt_done(test, t);
		kunit_skip(test, "remove_cpu(%u) failed: %d", victim, ret);
	}
	KUNIT_EXPECT_FALSE(test, READ_ONCE(t->mapping->i_mmap_oplog.cpus) &
			   BIT(victim % BITS_PER_LONG));
	KUNIT_EXPECT_FALSE(test, list_empty_careful(&t->mapping->i_mmap_spill));
	KUNIT_EXPECT_EQ(test, add_cpu(victim), 0);
	rt_unpin();

	i_mmap_lock_write(t->mapping);
	KUNIT_EXPECT_TRUE(test, rt_in_tree(t, t->vmas[0]));
	KUNIT_EXPECT_EQ(test, rt_count(t, 0, ULONG_MAX), 1);
	i_mmap_unlock_write(t->mapping);
	rt_done(test, t);
}

/*
 * An address space that dies while a CPU still holds a log of it (emptied
 * by absorption) has that log detached, so that no log points to it; the
 * removes still logged are completed, and a VMA handed off is freed.
 */
static void rmap_oplog_test_release(struct kunit *test)
{
	struct rt_ctx *t = rt_new(test);
	struct vm_area_struct *vmas[1] = { t->vmas[0] };
	struct vm_area_struct *vma = rt_alloc_in_tree(test, t, 16);

	rt_pin(test, cpumask_first(cpu_online_mask));
	KUNIT_EXPECT_TRUE(test, rmap_oplog_queue_insert(t->mapping, t->vmas[0]));
	KUNIT_EXPECT_EQ(test, rmap_oplog_absorb_local(t->mapping, vmas, 1), 0);
	KUNIT_EXPECT_EQ(test, rmap_oplog_log_removes(t->mapping, &vma, 1), 0);
	rt_unpin();
	/* From exit_mmap(): freed at once, under the object spinlock. */
	KUNIT_EXPECT_TRUE(test, rmap_oplog_vma_release(vma, true));
	KUNIT_EXPECT_TRUE(test, oplog_obj_has_logs(&t->mapping->i_mmap_oplog));
	rmap_oplog_mapping_release(t->mapping);
	KUNIT_EXPECT_EQ(test, READ_ONCE(t->mapping->i_mmap_oplog.cpus), 0UL);
	/* rt_done() finds the tree empty: the removed VMA is out. */
	rt_done(test, t);
}

/*
 * Which inserts may be logged: those of VMAs that keep no shared count,
 * and whose child either gets no PTEs at fork or has a parent in the tree
 * (an anon_vma); never a new VMA with an anon_vma.
 */
static void rmap_oplog_test_eligible(struct kunit *test)
{
	struct rt_ctx *t = rt_new(test);
	struct vm_area_struct *child = t->vmas[0], *parent = t->vmas[1];
	struct anon_vma *av = kunit_kzalloc(test, sizeof(*av), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, av);
	KUNIT_EXPECT_TRUE(test, rmap_oplog_eligible(child, parent));
	/* A parent in the tree (code 0): the child goes in after it. */
	parent->anon_vma = av;
	child->anon_vma = av;
	KUNIT_EXPECT_TRUE(test, rmap_oplog_eligible(child, parent));
	/* A parent whose insert is logged has no place in the tree yet. */
	WRITE_ONCE(parent->i_mmap_op.code, OPLOG_ADD);
	KUNIT_EXPECT_FALSE(test, rmap_oplog_eligible(child, parent));
	parent->anon_vma = NULL;
	KUNIT_EXPECT_FALSE(test, rmap_oplog_eligible(child, parent));
	WRITE_ONCE(parent->i_mmap_op.code, 0);
	KUNIT_EXPECT_FALSE(test, rmap_oplog_eligible(child, child));
	child->anon_vma = NULL;
	KUNIT_EXPECT_TRUE(test, rmap_oplog_eligible(child, child));
	vm_flags_init(child, VM_READ | VM_MAYREAD | VM_HUGETLB);
	KUNIT_EXPECT_FALSE(test, rmap_oplog_eligible(child, parent));
	vm_flags_init(child, VM_READ | VM_MAYREAD | VM_PFNMAP);
	KUNIT_EXPECT_FALSE(test, rmap_oplog_eligible(child, parent));
	vm_flags_init(child, VM_READ | VM_MAYREAD | VM_IO);
	KUNIT_EXPECT_FALSE(test, rmap_oplog_eligible(child, parent));
	vm_flags_init(child, VM_READ | VM_MAYREAD | VM_SHARED | VM_MAYWRITE);
	KUNIT_EXPECT_FALSE(test, rmap_oplog_eligible(child, parent));
	/* Shared but never writable: i_mmap_writable is not counted. */
	vm_flags_init(child, VM_READ | VM_MAYREAD | VM_SHARED | VM_MAYSHARE);
	KUNIT_EXPECT_TRUE(test, rmap_oplog_eligible(child, parent));
	rt_done(test, t);
}

/*
 * Give every VMA of @t the same range and vm_pgoff, so that the tree's
 * walk order among them is their insert order, and @parent and @child one
 * anon_vma (fork copies the child's page table entries).
 */
static void rt_same_start(struct kunit *test, struct rt_ctx *t,
			  struct vm_area_struct *parent,
			  struct vm_area_struct *child)
{
	struct anon_vma *av = kunit_kzalloc(test, sizeof(*av), GFP_KERNEL);
	int i;

	KUNIT_ASSERT_NOT_NULL(test, av);
	for (i = 0; i < RT_NR_VMAS; i++) {
		t->vmas[i]->vm_pgoff = 0;
		t->vmas[i]->vm_start = 0x100000UL;
		t->vmas[i]->vm_end = 0x100000UL + 4 * PAGE_SIZE;
	}
	parent->anon_vma = av;
	child->anon_vma = av;
}

/* Synchronize @t's tree: @nr VMAs in it, @child after @parent. */
static void rt_expect_after(struct kunit *test, struct rt_ctx *t, int nr,
			    struct vm_area_struct *parent,
			    struct vm_area_struct *child)
{
	int pos = 0, parent_pos = -1, child_pos = -1;
	struct vm_area_struct *vma;

	i_mmap_lock_read(t->mapping);
	vma_interval_tree_foreach(vma, &t->mapping->i_mmap, 0, 0) {
		if (vma == parent)
			parent_pos = pos;
		if (vma == child)
			child_pos = pos;
		pos++;
	}
	i_mmap_unlock_read(t->mapping);
	KUNIT_EXPECT_EQ(test, pos, nr);
	KUNIT_EXPECT_GE(test, parent_pos, 0);
	KUNIT_EXPECT_GT(test, child_pos, parent_pos);
}

/*
 * A fork's logged insert of a child whose PTEs are copied (parent and
 * child have an anon_vma) keeps the walk order of the locked insert:
 * synchronized into the tree, the child (the parent's vm_pgoff) comes
 * after its parent, here among VMAs of the same start, one of them put
 * right after the parent as a locked fork does
 * (vma_interval_tree_insert_after()), whichever CPU logged it.
 */
static void rmap_oplog_test_fork_order(struct kunit *test)
{
	struct rt_ctx *t = rt_new(test);
	struct vm_area_struct *parent = t->vmas[1], *child = t->vmas[3];
	unsigned int a, b;
	int i;

	rt_two_cpus(test, &a, &b);
	rt_same_start(test, t, parent, child);
	i_mmap_lock_write(t->mapping);
	vma_interval_tree_insert(t->vmas[0], &t->mapping->i_mmap);
	vma_interval_tree_insert(parent, &t->mapping->i_mmap);
	vma_interval_tree_insert_after(t->vmas[2], parent, &t->mapping->i_mmap);
	i_mmap_unlock_write(t->mapping);

	for (i = 0; i < 2; i++) {
		rt_pin(test, i ? b : a);
		KUNIT_ASSERT_TRUE(test, rmap_oplog_eligible(child, parent));
		KUNIT_ASSERT_TRUE(test, rmap_oplog_queue_insert(t->mapping,
								child));
		rt_unpin();
		rt_expect_after(test, t, 4, parent, child);
		i_mmap_lock_write(t->mapping);
		vma_interval_tree_remove(child, &t->mapping->i_mmap);
		i_mmap_unlock_write(t->mapping);
	}
	rt_done(test, t);
}

/*
 * A fork whose parent's insert is still logged on this CPU logs the
 * child's behind it (rmap_oplog_queue_behind()): synchronized into the
 * tree, the child comes after its parent, with another insert of the same
 * start logged between them.  From another CPU nothing is logged: applied
 * from two CPUs' logs, the child could go in first.
 */
static void rmap_oplog_test_fork_behind(struct kunit *test)
{
	struct rt_ctx *t = rt_new(test);
	struct vm_area_struct *parent = t->vmas[1], *child = t->vmas[3];
	unsigned int a, b;

	rt_two_cpus(test, &a, &b);
	rt_same_start(test, t, parent, child);
	i_mmap_lock_write(t->mapping);
	vma_interval_tree_insert(t->vmas[0], &t->mapping->i_mmap);
	i_mmap_unlock_write(t->mapping);

	rt_pin(test, a);
	KUNIT_ASSERT_TRUE(test, rmap_oplog_queue_insert(t->mapping, parent));
	KUNIT_ASSERT_TRUE(test, rmap_oplog_queue_insert(t->mapping, t->vmas[2]));
	KUNIT_EXPECT_FALSE(test, rmap_oplog_eligible(child, parent));
	rt_pin(test, b);
	KUNIT_EXPECT_FALSE(test, rmap_oplog_queue_behind(t->mapping, child, parent));
	KUNIT_EXPECT_EQ(test, READ_ONCE(child->i_mmap_op.code), 0U);
	rt_pin(test, a);
	KUNIT_EXPECT_TRUE(test, rmap_oplog_queue_behind(t->mapping, child, parent));
	rt_unpin();
	rt_expect_after(test, t, 4, parent, child);
	rt_done(test, t);
}

static struct kunit_case rmap_oplog_test_cases[] = {
	KUNIT_CASE(rmap_oplog_test_local_absorb),
	KUNIT_CASE(rmap_oplog_test_global_absorb),
	KUNIT_CASE(rmap_oplog_test_reader),
	KUNIT_CASE(rmap_oplog_test_trylock_busy),
	KUNIT_CASE(rmap_oplog_test_refuse),
	KUNIT_CASE(rmap_oplog_test_spill),
	KUNIT_CASE(rmap_oplog_test_split),
	KUNIT_CASE(rmap_oplog_test_split_lockless),
	KUNIT_CASE(rmap_oplog_test_lock_insert),
	KUNIT_CASE(rmap_oplog_test_lock_insert_remote),
	KUNIT_CASE(rmap_oplog_test_remove),
	KUNIT_CASE(rmap_oplog_test_remove_spill),
	KUNIT_CASE(rmap_oplog_test_remove_eligible),
	KUNIT_CASE(rmap_oplog_test_move_order),
	KUNIT_CASE(rmap_oplog_test_fork_order),
	KUNIT_CASE(rmap_oplog_test_fork_behind),
	KUNIT_CASE(rmap_oplog_test_hotplug),
	KUNIT_CASE(rmap_oplog_test_release),
	KUNIT_CASE(rmap_oplog_test_eligible),
	{}
};

static struct kunit_suite rmap_oplog_test_suite = {
	.name = "rmap_oplog",
	.test_cases = rmap_oplog_test_cases,
};

kunit_test_suite(rmap_oplog_test_suite);

MODULE_DESCRIPTION("KUnit tests for the file reverse map on OpLog");
MODULE_LICENSE("GPL");
