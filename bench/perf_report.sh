#!/usr/bin/env bash
# perf_report.sh - regenerate docs/PERFORMANCE.md with one command.
#
# One run of the shared anchors harness (run_all.sh) measures gdnn side by
# side with oneDNN, numpy, naive Go and the read-bandwidth probe on the same
# machine in the same rounds (gdnn enters through bench/anchors_extra.sh as
# EXTRA_CMD, at 2 threads and at 1 thread). Then the jit package's compile
# and execute-overhead benchmarks run, and reduce's benchmark of the
# interpreter against plain Go loops, and cmd/gdnnperf turns all of it into
# docs/PERFORMANCE.md (tables, ratios and a MET / NOT MET target summary).
# The sections measured apart and written by hand (ArgMax, integer and f64
# data, normalizations, ...) live in docs/PERFORMANCE-*.md (the list is
# cmd/gdnnperf's handWritten); each regeneration copies them in at their
# places, so edit those files, not the report.
#
# Usage: bench/perf_report.sh [--install] [--trial] [--out FILE]
#   --install  when root, apt-get install the missing prerequisites
#              (libdnnl-dev python3-numpy) instead of stopping
#   --trial    label the report a trial run (short runs that only prove the
#              pipeline; the report of record wants all shapes, ROUNDS>=3)
#   --out FILE where the report goes (default: <repo>/docs/PERFORMANCE.md);
#              it is replaced only when every step succeeded
# Env knobs passed through to run_all.sh: ROUNDS (3), TIME (0.4 s), SHAPES
# (A..I), QUIET_PCT, QUIET_MAX, QUIET_TOTAL. Others:
#   ANCHORS=<repo>/../shared/anchors   where run_all.sh lives
#   GDNN_ANCHOR_THREADS="2 1"          gdnn thread counts measured
#   BENCH_COUNT=10 BENCH_TIME=1s       go test -count / -benchtime for ./internal/jit
#   KINDS=1                            run bench/kinds_side_by_side.sh (every alg beside
#                                      oneDNN's; its own knobs: ALGS, DTS, THREADS; it uses
#                                      ROUNDS, TIME and SHAPES too); KINDS=0 skips it
#   INTERP=1 INTERP_COUNT=6 INTERP_TIME=200ms
#                                      run reduce's BenchmarkInterpVsNaive (the interpreter
#                                      against plain Go loops, about 45 minutes); INTERP=0 skips it.
#                                      Its section alone: go run ./cmd/gdnnperf -interp FILE
#   L3_BYTES=33554432                  the L3 of the roofline rule: a src of half of it or more
#                                      is compared with the 256 MiB (DRAM) probe. The default is
#                                      a Zen 3/4 CCD's 32 MiB: the fleet's hypervisor reports an
#                                      L3 that no CCD has (getconf says 508 MiB), so it is not read
# Raw results stay in /tmp/gdnn-perf-<pid> (never inside the repository).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
REPO="$(cd "$HERE/.." && pwd)"
CMDLINE="$(for v in ROUNDS TIME SHAPES QUIET_PCT QUIET_MAX QUIET_TOTAL GDNN_ANCHOR_THREADS BENCH_COUNT BENCH_TIME KINDS ALGS DTS THREADS L3_BYTES; do
  if [ -n "${!v:-}" ]; then printf "%s='%s' " "$v" "${!v}"; fi; done; printf 'bench/perf_report.sh'; for a in "$@"; do printf ' %q' "$a"; done)"

install=0 trial=0 report="$REPO/docs/PERFORMANCE.md"
while [ $# -gt 0 ]; do
  case "$1" in
    --install) install=1 ;;
    --trial) trial=1 ;;
    --out) report="${2:?--out needs a file}"; shift ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
    *) echo "perf_report.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done

ANCHORS="${ANCHORS:-$REPO/../shared/anchors}"
[ -x "$ANCHORS/run_all.sh" ] || [ -f "$ANCHORS/run_all.sh" ] ||
  { echo "perf_report.sh: no run_all.sh in ANCHORS=$ANCHORS" >&2; exit 1; }
export PATH="$PATH:/usr/local/go/bin"
command -v go >/dev/null || { echo "perf_report.sh: go is not on PATH" >&2; exit 1; }
command -v gcc >/dev/null || { echo "perf_report.sh: gcc is not on PATH (apt-get install -y gcc)" >&2; exit 1; }

# Prerequisites of the harness: oneDNN headers/library and Debian's numpy.
missing=""
for pkg in libdnnl-dev python3-numpy; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing="$missing $pkg"
done
if [ -n "$missing" ]; then
  if [ "$install" = 1 ] && [ "$(id -u)" = 0 ]; then
    echo "== installing$missing" >&2
    apt-get update && apt-get install -y $missing
  else
    echo "perf_report.sh: missing$missing; install with:" >&2
    echo "  apt-get update && apt-get install -y$missing" >&2
    echo "(or run this script as root with --install)" >&2
    exit 1
  fi
fi

OUT="/tmp/gdnn-perf-$$"
mkdir -p "$OUT"
echo "== raw results in $OUT" >&2

# gdnnbench is built once; the adapter uses it for every shape and round.
echo "== build gdnnbench" >&2
(cd "$REPO" && go build -o "$OUT/gdnnbench" ./cmd/gdnnbench)
export GDNNBENCH="$OUT/gdnnbench"
export GDNN_ANCHOR_THREADS="${GDNN_ANCHOR_THREADS:-2 1}"

