// SPDX-License-Identifier: GPL-2.0
/*
 * The file reverse map on OpLog (mm/oplog_rmap.c), seen from user space.
 *
 * With /sys/kernel/debug/rmap_oplog/enabled on, a fork logs the insert of
 * each eligible file VMA of the child (a private, never written mapping)
 * per CPU instead of putting it into the file's i_mmap tree.  Every test
 * below checks what the tree must still give: after a truncate, no
 * process can read a removed page (SIGBUS), which holds only if the
 * truncate's rmap walk found every VMA.  Files are on a private tmpfs.
 *
 *  1. truncate: children forked from parents on every CPU fault a page in,
 *     then the file is truncated under them: each child, and the parent,
 *     must get SIGBUS.  The logged counter must have grown.
 *  2. absorb: children that exit on the CPU they were forked on cancel
 *     their logged inserts there (absorbed_local grows); children that
 *     move to another CPU first cancel them at their unlink
 *     (absorbed_global grows).
 *  3. holes: children munmap random pages of a 64-page mapping whose
 *     insert was logged (each munmap splits the VMA: vma_prepare() must
 *     put the logged insert into the tree first), check that the pages
 *     left still read back their contents, then the file is truncated
 *     to zero and every page left must give SIGBUS.
 *  4. mremap: children move their mapping (logged insert) to a new
 *     address while siblings keep forking; after the truncate, the
 *     moved page must give SIGBUS.
 *  5. migrate (NUMA guests: the KCSAN flavour boots two nodes): children
 *     forked from every CPU map a page through their logged VMAs; the
 *     parent moves it to the other node with move_pages(MPOL_MF_MOVE_ALL).
 *     Migration unmaps the page through the reverse map and fails while
 *     any mapping is left, so the page must land on the other node, and
 *     every child must still read it.
 *  6. reclaim: each child maps a page of its own through its logged VMA
 *     and has reclaim take it (MADV_PAGEOUT), while a sibling forks and
 *     exits.  Reclaim unmaps a file page through the reverse map
 *     (try_to_unmap()): the page must leave the child's page table
 *     (/proc/self/pagemap), and read back its contents when touched.
 *  7. mmap: children on every CPU, one at a time, map the file themselves
 *     (mmap() logs the insert of the new VMA: logged_mmap grows), split
 *     and merge it back with mprotect() (vma_prepare() must put the logged
 *     VMA into the tree first: prepared_local/prepared_global grow), map
 *     and unmap it MMAP_ROUNDS times (each insert cancelled at its
 *     munmap), and map it once more, left logged; then the file is
 *     truncated to zero under them, and every page of both mappings of
 *     every child must give SIGBUS.
 *  8. move: a sibling on every other CPU maps the file (its insert logged
 *     there); then a child on CPU 0 maps it, faults its page in and moves
 *     the whole VMA with mremap().  copy_vma() links the new VMA into the
 *     tree ahead of the logged source, so the page table move must take
 *     the rmap locks (moved_logged grows), which only keep walkers out
 *     (take_rmap_locks()): nothing is synchronized, so the source's
 *     insert is cancelled in CPU 0's log when the old range is unmapped,
 *     and each sibling still finds its insert in its own log at munmap()
 *     (absorbed_local grows by one per sibling, plus one).  Then the file
 *     is truncated and the moved page must give SIGBUS.
 *  9. remove: children on every CPU map a two-page file (inserts logged)
 *     and fault page 0 in; a hole punch of page 1 puts their VMAs into
 *     the tree (applied grows); then the children exit, each on its CPU:
 *     the removal of a VMA in the tree is logged there (logged_remove
 *     grows) and the VMA handed off to the log (handed_off grows), since
 *     nothing synchronizes the file before the exit frees it.  The parent
 *     then truncates the file: the truncate's walk applies the removes
 *     first (applied_remove grows), and the parent's own page must give
 *     SIGBUS.  Under KASAN, a walk that met an exited child's VMA would
 *     touch freed page tables.
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

#include "../kselftest.h"
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

static char root[64];
static long page_size;
static int ncpu;

static sigjmp_buf bus_env;

static void on_sigbus(int sig)
{
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

static long stat_of(const char *key)
{
	long v = -1;

	if (sysfs_read_stat(STATS, key, &v))
		return -1;
	return v;
}

static int pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu % ncpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
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

/* A file of @pages pages on the test tmpfs, page i filled with byte 'a'+i. */
static int make_file(const char *name, int pages, char *path, size_t len)
{
	char *buf;
	int fd, i;

	snprintf(path, len, "%s/%s", root, name);
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

static int wait_children(pid_t *pids, int n)
{
	int i, status, bad = 0;

	for (i = 0; i < n; i++) {
		if (pids[i] <= 0)
			continue;
		if (waitpid(pids[i], &status, 0) != pids[i] ||
		    !WIFEXITED(status) || WEXITSTATUS(status)) {
			ksft_print_msg("child %d: status %#x\n", pids[i], status);
			bad++;
		}
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

static void stop_churn(pid_t churn)
{
	if (churn > 0) {
		kill(churn, SIGKILL);
		waitpid(churn, NULL, 0);
	}
}

/*
 * 1. Every child faults page 1 in through its logged VMA, the file
 * shrinks to one page, and page 1 must be gone for all of them.
 */
static void test_truncate(void)
{
	struct gate g;
	int fd, i, bad;
	pid_t pids[NR_CHILDREN] = { };
	long logged0, logged1;
	char path[128];
	char *map;

	fd = make_file("truncate", 2, path, sizeof(path));
	if (fd < 0 || gate_open(&g)) {
		ksft_test_result_fail("truncate: setup: %s\n", strerror(errno));
		return;
	}
	map = mmap(NULL, 2 * page_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED) {
		ksft_test_result_fail("truncate: mmap: %s\n", strerror(errno));
		return;
	}
	probe(map + page_size);
	logged0 = stat_of("logged");
	for (i = 0; i < NR_CHILDREN; i++) {
		/* Fork from every CPU: the inserts go to every CPU's log. */
		pin(i);
		pids[i] = fork();
		if (pids[i] == 0) {
			int before = probe(map + page_size);

			if (gate_wait(&g))
				_exit(2);
			if (before != 'b') {
				printf("# child: page 1 reads %d before\n", before);
				_exit(3);
			}
			if (probe(map + page_size) != -1) {
				printf("# child: page 1 still mapped after the truncate\n");
				_exit(1);
			}
			_exit(0);
		}
	}
	unpin();
	logged1 = stat_of("logged");
	bad = gate_gather(&g, NR_CHILDREN) ? NR_CHILDREN : 0;
	if (ftruncate(fd, page_size))
		bad++;
	gate_release(&g, NR_CHILDREN);
	bad += wait_children(pids, NR_CHILDREN);
	if (probe(map + page_size) != -1) {
		ksft_print_msg("truncate: page 1 still mapped in the parent\n");
		bad++;
	}
	ksft_print_msg("truncate: %ld inserts logged by %d forks\n",
		       logged1 - logged0, NR_CHILDREN);
	if (logged1 - logged0 < NR_CHILDREN) {
		ksft_print_msg("truncate: the forks logged no insert\n");
		bad++;
	}
	munmap(map, 2 * page_size);
	close(fd);
	gate_close(&g);
	ksft_test_result(!bad, "truncate\n");
}

/*
 * Fork @n children, one at a time, that exit at once, on @exit_cpu (-1:
 * where forked).  One at a time: a child's unlink on another CPU flushes
 * every CPU's log, and a sibling forked meanwhile, while the flushing
 * child held i_mmap_rwsem, would take the stock path.
 */
static int fork_exit(int n, int fork_cpu, int exit_cpu)
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
		bad += wait_children(&pid, 1);
	}
	unpin();
	return bad;
}

/* 2. Local absorption on the forking CPU, global elsewhere. */
static void test_absorb(void)
{
	long local0, local1, global0, global1;
	char path[128];
	int fd, bad = 0;
	char *map;

	fd = make_file("absorb", 1, path, sizeof(path));
	map = fd < 0 ? MAP_FAILED :
	      mmap(NULL, page_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED) {
		ksft_test_result_fail("absorb: setup: %s\n", strerror(errno));
		return;
	}
	local0 = stat_of("absorbed_local");
	global0 = stat_of("absorbed_global");
	bad += fork_exit(NR_CHILDREN, 0, -1);
	local1 = stat_of("absorbed_local");
	if (ncpu > 1)
		bad += fork_exit(NR_CHILDREN, 0, 1);
	global1 = stat_of("absorbed_global");
	ksft_print_msg("absorb: %ld cancelled locally, %ld at another CPU's unlink\n",
		       local1 - local0, global1 - global0);
	if (local1 - local0 < NR_CHILDREN) {
		ksft_print_msg("absorb: children exiting where forked absorbed too little\n");
		bad++;
	}
	if (ncpu > 1 && global1 - global0 < NR_CHILDREN) {
		ksft_print_msg("absorb: children exiting elsewhere absorbed too little\n");
		bad++;
	}
	munmap(map, page_size);
	close(fd);
	ksft_test_result(!bad, "absorb\n");
}

/* In a child: munmap random pages of @map, check the rest, report. */
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
 * 3. Children split their logged VMA by munmap holes; after the file is
 * truncated to zero, no page they kept may read.
 */
static void test_holes(void)
{
	struct gate g;
	int fd, i, bad;
	pid_t pids[NR_CHILDREN] = { };
	char path[128];
	char *map;

	fd = make_file("holes", HOLE_PAGES, path, sizeof(path));
	if (fd < 0 || gate_open(&g)) {
		ksft_test_result_fail("holes: setup: %s\n", strerror(errno));
		return;
	}
	map = mmap(NULL, HOLE_PAGES * page_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED) {
		ksft_test_result_fail("holes: mmap: %s\n", strerror(errno));
		return;
	}
	for (i = 0; i < NR_CHILDREN; i++) {
		pin(i);
		pids[i] = fork();
		if (pids[i] == 0) {
			char holes[HOLE_PAGES];
			int j;

			if (punch_holes(map, 1000 + i, holes)) {
				printf("# child %d: a page left reads wrong\n", i);
				_exit(3);
			}
			if (gate_wait(&g))
				_exit(2);
			for (j = 0; j < HOLE_PAGES; j++) {
				if (holes[j] || probe(map + j * page_size) == -1)
					continue;
				printf("# child %d: page %d still mapped\n", i, j);
				_exit(1);
			}
			_exit(0);
		}
	}
	unpin();
	bad = gate_gather(&g, NR_CHILDREN) ? NR_CHILDREN : 0;
	if (ftruncate(fd, 0))
		bad++;
	gate_release(&g, NR_CHILDREN);
	bad += wait_children(pids, NR_CHILDREN);
	munmap(map, HOLE_PAGES * page_size);
	close(fd);
	gate_close(&g);
	ksft_test_result(!bad, "holes\n");
}

/*
 * 4. Children move their logged mapping with mremap() while siblings
 * fork and exit; after the truncate, the moved page must be gone.
 */
static void test_mremap(void)
{
	struct gate g;
	int fd, i, bad;
	pid_t pids[NR_CHILDREN] = { }, churn;
	char path[128];
	char *map;

	fd = make_file("mremap", 2, path, sizeof(path));
	if (fd < 0 || gate_open(&g)) {
		ksft_test_result_fail("mremap: setup: %s\n", strerror(errno));
		return;
	}
	map = mmap(NULL, 2 * page_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED) {
		ksft_test_result_fail("mremap: mmap: %s\n", strerror(errno));
		return;
	}
	churn = start_churn();
	for (i = 0; i < NR_CHILDREN; i++) {
		pin(i);
		pids[i] = fork();
		if (pids[i] == 0) {
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
				printf("# child %d: moved page still mapped\n", i);
				_exit(1);
			}
			_exit(0);
		}
	}
	unpin();
	bad = gate_gather(&g, NR_CHILDREN) ? NR_CHILDREN : 0;
	if (ftruncate(fd, page_size))
		bad++;
	gate_release(&g, NR_CHILDREN);
	bad += wait_children(pids, NR_CHILDREN);
	stop_churn(churn);
	munmap(map, 2 * page_size);
	close(fd);
	gate_close(&g);
	ksft_test_result(!bad, "mremap\n");
}

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
 * 5. Migration walks the reverse map to unmap the page from every process
 * and fails while a mapping is left: a child VMA whose logged insert a
 * walk missed keeps the page on its node.
 */
