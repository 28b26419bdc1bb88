#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# /init of the scalable-series test initramfs (busybox-static).
#
# The kernel has already run the built-in KUnit suites when this starts; their
# KTAP output is on the console (ttyS0).  This script runs the installed
# kselftests through the standard runner and writes their TAP output to the
# second serial port (ttyS1) so that it never interleaves with printk.  The
# host harness reads both (tools/testing/scalable/scalable_qemu.py boots
# the guest, scalable_parser.py parses the logs).
#
# Parameters come from the kernel command line as environment variables
# (the kernel hands unknown "name=value" words to init):
#   scalable_mode    test | quick | full   benchmark durations
#   scalable_cpus    comma list of worker counts for the benchmarks
#   scalable_inject  none | warn | panic | hang  (harness self-tests)
#   scalable_kmemleak 1: scan for leaks after the tests (debug kernels)
#   scalable_own     0: skip the series' own kselftests (diagnostic boots,
#                    e.g. the upstream ones with dcache_oplog=off)
#   scalable_upstream  comma list: run only these upstream collections
#                    (none: no upstream collection)
#   scalable_tests   comma list: run only these of the series' own
#                    kselftests (diagnostic boots, e.g. ast_mutex_test)
#   scalable_ast_bench  ast_bench arguments, '_' for spaces (diagnostic
#                    boots, e.g. -t_100,1000_-b_100_-c_2)
#   scalable_soak    seconds: the torture kselftest alternates its phases
#                    that long (make soak; with scalable_tests=torture)

PATH=/bin:/sbin:/usr/bin:/usr/sbin
export PATH

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t tmpfs tmpfs /tmp
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
# devtmpfs has no /dev/std* links; the kselftest runner writes to /dev/stdout.
ln -sf /proc/self/fd /dev/fd
ln -sf /proc/self/fd/0 /dev/stdin
ln -sf /proc/self/fd/1 /dev/stdout
ln -sf /proc/self/fd/2 /dev/stderr

out=/dev/ttyS1
[ -c "$out" ] || out=/dev/console

say() {
	echo "SCALABLE: $*" > /dev/console
	echo "# SCALABLE: $*" > "$out"
}

finish() {
	say "done"
	sync
	poweroff -f
	reboot -f
}

say "init start mode=${scalable_mode:-test} cpus=$(nproc) kernel=$(uname -r)"

case "${scalable_inject:-none}" in
warn)
	echo WARNING > /sys/kernel/debug/provoke-crash/DIRECT
	finish ;;
panic)
	echo PANIC > /sys/kernel/debug/provoke-crash/DIRECT
	finish ;;
hang)
	say "injected hang"
	while :; do sleep 1000; done ;;
esac

# Benchmark durations per mode, and the runner's per-test timeout (seconds):
# a full sweep of fork_truncate (10 values of T) at 16 CPUs runs about 15
# minutes, past the 900 s of the settings file.
# stat_bench's "many" mode stats 100000 names unless told otherwise; a
# checking boot gives it 8192, still more than the 4096 slots of a CPU's
# dentry OpLog log cache.
case "${scalable_mode:-test}" in
full)	bargs="" ; tmo=14400 ; names="" ;;
quick)	bargs="-q" ; tmo=3600 ; names="" ;;
*)	bargs="-w 50 -m 200 -r 1" ; tmo=900 ; names="-n 8192" ;;
esac
[ -n "$scalable_cpus" ] && bargs="$bargs -c $scalable_cpus"
if [ -n "$scalable_soak" ]; then
	KSELFTEST_TORTURE_ARGS="-t $scalable_soak"
	export KSELFTEST_TORTURE_ARGS
	tmo=$((scalable_soak + 900))
fi

for t in stat_bench open_bench create_bench fork_bench fork_truncate inotify_bench \
	 ast_bench qdo_latency oplog_list_bench cacheline_bench; do
	v=KSELFTEST_$(echo "$t" | tr a-z A-Z)_ARGS
	export "$v=$bargs"
done
[ -n "$names" ] && KSELFTEST_STAT_BENCH_ARGS="$KSELFTEST_STAT_BENCH_ARGS $names"
# ast_bench runs 6 implementations x 3 thread counts (10, 100, 1000) x 3
# buffer sizes per CPU count: shorter runs keep the full sweep to a few
# minutes (1000-thread runs included).
if [ "${scalable_mode:-test}" = full ]; then
	KSELFTEST_AST_BENCH_ARGS="-w 200 -m 1000 -r 2"
	[ -n "$scalable_cpus" ] &&
		KSELFTEST_AST_BENCH_ARGS="$KSELFTEST_AST_BENCH_ARGS -c $scalable_cpus"
	export KSELFTEST_AST_BENCH_ARGS
