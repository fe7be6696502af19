package normprog

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
)

// TestStreamedDstRandom: random rows and columns (their lengths and
// counts, dst types, per-row operands, s8 and u8 src with a fused
// Dequantize, rows padded, softmax rows and columns full of -Inf and
// other specials, inf_as_zero) whose dst is streamed wherever it may be
// (memoryMinBytes lowered to 0), run with dst at offsets from the vector
// boundary, in place, on 1 to 4 threads and, with chunks cut, give bit for bit what
// the regular kernel gives, and so does the regular kernel itself.
func TestStreamedDstRandom(t *testing.T) {
	kinds := []Kind{Softmax, LogSoftmax, LayerNorm, RMSNorm, L2Norm}
	for _, isa := range isas() {
		if isa == jit.None {
			continue
		}
		prev := jit.SetMaxISA(isa)
		r := rand.New(rand.NewPCG(uint64(isa), 77))
		streamed := 0
		for it := 0; it < 300; it++ {
			kind := kinds[r.IntN(len(kinds))]
			inner := []int64{16, 32, 48, 64, 100, 128, 200, 256, 1000, 1024, 4096, 8192, 3000}[r.IntN(13)]
			rows := int64(1 + r.IntN(70))
			after := 0
			dims := []int64{rows, inner}
			if (kind == Softmax || kind == LogSoftmax) && r.IntN(3) == 0 {
				after = 1
				dims = []int64{int64(1 + r.IntN(3)), int64(2 + r.IntN(40)), []int64{16, 32, 64, 80, 1024, 5000}[r.IntN(6)]}
			}
			dt := []dtypes.DataType{dtypes.F32, dtypes.F32, dtypes.BF16, dtypes.F16}[r.IntN(4)]
			d := benchDesc(kind, dims, 1, after, dt)
			// Rows padded in src and dst alike: a row stride on or off the
			// vector.
			padded := r.IntN(3) == 0
			if padded {
				rank := len(dims)
				pd := append([]int64(nil), dims...)
				pd[rank-1] += []int64{16, 3, 48, 1}[r.IntN(4)]
				d.SrcStrides = denseStrides(pd, identity(rank))
				d.DstStrides = d.SrcStrides
			}
			if r.IntN(3) == 0 {
				rank := len(dims)
				perRow := make([]int64, rank)
				if after == 0 {
					perRow[0] = 1
				} else {
					perRow[rank-1] = 1
				}
				d.PostOps = []plan.PostOp{{Kind: ops.Add, BinDT: dtypes.F32, BinStrides: perRow}, {Kind: ops.ReLU}}
			}
			dq := r.IntN(3) == 0
			if dq {
				d.SrcDT = []dtypes.DataType{dtypes.S8, dtypes.U8}[r.IntN(2)]
				d.Dequant = &kernelshape.Dequant{Scale: float32(r.Float64()*0.2 - 0.1), Zero: int32(r.IntN(300) - 150)}
			}
			specials := (kind == Softmax || kind == LogSoftmax) && !dq && r.IntN(3) == 0
			d.InfAsZero = specials && kind == Softmax && r.IntN(2) == 0
			name := fmt.Sprintf("%v %v strides %v %v->%v on %v post %d", kind, dims, d.SrcStrides, d.SrcDT, dt, isa, len(d.PostOps))
			reg, st := compileStreamed(t, name, d, &streamed)
			src := fill(r, dt, spanElems(d.Dims, d.SrcStrides), 6)
			n := len(src)
			if specials {
				// -Inf and the other specials, often.
				specials := []float32{float32(math.Inf(-1)), float32(math.Inf(-1)), float32(math.Inf(1)), float32(math.NaN()), -1e30}
				for i := range int64(n / dt.Size()) {
					if r.IntN(3) > 0 {
						dtypes.StoreF32(dt, src, i, specials[r.IntN(len(specials))])
					}
				}
			}
			if dq {
				src = fillInt8(r, spanElems(d.Dims, d.SrcStrides))
			}
			gamma, _, bins := fillOperands(r, d)
			run := func(p *Program, skew, threads int, inPlace bool) []byte {
				buf := make([]byte, n+skew+64)
				dst := buf[skew : skew+n]
				s := src
				if inPlace {
					copy(dst, src)
					s = dst
				}
				pt := jit.SetThreads(threads)
				defer jit.SetThreads(pt)
				if err := p.Run(Buffers{Src: s, Dst: dst, Gamma: gamma, Bins: bins}); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				return append([]byte(nil), dst...)
			}
			want := run(reg, 0, 1, false)
			for _, skew := range []int{0, 4, 32, 64, 8} {
				threads := 1 + r.IntN(4)
				inPlace := !dq && !padded && r.IntN(3) == 0
				if got := run(st, skew, threads, inPlace); !bytes.Equal(got, want) {
					t.Fatalf("%s: streamed (skew %d, %d threads, in place %v) differs", name, skew, threads, inPlace)
				}
				if got := run(reg, skew, threads, inPlace); !bytes.Equal(got, want) {
					t.Fatalf("%s: regular (skew %d, %d threads, in place %v) differs", name, skew, threads, inPlace)
				}
			}
		}
		t.Logf("%v: %d streamed", isa, streamed)
		jit.SetMaxISA(prev)
	}
}

// compileStreamed compiles d twice: with memoryMinBytes above every dst,
// where nothing may stream (checked), and with it 0, where dst streams
// wherever it may (counted in *streamed).
func compileStreamed(t *testing.T, name string, d *Desc, streamed *int) (reg, st *Program) {
	t.Helper()
	defer setStreamMin(math.MaxInt64)()
	reg, err := Compile(d)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	setStreamMin(0)
	st, err = Compile(d)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if reg.full.fused != nil && reg.full.fused.Streams() {
		t.Fatalf("%s: a dst below memoryMinBytes streams", name)
	}
	if st.full.fused != nil && st.full.fused.Streams() {
		*streamed++
	}
	return reg, st
}
