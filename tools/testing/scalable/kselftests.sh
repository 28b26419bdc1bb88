# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# What the series' kselftests run and in which order, shared by the guest's
# /init (init.sh, where this file is /kselftests.sh) and by run_scalable.sh,
# which runs them natively on a machine booted into the patched kernel
# (make selftests-tar, run_native.sh; there it is
# tools/testing/scalable/kselftests.sh of the tarball).  Sourced, not
# run: the caller defines
#   say      print "SCALABLE: <words>" where the host reads its markers
#            (scalable_parser.py parses them), and "# SCALABLE: ..." in $out
#   out      where the kselftest TAP goes
# and runs scalable_kselftests in the kselftest install directory.  The
# TAP is appended to $out (a file natively, the second serial port in the
# guest).
#
# Parameters, as variables (kernel command-line words in the guest):
#   scalable_mode    test | quick | full | long   benchmark durations
#   scalable_cpus    comma list of worker counts for the benchmarks
#   scalable_own     0: skip the series' own kselftests (diagnostic boots,
#                    e.g. the upstream ones with dcache_oplog=off)
#   scalable_upstream  comma list: run only these upstream collections
#                    (none: no upstream collection)
#   scalable_tests   comma list: run only these of the series' own
#                    kselftests (diagnostic boots, e.g. ast_mutex_test)
#   scalable_ast_bench  ast_bench arguments, '_' for spaces (diagnostic
#                    boots, e.g. -t_100,1000_-b_100_-c_2)
#   scalable_soak    seconds: the torture kselftest alternates its phases
#                    that long (make soak; with scalable_tests=torture,
#                    ast_mutex_test): its soak test alone, TORTURE_SECONDS
#                    in its environment, then ast_mutex_test's kill storm
#                    alone, half that long on each kind of word
#                    (AST_KILL_STORM_SECONDS); without, every torture test
#                    but the soak
#   scalable_exclude comma list of upstream collection:test entries not to
#                    run (make deb-test: stock races of a distribution
#                    config); the host counts them as not run
#   scalable_upstream_off  1: run the upstream collections an extra time
#                    first, with every series switch off (make test's
#                    release boot; upstream_pass_off below)

# Benchmark durations per mode (KSELFTEST_<PROGRAM>_ARGS, which the
# kselftest runner passes to each program), and the runner's per-test
# timeout in $tmo (seconds): a long sweep of fork_truncate (10 values of T)
# at 16 CPUs runs about 15 minutes, past the 900 s of the settings file.
# stat_bench's "many" mode stats 100000 names unless told otherwise; a
# checking boot gives it 8192, still more than the 4096 slots of a CPU's
# dentry OpLog log cache.  The modes, longest first:
#   long   every cell of every benchmark, 1 s warm-up and 5 s measured,
#          3 runs (the engine's defaults)
#   full   make run's default: every OpLog user's -stock/-oplog pair at
#          every CPU count, 0.5 s + 3 s, 3 runs; fork_truncate at the T
#          that make trace reports (1, 2, 3, 10); ast_bench's cells of 100
#          and 1000 threads
#   quick  0.1 s + 0.4 s, 2 runs
#   test   0.05 s + 0.2 s, 1 run: a checking boot
# tools/testing/scalable/scalable_schedule.py reads these (sourcing this
# file) to derive a boot's schedule and timeout.
scalable_bench_args() {
	case "${scalable_mode:-test}" in
	long)	bargs="" ; tmo=14400 ; names="" ;;
	full)	bargs="-w 500 -m 3000" ; tmo=3600 ; names="" ;;
	quick)	bargs="-q" ; tmo=3600 ; names="" ;;
	*)	bargs="-w 50 -m 200 -r 1" ; tmo=900 ; names="-n 8192" ;;
	esac
	[ -n "$scalable_cpus" ] && bargs="$bargs -c $scalable_cpus"
	# torture's options are kselftest_harness.h's: test names
	KSELFTEST_TORTURE_ARGS="-T soak"
	if [ -n "$scalable_soak" ]; then
		KSELFTEST_TORTURE_ARGS="-t soak"
		TORTURE_SECONDS=$scalable_soak
		KSELFTEST_AST_MUTEX_TEST_ARGS="-t kill_storm"
		AST_KILL_STORM_SECONDS=$((scalable_soak / 2))
		export TORTURE_SECONDS KSELFTEST_AST_MUTEX_TEST_ARGS AST_KILL_STORM_SECONDS
		tmo=$((scalable_soak + 900))
	fi
	export KSELFTEST_TORTURE_ARGS

	for t in stat_bench open_bench create_bench fork_bench fork_truncate mmap_bench exec_bench \
		 inotify_bench ast_bench qdo_latency oplog_list_bench cacheline_bench; do
		# shellcheck disable=SC2018,SC2019 # program names are ASCII
		v=KSELFTEST_$(echo "$t" | tr a-z A-Z)_ARGS
		export "$v=$bargs"
	done
	[ -n "$names" ] && KSELFTEST_STAT_BENCH_ARGS="$KSELFTEST_STAT_BENCH_ARGS $names"
	# A checking boot also checks each truncation from a child forked
	# before it (fork_truncate -W, which adds a fork per truncation).
	case "${scalable_mode:-test}" in
	long|quick) ;;
	full) KSELFTEST_FORK_TRUNCATE_ARGS="$KSELFTEST_FORK_TRUNCATE_ARGS -T 1,2,3,10" ;;
	*) KSELFTEST_FORK_TRUNCATE_ARGS="$KSELFTEST_FORK_TRUNCATE_ARGS -W" ;;
	esac
	# ast_bench runs 6 implementations x 3 thread counts (10, 100, 1000) x 3
	# buffer sizes per CPU count: shorter runs keep the sweep to minutes.
	# The full sweep runs the default ast_mutex, its compete variant and
	# the cv-bcast baseline at 100 and 1000 threads: the implementations
	# whose 1000-thread runs start and stop in a bounded time under TCG
	# (scalable_schedule.BENCH); MODE=long runs every cell.
	ast=""
	case "${scalable_mode:-test}" in
	long)	ast="-w 200 -m 1000 -r 2" ;;
	full)	ast="-w 200 -m 1000 -r 2 -t 100,1000 -i ast,ast-compete,cv-bcast" ;;
	esac
	if [ -n "$ast" ]; then
		[ -n "$scalable_cpus" ] && ast="$ast -c $scalable_cpus"
		KSELFTEST_AST_BENCH_ARGS=$ast
		export KSELFTEST_AST_BENCH_ARGS
	fi
	if [ -n "$scalable_ast_bench" ]; then
		KSELFTEST_AST_BENCH_ARGS=$(echo "$scalable_ast_bench" | tr _ ' ')
		export KSELFTEST_AST_BENCH_ARGS
	fi
}