static void test_migrate(void)
{
	struct gate g;
	int fd, i, bad, from, to;
	pid_t pids[NR_CHILDREN] = { };
	char path[128];
	char *map;

	if (access("/sys/devices/system/node/node1", F_OK)) {
		ksft_test_result_skip("migrate: needs two NUMA nodes\n");
		return;
	}
	fd = make_file("migrate", 1, path, sizeof(path));
	if (fd < 0 || gate_open(&g)) {
		ksft_test_result_fail("migrate: setup: %s\n", strerror(errno));
		return;
	}
	map = mmap(NULL, page_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED || probe(map) != 'a') {
		ksft_test_result_fail("migrate: mmap: %s\n", strerror(errno));
		return;
	}
	for (i = 0; i < NR_CHILDREN; i++) {
		pin(i);
		pids[i] = fork();
		if (pids[i] == 0) {
			if (probe(map) != 'a' || gate_wait(&g))
				_exit(2);
			if (probe(map) != 'a') {
				printf("# child %d: the migrated page reads wrong\n", i);
				_exit(1);
			}
			_exit(0);
		}
	}
	unpin();
	bad = gate_gather(&g, NR_CHILDREN) ? NR_CHILDREN : 0;
	from = page_node(map, -1);
	to = from == 0 ? 1 : 0;
	i = from < 0 ? from : page_node(map, to);
	ksft_print_msg("migrate: page on node %d, moved to node %d: status %d\n",
		       from, to, i);
	if (i != to) {
		ksft_print_msg("migrate: the page did not move (a mapping left?)\n");
		bad++;
	}
	gate_release(&g, NR_CHILDREN);
	bad += wait_children(pids, NR_CHILDREN);
	munmap(map, page_size);
	close(fd);
	gate_close(&g);
	ksft_test_result(!bad, "migrate\n");
}

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
 * In a child of test_reclaim(): write page @idx of @fd (so that it is in
 * the page cache, on this CPU's LRU batch, which MADV_PAGEOUT drains),
 * fault it in through @map, and have reclaim take it.  0, or the exit
 * code of what went wrong.
 */
static int reclaim_child(int fd, char *map, int idx)
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
		printf("# child %d: the page did not map\n", idx);
		return 3;
	}
	/*
	 * Reclaim skips a folio that it cannot lock at once; try again a few
	 * times before calling the page missed.
	 */
	for (tries = 0; tries < 20; tries++) {
		if (madvise(page, page_size, MADV_PAGEOUT)) {
			printf("# child %d: MADV_PAGEOUT: %s\n", idx,
			       strerror(errno));
			return 2;
		}
		if (page_present(page) == 0)
			break;
		usleep(1000);
	}
	if (tries == 20) {
		printf("# child %d: reclaim left the page mapped\n", idx);
		return 1;
	}
	if (probe(page) != 'A' + idx) {
		printf("# child %d: the reclaimed page reads wrong\n", idx);
		return 1;
	}
	return 0;
}