echo "== anchors harness (ROUNDS=${ROUNDS:-3} TIME=${TIME:-0.4} SHAPES=${SHAPES:-A B C D E F G H I})" >&2
OUT="$OUT" BUILD="$OUT/build" EXTRA_CMD="bash $HERE/anchors_extra.sh" \
  bash "$ANCHORS/run_all.sh" > "$OUT/harness.log"

# The bandwidth chart: gdnnbench's built-in batch drawn over its read probe;
# it goes beside the report as perf-bandwidth.svg.
echo "== gdnnbench --plot (built-in batch)" >&2
(cd "$REPO" && "$OUT/gdnnbench" --plot="$OUT/perf-bandwidth.svg" --batch=cmd/gdnnbench/default_batch) \
  > "$OUT/gdnnbench-plot.txt" 2> "$OUT/gdnnbench-plot.err"

# The jit benchmarks: compile of an uncached kernel, Run on a cached one.
BENCHES="BenchmarkCompileNew BenchmarkRunTiny"
echo "== jit benchmarks ($BENCHES, -count ${BENCH_COUNT:-10})" >&2
listed="$(cd "$REPO" && go test -list 'Benchmark' ./internal/jit)"
for b in $BENCHES; do
  grep -qx "$b" <<<"$listed" || echo "perf_report.sh: warning: ./internal/jit has no $b; the report will say so" >&2
done
(cd "$REPO" && go test -run '^$' -bench "^(${BENCHES// /|})\$" -count "${BENCH_COUNT:-10}" \
  -benchtime "${BENCH_TIME:-1s}" ./internal/jit) > "$OUT/jit-bench.txt"
# benchstat (median and confidence interval) when the module proxy is reachable.
benchstat_flag=()
if (cd "$OUT" && go run golang.org/x/perf/cmd/benchstat@latest jit-bench.txt) > "$OUT/benchstat.txt" 2> "$OUT/benchstat.err"; then
  benchstat_flag=(-benchstat "$OUT/benchstat.txt")
else
  echo "perf_report.sh: benchstat unavailable ($(head -1 "$OUT/benchstat.err")); the report uses its own medians" >&2
fi

# Every reduction alg beside oneDNN's same alg, in the same session.
kinds_flag=()
if [ "${KINDS:-1}" = 1 ]; then
  echo "== kinds side by side (ALGS=${ALGS:-default} DTS=${DTS:-f32:f32})" >&2
  BUILD="$OUT/kinds-build" bash "$HERE/kinds_side_by_side.sh" > "$OUT/kinds.txt"
  kinds_flag=(-kinds "$OUT/kinds.txt")
fi

# The interpreter against plain Go loops, every anchor shape, kind and src type.
interp_flag=()
if [ "${INTERP:-1}" = 1 ]; then
  # One round per run (-count 1 takes each cell's interpreter and then its
  # plain Go), so that a cell's pair is measured moments apart.
  echo "== interpreter against plain Go (${INTERP_COUNT:-6} rounds)" >&2
  (cd "$REPO" && go test -c -o "$OUT/reduce.test" ./reduce)
  : > "$OUT/interp-bench.txt"
  for ((i = 1; i <= ${INTERP_COUNT:-6}; i++)); do
    (cd "$REPO/reduce" && "$OUT/reduce.test" -test.run '^$' -test.bench '^BenchmarkInterpVsNaive$' \
      -test.benchtime "${INTERP_TIME:-200ms}" -test.timeout 4h) >> "$OUT/interp-bench.txt"
  done
  interp_flag=(-interp "$OUT/interp-bench.txt")
fi

# The revision measured; uncommitted changes are named (git is only read).
# An earlier report in the output file is not a change to what is measured.
# A report outside the repository (--out /tmp/...) is no pathspec git takes.
REV="$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)"
exclude=()
case "$(cd "$(dirname "$report")" 2>/dev/null && pwd)/" in
  "$REPO"/*) exclude=(":(exclude)$report") ;;
esac
if [ "$REV" != unknown ] && ! GIT_OPTIONAL_LOCKS=0 git -C "$REPO" diff --quiet HEAD -- . "${exclude[@]}" 2>/dev/null; then
  REV="$REV plus uncommitted changes"
fi

trial_flag=()
[ "$trial" = 1 ] && trial_flag=(-trial)
mkdir -p "$(dirname "$report")"
(cd "$REPO" && go run ./cmd/gdnnperf -raw "$OUT/RESULTS.raw.txt" -harness "$OUT/RESULTS.txt" \
  -bench "$OUT/jit-bench.txt" "${benchstat_flag[@]}" "${trial_flag[@]}" "${kinds_flag[@]}" "${interp_flag[@]}" -plot perf-bandwidth.svg \
  -l3 "${L3_BYTES:-33554432}" -sections "$REPO/docs" \
  -cmd "$CMDLINE" -rev "$REV") > "$OUT/PERFORMANCE.md"
cp "$OUT/perf-bandwidth.svg" "$(dirname "$report")/perf-bandwidth.svg"
cp "$OUT/PERFORMANCE.md" "$report"
echo "== wrote $report (raw results: $OUT)" >&2
