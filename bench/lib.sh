# Shell functions the benchmarks share; sourced (. bench/lib.sh) from the
# repository root after `set -euo pipefail`. Functions that start things
# set globals the sourcing script reads: local_pid, rpc and web.

stop() { # pid: SIGTERM, then wait for it to exit (SIGKILL after 10 s)
  [ -n "$1" ] || return 0
  kill "$1" 2>/dev/null || true
  for _ in $(seq 100); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done
  kill -9 "$1" 2>/dev/null || true
}

with_tmp() { # a temporary directory in $tmp, removed — and the strata local in
  # $local_pid stopped — when the script exits
  tmp=$(mktemp -d)
  local_pid=
  trap 'stop "$local_pid"; rm -rf "$tmp"' EXIT
}

start_local() { # log strata-args...: runs `strata args...` (a strata local) in the background
  # and waits until it has listed its addresses (its "  data" line comes
  # after them); sets local_pid, rpc (hdfs://host:port) and web
  # (http://host:port). Exits when it does not start.
  local log=$1; shift
  "$s" "$@" > "$log" 2>&1 &
  local_pid=$!
  for _ in $(seq 100); do grep -q '^  data ' "$log" && break; sleep 0.2; done
  web=$(grep -m1 -o 'NameNode web *http://[0-9.:]*' "$log" | awk '{print $3}')
  rpc=$(grep -m1 -o 'hdfs://[0-9.:]*' "$log")
  [ -n "$web" ] && [ -n "$rpc" ] || { echo "strata local did not start:" >&2; cat "$log" >&2; exit 1; }
}

now() { date +%s.%N; }

cold() { sync; echo 3 > /proc/sys/vm/drop_caches; } # needs root

check_crc() { # what: the CRC of stdin must be $crc, the source's
  local got; got=$(cksum)
  [ "$got" = "$crc" ] || { echo "$1: read back CRC $got, want $crc" >&2; exit 1; }
}

median() { # values...
  printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}

rounds_median() { # key: the median of ${t[key,1]} ... ${t[key,$rounds]}
  local r v=()
  for r in $(seq "$rounds"); do v+=("${t[$1,$r]}"); done
  median "${v[@]}"
}

machine() { # [dir load-before]: the machine, for the results' header; with
  # dir, its file system, and the load average before and now
  local m
  m="$(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(go version | cut -d' ' -f3)"
  [ $# -eq 0 ] || m="$m; file system: $(df -T "$1" | awk 'NR==2 {print $2}'); load before: $2, after: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "$m"
}
