package partition

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/execmem"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/internal/shape"
)

// openMean returns the supported partition of src(0) -> ReduceMean(axes,
// keep) -> dst(1) where the graph leaves src's dims and strides to Compile
// (unknown rank), so Compile sees the hostile tensors unfiltered.
func openMean(t *testing.T, dt dtypes.DataType, axes []int64, keep bool) *Partition {
	t.Helper()
	g := graph.New()
	src := graph.LogicalTensor{ID: 0, DataType: dt, Layout: graph.LayoutStrided, Property: graph.PropertyVariable}
	must(t, g.AddOp(graph.NewOp(1, graph.ReduceMean, "mean").AddInput(src).
		AddOutput(graph.NewLogicalTensorAny(1, dt, nil)).SetAttr("axes", axes).SetAttr("keep_dims", keep)))
	must(t, g.Finalize())
	return onlySupported(t, g, Fusion)
}

// openLogSumExp is Exp -> ReduceSum -> Log over src 0 (dims and strides
// open), into tensor 1: log-sum-exp, whose compile cuts it into chunks.
func openLogSumExp(t *testing.T, dt dtypes.DataType, axes []int64) *Partition {
	t.Helper()
	g := graph.New()
	src := graph.LogicalTensor{ID: 0, DataType: dt, Layout: graph.LayoutStrided, Property: graph.PropertyVariable}
	e, s := graph.NewLogicalTensorAny(3, dt, nil), graph.NewLogicalTensorAny(4, dt, nil)
	must(t, g.AddOp(graph.NewOp(3, graph.Exp, "").AddInput(src).AddOutput(e)))
	must(t, g.AddOp(graph.NewOp(4, graph.ReduceSum, "").AddInput(e).AddOutput(s).SetAttr("axes", axes)))
	must(t, g.AddOp(graph.NewOp(1, graph.Log, "").AddInput(s).AddOutput(graph.NewLogicalTensorAny(1, dt, nil))))
	must(t, g.Finalize())
	return onlySupported(t, g, Fusion)
}

