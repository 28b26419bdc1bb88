// SPDX-License-Identifier: GPL-2.0
/*
 * OpLog dentry reference counts (fs/dcache_oplog.c) under races.
 *
 * Every case runs on a private tmpfs as variant "stock" and "oplog", which
 * set /sys/kernel/debug/dcache_oplog/enabled to 0 and 1 and restore it
 * afterwards; on a kernel without the switch "stock" runs (without the
 * checks of the log count) and "oplog" skips.  Root only.
 *
 *  race     one process per CPU runs stat, open, unlink, rename, mkdir and
 *           rmdir on the same few names for a while, so that the per-CPU
 *           counts of those dentries are hot while they are unlinked,
 *           renamed over and removed; with OpLog the parent flips the
 *           switch off and on meanwhile, and every write of it succeeds.
 *           Only ENOENT, EEXIST, ENOTEMPTY, EBUSY and ENOTDIR/EISDIR (a
 *           name changed kind) are allowed.  Afterwards every name that
 *           stat() finds is listed by readdir() and the other way round,
 *           files have one link and directories at least two; the switch
 *           off leaves no log (dcache_oplog/logs), and the tmpfs unmounts.
 *  umount   every CPU stats many files, then the tmpfs is unmounted; that
 *           must succeed, and the dentries must really go: the dentry
 *           count of /proc/sys/fs/dentry-state and the number of per-CPU
 *           logs fall back to near where they were before the files were
 *           created.  With OpLog the stats must have attached logs (the
 *           dentries got per-CPU counts), with the switch off none.
 *  shrink   pinned to CPU 1, open, stat and close 4096 fresh names.  With
 *           OpLog the dentries get counter logs in CPU 1's log cache, each
 *           holding a pin on its dentry, then the slab caches are dropped
 *           a few times: OpLog's shrinker must reach CPU 1's logs, so the
 *           number of logs and of pins (oplog/dentry/stats and
 *           dcache_oplog/logs) must fall back to near where it was.
 *           Tmpfs dentries keep their own reference, so nothing but that
 *           shrinker (or an unlink) detaches their logs; a shrinker that
 *           scans only the first CPU's cache fails this.  With the switch
 *           off the names must get no log.  Skips with a single CPU.
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
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "sched_util.h"
#include "sysfs_util.h"

#define SWITCH		"/sys/kernel/debug/dcache_oplog/enabled"
#define LOGS		"/sys/kernel/debug/dcache_oplog/logs"
#define STATS		"/sys/kernel/debug/oplog/dentry/stats"
#define DROP_CACHES	"/proc/sys/vm/drop_caches"
#define MAX_CPUS	1024
#define NR_SHRINK	4096
#define SHRINK_CPU	1
#define SHRINK_TRIES	16
#define NR_NAMES	6
#define NR_FILES	2000
#define RACE_MS		1500

static long nr_dentry(void)
{
	return sysfs_long("/proc/sys/fs/dentry-state");
}

/* The "logs" line of OpLog's statistics of the dentry type, or -1. */
static long stats_logs(void)
{
	return sysfs_stat(STATS, "logs");
}

static void name(char *buf, size_t size, const char *root, int i)
{
	snprintf(buf, size, "%s/r/n%d", root, i % NR_NAMES);
}

static int allowed(int err)
{
	return err == ENOENT || err == EEXIST || err == ENOTEMPTY ||
	       err == ENOTDIR || err == EISDIR || err == EBUSY;
}

