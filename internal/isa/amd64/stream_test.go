package amd64

import (
	"math/rand"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kernelconf"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/plan"
)

// rowProblem is [rows, rk] -> [rows, 1] in sdt, mean into ddt.
func rowProblem(sdt, ddt dtypes.DataType, rows, rk int64) *plan.Problem {
	return &plan.Problem{SrcDT: sdt, DstDT: ddt, Dims: []int64{rows, rk}, SrcStrides: []int64{rk, 1},
		Reduce: []bool{false, true}, DstStrides: []int64{1, 0}}
}

// TestStreamChoice pins which rows are read as several streams: f32 rows
// of at least minStreamedRow bytes, one output at a time; 16-bit rows
// are prefetched instead (TestPrefetchChoice).
func TestStreamChoice(t *testing.T) {
	long := intelTuning.minStreamedRow
	cases := []struct {
		sdt        dtypes.DataType
		n, slots   int
		iters      int64
		unit       int64
		wantPer    int
		wantGapSet bool
	}{
		{dtypes.F32, 1, 8, long / 512, 64, 4, true},       // 2 streams of 4 loads
		{dtypes.F32, 1, 8, long/512 - 1, 64, 8, false},    // just short of the bound
		{dtypes.F32, 1, 8, 3 * long / 512, 64, 4, true},   // longer rows, wider gaps
		{dtypes.F32, 2, 8, long / 512, 64, 8, false},      // a group of rows
		{dtypes.F32, 1, 3, long / 192, 64, 3, false},      // 2 does not divide 3 slots
		{dtypes.F32, 1, 8, 1 << 28, 64, 8, false},         // gaps past 32 bits
		{dtypes.BF16, 1, 4, 4 * long / 256, 64, 4, false}, // 16-bit rows: one stream
		{dtypes.F16, 1, 8, 4 * long / 256, 32, 8, false},
	}
	for _, c := range cases {
		p := rowProblem(c.sdt, dtypes.F32, 1, 1<<20)
		pl, err := plan.Canonicalize(p)
		if err != nil {
			t.Fatal(err)
		}
		g := newGen(pl, Options{AVX512: true})
		st := g.conf.streams(c.n, c.slots, c.iters, c.unit)
		wantGap := int64(0)
		if c.wantGapSet {
			wantGap = c.iters * int64(c.wantPer) * c.unit
		}
		if st.per != c.wantPer || st.gap != wantGap {
			t.Errorf("%v n=%d slots=%d iters=%d: got %+v, want per %d gap %d", c.sdt, c.n, c.slots, c.iters, st, c.wantPer, wantGap)
		}
		// Every load of an iteration lands on its own unit, and the
		// last stream ends where the loop's bytes end.
		seen := map[int64]bool{}
		for u := 0; u < c.slots; u++ {
			off := st.offset(u, c.unit)
			if seen[off] {
				t.Errorf("%v: loads overlap at offset %d: %+v", c.sdt, off, st)
			}
			seen[off] = true
		}
	}
}

// TestStreamedRows runs long single rows, around the streamed bound and
// with every kind of tail, next to guard pages, on every ISA: the
// streams must cover each element exactly once and read nothing past
// the row.
func TestStreamedRows(t *testing.T) {
	isaList := isas(t)
	r := rand.New(rand.NewSource(11))
	for _, sdt := range []dtypes.DataType{dtypes.BF16, dtypes.F16, dtypes.F32} {
		elems := intelTuning.minStreamedRow / int64(sdt.Size())
		for _, rk := range []int64{elems - 256, elems - 1, elems, elems + 1, elems + 31, elems + 33, elems + 255, 3*elems + 77} {
			for _, rows := range []int64{1, 2} {
				runGuarded(t, r, rowProblem(sdt, sdt, rows, rk), isaList)
			}
		}
	}
}

// TestMaskedPairRows runs bf16 rows whose last V+1..2V-1 elements are one
// masked pair load on AVX-512 (rows of 17 to 31 elements, and pairs
// followed by such a rest in groups: 49, 63, 95), for one output and for
// groups, next to guard pages, on every ISA.
func TestMaskedPairRows(t *testing.T) {
	isaList := isas(t)
	r := rand.New(rand.NewSource(29))
	for _, ddt := range []dtypes.DataType{dtypes.BF16, dtypes.F32} {
		for _, rk := range []int64{17, 18, 23, 24, 30, 31, 49, 63, 95} {
			for _, rows := range []int64{1, 3, 16, 19} {
				runGuarded(t, r, rowProblem(dtypes.BF16, ddt, rows, rk), isaList, 0, 5)
			}
		}
	}
}

// TestMaskedPairChoice pins where the masked pair load is emitted: AVX-512
// bf16 rows of 17 to 31 elements, one 32-word masked load each, and no
// vector-and-tail conversion; not for f16, nor on AVX2.
func TestMaskedPairChoice(t *testing.T) {
	cases := []struct {
		name string
		sdt  dtypes.DataType
		rk   int64
		o    Options
		want bool
	}{
		{"bf16 rows of 24, avx512", dtypes.BF16, 24, Options{AVX512: true}, true},
		{"bf16 rows of 17, avx512", dtypes.BF16, 17, Options{AVX512: true}, true},
		{"bf16 rows of 40, avx512 (pair, then a vector's tail)", dtypes.BF16, 40, Options{AVX512: true}, false},
		{"f16 rows of 24, avx512", dtypes.F16, 24, Options{AVX512: true}, false},
		{"bf16 rows of 24, avx2", dtypes.BF16, 24, Options{}, false},
	}
	for _, c := range cases {
		pl, err := plan.Canonicalize(rowProblem(c.sdt, dtypes.F32, 64, c.rk))
		if err != nil {
			t.Fatal(err)
		}
		code, err := Emit(pl, c.o)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		pair, widen := false, false
		for _, ins := range disassemble(t, code.Text) {
			pair = pair || strings.HasPrefix(ins, "vmovdqu16") && strings.Contains(ins, "%zmm")
			widen = widen || strings.HasPrefix(ins, "vpmovzxwd")
		}
		if got := pair && !widen; got != c.want {
			t.Errorf("%s: masked pair only = %v (pair load %v, widening %v), want %v", c.name, got, pair, widen, c.want)
		}
	}
}

