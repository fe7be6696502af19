package normprog

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
	"unsafe"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
)

// bf16DstSpecials are f32 results whose bf16 rounding a fast conversion
// may get wrong: subnormals of both signs (ties to even among them, and
// ones that round to the smallest normal or to zero), zeros, NaNs (among
// them payloads whose integer rounding would carry: into the next bit,
// through the exponent, into the sign), the infinities, normal ties and
// the largest normal, which rounds to Inf.
var bf16DstSpecials = []uint32{
	0x00000001, 0x80000001, 0x00008000, 0x80008000, 0x00018000, 0x80018000, 0x00028000, 0x0000ffff,
	0x007fffff, 0x807fffff, 0x00400000, 0x007f8000, 0x0, 0x80000000, 0x7fc00000, 0xffc00001, 0x7f800001,
	0x7fc18000, 0x7fffffff, 0xffffffff,
	0x7f800000, 0xff800000, 0x3f808000, 0x3f818000, 0xbf808000, 0x7f7fffff, 0x00800000,
}

// TestBF16DstSpecialResults: a LayerNorm with gamma and beta into bf16,
// whose results are made special where gamma is 0 (the result is beta,
// one of bf16DstSpecials) or tiny (a subnormal product of any bits), in
// both vectors of a pair of AVX-512 vectors, in either one only, or in
// neither; from bf16 src (some of whose elements
// are subnormal, -0, NaN or Inf) and f32 src; rows with tails; out of
// place and in place. On every ISA, the interpreter's too, dst is bit
// for bit dtypes.F32ToBF16 of what the same program writes into an f32
// dst; that is the float64 reference's within the f32 tolerance, and
// where gamma is 0 and beta is not a zero, beta exactly (the reference's
// (x-mu)/sd*0 + beta).
func TestBF16DstSpecialResults(t *testing.T) {
	const rows = 10
	for _, n := range []int64{768, 16, 33, 48, 95, 100, 130, 250} {
		for _, sdt := range []dtypes.DataType{dtypes.BF16, dtypes.F32} {
			d := Desc{Kind: LayerNorm, SrcDT: sdt, DstDT: dtypes.BF16, Dims: []int64{rows, n}, Norm: []bool{false, true},
				SrcStrides: []int64{n, 1}, DstStrides: []int64{n, 1}, Epsilon: 1e-5,
				Gamma: &Operand{DT: dtypes.F32, Strides: []int64{0, 1}}, Beta: &Operand{DT: dtypes.F32, Strides: []int64{0, 1}}}
			// gamma and beta are per element of a row: every row gets
			// the same specials, so each row is a src pattern over them.
			r := rand.New(rand.NewPCG(uint64(n), uint64(sdt)))
			gamma, beta := make([]byte, 4*n), make([]byte, 4*n)
			special := make([]bool, n)
			for j := range n {
				g, b := float32(r.Float64()*2-1), float32(r.Float64()*2-1)
				// By blocks of 64 (four of a kernel's vectors, two pairs):
				// specials in both vectors of a pair and tiny gammas;
				// specials in the second vector only; in the first only;
				// none. And the row's last element.
				block := j / 64 % 4
				switch {
				case block == 0 && j%16 == 3 || block == 1 && j%32 == 28 || block == 2 && j%32 == 5 || j == n-1:
					g, b = 0, math.Float32frombits(bf16DstSpecials[int(j)%len(bf16DstSpecials)])
					special[j] = true
				case block == 0 && j%7 == 2:
					g, b = float32(r.Float64()+0.5)*0x1p-128, 0
				}
				dtypes.StoreF32(dtypes.F32, gamma, j, g)
				dtypes.StoreF32(dtypes.F32, beta, j, b)
			}
			src := bf16DstSrc(r, sdt, rows, n)
			f32 := d
			f32.DstDT = dtypes.F32
			for _, isa := range isas() {
				name := fmt.Sprintf("rows of %d, %v:bf16, %v", n, sdt, isa)
				res := runBF16Dst(t, isa, name, &f32, src, Buffers{Gamma: gamma, Beta: beta}, false, false)
				want := make([]byte, len(res)/2)
				for e := range int64(len(want) / 2) {
					dtypes.StoreF32(dtypes.BF16, want, e, dtypes.LoadF32(dtypes.F32, res, e))
				}
				for e, w := range reference(&f32, src, gamma, beta, nil) {
					x := float64(dtypes.LoadF32(dtypes.F32, res, int64(e)))
					if !(math.Abs(x-w) <= tolerance(&f32, w) || x == w || math.IsNaN(x) && math.IsNaN(w)) {
						t.Fatalf("%s: element %d is %g, the float64 reference's %g", name, e, x, w)
					}
				}
				for j := range n {
					b := dtypes.LoadF32(dtypes.F32, beta, j)
					wantBits := math.Float32bits(b)
					if b != b {
						wantBits |= 0x00400000 // the add quiets a signalling NaN
					}
					for i := range int64(rows) {
						x := dtypes.LoadF32(dtypes.F32, res, i*n+j)
						if special[j] && b != 0 && i != bf16DstNaNRow && i != bf16DstInfRow && math.Float32bits(x) != wantBits {
							t.Fatalf("%s: row %d element %d is %#08x, want beta %#08x", name, i, j, math.Float32bits(x), math.Float32bits(b))
						}
					}
				}
				if subs := bf16Subnormals(want); subs < rows {
					t.Fatalf("%s: only %d subnormal results", name, subs)
				}
				for _, inPlace := range []bool{false, true} {
					if inPlace && sdt != dtypes.BF16 {
						continue
					}
					for _, stream := range []bool{false, true} {
						got := runBF16Dst(t, isa, name, &d, src, Buffers{Gamma: gamma, Beta: beta}, inPlace, stream)
						for e := 0; e < len(got); e += 2 {
							if got[e] != want[e] || got[e+1] != want[e+1] {
								t.Fatalf("%s, in place %v, streamed %v: element %d is %#04x, the f32 result %#08x rounded %#04x", name, inPlace, stream, e/2,
									uint16(got[e])|uint16(got[e+1])<<8, math.Float32bits(dtypes.LoadF32(dtypes.F32, res, int64(e/2))),
									uint16(want[e])|uint16(want[e+1])<<8)
							}
						}
					}
				}
			}
		}
	}
}

