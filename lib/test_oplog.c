// SPDX-License-Identifier: GPL-2.0
/*
 * The list microbenchmark of Boyd-Wickizer's OpLog thesis (MIT, 2014,
 * section 8.3.1), driven from debugfs by
 * tools/testing/selftests/scalable/oplog_list_bench.c.
 *
 * One iteration (one operation) adds an element to a shared list, spins
 * for LB_SPIN_CYCLES cycles, removes the element and spins again.  Four
 * variants of the shared list:
 *
 *   locked  the list under one spinlock
 *   basic   OpLog, %OPLOG_ORDERED: add and remove are logged per CPU and
 *	     applied in timestamp order when a log fills, on eviction or at
 *	     the final synchronize
 *   global  OpLog, %OPLOG_ABSORBING with %OPLOG_GLOBAL_ABSORB: an add and
 *	     the remove of the same element cancel at synchronize
 *   local   OpLog, %OPLOG_ABSORBING with %OPLOG_LOCAL_ABSORB as well: the
 *	     remove finds the add in this CPU's log and both vanish at once
 *
 * Every element is allocated by its iteration and freed by whoever ends
 * its life (the remover, ->exec of the remove, or ->absorb), in all four
 * variants alike.
 *
 * /sys/kernel/debug/oplog_test/:
 *   list_config  write "<mode> <workers> <warmup_ms> <measure_ms>": a new
 *		  run with an empty list (what is left of the previous run
 *		  is flushed first).  -EINVAL on bad input, -EBUSY while
 *		  workers run.
 *   list_run     read by each of <workers> worker tasks, each pinned to
 *		  its CPU: waits until all have arrived, runs the loop for
 *		  warmup_ms, counts iterations for measure_ms and returns
 *		  "ops=<n> ns=<t> cpu=<c> total=<all>", <all> being the
 *		  iterations of the whole run, warm-up included.
 *   spin_loops   the loop iterations of one spin, calibrated to
 *		  LB_SPIN_CYCLES cycles by each list_config write
 *   list_check   read after the workers returned: synchronizes, checks
 *		  exactly that the list is empty and that every element was
 *		  added and removed (or absorbed) once and freed once, then
 *		  flushes the object; "oplog_list ok ..." or
 *		  "oplog_list FAIL ...".
 *
 * Benchmarks print numbers; nothing here asserts on speed.
 */

#include <linux/bits.h>
#include <linux/cache.h>
#include <linux/debugfs.h>
#include <linux/init.h>
#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/mutex.h>
#include <linux/oplog.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/timex.h>
#include <linux/uaccess.h>
#include <linux/wait.h>

#define LB_SPIN_CYCLES		1000
#define LB_CALIBRATE_MAX	BIT(24)		/* loop iterations */
#define LB_WAIT_MS		10000
#define LB_CHECK_EVERY		8

enum lb_mode { LB_LOCKED, LB_BASIC, LB_GLOBAL, LB_LOCAL, LB_MODES };

static const char * const lb_names[LB_MODES] = {
	[LB_LOCKED] = "locked",
	[LB_BASIC] = "basic",
	[LB_GLOBAL] = "global",
	[LB_LOCAL] = "local",
};

struct lb_item {
	struct list_head	node;
	struct oplog_keyed_op	add;
	struct oplog_keyed_op	remove;
};

/* Per-CPU tallies: shared counters would bounce and skew the numbers. */
struct lb_tally {
	long	allocs;
	long	frees;
	long	absorbed;
	long	nomem;		/* iterations without an element */
};

static DEFINE_PER_CPU(struct lb_tally, lb_tally);

/* The shared list: one object, its lock and what was executed on it. */
static struct {
	struct oplog_obj	oo;
	spinlock_t		lock;		/* the object lock */
	struct list_head	items;
	long			nr_items;
	long			adds;
	long			removes;
	long			bad;
} lb_list ____cacheline_aligned_in_smp;

/* The run; written under lb_mutex, read by the workers after the start. */
static DEFINE_MUTEX(lb_mutex);
static DECLARE_WAIT_QUEUE_HEAD(lb_wq);
static struct {
	bool		configured;
	bool		broken;
	enum lb_mode	mode;
	int		nr_workers;
	int		arrived;
	int		finished;
	u64		warmup_ns;
	u64		measure_ns;
	u64		t_measure;
	u64		t_end;
	int		registered;	/* 0, or the oplog_type_register() error */
} lb;

static spinlock_t *lb_lock(struct oplog_obj *oo)
{
	return &lb_list.lock;
}

