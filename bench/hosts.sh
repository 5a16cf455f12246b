#!/usr/bin/env bash
# A replication-3 TestDFSIO write over links shaped with tc tbf: does the
# write run at what the link carries? (Issue 15: a link shaped to 1 GbE
# must limit the write to within 10% of the rate's payload.)
#
#   bench/hosts.sh [rates] [size-MB]     (default 0,100,250,500,1000 and 256)
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
#   payload MB/s = rate/8 x 1448/1514 (TCP/IP/Ethernet: 1448 payload bytes
#                  per 1514 that tbf counts for a 1500-MTU segment)
#                  x 65536/66081 (HDFS: a 4-byte CRC per 512 bytes and a
#                  33-byte packet header per 64 KiB packet) / 2^20
#
# e.g. 1000 Mbit/s -> 113.1 MB/s. A rate whose payload is near the
# unshaped row's figure is limited by this machine, not by the link.
# Needs root (network namespaces); the Go benchmark it runs is
# BenchmarkHostsShapedWrite in internal/e2e. Prints a Markdown table.
set -euo pipefail
cd "$(dirname "$0")/.."
rates=${1:-0,100,250,500,1000}
size=${2:-256}
if [ "$(id -u)" != 0 ]; then
  echo "bench/hosts.sh: needs root (network namespaces and tc); skipped" >&2
  exit 1
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
STRATA_HOSTS_RATES=$rates STRATA_HOSTS_MB=$size \
  go test ./internal/e2e/ -run '^$' -bench '^BenchmarkHostsShapedWrite$' -benchtime 1x -timeout 30m >"$out" 2>&1 || {
  cat "$out" >&2
  exit 1
}
echo "| tbf rate | expected payload | measured (TestDFSIO) | measured / expected |"
echo "| ---: | ---: | ---: | ---: |"
# BenchmarkHostsShapedWrite/tbf=1000Mbit-2  1  3747462719 ns/op  93.36 MB/s  82.57 %-of-expected  113.1 expected-MB/s
awk '/^BenchmarkHostsShapedWrite\/tbf=/ {
  rate = $1; sub(/.*tbf=/, "", rate); sub(/Mbit.*/, "", rate)
  got = ""; exp = ""; pct = ""
  for (i = 2; i < NF; i++) {
    if ($(i+1) == "MB/s") got = $i
    if ($(i+1) == "expected-MB/s") exp = $i
    if ($(i+1) == "%-of-expected") pct = $i
  }
  if (rate == 0) printf "| unshaped | - | %s MB/s | - |\n", got
  else printf "| %s Mbit/s | %s MB/s | %s MB/s | %.0f%% |\n", rate, exp, got, pct
}' "$out"
echo
echo "${size} MB per write, replication 3, one cluster per rate; MB = 2^20 bytes as TestDFSIO's."
