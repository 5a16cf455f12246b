#!/usr/bin/env bash
# The benchmark suite on an embedded cluster (strata local: NameNode + 3
# DataNodes, MapReduce in local mode), printing one Markdown table with the
# references measured in the same run on the same disk: dd, GNU sort on the
# same records, and the papers' per-core Hadoop figures for scale.
#
#   bench/suite.sh [rows] [dfsio-files] [dfsio-size] [rtw-bytes]
#     rows         TeraGen rows (default 100m = 10 GB)
#     dfsio-files  TestDFSIO files (default 12)
#     dfsio-size   TestDFSIO file size (default 256MB)
#     rtw-bytes    randomtextwriter total bytes for the sort workload (default 2 GiB)
#
# Needs: go, GNU coreutils (dd, sort). Data goes under $TMPDIR (default /tmp).
set -euo pipefail
cd "$(dirname "$0")/.."
rows=${1:-100m}
nfiles=${2:-12}
fsize=${3:-256MB}
rtwbytes=${4:-2147483648}
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
go build -o "$work/strata" ./cmd/strata
go build -o "$work/tera2lines" ./bench/tera2lines
S="$work/strata"

"$S" local -data "$work/data" -D dfs.namenode.rpc-address=127.0.0.1:0 -D dfs.namenode.http-address=127.0.0.1:0 \
  >"$work/local.out" 2>"$work/local.err" &
for _ in $(seq 100); do grep -q 'STRATA_CONF_DIR' "$work/local.out" 2>/dev/null && break; sleep 0.2; done
export STRATA_CONF_DIR="$work/data/conf"
export HADOOP_CONF_DIR=
L="-D mapreduce.cluster.local.dir=$work/mrlocal"

secs() { # runs a command, prints its wall seconds
  local t0=$(date +%s.%N); "$@" >"$work/last.log" 2>&1 || { cat "$work/last.log" >&2; exit 1; }
  echo "$(date +%s.%N) - $t0" | bc
}
mbps() { echo "scale=1; $1 / 1048576 / $2" | bc; }

# References on the same disk.
ddw=$(dd if=/dev/zero of="$work/dd" bs=1M count=1024 conv=fdatasync 2>&1 | sed -nE 's/.* copied, ([0-9.]+) s.*/\1/p')
ddr=$(dd if="$work/dd" of=/dev/null bs=1M 2>&1 | sed -nE 's/.* copied, ([0-9.]+) s.*/\1/p')
rm -f "$work/dd"

gen=$(secs "$S" $L -D mapreduce.job.maps=4 examples teragen "$rows" /tera/in)
sum_gen=$(grep -m1 '^checksum' "$work/last.log" | cut -f2)
bytes=$("$S" dfs -du -s /tera/in | awk '{print $1}')
srt=$(secs "$S" $L -D mapreduce.job.reduces=4 examples terasort /tera/in /tera/out)
val=$(secs "$S" $L examples teravalidate /tera/out /tera/report)
sum_val=$(grep -m1 '^checksum' "$work/last.log" | cut -f2)
"$S" dfs -rm -r -skipTrash /tera/out >/dev/null

# GNU sort on the same records (as 100-byte lines keyed by the hex key).
"$S" dfs -cat '/tera/in/part-*' | "$work/tera2lines" >"$work/lines"
gsort=$(secs env LC_ALL=C sort -S 50% --parallel="$(nproc)" -T "$work" -o "$work/lines.sorted" "$work/lines")
rm -f "$work/lines" "$work/lines.sorted"
"$S" dfs -rm -r -skipTrash /tera >/dev/null

# The shuffle-heavy workload of the papers: randomtextwriter output sorted
# by the sort example (every byte crosses the shuffle).
rtw=$(secs "$S" $L -D mapreduce.randomtextwriter.totalbytes="$rtwbytes" -D mapreduce.randomtextwriter.bytespermap=268435456 \
  examples randomtextwriter /rtw/in)
rtwin=$("$S" dfs -du -s /rtw/in | awk '{print $1}')
rtws=$(secs "$S" $L -D mapreduce.job.reduces=4 examples sort /rtw/in /rtw/out)
shuffled=$(grep -m1 'Reduce shuffle bytes=' "$work/last.log" | cut -d= -f2)
"$S" dfs -rm -r -skipTrash /rtw >/dev/null