/*
 * 6. Reclaim unmaps a file page with try_to_unmap(), an rmap walk of the
 * file: a child VMA whose logged insert the walk missed keeps the page
 * mapped.  The sibling that forks and exits meanwhile is held on CPU 0, so
 * its children exit where forked and cancel their inserts there.
 */
static void test_reclaim(void)
{
	size_t len = (size_t)NR_CHILDREN * RECLAIM_STRIDE * page_size;
	pid_t pids[NR_CHILDREN] = { }, churn;
	long logged0, logged1;
	struct gate g;
	char path[128];
	int fd, i, bad;
	char *map;

	/* A sparse file: only the children's pages will be in the cache. */
	fd = make_file("reclaim", 0, path, sizeof(path));
	if (fd < 0 || ftruncate(fd, len) || gate_open(&g)) {
		ksft_test_result_fail("reclaim: setup: %s\n", strerror(errno));
		return;
	}
	map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED) {
		ksft_test_result_fail("reclaim: mmap: %s\n", strerror(errno));
		return;
	}
	logged0 = stat_of("logged");
	for (i = 0; i < NR_CHILDREN; i++) {
		pin(i);
		pids[i] = fork();
		if (pids[i] == 0) {
			if (gate_wait(&g))
				_exit(2);
			_exit(reclaim_child(fd, map, i));
		}
	}
	logged1 = stat_of("logged");
	pin(0);
	churn = start_churn();
	unpin();
	bad = gate_gather(&g, NR_CHILDREN) ? NR_CHILDREN : 0;
	gate_release(&g, NR_CHILDREN);
	bad += wait_children(pids, NR_CHILDREN);
	stop_churn(churn);
	ksft_print_msg("reclaim: %ld inserts logged by %d forks\n",
		       logged1 - logged0, NR_CHILDREN);
	if (logged1 - logged0 < NR_CHILDREN) {
		ksft_print_msg("reclaim: the forks logged no insert\n");
		bad++;
	}
	munmap(map, len);
	close(fd);
	gate_close(&g);
	ksft_test_result(!bad, "reclaim\n");
}

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
static int mmap_setup(int fd, char **map, char **map2)
{
	char *p;
	int i;

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
		p = mmap_page(*map, *map2, i);
		if (probe(p) != 'a' + i % MMAP_PAGES) {
			printf("# child: page %d reads %d before\n", i, probe(p));
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
static int mmap_child(int fd, bool pinned, struct gate *turn, struct gate *g)
{
	char *map = NULL, *map2 = NULL;
	int i, ret;
	char c;

	if (read(turn->go[0], &c, 1) != 1 || !pinned)
		ret = 2;
	else
		ret = mmap_setup(fd, &map, &map2);
	if (gate_wait(g))
		return 2;
	if (ret)
		return ret;
	for (i = 0; i < 2 * MMAP_PAGES; i++) {
		if (probe(mmap_page(map, map2, i)) != -1) {
			printf("# child: page %d of %s still mapped after the truncate\n",
			       i % MMAP_PAGES, i < MMAP_PAGES ? "the split mapping" :
			       "the logged mapping");
			return 1;
		}
	}
	return 0;
}

/* 7. Inserts logged by mmap(), split, merged, absorbed and truncated. */
static void test_mmap(void)
{
	long mmap0, prep0, abs0, mmap1, prep1, abs1;
	pid_t pids[NR_CHILDREN] = { };
	struct gate g, turn;
	int fd, i, n, bad = 0;
	char path[128];

	fd = make_file("mmap", MMAP_PAGES, path, sizeof(path));
	if (fd < 0 || gate_open(&g) || gate_open(&turn)) {
		ksft_test_result_fail("mmap: setup: %s\n", strerror(errno));
		return;
	}
	mmap0 = stat_of("logged_mmap");
	prep0 = stat_of("prepared_local") + stat_of("prepared_global");
	abs0 = stat_of("absorbed_local") + stat_of("absorbed_global");
	for (n = 0; n < NR_CHILDREN; n++) {
		pids[n] = fork();
		if (pids[n] < 0) {
			ksft_print_msg("mmap: fork: %s\n", strerror(errno));
			bad++;
			break;
		}
		if (pids[n] == 0)
			_exit(mmap_child(fd, !pin(n), &turn, &g));
	}
	/*
	 * One child at a time, so that none holds i_mmap_rwsem (a split)
	 * while another attaches a log: ->attach would refuse, and that
	 * mmap() would take the stock path and not be counted.
	 */
	for (i = 0; i < n && !bad; i++) {
		gate_release(&turn, 1);
		if (gate_gather(&g, 1))
			bad = NR_CHILDREN;
	}
	/* After a failure, let the others through too. */
	gate_release(&turn, n - i);
	mmap1 = stat_of("logged_mmap");
	prep1 = stat_of("prepared_local") + stat_of("prepared_global");
	abs1 = stat_of("absorbed_local") + stat_of("absorbed_global");
	if (ftruncate(fd, 0))
		bad++;
	gate_release(&g, n);
	bad += wait_children(pids, n);
	ksft_print_msg("mmap: %ld inserts logged by mmap(), %ld put in by splits, %ld absorbed\n",
		       mmap1 - mmap0, prep1 - prep0, abs1 - abs0);
	/* Nothing else maps the file: each child's own ops are counted. */
	if (mmap1 - mmap0 < NR_CHILDREN * (MMAP_ROUNDS + 2)) {
		ksft_print_msg("mmap: mmap() logged too few inserts\n");
		bad++;
	}
	if (prep1 - prep0 < NR_CHILDREN) {
		ksft_print_msg("mmap: splits put too few logged VMAs in\n");
		bad++;
	}
	if (abs1 - abs0 < NR_CHILDREN * MMAP_ROUNDS) {
		ksft_print_msg("mmap: munmap() absorbed too few inserts\n");
		bad++;
	}
	close(fd);
	gate_close(&g);
	gate_close(&turn);
	ksft_test_result(!bad, "mmap\n");
}

/*
 * 8., in a sibling pinned to @cpu: map the file (the insert is logged on
 * this CPU), say so; when let go, unmap it (a local absorption if the
 * log is still attached) and say so; exit when let go again, after the
 * parent has counted.  Always answers both gates, so that the parent
 * never waits for it in vain.
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
 * 8., in the mover, on CPU 0: map the file, fault its page in, move the
 * whole VMA between two PROT_NONE pages (no merge), say so, and after the
 * truncate the moved page must be gone.
 */
static int move_child(int fd, struct gate *g)
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
		printf("# mover: mremap: %s\n",
		       moved == MAP_FAILED ? strerror(errno) : "wrong contents");
		ret = 3;
	}
	if (gate_wait(g))
		return 2;
	if (ret)
		return ret;
	if (probe(moved) != -1) {
		printf("# mover: moved page still mapped after the truncate\n");
		return 1;
	}
	return 0;
}