# An OpLog user's switch ($1), and the counters of its stats file ($2)
# that $3 names (a sed alternation), as one line of name=value words;
# "absent" without them.
oplog_state() {
	if [ ! -r "$1" ] || [ ! -r "$2" ]; then
		echo "absent"
		return 1
	fi
	# shellcheck disable=SC2046
	echo "enabled=$(cat "$1")" $(sed -n "s/^\\($3\\) \\(.*\\)/\\1=\\2/p" "$2")
}

# The dentry OpLog (fs/dcache_oplog.c), with its count of logs.
dcache_oplog_state() {
	st=$(oplog_state /sys/kernel/debug/dcache_oplog/enabled \
		/sys/kernel/debug/oplog/dentry/stats \
		'hits\|misses\|evictions\|syncs\|flushes') || { echo "$st"; return; }
	echo "$st logs=$(cat /sys/kernel/debug/dcache_oplog/logs)"
}

# The file reverse-map OpLog (mm/oplog_rmap.c).
rmap_oplog_state() {
	oplog_state /sys/kernel/debug/rmap_oplog/enabled /sys/kernel/debug/rmap_oplog/stats \
		'logged\|absorbed_local\|absorbed_global\|applied'
}

# The series' run-time switches, each <debugfs>/<name>/enabled, where
# <debugfs> is $debugfs or /sys/kernel/debug (the unit tests point it
# elsewhere).
SCALABLE_SWITCHES="dcache_oplog rmap_oplog inotify_oplog inode_oplog"

# Write $1 to switch $2 and read it back.  A failure prints "switch write
# failed: ..." (the host fails the boot on it) and returns 1.
switch_write() {
	sw_f=${debugfs:-/sys/kernel/debug}/$2/enabled
	if ! { echo "$1" > "$sw_f"; } 2>/dev/null || [ "$(cat "$sw_f" 2>/dev/null)" != "$1" ]; then
		say "switch write failed: $2: wrote $1 to $sw_f, it reads" \
			"'$(cat "$sw_f" 2>/dev/null)'"
		return 1
	fi
}

# Every switch as name=value words (value empty where it cannot be read).
switch_states() {
	sw_w=""
	for sw_s in $SCALABLE_SWITCHES; do
		sw_w="$sw_w${sw_w:+ }$sw_s=$(cat "${debugfs:-/sys/kernel/debug}/$sw_s/enabled" 2>/dev/null)"
	done
	echo "$sw_w"
}

