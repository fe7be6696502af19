package normprog

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/jit"
)

// TestSoftmaxInfAsZero: in inf_as_zero mode an all -Inf row gives 0s;
// other rows are softmax as usual.
func TestSoftmaxInfAsZero(t *testing.T) {
	ninf := float32(math.Inf(-1))
	vals := []float32{ninf, ninf, ninf, ninf, ninf, 0, 1, ninf, 2, 2, 2, 2}
	src := make([]byte, 48)
	for i, v := range vals {
		dtypes.StoreF32(dtypes.F32, src, int64(i), v)
	}
	want := []float64{0, 0, 0, 0, 0, 1 / (1 + math.E), math.E / (1 + math.E), 0, 0.25, 0.25, 0.25, 0.25}
	for _, isa := range isas() {
		prev := jit.SetMaxISA(isa)
		p, err := Compile(&Desc{Kind: Softmax, SrcDT: dtypes.F32, DstDT: dtypes.F32, Dims: []int64{3, 4},
			Norm: []bool{false, true}, SrcStrides: []int64{4, 1}, DstStrides: []int64{4, 1}, InfAsZero: true})
		if err != nil {
			t.Fatal(err)
		}
		dst := make([]byte, 48)
		if err := p.Run(Buffers{Src: src, Dst: dst}); err != nil {
			t.Fatal(err)
		}
		for i, w := range want {
			if got := float64(dtypes.LoadF32(dtypes.F32, dst, int64(i))); math.Abs(got-w) > 1e-6 || math.IsNaN(got) {
				t.Errorf("%v: element %d is %v, want %v", isa, i, got, w)
			}
		}
		jit.SetMaxISA(prev)
	}
}

// groupRef is GroupNorm of x [N, C, S] (NCX) or [N, S, C] (NXC) in
// float64, with the mean and variance of each (n, g).
func groupRef(x []float64, n, c, sp, g int64, nxc bool, gamma, beta []float64, eps float64) (y, mean, vr []float64) {
	y = make([]float64, len(x))
	per := c / g
	at := func(in, ic, is int64) int64 {
		if nxc {
			return (in*sp+is)*c + ic
		}
		return (in*c+ic)*sp + is
	}
	for in := int64(0); in < n; in++ {
		for ig := int64(0); ig < g; ig++ {
			var m, v float64
			cnt := float64(per * sp)
			for ic := ig * per; ic < (ig+1)*per; ic++ {
				for is := int64(0); is < sp; is++ {
					m += x[at(in, ic, is)] / cnt
				}
			}
			for ic := ig * per; ic < (ig+1)*per; ic++ {
				for is := int64(0); is < sp; is++ {
					d := x[at(in, ic, is)] - m
					v += d * d / cnt
				}
			}
			mean, vr = append(mean, m), append(vr, v)
			for ic := ig * per; ic < (ig+1)*per; ic++ {
				for is := int64(0); is < sp; is++ {
					i := at(in, ic, is)
					y[i] = (x[i]-m)/math.Sqrt(v+eps)*gamma[ic] + beta[ic]
				}
			}
		}
	}
	return y, mean, vr
}

