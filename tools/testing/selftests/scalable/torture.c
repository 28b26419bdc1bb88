// SPDX-License-Identifier: GPL-2.0
/*
 * torture: CPU hotplug and allocation failures in the middle of every
 * mechanism of the scalable series, with nothing lost.
 *
 * Worker processes run on all CPUs (one of each kind per online CPU, at
 * most MAX_WORKERS, not pinned unless said):
 *
 *   stat     stat() and open()+close() of a few names on a private tmpfs,
 *            and now and then a create+unlink of a private name, with the
 *            dentry OpLog on (fs/dcache_oplog.c);
 *   fork     fork(), the child exits with a status of its own, waitpid()
 *            (never marked for faults: see fork_worker()); every
 *            RMAP_EVERY-th child first reads the worker's shared mapping
 *            of a file, whose insert into the file's reverse map its fork
 *            logged (mm/oplog_rmap.c), and the worker truncates the file;
 *   inotify  writers create and unlink numbered files in a watched
 *            directory, with the inotify OpLog on (fs/notify/
 *            inotify_oplog.c); one reader reads the IN_CREATE events;
 *   ast      a bounded buffer on an ast_mutex (states empty, mid, full):
 *            producers number their items, consumers record each one;
 *   ast_fuzz the ast_mutex fuzzer (./ast_fuzz -d 4, again and again), which
 *            kills and requeues waiters; it is built and installed next to
 *            this program, and the ast check fails without it;
 *            in the faults phase with -F: its worker threads and victims
 *            mark themselves, and ENOMEM is a valid answer;
 *   list     the OpLog list stress of lib/test_oplog.c (debugfs oplog_test)
 *            in its three OpLog modes, one pinned reader of list_run per
 *            CPU, and list_check's exactly-once verdict after each run;
 *   qdo      the QDo and clustered-counter stress of kernel/qdo/test_qdo.c
 *            (debugfs qdo_test/stress), again and again.
 *
 * The tests run the workers through phases, each phase with its own tmpfs:
 *
 *   hotplug  the hotplug phase: this process takes every CPU but 0 offline
 *            in a random order, then online again in another, for
 *            TORTURE_ROUNDS rounds (default 8);
 *   faults   the faults phase: failslab and fail_page_alloc fail
 *            TORTURE_PERCENT percent (default 10) of the allocations of the
 *            workers, which mark themselves (task-filter,
 *            /proc/thread-self/make-it-fail): every slab allocation, the
 *            sleeping ones too, and the page allocations that cannot
 *            sleep, so that the OpLog's log allocation, the clustered
 *            objects' representatives and every sleeping allocation on the
 *            workers' paths fail now and then, for TORTURE_FAULT_SECONDS
 *            (default 8).  The inotify reader, the fuzzer's parent and the
 *            list_check reads are not marked.  Then CPU 1 is brought
 *            online by a marked task a few times: each attempt must come
 *            up or fail with ENOMEM and leave the CPU offline.  Skipped
 *            without CONFIG_FAILSLAB, CONFIG_FAIL_PAGE_ALLOC and
 *            CONFIG_FAULT_INJECTION_DEBUG_FS (the debug kernel has them);
 *   soak     the two phases alternate until TORTURE_SECONDS have passed
 *            (make soak runs this test alone); skipped without it.
 *
 * Checked, in each phase:
 *   - stat: every call succeeded, or (faults) failed with ENOMEM, EAGAIN
 *     or (a tmpfs inode) ENOSPC; afterwards turning the dentry OpLog off
 *     leaves no log, and the tmpfs unmounts (a dentry reference left
 *     behind does not make umount() fail: the kernel's umount check
 *     prints "BUG: Dentry ... still in use", a splat that fails the boot);
 *   - fork: every child's exit status came back, and every truncate
 *     zapped the page table entry of the child that had read the file
 *     (the child's next read raised SIGBUS: the truncate's rmap walk met
 *     the child's VMA, wherever its insert was logged);
 *   - inotify: each writer's files were reported once each and in the
 *     writer's order; a run of a writer's files is missing only with an
 *     IN_Q_OVERFLOW read between the events around it (stock inotify
 *     queues one where it loses an event it could not allocate, after
 *     every event queued before), and never without faults;
 *   - ast: every item produced was consumed exactly once, every ast_fuzz
 *     run passed;
 *   - list: every run's list_check says "oplog_list ok" (every element
 *     added and removed, or absorbed, once and freed once);
 *   - qdo: every stress run says "qdo_stress ok" (or, with faults, its
 *     read fails with ENOMEM), and no QDo request is pending within 10 s
 *     of the end (/sys/kernel/debug/qdo/stats);
 * and besides, in the hotplug phase, that every round took a CPU offline
 * and brought it back, and that after every offline no OpLog type holds a
 * log of an offline CPU ("offline_logs" of /sys/kernel/debug/oplog/<type>/
 * stats); in the faults phase, that faults were injected (the "times"
 * counters of both attributes went down).  Every kind of every phase did
 * work: a kind without operations fails.
 *
 * Each check prints its line ("# <phase>: <kind>: <counts>") and fails the
 * test through EXPECT_*.  A kind whose kernel side is not built (ast
 * without CONFIG_AST_SYNC, list without CONFIG_TEST_OPLOG, qdo without
 * CONFIG_TEST_QDO) is not checked, and the test then skips, naming it,
 * unless a check failed.
 *
 * A worker that does not exit within STOP_TIMEOUT_S of the end is killed
 * with its process group and fails its kind's check, as does one that
 * exits with an error; the inotify reader gives up 30 s after the end if
 * a writer never finished.  A worker dies with the test (PR_SET_PDEATHSIG),
 * so that the harness's timeout, which kills the test's process group,
 * does not leave workers running in process groups of their own.
 *
 * The "totals:" lines give the operations of each kind, rounds, offlines
 * and faults injected, and the soak's passes (make soak sums them).  Needs
 * root, debugfs, CONFIG_HOTPLUG_CPU, two CPUs and CONFIG_QDO, or every test
 * skips.  The switches each test sets (the dentry and inotify OpLogs'
 * debugfs "enabled", inotify's max_queued_events) must take the write,
 * and take the old value back at its end, or the test fails.  The kernel's
 * own checks (lockdep, KASAN, kmemleak; KCSAN) do the rest.
 *
 * The harness's own options (-t, -r, ...) take the command line; the
 * knobs come from the environment, each a number:
 *   TORTURE_ROUNDS         hotplug rounds of a hotplug phase (8, >= 1)
 *   TORTURE_FAULT_SECONDS  seconds of a faults phase (8, >= 1)
 *   TORTURE_PERCENT        allocations failed, percent (10, 1 to 100)
 *   TORTURE_DELAY_MS       between two CPU moves (10, >= 0)
 *   TORTURE_SECONDS        the soak's duration (0: no soak)
 *   TORTURE_SEED           the seed of the CPU orders (the time)
 * Each test's timeout follows from them (test_timeout()).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "ast_mutex.h"
#include "sched_util.h"
#include "sysfs_util.h"

#define MAX_WORKERS	8
#define NR_NAMES	8
#define AST_CAP		8
#define AST_MAX_ITEMS	1048576L	/* per producer */
#define INOTIFY_AHEAD	16384		/* events a writer may be ahead */
#define FAULT_TIMES	1000000		/* "times" of both fault attributes */
#define ONLINE_TRIES	8
#define STOP_TIMEOUT_S	120		/* workers must exit within this */
#define MAX_CPUS	512
#define QDO_STATS	"/sys/kernel/debug/qdo/stats"
#define QDO_STRESS	"/sys/kernel/debug/qdo_test/stress"
#define OPLOG_STATS	"/sys/kernel/debug/oplog/*/stats"
#define LIST_CONFIG	"/sys/kernel/debug/oplog_test/list_config"
#define LIST_RUN	"/sys/kernel/debug/oplog_test/list_run"
#define LIST_CHECK	"/sys/kernel/debug/oplog_test/list_check"
#define DCACHE_SWITCH	"/sys/kernel/debug/dcache_oplog/enabled"
#define DCACHE_LOGS	"/sys/kernel/debug/dcache_oplog/logs"
#define INOTIFY_SWITCH	"/sys/kernel/debug/inotify_oplog/enabled"
#define MAX_QUEUED	"/proc/sys/fs/inotify/max_queued_events"
#define FAILSLAB	"/sys/kernel/debug/failslab"
#define FAIL_PAGE	"/sys/kernel/debug/fail_page_alloc"
#define NO_FAULTS	"no fault injection (CONFIG_FAILSLAB, CONFIG_FAIL_PAGE_ALLOC, CONFIG_FAULT_INJECTION_DEBUG_FS)"

