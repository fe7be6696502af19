// Package reduce is gdnn's one-call API for framework authors: one
// function per reduction kind that takes the framework's own slices and
// shape and runs a JIT-compiled kernel, with no graph, partition or tensor
// objects in between.
//
//	err := reduce.Mean(dst, src, []int{batch, seq, hidden}, []int{-1})
//
// The kinds are ONNX's Reduce* set: Mean, Sum, Max, Min, Prod, L1, L2,
// SumSquare, LogSum (log of the sum) and LogSumExp (computed stably), and
// for integer and boolean data (gdnn extensions, GoMLX's names)
// BitwiseAnd, BitwiseOr, BitwiseXor, LogicalAnd (all), LogicalOr (any)
// and LogicalXor. Each
// is generic over a dst and a src element type, constrained by Dst and
// Src: ~float32 (f32), and ~uint16 for bf16 or f16, whose type a
// framework's `type BFloat16 uint16` does not carry, so it is named by an
// option (Type, SrcType, DstType); and integer data, whose Go types say
// what they are (an option that names one must name that type): ~int8
// (s8) and ~uint8 (u8), ~int16, ~int32, ~uint32, ~int64, ~uint64 (s16,
// s32, u32, s64, u64), ~bool (boolean), u16 as ~uint16 named U16, and
// ~float64 (f64), reduced in float64 from end to end (two-level sums,
// post-ops in float64) into an f64 or an f32 dst. src and dst types are otherwise
// independent within gdnn's rules, the graph API's, checked at run time:
// a float src goes to its own type, f32, s8, u8 or s32; s8 and u8 src go
// to any dst. An integer dst is rounded to nearest even and saturated,
// NaN to 0 (a u8 mean of 2 and 3 is 2; an s8 sum past 127 is 127 in s8,
// exact in s32).
//
// Integer data wider than 8 bits, booleans, and the bitwise and logical
// kinds of any integer data are reduced exactly, in integer arithmetic:
// Sum and Prod wrap around in two's complement at the type's width (as
// numpy and XLA do; ONNX Runtime saturates) into a dst of the src's type; Max and
// Min are exact (of booleans: any and all); Mean divides the exact sum by
// the count in float64 and truncates toward zero, saturated, into the
// src's type (ONNX Runtime's integer mean), or rounds once into an f32
// dst; the logical kinds write 1 or 0 to a bool or u8 dst (the
// interpreter stops reading a row of LogicalAnd or LogicalOr once it is
// decided; machine code reads it whole). Every other kind of such data
// (L1, L2, SumSquare, LogSum, LogSumExp; a Sum or Prod of bools) is
// refused with an error that names it. On AVX-512, AVX2 and NEON these
// reductions run as machine code in lanes of the src's own width (the
// README says which); elsewhere in the interpreter's typed loops.
// Quantized data with scales and zero points is the graph
// API's (package partition: Dequantize -> Reduce* -> Quantize in one
// partition).
//
// Shapes and axes: dims are the src dims (rank 0 to graph.MaxRank); axes
// name the reduced dims, negative ones counting from the end
// ([-r, r-1]); repeated axes are an error. By default the semantics are
// oneDNN Graph's, as in the rest of gdnn: keep_dims is false (dst has the
// kept dims only) and empty axes reduce nothing, which is the kind applied
// to each element alone (a copy for Mean, Sum, Max, Min, Prod and
// LogSumExp, except that a -0 comes out +0 from Mean, Sum and LogSumExp,
// as a sum from +0 gives it; |x| for L1 and L2, x*x for SumSquare, log x
// for LogSum).
// ONNX nodes run with ONNX's semantics through ONNXNode and RunONNX, and
// ONNX's normalization nodes through ONNXNorm and RunONNXNorm.
//
// The index reductions ArgMax and ArgMin write the index along one axis
// of the largest (smallest) element to an Index dst (~int32 or ~int64):
// NaN wins, the first of equal elements wins unless SelectLastIndex
// (README, "Index reductions"). ArgMinMax is GoMLX's backend call;
// ONNXArgNode and RunONNXArg run ONNX's ArgMax and ArgMin nodes.
//
// The normalizations feed their statistics back into the input: Softmax,
// LogSoftmax, LayerNorm, RMSNorm and GroupNorm, generic over Float
// element types (src, dst, gamma and beta each its own), with dims and
// the axis or begin_norm_axis of oneDNN Graph's ops and the options that
// apply (Type, SrcType, DstType, ParamType, SrcStrides, DstStrides,
// InfAsZero, Stats). They run as machine code (a fused kernel per row
// where the normalized dims are innermost, else programs of the
// reductions' kernels; the interpreter where there is none), compiled
// once per problem and kept in a cache of their own; the README's Semantics
// section states their rules. LpNormalize (x / max(||x||_p, eps), p 1 or
// 2) and MaskedMean (sum(x·mask) / sum(mask): mean pooling over the
// tokens a padded batch really has) complete what sentence-embedding
// and transformer code writes by hand.
//
// Layouts: src and dst are dense row-major unless SrcStrides or
// DstStrides (in elements, one per dim of that tensor) say otherwise.
// A slice may be longer than the span its strides address; a shorter one
// is an error. dst's span must not overlap src's (a dst in the gaps of a
// strided src overlaps it too), except that a normalization
// (Softmax, LogSoftmax, LayerNorm, RMSNorm, GroupNorm, LpNormalize) runs
// in place when dst is src itself: the same slice, type and strides.
//
// Errors are graph.Errorf values with oneDNN's statuses
// (errors.Is(err, graph.InvalidShape), ...), naming the bad value; bad
// input never panics.
//
// Each call looks its problem (kind, dims, strides, reduced dims, data
// types, post-ops, instruction set) up in a bounded cache of compiled
// kernels; a call with a problem seen before compiles nothing and
// allocates nothing beyond what running the kernel does (nothing for a
// problem run inline on the caller), so calling a kind function in a loop
// costs about what running a compiled kernel costs. Every function is safe
// for concurrent use.
package reduce