// TestGroupNorm checks GroupNorm on NCX and NXC data, with gamma, beta
// and kept statistics ([N, G] dense), against groupRef.
func TestGroupNorm(t *testing.T) {
	const n, c, sp, g = 3, 12, 50, 4
	r := rand.New(rand.NewPCG(7, 8))
	x := make([]float64, n*c*sp)
	src := make([]byte, 4*len(x))
	for i := range x {
		x[i] = float64(float32(r.NormFloat64()*3 + 5))
		dtypes.StoreF32(dtypes.F32, src, int64(i), float32(x[i]))
	}
	gamma, beta := make([]float64, c), make([]float64, c)
	gb, bb := make([]byte, 4*c), make([]byte, 4*c)
	for i := range gamma {
		gamma[i], beta[i] = float64(float32(r.Float64())), float64(float32(r.Float64()-0.5))
		dtypes.StoreF32(dtypes.F32, gb, int64(i), float32(gamma[i]))
		dtypes.StoreF32(dtypes.F32, bb, int64(i), float32(beta[i]))
	}
	for _, nxc := range []bool{false, true} {
		// dims [N, C, S]; NXC data keeps C innermost in memory.
		strides := []int64{c * sp, sp, 1}
		if nxc {
			strides = []int64{c * sp, 1, c}
		}
		// Statistics over the split dims [N, G, C/G, S]: [N, G] dense.
		stat := &Operand{DT: dtypes.F32, Strides: []int64{g, 1, 0, 0}}
		d := &Desc{Kind: GroupNorm, SrcDT: dtypes.F32, DstDT: dtypes.F32, Dims: []int64{n, c, sp},
			Norm: []bool{false, false, true}, SrcStrides: strides, DstStrides: strides, Epsilon: 1e-5,
			Groups: g, ChanDim: 1, Gamma: &Operand{DT: dtypes.F32, Strides: []int64{0, 1, 0}},
			Beta: &Operand{DT: dtypes.F32, Strides: []int64{0, 1, 0}}, Mean: stat, Var: stat}
		wantY, wantM, wantV := groupRef(x, n, c, sp, g, nxc, gamma, beta, 1e-5)
		for _, isa := range isas() {
			prev := jit.SetMaxISA(isa)
			p, err := Compile(d)
			if err != nil {
				t.Fatal(err)
			}
			dst, mb, vb := make([]byte, len(src)), make([]byte, 4*n*g), make([]byte, 4*n*g)
			if err := p.Run(Buffers{Src: src, Dst: dst, Gamma: gb, Beta: bb, Mean: mb, Var: vb}); err != nil {
				t.Fatal(err)
			}
			for i, w := range wantY {
				if got := float64(dtypes.LoadF32(dtypes.F32, dst, int64(i))); math.Abs(got-w) > 1e-5*(1+math.Abs(w)) {
					t.Fatalf("nxc=%v %v: y[%d] is %v, want %v", nxc, isa, i, got, w)
				}
			}
			for i := range wantM {
				gm, gv := float64(dtypes.LoadF32(dtypes.F32, mb, int64(i))), float64(dtypes.LoadF32(dtypes.F32, vb, int64(i)))
				if math.Abs(gm-wantM[i]) > 1e-5*(1+math.Abs(wantM[i])) || math.Abs(gv-wantV[i]) > 1e-5*wantV[i] {
					t.Fatalf("nxc=%v %v: stats %d are %v, %v; want %v, %v", nxc, isa, i, gm, gv, wantM[i], wantV[i])
				}
			}
			jit.SetMaxISA(prev)
		}
	}
}

func TestGroupNormRefusals(t *testing.T) {
	base := func() *Desc {
		return &Desc{Kind: GroupNorm, SrcDT: dtypes.F32, DstDT: dtypes.F32, Dims: []int64{2, 6, 5}, Norm: []bool{false, false, true},
			SrcStrides: []int64{30, 5, 1}, DstStrides: []int64{30, 5, 1}, Epsilon: 1e-5, Groups: 3, ChanDim: 1}
	}
	for name, mod := range map[string]func(*Desc){
		"groups do not divide": func(d *Desc) { d.Groups = 4 },
		"zero groups":          func(d *Desc) { d.Groups = 0 },
		"channel dim out":      func(d *Desc) { d.ChanDim = 3 },
		"channel dim normed":   func(d *Desc) { d.ChanDim = 2 },
		"groups on softmax":    func(d *Desc) { d.Kind = Softmax },
		"inf_as_zero":          func(d *Desc) { d.InfAsZero = true },
		"stats rank":           func(d *Desc) { d.Mean = &Operand{DT: dtypes.F32, Strides: []int64{3, 1, 0}} },
		"stats s8":             func(d *Desc) { d.Mean = &Operand{DT: dtypes.S8, Strides: []int64{3, 1, 0, 0}} },
		"stats per element":    func(d *Desc) { d.Var = &Operand{DT: dtypes.F32, Strides: []int64{3, 1, 0, 1}} },
	} {
		d := base()
		mod(d)
		if _, err := Compile(d); err == nil {
			t.Errorf("%s: Compile succeeds", name)
		}
	}
	if _, err := Compile(base()); err != nil {
		t.Errorf("the valid description fails: %v", err)
	}
}

