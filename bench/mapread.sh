#!/usr/bin/env bash
# TeraSort's map phase with its input read cold: how much of a read-path
# gain reaches MapReduce. Page cache dropped before each job (run as root).
#
#   bench/mapread.sh [records] [rounds]     (default 10000000 = 1 GB, 3)
#
# One `strata local -datanodes 1` (NameNode, one DataNode, JobTracker and
# one TaskTracker; ports picked free) in a temporary directory, the real
# binary. TeraGen writes the input once; each round drops the page cache
# and runs TeraSort with 2 reduces. From the job's history file: the map
# phase (first map attempt start to last map attempt finish), the mean map
# attempt time and the whole job. A cold dd of a file of the same size is
# the disk's reference, measured in the same run.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
records=${1:-10000000}
rounds=${2:-3}
with_tmp
[ -w /proc/sys/vm/drop_caches ] || { echo "bench/mapread.sh drops the page cache: run it as root" >&2; exit 1; }
go build -o "$tmp/strata" ./cmd/strata
s=$tmp/strata
start_local "$tmp/local.log" -D dfs.namenode.rpc-address=127.0.0.1:0 -D dfs.namenode.http-address=127.0.0.1:0 -D mapreduce.jobtracker.address=127.0.0.1:0 \
  local -datanodes 1 -data "$tmp/data"
export STRATA_CONF_DIR=$tmp/data/conf
"$s" examples teragen "$records" /in > /dev/null 2>&1
head -c "$((records * 100))" /dev/urandom > "$tmp/ref"
sync

declare -a dd_s phase_s mean_s job_s
for r in $(seq "$rounds"); do
  cold
  t0=$(date +%s.%N); dd if="$tmp/ref" of=/dev/null bs=1M status=none; dd_s[r]=$(printf "%.2f" "$(echo "$(date +%s.%N) - $t0" | bc)")
  "$s" dfs -rm -r -skipTrash /out > /dev/null 2>&1 || true
  cold
  out=$("$s" -D mapreduce.job.reduces=2 examples terasort /in /out 2>&1)
  job=$(echo "$out" | grep -o 'job_[0-9_]*' | head -1)
  hist=$("$s" -fs "$rpc" dfs -ls -R /tmp 2>/dev/null | grep -o "/[^ ]*$job.json" | head -1)
  read -r ph mn jb < <("$s" -fs "$rpc" dfs -cat "$hist" | python3 -c '
import json, sys
from datetime import datetime
def t(s): return s / 1000 if isinstance(s, (int, float)) else datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()
h = json.load(sys.stdin)
m = [a for a in h["attempts"] if a["taskType"] == "MAP" and a["state"] == "SUCCEEDED"]
starts, ends = [t(a["startTime"]) for a in m], [t(a["finishTime"]) for a in m]
print("%.2f %.2f %.2f" % (max(ends) - min(starts), sum(e - s for s, e in zip(starts, ends)) / len(m), t(h["finishTime"]) - t(h["submitTime"])))')
  phase_s[r]=$ph mean_s[r]=$mn job_s[r]=$jb
done
echo "Machine: $(machine); input $((records * 100)) bytes; page cache dropped before each job; median of $rounds rounds"
echo
echo "| what | s |"
echo "|---|---:|"
echo "| dd cold read of the same size | $(median "${dd_s[@]}") |"
echo "| TeraSort map phase | $(median "${phase_s[@]}") |"
echo "| mean map attempt | $(median "${mean_s[@]}") |"
echo "| TeraSort job | $(median "${job_s[@]}") |"
echo
for r in $(seq "$rounds"); do echo "round $r: dd ${dd_s[r]} s, map phase ${phase_s[r]} s, mean map ${mean_s[r]} s, job ${job_s[r]} s"; done
