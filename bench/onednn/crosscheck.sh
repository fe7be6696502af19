#!/usr/bin/env bash
# crosscheck.sh - gdnn's reduction results beside oneDNN 2.x's own, element by element.
#
# Builds the oneDNN side (bench/onednn/crosscheck.c, gcc, -ldnnl: Debian's libdnnl-dev) and the
# Go side (internal/crosscheck), then runs N random benchdnn-style problems from SEED on
# both libraries with the same src bytes: every alg (sum, max, min, mul, mean and the four Lp
# norms with p 1, 2 and 3 and several eps), f32, bf16, f16, s8 and u8 src into the dst types
# oneDNN takes, plain, permuted and blocked tags (aBx8b, aBx16b, ABx16a16b, ABcd32a16b, ...),
# ranks 1 to 5, tails, the sum post-op, and (EDGE, a fraction of the float problems) NaN, +-Inf,
# -0 and the largest finite values. It prints every difference (problem as a benchdnn repro line,
# its number for -index, the first differing elements with oneDNN's, gdnn's and a float64
# reference's values) and a summary: counts per alg, data types and tags, what each library
# refused and why, signed-zero differences, and edge problems where oneDNN is not IEEE and gdnn
# is. Exit status 1 on any other difference, 2 on a set-up error. Not part of CI.
#
# Usage: bench/onednn/crosscheck.sh [N [SEED]]      (default 2000 problems, seed 1)
# Env:   GDNN_MAX_CPU_ISA (avx512, avx2, none = the interpreter), EDGE (0.15), BUILD
#        (/tmp/gdnn-crosscheck-build), OMP_NUM_THREADS (oneDNN's threads), ARGS (more flags
#        for the Go side, e.g. "-v" for every problem, "-index 42" to rerun problem 42,
#        "-alg mul", "-dt f32:s8", "-max-elems 65536"; N counts problems drawn, filtered or not).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
N=${1:-2000}
SEED=${2:-1}
BUILD=${BUILD:-/tmp/gdnn-crosscheck-build}
mkdir -p "$BUILD"
gcc -O2 -Wall "$HERE/crosscheck.c" -o "$BUILD/crosscheck_onednn" -ldnnl
(cd "$ROOT" && go build -o "$BUILD/crosscheck" ./internal/crosscheck)
# shellcheck disable=SC2086
exec "$BUILD/crosscheck" -onednn "$BUILD/crosscheck_onednn" -n "$N" -seed "$SEED" -edge "${EDGE:-0.15}" ${ARGS:-}