enum kind { K_STAT, K_FORK, K_INOTIFY, K_AST, K_FUZZ, K_LIST, K_QDO, NR_KINDS };

static const char * const kind_names[NR_KINDS] = {
	"stat", "fork", "inotify", "ast", "ast_fuzz", "list", "qdo",
};

/* In shared memory: written by the workers, read by this process. */
struct shared {
	int faults;			/* the workers mark themselves */
	int stop;			/* the workers end their loops */
	int reader_ready;		/* the inotify watch is in place */
	int writers_done;		/* inotify writers that finished */
	long overflows;			/* IN_Q_OVERFLOW events read */
	long lost;			/* inotify files without an event */
	long gaps;			/* ... in runs of a writer's files */
	long rmap_checks;		/* truncates that SIGBUSed a child */
	long written[MAX_WORKERS];	/* files each inotify writer created */
	long read[MAX_WORKERS];		/* and the events the reader read */
	long ops[NR_KINDS];		/* operations done, per kind */
	long nomem[NR_KINDS];		/* calls failed by injected faults */
	long errors[NR_KINDS];		/* failed checks, per kind */
	int skipped[NR_KINDS];		/* a kind that could not run here */
};

static struct shared *sh = MAP_FAILED;
static char root[64];
static char fuzz_path[PATH_MAX];
static int nw;

/* What the teardown undoes if an assertion ended the test early. */
static bool root_mounted, faults_armed;

/* "# " lines on stdout, flushed: the harness ends a test with _exit(). */
static __printf(1, 2) void note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("# ");
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

static bool stopping(void)
{
	return __atomic_load_n(&sh->stop, __ATOMIC_ACQUIRE);
}

static void count(enum kind k, long n)
{
	__atomic_fetch_add(&sh->ops[k], n, __ATOMIC_RELAXED);
}

/* A failed check: counted, and the first few are printed. */
static void failed(enum kind k, const char *fmt, ...)
{
	va_list ap;

	if (__atomic_fetch_add(&sh->errors[k], 1, __ATOMIC_RELAXED) >= 5)
		return;
	va_start(ap, fmt);
	printf("# %s: ", kind_names[k]);
	vprintf(fmt, ap);
	va_end(ap);
	fflush(stdout);
}

/*
 * What an allocation failure gives: ENOMEM, EAGAIN, and ENOSPC from a
 * tmpfs create whose inode could not be allocated (shmem_get_inode()).
 */
static bool nomem_errno(int err)
{
	return err == ENOMEM || err == EAGAIN || err == ENOSPC;
}

/*
 * A call of @k failed with @err: an injected fault if faults are on and
 * @err is what an allocation failure gives (counted), else a failure.
 */
static void call_failed(enum kind k, int err, const char *what)
{
	if (sh->faults && nomem_errno(err))
		__atomic_fetch_add(&sh->nomem[k], 1, __ATOMIC_RELAXED);
	else
		failed(k, "%s: %s\n", what, strerror(err));
}

static int write_attr(const char *dir, const char *name, const char *val)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return sysfs_write_str(path, val);
}

static int is_online(int cpu)
{
	char path[64], buf[8];

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
	return sysfs_read_file(path, buf, sizeof(buf)) < 0 ? -1 : buf[0] == '1';
}

/* This thread's allocations fail at random from now on, in the faults phase. */
static void mark(void)
{
	int ret;

	if (!sh->faults)
		return;
	ret = sysfs_write_str("/proc/thread-self/make-it-fail", "1");
	if (ret) {
		/* A worker: its own exit status, no result of its own. */
		printf("# make-it-fail: %s\n", strerror(-ret));
		fflush(stdout);
		_exit(1);
	}
}

static void name_of(char *buf, size_t size, const char *dir, int i)
{
	snprintf(buf, size, "%s/%s/n%d", root, dir, i);
}

/* ---- stat: the dentry OpLog ---- */

static void stat_worker(int id)
{
	char path[NR_NAMES][128], priv[128];
	int i, fd, err;
	struct stat st;
	long n;

	for (i = 0; i < NR_NAMES; i++)
		name_of(path[i], sizeof(path[i]), "stat", i);
	snprintf(priv, sizeof(priv), "%s/stat/p%d", root, id);
	mark();
	for (n = 0; !stopping(); n++) {
		for (i = 0; i < NR_NAMES; i++) {
			if (stat(path[i], &st))
				call_failed(K_STAT, errno, "stat");
			fd = open(path[i], O_RDONLY);
			if (fd < 0)
				call_failed(K_STAT, errno, "open");
			else
				close(fd);
		}
		if (n % 16 == 0) {
			fd = open(priv, O_CREAT | O_WRONLY, 0600);
			if (fd < 0)
				call_failed(K_STAT, errno, "create");
			else
				close(fd);
			/* A create that failed may have left the file. */
			while (unlink(priv) && (err = errno) != ENOENT) {
				call_failed(K_STAT, err, "unlink");
				if (!nomem_errno(err))
					break;
			}
		}
		count(K_STAT, 2 * NR_NAMES);
	}
}

/* ---- fork ---- */

#define RMAP_EVERY	8	/* forks per reverse-map check */

static sigjmp_buf rmap_jmp;

static void rmap_sigbus(int sig)
{
	(void)sig;
	siglongjmp(rmap_jmp, 1);
}

/*
 * The child of a reverse-map check: fault its copy of the mapping in, say
 * so on @ready, wait on @go until the parent truncated the file, and read
 * again.  The truncate must have zapped this child's page table entry, so
 * the read raises SIGBUS (exit 0); a read that succeeds (exit 1) saw the
 * old page through an entry that the truncate's rmap walk did not meet.
 */
static void rmap_child(const char *map, int ready, int go)
{
	struct sigaction sa = { .sa_handler = rmap_sigbus };
	char c;

	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, NULL))
		_exit(2);
	c = __atomic_load_n(map, __ATOMIC_RELAXED);
	if (write(ready, &c, 1) != 1 || read(go, &c, 1) != 1)
		_exit(3);
	if (sigsetjmp(rmap_jmp, 1))
		_exit(0);
	/* An atomic load: the compiler keeps it, and it faults if it must. */
	c = __atomic_load_n(map, __ATOMIC_RELAXED);
	(void)c;
	_exit(1);
}

/*
 * One reverse-map check: a child reads @map (one page of @fd, shared) and
 * waits; the file is truncated to nothing; the child's next read must
 * raise SIGBUS.  Then the file gets its page back for the next check.
 */
