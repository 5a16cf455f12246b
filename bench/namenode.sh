#!/usr/bin/env bash
# NameNode metadata throughput over real RPC, with the disk's synchronous
# write rate measured in the same run for reference.
#
#   bench/namenode.sh [benchtime]     (default 3s per case)
#
# Prints a Markdown table: one NameNode, and (ha-mkdirs) an HA nameservice
# of three NameNodes in one Raft group, where an edit is durable once a
# majority has logged it. For the single NameNode's mkdirs the last column
# is the group commit's batch: edit records per write+fsync round. The edit
# logs live in the Go test's temporary directory ($TMPDIR, default
# /tmp), so dd writes there too.
set -euo pipefail
cd "$(dirname "$0")/.."
benchtime=${1:-3s}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Reference: 4 KiB writes, each followed by a sync (dd oflag=dsync), on the
# same file system as the edit log.
dd_out=$(dd if=/dev/zero of="$tmp/dsync" bs=4k count=2000 oflag=dsync 2>&1 | tail -1)
dd_secs=$(echo "$dd_out" | sed -E 's/.* copied, ([0-9.]+) s.*/\1/')
dd_rate=$(awk -v s="$dd_secs" 'BEGIN { printf "%.0f", 2000 / s }')

go test -run XXX -bench 'NameNodeRPC' -benchtime "$benchtime" ./internal/namenode/ > "$tmp/bench.txt"

echo "Machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(go version | cut -d' ' -f3)"
echo "Reference: dd 4 KiB writes with oflag=dsync on the same file system: ${dd_rate} syncs/s"
echo
echo "| operation | NameNodes | clients | ops/s | µs/op | edit records/fsync |"
echo "|---|---|---:|---:|---:|---:|"
awk '/^BenchmarkNameNodeRPC/ {
  split($1, p, "/"); op = p[2]; cl = p[3]; sub(/clients=/, "", cl); sub(/-[0-9]+$/, "", cl)
  nn = "1"
  if (sub(/^ha-/, "", op)) nn = "3 (HA, Raft)"
  rps = "–"
  for (i = 1; i <= NF; i++) { if ($i == "ns/op") nsop = $(i-1); if ($i == "ops/s") ops = $(i-1); if ($i == "records/sync") rps = $(i-1) }
  printf "| %s | %s | %s | %s | %.1f | %s |\n", op, nn, cl, ops, nsop / 1000, rps
}' "$tmp/bench.txt"
