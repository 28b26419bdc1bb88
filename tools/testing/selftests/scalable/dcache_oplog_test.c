// SPDX-License-Identifier: GPL-2.0
/*
 * OpLog dentry reference counts (fs/dcache_oplog.c) under races.
 *
 * On a private tmpfs, with /sys/kernel/debug/dcache_oplog/enabled on:
 *
 *  1. race: one process per CPU runs stat, open, unlink, rename, mkdir and
 *     rmdir on the same few names for a while, so that the per-CPU counts
 *     of those dentries are hot while they are unlinked, renamed over and
 *     removed; the parent flips the switch off and on meanwhile.  Only
 *     ENOENT, EEXIST, ENOTEMPTY and ENOTDIR/EISDIR (a name changed kind)
 *     are allowed.  Afterwards every name that stat() finds is listed by
 *     readdir() and the other way round, files have one link, and
 *     directories two; and turning the switch off leaves no log.
 *  2. umount: every CPU stats many files (their dentries get per-CPU
 *     counts), then the tmpfs is unmounted; that must succeed, and the
 *     dentries must really go: the dentry count of /proc/sys/fs/dentry-state
 *     and the number of per-CPU logs (dcache_oplog/logs) fall back to near
 *     where they were before the files were created.
 *  3. shrink: pinned to CPU 1, open, stat and close 4096 fresh names (the
 *     dentries get counter logs in CPU 1's log cache, each holding a pin
 *     on its dentry), then drop the slab caches a few times: OpLog's
 *     shrinker must reach CPU 1's logs, so the number of logs and of pins
 *     (oplog/dentry/stats and dcache_oplog/logs) must fall back to near
 *     where it was.  Tmpfs dentries keep their own reference, so nothing
 *     but that shrinker (or an unlink) detaches their logs.  A shrinker
 *     that scans only the first CPU's cache fails this.
 *
 * The kernel's own checks (umount_check(), "busy inodes", kmemleak in the
 * debug boot) catch a leaked or early-freed dentry as a splat.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../kselftest.h"
#include "sysfs_util.h"

#define SWITCH		"/sys/kernel/debug/dcache_oplog/enabled"
#define LOGS		"/sys/kernel/debug/dcache_oplog/logs"
#define STATS		"/sys/kernel/debug/oplog/dentry/stats"
#define NR_SHRINK	4096
#define SHRINK_CPU	1
#define SHRINK_TRIES	16
#define NR_NAMES	6
#define NR_FILES	2000
#define RACE_MS		1500

static char root[256];

/* The number at the start of @path, or -1 if it cannot be read. */
static long read_count(const char *path)
{
	long n;

	return sysfs_read_long(path, &n) ? -1 : n;
}