static void rmap_check(int fd, const char *map, long page)
{
	int ready[2], go[2], status;
	char c = 0;
	pid_t pid;

	if (pipe2(ready, O_CLOEXEC)) {
		failed(K_FORK, "pipe2: %s\n", strerror(errno));
		return;
	}
	if (pipe2(go, O_CLOEXEC)) {
		failed(K_FORK, "pipe2: %s\n", strerror(errno));
		close(ready[0]);
		close(ready[1]);
		return;
	}
	pid = fork();
	if (pid == 0) {
		close(ready[0]);
		close(go[1]);
		rmap_child(map, ready[1], go[0]);
	}
	close(ready[1]);
	close(go[0]);
	if (pid > 0) {
		if (read(ready[0], &c, 1) != 1)
			failed(K_FORK, "rmap child did not read its mapping\n");
		else if (ftruncate(fd, 0))
			failed(K_FORK, "truncate: %s\n", strerror(errno));
		if (write(go[1], &c, 1) != 1)
			failed(K_FORK, "rmap child gone before the truncate\n");
	}
	close(ready[0]);
	close(go[1]);
	if (pid < 0) {
		if (errno != EAGAIN)
			call_failed(K_FORK, errno, "fork");
	} else if (waitpid(pid, &status, 0) != pid) {
		failed(K_FORK, "waitpid: %s\n", strerror(errno));
	} else if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		failed(K_FORK, "rmap child status %#x: %s\n", status,
		       WIFEXITED(status) && WEXITSTATUS(status) == 1 ?
		       "its mapping stayed readable after the truncate" :
		       "it failed");
	} else {
		__atomic_fetch_add(&sh->rmap_checks, 1, __ATOMIC_RELAXED);
	}
	if (ftruncate(fd, page))
		failed(K_FORK, "extend: %s\n", strerror(errno));
}

static void fork_worker(int id)
{
	long page = sysconf(_SC_PAGESIZE);
	char *map = MAP_FAILED;
	char path[128];
	int status, want, fd;
	long n;
	pid_t pid;

	/*
	 * Mapped through a read-only descriptor: a shared mapping that may
	 * become writable stays on the locked path of the reverse map
	 * (i_mmap_writable), and the check is about the logged one.
	 */
	snprintf(path, sizeof(path), "%s/rmap.%d", root, id);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || ftruncate(fd, page)) {
		failed(K_FORK, "%s: %s\n", path, strerror(errno));
	} else {
		int rfd = open(path, O_RDONLY | O_CLOEXEC);

		if (rfd >= 0) {
			map = mmap(NULL, page, PROT_READ, MAP_SHARED, rfd, 0);
			close(rfd);
		}
		if (map == MAP_FAILED)
			failed(K_FORK, "mmap %s: %s\n", path, strerror(errno));
	}

	/*
	 * Not marked: a fork whose kernel stack (vmalloc) cannot be had
	 * prints a stock allocation-failure warning with a stack trace,
	 * which the harness counts as a splat.
	 */
	for (n = 0; !stopping(); n++) {
		if (map != MAP_FAILED && n % RMAP_EVERY == 0) {
			rmap_check(fd, map, page);
			continue;
		}
		want = (id * 31 + n) & 0x7f;
		pid = fork();
		if (pid < 0) {
			if (errno != EAGAIN)
				call_failed(K_FORK, errno, "fork");
			usleep(1000);
			continue;
		}
		if (pid == 0)
			_exit(want);
		if (waitpid(pid, &status, 0) != pid)
			failed(K_FORK, "waitpid: %s\n", strerror(errno));
		else if (!WIFEXITED(status) || WEXITSTATUS(status) != want)
			failed(K_FORK, "child status %#x, want exit %d\n", status, want);
		count(K_FORK, 1);
	}
	if (map != MAP_FAILED)
		munmap(map, page);
	if (fd >= 0) {
		close(fd);
		unlink(path);
	}
}

/* ---- inotify: the inotify OpLog ---- */

static void inotify_writer(int id)
{
	char path[128];
	long seq = 0;
	int fd, err;

	while (!__atomic_load_n(&sh->reader_ready, __ATOMIC_ACQUIRE))
		usleep(1000);
	mark();
	while (!stopping()) {
		snprintf(path, sizeof(path), "%s/inotify/w%d.%ld", root, id, seq);
		/*
		 * A create that failed may still have created the file and
		 * queued its event; the next try finds it and queues none.
		 */
		fd = open(path, O_CREAT | O_WRONLY, 0600);
		if (fd < 0) {
			call_failed(K_INOTIFY, errno, "create");
			continue;
		}
		close(fd);
		while (unlink(path)) {
			err = errno;
			call_failed(K_INOTIFY, err, "unlink");
			if (!nomem_errno(err))
				break;
		}
		seq++;
		/* Bound the queue (and the kernel memory it takes). */
		while (seq - __atomic_load_n(&sh->read[id], __ATOMIC_RELAXED) > INOTIFY_AHEAD &&
		       !stopping())
			usleep(1000);
	}
	sh->written[id] = seq;
	/* Pairs with the acquire load in inotify_reader(). */
	__atomic_fetch_add(&sh->writers_done, 1, __ATOMIC_RELEASE);
}

/* The reader's view of one writer's files */
struct inotify_seq {
	long next;	/* the file expected next */
	long ovf;	/* sh->overflows when the writer's last event was read */
};

/*
 * Account the writer @id's files @from to @to - 1, which had no event:
 * an IN_Q_OVERFLOW must have been read since the writer's last event.
 */
static void inotify_gap(struct inotify_seq *s, int id, long from, long to)
{
	if (sh->overflows == s->ovf)
		failed(K_INOTIFY, "writer %d: files %ld to %ld without an event or IN_Q_OVERFLOW\n",
		       id, from, to - 1);
	sh->lost += to - from;
	sh->gaps++;
}

/* Reads what is queued; returns the bytes read, 0 when empty, -1. */
static long inotify_read(int fd, struct inotify_seq *s)
{
	static long words[(1 << 16) / sizeof(long)];	/* aligned for the events */
	const struct inotify_event *e;
	char *buf = (char *)words;
	long seq, len;
	char *p;
	int id;

	len = read(fd, buf, sizeof(words));
	if (len < 0)
		return errno == EAGAIN ? 0 : -1;
	for (p = buf; p < buf + len; p += sizeof(*e) + e->len) {
		e = (const struct inotify_event *)p;
		if (e->mask & IN_Q_OVERFLOW) {
			sh->overflows++;
			continue;
		}
		if (!(e->mask & IN_CREATE) || !e->len ||
		    sscanf(e->name, "w%d.%ld", &id, &seq) != 2 ||
		    id < 0 || id >= nw) {
			failed(K_INOTIFY, "unexpected event %#x %s\n", e->mask,
			       e->len ? e->name : "");
			continue;
		}
		if (seq < s[id].next)
			failed(K_INOTIFY, "writer %d: file %ld after %ld\n", id, seq,
			       s[id].next - 1);
		else if (seq > s[id].next)
			inotify_gap(&s[id], id, s[id].next, seq);
		s[id].next = seq + 1;
		s[id].ovf = sh->overflows;
		__atomic_store_n(&sh->read[id], seq, __ATOMIC_RELAXED);
		count(K_INOTIFY, 1);
	}
	return len;
}