static void lb_exec(struct oplog_obj *oo, struct oplog_op *op)
{
	struct oplog_keyed_op *kop = container_of(op, struct oplog_keyed_op, op);
	struct lb_item *item;

	if (kop->code == OPLOG_ADD) {
		item = container_of(kop, struct lb_item, add);
		list_add(&item->node, &lb_list.items);
		lb_list.nr_items++;
		lb_list.adds++;
	} else if (kop->code == OPLOG_REMOVE) {
		item = container_of(kop, struct lb_item, remove);
		list_del(&item->node);
		lb_list.nr_items--;
		lb_list.removes++;
		kfree(item);
		this_cpu_inc(lb_tally.frees);
	} else {
		lb_list.bad++;
	}
}

static void lb_absorb(struct oplog_obj *oo, struct oplog_op *add,
		      struct oplog_op *remove)
{
	struct lb_item *item = container_of(add, struct lb_item, add.op);

	if (remove != &item->remove.op)
		WRITE_ONCE(lb_list.bad, 1);
	kfree(item);
	this_cpu_inc(lb_tally.frees);
	this_cpu_inc(lb_tally.absorbed);
}

static const struct oplog_type_ops lb_ops = {
	.obj_lock	= lb_lock,
	.exec		= lb_exec,
	.absorb		= lb_absorb,
};

static struct oplog_type lb_basic_type = {
	.name	= "test_list_basic",
	.kind	= OPLOG_ORDERED,
	.ops	= &lb_ops,
};

static struct oplog_type lb_global_type = {
	.name	= "test_list_global",
	.kind	= OPLOG_ABSORBING,
	.ops	= &lb_ops,
	.flags	= OPLOG_GLOBAL_ABSORB,
};

static struct oplog_type lb_local_type = {
	.name	= "test_list_local",
	.kind	= OPLOG_ABSORBING,
	.ops	= &lb_ops,
	.flags	= OPLOG_LOCAL_ABSORB | OPLOG_GLOBAL_ABSORB,
};

static struct oplog_type * const lb_types[LB_MODES] = {
	[LB_BASIC] = &lb_basic_type,
	[LB_GLOBAL] = &lb_global_type,
	[LB_LOCAL] = &lb_local_type,
};

/*
 * The spin between add and remove.  The thesis polls the cycle counter;
 * this spins a number of empty loop iterations calibrated against it
 * instead, as the kernel's delay loop does without a usable TSC.  The
 * reason is emulation: under QEMU TCG every guest RDTSC takes one
 * host-wide lock (cpu_get_ticks()), so a polling loop on each CPU would
 * measure that lock, for all four variants alike, rather than the list.
 * Under KVM or on hardware both ways spin the same time.
 */
static unsigned long lb_spin_loops = LB_SPIN_CYCLES;

static noinline void lb_delay(unsigned long loops)
{
	while (loops--)
		barrier();
}

static void lb_spin(void)
{
	lb_delay(lb_spin_loops);
}

/*
 * Set lb_spin_loops to the iterations that take LB_SPIN_CYCLES cycles:
 * double the count until one pass takes at least 100 spins' worth of
 * cycles (or LB_CALIBRATE_MAX iterations, where get_cycles() does not
 * count), then keep the fastest of three passes (the least disturbed).
 * Called with lb_mutex held and no worker running.
 */
static void lb_calibrate(void)
{
	unsigned long loops = 1024;
	cycles_t t, best = 0;
	int i;

	lockdep_assert_held(&lb_mutex);
	for (;;) {
		t = get_cycles();
		lb_delay(loops);
		t = get_cycles() - t;
		if (t >= 100 * LB_SPIN_CYCLES || loops >= LB_CALIBRATE_MAX)
			break;
		loops *= 2;
	}
	for (i = 0; i < 3; i++) {
		t = get_cycles();
		lb_delay(loops);
		t = get_cycles() - t;
		if (!best || t < best)
			best = t;
	}
	/* A get_cycles() that does not count (0) keeps the previous value. */
	if (best)
		lb_spin_loops = max(1ULL, div64_u64((u64)loops * LB_SPIN_CYCLES,
						    best));
}

/*
 * One operation of the benchmark; false if OpLog refused it.  An iteration
 * whose element cannot be allocated (fault injection: the faults phase
 * of the kselftest torture) is counted and skipped, so that the run goes
 * on with the OpLog's own allocations failing too.
 */
