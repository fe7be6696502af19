package normprog

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"golang.org/x/sys/cpu"
)

// TestStreamedDst: a fused kernel that stores dst non-temporally (its
// dst at least memoryMinBytes, lowered here to stream every one)
// gives bit for bit the regular kernel's dst, on every JIT ISA, for
// rows held in registers and not, an odd row count (a pair and a
// row alone), a gamma, columns (softmax's and log-softmax's, with a
// tile's rows in the stage and past it, where softmax's streamed kernel
// computes the exps again and the regular one keeps them in dst, and
// the other kinds'), f32, bf16 and f16 dsts; with dst next to guard
// pages, on a vector boundary and off one (the run-time check then runs
// the regular code), on 1 and 2 threads. fill's src holds zeros, which
// AVX-512's bf16 pairs must not take for flushed subnormals. On amd64 a
// kernel streams exactly where its rows' starts stay aligned for its
// stores (a vector of dst's type, or a pair of them for bf16 on AVX2
// and on AVX-512 with its native conversion, so there bf16 rows a half
// line apart stream or not as the CPU converts bf16) and its map reads
// src into a row not held in registers.
func TestStreamedDst(t *testing.T) {
	// kept: softmax into f32 keeps its exps in dst where a row not held
	// does not fit the stage (rows that fit it keep them there, as do
	// columns, or, where a tile's rows do not fit it, compute them again
	// when they stream), whose map streams nothing, nor does a row held
	// in registers; depends where whether a row is held depends on the
	// ISA's registers; heldWithoutBF16: AVX-512 holds the rows where it
	// does not convert bf16 natively, and groups them (not held) where
	// it does.
	const depends, no, yes, heldWithoutBF16 = 0, 1, 2, 3
	cases := []struct {
		kind  Kind
		dims  []int64
		after int
		dt    dtypes.DataType
		kept  int
	}{
		{Softmax, []int64{7, 128}, 0, dtypes.F32, depends},
		{LogSoftmax, []int64{7, 128}, 0, dtypes.F32, no}, // AVX-512 groups four rows, not held
		{LogSoftmax, []int64{7, 128}, 0, dtypes.BF16, heldWithoutBF16},
		{LogSoftmax, []int64{3, 40}, 0, dtypes.F32, depends}, // held rows stream nothing
		{LogSoftmax, []int64{3, 1000}, 0, dtypes.F32, no},    // rows 4000 bytes apart: AVX2's vector, not AVX-512's
		{Softmax, []int64{5, 2048}, 0, dtypes.F32, no},       // exps in the stage
		{Softmax, []int64{3, 4104}, 0, dtypes.F32, yes},      // past the stage: exps in dst
		{Softmax, []int64{5, 2048}, 0, dtypes.BF16, no},
		{RMSNorm, []int64{5, 1024}, 0, dtypes.F32, no},
		{LayerNorm, []int64{3, 768}, 0, dtypes.F32, no},
		{L2Norm, []int64{4, 384}, 0, dtypes.F32, no},
		{RMSNorm, []int64{5, 1024}, 0, dtypes.BF16, no},
		{RMSNorm, []int64{5, 1024}, 0, dtypes.F16, no},
		{LayerNorm, []int64{3, 768}, 0, dtypes.BF16, no},
		{LayerNorm, []int64{3, 1008}, 0, dtypes.F16, no},        // rows 2016 bytes apart: half AVX-512's vector, not a whole one
		{LayerNorm, []int64{3, 1008}, 0, dtypes.BF16, depends},  // AVX-512's bf16 pairs need a whole vector
		{LayerNorm, []int64{3, 1000}, 0, dtypes.F16, no},        // 2000 bytes: AVX2's 16-bit vector only
		{LayerNorm, []int64{3, 1000}, 0, dtypes.BF16, no},       // not AVX2's bf16 pair
		{Softmax, []int64{2, 21, 4, 64}, 2, dtypes.BF16, no},    // columns: exps in the stage
		{LogSoftmax, []int64{2, 200, 2, 64}, 2, dtypes.F16, no}, // columns past the stage
		{Softmax, []int64{2, 21, 4, 64}, 2, dtypes.F32, no},     // columns: exps in the stage
		{LogSoftmax, []int64{2, 21, 4, 64}, 2, dtypes.F32, no},
		{Softmax, []int64{2, 200, 2, 64}, 2, dtypes.F32, no}, // columns past the stage: exps computed again
		{LogSoftmax, []int64{2, 200, 2, 64}, 2, dtypes.F32, no},
		{LogSoftmax, []int64{2, 5, 3, 20}, 2, dtypes.F32, no}, // channels 60 elements apart
		{L2Norm, []int64{2, 21, 4, 64}, 2, dtypes.F32, no},
		{L1Norm, []int64{2, 21, 4, 64}, 2, dtypes.F32, no},
		{LayerNorm, []int64{2, 21, 4, 64}, 2, dtypes.F32, no}, // gamma per channel
		{RMSNorm, []int64{2, 5, 3, 20}, 2, dtypes.F32, no},
		{L2Norm, []int64{2, 21, 4, 64}, 2, dtypes.BF16, no},
	}
	defer setStreamMin(0)()
	for _, isa := range isas() {
		if isa == jit.None {
			continue
		}
		prev := jit.SetMaxISA(isa)
		streams := 0
		for ci, c := range cases {
			d := benchDesc(c.kind, c.dims, 1, c.after, c.dt)
			name := fmt.Sprintf("%v %v %v on %v", c.kind, c.dims, c.dt, isa)
			compile := func(min int64) *Program {
				setStreamMin(min)
				p, err := Compile(d)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if p.full.fused == nil {
					t.Fatalf("%s: no fused kernel", name)
				}
				return p
			}
			regular, streamed := compile(math.MaxInt64), compile(0)
			if regular.full.fused.Streams() {
				t.Fatalf("%s: a dst below memoryMinBytes streams", name)
			}
			r := rand.New(rand.NewPCG(uint64(ci), 9))
			src := fill(r, c.dt, spanElems(d.Dims, d.SrcStrides), 4)
			var gamma []byte
			if d.Gamma != nil {
				gamma = fill(r, dtypes.F32, c.dims[len(c.dims)-1], 2)
			}
			dstBytes := len(src) / c.dt.Size() * c.dt.Size()
			run := func(p *Program, f *kerneltest.Fence, skew, threads int) []byte {
				dst := f.Place(make([]byte, dstBytes+skew))[skew:]
				prevT := jit.SetThreads(threads)
				defer jit.SetThreads(prevT)
				if err := p.Run(Buffers{Src: f.Place(src), Dst: dst, Gamma: f.Place(gamma)}); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				return append([]byte(nil), dst...)
			}
			for _, atEnd := range []bool{false, true} {
				f := kerneltest.NewFence(t, atEnd)
				want := run(regular, f, 0, 1)
				for _, skew := range []int{0, 4} {
					for _, threads := range []int{1, 2} {
						if got := run(streamed, f, skew, threads); !bytes.Equal(got, want) {
							t.Fatalf("%s: streamed dst (skew %d, at end %v, %d threads) differs from the regular one", name, skew, atEnd, threads)
						}
					}
				}
				f.Free()
			}
			if isa == jit.NEON {
				if streamed.full.fused.Streams() {
					t.Fatalf("%s: NEON streams", name)
				}
				continue
			}
			vec := int64(64)
			if isa == jit.AVX2 {
				vec = 32
			}
			inner := c.dims[len(c.dims)-1]
			if c.after > 0 {
				inner *= c.dims[len(c.dims)-2] // the channel stride
			}
			if c.dt == dtypes.F16 || c.dt == dtypes.BF16 && isa == jit.AVX512 {
				vec /= 2 // a vector of 16-bit values; AVX2's bf16 stores pairs
			}
			kept := c.kept
			if kept == heldWithoutBF16 {
				kept = no
				if isa == jit.AVX512 && !cpu.X86.HasAVX512BF16 {
					kept = yes
				}
			}
			want := inner*int64(c.dt.Size())%vec == 0 && kept == no
			if got := streamed.full.fused.Streams(); kept != depends && got != want {
				t.Fatalf("%s: Streams() = %v, want %v", name, got, want)
			}
			if want {
				streams++
			}
		}
		t.Logf("%v: %d of %d cases stream", isa, streams, len(cases))
		if isa != jit.NEON && streams == 0 {
			t.Fatalf("%v: no case streamed", isa)
		}
		jit.SetMaxISA(prev)
	}
}

