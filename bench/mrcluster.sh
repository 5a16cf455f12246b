#!/usr/bin/env bash
# TeraSort on a JobTracker and two TaskTrackers (separate processes on this
# machine, file:// storage) next to the same TeraSort in local mode (one
# process), on the same TeraGen data in the same run: what the cluster path
# (child processes, HTTP shuffle between the trackers) costs, with a child
# process per attempt (Hadoop's default) and with task reuse
# (mapreduce.job.jvm.numtasks=-1, as the SanDisk cluster ran).
#
#   bench/mrcluster.sh [rows] [reduces] [rounds]   (default 5000000 = 500 MB, 2, 1)
#
# Both runs use 64 MiB splits, the default sort buffer and local dirs under
# $TMPDIR; each TaskTracker has 1 map and 1 reduce slot, so at most two maps
# (or reduces) run at once, as in local mode on 2 cores. Both outputs are
# validated with TeraValidate and must have TeraGen's checksum. With
# several rounds the three runs rotate (which goes first changes too)
# and the table has the medians, with every round's times below it.
# Prints a Markdown table.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
rows=${1:-5000000}
reduces=${2:-2}
rounds=${3:-1}
load0=$(cut -d' ' -f1-3 /proc/loadavg)
tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT

go build -o "$tmp/strata" ./cmd/strata
s="$tmp/strata"
port=$(( 20000 + RANDOM % 20000 ))
jt=127.0.0.1:$port
common=(-D mapreduce.input.fileinputformat.split.minsize=67108864 -D mapreduce.input.fileinputformat.split.maxsize=67108864
  -D mapreduce.job.reduces="$reduces" -D mapreduce.local.map.tasks.maximum=2)
"$s" -D mapreduce.jobtracker.address="$jt" -D mapreduce.jobtracker.http.address=127.0.0.1:0 -D mapreduce.jobtracker.heartbeat.interval=100 jobtracker > "$tmp/jt.log" 2>&1 &
pids+=($!)
for i in 1 2; do
  "$s" -D mapreduce.jobtracker.address="$jt" -D mapreduce.tasktracker.http.address=127.0.0.1:0 \
    -D mapreduce.cluster.local.dir="$tmp/tt$i" -D mapred.tasktracker.map.tasks.maximum=1 \
    -D mapred.tasktracker.reduce.tasks.maximum=1 tasktracker > "$tmp/tt$i.log" 2>&1 &
  pids+=($!)
done
"$s" -D mapreduce.cluster.local.dir="$tmp/local" examples teragen "$rows" "file://$tmp/in" > "$tmp/gen.log" 2>&1
"$s" -D mapreduce.cluster.local.dir="$tmp/local" examples terasum "file://$tmp/in" "file://$tmp/sum" > /dev/null 2>&1
want=$(cut -f2 "$tmp/sum/part-r-00000")
bytes=$(du -sb "$tmp/in" | cut -f1)

run() { # mode out → prints "seconds shuffle-bytes"
  local mode=$1 out=$2 extra=()
  case $mode in
  classic) extra=(-D mapreduce.framework.name=classic -D mapreduce.jobtracker.address="$jt") ;;
  reuse) extra=(-D mapreduce.framework.name=classic -D mapreduce.jobtracker.address="$jt" -D mapreduce.job.jvm.numtasks=-1) ;;
  esac
  sync
  local t0 t1
  t0=$(date +%s.%N)
  "$s" "${common[@]}" "${extra[@]}" -D mapreduce.cluster.local.dir="$tmp/local" examples terasort "file://$tmp/in" "file://$out" > "$tmp/$mode.log" 2>&1
  t1=$(date +%s.%N)
  "$s" -D mapreduce.cluster.local.dir="$tmp/local" examples teravalidate "file://$out" "file://$out.report" > /dev/null 2>&1
  local got
  got=$(grep checksum "$out.report/part-r-00000" | cut -f2)
  [ "$got" = "$want" ] || { echo "$mode: checksum $got, want $want" >&2; exit 1; }
  echo "$(echo "$t1 - $t0" | bc) $(grep -m1 'Reduce shuffle bytes=' "$tmp/$mode.log" | cut -d= -f2)"
}
declare -A t sh
for r in $(seq "$rounds"); do
  case $((r % 3)) in
  1) modes=(local classic reuse) ;;
  2) modes=(classic reuse local) ;;
  0) modes=(reuse local classic) ;;
  esac
  for m in "${modes[@]}"; do
    rm -rf "$tmp/out-$m" "$tmp/out-$m.report"
    res=$(run "$m" "$tmp/out-$m") # an assignment, so that a failed run stops the script
    read -r t[$m,$r] sh[$m] <<< "$res"
  done
done
t_local=$(rounds_median local) t_cl=$(rounds_median classic) t_re=$(rounds_median reuse)

echo "Machine: $(machine "$tmp" "$load0")"
echo "TeraSort of $rows rows ($bytes bytes), $reduces reduces, checksum $want in every run; median of $rounds rounds"
echo
echo "| run | seconds | MB/s | shuffled bytes |"
echo "|---|---:|---:|---:|"
printf "| local mode (one process) | %.1f | %.1f | %s |\n" "$t_local" "$(echo "$bytes / $t_local / 1000000" | bc -l)" "${sh[local]}"
printf "| JobTracker + 2 TaskTrackers (a child process per attempt, HTTP shuffle) | %.1f | %.1f | %s |\n" "$t_cl" "$(echo "$bytes / $t_cl / 1000000" | bc -l)" "${sh[classic]}"
printf "| the same with task reuse (mapreduce.job.jvm.numtasks=-1) | %.1f | %.1f | %s |\n" "$t_re" "$(echo "$bytes / $t_re / 1000000" | bc -l)" "${sh[reuse]}"
printf "\nThe cluster path costs %+.0f%% over local mode, %+.0f%% with task reuse (medians).\n" \
  "$(echo "100 * ($t_cl - $t_local) / $t_local" | bc -l)" "$(echo "100 * ($t_re - $t_local) / $t_local" | bc -l)"
for r in $(seq "$rounds"); do echo "round $r: local ${t[local,$r]} s, JobTracker ${t[classic,$r]} s, with reuse ${t[reuse,$r]} s"; done
