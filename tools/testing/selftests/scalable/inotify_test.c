// SPDX-License-Identifier: GPL-2.0
/*
 * inotify(7) semantics while events are generated from several CPUs at once.
 *
 * The oracle for the OpLog inotify queue (per-CPU operation logs merged in
 * timestamp order at read time, switched by /sys/kernel/debug/
 * inotify_oplog/enabled): every case must give the same result with the
 * switch off ("stock" variant), on ("oplog" variant), and on a kernel
 * without the switch (the "oplog" variant skips there).
 *
 *  per_file_order    one writer thread per CPU, each with its own files:
 *                    create, modify, close, rename, delete; every file's
 *                    events and every thread's events in program order
 *  coalescing        identical events merge only into the unread tail of
 *                    the queue, also when the two come from two CPUs
 *  overflow          max_queued_events events, then one IN_Q_OVERFLOW;
 *                    none without loss; lost events are each thread's last
 *  ignored_last      IN_IGNORED after inotify_rm_watch() and after the
 *                    watched file is deleted is the watch's last event
 *  oneshot           IN_ONESHOT: one IN_MODIFY, then IN_IGNORED, with the
 *                    writes from one CPU after another and all at once
 *  mask_add_create   IN_MASK_ADD, IN_MASK_CREATE (EEXIST), both (EINVAL)
 *  fionread          FIONREAD is the byte count read() returns
 *  blocking_read     read() sleeping on one CPU wakes for an event from
 *                    another
 *  poll_and_epoll    poll(), level-triggered and edge-triggered epoll
 *  sigio             O_ASYNC: SIGIO for an event from another CPU
 *  many_cpus_count   exact per-file counts with a concurrent reader
 *
 * Writers are pinned to distinct CPUs of the affinity mask (at most 16, at
 * least two threads even with one CPU).  Each case generates at most about
 * 2000 events, so that it stays within seconds on an emulated guest.  Work
 * happens in a private directory under /tmp, removed at the end.
 * "overflow" sets /proc/sys/fs/inotify/max_queued_events to 64 (root; it
 * skips otherwise), the others raise it if it is below what they queue;
 * the old value is restored.
 *
 * Where the stock kernel itself races: an event whose generation was
 * already under way on another CPU when a watch went away (IN_ONESHOT
 * firing, inotify_rm_watch()) can be queued after the watch's IN_IGNORED.
 * inotify_handle_inode_event() reads the wd before it queues the event and
 * inotify_ignored_and_remove_idr() queues IN_IGNORED before it clears the
 * wd, so a writer can queue "stragglers" after IN_IGNORED until the wd is
 * cleared: more than one per writer when the remover is slow in between
 * (a stock release boot saw two from one writer).  The cases that remove
 * a watch under load therefore allow stragglers of the kind the writers
 * generate, in each writer's order, however many, and check the strict
 * rule (nothing after IN_IGNORED) where the writers have finished first.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "sched_util.h"
#include "sysfs_util.h"

#ifndef IN_MASK_CREATE
#define IN_MASK_CREATE		0x10000000
#endif

#define SWITCH			"/sys/kernel/debug/inotify_oplog/enabled"
#define MAXQ			"/proc/sys/fs/inotify/max_queued_events"
#define STATS			"/sys/kernel/debug/oplog/inotify/stats"
#define MAX_CPUS		16
#define MAX_THREADS		MAX_CPUS
#define EV_SIZE			sizeof(struct inotify_event)
/* The largest single event: a NAME_MAX name, its NUL, padding. */
#define EV_MAX			(EV_SIZE + NAME_MAX + 1)
#define BUDGET			1800	/* events per case, about */
#define WAIT_MS			10000	/* for a wake-up, a child, a reader */
#define OVF_MAX			64	/* max_queued_events of "overflow" */

/* CPUs of the affinity mask at setup; worker i runs on cpus[i % ncpus]. */
static int g_cpus[MAX_CPUS], g_ncpus, g_nthreads;

static int cpu_of(int i)
{
	return g_cpus[i % g_ncpus];
}

/*
 * The "hits" count of the inotify OpLog type (lib/oplog.c), -1 without
 * one: events that went to a per-CPU log on its fast path.
 */
static long oplog_hits(void)
{
	return sysfs_stat(STATS, "hits");
}

static int rm_one(const char *path, const struct stat *sb, int type,
		  struct FTW *ftw)
{
	remove(path);
	return 0;
}

static void rm_rf(const char *dir)
{
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static int touch(const char *path)
{
	int fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);

	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

/* One write(2) to @path: one IN_MODIFY (and IN_OPEN, IN_CLOSE_WRITE). */
static int modify(const char *path)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	int ret;

	if (fd < 0)
		return -1;
	ret = pwrite(fd, "x", 1, 0) == 1 ? 0 : -1;
	close(fd);
	return ret;
}

/* ---- reading and recording events ---- */

struct ev {
	int wd;
	uint32_t mask, cookie, len;
	char name[NAME_MAX + 1];
};

struct evlog {
	struct ev *ev;
	int n, cap;
	long bytes;		/* sum of EV_SIZE + len */
};

typedef int (*ev_fn)(const struct inotify_event *e, void *arg);

/* The read buffer, aligned for struct inotify_event. */
static __u64 rbuf_words[(1 << 18) / sizeof(__u64)];
#define rbuf ((char *)rbuf_words)

/*
 * One read() of at most @size bytes, each event passed to @fn: the bytes
 * read, 0 if the queue is empty (EAGAIN), or -errno; -EPROTO for a
 * malformed buffer (an event crossing the end, a name without NUL).
 */
static long read_once(int fd, size_t size, ev_fn fn, void *arg)
{
	ssize_t n = read(fd, rbuf, size);
	char *p;
	int ret;

	if (n < 0)
		return errno == EAGAIN ? 0 : -errno;
	if (n == 0)
		return -EPROTO;
	for (p = rbuf; p < rbuf + n; ) {
		struct inotify_event *e = (struct inotify_event *)p;

		if (p + EV_SIZE > rbuf + n || p + EV_SIZE + e->len > rbuf + n)
			return -EPROTO;
		if (e->len && strnlen(e->name, e->len) == e->len)
			return -EPROTO;
		ret = fn(e, arg);
		if (ret)
			return ret;
		p += EV_SIZE + e->len;
	}
	return n;
}

/* read() until EAGAIN (@fd is O_NONBLOCK): the bytes read or -errno. */
static long drain(int fd, ev_fn fn, void *arg)
{
	long total = 0, n;

	while ((n = read_once(fd, sizeof(rbuf_words), fn, arg)) > 0)
		total += n;
	return n < 0 ? n : total;
}

static int log_ev(const struct inotify_event *e, void *arg)
{
	struct evlog *l = arg;
	struct ev *d;
	size_t len;

	if (l->n == l->cap)
		return -ENOSPC;
	d = &l->ev[l->n++];
	d->wd = e->wd;
	d->mask = e->mask;
	d->cookie = e->cookie;
	d->len = e->len;
	len = e->len ? strnlen(e->name, e->len) : 0;
	if (len > NAME_MAX)
		len = NAME_MAX;
	memcpy(d->name, e->name, len);
	d->name[len] = 0;
	l->bytes += EV_SIZE + e->len;
	return 0;
}

static void log_init(struct evlog *l, int cap)
{
	l->ev = calloc(cap, sizeof(*l->ev));
	l->cap = l->ev ? cap : 0;
	l->n = 0;
	l->bytes = 0;
}

static void log_reset(struct evlog *l)
{
	l->n = 0;
	l->bytes = 0;
}

/* Empty @l, then read the queue into it: the bytes read or -errno. */
static long drain_log(int fd, struct evlog *l)
{
	log_reset(l);
	return drain(fd, log_ev, l);
}

static const char *mask_name(uint32_t m)
{
	static char buf[16];

	switch (m) {
	case IN_ACCESS:		return "ACCESS";
	case IN_MODIFY:		return "MODIFY";
	case IN_ATTRIB:		return "ATTRIB";
	case IN_CLOSE_WRITE:	return "CLOSE_WRITE";
	case IN_CLOSE_NOWRITE:	return "CLOSE_NOWRITE";
	case IN_OPEN:		return "OPEN";
	case IN_MOVED_FROM:	return "MOVED_FROM";
	case IN_MOVED_TO:	return "MOVED_TO";
	case IN_CREATE:		return "CREATE";
	case IN_DELETE:		return "DELETE";
	case IN_DELETE_SELF:	return "DELETE_SELF";
	case IN_MOVE_SELF:	return "MOVE_SELF";
	case IN_IGNORED:	return "IGNORED";
	case IN_Q_OVERFLOW:	return "Q_OVERFLOW";
	}
	snprintf(buf, sizeof(buf), "%#x", m);
	return buf;
}

static const char *ev_str(const struct ev *e, char *buf, size_t size)
{
	snprintf(buf, size, "{wd=%d %s cookie=%u len=%u name='%s'}", e->wd,
		 mask_name(e->mask), e->cookie, e->len, e->name);
	return buf;
}

struct want {
	int wd;
	uint32_t mask;
	const char *name;	/* NULL: no name (len 0) */
};

/* @l must hold exactly the events @w, in order; 0 or -1 with @why. */
static int match(const struct evlog *l, const struct want *w, int n,
		 char *why, size_t size)
{
	char b[NAME_MAX + 64];
	int i;

	for (i = 0; i < l->n && i < n; i++) {
		const struct ev *e = &l->ev[i];
		bool ok = e->wd == w[i].wd && e->mask == w[i].mask;

		if (w[i].name)
			ok = ok && !strcmp(e->name, w[i].name);
		else
			ok = ok && e->len == 0;
		if (!ok) {
			snprintf(why, size, "event %d is %s, want wd=%d %s %s",
				 i, ev_str(e, b, sizeof(b)), w[i].wd,
				 mask_name(w[i].mask), w[i].name ?: "");
			return -1;
		}
	}
	if (l->n != n) {
		snprintf(why, size, "read %d events, want %d%s%s", l->n, n,
			 l->n > n ? "; first extra: " : "",
			 l->n > n ? ev_str(&l->ev[n], b, sizeof(b)) : "");
		return -1;
	}
	return 0;
}

/* The events read into @l must be exactly these; @ctx names the step. */
#define ASSERT_EVENTS(l, ctx, ...) do {					\
	const struct want __w[] = { __VA_ARGS__ };			\
	char __why[512];						\
									\
	ASSERT_EQ(0, match(l, __w, ARRAY_SIZE(__w),			\
			   __why, sizeof(__why)))			\
		TH_LOG("%s: %s", ctx, __why);				\
} while (0)

/* ---- worker threads ---- */

struct shared {
	const char *dir;
	const char *path;	/* a shared file */
	char tag;		/* first letter of the names of a phase */
	int per;		/* operations per worker */
	int files;		/* files per worker */
	bool hold;		/* modifiers: keep the file open until stopped */
	bool pace;		/* modifiers: sleep 100 us after each write */
	int stop;		/* __atomic */
	int done;		/* __atomic: workers finished */
	pthread_barrier_t start;
};

struct worker {
	pthread_t th;
	struct shared *sh;
	int idx, cpu;
	int n;			/* operations to do (creators) */
	int count;		/* operations done */
	int err;		/* errno of the first failure */
	const char *op;		/* and what failed */
};

static void fail(struct worker *w, const char *op)
{
	if (!w->err) {
		w->err = errno ?: EIO;
		w->op = op;
	}
}

static bool stopped(struct shared *sh)
{
	return __atomic_load_n(&sh->stop, __ATOMIC_ACQUIRE);
}

