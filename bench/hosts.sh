#!/usr/bin/env bash
# Clusters shaped like the papers' (issue 15), two measurements:
#
# 1. A replication-3 TestDFSIO write over links shaped with tc tbf: does
#    the write run at what the link carries? (A link shaped to 1 GbE must
#    limit the write to within 10% of the rate's payload.)
# 2. A CPU-bound map on a node given a CPU share (a cgroup CFS quota): a
#    half-CPU node should take about twice as long as a one-CPU node.
#
#   bench/hosts.sh [rates] [size-MB] [cpu-shares]
#       (default 0,100,250,500,1000, 256 and 1,0.5,0.25)
#
# rates are in Mbit/s; 0 is an unshaped link, the machine's own ceiling
# (CPU: three replicas checksummed and written). For each rate, one
# cluster of three DataNodes and one TaskTracker, each on a host of its
# own (network namespaces on a bridge, internal/testcluster), every host's
# link shaped to the rate in both directions, runs
# `strata testdfsio -write -nrFiles 1 -fileSize <size>MB` at replication
# 3: the pipeline tracker -> DataNode -> DataNode -> DataNode crosses each
# link once per direction, so the write should run at the link's payload
# rate:
#
#   payload MB/s = rate/8 x 1448/(1514+33) (TCP/IP/Ethernet: 1448 payload
#                  bytes per 1514 that tbf counts for a 1500-MTU segment,
#                  plus, on a middle node's outgoing link, a 66-byte TCP
#                  ACK per two segments it receives)
#                  x 65536/66081 (HDFS: a 4-byte CRC per 512 bytes and a
#                  33-byte packet header per 64 KiB packet) / 2^20
#
# e.g. 1000 Mbit/s -> 110.7 MB/s. A rate whose payload is near the
# unshaped row's figure is limited by this machine, not by the link.
# Needs root (network namespaces); the Go benchmark it runs is
# BenchmarkHostsShapedWrite in internal/e2e. Prints a Markdown table.
set -euo pipefail
cd "$(dirname "$0")/.."
rates=${1:-0,100,250,500,1000}
rounds=${STRATA_HOSTS_ROUNDS:-3}
size=${2:-256}
cpus=${3:-1,0.5,0.25}
if [ "$(id -u)" != 0 ]; then
  echo "bench/hosts.sh: needs root (network namespaces and tc); skipped" >&2
  exit 1
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
STRATA_HOSTS_ROUNDS=$rounds STRATA_HOSTS_RATES=$rates STRATA_HOSTS_MB=$size \
  go test ./internal/e2e/ -run '^$' -bench '^BenchmarkHostsShapedWrite$' -benchtime 1x -timeout 30m >"$out" 2>&1 || {
  cat "$out" >&2
  exit 1
}
echo "| tbf rate | expected payload | measured (TestDFSIO) | measured / expected |"
echo "| ---: | ---: | ---: | ---: |"
# BenchmarkHostsShapedWrite/tbf=1000Mbit-2  1  3747462719 ns/op  93.36 MB/s  82.57 %-of-expected  113.1 expected-MB/s
awk '/^BenchmarkHostsShapedWrite\/tbf=/ {
  rate = $1; sub(/.*tbf=/, "", rate); sub(/Mbit.*/, "", rate)
  got = ""; want = ""; pct = ""
  for (i = 2; i < NF; i++) {
    if ($(i+1) == "MB/s") got = $i
    if ($(i+1) == "expected-MB/s") want = $i
    if ($(i+1) == "%-of-expected") pct = $i
  }
  if (rate == 0) printf "| unshaped | - | %s MB/s | - |\n", got
  else printf "| %s Mbit/s | %s MB/s | %s MB/s | %.0f%% |\n", rate, want, got, pct
}' "$out"
echo
echo "${size} MB per write, replication 3, best of $rounds runs per rate (one cluster each, interleaved); MB = 2^20 bytes as TestDFSIO's."

# 2. CPU shares: BenchmarkHostsCPUShare, a grep map over a 30 MB TeraGen
# (a regular expression whose group extraction runs Go's NFA on every
# byte), on a one-TaskTracker cluster whose node (tracker and task
# processes alike) has the share as a CFS quota per 100 ms period.
STRATA_HOSTS_ROUNDS=$rounds STRATA_HOSTS_CPUS=$cpus \
  go test ./internal/e2e/ -run '^$' -bench '^BenchmarkHostsCPUShare$' -benchtime 1x -timeout 30m >"$out" 2>&1 || {
  cat "$out" >&2
  exit 1
}
echo
echo "| CPU share (quota/period) | map run time | x the first share's | expected | CPUs the node got |"
echo "| ---: | ---: | ---: | ---: | ---: |"
first=${cpus%%,*}
awk -v first="$first" '/^BenchmarkHostsCPUShare\/cpus=/ {
  c = $1; sub(/.*cpus=/, "", c); sub(/-[0-9]+$/, "", c)
  for (i = 2; i < NF; i++) {
    if ($(i+1) == "map-s") t = $i
    if ($(i+1) == "x-first") x = $i
    if ($(i+1) == "cpus-got") g = $i
  }
  printf "| %s CPU | %s s | %.2fx | %.2fx | %.2f |\n", c, t, x, first / c, g
}' "$out"
echo
echo "Best of $rounds runs per share, interleaved. A quota is a ceiling, not a reservation: where the node got less than its share (last column: its CPU time over the map's run time), other load set the pace, and the ratio is compressed."