// TestFromMemoryCountsSrcAndDst: a problem is taken to live in memory
// (its next rows prefetched, its dst streamed where the L3 is of the
// fleet's size) where src and dst together reach memoryMinBytes, though
// neither does alone: S6's LayerNorm (12 MiB each) does, a quarter of it
// does not, and a bf16 S6 (6 MiB each) does not. Where the CPU reports
// an L3 of 480 MiB, rows stream from 80 MiB: S6 and S5 (64 MiB in f32)
// prefetch without streaming, S5 with rows half as long again (96 MiB)
// streams.
func TestFromMemoryCountsSrcAndDst(t *testing.T) {
	if memoryMinBytes != 16<<20 {
		t.Fatalf("memoryMinBytes is %d", memoryMinBytes)
	}
	for _, c := range []struct {
		dims           []int64
		dt             dtypes.DataType
		want, wantL3GB bool // from memory; streams with an L3 of 480 MiB
	}{
		{[]int64{32, 128, 768}, dtypes.F32, true, false},
		{[]int64{8, 128, 768}, dtypes.F32, false, false},
		{[]int64{32, 128, 768}, dtypes.BF16, false, false},
		{[]int64{32, 128, 1366}, dtypes.BF16, true, false},
		{[]int64{4, 512, 4096}, dtypes.BF16, true, false},
		{[]int64{4, 512, 4096}, dtypes.F32, true, false},
		{[]int64{4, 512, 6144}, dtypes.F32, true, true},
	} {
		d := benchDesc(LayerNorm, c.dims, 1, 0, c.dt)
		for _, l3 := range []int64{0, 32 << 20, 480 << 20} {
			restore := setStreamMin(memoryMinBytes)
			rowStreamMinBytes = rowStreamMin(l3)
			wantStream := c.want
			if l3 == 480<<20 {
				wantStream = c.wantL3GB
			}
			if got := fromMemory(d); got != c.want || streamsDst(d) != wantStream || prefetchesRows(d) != c.want {
				t.Errorf("%v %v, L3 %d MiB: from memory %v, streams %v, prefetches %v; want %v, %v, %v",
					c.dims, c.dt, l3>>20, got, streamsDst(d), prefetchesRows(d), c.want, wantStream, c.want)
			}
			restore()
		}
	}
}

// TestRowStreamMin: rows stream from memoryMinBytes where the L3 is
// unknown or at most 96 MiB (every AMD L3 CPUID reports, per CCD), from
// a sixth of a larger one, and from 80 MiB at most.
func TestRowStreamMin(t *testing.T) {
	for _, c := range []struct{ l3, want int64 }{
		{0, 16 << 20}, {32 << 20, 16 << 20}, {96 << 20, 16 << 20}, {192 << 20, 32 << 20},
		{320 << 20, 320 << 20 / 6}, {480 << 20, 80 << 20}, {1 << 30, 80 << 20},
	} {
		if got := rowStreamMin(c.l3); got != c.want {
			t.Errorf("rowStreamMin(%d MiB) = %d, want %d", c.l3>>20, got, c.want)
		}
	}
}

// setStreamMin makes fused kernels over rows and over columns alike
// stream dst from v bytes (0: every one that can; math.MaxInt64: none)
// and returns what restores the sizes before.
func setStreamMin(v int64) (restore func()) {
	prevMem, prevRow := memoryMinBytes, rowStreamMinBytes
	memoryMinBytes, rowStreamMinBytes = v, v
	return func() { memoryMinBytes, rowStreamMinBytes = prevMem, prevRow }
}