/* Start @n workers running @fn, worker i pinned to cpu_of(i + off). */
static int start_workers(struct worker *w, int n, struct shared *sh,
			 void *(*fn)(void *), int off)
{
	int i;

	sh->stop = 0;
	sh->done = 0;
	if (pthread_barrier_init(&sh->start, NULL, n + 1))
		return -1;
	for (i = 0; i < n; i++) {
		w[i].sh = sh;
		w[i].idx = i;
		w[i].cpu = cpu_of(i + off);
		w[i].count = 0;
		w[i].err = 0;
		w[i].op = NULL;
		if (pthread_create(&w[i].th, NULL, fn, &w[i])) {
			/* Cannot unwind a barrier: give up. */
			fprintf(stderr, "# pthread_create failed\n");
			exit(KSFT_FAIL);
		}
	}
	pthread_barrier_wait(&sh->start);
	return 0;
}

/* Wait for @n workers; with @stop, tell them to stop first. */
static void join_workers(struct worker *w, int n, bool stop)
{
	int i;

	if (stop)
		__atomic_store_n(&w[0].sh->stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < n; i++)
		pthread_join(w[i].th, NULL);
	pthread_barrier_destroy(&w[0].sh->start);
}

static bool all_done(struct shared *sh, int n)
{
	return __atomic_load_n(&sh->done, __ATOMIC_ACQUIRE) == n;
}

static void worker_begin(struct worker *w)
{
	if (pin_cpu(w->cpu))
		fail(w, "sched_setaffinity");
	pthread_barrier_wait(&w->sh->start);
}

