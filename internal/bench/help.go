package bench

// HelpText is printed by --help: every option gdnnbench knows.
const HelpText = `Usage: gdnnbench [global options] --reduction [reduction options] PROBLEM ...
       gdnnbench [global options] --graph [graph options] --case=FILE.json ...
       gdnnbench [global options] --softmax|--lnorm|--gnorm [options] PROBLEM ...
       gdnnbench                  (no arguments: the built-in default batch, with a table)

gdnnbench is a benchdnn-compatible driver for gdnn: it reads oneDNN's benchdnn
batch files and options unchanged, runs each problem through gdnn's
partition/compile/execute, checks results against a float64 reference and
measures performance. Options apply to the problems that follow them, as in
benchdnn, except the whole-run output options --plot, --summary and --table,
which take effect wherever they stand (after --batch=FILE, or inside it; the
last value given wins). A list value (A,B,C) runs every combination; an empty
value (--sdt=) restores the default. Every option and batch file is read
before the first problem runs: an unknown option, a malformed value, a
--plot file that cannot be written or a missing batch or case file stops the
run there, with exit status 2 and nothing run. An option after the last
problem that applies per problem (--sdt=bf16 at the end) gets a warning.

Global options (kept by --reset):
  --mode=MODE             C correctness (default), P performance, CP both, L list,
                          I initialize (compile only), R run without checking,
                          B bitwise (two runs must agree bit for bit),
                          F fast performance (P with --max-ms-per-prb=10; not for --graph).
  --max-ms-per-prb=MS     time budget per problem in P mode (default 3000, clamped to [10, 60000]).
  --fix-times-per-prb=N   time exactly N executes instead (0: use the time budget).
  --max-isa=ISA           cap gdnn's JIT: avx512, avx2, neon, none (interpreter) or all,
                          under GDNN_MAX_CPU_ISA (the lower of the two caps applies);
                          applies to every problem after it. Empty: back to the default
                          (GDNN_MAX_CPU_ISA's cap, or all).
  --threads=N             (gdnn) threads gdnn's kernels use (0: GOMAXPROCS, the default);
                          results are bit-identical for any count.
  --impl=S1,S2 / --skip-impl=S1,S2
                          (driver options) run only problems whose implementation name
                          (jit:avx512, jit:avx2, jit:neon, interp) contains one of the
                          strings / skip those that do; others are SKIPPED.
  --global-impl=... / --global-skip-impl=...
                          the same, overriding every --impl/--skip-impl.
  --match=REGEX           (driver option) run only problems whose problem string (the
                          repro line after the driver name) contains a match; the rest
                          are dropped: not run, not counted. REGEX is a POSIX basic
                          regular expression with glibc's extensions, as benchdnn's
                          regcomp on Linux: + ? | ( ) { } are ordinary characters
                          (--match=relu+add matches "relu+add"), \+ \? \| \( \) \{m,n\} the
                          operators, \w \s \b \' too. Back-references and \< \> are
                          refused (unimplemented), malformed patterns are errors.
  --start=N               skip the first N problems.
  --repeats-per-prb=N     run each problem N times.
  --verbose=N, -vN        1: per-check error figures, skipped problems, and an [impl] line
                          saying why the interpreter ran a problem (or part of it).
  --canonical=BOOL        print every option in repro lines, defaults included.
  --engine=cpu            the only engine.
  --mode-modifier=, --memory-kind=, --cpu-isa-hints=
                          accepted, no effect: they steer how oneDNN creates primitives,
                          GPU memory and oneDNN's ISA dispatch (--max-isa caps gdnn's).
  --allow-enum-tags-only=BOOL
                          accepted for compatibility; gdnn takes any valid tag.
  --buffer-prefix, --cold-cache, --fast-ref, --check-ref-impl, --attr-same-pd-check,
  --mem-check, --num-streams, --stream-kind, --execution-mode
                          benchdnn's, not implemented: an error (exit status 2) says why.
  --table[=BOOL|only]     (gdnn, whole run) print a table of every problem at the end;
                          "only" also drops the per-problem lines of problems that passed.
  --bw-probe=auto|go|lib  (gdnn) read-bandwidth probe behind %bwpct%, measured over a
                          buffer of the src size (power-of-two buckets, cached per run):
                          "lib" times gdnn's own contiguous f32 sum over the buffer (vector
                          loads split across the worker threads, like a STREAM-style read
                          probe); "go" times a scalar Go read loop (a lower bound on the
                          machine's bandwidth for cache-resident sizes); "auto" (default)
                          is lib when a JIT ISA is in force and go otherwise.
                          %bwpct% above 100% means the problem read faster than the probe
                          at that power of two. While its src fits a cache, the cache explains
                          it: the data stay there between executes, or the src sits just below
                          a cache size that the probe's buffer exceeds. Past the caches (src
                          over twice the largest cache the OS reports) nothing does but a probe
                          slowed by other work: a problem reading over 20% faster than the
                          probe has it measured again (the faster measurement is kept, and
                          used from there on), and if it still beats it, the probe is flagged
                          "probe measured under load (busy machine)" in a warning, in --table
                          (the figure marked *) and in --plot. --plot draws the probe so that
                          such a figure explains itself.
  --plot=FILE.svg         (gdnn, whole run) draw the run's timed problems (P or CP mode) as a bandwidth
                          chart: each problem's GB/s at its src size (log scale), one mark
                          per problem numbered by its index and coloured by impl, over the
                          read-bandwidth probe it was compared with at every power of two
                          (and the cache sizes, where the OS gives them), with a table of
                          index, impl, GB/s, %readBW and problem. A mark above the probe
                          line is a %readBW above 100%. Empty: no chart. FILE must be
                          writable (checked before the run).
  --case-dir=DIR          (gdnn) folder searched first for --case files.
  --batch=FILE            read options and problems from FILE: whitespace-separated
                          tokens, '#' starts a comment. A relative FILE is looked up as
                          benchdnn does: beside the including batch file, then in the
                          current directory, then in each inputs folder as
                          <dir>/<driver>/FILE (and <dir>/FILE).
  --inputs-dir=DIR        (gdnn) inputs folder searched for --batch files, laid out as
                          oneDNN's tests/benchdnn/inputs, e.g. ../shared/benchdnn-inputs
                          for --reduction --batch=test_reduction_ci; then the folders in
                          $GDNN_BENCHDNN_INPUTS (a path list), then inputs and ../inputs
                          beside the gdnnbench executable.
  --summary=[no-]S[+[no-]S...]
                          (whole run) what is printed before the tests line, as
                          benchdnn: failures (up to ten FAILED or INVALID_ARGUMENTS result
                          lines, not in P mode; default on), impl (a table of implementations
                          and how many problems each ran; on), impl-csv (the same as a
                          benchdnn_summary,impl_names line; off), and (gdnn) unimplemented
                          (UNIMPLEMENTED results grouped by reason; on). Each value starts
                          from these defaults; e.g. --summary=no-impl+impl-csv.
  --reset                 restore the driver options to their defaults (the perf
                          template is kept, as in benchdnn; it stays a driver option
                          that applies to the problems after it).
  --help                  this text.

Reduction driver (--reduction), PROBLEM = SRCDIMS:DSTDIMS[_nNAME], e.g. 2x16x3x4:2x1x3x1
(each dst dim equals the src dim or is 1 where the dim is reduced; a problem
where it does not is INVALID_ARGUMENTS and the batch goes on, as in benchdnn):
  --sdt=DT, --ddt=DT      src/dst data types (default f32). gdnn computes f32, bf16, f16
                          into the src type, f32, s8, u8 or s32, and s8, u8 into s8, u8,
                          s32, f32, bf16, f16; s16, u16, s32, u32, s64, u64 (gdnn
                          extensions) exactly into their own type (the mean also into
                          f32 or f64), checked byte for byte; f64 (a gdnn extension)
                          into f64 or f32, in float64 throughout, checked against a compensated
                          float64 reference; other pairs (bf16 into f16, f16 into bf16,
                          s32 sum into f32, f64 into 16-bit or integer types) are
                          UNIMPLEMENTED. The Lp norms of integer src are an invalid case
                          (SKIPPED, as in benchdnn).
  --stag=TAG, --dtag=TAG  layouts: abx (plain, default src), axb (channels last), any
                          (default dst: gdnn chooses), permutations such as acdb or bac,
                          and named tags (nchw, nhwc, ...). Blocked tags (aBx16b,
                          ABx16a16b, ...) run where gdnn's blocked layouts take them and
                          are UNIMPLEMENTED where they do not.
  --alg=ALG               sum (default, as in benchdnn), mul, max, min, mean, amax (max |x|),
                          norm_lp_max, norm_lp_sum, norm_lp_power_p_max, norm_lp_power_p_sum.
                          Built as gdnn graph ops: ReduceSum, ReduceProd, ReduceMax,
                          ReduceMin, ReduceMean; amax is Abs -> ReduceMax; the Lp norms
                          are Abs (p=1) or Square (p=2) -> ReduceSum -> Maximum (_max) or
                          Add (_sum) with the eps scalar -> Sqrt (norm_lp_max/_sum, p=2).
  --p=F, --eps=F          the Lp norms' p (default 1) and eps (default 0). p below 1 is an
                          invalid case (SKIPPED, as in benchdnn); p other than 1 and 2
                          is UNIMPLEMENTED.
  --attr-post-ops=PO[+PO...]
                          fused post-ops in benchdnn syntax. Eltwise KIND[:ALPHA[:BETA]]:
                          abs, clip:MIN:MAX (clip_v2 too), elu:ALPHA, exp, gelu_erf,
                          gelu_tanh, hardsigmoid:ALPHA:BETA, hardswish (alpha 1/6, beta 1/2
                          only), log, logistic, mish, pow:1:BETA (alpha 1; BETA 0, 1, 2,
                          3, -1, -2, 0.5 or -0.5), relu[:ALPHA] (leaky when ALPHA != 0),
                          round, soft_relu[:ALPHA] (0 = 1), sqrt, square, tanh.
                          Binary KIND:DT[:POLICY[:TAG]]: add, mul, max, min, div, sub with
                          DT f32/bf16/f16/s8/u8/s32 and POLICY common (scalar, default), per_oc /
                          per_dim_1 (channel), per_dim_0/01/2/3/023/23/03, per_ocic
                          (per_dim_01), per_tensor (full) or a numeric dim mask. linear:ALPHA:BETA (a Multiply and an Add of
                          scalars). sum[:SCALE[:ZP[:DT]]]: dst = SCALE*(dst_before - ZP)
                          + result (dst filled before each run); in place when SCALE is 1
                          and ZP 0, else scale*(dst-ZP) is computed by a partition of its
                          own first. DT (default the dst's) must have the dst's size.
                          Several sums each read dst as it was before the run. pow,
                          swish, prelu, dw, *_dst and comparisons parse but are
                          UNIMPLEMENTED.
  --attr-fpmath=M, --attr-acc-mode=M, --attr-deterministic=B, --attr-scratchpad=library,
  --attr-rounding-mode=ARG:environment, --inplace=false, --ctx-init=auto, --ctx-exe=auto
                          accepted: gdnn's f32 math, f32 accumulation, deterministic
                          results, own scratch and own threads satisfy them (acc-mode
                          s32/f16 do not). Every value's syntax is checked (exit 2).
  --attr-scales, --attr-zero-points, --attr-dropout, --ctx-init, --ctx-exe, other values
  of the knobs above      valid, but problems run with them are UNIMPLEMENTED; an empty
                          value (--attr-scales=) restores the default. Each knob takes
                          a comma-separated list: a problem per item, as benchdnn.
  --perf-template=def|csv|CUSTOM
                          perf line format (P mode), see below.

Graph driver (--graph):
  --case=FILE.json        run a oneDNN graph JSON case with the current knobs. Relative
                          paths are searched in --case-dir, then $GDNN_GRAPH_CASE_DIR,
                          then the including batch file's folder and each of its parents
                          (benchdnn's graph inputs name cases relative to inputs/graph),
                          then the current directory, then the graph folder of each
                          inputs folder (--inputs-dir, as for --batch).
  --in-shapes=ID:SHAPE[*STRIDES][+...]
                          new shape (AxB..., "-" for rank 0, empty to keep) and strides
                          (a tag such as acdb, or AxB... elements; none: dense) of input
                          tensor ID.
  --op-attrs=ID:NAME:VALUE[*NAME:VALUE][+...]
                          override attributes of op ID (axes:2x3, keep_dims:0, alpha:0.5).
  --op-kind=ID:KIND[+...] change the kind of op ID: a binary op to another binary kind
                          (Add, Multiply, ...), an eltwise op to another eltwise kind; it
                          keeps its attributes (set the new kind's with --op-attrs).
                          KIND undef removes the op: its consumers read its input (of a
                          binary op, the one another op produces).
  --dt=DT | ID:DT[+...]   retype every float tensor (f32, bf16, f16), or given tensors; of a
                          LayerNorm or GroupNorm only src and dst, as benchdnn (gamma, beta
                          and the statistics keep their types).
  --mb=N                  override the minibatch (0: keep): dim 0 of the inputs it flows
                          from, also over an --in-shapes shape; layouts keep their dim order.
  --expected-n-partitions=N
                          fail unless the graph gives N partitions (default 1; 0: no check).
  --tensor-property=ID:PROPERTY[+...]
                          set the property (undef, variable, constant) of tensor ID;
                          host_scalar is UNIMPLEMENTED.
  --match, --impl, --skip-impl, --perf-template as for --reduction.
  Partitions of every Reduce* op (Sum, Prod, Max, Min, Mean, L1, L2), with an Abs or
  Square pre-op and fused post-ops, and log-sum-exp (Exp -> ReduceSum -> Log, then
  post-ops) are checked, and so are normalization partitions: a SoftMax, LogSoftmax,
  LayerNorm, RMSNorm or GroupNorm op, or one written out in ops that gdnn fuses
  (softmax; layer norm; RMS norm; L2 normalization by ReduceL2 or Sqrt(ReduceSum of
  a square), with no eps, Maximum eps or Add eps; eps a scalar input, given 1/16),
  checked against the ops evaluated in float64, with the ops fused after them, and
  each after a fused per-tensor Dequantize (a layer or group norm's of a power-of-two
  scale); partitions gdnn does not support are UNIMPLEMENTED.
  gdnn infers every op output's shape; an output shape the case gives in full
  (not empty, no unknown dim) must match it, or the problem is INVALID_ARGUMENTS.
  A partition's outputs are compiled with the strides the case gives them (strides
  that do not nest are INVALID_ARGUMENTS); with --in-shapes, --mb or --op-attrs
  set, the case's output shapes are not checked and outputs are dense.
  As benchdnn, the driver takes the graph's inputs from its ops: input_ports and
  output_ports entries that name no tensor of the graph, and input ports an op
  produces, are ignored (said at -v1).

Normalization drivers (--softmax, --lnorm, --gnorm), benchdnn's options and batch
files (driver_softmax.md, driver_lnorm.md, driver_gnorm.md); each problem is one
gdnn graph op (SoftMax, LogSoftmax, LayerNorm, RMSNorm, GroupNorm) partitioned,
compiled and executed, alone or with the ops oneDNN's primitive applies after it
fused: the src scale (a Multiply), post-ops (eltwise and binary ops; linear a
Multiply and an Add), then the dst scale (a Quantize into an s8 or u8 dst, else a
Divide) and a TypeCast into a 16-bit dst; the normalization writes f32 then:
  --softmax PROBLEM = NxNx...[_nNAME], e.g. 2x19x17x13:
    --dir=FWD_D|FWD_B|FWD_I (FWD_B runs as FWD_D, as in benchdnn), --sdt=DT, --ddt=DT,
    --stag=TAG, --dtag=TAG (default any),
    --alg=SOFTMAX|LOGSOFTMAX|SOFTMAX_INF_AS_ZERO (softmax_accurate, softmax_log; SoftMax
    with mode none or inf_as_zero, LogSoftmax), --axis=N (default 1), --mb=N, --inplace=BOOL.
  --lnorm PROBLEM = NxNx...[_nNAME], normalized over the last dim (LayerNorm,
    begin_norm_axis -1, epsilon 1/16):
    --dir, --dt=SRC[:DST], --tag=SRC[:DST] (dst any by default), --stat_tag=TAG (mean
    and variance, kept in FWD_D), --ss_dt=DT (gamma and beta), --flags=[G][C][H][M]:
    C scale and H shift (use_affine; one alone runs with the other neutral: ones or
    zeros), M RMS norm (RMSNorm), G global statistics (UNIMPLEMENTED), --inplace.
  --gnorm PROBLEM = gGmbNicC[idD][ihH][iwW][_epsF][_nNAME] (mb 2, eps 1/16 by default),
    GroupNorm with data_format NCX over logical dims N, C, spatial:
    --dir, --dt=SRC[:DST], --tag=SRC[:DST] (one tag: dst the same), --flags=[G][C][H],
    --mb=N, --inplace.
  All three: --attr-scales, --attr-zero-points, --attr-post-ops, --attr-dropout,
  --attr-acc-mode, --attr-fpmath, --attr-deterministic, --attr-scratchpad,
  --attr-rounding-mode, --attr-precomputed-reductions, --ctx-init, --ctx-exe (lists, each
  item a problem, as in benchdnn), --match, --impl, --skip-impl, --perf-template
  (csv: benchdnn's columns for the driver).
  --attr-scales takes common src and dst scales; an s8 or u8 dst is compared as
  benchdnn's (softmax exactly, lnorm and gnorm within their threshold times 2^17 or
  2^16), and any integer within gdnn's f32 error of the reference passes.
  An s8 or u8 src is normalized as its integers (a Dequantize of scale 1 fused
  before the normalization), as oneDNN's primitive reads it.
  UNIMPLEMENTED, with the reason: BWD_* directions, f64 and f8_* data, global statistics (G), RMS norm
  with a shift (MH), per-channel or typed scales, zero points, sum, prelu and other post-ops
  gdnn does not fuse, dropout, a user scratchpad, thread contexts other than auto
  (the default), blocked layouts,
  and any op or partition gdnn does not compile yet. In place (--inplace=true) dst is
  the src buffer, as benchdnn allocates it (SKIPPED as in benchdnn where src and dst
  differ in type or layout).
  Correctness (C), as benchdnn: softmax is filled twice, with rows of a few values
  a+2, a+1, a (a = -88: all negative; a = 88: past exp's f32 range) among the lowest
  value of the types, and compared with a float64 reference shifted by the max; an
  f32 dst may be 10 epsilons off (log-softmax 50), a bf16 or f16 dst must be the
  reference rounded (either neighbour at a rounding boundary), or one epsilon of the
  type (5 for log-softmax) with --attr-acc-mode=relaxed or any. lnorm and gnorm data
  make each row's (group's) mean and variance exact in the src type; dst, mean and
  variance may be 5e-7 (lnorm) or 6e-7 (gnorm) relative off, times 2^(24 - the dst
  type's bits), with benchdnn's allowance where gamma*x + beta cancels.

Correctness (C) of --reduction: every problem runs twice. First with an exact fill: small
integers scaled by a power of two, bounded so that every partial sum (of the
values, their magnitudes or squares) of each output is exact in f32 in any
summation order; for products at most 30 (10 with f16) factors per output
other than 1, powers of two of exponent -3..3 (-1..1); for max all values
negative and for min all positive, so that padding lanes with zeros shows.
Then the only roundings are the f32 division by N, the eps and root of the
Lp norms, the post-ops and the conversion to the dst type, so
the result must match a float64 reference (modelling those f32 steps) within
2^-23 (f32), 2^-10 (f16) or 2^-7 (bf16) relative, or 4e-6 (and absolute
below 1) after approximated post-ops (exp, tanh, gelu, ...); the Lp norms
allow 5 times the dst type's epsilon (benchdnn's threshold). Then with a
random fill (uniform in [-1, 1); for products the same sparse factors with
magnitudes in [0.5, 2)), checked against a derived bound: f32 summation
error gamma(L)*sum|x| with L = min(N, 4096) + N/4096 + 16 (blocked
accumulation; one more rounding per square), gamma(K+1)*|prod| for a
product of K factors, none for max and min, plus one rounding for the
division of the mean, propagated through the post-ops, plus the dst
rounding and the threshold above. Where a post-op's result may or may not
pass the f32 range within that bound, both outcomes are checked, each as
strictly: the finite one within its bound, the overflow (an infinity)
carried exactly through the post-ops after it. A NaN passes only for a NaN
reference, an infinity only where the reference rounded to the dst type is
that infinity, a finite value only where it is finite.
8-bit integer src (s8, u8): every value is an integer, and both fills keep
each output's sum of magnitudes (and each product) below 2^24, so both are
checked as exact: the exact fill is dense (values from the whole type: 8-bit
sums saturate, means land on .5; products of up to 10 factors 2, 3 (and -2,
-3 for s8); max of negatives, min of positives), the random fill has at
most 10 non-neutral elements per output, sized so that a sum mostly fits an
8-bit dst (products of up to 4 factors, max and min uniform over the type).
The reference is computed in float64 modelling gdnn's f32 steps, then
rounded to nearest even and saturated into an integer dst, which must match
exactly (one unit off fails); after approximated post-ops, any integer the
allowed f32 interval rounds to passes.

Performance (P): one warm-up execute, then timed executes until
--max-ms-per-prb has passed (at least 5) or exactly --fix-times-per-prb;
executes shorter than 20 us are timed in back-to-back groups. Times are per
execute in ms; bytes are src + operands (in) and dst (out); for the normalization
drivers src, gamma and beta (in), dst, mean and variance (out), each once.
Noise: a problem whose median time is more than 10% above its min (over at
least 5 executes) gets a warning on stderr, as does a problem run again
(--repeats-per-prb, or the same repro line later) whose min is more than 1.5x
its first run's; the run ends with a count, and with a warning when the
one-minute load average (/proc/loadavg, at the start or end of the run)
exceeds gdnn's own threads by more than half the CPUs. Such figures say more
about the machine (another process, throttling) than about gdnn.

Perf template tokens (--perf-template):
` + TemplateTokens + `
  def = ` + TemplateDef + `
  csv = ` + TemplateCSV + `
  csv (graph) = ` + TemplateGraphCSV + `

Progress: a run longer than 3 s writes "[i/N] 12s elapsed, ETA 34s" on stderr,
N being the number of problems, counted before the run by a dry pass over the
options and batch files (--match-dropped problems excluded): redrawn in place
on a terminal, a full line every 5 s otherwise (logs, pipes, CI).

Output: one "N:STATE [(reason)] __REPRO: <repro line>" per problem (STATE is
PASSED, SKIPPED, UNIMPLEMENTED, INVALID_ARGUMENTS, FAILED, LISTED, ...), perf
lines in P mode, then the --summary sections and benchdnn's summary
"tests:N passed:P skipped:S mistrusted:0 unimplemented:U invalid_arguments:I failed:F listed:L".
Exit status: 0 all passed (or honestly skipped/unimplemented), 1 a problem
failed or was rejected as invalid, 2 malformed input (with file:line:column for
batch files) or an internal error.
`
