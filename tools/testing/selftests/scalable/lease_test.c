// SPDX-License-Identifier: GPL-2.0
/*
 * Leases and denied write access against opens counted per CPU
 * (fs/inode_oplog.c).
 *
 * F_SETLEASE with F_WRLCK must fail with EAGAIN while any other file is
 * open read-only on the inode, F_RDLCK while any is open for write, and
 * both must succeed once the others are closed: fs/locks.c decides on the
 * inode's open counts, which CONFIG_INODE_OPLOG keeps in per-CPU counters
 * once the inode is hot on a CPU.  Likewise execve() of a file open for
 * write must fail with ETXTBSY, and so must open() for write of a file
 * being executed (deny_write_access() and get_write_access()).  A reader
 * that saw only the shared part of a count would grant the lease or the
 * exec while others are open, or refuse it after they closed; every case
 * gives the same results with the switch off ("stock" variant) and on
 * ("oplog" variant, which skips on a kernel without the switch).
 *
 *  other_cpu_readers  readers open the file hot on one CPU (their opens
 *                     go to that CPU's counter), the lease holder opens it
 *                     on another; the readers close on the lease holder's
 *                     CPU
 *  every_cpu_readers  one reader per CPU, each closing on the next CPU
 *  own_reader         the lease holder's own descriptor is the only open
 *                     one, after many opens and closes on every CPU
 *  other_cpu_writers  as other_cpu_readers with O_RDWR opens against a read
 *                     lease
 *  writers_deny_exec  execve() of the file fails while writers opened on
 *                     other CPUs hold it, and succeeds once they closed on
 *                     yet another CPU
 *  exec_denies_writers  while a child executes the file, open(O_RDWR)
 *                     fails on every CPU, after opens and closes for write
 *                     on every CPU; it succeeds once the child exited
 *  exec_vs_writers    stress: writers open and close the file for write
 *                     on every other CPU while one CPU executes it again
 *                     and again; no write access may overlap a run the way
 *                     only a wrong count allows (see check_overlap())
 *
 * The "oplog" variant also checks that the opens went through the per-CPU
 * counters (the "hits" of /sys/kernel/debug/oplog/i_{read,write}count/stats).
 * The exec cases execute a copy of this program, which exits at once
 * (EXEC_NOW) or once its standard input is closed (EXEC_WAIT).
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
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "sched_util.h"
#include "sysfs_util.h"

#define SWITCH		"/sys/kernel/debug/inode_oplog/enabled"
#define STATS		"/sys/kernel/debug/oplog/i_readcount/stats"
#define W_STATS		"/sys/kernel/debug/oplog/i_writecount/stats"
#define EXEC_NOW	"--lease-test-exit"
#define EXEC_WAIT	"--lease-test-wait"
#define EXEC_STAMP	"--lease-test-stamp"
#define STRESS_MS	1500	/* exec_vs_writers: how long execs are tried */
#define STRESS_SPAN	16384	/* write accesses a writer records */
#define STAMP_SPIN_NS	200000	/* how long an EXEC_STAMP program runs */
#define MAX_CPUS	64
#define NR_WARM		4	/* opens and closes that make the inode hot */
#define NR_FDS		3	/* descriptors each reader keeps open */

static int cpus[MAX_CPUS], nr_cpus;

/*
 * The copy of this program that the exec cases run: exit at once, at EOF
 * on standard input, or after STAMP_SPIN_NS, writing on standard output
 * when it started and when it ended.
 */
__attribute__((constructor)) static void exec_mode(int argc, char **argv)
{
	long long t[2];
	char c;

	if (argc == 2 && !strcmp(argv[1], EXEC_NOW))
		_exit(0);
	if (argc == 2 && !strcmp(argv[1], EXEC_STAMP)) {
		t[0] = now_ns();
		do
			t[1] = now_ns();
		while (t[1] - t[0] < STAMP_SPIN_NS);
		_exit(write(1, t, sizeof(t)) == sizeof(t) ? 0 : 1);
	}
	if (argc == 2 && !strcmp(argv[1], EXEC_WAIT)) {
		while (read(0, &c, 1) > 0)
			;
		_exit(0);
	}
}

