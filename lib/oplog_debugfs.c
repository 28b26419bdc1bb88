// SPDX-License-Identifier: GPL-2.0
/*
 * OpLog statistics in debugfs: /sys/kernel/debug/oplog/<type>/stats sums
 * every CPU's counters of a type (lockless local_t reads, a snapshot) and
 * the number of logs in its caches.
 */

#include <linux/cpumask.h>
#include <linux/debugfs.h>
#include <linux/minmax.h>
#include <linux/oplog.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <asm/local.h>

#include "oplog_internal.h"

static const char * const oplog_stat_names[OPLOG_NR_STATS] = {
	"queued", "hits", "misses", "evictions", "evict_busy", "full",
	"direct", "syncs", "flushes", "applied", "absorbed_local",
	"absorbed_global", "retired", "local_folds", "reused", "max_apply",
};

static struct dentry *oplog_debugfs_root;

/* Add one CPU's counters @v to @sum; a high-water mark by its maximum. */
static void oplog_stats_add(long *sum, const local_t *v)
{
	unsigned int s;
	long n;

	for (s = 0; s < OPLOG_NR_STATS; s++) {
		n = local_read(&v[s]);
		if (s == OPLOG_STAT_MAX_APPLY)
			sum[s] = max(sum[s], n);
		else
			sum[s] += n;
	}
}

static int oplog_stats_show(struct seq_file *m, void *v)
{
	static const char * const kinds[] = {
		[OPLOG_ORDERED] = "ordered", [OPLOG_COUNTER] = "counter",
		[OPLOG_ABSORBING] = "absorbing",
	};
	struct oplog_type *type = m->private;
	long sum[OPLOG_NR_STATS] = { };
	unsigned long offline_logs = 0;
	struct oplog_cache *cache;
	unsigned int cpu, s, caches = 0;

	for_each_possible_cpu(cpu) {
		/* What a CPU counted before it had a cache (oplog_stat()). */
		oplog_stats_add(sum, per_cpu_ptr(type->uncached_stats, cpu));
		cache = oplog_cache_of(type, cpu);
		if (!cache)
			continue;
		caches++;
		oplog_stats_add(sum, cache->stats);
		if (!cpu_online(cpu))
			offline_logs += oplog_cpu_nr_logs(type, cpu);
	}
	/* A hit counts only as a hit; "queued" is every accepted operation. */
	sum[OPLOG_STAT_QUEUED] += sum[OPLOG_STAT_HITS];
	seq_printf(m, "kind %s\nclock %s\nslots %u\nmax_len %u\nmax_pending %u\n",
		   kinds[type->kind], oplog_clock_is_tsc() ? "tsc" : "seq",
		   type->nr_slots, type->max_len, type->max_pending);
	seq_printf(m, "caches %u\nlogs %lu\n", caches, oplog_type_nr_logs(type));
	/*
	 * Logs of CPUs that are not online, vacant ones included: 0 once
	 * oplog_cpu_dead() ran for each of them (a CPU on its way down may
	 * still hold some).
	 */
	seq_printf(m, "offline_logs %lu\n", offline_logs);
	/* Left in their slots by flushes, for the next miss there. */
	seq_printf(m, "vacant_logs %lu\n", oplog_type_nr_vacant(type));
	seq_printf(m, "log_bytes %u\ncache_bytes %zu\n",
		   kmem_cache_size(oplog_log_cachep),
		   sizeof(*cache) + max(type->nr_slots, OPLOG_WAYS) *
		   sizeof(*cache->slots));
	for (s = 0; s < OPLOG_NR_STATS; s++)
		seq_printf(m, "%s %ld\n", oplog_stat_names[s], sum[s]);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(oplog_stats);

/* oplog/: created once, before any type registers. */
void __init oplog_debugfs_init(void)
{
	oplog_debugfs_root = debugfs_create_dir("oplog", NULL);
}

/* oplog/<type>/stats, at registration. */
void oplog_debugfs_add_type(struct oplog_type *type)
{
	type->debugfs = debugfs_create_dir(type->name ?: "unnamed",
					   oplog_debugfs_root);
	debugfs_create_file("stats", 0444, type->debugfs, type,
			    &oplog_stats_fops);
}

/* ... and its removal, at unregistration. */
void oplog_debugfs_remove_type(struct oplog_type *type)
{
	debugfs_remove_recursive(type->debugfs);
}