/*
 * 8. mremap() of a whole logged VMA takes the rmap locks and synchronizes
 * nothing.  The counters are system-wide: in a quiet guest only this test
 * moves them; elsewhere other exits can only add to them.
 */
static void test_move(void)
{
	long moved0, moved1, abs0, abs1;
	pid_t pids[NR_CHILDREN] = { };
	struct gate sib, done, mov;
	int fd, i, nsib, bad = 0;
	char path[128];

	nsib = ncpu - 1 < NR_CHILDREN - 1 ? ncpu - 1 : NR_CHILDREN - 1;
	fd = make_file("move", 1, path, sizeof(path));
	if (fd < 0 || gate_open(&sib) || gate_open(&done) || gate_open(&mov)) {
		ksft_test_result_fail("move: setup: %s\n", strerror(errno));
		return;
	}
	for (i = 1; i <= nsib; i++) {
		pids[i] = fork();
		if (pids[i] < 0) {
			ksft_print_msg("move: fork: %s\n", strerror(errno));
			nsib = i - 1;
			bad++;
			break;
		}
		if (pids[i] == 0)
			_exit(move_sibling(fd, i, &sib, &done));
	}
	if (gate_gather(&sib, nsib))
		bad = NR_CHILDREN;
	moved0 = stat_of("moved_logged");
	abs0 = stat_of("absorbed_local");
	pids[0] = fork();
	if (pids[0] == 0)
		_exit(move_child(fd, &mov));
	if (pids[0] < 0 || gate_gather(&mov, 1))
		bad = NR_CHILDREN;
	moved1 = stat_of("moved_logged");
	/* The siblings unmap; they exit only after the count. */
	gate_release(&sib, nsib);
	if (gate_gather(&done, nsib))
		bad = NR_CHILDREN;
	abs1 = stat_of("absorbed_local");
	gate_release(&done, nsib);
	if (ftruncate(fd, 0))
		bad++;
	if (pids[0] > 0)
		gate_release(&mov, 1);
	bad += wait_children(pids, nsib + 1);
	ksft_print_msg("move: %ld page table moves of a logged VMA under the rmap locks\n",
		       moved1 - moved0);
	ksft_print_msg("move: %ld inserts absorbed locally, of %d siblings' and the mover's\n",
		       abs1 - abs0, nsib);
	if (!nsib)
		ksft_print_msg("move: one CPU: no other CPU's log to leave attached\n");
	if (moved1 - moved0 < 1) {
		ksft_print_msg("move: the logged VMA moved without the rmap locks\n");
		bad++;
	}
	if (abs1 - abs0 < nsib + 1) {
		ksft_print_msg("move: the move synchronized logged inserts\n");
		bad++;
	}
	close(fd);
	gate_close(&sib);
	gate_close(&done);
	gate_close(&mov);
	ksft_test_result(!bad, "move\n");
}