static void *worker_end(struct worker *w)
{
	__atomic_add_fetch(&w->sh->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* The first failure of any worker, as 0 or -1 with @why. */
static int worker_errors(struct worker *w, int n, char *why, size_t size)
{
	int i;

	for (i = 0; i < n; i++) {
		if (w[i].err) {
			snprintf(why, size, "worker %d (cpu %d): %s: %s", i,
				 w[i].cpu, w[i].op, strerror(w[i].err));
			return -1;
		}
	}
	return 0;
}

/*
 * Creator: DIR/<tag><idx>_<k> for k = 0 .. w->n - 1 (or until stopped),
 * one IN_CREATE each on a directory watch.
 */
static void *create_worker(void *arg)
{
	struct worker *w = arg;
	struct shared *sh = w->sh;
	char path[PATH_MAX];
	int k;

	worker_begin(w);
	for (k = 0; k < w->n && !stopped(sh) && !w->err; k++) {
		snprintf(path, sizeof(path), "%s/%c%d_%d", sh->dir, sh->tag,
			 w->idx, k);
		if (touch(path))
			fail(w, "create");
		else
			w->count++;
	}
	return worker_end(w);
}

/*
 * Modifier: pwrite() to sh->path until stopped or w->n writes; with
 * sh->hold the file stays open until stopped, with sh->pace the writes
 * are spread out.
 */
static void *modify_worker(void *arg)
{
	struct worker *w = arg;
	struct shared *sh = w->sh;
	int fd, k;

	fd = open(sh->path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		fail(w, "open");
	worker_begin(w);
	for (k = 0; fd >= 0 && k < w->n && !stopped(sh); k++) {
		if (pwrite(fd, "x", 1, 0) != 1) {
			fail(w, "pwrite");
			break;
		}
		w->count++;
		if (sh->pace)
			usleep(100);
	}
	while (sh->hold && !stopped(sh))
		sleep_ms(1);
	if (fd >= 0)
		close(fd);
	return worker_end(w);
}

/*
 * The IN_CREATE events of creators with tag @tag in @l (wd @wd): each
 * creator's names must come in the order it created them, none missing in
 * between (k = 0, 1, 2, ...).  Their numbers go to @got[].  Events of other
 * kinds or names are not looked at.
 */
static int create_order(const struct evlog *l, int wd, char tag, int nw,
			int *got, char *why, size_t size)
{
	char b[NAME_MAX + 64], t;
	int i, idx, k, end;

	memset(got, 0, nw * sizeof(*got));
	for (i = 0; i < l->n; i++) {
		const struct ev *e = &l->ev[i];

		if (e->wd != wd || e->mask != IN_CREATE || e->name[0] != tag)
			continue;
		end = 0;
		if (sscanf(e->name, "%c%d_%d%n", &t, &idx, &k, &end) != 3 ||
		    e->name[end] || idx < 0 || idx >= nw) {
			snprintf(why, size, "event %d: unexpected %s", i,
				 ev_str(e, b, sizeof(b)));
			return -1;
		}
		if (k != got[idx]) {
			snprintf(why, size,
				 "event %d: %s, but creator %d's next name is %c%d_%d (%s)",
				 i, ev_str(e, b, sizeof(b)), idx, tag, idx,
				 got[idx], k < got[idx] ? "reordered or repeated"
				 : "an earlier one lost or reordered after it");
			return -1;
		}
		got[idx]++;
	}
	return 0;
}

static int count_ev(const struct evlog *l, int wd, uint32_t mask)
{
	int i, n = 0;

	for (i = 0; i < l->n; i++)
		n += l->ev[i].wd == wd && l->ev[i].mask == mask;
	return n;
}

/* ---- child processes for the wake-up cases ---- */

/* Wait (bounded) until @pid sleeps, then a little longer. */
static void wait_sleeping(pid_t pid)
{
	long end = now_ms() + WAIT_MS;

	while (proc_task_state(pid, pid) != 'S' && now_ms() < end)
		sleep_ms(1);
	sleep_ms(20);
}

/*
 * A child pinned to @cpu that, once @sleeper (if not 0) sleeps, writes one
 * byte to @path (@creates == 0) or creates @creates files @path/<tag><k>.
 */
static pid_t spawn_gen(int cpu, pid_t sleeper, const char *path, int creates,
		       char tag)
{
	char name[PATH_MAX];
	pid_t pid = fork();
	int k, ret = 0;

	if (pid)
		return pid;
	if (pin_cpu(cpu))
		_exit(2);
	if (sleeper)
		wait_sleeping(sleeper);
	if (!creates)
		ret = modify(path);
	for (k = 0; k < creates && !ret; k++) {
		snprintf(name, sizeof(name), "%s/%c%d", path, tag, k);
		ret = touch(name);
	}
	_exit(ret ? 1 : 0);
}

/* 0 if @pid exited 0 within WAIT_MS, else -1 (and it is killed). */
static int wait_child(pid_t pid)
{
	int status;
	pid_t r;

	if (pid < 0)
		return -1;
	r = waitpid_ms(pid, &status, WAIT_MS);
	if (r == 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		return -1;
	}
	return r == pid && WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -1;
}

static void on_alarm(int sig)
{
}

/* ---- fixture ---- */

FIXTURE(inotify) {
	char dir[64];
	char saved_switch[16];
	bool switched;
	long saved_maxq;	/* -1: not changed */
};

FIXTURE_VARIANT(inotify) {
	const char *enabled;
};

FIXTURE_VARIANT_ADD(inotify, stock) {
	.enabled = "0",
};

FIXTURE_VARIANT_ADD(inotify, oplog) {
	.enabled = "1",
};

FIXTURE_SETUP(inotify)
{
	bool have_switch = access(SWITCH, F_OK) == 0;

	self->switched = false;
	self->saved_maxq = -1;
	self->dir[0] = 0;
	if (!have_switch && !strcmp(variant->enabled, "1"))
		SKIP(return, "no inotify_oplog switch");
	if (have_switch && sysfs_read_str(SWITCH, self->saved_switch,
					  sizeof(self->saved_switch)) < 0)
		SKIP(return, "cannot read %s (not root?)", SWITCH);

	g_ncpus = affinity_cpus(g_cpus, MAX_CPUS);
	ASSERT_GT(g_ncpus, 0);
	g_nthreads = g_ncpus < 2 ? 2 : g_ncpus;

	snprintf(self->dir, sizeof(self->dir), "/tmp/inotify_test.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));

	if (have_switch) {
		if (sysfs_set_str(SWITCH, variant->enabled)) {
			sysfs_write_str(SWITCH, self->saved_switch);
			rmdir(self->dir);
			ASSERT_TRUE(false) TH_LOG("cannot set %s to %s", SWITCH,
						  variant->enabled);
		}
		self->switched = true;
	}
}

/*
 * Puts max_queued_events and the switch back; a write that fails there
 * fails the test.  In the parent (the fixture is shared memory): after
 * an ASSERT, longjmp() can restore the harness's child pid from a
 * register (-Wclobbered in __TEST_F_IMPL()), so that the test's child
 * takes the parent's path and skips a child's teardown; a parent's
 * teardown runs once, in whichever process takes that path first.  No
 * EXPECT here: an ASSERT of the test leaves _metadata->trigger set.
 */
FIXTURE_TEARDOWN_PARENT(inotify)
{
	bool restored = true;

	if (self->saved_maxq >= 0 && sysfs_write_long(MAXQ, self->saved_maxq)) {
		TH_LOG("cannot restore %s to %ld", MAXQ, self->saved_maxq);
		restored = false;
	}
	if (self->switched && sysfs_write_str(SWITCH, self->saved_switch)) {
		TH_LOG("cannot restore %s to %s", SWITCH, self->saved_switch);
		restored = false;
	}
	if (self->dir[0])
		rm_rf(self->dir);
	if (!restored)
		_metadata->exit_code = KSFT_FAIL;
}

/* Set max_queued_events (for instances created from now on). */
static int set_maxq(struct _test_data_inotify *self, long v)
{
	long old;

	if (sysfs_read_long(MAXQ, &old))
		return -1;
	if (self->saved_maxq < 0)
		self->saved_maxq = old;
	return sysfs_write_long(MAXQ, v);
}

static void restore_maxq(struct _test_data_inotify *self)
{
	if (self->saved_maxq >= 0 && !sysfs_write_long(MAXQ, self->saved_maxq))
		self->saved_maxq = -1;
}

/* max_queued_events at least @min: 0, or -1 (not root, cannot write). */
static int ensure_maxq(struct _test_data_inotify *self, long min)
{
	long cur;

	if (!sysfs_read_long(MAXQ, &cur) && cur >= min)
		return 0;
	if (geteuid())
		return -1;
	return set_maxq(self, min);
}

/* ---- 1. per_file_order ---- */

#define PF_WRITES	3	/* write()s per file */
#define PF_EVENTS	(6 + PF_WRITES)

enum {
	PF_CREATE,
	PF_OPEN,
	PF_MODIFY,
	PF_MODIFY_OR_CLOSE,
	PF_MOVED_FROM,
	PF_MOVED_TO,
	PF_DELETE,
};

struct pf_state {
	int file, state, mods;
	uint32_t cookie;
};

struct pf_check {
	struct pf_state st[MAX_THREADS];
	int nthreads, files, wd;
	uint32_t *cookies;
	int ncookies;
	long events;
	bool bad;
	char why[512];
};

static void *pf_writer(void *arg)
{
	struct worker *w = arg;
	struct shared *sh = w->sh;
	char a[PATH_MAX], b[PATH_MAX];
	int j, k, fd;

	worker_begin(w);
	for (j = 0; j < sh->files && !w->err && !stopped(sh); j++) {
		snprintf(a, sizeof(a), "%s/t%02d_f%04d", sh->dir, w->idx, j);
		snprintf(b, sizeof(b), "%s/t%02d_g%04d", sh->dir, w->idx, j);
		/*
		 * A thread's events, and one file's, go to the logs of
		 * several CPUs, so that only a merge in timestamp order
		 * keeps them in program order.
		 */
		if (pin_cpu(cpu_of(w->idx + 2 * j)))
			fail(w, "sched_setaffinity");
		fd = open(a, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
		if (fd < 0) {
			fail(w, "create");
			break;
		}
		for (k = 0; k < PF_WRITES; k++)
			if (write(fd, "x", 1) != 1)
				fail(w, "write");
		close(fd);
		if (pin_cpu(cpu_of(w->idx + 2 * j + 1)))
			fail(w, "sched_setaffinity");
		if (rename(a, b))
			fail(w, "rename");
		else if (unlink(b))
			fail(w, "unlink");
		w->count++;
	}
	return worker_end(w);
}

static int pf_bad(struct pf_check *c, const struct inotify_event *e,
		  const char *msg)
{
	char b[NAME_MAX + 64];
	struct ev d = { e->wd, e->mask, e->cookie, e->len, "" };

	if (e->len)
		snprintf(d.name, sizeof(d.name), "%s", e->name);
	c->bad = true;
	snprintf(c->why, sizeof(c->why), "event %ld %s: %s", c->events,
		 ev_str(&d, b, sizeof(b)), msg);
	return 0;
}

static int pf_event(const struct inotify_event *e, void *arg)
{
	static const uint32_t want[] = { IN_CREATE, IN_OPEN, IN_MODIFY, 0,
					 IN_MOVED_FROM, IN_MOVED_TO, IN_DELETE };
	struct pf_check *c = arg;
	struct pf_state *s;
	int t, j, end = 0;
	char kind, exp[128];

	c->events++;
	if (c->bad)
		return 0;
	if (e->wd != c->wd || !e->len ||
	    sscanf(e->name, "t%d_%c%d%n", &t, &kind, &j, &end) != 3 ||
	    e->name[end] || t < 0 || t >= c->nthreads || j < 0 ||
	    j >= c->files || (kind != 'f' && kind != 'g'))
		return pf_bad(c, e, "unexpected event");
	s = &c->st[t];
	if (s->file >= c->files)
		return pf_bad(c, e, "event after the thread's last file");
	snprintf(exp, sizeof(exp), "thread %d: want %s of t%02d_%c%04d", t,
		 s->state == PF_MODIFY_OR_CLOSE ? "MODIFY or CLOSE_WRITE" :
		 mask_name(want[s->state]),
		 t, s->state >= PF_MOVED_TO ? 'g' : 'f', s->file);
	/* Another file of the thread: its sequence is out of order. */
	if (j != s->file || kind != (s->state >= PF_MOVED_TO ? 'g' : 'f')) {
		strcat(exp, " (per-thread order broken)");
		return pf_bad(c, e, exp);
	}
	switch (s->state) {
	case PF_MODIFY_OR_CLOSE:
		if (e->mask == IN_MODIFY && s->mods < PF_WRITES) {
			s->mods++;
			return 0;
		}
		if (e->mask != IN_CLOSE_WRITE)
			break;
		s->state++;
		return 0;
	case PF_MODIFY:
		if (e->mask != IN_MODIFY)
			break;
		s->mods = 1;
		s->state++;
		return 0;
	case PF_MOVED_FROM:
		if (e->mask != IN_MOVED_FROM)
			break;
		if (!e->cookie)
			return pf_bad(c, e, "MOVED_FROM without a cookie");
		s->cookie = e->cookie;
		c->cookies[c->ncookies++] = e->cookie;
		s->state++;
		return 0;
	case PF_MOVED_TO:
		if (e->mask != IN_MOVED_TO)
			break;
		if (e->cookie != s->cookie)
			return pf_bad(c, e, "MOVED_TO cookie is not the MOVED_FROM's");
		s->state++;
		return 0;
	case PF_DELETE:
		if (e->mask != IN_DELETE)
			break;
		s->file++;
		s->state = PF_CREATE;
		return 0;
	default:
		if (e->mask != want[s->state])
			break;
		s->state++;
		return 0;
	}
	strcat(exp, " (per-file order broken)");
	return pf_bad(c, e, exp);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Catches: events of one file, or of one thread, delivered out of program
 * order (CREATE after MODIFY, DELETE before CREATE, the next file's events
 * before this one's DELETE), lost or duplicated events, a MOVED_TO without
 * the MOVED_FROM's cookie, a cookie used twice, or more MODIFY events than
 * write()s.  Each writer moves to the next CPU for every file and again
 * before the rename, so a file's events and a thread's are spread over the
 * CPUs' logs: a merge at read time that is not in timestamp order (one that
 * appends the logs one after another), or timestamps that are not
 * monotonic across CPUs, reorders them.  With the switch on, the OpLog's
 * hit count must grow (the events really went through per-CPU logs); off,
 * it must not.
 */
TEST_F_TIMEOUT(inotify, per_file_order, 120)
{
	struct worker w[MAX_THREADS] = {};
	struct shared sh = { .dir = self->dir };
	struct pf_check *c;
	char why[512] = "";
	int T = g_nthreads, fd, t, i, err = 0;
	long end, rc = 0, hits;
	bool done;

	ASSERT_EQ(0, ensure_maxq(self, 4 * BUDGET))
		TH_LOG("max_queued_events too small and cannot be raised");
	sh.files = BUDGET / (T * PF_EVENTS);
	c = calloc(1, sizeof(*c));
	ASSERT_NE(NULL, c);
	c->nthreads = T;
	c->files = sh.files;
	c->cookies = calloc(T * sh.files, sizeof(*c->cookies));
	ASSERT_NE(NULL, c->cookies);

	fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	ASSERT_GE(fd, 0);
	c->wd = inotify_add_watch(fd, self->dir, IN_ALL_EVENTS);
	ASSERT_GE(c->wd, 0);
	hits = oplog_hits();

	ASSERT_EQ(0, start_workers(w, T, &sh, pf_writer, 0));
	end = now_ms() + 60000;
	do {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		done = all_done(&sh, T);
		if (!done)
			poll(&p, 1, 20);
		/* After every writer returned: all their events are queued. */
		rc = drain(fd, pf_event, c);
		if (rc < 0 || c->bad)
			break;
		if (!done && now_ms() > end) {
			err = ETIMEDOUT;
			break;
		}
	} while (!done);
	join_workers(w, T, true);
	close(fd);

	ASSERT_EQ(0, worker_errors(w, T, why, sizeof(why))) TH_LOG("%s", why);
	ASSERT_EQ(0, err) TH_LOG("writers did not finish in 60 s");
	if (hits >= 0 && !strcmp(variant->enabled, "1")) {
		ASSERT_LT(hits, oplog_hits())
			TH_LOG("switch on, but no event went to a per-CPU log");
	} else if (hits >= 0) {
		ASSERT_EQ(hits, oplog_hits())
			TH_LOG("switch off, but events went to per-CPU logs");
	}
	ASSERT_LE(0, rc) TH_LOG("read: %s", strerror(-rc));
	ASSERT_FALSE(c->bad) TH_LOG("%s", c->why);
	for (t = 0; t < T; t++) {
		struct pf_state *s = &c->st[t];

		ASSERT_EQ(sh.files, s->file)
			TH_LOG("thread %d: events of file %d end at step %d: lost",
			       t, s->file, s->state);
	}
	qsort(c->cookies, c->ncookies, sizeof(*c->cookies), cmp_u32);
	for (i = 1; i < c->ncookies; i++)
		ASSERT_NE(c->cookies[i - 1], c->cookies[i])
			TH_LOG("rename cookie %u used twice", c->cookies[i]);
	TH_LOG("%d threads x %d files, %ld events", T, sh.files, c->events);
	free(c->cookies);
	free(c);
}

/* ---- 2. coalescing ---- */

/*
 * Catches: identical events not merged while the first is unread at the
 * tail (the queue fills with duplicates), also when the second comes from
 * another CPU (a merge that only looks at the local CPU's log); a merge
 * with an identical event that is not the tail (A, B, A must stay three
 * events: a per-CPU log's own tail is not the queue's tail), or with one
 * already read (the new event would be lost); an event logged while an
 * identical one waits unread at the tail of the queue and not merged
 * into it (a reader that applies the logs only to an empty queue).
 */
TEST_F(inotify, coalescing)
{
	char a[PATH_MAX], b[PATH_MAX], cpath[PATH_MAX], why[512] = "";
	int fd, fa, fb, fc, wa, wb, wc, i;
	int c0 = cpu_of(0), c1 = cpu_of(1);
	struct evlog l;

	log_init(&l, 64);
	ASSERT_NE(NULL, l.ev);
	snprintf(a, sizeof(a), "%s/a", self->dir);
	snprintf(b, sizeof(b), "%s/b", self->dir);
	snprintf(cpath, sizeof(cpath), "%s/c", self->dir);
	ASSERT_EQ(0, touch(a));
	ASSERT_EQ(0, touch(b));
	ASSERT_EQ(0, touch(cpath));
	fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	ASSERT_GE(fd, 0);
	wa = inotify_add_watch(fd, a, IN_MODIFY);
	wb = inotify_add_watch(fd, b, IN_MODIFY);
	wc = inotify_add_watch(fd, cpath, IN_MODIFY | IN_CLOSE_WRITE);
	ASSERT_GE(wa, 0);
	ASSERT_GE(wb, 0);
	ASSERT_GE(wc, 0);
	fa = open(a, O_WRONLY | O_CLOEXEC);
	fb = open(b, O_WRONLY | O_CLOEXEC);
	ASSERT_GE(fa, 0);
	ASSERT_GE(fb, 0);
	ASSERT_EQ(0, pin_cpu(c0));

	/* Five identical events, unread: one. */
	for (i = 0; i < 5; i++)
		ASSERT_EQ(1, pwrite(fa, "x", 1, 0));
	ASSERT_LE(0, drain_log(fd, &l));
	ASSERT_EVENTS(&l, "A x5 unread", { wa, IN_MODIFY });

	/* A, B, A: the second A is not identical to the tail. */
	ASSERT_EQ(1, pwrite(fa, "x", 1, 0));
	ASSERT_EQ(1, pwrite(fb, "x", 1, 0));
	ASSERT_EQ(1, pwrite(fa, "x", 1, 0));
	ASSERT_LE(0, drain_log(fd, &l));
	ASSERT_EVENTS(&l, "A, B, A", { wa, IN_MODIFY }, { wb, IN_MODIFY },
		      { wa, IN_MODIFY });

	/* Merge only with unread events: read, then the same event again. */
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(1, pwrite(fa, "x", 1, 0));
		if (i == 2)
			ASSERT_EQ(1, pwrite(fa, "x", 1, 0));
		ASSERT_LE(0, drain_log(fd, &l));
		ASSERT_EVENTS(&l, "A after a read", { wa, IN_MODIFY });
	}

	/*
	 * The first event in the queue (FIONREAD applied it), an identical
	 * one logged after it, from this CPU and then from the other: one
	 * each time, as on the locked queue, which merges into the unread
	 * tail.
	 */
	for (i = 0; i < 2; i++) {
		int n;

		ASSERT_EQ(0, pin_cpu(c0));
		ASSERT_EQ(1, pwrite(fa, "x", 1, 0));
		ASSERT_EQ(0, ioctl(fd, FIONREAD, &n));
		ASSERT_LT(0, n);
		ASSERT_EQ(0, pin_cpu(i ? c1 : c0));
		ASSERT_EQ(1, pwrite(fa, "x", 1, 0));
		ASSERT_LE(0, drain_log(fd, &l));
		snprintf(why, sizeof(why), "A queued, A logged on cpu %d",
			 i ? c1 : c0);
		ASSERT_EVENTS(&l, why, { wa, IN_MODIFY });
	}

	/*
	 * B and A queued (FIONREAD applied them), then A again, logged: a
	 * read() takes B without the logs, but applies them before it takes
	 * the tail, so the logged A merges into the unread A, as on the
	 * locked queue (and the oplog variant checks that it was logged).
	 */
	{
		long logged0, logged1;
		int n;

		ASSERT_EQ(0, pin_cpu(c0));
		ASSERT_EQ(1, pwrite(fb, "x", 1, 0));
		ASSERT_EQ(1, pwrite(fa, "x", 1, 0));
		ASSERT_EQ(0, ioctl(fd, FIONREAD, &n));
		ASSERT_LT(0, n);
		logged0 = sysfs_stat(STATS, "queued");
		ASSERT_EQ(1, pwrite(fa, "x", 1, 0));
		logged1 = sysfs_stat(STATS, "queued");
		if (!strcmp(variant->enabled, "1"))
			ASSERT_LT(logged0, logged1) TH_LOG("the A was not logged");
		ASSERT_LE(0, drain_log(fd, &l));
		ASSERT_EVENTS(&l, "B, A queued, A logged",
			      { wb, IN_MODIFY }, { wa, IN_MODIFY });
	}

	/* Identical events from two CPUs, unread: one. */
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, pin_cpu(i & 1 ? c1 : c0));
		ASSERT_EQ(1, pwrite(fa, "x", 1, 0));
	}
	ASSERT_LE(0, drain_log(fd, &l));
	snprintf(why, sizeof(why), "A on cpus %d, %d, %d, %d unread", c0, c1,
		 c0, c1);
	ASSERT_EVENTS(&l, why, { wa, IN_MODIFY });

	/* A on one CPU, B on another, A on the first: three. */
	ASSERT_EQ(0, pin_cpu(c0));
	ASSERT_EQ(1, pwrite(fa, "x", 1, 0));
	ASSERT_EQ(0, pin_cpu(c1));
	ASSERT_EQ(1, pwrite(fb, "x", 1, 0));
	ASSERT_EQ(0, pin_cpu(c0));
	ASSERT_EQ(1, pwrite(fa, "x", 1, 0));
	ASSERT_LE(0, drain_log(fd, &l));
	snprintf(why, sizeof(why), "A (cpu %d), B (cpu %d), A (cpu %d)", c0,
		 c1, c0);
	ASSERT_EVENTS(&l, why, { wa, IN_MODIFY }, { wb, IN_MODIFY },
		      { wa, IN_MODIFY });

	/*
	 * Merge only with the tail: MODIFY, CLOSE_WRITE, MODIFY,
	 * CLOSE_WRITE of one watch stay four events (an identical event
	 * is queued but is not the tail).  The second round from the
	 * other CPU.
	 */
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, pin_cpu(i ? c1 : c0));
		fc = open(cpath, O_WRONLY | O_CLOEXEC);
		ASSERT_GE(fc, 0);
		ASSERT_EQ(1, pwrite(fc, "x", 1, 0));
		ASSERT_EQ(1, pwrite(fc, "x", 1, 0));
		ASSERT_EQ(0, close(fc));
	}
	ASSERT_LE(0, drain_log(fd, &l));
	ASSERT_EVENTS(&l, "(MODIFY, MODIFY, CLOSE_WRITE) x 2",
		      { wc, IN_MODIFY }, { wc, IN_CLOSE_WRITE },
		      { wc, IN_MODIFY }, { wc, IN_CLOSE_WRITE });
	close(fa);
	close(fb);
	close(fd);
	free(l.ev);
}

/* ---- 3. overflow ---- */

/* Check a full queue: OVF_MAX creates of tag @tag, then Q_OVERFLOW. */
static int check_overflowed(const struct evlog *l, int wd, char tag, int nw,
			    char *why, size_t size)
{
	char b[NAME_MAX + 64];
	int got[MAX_THREADS], i, sum = 0;

	if (l->n != OVF_MAX + 1) {
		snprintf(why, size, "read %d events, want %d (max_queued_events) + 1 overflow",
			 l->n, OVF_MAX);
		return -1;
	}
	for (i = 0; i < OVF_MAX; i++) {
		if (l->ev[i].wd != wd || l->ev[i].mask != IN_CREATE ||
		    l->ev[i].name[0] != tag) {
			snprintf(why, size, "event %d is %s, want a CREATE %c...",
				 i, ev_str(&l->ev[i], b, sizeof(b)), tag);
			return -1;
		}
	}
	if (l->ev[OVF_MAX].wd != -1 || l->ev[OVF_MAX].mask != IN_Q_OVERFLOW ||
	    l->ev[OVF_MAX].len || l->ev[OVF_MAX].cookie) {
		snprintf(why, size, "last event is %s, want {wd=-1 Q_OVERFLOW len=0}",
			 ev_str(&l->ev[OVF_MAX], b, sizeof(b)));
		return -1;
	}
	/* Each writer's events are a prefix of what it did: lost at the end. */
	if (create_order(l, wd, tag, nw, got, why, size))
		return -1;
	for (i = 0; i < nw; i++)
		sum += got[i];
	if (sum != OVF_MAX) {
		snprintf(why, size, "%d creates of the writers, want %d", sum,
			 OVF_MAX);
		return -1;
	}
	return 0;
}

/*
 * Catches: more or fewer than max_queued_events events in the queue (a
 * limit counted per CPU, or a racy global count), IN_Q_OVERFLOW missing,
 * queued twice, not last, or with wd != -1 or a name; an IN_Q_OVERFLOW
 * without loss (at exactly max_queued_events events); lost events that
 * are not each writer's last ones (an event dropped while a later one of
 * the same thread got in); a queue that stays "overflowed" after it was
 * read empty, or an overflow event that cannot be queued a second time.
 */
TEST_F(inotify, overflow)
{
	struct worker w[MAX_THREADS] = {};
	struct shared sh = { .dir = self->dir };
	char why[512] = "", path[PATH_MAX];
	int T = g_nthreads, got[MAX_THREADS], fd, wd, i, n;
	struct evlog l;
	long rc;
	int q;

	if (geteuid())
		SKIP(return, "needs root for max_queued_events");
	log_init(&l, 4096);
	ASSERT_NE(NULL, l.ev);
	ASSERT_EQ(0, set_maxq(self, OVF_MAX));
	fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	/* The limit is taken at inotify_init1(). */
	restore_maxq(self);
	ASSERT_GE(fd, 0);
	wd = inotify_add_watch(fd, self->dir, IN_CREATE);
	ASSERT_GE(wd, 0);

	/* Exactly max_queued_events events: all of them, no overflow. */
	sh.tag = 'a';
	for (i = 0; i < T; i++)
		w[i].n = OVF_MAX / T + (i < OVF_MAX % T);
	ASSERT_EQ(0, start_workers(w, T, &sh, create_worker, 0));
	join_workers(w, T, false);
	ASSERT_EQ(0, worker_errors(w, T, why, sizeof(why))) TH_LOG("%s", why);
	ASSERT_EQ(0, ioctl(fd, FIONREAD, &q));
	rc = drain_log(fd, &l);
	ASSERT_LE(0, rc) TH_LOG("read: %s", strerror(-rc));
	ASSERT_EQ(OVF_MAX, l.n) TH_LOG("a full queue without loss");
	ASSERT_EQ(0, count_ev(&l, -1, IN_Q_OVERFLOW))
		TH_LOG("IN_Q_OVERFLOW with %d events queued", OVF_MAX);
	ASSERT_EQ(q, rc);
	ASSERT_EQ(0, create_order(&l, wd, 'a', T, got, why, sizeof(why)))
		TH_LOG("%s", why);
	for (i = 0; i < T; i++)
		ASSERT_EQ(w[i].n, got[i]) TH_LOG("writer %d", i);

	/* Four times as many, unread: the limit, then one overflow. */
	sh.tag = 'b';
	n = (4 * OVF_MAX + T - 1) / T;
	for (i = 0; i < T; i++)
		w[i].n = n;
	ASSERT_EQ(0, start_workers(w, T, &sh, create_worker, 0));
	join_workers(w, T, false);
	ASSERT_EQ(0, worker_errors(w, T, why, sizeof(why))) TH_LOG("%s", why);
	ASSERT_EQ(0, ioctl(fd, FIONREAD, &q));
	rc = drain_log(fd, &l);
	ASSERT_LE(0, rc) TH_LOG("read: %s", strerror(-rc));
	ASSERT_EQ(q, rc) TH_LOG("FIONREAD of a full queue");
	ASSERT_EQ(0, check_overflowed(&l, wd, 'b', T, why, sizeof(why)))
		TH_LOG("%d writers x %d creates: %s", T, n, why);

	/* Read empty, the queue takes events again... */
	snprintf(path, sizeof(path), "%s/c0", self->dir);
	ASSERT_EQ(0, touch(path));
	ASSERT_LE(0, drain_log(fd, &l));
	ASSERT_EVENTS(&l, "after the overflow was read",
		      { wd, IN_CREATE, "c0" });

	/* ... and overflows again, once, from one CPU after another. */
	for (i = 0; i < OVF_MAX + 8; i++) {
		ASSERT_EQ(0, pin_cpu(cpu_of(i)));
		snprintf(path, sizeof(path), "%s/d0_%d", self->dir, i);
		ASSERT_EQ(0, touch(path));
	}
	rc = drain_log(fd, &l);
	ASSERT_LE(0, rc);
	ASSERT_EQ(0, check_overflowed(&l, wd, 'd', 1, why, sizeof(why)))
		TH_LOG("second overflow: %s", why);
	close(fd);
	free(l.ev);
}

/* ---- 4. ignored_last ---- */

/*
 * After IN_IGNORED of @wd at @ign (an index in @l), events of @wd: how many,
 * and 0 or -1 with @why if one is not of kind @mask or there is a second
 * IGNORED.
 */
static int after_ignored(const struct evlog *l, int wd, int ign, uint32_t mask,
			 int *n, char *why, size_t size)
{
	char b[NAME_MAX + 64];
	int i;

	*n = 0;
	for (i = ign + 1; i < l->n; i++) {
		if (l->ev[i].wd != wd)
			continue;
		if (l->ev[i].mask != mask) {
			snprintf(why, size, "event %d after IGNORED (event %d): %s",
				 i, ign, ev_str(&l->ev[i], b, sizeof(b)));
			return -1;
		}
		(*n)++;
	}
	return 0;
}

static int find_ev(const struct evlog *l, int wd, uint32_t mask)
{
	int i;

	for (i = 0; i < l->n; i++)
		if (l->ev[i].wd == wd && l->ev[i].mask == mask)
			return i;
	return -1;
}

/*
 * Catches: an event of a watch read after its IN_IGNORED (events queued on
 * other CPUs before the watch went away, merged behind the IN_IGNORED of
 * the CPU that removed it); IN_IGNORED missing or twice; creates lost or
 * reordered around the removal; events after the removal returned; and on
 * deletion, IN_DELETE_SELF missing, twice, or not directly before
 * IN_IGNORED.  A: removal while the creators run, so in-flight CREATEs
 * may follow IGNORED (the stock race, see the top), but only CREATEs;
 * B: removal after the creators finished, from each CPU in turn:
 * IGNORED strictly last; C: deletion while writers hold the file
 * open: strictly MODIFY..., DELETE_SELF, IGNORED.
 */
TEST_F_TIMEOUT(inotify, ignored_last, 120)
{
	struct worker w[MAX_THREADS] = {};
	struct shared sh = { .dir = self->dir };
	char why[512] = "", path[PATH_MAX];
	int T = g_nthreads, nw = g_ncpus > 1 ? g_ncpus - 1 : 1;
	int got[MAX_THREADS], fd, wd, i, r, ign, strays, rounds, del, total;
	int at_rm = -1, sum = 0, early;
	struct evlog l;
	long end, rc = 0, rm_ms = 0;

	log_init(&l, 2 * BUDGET + 64);
	ASSERT_NE(NULL, l.ev);
	ASSERT_EQ(0, ensure_maxq(self, 4 * BUDGET));

	/*
	 * A: inotify_rm_watch() while creators on the other CPUs run, the
	 * reader reading all the while.
	 */
	fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	ASSERT_GE(fd, 0);
	wd = inotify_add_watch(fd, self->dir, IN_CREATE);
	ASSERT_GE(wd, 0);
	ASSERT_EQ(0, pin_cpu(cpu_of(0)));
	sh.tag = 'a';
	total = 0;
	for (i = 0; i < nw; i++) {
		w[i].n = BUDGET / nw;
		total += w[i].n;
	}
	ASSERT_EQ(0, start_workers(w, nw, &sh, create_worker, 1));
	end = now_ms() + 60000;
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		bool done = all_done(&sh, nw);

		if (!done)
			poll(&p, 1, 10);
		rc = drain(fd, log_ev, &l);
		if (rc < 0)
			break;
		if (at_rm < 0 && (l.n >= total / 4 || done)) {
			at_rm = l.n;
			if (inotify_rm_watch(fd, wd)) {
				rc = -errno;
				break;
			}
			rm_ms = now_ms();
		}
		/* Let the writers go on for a while after the removal. */
		if (at_rm >= 0 && (done || now_ms() > rm_ms + 20))
			break;
		if (now_ms() > end)
			break;
	}
	join_workers(w, nw, true);
	if (rc >= 0)
		rc = drain(fd, log_ev, &l);
	ASSERT_EQ(0, worker_errors(w, nw, why, sizeof(why))) TH_LOG("%s", why);
	ASSERT_LE(0, rc) TH_LOG("read or rm_watch: %s", strerror(-rc));
	ASSERT_LE(0, at_rm) TH_LOG("no removal within 60 s");
	ASSERT_EQ(1, count_ev(&l, wd, IN_IGNORED));
	ASSERT_EQ(0, count_ev(&l, -1, IN_Q_OVERFLOW));
	ign = find_ev(&l, wd, IN_IGNORED);
	ASSERT_LE(at_rm, ign) TH_LOG("IN_IGNORED before inotify_rm_watch()");
	ASSERT_EQ(0, after_ignored(&l, wd, ign, IN_CREATE, &strays, why,
				   sizeof(why))) TH_LOG("%s", why);
	/* The stock race (see the top): creates in flight, in order below. */
	TH_LOG("%d CREATE events after IGNORED (event %d of %d), %d writers",
	       strays, ign, l.n, nw);
	ASSERT_EQ(0, create_order(&l, wd, 'a', nw, got, why, sizeof(why)))
		TH_LOG("%s", why);
	for (i = 0; i < nw; i++) {
		ASSERT_GE(w[i].count, got[i]);
		sum += w[i].count;
	}
	/* Gone means gone. */
	snprintf(path, sizeof(path), "%s/after", self->dir);
	ASSERT_EQ(0, touch(path));
	ASSERT_LE(0, drain_log(fd, &l));
	ASSERT_EQ(0, l.n) TH_LOG("an event after the watch was removed");
	close(fd);
	TH_LOG("rm_watch: %d events read before it, %d creates done, %d stragglers",
	       at_rm, sum, strays);

	/*
	 * B: all CPUs create, unread; they finish; the watch is removed
	 * from one CPU after another: IGNORED must be the very last event.
	 */
	rounds = g_ncpus < 4 ? (g_ncpus < 2 ? 2 : g_ncpus) : 4;
	fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	ASSERT_GE(fd, 0);
	for (r = 0; r < rounds; r++) {
		wd = inotify_add_watch(fd, self->dir, IN_CREATE);
		ASSERT_GE(wd, 0);
		sh.tag = 'b' + r;
		for (i = 0; i < T; i++)
			w[i].n = 400 / T;
		ASSERT_EQ(0, start_workers(w, T, &sh, create_worker, 0));
		join_workers(w, T, false);
		ASSERT_EQ(0, worker_errors(w, T, why, sizeof(why)))
			TH_LOG("%s", why);
		ASSERT_EQ(0, pin_cpu(cpu_of(r)));
		ASSERT_EQ(0, inotify_rm_watch(fd, wd));
		rc = drain_log(fd, &l);
		ASSERT_LE(0, rc);
		ASSERT_EQ(T * (400 / T) + 1, l.n)
			TH_LOG("round %d: creates + IGNORED", r);
		ASSERT_EQ(0, create_order(&l, wd, sh.tag, T, got, why,
					  sizeof(why))) TH_LOG("%s", why);
		ASSERT_EQ(wd, l.ev[l.n - 1].wd);
		ASSERT_EQ(IN_IGNORED, l.ev[l.n - 1].mask)
			TH_LOG("round %d (rm_watch on cpu %d): last event %s",
			       r, cpu_of(r), ev_str(&l.ev[l.n - 1], why, sizeof(why)));
	}
	close(fd);

	/*
	 * C: the watched file is deleted while writers on other CPUs have
	 * it open and write to it: DELETE_SELF at the last close, then
	 * IGNORED, and nothing after.
	 */
	snprintf(path, sizeof(path), "%s/victim", self->dir);
	ASSERT_EQ(0, touch(path));
	fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	ASSERT_GE(fd, 0);
	wd = inotify_add_watch(fd, path, IN_MODIFY | IN_DELETE_SELF);
	ASSERT_GE(wd, 0);
	sh.path = path;
	sh.hold = true;
	sh.pace = true;
	for (i = 0; i < nw; i++)
		w[i].n = BUDGET / nw;
	ASSERT_EQ(0, start_workers(w, nw, &sh, modify_worker, 1));
	log_reset(&l);
	end = now_ms() + 30;
	while (now_ms() < end) {
		rc = drain(fd, log_ev, &l);
		if (rc < 0)
			break;
		sleep_ms(1);
	}
	del = unlink(path) ? errno : 0;
	end = now_ms() + 20;
	while (rc >= 0 && now_ms() < end) {
		rc = drain(fd, log_ev, &l);
		sleep_ms(1);
	}
	if (rc >= 0)
		rc = drain(fd, log_ev, &l);
	early = count_ev(&l, wd, IN_DELETE_SELF);
	join_workers(w, nw, true);	/* the writers close the file */
	if (rc >= 0)
		rc = drain(fd, log_ev, &l);
	close(fd);
	ASSERT_EQ(0, worker_errors(w, nw, why, sizeof(why))) TH_LOG("%s", why);
	ASSERT_EQ(0, del) TH_LOG("unlink: %s", strerror(del));
	ASSERT_LE(0, rc) TH_LOG("read: %s", strerror(-rc));
	ASSERT_EQ(1, count_ev(&l, wd, IN_DELETE_SELF));
	ASSERT_EQ(1, count_ev(&l, wd, IN_IGNORED));
	ASSERT_LE(2, l.n);
	ASSERT_EQ(IN_IGNORED, l.ev[l.n - 1].mask)
		TH_LOG("last of %d events: %s", l.n,
		       ev_str(&l.ev[l.n - 1], why, sizeof(why)));
	ASSERT_EQ(IN_DELETE_SELF, l.ev[l.n - 2].mask)
		TH_LOG("before IGNORED: %s",
		       ev_str(&l.ev[l.n - 2], why, sizeof(why)));
	for (i = 0; i < l.n - 2; i++)
		ASSERT_EQ(IN_MODIFY, l.ev[i].mask);
	TH_LOG("delete: %d MODIFY events, DELETE_SELF %s the last close",
	       l.n - 2, early ? "before" : "at");
	free(l.ev);
}

