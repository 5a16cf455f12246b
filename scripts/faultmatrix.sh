#!/usr/bin/env bash
# Runs strata's fault matrix (package internal/faultmatrix) against real
# strata processes and prints its table (docs/RELIABILITY.md).
#
#   scripts/faultmatrix.sh            # long form: 8x the data, kills repeated
#   scripts/faultmatrix.sh -quick     # the form CI runs in go test ./...
#   scripts/faultmatrix.sh -strict    # known daemon bugs fail instead of skipping
#   scripts/faultmatrix.sh -run Partition   # some scenarios only (go test -run)
#
# Run as root for every scenario: the network partitions use network
# namespaces (ip netns, veth pairs, a bridge) and the disk-full ones tmpfs
# mounts; without root they are skipped. Every address used is one the
# tests create on their own bridge (10.x.y.0/24) or loopback.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"

long=1 strict= run=.
while [ $# -gt 0 ]; do
  case "$1" in
    -quick) long= ;;
    -strict) strict=1 ;;
    -run) run="$2"; shift ;;
    *) echo "usage: $0 [-quick] [-strict] [-run REGEXP]" >&2; exit 2 ;;
  esac
  shift
done

rows=$(mktemp)
log=$(mktemp)
trap 'rm -f "$rows" "$log"' EXIT
form=$([ -n "$long" ] && echo long || echo quick)
start=$(date +%s)
status=0
STRATA_FAULTMATRIX_OUT="$rows" STRATA_FAULTMATRIX_LONG="$long" STRATA_FAULTMATRIX_STRICT="$strict" \
  go test -count=1 -timeout 30m -v -run "$run" ./internal/faultmatrix >"$log" 2>&1 || status=$?
elapsed=$(( $(date +%s) - start ))

echo "Fault matrix, $form form: $(nproc) cores, $(free -g | awk '/^Mem:/ {print $2}') GiB, $(uname -sr), $(go version | cut -d' ' -f3), $(date -u +%Y-%m-%d)"
echo "Command: scripts/faultmatrix.sh$([ -z "$long" ] && echo ' -quick')$([ -n "$strict" ] && echo ' -strict') ($elapsed s in all)"
echo
echo "| scenario | what was running | what was acknowledged | what survived | time to recover | result |"
echo "|---|---|---|---|---|---|"
sort "$rows"
grep -E '^(--- (FAIL|SKIP)|\s+--- (FAIL|SKIP)|FAIL|ok )' "$log" | sed 's/^/    /' || true
if [ "$status" -ne 0 ]; then
  echo
  echo "go test failed (exit $status); its output:"
  cat "$log"
fi
exit "$status"