// TestBF16DstPairSpecials: every one of bf16DstSpecials as a LayerNorm's
// result (gamma 0, beta the special) at every lane of a pair of AVX-512
// vectors (and so of AVX2's), and in both vectors of a pair at once: beta
// along a row takes the specials in an order that moves on by one every
// 32 elements. On every ISA, streamed or not, the bf16 dst is bit for bit
// dtypes.F32ToBF16 of the same program's f32 dst. NaNs whose payload
// carries in the integer rounding (a signalling NaN, all-ones payloads)
// must come out as toBF16's quiet NaNs, not as infinities or zeros.
func TestBF16DstPairSpecials(t *testing.T) {
	const rows, lanes = 3, 32
	n := int64(len(bf16DstSpecials) * lanes)
	d := Desc{Kind: LayerNorm, SrcDT: dtypes.F32, DstDT: dtypes.BF16, Dims: []int64{rows, n}, Norm: []bool{false, true},
		SrcStrides: []int64{n, 1}, DstStrides: []int64{n, 1}, Epsilon: 1e-5,
		Gamma: &Operand{DT: dtypes.F32, Strides: []int64{0, 1}}, Beta: &Operand{DT: dtypes.F32, Strides: []int64{0, 1}}}
	gamma, beta := make([]byte, 4*n), make([]byte, 4*n)
	for j := range n {
		k := (j/lanes + j%lanes) % int64(len(bf16DstSpecials))
		dtypes.StoreF32(dtypes.F32, beta, j, math.Float32frombits(bf16DstSpecials[k]))
	}
	src := fill(rand.New(rand.NewPCG(5, 6)), dtypes.F32, rows*n, 4)
	f32 := d
	f32.DstDT = dtypes.F32
	for _, isa := range isas() {
		res := runBF16Dst(t, isa, "pair specials", &f32, src, Buffers{Gamma: gamma, Beta: beta}, false, false)
		for _, stream := range []bool{false, true} {
			got := runBF16Dst(t, isa, "pair specials", &d, src, Buffers{Gamma: gamma, Beta: beta}, false, stream)
			for e := range int64(len(got) / 2) {
				x := dtypes.LoadF32(dtypes.F32, res, e)
				want := dtypes.F32ToBF16(x)
				if w := uint16(got[2*e]) | uint16(got[2*e+1])<<8; w != want {
					t.Fatalf("%v, streamed %v: element %d (lane %d) is %#04x, the f32 result %#08x rounded %#04x",
						isa, stream, e, e%lanes, w, math.Float32bits(x), want)
				}
			}
		}
	}
}

