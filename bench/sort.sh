#!/usr/bin/env bash
# strata's map-side sort (internal/spill: sort buffer, spills, merge) next
# to GNU sort, on the same records, same machine, same run.
#
#   bench/sort.sh [records] [sort buffer MiB]    (default 2000000 = 200 MB, 100 MiB)
#
# Records are 100 bytes: a 10-byte printable key, 89 printable bytes and a
# newline, so GNU sort (LC_ALL=C, lines) and strata (key = first 10 bytes,
# value = the other 90) sort identical bytes; the script checks that both
# outputs are byte-for-byte equal. Both get the same memory (sort -S) and
# write their temporary files and output under $TMPDIR (default /tmp);
# dirty pages are flushed (sync) before each timed run.
# Prints a Markdown table.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-2000000}
mb=${2:-100}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

go build -o "$tmp/sortbench" ./internal/spill/cmd/sortbench
"$tmp/sortbench" gen -n "$n" -o "$tmp/in"
cat "$tmp/in" > /dev/null # in the page cache for both

TIMEFORMAT='%R %U %S'
timed() { # runs "$@" after flushing dirty pages, prints "wall user sys"
  sync
  { time "$@" > /dev/null; } 2>&1 | tail -1
}
t_gnu=$(timed env LC_ALL=C sort -S "${mb}M" --parallel="$(nproc)" -T "$tmp" -o "$tmp/gnu.txt" "$tmp/in")
rm -rf "$tmp/local" && mkdir "$tmp/local"
t_none=$(timed "$tmp/sortbench" sort -i "$tmp/in" -dir "$tmp/local" -mb "$mb" -codec none)
"$tmp/sortbench" dump -dir "$tmp/local" -o "$tmp/strata.txt" -codec none
cmp -s "$tmp/gnu.txt" "$tmp/strata.txt" || { echo "strata's output differs from GNU sort's" >&2; exit 1; }
rm -rf "$tmp/local" "$tmp/strata.txt" && mkdir "$tmp/local"
t_lz4=$(timed "$tmp/sortbench" sort -i "$tmp/in" -dir "$tmp/local" -mb "$mb" -codec lz4)
"$tmp/sortbench" dump -dir "$tmp/local" -o "$tmp/strata.txt" -codec lz4
cmp -s "$tmp/gnu.txt" "$tmp/strata.txt" || { echo "strata's lz4 output differs from GNU sort's" >&2; exit 1; }

echo "Machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(go version | cut -d' ' -f3), $(sort --version | head -1); file system: $(df -T "$tmp" | awk 'NR==2 {print $2}')"
echo "Input: $n records of 100 bytes; sort buffer ${mb} MiB for both; outputs compared byte for byte: identical"
echo
echo "| sorter | records | MB | seconds | MB/s | CPU seconds | MB/s per core |"
echo "|---|---:|---:|---:|---:|---:|---:|"
row() { # name "wall user sys"
  echo "$2" | awk -v name="$1" -v n="$n" '{
    mb = n * 100 / 1e6; cpu = $2 + $3
    printf "| %s | %d | %.0f | %.2f | %.0f | %.2f | %.0f |\n", name, n, mb, $1, mb / $1, cpu, mb / cpu
  }'
}
row "GNU sort (LC_ALL=C, -S ${mb}M, --parallel=$(nproc))" "$t_gnu"
row "strata spill.Collector, 1 partition, no compression" "$t_none"
row "strata spill.Collector, 1 partition, lz4" "$t_lz4"