# TestDFSIO, replication 1 and 3.
dfsio() { # repl op
  "$S" -D dfs.replication="$1" $L testdfsio "-$2" -nrFiles "$nfiles" -fileSize "$fsize" -resFile "$work/dfsio.log" >"$work/dfsio.out" 2>&1 \
    || { cat "$work/dfsio.out" >&2; exit 1; }
  sed -nE 's/.*Throughput mb\/sec: ([0-9.]+).*/\1/p' "$work/dfsio.out"
}
w1=$(dfsio 1 write); r1=$(dfsio 1 read); "$S" testdfsio -clean >/dev/null 2>&1
w3=$(dfsio 3 write); r3=$(dfsio 3 read); "$S" testdfsio -clean >/dev/null 2>&1

# NNBench: create_write and fileStatus at 1, 8, 64 threads.
nnops() { echo $(( $1 < 8 ? 5000 : 20000 )); }
nn() { # threads op
  "$S" nnbench -op "$2" -threads "$1" -ops "$(nnops "$1")" 2>&1 | sed -nE 's/.*Ops per sec: ([0-9.]+).*/\1/p' | head -1 | xargs printf '%.0f'
}

echo "Machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(go version | cut -d' ' -f3), $(df -T "$work" | awk 'NR==2 {print $2}'); embedded cluster: NameNode + 3 DataNodes, MapReduce in local mode"
echo
echo "| benchmark | size | seconds | rate | reference in the same run |"
echo "|---|---|---:|---:|---|"
mb=$(echo "$bytes / 1048576" | bc)
echo "| teragen | $rows rows, $mb MiB | $(printf %.1f "$gen") | $(mbps "$bytes" "$gen") MB/s | dd write 1 GiB + fdatasync: $(mbps 1073741824 "$ddw") MB/s |"
echo "| terasort (4 reducers, output replication 1) | $mb MiB | $(printf %.1f "$srt") | $(mbps "$bytes" "$srt") MB/s | GNU sort of the same records as 100-byte lines (LC_ALL=C, $(nproc) threads): $(printf %.1f "$gsort") s, $(mbps "$bytes" "$gsort") MB/s |"
echo "| teravalidate | $mb MiB | $(printf %.1f "$val") | $(mbps "$bytes" "$val") MB/s | checksum: teragen $sum_gen, teravalidate $sum_val |"
echo "| randomtextwriter | $(echo "$rtwin / 1048576" | bc) MiB | $(printf %.1f "$rtw") | $(mbps "$rtwin" "$rtw") MB/s | |"
echo "| sort of randomtextwriter output (4 reducers) | $(echo "$rtwin / 1048576" | bc) MiB, $(echo "$shuffled / 1048576" | bc) MiB shuffled | $(printf %.1f "$rtws") | $(mbps "$rtwin" "$rtws") MB/s | |"
echo "| TestDFSIO write, replication 1 | $nfiles × $fsize | | $w1 MB/s | dd write 1 GiB + fdatasync: $(mbps 1073741824 "$ddw") MB/s |"
echo "| TestDFSIO read, replication 1 | $nfiles × $fsize | | $r1 MB/s | dd read (page cache): $(mbps 1073741824 "$ddr") MB/s |"
echo "| TestDFSIO write, replication 3 | $nfiles × $fsize | | $w3 MB/s | |"
echo "| TestDFSIO read, replication 3 | $nfiles × $fsize | | $r3 MB/s | |"
for t in 1 8 64; do
  echo "| nnbench create_write, $t threads | $(nnops $t) ops | | $(nn $t create_write) ops/s | |"
  echo "| nnbench fileStatus, $t threads | $(nnops $t) ops | | $(nn $t fileStatus) ops/s | |"
done
echo
echo "Per-core scale from the papers (TeraSort end to end): Yahoo 2009 Hadoop ≈11 MB/s per node; SanDisk 6-node cluster 1 TB in 7,386.5 s all-HDD and 3,262.5 s all-SSD ≈3.8 and 8.5 MB/s per core. This run: $(echo "scale=1; $bytes / 1048576 / $srt / $(nproc)" | bc) MB/s per core."