static bool lb_iteration(enum lb_mode mode)
{
	struct oplog_type *type = lb_types[mode];
	struct lb_item *item = kmalloc(sizeof(*item), GFP_KERNEL);

	if (!item) {
		this_cpu_inc(lb_tally.nomem);
		return true;
	}
	this_cpu_inc(lb_tally.allocs);
	if (mode == LB_LOCKED) {
		spin_lock(&lb_list.lock);
		list_add(&item->node, &lb_list.items);
		lb_list.nr_items++;
		lb_list.adds++;
		spin_unlock(&lb_list.lock);
		lb_spin();
		spin_lock(&lb_list.lock);
		list_del(&item->node);
		lb_list.nr_items--;
		lb_list.removes++;
		spin_unlock(&lb_list.lock);
		kfree(item);
		this_cpu_inc(lb_tally.frees);
		lb_spin();
		return true;
	}

	item->add.code = OPLOG_ADD;
	item->add.key = (unsigned long)item;
	item->remove.code = OPLOG_REMOVE;
	item->remove.key = (unsigned long)item;
	if (oplog_queue(type, &lb_list.oo, &item->add.op)) {
		kfree(item);
		this_cpu_inc(lb_tally.frees);
		return false;
	}
	lb_spin();
	/* The add is queued: the remove cannot be refused (no miss). */
	if (oplog_queue(type, &lb_list.oo, &item->remove.op))
		WRITE_ONCE(lb_list.bad, 1);
	lb_spin();
	return true;
}

/* Sum the per-CPU tallies into @sum (if not NULL) and clear them. */
static void lb_tally_reset(struct lb_tally *sum)
{
	struct lb_tally *t;
	int cpu;

	for_each_possible_cpu(cpu) {
		t = per_cpu_ptr(&lb_tally, cpu);
		if (sum) {
			sum->allocs += t->allocs;
			sum->frees += t->frees;
			sum->absorbed += t->absorbed;
			sum->nomem += t->nomem;
		}
		memset(t, 0, sizeof(*t));
	}
}

/* Tear down what a run left: pending operations run and free elements. */
static void lb_reset(void)
{
	if (lb.configured && lb.mode != LB_LOCKED && !lb.registered)
		oplog_flush(lb_types[lb.mode], &lb_list.oo);
	lb.configured = false;
}

static ssize_t config_write(struct file *file, const char __user *ubuf,
			    size_t len, loff_t *ppos)
{
	char buf[64], name[16];
	unsigned int workers, warmup_ms, measure_ms;
	int mode, ret;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = 0;
	if (sscanf(buf, "%15s %u %u %u", name, &workers, &warmup_ms, &measure_ms) != 4)
		return -EINVAL;
	mode = match_string(lb_names, LB_MODES, name);
	if (mode < 0 || !workers || workers > nr_cpu_ids || warmup_ms > 600000 ||
	    !measure_ms || measure_ms > 600000)
		return -EINVAL;

	mutex_lock(&lb_mutex);
	ret = -EBUSY;
	if (lb.arrived != lb.finished)
		goto out;
	ret = lb.registered;
	if (ret && mode != LB_LOCKED)
		goto out;
	lb_reset();
	spin_lock(&lb_list.lock);
	if (lb_list.nr_items || !list_empty(&lb_list.items)) {
		/* A failed earlier check: never reuse a corrupted list. */
		spin_unlock(&lb_list.lock);
		ret = -EIO;
		goto out;
	}
	lb_list.adds = 0;
	lb_list.removes = 0;
	lb_list.bad = 0;
	spin_unlock(&lb_list.lock);
	lb_tally_reset(NULL);
	lb_calibrate();
	lb.mode = mode;
	lb.nr_workers = workers;
	lb.arrived = 0;
	lb.finished = 0;
	lb.broken = false;
	lb.t_measure = 0;
	lb.t_end = 0;
	lb.warmup_ns = (u64)warmup_ms * NSEC_PER_MSEC;
	lb.measure_ns = (u64)measure_ms * NSEC_PER_MSEC;
	lb.configured = true;
	ret = len;
out:
	mutex_unlock(&lb_mutex);
	return ret;
}

static const struct file_operations config_fops = {
	.owner	= THIS_MODULE,
	.open	= simple_open,
	.write	= config_write,
	.llseek	= noop_llseek,
};

