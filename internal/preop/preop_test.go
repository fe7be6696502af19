package preop

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
)

// isas are the ISAs this machine runs, the interpreter included.
func isas() []jit.ISA {
	var out []jit.ISA
	for _, isa := range []jit.ISA{jit.AVX512, jit.AVX2, jit.NEON, jit.None} {
		prev := jit.SetMaxISA(isa)
		if jit.EffectiveISA() == isa {
			out = append(out, isa)
		}
		jit.SetMaxISA(prev)
	}
	return out
}

// rowMajor are dense strides of dims, dim perm[0] outermost.
func rowMajor(dims []int64, perm ...int) []int64 {
	if perm == nil {
		for i := range dims {
			perm = append(perm, i)
		}
	}
	s := make([]int64, len(dims))
	n := int64(1)
	for k := len(perm) - 1; k >= 0; k-- {
		s[perm[k]] = n
		n *= dims[perm[k]]
	}
	return s
}

// over are the strides of an operand of dims od (dense, broadcast where
// 1) over dims.
func over(dims, od []int64) []int64 {
	s := rowMajor(od)
	for i := range s {
		if od[i] == 1 {
			s[i] = 0
		}
	}
	return s
}

// tcase is a reduction of x times an operand of dims opDims.
type tcase struct {
	name   string
	dims   []int64
	perm   []int // src layout
	opDims []int64
	reduce []bool
	keep   bool
	alg    plan.Alg
	dts    [2]dtypes.DataType
	opDT   dtypes.DataType
	post   bool // a per-output Add operand, then ReLU
}

func (c tcase) desc() *Desc {
	r := len(c.dims)
	out := make([]int64, r)
	for i, n := range c.dims {
		out[i] = n
		if c.reduce[i] {
			out[i] = 1
		}
	}
	dst := over(c.dims, out)
	if !c.keep {
		// A transposed dst: the kept dims in reverse order.
		var perm []int
		for i := r - 1; i >= 0; i-- {
			perm = append(perm, i)
		}
		dst = rowMajor(out, perm...)
		for i := range dst {
			if c.reduce[i] {
				dst[i] = 0
			}
		}
	}
	d := &Desc{Problem: plan.Problem{Reduction: c.alg.Reduction(0, 0), SrcDT: c.dts[0], DstDT: c.dts[1], Dims: c.dims,
		SrcStrides: rowMajor(c.dims, c.perm...), Reduce: c.reduce, DstStrides: dst}, OpDT: c.opDT, OpStrides: over(c.dims, c.opDims)}
	if c.post {
		d.Problem.PostOps = []plan.PostOp{{Kind: ops.Add, BinDT: dtypes.F32, BinStrides: over(c.dims, out)}, {Kind: ops.ReLU}}
	}
	return d
}

func cases() []tcase {
	var out []tcase
	f32, bf16, f16 := dtypes.F32, dtypes.BF16, dtypes.F16
	shapes := []struct {
		name         string
		dims, opDims []int64
		reduce       []bool
		perm         []int
	}{
		{"pooling", []int64{8, 128, 384}, []int64{8, 128, 1}, []bool{false, true, false}, nil},
		{"pooling_small", []int64{3, 7, 19}, []int64{3, 7, 1}, []bool{false, true, false}, nil},
		{"pooling_tnh", []int64{3, 7, 19}, []int64{3, 7, 1}, []bool{false, true, false}, []int{1, 0, 2}},
		{"weights_over_h", []int64{4, 6, 33}, []int64{33}, []bool{false, false, true}, nil},
		{"full_mask", []int64{5, 9, 16}, []int64{5, 9, 16}, []bool{false, true, false}, nil},
		{"all_reduced", []int64{6, 40}, []int64{6, 1}, []bool{true, true}, nil},
		{"chunked", []int64{64, 100, 64}, []int64{64, 100, 1}, []bool{false, true, false}, nil},
	}
	for _, sh := range shapes {
		opDims := sh.opDims
		for len(opDims) < len(sh.dims) {
			opDims = append([]int64{1}, opDims...)
		}
		for i, dts := range [][2]dtypes.DataType{{f32, f32}, {bf16, bf16}, {f16, f32}} {
			for _, alg := range []plan.Alg{plan.AlgSum, plan.AlgMean} {
				opDT := f32
				if i == 1 {
					opDT = bf16
				}
				out = append(out, tcase{name: fmt.Sprintf("%s/%v/%v", sh.name, dts, alg), dims: sh.dims, perm: sh.perm, opDims: opDims,
					reduce: sh.reduce, keep: i != 2, alg: alg, dts: dts, opDT: opDT, post: i == 1})
				if i != 0 {
					// A u8 operand (a tokenizer's mask) beside 16-bit data.
					out = append(out, tcase{name: fmt.Sprintf("%s/%v/%v/u8 operand", sh.name, dts, alg), dims: sh.dims, perm: sh.perm, opDims: opDims,
						reduce: sh.reduce, keep: i != 2, alg: alg, dts: dts, opDT: dtypes.U8, post: i == 1})
				}
			}
		}
	}
	return out
}

