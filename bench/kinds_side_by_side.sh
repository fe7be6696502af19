#!/usr/bin/env bash
# kinds_side_by_side.sh - every reduction alg beside oneDNN 2.6's same alg.
#
# For each round, anchor shape, alg, data type pair and thread count it runs
# oneDNN's reduction (bench/onednn/onednn_reduce_ext.c, OMP_NUM_THREADS) and
# gdnnbench --mode=P --alg, one right after the other, and prints one line:
#   round=R shape=S alg=A dt=SDT:DDT threads=T onednn_impl=I onednn_us=U gdnn_impl=J gdnn_us=V
# (NA where a tool did not run the problem). cmd/gdnnperf -kinds turns the
# lines into PERFORMANCE.md's kinds table (ratios within each round).
#
# Usage: bench/kinds_side_by_side.sh > kinds.txt
# Env: ROUNDS (3), TIME (0.3 s per measurement), SHAPES (A..I),
#      ALGS ("sum max min mul mean norm_lp_sum logsumexp"; norm_lp_* run with p 2,
#      eps 0; logsumexp, which oneDNN's reduction does not have, is gdnn's
#      Exp -> ReduceSum -> Log through the graph driver, the same types in and out),
#      DTS ("f32:f32"; e.g. "u8:s32 s8:s8" for int8), THREADS ("2 1"),
#      BUILD (/tmp/gdnn-kinds-build),
#      BASE (a gdnnbench binary built at another commit: timed right after
#      gdnn on each line, as base_impl= and base_us=, for before/after).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
REPO="$(cd "$HERE/.." && pwd)"
BUILD="${BUILD:-/tmp/gdnn-kinds-build}"
mkdir -p "$BUILD"
export PATH="$PATH:/usr/local/go/bin"
gcc -O2 -march=native -fopenmp "$HERE/onednn/onednn_reduce_ext.c" -o "$BUILD/onednn_reduce" -ldnnl -lm
(cd "$REPO" && go build -o "$BUILD/gdnnbench" ./cmd/gdnnbench)

ROUNDS="${ROUNDS:-3}" TIME="${TIME:-0.3}"
SHAPES="${SHAPES:-A B C D E F G H I}"
ALGS="${ALGS:-sum max min mul mean norm_lp_sum logsumexp}"
DTS="${DTS:-f32:f32}" THREADS="${THREADS:-2 1}"
declare -A PRB=([A]=6x12x10x24:6x12x1x1 [B]=64x1024:64x1 [C]=1024x4096:1024x1 [D]=1024x4096:1x4096
  [E]=32x256x56x56:32x256x1x1 [F]=32x56x56x256:32x1x1x256 [G]=64x1048576:64x1 [H]=16777216:1
  [I]=8x512x4096:8x1x4096)
MS="$(awk -v t="$TIME" 'BEGIN { printf "%d", t * 1000 }')"
# Log-sum-exp as a graph: Exp -> ReduceSum (keep_dims) -> Log; each shape
# sets src's dims (--in-shapes) and the axes (--op-attrs).
cat > "$BUILD/logsumexp.json" <<'JSON'
{"version": "3.0.0", "engine_kind": "cpu", "graph": [
 {"id": 1, "name": "exp", "kind": "Exp", "attrs": {},
  "inputs": [{"id": 0, "dtype": "f32", "shape": [2, 2], "stride": [2, 1], "layout_type": "strided", "property_type": "undef"}],
  "outputs": [{"id": 1, "dtype": "f32", "shape": [2, 2], "stride": [2, 1], "layout_type": "strided", "property_type": "undef"}]},
 {"id": 2, "name": "sum", "kind": "ReduceSum",
  "attrs": {"axes": {"type": "s64[]", "value": [1]}, "keep_dims": {"type": "bool", "value": 1}},
  "inputs": [{"id": 1, "dtype": "f32", "shape": [2, 2], "stride": [2, 1], "layout_type": "strided", "property_type": "undef"}],
  "outputs": [{"id": 2, "dtype": "f32", "shape": [2, 1], "stride": [1, 1], "layout_type": "strided", "property_type": "undef"}]},
 {"id": 3, "name": "log", "kind": "Log", "attrs": {},
  "inputs": [{"id": 2, "dtype": "f32", "shape": [2, 1], "stride": [1, 1], "layout_type": "strided", "property_type": "undef"}],
  "outputs": [{"id": 3, "dtype": "f32", "shape": [2, 1], "stride": [1, 1], "layout_type": "strided", "property_type": "undef"}]}]}
JSON
# axesOf SRC:DST prints the reduced dims as the graph driver's AxBx... list.
axesOf() {
  awk -F: '{ n = split($1, s, "x"); split($2, d, "x"); a = ""
    for (i = 1; i <= n; i++) if (s[i] != d[i]) a = a (a == "" ? "" : "x") (i - 1)
    print a }' <<<"$1"
}
kv() { grep -o "$1=[^ ]*" | head -1 | cut -d= -f2; }
for r in $(seq "$ROUNDS"); do
  for s in $SHAPES; do
    p="${PRB[$s]:?unknown shape $s}"
    for a in $ALGS; do
      op=() gp=()
      case "$a" in norm_lp_*) op=(--p 2 --eps 0) gp=(--p=2 --eps=0) ;; esac
      for dt in $DTS; do
        sdt="${dt%%:*}" ddt="${dt##*:}"
        for thr in $THREADS; do
          o=""
          if [ "$a" != logsumexp ]; then
            o="$(OMP_NUM_THREADS=$thr "$BUILD/onednn_reduce" --sdt "$sdt" --ddt "$ddt" --alg "$a" "${op[@]}" \
              --time "$TIME" --min-iters 5 --no-check "$p" 2>/dev/null || true)"
          fi
          gdnn() { # tool binary -> "impl us" of its last perf line
            local g gl
            if [ "$a" = logsumexp ]; then
              [ "$sdt" = "$ddt" ] || return 0
              g="$("$1" --mode=P --max-ms-per-prb="$MS" --threads="$thr" --graph --dt="$sdt" \
                --in-shapes=0:"${p%%:*}" --op-attrs=2:axes:"$(axesOf "$p")" --perf-template='X %impl% %~time%' \
                --case="$BUILD/logsumexp.json" 2>/dev/null || true)"
            else
              g="$("$1" --mode=P --max-ms-per-prb="$MS" --threads="$thr" --reduction --sdt="$sdt" \
                --ddt="$ddt" --alg="$a" "${gp[@]}" --perf-template='X %impl% %~time%' "$p" 2>/dev/null || true)"
            fi
            gl="$(awk '/^X /{ l = $0 } END { print l }' <<<"$g")"
            awk '$3 ~ /^[0-9.]+$/ { printf "%s %.3f", $2, $3 * 1000 }' <<<"$gl"
          }
          read -r gi gt <<<"$(gdnn "$BUILD/gdnnbench")" || true
          base=""
          if [ -n "${BASE:-}" ]; then
            read -r bi bt <<<"$(gdnn "$BASE")" || true
            base=" base_impl=${bi:-NA} base_us=${bt:-NA}"
          fi
          echo "round=$r shape=$s alg=$a dt=$dt threads=$thr onednn_impl=$(kv impl <<<"$o" || true)" \
            "onednn_us=$(kv median_us <<<"$o" || true) gdnn_impl=${gi:-NA} gdnn_us=${gt:-NA}$base" |
            sed -e 's/impl= /impl=NA /g' -e 's/_us= /_us=NA /g' -e 's/_us=$/_us=NA/'
        done
      done
    done
  done
done
