package reduce

import (
	"math"
	"slices"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/internal/norm"
	"github.com/gdnn/gdnn/internal/status"
)

// ONNXNorm is an ONNX normalization node: its op type, the model's
// opset and the node's attributes. Make one with NewONNXNorm (which sets
// ONNX's defaults), set the attributes the node carries, and run it with
// RunONNXNorm. The op types and how each runs:
//
//   - Softmax, LogSoftmax: from opset 13 over Axis (default -1); before
//     13 the input is coerced to 2-D at Axis (default 1), so the
//     normalized row is every dim from Axis on, flattened.
//   - LayerNormalization (opset 17): LayerNorm from Axis (default -1),
//     Epsilon (default 1e-5); Scale required, B optional. The optional
//     outputs Mean and InvStdDev (1/sqrt(variance + epsilon)) come
//     through the Stats option: Stats(mean, invStdDev), either nil when
//     the model does not ask for it.
//   - RMSNormalization (opset 23): RMSNorm from Axis (default -1),
//     Epsilon (default 1e-5), Scale required.
//   - GroupNormalization (opset 18, changed at 21): NumGroups groups of
//     the channels (dim 1), Epsilon (default 1e-5); scale and bias hold
//     one value per group at opset 18 and one per channel from 21.
//   - InstanceNormalization: each channel (dim 1) of each batch element
//     over the spatial dims, Epsilon (default 1e-5), scale and B per
//     channel.
//   - LpNormalization: x / ||x||_P over Axis (default -1), P 1 or 2
//     (default 2), no epsilon: a row of 0s gives NaN, as ONNX's
//     definition divides by the norm itself.
//   - MeanVarianceNormalization (opset 9): (x - mean) / (sqrt(variance) +
//     1e-9) over Axes (default [0, 2, 3]; empty: every dim).
//
// StashType (LayerNormalization, RMSNormalization, GroupNormalization
// from 21) must be 1 (float): gdnn's statistics are f32 or better. The
// statistics are computed without cancellation (the mean of (x - mean)²),
// where ONNX's function bodies for GroupNormalization and
// MeanVarianceNormalization write E[x²] - E[x]²: on data far from 0 gdnn
// is the more accurate, and their results differ there by that
// cancellation only. Scale and B must have the shapes named above
// (ONNX's unidirectional broadcast of a smaller Scale is not taken).
type ONNXNorm struct {
	OpType    string
	Opset     int
	Axis      int64   // axis (Softmax, LogSoftmax, LayerNormalization, RMSNormalization, LpNormalization)
	Epsilon   float32 // epsilon
	StashType int64   // stash_type
	NumGroups int64   // num_groups (GroupNormalization)
	P         int64   // p (LpNormalization)
	Axes      []int64 // axes (MeanVarianceNormalization)
}

// onnxNormSince is the opset each op type appeared at.
var onnxNormSince = map[string]int{
	"Softmax": 1, "LogSoftmax": 1, "LayerNormalization": 17, "RMSNormalization": 23, "GroupNormalization": 18,
	"InstanceNormalization": 1, "LpNormalization": 1, "MeanVarianceNormalization": 9,
}

// onnxNormFuncs names RunONNXNorm in its errors by op type, built once
// so that a call does not build it.
var onnxNormFuncs = func() map[string]string {
	m := map[string]string{}
	for op := range onnxNormSince {
		m[op] = "RunONNXNorm(" + op + ")"
	}
	return m
}()

// NewONNXNorm returns the node of ONNX op type opType at opset, with
// ONNX's default attributes. An op type that is not one of ONNXNorm's, or
// an opset before the op existed, is an InvalidArguments error; an opset
// past MaxONNXOpset is Unimplemented.
func NewONNXNorm(opType string, opset int) (ONNXNorm, error) {
	n := ONNXNorm{OpType: opType, Opset: opset, Axis: -1, Epsilon: 1e-5, StashType: 1, P: 2}
	if err := n.check(); err != nil {
		return ONNXNorm{}, err
	}
	switch opType {
	case "Softmax", "LogSoftmax":
		if opset < 13 {
			n.Axis = 1
		}
	case "MeanVarianceNormalization":
		n.Axes = []int64{0, 2, 3}
	}
	return n, nil
}

