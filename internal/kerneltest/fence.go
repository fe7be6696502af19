package kerneltest

import (
	"os"
	"testing"
)

// Fence places copies of buffers next to inaccessible pages (PROT_NONE,
// PAGE_NOACCESS on Windows), for guard-page tests: each copy's last byte
// is the last before such a page (atEnd), or its first byte the first
// after one. A kernel that reads or writes one byte outside its tensors
// faults, and the test dies with it.
type Fence struct {
	t       testing.TB
	atEnd   bool
	mapping [][]byte
}

// NewFence returns a fence placing buffers at the end (atEnd) or at the
// start of their mappings.
func NewFence(t testing.TB, atEnd bool) *Fence { return &Fence{t: t, atEnd: atEnd} }

// Place returns a fenced copy of b; an empty b is returned as it is.
func (f *Fence) Place(b []byte) []byte {
	f.t.Helper()
	n := len(b)
	if n == 0 {
		return b
	}
	page := os.Getpagesize()
	data := (n + page - 1) / page * page
	m, err := mapPages(data + page)
	if err != nil {
		f.t.Fatalf("fence: %v", err)
	}
	f.mapping = append(f.mapping, m)
	guard, buf := m[data:], m[data-n:data:data]
	if !f.atEnd {
		guard, buf = m[:page], m[page:page+n:page+n]
	}
	if err := noAccess(guard); err != nil {
		f.t.Fatalf("fence: %v", err)
	}
	copy(buf, b)
	return buf
}

// PlaceEach places every buffer of bs.
func (f *Fence) PlaceEach(bs [][]byte) [][]byte {
	out := make([][]byte, len(bs))
	for i, b := range bs {
		out[i] = f.Place(b)
	}
	return out
}

// Free unmaps every buffer the fence placed.
func (f *Fence) Free() {
	for _, m := range f.mapping {
		_ = unmapPages(m)
	}
	f.mapping = nil
}
