package blocked

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/oracle"
	"github.com/gdnn/gdnn/internal/plan"
)

// TestInPlaceOperand runs dst = reduce(blocked src) + dst, the sum
// post-op, with the Add's operand the dst buffer itself: over padded and
// whole blocks, the blocked dim kept (boxes) and reduced (a repack), on
// every ISA. The result must equal the same run with the operand in a
// buffer of its own. A dst with padding to clear takes no such operand.
func TestInPlaceOperand(t *testing.T) {
	r := rand.New(rand.NewPCG(24, 1))
	cases := []struct {
		stag, dtag string
		dims       []int64
		reduce     []bool
		inPlace    bool
	}{
		{"aBx16b", "abx", []int64{2, 20, 3}, []bool{false, false, true}, true}, // kept, padded: two boxes
		{"aBx16b", "abx", []int64{2, 20, 3}, []bool{false, true, false}, true}, // reduced, padded: repack
		{"aBx8b", "axb", []int64{3, 16, 5}, []bool{false, false, true}, true},  // whole blocks
		{"ABx16a16b", "abx", []int64{17, 20, 3}, []bool{false, false, true}, true},
		{"abx", "aBx16b", []int64{2, 20, 3}, []bool{false, false, true}, false}, // dst padding is cleared first
	}
	for _, isa := range isas() {
		for _, c := range cases {
			p := plan.Problem{Reduction: plan.AlgSum.Reduction(0, 0), SrcDT: dtypes.F32, DstDT: dtypes.F32, Dims: c.dims, Reduce: c.reduce}
			src := newTensor(t, c.stag, c.dims, dtypes.F32)
			dst := newTensor(t, c.dtag, dstDims(&p), dtypes.F32)
			forEach(c.dims, func(idx []int64) { oracle.Put(dtypes.F32, src.buf, src.d.Offset(idx), float64(r.IntN(9)-4)) })
			// The Add's operand addresses dst's elements as dst does.
			s := make([]int64, len(c.dims))
			for d := range s {
				if !c.reduce[d] {
					s[d] = dst.d.Outer[d]
				}
			}
			p.PostOps = []plan.PostOp{{Kind: ops.Add, BinDT: dtypes.F32, BinStrides: s}}
			prev := jit.SetMaxISA(isa)
			k, err := Compile(&p, src.d, dst.d)
			jit.SetMaxISA(prev)
			if err != nil {
				t.Fatalf("%s:%s %v: Compile: %v", c.stag, c.dtag, c.dims, err)
			}
			if got := k.InPlace(0); got != c.inPlace {
				t.Fatalf("%s:%s %v reduce %v: InPlace %v, want %v", c.stag, c.dtag, c.dims, c.reduce, got, c.inPlace)
			}
			if !c.inPlace {
				continue
			}
			before := make([]byte, len(dst.buf))
			forEach(dstDims(&p), func(idx []int64) { oracle.Put(dtypes.F32, before, dst.d.Offset(idx), float64(r.IntN(7)-3)) })
			want := make([]byte, len(dst.buf))
			if err := k.Run(src.buf, want, [][]byte{bytes.Clone(before)}); err != nil {
				t.Fatal(err)
			}
			got := bytes.Clone(before)
			if err := k.Run(src.buf, got, [][]byte{got}); err != nil {
				t.Fatalf("%s:%s %v: in-place Run: %v", c.stag, c.dtag, c.dims, err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s %s:%s %v reduce %v: in place differs from a separate operand", isa, c.stag, c.dtag, c.dims, c.reduce)
			}
		}
	}
}

// TestAliasingRefused: a dst-shaped operand that is the dst buffer of a
// padded blocked dst (cleared before the boxes run) is refused before
// anything is written, and so is a src that overlaps dst.
func TestAliasingRefused(t *testing.T) {
	dims := []int64{2, 20, 3}
	p := plan.Problem{Reduction: plan.AlgSum.Reduction(0, 0), SrcDT: dtypes.F32, DstDT: dtypes.F32, Dims: dims, Reduce: []bool{false, false, true}}
	src := newTensor(t, "abx", dims, dtypes.F32)
	dst := newTensor(t, "aBx16b", dstDims(&p), dtypes.F32)
	p.PostOps = []plan.PostOp{{Kind: ops.Add, BinDT: dtypes.F32, BinStrides: []int64{dst.d.Outer[0], 1, 0}}}
	k, err := Compile(&p, src.d, dst.d)
	if err != nil {
		t.Fatal(err)
	}
	forEach(dstDims(&p), func(idx []int64) { oracle.Put(dtypes.F32, dst.buf, dst.d.Offset(idx), 100) })
	before := bytes.Clone(dst.buf)
	if err := k.Run(src.buf, dst.buf, [][]byte{dst.buf}); err == nil {
		t.Fatal("an operand aliasing a padded dst ran")
	}
	if !bytes.Equal(dst.buf, before) {
		t.Error("the refused run wrote dst")
	}
	big := make([]byte, len(src.buf)+len(dst.buf))
	if err := k.Run(big, big[len(src.buf)-4:], [][]byte{make([]byte, len(dst.buf))}); err == nil {
		t.Error("a src overlapping dst ran")
	}
}
