/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared engine of the scalable microbenchmarks.
 *
 * A benchmark describes itself with a struct bench_desc and calls
 * bench_main().  The engine parses the common options, sweeps the worker
 * counts, starts one pinned worker process per CPU (each one re-execs the
 * binary so that it shares no mm, anon_vma or struct file with anybody),
 * drives the READY -> WARMUP -> MEASURE -> STOP phases through a shared
 * memfd mapping and prints one TAP result plus one RESULT line per
 * (mode, cpus) pair.
 */
#ifndef SCALABLE_BENCH_H
#define SCALABLE_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "../kselftest.h"

#define BENCH_CACHELINE		64
/* Windowed counters per worker (snapshotted at MEASURE and STOP). */
#define BENCH_NR_WIN		3
/* Whole-run totals per worker (published when the worker finishes). */
#define BENCH_NR_TOT		2
/* Per-worker arguments written by the parent before the spawn. */
#define BENCH_NR_ARG		4
#define BENCH_MAX_MODES		32
#define BENCH_MAX_COUNTS	64
#define BENCH_NAME_LEN		32
/* bench_worker.param bit of the "-oplog" modes, see bench_add_oplog_mode() */
#define BENCH_PARAM_OPLOG	0x100

/* Phase word of the control block, written only by the parent. */
enum bench_phase {
	BENCH_PHASE_READY,
	BENCH_PHASE_WARMUP,
	BENCH_PHASE_MEASURE,
	BENCH_PHASE_STOP,
};

/* State word of a worker slot, written only by its worker. */
enum bench_state {
	BENCH_STATE_STARTING,
	BENCH_STATE_READY,
	BENCH_STATE_DONE,
};

/* How a struct bench_metric is folded over workers and runs. */
enum bench_agg {
	BENCH_AGG_RATE,	/* sum of win[] over workers / window, mean of runs */
	BENCH_AGG_SUM,	/* sum of tot[] over workers and runs */
	BENCH_AGG_MAX,	/* max of tot[] over workers and runs */
};

/**
 * struct bench_metric - an extra key=value field of the RESULT line
 * @name: key, printed as is (no spaces)
 * @agg: how the value is folded, see enum bench_agg
 * @idx: index into win[] (BENCH_AGG_RATE) or tot[] (the others)
 */
struct bench_metric {
	const char *name;
	enum bench_agg agg;
	int idx;
};

/**
 * struct bench_slot - results of one worker, one cache line
 * @state: enum bench_state, stored with release semantics
 * @error: 0, or the positive errno-like code of the first failure
 * @ops: operations counted between MEASURE and STOP
 * @win: bench-defined counters, counted between MEASURE and STOP
 * @tot: bench-defined totals over the whole run
 * @pad: pads the slot to one cache line
 *
 * The slots start on a cache-line boundary of the mapping and each fills
 * exactly one line.  Only the owning worker writes its slot, and only at
 * start-up, at its first operation counted in MEASURE (@ops becomes
 * non-zero, see run_once()), at the end and on failure, so the slots never
 * bounce during a measurement.
 */
struct bench_slot {
	__u32 state;
	__s32 error;
	__u64 ops;
	__u64 win[BENCH_NR_WIN];
	__u64 tot[BENCH_NR_TOT];
	__u64 pad[8 - 2 - BENCH_NR_WIN - BENCH_NR_TOT];
};

/**
 * struct bench_ctl - control block at the start of the shared memfd
 * @phase: enum bench_phase, written only by the parent
 * @nr_workers: workers of the current run
 * @cpus: the CPU count of the current run
 * @mode: index of the current mode
 * @param: parameter of the current mode, see bench_add_mode()
 * @arg_off: offset of the per-worker arguments in the mapping
 * @slot_off: offset of the per-worker slots
 * @extra_off: offset of the bench-defined shared area
 * @extra_size: size of that area
 *
 * The rest of the mapping holds the per-worker arguments, the per-worker
 * slots and the bench-defined shared area, see bench_arg(), bench_slot()
 * and bench_extra().
 */