// check checks the node's op type and opset.
func (n ONNXNorm) check() error {
	since, ok := onnxNormSince[n.OpType]
	if !ok {
		return status.Errorf(status.InvalidArguments, "reduce: %q is not an ONNX normalization op gdnn runs", n.OpType)
	}
	if n.Opset < since {
		return status.Errorf(status.InvalidArguments, "reduce: %s at opset %d: the op exists from opset %d", n.OpType, n.Opset, since)
	}
	if n.Opset > MaxONNXOpset {
		return status.Errorf(status.Unimplemented, "reduce: %s at opset %d: gdnn implements opsets up to %d", n.OpType, n.Opset, MaxONNXOpset)
	}
	return nil
}

// RunONNXNorm runs node n on x (dims) into y: scale and bias are the
// node's scale (Scale) and bias (B) inputs, nil where the node has none.
// opts name data types (Type, SrcType, DstType, ParamType), strides
// where the op keeps src's dims as they are (SrcStrides, DstStrides: not
// with the 2-D coercion of Softmax before opset 13 nor with
// MeanVarianceNormalization), and LayerNormalization's Mean and
// InvStdDev outputs (Stats). InfAsZero and SoftmaxStats, which no ONNX
// node has, are refused.
func RunONNXNorm[D, S, P Float](n ONNXNorm, y []D, x []S, scale, bias []P, dims []int, opts ...Option) error {
	if err := n.check(); err != nil {
		return err
	}
	fn := onnxNormFuncs[n.OpType] // checked: one of onnxNormSince's
	// InfAsZero and SoftmaxStats are gdnn's Softmax options, which no
	// ONNX node carries: refuse them by name here, before the options
	// are resolved with no op kind (which would call them Softmax's, as
	// if a Softmax node could take them).
	for i, o := range opts {
		switch o.what {
		case optInfAsZero:
			return status.Errorf(status.InvalidArguments, "reduce.%s: option %d: RunONNXNorm does not take InfAsZero; ONNX's %s has no such attribute", fn, i, n.OpType)
		case optSoftmaxStats:
			return status.Errorf(status.InvalidArguments, "reduce.%s: option %d: RunONNXNorm does not take SoftmaxStats; ONNX's %s has no such output", fn, i, n.OpType)
		}
	}
	var s normSettings
	if err := s.apply(fn, 0, dropStats(opts)); err != nil {
		return err
	}
	// Which inputs the op requires, and whether it takes a bias at all.
	var needScale, needBias, takesBias bool
	switch n.OpType {
	case "LayerNormalization":
		needScale, takesBias = true, true
	case "RMSNormalization":
		needScale = true
	case "GroupNormalization", "InstanceNormalization":
		needScale, needBias, takesBias = true, true, true
	}
	switch {
	case needScale && scale == nil:
		return status.Errorf(status.InvalidArguments, "reduce.%s: the scale input is required", fn)
	case needBias && bias == nil:
		return status.Errorf(status.InvalidArguments, "reduce.%s: the bias input is required", fn)
	case !needScale && scale != nil, !takesBias && bias != nil:
		return status.Errorf(status.InvalidArguments, "reduce.%s: the op has no scale or bias input", fn)
	}
	if hasStats(opts) && n.OpType != "LayerNormalization" {
		return status.Errorf(status.InvalidArguments, "reduce.%s: Stats receives LayerNormalization's Mean and InvStdDev; %s has no such outputs", fn, n.OpType)
	}
	if n.OpType == "LayerNormalization" || n.OpType == "RMSNormalization" || n.OpType == "GroupNormalization" && n.Opset >= 21 {
		if n.StashType != 1 {
			return status.Errorf(status.Unimplemented, "reduce.%s: stash_type %d; gdnn computes statistics in f32 (stash_type 1)", fn, n.StashType)
		}
	}
	switch n.OpType {
	case "Softmax", "LogSoftmax":
		k := norm.Softmax
		if n.OpType == "LogSoftmax" {
			k = norm.LogSoftmax
		}
		if n.Opset >= 13 {
			axis, err := onnxAxis(fn, n.Axis, len(dims))
			if err != nil {
				return err
			}
			return runNorm(fn, k, y, x, []float32(nil), nil, dims, axis, 0, 0, opts)
		}
		if s.hasSrcStr || s.hasDstStr {
			return status.Errorf(status.Unimplemented, "reduce.%s: strides with the 2-D coercion of opset %d", fn, n.Opset)
		}
		ax, err := axisIn(fn, n.Axis, len(dims))
		if err != nil {
			return err
		}
		if err := onnxElements(fn, dims, len(x), len(y), s.hasSrcStr); err != nil {
			return err
		}
		d2 := [2]int{prodInts(dims[:ax]), prodInts(dims[ax:])}
		return runNorm(fn, k, y, x, []float32(nil), nil, d2[:], 1, 0, 0, opts)
	case "LayerNormalization":
		return onnxLayerNorm(fn, n, y, x, scale, bias, dims, opts)
	case "RMSNormalization":
		axis, err := onnxAxis(fn, n.Axis, len(dims))
		if err != nil {
			return err
		}
		return runNorm(fn, norm.RMSNorm, y, x, scale, nil, dims, axis, 0, n.Epsilon, opts)
	case "GroupNormalization":
		if n.NumGroups <= 0 || len(dims) < 2 || dims[1] <= 0 || int64(dims[1])%n.NumGroups != 0 {
			return status.Errorf(status.InvalidArguments, "reduce.%s: num_groups %d for input dims %s; want a positive divisor of the channels (dim 1)",
				fn, n.NumGroups, ints(dims))
		}
		if n.Opset < 21 {
			// The channels' scale and bias are built below: dims must
			// be valid for x first.
			if err := onnxElements(fn, dims, len(x), len(y), s.hasSrcStr); err != nil {
				return err
			}
			// Each named in its error: either may be the wrong one.
			var err error
			empty := prodInts(dims) == 0
			if scale, err = perChannel(fn, "scale", scale, n, dims[1], empty); err != nil {
				return err
			}
			if bias, err = perChannel(fn, "bias", bias, n, dims[1], empty); err != nil {
				return err
			}
		}
		// int(n.NumGroups) is whole: the check above bounds it by dims[1].
		return runNorm(fn, norm.GroupNorm, y, x, scale, bias, dims, 1, int(n.NumGroups), n.Epsilon, opts)
	case "InstanceNormalization":
		if len(dims) < 2 || dims[1] <= 0 {
			return status.Errorf(status.InvalidArguments, "reduce.%s: input dims %s; want [N, C, ...] with C > 0", fn, ints(dims))
		}
		return runNorm(fn, norm.GroupNorm, y, x, scale, bias, dims, 1, dims[1], n.Epsilon, opts)
	case "LpNormalization":
		if n.P != 1 && n.P != 2 {
			return status.Errorf(status.InvalidArguments, "reduce.%s: p is %d; ONNX defines 1 and 2", fn, n.P)
		}
		axis, err := onnxAxis(fn, n.Axis, len(dims))
		if err != nil {
			return err
		}
		return lpNormalize(fn, y, x, dims, axis, int(n.P), 0, opts)
	}
	return onnxMVN(fn, n, y, x, dims, opts)
}