static void inotify_reader(int unused)
{
	struct inotify_seq seq[MAX_WORKERS] = { };
	int i, done, late = 0;
	struct pollfd pfd;
	char dir[96];

	(void)unused;
	snprintf(dir, sizeof(dir), "%s/inotify", root);
	pfd.fd = inotify_init1(IN_NONBLOCK);
	pfd.events = POLLIN;
	if (pfd.fd < 0 || inotify_add_watch(pfd.fd, dir, IN_CREATE) < 0) {
		failed(K_INOTIFY, "inotify on %s: %s\n", dir, strerror(errno));
		__atomic_store_n(&sh->reader_ready, 1, __ATOMIC_RELEASE);
		return;
	}
	__atomic_store_n(&sh->reader_ready, 1, __ATOMIC_RELEASE);
	do {
		done = __atomic_load_n(&sh->writers_done, __ATOMIC_ACQUIRE);
		poll(&pfd, 1, 100);
		if (inotify_read(pfd.fd, seq) < 0)
			failed(K_INOTIFY, "read: %s\n", strerror(errno));
		/* A writer that died never counts itself done: 30 s at most. */
		if (stopping() && ++late > 300) {
			failed(K_INOTIFY, "%d of %d writers did not finish\n", nw - done, nw);
			break;
		}
	} while (done < nw);
	/* Every writer's events were queued before it counted itself done. */
	while (inotify_read(pfd.fd, seq) > 0)
		;
	for (i = 0; i < nw; i++) {
		if (seq[i].next > sh->written[i])
			failed(K_INOTIFY, "writer %d: %ld files, an event of file %ld\n",
			       i, sh->written[i], seq[i].next - 1);
		else if (seq[i].next < sh->written[i])
			inotify_gap(&seq[i], i, seq[i].next, sh->written[i]);
	}
	if (sh->lost && !sh->faults)
		failed(K_INOTIFY, "%ld files without an event, without faults\n",
		       sh->lost);
	close(pfd.fd);
}

/* ---- ast: a bounded buffer on an ast_mutex ---- */

enum { S_EMPTY, S_MID, S_FULL };

static struct {
	struct ast_mutex m;
	long buf[AST_CAP];
	int head, count;
	long produced[MAX_WORKERS];
	unsigned char *seen;
} bb;

/*
 * A failed lock or unlock leaves the buffer's protocol broken (a consumer
 * without its poison item, a mutex held for ever): the whole ast process
 * ends at once, with its failure counted.
 */
static void bb_broken(const char *what, int err)
{
	failed(K_AST, "%s: %s\n", what, strerror(err));
	_exit(1);
}

static void bb_put(long item)
{
	int s = ast_mutex_lock(&bb.m, AST_MUTEX_STATE_BIT(S_EMPTY) |
				      AST_MUTEX_STATE_BIT(S_MID));

	if (s < 0)
		bb_broken("lock to put", -s);
	bb.buf[(bb.head + bb.count++) % AST_CAP] = item;
	s = ast_mutex_unlock(&bb.m, bb.count == AST_CAP ? S_FULL : S_MID);
	if (s < 0)
		bb_broken("unlock after put", -s);
}

static long bb_take(void)
{
	int s = ast_mutex_lock(&bb.m, AST_MUTEX_STATE_BIT(S_MID) |
				      AST_MUTEX_STATE_BIT(S_FULL));
	long item;

	if (s < 0)
		bb_broken("lock to take", -s);
	item = bb.buf[bb.head];
	bb.head = (bb.head + 1) % AST_CAP;
	bb.count--;
	s = ast_mutex_unlock(&bb.m, bb.count ? S_MID : S_EMPTY);
	if (s < 0)
		bb_broken("unlock after take", -s);
	return item;
}

static void *ast_producer(void *arg)
{
	long p = (long)arg, k;

	mark();
	for (k = 0; !stopping() && k < AST_MAX_ITEMS; k++)
		bb_put(p * AST_MAX_ITEMS + k);
	bb.produced[p] = k;
	return NULL;
}

/* Items are >= 0; -1 (poison) ends a consumer. */
static void *ast_consumer(void *arg)
{
	long item;

	(void)arg;
	mark();
	while ((item = bb_take()) >= 0) {
		if (item >= nw * AST_MAX_ITEMS)
			bb_broken("item out of range", ERANGE);
		/* One consumer takes each item, under the mutex. */
		bb.seen[item]++;
		count(K_AST, 1);
	}
	return NULL;
}

static void ast_process(int unused)
{
	pthread_t prod[MAX_WORKERS], cons[MAX_WORKERS];
	__u32 w = AST_MUTEX_WORD(0);
	long p, k, bad = 0;
	int want;

	(void)unused;
	/*
	 * With the syscall, unlocking a free word is EPERM (as ast_mutex_test's
	 * probe; that test fails on any other answer).
	 */
	if (syscall(__NR_ast_mutex_unlock, &w, 0, AST_MUTEX_PRIVATE) == 0 ||
	    errno != EPERM) {
		__atomic_store_n(&sh->skipped[K_AST], 1, __ATOMIC_RELAXED);
		return;
	}
	/* Touched here, so that no marked thread faults its pages in. */
	bb.seen = malloc(nw * AST_MAX_ITEMS);
	if (!bb.seen || ast_mutex_init(&bb.m, S_EMPTY, AST_MUTEX_PRIVATE)) {
		failed(K_AST, "setup failed\n");
		return;
	}
	memset(bb.seen, 0, nw * AST_MAX_ITEMS);
	for (p = 0; p < nw; p++) {
		if (pthread_create(&cons[p], NULL, ast_consumer, NULL) ||
		    pthread_create(&prod[p], NULL, ast_producer, (void *)p))
			bb_broken("pthread_create", EAGAIN);
	}
	for (p = 0; p < nw; p++)
		pthread_join(prod[p], NULL);
	for (p = 0; p < nw; p++)
		bb_put(-1);
	for (p = 0; p < nw; p++)
		pthread_join(cons[p], NULL);
	for (p = 0; p < nw; p++) {
		for (k = 0; k < AST_MAX_ITEMS; k++) {
			want = k < bb.produced[p];
			if (bb.seen[p * AST_MAX_ITEMS + k] == want || bad++ >= 5)
				continue;
			failed(K_AST, "item %ld of producer %ld consumed %d times (%ld produced)\n",
			       k, p, bb.seen[p * AST_MAX_ITEMS + k], bb.produced[p]);
		}
	}
	if (bb.count)
		failed(K_AST, "%d items left in the buffer\n", bb.count);
}

/* ---- ast_fuzz: kills and requeues of ast_mutex waiters (-F: marked) ---- */

static void fuzz_runner(int unused)
{
	int status;
	pid_t pid;

	(void)unused;
	while (!stopping()) {
		pid = fork();
		if (pid == 0) {
			int fd = open("/dev/null", O_WRONLY);

			/* Its TAP lines would mix with ours. */
			dup2(fd, STDOUT_FILENO);
			if (sh->faults)
				execl(fuzz_path, "ast_fuzz", "-d", "4", "-F", NULL);
			else
				execl(fuzz_path, "ast_fuzz", "-d", "4", NULL);
			_exit(127);
		}
		if (pid < 0 || waitpid(pid, &status, 0) != pid) {
			failed(K_FUZZ, "fork/waitpid: %s\n", strerror(errno));
			return;
		}
		if (WIFEXITED(status) && WEXITSTATUS(status) == KSFT_SKIP) {
			__atomic_store_n(&sh->skipped[K_FUZZ], 1, __ATOMIC_RELAXED);
			return;
		}
		if (!WIFEXITED(status) || WEXITSTATUS(status) != KSFT_PASS)
			failed(K_FUZZ, "ast_fuzz -d 4%s: status %#x\n",
			       sh->faults ? " -F" : "", status);
		count(K_FUZZ, 1);
	}
}

/* ---- list: the OpLog list stress, exactly once ---- */