/* ---- 5. oneshot ---- */

/*
 * Catches: an IN_ONESHOT watch that fires twice (two MODIFY events before
 * IGNORED: a per-CPU log that did not see that the mark is gone), IN_IGNORED
 * missing or twice, or a oneshot watch still in place after it fired.
 * Writes from one CPU after another: exactly MODIFY, IGNORED.  Writes
 * from all CPUs at once: MODIFY, IGNORED, then only in-flight MODIFY
 * events of the other writers (the stock race, see the top).
 */
TEST_F_TIMEOUT(inotify, oneshot, 60)
{
	struct worker w[MAX_THREADS] = {};
	struct shared sh = { .dir = self->dir };
	char why[512] = "", path[PATH_MAX];
	int T = g_nthreads, fd, wd, i, r, ign, strays, total = 0;
	struct evlog l;

	log_init(&l, 256);
	ASSERT_NE(NULL, l.ev);
	snprintf(path, sizeof(path), "%s/f", self->dir);
	ASSERT_EQ(0, touch(path));
	fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	ASSERT_GE(fd, 0);

	/* One CPU after another: exactly MODIFY, IGNORED. */
	wd = inotify_add_watch(fd, path, IN_MODIFY | IN_ONESHOT);
	ASSERT_GE(wd, 0);
	for (i = 0; i < T; i++) {
		ASSERT_EQ(0, pin_cpu(cpu_of(i)));
		ASSERT_EQ(0, modify(path));
	}
	ASSERT_LE(0, drain_log(fd, &l));
	ASSERT_EVENTS(&l, "one CPU after another", { wd, IN_MODIFY },
		      { wd, IN_IGNORED });
	ASSERT_EQ(-1, inotify_rm_watch(fd, wd));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(0, modify(path));
	ASSERT_LE(0, drain_log(fd, &l));
	ASSERT_EQ(0, l.n);

	/* All CPUs at once, unread. */
	sh.path = path;
	for (r = 0; r < 5; r++) {
		wd = inotify_add_watch(fd, path, IN_MODIFY | IN_ONESHOT);
		ASSERT_GE(wd, 0);
		for (i = 0; i < T; i++)
			w[i].n = 20;
		ASSERT_EQ(0, start_workers(w, T, &sh, modify_worker, 0));
		join_workers(w, T, false);
		ASSERT_EQ(0, worker_errors(w, T, why, sizeof(why)))
			TH_LOG("%s", why);
		ASSERT_LE(0, drain_log(fd, &l));
		ASSERT_EQ(1, count_ev(&l, wd, IN_IGNORED))
			TH_LOG("round %d: %d events", r, l.n);
		ign = find_ev(&l, wd, IN_IGNORED);
		ASSERT_EQ(1, ign)
			TH_LOG("round %d: want MODIFY, IGNORED, got %d events before IGNORED",
			       r, ign);
		ASSERT_EQ(wd, l.ev[0].wd);
		ASSERT_EQ(IN_MODIFY, l.ev[0].mask);
		ASSERT_EQ(0, after_ignored(&l, wd, ign, IN_MODIFY, &strays,
					   why, sizeof(why))) TH_LOG("%s", why);
		/* The stock race: the others' in-flight writes (see the top). */
		total += strays;
		ASSERT_EQ(-1, inotify_rm_watch(fd, wd));
		ASSERT_EQ(EINVAL, errno);
	}
	TH_LOG("concurrent: %d stragglers in 5 rounds", total);
	close(fd);
	free(l.ev);
}