/*
 * Open and close @path @n times with @flags, then open it NR_FDS times
 * into @fds.
 */
static int open_hot(const char *path, int flags, int n, int *fds)
{
	int i, fd;

	for (i = 0; i < n; i++) {
		fd = open(path, flags);
		if (fd < 0)
			return -1;
		close(fd);
	}
	for (i = 0; i < NR_FDS; i++) {
		fds[i] = open(path, flags);
		if (fds[i] < 0)
			return -1;
	}
	return 0;
}

/*
 * A reader (or writer, by @flags): pinned to @cpu, opens @path hot and
 * keeps NR_FDS descriptors, says so on @ready, waits for a byte on @go,
 * moves to @close_cpu and closes them.  Exits 0, or 1 after a message.
 */
static void reader(const char *path, int flags, int cpu, int close_cpu,
		   int ready, int go)
{
	int fds[NR_FDS], i;
	char c;

	if (pin_cpu(cpu) || open_hot(path, flags, NR_WARM, fds)) {
		fprintf(stderr, "%s on cpu %d: %s\n", __func__, cpu,
			strerror(errno));
		_exit(1);
	}
	if (write(ready, "r", 1) != 1 || read(go, &c, 1) != 1)
		_exit(1);
	if (pin_cpu(close_cpu)) {
		fprintf(stderr, "%s: cpu %d: %s\n", __func__, close_cpu,
			strerror(errno));
		_exit(1);
	}
	for (i = 0; i < NR_FDS; i++)
		close(fds[i]);
	_exit(0);
}

/* F_SETLEASE @type on @fd: 0 or the errno; a lease taken is dropped. */
static int try_lease(int fd, int type)
{
	int err = 0;

	if (fcntl(fd, F_SETLEASE, type))
		err = errno;
	else if (fcntl(fd, F_SETLEASE, F_UNLCK))
		err = -errno;
	return err;
}

static int try_wrlease(int fd)
{
	return try_lease(fd, F_WRLCK);
}

/* Run @exe EXEC_NOW on @cpu: 0 if it ran and exited 0, or the errno. */
static int try_exec(const char *exe, int cpu)
{
	int pfd[2], err = 0, status;
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC))
		return errno;
	pid = fork();
	if (pid < 0)
		return errno;
	if (!pid) {
		close(pfd[0]);
		if (!pin_cpu(cpu))
			execl(exe, exe, EXEC_NOW, (char *)NULL);
		err = errno;
		if (write(pfd[1], &err, sizeof(err)) != sizeof(err))
			_exit(2);
		_exit(1);
	}
	close(pfd[1]);
	if (read(pfd[0], &err, sizeof(err)) != sizeof(err))
		err = 0;
	close(pfd[0]);
	if (waitpid(pid, &status, 0) != pid)
		return errno;
	if (!err && (!WIFEXITED(status) || WEXITSTATUS(status)))
		err = -1;
	return err;
}

/* Copy this program to @path, executable. */
static int copy_self(const char *path)
{
	int in, out, ret = -1;

	in = open("/proc/self/exe", O_RDONLY);
	if (in < 0)
		return -1;
	out = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0755);
	if (out >= 0) {
		ret = sysfs_copy_fd(in, out) ? -1 : 0;
		if (close(out))
			ret = -1;
	}
	close(in);
	return ret;
}

