package partition_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/partition"
)

// TestAdvHostileGraphs builds random, often ill-formed graphs from every
// op kind and pushes whatever AddOp and Finalize accept through Get,
// Compile (with concretised, sometimes contradictory, input tensors) and
// Execute (with buffers sized from the compiled tensors, sometimes short).
// Nothing may panic; every error must be a *graph.Error.
func TestAdvHostileGraphs(t *testing.T) {
	n := 20000
	if s := os.Getenv("ADV_N"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	advCacheCapacity(t, 16)
	kinds := []graph.OpKind{}
	for k := graph.OpKind(1); k.Valid(); k++ {
		kinds = append(kinds, k)
	}
	dts := []dtypes.DataType{dtypes.F32, dtypes.F32, dtypes.BF16, dtypes.F16, dtypes.S8, dtypes.U8, dtypes.S32, dtypes.S64}
	executed := 0
	for seed := uint64(1); seed <= uint64(n); seed++ {
		r := rand.New(rand.NewPCG(seed, 3))
		var log []string
		func() {
			defer func() {
				if e := recover(); e != nil {
					t.Errorf("seed %d: panic %v\n%s\n%s", seed, e, strings.Join(log, "\n"), debug.Stack())
				}
			}()
			g := graph.New()
			var tensors []graph.LogicalTensor
			randDims := func() []int64 {
				if r.IntN(8) == 0 {
					return nil
				}
				d := make([]int64, r.IntN(4))
				for i := range d {
					d[i] = int64(r.IntN(4))
					if r.IntN(6) == 0 {
						d[i] = -1
					}
				}
				return d
			}
			newT := func() graph.LogicalTensor {
				id := uint64(len(tensors) + 1)
				dt := dts[r.IntN(len(dts))]
				var lt graph.LogicalTensor
				switch r.IntN(4) {
				case 0:
					lt = graph.NewLogicalTensorAny(id, dt, randDims())
				case 1:
					d := randDims()
					s := make([]int64, len(d))
					for i := range s {
						s[i] = int64(r.IntN(5))
					}
					if d == nil {
						s = nil
					}
					lt = graph.NewLogicalTensorStrided(id, dt, d, s)
				default:
					lt = graph.NewLogicalTensor(id, dt, randDims())
				}
				tensors = append(tensors, lt)
				return lt
			}
			for i := 0; i < 2; i++ {
				newT()
			}
			nops := 1 + r.IntN(6)
			for o := 0; o < nops; o++ {
				k := kinds[r.IntN(len(kinds))]
				if r.IntN(2) == 0 {
					k = []graph.OpKind{graph.ReduceSum, graph.ReduceMax, graph.ReduceMean, graph.Exp, graph.Log, graph.Square, graph.Abs, graph.Add, graph.Dequantize, graph.Quantize}[r.IntN(10)]
				}
				op := graph.NewOp(uint64(o+1), k, "")
				nin := 1
				if k.IsBinary() || (k.IsReduction() && r.IntN(4) == 0) {
					nin = 2
				}
				for i := 0; i < nin; i++ {
					op.AddInput(tensors[r.IntN(len(tensors))])
				}
				if k != graph.End {
					out := newT()
					if r.IntN(3) == 0 {
						out.DataType = op.Inputs[0].DataType
						tensors[len(tensors)-1] = out
					}
					op.AddOutput(out)
				}
				switch {
				case k.IsReduction():
					if nin == 1 {
						ax := []int64{}
						for a := 0; a < r.IntN(3); a++ {
							ax = append(ax, int64(r.IntN(5)-2))
						}
						op.SetAttr("axes", ax)
					}
					op.SetAttr("keep_dims", r.IntN(2) == 0)
				case k == graph.Dequantize || k == graph.Quantize:
					op.SetAttr("scales", []float32{0.5, -1}[:1+r.IntN(2)])
					if r.IntN(2) == 0 {
						op.SetAttr("qtype", "per_channel").SetAttr("axis", int64(r.IntN(3)-1))
					}
				case k == graph.Clamp:
					op.SetAttr("min", float32(-1)).SetAttr("max", float32(1))
				case k == graph.Pow:
					op.SetAttr("beta", float32(r.IntN(5)-2)/2)
				case k == graph.Elu || k == graph.LeakyReLU:
					op.SetAttr("alpha", float32(0.5))
				case k == graph.HardSigmoid:
					op.SetAttr("alpha", float32(0.5)).SetAttr("beta", float32(0.5))
				}
				if err := g.AddOp(op); err == nil {
					log = append(log, advOpString(op))
				} else if _, ok := err.(*graph.Error); !ok {
					t.Errorf("seed %d: AddOp error %T %v", seed, err, err)
				}
			}
			if err := g.Finalize(); err != nil {
				return
			}
			parts, err := partition.Get(g, partition.Fusion)
			if err != nil {
				t.Errorf("seed %d: Get: %v", seed, err)
				return
			}
			for _, p := range parts {
				if !p.IsSupported() {
					continue
				}
				var ins []graph.LogicalTensor
				for _, lt := range p.Inputs() {
					if lt.Dims == nil {
						lt.Dims = randDims()
					}
					for i := range lt.Dims {
						if lt.Dims[i] < 0 {
							lt.Dims[i] = int64(r.IntN(4))
						}
					}
					if r.IntN(3) == 0 || !lt.Concrete() {
						lt.Layout, lt.Strides = graph.LayoutAny, nil
					}
					ins = append(ins, lt)
				}
				cp, err := p.Compile(ins, p.Outputs())
				if err != nil {
					if _, ok := err.(*graph.Error); !ok {
						t.Errorf("seed %d: Compile error %T %v", seed, err, err)
					}
					continue
				}
				var tens []partition.Tensor
				ok := true
				for _, lt := range cp.Inputs() {
					sz, err := partition.MemSize(lt)
					if err != nil {
						ok = false
						break
					}
					if r.IntN(10) == 0 && sz > 0 {
						sz--
					}
					buf := make([]byte, sz)
					for i := range buf {
						buf[i] = byte(r.IntN(256))
					}
					if lt.DataType == dtypes.S32 || lt.DataType == dtypes.S64 {
						for i := range buf {
							buf[i] = 0
						}
					}
					tt, err := partition.NewTensor(lt, buf)
					if err != nil {
						ok = false
						break
					}
					tens = append(tens, tt)
				}
				if !ok {
					continue
				}
				olt, _ := cp.QueryLogicalTensor(p.Outputs()[0].ID)
				if !olt.KnownDims() {
					var ax []int64
					if olt, err = cp.QueryLogicalTensorWithAxes(olt.ID, ax); err != nil {
						continue
					}
				}
				sz, err := partition.MemSize(olt)
				if err != nil {
					continue
				}
				ot, err := partition.NewTensor(olt, make([]byte, sz))
				if err != nil {
					continue
				}
				if err := cp.Execute(tens, []partition.Tensor{ot}); err != nil {
					if _, ok := err.(*graph.Error); !ok {
						t.Errorf("seed %d: Execute error %T %v", seed, err, err)
					}
					continue
				}
				executed++
			}
		}()
	}
	t.Logf("%d executes", executed)
	_ = fmt.Sprint
}
