#!/usr/bin/env bash
# Regenerates the Go code for every .proto file under proto/.
# Needs protoc (Debian: protobuf-compiler) and protoc-gen-go at the version in go.mod:
#   go install google.golang.org/protobuf/cmd/protoc-gen-go
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$(go env GOPATH)/bin:$PATH"
module=$(go list -m)
for dir in $(find proto -name '*.proto' -printf '%h\n' | sort -u); do
  protoc -I proto --go_out=. --go_opt=module="$module" "$dir"/*.proto
done
