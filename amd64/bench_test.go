package amd64

import (
	"math/rand"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/jit/interp"
	"github.com/gdnn/gdnn/jit/plan"
)

// anchors are the perf anchor shapes (shared/anchors/run_all.sh):
// dense row-major src, the listed axes reduced, keep_dims.
var anchors = []struct {
	name string
	dims []int64
	axes []int
}{
	{"A", []int64{6, 12, 10, 24}, []int{2, 3}},
	{"B", []int64{64, 1024}, []int{1}},
	{"C", []int64{1024, 4096}, []int{1}},
	{"D", []int64{1024, 4096}, []int{0}},
	{"E", []int64{32, 256, 56, 56}, []int{2, 3}},
	{"F", []int64{32, 56, 56, 256}, []int{1, 2}},
	{"G", []int64{64, 1048576}, []int{1}},
	{"H", []int64{16777216}, []int{0}},
	{"I", []int64{8, 512, 4096}, []int{1}},
}

// anchorProblem builds the dense problem for an anchor shape.
func anchorProblem(dims []int64, axes []int, dt dtypes.DataType) *plan.Problem {
	rank := len(dims)
	p := &plan.Problem{SrcDT: dt, DstDT: dt, Dims: dims, SrcStrides: make([]int64, rank),
		Reduce: make([]bool, rank), DstStrides: make([]int64, rank)}
	for _, a := range axes {
		p.Reduce[a] = true
	}
	s, d := int64(1), int64(1)
	for i := rank - 1; i >= 0; i-- {
		p.SrcStrides[i] = s
		s *= dims[i]
		if !p.Reduce[i] {
			p.DstStrides[i] = d
			d *= dims[i]
		}
	}
	return p
}

// BenchmarkAnchors times one single-threaded call over the whole plan for
// each anchor shape and data type, JIT (each ISA) beside the interpreter.
// Bytes are src + dst, so MB/s reads as bandwidth.
func BenchmarkAnchors(b *testing.B) {
	isaList := isas(b)
	for _, a := range anchors {
		for _, dt := range []dtypes.DataType{dtypes.F32, dtypes.BF16, dtypes.F16} {
			p := anchorProblem(a.dims, a.axes, dt)
			pl, err := plan.Canonicalize(p)
			if err != nil {
				b.Fatal(err)
			}
			sb, _ := p.SrcBytes()
			db, _ := p.DstBytes()
			var src, dst []byte
			alloc := func() {
				if src == nil {
					src = make([]byte, sb)
					fillExact(rand.New(rand.NewSource(1)), dt, src, false, 1)
					dst = make([]byte, db)
				}
			}
			for _, isa := range isaList {
				b.Run(a.name+"/"+dt.String()+"/jit-"+isa.name, func(b *testing.B) {
					alloc()
					k := compile(b, pl, isa.o)
					defer k.Release()
					b.SetBytes(sb + db)
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						k.RunBlocks(pl, src, dst, nil, 0)
					}
				})
			}
			b.Run(a.name+"/"+dt.String()+"/interp", func(b *testing.B) {
				alloc()
				b.SetBytes(sb + db)
				for i := 0; i < b.N; i++ {
					if err := interp.Run(pl, src, dst, nil); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkEmit measures code generation (golang-asm dominates) for the
// anchor kernels and reports the code size.
func BenchmarkEmit(b *testing.B) {
	for _, a := range anchors {
		for _, o := range []Options{{AVX512: true}, {}} {
			name := a.name + "/avx2"
			if o.AVX512 {
				name = a.name + "/avx512"
			}
			pl, err := plan.Canonicalize(anchorProblem(a.dims, a.axes, dtypes.BF16))
			if err != nil {
				b.Fatal(err)
			}
			b.Run(name, func(b *testing.B) {
				var n int
				for i := 0; i < b.N; i++ {
					code, err := Emit(pl, o)
					if err != nil {
						b.Fatal(err)
					}
					n = len(code)
				}
				b.ReportMetric(float64(n), "bytes")
			})
		}
	}
}
