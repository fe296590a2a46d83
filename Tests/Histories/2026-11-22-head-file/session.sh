#!/usr/bin/env bash
# How 2026-11-22-head-file was recorded: the whole deployment (`bureau up`, the embedded ECB rates
# and booking servers) of commit bf126b4, the last build before 31900c4 replaced the HEAD file
# with the recovery point: its log names its newest segment in log/HEAD and has no recovery
# point. The session, over some ECB days: pairs added (and refused) and removed, a conversion,
# alerts set, triggered and cleared, reservations confirmed, failed (the booking service
# refuses a share of calls) and cancelled, and the booking adapter killed and restarted.
#
#   BUREAU=/path/to/bf126b4/bureau Tests/Histories/2026-11-22-head-file/session.sh OUT
set -euo pipefail
bureau=${BUREAU:?the bureau built from bf126b4}
out=${1:?the directory to write the log into}
work=$(mktemp -d)
data=$work/data
cat > "$work/bureau.yaml" <<'YAML'
processes:
  bus:
    command: bus
  rates-server:
    command: serve rates --port 0 --pace 0.5 --start 2024-01-02
  booking-server:
    command: serve booking --port 0 --latency 50 --failure-rate 0.3
  reducers:
    command: run watchlist converter reservations alerts
    depends_on: [bus]
  rates-adapter:
    command: run rates-adapter --set rates-url=${rates-server.ready}/stats/eurofxref/eurofxref-daily.xml --set poll-ms=250
    depends_on: [bus, rates-server]
  booking-adapter:
    command: run booking-adapter --set booking-url=${booking-server.ready}
    depends_on: [bus, booking-server]
restart:
  initial_backoff_ms: 200
  max_backoff_ms: 2000
  max_restarts: 5
  reset_after_s: 60
ready_timeout_s: 60
stop_timeout_s: 10
YAML
"$bureau" up --no-tui --file "$work/bureau.yaml" --data "$data" > "$work/up.log" 2>&1 &
up=$!
trap 'kill "$up" 2>/dev/null || true' EXIT
b() { "$bureau" "$@" --data "$data"; }
json() { python3 -c "import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))" "$1"; }
send() { echo "  send $1" >&2; b send "$1" --timeout 30 "${@:2}" > /dev/null || echo "  (refused: $1)" >&2; }
rate() { b show watchlist --json | json "[r['rate'] for r in d['rows'] if r['pair']=='$1/$2'][0]"; }
reserve() {
    for _ in 1 2 3; do
        b send "bureau://reservations/reserve?base=$1&quote=$2&amount=$3&rate=$(rate "$1" "$2")" --timeout 30 \
            > /dev/null 2>&1 && return 0
    done
    echo "  (refused three times: $1/$2 $3)" >&2
}
for _ in $(seq 1 120); do
    b show watchlist --json 2>/dev/null | grep -q '"asOf"' && break
    sleep 0.5
done
send 'bureau://watchlist/add?base=EUR&quote=USD'
send 'bureau://watchlist/add?base=EUR&quote=GBP'
send 'bureau://watchlist/add?base=USD&quote=JPY'
send 'bureau://watchlist/add?base=EUR&quote=XYZ'
send 'bureau://converter/amount?value=250&currency=EUR'
sleep 1
usd=$(rate EUR USD)
send "bureau://alerts/set?base=EUR&quote=USD&above=$(python3 -c "print(round($usd * 0.999, 4))")"
send "bureau://alerts/set?base=EUR&quote=GBP&below=0.5"
for amount in 100.00 250.50 640.00; do reserve EUR USD $amount; done
reserve EUR GBP 500.00
echo "  the booking adapter killed (kill -9); the supervisor restarts it" >&2
kill -KILL "$(b ps --json | json "[p['pid'] for p in d if p['name']=='booking-adapter'][0]")"
reserve USD JPY 50.00
settled() { b show reservations --json | json "all(r['status'] in ('confirmed','failed','cancelled') for r in d['reservations'])"; }
for _ in $(seq 1 120); do [ "$(settled)" = True ] && break; sleep 0.5; done
confirmed=$(b show reservations --json | json "[r['id'] for r in d['reservations'] if r['status']=='confirmed'][0]")
send "bureau://reservations/cancel?id=$confirmed" --outcome
send 'bureau://watchlist/remove?base=EUR&quote=GBP'
send "bureau://alerts/clear?id=$(b show alerts --json | json "[a['id'] for a in d['alerts']][-1]")"
sleep 4
b down > /dev/null
wait "$up" || true
trap - EXIT
mkdir -p "$out"
cp -a "$data/log/." "$out/"
rm -f "$out/LOCK" "$out/lock"
rm -rf "$work"