/* One worker of a run: one read() of list_run, which runs the loop. */
static void list_reader(int cpu)
{
	int fd = open(LIST_RUN, O_RDONLY);
	char buf[128];
	ssize_t n;

	if (fd < 0) {
		failed(K_LIST, "open %s: %s\n", LIST_RUN, strerror(errno));
		return;
	}
	/* A CPU that is offline now: run anywhere. */
	pin_cpu(cpu);
	mark();
	n = read(fd, buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = 0;
	if (n <= 0 || !strstr(buf, "ops="))
		failed(K_LIST, "list_run on CPU %d: %s\n", cpu, n < 0 ? strerror(errno) : buf);
	close(fd);
}

static void list_runner(int unused)
{
	static const char * const modes[] = { "basic", "global", "local" };
	char cfg[64], buf[512], *p;
	pid_t pids[MAX_WORKERS];
	int i, m, ret;
	ssize_t n;

	(void)unused;
	for (m = 0; !stopping(); m = (m + 1) % 3) {
		snprintf(cfg, sizeof(cfg), "%s %d 0 200", modes[m], nw);
		ret = sysfs_write_str(LIST_CONFIG, cfg);
		if (ret) {
			failed(K_LIST, "list_config \"%s\": %s\n", cfg, strerror(-ret));
			return;
		}
		for (i = 0; i < nw; i++) {
			fflush(stdout);
			pids[i] = fork();
			if (pids[i] == 0) {
				list_reader(i);
				_exit(0);
			}
		}
		for (i = 0; i < nw; i++)
			if (pids[i] > 0)
				waitpid(pids[i], NULL, 0);
		n = sysfs_read_file(LIST_CHECK, buf, sizeof(buf));
		if (n < 0 || !strstr(buf, "oplog_list ok")) {
			failed(K_LIST, "%s\n", n < 0 ? strerror(-n) : buf);
			return;
		}
		p = strstr(buf, "nomem=");
		if (p)
			__atomic_fetch_add(&sh->nomem[K_LIST], strtol(p + 6, NULL, 10),
					   __ATOMIC_RELAXED);
		count(K_LIST, 1);
	}
}

/* ---- qdo: the QDo and clustered-counter stress ---- */

static void qdo_runner(int unused)
{
	char buf[1024];
	ssize_t n;

	(void)unused;
	mark();
	while (!stopping()) {
		n = sysfs_read_file(QDO_STRESS, buf, sizeof(buf));
		if (n < 0)
			call_failed(K_QDO, -n, "read " QDO_STRESS);
		else if (!strstr(buf, "qdo_stress ok"))
			failed(K_QDO, "%s", buf);
		else
			count(K_QDO, 1);
	}
}

/* ---- the workers ---- */

static struct {
	pid_t pid;
	enum kind kind;
	int id;
} workers[4 * MAX_WORKERS + 8];
static int nr_workers;

/*
 * A worker of @kind, in a process group of its own (see stop_workers()),
 * which dies with this process; 0 or -1 (errno) if fork() failed.
 */
static int spawn(void (*fn)(int), enum kind kind, int id)
{
	pid_t parent = getpid(), pid;

	/* Or the child writes what is buffered here once more. */
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		setpgid(0, 0);
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
			_exit(1);
		fn(id);
		fflush(stdout);
		_exit(0);
	}
	workers[nr_workers].pid = pid;
	workers[nr_workers].kind = kind;
	workers[nr_workers++].id = id;
	return 0;
}

static void stop_workers(void);

/* Every worker; 0, or -1 (errno) after stopping those started. */
static int start_workers(void)
{
	int i, err;

	nr_workers = 0;
	for (i = 0; i < nw; i++) {
		if (spawn(stat_worker, K_STAT, i) || spawn(fork_worker, K_FORK, i) ||
		    spawn(inotify_writer, K_INOTIFY, i))
			goto fail;
	}
	if (spawn(inotify_reader, K_INOTIFY, nw) || spawn(ast_process, K_AST, 0))
		goto fail;
	/*
	 * ast_fuzz is built with this program and installed beside it:
	 * without it the ast check would pass on half its check.
	 */
	if (access(fuzz_path, X_OK))
		failed(K_FUZZ, "no ast_fuzz next to torture (%s: %s)\n",
		       fuzz_path[0] ? fuzz_path : "/proc/self/exe unreadable",
		       strerror(errno));
	else if (spawn(fuzz_runner, K_FUZZ, 0))
		goto fail;
	if (access(LIST_CONFIG, W_OK))
		sh->skipped[K_LIST] = 1;
	else if (spawn(list_runner, K_LIST, 0))
		goto fail;
	if (access(QDO_STRESS, R_OK))
		sh->skipped[K_QDO] = 1;
	else if (spawn(qdo_runner, K_QDO, 0))
		goto fail;
	return 0;
fail:
	err = errno;
	stop_workers();
	errno = err;
	return -1;
}

/*
 * Stops the workers and waits STOP_TIMEOUT_S for them; a worker still
 * there then is killed with its process group (its children: ast_fuzz,
 * list readers, forks).  A worker that did not exit with 0 counts as a
 * failure of its kind.
 */
