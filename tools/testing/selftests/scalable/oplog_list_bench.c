// SPDX-License-Identifier: GPL-2.0
/*
 * oplog_list_bench: the list microbenchmark of the OpLog thesis
 * (Boyd-Wickizer, MIT 2014, section 8.3.1) at 1..N CPUs.
 *
 * One operation adds an element to a shared list, spins 1000 cycles,
 * removes the element and spins 1000 cycles, in the kernel
 * (lib/test_oplog.c, CONFIG_TEST_OPLOG; the spin is a loop calibrated
 * against the cycle counter, whose iteration count is printed).  Modes: "locked" (the list under
 * a spinlock), "basic" (OpLog, timestamp-ordered logs), "global" (OpLog,
 * absorption of add/remove pairs at synchronize), "local" (OpLog,
 * absorption in this CPU's log at queue time as well).
 *
 * For each mode and CPU count, one worker process per CPU, pinned, reads
 * /sys/kernel/debug/oplog_test/list_run: the kernel starts all workers
 * together, runs the loop for the warm-up, then counts iterations for the
 * measurement window and returns them.  After the workers, list_check
 * synchronizes the list and checks exactly that it is empty and that
 * every element was added and removed (or absorbed) once: that is the
 * pass/fail of each TAP result.  Speed is only printed:
 *
 *   RESULT bench=oplog_list mode=<m> cpus=<n> ops_per_ms=<f> runs=<r>
 *	    stddev=<f> per_cpu=<f> [vs_locked=<f>]
 *
 * vs_locked is ops_per_ms over that of "locked" at the same CPU count.
 * Options: -w warm-up ms (1000), -m measured ms (5000), -r runs (3),
 * -q quick (100 ms, 400 ms, 2 runs), -c comma list of CPU counts (every
 * count from 1 to the CPUs of the affinity mask), -M comma list of modes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../kselftest.h"
#include "sched_util.h"
#include "sysfs_util.h"
#include "trace_mark.h"

#define DIR		"/sys/kernel/debug/oplog_test/"
#define CONFIG		DIR "list_config"
#define SPIN_LOOPS	DIR "spin_loops"
#define RUN		DIR "list_run"
#define CHECK		DIR "list_check"
#define NR_MODES	4
#define MAX_CPUS	1024
#define MAX_RUNS	1000

static const char * const mode_names[NR_MODES] = { "locked", "basic", "global", "local" };

struct worker_result {
	unsigned long long ops;
	unsigned long long total;	/* warm-up included */
	unsigned long long ns;
	int cpu;
	int ok;
};

static long warmup_ms = 1000, measure_ms = 5000, runs = 3;
static int cpu_list[MAX_CPUS], nproc;
static int counts[MAX_CPUS], nr_counts;
static bool use_mode[NR_MODES] = { true, true, true, true };
/* ops_per_ms of "locked" per CPU count, for vs_locked (0: not measured) */
static double locked_rate[MAX_CPUS + 1];
static double local_per_cpu[MAX_CPUS + 1];
static struct worker_result *results;

static void print_usage(FILE *f)
{
	fprintf(f, "%s\n%s\n",
		"oplog_list_bench [-w ms] [-m ms] [-r runs] [-q] [-c n,...] [-M mode,...]",
		"  modes: locked basic global local");
}

static int parse_modes(char *arg)
{
	char *tok, *save = NULL;
	int i, n = 0;

	memset(use_mode, 0, sizeof(use_mode));
	for (tok = strtok_r(arg, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < NR_MODES; i++)
			if (!strcmp(tok, mode_names[i]))
				break;
		if (i == NR_MODES)
			return -1;
		use_mode[i] = true;
		n++;
	}
	return n ? 0 : -1;
}