/* ---- 6. mask_add_create ---- */

/*
 * Catches: IN_MASK_ADD replacing the mask instead of adding to it (or
 * returning a new wd), a mask change seen by one CPU's events but not
 * another's, IN_MASK_CREATE not refusing an existing watch (or changing
 * it), IN_MASK_ADD | IN_MASK_CREATE accepted, or a plain add_watch not
 * replacing the mask.
 */
TEST_F(inotify, mask_add_create)
{
	char f[PATH_MAX], g[PATH_MAX], why[512] = "";
	int fd, wd, wg, i;
	mode_t mode = 0600;
	struct evlog l;

	log_init(&l, 16);
	ASSERT_NE(NULL, l.ev);
	snprintf(f, sizeof(f), "%s/f", self->dir);
	snprintf(g, sizeof(g), "%s/g", self->dir);
	ASSERT_EQ(0, touch(f));
	ASSERT_EQ(0, touch(g));
	fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	ASSERT_GE(fd, 0);
	wd = inotify_add_watch(fd, f, IN_MODIFY);
	ASSERT_GE(wd, 0);
	ASSERT_EQ(wd, inotify_add_watch(fd, f, IN_ATTRIB | IN_MASK_ADD));

	/* Both masks, from two CPUs each. */
	for (i = 0; i < 3; i++) {
		if (i == 1) {
			ASSERT_EQ(-1, inotify_add_watch(fd, f,
							IN_MODIFY | IN_MASK_CREATE));
			ASSERT_EQ(EEXIST, errno);
		}
		if (i == 2) {
			ASSERT_EQ(-1, inotify_add_watch(fd, f, IN_CLOSE_WRITE |
					IN_MASK_ADD | IN_MASK_CREATE));
			ASSERT_EQ(EINVAL, errno);
		}
		ASSERT_EQ(0, pin_cpu(cpu_of(i)));
		ASSERT_EQ(0, modify(f));
		ASSERT_EQ(0, pin_cpu(cpu_of(i + 1)));
		mode ^= 0040;
		ASSERT_EQ(0, chmod(f, mode));
		ASSERT_LE(0, drain_log(fd, &l));
		snprintf(why, sizeof(why), "round %d", i);
		ASSERT_EVENTS(&l, why, { wd, IN_MODIFY }, { wd, IN_ATTRIB });
	}

	/* Without IN_MASK_ADD the mask is replaced. */
	ASSERT_EQ(wd, inotify_add_watch(fd, f, IN_ATTRIB));
	ASSERT_EQ(0, pin_cpu(cpu_of(0)));
	ASSERT_EQ(0, modify(f));
	ASSERT_EQ(0, pin_cpu(cpu_of(1)));
	mode ^= 0040;
	ASSERT_EQ(0, chmod(f, mode));
	ASSERT_LE(0, drain_log(fd, &l));
	ASSERT_EVENTS(&l, "replaced mask", { wd, IN_ATTRIB });

	/* IN_MASK_CREATE on a new inode; both flags fail there too. */
	ASSERT_EQ(-1, inotify_add_watch(fd, g, IN_MODIFY | IN_MASK_ADD |
					IN_MASK_CREATE));
	ASSERT_EQ(EINVAL, errno);
	wg = inotify_add_watch(fd, g, IN_MODIFY | IN_MASK_CREATE);
	ASSERT_GE(wg, 0);
	ASSERT_NE(wd, wg);
	ASSERT_EQ(0, modify(g));
	ASSERT_LE(0, drain_log(fd, &l));
	ASSERT_EVENTS(&l, "new watch", { wg, IN_MODIFY });
	close(fd);
	free(l.ev);
}

