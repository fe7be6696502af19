package jit

import (
	"math"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/plan"
)

// TestBF16StoreSubnormals: f32 -> bf16 copies of subnormals of
// both signs, zeros and tiny normals equal gdnn's rounding bit for bit.
func TestBF16StoreSubnormals(t *testing.T) {
	bits := []uint32{0x00000001, 0x80000001, 0x007fffff, 0x807fffff, 0x00400000, 0x80400000, 0x00008000, 0x80008000,
		0x00018000, 0x0, 0x80000000, 0x00800000, 0x80800000, 0x7f800000, 0xff800000, 0x7fc00000, 0x3f800000, 0x0000ffff, 0x8000ffff}
	n := int64(64 * 3)
	src := make([]byte, 4*n)
	for i := range n {
		dtypes.StoreF32(dtypes.F32, src, i, math.Float32frombits(bits[int(i)%len(bits)]))
	}
	pr := &plan.Problem{Reduction: plan.Copy, SrcDT: dtypes.F32, DstDT: dtypes.BF16, Dims: []int64{n}, SrcStrides: []int64{1},
		Reduce: []bool{false}, DstStrides: []int64{1}}
	pl, err := plan.Canonicalize(pr)
	if err != nil {
		t.Fatal(err)
	}
	k, err := Compile(pl)
	if err != nil {
		t.Fatal(err)
	}
	dst := make([]byte, 2*n)
	if err := k.Run(src, dst, nil); err != nil {
		t.Fatal(err)
	}
	want := make([]byte, 2*n)
	for i := range n {
		dtypes.StoreF32(dtypes.BF16, want, i, dtypes.LoadF32(dtypes.F32, src, i))
	}
	for i := range n {
		g, w := uint16(dst[2*i])|uint16(dst[2*i+1])<<8, uint16(want[2*i])|uint16(want[2*i+1])<<8
		if g != w && !(g&0x7f80 == 0x7f80 && g&0x7f != 0 && w&0x7f80 == 0x7f80 && w&0x7f != 0) {
			t.Errorf("%08x: got %04x want %04x", bits[int(i)%len(bits)], g, w)
		}
	}
}
