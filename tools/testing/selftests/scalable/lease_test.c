// SPDX-License-Identifier: GPL-2.0
/*
 * Write leases against read-only opens counted per CPU (fs/inode_oplog.c).
 *
 * F_SETLEASE with F_WRLCK must fail with EAGAIN while any other file is
 * open read-only on the inode, and succeed once the others are closed:
 * fs/locks.c decides on the inode's count of read-only opens, which
 * CONFIG_INODE_OPLOG keeps in per-CPU counters once the inode is hot on a
 * CPU.  A reader that saw only the shared part of the count would grant
 * the lease while readers are open, or refuse it after they closed; every
 * case gives the same results with the switch off ("stock" variant) and on
 * ("oplog" variant, which skips on a kernel without the switch).
 *
 *  other_cpu_readers  readers open the file hot on one CPU (their opens
 *                     go to that CPU's counter), the lease holder opens it
 *                     on another; the readers close on the lease holder's
 *                     CPU
 *  every_cpu_readers  one reader per CPU, each closing on the next CPU
 *  own_reader         the lease holder's own descriptor is the only open
 *                     one, after many opens and closes on every CPU
 *
 * The "oplog" variant also checks that the opens went through the per-CPU
 * counters (the "hits" of /sys/kernel/debug/oplog/i_readcount/stats).
 * Work happens in a private directory under /tmp, removed at the end.
 * Needs root (debugfs, and leases on files of another owner).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "sysfs_util.h"

#define SWITCH		"/sys/kernel/debug/inode_oplog/enabled"
#define STATS		"/sys/kernel/debug/oplog/i_readcount/stats"
#define MAX_CPUS	64
#define NR_WARM		4	/* opens and closes that make the inode hot */
#define NR_FDS		3	/* descriptors each reader keeps open */

static int cpus[MAX_CPUS], nr_cpus;

static int pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/* Open and close @path @n times, then open it NR_FDS times into @fds. */
static int open_hot(const char *path, int n, int *fds)
{
	int i, fd;

	for (i = 0; i < n; i++) {
		fd = open(path, O_RDONLY);
		if (fd < 0)
			return -1;
		close(fd);
	}
	for (i = 0; i < NR_FDS; i++) {
		fds[i] = open(path, O_RDONLY);
		if (fds[i] < 0)
			return -1;
	}
	return 0;
}

/*
 * A reader: pinned to @cpu, opens @path hot and keeps NR_FDS descriptors,
 * says so on @ready, waits for a byte on @go, moves to @close_cpu and
 * closes them.  Exits 0, or 1 after a message.
 */
static void reader(const char *path, int cpu, int close_cpu, int ready, int go)
{
	int fds[NR_FDS], i;
	char c;

	if (pin(cpu) || open_hot(path, NR_WARM, fds)) {
		fprintf(stderr, "%s on cpu %d: %s\n", __func__, cpu,
			strerror(errno));
		_exit(1);
	}
	if (write(ready, "r", 1) != 1 || read(go, &c, 1) != 1)
		_exit(1);
	if (pin(close_cpu)) {
		fprintf(stderr, "%s: cpu %d: %s\n", __func__, close_cpu,
			strerror(errno));
		_exit(1);
	}
	for (i = 0; i < NR_FDS; i++)
		close(fds[i]);
	_exit(0);
}

/* F_SETLEASE F_WRLCK on @fd: 0 or the errno; a lease taken is dropped. */
static int try_wrlease(int fd)
{
	int err = 0;

	if (fcntl(fd, F_SETLEASE, F_WRLCK))
		err = errno;
	else if (fcntl(fd, F_SETLEASE, F_UNLCK))
		err = -errno;
	return err;
}

FIXTURE(lease) {
	char dir[64];
	char path[96];
	char saved_switch[16];
	bool switched;
	long hits0;
};

FIXTURE_VARIANT(lease) {
	const char *enabled;
};

FIXTURE_VARIANT_ADD(lease, stock) {
	.enabled = "0",
};

FIXTURE_VARIANT_ADD(lease, oplog) {
	.enabled = "1",
};

