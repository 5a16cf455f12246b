#!/usr/bin/env bash
# Single-client HDFS write and read throughput through strata's whole data
# path (in-process NameNode + 3 DataNodes, real RPC and DataTransferProtocol
# over loopback), replication 1 and 3, block writes buffered, buffered with
# drop-behind, and O_DIRECT — next to dd on the same file system, measured
# in the same run.
#
#   bench/dfs.sh [iterations]    (default 3 per case; each moves 256 MiB)
#
# Prints a Markdown table. Data lives under $TMPDIR (default /tmp).
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ddrate() { # prints MB/s from dd's summary line
  sed -nE 's/.*copied, ([0-9.]+) s, .*/\1/p' | awk '{ printf "%.0f", 268.435456 / $1 }'
}
ddw=$(dd if=/dev/zero of="$tmp/dd" bs=1M count=256 conv=fdatasync 2>&1 | ddrate)
ddwd=$(dd if=/dev/zero of="$tmp/dd2" bs=1M count=256 oflag=direct conv=fdatasync 2>&1 | ddrate)
ddr=$(dd if="$tmp/dd" of=/dev/null bs=1M 2>&1 | ddrate)

go test -run XXX -bench 'DFS|LoopbackTCP' -benchtime "${n}x" ./internal/dfstest/ > "$tmp/bench.txt"
# The ceiling of any read over loopback TCP here: sendfile to a socket and
# a read into a buffer, no protocol (BenchmarkLoopbackTCP).
tcp=$(awk '/^BenchmarkLoopbackTCP\/crc=false/ { for (i = 1; i <= NF; i++) if ($i == "MB/s") printf "%.0f", $(i-1) }' "$tmp/bench.txt")
tcpcrc=$(awk '/^BenchmarkLoopbackTCP\/crc=true/ { for (i = 1; i <= NF; i++) if ($i == "MB/s") printf "%.0f", $(i-1) }' "$tmp/bench.txt")

echo "Machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(go version | cut -d' ' -f3); file system: $(df -T "$tmp" | awk 'NR==2 {print $2}')"
echo "Reference, same run: dd write 256 MiB + fdatasync ${ddw} MB/s; dd write with O_DIRECT ${ddwd} MB/s; dd read (page cache) ${ddr} MB/s; loopback TCP, no protocol (sendfile → read) ${tcp} MB/s, with a CRC32C per 512 bytes ${tcpcrc} MB/s"
echo
echo "| operation | replication | block writes | MB/s | CPU s per GB (whole process) |"
echo "|---|---:|---|---:|---:|"
awk '/^BenchmarkDFS/ {
  split($1, p, "/"); op = p[2]; r = p[3]; d = p[4]; sub(/repl=/, "", r); sub(/writes=/, "", d); sub(/-[0-9]+$/, "", d)
  for (i = 1; i <= NF; i++) { if ($i == "MB/s") mb = $(i-1); if ($i == "cpu-s/GB") cpu = $(i-1) }
  printf "| %s | %s | %s | %s | %s |\n", op, r, d, mb, cpu
}' "$tmp/bench.txt"
