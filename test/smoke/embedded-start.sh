#!/usr/bin/env bash
# Smoke test of the README's first command: `npm start` with no DATABASE_URL starts the embedded
# PostgreSQL, the CLI creates an account and a key against it, curl creates and lists a lead, the
# lead.created webhook reaches a receiver on loopback, signed, and SIGTERM to npm stops it all.
# Each check that passes is counted; the count is printed last (`smoke: N passed, M failed`) and
# written as JSON to $SMOKE_SUMMARY_FILE when set, which .ci/run adds to jest's.
set -euo pipefail
cd "$(dirname "$0")/../.."

export DATA_DIR; DATA_DIR="$(mktemp -d /tmp/spa-smoke.XXXXXX)"
chmod 755 "$DATA_DIR"
# Below Linux's ephemeral range (32768–60999 by default): an outgoing connection's local port there
# can hold the port at the moment the service binds it.
export PORT="${SMOKE_PORT:-28457}"
export LOG_LEVEL=info
# The receiver below is on loopback, which the address guard refuses unless allowed (README, first calls).
export WEBHOOK_ALLOW_PRIVATE_URLS=true
unset DATABASE_URL
base="http://127.0.0.1:$PORT"
log="$DATA_DIR/server.log"

passed=0
failed=0
summary() {
  echo "smoke: $passed passed, $failed failed"
  if [ -n "${SMOKE_SUMMARY_FILE:-}" ]; then echo "{\"passed\":$passed,\"failed\":$failed}" >"$SMOKE_SUMMARY_FILE"; fi
}
pass() { passed=$((passed + 1)); echo "[smoke] ok: $*"; }

# SIGTERM to the npm process only, as `kill <pid>` or a process supervisor sends it; npm start
# passes it on to the service (scripts/start.js). Then wait until no process of the group is left.
stop_server() {
  kill -TERM "$server_pid" 2>/dev/null || true
  for _ in $(seq 1 60); do pgrep -g "$server_pid" >/dev/null 2>&1 || return 0; sleep 0.5; done
  return 1
}

cleanup() {
  [ -n "${receiver_pid:-}" ] && kill "$receiver_pid" 2>/dev/null || true
  if [ -n "${server_pid:-}" ] && pgrep -g "$server_pid" >/dev/null 2>&1; then
    stop_server || kill -KILL -- "-$server_pid" 2>/dev/null || true
  fi
  rm -rf "$DATA_DIR"
}
trap cleanup EXIT

fail() {
  failed=$((failed + 1))
  echo "[smoke] FAIL: $*"; echo "--- server log"; tail -n 40 "$log" || true
  summary
  exit 1
}

setsid npm start --silent >"$log" 2>&1 &
server_pid=$!
for _ in $(seq 1 120); do
  curl -fsS "$base/readyz" >/dev/null 2>&1 && break
  kill -0 "$server_pid" 2>/dev/null || fail "the service exited during start"
  sleep 1
done
curl -fsS "$base/readyz" >/dev/null || fail "the service did not become ready in 120 s"
pass "service ready on $base (embedded PostgreSQL in $DATA_DIR)"
database_port="$(sed -n 4p "$DATA_DIR/pg/postmaster.pid")"

npm run --silent cli -- accounts create --email smoke@acme.test --name "Smoke Co" >/dev/null 2>&1 || fail "cli accounts create"
pass "cli accounts create"
key="$(npm run --silent cli -- keys create --email smoke@acme.test --type test --name smoke 2>/dev/null)"
[[ "$key" =~ ^sk_test_[A-Za-z0-9]{32}$ ]] || fail "cli keys create printed '$key'"
pass "cli keys create printed a test key"

# A receiver that appends each webhook's signature header and body to a file. It listens on a port
# the kernel picks (a fixed one can be held by an outgoing connection's local port) and writes it
# to a file once it listens.
node -e '
  const fs = require("fs");
  const server = require("http").createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => { fs.appendFileSync(process.argv[1], req.headers["webhook-signature"] + " " + body + "\n"); res.end("ok"); });
  });
  server.listen(0, "127.0.0.1", () => fs.writeFileSync(process.argv[2], String(server.address().port)));
' "$DATA_DIR/hooks.log" "$DATA_DIR/hook.port" &
receiver_pid=$!
for _ in $(seq 1 40); do [ -s "$DATA_DIR/hook.port" ] && break; sleep 0.25; done
[ -s "$DATA_DIR/hook.port" ] || fail "the webhook receiver did not start listening within 10 s"
hook_port="$(cat "$DATA_DIR/hook.port")"
hook=$(curl -s -X POST "$base/v1/webhooks" -H "Authorization: Bearer $key" -H 'Content-Type: application/json' \
  -d "{\"url\":\"http://127.0.0.1:$hook_port/hook\",\"events\":[\"lead.created\"]}")
echo "$hook" | grep -q '"secret":"whsec_' || fail "POST /v1/webhooks answered $hook"
pass "webhook subscription created"

status=$(curl -s -o "$DATA_DIR/create.json" -w '%{http_code}' -X POST "$base/v1/leads" \
  -H "Authorization: Bearer $key" -H 'Content-Type: application/json' \
  -d '{"company":"Initech","contact_email":"bill@initech.test","industry":"Software","employees":120}')
[ "$status" = 201 ] || fail "POST /v1/leads answered $status: $(cat "$DATA_DIR/create.json")"
grep -q '"score_label"' "$DATA_DIR/create.json" || fail "created lead has no score_label"
pass "POST /v1/leads created a scored lead"

curl -fsS "$base/v1/leads" -H "Authorization: Bearer $key" | grep -q 'bill@initech.test' || fail "GET /v1/leads does not list the lead"
pass "GET /v1/leads lists it"
health=$(curl -s -o /dev/null -w '%{http_code}' "$base/v1/health" -H "Authorization: Bearer $key")
[ "$health" = 200 ] || fail "GET /v1/health answered $health"
pass "GET /v1/health"

for _ in $(seq 1 40); do grep -q '"type":"lead.created"' "$DATA_DIR/hooks.log" 2>/dev/null && break; sleep 0.25; done
grep -q '^v1,[A-Za-z0-9+/=]* .*"type":"lead.created".*bill@initech.test' "$DATA_DIR/hooks.log" \
  || fail "no signed lead.created webhook arrived within 10 s: $(cat "$DATA_DIR/hooks.log" 2>/dev/null)"
pass "a signed lead.created webhook arrived"

stop_server || fail "a process of npm start was still running 30 s after SIGTERM to npm"
pass "SIGTERM to npm left no process of npm start"
server_pid=
grep -q '"msg":"stopped"' "$log" || fail "the service did not shut down cleanly on SIGTERM"
pass "the service shut down in order"
if [ -f "$DATA_DIR/pg/postmaster.pid" ] || (echo >"/dev/tcp/127.0.0.1/$database_port") 2>/dev/null; then
  fail "the embedded PostgreSQL is still running after shutdown"
fi
pass "the embedded PostgreSQL stopped and its port $database_port is free"
summary