// allocDuring returns the bytes the Go heap handed out while f ran.
func allocDuring(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// TestHostileShapesAtCompile feeds Compile dims, strides and ranks whose
// sizes cannot be represented or addressed; each must be refused with the
// status that names the problem, before anything is allocated for it.
func TestHostileShapesAtCompile(t *testing.T) {
	f32 := dtypes.F32
	strided := graph.NewLogicalTensorStrided
	anyOut := graph.NewLogicalTensorAny(1, f32, nil)
	rank13 := make([]int64, graph.MaxRank+1)
	for i := range rank13 {
		rank13[i] = 1
	}
	cases := []struct {
		name    string
		axes    []int64
		src     graph.LogicalTensor
		out     graph.LogicalTensor
		status  graph.Status
		message string
	}{
		{"dims product overflows int64", []int64{0}, strided(0, f32, []int64{1 << 32, 1 << 32, 4}, []int64{1, 1, 1}), anyOut,
			graph.InvalidArguments, "overflows"},
		{"dims product is 2^63, dst span past the bound", []int64{1}, strided(0, f32, []int64{1 << 62, 2}, []int64{0, 0}), anyOut,
			graph.InvalidArguments, "address more than"},
		{"dense src span past the bound", []int64{0}, graph.NewLogicalTensor(0, f32, []int64{1 << 32, 1 << 32, 4}), anyOut,
			graph.InvalidArguments, "address more than"},
		{"dense strides overflow", []int64{0}, graph.NewLogicalTensor(0, f32, []int64{8, 1 << 31, 1 << 31, 4}), anyOut,
			graph.InvalidShape, "strides must be known"},
		{"negative dim", []int64{0}, strided(0, f32, []int64{-3, 4}, []int64{4, 1}), anyOut,
			graph.InvalidShape, "concrete input dims"},
		{"rank past MaxRank", []int64{0}, graph.NewLogicalTensor(0, f32, rank13), anyOut,
			graph.InvalidShape, "rank 13"},
		{"negative stride", []int64{0}, strided(0, f32, []int64{4, 4}, []int64{-4, 1}), anyOut,
			graph.InvalidShape, "stride 0 is -4"},
		{"strides count differs", []int64{0}, strided(0, f32, []int64{4, 4}, []int64{4}), anyOut,
			graph.InvalidShape, "2 dims but 1 strides"},
		{"src span past int64", []int64{0}, strided(0, f32, []int64{4, 8}, []int64{1 << 62, 1}), anyOut,
			graph.InvalidArguments, "address more than"},
		{"src span past int64 in bytes", []int64{0}, strided(0, f32, []int64{1 << 30, 1 << 30}, []int64{1 << 27, 1}), anyOut,
			graph.InvalidArguments, "address more than"},
		{"dst strides overlap (interleaved)", []int64{2}, graph.NewLogicalTensor(0, f32, []int64{4, 4, 8}),
			strided(1, f32, []int64{4, 4}, []int64{2, 1}), graph.InvalidArguments, "overlap"},
		{"dst stride 0 on a dim of 4", []int64{2}, graph.NewLogicalTensor(0, f32, []int64{4, 4, 8}),
			strided(1, f32, []int64{4, 4}, []int64{0, 1}), graph.InvalidArguments, "overlap"},
		{"dst span past int64", []int64{2}, graph.NewLogicalTensor(0, f32, []int64{4, 4, 8}),
			strided(1, f32, []int64{4, 4}, []int64{1 << 62, 1}), graph.InvalidArguments, "address more than"},
		{"dst strides negative", []int64{2}, graph.NewLogicalTensor(0, f32, []int64{4, 4, 8}),
			strided(1, f32, []int64{4, 4}, []int64{-4, 1}), graph.InvalidShape, "non-negative"},
		{"dst dims disagree", []int64{2}, graph.NewLogicalTensor(0, f32, []int64{4, 4, 8}),
			graph.NewLogicalTensor(1, f32, []int64{4, 5}), graph.InvalidShape, "dim 1: 5 vs 4"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := openMean(t, f32, c.axes, false)
			var err error
			alloc := allocDuring(func() { _, err = p.Compile([]graph.LogicalTensor{c.src}, []graph.LogicalTensor{c.out}) })
			if !errors.Is(err, c.status) || !strings.Contains(err.Error(), c.message) {
				t.Fatalf("err = %v, want %v with %q", err, c.status, c.message)
			}
			checkGraphError(t, err)
			if alloc > 1<<20 {
				t.Errorf("a refused Compile allocated %d bytes", alloc)
			}
		})
	}
}

// TestHostileTensorsAtAddOp checks that the graph refuses tensors that no
// compile could use, naming the tensor and the value.
func TestHostileTensorsAtAddOp(t *testing.T) {
	f32 := dtypes.F32
	rank13 := graph.NewLogicalTensor(0, f32, make([]int64, graph.MaxRank+1))
	cases := []struct {
		name    string
		src     graph.LogicalTensor
		status  graph.Status
		message string
	}{
		{"rank past MaxRank", rank13, graph.InvalidShape, "rank 13, more than the supported 12"},
		{"dim -2", graph.NewLogicalTensor(0, f32, []int64{4, -2}), graph.InvalidShape, "dim 1 is -2"},
		{"stride -2", graph.NewLogicalTensorStrided(0, f32, []int64{4, 4}, []int64{-2, 1}), graph.InvalidShape, "stride 0 is -2"},
		{"strides count", graph.NewLogicalTensorStrided(0, f32, []int64{4, 4}, []int64{1}), graph.InvalidShape, "2 dims but 1 strides"},
		{"layout 7", graph.LogicalTensor{ID: 0, DataType: f32, Dims: []int64{4}, Layout: graph.Layout(7)}, graph.InvalidArguments, "layout"},
		{"data type 99", graph.NewLogicalTensor(0, dtypes.DataType(99), []int64{4}), graph.InvalidDataType, "data type"},
		{"boolean src", graph.NewLogicalTensor(0, dtypes.Boolean, []int64{4}), graph.InvalidDataType, "src tensor 0 is boolean, dst tensor 1 is f32: a mean of boolean data has no meaning"},
		{"property 9", graph.NewLogicalTensor(0, f32, []int64{4}).WithProperty(graph.Property(9)), graph.InvalidArguments, "property"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := graph.New().AddOp(graph.NewOp(1, graph.ReduceMean, "m").AddInput(c.src).
				AddOutput(graph.NewLogicalTensorAny(1, f32, nil)).SetAttr("axes", []int64{0}))
			if !errors.Is(err, c.status) || !strings.Contains(err.Error(), c.message) || !strings.Contains(err.Error(), "tensor 0") {
				t.Fatalf("err = %v, want %v naming tensor 0 with %q", err, c.status, c.message)
			}
		})
	}
}

