package oracle

import (
	"math"
	"strconv"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/norm"
)

// Norm is the float64 oracle of the normalization ops, written apart
// from package norm's executor, index by index.
// It enumerates every element of src by its full multi-index, groups the
// elements into rows by what a row keeps fixed (the dims outside the
// normalized ones; for GroupNorm the batch and the channel's group), and
// computes each row with the textbook formulas, with no virtual dims,
// strides walks or scratch. It is slow (it looks every element up from
// its multi-index) and meant for small problems.

// NormResult is Norm's result, each value by its element offset in its
// tensor.
type NormResult struct {
	Dst       map[int64]float64
	Mean, Var map[int64]float64
	// Stats is SoftMax's stats, max + log(sum(exp(x - max))) a row: NaN
	// for a row of -Inf (0 in inf_as_zero mode).
	Stats map[int64]float64
	// Magnitude is, by dst offset, the largest magnitude of the row's
	// results (and of its gamma-scaled terms and beta; for LayerNorm and
	// GroupNorm also of its inputs in result units, max|x|·|gamma|/σ),
	// at least 1: the scale a tolerance of the row's float64 error
	// relates to.
	Magnitude map[int64]float64
	// Bound is, by dst offset, how far a result computed in f32 (the
	// machine-code programs of package internal/normprog) may be from
	// Dst before the rounding to dst's type: the reductions' two-level
	// sums' (4·ceil(log2(n+1)) + 8) units of 2^-24 for a row of n, and 8
	// more for the exp, log, root, division and subtractions, of the
	// larger of the result and Magnitude.
	Bound map[int64]float64
}

// NormTolerance is how far a normalization result of dst type dt may
// be from the oracle's want, given its Bound: the bound, and one unit
// in the last place of dt (a value near a rounding boundary may round
// either way).
func NormTolerance(dt dtypes.DataType, want, bound float64) float64 {
	ulp := map[dtypes.DataType]float64{dtypes.BF16: 1.0 / 128, dtypes.F16: 1.0 / 1024}[dt]
	if ulp == 0 {
		ulp = 1.0 / (1 << 23)
	}
	return bound + ulp*math.Abs(want) + 1.0/(1<<24)
}

func offsetOf(idx, strides []int64) int64 {
	off := int64(0)
	for i, v := range idx {
		off += v * strides[i]
	}
	return off
}

// forEachIndex calls f with every multi-index of dims, the last dim
// fastest.
func forEachIndex(dims []int64, f func(idx []int64)) {
	for _, d := range dims {
		if d == 0 {
			return
		}
	}
	idx := make([]int64, len(dims))
	for {
		f(append([]int64(nil), idx...))
		k := len(dims) - 1
		for ; k >= 0; k-- {
			idx[k]++
			if idx[k] < dims[k] {
				break
			}
			idx[k] = 0
		}
		if k < 0 {
			return
		}
	}
}

func loadNorm(dt dtypes.DataType, b []byte, off int64) float64 {
	return float64(dtypes.LoadF32(dt, b, off))
}