static ssize_t run_read(struct file *file, char __user *ubuf, size_t len,
			loff_t *ppos)
{
	u64 n = 0, n0 = 0, now = 0, m0 = 0, t_measure, t_end;
	bool measuring = false, failed = false;
	enum lb_mode mode;
	char buf[96];
	long left;
	int cpu, size;

	if (*ppos)
		return 0;
	mutex_lock(&lb_mutex);
	if (!lb.configured || lb.arrived >= lb.nr_workers) {
		mutex_unlock(&lb_mutex);
		return -EBUSY;
	}
	if (++lb.arrived == lb.nr_workers) {
		lb.t_measure = ktime_get_ns() + lb.warmup_ns;
		lb.t_end = lb.t_measure + lb.measure_ns;
		wake_up_all(&lb_wq);
	}
	mode = lb.mode;
	mutex_unlock(&lb_mutex);

	left = wait_event_interruptible_timeout(lb_wq, READ_ONCE(lb.t_end) ||
						READ_ONCE(lb.broken),
						msecs_to_jiffies(LB_WAIT_MS));
	mutex_lock(&lb_mutex);
	t_measure = lb.t_measure;
	t_end = lb.t_end;
	if (left <= 0 || !t_end) {
		lb.broken = true;
		lb.finished++;
		wake_up_all(&lb_wq);
		mutex_unlock(&lb_mutex);
		return left < 0 ? left : -ETIMEDOUT;
	}
	mutex_unlock(&lb_mutex);

	for (;;) {
		if (!lb_iteration(mode)) {
			failed = true;
			break;
		}
		n++;
		if (n % LB_CHECK_EVERY)
			continue;
		now = ktime_get_ns();
		if (!measuring && now >= t_measure) {
			measuring = true;
			n0 = n;
			m0 = now;
		}
		if (now >= t_end)
			break;
		cond_resched();
	}
	cpu = raw_smp_processor_id();

	mutex_lock(&lb_mutex);
	if (failed)
		lb.broken = true;
	lb.finished++;
	mutex_unlock(&lb_mutex);
	if (failed)
		return -ENOMEM;
	size = scnprintf(buf, sizeof(buf), "ops=%llu ns=%llu cpu=%d total=%llu\n",
			 measuring ? n - n0 : 0, measuring ? now - m0 : 0, cpu, n);
	return simple_read_from_buffer(ubuf, len, ppos, buf, size);
}

static const struct file_operations run_fops = {
	.owner	= THIS_MODULE,
	.open	= simple_open,
	.read	= run_read,
	.llseek	= noop_llseek,
};

struct lb_snap {
	long	nr;
	long	adds;
	long	removes;
	long	bad;
	bool	empty;
};

/* The shared list, read with its lock held. */
static void lb_snapshot(struct lb_snap *snap)
{
	lockdep_assert_held(&lb_list.lock);
	snap->nr = lb_list.nr_items;
	snap->empty = list_empty(&lb_list.items);
	snap->adds = lb_list.adds;
	snap->removes = lb_list.removes;
	snap->bad = lb_list.bad;
}

static int check_show(struct seq_file *m, void *v)
{
	struct lb_tally sum = { };
	struct lb_snap snap;
	enum lb_mode mode;
	bool ok;

	mutex_lock(&lb_mutex);
	if (!lb.configured || lb.arrived != lb.finished || lb.arrived != lb.nr_workers) {
		mutex_unlock(&lb_mutex);
		return -EBUSY;
	}
	mode = lb.mode;
	/* The locked list is up to date; OpLog's must be synchronized. */
	if (mode == LB_LOCKED) {
		spin_lock(&lb_list.lock);
		lb_snapshot(&snap);
		spin_unlock(&lb_list.lock);
	} else {
		oplog_synchronize(lb_types[mode], &lb_list.oo);
		lb_snapshot(&snap);
		oplog_unlock(lb_types[mode], &lb_list.oo);
	}
	/* Teardown: detach every CPU's log of the list. */
	lb_reset();

	lb_tally_reset(&sum);
	ok = !lb.broken && snap.empty && !snap.nr && !snap.bad &&
	     snap.adds == snap.removes && sum.allocs == sum.frees &&
	     snap.adds + sum.absorbed == sum.allocs &&
	     (mode == LB_LOCAL || mode == LB_GLOBAL || !sum.absorbed);
	seq_printf(m, "oplog_list %s mode=%s workers=%d elements=%ld executed=%ld absorbed=%ld freed=%ld list_empty=%d nr=%ld bad=%ld broken=%d oplog_has_logs=%d nomem=%ld\n",
		   ok ? "ok" : "FAIL", lb_names[mode], lb.nr_workers, sum.allocs,
		   snap.adds, sum.absorbed, sum.frees, snap.empty, snap.nr, snap.bad,
		   lb.broken, oplog_obj_has_logs(&lb_list.oo), sum.nomem);
	mutex_unlock(&lb_mutex);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(check);

static int __init test_oplog_init(void)
{
	struct dentry *dir;
	int i;

	spin_lock_init(&lb_list.lock);
	INIT_LIST_HEAD(&lb_list.items);
	oplog_obj_init(&lb_list.oo);
	for (i = LB_BASIC; i < LB_MODES; i++) {
		lb.registered = oplog_type_register(lb_types[i]);
		if (lb.registered) {
			while (--i >= LB_BASIC)
				oplog_type_unregister(lb_types[i]);
			pr_err("test_oplog: oplog_type_register: %d\n", lb.registered);
			break;
		}
	}
	dir = debugfs_create_dir("oplog_test", NULL);
	debugfs_create_file("list_config", 0200, dir, NULL, &config_fops);
	debugfs_create_file("list_run", 0400, dir, NULL, &run_fops);
	debugfs_create_file("list_check", 0400, dir, NULL, &check_fops);
	debugfs_create_ulong("spin_loops", 0444, dir, &lb_spin_loops);
	return 0;
}
late_initcall(test_oplog_init);