FIXTURE_SETUP(lease)
{
	bool have_switch = access(SWITCH, F_OK) == 0;
	cpu_set_t set;
	char cur[16];
	int cpu, fd;

	self->switched = false;
	self->dir[0] = 0;
	self->hits0 = -1;
	if (geteuid())
		SKIP(return, "needs root");
	if (!have_switch && !strcmp(variant->enabled, "1"))
		SKIP(return, "no inode_oplog switch");
	if (have_switch && sysfs_read_str(SWITCH, self->saved_switch,
					  sizeof(self->saved_switch)) < 0)
		SKIP(return, "cannot read %s", SWITCH);

	ASSERT_EQ(0, sched_getaffinity(0, sizeof(set), &set));
	nr_cpus = 0;
	for (cpu = 0; cpu < CPU_SETSIZE && nr_cpus < MAX_CPUS; cpu++)
		if (CPU_ISSET(cpu, &set))
			cpus[nr_cpus++] = cpu;
	ASSERT_GT(nr_cpus, 0);

	snprintf(self->dir, sizeof(self->dir), "/tmp/lease_test.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	snprintf(self->path, sizeof(self->path), "%s/f", self->dir);
	fd = open(self->path, O_CREAT | O_WRONLY, 0644);
	ASSERT_LE(0, fd);
	close(fd);

	if (have_switch) {
		if (sysfs_write_str(SWITCH, variant->enabled) ||
		    sysfs_read_str(SWITCH, cur, sizeof(cur)) < 0 ||
		    strcmp(cur, variant->enabled)) {
			sysfs_write_str(SWITCH, self->saved_switch);
			ASSERT_TRUE(false) TH_LOG("cannot set %s to %s", SWITCH,
						  variant->enabled);
		}
		self->switched = true;
	}
	if (!strcmp(variant->enabled, "1"))
		ASSERT_EQ(0, sysfs_read_stat(STATS, "hits", &self->hits0));
}

/* Puts the switch back; a failed write fails the test. */
FIXTURE_TEARDOWN(lease)
{
	bool restored = true;

	if (self->switched && sysfs_write_str(SWITCH, self->saved_switch)) {
		TH_LOG("cannot restore %s to %s", SWITCH, self->saved_switch);
		restored = false;
	}
	if (self->dir[0]) {
		unlink(self->path);
		rmdir(self->dir);
	}
	ASSERT_TRUE(restored);
}

/*
 * In the "oplog" variant, the opens went through the per-CPU counters:
 * at least one hit per descriptor kept open.
 */
static void check_hits(struct __test_metadata *_metadata, long hits0,
		       long want)
{
	long hits;

	if (hits0 < 0)
		return;
	ASSERT_EQ(0, sysfs_read_stat(STATS, "hits", &hits));
	EXPECT_GE(hits - hits0, want)
		TH_LOG("i_readcount OpLog hits grew by %ld", hits - hits0);
}

/*
 * @nr readers, reader i opening on open_cpu[i] and closing on
 * close_cpu[i]; the lease holder opens its descriptor on @holder_cpu.
 * The write lease must fail while the readers hold their descriptors and
 * succeed after they closed them.
 */
static void run_readers(struct __test_metadata *_metadata, const char *path,
			long hits0, int nr, const int *open_cpu,
			const int *close_cpu, int holder_cpu)
{
	int ready[2], go[2], i, fd, status, err;
	pid_t pid[MAX_CPUS];
	char c;

	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(go));
	for (i = 0; i < nr; i++) {
		pid[i] = fork();
		ASSERT_LE(0, pid[i]);
		if (!pid[i]) {
			close(ready[0]);
			close(go[1]);
			reader(path, open_cpu[i], close_cpu[i], ready[1], go[0]);
		}
	}
	close(ready[1]);
	close(go[0]);
	for (i = 0; i < nr; i++)
		ASSERT_EQ(1, read(ready[0], &c, 1));

	ASSERT_EQ(0, pin(holder_cpu));
	fd = open(path, O_RDONLY);
	ASSERT_LE(0, fd);
	err = try_wrlease(fd);
	EXPECT_EQ(EAGAIN, err)
		TH_LOG("write lease with %d readers open: %s", nr * NR_FDS,
		       err ? strerror(err) : "granted");

	for (i = 0; i < nr; i++)
		ASSERT_EQ(1, write(go[1], "g", 1));
	for (i = 0; i < nr; i++) {
		ASSERT_EQ(pid[i], waitpid(pid[i], &status, 0));
		EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	}
	err = try_wrlease(fd);
	EXPECT_EQ(0, err)
		TH_LOG("write lease with the readers closed: %s",
		       strerror(err < 0 ? -err : err));
	close(fd);
	close(ready[0]);
	close(go[1]);
	check_hits(_metadata, hits0, nr * NR_FDS);
}

TEST_F(lease, other_cpu_readers)
{
	int holder = cpus[nr_cpus > 1 ? 1 : 0];
	int open_cpu[2] = { cpus[0], cpus[0] };
	int close_cpu[2] = { holder, holder };

	run_readers(_metadata, self->path, self->hits0, 2, open_cpu, close_cpu,
		    holder);
}

TEST_F(lease, every_cpu_readers)
{
	int open_cpu[MAX_CPUS], close_cpu[MAX_CPUS], i;

	for (i = 0; i < nr_cpus; i++) {
		open_cpu[i] = cpus[i];
		close_cpu[i] = cpus[(i + 1) % nr_cpus];
	}
	run_readers(_metadata, self->path, self->hits0, nr_cpus, open_cpu,
		    close_cpu, cpus[0]);
}

TEST_F(lease, own_reader)
{
	int i, j, fd, fds[NR_FDS], err;

	for (i = 0; i < nr_cpus; i++) {
		ASSERT_EQ(0, pin(cpus[i]));
		ASSERT_EQ(0, open_hot(self->path, NR_WARM, fds));
		/* Closed on the next CPU. */
		ASSERT_EQ(0, pin(cpus[(i + 1) % nr_cpus]));
		for (j = 0; j < NR_FDS; j++)
			close(fds[j]);
	}
	fd = open(self->path, O_RDONLY);
	ASSERT_LE(0, fd);
	err = try_wrlease(fd);
	EXPECT_EQ(0, err)
		TH_LOG("write lease on the only open descriptor: %s",
		       strerror(err < 0 ? -err : err));
	close(fd);
	check_hits(_metadata, self->hits0, NR_FDS);
}

TEST_HARNESS_MAIN