// onnxAxis is the node's axis attribute counted from the front, or an
// error for an axis out of range in ONNX's words (the attribute is
// "axis" for every op that takes it; gdnn's LayerNorm and RMSNorm would
// call it begin_norm_axis). The int64 is checked whole, so that no
// conversion to a 32-bit int truncates an axis past its range into it.
func onnxAxis(fn string, axis int64, rank int) (int, error) {
	return axisIn(fn, axis, rank)
}

// perChannel spreads v, one value per group of GroupNormalization n
// before opset 21 (its input name), over the chans channels. Over an
// empty tensor it checks v and returns nil, nothing to scale: chans may
// then be any size, which the tensor's 0 elements do not bound.
func perChannel[P Float](fn, name string, v []P, n ONNXNorm, chans int, empty bool) ([]P, error) {
	if int64(len(v)) != n.NumGroups {
		return nil, status.Errorf(status.InvalidShape, "reduce.%s: %s holds %d values; at opset %d scale and bias hold one value per group: %d",
			fn, name, len(v), n.Opset, n.NumGroups)
	}
	if empty {
		return nil, nil
	}
	per := int64(chans) / n.NumGroups
	wide := make([]P, chans)
	for c := range wide {
		wide[c] = v[int64(c)/per]
	}
	return wide, nil
}