FIXTURE(lease) {
	char dir[64];
	char path[96];
	char exe[96];
	char saved_switch[16];
	bool switched;
	long hits0;
	long w_hits0;
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
	int fd;

	self->switched = false;
	self->dir[0] = 0;
	self->exe[0] = 0;
	self->hits0 = -1;
	self->w_hits0 = -1;
	if (geteuid())
		SKIP(return, "needs root");
	if (!have_switch && !strcmp(variant->enabled, "1"))
		SKIP(return, "no inode_oplog switch");
	if (have_switch && sysfs_read_str(SWITCH, self->saved_switch,
					  sizeof(self->saved_switch)) < 0)
		SKIP(return, "cannot read %s", SWITCH);

	nr_cpus = affinity_cpus(cpus, MAX_CPUS);
	ASSERT_GT(nr_cpus, 0);

	snprintf(self->dir, sizeof(self->dir), "/tmp/lease_test.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	snprintf(self->path, sizeof(self->path), "%s/f", self->dir);
	fd = open(self->path, O_CREAT | O_WRONLY, 0644);
	ASSERT_LE(0, fd);
	close(fd);
	snprintf(self->exe, sizeof(self->exe), "%s/exe", self->dir);
	ASSERT_EQ(0, copy_self(self->exe));

	if (have_switch) {
		if (sysfs_set_str(SWITCH, variant->enabled)) {
			sysfs_write_str(SWITCH, self->saved_switch);
			ASSERT_TRUE(false) TH_LOG("cannot set %s to %s", SWITCH,
						  variant->enabled);
		}
		self->switched = true;
	}
	if (!strcmp(variant->enabled, "1")) {
		ASSERT_EQ(0, sysfs_read_stat(STATS, "hits", &self->hits0));
		ASSERT_EQ(0, sysfs_read_stat(W_STATS, "hits", &self->w_hits0));
	}
}

/*
 * Puts the switch back; a failed write fails the test.  In the parent,
 * for the reason inotify_test.c gives: a child's teardown can be skipped
 * after an ASSERT in the 6.12 harness.
 */
FIXTURE_TEARDOWN_PARENT(lease)
{
	bool restored = true;

	if (self->switched && sysfs_write_str(SWITCH, self->saved_switch)) {
		TH_LOG("cannot restore %s to %s", SWITCH, self->saved_switch);
		restored = false;
	}
	if (self->dir[0]) {
		unlink(self->path);
		if (self->exe[0])
			unlink(self->exe);
		rmdir(self->dir);
	}
	if (!restored)
		_metadata->exit_code = KSFT_FAIL;
}

/*
 * In the "oplog" variant, the opens went through the per-CPU counters:
 * at least one hit per descriptor kept open.
 */
static void check_stat_hits(struct __test_metadata *_metadata,
			    const char *stats, long hits0, long want)
{
	long hits;

	if (hits0 < 0)
		return;
	ASSERT_EQ(0, sysfs_read_stat(stats, "hits", &hits));
	EXPECT_GE(hits - hits0, want)
		TH_LOG("%s: OpLog hits grew by %ld", stats, hits - hits0);
}

static void check_hits(struct __test_metadata *_metadata, long hits0,
		       long want)
{
	check_stat_hits(_metadata, STATS, hits0, want);
}

/*
 * Start @nr openers of @path with @flags, opener i opening on open_cpu[i]
 * and closing on close_cpu[i] once a byte is written to *@go; returns
 * when all of them hold their descriptors.
 */
static void start_openers(struct __test_metadata *_metadata, const char *path,
			  int flags, int nr, const int *open_cpu,
			  const int *close_cpu, pid_t *pid, int *go_fd)
{
	int ready[2], go[2], i;
	char c;

	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(go));
	for (i = 0; i < nr; i++) {
		pid[i] = fork();
		ASSERT_LE(0, pid[i]);
		if (!pid[i]) {
			close(ready[0]);
			close(go[1]);
			reader(path, flags, open_cpu[i], close_cpu[i],
			       ready[1], go[0]);
		}
	}
	close(ready[1]);
	close(go[0]);
	for (i = 0; i < nr; i++)
		ASSERT_EQ(1, read(ready[0], &c, 1));
	close(ready[0]);
	*go_fd = go[1];
}

