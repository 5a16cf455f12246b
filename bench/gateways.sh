#!/usr/bin/env bash
# One large file copied into strata's HDFS and read back four ways — the
# comparison of the second white paper (a 10 GB file: `hdfs dfs -put`
# 32.6 s, fuse-dfs 77 s = 2.4x, the NFS gateway 118 s = 3.6x):
#
#   put      strata dfs -put            /  strata dfs -cat
#   fuse     cp into a `strata fuse` mount / cat from it
#   nfs      bench/cmd/nfscp against `strata nfs3`: 1 MiB UNSTABLE WRITEs,
#            8 in flight, then COMMIT / 1 MiB READs, 8 in flight (what the
#            kernel client does; these machines have no NFS client)
#   webhdfs  curl -L -T (CREATE) / curl -L (OPEN) on the NameNode's HTTP port
#
#   bench/gateways.sh [size] [rounds]     (default 2g, 3)
#
# STRATA_BIN=path runs that strata binary (say, one built from another
# commit, to compare two in alternating runs) instead of building
# ./cmd/strata; nfscp is always built from the working tree. ROTATE=k
# makes round r start with way r-1+k (default 0), so short runs can cover
# every order.
#
# One `strata local -nomapreduce` (a NameNode and one DataNode, replication
# 1, ports picked free) in a temporary directory, the real binary for
# every gateway. Each round writes the file all four ways (each round
# starting with a different way, `sync` before each write), then reads
# the `put` copy back all four ways (the same bytes, so no way reads a
# copy its own client still caches), then deletes them. Every written copy must
# have the HDFS checksum of the `put` copy, every read the CRC of the
# source. Prints the median of the rounds as a Markdown table, with each
# round's times below it.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
size=${1:-2g}
rounds=${2:-3}
bytes=$(numfmt --from=iec "${size^^}")
tmp=$(mktemp -d)
local_pid= nfs_pid= fuse_pid=
cleanup() {
  stop "$fuse_pid"
  if mountpoint -q "$tmp/mnt" 2>/dev/null; then fusermount3 -u -z "$tmp/mnt" || true; fi
  stop "$nfs_pid"
  stop "$local_pid"
  rm -rf "$tmp"
}
trap cleanup EXIT

if [ -n "${STRATA_BIN:-}" ]; then
  cp "$STRATA_BIN" "$tmp/strata"
else
  go build -o "$tmp/strata" ./cmd/strata
fi
go build -o "$tmp/nfscp" ./bench/cmd/nfscp
s=$tmp/strata

start_local "$tmp/local.log" -D dfs.namenode.rpc-address=127.0.0.1:0 -D dfs.namenode.http-address=127.0.0.1:0 -D dfs.replication=1 \
  local -nomapreduce -datanodes 1 -data "$tmp/data"
export STRATA_CONF_DIR=$tmp/data/conf

"$s" -D dfs.replication=1 nfs3 -port 0 -bind 127.0.0.1 > "$tmp/nfs.log" 2>&1 &
nfs_pid=$!
mkdir "$tmp/mnt"
"$s" -D dfs.replication=1 fuse "$tmp/mnt" > "$tmp/fuse.log" 2>&1 &
fuse_pid=$!
for _ in $(seq 100); do grep -q 'serving NFSv3' "$tmp/nfs.log" && mountpoint -q "$tmp/mnt" && break; sleep 0.2; done
nfs=$(grep -m1 -o 'addr=127.0.0.1:[0-9]*' "$tmp/nfs.log" | cut -d= -f2)
mountpoint -q "$tmp/mnt" && [ -n "$nfs" ] || { echo "gateways did not start:" >&2; cat "$tmp/nfs.log" "$tmp/fuse.log" >&2; exit 1; }

head -c "$bytes" /dev/urandom > "$tmp/src"
crc=$(cksum < "$tmp/src")
"$s" dfs -mkdir /gw

declare -A t # t[way,w|r,round] = seconds
timed() { # key cmd...: runs cmd, records its wall time under key
  local key=$1 t0; shift
  t0=$(now)
  "$@"
  t[$key]=$(echo "$(now) - $t0" | bc)
}
write_put() { "$s" dfs -put "$tmp/src" /gw/put; }
write_fuse() { cp "$tmp/src" "$tmp/mnt/gw/fuse"; }
write_nfs() { "$tmp/nfscp" put "$tmp/src" "$nfs" /gw/nfs 2> /dev/null; }
write_webhdfs() { curl -sSf -L -T "$tmp/src" "$web/webhdfs/v1/gw/webhdfs?op=CREATE&user.name=$(id -un)&replication=1" > /dev/null; }
read_put() { "$s" dfs -cat /gw/put | check_crc put; }
read_fuse() { cat "$tmp/mnt/gw/put" | check_crc fuse; }
read_nfs() { "$tmp/nfscp" get "$nfs" /gw/put 2> /dev/null | check_crc nfs; }
read_webhdfs() { curl -sSf -L "$web/webhdfs/v1/gw/put?op=OPEN&user.name=$(id -un)" | check_crc webhdfs; }
ways="put fuse nfs webhdfs"

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for r in $(seq "$rounds"); do
  # Each round starts with a different way, and dirty pages are flushed
  # before each write, so none pays for another's writeback.
  k=$(( (r - 1 + ${ROTATE:-0}) % 4 ))
  order=$(echo $ways $ways | cut -d' ' -f"$(( k + 1 ))-$(( k + 4 ))")
  for w in $order; do sync; timed "$w,w,$r" "write_$w"; done
  want=$("$s" dfs -checksum /gw/put | cut -f2-)
  for w in $ways; do
    got=$("$s" dfs -checksum "/gw/$w" | cut -f2-)
    [ "$got" = "$want" ] || { echo "$w: HDFS checksum $got, want $want (the put copy's)" >&2; exit 1; }
  done
  for w in $order; do timed "$w,r,$r" "read_$w"; done
  "$s" dfs -rm -r -skipTrash '/gw/*' > /dev/null
done

mb=$(echo "$bytes / 1000000" | bc -l)
echo "Machine: $(machine "$tmp" "$load_before")"
echo "File: $size ($bytes bytes) of random data, one DataNode, replication 1, 128 MiB blocks; median of $rounds rounds"
echo
echo "| way | write s | write × put | write MB/s | read s | read × cat | read MB/s | paper, 10 GB write |"
echo "|---|---:|---:|---:|---:|---:|---:|---|"
pw=$(rounds_median put,w) pr=$(rounds_median put,r)
declare -A paper=([put]="32.6 s (1.0×)" [fuse]="77 s (2.4×)" [nfs]="118 s (3.6×)" [webhdfs]="—")
for w in $ways; do
  mw=$(rounds_median "$w,w") mr=$(rounds_median "$w,r")
  printf '| %s | %.2f | %.2f | %.0f | %.2f | %.2f | %.0f | %s |\n' "$w" "$mw" "$(echo "$mw / $pw" | bc -l)" \
    "$(echo "$mb / $mw" | bc -l)" "$mr" "$(echo "$mr / $pr" | bc -l)" "$(echo "$mb / $mr" | bc -l)" "${paper[$w]}"
done
echo
for r in $(seq "$rounds"); do
  printf 'round %s:' "$r"
  for w in $ways; do printf ' %s %.2f/%.2f s' "$w" "${t[$w,w,$r]}" "${t[$w,r,$r]}"; done
  echo " (write/read)"
done