// dropStats is opts without a Stats option, which only
// LayerNormalization takes (and onnxLayerNorm checks).
func dropStats(opts []Option) []Option {
	if !hasStats(opts) {
		return opts // no copy: a copy would go to the heap on every call
	}
	out := make([]Option, 0, len(opts))
	for _, o := range opts {
		if o.what != optStats {
			out = append(out, o)
		}
	}
	return out
}

// hasStats reports whether opts hold a Stats option.
func hasStats(opts []Option) bool {
	return slices.ContainsFunc(opts, func(o Option) bool { return o.what == optStats })
}

// onnxElements checks dims before a node computes with them (the 2-D
// coercion's products, GroupNormalization's per-channel scale):
// checkDims's rules, and no more elements than y holds (whose elements
// may not overlap, whatever its strides) or than x holds where it is
// dense (no src strides).
func onnxElements(fn string, dims []int, xLen, yLen int, strided bool) error {
	n, err := checkDims(fn, dims, make([]int64, len(dims)))
	switch {
	case err != nil:
	case !strided && n > int64(xLen):
		err = status.Errorf(status.InvalidArguments, "reduce.%s: dims %s hold %d elements; x holds %d", fn, ints(dims), n, xLen)
	case n > int64(yLen):
		err = status.Errorf(status.InvalidArguments, "reduce.%s: dims %s hold %d elements; y holds %d", fn, ints(dims), n, yLen)
	}
	return err
}

// prodInts is the product of s: 0 if a value is 0, else math.MaxInt
// where the product overflows, so that no count wraps past a check
// (onnxElements bounds the element count only, which a 0 beside huge
// dims keeps at 0).
func prodInts(s []int) int {
	n := 1
	for _, v := range s {
		if v == 0 {
			return 0
		}
		if v > 0 && n > math.MaxInt/v {
			n = math.MaxInt
			continue
		}
		n *= v
	}
	return n
}

// onnxLayerNorm is LayerNormalization: LayerNorm, with the variances a
// Stats option receives turned into ONNX's InvStdDev.
func onnxLayerNorm[D, S, P Float](fn string, n ONNXNorm, y []D, x []S, scale, bias []P, dims []int, opts []Option) error {
	var mean, inv []float32
	hasStats := false
	for _, o := range opts {
		if o.what == optStats {
			mean, inv, hasStats = o.stats[0], o.stats[1], true
		}
	}
	axis, err := onnxAxis(fn, n.Axis, len(dims))
	if err != nil {
		return err
	}
	// runNorm's check of the Stats slices, with ONNX's names: the second
	// slice receives InvStdDev here, and runNorm would call it variance.
	if ax, ok := norm.AxisIn(n.Axis, len(dims)); hasStats && ok && len(dims) <= norm.MaxRank {
		// The rows are counted from valid dims only: a product past
		// 2^63 would wrap to a row count of nothing in particular.
		var d [norm.MaxRank]int64
		if _, err := checkDims(fn, dims, d[:len(dims)]); err != nil {
			return err
		}
		if rows := prodInts(dims[:ax]); (mean != nil && len(mean) < rows) || (inv != nil && len(inv) < rows) {
			return status.Errorf(status.InvalidArguments, "reduce.%s: Stats: Mean holds %d values and InvStdDev %d; there are %d rows",
				fn, len(mean), len(inv), rows)
		}
	}
	if err := runNorm(fn, norm.LayerNorm, y, x, scale, bias, dims, axis, 0, n.Epsilon, opts); err != nil {
		return err
	}
	ax, _ := norm.AxisIn(n.Axis, len(dims))
	for i := range min(len(inv), prodInts(dims[:ax])) {
		inv[i] = float32(1 / math.Sqrt(float64(inv[i])+float64(n.Epsilon)))
	}
	return nil
}