/* Let the @nr openers close their descriptors, and reap them. */
static void stop_openers(struct __test_metadata *_metadata, int nr,
			 const pid_t *pid, int go)
{
	int i, status;

	for (i = 0; i < nr; i++)
		ASSERT_EQ(1, write(go, "g", 1));
	for (i = 0; i < nr; i++) {
		ASSERT_EQ(pid[i], waitpid(pid[i], &status, 0));
		EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	}
	close(go);
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
	pid_t pid[MAX_CPUS];
	int go, fd, err;

	start_openers(_metadata, path, O_RDONLY, nr, open_cpu, close_cpu, pid,
		      &go);
	ASSERT_EQ(0, pin_cpu(holder_cpu));
	fd = open(path, O_RDONLY);
	ASSERT_LE(0, fd);
	err = try_wrlease(fd);
	EXPECT_EQ(EAGAIN, err)
		TH_LOG("write lease with %d readers open: %s", nr * NR_FDS,
		       err ? strerror(err) : "granted");
	stop_openers(_metadata, nr, pid, go);
	err = try_wrlease(fd);
	EXPECT_EQ(0, err)
		TH_LOG("write lease with the readers closed: %s",
		       strerror(err < 0 ? -err : err));
	close(fd);
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
		ASSERT_EQ(0, pin_cpu(cpus[i]));
		ASSERT_EQ(0, open_hot(self->path, O_RDONLY, NR_WARM, fds));
		/* Closed on the next CPU. */
		ASSERT_EQ(0, pin_cpu(cpus[(i + 1) % nr_cpus]));
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

/*
 * Writers open the file for write hot on one CPU; the holder's read lease
 * on another must fail until they closed on the holder's CPU.
 */
TEST_F(lease, other_cpu_writers)
{
	int holder = cpus[nr_cpus > 1 ? 1 : 0];
	int open_cpu[2] = { cpus[0], cpus[0] };
	int close_cpu[2] = { holder, holder };
	pid_t pid[2];
	int go, fd, err;

	start_openers(_metadata, self->path, O_RDWR, 2, open_cpu, close_cpu,
		      pid, &go);
	ASSERT_EQ(0, pin_cpu(holder));
	fd = open(self->path, O_RDONLY);
	ASSERT_LE(0, fd);
	err = try_lease(fd, F_RDLCK);
	EXPECT_EQ(EAGAIN, err)
		TH_LOG("read lease with %d writers open: %s", 2 * NR_FDS,
		       err ? strerror(err) : "granted");
	stop_openers(_metadata, 2, pid, go);
	err = try_lease(fd, F_RDLCK);
	EXPECT_EQ(0, err)
		TH_LOG("read lease with the writers closed: %s",
		       strerror(err < 0 ? -err : err));
	close(fd);
	check_stat_hits(_metadata, W_STATS, self->w_hits0, 2 * NR_FDS);
}

/*
 * Writers of the program file on every CPU, each closing on the next: an
 * exec of it must fail with ETXTBSY while they hold it, on every CPU, and
 * run once they closed.
 */
TEST_F(lease, writers_deny_exec)
{
	int open_cpu[MAX_CPUS], close_cpu[MAX_CPUS], i, err;
	pid_t pid[MAX_CPUS];
	int go;

	for (i = 0; i < nr_cpus; i++) {
		open_cpu[i] = cpus[i];
		close_cpu[i] = cpus[(i + 1) % nr_cpus];
	}
	start_openers(_metadata, self->exe, O_RDWR, nr_cpus, open_cpu,
		      close_cpu, pid, &go);
	for (i = 0; i < nr_cpus; i++) {
		err = try_exec(self->exe, cpus[i]);
		EXPECT_EQ(ETXTBSY, err)
			TH_LOG("exec on cpu %d with writers open: %s", cpus[i],
			       err > 0 ? strerror(err) : err ? "failed" : "ran");
	}
	stop_openers(_metadata, nr_cpus, pid, go);
	for (i = 0; i < nr_cpus; i++) {
		err = try_exec(self->exe, cpus[i]);
		EXPECT_EQ(0, err)
			TH_LOG("exec on cpu %d with the writers closed: %s",
			       cpus[i], err > 0 ? strerror(err) : "failed");
	}
	check_stat_hits(_metadata, W_STATS, self->w_hits0, nr_cpus * NR_FDS);
}

/*
 * Opens and closes for write on every CPU (each CPU's last close on the
 * next CPU), then a child executes the file: open(O_RDWR) must fail with
 * ETXTBSY on every CPU while it runs, and succeed once it exited.
 */
TEST_F(lease, exec_denies_writers)
{
	int i, j, fd, fds[NR_FDS], in[2], status;
	pid_t pid;

	for (i = 0; i < nr_cpus; i++) {
		ASSERT_EQ(0, pin_cpu(cpus[i]));
		ASSERT_EQ(0, open_hot(self->exe, O_RDWR, NR_WARM, fds));
		ASSERT_EQ(0, pin_cpu(cpus[(i + 1) % nr_cpus]));
		for (j = 0; j < NR_FDS; j++)
			close(fds[j]);
	}
	check_stat_hits(_metadata, W_STATS, self->w_hits0, NR_FDS);

	ASSERT_EQ(0, pipe(in));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(in[1]);
		if (dup2(in[0], 0) == 0)
			execl(self->exe, self->exe, EXEC_WAIT, (char *)NULL);
		_exit(1);
	}
	close(in[0]);
	/* Wait until the child runs the file: its exe link names it. */
	for (i = 0; i < 1000; i++) {
		char link[64], target[128];
		ssize_t n;

		snprintf(link, sizeof(link), "/proc/%d/exe", pid);
		n = readlink(link, target, sizeof(target) - 1);
		if (n > 0) {
			target[n] = 0;
			if (!strcmp(target, self->exe))
				break;
		}
		usleep(10000);
	}
	ASSERT_LT(i, 1000) TH_LOG("the child did not exec %s", self->exe);
	for (i = 0; i < nr_cpus; i++) {
		ASSERT_EQ(0, pin_cpu(cpus[i]));
		fd = open(self->exe, O_RDWR);
		EXPECT_EQ(-1, fd)
			TH_LOG("open(O_RDWR) on cpu %d of a running program succeeded",
			       cpus[i]);
		if (fd >= 0)
			close(fd);
		else
			EXPECT_EQ(ETXTBSY, errno);
	}
	close(in[1]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	for (i = 0; i < nr_cpus; i++) {
		ASSERT_EQ(0, pin_cpu(cpus[i]));
		fd = open(self->exe, O_RDWR);
		EXPECT_LE(0, fd)
			TH_LOG("open(O_RDWR) on cpu %d after the program exited: %s",
			       cpus[i], strerror(errno));
		if (fd >= 0)
			close(fd);
	}
}

/* One write access, in CLOCK_MONOTONIC ns. */
struct span {
	long long call;		/* before open() */
	long long got;		/* open() returned a descriptor */
	long long put;		/* before close() */
};

struct stress {
	int stop;			/* __atomic_*: set by the parent */
	int nr[MAX_CPUS];		/* spans recorded by each writer */
	long busy[MAX_CPUS];		/* opens refused with ETXTBSY */
	struct span span[][STRESS_SPAN];
};

/* A writer: open for write and close until told to stop or full. */
static void stress_writer(struct stress *st, int w, const char *exe, int cpu)
{
	struct span *sp;
	int fd;

	if (pin_cpu(cpu))
		_exit(1);
	while (!__atomic_load_n(&st->stop, __ATOMIC_RELAXED) &&
	       st->nr[w] < STRESS_SPAN) {
		sp = &st->span[w][st->nr[w]];
		sp->call = now_ns();
		fd = open(exe, O_RDWR);
		if (fd < 0) {
			if (errno != ETXTBSY)
				_exit(1);
			st->busy[w]++;
			continue;
		}
		sp->got = now_ns();
		sp->put = now_ns();
		close(fd);
		st->nr[w]++;
		/* Let a deny through now and then. */
		if (!(st->nr[w] % 8))
			usleep(100);
	}
	_exit(0);
}

/*
 * Run @exe EXEC_STAMP on @cpu: 1 with its run in @t, 0 if execve() failed
 * with ETXTBSY, -1 on any other failure.
 */
static int stamp_exec(const char *exe, int cpu, long long *t)
{
	int out[2], err[2], e = 0, status;
	ssize_t n;
	pid_t pid;

	if (pipe(out) || pipe2(err, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		close(out[0]);
		close(err[0]);
		if (!pin_cpu(cpu) && dup2(out[1], 1) == 1)
			execl(exe, exe, EXEC_STAMP, (char *)NULL);
		e = errno;
		_exit(write(err[1], &e, sizeof(e)) == sizeof(e) ? 1 : 2);
	}
	close(out[1]);
	close(err[1]);
	if (read(err[0], &e, sizeof(e)) != sizeof(e))
		e = 0;
	n = read(out[0], t, 2 * sizeof(*t));
	close(out[0]);
	close(err[0]);
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	if (e)
		return e == ETXTBSY ? 0 : -1;
	return n == 2 * sizeof(*t) && WIFEXITED(status) &&
	       !WEXITSTATUS(status) ? 1 : -1;
}

/*
 * Execve() denied write access from before the program's start (t[0])
 * until after its end (t[1]).  A write access counted before the deny and
 * held past the end (got < t[0], put > t[1]) means the deny missed it; one
 * asked for after the start and granted before the end (call > t[0],
 * got < t[1]) means the get missed the deny.  Either is a wrong count.
 */
static int check_overlap(const struct span *sp, const long long *t)
{
	return (sp->got < t[0] && sp->put > t[1]) ||
	       (sp->call > t[0] && sp->got < t[1]);
}

/* check_overlap(), with a message for the first few; 1 if it overlaps. */
static int report_overlap(struct __test_metadata *_metadata, int w,
			  const struct span *sp, const long long *t, int bad)
{
	if (!check_overlap(sp, t))
		return 0;
	if (bad < 5)
		TH_LOG("writer %d: open %lld got %lld close %lld, run %lld..%lld",
		       w, sp->call, sp->got, sp->put, t[0], t[1]);
	return 1;
}

TEST_F(lease, exec_vs_writers)
{
	int nr_w = nr_cpus > 1 ? nr_cpus - 1 : 1, w, i, r, status;
	long long (*runs)[2], end;
	int nr_runs = 0, busy = 0, bad = 0;
	pid_t pid[MAX_CPUS];
	struct stress *st;
	size_t size;

	size = sizeof(*st) + nr_w * sizeof(st->span[0]);
	st = mmap(NULL, size, PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, st);
	runs = malloc(sizeof(*runs) * 100000);
	ASSERT_NE(NULL, runs);
	for (w = 0; w < nr_w; w++) {
		pid[w] = fork();
		ASSERT_LE(0, pid[w]);
		if (!pid[w])
			stress_writer(st, w, self->exe,
				      cpus[nr_cpus > 1 ? w + 1 : 0]);
	}
	end = now_ns() + STRESS_MS * 1000000LL;
	while (now_ns() < end && nr_runs < 100000) {
		r = stamp_exec(self->exe, cpus[0], runs[nr_runs]);
		ASSERT_LE(0, r) TH_LOG("exec failed: not ETXTBSY");
		if (r)
			nr_runs++;
		else
			busy++;
	}
	__atomic_store_n(&st->stop, 1, __ATOMIC_RELAXED);
	for (w = 0; w < nr_w; w++) {
		ASSERT_EQ(pid[w], waitpid(pid[w], &status, 0));
		EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
			TH_LOG("writer %d failed", w);
	}
	for (w = 0; w < nr_w; w++)
		for (i = 0; i < st->nr[w]; i++)
			for (r = 0; r < nr_runs; r++)
				bad += report_overlap(_metadata, w,
						      &st->span[w][i], runs[r],
						      bad);
	for (w = 0; w < nr_w; w++)
		TH_LOG("writer %d: %d write accesses, %ld refused", w,
		       st->nr[w], st->busy[w]);
	TH_LOG("%d runs, %d execs refused", nr_runs, busy);
	EXPECT_EQ(0, bad);
	/* The writers are gone: the file runs. */
	EXPECT_EQ(0, try_exec(self->exe, cpus[0]));
	free(runs);
	munmap(st, size);
}

TEST_HARNESS_MAIN