fi
if [ -n "$scalable_ast_bench" ]; then
	KSELFTEST_AST_BENCH_ARGS=$(echo "$scalable_ast_bench" | tr _ ' ')
	export KSELFTEST_AST_BENCH_ARGS
fi

if [ "${scalable_kmemleak:-0}" = 1 ] && [ -w /sys/kernel/debug/kmemleak ]; then
	# Forget what boot left behind; report only what the tests leak.
	echo clear > /sys/kernel/debug/kmemleak
fi

# The dentry OpLog (fs/dcache_oplog.c): its switch and counters, one line.
oplog_switch=/sys/kernel/debug/dcache_oplog/enabled
oplog_stats=/sys/kernel/debug/oplog/dentry/stats
dcache_oplog_state() {
	if [ ! -r "$oplog_switch" ] || [ ! -r "$oplog_stats" ]; then
		echo "absent"
		return
	fi
	echo "enabled=$(cat "$oplog_switch")" \
	     $(sed -n 's/^\(hits\|misses\|evictions\|syncs\|flushes\) \(.*\)/\1=\2/p' \
		   "$oplog_stats") \
	     "logs=$(cat /sys/kernel/debug/dcache_oplog/logs)"
}

cd /opt/kselftest || { say "no kselftests installed"; finish; }

# Traced boots (make trace): only the listed benchmarks, each at this
# guest's CPU count, one short run per mode.  Each program marks its
# measurement windows for the host's cache-line transfer plugin and, with
# SCALABLE_TRACE set, prints one TRACE_WINDOW line per window; the host
# joins the two in order.  KUnit is off in these boots (kunit.enable=0).
#   scalable_trace     comma list of programs of tools/testing/selftests/
#                      scalable (and qdo_idle: an idle window)
#   scalable_trace_ms  measured window per run, ms (warm-up: a fifth)
if [ -n "$scalable_trace" ]; then
	export SCALABLE_TRACE=1
	n=$(nproc)
	ms=${scalable_trace_ms:-500}
	targs="-w $((ms / 5)) -m $ms -r 1 -c $n"
	for t in $(echo "$scalable_trace" | tr , ' '); do
		case $t in
		# 8192 names, as in a checking boot: fewer files to create
		# and remove under the tracer
		stat_bench) args="$targs -n 8192" ;;
		ast_bench) args="$targs -t 100 -b 1" ;;
		qdo_idle) t=qdo_latency; args="-I $ms" ;;
		*) args="$targs" ;;
		esac
		say "trace $t $args"
		# shellcheck disable=SC2086
		./scalable/$t $args > "$out" 2>&1
		say "trace $t rc=$?"
	done
	finish
fi
# The series' own kselftests first, then the upstream ones: the runner
# would take the collections in alphabetical order, and the upstream tests
# must run after stat_bench and dcache_oplog_test, which flip the dentry
# OpLog switch and must leave it as they found it.  The host checks the
# switch below and that the OpLog counted references during the upstream
# tests.  Each run prints its own TAP plan per collection.
if [ "$scalable_upstream" = none ]; then
	upstream=""
elif [ -n "$scalable_upstream" ]; then
	upstream=$(echo "$scalable_upstream" | tr , ' ')
else
	upstream=$(cut -d: -f1 kselftest-list.txt | sort -u | grep -vx scalable)
fi
say "dcache_oplog at start: $(dcache_oplog_state)"
if [ "${scalable_own:-1}" = 1 ] && grep -q '^scalable:' kselftest-list.txt; then
	own="-c scalable"
	if [ -n "$scalable_tests" ]; then
		own=""
		for t in $(echo "$scalable_tests" | tr , ' '); do
			own="$own -t scalable:$t"
		done
	fi
	# shellcheck disable=SC2086
	./run_kselftest.sh -o "$tmo" $own > "$out" 2>&1
	say "kselftest scalable rc=$?"
fi
if [ -n "$upstream" ]; then
	cols=""
	for c in $upstream; do
		cols="$cols -c $c"
	done
	say "upstream selftests:" $upstream
	say "dcache_oplog before: $(dcache_oplog_state)"
	# shellcheck disable=SC2086
	./run_kselftest.sh -o "$tmo" $cols > "$out" 2>&1
	say "kselftest upstream rc=$?"
	say "dcache_oplog after: $(dcache_oplog_state)"
fi

if [ "${scalable_kmemleak:-0}" = 1 ] && [ -w /sys/kernel/debug/kmemleak ]; then
	echo scan > /sys/kernel/debug/kmemleak
	echo scan > /sys/kernel/debug/kmemleak
	cat /sys/kernel/debug/kmemleak > /dev/console
	say "kmemleak scan finished"
fi

finish