// TestWidePairBlocks pins where column blocks wider than narrowBytes take
// bf16 pair loads: on AVX-512 under Options.Zen, for every kind that pair
// loads serve (a sum and a sum of |x| here), with no widening left and no
// prefetch; not without Zen, nor for f16. A max or min takes words
// (words.go), widened once at the end.
func TestWidePairBlocks(t *testing.T) {
	l1 := plan.Reduction{Transform: plan.TransformAbs, Combine: plan.CombineAdd, Finalize: plan.FinalizeNone}
	cases := []struct {
		name  string
		sdt   dtypes.DataType
		red   plan.Reduction
		o     Options
		want  bool
		words bool
	}{
		{"bf16 sum, avx512, zen", dtypes.BF16, plan.AlgSum.Reduction(0, 0), Options{AVX512: true, Zen: true}, true, false},
		{"bf16 sum of |x|, avx512, zen", dtypes.BF16, l1, Options{AVX512: true, Zen: true}, true, false},
		{"bf16 sum, avx512", dtypes.BF16, plan.AlgSum.Reduction(0, 0), Options{AVX512: true}, false, false},
		{"f16 sum, avx512, zen", dtypes.F16, plan.AlgSum.Reduction(0, 0), Options{AVX512: true, Zen: true}, false, false},
		{"bf16 max, avx512, zen", dtypes.BF16, plan.AlgMax.Reduction(0, 0), Options{AVX512: true, Zen: true}, false, true},
		{"f16 min, avx2", dtypes.F16, plan.AlgMin.Reduction(0, 0), Options{}, false, true},
	}
	for _, c := range cases {
		// 512 columns of rows 4096 apart: two blocks of 16 vectors, 512
		// bytes of each row, twice narrowBytes.
		pl := kerneltest.DensePlan(t, c.sdt, []int64{1024, 512}, []int64{4096, 1}, []bool{true, false}, plan.Reduction{})
		pl.Reduction = c.red
		code, err := Emit(pl, c.o)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		pairs, words, widen, prefetch := 0, 0, false, false
		for _, ins := range disassemble(t, code.Text) {
			if strings.HasPrefix(ins, "vmovdqu32") && strings.Contains(ins, "(%rsi)") {
				pairs++
			}
			if strings.HasPrefix(ins, "vpminuw") {
				words++
			}
			widen = widen || strings.HasPrefix(ins, "vpmovzxwd") || strings.HasPrefix(ins, "vcvtph2ps")
			prefetch = prefetch || strings.HasPrefix(ins, "prefetch")
		}
		if c.words {
			// Every pair of the block's 16 (AVX2: 8) vectors as words.
			want := 8
			if !c.o.AVX512 {
				want = 4
			}
			if Choose(pl, kernelconf.Hints{}, c.o.Target()).NaNFree {
				want *= 2 // the NaN-free code and the exact code
			}
			if words != want {
				t.Errorf("%s: %d VPMINUW, want %d", c.name, words, want)
			}
			continue
		}
		if got := pairs > 0 && !widen; got != c.want || prefetch {
			t.Errorf("%s: pair loads only = %v (%d pair loads, widening %v), prefetch %v; want %v and no prefetch",
				c.name, got, pairs, widen, prefetch, c.want)
		}
	}
}

// TestWidePairColumns runs bf16 column blocks wider than narrowBytes,
// which take pair loads under Options.Zen (TestWidePairBlocks), for every
// covered kind, next to guard pages on every ISA with and without Zen,
// and with NaN, infinities and signed zeros: widths of an even and an odd
// count of full vectors, with and without a tail vector, and row counts
// with and without a remainder of the unroll (-short: each kind half of
// the widths, kerneltest.ShortPick).
func TestWidePairColumns(t *testing.T) {
	var isaList []isaCase
	for _, isa := range isas(t) {
		isaList = append(isaList, isa)
		isa.name += "+zen"
		isa.o.Zen = true
		isaList = append(isaList, isa)
	}
	r := rand.New(rand.NewSource(31))
	for i, red := range kindReductions {
		for wi, w := range []int64{144, 256, 272, 392, 512} {
			if !kerneltest.ShortPick(i, wi) {
				continue
			}
			for _, rows := range []int64{1, 7, 64} {
				p := &plan.Problem{SrcDT: dtypes.BF16, DstDT: dtypes.F32, Dims: []int64{rows, w}, SrcStrides: []int64{w + 32, 1},
					Reduce: []bool{true, false}, DstStrides: []int64{0, 1}, Reduction: red}
				if (i+int(w))%2 == 1 {
					p.DstDT = dtypes.BF16
				}
				runGuarded(t, r, p, isaList)
				checkProblemPaced(t, r, p, true, true)
			}
		}
	}
}
