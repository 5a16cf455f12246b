#!/usr/bin/env bash
# Cold reads of one large file, five ways, against dd on the same disk —
# page cache dropped before every read (echo 3 > /proc/sys/vm/drop_caches,
# so run as root):
#
#   dd       dd bs=1M of a local copy of the file (the disk's cold rate)
#   get      strata dfs -get to a local file
#   api      bench/cmd/hdfsread: hdfs.Client.OpenFile → stdout → /dev/null
#   fuse     cat from a `strata fuse` mount
#   webhdfs  curl -L OPEN on the NameNode's HTTP port
#
#   bench/reads.sh [size] [rounds]     (default 1g, 3)
#
# One `strata local -nomapreduce` (a NameNode and one DataNode, replication
# 1, ports picked free) in a temporary directory, the real binary. The file
# is written once with dfs -put; each round reads it every way (each round
# starting with a different way). Every way's output is checked against
# the source's CRC once, after the timed rounds. Prints the median of the
# rounds as a Markdown table with each way's rate as a fraction of dd's,
# and each round's times below it.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
size=${1:-1g}
rounds=${2:-3}
bytes=$(numfmt --from=iec "${size^^}")
tmp=$(mktemp -d)
local_pid= fuse_pid=
cleanup() {
  stop "$fuse_pid"
  if mountpoint -q "$tmp/mnt" 2>/dev/null; then fusermount3 -u -z "$tmp/mnt" || true; fi
  stop "$local_pid"
  rm -rf "$tmp"
}
trap cleanup EXIT
[ -w /proc/sys/vm/drop_caches ] || { echo "bench/reads.sh drops the page cache: run it as root" >&2; exit 1; }

go build -o "$tmp/strata" ./cmd/strata
go build -o "$tmp/hdfsread" ./bench/cmd/hdfsread
s=$tmp/strata

start_local "$tmp/local.log" -D dfs.namenode.rpc-address=127.0.0.1:0 -D dfs.namenode.http-address=127.0.0.1:0 -D dfs.replication=1 \
  local -nomapreduce -datanodes 1 -data "$tmp/data"
export STRATA_CONF_DIR=$tmp/data/conf

mkdir "$tmp/mnt"
"$s" fuse "$tmp/mnt" > "$tmp/fuse.log" 2>&1 &
fuse_pid=$!
for _ in $(seq 100); do mountpoint -q "$tmp/mnt" && break; sleep 0.2; done
mountpoint -q "$tmp/mnt" || { echo "fuse did not mount:" >&2; cat "$tmp/fuse.log" >&2; exit 1; }

head -c "$bytes" /dev/urandom > "$tmp/src"
crc=$(cksum < "$tmp/src")
"$s" dfs -put "$tmp/src" /cold
sync

declare -A t # t[way,round] = seconds
read_dd() { dd if="$tmp/src" of=/dev/null bs=1M status=none; }
read_get() { rm -f "$tmp/got"; "$s" dfs -get /cold "$tmp/got"; }
read_api() { "$tmp/hdfsread" "$rpc/cold" > /dev/null; }
read_fuse() { cat "$tmp/mnt/cold" > /dev/null; }
read_webhdfs() { curl -sSf -L "$web/webhdfs/v1/cold?op=OPEN&user.name=$(id -un)" > /dev/null; }
ways="dd get api fuse webhdfs"

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for r in $(seq "$rounds"); do
  order=$(echo $ways $ways | cut -d' ' -f"$(( (r - 1) % 5 + 1 ))-$(( (r - 1) % 5 + 5 ))")
  for w in $order; do
    cold
    t0=$(now)
    "read_$w"
    t[$w,$r]=$(echo "$(now) - $t0" | bc)
  done
done

check_crc get < "$tmp/got"
"$tmp/hdfsread" "$rpc/cold" | check_crc api
check_crc fuse < "$tmp/mnt/cold"
curl -sSf -L "$web/webhdfs/v1/cold?op=OPEN&user.name=$(id -un)" | check_crc webhdfs

mb=$(echo "$bytes / 1000000" | bc -l)
echo "Machine: $(machine "$tmp" "$load_before")"
echo "File: $size ($bytes bytes) of random data, one DataNode, replication 1, 128 MiB blocks; page cache dropped before every read; median of $rounds rounds"
echo
echo "| way | read s | MB/s | × dd |"
echo "|---|---:|---:|---:|"
dd_s=$(rounds_median dd)
for w in $ways; do
  m=$(rounds_median "$w")
  printf '| %s | %.2f | %.0f | %.2f |\n' "$w" "$m" "$(echo "$mb / $m" | bc -l)" "$(echo "$dd_s / $m" | bc -l)"
done
echo
for r in $(seq "$rounds"); do
  printf 'round %s:' "$r"
  for w in $ways; do printf ' %s %.2f' "$w" "${t[$w,$r]}"; done
  echo " s"
done