/*
 * 9., in a child pinned to @cpu: map both pages of the file (the insert is
 * logged), fault page 0 in, say so, and exit when let go: the exit logs the
 * removal of this VMA and of the copy of the parent's, both in the tree by
 * then.
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

/* 9. The removal of a VMA in the tree is logged, and its free handed off. */
static void test_remove(void)
{
	long ins0, ins1, log0, log1, hand0, hand1, app0, app1;
	pid_t pids[NR_CHILDREN] = { };
	int fd, i, n, bad = 0;
	char path[128];
	struct gate g;
	char *map;

	n = ncpu < NR_CHILDREN ? ncpu : NR_CHILDREN;
	fd = make_file("remove", 2, path, sizeof(path));
	map = fd < 0 ? MAP_FAILED :
	      mmap(NULL, page_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED || gate_open(&g)) {
		ksft_test_result_fail("remove: setup: %s\n", strerror(errno));
		return;
	}
	if (probe(map) != 'a')
		bad++;
	for (i = 0; i < n; i++) {
		pids[i] = fork();
		if (pids[i] < 0) {
			ksft_print_msg("remove: fork: %s\n", strerror(errno));
			n = i;
			bad++;
			break;
		}
		if (pids[i] == 0)
			_exit(remove_child(fd, i, &g));
	}
	if (gate_gather(&g, n))
		bad = NR_CHILDREN;
	/* The hole punch's walk puts every logged insert into the tree. */
	ins0 = stat_of("applied");
	if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
		      page_size, page_size)) {
		ksft_print_msg("remove: punch: %s\n", strerror(errno));
		bad++;
	}
	ins1 = stat_of("applied");
	log0 = stat_of("logged_remove");
	hand0 = stat_of("handed_off");
	gate_release(&g, n);
	bad += wait_children(pids, n);
	log1 = stat_of("logged_remove");
	hand1 = stat_of("handed_off");
	app0 = stat_of("applied_remove");
	if (ftruncate(fd, 0))
		bad++;
	app1 = stat_of("applied_remove");
	if (probe(map) != -1) {
		ksft_print_msg("remove: the parent's page still mapped after the truncate\n");
		bad++;
	}
	ksft_print_msg("remove: %ld inserts put in by the punch; %d exits\n",
		       ins1 - ins0, n);
	ksft_print_msg("remove: %ld removes logged, %ld VMAs handed off\n",
		       log1 - log0, hand1 - hand0);
	ksft_print_msg("remove: %ld removes applied by the truncate\n",
		       app1 - app0);
	/*
	 * Each child has two VMAs of the file: its own and the copy of the
	 * parent's.  Its other exits' removes (libc's data) count too, but
	 * only the file's wait for the truncate.
	 */
	if (ins1 - ins0 < 2 * n) {
		ksft_print_msg("remove: the punch put too few inserts in\n");
		bad++;
	}
	if (log1 - log0 < 2 * n || hand1 - hand0 < 2 * n) {
		ksft_print_msg("remove: exits removed VMAs from the tree under the lock\n");
		bad++;
	}
	if (app1 - app0 < 2 * n) {
		ksft_print_msg("remove: the truncate applied too few removes\n");
		bad++;
	}
	munmap(map, page_size);
	close(fd);
	gate_close(&g);
	ksft_test_result(!bad, "remove\n");
}