// Rows of bf16DstSrc whose src holds a NaN or an Inf.
const (
	bf16DstNaNRow = 3
	bf16DstInfRow = 4
)

// bf16DstSrc fills rows of n elements of dt over [-4, 4), but for a NaN
// in row bf16DstNaNRow, an Inf in bf16DstInfRow, subnormals and -0 among
// the values of row 5, and row 6 all one value (its variance 0).
func bf16DstSrc(r *rand.Rand, dt dtypes.DataType, rows, n int64) []byte {
	src := fill(r, dt, rows*n, 4)
	set := func(i, j int64, bits uint32) { dtypes.StoreF32(dt, src, i*n+j, math.Float32frombits(bits)) }
	set(bf16DstNaNRow, n/2, 0x7fc00000)
	set(bf16DstInfRow, n-1, 0xff800000)
	for j := int64(0); j < n; j += 5 {
		set(5, j, []uint32{0x00010000, 0x80000000, 0x807f0000, 0x00400000}[j/5%4])
	}
	for j := range n {
		set(6, j, 0x3fc00000)
	}
	return src
}

// TestBF16DstLogSoftmaxGroups: log-softmax rows of bf16 into bf16, which
// AVX-512 with native bf16 takes four at a time and stores in pairs,
// their results made subnormal by a tiny per-element factor (a binary
// Multiply post-op) in both vectors of a pair of AVX-512 vectors, in the
// first only, in the second only, or in neither, rows of 128, 100 and 40
// (pairs with a tail, a pair and a tail), nine rows (two groups and a
// row left over): on every ISA, out of place and in place, streamed or
// not, dst is bit for bit dtypes.F32ToBF16 of what the same program
// writes into an f32 dst.
func TestBF16DstLogSoftmaxGroups(t *testing.T) {
	const rows = 9
	for _, n := range []int64{128, 100, 40} {
		d := Desc{Kind: LogSoftmax, SrcDT: dtypes.BF16, DstDT: dtypes.BF16, Dims: []int64{rows, n}, Norm: []bool{false, true},
			SrcStrides: []int64{n, 1}, DstStrides: []int64{n, 1},
			PostOps: []plan.PostOp{{Kind: ops.Multiply, BinDT: dtypes.F32, BinStrides: []int64{0, 1}}}}
		r := rand.New(rand.NewPCG(uint64(n), 21))
		scale := make([]byte, 4*n)
		for j := range n {
			f := float32(1)
			// Pairs of 32 elements: tiny factors in both vectors, in
			// the first, in the second, in neither.
			first, pair := j%32 < 16, j/32%4
			if j%5 == 1 && (pair == 0 || pair == 1 && first || pair == 2 && !first) {
				f = float32(r.Float64()+0.5) * 0x1p-130
			}
			dtypes.StoreF32(dtypes.F32, scale, j, f)
		}
		opnds := Buffers{Bins: [][]byte{scale}}
		src := fill(r, dtypes.BF16, rows*n, 4)
		f32 := d
		f32.DstDT = dtypes.F32
		for _, isa := range isas() {
			name := fmt.Sprintf("log-softmax rows of %d, bf16:bf16, %v", n, isa)
			res := runBF16Dst(t, isa, name, &f32, src, opnds, false, false)
			want := make([]byte, len(res)/2)
			for e := range int64(len(want) / 2) {
				dtypes.StoreF32(dtypes.BF16, want, e, dtypes.LoadF32(dtypes.F32, res, e))
			}
			if subs := bf16Subnormals(want); subs < rows {
				t.Fatalf("%s: only %d subnormal results", name, subs)
			}
			for _, inPlace := range []bool{false, true} {
				for _, stream := range []bool{false, true} {
					got := runBF16Dst(t, isa, name, &d, src, opnds, inPlace, stream)
					for e := 0; e < len(got); e += 2 {
						if got[e] != want[e] || got[e+1] != want[e+1] {
							t.Fatalf("%s, in place %v, streamed %v: element %d is %#04x, the f32 result %#08x rounded %#04x", name, inPlace, stream, e/2,
								uint16(got[e])|uint16(got[e+1])<<8, math.Float32bits(dtypes.LoadF32(dtypes.F32, res, int64(e/2))),
								uint16(want[e])|uint16(want[e+1])<<8)
						}
					}
				}
			}
		}
	}
}

