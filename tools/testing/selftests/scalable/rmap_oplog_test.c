// SPDX-License-Identifier: GPL-2.0
/*
 * The file reverse map on OpLog (mm/oplog_rmap.c), seen from user space.
 *
 * With /sys/kernel/debug/rmap_oplog/enabled on, a fork logs the insert of
 * each eligible file VMA of the child (a private, never written mapping)
 * per CPU instead of putting it into the file's i_mmap tree.  Every case
 * below checks what the tree must still give: after a truncate, no
 * process can read a removed page (SIGBUS), which holds only if the
 * truncate's rmap walk found every VMA.  Files are on a private tmpfs,
 * mounted for each case.
 *
 * Every case runs as variant "stock" (the switch set to 0) and "oplog"
 * (set to 1), and the switch is restored after it.  The invariants are the
 * same with the switch off and on; "oplog" also checks that the OpLog
 * served the operations (the counters of /sys/kernel/debug/rmap_oplog/
 * stats named below grow).  Without the switch (a stock kernel) "stock"
 * runs and "oplog" skips.  The counters are system-wide: other processes
 * can only add to them.
 *
 *  truncate  children forked from parents on every CPU fault a page in,
 *            then the file is truncated under them: each child, and the
 *            parent, must get SIGBUS.  oplog: "logged" grows by one insert
 *            per fork at least.
 *  truncate_copied  the same with a written (anon_vma) mapping, whose
 *            entries fork copies, page 1's too: no child faults.  oplog:
 *            "logged_copied" grows by one per fork but one, and
 *            "logged_behind" by one at least: the first fork, on the
 *            CPU that logged the parent's insert, logs behind it, a fork
 *            from another CPU puts the parent into the tree the locked
 *            way, and the later ones are logged.
 *  absorb    children that exit on the CPU they were forked on, and
 *            children that move to another CPU first, exit cleanly.
 *            oplog: the first cancel their logged inserts there
 *            (absorbed_local grows), the second at their unlink
 *            (absorbed_global grows).
 *  holes     children munmap random pages of a 64-page mapping whose
 *            insert was logged (each munmap splits the VMA: vma_prepare()
 *            must put the logged insert into the tree first), check that
 *            the pages left still read back their contents, then the file
 *            is truncated to zero and every page left must give SIGBUS.
 *  mremap    children move their mapping (logged insert) to a new address
 *            while siblings keep forking; after the truncate, the moved
 *            page must give SIGBUS.
 *  migrate   (two NUMA nodes, else skipped: the KCSAN flavour boots two)
 *            children forked from every CPU map a page through their
 *            logged VMAs; the parent moves it to the other node with
 *            move_pages(MPOL_MF_MOVE_ALL).  Migration unmaps the page
 *            through the reverse map and fails while any mapping is left,
 *            so the page must land on the other node, and every child
 *            must still read it.
 *  reclaim   each child maps a page of its own through its logged VMA and
 *            has reclaim take it (MADV_PAGEOUT), while a sibling forks and
 *            exits.  Reclaim unmaps a file page through the reverse map
 *            (try_to_unmap()): the page must leave the child's page table
 *            (/proc/self/pagemap), and read back its contents when
 *            touched.  oplog: "logged" grows by one insert per fork.
 *  mmap      children on every CPU, one at a time, map the file themselves,
 *            split and merge the mapping with mprotect(), map and unmap it
 *            MMAP_ROUNDS times, and map it once more, left logged; then the
 *            file is truncated to zero under them, and every page of both
 *            mappings of every child must give SIGBUS.  oplog: mmap() logs
 *            the insert of each new VMA (logged_mmap grows), the split
 *            changes the logged VMA without i_mmap_rwsem (vma_prepare():
 *            prepared_lockless grows), the merge, which frees one, takes
 *            it (prepared_local or prepared_global grows), and each
 *            munmap() cancels its insert (absorbed_local or
 *            absorbed_global grows).
 *  move      a sibling on every other CPU maps the file (its insert logged
 *            there); then a child on CPU 0 maps it, faults its page in and
 *            moves the whole VMA with mremap(); after the truncate, the
 *            moved page must give SIGBUS.  oplog: copy_vma() links the new
 *            VMA into the tree ahead of the logged source, so the page
 *            table move must take the rmap locks (moved_logged grows),
 *            which only keep walkers out (take_rmap_locks()): nothing is
 *            synchronized, so the source's insert is cancelled in CPU 0's
 *            log when the old range is unmapped, and each sibling still
 *            finds its insert in its own log at munmap() (absorbed_local
 *            grows by one per sibling, plus one).
 *  remove    children on every CPU map a two-page file and fault page 0
 *            in; a hole punch of page 1 puts their VMAs into the tree; the
 *            children exit, each on its CPU; then the parent truncates the
 *            file and its own page must give SIGBUS.  Under KASAN, a walk
 *            that met an exited child's VMA would touch freed page tables.
 *            oplog: the punch applies the logged inserts (applied grows);
 *            the removal of a VMA in the tree is logged on the exiting CPU
 *            (logged_remove grows) and the VMA handed off to the log
 *            (handed_off grows), since nothing synchronizes the file before
 *            the exit frees it; the truncate's walk applies the removes
 *            first (applied_remove grows).
 *
 * The debug boot runs these under lockdep and KASAN; a lost or doubled
 * insert also shows as a splat (a VMA freed while in the tree).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <linux/mempolicy.h>

#include "../kselftest_harness.h"
#include "sched_util.h"
#include "sysfs_util.h"

#define SWITCH	"/sys/kernel/debug/rmap_oplog/enabled"
#define STATS	"/sys/kernel/debug/rmap_oplog/stats"

#define NR_CHILDREN	8
#define HOLE_PAGES	64
/*
 * reclaim: each child's page is this many pages from the next, more than
 * fault-around maps (fault_around_bytes, 64 KiB by default), so that no
 * child maps a sibling's page and each page is mapped once.
 */
#define RECLAIM_STRIDE	64
#define MMAP_PAGES	4
#define MMAP_ROUNDS	16
/*
 * Seconds per case: each takes about a second in the release guest under
 * TCG; the harness's default of 30 leaves too little for lockdep and KASAN.
 */
#define CASE_TIMEOUT	120