// TestScratchIsBoundedForBroadcastSrc: a broadcast src (stride 0) can
// describe 2^48 elements per output in 4 bytes. Split into ~1 MiB calls
// that would need 4 GiB of f32 partial sums: Compile must refuse with an
// OutOfMemory error naming the bytes, rather than leave Execute to ask the
// Go runtime for memory it cannot give back. Dense problems of the same
// output count still get the JIT.
func TestScratchIsBoundedForBroadcastSrc(t *testing.T) {
	f32 := dtypes.F32
	for _, isa := range isaCaps() {
		if isa == jit.None {
			continue
		}
		t.Run(isa.String(), func(t *testing.T) {
			prev := jit.SetMaxISA(isa)
			defer jit.SetMaxISA(prev)
			p := openMean(t, f32, []int64{0, 1}, false)
			huge := graph.NewLogicalTensorStrided(0, f32, []int64{1 << 24, 1 << 24}, []int64{0, 0})
			_, err := p.Compile([]graph.LogicalTensor{huge}, []graph.LogicalTensor{graph.NewLogicalTensorAny(1, f32, nil)})
			if !errors.Is(err, graph.OutOfMemory) || !strings.Contains(err.Error(), "4294967296 bytes") {
				t.Errorf("2^48 broadcast elements: Compile error %v, want OutOfMemory naming 4294967296 bytes", err)
			}
			dense := graph.NewLogicalTensor(0, f32, []int64{1 << 10, 1 << 12})
			cp, err := p.Compile([]graph.LogicalTensor{dense}, []graph.LogicalTensor{graph.NewLogicalTensorAny(1, f32, nil)})
			must(t, err)
			wantImpl(t, cp, isa)
		})
	}
}

