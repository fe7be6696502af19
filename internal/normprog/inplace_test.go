package normprog

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/jit"
)

// inPlaceDescs are the descriptions of cases() that may run in place
// (dst of src's type and layout), a LayerNorm keeping its statistics and
// a GroupNorm in both channel layouts, each large enough to be cut into
// chunks once.
func inPlaceDescs() []tcase {
	var out []tcase
	for _, c := range cases() {
		if c.d.SrcDT == c.d.DstDT && slices.Equal(c.d.SrcStrides, c.d.DstStrides) {
			out = append(out, c)
		}
	}
	stat := &Operand{DT: dtypes.F32, Strides: []int64{1, 0}}
	out = append(out, tcase{"layernorm kept stats", Desc{Kind: LayerNorm, SrcDT: dtypes.F32, DstDT: dtypes.F32, Dims: []int64{300, 1000},
		Norm: []bool{false, true}, SrcStrides: []int64{1000, 1}, DstStrides: []int64{1000, 1}, Epsilon: 1e-5, Mean: stat, Var: stat}})
	for _, s := range [][]int64{{12 * 3000, 3000, 1}, {12 * 3000, 1, 12}} {
		gstat := &Operand{DT: dtypes.F32, Strides: []int64{4, 1, 0, 0}}
		out = append(out, tcase{fmt.Sprintf("groupnorm %v", s), Desc{Kind: GroupNorm, SrcDT: dtypes.BF16, DstDT: dtypes.BF16,
			Dims: []int64{8, 12, 3000}, Norm: []bool{false, false, true}, SrcStrides: s, DstStrides: s, Epsilon: 1e-5,
			Groups: 4, ChanDim: 1, Gamma: &Operand{DT: dtypes.F32, Strides: []int64{0, 1, 0}}, Mean: gstat, Var: gstat}})
	}
	// Chunks whose spans overlap: normalized dims outside the chunk dim.
	out = append(out, tcase{"layernorm over axis 0", Desc{Kind: LayerNorm, SrcDT: dtypes.F32, DstDT: dtypes.F32, Dims: []int64{64, 4096},
		Norm: []bool{true, false}, SrcStrides: []int64{4096, 1}, DstStrides: []int64{4096, 1}, Epsilon: 1e-5}})
	out = append(out, tcase{"logsoftmax over channels, one image", Desc{Kind: LogSoftmax, SrcDT: dtypes.F32, DstDT: dtypes.F32,
		Dims: []int64{1, 21, 64, 64}, Norm: []bool{false, true, false, false}, SrcStrides: []int64{21 * 4096, 4096, 64, 1},
		DstStrides: []int64{21 * 4096, 4096, 64, 1}}})
	nxc := []int64{12 * 3000, 1, 12}
	out = append(out, tcase{"groupnorm channels last, one image", Desc{Kind: GroupNorm, SrcDT: dtypes.F32, DstDT: dtypes.F32,
		Dims: []int64{1, 12, 3000}, Norm: []bool{false, false, true}, SrcStrides: nxc, DstStrides: nxc, Epsilon: 1e-5,
		Groups: 4, ChanDim: 1}})
	return out
}

// TestInPlaceCopyVolume: a run in place by passes copies at most twice
// the tensor, whatever its layout: chunk by chunk where the chunks' spans
// are apart, else the whole tensor once (wholeCopy), never each chunk's
// span over other chunks' elements; GroupNorm on channels last copies
// block by block.
func TestInPlaceCopyVolume(t *testing.T) {
	whole := 0
	for _, c := range inPlaceDescs() {
		for _, fused := range []bool{false, true} {
			useFused = fused
			p, err := Compile(&c.d)
			useFused = true
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			if fused && p.cl == nil {
				continue // the fused kernels copy nothing
			}
			d := &p.d // the dims as merged
			size := int64(d.SrcDT.Size())
			tensor := span(d.Dims, d.SrcStrides, size)
			src := make([]byte, tensor)
			b := Buffers{Src: src, Dst: src}
			copied := int64(0)
			if in, n := p.wholeCopy(&b); in != nil {
				copied = n
				whole++
			} else if p.cl != nil {
				copied = p.cl.copyBytes(size)
			} else if p.chunkDim >= 0 {
				for ch := range p.nChunks {
					copied += p.chunkSpan(ch, d.SrcStrides, size)
				}
			}
			if copied > 2*tensor {
				t.Errorf("%s: an in-place run copies %d bytes of a %d-byte tensor", c.name, copied, tensor)
			}
		}
	}
	if whole == 0 {
		t.Errorf("no description copied its whole tensor")
	}
}

