package amd64

import (
	"math/rand"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/jit/plan"
	"golang.org/x/sys/unix"
)

// Guard pages: every buffer is placed so that its last byte is the last
// byte before a PROT_NONE page (and, in a second run, so that its first
// byte is the first after one). A kernel that reads or writes one byte
// outside its tensors faults, and the test dies with it.

// guarded is a buffer of n bytes next to an inaccessible page.
type guarded struct {
	mapping []byte
	buf     []byte
}

// newGuarded maps n bytes with a PROT_NONE page after them (atEnd) or
// before them.
func newGuarded(t *testing.T, n int, atEnd bool) *guarded {
	t.Helper()
	page := unix.Getpagesize()
	data := (n + page - 1) / page * page
	m, err := unix.Mmap(-1, 0, data+page, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		t.Fatalf("mmap: %v", err)
	}
	g := &guarded{mapping: m}
	if atEnd {
		if err := unix.Mprotect(m[data:], unix.PROT_NONE); err != nil {
			t.Fatalf("mprotect: %v", err)
		}
		g.buf = m[data-n : data : data]
	} else {
		if err := unix.Mprotect(m[:page], unix.PROT_NONE); err != nil {
			t.Fatalf("mprotect: %v", err)
		}
		g.buf = m[page : page+n : page+n]
	}
	return g
}

func (g *guarded) free() { _ = unix.Munmap(g.mapping) }

// runGuarded runs p for every ISA with src, dst and operands guarded and
// checks the results against the reference.
func runGuarded(t *testing.T, r *rand.Rand, p *plan.Problem, isaList []isaCase) {
	t.Helper()
	pl, err := plan.Canonicalize(p)
	if err != nil {
		t.Fatalf("Canonicalize: %v", err)
	}
	src0, dst0, bins0 := buffers(t, r, p, false)
	want, written := reference(p, src0, dst0, bins0)
	for _, atEnd := range []bool{true, false} {
		var maps []*guarded
		place := func(b []byte) []byte {
			if len(b) == 0 {
				return b
			}
			g := newGuarded(t, len(b), atEnd)
			copy(g.buf, b)
			maps = append(maps, g)
			return g.buf
		}
		src := place(src0)
		bins := make([][]byte, len(bins0))
		for i, b := range bins0 {
			bins[i] = place(b)
		}
		dst := place(dst0)
		for _, isa := range isaList {
			copy(dst, dst0)
			k := compile(t, pl, isa.o)
			k.runAll(pl, src, dst, bins, 0)
			k.release()
			if d := compareExact(p.DstDT, dst, want, written, false); d != "" {
				t.Fatalf("%s: %s\nproblem %+v\nplan %v", isa.name, d, p, pl)
			}
		}
		for _, g := range maps {
			g.free()
		}
	}
}

// guardShapes lists problems of every kernel shape with the tail length
// (the extent of the vectorised dim) t.
func guardShapes(t int64, sdt, ddt dtypes.DataType) []*plan.Problem {
	mk := func(dims, ss []int64, red []bool, ds []int64) *plan.Problem {
		p := &plan.Problem{SrcDT: sdt, DstDT: ddt, Dims: dims, SrcStrides: ss, Reduce: red, DstStrides: ds}
		// A full-layout operand, so that operand reads reach its end.
		bs := append([]int64(nil), ds...)
		for i := range bs {
			if red[i] {
				bs[i] = 0
			}
		}
		p.PostOps = []plan.PostOp{{Kind: plan.Add, BinDT: sdt, BinStrides: bs}}
		return p
	}
	return []*plan.Problem{
		// row: 3 outputs of t contiguous elements (single outputs)
		mk([]int64{3, t}, []int64{t, 1}, []bool{false, true}, []int64{1, 0}),
		// row, grouped: 19 outputs of t elements (a group and a remainder)
		mk([]int64{19, t}, []int64{t, 1}, []bool{false, true}, []int64{1, 0}),
		// column: 5 rows of t contiguous outputs
		mk([]int64{5, t}, []int64{t, 1}, []bool{true, false}, []int64{0, 1}),
		// column, wide: 3 rows of 16*V+t outputs (a full block, then a tail block)
		mk([]int64{3, 256 + t}, []int64{256 + t, 1}, []bool{true, false}, []int64{0, 1}),
		// identity: t elements
		mk([]int64{t}, []int64{1}, []bool{false}, []int64{1}),
		// element: t elements at stride 3, 2 outputs
		mk([]int64{2, t}, []int64{3 * t, 3}, []bool{false, true}, []int64{1, 0}),
		// column with strided dst (per-lane epilogue)
		mk([]int64{4, t}, []int64{t, 1}, []bool{true, false}, []int64{0, 2}),
	}
}

// TestGuardPages runs every shape with every tail length 0..2V+1 and
// every dtype pair next to guard pages.
func TestGuardPages(t *testing.T) {
	isaList := isas(t)
	r := rand.New(rand.NewSource(7))
	for tail := int64(0); tail <= 33; tail++ {
		for _, pair := range dtPairs {
			for _, p := range guardShapes(tail, pair[0], pair[1]) {
				runGuarded(t, r, p, isaList)
			}
		}
	}
}
