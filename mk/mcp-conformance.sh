#!/usr/bin/env bash
# Runs the official MCP conformance suite's server scenarios against `tdm mcp --http` serving a
# workspace with the bundled echo plugin approved, failing on any scenario that is not in
# conformance/mcp-baseline.yml (and on a baseline entry that now passes).
#   mk/mcp-conformance.sh TDM SUITE_DIR
set -eu
tdm=$1 suite=$2
tmp=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
export TDM_WORKSPACE=$tmp/ws
"$tdm" hub add bundled examples/hub --key examples/keys/bundled-hub.pub >/dev/null
"$tdm" install echo --hub bundled >/dev/null
"$tdm" approve echo --yes >/dev/null
"$tdm" mcp --http 127.0.0.1:0 2>"$tmp/server.log" &
pid=$!
for _ in $(seq 100); do grep -q ' at http' "$tmp/server.log" && break; sleep 0.1; done
url=$(sed -n 's/.* at \(http[^ ]*\)$/\1/p' "$tmp/server.log" | head -1)
[ -n "$url" ] || { cat "$tmp/server.log"; echo "tdm mcp --http did not start" >&2; exit 1; }
node=$(ls "$suite"/node_modules/node-linux-*/bin/node)
"$node" "$suite/node_modules/@modelcontextprotocol/conformance/dist/index.js" server --url "$url" \
	--expected-failures conformance/mcp-baseline.yml
