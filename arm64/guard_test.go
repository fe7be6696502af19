package arm64

import (
	"math/rand"
	"testing"

	"github.com/gdnn/gdnn/jit/plan"
	"golang.org/x/sys/unix"
)

// Guard pages: every buffer is placed so that its last byte is the last
// byte before a PROT_NONE page (and, in a second run, so that its first
// byte is the first after one). A kernel that reads or writes one byte
// outside its tensors faults, and the test dies with it.

// fenced is a buffer of n bytes next to an inaccessible page.
type fenced struct {
	mapping []byte
	buf     []byte
}

// newFenced maps n bytes with a PROT_NONE page right after them (after)
// or right before them.
func newFenced(t *testing.T, n int, after bool) *fenced {
	t.Helper()
	page := unix.Getpagesize()
	data := (n + page - 1) / page * page
	m, err := unix.Mmap(-1, 0, data+page, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		t.Fatalf("mmap: %v", err)
	}
	f := &fenced{mapping: m}
	if after {
		if err := unix.Mprotect(m[data:], unix.PROT_NONE); err != nil {
			t.Fatalf("mprotect: %v", err)
		}
		f.buf = m[data-n : data : data]
	} else {
		if err := unix.Mprotect(m[:page], unix.PROT_NONE); err != nil {
			t.Fatalf("mprotect: %v", err)
		}
		f.buf = m[page : page+n : page+n]
	}
	return f
}

func (f *fenced) free() { _ = unix.Munmap(f.mapping) }

// runFenced runs p with src, dst and operands fenced on either side and
// checks the results against the reference, whole and in blocks of 3.
func runFenced(t *testing.T, r *rand.Rand, name string, p *plan.Problem) {
	t.Helper()
	pl, err := plan.Canonicalize(p)
	if err != nil {
		t.Fatalf("Canonicalize: %v", err)
	}
	src0, dst0, bins0 := buffersFor(t, exactFiller{r, 16}.fill, p, false, false)
	want, outs := refResult(p, src0, dst0, bins0)
	k := compile(t, pl)
	defer k.Release()
	for _, after := range []bool{true, false} {
		var maps []*fenced
		place := func(b []byte) []byte {
			if len(b) == 0 {
				return b
			}
			f := newFenced(t, len(b), after)
			copy(f.buf, b)
			maps = append(maps, f)
			return f.buf
		}
		src := place(src0)
		bins := make([][]byte, len(bins0))
		for i, b := range bins0 {
			bins[i] = place(b)
		}
		dst := place(dst0)
		for _, blk := range []int64{0, 3} {
			copy(dst, dst0)
			k.RunBlocks(pl, src, dst, bins, blk)
			if d := diffResult(p.DstDT, dst, want, outs, true); d != "" {
				t.Fatalf("%s (blocks of %d): %s\nproblem %+v\nplan %v", name, blk, d, p, pl)
			}
		}
		for _, f := range maps {
			f.free()
		}
	}
}

// TestGuardPages runs every kernel shape with every tail length 0..2V+3
// and every dtype pair next to guard pages, the operand type rotating.
func TestGuardPages(t *testing.T) {
	needARM64(t)
	r := rand.New(rand.NewSource(7))
	for n := int64(0); n <= 2*lanes+3; n++ {
		for i, pr := range pairs {
			// The operand type rotates with the tail length.
			bdt := floatTypes[(int(n)+i)%len(floatTypes)]
			for _, s := range shapes(n, pr[0], pr[1], bdt) {
				runFenced(t, r, s.name, s.p)
			}
		}
	}
}