# scalable_upstream_off=1: the upstream collections (the runner's
# arguments in $1) once with every series switch off, before the normal
# run, so that the host can compare the two passes result by result (the
# kernel patches claim the upstream tests give the same results either
# way).  The pass's TAP lies in $out between the lines "# SCALABLE:
# upstream pass off begin" and "# SCALABLE: upstream pass off end", where
# the host cuts it out before it parses the normal pass
# (scalable_parser.split_upstream_off()).  Every switch is written back to
# the value it had (1 in make test's release boot), checked: the normal
# pass runs as it would without this one.  The pass is not run when a
# switch does not turn off; the host then finds it missing.
upstream_pass_off() {
	sw_saved=""
	for sw_s in $SCALABLE_SWITCHES; do
		sw_v=$(cat "${debugfs:-/sys/kernel/debug}/$sw_s/enabled" 2>/dev/null)
		case $sw_v in
		0|1) sw_saved="$sw_saved $sw_s=$sw_v" ;;
		*)
			say "switch write failed: $sw_s: cannot read" \
				"${debugfs:-/sys/kernel/debug}/$sw_s/enabled"
			say "upstream pass off not run: a switch cannot be read"
			return 1 ;;
		esac
	done
	sw_ok=1
	for sw_s in $SCALABLE_SWITCHES; do
		switch_write 0 "$sw_s" || sw_ok=0
	done
	if [ $sw_ok = 1 ]; then
		say "upstream pass off switches: $(switch_states)"
		say "upstream pass off begin"
		# shellcheck disable=SC2086
		./run_kselftest.sh -o "$tmo" $1 >> "$out" 2>&1
		say "kselftest upstream off rc=$?"
		say "upstream pass off end"
	else
		say "upstream pass off not run: a switch did not turn off"
	fi
	for sw_sv in $sw_saved; do
		switch_write "${sw_sv#*=}" "${sw_sv%%=*}" || sw_ok=0
	done
	say "upstream pass on switches: $(switch_states)"
	[ $sw_ok = 1 ]
}

# The series' own kselftests first, then the upstream ones: the runner
# would take the collections in alphabetical order, and the upstream tests
# must run after stat_bench and dcache_oplog_test, which flip the dentry
# OpLog switch and must leave it as they found it.  The host checks the
# switch (the "dcache_oplog" markers) and that the OpLog counted
# references during the upstream tests.  Each run prints its own TAP plan
# per collection.  The reverse-map OpLog likewise ("rmap_oplog" markers):
# the upstream mm programs must run with its switch on and log inserts.
# With scalable_upstream_off=1 the upstream collections run once more
# before, with the switches off (upstream_pass_off()).
scalable_kselftests() {
	: "${out:?kselftests.sh: the caller sets out}"
	if [ "$scalable_upstream" = none ]; then
		upstream=""
	elif [ -n "$scalable_upstream" ]; then
		upstream=$(echo "$scalable_upstream" | tr , ' ')
	else
		upstream=$(cut -d: -f1 kselftest-list.txt | sort -u | grep -vx scalable)
	fi
	say "dcache_oplog at start: $(dcache_oplog_state)"
	say "rmap_oplog at start: $(rmap_oplog_state)"
	if [ "${scalable_own:-1}" = 1 ] && grep -q '^scalable:' kselftest-list.txt; then
		own="-c scalable"
		if [ -n "$scalable_tests" ]; then
			own=""
			for t in $(echo "$scalable_tests" | tr , ' '); do
				own="$own -t scalable:$t"
			done
		fi
		# shellcheck disable=SC2086
		./run_kselftest.sh -o "$tmo" $own >> "$out" 2>&1
		say "kselftest scalable rc=$?"
	fi
	if [ -n "$upstream" ]; then
		cols=""
		for c in $upstream; do
			if [ -z "$scalable_exclude" ]; then
				cols="$cols -c $c"
				continue
			fi
			# collection:test names have no spaces
			# shellcheck disable=SC2013
			for t in $(grep "^$c:" kselftest-list.txt); do
				case ",$scalable_exclude," in
				*",$t,"*) say "excluded on the command line: $t" ;;
				*) cols="$cols -t $t" ;;
				esac
			done
		done
		# shellcheck disable=SC2086
		say "upstream selftests:" $upstream
		[ "${scalable_upstream_off:-0}" = 1 ] && upstream_pass_off "$cols"
		say "dcache_oplog before: $(dcache_oplog_state)"
		say "rmap_oplog before: $(rmap_oplog_state)"
		# shellcheck disable=SC2086
		./run_kselftest.sh -o "$tmo" $cols >> "$out" 2>&1
		say "kselftest upstream rc=$?"
		say "dcache_oplog after: $(dcache_oplog_state)"
		say "rmap_oplog after: $(rmap_oplog_state)"
	fi
}
