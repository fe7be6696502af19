package jit

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gdnn/gdnn/dtypes"
)

func TestZZProbe(t *testing.T) {
	c := spec{dims: []int64{64, 1048576}, reduce: []bool{false, true}, sdt: dtypes.F32, ddt: dtypes.F32}.build(t, rand.New(rand.NewPCG(1, 1)))
	k := c.compile(t)
	dst := c.newDst()
	for _, th := range []int{1, 2, 1, 2} {
		SetThreads(th)
		t0 := time.Now()
		for range 20 {
			k.Run(c.src, dst, nil)
		}
		t.Logf("threads %d: %v per run", th, time.Since(t0)/20)
	}
	// raw: two goroutines each running half the calls directly
	ph := &k.dec.phases[0]
	var ents []*entry
	for _, u := range k.units {
		e, _ := u.acquire(k.isa)
		ents = append(ents, e)
	}
	x := execution{k: k, src: c.src, dst: dst, scratch: [][]byte{getScratch(k.dec.scratch[0])}}
	for _, g := range []int{1, 2} {
		t0 := time.Now()
		for range 20 {
			var next atomic.Int64
			var wg sync.WaitGroup
			for range g {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						i := next.Add(1) - 1
						if i >= ph.tasks {
							return
						}
						x.task(ph, ents, i)
					}
				}()
			}
			wg.Wait()
		}
		t.Logf("raw goroutines %d: %v per phase1", g, time.Since(t0)/20)
	}
}