// TestGroupNormChunksOfGroups: where one image is over a chunk's budget,
// GroupNorm on NCX data is cut along its groups (each chunk a group of
// every image), not into one chunk per image; the results, kept
// statistics included, match groupRef and are the same bits at any
// thread count, on every ISA.
func TestGroupNormChunksOfGroups(t *testing.T) {
	const n, c, sp, g = 2, 8, 9000, 4 // 288,000 bytes an image
	r := rand.New(rand.NewPCG(9, 10))
	x := make([]float64, n*c*sp)
	src := make([]byte, 4*len(x))
	for i := range x {
		x[i] = float64(float32(r.NormFloat64()*2 + 3))
		dtypes.StoreF32(dtypes.F32, src, int64(i), float32(x[i]))
	}
	gamma, beta := make([]float64, c), make([]float64, c)
	gb, bb := make([]byte, 4*c), make([]byte, 4*c)
	for i := range gamma {
		gamma[i], beta[i] = float64(float32(r.Float64()+0.5)), float64(float32(r.Float64()-0.5))
		dtypes.StoreF32(dtypes.F32, gb, int64(i), float32(gamma[i]))
		dtypes.StoreF32(dtypes.F32, bb, int64(i), float32(beta[i]))
	}
	strides := []int64{c * sp, sp, 1}
	stat := &Operand{DT: dtypes.F32, Strides: []int64{g, 1, 0, 0}}
	d := &Desc{Kind: GroupNorm, SrcDT: dtypes.F32, DstDT: dtypes.F32, Dims: []int64{n, c, sp},
		Norm: []bool{false, false, true}, SrcStrides: strides, DstStrides: strides, Epsilon: 1e-5,
		Groups: g, ChanDim: 1, Gamma: &Operand{DT: dtypes.F32, Strides: []int64{0, 1, 0}},
		Beta: &Operand{DT: dtypes.F32, Strides: []int64{0, 1, 0}}, Mean: stat, Var: stat}
	wantY, wantM, wantV := groupRef(x, n, c, sp, g, false, gamma, beta, 1e-5)
	for _, isa := range isas() {
		prev := jit.SetMaxISA(isa)
		p, err := Compile(d)
		if err != nil {
			t.Fatal(err)
		}
		if p.chunkDim != 1 || p.nChunks != g {
			t.Fatalf("%v: cut along dim %d into %d chunks, want the groups' (dim 1) into %d", isa, p.chunkDim, p.nChunks, g)
		}
		var first [][]byte
		for _, th := range []int{1, 2, 3, 8} {
			prevT := jit.SetThreads(th)
			dst, mb, vb := make([]byte, len(src)), make([]byte, 4*n*g), make([]byte, 4*n*g)
			err := p.Run(Buffers{Src: src, Dst: dst, Gamma: gb, Beta: bb, Mean: mb, Var: vb})
			jit.SetThreads(prevT)
			if err != nil {
				t.Fatal(err)
			}
			if first != nil {
				for i, b := range [][]byte{dst, mb, vb} {
					if !slices.Equal(b, first[i]) {
						t.Fatalf("%v: output %d at %d threads differs from 1 thread's", isa, i, th)
					}
				}
				continue
			}
			first = [][]byte{dst, mb, vb}
			for i, w := range wantY {
				if got := float64(dtypes.LoadF32(dtypes.F32, dst, int64(i))); math.Abs(got-w) > 1e-5*(1+math.Abs(w)) {
					t.Fatalf("%v: y[%d] is %v, want %v", isa, i, got, w)
				}
			}
			for i := range wantM {
				gm, gv := float64(dtypes.LoadF32(dtypes.F32, mb, int64(i))), float64(dtypes.LoadF32(dtypes.F32, vb, int64(i)))
				if math.Abs(gm-wantM[i]) > 1e-5*(1+math.Abs(wantM[i])) || math.Abs(gv-wantV[i]) > 1e-5*wantV[i] {
					t.Fatalf("%v: stats %d are %v, %v; want %v, %v", isa, i, gm, gv, wantM[i], wantV[i])
				}
			}
		}
		jit.SetMaxISA(prev)
	}
}