static long page_size;
static int ncpu;

static sigjmp_buf bus_env;

static void on_sigbus(int sig)
{
	(void)sig;
	siglongjmp(bus_env, 1);
}

/* Read one byte at @p: 0..255, or -1 on SIGBUS. */
static int probe(const char *p)
{
	struct sigaction sa = { .sa_handler = on_sigbus };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
	if (sigsetjmp(bus_env, 1))
		return -1;
	return (unsigned char)__atomic_load_n(p, __ATOMIC_RELAXED);
}

/* A counter of STATS, or -1 without it. */
static long stat_of(const char *key)
{
	return sysfs_stat(STATS, key);
}

/* CPU @cpu modulo the CPUs online. */
static int pin(int cpu)
{
	return pin_cpu(cpu % ncpu);
}

static void unpin(void)
{
	cpu_set_t set;
	int i;

	CPU_ZERO(&set);
	for (i = 0; i < ncpu; i++)
		CPU_SET(i, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/*
 * A file of @pages pages in @dir, page i filled with byte 'a'+i; its path
 * goes to @path.  The file descriptor, or -1 with errno.
 */
static int make_file(const char *dir, const char *name, int pages,
		     char *path, size_t len)
{
	char *buf;
	int fd, i;

	snprintf(path, len, "%s/%s", dir, name);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return -1;
	buf = malloc(page_size);
	if (!buf) {
		close(fd);
		return -1;
	}
	for (i = 0; i < pages; i++) {
		memset(buf, 'a' + i % 26, page_size);
		if (write(fd, buf, page_size) != page_size) {
			free(buf);
			close(fd);
			return -1;
		}
	}
	free(buf);
	return fd;
}

/*
 * Reap the children of @pids[0..@n) (those above 0), each reaped one's
 * entry zeroed.  How many did not exit with status 0.
 */
static int wait_children(struct __test_metadata *_metadata, pid_t *pids, int n)
{
	int i, status, bad = 0;

	for (i = 0; i < n; i++) {
		if (pids[i] <= 0)
			continue;
		if (waitpid(pids[i], &status, 0) != pids[i]) {
			TH_LOG("child %d: waitpid: %s", pids[i], strerror(errno));
			bad++;
		} else if (WIFSIGNALED(status)) {
			TH_LOG("child %d: killed by signal %d", pids[i],
			       WTERMSIG(status));
			bad++;
		} else if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			TH_LOG("child %d: status %#x", pids[i], status);
			bad++;
		}
		pids[i] = 0;
	}
	return bad;
}

/*
 * A two-way gate between the parent and its children: each child says it
 * is ready and waits; the parent gathers them all, acts, and lets them go.
 */
struct gate {
	int ready[2];
	int go[2];
};

static int gate_open(struct gate *g)
{
	if (pipe(g->ready))
		return -1;
	if (pipe(g->go)) {
		close(g->ready[0]);
		close(g->ready[1]);
		return -1;
	}
	return 0;
}

/* In a child: ready, then wait for the parent.  0, or -1. */
static int gate_wait(struct gate *g)
{
	char c;

	if (write(g->ready[1], "r", 1) != 1 || read(g->go[0], &c, 1) != 1)
		return -1;
	return 0;
}

/* Wait for @n children to be ready.  0, or -1. */
static int gate_gather(struct gate *g, int n)
{
	char c;

	while (n--)
		if (read(g->ready[0], &c, 1) != 1)
			return -1;
	return 0;
}

static void gate_release(struct gate *g, int n)
{
	while (n--)
		if (write(g->go[1], "g", 1) != 1)
			break;
}

static void gate_close(struct gate *g)
{
	close(g->ready[0]);
	close(g->ready[1]);
	close(g->go[0]);
	close(g->go[1]);
}

/*
 * A sibling that forks and exits until killed, logging and absorbing
 * inserts on the CPUs this task may run on.  Its pid, or -1.
 */
static pid_t start_churn(void)
{
	pid_t churn = fork();

	if (churn == 0) {
		for (;;) {
			pid_t p = fork();

			if (p == 0)
				_exit(0);
			if (p > 0)
				waitpid(p, NULL, 0);
		}
	}
	return churn;
}

/* Kill and reap the sibling of start_churn() at *@churn, if any; zero it. */
static void stop_churn(pid_t *churn)
{
	if (*churn > 0) {
		kill(*churn, SIGKILL);
		waitpid(*churn, NULL, 0);
	}
	*churn = 0;
}

/* ---- fixture ---- */

/*
 * Shared with the case's process and its children (FIXTURE_TEARDOWN_PARENT):
 * the children a case forks are recorded in @pids and @churn, by the case
 * only, until it reaps them, so that a case that stops at a failed
 * assertion leaves none behind (the teardown kills them).
 */
FIXTURE(rmap_oplog) {
	char root[64];		/* the private tmpfs */
	char saved_switch[16];
	bool switched;
	pid_t pids[NR_CHILDREN];
	pid_t churn;
};

FIXTURE_VARIANT(rmap_oplog) {
	bool oplog;		/* the switch: on, or off */
};

FIXTURE_VARIANT_ADD(rmap_oplog, stock) {
	.oplog = false,
};

FIXTURE_VARIANT_ADD(rmap_oplog, oplog) {
	.oplog = true,
};

FIXTURE_SETUP(rmap_oplog)
{
	const char *want = variant->oplog ? "1" : "0";
	bool have_switch = access(SWITCH, F_OK) == 0;
	int err;

	if (getuid())
		SKIP(return, "needs root");
	if (!have_switch && variant->oplog)
		SKIP(return, "no %s (CONFIG_RMAP_OPLOG off, or no debugfs)", SWITCH);
	if (have_switch)
		ASSERT_LE(0, sysfs_read_str(SWITCH, self->saved_switch,
					    sizeof(self->saved_switch)))
			TH_LOG("cannot read %s", SWITCH);

	page_size = sysconf(_SC_PAGESIZE);
	ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	if (ncpu < 1)
		ncpu = 1;

	/* No teardown after a failed setup: undo what was done by hand. */
	snprintf(self->root, sizeof(self->root), "/tmp/rmap_oplog_test.%d",
		 getpid());
	ASSERT_EQ(0, mkdir(self->root, 0755))
		TH_LOG("mkdir %s: %s", self->root, strerror(errno));
	if (mount("none", self->root, "tmpfs", 0, "size=16m")) {
		err = errno;
		rmdir(self->root);
		ASSERT_EQ(0, err)
			TH_LOG("mount tmpfs on %s: %s", self->root, strerror(err));
	}
	if (have_switch) {
		if (sysfs_set_str(SWITCH, want)) {
			sysfs_write_str(SWITCH, self->saved_switch);
			umount2(self->root, MNT_DETACH);
			rmdir(self->root);
			ASSERT_TRUE(false)
				TH_LOG("cannot set %s to %s", SWITCH, want);
		}
		self->switched = true;
	}
}

/*
 * Kills the children a case left, unmounts its tmpfs and puts the switch
 * back; the case fails if the switch cannot be written.  In the parent, on
 * the shared fixture data: after an ASSERT, longjmp() can restore the
 * harness's child pid from a register (-Wclobbered in __TEST_F_IMPL()), so
 * that the case's process takes the parent's path and skips a child's
 * teardown; a parent's teardown runs once, in whichever process takes that
 * path first.  A child left by a case that stopped early is not this
 * process's child then: it is killed, and reaped by init.
 */
FIXTURE_TEARDOWN_PARENT(rmap_oplog)
{
	int i;

	stop_churn(&self->churn);
	for (i = 0; i < NR_CHILDREN; i++) {
		if (self->pids[i] > 0) {
			kill(self->pids[i], SIGKILL);
			waitpid(self->pids[i], NULL, 0);
			self->pids[i] = 0;
		}
	}
	umount2(self->root, MNT_DETACH);
	rmdir(self->root);
	if (self->switched && sysfs_write_str(SWITCH, self->saved_switch)) {
		TH_LOG("cannot restore %s to %s", SWITCH, self->saved_switch);
		_metadata->exit_code = KSFT_FAIL;
	}
}

/* ---- truncate ---- */

/* Whether the page at @addr is in this process's page table: 1, 0, or -1. */
static int page_present(const void *addr)
{
	unsigned long long entry;
	off_t off = (unsigned long)addr / page_size * sizeof(entry);
	int fd, ret = -1;

	fd = open("/proc/self/pagemap", O_RDONLY);
	if (fd < 0)
		return -1;
	if (pread(fd, &entry, sizeof(entry), off) == sizeof(entry))
		ret = entry >> 63;	/* bit 63: present */
	close(fd);
	return ret;
}

/*
 * Fork NR_CHILDREN children of @map (page 1 of @fd mapped in the parent),
 * one from each CPU, so that their inserts go to every CPU's log; shrink
 * the file to one page once each has read page 1, and require SIGBUS on
 * it in every child and in the parent.  With @copied the parent wrote
 * page 0 first (an anon_vma): each child must find page 1 already mapped,
 * copied at fork, and keep its copy of page 0.  Returns how much the
 * stats counter @counter grew over the forks.
 */
static long truncate_under_children(struct __test_metadata *_metadata,
				    pid_t *pids, int fd, char *map,
				    bool copied, const char *counter)
{
	long before0, after;
	struct gate g;
	pid_t pid;
	int i;

	ASSERT_EQ(0, gate_open(&g)) TH_LOG("pipe: %s", strerror(errno));
	before0 = stat_of(counter);
	for (i = 0; i < NR_CHILDREN; i++) {
		pin(i);
		pid = fork();
		ASSERT_LE(0, pid) TH_LOG("fork: %s", strerror(errno));
		if (pid == 0) {
			int present = page_present(map + page_size);
			int before = probe(map + page_size);

			if (gate_wait(&g))
				_exit(2);
			if (copied && present != 1) {
				TH_LOG("child %d: page 1 not copied at fork (%d)",
				       i, present);
				_exit(5);
			}
			if (before != 'b' || (copied && map[0] != 'x')) {
				TH_LOG("child %d: page 1 reads %d before", i, before);
				_exit(3);
			}
			if (probe(map + page_size) != -1) {
				TH_LOG("child %d: page 1 still mapped after the truncate",
				       i);
				_exit(1);
			}
			if (copied && map[0] != 'x') {
				TH_LOG("child %d: lost its copy of page 0", i);
				_exit(4);
			}
			_exit(0);
		}
		pids[i] = pid;
	}
	unpin();
	after = stat_of(counter);
	EXPECT_EQ(0, gate_gather(&g, NR_CHILDREN));
	EXPECT_EQ(0, ftruncate(fd, page_size))
		TH_LOG("ftruncate: %s", strerror(errno));
	gate_release(&g, NR_CHILDREN);
	EXPECT_EQ(0, wait_children(_metadata, pids, NR_CHILDREN));
	EXPECT_EQ(-1, probe(map + page_size))
		TH_LOG("page 1 still mapped in the parent");
	gate_close(&g);
	return after - before0;
}

/*
 * Every child faults page 1 in through its logged VMA, the file shrinks
 * to one page, and page 1 must be gone for all of them.
 */
TEST_F_TIMEOUT(rmap_oplog, truncate, CASE_TIMEOUT)
{
	char path[128];
	long logged;
	char *map;
	int fd;

	fd = make_file(self->root, "truncate", 2, path, sizeof(path));
	ASSERT_LE(0, fd) TH_LOG("%s: %s", path, strerror(errno));
	map = mmap(NULL, 2 * page_size, PROT_READ, MAP_PRIVATE, fd, 0);
	ASSERT_NE(MAP_FAILED, map) TH_LOG("mmap: %s", strerror(errno));
	probe(map + page_size);
	logged = truncate_under_children(_metadata, self->pids, fd, map, false,
					 "logged");
	if (variant->oplog) {
		TH_LOG("%ld inserts logged by %d forks", logged, NR_CHILDREN);
		EXPECT_LE(NR_CHILDREN, logged)
			TH_LOG("the forks logged no insert");
	}
	munmap(map, 2 * page_size);
	close(fd);
}

/*
 * As truncate, but the mapping is written first: with an anon_vma, fork
 * copies the parent's page table entries, page 1's included, so the
 * children never fault it in.  A fork logs its child's insert behind the
 * parent's while that is still in the log of the CPU it runs on; otherwise
 * it puts the parent into the tree the locked way, once, and the later
 * children's inserts are logged: the truncate must still unmap page 1
 * from every child.
 */
TEST_F_TIMEOUT(rmap_oplog, truncate_copied, CASE_TIMEOUT)
{
	long copied, behind;
	char path[128];
	bool on_cpu0;
	char *map;
	int fd;

	fd = make_file(self->root, "truncate_copied", 2, path, sizeof(path));
	ASSERT_LE(0, fd) TH_LOG("%s: %s", path, strerror(errno));
	/* Logged on the CPU of the first fork: that child goes behind it. */
	on_cpu0 = pin(0) == 0 && sched_getcpu() == 0;
	behind = stat_of("logged_behind");
	map = mmap(NULL, 2 * page_size, PROT_READ | PROT_WRITE, MAP_PRIVATE,
		   fd, 0);
	ASSERT_NE(MAP_FAILED, map) TH_LOG("mmap: %s", strerror(errno));
	map[0] = 'x';
	ASSERT_EQ('b', probe(map + page_size));
	copied = truncate_under_children(_metadata, self->pids, fd, map, true,
					 "logged_copied");
	behind = stat_of("logged_behind") - behind;
	EXPECT_EQ('x', map[0]);
	if (variant->oplog) {
		TH_LOG("%ld copied inserts logged by %d forks, %ld behind",
		       copied, NR_CHILDREN, behind);
		EXPECT_LE(NR_CHILDREN - 1, copied)
			TH_LOG("fewer copied inserts logged than forks");
		if (on_cpu0)
			EXPECT_LE(1, behind)
				TH_LOG("the first fork did not log behind the parent");
	}
	munmap(map, 2 * page_size);
	close(fd);
}

/* ---- absorb ---- */

/*
 * Fork @n children, one at a time, that exit at once, on @exit_cpu (-1:
 * where forked).  One at a time: a child's unlink on another CPU flushes
 * every CPU's log, and a sibling forked meanwhile, while the flushing
 * child held i_mmap_rwsem, would take the stock path.  How many failed.
 */
static int fork_exit(struct __test_metadata *_metadata, int n, int fork_cpu,
		     int exit_cpu)
{
	pid_t pid;
	int i, bad = 0;

	pin(fork_cpu);
	for (i = 0; i < n; i++) {
		pid = fork();
		if (pid == 0) {
			if (exit_cpu >= 0 && pin(exit_cpu))
				_exit(2);
			_exit(0);
		}
		bad += wait_children(_metadata, &pid, 1);
	}
	unpin();
	return bad;
}

/* Local absorption on the forking CPU, global elsewhere. */
TEST_F_TIMEOUT(rmap_oplog, absorb, CASE_TIMEOUT)
{
	long local0, local1, global0, global1;
	char path[128];
	char *map;
	int fd;

	fd = make_file(self->root, "absorb", 1, path, sizeof(path));
	ASSERT_LE(0, fd) TH_LOG("%s: %s", path, strerror(errno));
	map = mmap(NULL, page_size, PROT_READ, MAP_PRIVATE, fd, 0);
	ASSERT_NE(MAP_FAILED, map) TH_LOG("mmap: %s", strerror(errno));
	local0 = stat_of("absorbed_local");
	global0 = stat_of("absorbed_global");
	EXPECT_EQ(0, fork_exit(_metadata, NR_CHILDREN, 0, -1));
	local1 = stat_of("absorbed_local");
	if (ncpu > 1)
		EXPECT_EQ(0, fork_exit(_metadata, NR_CHILDREN, 0, 1));
	global1 = stat_of("absorbed_global");
	if (variant->oplog) {
		TH_LOG("%ld cancelled locally, %ld at another CPU's unlink",
		       local1 - local0, global1 - global0);
		EXPECT_LE(NR_CHILDREN, local1 - local0)
			TH_LOG("children exiting where forked absorbed too little");
		if (ncpu > 1)
			EXPECT_LE(NR_CHILDREN, global1 - global0)
				TH_LOG("children exiting elsewhere absorbed too little");
	}
	munmap(map, page_size);
	close(fd);
}

/* ---- holes ---- */

/* In a child: munmap random pages of @map, check the rest.  0, or -1. */
static int punch_holes(char *map, unsigned int seed, char *holes)
{
	int i;

	srand(seed);
	for (i = 0; i < HOLE_PAGES; i++) {
		holes[i] = rand() % 3 == 0;
		if (holes[i] && munmap(map + i * page_size, page_size))
			return -1;
	}
	for (i = 0; i < HOLE_PAGES; i++)
		if (!holes[i] && probe(map + i * page_size) != 'a' + i % 26)
			return -1;
	return 0;
}

/*
 * Children split their logged VMA by munmap holes; after the file is
 * truncated to zero, no page they kept may read.
 */
TEST_F_TIMEOUT(rmap_oplog, holes, CASE_TIMEOUT)
{
	pid_t *pids = self->pids, pid;
	struct gate g;
	char path[128];
	char *map;
	int fd, i;

	fd = make_file(self->root, "holes", HOLE_PAGES, path, sizeof(path));
	ASSERT_LE(0, fd) TH_LOG("%s: %s", path, strerror(errno));
	ASSERT_EQ(0, gate_open(&g)) TH_LOG("pipe: %s", strerror(errno));
	map = mmap(NULL, HOLE_PAGES * page_size, PROT_READ, MAP_PRIVATE, fd, 0);
	ASSERT_NE(MAP_FAILED, map) TH_LOG("mmap: %s", strerror(errno));
	for (i = 0; i < NR_CHILDREN; i++) {
		pin(i);
		pid = fork();
		ASSERT_LE(0, pid) TH_LOG("fork: %s", strerror(errno));
		if (pid == 0) {
			char holes[HOLE_PAGES];
			int j;

			if (punch_holes(map, 1000 + i, holes)) {
				TH_LOG("child %d: a page left reads wrong", i);
				_exit(3);
			}
			if (gate_wait(&g))
				_exit(2);
			for (j = 0; j < HOLE_PAGES; j++) {
				if (holes[j] || probe(map + j * page_size) == -1)
					continue;
				TH_LOG("child %d: page %d still mapped", i, j);
				_exit(1);
			}
			_exit(0);
		}
		pids[i] = pid;
	}
	unpin();
	EXPECT_EQ(0, gate_gather(&g, NR_CHILDREN));
	EXPECT_EQ(0, ftruncate(fd, 0)) TH_LOG("ftruncate: %s", strerror(errno));
	gate_release(&g, NR_CHILDREN);
	EXPECT_EQ(0, wait_children(_metadata, pids, NR_CHILDREN));
	munmap(map, HOLE_PAGES * page_size);
	close(fd);
	gate_close(&g);
}

/* ---- mremap ---- */

/*
 * Children move their logged mapping with mremap() while siblings fork
 * and exit; after the truncate, the moved page must be gone.
 */
TEST_F_TIMEOUT(rmap_oplog, mremap, CASE_TIMEOUT)
{
	pid_t *pids = self->pids, pid;
	struct gate g;
	char path[128];
	char *map;
	int fd, i;

	fd = make_file(self->root, "mremap", 2, path, sizeof(path));
	ASSERT_LE(0, fd) TH_LOG("%s: %s", path, strerror(errno));
	ASSERT_EQ(0, gate_open(&g)) TH_LOG("pipe: %s", strerror(errno));
	map = mmap(NULL, 2 * page_size, PROT_READ, MAP_PRIVATE, fd, 0);
	ASSERT_NE(MAP_FAILED, map) TH_LOG("mmap: %s", strerror(errno));
	self->churn = start_churn();
	for (i = 0; i < NR_CHILDREN; i++) {
		pin(i);
		pid = fork();
		ASSERT_LE(0, pid) TH_LOG("fork: %s", strerror(errno));
		if (pid == 0) {
			char *to, *moved;

			to = mmap(NULL, 4 * page_size, PROT_NONE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (to == MAP_FAILED)
				_exit(2);
			/* The second page only, to a new place. */
			moved = mremap(map + page_size, page_size, page_size,
				       MREMAP_MAYMOVE | MREMAP_FIXED,
				       to + page_size);
			if (moved == MAP_FAILED || probe(moved) != 'b')
				_exit(3);
			if (gate_wait(&g))
				_exit(2);
			if (probe(moved) != -1) {
				TH_LOG("child %d: moved page still mapped", i);
				_exit(1);
			}
			_exit(0);
		}
		pids[i] = pid;
	}
	unpin();
	EXPECT_EQ(0, gate_gather(&g, NR_CHILDREN));
	EXPECT_EQ(0, ftruncate(fd, page_size))
		TH_LOG("ftruncate: %s", strerror(errno));
	gate_release(&g, NR_CHILDREN);
	EXPECT_EQ(0, wait_children(_metadata, pids, NR_CHILDREN));
	stop_churn(&self->churn);
	munmap(map, 2 * page_size);
	close(fd);
	gate_close(&g);
}

/* ---- migrate ---- */

/* The NUMA node of the page at @addr (move_pages() query), or -errno. */
static int page_node(void *addr, int target)
{
	void *pages[1] = { addr };
	int nodes[1] = { target }, status[1] = { -1 };

	if (syscall(__NR_move_pages, 0, 1UL, pages, target < 0 ? NULL : nodes,
		    status, target < 0 ? 0 : MPOL_MF_MOVE_ALL))
		return -errno;
	return status[0];
}

/*
 * Migration walks the reverse map to unmap the page from every process
 * and fails while a mapping is left: a child VMA whose logged insert a
 * walk missed keeps the page on its node.
 */
TEST_F_TIMEOUT(rmap_oplog, migrate, CASE_TIMEOUT)
{
	pid_t *pids = self->pids, pid;
	int fd, i, from, to, moved;
	struct gate g;
	char path[128];
	char *map;

	if (access("/sys/devices/system/node/node1", F_OK))
		SKIP(return, "needs two NUMA nodes");
	fd = make_file(self->root, "migrate", 1, path, sizeof(path));
	ASSERT_LE(0, fd) TH_LOG("%s: %s", path, strerror(errno));
	ASSERT_EQ(0, gate_open(&g)) TH_LOG("pipe: %s", strerror(errno));
	map = mmap(NULL, page_size, PROT_READ, MAP_PRIVATE, fd, 0);
	ASSERT_NE(MAP_FAILED, map) TH_LOG("mmap: %s", strerror(errno));
	ASSERT_EQ('a', probe(map));
	for (i = 0; i < NR_CHILDREN; i++) {
		pin(i);
		pid = fork();
		ASSERT_LE(0, pid) TH_LOG("fork: %s", strerror(errno));
		if (pid == 0) {
			if (probe(map) != 'a' || gate_wait(&g))
				_exit(2);
			if (probe(map) != 'a') {
				TH_LOG("child %d: the migrated page reads wrong", i);
				_exit(1);
			}
			_exit(0);
		}
		pids[i] = pid;
	}
	unpin();
	EXPECT_EQ(0, gate_gather(&g, NR_CHILDREN));
	from = page_node(map, -1);
	to = from == 0 ? 1 : 0;
	moved = from < 0 ? from : page_node(map, to);
	TH_LOG("page on node %d, moved to node %d: status %d", from, to, moved);
	EXPECT_EQ(to, moved) TH_LOG("the page did not move (a mapping left?)");
	gate_release(&g, NR_CHILDREN);
	EXPECT_EQ(0, wait_children(_metadata, pids, NR_CHILDREN));
	munmap(map, page_size);
	close(fd);
	gate_close(&g);
}

/* ---- reclaim ---- */

/*
 * In a child of the reclaim case: write page @idx of @fd (so that it is
 * in the page cache, on this CPU's LRU batch, which MADV_PAGEOUT drains),
 * fault it in through @map, and have reclaim take it.  0, or the exit
 * code of what went wrong.
 */
static int reclaim_child(struct __test_metadata *_metadata, int fd, char *map,
			 int idx)
{
	char *page = map + (size_t)idx * RECLAIM_STRIDE * page_size;
	char *buf = malloc(page_size);
	ssize_t written;
	int tries;

	if (!buf)
		return 2;
	memset(buf, 'A' + idx, page_size);
	written = pwrite(fd, buf, page_size,
			 (off_t)idx * RECLAIM_STRIDE * page_size);
	free(buf);
	if (written != page_size)
		return 2;
	if (probe(page) != 'A' + idx || page_present(page) != 1) {
		TH_LOG("child %d: the page did not map", idx);
		return 3;
	}
	/*
	 * Reclaim skips a folio that it cannot lock at once; try again a few
	 * times before calling the page missed.
	 */
	for (tries = 0; tries < 20; tries++) {
		if (madvise(page, page_size, MADV_PAGEOUT)) {
			TH_LOG("child %d: MADV_PAGEOUT: %s", idx, strerror(errno));
			return 2;
		}
		if (page_present(page) == 0)
			break;
		usleep(1000);
	}
	if (tries == 20) {
		TH_LOG("child %d: reclaim left the page mapped", idx);
		return 1;
	}
	if (probe(page) != 'A' + idx) {
		TH_LOG("child %d: the reclaimed page reads wrong", idx);
		return 1;
	}
	return 0;
}

/*
 * Reclaim unmaps a file page with try_to_unmap(), an rmap walk of the
 * file: a child VMA whose logged insert the walk missed keeps the page
 * mapped.  The sibling that forks and exits meanwhile is held on CPU 0, so
 * its children exit where forked and cancel their inserts there.
 */
TEST_F_TIMEOUT(rmap_oplog, reclaim, CASE_TIMEOUT)
{
	size_t len = (size_t)NR_CHILDREN * RECLAIM_STRIDE * page_size;
	pid_t *pids = self->pids, pid;
	long logged0, logged1;
	struct gate g;
	char path[128];
	char *map;
	int fd, i;

	/* A sparse file: only the children's pages will be in the cache. */
	fd = make_file(self->root, "reclaim", 0, path, sizeof(path));
	ASSERT_LE(0, fd) TH_LOG("%s: %s", path, strerror(errno));
	ASSERT_EQ(0, ftruncate(fd, len)) TH_LOG("ftruncate: %s", strerror(errno));
	ASSERT_EQ(0, gate_open(&g)) TH_LOG("pipe: %s", strerror(errno));
	map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	ASSERT_NE(MAP_FAILED, map) TH_LOG("mmap: %s", strerror(errno));
	logged0 = stat_of("logged");
	for (i = 0; i < NR_CHILDREN; i++) {
		pin(i);
		pid = fork();
		ASSERT_LE(0, pid) TH_LOG("fork: %s", strerror(errno));
		if (pid == 0) {
			if (gate_wait(&g))
				_exit(2);
			_exit(reclaim_child(_metadata, fd, map, i));
		}
		pids[i] = pid;
	}
	logged1 = stat_of("logged");
	pin(0);
	self->churn = start_churn();
	unpin();
	EXPECT_EQ(0, gate_gather(&g, NR_CHILDREN));
	gate_release(&g, NR_CHILDREN);
	EXPECT_EQ(0, wait_children(_metadata, pids, NR_CHILDREN));
	stop_churn(&self->churn);
	if (variant->oplog) {
		TH_LOG("%ld inserts logged by %d forks", logged1 - logged0,
		       NR_CHILDREN);
		EXPECT_LE(NR_CHILDREN, logged1 - logged0)
			TH_LOG("the forks logged no insert");
	}
	munmap(map, len);
	close(fd);
	gate_close(&g);
}

/* ---- mmap ---- */

/* The page of @map or @map2 (MMAP_PAGES each) numbered @i of both. */
static char *mmap_page(char *map, char *map2, int i)
{
	return i < MMAP_PAGES ? map + i * page_size :
	       map2 + (i - MMAP_PAGES) * page_size;
}

/*
 * In a child, on its turn: map and unmap the file MMAP_ROUNDS times, map
 * it and split and merge the mapping, map it again, and check both.  0,
 * or the child's exit status.
 */
static int mmap_setup(struct __test_metadata *_metadata, int fd, char **map,
		      char **map2)
{
	char *p;
	int i, c;

	for (i = 0; i < MMAP_ROUNDS; i++) {
		p = mmap(NULL, page_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p == MAP_FAILED || probe(p) != 'a' || munmap(p, page_size))
			return 2;
	}
	*map = mmap(NULL, MMAP_PAGES * page_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (*map == MAP_FAILED)
		return 2;
	/* Three VMAs, then one again: a split and a merge of a logged VMA. */
	if (mprotect(*map + page_size, page_size, PROT_NONE) ||
	    mprotect(*map + page_size, page_size, PROT_READ))
		return 2;
	/* A second mapping, its insert left logged, not split. */
	*map2 = mmap(NULL, MMAP_PAGES * page_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (*map2 == MAP_FAILED)
		return 2;
	for (i = 0; i < 2 * MMAP_PAGES; i++) {
		c = probe(mmap_page(*map, *map2, i));
		if (c != 'a' + i % MMAP_PAGES) {
			TH_LOG("child: page %d reads %d before", i, c);
			return 3;
		}
	}
	return 0;
}

/*
 * In a child: mmap_setup() on its turn if it could be @pinned to its CPU,
 * then ready (whatever happened, so that the parent never waits for it in
 * vain), and after the truncate no page of either mapping may be readable.
 */
static int mmap_child(struct __test_metadata *_metadata, int fd, bool pinned,
		      struct gate *turn, struct gate *g)
{
	char *map = NULL, *map2 = NULL;
	int i, ret;
	char c;

	if (read(turn->go[0], &c, 1) != 1 || !pinned)
		ret = 2;
	else
		ret = mmap_setup(_metadata, fd, &map, &map2);
	if (gate_wait(g))
		return 2;
	if (ret)
		return ret;
	for (i = 0; i < 2 * MMAP_PAGES; i++) {
		if (probe(mmap_page(map, map2, i)) != -1) {
			TH_LOG("child: page %d of %s still mapped after the truncate",
			       i % MMAP_PAGES, i < MMAP_PAGES ?
			       "the split mapping" : "the logged mapping");
			return 1;
		}
	}
	return 0;
}

/* Inserts logged by mmap(), split, merged, absorbed and truncated. */
TEST_F_TIMEOUT(rmap_oplog, mmap, CASE_TIMEOUT)
{
	long mmap0, prep0, abs0, free0, mmap1, prep1, abs1, free1;
	pid_t *pids = self->pids, pid;
	struct gate g, turn;
	bool gathered = true;
	char path[128];
	int fd, i, n;

	fd = make_file(self->root, "mmap", MMAP_PAGES, path, sizeof(path));
	ASSERT_LE(0, fd) TH_LOG("%s: %s", path, strerror(errno));
	ASSERT_EQ(0, gate_open(&g)) TH_LOG("pipe: %s", strerror(errno));
	ASSERT_EQ(0, gate_open(&turn)) TH_LOG("pipe: %s", strerror(errno));
	mmap0 = stat_of("logged_mmap");
	prep0 = stat_of("prepared_local") + stat_of("prepared_global");
	free0 = stat_of("prepared_lockless");
	abs0 = stat_of("absorbed_local") + stat_of("absorbed_global");
	for (n = 0; n < NR_CHILDREN; n++) {
		pid = fork();
		if (pid < 0)
			break;
		if (pid == 0)
			_exit(mmap_child(_metadata, fd, !pin(n), &turn, &g));
		pids[n] = pid;
	}
	EXPECT_EQ(NR_CHILDREN, n) TH_LOG("fork: %s", strerror(errno));
	/*
	 * One child at a time, so that none holds i_mmap_rwsem (a merge)
	 * while another attaches a log: ->attach would refuse, and that
	 * mmap() would take the stock path and not be counted.
	 */
	for (i = 0; i < n && n == NR_CHILDREN && gathered; i++) {
		gate_release(&turn, 1);
		gathered = !gate_gather(&g, 1);
	}
	EXPECT_TRUE(gathered) TH_LOG("child %d did not come to the gate", i - 1);
	/* After a failure, let the others through too. */
	gate_release(&turn, n - i);
	mmap1 = stat_of("logged_mmap");
	prep1 = stat_of("prepared_local") + stat_of("prepared_global");
	free1 = stat_of("prepared_lockless");
	abs1 = stat_of("absorbed_local") + stat_of("absorbed_global");
	EXPECT_EQ(0, ftruncate(fd, 0)) TH_LOG("ftruncate: %s", strerror(errno));
	gate_release(&g, n);
	EXPECT_EQ(0, wait_children(_metadata, pids, n));
	if (variant->oplog) {
		TH_LOG("%ld mmap()s logged, %ld splits unlocked, %ld merges locked, %ld absorbed",
		       mmap1 - mmap0, free1 - free0, prep1 - prep0, abs1 - abs0);
		/* Nothing else maps the file: each child's own ops are counted. */
		EXPECT_LE(NR_CHILDREN * (MMAP_ROUNDS + 2), mmap1 - mmap0)
			TH_LOG("mmap() logged too few inserts");
		/* A split of logged VMAs takes no i_mmap_rwsem ... */
		EXPECT_LE(NR_CHILDREN, free1 - free0)
			TH_LOG("splits of logged VMAs took i_mmap_rwsem");
		/* ... a merge, which frees one, does. */
		EXPECT_LE(NR_CHILDREN, prep1 - prep0)
			TH_LOG("merges put too few logged VMAs in");
		EXPECT_LE(NR_CHILDREN * MMAP_ROUNDS, abs1 - abs0)
			TH_LOG("munmap() absorbed too few inserts");
	}
	close(fd);
	gate_close(&g);
	gate_close(&turn);
}

/* ---- move ---- */

/*
 * In a sibling pinned to @cpu: map the file (the insert is logged on this
 * CPU), say so; when let go, unmap it (a local absorption if the log is
 * still attached) and say so; exit when let go again, after the parent
 * has counted.  Always answers both gates, so that the parent never waits
 * for it in vain.
 */
static int move_sibling(int fd, int cpu, struct gate *sib, struct gate *done)
{
	char *p = MAP_FAILED;
	int ret = 2;

	if (!pin(cpu))
		p = mmap(NULL, page_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (gate_wait(sib))
		return 2;
	if (p != MAP_FAILED && !munmap(p, page_size))
		ret = 0;
	if (gate_wait(done))
		return 2;
	return ret;
}

/*
 * In the mover, on CPU 0: map the file, fault its page in, move the whole
 * VMA between two PROT_NONE pages (no merge), say so, and after the
 * truncate the moved page must be gone.
 */
static int move_child(struct __test_metadata *_metadata, int fd, struct gate *g)
{
	char *to, *p, *moved = MAP_FAILED;
	int ret = 0;

	if (pin(0))
		ret = 2;
	to = mmap(NULL, 3 * page_size, PROT_NONE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	p = mmap(NULL, page_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (ret || to == MAP_FAILED || p == MAP_FAILED || probe(p) != 'a')
		ret = 2;
	else
		moved = mremap(p, page_size, page_size,
			       MREMAP_MAYMOVE | MREMAP_FIXED, to + page_size);
	if (!ret && (moved == MAP_FAILED || probe(moved) != 'a')) {
		TH_LOG("mover: mremap: %s",
		       moved == MAP_FAILED ? strerror(errno) : "wrong contents");
		ret = 3;
	}
	if (gate_wait(g))
		return 2;
	if (ret)
		return ret;
	if (probe(moved) != -1) {
		TH_LOG("mover: moved page still mapped after the truncate");
		return 1;
	}
	return 0;
}

/*
 * mremap() of a whole logged VMA takes the rmap locks and synchronizes
 * nothing.  The counters are system-wide: in a quiet guest only this case
 * moves them; elsewhere other exits can only add to them.
 */
TEST_F_TIMEOUT(rmap_oplog, move, CASE_TIMEOUT)
{
	long moved0, moved1, abs0, abs1;
	struct gate sib, done, mov;
	pid_t *pids = self->pids, pid;
	int fd, i, nsib;
	char path[128];

	nsib = ncpu - 1 < NR_CHILDREN - 1 ? ncpu - 1 : NR_CHILDREN - 1;
	fd = make_file(self->root, "move", 1, path, sizeof(path));
	ASSERT_LE(0, fd) TH_LOG("%s: %s", path, strerror(errno));
	ASSERT_EQ(0, gate_open(&sib)) TH_LOG("pipe: %s", strerror(errno));
	ASSERT_EQ(0, gate_open(&done)) TH_LOG("pipe: %s", strerror(errno));
	ASSERT_EQ(0, gate_open(&mov)) TH_LOG("pipe: %s", strerror(errno));
	for (i = 1; i <= nsib; i++) {
		pid = fork();
		if (pid < 0)
			break;
		if (pid == 0)
			_exit(move_sibling(fd, i, &sib, &done));
		pids[i] = pid;
	}
	EXPECT_EQ(nsib + 1, i) TH_LOG("fork: %s", strerror(errno));
	nsib = i - 1;
	EXPECT_EQ(0, gate_gather(&sib, nsib));
	moved0 = stat_of("moved_logged");
	abs0 = stat_of("absorbed_local");
	pid = fork();
	if (pid == 0)
		_exit(move_child(_metadata, fd, &mov));
	EXPECT_LE(0, pid) TH_LOG("fork: %s", strerror(errno));
	pids[0] = pid;
	if (pids[0] > 0)
		EXPECT_EQ(0, gate_gather(&mov, 1));
	moved1 = stat_of("moved_logged");
	/* The siblings unmap; they exit only after the count. */
	gate_release(&sib, nsib);
	EXPECT_EQ(0, gate_gather(&done, nsib));
	abs1 = stat_of("absorbed_local");
	gate_release(&done, nsib);
	EXPECT_EQ(0, ftruncate(fd, 0)) TH_LOG("ftruncate: %s", strerror(errno));
	if (pids[0] > 0)
		gate_release(&mov, 1);
	EXPECT_EQ(0, wait_children(_metadata, pids, nsib + 1));
	if (variant->oplog) {
		TH_LOG("%ld page table moves of a logged VMA under the rmap locks",
		       moved1 - moved0);
		TH_LOG("%ld inserts absorbed locally, of %d siblings' and the mover's",
		       abs1 - abs0, nsib);
		if (!nsib)
			TH_LOG("one CPU: no other CPU's log to leave attached");
		EXPECT_LE(1, moved1 - moved0)
			TH_LOG("the logged VMA moved without the rmap locks");
		EXPECT_LE(nsib + 1, abs1 - abs0)
			TH_LOG("the move synchronized logged inserts");
	}
	close(fd);
	gate_close(&sib);
	gate_close(&done);
	gate_close(&mov);
}

/* ---- remove ---- */

/*
 * In a child pinned to @cpu: map both pages of the file (the insert is
 * logged), fault page 0 in, say so, and exit when let go: the exit logs
 * the removal of this VMA and of the copy of the parent's, both in the
 * tree by then.
 */
static int remove_child(int fd, int cpu, struct gate *g)
{
	char *p = MAP_FAILED;
	int ret = 0;

	if (pin(cpu))
		ret = 2;
	else
		p = mmap(NULL, 2 * page_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (!ret && (p == MAP_FAILED || probe(p) != 'a'))
		ret = 3;
	if (gate_wait(g))
		return 2;
	return ret;
}

/* The removal of a VMA in the tree is logged, and its free handed off. */
TEST_F_TIMEOUT(rmap_oplog, remove, CASE_TIMEOUT)
{
	long ins0, ins1, log0, log1, hand0, hand1, app0, app1;
	pid_t *pids = self->pids, pid;
	char path[128];
	struct gate g;
	char *map;
	int fd, i, n;

	n = ncpu < NR_CHILDREN ? ncpu : NR_CHILDREN;
	fd = make_file(self->root, "remove", 2, path, sizeof(path));
	ASSERT_LE(0, fd) TH_LOG("%s: %s", path, strerror(errno));
	map = mmap(NULL, page_size, PROT_READ, MAP_PRIVATE, fd, 0);
	ASSERT_NE(MAP_FAILED, map) TH_LOG("mmap: %s", strerror(errno));
	ASSERT_EQ(0, gate_open(&g)) TH_LOG("pipe: %s", strerror(errno));
	EXPECT_EQ('a', probe(map));
	for (i = 0; i < n; i++) {
		pid = fork();
		if (pid < 0)
			break;
		if (pid == 0)
			_exit(remove_child(fd, i, &g));
		pids[i] = pid;
	}
	EXPECT_EQ(n, i) TH_LOG("fork: %s", strerror(errno));
	n = i;
	EXPECT_EQ(0, gate_gather(&g, n));
	/* The hole punch's walk puts every logged insert into the tree. */
	ins0 = stat_of("applied");
	EXPECT_EQ(0, fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			       page_size, page_size))
		TH_LOG("punch: %s", strerror(errno));
	ins1 = stat_of("applied");
	log0 = stat_of("logged_remove");
	hand0 = stat_of("handed_off");
	gate_release(&g, n);
	EXPECT_EQ(0, wait_children(_metadata, pids, n));
	log1 = stat_of("logged_remove");
	hand1 = stat_of("handed_off");
	app0 = stat_of("applied_remove");
	EXPECT_EQ(0, ftruncate(fd, 0)) TH_LOG("ftruncate: %s", strerror(errno));
	app1 = stat_of("applied_remove");
	EXPECT_EQ(-1, probe(map))
		TH_LOG("the parent's page still mapped after the truncate");
	if (variant->oplog) {
		TH_LOG("%ld inserts put in by the punch; %d exits", ins1 - ins0, n);
		TH_LOG("%ld removes logged, %ld VMAs handed off",
		       log1 - log0, hand1 - hand0);
		TH_LOG("%ld removes applied by the truncate", app1 - app0);
		/*
		 * Each child has two VMAs of the file: its own and the copy of
		 * the parent's.  Its other exits' removes (libc's data) count
		 * too, but only the file's wait for the truncate.
		 */
		EXPECT_LE(2 * n, ins1 - ins0)
			TH_LOG("the punch put too few inserts in");
		EXPECT_LE(2 * n, log1 - log0)
			TH_LOG("exits removed VMAs from the tree under the lock (logged_remove)");
		EXPECT_LE(2 * n, hand1 - hand0)
			TH_LOG("exits removed VMAs from the tree under the lock (handed_off)");
		EXPECT_LE(2 * n, app1 - app0)
			TH_LOG("the truncate applied too few removes");
	}
	munmap(map, page_size);
	close(fd);
	gate_close(&g);
}

TEST_HARNESS_MAIN
