// SPDX-License-Identifier: GPL-2.0
/*
 * QDo callback latency and CPU cost against call_rcu() and
 * synchronize_rcu_expedited(), measured in the kernel by
 * /sys/kernel/debug/qdo_test/latency (kernel/qdo/test_qdo.c), on an idle
 * system and with every CPU busy in user mode.  CPU cost: kthread_us_per_cb (the
 * mechanism's kthreads) always, cpu_us_per_cb (all non-idle CPU time over
 * a quiet baseline) on the idle runs only.  The kernel prints RESULT
 * lines; this program re-prints them with the load ("idle_" or "loaded_")
 * in front of the mode.  Numbers only: nothing here asserts on speed.
 * The common benchmark options (-w, -m, -r, -q, -c) are accepted and
 * ignored: the kernel side sets the sizes.
 *
 * "qdo_latency -I <ms>" instead marks one tracer window (trace_mark.h)
 * around <ms> of sleep on an otherwise idle system: under the harness's
 * cache-line tracer, QDo's idle cost (its daemons, its per-CPU
 * generations) shows as the transfers of that window.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../kselftest.h"
#include "sched_util.h"
#include "sysfs_util.h"
#include "trace_mark.h"

#define QDO_LATENCY	"/sys/kernel/debug/qdo_test/latency"
#define QDO_COUNTER	"/sys/kernel/debug/qdo_test/counter"
#define QDO_PERIOD	"/sys/module/qdo/parameters/period_us"

static char buf[65536];

/* Re-print the kernel's lines; "load" goes in front of each mode. */
static int measure(const char *path, const char *load)
{
	char *line, *save, *mode;
	int results = 0;
	size_t len;

	/* A read() that fails leaves what came before it to re-print. */
	if (sysfs_read_buf(path, buf, sizeof(buf), &len) && !len)
		return -1;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		mode = strstr(line, " mode=");
		if (strncmp(line, "RESULT ", 7) || !mode) {
			ksft_print_msg("%s\n", line);
			continue;
		}
		*mode = 0;
		if (load)
			ksft_print_msg("%s mode=%s_%s\n", line, load, mode + 6);
		else
			ksft_print_msg("%s mode=%s\n", line, mode + 6);
		results++;
	}
	return results;
}

static void spin(int cpu)
{
	pin_cpu(cpu);
	for (;;)
		;
}

/* One tracer window around @ms of sleep: the idle system's transfers. */
static int idle_window(const char *arg)
{
	int ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	long ms = strtol(arg, NULL, 10);
	struct timespec ts = { ms / 1000, ms % 1000 * 1000000L };
	int ret;

	ksft_print_header();
	ksft_set_plan(1);
	if (ms <= 0)
		ksft_exit_fail_msg("-I wants milliseconds, not '%s'\n", arg);
	trace_window_start();
	ret = clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
	trace_window_stop();
	trace_window_report("qdo_idle", "idle", ncpus, 1, !ret);
	ksft_test_result(!ret, "qdo_idle: %ld ms idle window\n", ms);
	ksft_finished();
}

int main(int argc, char **argv)
{
	int ncpus = sysconf(_SC_NPROCESSORS_ONLN), cpu, n;
	pid_t pids[256];

	if (argc == 3 && !strcmp(argv[1], "-I"))
		return idle_window(argv[2]);
	ksft_print_header();
	if (access(QDO_LATENCY, R_OK))
		ksft_exit_skip("%s missing (CONFIG_TEST_QDO, debugfs, root)\n", QDO_LATENCY);
	ksft_set_plan(4);

	n = measure(QDO_LATENCY, "idle");
	ksft_test_result(n > 0, "qdo_latency idle: %d results\n", n);

	if (ncpus > 256)
		ncpus = 256;
	for (cpu = 0; cpu < ncpus; cpu++) {
		pids[cpu] = fork();
		if (pids[cpu] == 0)
			spin(cpu);
	}
	n = measure(QDO_LATENCY, "loaded");
	for (cpu = 0; cpu < ncpus; cpu++) {
		if (pids[cpu] > 0) {
			kill(pids[cpu], SIGKILL);
			waitpid(pids[cpu], NULL, 0);
		}
	}
	ksft_test_result(n > 0, "qdo_latency loaded: %d results\n", n);

	/* The daemon period against latency, idle (the default is 4000). */
	n = 0;
	if (!sysfs_write_str(QDO_PERIOD, "1000")) {
		n += measure(QDO_LATENCY, "idle_p1ms");
		sysfs_write_str(QDO_PERIOD, "10000");
		n += measure(QDO_LATENCY, "idle_p10ms");
		sysfs_write_str(QDO_PERIOD, "4000");
	}
	ksft_test_result(n > 0, "qdo_latency against the daemon period: %d results\n", n);

	n = measure(QDO_COUNTER, NULL);
	ksft_test_result(n > 0, "counter_bench: %d results\n", n);
	ksft_finished();
}
