package bench

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/status"
	"github.com/gdnn/gdnn/partition"
)

// The graph driver's index reductions (ArgMax, ArgMin, alone or after a
// fused Abs: a gdnn extension, so benchdnn has no driver for them): the
// check is exact (the reference picks the winner of each row in float64
// for float data, in uint64 keys for integer data, where every src value
// is exact), over data with many ties and NaNs; the timing is over random
// data.

// argCase is a compiled index reduction partition with its buffers.
type argCase struct {
	cp       *partition.CompiledPartition
	op       *graph.Op
	abs      bool
	in, out  graph.LogicalTensor
	vals     []float64 // float src values, over the input's span
	keys     []uint64  // integer src values as order-keeping keys (intKey)
	src, dst partition.Tensor
	srcData  any // the src slice, of the src type
	dstData  any // []int32 or []int64
}

// doGraphArg runs an index reduction partition under the modes.
func (r *runner) doGraphArg(idx int, c graphCase, p *partition.Partition) result {
	seed := seedOf(r.reproGraph(c))
	cp, err := p.Compile(p.Inputs(), p.Outputs())
	if err != nil {
		return result{state: stateOf(err), reason: reasonOf(err)}
	}
	impl := cp.Impl()
	if why := r.implFilter(impl, r.gr.impl, r.gr.skip); why != "" {
		return result{state: "SKIPPED", reason: why, impl: impl}
	}
	if r.g.mode.Init {
		r.implNote(cp, "")
		return result{state: "INITIALIZED", impl: impl}
	}
	ops := p.Ops()
	a := &argCase{cp: cp, op: ops[len(ops)-1], abs: len(ops) == 2, in: cp.Inputs()[0], out: cp.Outputs()[0]}
	fail := func(err error) result { return result{state: stateOf(err), reason: reasonOf(err), impl: impl} }
	if err := a.alloc(); err != nil {
		return fail(err)
	}
	exec := func() error {
		return cp.Execute([]partition.Tensor{a.src}, []partition.Tensor{a.dst})
	}
	res := result{state: "PASSED", impl: impl}
	if r.g.mode.Exec {
		a.fill(uint64(idx), false)
		if err := exec(); err != nil {
			return fail(err)
		}
		res.state = "EXECUTED"
	}
	if r.g.mode.Corr {
		for _, ties := range []bool{true, false} {
			a.fill(seed, ties)
			if err := exec(); err != nil {
				return fail(err)
			}
			if msg := a.check(); msg != "" {
				return result{state: "FAILED", reason: msg, impl: impl}
			}
		}
	}
	if r.g.mode.Perf {
		if !r.g.mode.Corr {
			a.fill(seed, false)
		}
		t, err := measure(exec, r.g.maxMs, r.g.fixTimes)
		if err != nil {
			return fail(err)
		}
		sdt, ddt := a.in.DataType, a.out.DataType
		d := &PerfData{Driver: "graph", Engine: "cpu", Impl: impl, Name: a.op.Name, Desc: c.caseArg, DT: c.dt,
			Sdt: sdt.String(), Ddt: ddt.String(), Stag: "-", Dtag: "-", Alg: a.op.Kind.String(), Idx: idx,
			IBytes: int64(sdt.Size()) * a.in.NumElements(), OBytes: int64(ddt.Size()) * a.out.NumElements(),
			Ops: float64(a.in.NumElements()), Time: t, Threads: threads()}
		d.ProbeBytes = d.IBytes
		d.ReadBW = r.readBW(d.ProbeBytes)
		res.perf = d
	}
	r.implNote(cp, "")
	return res
}

// alloc makes the src and dst tensors over the compiled layouts.
func (a *argCase) alloc() error {
	span, err := spanOf(a.in.Dims, a.in.Strides)
	if err != nil {
		return err
	}
	ospan, err := spanOf(a.out.Dims, a.out.Strides)
	if err != nil {
		return err
	}
	if err := checkMemory(span*int64(a.in.DataType.Size()+8) + ospan*8); err != nil {
		return err
	}
	var src any
	switch a.in.DataType {
	case dtypes.F32:
		src = make([]float32, span)
	case dtypes.F64:
		src = make([]float64, span)
	case dtypes.BF16, dtypes.F16, dtypes.U16:
		src = make([]uint16, span)
	case dtypes.S8:
		src = make([]int8, span)
	case dtypes.U8:
		src = make([]uint8, span)
	case dtypes.S16:
		src = make([]int16, span)
	case dtypes.S32:
		src = make([]int32, span)
	case dtypes.U32:
		src = make([]uint32, span)
	case dtypes.S64:
		src = make([]int64, span)
	case dtypes.U64:
		src = make([]uint64, span)
	default:
		return status.Errorf(status.Unimplemented, "gdnnbench has no %v data for index reductions", a.in.DataType)
	}
	if a.in.DataType.IsFloat() || a.in.DataType == dtypes.F64 {
		a.vals = make([]float64, span)
	} else {
		a.keys = make([]uint64, span)
	}
	a.srcData = src
	if a.src, err = partition.NewTensor(a.in, src); err != nil {
		return err
	}
	if a.out.DataType == dtypes.S32 {
		a.dstData = make([]int32, ospan)
	} else {
		a.dstData = make([]int64, ospan)
	}
	a.dst, err = partition.NewTensor(a.out, a.dstData)
	return err
}