// product is src times the operand in f32, dense row-major over dims:
// the reduction's src as the reference reads it.
func product(d *Desc, src, op []byte) []byte {
	pr := &d.Problem
	out := make([]byte, 4*spanOf(pr.Dims, rowMajor(pr.Dims)))
	dense := rowMajor(pr.Dims)
	idx := make([]int64, len(pr.Dims))
	var rec func(k int)
	rec = func(k int) {
		if k == len(idx) {
			v := dtypes.LoadF32(pr.SrcDT, src, dot(idx, pr.SrcStrides)) * dtypes.LoadF32(d.OpDT, op, dot(idx, d.OpStrides))
			dtypes.StoreF32(dtypes.F32, out, dot(idx, dense), v)
			return
		}
		for v := range pr.Dims[k] {
			idx[k] = v
			rec(k + 1)
		}
	}
	rec(0)
	return out
}

func dot(a, b []int64) int64 {
	s := int64(0)
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func spanOf(dims, strides []int64) int64 {
	s := int64(1)
	for i, n := range dims {
		s += (n - 1) * strides[i]
	}
	return s
}

// TestAgainstReference: every case on every ISA, each buffer against a
// guard page (at its end, then at its start), equals the reduction of
// the product computed in f32 (grid data: the sums are exact), and only
// the outputs are written.
func TestAgainstReference(t *testing.T) {
	for _, isa := range isas() {
		t.Run(isa.String(), func(t *testing.T) {
			prev := jit.SetMaxISA(isa)
			defer jit.SetMaxISA(prev)
			r := rand.New(rand.NewSource(int64(isa) + 1))
			for _, c := range cases() {
				d := c.desc()
				p, err := Compile(d)
				if err != nil {
					t.Fatalf("%s: %v", c.name, err)
				}
				if isa != jit.None && p.Why() != "" {
					t.Errorf("%s: the interpreter runs part of it on %v: %s", c.name, isa, p.Why())
				}
				pr := &d.Problem
				src := make([]byte, spanOf(pr.Dims, pr.SrcStrides)*int64(pr.SrcDT.Size()))
				kerneltest.FillGrid(r, pr.SrcDT, src, 8, 4, false, 0)
				op := make([]byte, spanOf(pr.Dims, d.OpStrides)*int64(d.OpDT.Size()))
				kerneltest.FillGrid(r, d.OpDT, op, 2, 2, false, 0)
				if d.OpDT == dtypes.U8 {
					for i := range op {
						op[i] = byte(r.Intn(4))
					}
				}
				ref := *pr
				ref.SrcDT, ref.SrcStrides = dtypes.F32, rowMajor(pr.Dims)
				_, dst, bins := kerneltest.Buffers(t, &ref, 0x5a, func(dtypes.DataType, []byte) {}, func(dt dtypes.DataType, b []byte) { kerneltest.FillGrid(r, dt, b, 8, 4, false, 0) })
				want, written := kerneltest.Reference(&ref, product(d, src, op), dst, bins)
				for _, atEnd := range []bool{true, false} {
					f := kerneltest.NewFence(t, atEnd)
					got := f.Place(bytes.Clone(dst))
					if err := p.Run(f.Place(src), got, f.Place(op), f.PlaceEach(bins)); err != nil {
						t.Fatalf("%s: Run: %v", c.name, err)
					}
					if why := kerneltest.CompareExact(pr.DstDT, got, want, written, true); why != "" {
						t.Errorf("%s on %s (guard at end %v): %s", c.name, p.Impl(), atEnd, why)
					}
					f.Free()
				}
			}
		})
	}
}

// TestThreadCountBitIdentity: a chunked program gives the same bytes on
// any number of threads (random, not grid, data: sums that round).
func TestThreadCountBitIdentity(t *testing.T) {
	c := tcase{dims: []int64{64, 100, 64}, opDims: []int64{64, 100, 1}, reduce: []bool{false, true, false}, keep: true,
		alg: plan.AlgMean, dts: [2]dtypes.DataType{dtypes.F32, dtypes.F32}, opDT: dtypes.F32}
	d := c.desc()
	p, err := Compile(d)
	if err != nil {
		t.Fatal(err)
	}
	if p.cut.N < 4 {
		t.Fatalf("%d chunks; the test wants several", p.cut.N)
	}
	r := rand.New(rand.NewSource(3))
	src := make([]byte, 4*64*100*64)
	for i := range int64(len(src) / 4) {
		dtypes.StoreF32(dtypes.F32, src, i, r.Float32()*2-1)
	}
	op := make([]byte, 4*64*100)
	for i := range int64(len(op) / 4) {
		dtypes.StoreF32(dtypes.F32, op, i, float32(r.Intn(2)))
	}
	var first []byte
	for _, n := range []int{1, 2, 3, 8} {
		prev := jit.SetThreads(n)
		dst := make([]byte, 4*64*64)
		err := p.Run(src, dst, op, nil)
		jit.SetThreads(prev)
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = dst
		} else if !bytes.Equal(dst, first) {
			t.Fatalf("%d threads: the result differs from 1 thread's", n)
		}
	}
}

