#!/usr/bin/env bash
# How 2026-11-22-first-format was recorded: the bus daemon of commit 3f1b7d0 (the last before
# 0ffe744 changed the segment header), the only build with a 32-byte segment header and no HEAD
# file or recovery point, writing a log of events published with that build's `bureau publish`
# (it had no reducers yet: these are the events the features would write, in the types of the
# schemas then, among them a ReservationAccepted from before commissions).
#
#   BUREAU=/path/to/3f1b7d0/bureau Tests/Histories/2026-11-22-first-format/session.sh OUT
set -euo pipefail
bureau=${BUREAU:?the bureau built from 3f1b7d0}
out=${1:?the directory to write the log into}
data=$(mktemp -d)
"$bureau" bus --data "$data" > "$data/bus.out" 2>&1 &
bus=$!
trap 'kill "$bus" 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do
    "$bureau" log stats --data "$data" > /dev/null 2>&1 && [ -S "$data/run/ingress.sock" ] && break
    sleep 0.1
done
p() { "$bureau" publish --data "$data" --type "bureau.$1" --json "$2" > /dev/null; }
p system.ProcessStarted '{"process":"bus","pid":4101}'
p rates.RatesPublished '{"asOf":"2024-01-02","base":"EUR","rates":[{"currency":"GBP","rate":"0.86518"},{"currency":"JPY","rate":"155.89"},{"currency":"USD","rate":"1.0956"}],"source":"https://www.ecb.europa.eu/stats/eurofxref/eurofxref-daily.xml"}'
p watchlist.PairAdded '{"base":"EUR","quote":"USD"}'
p watchlist.PairAdded '{"base":"EUR","quote":"GBP"}'
p watchlist.PairAdded '{"base":"USD","quote":"JPY"}'
p converter.AmountChanged '{"value":"250.00","currency":"EUR"}'
p reservations.ReservationAccepted '{"reservationId":"R7","base":"EUR","quote":"USD","amount":"500.00","rate":"1.0956","quoteAmount":"547.80","asOf":"2024-01-02"}'
p booking.ReservationConfirmed '{"reservationId":"R7","confirmationCode":"BK-1001"}'
p reservations.ReservationAccepted '{"reservationId":"R9","base":"USD","quote":"JPY","amount":"100.00","rate":"142.287","quoteAmount":"14229","asOf":"2024-01-02"}'
p booking.ReservationFailed '{"reservationId":"R9","reason":"booking service refused: limit"}'
p alerts.AlertArmed '{"alertId":"A11","base":"EUR","quote":"USD","direction":"ABOVE","threshold":"1.09"}'
p rates.RatesPublished '{"asOf":"2024-01-03","base":"EUR","rates":[{"currency":"GBP","rate":"0.86518"},{"currency":"JPY","rate":"155.67"},{"currency":"USD","rate":"1.0919"}],"source":"https://www.ecb.europa.eu/stats/eurofxref/eurofxref-daily.xml"}'
p alerts.AlertTriggered '{"alertId":"A11","base":"EUR","quote":"USD","direction":"ABOVE","threshold":"1.09","rate":"1.0919","asOf":"2024-01-03"}'
p watchlist.PairRemoved '{"base":"EUR","quote":"GBP"}'
p reservations.CancellationAccepted '{"reservationId":"R7"}'
p booking.ReservationCancelled '{"reservationId":"R7"}'
p system.ErrorRaised '{"module":"rates-adapter","code":"fetch-failed","message":"HTTP 503 from the rates source"}'
kill -TERM "$bus"
wait "$bus" || true
trap - EXIT
mkdir -p "$out"
cp -a "$data/log/." "$out/"
rm -f "$out/LOCK" "$out/lock"
rm -rf "$data"