static void stop_workers(void)
{
	int i, left, status, waited = 0;
	pid_t pid;

	__atomic_store_n(&sh->stop, 1, __ATOMIC_RELEASE);
	for (left = nr_workers; left; ) {
		pid = waitpid(-1, &status, WNOHANG);
		if (pid < 0)
			break;
		if (!pid) {
			if (waited++ < STOP_TIMEOUT_S * 10) {
				usleep(100000);
				continue;
			}
			for (i = 0; i < nr_workers; i++) {
				if (!workers[i].pid)
					continue;
				note("%s worker %d still running after %d s: killed",
				     kind_names[workers[i].kind], workers[i].id,
				     STOP_TIMEOUT_S);
				kill(-workers[i].pid, SIGKILL);
			}
			waited = 0;
			continue;
		}
		for (i = 0; i < nr_workers && workers[i].pid != pid; i++)
			;
		if (i == nr_workers)
			continue;	/* not a worker */
		workers[i].pid = 0;
		left--;
		if (WIFEXITED(status) && !WEXITSTATUS(status))
			continue;
		failed(workers[i].kind, "worker %d: %s %d\n", workers[i].id,
		       WIFEXITED(status) ? "exit" : "signal",
		       WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	}
	nr_workers = 0;
}

static int setup_fs(void)
{
	char path[128];
	int i, fd;

	snprintf(root, sizeof(root), "/tmp/torture.XXXXXX");
	if (!mkdtemp(root))
		return -1;
	if (mount("none", root, "tmpfs", 0, "size=64m")) {
		rmdir(root);
		return -1;
	}
	root_mounted = true;
	snprintf(path, sizeof(path), "%s/stat", root);
	if (mkdir(path, 0700))
		return -1;
	snprintf(path, sizeof(path), "%s/inotify", root);
	if (mkdir(path, 0700))
		return -1;
	for (i = 0; i < NR_NAMES; i++) {
		name_of(path, sizeof(path), "stat", i);
		fd = open(path, O_CREAT | O_WRONLY, 0600);
		if (fd < 0)
			return -1;
		close(fd);
	}
	return 0;
}

/* ---- the checks ---- */

/*
 * Kinds whose kernel side is not built here (ast, list, qdo), and the
 * faults phase of a soak without fault injection: bits of what_missing[].
 */
#define M_FAULTS	NR_KINDS
static unsigned int missing;

static const char * const what_missing[NR_KINDS + 1] = {
	[K_AST] = "ast: no ast_mutex syscalls (CONFIG_AST_SYNC)",
	[K_LIST] = "list: no " LIST_CONFIG " (CONFIG_TEST_OPLOG)",
	[K_QDO] = "qdo: no " QDO_STRESS " (CONFIG_TEST_QDO)",
	[M_FAULTS] = "faults: " NO_FAULTS,
};

/* A line of @phase: "# <phase>: <what @fmt says>". */
static __printf(2, 3) void phase_note(const char *phase, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("# %s: ", phase);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

/* A kind of @phase that could not run: not checked, said, remembered. */
static void not_here(const char *phase, unsigned int what)
{
	phase_note(phase, "%s: not checked", what_missing[what]);
	missing |= 1U << what;
}

/*
 * The end of a test that ran without a kind (or a phase): a skip that
 * names them, unless a check failed.
 */
static void skip_if_missing(struct __test_metadata *const _metadata)
{
	char why[512] = "";
	unsigned int i;

	if (!missing || _metadata->exit_code != KSFT_PASS)
		return;
	for (i = 0; i <= M_FAULTS; i++)
		if (missing & (1U << i))
			snprintf(why + strlen(why), sizeof(why) - strlen(why), "%s%s",
				 why[0] ? "; " : "", what_missing[i]);
	SKIP(return, "%s", why);
}

/* The checks of every phase, after its workers stopped. */
static void check_common(struct __test_metadata *const _metadata, const char *phase)
{
	long logs = -1, pend = -1;
	int i, ret;

	/* The dentry OpLog's switch drains every log when turned off. */
	ret = sysfs_write_str(DCACHE_SWITCH, "0");
	if (ret)
		failed(K_STAT, "write 0 to %s: %s\n", DCACHE_SWITCH, strerror(-ret));
	else
		sysfs_read_long(DCACHE_LOGS, &logs);
	ret = sysfs_write_str(DCACHE_SWITCH, "1");
	if (ret)
		failed(K_STAT, "write 1 to %s: %s\n", DCACHE_SWITCH, strerror(-ret));
	if (umount(root)) {
		failed(K_STAT, "umount %s: %s\n", root, strerror(errno));
	} else {
		root_mounted = false;
		rmdir(root);
	}
	if (logs)
		failed(K_STAT, "%ld dentry logs left with the switch off\n", logs);

	phase_note(phase,
		   "stat: %ld calls, %ld failed by faults; no dentry log left, tmpfs unmounted",
		   sh->ops[K_STAT], sh->nomem[K_STAT]);
	EXPECT_EQ(0, sh->errors[K_STAT]) TH_LOG("%s: stat: failed checks", phase);
	EXPECT_LT(0, sh->ops[K_STAT]) TH_LOG("%s: stat: no call", phase);

	phase_note(phase,
		   "fork: %ld children, %ld truncates zapped a child's mapping, %ld forks failed by faults",
		   sh->ops[K_FORK], sh->rmap_checks, sh->nomem[K_FORK]);
	EXPECT_EQ(0, sh->errors[K_FORK]) TH_LOG("%s: fork: failed checks", phase);
	EXPECT_LT(0, sh->ops[K_FORK]) TH_LOG("%s: fork: no child", phase);
	EXPECT_LT(0, sh->rmap_checks) TH_LOG("%s: fork: no reverse-map check", phase);

	phase_note(phase,
		   "inotify: %ld events once each and in order, %ld lost in %ld runs, each after an IN_Q_OVERFLOW (%ld read)",
		   sh->ops[K_INOTIFY], sh->lost, sh->gaps, sh->overflows);
	EXPECT_EQ(0, sh->errors[K_INOTIFY]) TH_LOG("%s: inotify: failed checks", phase);
	EXPECT_LT(0, sh->ops[K_INOTIFY]) TH_LOG("%s: inotify: no event", phase);

	if (sh->skipped[K_AST]) {
		not_here(phase, K_AST);
	} else {
		phase_note(phase, "ast: %ld items consumed once each, %ld ast_fuzz runs passed",
			   sh->ops[K_AST], sh->ops[K_FUZZ]);
		EXPECT_EQ(0, sh->errors[K_AST]) TH_LOG("%s: ast: failed checks", phase);
		EXPECT_EQ(0, sh->errors[K_FUZZ]) TH_LOG("%s: ast_fuzz: failed checks", phase);
		EXPECT_LT(0, sh->ops[K_AST]) TH_LOG("%s: ast: no item", phase);
		if (!sh->skipped[K_FUZZ])
			EXPECT_LT(0, sh->ops[K_FUZZ]) TH_LOG("%s: ast_fuzz: no run", phase);
	}

	if (sh->skipped[K_LIST]) {
		not_here(phase, K_LIST);
	} else {
		phase_note(phase,
			   "list: %ld OpLog list runs exactly once, %ld elements failed by faults",
			   sh->ops[K_LIST], sh->nomem[K_LIST]);
		EXPECT_EQ(0, sh->errors[K_LIST]) TH_LOG("%s: list: failed checks", phase);
		EXPECT_LT(0, sh->ops[K_LIST]) TH_LOG("%s: list: no run", phase);
	}

	if (sh->skipped[K_QDO]) {
		not_here(phase, K_QDO);
	} else {
		phase_note(phase, "qdo: %ld QDo stress runs ok, %ld failed by faults",
			   sh->ops[K_QDO], sh->nomem[K_QDO]);
		EXPECT_EQ(0, sh->errors[K_QDO]) TH_LOG("%s: qdo: failed checks", phase);
		EXPECT_LT(0, sh->ops[K_QDO]) TH_LOG("%s: qdo: no run", phase);
	}

	for (i = 0; i < 100; i++) {
		if (sysfs_read_stat(QDO_STATS, "pending", &pend))
			pend = -1;
		if (!pend)
			break;
		usleep(100000);
	}
	phase_note(phase, "qdo: %ld requests pending at the end", pend);
	EXPECT_EQ(0, pend) TH_LOG("%s: qdo: requests pending 10 s after the end (-1: no %s)",
				  phase, QDO_STATS);

	note("totals: phase %s stat %ld fork %ld inotify %ld ast %ld ast_fuzz %ld",
	     phase, sh->ops[K_STAT], sh->ops[K_FORK], sh->ops[K_INOTIFY],
	     sh->ops[K_AST], sh->ops[K_FUZZ]);
	note("totals: phase %s list %ld qdo %ld rmap_checks %ld",
	     phase, sh->ops[K_LIST], sh->ops[K_QDO], sh->rmap_checks);
}

/* A phase's start: its shared counters and its tmpfs. */
static void start_phase(struct __test_metadata *const _metadata, int faults)
{
	memset(sh, 0, sizeof(*sh));
	sh->faults = faults;
	ASSERT_EQ(0, setup_fs()) TH_LOG("tmpfs at %s: %s", root, strerror(errno));
}

/* ---- the hotplug phase ---- */

/* Sum of offline_logs over the OpLog types, or -1 if unreadable. */
static long offline_logs(char *which, size_t size)
{
	long n, sum = 0;
	glob_t g;
	size_t i;

	if (glob(OPLOG_STATS, 0, NULL, &g) || !g.gl_pathc)
		return -1;
	which[0] = 0;
	for (i = 0; i < g.gl_pathc; i++) {
		if (sysfs_read_stat(g.gl_pathv[i], "offline_logs", &n)) {
			sum = -1;
			break;
		}
		if (n && !which[0])
			snprintf(which, size, "%s: %ld", g.gl_pathv[i], n);
		sum += n;
	}
	globfree(&g);
	return sum;
}

static void shuffle(int *v, int n)
{
	int i, j, t;

	for (i = n - 1; i > 0; i--) {
		j = random() % (i + 1);
		t = v[i];
		v[i] = v[j];
		v[j] = t;
	}
}

struct hotplug {
	int rounds, empty_rounds, offlines, stuck_offline;
	int log_checks, log_fails;
};

/* The CPUs but 0 that were online at the start: the ones a test moves. */
static int hp_cpus[MAX_CPUS], nr_hp;

static void find_hotplug_cpus(int ncpus)
{
	int cpu;

	nr_hp = 0;
	for (cpu = 1; cpu < ncpus && nr_hp < MAX_CPUS; cpu++)
		if (is_online(cpu) == 1)
			hp_cpus[nr_hp++] = cpu;
}

static void hotplug_round(int delay_ms, struct hotplug *h)
{
	int order[MAX_CPUS], i, n = nr_hp, downs = 0;
	char which[256];
	long logs;

	memcpy(order, hp_cpus, n * sizeof(order[0]));
	shuffle(order, n);
	for (i = 0; i < n; i++) {
		if (sysfs_set_cpu_online(order[i], 0))
			continue;
		downs++;
		h->offlines++;
		logs = offline_logs(which, sizeof(which));
		h->log_checks++;
		if (logs && h->log_fails++ < 5)
			note("CPU %d offline: %s", order[i],
			     logs < 0 ? "no offline_logs in " OPLOG_STATS : which);
		usleep(delay_ms * 1000);
	}
	shuffle(order, n);
	for (i = 0; i < n; i++) {
		if (sysfs_set_cpu_online(order[i], 1) && sysfs_set_cpu_online(order[i], 1)) {
			note("CPU %d does not come back online", order[i]);
			h->stuck_offline++;
		}
		usleep(delay_ms * 1000);
	}
	h->rounds++;
	if (!downs)
		h->empty_rounds++;
}

/* Environment knobs of the phases (see the top of the file). */
struct knobs {
	int rounds, fault_s, percent, seconds, delay_ms;
	unsigned int seed;
};

static void phase_hotplug(struct __test_metadata *const _metadata,
			  const struct knobs *k)
{
	struct hotplug h = { };

	start_phase(_metadata, 0);
	ASSERT_EQ(0, start_workers()) TH_LOG("fork: %s", strerror(errno));
	sleep(1);
	while (h.rounds < k->rounds)
		hotplug_round(k->delay_ms, &h);
	sleep(1);
	stop_workers();
	note("totals: phase hotplug rounds %d offlines %d", h.rounds, h.offlines);
	note("hotplug: %d rounds, %d offlines, %d rounds without one, %d CPUs stuck offline",
	     h.rounds, h.offlines, h.empty_rounds, h.stuck_offline);
	EXPECT_EQ(0, h.empty_rounds) TH_LOG("hotplug: rounds that took no CPU offline");
	EXPECT_EQ(0, h.stuck_offline) TH_LOG("hotplug: CPUs that did not come back online");
	note("hotplug: no OpLog log held by an offline CPU (%d checks)", h.log_checks);
	EXPECT_LT(0, h.log_checks) TH_LOG("hotplug: no offline_logs check");
	EXPECT_EQ(0, h.log_fails) TH_LOG("hotplug: offline CPUs that held an OpLog log");
	check_common(_metadata, "hotplug");
}

/* ---- the faults phase ---- */

static bool faults_available(void)
{
	return !access(FAILSLAB "/task-filter", W_OK) &&
	       !access(FAIL_PAGE "/task-filter", W_OK);
}

/* Arms (@percent > 0) or disarms both attributes; 0 or -errno. */
static int faults_set(int percent)
{
	static const char * const dirs[] = { FAILSLAB, FAIL_PAGE };
	char val[16], times[16];
	unsigned int i;
	int ret = 0;

	snprintf(val, sizeof(val), "%d", percent);
	snprintf(times, sizeof(times), "%d", FAULT_TIMES);
	for (i = 0; i < ARRAY_SIZE(dirs); i++) {
		if (!percent) {
			ret |= write_attr(dirs[i], "probability", "0");
			continue;
		}
		ret |= write_attr(dirs[i], "task-filter", "Y");
		ret |= write_attr(dirs[i], "verbose", "0");
		ret |= write_attr(dirs[i], "interval", "1");
		ret |= write_attr(dirs[i], "space", "0");
		ret |= write_attr(dirs[i], "times", times);
		/* Sleeping slab allocations fail too; page ones only atomic. */
		ret |= write_attr(dirs[i], "ignore-gfp-wait", i ? "Y" : "N");
		/* fail_page_alloc's defaults spare order 0 and highmem. */
		if (i) {
			ret |= write_attr(dirs[i], "min-order", "0");
			ret |= write_attr(dirs[i], "ignore-gfp-highmem", "N");
		}
		ret |= write_attr(dirs[i], "probability", val);
	}
	return ret;
}

static long faults_injected(const char *dir)
{
	char path[128];
	long left;

	snprintf(path, sizeof(path), "%s/times", dir);
	if (sysfs_read_long(path, &left))
		return -1;
	return FAULT_TIMES - left;
}

/*
 * A CPU brought online by a marked task: it comes up, or the write fails
 * with ENOMEM and the CPU stays offline (the hotplug state machine rolled
 * back: QDo's daemon and masks, the clustered objects' and OpLog's
 * callbacks).  Returns the number of wrong outcomes, each printed.
 */
static int marked_onlines(int cpu, int *up, int *refused)
{
	int i, bad = 0, status, ret, on;
	pid_t pid;

	for (i = 0; i < ONLINE_TRIES; i++) {
		if (is_online(cpu) && sysfs_set_cpu_online(cpu, 0)) {
			note("CPU %d does not go offline", cpu);
			return bad + 1;
		}
		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			sh->faults = 1;
			mark();
			ret = sysfs_set_cpu_online(cpu, 1);
			/* The errno, 0 .. 255, as the exit status. */
			_exit(-ret & 0xff);
		}
		if (pid < 0 || waitpid(pid, &status, 0) != pid) {
			note("marked online: fork/waitpid: %s", strerror(errno));
			bad++;
			continue;
		}
		on = is_online(cpu);
		if (!WIFEXITED(status)) {
			note("marked online: child status %#x", status);
			bad++;
		} else if (!WEXITSTATUS(status)) {
			(*up)++;
			if (on != 1) {
				note("online succeeded, CPU %d offline", cpu);
				bad++;
			}
		} else if (WEXITSTATUS(status) == ENOMEM && on == 0) {
			(*refused)++;
		} else {
			note("marked online: %s, CPU %d %s", strerror(WEXITSTATUS(status)),
			     cpu, on ? "online" : "offline");
			bad++;
		}
	}
	ret = sysfs_set_cpu_online(cpu, 1);
	if (is_online(cpu) != 1) {
		note("CPU %d does not come back online: %s", cpu, strerror(-ret));
		bad++;
	}
	return bad;
}

/* The faults phase; fault injection must be there (faults_available()). */
static void phase_faults(struct __test_metadata *const _metadata,
			 const struct knobs *k)
{
	int up = 0, refused = 0, online_bad;
	long slab, page;

	start_phase(_metadata, 1);
	faults_armed = true;
	ASSERT_EQ(0, faults_set(k->percent))
		TH_LOG("arming %s and %s failed", FAILSLAB, FAIL_PAGE);
	ASSERT_EQ(0, start_workers()) TH_LOG("fork: %s", strerror(errno));
	sleep(k->fault_s);
	stop_workers();
	online_bad = marked_onlines(hp_cpus[0], &up, &refused);
	slab = faults_injected(FAILSLAB);
	page = faults_injected(FAIL_PAGE);
	faults_set(0);
	faults_armed = false;
	note("totals: phase faults failslab %ld fail_page_alloc %ld", slab, page);
	note("faults: %ld slab and %ld page allocations failed at %d%%",
	     slab, page, k->percent);
	EXPECT_LT(0, slab) TH_LOG("faults: no slab allocation failed");
	EXPECT_LT(0, page) TH_LOG("faults: no page allocation failed");
	note("faults: CPU %d online with allocations failing: %d up, %d refused with ENOMEM",
	     hp_cpus[0], up, refused);
	EXPECT_EQ(0, online_bad) TH_LOG("faults: wrong outcomes of a marked online");
	sh->faults = 0;
	check_common(_metadata, "faults");
}

/* ---- the knobs, and the fixture ---- */

/* The number in environment variable @name, or @def without one. */
static int env_int(const char *name, int def, int min, int max, int *val,
		   char *why, size_t size)
{
	const char *s = getenv(name);
	char *end;
	long v;

	*val = def;
	if (!s || !*s)
		return 0;
	errno = 0;
	v = strtol(s, &end, 0);
	if (errno || *end || v < min || v > max) {
		snprintf(why, size, "%s=%s: want a number from %d to %d", name, s,
			 min, max);
		return -1;
	}
	*val = v;
	return 0;
}

/* @k from the environment: 0, or -1 with @why. */
static int knobs_read(struct knobs *k, char *why, size_t size)
{
	const char *seed = getenv("TORTURE_SEED");
	char *end;

	if (env_int("TORTURE_ROUNDS", 8, 1, INT_MAX, &k->rounds, why, size) ||
	    env_int("TORTURE_FAULT_SECONDS", 8, 1, INT_MAX, &k->fault_s, why, size) ||
	    env_int("TORTURE_PERCENT", 10, 1, 100, &k->percent, why, size) ||
	    env_int("TORTURE_SECONDS", 0, 0, INT_MAX, &k->seconds, why, size) ||
	    env_int("TORTURE_DELAY_MS", 10, 0, INT_MAX / 1000, &k->delay_ms, why, size))
		return -1;
	k->seed = time(NULL);
	if (seed && *seed) {
		errno = 0;
		k->seed = strtoul(seed, &end, 0);
		if (errno || *end) {
			snprintf(why, size, "TORTURE_SEED=%s: not a number", seed);
			return -1;
		}
	}
	return 0;
}

/*
 * A test's timeout, in seconds, from the knobs (their defaults where one
 * is not a number: the test then fails in its setup).  A phase's slack
 * covers a stop whose workers had to be killed (twice STOP_TIMEOUT_S),
 * the end of the phase and, in the faults phase, the marked onlines;
 * a hotplug round gets ROUND_S.  The soak gets its seconds and what the
 * kselftest runner gives it besides (kselftests.sh: tmo).  Evaluated by
 * the harness's constructors, before the test runs.
 */
#define SLACK_S		(2 * STOP_TIMEOUT_S + 120)
#define ROUND_S		30
enum { T_HOTPLUG, T_FAULTS, T_SOAK };

static int test_timeout(int test)
{
	struct knobs k;
	char why[128];

	if (knobs_read(&k, why, sizeof(why)))
		k = (struct knobs){ .rounds = 8, .fault_s = 8 };
	switch (test) {
	case T_HOTPLUG:
		return SLACK_S + ROUND_S * (k.rounds < 1000 ? k.rounds : 1000);
	case T_FAULTS:
		return SLACK_S + 2 * (k.fault_s < 100000 ? k.fault_s : 100000);
	default:
		return 900 + (k.seconds < 1000000 ? k.seconds : 1000000);
	}
}

/* The old values of the switches; empty where one could not be read. */
struct switches {
	char dcache[16], inotify[16], maxq[32];
};

FIXTURE(torture) {
	struct knobs k;
	struct switches old;
	bool switched;
};

/* Turns a switch on, or puts it back: 0, or -1 after a message. */
static int write_switch(struct __test_metadata *const _metadata,
			const char *path, const char *val)
{
	int ret = sysfs_write_str(path, val);

	if (ret)
		TH_LOG("write %s to %s: %s", val, path, strerror(-ret));
	return ret ? -1 : 0;
}

/*
 * Puts the switches back: the dentry OpLog's to its old value (off if it
 * could not be read), the others where their old value could be read.
 */
static int restore_switches(struct __test_metadata *const _metadata,
			    const struct switches *old)
{
	int ret;

	ret = write_switch(_metadata, DCACHE_SWITCH, old->dcache[0] ? old->dcache : "0");
	if (old->inotify[0])
		ret |= write_switch(_metadata, INOTIFY_SWITCH, old->inotify);
	if (old->maxq[0])
		ret |= write_switch(_metadata, MAX_QUEUED, old->maxq);
	return ret;
}

/*
 * The requirements (root, a second CPU, QDo), else a skip; the switches
 * the workloads need: the dentry and inotify OpLogs on, and
 * max_queued_events, which inotify_init1() reads, with room for every
 * event of a phase.  A switch that does not take the write would run the
 * phases without what they test: the test fails.
 */
FIXTURE_SETUP(torture)
{
	char why[128], *slash;
	int ret;

	ASSERT_EQ(0, knobs_read(&self->k, why, sizeof(why))) TH_LOG("%s", why);
	if (geteuid())
		SKIP(return, "needs root");
	find_hotplug_cpus(sysconf(_SC_NPROCESSORS_CONF));
	if (!nr_hp)
		SKIP(return, "needs a second online CPU (CONFIG_HOTPLUG_CPU)");
	if (access(QDO_STATS, R_OK))
		SKIP(return, "%s missing (CONFIG_QDO, debugfs)", QDO_STATS);
	note("seed %u", self->k.seed);
	srandom(self->k.seed);
	nw = sysconf(_SC_NPROCESSORS_ONLN);
	nw = nw < 1 ? 1 : nw > MAX_WORKERS ? MAX_WORKERS : nw;
	missing = 0;

	/* ast_fuzz is built next to this program. */
	fuzz_path[0] = 0;
	if (readlink("/proc/self/exe", fuzz_path, sizeof(fuzz_path) - 16) > 0) {
		slash = strrchr(fuzz_path, '/');
		if (slash)
			snprintf(slash + 1, 16, "ast_fuzz");
	}
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, sh) TH_LOG("mmap: %s", strerror(errno));

	sysfs_read_str(DCACHE_SWITCH, self->old.dcache, sizeof(self->old.dcache));
	sysfs_read_str(INOTIFY_SWITCH, self->old.inotify, sizeof(self->old.inotify));
	sysfs_read_str(MAX_QUEUED, self->old.maxq, sizeof(self->old.maxq));
	ret = write_switch(_metadata, DCACHE_SWITCH, "1");
	if (!ret)
		ret = write_switch(_metadata, INOTIFY_SWITCH, "1");
	if (!ret)
		ret = write_switch(_metadata, MAX_QUEUED, "1048576");
	if (ret)
		restore_switches(_metadata, &self->old);
	ASSERT_EQ(0, ret) TH_LOG("a switch did not take the write");
	self->switched = true;
}