// Norm computes p over the buffers b (p must be a problem norm.New
// accepts). Rows with no elements are left out.
func Norm(p *norm.Problem, b norm.Buffers) NormResult {
	rank := len(p.Dims)
	axis, _ := norm.AxisIn(p.Axis, rank)
	type elem struct{ idx []int64 }
	rowOf := map[string][]elem{}
	var order []string
	key := func(idx []int64) string {
		var k []int64
		switch p.Kind {
		case norm.Softmax, norm.LogSoftmax:
			for d, v := range idx {
				if d != axis {
					k = append(k, v)
				}
			}
		case norm.LayerNorm, norm.RMSNorm:
			k = append(k, idx[:axis]...)
		case norm.GroupNorm:
			cg := p.Dims[axis] / p.Groups
			k = []int64{idx[0], idx[axis] / cg}
		}
		return string(appendInts(nil, k))
	}
	forEachIndex(p.Dims, func(idx []int64) {
		k := key(idx)
		if _, ok := rowOf[k]; !ok {
			order = append(order, k)
		}
		rowOf[k] = append(rowOf[k], elem{idx})
	})
	out := NormResult{Dst: map[int64]float64{}, Mean: map[int64]float64{}, Var: map[int64]float64{}, Stats: map[int64]float64{}, Magnitude: map[int64]float64{},
		Bound: map[int64]float64{}}
	for _, k := range order {
		row := rowOf[k]
		n := float64(len(row))
		x := make([]float64, len(row))
		for i, e := range row {
			x[i] = loadNorm(p.Src.DT, b.Src, offsetOf(e.idx, p.Src.Strides))
		}
		param := func(o norm.Operand, buf []byte, idx []int64) (float64, bool) {
			if !o.Present() {
				return 0, false
			}
			var pidx []int64
			if p.Kind == norm.GroupNorm {
				pidx = []int64{idx[axis]}
			} else {
				pidx = idx[axis:]
			}
			return loadNorm(o.DT, buf, offsetOf(pidx, o.Strides)), true
		}
		y := make([]float64, len(row))
		scale := 1.0
		var mean, variance, lse float64
		switch p.Kind {
		case norm.Softmax, norm.LogSoftmax:
			m := math.Inf(-1)
			hasNaN := false
			for _, v := range x {
				if math.IsNaN(v) {
					hasNaN = true
				}
				m = math.Max(m, v)
			}
			if hasNaN {
				m = math.NaN()
			}
			s := 0.0
			for _, v := range x {
				s += math.Exp(v - m)
			}
			lse = m + math.Log(s)
			if math.IsInf(m, -1) && p.InfAsZero {
				lse = 0
			}
			for i, v := range x {
				if p.Kind == norm.Softmax {
					y[i] = math.Exp(v-m) / s
					if math.IsInf(m, -1) && p.InfAsZero {
						y[i] = 0
					}
				} else {
					y[i] = v - m - math.Log(s)
					scale = math.Max(scale, math.Abs(y[i]))
				}
			}
		case norm.LayerNorm, norm.GroupNorm, norm.RMSNorm:
			if p.Kind != norm.RMSNorm {
				s := 0.0
				for _, v := range x {
					s += v
				}
				mean = s / n
				q := 0.0
				for _, v := range x {
					q += (v - mean) * (v - mean)
				}
				variance = q / n
			}
			ms := 0.0
			for _, v := range x {
				ms += v * v
			}
			ms /= n
			// The mean's f32 error is relative to the inputs, which the
			// division by σ scales into result units (gamma's too).
			inScale := 0.0
			if p.Kind != norm.RMSNorm {
				maxX := 0.0
				for _, v := range x {
					maxX = math.Max(maxX, math.Abs(v))
				}
				inScale = maxX / math.Sqrt(variance+float64(p.Eps))
			}
			for i, v := range x {
				if p.Kind == norm.RMSNorm {
					y[i] = v / math.Sqrt(ms+float64(p.Eps))
				} else {
					y[i] = (v - mean) / math.Sqrt(variance+float64(p.Eps))
				}
				g, hasG := param(p.Gamma, b.Gamma, row[i].idx)
				bt, _ := param(p.Beta, b.Beta, row[i].idx)
				if hasG {
					scale = math.Max(scale, math.Max(math.Abs(y[i]*g), inScale*math.Abs(g)))
					y[i] = y[i]*g + bt
				} else {
					scale = math.Max(scale, inScale)
					y[i] += bt
				}
				scale = math.Max(scale, math.Abs(bt))
			}
		}
		units := 16.0
		for m := 1.0; m < n+1; m *= 2 {
			units += 4
		}
		for i, e := range row {
			off := offsetOf(e.idx, p.Dst.Strides)
			out.Dst[off] = y[i]
			out.Magnitude[off] = scale
			out.Bound[off] = units / (1 << 24) * math.Max(math.Abs(y[i]), scale)
		}
		if p.Mean.Present() {
			sidx := row[0].idx[:axis]
			if p.Kind == norm.GroupNorm {
				sidx = []int64{row[0].idx[0], row[0].idx[axis] / (p.Dims[axis] / p.Groups)}
			}
			out.Mean[offsetOf(sidx, p.Mean.Strides)] = mean
			out.Var[offsetOf(sidx, p.Var.Strides)] = variance
		}
		if p.Stats.Present() {
			sidx := append([]int64(nil), row[0].idx...)
			sidx[axis] = 0
			out.Stats[offsetOf(sidx, p.Stats.Strides)] = lse
		}
	}
	return out
}

// NormStatTolerance is how far a kept mean, variance or stats computed in f32
// may be from the oracle's want: 64 units of 2^-24 of the larger of it
// and 1 (the tests' data are of order 1), plus 1e-6 of it.
func NormStatTolerance(want float64) float64 {
	return 1e-6*math.Abs(want) + 64.0/(1<<24)*math.Max(1, math.Abs(want))
}

func appendInts(b []byte, v []int64) []byte {
	for _, x := range v {
		b = strconv.AppendInt(b, x, 10)
		b = append(b, ',')
	}
	return b
}