/* ---- 7. fionread ---- */

static int fr_name(char *buf, size_t size, int idx, int k)
{
	int len = 1 + (idx * 53 + k * 31) % NAME_MAX;
	int n = snprintf(buf, size, "n%d_%d_", idx, k);

	while (n < len && n < (int)size - 1)
		buf[n++] = 'x';
	buf[n] = 0;
	return n;
}

/* One write to sh->path, then w->n creates with names of many lengths. */
static void *fr_worker(void *arg)
{
	struct worker *w = arg;
	struct shared *sh = w->sh;
	char name[NAME_MAX + 1], path[PATH_MAX];
	int k;

	worker_begin(w);
	if (modify(sh->path))
		fail(w, "modify");
	for (k = 0; k < w->n && !w->err; k++) {
		fr_name(name, sizeof(name), w->idx, k);
		snprintf(path, sizeof(path), "%s/%s", sh->dir, name);
		if (touch(path))
			fail(w, "create");
		else
			w->count++;
	}
	return worker_end(w);
}

/*
 * Catches: FIONREAD that counts events, not bytes; that forgets the name
 * padding or the events of other CPUs' logs; that does not drop by the
 * bytes a read() returns; or that is not 0 when read() says EAGAIN.  Also
 * names that arrive wrong or events lost.
 */
TEST_F(inotify, fionread)
{
	struct worker w[MAX_THREADS] = {};
	struct shared sh = { .dir = self->dir };
	char why[512] = "", f[PATH_MAX], name[NAME_MAX + 1];
	int T = g_nthreads, fd, wd, wf, q, i, j, k, next[MAX_THREADS] = {};
	int mods = 0, got;
	long rc, total = 0;
	struct evlog l;
	size_t sizes[] = { EV_MAX, EV_MAX + 1, 4096, sizeof(rbuf_words) };

	log_init(&l, 1024);
	ASSERT_NE(NULL, l.ev);
	snprintf(f, sizeof(f), "%s/f", self->dir);
	ASSERT_EQ(0, touch(f));
	fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	ASSERT_GE(fd, 0);
	wd = inotify_add_watch(fd, self->dir, IN_CREATE);
	wf = inotify_add_watch(fd, f, IN_MODIFY);
	ASSERT_GE(wd, 0);
	ASSERT_GE(wf, 0);
	ASSERT_EQ(0, ioctl(fd, FIONREAD, &q));
	ASSERT_EQ(0, q);

	sh.path = f;
	for (i = 0; i < T; i++)
		w[i].n = 400 / T;
	ASSERT_EQ(0, start_workers(w, T, &sh, fr_worker, 0));
	join_workers(w, T, false);
	ASSERT_EQ(0, worker_errors(w, T, why, sizeof(why))) TH_LOG("%s", why);

	ASSERT_EQ(0, ioctl(fd, FIONREAD, &q));
	ASSERT_LT(0, q);
	for (i = 0; ; i++) {
		int before = q;

		rc = read_once(fd, sizes[i < 3 ? i : 3], log_ev, &l);
		ASSERT_LE(0, rc) TH_LOG("read: %s", strerror(-rc));
		ASSERT_EQ(0, ioctl(fd, FIONREAD, &q));
		ASSERT_EQ(before - rc, q)
			TH_LOG("read() #%d returned %ld bytes: FIONREAD %d -> %d",
			       i, rc, before, q);
		if (!rc)
			break;
		total += rc;
	}
	ASSERT_EQ(0, q);
	ASSERT_EQ(l.bytes, total);
	ASSERT_EQ(-1, read(fd, rbuf, sizeof(rbuf_words)));
	ASSERT_EQ(EAGAIN, errno);

	/* Every name, whole, in each thread's order. */
	for (j = 0; j < l.n; j++) {
		struct ev *e = &l.ev[j];

		if (e->wd == wf && e->mask == IN_MODIFY && !e->len) {
			mods++;
			continue;
		}
		ASSERT_EQ(wd, e->wd);
		ASSERT_EQ(IN_CREATE, e->mask);
		got = sscanf(e->name, "n%d_", &i);
		ASSERT_EQ(1, got);
		ASSERT_TRUE(i >= 0 && i < T);
		k = next[i]++;
		fr_name(name, sizeof(name), i, k);
		ASSERT_STREQ(name, e->name);
		ASSERT_LE(strlen(name) + 1, e->len);
	}
	for (i = 0; i < T; i++)
		ASSERT_EQ(w[i].n, next[i]);
	ASSERT_TRUE(mods >= 1 && mods <= T) TH_LOG("%d MODIFY events", mods);
	TH_LOG("%d events, %ld bytes", l.n, total);
	close(fd);
	free(l.ev);
}

/* ---- 8. blocking_read ---- */

/*
 * Catches: a reader asleep in read() on one CPU not woken by an event
 * queued on another (a wake-up that only the local CPU's log would give, a
 * lost wake-up between the reader's check and its sleep), or a read() that
 * returns nothing.
 */
TEST_F(inotify, blocking_read)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	char f[PATH_MAX];
	int fd, wd, i, err;
	ssize_t n;
	pid_t pid;

	snprintf(f, sizeof(f), "%s/f", self->dir);
	ASSERT_EQ(0, touch(f));
	fd = inotify_init1(IN_CLOEXEC);
	ASSERT_GE(fd, 0);
	wd = inotify_add_watch(fd, f, IN_MODIFY);
	ASSERT_GE(wd, 0);
	ASSERT_EQ(0, sigaction(SIGALRM, &sa, NULL));	/* no SA_RESTART */
	ASSERT_EQ(0, pin_cpu(cpu_of(0)));

	for (i = 0; i < 3; i++) {
		struct inotify_event *e = (struct inotify_event *)rbuf;

		pid = spawn_gen(cpu_of(i + 1), getpid(), f, 0, 0);
		ASSERT_LT(0, pid);
		alarm(WAIT_MS / 1000);
		n = read(fd, rbuf, sizeof(rbuf_words));
		err = errno;
		alarm(0);
		ASSERT_EQ(0, wait_child(pid));
		ASSERT_EQ((ssize_t)EV_SIZE, n)
			TH_LOG("round %d: read: %s", i,
			       n >= 0 ? "not exactly one event" :
			       err == EINTR ? "not woken in time" :
			       strerror(err));
		ASSERT_EQ(wd, e->wd);
		ASSERT_EQ(IN_MODIFY, e->mask);
	}
	close(fd);
}

/* ---- 8b. wakeup_race ---- */

#define WR_ROUNDS	4000
#define WR_STEPS	100	/* reader delays, 0 .. WR_STEPS - 1 units */

struct wr {
	int fd, wd, rounds;
	int ready;		/* __atomic: the round the reader is in */
	int got;		/* __atomic: rounds read */
	int stop;		/* __atomic */
	int err;		/* errno of a failed read; -1: a wrong event */
};

/* Busy-wait @n units of about a hundred instructions each. */
static void wr_delay(int n)
{
	int i;

	for (i = 0; i < n * 64; i++)
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

static void *wr_reader(void *arg)
{
	struct wr *r = arg;
	__u64 words[EV_MAX / sizeof(__u64) + 1];
	struct inotify_event *e = (struct inotify_event *)words;
	ssize_t n;
	int k;

	if (pin_cpu(cpu_of(0))) {
		r->err = errno;
		return NULL;
	}
	for (k = 1; k <= r->rounds; k++) {
		__atomic_store_n(&r->ready, k, __ATOMIC_RELEASE);
		wr_delay(k % WR_STEPS);
		n = read(r->fd, words, sizeof(words));
		if (__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE))
			break;
		if (n != (ssize_t)EV_SIZE || e->wd != r->wd ||
		    e->mask != IN_MODIFY) {
			r->err = n < 0 ? errno : -1;
			break;
		}
		__atomic_store_n(&r->got, k, __ATOMIC_RELEASE);
	}
	return NULL;
}

/* Wait (bounded by WAIT_MS) until *@v reaches @k; 0, or -1 on timeout. */
static int wr_wait(int *v, int k, const int *err)
{
	long end = now_ms() + WAIT_MS;

	while (__atomic_load_n(v, __ATOMIC_ACQUIRE) < k) {
		if (*err || now_ms() > end)
			return -1;
	}
	return 0;
}

