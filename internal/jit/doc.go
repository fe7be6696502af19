// Package jit is gdnn's kernel runtime: it turns a canonical plan
// (package internal/plan) into a Kernel and runs it.
//
// Compile picks an implementation once per plan and ISA: machine code from
// the emitter of the effective ISA (packages amd64 and arm64), mapped with
// package internal/execmem, or the pure-Go interpreter (package internal/interp)
// when there is no JIT for the plan, the ISA is capped to none, or
// executable memory is refused; each emitter declares what it covers
// (kernelshape.Covers). Both emitters have machine code for every
// post-op kind (Exp and Log from packages internal/vexp and
// internal/vlog, the other transcendental ones from internal/vfn's
// programs). A plan an emitter refuses only for its post-ops (on amd64,
// binary operands whose pointers, beside a deep loop nest, need more
// general registers than the kernel has: kernelshape.Covers.Registers)
// keeps machine code for its reduction: the results go to f32 scratch
// and a post-op pass, a copy plan with no reduced loops, applies the
// post-ops, as machine code where the emitter covers that plan and on the
// interpreter where it does not (postpass.go). A log-sum-exp runs in
// chunks of about 1 MiB of src (lse.go): one unshifted pass (exp, sum and
// log in one kernel), and, in a chunk where that pass is not exact, a
// max, an exp pass and a sum with its Log; all machine code. Kernels
// live in a bounded LRU cache.
//
// Run splits the plan into a fixed set of calls that depends only on the
// plan (never on the thread count), each reading about 1 MiB at most (a
// plan of half a MiB to one MiB is cut into up to four calls, so that
// threads share it), and hands them to a persistent worker pool; long reductions, and reductions down
// more than 1024 rows of a wide kept dim (which 1 MiB calls could only
// read a few lines of each row at a time), are reduced in two stages
// through f32 partial results (transformed and combined in the first,
// combined and finalized in the second: plan.Stage). Every output is written by exactly one
// call whose inputs do not depend on scheduling, so results are
// bit-identical for any number of threads, and no call holds up the Go
// garbage collector for long (a JIT call cannot be preempted).
//
// GDNN_MAX_CPU_ISA caps the ISA (none, avx2, avx512, neon, all; SetMaxISA
// lowers it further, never above that ceiling) and
// GDNN_VERBOSE=1 prints one line per compile and per execute to stderr,
// in the spirit of ONEDNN_MAX_CPU_ISA and ONEDNN_VERBOSE.
package jit
