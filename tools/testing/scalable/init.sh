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
# (the kernel hands unknown "name=value" words to init); those of the
# kselftest run (scalable_mode, scalable_cpus, scalable_own,
# scalable_upstream, scalable_tests, scalable_ast_bench, scalable_soak,
# scalable_exclude, scalable_upstream_off) are
# described in kselftests.sh (here /kselftests.sh), which runs the tests
# for this script and for the native run_scalable.sh of make selftests-tar.
# This script keeps the guest's own parts:
#   scalable_inject  none | warn | panic | hang  (harness self-tests)
#   scalable_kmemleak 1: scan for leaks after the tests (debug kernels)
#   scalable_trace   traced boots (make trace), see below
#   scalable_keyflip rounds of static-key flips (scalable.py tcg-check)
#   scalable_native  1: run the unpacked make selftests-tar tarball of
#                    /opt/scalable-tar instead (scalable.py selftests-tar
#                    --test), print its report.json on the console

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
	echo "# SCALABLE: $*" >> "$out"
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

# scalable.py tcg-check: flip stock static keys (the scheduler's sched_feat
# keys, CONFIG_SCHED_DEBUG) scalable_keyflip rounds from this CPU while
# every other CPU runs pipe wakeups and fork+exec through the sites they
# guard, then power off.  Under a TCG that runs stale translated code this
# dies "Oops: int3" at one of those sites (scalable_qemu.tcg_thread()).
if [ -n "${scalable_keyflip:-}" ]; then
	f=/sys/kernel/debug/sched/features
	[ -w $f ] || { say "keyflip: no $f (CONFIG_SCHED_DEBUG)"; finish; }
	c=1
	while [ $c -lt "$(nproc)" ]; do
		taskset -c $c sh -c 'yes | cat > /dev/null' &
		taskset -c $c sh -c 'while :; do /bin/true; done' &
		c=$((c + 1))
	done
	sh -c 'yes | cat > /dev/null' &
	i=0
	while [ $i -lt "$scalable_keyflip" ]; do
		for k in WAKEUP_PREEMPTION TTWU_QUEUE NONTASK_CAPACITY PLACE_LAG RUN_TO_PARITY; do
			echo NO_$k > $f
			echo $k > $f
		done
		i=$((i + 1))
	done
	say "keyflip done rounds=$i"
	finish
fi

# The native run of make selftests-tar's tarball, as on a booted host: its
# TAP goes to the second serial port afterwards, its report.json to the
# console between markers; the host compares the report with its own
# analysis of this boot's logs.
if [ "${scalable_native:-0}" = 1 ]; then
	tar=/opt/scalable-tar
	"$tar/run_scalable.sh" -m "${scalable_mode:-test}" -o /tmp/native \
		${scalable_cpus:+-c "$scalable_cpus"} > /dev/console 2>&1
	say "native run_scalable.sh rc=$?"
	cat /tmp/native/tap.log >> "$out"
	say "native report.json begin"
	cat /tmp/native/report.json > /dev/console
	echo > /dev/console
	say "native report.json end"
	finish
fi

# shellcheck disable=SC1091
. /kselftests.sh
scalable_bench_args

# kmemleak (scalable_kmemleak=1, the debug flavour): the host requires the
# "kmemleak scan finished" line of the end, printed only once the scans
# were written and their report read; a write kmemleak refuses (not built,
# kmemleak=off, or disabled after an error of its own) prints a "kmemleak
# failed" line instead, which fails the boot as well
# (scalable_parser.check_kmemleak()).
kmemleak=/sys/kernel/debug/kmemleak
if [ "${scalable_kmemleak:-0}" = 1 ]; then
	# Forget what boot left behind; report only what the tests leak.
	echo clear > $kmemleak || say "kmemleak failed: cannot write clear to $kmemleak"
fi

cd /opt/kselftest || { say "no kselftests installed"; finish; }

# Traced boots (make trace): only the listed benchmarks, each at this
# guest's CPU count, one short run per mode.  Each program marks its
# measurement windows for the host's cache-line transfer plugin and, with
# SCALABLE_TRACE set, prints one TRACE_WINDOW line per window; the host
# joins the two in order.  KUnit is off in these boots (kunit.enable=0).
#   scalable_trace     comma list of programs of tools/testing/selftests/
#                      scalable (and qdo_idle: an idle window)
#   scalable_trace_ms  measured window per run, ms (warm-up: a fifth)
#   scalable_exec_shape  exec_bench's -S: exec (default), sh or all
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
		# an exec is long next to the other operations: four times
		# the window, so that a window holds enough of them
		exec_bench) args="-w $((ms * 4 / 5)) -m $((ms * 4)) -r 1 -c $n"
			args="$args -S ${scalable_exec_shape:-exec}" ;;
		# the thesis's crossover region, and one far from it
		fork_truncate) args="$targs -T 1,2,3,10" ;;
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
scalable_kselftests
# What the guest's memory (MEM) leaves free after the tests (README: KVM).
say "meminfo $(sed -n 's/^\(MemTotal\|MemAvailable\|Percpu\): *\([0-9]*\) kB/\1=\2kB/p' \
	/proc/meminfo | tr '\n' ' ')"

if [ "${scalable_kmemleak:-0}" = 1 ]; then
	if ! echo scan > $kmemleak || ! echo scan > $kmemleak; then
		say "kmemleak failed: cannot write scan to $kmemleak"
	elif ! cat $kmemleak > /dev/console; then
		say "kmemleak failed: cannot read $kmemleak"
	else
		say "kmemleak scan finished"
	fi
fi

finish
