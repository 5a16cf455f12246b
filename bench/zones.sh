#!/usr/bin/env bash
# The Zones applications on `strata local` (a NameNode, 3 DataNodes, a
# JobTracker and 3 TaskTrackers in one process; task attempts are child
# processes): skygen writes a uniform catalogue of N objects to HDFS, then
# neighbors and neighborstats (θ = 60″, 2 reduces) run with the default sort
# buffer (128 MiB splits spill 4 times per map), with io.sort.mb=400 (once),
# with 32 MiB splits (once), and with io.sort.mb=400 plus lz4 map-output
# compression, each configuration `rounds` times, interleaved.
#
#   bench/zones.sh [objects] [rounds]     (default 10m, 1)
#
# For each run: wall seconds, CPU seconds (the cluster process with its
# reaped task children, plus the client), spills per map, map output bytes,
# output bytes, pairs. CPU seconds are steadier than wall time when the
# machine carries other load. Prints a Markdown table.
set -euo pipefail
cd "$(dirname "$0")/.."
objects=${1:-10m}
rounds=${2:-1}
tmp=$(mktemp -d)
pid=
cleanup() { if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi; rm -rf "$tmp"; }
trap cleanup EXIT

go build -o "$tmp/strata" ./cmd/strata
s="$tmp/strata"
"$s" -D dfs.namenode.rpc-address=127.0.0.1:0 -D dfs.namenode.http-address=127.0.0.1:0 \
  -D mapreduce.jobtracker.address=127.0.0.1:0 -D mapreduce.jobtracker.http.address=127.0.0.1:0 \
  local -data "$tmp/data" > "$tmp/local.log" 2>&1 &
pid=$!
for _ in $(seq 100); do [ -f "$tmp/data/conf/mapred-site.xml" ] && break; sleep 0.2; done
export STRATA_CONF_DIR=$tmp/data/conf
"$s" examples skygen "$objects" /sky/uniform > "$tmp/skygen.log" 2>&1
inbytes=$(grep -m1 'HDFS: Number of bytes written=' "$tmp/skygen.log" | cut -d= -f2)

cpu() { awk '{print $14+$15+$16+$17}' "/proc/$pid/stat"; }
run() { # app name extra... → one table row
  local app=$1 name=$2; shift 2
  local out=/sky/out-$app-$name-$r log=$tmp/$app-$name-$r.log
  local c0 c1 t0 t1 ct
  c0=$(cpu); t0=$(date +%s.%N)
  TIMEFORMAT="%U %S"
  ct=$( { time "$s" -D mapreduce.job.reduces=2 "$@" examples "$app" /sky/uniform "$out" > "$log" 2>&1; } 2>&1 )
  t1=$(date +%s.%N); c1=$(cpu)
  printf '| %s | %s | %.1f | %.1f | %s | %s | %s | %s |\n' "$app" "$name" "$(echo "$t1 - $t0" | bc)" \
    "$(echo "($c1 - $c0) / $(getconf CLK_TCK) + $(echo "$ct" | awk '{print $1 + $2}')" | bc -l)" \
    "$(grep -o '[0-9.]* spills per map' "$log" | head -1 | cut -d' ' -f1)" \
    "$(grep -m1 'Map output materialized bytes=' "$log" | cut -d= -f2)" \
    "$(grep -m1 'HDFS: Number of bytes written=' "$log" | cut -d= -f2)" \
    "$(grep -m1 'Pairs=' "$log" | cut -d= -f2)"
  "$s" dfs -rm -r -skipTrash "$out" > /dev/null 2>&1
}
echo "Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(go version | cut -d' ' -f3); load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "Catalogue: $objects uniform objects, $inbytes bytes on HDFS (replication 3)"
echo
echo "| application | settings | wall s | CPU s | spills/map | map output bytes | output bytes | pairs |"
echo "|---|---|---:|---:|---:|---:|---:|---:|"
for r in $(seq "$rounds"); do
  for app in neighbors neighborstats; do
    run "$app" default
    run "$app" sort400 -D mapreduce.task.io.sort.mb=400
    run "$app" split32m -D mapreduce.input.fileinputformat.split.maxsize=33554432
    run "$app" sort400-lz4 -D mapreduce.task.io.sort.mb=400 -D mapreduce.map.output.compress=true -D mapreduce.map.output.compress.codec=lz4
  done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
