package partition

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/status"
)

// argRowRef is the index of the winner of a row: the largest (min:
// smallest) value, NaN above (below) all, the first of equals (last: the
// last), compared by magnitude with abs.
func argRowRef(row []float64, min, last, abs bool) int64 {
	v := slices.Clone(row)
	for i := range v {
		if abs {
			v[i] = math.Abs(v[i])
		}
		if min {
			v[i] = -v[i]
		}
	}
	best, bi := math.Inf(-1), int64(0)
	for i, x := range v {
		better := x > best || math.IsNaN(x) && !math.IsNaN(best)
		tie := x == best || math.IsNaN(x) && math.IsNaN(best)
		if better || tie && last {
			best, bi = x, int64(i)
		}
	}
	return bi
}

// argPartitionGraph builds [Abs ->] kind over src [4, n, 3] along axis
// into an idt output.
func argPartitionGraph(t *testing.T, kind graph.OpKind, abs bool, n int64, axis int64, keep, last bool, idt dtypes.DataType) *graph.Graph {
	t.Helper()
	g := graph.New()
	src := graph.NewLogicalTensor(0, dtypes.F32, []int64{4, n, 3})
	in := src
	if abs {
		mid := graph.NewLogicalTensorAny(1, dtypes.F32, nil)
		if err := g.AddOp(graph.NewOp(0, graph.Abs, "abs").AddInput(src).AddOutput(mid)); err != nil {
			t.Fatal(err)
		}
		in = mid
	}
	op := graph.NewOp(1, kind, "arg").AddInput(in).AddOutput(graph.NewLogicalTensorAny(2, idt, nil)).
		SetAttr("axis", axis).SetAttr("keep_dims", keep).SetAttr("select_last_index", last)
	if err := g.AddOp(op); err != nil {
		t.Fatal(err)
	}
	if err := g.Finalize(); err != nil {
		t.Fatal(err)
	}
	return g
}

// TestArgPartitions compiles ArgMax and ArgMin partitions, alone and
// after a fused Abs, and checks their indices against argRowRef.
func TestArgPartitions(t *testing.T) {
	r := rand.New(rand.NewPCG(51, 5))
	for _, kind := range []graph.OpKind{graph.ArgMax, graph.ArgMin} {
		for _, abs := range []bool{false, true} {
			for _, axis := range []int64{0, 1, -1} {
				for _, last := range []bool{false, true} {
					n := int64(1 + r.IntN(70))
					keep := r.IntN(2) == 0
					idt := []dtypes.DataType{dtypes.S32, dtypes.S64}[r.IntN(2)]
					g := argPartitionGraph(t, kind, abs, n, axis, keep, last, idt)
					parts, err := Get(g, Fusion)
					if err != nil {
						t.Fatal(err)
					}
					if len(parts) != 1 || !parts[0].IsSupported() {
						t.Fatalf("%v abs=%v: partitions %v", kind, abs, parts)
					}
					p := parts[0]
					c, err := p.Compile(p.Inputs(), p.Outputs())
					if err != nil {
						t.Fatal(err)
					}
					dims := []int64{4, n, 3}
					vals := make([]float32, 4*n*3)
					for i := range vals {
						vals[i] = float32(r.IntN(7) - 3)
						if r.IntN(25) == 0 {
							vals[i] = float32(math.NaN())
						}
					}
					src, err := NewTensor(c.Inputs()[0], vals)
					if err != nil {
						t.Fatal(err)
					}
					out := c.Outputs()[0]
					ax := int((axis + 3) % 3)
					nOut := int(4 * n * 3 / dims[ax])
					got := make([]int64, nOut)
					var dst Tensor
					if idt == dtypes.S32 {
						buf := make([]int32, nOut)
						dst, err = NewTensor(out, buf)
						if err == nil {
							err = c.Execute([]Tensor{src}, []Tensor{dst})
						}
						for i, v := range buf {
							got[i] = int64(v)
						}
					} else {
						buf := make([]int64, nOut)
						dst, err = NewTensor(out, buf)
						if err == nil {
							err = c.Execute([]Tensor{src}, []Tensor{dst})
						}
						copy(got, buf)
					}
					if err != nil {
						t.Fatal(err)
					}
					// Outputs in row-major order over the kept dims.
					o := 0
					for i := range dims[0] {
						for j := range dims[1] {
							for k := range dims[2] {
								at := [3]int64{i, j, k}
								if at[ax] != 0 {
									continue
								}
								row := make([]float64, dims[ax])
								for x := range row {
									at[ax] = int64(x)
									row[x] = float64(vals[(at[0]*n+at[1])*3+at[2]])
								}
								if want := argRowRef(row, kind == graph.ArgMin, last, abs); got[o] != want {
									t.Fatalf("%v abs=%v axis=%d last=%v n=%d: output %d is %d, want %d (row %v, %s)",
										kind, abs, axis, last, n, o, got[o], want, row, c.Impl())
								}
								o++
							}
						}
					}
				}
			}
		}
	}
}

// TestArgPartitionRefusals checks what an index reduction partition
// refuses at compile and execute time.
func TestArgPartitionRefusals(t *testing.T) {
	g := argPartitionGraph(t, graph.ArgMax, false, 0, 1, false, false, dtypes.S32)
	p, err := Get(g, Fusion)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p[0].Compile(p[0].Inputs(), p[0].Outputs()); !errors.Is(err, status.InvalidShape) {
		t.Errorf("axis of size 0: %v, want InvalidShape", err)
	}
	g = argPartitionGraph(t, graph.ArgMax, false, 5, 1, false, false, dtypes.S32)
	p, _ = Get(g, Fusion)
	c, err := p[0].Compile(p[0].Inputs(), p[0].Outputs())
	if err != nil {
		t.Fatal(err)
	}
	src, _ := NewTensor(c.Inputs()[0], make([]float32, 60))
	short, _ := NewTensor(graph.NewLogicalTensor(2, dtypes.S32, []int64{2}), make([]int32, 2))
	if err := c.Execute([]Tensor{src}, []Tensor{short}); err == nil {
		t.Error("a short output ran")
	}
	if line := c.verboseLine(0); !strings.Contains(line, ",ArgMax,") || !strings.Contains(line, c.Impl()) {
		t.Errorf("verbose line %q does not name ArgMax and %s", line, c.Impl())
	}
}