// fill sets src: with ties, small integers with NaNs and infinities for
// floats (many equal winners); else uniform in [-1, 1) as a float type
// holds it. Integers are fillWide's.
func (a *argCase) fill(seed uint64, ties bool) {
	rng := rand.New(rand.NewPCG(seed, 51))
	dt := a.in.DataType
	if a.keys != nil {
		a.fillWide(rng, ties)
		return
	}
	for i := range a.vals {
		v := rng.Float64()*2 - 1
		if ties {
			v = float64(rng.IntN(9) - 4)
			if rng.IntN(200) == 0 {
				v = math.NaN()
			}
			if rng.IntN(100) == 0 {
				v = math.Inf(1 - 2*rng.IntN(2))
			}
		}
		switch s := a.srcData.(type) {
		case []float32:
			s[i] = float32(v)
			v = float64(s[i])
		case []uint16:
			if dt == dtypes.BF16 {
				s[i] = dtypes.F32ToBF16(float32(v))
				v = float64(dtypes.BF16ToF32(s[i]))
			} else {
				s[i] = dtypes.F32ToF16(float32(v))
				v = float64(dtypes.F16ToF32(s[i]))
			}
		case []float64:
			s[i] = v
		}
		a.vals[i] = v
	}
}

// fillWide sets an integer src: with ties, values from -4 to 4 (0 to 4
// unsigned), now and then the type's least and greatest, and often values
// a step or two apart near one large value (nearBy): only a comparison of
// every bit tells those apart, not one through f32 or f64; else any value
// of the type, so that winners differ in their low bits only as often as
// chance has it.
func (a *argCase) fillWide(rng *rand.Rand, ties bool) {
	dt := a.in.DataType
	bits := 8 * uint(dt.Size())
	signed := dt.IsSigned()
	bases := nearBases(bits, signed)
	base := bases[rng.IntN(len(bases))]
	for i := range a.keys {
		var v int64 // the value, as an int64 of the type's bits sign-extended (signed) or zero-extended
		switch {
		case ties && rng.IntN(100) == 0:
			v = extreme(bits, signed, rng.IntN(2) == 0)
		case ties && rng.IntN(4) == 0:
			v = nearBy(base, int64(rng.IntN(5)-2), bits, signed)
		case ties && signed:
			v = int64(rng.IntN(9) - 4)
		case ties:
			v = int64(rng.IntN(5))
		default:
			v = int64(rng.Uint64())
			if bits < 64 {
				if signed {
					v = v << (64 - bits) >> (64 - bits)
				} else {
					v = int64(uint64(v) << (64 - bits) >> (64 - bits))
				}
			}
		}
		switch s := a.srcData.(type) {
		case []int8:
			s[i] = int8(v)
		case []uint8:
			s[i] = uint8(v)
		case []int16:
			s[i] = int16(v)
		case []uint16:
			s[i] = uint16(v)
		case []int32:
			s[i] = int32(v)
		case []uint32:
			s[i] = uint32(v)
		case []int64:
			s[i] = v
		case []uint64:
			s[i] = uint64(v)
		}
		a.keys[i] = intKey(v, signed)
	}
}

// nearBases are the values of an integer type of bits around which
// fillWide draws neighbours: its least and greatest, ±2^24 (32-bit
// types) and ±2^53, where f32's and f64's integers end, and, unsigned,
// 2^31 and 2^63, as the type holds them.
func nearBases(bits uint, signed bool) []int64 {
	b := []int64{extreme(bits, signed, true), extreme(bits, signed, false)}
	for _, e := range []uint{24, 53} {
		if e == 24 && bits == 64 {
			continue // f64 holds these exactly
		}
		if signed && e < bits-1 {
			b = append(b, 1<<e, -1<<e)
		} else if !signed && e < bits {
			b = append(b, 1<<e)
		}
	}
	if !signed && bits >= 32 {
		b = append(b, 1<<31)
	}
	if !signed && bits == 64 {
		b = append(b, math.MinInt64) // 2^63
	}
	return b
}