/*
 * Catches: a lost wake-up between a reader that is going to sleep in read()
 * and an event queued on another CPU at that moment (a reader that checks
 * the queue and its logs, then gets on the wait queue without looking
 * again; a writer that looks for sleepers before its event is visible).
 * blocking_read writes only once the reader sleeps; here the writer writes
 * as soon as the reader starts a round, and the reader waits a little
 * longer each round (WR_STEPS steps) before it calls read(), so that the
 * event lands before, during and after the reader's look at the queue and
 * its sleep.  A reader that misses the event sleeps with it in a log and
 * the round times out.
 */
TEST_F_TIMEOUT(inotify, wakeup_race, 120)
{
	struct wr r = { .rounds = WR_ROUNDS };
	char path[PATH_MAX];
	int k, wfd, lost = 0;
	pthread_t th;

	snprintf(path, sizeof(path), "%s/f", self->dir);
	ASSERT_EQ(0, touch(path));
	wfd = open(path, O_WRONLY | O_CLOEXEC);
	ASSERT_LE(0, wfd);
	r.fd = inotify_init1(IN_CLOEXEC);
	ASSERT_GE(r.fd, 0);
	r.wd = inotify_add_watch(r.fd, path, IN_MODIFY);
	ASSERT_GE(r.wd, 0);
	ASSERT_EQ(0, pin_cpu(cpu_of(1)));
	ASSERT_EQ(0, pthread_create(&th, NULL, wr_reader, &r));
	for (k = 1; k <= r.rounds; k++) {
		if (wr_wait(&r.ready, k, &r.err))
			break;
		if (pwrite(wfd, "x", 1, 0) != 1)
			break;
		if (wr_wait(&r.got, k, &r.err)) {
			lost = k;
			break;
		}
	}
	/* Let a stuck reader go: one more event wakes it. */
	__atomic_store_n(&r.stop, 1, __ATOMIC_RELEASE);
	ASSERT_EQ(1, pwrite(wfd, "x", 1, 0));
	pthread_join(th, NULL);
	close(wfd);
	close(r.fd);
	ASSERT_EQ(0, r.err) TH_LOG("round %d: read: %s", k,
				   r.err < 0 ? "not exactly one MODIFY" :
				   strerror(r.err));
	ASSERT_EQ(0, lost)
		TH_LOG("round %d: the reader was not woken within %d ms",
		       lost, WAIT_MS);
	ASSERT_EQ(r.rounds, r.got);
}

/* ---- 9. poll_and_epoll ---- */

static int epoll_n(int ep, int ms)
{
	struct epoll_event ev;

	return epoll_wait(ep, &ev, 1, ms);
}

/*
 * Catches: poll() or epoll not woken by an event from another CPU; a
 * readiness that is not level (poll and level-triggered epoll must say
 * ready until the queue is read empty, and not ready after); with EPOLLET,
 * a wake-up per merged event at read time instead of at queueing, none for
 * a new event after the queue was drained, or readiness that sticks.
 */
TEST_F(inotify, poll_and_epoll)
{
	struct pollfd p;
	struct epoll_event ev;
	char f[PATH_MAX];
	int fd, wd, wdir, ep, et, i, q;
	struct evlog l;
	pid_t pid;

	log_init(&l, 64);
	ASSERT_NE(NULL, l.ev);
	snprintf(f, sizeof(f), "%s/f", self->dir);
	ASSERT_EQ(0, touch(f));
	fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	ASSERT_GE(fd, 0);
	wd = inotify_add_watch(fd, f, IN_MODIFY);
	wdir = inotify_add_watch(fd, self->dir, IN_CREATE);
	ASSERT_GE(wd, 0);
	ASSERT_GE(wdir, 0);
	ASSERT_EQ(0, pin_cpu(cpu_of(0)));

	/* poll(): woken, then ready until drained. */
	p.fd = fd;
	p.events = POLLIN;
	ASSERT_EQ(0, poll(&p, 1, 0));
	pid = spawn_gen(cpu_of(1), getpid(), f, 0, 0);
	ASSERT_LT(0, pid);
	ASSERT_EQ(1, poll(&p, 1, WAIT_MS)) TH_LOG("poll not woken");
	ASSERT_EQ(0, wait_child(pid));
	ASSERT_TRUE(p.revents & POLLIN);
	ASSERT_EQ(1, poll(&p, 1, 0));
	ASSERT_LE(0, drain_log(fd, &l));
	ASSERT_EQ(1, l.n);
	ASSERT_EQ(0, poll(&p, 1, 0));

	/* Level-triggered epoll. */
	ep = epoll_create1(EPOLL_CLOEXEC);
	ASSERT_GE(ep, 0);
	ev.events = EPOLLIN;
	ev.data.u64 = 1;
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
	ASSERT_EQ(0, epoll_n(ep, 0));
	pid = spawn_gen(cpu_of(1), getpid(), f, 0, 0);
	ASSERT_LT(0, pid);
	ASSERT_EQ(1, epoll_n(ep, WAIT_MS)) TH_LOG("epoll not woken");
	ASSERT_EQ(0, wait_child(pid));
	for (i = 0; i < 3; i++)
		ASSERT_EQ(1, epoll_n(ep, 0)) TH_LOG("level-triggered, %d", i);
	ASSERT_LE(0, drain_log(fd, &l));
	ASSERT_EQ(1, l.n);
	ASSERT_EQ(0, epoll_n(ep, 0));
	close(ep);

	/* Edge-triggered: once for a burst, again for a new event. */
	et = epoll_create1(EPOLL_CLOEXEC);
	ASSERT_GE(et, 0);
	ev.events = EPOLLIN | EPOLLET;
	ASSERT_EQ(0, epoll_ctl(et, EPOLL_CTL_ADD, fd, &ev));
	ASSERT_EQ(0, epoll_n(et, 0));
	pid = spawn_gen(cpu_of(1), 0, self->dir, 20, 'b');
	ASSERT_EQ(0, wait_child(pid));
	ASSERT_EQ(1, epoll_n(et, 0)) TH_LOG("edge-triggered burst");
	ASSERT_EQ(0, epoll_n(et, 0)) TH_LOG("edge-triggered twice for one burst");
	ASSERT_EQ(0, ioctl(fd, FIONREAD, &q));
	ASSERT_LT(0, q);
	ASSERT_LE(0, drain_log(fd, &l));
	ASSERT_EQ(20, l.n);
	ASSERT_EQ(0, epoll_n(et, 0));
	for (i = 0; i < 2; i++) {
		pid = spawn_gen(cpu_of(i + 1), getpid(), f, 0, 0);
		ASSERT_LT(0, pid);
		ASSERT_EQ(1, epoll_n(et, WAIT_MS))
			TH_LOG("edge-triggered not woken after a drain (%d)", i);
		ASSERT_EQ(0, wait_child(pid));
		ASSERT_EQ(0, epoll_n(et, 0));
		ASSERT_LE(0, drain_log(fd, &l));
		ASSERT_EQ(1, l.n);
		ASSERT_EQ(wd, l.ev[0].wd);
	}
	close(et);
	close(fd);
	free(l.ev);
}

/* ---- 10. sigio ---- */

/*
 * Catches: no SIGIO (kill_fasync()) when an event is queued on a CPU other
 * than the reader's, or none for a later event after the queue was read.
 */
TEST_F(inotify, sigio)
{
	struct timespec ts = { WAIT_MS / 1000, 0 };
	char f[PATH_MAX];
	sigset_t set;
	siginfo_t si;
	int fd, wd, fl, i;
	struct evlog l;
	pid_t pid;

	log_init(&l, 16);
	ASSERT_NE(NULL, l.ev);
	snprintf(f, sizeof(f), "%s/f", self->dir);
	ASSERT_EQ(0, touch(f));
	sigemptyset(&set);
	sigaddset(&set, SIGIO);
	ASSERT_EQ(0, sigprocmask(SIG_BLOCK, &set, NULL));
	fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	ASSERT_GE(fd, 0);
	wd = inotify_add_watch(fd, f, IN_MODIFY);
	ASSERT_GE(wd, 0);
	ASSERT_EQ(0, fcntl(fd, F_SETOWN, getpid()));
	fl = fcntl(fd, F_GETFL);
	ASSERT_EQ(0, fcntl(fd, F_SETFL, fl | O_ASYNC));
	ASSERT_EQ(0, pin_cpu(cpu_of(0)));

	for (i = 0; i < 3; i++) {
		/* Round 0: the event is queued before the wait. */
		pid = spawn_gen(cpu_of(i + 1), i ? getpid() : 0, f, 0, 0);
		ASSERT_LT(0, pid);
		if (!i)
			ASSERT_EQ(0, wait_child(pid));
		ASSERT_EQ(SIGIO, sigtimedwait(&set, &si, &ts))
			TH_LOG("round %d: no SIGIO: %s", i, strerror(errno));
		if (i)
			ASSERT_EQ(0, wait_child(pid));
		ASSERT_LE(0, drain_log(fd, &l));
		ASSERT_EQ(1, l.n);
		ASSERT_EQ(wd, l.ev[0].wd);
		ASSERT_EQ(IN_MODIFY, l.ev[0].mask);
	}
	close(fd);
	free(l.ev);
}

/* ---- 11. many_cpus_count ---- */

#define MC_FILES	4

struct mc_check {
	int wds[MAX_THREADS][MC_FILES];
	int closes[MAX_THREADS][MC_FILES];
	bool modified[MAX_THREADS][MC_FILES];	/* MODIFY seen, no CLOSE */
	int nthreads;
	long events;
	bool bad;
	char why[256];
};

static void *mc_writer(void *arg)
{
	struct worker *w = arg;
	struct shared *sh = w->sh;
	char path[PATH_MAX];
	int m, j;

	worker_begin(w);
	for (m = 0; m < sh->per && !w->err && !stopped(sh); m++) {
		for (j = 0; j < MC_FILES; j++) {
			snprintf(path, sizeof(path), "%s/m%02d_%d", sh->dir,
				 w->idx, j);
			if (modify(path))
				fail(w, "modify");
		}
		w->count++;
	}
	return worker_end(w);
}

static int mc_event(const struct inotify_event *e, void *arg)
{
	struct mc_check *c = arg;
	int t, j;

	c->events++;
	if (c->bad)
		return 0;
	for (t = 0; t < c->nthreads; t++)
		for (j = 0; j < MC_FILES; j++)
			if (c->wds[t][j] == e->wd)
				goto found;
	snprintf(c->why, sizeof(c->why), "event %ld: unknown wd %d mask %#x",
		 c->events, e->wd, e->mask);
	c->bad = true;
	return 0;
found:
	if (e->mask == IN_MODIFY && !c->modified[t][j]) {
		c->modified[t][j] = true;
	} else if (e->mask == IN_CLOSE_WRITE && c->modified[t][j]) {
		c->modified[t][j] = false;
		c->closes[t][j]++;
	} else {
		snprintf(c->why, sizeof(c->why),
			 "event %ld: file m%02d_%d: %s after %s (after %d closes)",
			 c->events, t, j, mask_name(e->mask),
			 c->modified[t][j] ? "MODIFY" : "CLOSE_WRITE",
			 c->closes[t][j]);
		c->bad = true;
	}
	return 0;
}

/*
 * Catches: events lost or duplicated when every CPU queues at once while a
 * reader drains concurrently (a per-CPU log read twice or skipped at a log
 * boundary), and per-file MODIFY/CLOSE_WRITE order broken.
 */