/*
 * Undoes what an assertion left (workers, armed faults, the tmpfs), and
 * puts the switches back: a write that fails there fails the test.
 */
FIXTURE_TEARDOWN(torture)
{
	if (nr_workers)
		stop_workers();
	if (faults_armed)
		faults_set(0);
	if (root_mounted && !umount2(root, MNT_DETACH))
		rmdir(root);
	if (self->switched) {
		EXPECT_EQ(0, restore_switches(_metadata, &self->old))
			TH_LOG("a switch did not take its old value back");
	}
	if (sh != MAP_FAILED)
		munmap(sh, sizeof(*sh));
}

/* ---- the tests ---- */

TEST_F_TIMEOUT(torture, hotplug, test_timeout(T_HOTPLUG))
{
	phase_hotplug(_metadata, &self->k);
	skip_if_missing(_metadata);
}

TEST_F_TIMEOUT(torture, faults, test_timeout(T_FAULTS))
{
	if (!faults_available())
		SKIP(return, NO_FAULTS);
	phase_faults(_metadata, &self->k);
	skip_if_missing(_metadata);
}

/*
 * make soak: the phases alternate until TORTURE_SECONDS have passed (the
 * last pass starts before), the faults phase where fault injection is
 * there; every pass checks as the tests above do.
 */
TEST_F_TIMEOUT(torture, soak, test_timeout(T_SOAK))
{
	bool faults = faults_available();
	int passes = 0;
	long t0;

	if (!self->k.seconds)
		SKIP(return, "TORTURE_SECONDS not set: the soak of make soak");
	if (!faults)
		not_here("soak", M_FAULTS);
	t0 = now_ms() / 1000;
	do {
		phase_hotplug(_metadata, &self->k);
		if (faults)
			phase_faults(_metadata, &self->k);
		passes++;
	} while (now_ms() / 1000 - t0 < self->k.seconds);
	note("totals: passes %d seconds %ld", passes, now_ms() / 1000 - t0);
	skip_if_missing(_metadata);
}

TEST_HARNESS_MAIN