// nearBy is base + d for a value base of an integer type of bits, as
// fillWide holds values, taken back into the type's range where base + d
// would leave it (the least or greatest itself, or the other side of it).
func nearBy(base, d int64, bits uint, signed bool) int64 {
	lo, hi := extreme(bits, signed, true), extreme(bits, signed, false)
	if signed {
		if base == lo && d < 0 || base == hi && d > 0 {
			d = -d
		}
		return base + d
	}
	u := uint64(base) + uint64(d)
	if uint64(base) == uint64(lo) && d < 0 || uint64(base) == uint64(hi) && d > 0 {
		u = uint64(base) - uint64(d)
	}
	return int64(u)
}

// extreme is the least (lo) or greatest value of an integer type of
// bits, as fillWide holds values.
func extreme(bits uint, signed, lo bool) int64 {
	switch {
	case signed && lo:
		return -1 << (bits - 1)
	case signed:
		return 1<<(bits-1) - 1
	case lo:
		return 0
	default:
		return int64(^uint64(0) >> (64 - bits))
	}
}

// intKey maps an integer value (v's bits, read as signed or not) to a
// uint64 in the same order: the value with its sign bit flipped. (An Abs
// before an index reduction takes floats only, so integer keys are the
// values themselves.)
func intKey(v int64, signed bool) uint64 {
	if !signed {
		return uint64(v)
	}
	return uint64(v) ^ 1<<63
}

// check compares every output with the reference and describes the
// first mismatch ("" when all match).
func (a *argCase) check() string {
	dims, strides := a.in.Dims, a.in.Strides
	rank := len(dims)
	axis, err := graph.ArgAxis(a.op, rank)
	if err != nil {
		return err.Error()
	}
	for i, d := range dims {
		if d == 0 && i != axis {
			return "" // no output
		}
	}
	keep, _ := a.op.Bool("keep_dims")
	last, _ := a.op.Bool("select_last_index")
	min := a.op.Kind == graph.ArgMin
	// dst strides per src dim (0 at the axis).
	dstStr := make([]int64, rank)
	j := 0
	for i := range rank {
		if i == axis && !keep {
			continue
		}
		if i != axis {
			dstStr[i] = a.out.Strides[j]
		}
		j++
	}
	pos := make([]int64, rank)
	row := make([]float64, dims[axis])
	keys := make([]uint64, dims[axis])
	for {
		var so, do int64
		for i := range rank {
			so += pos[i] * strides[i]
			do += pos[i] * dstStr[i]
		}
		var want int64
		if a.keys != nil {
			for k := range keys {
				keys[k] = a.keys[so+int64(k)*strides[axis]]
			}
			want = keyWinner(keys, min, last)
		} else {
			for k := range row {
				row[k] = a.vals[so+int64(k)*strides[axis]]
			}
			want = argWinner(row, min, last, a.abs)
		}
		var got int64
		switch d := a.dstData.(type) {
		case []int32:
			got = int64(d[do])
		case []int64:
			got = d[do]
		}
		if got != want {
			return fmt.Sprintf("output at %v is %d, want %d", pos, got, want)
		}
		i := rank - 1
		for ; i >= 0; i-- {
			if i == axis {
				continue
			}
			if pos[i]++; pos[i] < dims[i] {
				break
			}
			pos[i] = 0
		}
		if i < 0 {
			return ""
		}
	}
}

// argWinner is the index of the winner of row: the largest value (min:
// the smallest), NaN above (below) all, the first of equals (last: the
// last), compared by magnitude with abs.
func argWinner(row []float64, min, last, abs bool) int64 {
	key := func(x float64) float64 {
		if abs {
			x = math.Abs(x)
		}
		if min {
			x = -x
		}
		return x
	}
	best, bi := key(row[0]), int64(0)
	for i := 1; i < len(row); i++ {
		x := key(row[i])
		better := x > best || math.IsNaN(x) && !math.IsNaN(best)
		tie := x == best || math.IsNaN(x) && math.IsNaN(best)
		if better || tie && last {
			best, bi = x, int64(i)
		}
	}
	return bi
}

// keyWinner is the index of the winner among integer keys (intKey): the
// largest (min: the smallest), the first of equals (last: the last).
func keyWinner(keys []uint64, min, last bool) int64 {
	best, bi := keys[0], int64(0)
	for i := 1; i < len(keys); i++ {
		x := keys[i]
		better := x > best
		if min {
			better = x < best
		}
		if better || x == best && last {
			best, bi = x, int64(i)
		}
	}
	return bi
}
