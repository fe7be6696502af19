package chunk

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gdnn/gdnn/internal/kerneltest"
)

func TestChoose(t *testing.T) {
	all := func(int) bool { return true }
	cases := []struct {
		name          string
		dims, strides []int64
		kept          func(int) bool
		elem, budget  int64
		want          Cut
	}{
		{"rows of 1 KiB in 4 KiB", []int64{10, 256}, []int64{256, 1}, func(i int) bool { return i == 0 }, 4, 4096, Cut{0, 4, 3}},
		{"fits whole", []int64{10, 256}, []int64{256, 1}, func(i int) bool { return i == 0 }, 4, 1 << 20, Cut{Dim: -1, N: 1}},
		{"nothing kept", []int64{10, 256}, []int64{256, 1}, func(int) bool { return false }, 4, 16, Cut{Dim: -1, N: 1}},
		{"the outermost in memory", []int64{8, 6}, []int64{1, 8}, all, 4, 64, Cut{1, 2, 3}},
		{"a row larger than the budget", []int64{3, 100}, []int64{100, 1}, func(i int) bool { return i == 0 }, 4, 16, Cut{0, 1, 3}},
		{"size-1 dims are not cut", []int64{1, 9}, []int64{9, 1}, all, 4, 8, Cut{1, 2, 5}},
		// GroupNorm's [N, groups, channels, pixels]: an image (4 MiB)
		// over the budget, a group of both images (256 KiB) within it.
		{"an outer iteration over the budget: an inner dim", []int64{2, 16, 4, 8192}, []int64{16 * 4 * 8192, 4 * 8192, 8192, 1},
			func(i int) bool { return i < 2 }, 4, 1 << 20, Cut{1, 4, 4}},
		{"the outermost within the budget of the inner dims", []int64{2, 4, 16, 8192}, []int64{4 * 16 * 8192, 16 * 8192, 8192, 1},
			func(i int) bool { return i < 3 }, 4, 1 << 20, Cut{1, 1, 4}},
		{"none within the budget: the smallest iterations", []int64{2, 16, 4, 8192}, []int64{16 * 4 * 8192, 4 * 8192, 8192, 1},
			func(i int) bool { return i < 2 }, 4, 64 << 10, Cut{1, 1, 16}},
		{"an inner dim too dense to cut", []int64{2, 16, 4, 8192}, []int64{16 * 4 * 8192, 4, 1, 64},
			func(i int) bool { return i < 2 }, 4, 1 << 20, Cut{0, 1, 2}},
	}
	for _, c := range cases {
		if got := Choose(c.dims, c.strides, c.kept, c.elem, c.budget); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
	if s := (Cut{0, 4, 3}).Start(2); s != 8 {
		t.Errorf("Start(2) = %d, want 8", s)
	}
	if s := (Cut{Dim: -1, N: 1}).Start(0); s != 0 {
		t.Errorf("Start of one chunk = %d", s)
	}
}

func TestRun(t *testing.T) {
	for _, threads := range []int{0, 1, 2, 5, 100} {
		var mu sync.Mutex
		seen := map[int64]int{}
		states := 0
		var kept Stash[int]
		err := Run(Cut{0, 3, 17}, threads, &kept, func(s *int, c int64) error {
			mu.Lock()
			defer mu.Unlock()
			if *s == 0 {
				states++
				*s = states
			}
			seen[c]++
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(seen) != 17 || states > max(threads, 1) {
			t.Errorf("%d threads: %d chunks run, %d states", threads, len(seen), states)
		}
		for c, n := range seen {
			if n != 1 {
				t.Errorf("%d threads: chunk %d ran %d times", threads, c, n)
			}
		}
		// Every state made is back in the stash, and the next Run takes
		// them rather than starting from zero.
		if len(kept.items) != states {
			t.Errorf("%d threads: %d states made, %d kept", threads, states, len(kept.items))
		}
		fresh := 0
		if err := Run(Cut{0, 3, 17}, threads, &kept, func(s *int, c int64) error {
			mu.Lock()
			defer mu.Unlock()
			if *s == 0 {
				// A goroutine that starts from zero: marked, so that its
				// later chunks do not count again.
				fresh++
				*s = -1
			}
			return nil
		}); err != nil || fresh > max(threads, 1)-states {
			t.Errorf("%d threads: the second Run started %d goroutines from zero with %d states kept (%v)", threads, fresh, states, err)
		}
	}
	boom := errors.New("boom")
	ran := 0
	var kept Stash[int]
	err := Run(Cut{0, 1, 10}, 1, &kept, func(_ *int, c int64) error {
		ran++
		if c == 3 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) || ran != 4 {
		t.Errorf("error at chunk 3: %v after %d chunks; want it after 4", err, ran)
	}
}

func TestSerial(t *testing.T) {
	var kept Stash[int]
	var order []int64
	err := Serial(Cut{0, 3, 5}, &kept, func(s *int, c int64) error {
		*s++
		order = append(order, c)
		return nil
	})
	if err != nil || !slices.Equal(order, []int64{0, 1, 2, 3, 4}) {
		t.Errorf("chunks run %v (%v), want 0 to 4 in order", order, err)
	}
	// One state served every chunk and is back in the stash.
	if len(kept.items) != 1 || *kept.items[0] != 5 {
		t.Errorf("the stash holds %d states after a serial run, want one that saw 5 chunks", len(kept.items))
	}
	boom := errors.New("boom")
	ran := 0
	err = Serial(Cut{0, 1, 10}, &kept, func(_ *int, c int64) error {
		ran++
		if c == 3 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) || ran != 4 || len(kept.items) != 1 {
		t.Errorf("error at chunk 3: %v after %d chunks, %d states kept; want it after 4, one kept", err, ran, len(kept.items))
	}
	// A panic in a chunk (a fault in a kernel) is an error of the run,
	// as on Run's threads, and the state still goes back.
	err = Serial(Cut{0, 1, 10}, &kept, func(_ *int, c int64) error {
		if c == 2 {
			panic("kernel fault")
		}
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), "kernel fault") || len(kept.items) != 1 {
		t.Errorf("panic at chunk 2: %v, %d states kept; want an error naming it, one kept", err, len(kept.items))
	}
}

// TestSerialAllocs: a serial run keeps neither its closure nor what the
// closure refers to, so a caller's closure over its own variables stays
// on its stack; once the stash holds a state, a run allocates nothing.
func TestSerialAllocs(t *testing.T) {
	if kerneltest.RaceDetector {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	var kept Stash[[]byte]
	local := [4]int64{1, 2, 3, 4}
	sum := int64(0)
	run := func() {
		if err := Serial(Cut{0, 1, 4}, &kept, func(s *[]byte, c int64) error {
			if *s == nil {
				*s = make([]byte, 64)
			}
			sum += local[c]
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	run()
	if n := testing.AllocsPerRun(20, run); n != 0 {
		t.Errorf("a serial run allocates %v objects, want 0", n)
	}
	if sum != 10*22 {
		t.Errorf("the runs summed %d, want %d", sum, 10*22)
	}
}

func TestCutThreads(t *testing.T) {
	for _, c := range []struct {
		n             int64
		threads, want int
	}{{1, 8, 1}, {3, 2, 2}, {3, 8, 3}, {5, 0, 1}, {0, 4, 1}} {
		if got := (Cut{0, 1, c.n}).Threads(c.threads); got != c.want {
			t.Errorf("%d chunks on %d threads: %d threads, want %d", c.n, c.threads, got, c.want)
		}
	}
}

func TestStash(t *testing.T) {
	var s Stash[int]
	z1, z2 := s.Get(), s.Get()
	if z1 == nil || z2 == nil || z1 == z2 || *z1 != 0 || *z2 != 0 {
		t.Fatal("an empty stash does not give new zero items")
	}
	a, b := new(int), new(int)
	s.Put(a)
	s.Put(b)
	got := map[*int]bool{s.Get(): true, s.Get(): true}
	if !got[a] || !got[b] || len(s.items) != 0 {
		t.Errorf("the stash gave %v back for %p and %p", got, a, b)
	}
	// Items put by one goroutine are taken by any other.
	done := make(chan *int)
	go func() { s.Put(a); done <- nil }()
	<-done
	go func() { done <- s.Get() }()
	if <-done != a {
		t.Error("an item put by one goroutine is not taken by another")
	}
}
