/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for the programs of this directory that place their work on
 * CPUs, time it and run it in child processes: pin the calling thread to
 * one CPU, list the CPUs it may run on, read the monotonic clock, sleep,
 * draw pseudo-random numbers, and wait for children.
 */
#ifndef SCALABLE_SCHED_UTIL_H
#define SCALABLE_SCHED_UTIL_H

/* CPU_SET() and sched_setaffinity() need it before the first #include. */
#ifndef _GNU_SOURCE
#error "define _GNU_SOURCE before any #include"
#endif
#include <errno.h>
#include <sched.h>
#include <time.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <linux/types.h>

/**
 * pin_cpu() - run the calling thread on one CPU only
 * @cpu: the CPU
 *
 * Return: 0, or -1 with errno as for sched_setaffinity() (EINVAL for a
 * CPU that is offline or does not exist).
 */
static inline int pin_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/**
 * affinity_cpus() - the CPUs the calling thread may run on
 * @cpus: where their numbers go, in ascending order
 * @max: the size of @cpus; the CPUs past the first @max are left out
 *
 * Return: the number of CPUs written to @cpus, or -1 with errno as for
 * sched_getaffinity().
 */
static inline int affinity_cpus(int *cpus, int max)
{
	cpu_set_t set;
	int cpu, n = 0;

	if (sched_getaffinity(0, sizeof(set), &set))
		return -1;
	for (cpu = 0; cpu < CPU_SETSIZE && n < max; cpu++)
		if (CPU_ISSET(cpu, &set))
			cpus[n++] = cpu;
	return n;
}

/* CLOCK_MONOTONIC in nanoseconds. */
static inline __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* CLOCK_MONOTONIC in milliseconds. */
static inline long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/**
 * abs_time_ns() - the time on a clock @ns nanoseconds from now
 * @ts: where the time goes, for a call that takes an absolute timeout
 * @clk: the clock
 * @ns: how far from now, 0 or more
 */
static inline void abs_time_ns(struct timespec *ts, clockid_t clk, long long ns)
{
	clock_gettime(clk, ts);
	ts->tv_sec += ns / 1000000000;
	ts->tv_nsec += ns % 1000000000;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

/* Sleep @ms milliseconds, the whole time even if signals interrupt it. */
static inline void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
		;
}

/* A struct timeval (getrusage(), say) in microseconds. */
static inline double tv_us(const struct timeval *tv)
{
	return tv->tv_sec * 1e6 + tv->tv_usec;
}

/**
 * rand_next() - the next number of a xorshift64* pseudo-random sequence
 * @state: the sequence's state, not 0; one per thread
 *
 * Return: the number, all 64 bits of it usable.
 */
static inline __u64 rand_next(__u64 *state)
{
	*state ^= *state >> 12;
	*state ^= *state << 25;
	*state ^= *state >> 27;
	return *state * 2685821657736338717ULL;
}

/**
 * waitpid_ms() - waitpid() for a child, for up to about @ms milliseconds
 * @pid: the child
 * @status: where its status goes, as for waitpid()
 * @ms: how long to wait
 *
 * Polls waitpid(@pid, @status, WNOHANG) every millisecond.
 *
 * Return: @pid once reaped, 0 if it is still there after @ms, or -1 with
 * errno as for waitpid().
 */
static inline pid_t waitpid_ms(pid_t pid, int *status, long ms)
{
	long end = now_ms() + ms;
	pid_t r;

	while ((r = waitpid(pid, status, WNOHANG)) == 0 && now_ms() < end)
		sleep_ms(1);
	return r;
}

/**
 * reap_all() - reap children, counting those that failed
 * @pids: the children; an entry of 0 or less (a fork() that failed) is
 *        skipped
 * @n: the number of @pids
 *
 * Return: how many of them could not be reaped or did not exit with
 * status 0.
 */
static inline int reap_all(const pid_t *pids, int n)
{
	int i, status, bad = 0;

	for (i = 0; i < n; i++) {
		if (pids[i] <= 0)
			continue;
		if (waitpid(pids[i], &status, 0) < 0 ||
		    !WIFEXITED(status) || WEXITSTATUS(status))
			bad++;
	}
	return bad;
}

#endif /* SCALABLE_SCHED_UTIL_H */
