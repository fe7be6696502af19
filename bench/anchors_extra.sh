#!/usr/bin/env bash
# anchors_extra.sh - gdnn as the EXTRA_CMD candidate of shared/anchors/run_all.sh.
#
# run_all.sh calls it per shape and round as
#     ANCHOR_TIME=$TIME $EXTRA_CMD SRC:DST
# e.g. EXTRA_CMD="bash /path/to/gdnn/bench/anchors_extra.sh". For each data
# type pair (GDNN_ANCHOR_DT, default "f32:f32 bf16:bf16 bf16:f32 f16:f16 f16:f32")
# and thread count (GDNN_ANCHOR_THREADS, default 0 = gdnn's default)
# it runs gdnnbench in performance mode for ANCHOR_TIME seconds (default 0.4)
# and prints one line in the format make_table.py reads:
#     gdnn prb=SRC:DST sdt=S ddt=D threads=N variant=IMPL iters=N median_us=X min_us=X gbps_median=X gbps_best=X bwpct=X
# (median_us/min_us: microseconds per execute; GB/s = (src+dst bytes)/time).
# Problems gdnn does not run are reported on stderr and skipped.
# GDNNBENCH may name a prebuilt gdnnbench; otherwise it is built (cached by go).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
PRB="${1:?usage: ANCHOR_TIME=S anchors_extra.sh SRC:DST}"
TIME="${ANCHOR_TIME:-0.4}"
DTS="${GDNN_ANCHOR_DT:-f32:f32 bf16:bf16 bf16:f32 f16:f16 f16:f32}"
THREADS="${GDNN_ANCHOR_THREADS:-0}"   # e.g. "2 1"; 0 = gdnn's default (GOMAXPROCS)
BIN="${GDNNBENCH:-}"
if [ -z "$BIN" ]; then
  BIN="${TMPDIR:-/tmp}/gdnnbench-anchors"
  (cd "$HERE/.." && go build -o "$BIN" ./cmd/gdnnbench)
fi
MS="$(awk -v t="$TIME" 'BEGIN { printf "%d", t * 1000 }')"
TPL='gdnn prb=%desc% sdt=%sdt% ddt=%ddt% threads=%threads% variant=%impl% iters=%times% median_ms=%~time% min_ms=%-time% gbps_median=%~Gbw% gbps_best=%-Gbw% bwpct=%-bwpct%'
for thr in $THREADS; do
for dt in $DTS; do
  out="$("$BIN" --mode=P --max-ms-per-prb="$MS" --threads="$thr" --reduction --sdt="${dt%%:*}" --ddt="${dt##*:}" \
        --perf-template="$TPL" "$PRB")" || { echo "gdnnbench failed for $PRB $dt" >&2; continue; }
  # Keep the measured lines (not the template header), ms -> us.
  printf '%s\n' "$out" | awk '/^gdnn prb=/ && /median_ms=[0-9]/ {
      for (i = 1; i <= NF; i++) {
        split($i, kv, "=")
        if (kv[1] == "median_ms") $i = "median_us=" kv[2] * 1000
        else if (kv[1] == "min_ms") $i = "min_us=" kv[2] * 1000
      }
      print
    }'
  printf '%s\n' "$out" | grep -E '^[0-9]+:(UNIMPLEMENTED|FAILED|SKIPPED|INVALID_ARGUMENTS)' >&2 || true
done
done
