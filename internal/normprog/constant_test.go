package normprog

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/jit"
)

// TestConstantRowsHaveNoVariance: a row of equal elements, whose f32
// mean the sums may leave a unit or two off, has the variance 0 on every
// path (rows, pairs of rows, rows cut into runs, columns, the passes,
// groups): with eps 0 its results are NaN (0/0), as the interpreter's,
// and with an eps they are exactly 0, its kept mean the element and its
// variance 0. Elements from 1e-18 to 1e18 in magnitude: below about
// 1e-19 and above about 1e19 the squares underflow or overflow
// (README).
func TestConstantRowsHaveNoVariance(t *testing.T) {
	type tc struct {
		name   string
		d      Desc
		fused  bool
		stats  []int64 // the kept statistics' strides
		nStats int64
	}
	var cs []tc
	for _, n := range []int64{5, 33, 768, 1000, 4096, 100003} {
		dims := []int64{3, n}
		cs = append(cs, tc{fmt.Sprint("rows of ", n), Desc{Kind: LayerNorm, Dims: dims, Norm: []bool{false, true},
			SrcStrides: []int64{n, 1}, DstStrides: []int64{n, 1}}, true, []int64{1, 0}, 3})
		if n <= 4096 {
			cs = append(cs, tc{fmt.Sprint("columns of ", n), Desc{Kind: LayerNorm, Dims: dims, Norm: []bool{false, true},
				SrcStrides: []int64{1, 3}, DstStrides: []int64{1, 3}}, true, []int64{1, 0}, 3})
		}
	}
	img := []int64{2, 8, 16, 16}
	dense := denseStrides(img, identity(4))
	// MeanVarianceNormalization's default axes, [0, 2, 3].
	cs = append(cs, tc{"channels over N, H and W", Desc{Kind: LayerNorm, Dims: img, Norm: []bool{true, false, true, true},
		SrcStrides: dense, DstStrides: dense}, false, []int64{0, 1, 0, 0}, 8})
	cs = append(cs, tc{"groups", Desc{Kind: GroupNorm, Dims: img, Groups: 2, ChanDim: 1, Norm: []bool{false, false, true, true},
		SrcStrides: dense, DstStrides: dense}, false, []int64{2, 1, 0, 0, 0}, 4})
	cs = append(cs, tc{"groups with gamma", Desc{Kind: GroupNorm, Dims: img, Groups: 2, ChanDim: 1, Norm: []bool{false, false, true, true},
		SrcStrides: dense, DstStrides: dense, Gamma: &Operand{DT: dtypes.F32, Strides: []int64{0, 1, 0, 0}}}, false, nil, 0})
	for _, isa := range isas() {
		prev := jit.SetMaxISA(isa)
		for _, c := range cs {
			for _, dt := range []dtypes.DataType{dtypes.F32, dtypes.BF16} {
				for _, v := range []float32{0.1, 1e4, -3.7, 1.0 / 3, 7e-3, 1e-18, -1e18} {
					one := make([]byte, dt.Size())
					dtypes.StoreF32(dt, one, 0, v)
					x := dtypes.LoadF32(dt, one, 0)
					name := fmt.Sprintf("%v, %s, %v %v", isa, c.name, dt, x)
					d := c.d
					d.SrcDT, d.DstDT = dt, dtypes.F32
					n := spanElems(d.Dims, d.SrcStrides)
					src := make([]byte, n*int64(dt.Size()))
					for i := range n {
						dtypes.StoreF32(dt, src, i, x)
					}
					var gamma []byte
					if d.Gamma != nil {
						gamma = make([]byte, 4*8)
						for i := range int64(8) {
							dtypes.StoreF32(dtypes.F32, gamma, i, 1)
						}
					}
					p, err := Compile(&d)
					if err != nil {
						t.Fatal(name, err)
					}
					if isa != jit.None && (p.full.fused != nil) != c.fused {
						t.Fatalf("%s: fused %v, want %v", name, p.full.fused != nil, c.fused)
					}
					dst := make([]byte, 4*n)
					if err := p.Run(Buffers{Src: src, Dst: dst, Gamma: gamma}); err != nil {
						t.Fatal(name, err)
					}
					for i := range n {
						if y := dtypes.LoadF32(dtypes.F32, dst, i); !math.IsNaN(float64(y)) {
							t.Fatalf("%s, eps 0: dst[%d] = %v, want NaN", name, i, y)
						}
					}
					if c.stats == nil {
						continue
					}
					d.Epsilon = 1e-5
					d.Mean = &Operand{DT: dtypes.F32, Strides: c.stats}
					d.Var = d.Mean
					if p, err = Compile(&d); err != nil {
						t.Fatal(name, err)
					}
					mean, vr := make([]byte, 4*c.nStats), make([]byte, 4*c.nStats)
					if err := p.Run(Buffers{Src: src, Dst: dst, Mean: mean, Var: vr}); err != nil {
						t.Fatal(name, err)
					}
					for i := range n {
						if y := dtypes.LoadF32(dtypes.F32, dst, i); y != 0 {
							t.Fatalf("%s, eps 1e-5: dst[%d] = %v, want 0", name, i, y)
						}
					}
					for i := range c.nStats {
						if m, s := dtypes.LoadF32(dtypes.F32, mean, i), dtypes.LoadF32(dtypes.F32, vr, i); m != x || s != 0 {
							t.Fatalf("%s: row %d's mean %v and variance %v, want %v and 0", name, i, m, s, x)
						}
					}
				}
			}
		}
		jit.SetMaxISA(prev)
	}
}

