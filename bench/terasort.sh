#!/usr/bin/env bash
# TeraSort as the README runs it — `strata local` (NameNode, 3 DataNodes,
# JobTracker, 3 TaskTrackers), jobs on its JobTracker, 4 reduces, every
# default as a new user has it — next to GNU sort of the same records as
# 100-byte lines and dd's fdatasync write rate, measured in the same run
# on the same file system.
#
#   bench/terasort.sh [rows] [rounds]     (default 20m = 2 GB, 3 rounds)
#
# Each round sorts the same TeraGen input (dirty pages synced first); the
# output is checked with TeraValidate against TeraGen's checksum. The CPU
# column is what the whole cluster used (the strata local process and
# its task children: user + system), from /proc. Prints a Markdown table.
#
# STRATA_BIN=path runs that strata binary (say, one built from another
# commit, to compare two in runs back to back) instead of building
# ./cmd/strata.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
rows=${1:-20m}
rounds=${2:-3}
with_tmp
load0=$(cut -d' ' -f1-3 /proc/loadavg)
if [ -n "${STRATA_BIN:-}" ]; then
  cp "$STRATA_BIN" "$tmp/strata"
else
  go build -o "$tmp/strata" ./cmd/strata
fi
go build -o "$tmp/tera2lines" ./bench/tera2lines
s=$tmp/strata
start_local "$tmp/local.log" -D dfs.namenode.rpc-address=127.0.0.1:0 -D dfs.namenode.http-address=127.0.0.1:0 \
  -D mapreduce.jobtracker.address=127.0.0.1:0 -D mapreduce.jobtracker.http.address=127.0.0.1:0 local -data "$tmp/data"
export STRATA_CONF_DIR=$tmp/data/conf

cpu() { # the strata local process's CPU seconds, its reaped children included
  awk -v hz="$(getconf CLK_TCK)" '{ split($0, a, ") "); split(a[2], f, " "); printf "%.2f\n", (f[12] + f[13] + f[14] + f[15]) / hz }' "/proc/$local_pid/stat"
}

"$s" examples teragen "$rows" /tera/in > "$tmp/gen.log" 2>&1
want=$(grep -m1 '^checksum' "$tmp/gen.log" | cut -f2)
bytes=$("$s" dfs -du -s /tera/in | awk '{print $1}')
"$s" dfs -cat '/tera/in/part-*' | "$tmp/tera2lines" > "$tmp/lines"

declare -A t
for r in $(seq "$rounds"); do
  "$s" dfs -rm -r -skipTrash /tera/out /tera/report > /dev/null 2>&1 || true
  sync
  c0=$(cpu); t0=$(now)
  "$s" -D mapreduce.job.reduces=4 examples terasort /tera/in /tera/out > "$tmp/sort.log" 2>&1
  t[ts,$r]=$(echo "$(now) - $t0" | bc); t[cpu,$r]=$(echo "$(cpu) - $c0" | bc)
  "$s" examples teravalidate /tera/out /tera/report > "$tmp/val.log" 2>&1
  got=$("$s" dfs -cat /tera/report/part-r-00000 | grep checksum | cut -f2)
  [ "$got" = "$want" ] || { echo "round $r: TeraValidate checksum $got, want $want" >&2; exit 1; }
  sync
  t0=$(now)
  LC_ALL=C sort -S 50% --parallel="$(nproc)" -T "$tmp" -o "$tmp/lines.sorted" "$tmp/lines"
  t[gnu,$r]=$(echo "$(now) - $t0" | bc)
  rm -f "$tmp/lines.sorted"
  t0=$(now)
  dd if=/dev/zero of="$tmp/dd" bs=1M count=1024 conv=fdatasync status=none
  t[dd,$r]=$(echo "$(now) - $t0" | bc)
  rm -f "$tmp/dd"
  # The floor: a two-pass sort writes every byte twice (map output, final
  # output); dd writing that much into the page cache, no sync, one core.
  t0=$(now)
  dd if=/dev/zero of="$tmp/floor" bs=1M count=$((2 * bytes / 1048576)) status=none
  t[floor,$r]=$(echo "$(now) - $t0" | bc)
  rm -f "$tmp/floor"
done

ts=$(rounds_median ts) gnu=$(rounds_median gnu) dd=$(rounds_median dd) cpus=$(rounds_median cpu) floor=$(rounds_median floor)
mb=$(echo "$bytes / 1000000" | bc)
ddrate=$(echo "1073.741824 / $dd" | bc -l)
echo "Machine: $(machine "$tmp" "$load0")"
echo "TeraSort of $rows rows ($bytes bytes) on strata local's JobTracker, 4 reduces, defaults; TeraValidate checksum $want every round; median of $rounds rounds"
echo
echo "| what | s | MB/s | vs GNU sort |"
echo "|---|---:|---:|---:|"
printf "| TeraSort (cluster CPU %s s) | %.1f | %.0f | %.2f× |\n" "$cpus" "$ts" "$(echo "$mb / $ts" | bc -l)" "$(echo "$gnu / $ts" | bc -l)"
printf "| GNU sort (LC_ALL=C, -S 50%%, --parallel=%s), same records as lines | %.1f | %.0f | 1.00× |\n" "$(nproc)" "$gnu" "$(echo "$mb / $gnu" | bc -l)"
printf "| dd 1 GiB conv=fdatasync (write rate) | %.2f | %.0f | |\n" "$dd" "$ddrate"
printf "| dd of 2 × the data into the page cache, no sync (the two passes' writes alone, one core) | %.2f | %.0f | |\n" "$floor" "$(echo "2 * $mb / $floor" | bc -l)"
printf "\nTeraSort's rate is %.0f%% of dd's write rate. 3× GNU sort would be %.1f s; the page-cache writes alone take %.1f s of CPU (%.1f s on %s cores).\n" \
  "$(echo "100 * $mb / $ts / $ddrate" | bc -l)" "$(echo "$gnu / 3" | bc -l)" "$floor" "$(echo "$floor / $(nproc)" | bc -l)" "$(nproc)"
echo
for r in $(seq "$rounds"); do echo "round $r: terasort ${t[ts,$r]} s (cluster CPU ${t[cpu,$r]} s), GNU sort ${t[gnu,$r]} s, dd ${t[dd,$r]} s, page-cache floor ${t[floor,$r]} s"; done
