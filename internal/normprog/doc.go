// Package normprog runs normalizations (softmax, log-softmax, layer
// norm, RMS norm, L2 normalization) as programs of compiled reduction
// kernels: a statistics pass (a max, a sum of exps, a mean, a variance,
// a norm) into a small scratch of one value per row, then a pass that
// maps src with the statistics broadcast back along the normalized dims
// (binary post-ops whose operand stride is 0 there), plus the caller's
// post-ops, into dst.
//
// Every pass is an internal/plan.Plan compiled by internal/jit, so each
// runs as machine code on every instruction set the reductions have
// (AVX-512, AVX2, NEON), or in the interpreter where they do not, and no
// kernel shape is written for normalizations alone.
//
// Softmax of a row, for instance, is four passes:
//
//	M = max(x)                       (a max reduction)
//	Y = exp(x - M)                   (a copy with post-ops Subtract M, Exp)
//	S = sum(Y)                       (a sum reduction over Y)
//	dst = Y / S                      (a copy of Y with post-op Divide S)
//
// Run over a whole large tensor, that would read src and Y from memory
// several times. So a program runs in chunks of its outermost kept dim,
// each a few hundred KiB of src, and one worker runs every pass of a
// chunk: the second read of src and every read of Y are served by that
// core's caches, and src is read from memory once, dst written once.
// Chunks are fixed by the description alone, and a chunk's passes do not
// depend on which worker runs them, so results are the same for every
// thread count. Neighbouring kept dims that every operand walks as one
// are merged first (merge.go), so that the dim cut into chunks is long
// enough to cut finely.
//
// Where the normalized dims are one contiguous run of src and dst (the
// innermost dims of a row-major tensor) and every operand is contiguous
// or broadcast along it, a chunk is instead one call of a fused kernel
// (fused.go, the shape internal/kernelshape.NormRows): per row a
// statistics sweep or two in registers, then the map, so no f32 copy is
// written and a row is read from memory once. The kernel takes a
// run-time epsilon (read from its argument block at each call), an s8 or
// u8 dst, a residual sum, and a layer norm's kept mean and variance.
//
// A softmax, log-softmax, layer, RMS, L2 or L1 normalization over one
// dim that is not innermost (over the channels of NCHW) runs as another
// fused kernel where a kept dim inside it is contiguous in src and dst
// (column.go, the shape internal/kernelshape.NormColumns): each lane is
// a row of its own, and per tile of a few vectors of that inner dim the
// channels are swept vertically for the statistics (the max and the sum
// of exps, the mean and the variance, the norm) and then for the map
// while the tile's rows stay in cache. Such a program is cut along the
// inner dim where the outer ones give few chunks.
//
// GroupNorm on channels-last data (NHWC), whose groups interleave in
// every pixel, runs as column kernels over blocks of pixels
// (chanlast.go): per block the channels' statistics, merged per image in
// a fixed order, then a map with per-channel operands. The passes remain
// for everything else: several normalized dims that are not one
// innermost run, GroupNorm on NCHW data (cut into chunks of groups),
// statistics kept by anything but a layer norm or softmax over rows
// (whose fused kernel writes them), a residual sum over columns, and the
// interpreter.
//
// An s8 or u8 src comes with a fused Dequantize (Desc.Dequant): the
// fused kernels dequantize each vector as they load it, and a program
// of passes first writes each chunk's dequantized f32 copy to scratch,
// which its passes then read from cache (dequant.go).
//
// A LayerNorm or RMSNorm may normalize a residual sum x + skip [+ bias]
// (Residual). The fused kernel forms each row's sum in its first sweep
// and reads it back from cache; as passes, each chunk's first pass
// writes its part of the sum, and the passes above read it from cache.
package normprog