/* One racing process: exits 0, or 1 after logging what went wrong. */
static int racer(struct __test_metadata *_metadata, const char *root,
		 int cpu, long until)
{
	char a[300], b[300], c[320];
	unsigned int seed = cpu * 7919 + 1;
	unsigned long ops = 0;
	struct stat st;
	int fd, r;

	pin_cpu(cpu);
	while (now_ms() < until) {
		int op = rand_r(&seed) % 10;

		name(a, sizeof(a), root, rand_r(&seed));
		name(b, sizeof(b), root, rand_r(&seed));
		errno = 0;
		switch (op) {
		case 0: case 1: case 2: case 3:
			r = stat(a, &st);
			if (!r && !S_ISREG(st.st_mode) &&
			    !S_ISDIR(st.st_mode)) {
				TH_LOG("%s: mode %o", a, st.st_mode);
				return 1;
			}
			break;
		case 4:
			fd = open(a, O_RDWR | O_CREAT, 0644);
			r = fd < 0 ? -1 : 0;
			if (fd >= 0) {
				r = fstat(fd, &st);
				if (!r && !S_ISREG(st.st_mode)) {
					TH_LOG("%s: open mode %o", a,
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
			TH_LOG("cpu %d op %d on %s: %s", cpu, op, a,
			       strerror(errno));
			return 1;
		}
		ops++;
	}
	TH_LOG("%s on cpu %d: %lu operations", __func__, cpu, ops);
	return 0;
}

/* stat() and readdir() agree on the names, and link counts are right. */
static void check_names(struct __test_metadata *_metadata, const char *root)
{
	char dir[300], p[300];
	int listed[NR_NAMES] = { 0 };
	struct dirent *de;
	struct stat st;
	int i;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/r", root);
	d = opendir(dir);
	ASSERT_NE(NULL, d) TH_LOG("opendir %s: %s", dir, strerror(errno));
	while ((de = readdir(d))) {
		if (de->d_name[0] == 'n')
			listed[atoi(de->d_name + 1) % NR_NAMES] = 1;
	}
	closedir(d);
	for (i = 0; i < NR_NAMES; i++) {
		int found;

		name(p, sizeof(p), root, i);
		found = !stat(p, &st);
		EXPECT_EQ(listed[i], found)
			TH_LOG("%s: stat %s, readdir %s", p,
			       found ? "finds it" : "does not",
			       listed[i] ? "lists it" : "does not");
		if (found != listed[i] || !found)
			continue;
		if (S_ISREG(st.st_mode)) {
			EXPECT_EQ(1UL, st.st_nlink)
				TH_LOG("%s: file with %lu links", p,
				       (unsigned long)st.st_nlink);
		}
		if (S_ISDIR(st.st_mode)) {
			EXPECT_LE(2UL, st.st_nlink)
				TH_LOG("%s: directory with %lu links", p,
				       (unsigned long)st.st_nlink);
		}
	}
}

/* ---- fixture ---- */

FIXTURE(dcache_oplog) {
	char root[64];		/* the tmpfs; empty: not created */
	bool mounted;
	bool switched;		/* SWITCH set to the variant's value */
	long saved;		/* SWITCH before, to restore */
	int ncpu;
};

FIXTURE_VARIANT(dcache_oplog) {
	const char *enabled;
};

FIXTURE_VARIANT_ADD(dcache_oplog, stock) {
	.enabled = "0",
};

FIXTURE_VARIANT_ADD(dcache_oplog, oplog) {
	.enabled = "1",
};

/* Unmounts and removes the tmpfs and restores the switch: 0 or -errno. */
static int undo(struct _test_data_dcache_oplog *self)
{
	int ret = 0;

	if (self->mounted && !umount2(self->root, MNT_DETACH))
		self->mounted = false;
	if (self->root[0] && !self->mounted && !rmdir(self->root))
		self->root[0] = '\0';
	if (self->switched) {
		ret = sysfs_write_str(SWITCH, self->saved ? "1" : "0");
		if (!ret)
			self->switched = false;
	}
	return ret;
}

FIXTURE_SETUP(dcache_oplog)
{
	bool have_switch, on = !strcmp(variant->enabled, "1");
	long cur = -1;

	self->root[0] = '\0';
	self->mounted = false;
	self->switched = false;
	self->saved = -1;
	if (getuid())
		SKIP(return, "needs root");
	have_switch = !sysfs_read_long(SWITCH, &self->saved);
	if (!have_switch && on)
		SKIP(return, "no %s (CONFIG_DCACHE_OPLOG off, or no debugfs)",
		     SWITCH);

	self->ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	ASSERT_LT(0, self->ncpu);
	if (self->ncpu > MAX_CPUS)
		self->ncpu = MAX_CPUS;

	snprintf(self->root, sizeof(self->root),
		 "/tmp/dcache_oplog_test.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->root))
		TH_LOG("mkdtemp %s: %s", self->root, strerror(errno));
	if (mount("none", self->root, "tmpfs", 0, "size=64m")) {
		int err = errno;

		undo(self);
		ASSERT_EQ(0, err) TH_LOG("mount tmpfs: %s", strerror(err));
	}
	self->mounted = true;

	if (have_switch) {
		int err = sysfs_set_str(SWITCH, variant->enabled);

		self->switched = true;
		if (err) {
			sysfs_read_long(SWITCH, &cur);
			undo(self);
			ASSERT_TRUE(false)
				TH_LOG("cannot set %s to %s: %s, it reads %ld",
				       SWITCH, variant->enabled,
				       strerror(-err), cur);
		}
	}
}

/*
 * Unmounts the tmpfs and puts the switch back; the test fails if the
 * switch cannot be written.  In the parent, on the shared fixture data:
 * after an ASSERT, longjmp() can restore the harness's child pid from a
 * register (-Wclobbered in __TEST_F_IMPL()), so that the test's child
 * takes the parent's path and skips a child's teardown; a parent's
 * teardown runs once, in whichever process takes that path first.  No
 * EXPECT here: an ASSERT of the test leaves _metadata->trigger set, and
 * the EXPECT's handler would log it as failed.
 */
FIXTURE_TEARDOWN_PARENT(dcache_oplog)
{
	if (undo(self)) {
		TH_LOG("cannot restore %s to %ld", SWITCH, self->saved);
		_metadata->exit_code = KSFT_FAIL;
	}
}

/* ---- cases ---- */

TEST_F_TIMEOUT(dcache_oplog, race, 120)
{
	bool on = !strcmp(variant->enabled, "1");
	long until, logs, off_logs = 0;
	int i, flips = 0, bad_writes = 0;
	pid_t pids[MAX_CPUS];
	const char *flip;
	char p[300];

	snprintf(p, sizeof(p), "%s/r", self->root);
	ASSERT_EQ(0, mkdir(p, 0755)) TH_LOG("mkdir %s: %s", p, strerror(errno));
	until = now_ms() + RACE_MS;
	for (i = 0; i < self->ncpu; i++) {
		pids[i] = fork();
		if (!pids[i])
			_exit(racer(_metadata, self->root, i, until));
		ASSERT_LT(0, pids[i]) TH_LOG("fork: %s", strerror(errno));
	}
	/*
	 * With OpLog, flip the switch: safe whatever the per-CPU counts
	 * hold.  Off, no dentry may get a log meanwhile.
	 */
	while (now_ms() < until) {
		usleep(100 * 1000);
		if (on) {
			flip = flips++ & 1 ? "1" : "0";
			bad_writes += !!sysfs_write_str(SWITCH, flip);
		} else if (self->switched) {
			logs = sysfs_long(LOGS);
			if (logs)
				off_logs = logs;
		}
	}
	if (on)
		bad_writes += !!sysfs_write_str(SWITCH, "1");
	ASSERT_EQ(0, reap_all(pids, self->ncpu)) TH_LOG("a racer failed");
	if (on) {
		/* Off detaches every log: fast_dput() then ignores d_oplog. */
		bad_writes += !!sysfs_write_str(SWITCH, "0");
		off_logs = sysfs_long(LOGS);
		bad_writes += !!sysfs_write_str(SWITCH, "1");
	} else if (self->switched && !off_logs) {
		off_logs = sysfs_long(LOGS);
	}
	EXPECT_EQ(0, off_logs) TH_LOG("%ld logs with the switch off", off_logs);
	EXPECT_EQ(0, bad_writes) TH_LOG("%d writes to %s failed", bad_writes,
					SWITCH);
	check_names(_metadata, self->root);
	ASSERT_EQ(0, umount2(self->root, 0))
		TH_LOG("umount after the race: %s", strerror(errno));
	self->mounted = false;
	TH_LOG("%d CPUs, %d switch flips", self->ncpu, flips);
}

TEST_F_TIMEOUT(dcache_oplog, umount, 120)
{
	long dentries0, logs0, dentries1, logs1, dentries2, logs2;
	bool on = !strcmp(variant->enabled, "1");
	pid_t pids[MAX_CPUS];
	char p[300];
	int i, j;

	/* What there is without this tmpfs. */
	ASSERT_EQ(0, umount2(self->root, 0))
		TH_LOG("umount of the empty tmpfs: %s", strerror(errno));
	self->mounted = false;
	dentries0 = nr_dentry();
	logs0 = sysfs_long(LOGS);
	ASSERT_EQ(0, mount("none", self->root, "tmpfs", 0, "size=64m"))
		TH_LOG("mount: %s", strerror(errno));
	self->mounted = true;
	for (i = 0; i < NR_FILES; i++) {
		int fd;

		snprintf(p, sizeof(p), "%s/f%d", self->root, i);
		fd = open(p, O_WRONLY | O_CREAT, 0644);
		ASSERT_LE(0, fd) TH_LOG("create %s: %s", p, strerror(errno));
		close(fd);
	}
	for (i = 0; i < self->ncpu; i++) {
		pids[i] = fork();
		if (!pids[i]) {
			struct stat st;
			int k;

			/*
			 * Each name three times in a row: a dentry gets a
			 * per-CPU count on its second miss on this CPU
			 * within the hotness filter's window (256 misses).
			 */
			pin_cpu(i);
			for (j = 0; j < NR_FILES; j++) {
				snprintf(p, sizeof(p), "%s/f%d", self->root, j);
				for (k = 0; k < 3; k++)
					if (stat(p, &st))
						_exit(1);
			}
			_exit(0);
		}
		ASSERT_LT(0, pids[i]) TH_LOG("fork: %s", strerror(errno));
	}
	ASSERT_EQ(0, reap_all(pids, self->ncpu)) TH_LOG("a stat failed");
	dentries1 = nr_dentry();
	logs1 = sysfs_long(LOGS);
	TH_LOG("before: %ld dentries, %ld logs; hot: %ld dentries, %ld logs",
	       dentries0, logs0, dentries1, logs1);
	ASSERT_EQ(0, umount2(self->root, 0))
		TH_LOG("umount with hot dentries: %s", strerror(errno));
	self->mounted = false;
	dentries2 = nr_dentry();
	logs2 = sysfs_long(LOGS);
	TH_LOG("after umount: %ld dentries, %ld logs", dentries2, logs2);

	if (on) {
		EXPECT_LT(logs0, logs1)
			TH_LOG("the stats attached no log");
	} else if (self->switched) {
		EXPECT_EQ(0, logs1)
			TH_LOG("logs with the switch off");
	}
	EXPECT_LE(dentries0 + NR_FILES, dentries1);
	EXPECT_GT(dentries0 + NR_FILES / 4, dentries2)
		TH_LOG("the unmounted dentries were not freed");
	EXPECT_GT(logs0 + NR_FILES / 4, logs2)
		TH_LOG("the logs of the unmounted dentries were not freed");
}

/* Pinned to SHRINK_CPU: create, open, stat and close every name. */
static int shrink_worker(const char *root)
{
	char p[300];
	struct stat st;
	int i, fd;

	pin_cpu(SHRINK_CPU);
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

TEST_F_TIMEOUT(dcache_oplog, shrink, 120)
{
	long logs0, pins0, logs1, pins1, logs2 = -1, pins2 = -1, limit;
	bool on = !strcmp(variant->enabled, "1");
	int status, tries;
	pid_t pid;

	if (sysconf(_SC_NPROCESSORS_ONLN) <= SHRINK_CPU)
		SKIP(return, "needs CPU %d", SHRINK_CPU);
	sysfs_write_str(DROP_CACHES, "2");
	logs0 = stats_logs();
	pins0 = sysfs_long(LOGS);
	pid = fork();
	if (!pid)
		_exit(shrink_worker(self->root));
	ASSERT_LT(0, pid) TH_LOG("fork: %s", strerror(errno));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("the worker on CPU %d failed (status %#x)", SHRINK_CPU,
		       status);
	logs1 = stats_logs();
	pins1 = sysfs_long(LOGS);
	TH_LOG("before: %ld logs %ld pins", logs0, pins0);
	TH_LOG("after %d names on CPU %d: %ld logs %ld pins",
	       NR_SHRINK, SHRINK_CPU, logs1, pins1);
	if (!on) {
		if (self->switched) {
			EXPECT_EQ(0, logs1) TH_LOG("logs with the switch off");
			EXPECT_EQ(0, pins1) TH_LOG("pins with the switch off");
		}
		return;
	}
	ASSERT_LE(logs0 + NR_SHRINK / 4, logs1)
		TH_LOG("the names got no per-CPU counts");
	ASSERT_LE(pins0 + NR_SHRINK / 4, pins1)
		TH_LOG("the names got no per-CPU counts");
	/* A clock algorithm: the first pass only clears the referenced bits. */
	limit = (logs1 - logs0) / 8;
	for (tries = 1; tries <= SHRINK_TRIES; tries++) {
		sysfs_write_str(DROP_CACHES, "2");
		logs2 = stats_logs();
		pins2 = sysfs_long(LOGS);
		if (logs2 <= logs0 + limit && pins2 <= pins0 + limit)
			break;
	}
	TH_LOG("after %d drop_caches: %ld logs %ld pins",
	       tries > SHRINK_TRIES ? SHRINK_TRIES : tries, logs2, pins2);
	EXPECT_GE(logs0 + limit, logs2)
		TH_LOG("drop_caches left CPU %d's dentry logs", SHRINK_CPU);
	EXPECT_GE(pins0 + limit, pins2)
		TH_LOG("drop_caches left CPU %d's dentry pins", SHRINK_CPU);
}

TEST_HARNESS_MAIN