// TestNearConstantRowsKeepInfinities: a row holding an infinity, whose
// variance is NaN, is not swept again (that sweep's mean would be NaN):
// its kept mean is the infinity and its results NaN, on every path.
func TestNearConstantRowsKeepInfinities(t *testing.T) {
	dims := []int64{3, 33}
	img := []int64{2, 8, 4, 4}
	for _, c := range []struct {
		name  string
		d     Desc
		stats []int64
		rows  int64
	}{
		{"rows", Desc{Kind: LayerNorm, Dims: dims, Norm: []bool{false, true}, SrcStrides: []int64{33, 1}, DstStrides: []int64{33, 1}}, []int64{1, 0}, 3},
		{"passes", Desc{Kind: LayerNorm, Dims: img, Norm: []bool{true, false, true, true}, SrcStrides: denseStrides(img, identity(4)),
			DstStrides: denseStrides(img, identity(4))}, []int64{0, 1, 0, 0}, 8},
	} {
		for _, isa := range isas() {
			prev := jit.SetMaxISA(isa)
			d, p := compileKeepingStats(t, c.d, c.stats)
			n := spanElems(d.Dims, d.SrcStrides)
			src, dst := make([]byte, 4*n), make([]byte, 4*n)
			for i := range n {
				dtypes.StoreF32(dtypes.F32, src, i, 0.1)
			}
			// An infinity in every row: the passes' rows hold element 0
			// of each channel.
			inf := float32(math.Inf(1))
			for i := range c.rows {
				if c.name == "rows" {
					dtypes.StoreF32(dtypes.F32, src, i*33, inf)
				} else {
					dtypes.StoreF32(dtypes.F32, src, i*16, inf)
				}
			}
			mean, vr := make([]byte, 4*c.rows), make([]byte, 4*c.rows)
			if err := p.Run(Buffers{Src: src, Dst: dst, Mean: mean, Var: vr}); err != nil {
				t.Fatal(err)
			}
			for i := range c.rows {
				if m, v := dtypes.LoadF32(dtypes.F32, mean, i), dtypes.LoadF32(dtypes.F32, vr, i); m != inf || !math.IsNaN(float64(v)) {
					t.Errorf("%v, %s: row %d's mean %v and variance %v, want +Inf and NaN", isa, c.name, i, m, v)
				}
			}
			for i := range n {
				if y := dtypes.LoadF32(dtypes.F32, dst, i); !math.IsNaN(float64(y)) {
					t.Fatalf("%v, %s: dst[%d] = %v, want NaN", isa, c.name, i, y)
				}
			}
			jit.SetMaxISA(prev)
		}
	}
}