int main(void)
{
	long saved;

	ksft_print_header();
	ksft_set_plan(9);
	if (getuid())
		ksft_exit_skip("needs root\n");
	if (sysfs_read_long(SWITCH, &saved))
		ksft_exit_skip("no %s (CONFIG_RMAP_OPLOG off, or no debugfs)\n",
			       SWITCH);
	page_size = sysconf(_SC_PAGESIZE);
	ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	if (ncpu < 1)
		ncpu = 1;
	snprintf(root, sizeof(root), "/tmp/rmap_oplog_test.%d", getpid());
	if (mkdir(root, 0755) || mount("none", root, "tmpfs", 0, "size=16m"))
		ksft_exit_fail_msg("mount tmpfs on %s: %s\n", root,
				   strerror(errno));
	if (sysfs_write_str(SWITCH, "1"))
		ksft_exit_fail_msg("cannot turn %s on\n", SWITCH);

	test_truncate();
	test_absorb();
	test_holes();
	test_mremap();
	test_migrate();
	test_reclaim();
	test_mmap();
	test_move();
	test_remove();

	umount2(root, MNT_DETACH);
	rmdir(root);
	if (sysfs_write_str(SWITCH, saved ? "1" : "0"))
		ksft_exit_fail_msg("cannot restore %s to %ld\n", SWITCH, saved);
	ksft_finished();
}
