#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# run_scalable.sh: the scalable series' kselftests and benchmarks on a
# machine booted into the patched kernel, and the report of make run.
#
# make selftests-tar packs this script (tools/testing/scalable/run_native.sh
# in the source tree) at the top of a kselftest tarball (the gen_tar
# layout: run_kselftest.sh, kselftest-list.txt and one directory per
# target), with the test logic it shares with the guest's /init
# (tools/testing/scalable/kselftests.sh), the harness's report code
# (tools/testing/scalable/*.py) and the kernel's KUnit parser
# (tools/testing/kunit/).  Run it as root, unpacked:
#
#   ./run_scalable.sh [-m full|quick|long|test] [-c LIST] [-o DIR]
#
#   -m MODE  benchmark durations, as make run's MODE (default full)
#   -c LIST  comma list of benchmark worker counts (default 1,2,...,nproc;
#            above 16 CPUs 1,2,4,... and nproc: ast_bench takes at most 16)
#   -o DIR   where the logs and the report go (default out/ here)
#
# The diagnostic variables of the guest (scalable_tests, scalable_upstream,
# scalable_own, scalable_ast_bench; see kselftests.sh) are read from the
# environment.  DIR gets the kselftest TAP (tap.log), the markers
# (markers.log), the KTAP of the built-in KUnit suites from
# /sys/kernel/debug/kunit/*/results (kunit.ktap), dmesg (dmesg.log), the
# three joined as a console log (console.log), the run's facts (run.env),
# then report.md and report.json, written by the harness's report code
# (scalable_native.py).  Without python3 the tests still run and the logs
# are kept; the script prints the command that makes the report elsewhere
# and exits 4.  Otherwise it exits 0 when the report finds no problem,
# 1 when it does.

usage() {
	sed -n '15,20p' "$0" | sed 's/^# \{0,1\}//'
}

here=$(cd "$(dirname "$0")" && pwd) || exit 2
mode=full
cpus=""
logdir=""
while getopts m:c:o:h opt; do
	case $opt in
	m) mode=$OPTARG ;;
	c) cpus=$OPTARG ;;
	o) logdir=$OPTARG ;;
	h) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
if [ $# -gt 0 ]; then
	usage >&2
	exit 2
fi
case $mode in
long|full|quick|test) ;;
*) echo "run_scalable.sh: -m is long, full, quick or test, not '$mode'" >&2; exit 2 ;;
esac
case $cpus in
*[!0-9,]*|,*|*,|*,,*)
	echo "run_scalable.sh: -c is a comma list of worker counts, not '$cpus'" >&2
	exit 2 ;;
esac

n=$(nproc)
if [ -z "$cpus" ]; then
	i=1
	while [ "$i" -le "$n" ]; do
		cpus="$cpus${cpus:+,}$i"
		if [ "$n" -le 16 ]; then
			i=$((i + 1))
		else
			i=$((i * 2))
		fi
	done
	case ,$cpus, in
	*,"$n",*) ;;
	*) cpus="$cpus,$n" ;;
	esac
fi

logdir=${logdir:-$here/out}
mkdir -p "$logdir" || exit 2
logdir=$(cd "$logdir" && pwd) || exit 2
for f in tap.log markers.log kunit.ktap dmesg.log console.log run.env report.md \
	 report.json native.ktap.log native.kunit.json; do
	rm -f "${logdir:?}/$f"
done
out=$logdir/tap.log
: > "$out"
: > "$logdir/markers.log"

if [ "$(id -u)" != 0 ]; then
	echo "run_scalable.sh: not root: the tests that flip the OpLog switches in" \
	     "debugfs will fail" >&2
fi
# SCALABLE_DEBUGFS: where KUnit's results are read (the unit tests' fake)
debugfs=${SCALABLE_DEBUGFS:-/sys/kernel/debug}
if [ "$debugfs" = /sys/kernel/debug ] && ! grep -q ' /sys/kernel/debug debugfs ' /proc/mounts; then
	mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
fi

say() {
	echo "SCALABLE: $*" | tee -a "$logdir/markers.log"
	echo "# SCALABLE: $*" >> "$out"
}

# The KTAP of the built-in suites, as they ran at boot: each results file
# is a document of one suite (its own "KTAP version 1" and "1..1", the
# suite indented, "ok 1 SUITE"); join them into one document of all the
# suites, as the console has them, for kunit.py parse.
kunit_ktap() {
	nr=0
	for f in "$debugfs"/kunit/*/results; do
		[ -r "$f" ] && nr=$((nr + 1))
	done
	if [ "$nr" = 0 ]; then
		echo "run_scalable.sh: no $debugfs/kunit/*/results" \
		     "(CONFIG_KUNIT_DEBUGFS, debugfs)" >&2
	fi
	echo "KTAP version 1"
	echo "1..$nr"
	i=0
	for f in "$debugfs"/kunit/*/results; do
		[ -r "$f" ] || continue
		i=$((i + 1))
		sed -e '1,2d' -e "\$s/^\\(not ok\\|ok\\) 1 /\\1 $i /" "$f"
	done
}

append="$(cat /proc/cmdline) scalable_mode=$mode scalable_cpus=$cpus"
for v in scalable_own scalable_upstream scalable_tests scalable_ast_bench; do
	eval "val=\${$v}"
	# shellcheck disable=SC2154
	[ -n "$val" ] && append="$append $v=$val"
done
{
	echo "mode=$mode"
	echo "cpus=$cpus"
	echo "nproc=$n"
	echo "kernel=$(uname -r)"
	echo "host=$(uname -n)"
	echo "append=$append"
	echo "start=$(date +%s)"
} > "$logdir/run.env"
kunit_ktap > "$logdir/kunit.ktap"

cd "$here" || exit 2
# read by kselftests.sh
# shellcheck disable=SC2034
scalable_mode=$mode
# shellcheck disable=SC2034
scalable_cpus=$cpus
# (kselftests.sh beside this file in the source tree)
# shellcheck source-path=SCRIPTDIR source=kselftests.sh disable=SC1091
. "$here/tools/testing/scalable/kselftests.sh"
scalable_bench_args
say "init start mode=$mode cpus=$n kernel=$(uname -r) native"
echo "run_scalable.sh: worker counts $cpus; kselftest TAP in $out"
scalable_kselftests
say "done"

echo "end=$(date +%s)" >> "$logdir/run.env"
dmesg > "$logdir/dmesg.log" 2>&1
cat "$logdir/kunit.ktap" "$logdir/markers.log" "$logdir/dmesg.log" > "$logdir/console.log"

report=tools/testing/scalable/scalable_native.py
if ! command -v python3 > /dev/null 2>&1; then
	case $logdir in
	"$here"/*) rel=${logdir#"$here"/}; also="" ;;
	*) rel=$logdir; also=", and $logdir to the same path there" ;;
	esac
	echo "run_scalable.sh: no python3 here: the tests ran and their logs are in $logdir."
	echo "To make the report, copy $here (the unpacked tarball) to a machine with"
	echo "python3 (3.7 or later)$also, and run in the copy:"
	echo
	echo "  python3 $report $rel"
	echo
	exit 4
fi
python3 "$here/$report" "$logdir"