// TestNearConstantRowsAmongOthers: rows that are corrected (a constant
// row, and one of mean 1e4 and spread 1, below 1e4/4096) beside rows that
// are not (random data, a row holding an infinity), through the fused
// rows and through the passes: each row as alone, the others within the
// README's bound of the float64 reference, (4·ceil(log2(n+1)) + 16)
// units of 2^-24 relative to the larger of the result and the row's
// scale max|x|/σ.
func TestNearConstantRowsAmongOthers(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const rows, n = 4, 128
	val := make([]float32, rows*n) // element k of row c
	for k := range n {
		val[k] = 0.1
		val[n+k] = float32(5 + r.NormFloat64())
		val[2*n+k] = float32(r.NormFloat64())
		val[3*n+k] = float32(1e4 + r.NormFloat64())
	}
	val[2*n+7] = float32(math.Inf(1))
	img := []int64{2, rows, 8, 8}
	for _, c := range []struct {
		name  string
		d     Desc
		at    func(c, k int64) int64 // src offset of element k of row c
		stats []int64
	}{
		{"rows", Desc{Kind: LayerNorm, Dims: []int64{rows, n}, Norm: []bool{false, true}, SrcStrides: []int64{n, 1}, DstStrides: []int64{n, 1}},
			func(c, k int64) int64 { return c*n + k }, []int64{1, 0}},
		{"passes", Desc{Kind: LayerNorm, Dims: img, Norm: []bool{true, false, true, true}, SrcStrides: denseStrides(img, identity(4)),
			DstStrides: denseStrides(img, identity(4))}, func(c, k int64) int64 { return k/64*rows*64 + c*64 + k%64 }, []int64{0, 1, 0, 0}},
	} {
		for _, isa := range isas() {
			prev := jit.SetMaxISA(isa)
			d, p := compileKeepingStats(t, c.d, c.stats)
			src, dst := make([]byte, 4*rows*n), make([]byte, 4*rows*n)
			for row := range int64(rows) {
				for k := range int64(n) {
					dtypes.StoreF32(dtypes.F32, src, c.at(row, k), val[row*n+k])
				}
			}
			mean, vr := make([]byte, 4*rows), make([]byte, 4*rows)
			if err := p.Run(Buffers{Src: src, Dst: dst, Mean: mean, Var: vr}); err != nil {
				t.Fatal(err)
			}
			want := reference(&d, src, nil, nil, nil)
			var bound, scale [rows]float64
			for row := range rows {
				var sum, sq, top float64
				for _, x := range val[row*n : (row+1)*n] {
					sum += float64(x)
					top = max(top, math.Abs(float64(x)))
				}
				for _, x := range val[row*n : (row+1)*n] {
					sq += (float64(x) - sum/n) * (float64(x) - sum/n)
				}
				bound[row] = (4*math.Ceil(math.Log2(n+1)) + 16) * 0x1p-24
				scale[row] = top / math.Sqrt(sq/n)
			}
			for row := range int64(rows) {
				m, v := dtypes.LoadF32(dtypes.F32, mean, row), dtypes.LoadF32(dtypes.F32, vr, row)
				switch row {
				case 0:
					if m != 0.1 || v != 0 {
						t.Errorf("%v, %s: the constant row's mean %v and variance %v, want 0.1 and 0", isa, c.name, m, v)
					}
				case 2:
					if !math.IsInf(float64(m), 1) || !math.IsNaN(float64(v)) {
						t.Errorf("%v, %s: the row holding +Inf has mean %v and variance %v, want +Inf and NaN", isa, c.name, m, v)
					}
				}
				for k := range int64(n) {
					off := c.at(row, k)
					got, w := float64(dtypes.LoadF32(dtypes.F32, dst, off)), want[off]
					switch {
					case row == 0 && got != 0, row == 2 && !math.IsNaN(got):
						t.Fatalf("%v, %s: row %d, element %d: %v", isa, c.name, row, k, got)
					case row == 1 || row == 3:
						if math.IsNaN(got) || math.Abs(got-w) > bound[row]*max(math.Abs(w), scale[row]) {
							t.Fatalf("%v, %s: row %d, element %d: %v, want %v", isa, c.name, row, k, got, w)
						}
					}
				}
			}
			jit.SetMaxISA(prev)
		}
	}
}

// compileKeepingStats compiles d in f32 with eps 1e-5, keeping its mean
// and variance with the strides stats.
func compileKeepingStats(t *testing.T, d Desc, stats []int64) (Desc, *Program) {
	t.Helper()
	d.SrcDT, d.DstDT, d.Epsilon = dtypes.F32, dtypes.F32, 1e-5
	d.Mean = &Operand{DT: dtypes.F32, Strides: stats}
	d.Var = d.Mean
	p, err := Compile(&d)
	if err != nil {
		t.Fatal(err)
	}
	return d, p
}