// TestAllocationIsBoundedByTheCaller compiles problems far larger than
// memory (2^40 elements, 2^31 outputs, a 2^62-element broadcast
// reduction, an axes tensor of 2^30 axes): compile describes them without
// allocating per element, and executing them on buffers the caller could
// actually have is refused before anything is allocated or touched.
func TestAllocationIsBoundedByTheCaller(t *testing.T) {
	f32 := dtypes.F32
	var runs []struct {
		isa jit.ISA
		lse bool // log-sum-exp, which compiles in chunks, instead of the mean
	}
	for _, isa := range isaCaps() {
		runs = append(runs, struct {
			isa jit.ISA
			lse bool
		}{isa, false}, struct {
			isa jit.ISA
			lse bool
		}{isa, true})
	}
	for _, run := range runs {
		isa, lse := run.isa, run.lse
		name := isa.String()
		if lse {
			name += "/log-sum-exp"
		}
		t.Run(name, func(t *testing.T) {
			prev := jit.SetMaxISA(isa)
			defer jit.SetMaxISA(prev)
			cases := []struct {
				name string
				axes []int64
				src  graph.LogicalTensor
			}{
				{"2^40 elements", []int64{1}, graph.NewLogicalTensor(0, f32, []int64{1 << 20, 1 << 20})},
				{"2^31 outputs", []int64{1}, graph.NewLogicalTensor(0, f32, []int64{1 << 31, 2})},
				{"2^40 outputs of a broadcast src", []int64{2}, graph.NewLogicalTensorStrided(0, f32, []int64{1 << 20, 1 << 20, 3}, []int64{0, 0, 1})},
				{"2^62 elements per output, broadcast", []int64{0, 1}, graph.NewLogicalTensorStrided(0, f32, []int64{1 << 31, 1 << 31}, []int64{0, 0})},
				{"2^50 empty reductions", []int64{0}, graph.NewLogicalTensor(0, f32, []int64{0, 1 << 50})},
			}
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					p := openMean(t, f32, c.axes, false)
					if lse {
						p = openLogSumExp(t, f32, c.axes)
					}
					var cp *CompiledPartition
					var err error
					alloc := allocDuring(func() {
						cp, err = p.Compile([]graph.LogicalTensor{c.src}, []graph.LogicalTensor{graph.NewLogicalTensorAny(1, f32, nil)})
					})
					if alloc > 1<<20 {
						t.Errorf("Compile allocated %d bytes", alloc)
					}
					if err != nil {
						// Refusing is fine when it says why in those terms.
						if !errors.Is(err, graph.OutOfMemory) && !errors.Is(err, graph.InvalidArguments) {
							t.Fatalf("Compile: %v, want success, OutOfMemory or InvalidArguments", err)
						}
						checkGraphError(t, err)
						return
					}
					out, _ := cp.QueryLogicalTensor(1)
					src := Tensor{lt: c.src, buf: make([]byte, 4096)}
					if c.src.Strides[0] == 0 {
						// The broadcast src fits in its buffer: only the output's
						// buffer can be refused.
						src, err = NewTensor(c.src, make([]float32, 3))
						must(t, err)
					}
					dst := Tensor{lt: out, buf: make([]byte, 4096)}
					alloc = allocDuring(func() { err = cp.Execute([]Tensor{src}, []Tensor{dst}) })
					if !errors.Is(err, graph.InvalidArguments) || !strings.Contains(err.Error(), "needs") {
						t.Fatalf("Execute on small buffers: %v, want InvalidArguments naming the bytes needed", err)
					}
					if alloc > 1<<20 {
						t.Errorf("a refused Execute allocated %d bytes", alloc)
					}
				})
			}
		})
	}
	t.Run("axes tensor of 2^30 axes", func(t *testing.T) {
		g := graph.New()
		src := graph.NewLogicalTensor(0, f32, []int64{4, 5, 6})
		ax := graph.NewLogicalTensor(2, dtypes.S32, []int64{1 << 30})
		err := g.AddOp(graph.NewOp(1, graph.ReduceMean, "").AddInput(src).AddInput(ax).AddOutput(graph.NewLogicalTensorAny(1, f32, nil)))
		if err == nil {
			err = g.Finalize()
		}
		if !errors.Is(err, graph.InvalidShape) || !strings.Contains(err.Error(), "1073741824 axes") {
			t.Fatalf("graph with a 2^30-axes tensor: %v", err)
		}
		// With the axes count left open in the graph, Compile must refuse it.
		g = graph.New()
		open := graph.NewLogicalTensor(2, dtypes.S32, []int64{-1})
		must(t, g.AddOp(graph.NewOp(1, graph.ReduceMean, "").AddInput(src).AddInput(open).AddOutput(graph.NewLogicalTensorAny(1, f32, nil))))
		must(t, g.Finalize())
		p := onlySupported(t, g, Fusion)
		alloc := allocDuring(func() {
			_, err = p.Compile([]graph.LogicalTensor{src, ax}, []graph.LogicalTensor{graph.NewLogicalTensorAny(1, f32, nil)})
		})
		if !errors.Is(err, graph.InvalidShape) || !strings.Contains(err.Error(), "1073741824 axes") {
			t.Fatalf("Compile with a 2^30-axes tensor: %v", err)
		}
		if alloc > 1<<20 {
			t.Errorf("Compile allocated %d bytes", alloc)
		}
	})
	t.Run("NewTensor of 2^40 elements on a small slice", func(t *testing.T) {
		var err error
		alloc := allocDuring(func() {
			_, err = NewTensor(graph.NewLogicalTensor(0, f32, []int64{1 << 20, 1 << 20}), make([]float32, 16))
		})
		if !errors.Is(err, graph.InvalidArguments) || alloc > 4096 {
			t.Fatalf("err %v after %d bytes", err, alloc)
		}
	})
}

