#!/usr/bin/env bash
# Instructions per request of the gateway's process, counted by valgrind's callgrind: a figure that does
# not move with what else the machine is doing (bench/HISTORY.md, Round 15), for comparing two versions
# of the code where `npm run bench`'s ratios swing by more than the change.
#
#   bash bench/profile/instructionsPerRequest.sh get|post|graphql-one|graphql-detail [checkout] [count]
#
# Starts this checkout's database (dist/db.js, memory only) and, under callgrind with instrumentation
# off, the gateway of `checkout` (its dist/main.js, as `npm start` runs it; build it there first), with
# the bench's settings. It creates an account and a payment (for graphql-detail paid, and refunded
# twice), sends WARM requests (default 3000) so that V8 compiles the hot paths, then counts the
# instructions of `count` requests (default 3000) at 20
# connections (bench/profile/fixedLoad.ts) and prints their total divided by `count` (KEEP=1 keeps the
# working directory with the callgrind output and the logs, for a run that failed). The count still
# includes what V8 compiles and collects meanwhile: a GET's figure moved by about 3 % between runs of
# one build, a POST's by up to 10 % (whether a major GC fell in the window), so compare a few runs of
# each, alternated. Slow: a GET run takes about 1.5 minutes.
set -euo pipefail
MODE=${1:?get, post, graphql-one or graphql-detail}
TREE=$(cd "${2:-.}" && pwd)
COUNT=${3:-3000}
WARM=${WARM:-3000}
HERE=$(cd "$(dirname "$0")/../.." && pwd)
cd "$HERE"
[ -f dist/db.js ] || npm run build > /dev/null
[ -f "$TREE/dist/main.js" ] || { echo "$TREE/dist/main.js is missing: run npm run build there" >&2; exit 2; }
command -v valgrind > /dev/null || { echo "valgrind is not installed (apt-get install valgrind)" >&2; exit 2; }
work=$(mktemp -d)
port() { node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"; }
DB_PORT=$(port) DB_HOST=127.0.0.1 DATA_DIR= node dist/db.js > "$work/db.log" 2>&1 &
DB_PID=$!
GW_PID=
# The gateway stops first, while its database still answers (a gateway whose database is gone keeps
# retrying), and is killed if it has not stopped within 15 s.
cleanup() {
  if [ -n "$GW_PID" ] && kill "$GW_PID" 2> /dev/null; then
    for _ in $(seq 1 150); do kill -0 "$GW_PID" 2> /dev/null || break; sleep 0.1; done
    kill -9 "$GW_PID" 2> /dev/null || true
  fi
  kill "$DB_PID" 2> /dev/null || true
  [ -n "${KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT
for _ in $(seq 1 100); do grep -q '^MONGODB_URI=' "$work/db.log" && break; sleep 0.1; done
URI=$(sed -n 's/^MONGODB_URI=//p' "$work/db.log" | head -1)
GW_PORT=$(port)
# valgrind names its control pipes after $HOST, which the gateway also reads (its bind address).
export HOST=127.0.0.1
PORT=$GW_PORT MONGODB_URI=$URI WEBHOOK_SECRETS_KEY=YmVuY2gtb25seSB3ZWJob29rIHNlY3JldHMga2V5MzI= \
  RATE_LIMIT_PER_MINUTE=100000000 ACCOUNT_CREATION_PER_MINUTE=100000000 PUBLIC_RATE_LIMIT_PER_MINUTE=100000000 \
  LOG_LEVEL=warn NODE_ENV=production MALLOC_ARENA_MAX=2 \
  valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$work/cg.%p" \
  node --max-semi-space-size=64 --heap-growing-percent=50 --no-parallel-scavenge "$TREE/dist/main.js" > "$work/gw.log" 2>&1 &
GW_PID=$!
URL=http://127.0.0.1:$GW_PORT
for _ in $(seq 1 300); do curl -sf "$URL/readyz" > /dev/null && break; sleep 1; done
SK=$(curl -sf -XPOST "$URL/v1/sandbox/accounts" -H 'content-type: application/json' -d '{"name":"instructions","email":"ipr@example.com"}' | node -pe 'JSON.parse(require("fs").readFileSync(0)).sk')
PAY=$(curl -sf -XPOST "$URL/v1/payment_intents" -H "authorization: Bearer $SK" -H 'content-type: application/json' -H "idempotency-key: ipr-first-payment" \
  -d '{"amount":5000,"currency":"AOA","payment_method":"multicaixa_reference"}' | node -pe 'JSON.parse(require("fs").readFileSync(0)).id')
if [ "$MODE" = graphql-detail ]; then
  # As the bench's detail-page row reads it: paid, with two refunds that have succeeded (about 3 s each).
  REF=$(curl -sf "$URL/v1/payment_intents/$PAY" -H "authorization: Bearer $SK" | node -pe 'JSON.parse(require("fs").readFileSync(0)).reference.number')
  curl -sf -XPOST "$URL/v1/sandbox/simulate/reference_paid" -H "authorization: Bearer $SK" -H 'content-type: application/json' -d "{\"reference\":\"$REF\"}" > /dev/null
  for i in 1 2; do
    curl -sf -XPOST "$URL/v1/refunds" -H "authorization: Bearer $SK" -H 'content-type: application/json' -H "idempotency-key: ipr-refund-$i" \
      -d "{\"payment_intent\":\"$PAY\",\"amount\":1000}" > /dev/null
  done
  sleep 5
fi
npx tsx bench/profile/fixedLoad.ts "$MODE" "$URL" "$SK" "$WARM" "$PAY" > /dev/null
callgrind_control -i on "$GW_PID" > /dev/null 2>&1
answers=$(npx tsx bench/profile/fixedLoad.ts "$MODE" "$URL" "$SK" "$COUNT" "$PAY")
callgrind_control -d counted "$GW_PID" > /dev/null 2>&1
total=$(grep -h '^totals:' "$work"/cg.*.1 | head -1 | cut -d' ' -f2)
echo "$MODE $(basename "$TREE") $(git -C "$TREE" rev-parse --short HEAD): $((total / COUNT)) instructions per request ($answers)"