static long nr_dentry(void)
{
	return read_count("/proc/sys/fs/dentry-state");
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static void name(char *buf, size_t size, int i)
{
	snprintf(buf, size, "%s/r/n%d", root, i % NR_NAMES);
}

static int allowed(int err)
{
	return err == ENOENT || err == EEXIST || err == ENOTEMPTY ||
	       err == ENOTDIR || err == EISDIR || err == EBUSY;
}

/* One racing process: exits 0, or 1 after printing what went wrong. */
static int racer(int cpu, long until)
{
	char a[300], b[300], c[320];
	unsigned int seed = cpu * 7919 + 1;
	unsigned long ops = 0;
	struct stat st;
	int fd, r;

	pin(cpu);
	while (now_ms() < until) {
		int op = rand_r(&seed) % 10;

		name(a, sizeof(a), rand_r(&seed));
		name(b, sizeof(b), rand_r(&seed));
		errno = 0;
		switch (op) {
		case 0: case 1: case 2: case 3:
			r = stat(a, &st);
			if (!r && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
				ksft_print_msg("%s: mode %o\n", a, st.st_mode);
				return 1;
			}
			break;
		case 4:
			fd = open(a, O_RDWR | O_CREAT, 0644);
			r = fd < 0 ? -1 : 0;
			if (fd >= 0) {
				r = fstat(fd, &st);
				if (!r && !S_ISREG(st.st_mode)) {
					ksft_print_msg("%s: open mode %o\n", a,
						       st.st_mode);
					return 1;
				}
				close(fd);
			}
			break;
		case 5:
			r = unlink(a);
			break;
		case 6:
			r = rename(a, b);
			break;
		case 7:
			r = mkdir(a, 0755);
			break;
		case 8:
			r = rmdir(a);
			break;
		default:
			/* a name inside a directory that may go away */
			snprintf(c, sizeof(c), "%s/x", a);
			r = open(c, O_RDWR | O_CREAT, 0644);
			if (r >= 0) {
				close(r);
				r = unlink(c);
			}
			break;
		}
		if (r < 0 && !allowed(errno)) {
			ksft_print_msg("cpu %d op %d on %s: %s\n", cpu, op, a,
				       strerror(errno));
			return 1;
		}
		ops++;
	}
	ksft_print_msg("%s on cpu %d: %lu operations\n", __func__, cpu, ops);
	return 0;
}

static int wait_all(pid_t *pids, int n)
{
	int i, status, bad = 0;

	for (i = 0; i < n; i++) {
		if (waitpid(pids[i], &status, 0) < 0 ||
		    !WIFEXITED(status) || WEXITSTATUS(status))
			bad++;
	}
	return bad;
}

/* stat() and readdir() agree, and link counts are right. */
static int check_names(void)
{
	char dir[300], p[300];
	int listed[NR_NAMES] = { 0 };
	struct dirent *de;
	struct stat st;
	int i, bad = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/r", root);
	d = opendir(dir);
	if (!d)
		return 1;
	while ((de = readdir(d))) {
		if (de->d_name[0] == 'n')
			listed[atoi(de->d_name + 1) % NR_NAMES] = 1;
	}
	closedir(d);
	for (i = 0; i < NR_NAMES; i++) {
		int found;

		name(p, sizeof(p), i);
		found = !stat(p, &st);
		if (found != listed[i]) {
			ksft_print_msg("%s: stat %s, readdir %s\n", p,
				       found ? "finds it" : "does not",
				       listed[i] ? "lists it" : "does not");
			bad++;
			continue;
		}
		if (found && S_ISREG(st.st_mode) && st.st_nlink != 1) {
			ksft_print_msg("%s: file with %lu links\n", p,
				       (unsigned long)st.st_nlink);
			bad++;
		}
		if (found && S_ISDIR(st.st_mode) && st.st_nlink < 2) {
			ksft_print_msg("%s: directory with %lu links\n", p,
				       (unsigned long)st.st_nlink);
			bad++;
		}
	}
	return bad;
}

static void test_race(int ncpu)
{
	pid_t pids[1024];
	char p[300];
	long until, t, off_logs;
	int i, flips = 0, bad_writes = 0;

	snprintf(p, sizeof(p), "%s/r", root);
	if (mkdir(p, 0755)) {
		ksft_test_result_fail("race: mkdir %s: %s\n", p, strerror(errno));
		return;
	}
	until = now_ms() + RACE_MS;
	for (i = 0; i < ncpu; i++) {
		pids[i] = fork();
		if (!pids[i])
			_exit(racer(i, until));
	}
	/* flip the switch: safe whatever the per-CPU counts hold */
	while ((t = now_ms()) < until) {
		usleep(100 * 1000);
		bad_writes += !!sysfs_write_str(SWITCH, flips++ & 1 ? "1" : "0");
	}
	bad_writes += !!sysfs_write_str(SWITCH, "1");
	if (wait_all(pids, ncpu)) {
		ksft_test_result_fail("race: a racer failed\n");
		return;
	}
	/* Off detaches every log: fast_dput() then ignores d_oplog. */
	bad_writes += !!sysfs_write_str(SWITCH, "0");
	off_logs = read_count(LOGS);
	bad_writes += !!sysfs_write_str(SWITCH, "1");
	if (off_logs)
		ksft_print_msg("race: %ld logs left with the switch off\n",
			       off_logs);
	if (bad_writes)
		ksft_print_msg("race: %d writes to %s failed\n", bad_writes,
			       SWITCH);
	ksft_test_result(!check_names() && !off_logs && !bad_writes,
			 "race: %d CPUs, %d switch flips, no log when off\n",
			 ncpu, flips);
}

static void test_umount(int ncpu)
{
	long dentries0, logs0, dentries1, logs1, dentries2, logs2;
	pid_t pids[1024];
	char p[300];
	int i, j;

	if (umount2(root, 0)) {
		ksft_test_result_fail("umount (race fs): %s\n", strerror(errno));
		return;
	}
	dentries0 = nr_dentry();
	logs0 = read_count(LOGS);
	if (mount("none", root, "tmpfs", 0, "size=64m")) {
		ksft_test_result_fail("mount: %s\n", strerror(errno));
		return;
	}
	for (i = 0; i < NR_FILES; i++) {
		int fd;

		snprintf(p, sizeof(p), "%s/f%d", root, i);
		fd = open(p, O_WRONLY | O_CREAT, 0644);
		if (fd < 0) {
			ksft_test_result_fail("create %s: %s\n", p,
					      strerror(errno));
			return;
		}
		close(fd);
	}
	for (i = 0; i < ncpu; i++) {
		pids[i] = fork();
		if (!pids[i]) {
			struct stat st;
			int k;

			/*
			 * Each name three times in a row: a dentry gets a
			 * per-CPU count on its second miss on this CPU
			 * within the hotness filter's window (256 misses).
			 */
			pin(i);
			for (j = 0; j < NR_FILES; j++) {
				snprintf(p, sizeof(p), "%s/f%d", root, j);
				for (k = 0; k < 3; k++)
					if (stat(p, &st))
						_exit(1);
			}
			_exit(0);
		}
	}
	if (wait_all(pids, ncpu)) {
		ksft_test_result_fail("umount: stat failed\n");
		return;
	}
	dentries1 = nr_dentry();
	logs1 = read_count(LOGS);
	ksft_print_msg("before: %ld dentries, %ld logs; hot: %ld dentries, %ld logs\n",
		       dentries0, logs0, dentries1, logs1);
	if (umount2(root, 0)) {
		ksft_test_result_fail("umount with hot dentries: %s\n",
				      strerror(errno));
		return;
	}
	dentries2 = nr_dentry();
	logs2 = read_count(LOGS);
	ksft_print_msg("after umount: %ld dentries, %ld logs\n", dentries2, logs2);
	ksft_test_result(logs1 > logs0 && dentries1 >= dentries0 + NR_FILES &&
			 dentries2 < dentries0 + NR_FILES / 4 &&
			 logs2 < logs0 + NR_FILES / 4,
			 "umount of a tmpfs with hot dentries frees them\n");
}

/* The "logs" line of OpLog's statistics of the dentry type, or -1. */
static long stats_logs(void)
{
	long n;

	return sysfs_read_stat(STATS, "logs", &n) ? -1 : n;
}

/* Pinned to SHRINK_CPU: create, open, stat and close every name. */
static int shrink_worker(void)
{
	char p[300];
	struct stat st;
	int i, fd;

	pin(SHRINK_CPU);
	if (sched_getcpu() != SHRINK_CPU)
		return 2;
	for (i = 0; i < NR_SHRINK; i++) {
		snprintf(p, sizeof(p), "%s/s%d", root, i);
		fd = open(p, O_WRONLY | O_CREAT, 0644);
		if (fd < 0)
			return 1;
		close(fd);
		if (stat(p, &st))
			return 1;
		fd = open(p, O_RDONLY);
		if (fd < 0)
			return 1;
		if (fstat(fd, &st)) {
			close(fd);
			return 1;
		}
		close(fd);
		if (stat(p, &st))
			return 1;
	}
	return 0;
}

static void test_shrink(void)
{
	long logs0, pins0, logs1, pins1, logs2 = -1, pins2 = -1, limit;
	int status, tries;
	pid_t pid;

	if (sysconf(_SC_NPROCESSORS_ONLN) <= SHRINK_CPU) {
		ksft_test_result_skip("shrink: needs CPU %d\n", SHRINK_CPU);
		return;
	}
	if (mount("none", root, "tmpfs", 0, "size=64m")) {
		ksft_test_result_fail("shrink: mount: %s\n", strerror(errno));
		return;
	}
	sysfs_write_str("/proc/sys/vm/drop_caches", "2");
	logs0 = stats_logs();
	pins0 = read_count(LOGS);
	pid = fork();
	if (!pid)
		_exit(shrink_worker());
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
		ksft_test_result_fail("shrink: the worker on CPU %d failed\n",
				      SHRINK_CPU);
		goto out;
	}
	logs1 = stats_logs();
	pins1 = read_count(LOGS);
	ksft_print_msg("shrink: before %ld logs %ld pins\n", logs0, pins0);
	ksft_print_msg("shrink: after %d names on CPU %d: %ld logs %ld pins\n",
		       NR_SHRINK, SHRINK_CPU, logs1, pins1);
	if (logs1 < logs0 + NR_SHRINK / 4 || pins1 < pins0 + NR_SHRINK / 4) {
		ksft_test_result_fail("shrink: the names got no per-CPU counts\n");
		goto out;
	}
	/* A clock algorithm: the first pass only clears the referenced bits. */
	limit = (logs1 - logs0) / 8;
	for (tries = 1; tries <= SHRINK_TRIES; tries++) {
		sysfs_write_str("/proc/sys/vm/drop_caches", "2");
		logs2 = stats_logs();
		pins2 = read_count(LOGS);
		if (logs2 <= logs0 + limit && pins2 <= pins0 + limit)
			break;
	}
	ksft_print_msg("shrink: after %d drop_caches: %ld logs %ld pins\n",
		       tries > SHRINK_TRIES ? SHRINK_TRIES : tries, logs2, pins2);
	ksft_test_result(logs2 <= logs0 + limit && pins2 <= pins0 + limit,
			 "shrink: drop_caches frees CPU %d's dentry logs and pins\n",
			 SHRINK_CPU);
out:
	umount2(root, MNT_DETACH);
}

int main(void)
{
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	long saved;

	ksft_print_header();
	ksft_set_plan(3);
	if (getuid())
		ksft_exit_skip("needs root\n");
	if (sysfs_read_long(SWITCH, &saved))
		ksft_exit_skip("no %s (CONFIG_DCACHE_OPLOG off, or no debugfs)\n",
			       SWITCH);
	if (ncpu > 1024)
		ncpu = 1024;
	snprintf(root, sizeof(root), "/tmp/dcache_oplog_test.%d", getpid());
	if (mkdir(root, 0755) || mount("none", root, "tmpfs", 0, "size=64m"))
		ksft_exit_fail_msg("mount tmpfs on %s: %s\n", root,
				   strerror(errno));
	if (sysfs_write_str(SWITCH, "1"))
		ksft_exit_fail_msg("cannot turn %s on\n", SWITCH);

	test_race(ncpu);
	test_umount(ncpu);
	test_shrink();

	umount2(root, MNT_DETACH);
	rmdir(root);
	if (sysfs_write_str(SWITCH, saved ? "1" : "0"))
		ksft_exit_fail_msg("cannot restore %s to %ld\n", SWITCH, saved);
	ksft_finished();
}