// runBF16Dst runs d's program on isa (jit.None: the interpreter) over
// src and the operands of opnds (its gamma, beta and binary operands),
// in place or not, and returns dst. A JIT ISA must run the fused
// kernel. With stream, the kernel stores dst non-temporally where it
// can (memoryMinBytes lowered to 0), src and dst start on a cache line,
// and on amd64 rows a line apart must stream.
func runBF16Dst(t *testing.T, isa jit.ISA, name string, d *Desc, src []byte, opnds Buffers, inPlace, stream bool) []byte {
	t.Helper()
	prev := jit.SetMaxISA(isa)
	defer jit.SetMaxISA(prev)
	if stream {
		defer setStreamMin(0)()
	}
	p, err := Compile(d)
	if err != nil {
		t.Fatalf("%s, %v: %v", name, isa, err)
	}
	if isa != jit.None && p.Impl() != "jit:"+isa.String() {
		t.Fatalf("%s: %v runs %s", name, isa, p.Impl())
	}
	rowBytes := d.DstStrides[len(d.DstStrides)-2] * int64(d.DstDT.Size())
	if stream && isa != jit.None && runtime.GOARCH == "amd64" && rowBytes%64 == 0 && !p.full.fused.Streams() {
		t.Fatalf("%s: rows %d bytes apart on %v do not stream", name, rowBytes, isa)
	}
	dst := lineAligned(len(src) / d.SrcDT.Size() * d.DstDT.Size())
	b := Buffers{Src: append(lineAligned(len(src))[:0], src...), Dst: dst, Gamma: opnds.Gamma, Beta: opnds.Beta, Bins: opnds.Bins}
	if inPlace {
		b.Dst = b.Src
	}
	if err := p.Run(b); err != nil {
		t.Fatalf("%s, %v: %v", name, isa, err)
	}
	return b.Dst
}

// lineAligned is n zero bytes from a cache line's start.
func lineAligned(n int) []byte {
	b := make([]byte, n+64)
	off := -int(uintptr(unsafe.Pointer(&b[0]))) & 63
	return b[off : off+n]
}

// bf16Subnormals counts the subnormal bf16 values in b.
func bf16Subnormals(b []byte) int {
	subs := 0
	for e := 0; e < len(b); e += 2 {
		if w := uint16(b[e]) | uint16(b[e+1])<<8; w&0x7f80 == 0 && w&0x7f != 0 {
			subs++
		}
	}
	return subs
}