struct bench_ctl {
	__u32 phase;
	__u32 nr_workers;
	__u32 cpus;
	__u32 mode;
	__u64 param;
	__u64 arg_off;
	__u64 slot_off;
	__u64 extra_off;
	__u64 extra_size;
};

/**
 * struct bench_worker - what a worker process knows about itself
 * @idx: worker index, 0 .. nr_workers - 1
 * @nr_workers: number of workers in this run
 * @cpus: CPU count of this run
 * @cpu: CPU number the worker is pinned to
 * @mode: index of the mode being measured
 * @param: parameter of that mode
 * @arg: the arguments the parent wrote for this worker
 * @win: windowed counters; the worker adds to them, the engine snapshots
 * @tot: totals; the worker sets them, the engine publishes them
 * @extra: the bench-defined shared area (NULL if none was requested)
 * @ctl: the control block
 * @priv: free for the benchmark
 */
struct bench_worker {
	int idx;
	int nr_workers;
	int cpus;
	int cpu;
	int mode;
	__u64 param;
	const __u64 *arg;
	__u64 win[BENCH_NR_WIN];
	__u64 tot[BENCH_NR_TOT];
	void *extra;
	struct bench_ctl *ctl;
	void *priv;
};

/**
 * struct bench_desc - a benchmark
 * @name: program name, used in TAP names, RESULT lines and the work dir
 * @dir: default work directory (NULL: /tmp/scalable-<@name>)
 * @opts: getopt() characters of the bench-specific options
 * @usage: usage lines of the bench-specific options
 * @parse_opt: parse one bench-specific option; 0 or -1 (usage error)
 * @init: after option parsing (in the parent after the TAP header), in the
 *	parent and in every worker; adds the modes (bench_add_mode());
 *	returns 0, -1 (error) or KSFT_SKIP (a kernel feature is missing);
 *	the options must already be validated by @parse_opt
 * @setup: parent only, after the work dir exists: create the files
 * @cleanup: parent only, at the end, also after a failure (may be NULL)
 * @nr_workers: workers for a run on @cpus CPUs (NULL: @cpus)
 * @worker_cpu: index in the CPU list that worker @idx is pinned to
 *	(NULL: @idx)
 * @extra_size: size of the shared area for up to @max_cpus CPUs (or NULL)
 * @prepare_run: parent, before each run: reset files, fill bench_arg()
 * @worker_init: worker, after the exec: open and map its files
 * @worker_op: worker loop body; returns the ops done (>= 0) or -1
 * @worker_finish: worker, after STOP (may be NULL); 0 or -1
 * @metrics: extra RESULT fields
 * @nr_metrics: number of @metrics
 * @served_ops: the operations of a traced window that the mode's OpLog
 *	type should take, from @win (each win[] counter summed over the
 *	workers), where they are not the operations counted (inotify_bench
 *	counts events read, its OpLog takes events as they are generated);
 *	NULL: the operations counted
 */
struct bench_desc {
	const char *name;
	const char *dir;
	const char *opts;
	const char *usage;
	int (*parse_opt)(int opt, const char *arg);
	int (*init)(void);
	int (*setup)(int max_cpus);
	void (*cleanup)(void);
	int (*nr_workers)(int mode, int cpus);
	int (*worker_cpu)(int idx, int nr_workers, int cpus);
	size_t (*extra_size)(int max_cpus);
	int (*prepare_run)(struct bench_ctl *ctl);
	int (*worker_init)(struct bench_worker *w);
	long (*worker_op)(struct bench_worker *w);
	int (*worker_finish)(struct bench_worker *w);
	const struct bench_metric *metrics;
	int nr_metrics;
	unsigned long long (*served_ops)(const __u64 *win);
};

/**
 * struct bench_config - the common options, after parsing
 * @warmup_ms: warm-up length (-w)
 * @measure_ms: measurement length (-m)
 * @runs: runs per (mode, cpus) (-r)
 * @dir: absolute path of the work directory (-d)
 * @nproc: CPUs in the affinity mask of the process
 * @cpu_list: the CPUs of that mask, in order
 * @counts: the worker/CPU counts to sweep (-c)
 * @nr_counts: number of @counts
 */
