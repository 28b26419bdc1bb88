/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for the programs of this directory that place their work on
 * CPUs and time it: pin the calling thread to one CPU, and read the
 * monotonic clock in milliseconds.
 */
#ifndef SCALABLE_SCHED_UTIL_H
#define SCALABLE_SCHED_UTIL_H

/* CPU_SET() and sched_setaffinity() need it before the first #include. */
#ifndef _GNU_SOURCE
#error "define _GNU_SOURCE before any #include"
#endif
#include <sched.h>
#include <time.h>

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

/* CLOCK_MONOTONIC in milliseconds. */
static inline long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

#endif /* SCALABLE_SCHED_UTIL_H */