func TestRefusals(t *testing.T) {
	ok := func() *Desc {
		return tcase{dims: []int64{2, 3, 4}, opDims: []int64{2, 3, 1}, reduce: []bool{false, true, false}, keep: true,
			alg: plan.AlgSum, dts: [2]dtypes.DataType{dtypes.F32, dtypes.F32}, opDT: dtypes.F32}.desc()
	}
	for _, c := range []struct {
		name string
		mod  func(d *Desc)
		want status.Status
	}{
		{"operand strides", func(d *Desc) { d.OpStrides = d.OpStrides[:2] }, status.InvalidArguments},
		{"s8 operand", func(d *Desc) { d.OpDT = dtypes.S8 }, status.Unimplemented},
		{"s8 src", func(d *Desc) { d.Problem.SrcDT = dtypes.S8 }, status.Unimplemented},
		{"u8 src", func(d *Desc) { d.Problem.SrcDT = dtypes.U8 }, status.Unimplemented},
		{"bad problem", func(d *Desc) { d.Problem.Reduce = d.Problem.Reduce[:1] }, status.InvalidArguments},
		{"six binary post-ops", func(d *Desc) {
			for range plan.MaxBinary {
				d.Problem.PostOps = append(d.Problem.PostOps, plan.PostOp{Kind: ops.Add, BinDT: dtypes.F32, BinStrides: make([]int64, 3)})
			}
		}, status.Unimplemented},
	} {
		d := ok()
		c.mod(d)
		_, err := Compile(d)
		var e *status.Error
		if !errors.As(err, &e) || e.Status != c.want {
			t.Errorf("%s: Compile gives %v, want %v", c.name, err, c.want)
		}
	}
	if _, err := Compile(nil); err == nil {
		t.Error("Compile(nil) succeeds")
	}
	p, err := Compile(ok())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name         string
		src, dst, op []byte
		bins         [][]byte
	}{
		{"short src", make([]byte, 90), make([]byte, 32), make([]byte, 24), nil},
		{"short dst", make([]byte, 96), make([]byte, 30), make([]byte, 24), nil},
		{"short operand", make([]byte, 96), make([]byte, 32), make([]byte, 20), nil},
		{"an extra operand", make([]byte, 96), make([]byte, 32), make([]byte, 24), [][]byte{make([]byte, 32)}},
	} {
		if err := p.Run(c.src, c.dst, c.op, c.bins); err == nil {
			t.Errorf("%s: Run succeeds", c.name)
		}
	}
	var nilp *Program
	if err := nilp.Run(nil, nil, nil, nil); err == nil {
		t.Error("Run of a nil program succeeds")
	}
}