TEST_F_TIMEOUT(inotify, many_cpus_count, 120)
{
	struct worker w[MAX_THREADS] = {};
	struct shared sh = { .dir = self->dir };
	struct mc_check *c;
	char why[512] = "", path[PATH_MAX];
	int T = g_nthreads, fd, t, j, err = 0;
	long end, rc = 0;
	bool done;

	sh.per = BUDGET / (T * MC_FILES * 2);
	if (sh.per > 100)
		sh.per = 100;
	if (ensure_maxq(self, 2 * T * MC_FILES * sh.per + 16))
		SKIP(return, "max_queued_events too small (not root)");
	c = calloc(1, sizeof(*c));
	ASSERT_NE(NULL, c);
	c->nthreads = T;
	fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	ASSERT_GE(fd, 0);
	for (t = 0; t < T; t++) {
		for (j = 0; j < MC_FILES; j++) {
			snprintf(path, sizeof(path), "%s/m%02d_%d", self->dir,
				 t, j);
			ASSERT_EQ(0, touch(path));
			c->wds[t][j] = inotify_add_watch(fd, path,
							 IN_MODIFY | IN_CLOSE_WRITE);
			ASSERT_GE(c->wds[t][j], 0);
		}
	}
	ASSERT_EQ(0, start_workers(w, T, &sh, mc_writer, 0));
	end = now_ms() + 60000;
	do {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		done = all_done(&sh, T);
		if (!done)
			poll(&p, 1, 20);
		rc = drain(fd, mc_event, c);
		if (rc < 0 || c->bad)
			break;
		if (!done && now_ms() > end) {
			err = ETIMEDOUT;
			break;
		}
	} while (!done);
	join_workers(w, T, true);
	close(fd);
	ASSERT_EQ(0, worker_errors(w, T, why, sizeof(why))) TH_LOG("%s", why);
	ASSERT_EQ(0, err) TH_LOG("writers did not finish in 60 s");
	ASSERT_LE(0, rc) TH_LOG("read: %s", strerror(-rc));
	ASSERT_FALSE(c->bad) TH_LOG("%s", c->why);
	for (t = 0; t < T; t++) {
		for (j = 0; j < MC_FILES; j++) {
			ASSERT_EQ(sh.per, c->closes[t][j])
				TH_LOG("file m%02d_%d", t, j);
			ASSERT_FALSE(c->modified[t][j]);
		}
	}
	ASSERT_EQ(2L * T * MC_FILES * sh.per, c->events);
	TH_LOG("%d threads x %d files x %d: %ld events", T, MC_FILES, sh.per,
	       c->events);
	free(c);
}

/* ---- unread_bounded ---- */

/*
 * An unprivileged user's unread instances pin at most what the locked
 * queue lets them pin: each holds max_queued_events events and the
 * overflow event, wherever the events wait (queue or per-CPU logs).
 * UB_ITERS create+unlink pairs per CPU give each instance 1022 events
 * per CPU, just under a per-CPU log's length, which is what logs would
 * hold if they did not count against the limit.
 */
#define UB_INSTANCES	64
#define UB_MAXQ		64
#define UB_ITERS	511
#define UB_EVENT_MAX	256	/* bytes per event, slab rounding included */
#define UB_SLACK_KB	1024	/* the instances, the writers, other slab */
#define UB_NOBODY	65534

struct ub_writer {
	const char *dir;
	int cpu, err;
};

/* A /proc/meminfo field in kB, or -1. */
static long meminfo_kb(const char *key)
{
	char line[128];
	long v = -1;
	FILE *f = fopen("/proc/meminfo", "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)) &&
		    sscanf(line + strlen(key), "%ld", &v) == 1)
			break;
	fclose(f);
	return v;
}

static void *ub_write(void *arg)
{
	struct ub_writer *w = arg;
	char path[PATH_MAX];
	int i, fd;

	if (pin_cpu(w->cpu)) {
		w->err = errno;
		return NULL;
	}
	for (i = 0; i < UB_ITERS; i++) {
		snprintf(path, sizeof(path), "%s/u%d_%d", w->dir, w->cpu, i);
		fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
		if (fd < 0 || close(fd) || unlink(path)) {
			w->err = errno;
			return NULL;
		}
	}
	return NULL;
}

/*
 * Does the unreclaimable slab count only live objects?  Not with KASAN's
 * quarantine, which holds freed objects (every event dropped at the
 * limit), nor with kmemleak, which adds an object per allocation.
 */
static bool ub_slab_exact(void)
{
	char line[256];
	bool exact = access("/sys/kernel/debug/kmemleak", F_OK) != 0;
	FILE *f = exact ? fopen("/proc/kallsyms", "re") : NULL;

	while (f && exact && fgets(line, sizeof(line), f))
		if (strstr(line, " kasan_quarantine_put"))
			exact = false;
	if (f)
		fclose(f);
	return exact;
}

/* Events left in @fd, and the mask of the last one. */
static long ub_count(int fd, uint32_t *last)
{
	__u64 words[4096 / sizeof(__u64)];	/* aligned for the events */
	const struct inotify_event *ev;
	char *buf = (char *)words, *p;
	long n = 0;
	ssize_t len;

	while ((len = read(fd, buf, sizeof(words))) > 0) {
		for (p = buf; p < buf + len; p += sizeof(*ev) + ev->len) {
			ev = (const struct inotify_event *)p;
			*last = ev->mask;
			n++;
		}
	}
	return len < 0 && errno != EAGAIN ? -1 : n;
}

/*
 * As nobody: UB_INSTANCES unread instances watch @dir while a writer on
 * every CPU creates and removes files in it.  Returns 0, or a bit mask:
 * 1 the unreclaimable slab grew past the bound (checked where @exact),
 * 2 an instance held more (or less) than max_queued_events events and the
 * overflow event, 4 the setup failed.
 */
static int ub_child(const char *dir, bool exact)
{
	struct ub_writer w[MAX_CPUS] = {};
	pthread_t th[MAX_CPUS];
	int fds[UB_INSTANCES], i, ret = 0;
	long before, after, bound, n;
	uint32_t last;

	if (setgid(UB_NOBODY) || setuid(UB_NOBODY))
		return 4;
	for (i = 0; i < UB_INSTANCES; i++) {
		fds[i] = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
		if (fds[i] < 0 ||
		    inotify_add_watch(fds[i], dir, IN_CREATE | IN_DELETE) < 0) {
			fprintf(stderr, "# instance %d: %s\n", i, strerror(errno));
			return 4;
		}
	}
	before = meminfo_kb("SUnreclaim:");
	for (i = 0; i < g_ncpus; i++) {
		w[i].dir = dir;
		w[i].cpu = g_cpus[i];
		if (pthread_create(&th[i], NULL, ub_write, &w[i]))
			return 4;
	}
	for (i = 0; i < g_ncpus; i++) {
		pthread_join(th[i], NULL);
		if (w[i].err) {
			fprintf(stderr, "# writer on CPU %d: %s\n", w[i].cpu,
				strerror(w[i].err));
			ret |= 4;
		}
	}
	after = meminfo_kb("SUnreclaim:");
	bound = (long)UB_INSTANCES * (UB_MAXQ + 1) * UB_EVENT_MAX / 1024 +
		UB_SLACK_KB;
	fprintf(stderr, "# %d unread instances, %d CPUs: slab %+ld kB (bound %ld kB%s)\n",
		UB_INSTANCES, g_ncpus, after - before, bound,
		exact ? "" : ", not checked: KASAN or kmemleak");
	if (before < 0 || after < 0 || (exact && after - before > bound))
		ret |= 1;
	for (i = 0; i < UB_INSTANCES; i++) {
		last = 0;
		n = ub_count(fds[i], &last);
		if (n != UB_MAXQ + 1 || last != IN_Q_OVERFLOW) {
			fprintf(stderr, "# instance %d: %ld events, last %#x\n",
				i, n, last);
			ret |= 2;
		}
	}
	return ret;
}

TEST_F_TIMEOUT(inotify, unread_bounded, 300)
{
	bool exact = ub_slab_exact();
	int status;
	pid_t pid;

	if (geteuid())
		SKIP(return, "needs root: sets max_queued_events, runs as nobody");
	ASSERT_EQ(0, set_maxq(self, UB_MAXQ));
	ASSERT_EQ(0, chmod(self->dir, 0777));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(ub_child(self->dir, exact));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	restore_maxq(self);
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status))
		TH_LOG("1: slab past the bound, 2: an instance's count, 4: setup");
}

/* ---- full_no_signal ---- */

#define FN_MAXQ		4
#define FN_EVENTS	100

/*
 * Pending signals of @sig, taken without waiting.  With F_SETSIG a
 * real-time signal is queued once per kill_fasync(), so this counts them.
 */
static int fn_take(int sig)
{
	struct timespec zero = { 0, 0 };
	siginfo_t si;
	sigset_t set;
	int n = 0;

	sigemptyset(&set);
	sigaddset(&set, sig);
	while (sigtimedwait(&set, &si, &zero) == sig)
		n++;
	return n;
}

/*
 * An event lost to a full queue wakes nobody and sends no signal, as with
 * the locked queue: once the queue holds max_queued_events events and the
 * overflow event, events from every CPU in turn are dropped without a
 * signal to an O_ASYNC/F_SETSIG owner (inotify(7): the owner is told when
 * the queue becomes readable, and the overflow event already said it).
 */
TEST_F(inotify, full_no_signal)
{
	char f[PATH_MAX];
	int sig = SIGRTMIN + 1, fd, fl, i, n;
	sigset_t set;
	struct evlog l;

	if (geteuid())
		SKIP(return, "needs root to set max_queued_events");
	ASSERT_EQ(0, set_maxq(self, FN_MAXQ));
	log_init(&l, 2 * FN_MAXQ);
	ASSERT_NE(NULL, l.ev);
	sigemptyset(&set);
	sigaddset(&set, sig);
	ASSERT_EQ(0, sigprocmask(SIG_BLOCK, &set, NULL));
	fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	ASSERT_GE(fd, 0);
	restore_maxq(self);
	ASSERT_LE(0, inotify_add_watch(fd, self->dir, IN_CREATE | IN_DELETE));
	ASSERT_EQ(0, fcntl(fd, F_SETOWN, getpid()));
	ASSERT_EQ(0, fcntl(fd, F_SETSIG, sig));
	fl = fcntl(fd, F_GETFL);
	ASSERT_EQ(0, fcntl(fd, F_SETFL, fl | O_ASYNC));

	/* Fill the queue: FN_MAXQ events, then the overflow event. */
	for (i = 0; i < FN_MAXQ + 1; i++) {
		ASSERT_EQ(0, pin_cpu(cpu_of(i)));
		snprintf(f, sizeof(f), "%s/full%d", self->dir, i);
		ASSERT_EQ(0, mkdir(f, 0700));
	}
	ASSERT_LT(0, fn_take(sig));
	ASSERT_EQ(0, ioctl(fd, FIONREAD, &n));
	ASSERT_EQ(0, fn_take(sig));

	for (i = 0; i < FN_EVENTS; i++) {
		ASSERT_EQ(0, pin_cpu(cpu_of(i)));
		snprintf(f, sizeof(f), "%s/lost%d", self->dir, i);
		ASSERT_EQ(0, mkdir(f, 0700));
		ASSERT_EQ(0, rmdir(f));
	}
	ASSERT_EQ(0, fn_take(sig))
		TH_LOG("signals for %d events lost to a full queue",
		       2 * FN_EVENTS);
	ASSERT_LE(0, drain_log(fd, &l));
	ASSERT_EQ(FN_MAXQ + 1, l.n);
	ASSERT_EQ(IN_Q_OVERFLOW, l.ev[FN_MAXQ].mask);
	close(fd);
	free(l.ev);
}

TEST_HARNESS_MAIN