struct bench_config {
	long warmup_ms;
	long measure_ms;
	int runs;
	char dir[4096];
	int nproc;
	int cpu_list[1024];
	int counts[BENCH_MAX_COUNTS];
	int nr_counts;
};

/**
 * struct bench_maps - files mapped next to each other, with unmapped gaps
 * @nr: number of files
 * @pages: pages per mapping
 * @page: page size
 * @fd: descriptors (-1 once closed)
 * @addr: start of each mapping
 * @dev: st_dev of each file
 * @ino: st_ino of each file
 * @other_file_vmas: file-backed VMAs of the process that are not ours
 *	(the executable, mostly), counted by bench_check_maps()
 */
struct bench_maps {
	int nr;
	int pages;
	size_t page;
	int *fd;
	char **addr;
	__u64 *dev;
	__u64 *ino;
	int other_file_vmas;
};

/**
 * struct bench_switch - the run-time switch of an OpLog user
 * @path: the switch, a debugfs file reading "0\n" or "1\n"
 * @stats: its OpLog type's counters (oplog_stats_show() in lib/oplog.c),
 *	/sys/kernel/debug/oplog/<type>/stats
 *
 * Each OpLog user of the kernel has its switch in debugfs; a kernel
 * without that user (a stock kernel) has none, and then only the "-stock"
 * modes run.  The known switches are the bench_sw_* below, defined in
 * bench.c.
 */
struct bench_switch {
	const char *path;
	const char *stats;
};

extern struct bench_config bench_cfg;

/* The dentry OpLog (CONFIG_DCACHE_OPLOG) */
extern const struct bench_switch bench_sw_dcache;
/* The open counts of hot inodes (CONFIG_INODE_OPLOG) */
extern const struct bench_switch bench_sw_inode;
/* The inotify notification queues (CONFIG_INOTIFY_OPLOG) */
extern const struct bench_switch bench_sw_inotify;
/* The file reverse map (CONFIG_RMAP_OPLOG) */
extern const struct bench_switch bench_sw_rmap;

int bench_main(const struct bench_desc *desc, int argc, char **argv);
int bench_add_mode(const char *name, __u64 param);
int bench_set_baseline(const char *mode, const char *base);
int bench_nr_modes(void);
int bench_select_mode(const char *arg, const char *const *names, int nr,
		      int *mask);
int bench_switch_get(const struct bench_switch *sw);
int bench_switch_set(const struct bench_switch *sw, int on);
int bench_add_oplog_mode(const struct bench_switch *sw, const char *name,
			 __u64 param);
int bench_add_oplog_modes(const struct bench_switch *sw,
			  const char *const *names, int nr, int mask);
int bench_select(const struct bench_switch *sw, __u64 param);
int bench_mkdir(const char *path);
int bench_create_file(const char *path, size_t size);

__u64 *bench_arg(struct bench_ctl *ctl, int idx);
struct bench_slot *bench_slot(struct bench_ctl *ctl, int idx);
void *bench_extra(struct bench_ctl *ctl);

__printf(2, 3)
void bench_worker_fail(struct bench_worker *w, const char *fmt, ...);
int bench_wait_peers(struct bench_worker *w, long timeout_ms);
int bench_parse_uint(const char *s, long min, long max, long *val);
int bench_write_file(const char *path, size_t size);
size_t bench_page_size(void);
int bench_make_files(const char *subdir, int nr, size_t size);
int bench_map_files(struct bench_worker *w, struct bench_maps *m,
		    const char *subdir, int nr, int pages, int open_flags);
void bench_close_files(struct bench_maps *m);
int bench_check_maps(struct bench_worker *w, struct bench_maps *m);
long bench_fork_wait(struct bench_worker *w);
long bench_fork_exec(struct bench_worker *w, const char *path,
		     char *const argv[], char *const envp[]);

#endif /* SCALABLE_BENCH_H */