// panicReader panics after handing out some bytes, as a broken or
// hostile io.Reader in the caller's code might.
type panicReader struct{ r io.Reader }

func (p *panicReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b[:min(len(b), 7)])
	if n == 0 {
		panic("reader exploded")
	}
	if err == nil && bytes.Contains(b[:n], []byte("Reduce")) {
		panic("reader exploded")
	}
	return n, err
}

// panicWriter panics when written to.
type panicWriter struct{}

func (panicWriter) Write([]byte) (int, error) { panic("writer exploded") }

// withDeadline runs f and fails the test if it has not returned in d:
// the sign of a lock left held by a panic.
func withDeadline(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s did not finish in %v: a lock is held", what, d)
	}
}

// recovered runs f and returns what it panicked with.
func recovered(f func()) (v any) {
	defer func() { v = recover() }()
	f()
	return nil
}

// TestPanicsInCallerCodeLeaveTheLibraryUsable panics inside the caller's
// code that the library calls (a ReadJSON reader, a WriteJSON writer, the
// executable-memory fault hook during a JIT compile) and in a goroutine
// between executes; after recovering, the same compiled partitions must
// still compute the right results from many goroutines and new compiles
// must still work, i.e. no lock was left held and no cache was corrupted.
func TestPanicsInCallerCodeLeaveTheLibraryUsable(t *testing.T) {
	src := graph.NewLogicalTensor(0, dtypes.F32, []int64{4, 6, 5})
	g := meanGraph(t, dtypes.F32, dtypes.F32, src, []int64{1}, true)
	var doc bytes.Buffer
	must(t, g.WriteJSON(&doc))

	if v := recovered(func() { _, _ = graph.ReadJSON(&panicReader{bytes.NewReader(doc.Bytes())}) }); v == nil {
		t.Fatal("the reader's panic did not reach the caller")
	}
	if v := recovered(func() { _ = g.WriteJSON(panicWriter{}) }); v == nil {
		t.Fatal("the writer's panic did not reach the caller")
	}
	fixtures := execFixtures(t)
	// A panic in the caller's goroutine right after an Execute.
	for _, fx := range fixtures {
		if v := recovered(func() {
			runFixture(t, fx, 1)
			panic("caller exploded")
		}); v == nil {
			t.Fatal("no panic")
		}
	}
	// A panic inside the JIT's compile path (the fault hook runs where
	// executable memory is requested).
	prevCap, _ := SetCompiledPartitionCacheCapacity(0)
	defer SetCompiledPartitionCacheCapacity(prevCap)
	restore := execmem.SetFailHook(func(string) error { panic("hook exploded") })
	odd := graph.NewLogicalTensor(0, dtypes.F32, []int64{7, 129})
	pOdd := onlySupported(t, meanGraph(t, dtypes.F32, dtypes.F32, odd, []int64{1}, false), Fusion)
	v := recovered(func() {
		_, _ = pOdd.Compile([]graph.LogicalTensor{odd}, []graph.LogicalTensor{graph.NewLogicalTensorAny(1, dtypes.F32, nil)})
	})
	restore()
	if jit.EffectiveISA() != jit.None && v == nil {
		t.Error("compiling a new shape under a JIT ISA did not ask for executable memory")
	}

	withDeadline(t, 30*time.Second, "reading, compiling and executing after the panics", func() {
		g2, err := graph.ReadJSON(bytes.NewReader(doc.Bytes()))
		must(t, err)
		must(t, g2.Finalize())
		c, err := pOdd.Compile([]graph.LogicalTensor{odd}, []graph.LogicalTensor{graph.NewLogicalTensorAny(1, dtypes.F32, nil)})
		must(t, err)
		out, _ := c.QueryLogicalTensor(1)
		in := newBuffer(odd, func() float64 { return 0.25 })
		dst := newBuffer(out, func() float64 { return 0 })
		st, _ := NewTensor(odd, in.bytes)
		dt, _ := NewTensor(out, dst.bytes)
		must(t, c.Execute([]Tensor{st}, []Tensor{dt}))
		if msg := verifyOutput(in, []bool{false, true}, false, nil, dst); msg != "" {
			t.Error(msg)
		}
		var wg sync.WaitGroup
		errs := make(chan error, 64)
		for w := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 20 {
					fx := fixtures[(w+i)%len(fixtures)]
					if msg := runFixtureErr(fx, uint64(w*100+i)); msg != "" {
						errs <- fmt.Errorf("%s: %s", fx.name, msg)
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	})
}

// runFixture executes fx once on fresh random data and checks the result.
func runFixture(t *testing.T, fx *execFixture, seed uint64) {
	t.Helper()
	if msg := runFixtureErr(fx, seed); msg != "" {
		t.Fatalf("%s: %s", fx.name, msg)
	}
}

// runFixtureErr executes fx on random data (axes from the seed when they
// are a tensor) and returns what went wrong ("" when the output is right).
func runFixtureErr(fx *execFixture, seed uint64) string {
	r := newRand(seed)
	gen := valueGen(r, int(seed%4))
	src := fillBuffer(fx.src, gen)
	ts := []Tensor{{lt: fx.src, buf: src.bytes}}
	var operands []buffer
	for _, o := range fx.operands {
		b := fillBuffer(o, gen)
		operands = append(operands, b)
		ts = append(ts, Tensor{lt: o, buf: b.bytes})
	}
	reduce, out := fx.reduce, fx.out
	if fx.axes != nil {
		axis := int32(seed % 3)
		reduce = make([]bool, 3)
		reduce[axis] = true
		out = graph.NewLogicalTensor(out.ID, dtypes.F32, shape.ReduceDims(fx.src.Dims, reduce, true))
		ts = append(ts, Tensor{lt: *fx.axes, buf: []byte{byte(axis), 0, 0, 0}})
	}
	dst := newBuffer(out, func() float64 { return 7 })
	if err := fx.c.Execute(ts, []Tensor{{lt: out, buf: dst.bytes}}); err != nil {
		return err.Error()
	}
	ops := append([]fop(nil), fx.ops...)
	k := 0
	for i := range ops {
		if ops[i].kind.IsBinary() {
			ops[i].operand = &operands[k]
			k++
		}
	}
	return verifyKind(fx.kind, src, reduce, fx.keep, ops, dst)
}

// TestNoWritableExecutableMapping runs JIT kernels and then reads the
// process's memory map: no mapping may be writable and executable at once.
func TestNoWritableExecutableMapping(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/self/maps")
	}
	for _, fx := range execFixtures(t) {
		runFixture(t, fx, 3)
	}
	f, err := os.Open("/proc/self/maps")
	must(t, err)
	defer f.Close()
	s := bufio.NewScanner(f)
	lines := 0
	for s.Scan() {
		lines++
		fields := strings.Fields(s.Text())
		if len(fields) < 2 {
			continue
		}
		if perm := fields[1]; strings.Contains(perm, "w") && strings.Contains(perm, "x") {
			t.Errorf("writable and executable mapping: %s", s.Text())
		}
	}
	if lines == 0 || execmem.MappedBytes() < 0 {
		t.Fatalf("read %d lines of /proc/self/maps; %d bytes mapped", lines, execmem.MappedBytes())
	}
	if jit.EffectiveISA() != jit.None && execmem.MappedBytes() == 0 {
		t.Errorf("no executable memory mapped after running JIT kernels under %s", jit.EffectiveISA())
	}
}

// TestOpsWithoutOutputsEndAChain: an End op (or a Wildcard with no
// outputs) consuming a ReduceMean's output ends the fused chain instead of
// being read as a post-op (found by FuzzGraphBuild: Get used to index the
// consumer's missing output).
func TestOpsWithoutOutputsEndAChain(t *testing.T) {
	for _, kind := range []graph.OpKind{graph.End, graph.Wildcard} {
		t.Run(kind.String(), func(t *testing.T) {
			src := graph.NewLogicalTensor(0, dtypes.F32, []int64{3, 4})
			mean := graph.NewLogicalTensorAny(1, dtypes.F32, nil)
			g := graph.New()
			must(t, g.AddOp(graph.NewOp(1, graph.ReduceMean, "").AddInput(src).AddOutput(mean).SetAttr("axes", []int64{1})))
			must(t, g.AddOp(graph.NewOp(2, kind, "").AddInput(mean)))
			must(t, g.Finalize())
			for _, policy := range []Policy{Fusion, Debug} {
				parts, err := Get(g, policy)
				must(t, err)
				sup := 0
				for _, p := range parts {
					if p.IsSupported() {
						sup++
						if len(p.Ops()) != 1 {
							t.Fatalf("%s: %v", policy, p)
						}
						c, err := p.Compile([]graph.LogicalTensor{src}, p.Outputs())
						must(t, err)
						out, _ := c.QueryLogicalTensor(1)
						got := make([]float32, 3)
						st, _ := NewTensor(src, []float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
						dt, _ := NewTensor(out, got)
						must(t, c.Execute([]Tensor{st}, []Tensor{dt}))
						if fmt.Sprint(got) != "[2.5 6.5 10.5]" {
							t.Fatalf("got %v", got)
						}
					}
				}
				if sup != 1 {
					t.Fatalf("%s: %d supported partitions in %v", policy, sup, parts)
				}
			}
		})
	}
}

// TestRunTimeAxesKernelsAreBounded executes a partition whose axes arrive
// as a tensor with 70 different axes values (every 4 of 8 dims): each
// result is right, and the partition never keeps more than maxAxesKernels
// kernels for them.
func TestRunTimeAxesKernelsAreBounded(t *testing.T) {
	dims := []int64{2, 2, 2, 2, 2, 2, 2, 2}
	src := graph.NewLogicalTensor(0, dtypes.F32, dims)
	axesLT := graph.NewLogicalTensor(2, dtypes.S32, []int64{4})
	p := runTimeAxesPartition(t, graph.ReduceMean, src, axesLT, false)
	out := graph.NewLogicalTensor(1, dtypes.F32, []int64{2, 2, 2, 2})
	c, err := p.Compile([]graph.LogicalTensor{src, axesLT}, []graph.LogicalTensor{out})
	must(t, err)
	in := newBuffer(src, uniform(newRand(8), -1, 1))
	st, _ := NewTensor(src, in.bytes)
	seen := 0
	for mask := 0; mask < 256; mask++ {
		var axes []int32
		reduce := make([]bool, 8)
		for i := range 8 {
			if mask&(1<<i) != 0 {
				axes = append(axes, int32(i))
				reduce[i] = true
			}
		}
		if len(axes) != 4 {
			continue
		}
		seen++
		at, _ := NewTensor(axesLT, axes)
		dst := newBuffer(out, func() float64 { return 0 })
		dt, _ := NewTensor(out, dst.bytes)
		must(t, c.Execute([]Tensor{st, at}, []Tensor{dt}))
		if msg := verifyOutput(in, reduce, false, nil, dst); msg != "" {
			t.Fatalf("axes %v: %s", axes, msg)
		}
		c.run.mu.Lock()
		n := len(c.run.byAxes)
		c.run.mu.Unlock()
		if n > maxAxesKernels || n == 0 {
			t.Fatalf("after %d axes values the partition keeps %d kernels (bound %d)", seen, n, maxAxesKernels)
		}
	}
	if seen != 70 {
		t.Fatalf("%d axes values", seen)
	}
}