static int parse_counts(char *arg)
{
	char *tok, *save = NULL;
	long v;

	nr_counts = 0;
	for (tok = strtok_r(arg, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (sysfs_parse_range(tok, 1, MAX_CPUS, &v))
			return -1;
		if (v > nproc) {
			ksft_print_msg("oplog_list: skipping %ld CPUs (%d usable)\n", v, nproc);
			continue;
		}
		counts[nr_counts++] = v;
	}
	return 0;
}

/* Worker i: pin to its CPU, run the loop in the kernel, publish. */
static int run_worker(int idx)
{
	struct worker_result *r = &results[idx];
	char buf[128];
	ssize_t n;

	if (pin_cpu(cpu_list[idx])) {
		fprintf(stderr, "oplog_list: worker %d: sched_setaffinity(%d): %s\n", idx,
			cpu_list[idx], strerror(errno));
		return 1;
	}
	n = sysfs_read_file(RUN, buf, sizeof(buf));
	if (n < 0) {
		fprintf(stderr, "oplog_list: worker %d: read %s: %s\n", idx, RUN, strerror(-n));
		return 1;
	}
	if (sscanf(buf, "ops=%llu ns=%llu cpu=%d total=%llu", &r->ops, &r->ns,
		   &r->cpu, &r->total) != 4 ||
	    !r->ns) {
		fprintf(stderr, "oplog_list: worker %d: bad answer '%s'\n", idx, buf);
		return 1;
	}
	r->ok = r->cpu == cpu_list[idx];
	return !r->ok;
}

/* One run: returns ops per ms (sum of the workers' rates), or -1. */
static double run_once(int mode, int cpus)
{
	char cfg[96], buf[512];
	double rate = 0;
	pid_t pids[MAX_CPUS];
	unsigned long long total;
	int i, ret, failed = 0;
	long loops;
	ssize_t n;

	snprintf(cfg, sizeof(cfg), "%s %d %ld %ld", mode_names[mode], cpus, warmup_ms,
		 measure_ms);
	ret = sysfs_write_str(CONFIG, cfg);
	if (ret) {
		ksft_print_msg("write '%s' to %s: %s\n", cfg, CONFIG, strerror(-ret));
		return -1;
	}
	memset(results, 0, sizeof(*results) * cpus);
	/* The tracer's window holds the workers' whole runs, warm-up too. */
	trace_window_start();
	for (i = 0; i < cpus; i++) {
		pids[i] = fork();
		if (pids[i] == 0)
			_exit(run_worker(i));
		if (pids[i] < 0)
			failed++;
	}
	failed += reap_all(pids, cpus);
	trace_window_stop();
	for (i = 0, total = 0; i < cpus; i++)
		total += results[i].total;
	trace_window_report("oplog_list", mode_names[mode], cpus, total, !failed);
	n = sysfs_read_file(CHECK, buf, sizeof(buf));
	if (n < 0) {
		ksft_print_msg("read %s: %s\n", CHECK, strerror(-n));
		return -1;
	}
	buf[strcspn(buf, "\n")] = 0;
	if (strncmp(buf, "oplog_list ok ", 14) || failed) {
		ksft_print_msg("%s (%d workers failed)\n", buf, failed);
		return -1;
	}
	for (i = 0; i < cpus; i++)
		rate += (double)results[i].ops * 1e6 / results[i].ns;
	ksft_print_msg("%s: %.3f ops/ms\n", buf, rate);
	if (!sysfs_read_long(SPIN_LOOPS, &loops))
		ksft_print_msg("spin: %ld loop iterations per 1000 cycles\n", loops);
	return rate;
}

static bool run_pair(int mode, int cpus)
{
	double rates[MAX_RUNS], mean = 0, var = 0, r;
	char extra[64] = "", line[256];
	int i, done = 0;
	size_t len;

	for (i = 0; i < runs; i++) {
		r = run_once(mode, cpus);
		if (r < 0)
			break;
		rates[done++] = r;
	}
	for (i = 0; i < done; i++)
		mean += rates[i] / done;
	for (i = 0; i < done; i++)
		var += (rates[i] - mean) * (rates[i] - mean);
	if (done > 1)
		var /= done - 1;
	if (done == runs && mode == 0)
		locked_rate[cpus] = mean;
	if (done == runs && !strcmp(mode_names[mode], "local"))
		local_per_cpu[cpus] = mean / cpus;
	if (mode && locked_rate[cpus] > 0)
		snprintf(extra, sizeof(extra), " vs_locked=%.3f", mean / locked_rate[cpus]);
	snprintf(line, sizeof(line), "RESULT bench=oplog_list mode=%s cpus=%d ops_per_ms=%.3f",
		 mode_names[mode], cpus, mean);
	len = strlen(line);
	snprintf(line + len, sizeof(line) - len, " runs=%d stddev=%.3f per_cpu=%.3f%s%s", done,
		 sqrt(var), mean / cpus, extra, done == runs ? "" : " status=fail");
	ksft_print_msg("%s\n", line);
	ksft_test_result(done == runs, "oplog_list %s cpus=%d: list checked\n",
			 mode_names[mode], cpus);
	return done == runs;
}

int main(int argc, char **argv)
{
	bool opt_w = false, opt_m = false, opt_r = false, quick = false;
	char *opt_c = NULL;
	int c, i, j, nr_modes = 0;
	long v;

	while ((c = getopt(argc, argv, "w:m:r:qc:M:d:xh")) != -1) {
		switch (c) {
		case 'w':
			if (sysfs_parse_range(optarg, 0, 600000, &warmup_ms))
				goto bad;
			opt_w = true;
			break;
		case 'm':
			if (sysfs_parse_range(optarg, 1, 600000, &measure_ms))
				goto bad;
			opt_m = true;
			break;
		case 'r':
			if (sysfs_parse_range(optarg, 1, MAX_RUNS, &runs))
				goto bad;
			opt_r = true;
			break;
		case 'q':
			quick = true;
			break;
		case 'c':
			opt_c = optarg;
			break;
		case 'M':
			if (parse_modes(optarg))
				goto bad;
			break;
		case 'd':
		case 'x':
			/* bench.c options: nothing to do here */
			break;
		case 'h':
			print_usage(stdout);
			return KSFT_PASS;
		default:
			goto bad;
		}
	}
	if (optind != argc)
		goto bad;
	if (quick) {
		if (!opt_w)
			warmup_ms = 100;
		if (!opt_m)
			measure_ms = 400;
		if (!opt_r)
			runs = 2;
	}
	nproc = affinity_cpus(cpu_list, MAX_CPUS);
	if (nproc < 0)
		return KSFT_FAIL;

	ksft_print_header();
	if (opt_c) {
		if (parse_counts(opt_c))
			goto bad;
	} else {
		for (i = 1; i <= nproc; i++)
			counts[nr_counts++] = i;
	}
	if (access(CONFIG, W_OK) || access(RUN, R_OK) || access(CHECK, R_OK))
		ksft_exit_skip("%s missing (CONFIG_TEST_OPLOG, debugfs, root)\n", DIR);
	if (!nr_counts)
		ksft_exit_skip("no usable CPU count\n");
	results = mmap(NULL, sizeof(*results) * MAX_CPUS, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (results == MAP_FAILED)
		ksft_exit_fail_msg("mmap: %s\n", strerror(errno));
	for (i = 0; i < NR_MODES; i++)
		nr_modes += use_mode[i];
	ksft_print_msg("oplog_list: warm-up %ld ms, %ld ms measured, %ld runs, %d CPUs\n",
		       warmup_ms, measure_ms, runs, nproc);
	/* The plan line of bench.c, which the host checks its schedule by. */
	ksft_print_msg("oplog_list: %d modes x %d counts, about %.1f s of windows\n",
		       nr_modes, nr_counts,
		       (double)nr_modes * nr_counts * runs * (warmup_ms + measure_ms) / 1000);
	ksft_set_plan(nr_modes * nr_counts);
	for (i = 0; i < NR_MODES; i++) {
		if (!use_mode[i])
			continue;
		for (j = 0; j < nr_counts; j++)
			run_pair(i, counts[j]);
	}
	/* The thesis's claim for local absorption: linear scaling. */
	for (j = 0; j < nr_counts; j++) {
		v = counts[j];
		if (v > 1 && local_per_cpu[1] > 0 && local_per_cpu[v] > 0)
			ksft_print_msg("oplog_list local: per CPU at %ld: %.1f%% of 1 CPU\n", v,
				       100 * local_per_cpu[v] / local_per_cpu[1]);
	}
	ksft_finished();

bad:
	print_usage(stderr);
	return KSFT_FAIL;
}