// TestInPlaceBitIdentity runs every description with dst given as src
// itself, on every ISA cap, as the fused kernel and as the passes, on 1
// and 2 threads, and checks that dst (and kept statistics) are bit for
// bit what the same program writes out of place.
func TestInPlaceBitIdentity(t *testing.T) {
	// Whole copies in pieces of an odd size, on several threads.
	defer func(n int64) { copyPiece = n }(copyPiece)
	copyPiece = 1000
	eachISA(t, func(t *testing.T, isa jit.ISA) {
		r := rand.New(rand.NewPCG(21, uint64(isa)))
		for _, fused := range []bool{true, false} {
			if !fused && isa == jit.None {
				continue // the interpreter runs the passes either way
			}
			ran := 0
			for _, c := range inPlaceDescs() {
				useFused = fused
				p, err := Compile(&c.d)
				useFused = true
				if err != nil {
					t.Fatalf("%s: %v", c.name, err)
				}
				if !fused && (p.cl != nil || p.full.fused != nil) {
					t.Fatalf("%s: fused with useFused off", c.name)
				}
				d := &p.d
				src := fill(r, c.d.SrcDT, spanElems(c.d.Dims, c.d.SrcStrides), 4)
				gamma, beta, bins := fillOperands(r, &c.d)
				stats := func() (m, v []byte) {
					if c.d.Mean == nil {
						return nil, nil
					}
					n := 4 * spanElems(d.Dims, d.Mean.Strides)
					return make([]byte, n), make([]byte, n)
				}
				for _, th := range []int{1, 2} {
					prev := jit.SetThreads(th)
					want := make([]byte, len(src))
					wm, wv := stats()
					err := p.Run(Buffers{Src: src, Dst: want, Gamma: gamma, Beta: beta, Bins: bins, Mean: wm, Var: wv})
					if err != nil {
						jit.SetThreads(prev)
						t.Fatalf("%s: out of place: %v", c.name, err)
					}
					got := bytes.Clone(src)
					gm, gv := stats()
					err = p.Run(Buffers{Src: got, Dst: got, Gamma: gamma, Beta: beta, Bins: bins, Mean: gm, Var: gv})
					jit.SetThreads(prev)
					if err != nil {
						t.Fatalf("%s: in place: %v", c.name, err)
					}
					if !bytes.Equal(got, want) || !bytes.Equal(gm, wm) || !bytes.Equal(gv, wv) {
						t.Errorf("%s (%s, fused %v, %d threads): in place differs from out of place", c.name, p.Impl(), ownKernels(p), th)
					}
				}
				if fused == (ownKernels(p)) {
					ran++
				}
			}
			if ran == 0 && isa != jit.None {
				t.Errorf("fused %v: no description ran that way", fused)
			}
		}
	})
}

// TestInPlaceResidual gives dst, or the kept sum, as x or skip itself,
// chunked and not, fused and as passes, on 1 and 2 threads: dst and the
// sum are bit for bit the out-of-place ones.
func TestInPlaceResidual(t *testing.T) {
	eachISA(t, func(t *testing.T, isa jit.ISA) {
		r := rand.New(rand.NewPCG(22, uint64(isa)))
		for _, fused := range []bool{true, false} {
			if !fused && isa == jit.None {
				continue
			}
			for _, k := range []Kind{LayerNorm, RMSNorm} {
				for _, dims := range [][]int64{{9, 37}, {600, 1000}} {
					for _, dt := range []dtypes.DataType{dtypes.F32, dtypes.BF16} {
						for _, keep := range []bool{false, true} {
							d := residualCase(k, dims, 1, dt, dt, dt, true, keep, false)
							useFused = fused
							p, err := Compile(d)
							useFused = true
							if err != nil {
								t.Fatal(err)
							}
							if isa != jit.None && fused != (p.full.fused != nil) {
								t.Fatalf("%s %v: fused %v, want %v", k, dims, p.full.fused != nil, fused)
							}
							n := spanElems(dims, d.DstStrides) * int64(dt.Size())
							x, skip := fill(r, dt, n/int64(dt.Size()), 3), fill(r, dt, n/int64(dt.Size()), 3)
							gamma := fill(r, dtypes.F32, spanElems(dims, d.Gamma.Strides), 2)
							bias := fill(r, dtypes.F32, spanElems(dims, d.Residual.Bias.Strides), 1)
							for _, alias := range []string{"dst=x", "dst=skip", "sum=x", "sum=skip"} {
								if alias[:3] == "sum" && !keep {
									continue
								}
								for _, th := range []int{1, 2} {
									prev := jit.SetThreads(th)
									b := Buffers{Dst: make([]byte, n), Gamma: gamma, X: x, Skip: skip, Bias: bias}
									if keep {
										b.Src = make([]byte, n)
									}
									err := p.Run(b)
									want, wantSum := b.Dst, b.Src
									ip := Buffers{Dst: make([]byte, n), Gamma: gamma, X: bytes.Clone(x), Skip: bytes.Clone(skip), Bias: bias}
									if keep {
										ip.Src = make([]byte, n)
									}
									switch alias {
									case "dst=x":
										ip.Dst = ip.X
									case "dst=skip":
										ip.Dst = ip.Skip
									case "sum=x":
										ip.Src = ip.X
									case "sum=skip":
										ip.Src = ip.Skip
									}
									if err == nil {
										err = p.Run(ip)
									}
									jit.SetThreads(prev)
									if err != nil {
										t.Fatalf("%s %v %v keep=%v %s: %v", k, dims, dt, keep, alias, err)
									}
									if !bytes.Equal(ip.Dst, want) || keep && !bytes.Equal(ip.Src, wantSum) {
										t.Errorf("%s %v %v keep=%v %s (%s, %d threads): in place differs from out of place",
											k, dims, dt, keep, alias, p.Impl(), th)
									}
								}
							}
						}
					}
				}
			}
		}
	})
}