// onnxMVN is MeanVarianceNormalization: the mean and variance of each
// row by the LayerNorm program over a view of x with the normalized axes
// last, then (x - mean) / (sqrt(variance) + 1e-9) in Go, since ONNX adds
// its epsilon to the root, where no gdnn kernel's map has it.
func onnxMVN[D, S Float](fn string, n ONNXNorm, y []D, x []S, dims []int, opts []Option) error {
	var a callInts
	io, err := resolveIO[D, S](&a, fn, dims, opts)
	if err != nil {
		return err
	}
	for _, o := range opts {
		if o.what == optSrcStrides || o.what == optDstStrides {
			return status.Errorf(status.Unimplemented, "reduce.%s: strides with MeanVarianceNormalization", fn)
		}
	}
	// x and y are dense: their lengths first, before any scratch as
	// large as their rows is made.
	total := elements(io.dims)
	if int64(len(x)) < total || int64(len(y)) < total {
		return status.Errorf(status.InvalidArguments, "reduce.%s: x holds %d values and y %d; dims %s want %d", fn, len(x), len(y), ints(dims), total)
	}
	r := len(dims)
	normed := make([]bool, r)
	for _, a := range n.Axes {
		ax, ok := norm.AxisIn(a, r)
		if !ok || normed[ax] {
			return status.Errorf(status.InvalidArguments, "reduce.%s: axes %v for input of rank %d: out of range or repeated", fn, n.Axes, r)
		}
		normed[ax] = true
	}
	if len(n.Axes) == 0 {
		for i := range normed {
			normed[i] = true
		}
	}
	if r == 0 {
		// One element, its own mean, of variance 0: (x - x) / (0 +
		// 1e-9), 0 (NaN for an infinity or NaN). No normalization
		// program takes rank 0 (it has no axis to begin at).
		v := float64(dtypes.LoadF32(io.srcDT, bytesOf(x), 0))
		dtypes.StoreF32(io.dstDT, bytesOf(y), 0, float32((v-v)/1e-9))
		return nil
	}
	// The view: kept dims first, then the normalized ones, each with its
	// dense stride in x (and y, which has x's layout).
	dense := normDense(io.dims)
	var vdims, vstr []int
	rows := 1
	for _, want := range []bool{false, true} {
		for i := range r {
			if normed[i] == want {
				vdims, vstr = append(vdims, dims[i]), append(vstr, int(dense[i]))
				if !want {
					rows *= dims[i]
				}
			}
		}
	}
	kept := r - len(n.Axes)
	if len(n.Axes) == 0 {
		kept = 0
	}
	if prodInts(dims) == 0 {
		return runNorm(fn, norm.LayerNorm, y, x, []float32(nil), nil, vdims, kept, 0, 0, opts)
	}
	mean, variance := make([]float32, rows), make([]float32, rows)
	view := append(opts[:len(opts):len(opts)], SrcStrides(vstr), DstStrides(vstr), Stats(mean, variance))
	// The statistics come from a LayerNorm whose normalized output is
	// dropped: in place (y is x) it goes to scratch, since the loop below
	// reads x again.
	statsDst := y
	if xb, yb := bytesOf(x), bytesOf(y); jit.Overlap(spanView(xb, total, io.srcDT.Size()), spanView(yb, total, io.dstDT.Size())) {
		if !jit.SameTensor(yb, xb, io.dstDT, io.srcDT, io.dims, dense, dense) {
			return status.Errorf(status.InvalidArguments, "reduce.%s: y overlaps x in memory "+
				"(in place, y must be x itself: the same first element and type)", fn)
		}
		statsDst = make([]D, len(y))
	}
	if err := runNorm(fn, norm.LayerNorm, statsDst, x, []float32(nil), nil, vdims, kept, 0, 0, view); err != nil {
		return err
	}
	xb, yb := bytesOf(x), bytesOf(y)
	idx := make([]int, r)
	rowLen := prodInts(vdims[kept:])
	for e := range prodInts(vdims) {
		off := 0
		for d := range r {
			off += idx[d] * vstr[d]
		}
		row := e / rowLen
		v := float64(dtypes.LoadF32(io.srcDT, xb, int64(off)))
		out := (v - float64(mean[row])) / (math.Sqrt(float64(variance[row])) + 1e-9)
		dtypes.StoreF32(io.dstDT, yb, int64(off), float32(out))
		for d := r - 1; d >= 0; d-- {
			if idx[d]++; idx[d] < vdims[d] {
				break
			}
			idx[d] = 0
		}
	}
	return nil
}
