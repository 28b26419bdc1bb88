// SPDX-License-Identifier: GPL-2.0
/*
 * QDo and clustered objects under CPU hotplug.
 *
 *  1. idle: with no QDo request pending, the QDo daemons are never woken
 *     (the "wakeups" and "timer" counts of /sys/kernel/debug/qdo/stats
 *     stay put for two seconds);
 *  2. stress: /sys/kernel/debug/qdo_test/stress (kernel/qdo/test_qdo.c)
 *     runs QDo requests with random masks and clustered counters on every
 *     CPU;
 *  3. the same stress while a child process takes CPUs 1..N-1 offline and
 *     online again through sysfs; it fails unless at least one CPU really
 *     went offline and came back (a CPU that refuses to go offline is
 *     skipped, but a run in which none went offline tested nothing).
 *
 * Needs root, debugfs and CONFIG_TEST_QDO; the stress reports its own
 * consistency checks ("qdo_stress ok" or "qdo_stress FAIL ...").
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../kselftest.h"
#include "sysfs_util.h"

#define QDO_STATS	"/sys/kernel/debug/qdo/stats"
#define QDO_STRESS	"/sys/kernel/debug/qdo_test/stress"

/* The @key count of QDO_STATS, or -1 if it cannot be read. */
static long qdo_stat(const char *key)
{
	return sysfs_stat(QDO_STATS, key);
}

static int stress(void)
{
	static char buf[65536];
	ssize_t ret = sysfs_read_file(QDO_STRESS, buf, sizeof(buf));

	if (ret < 0) {
		ksft_print_msg("reading %s: %s\n", QDO_STRESS, strerror(-ret));
		return -1;
	}
	ksft_print_msg("%s", buf);
	return strstr(buf, "qdo_stress ok") ? 0 : -1;
}

static void test_idle(void)
{
	long w1, t1, w2, t2, pend;
	int i;

	for (i = 0; i < 100 && qdo_stat("pending") != 0; i++)
		usleep(100000);
	w1 = qdo_stat("wakeups");
	t1 = qdo_stat("timer");
	sleep(2);
	w2 = qdo_stat("wakeups");
	t2 = qdo_stat("timer");
	pend = qdo_stat("pending");
	ksft_print_msg("idle 2 s: daemon wakeups %ld -> %ld, ", w1, w2);
	printf("timer expiries %ld -> %ld, pending %ld\n", t1, t2, pend);
	if (w1 < 0 || pend != 0)
		ksft_test_result_fail("idle: stats unreadable or requests pending\n");
	else
		ksft_test_result(w1 == w2 && t1 == t2, "idle: no QDo wakeups without requests\n");
}

/* Offline + online cycles that completed, counted in shared memory. */
static void toggler(int ncpus, long *cycles)
{
	int cpu;

	for (;;) {
		for (cpu = 1; cpu < ncpus; cpu++) {
			if (sysfs_set_cpu_online(cpu, 0))
				continue;
			usleep(20000);
			if (sysfs_set_cpu_online(cpu, 1))
				_exit(2);
			__atomic_fetch_add(cycles, 1, __ATOMIC_RELAXED);
			usleep(20000);
		}
	}
}

static void test_hotplug(int ncpus)
{
	int i, failed = 0, status, cpu, rounds = 5;
	long *cycles;
	pid_t pid;

	if (ncpus < 2 || sysfs_set_cpu_online(1, 1)) {
		ksft_test_result_skip("hotplug: needs CPU 1 and its sysfs online file\n");
		return;
	}
	cycles = mmap(NULL, sizeof(*cycles), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (cycles == MAP_FAILED) {
		ksft_test_result_fail("hotplug: mmap: %s\n", strerror(errno));
		return;
	}
	*cycles = 0;
	pid = fork();
	if (pid < 0) {
		ksft_test_result_fail("hotplug: fork: %s\n", strerror(errno));
		return;
	}
	if (pid == 0)
		toggler(ncpus, cycles);
	for (i = 0; i < rounds; i++)
		if (stress())
			failed++;
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	if (WIFEXITED(status)) {
		ksft_print_msg("hotplug: a CPU did not come back online (toggler exit %d)\n",
			       WEXITSTATUS(status));
		failed++;
	}
	/* waitpid() ordered the child's counts before this read. */
	ksft_print_msg("hotplug: %ld CPU offline+online cycles\n", *cycles);
	if (*cycles < 1)
		failed++;
	for (cpu = 1; cpu < ncpus; cpu++)
		if (sysfs_set_cpu_online(cpu, 1) && errno != 0)
			ksft_print_msg("could not bring CPU %d back online\n", cpu);
	for (cpu = 1; cpu < ncpus; cpu++)
		sysfs_set_cpu_online(cpu, 1);
	ksft_print_msg("qdo migrated requests: %ld\n", qdo_stat("migrated"));
	ksft_test_result(!failed, "hotplug: %d stress rounds while CPUs go offline and online\n",
			 rounds);
	munmap(cycles, sizeof(*cycles));
}

int main(int argc, char **argv)
{
	int ncpus = sysconf(_SC_NPROCESSORS_CONF);

	ksft_print_header();
	if (access(QDO_STRESS, R_OK) || access(QDO_STATS, R_OK))
		ksft_exit_skip("%s or %s missing (CONFIG_TEST_QDO, debugfs, root)\n",
			       QDO_STATS, QDO_STRESS);
	ksft_set_plan(3);
	test_idle();
	ksft_test_result(!stress(), "stress: QDo and clustered counters\n");
	test_hotplug(ncpus);
	ksft_finished();
}
