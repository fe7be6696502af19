package reduce_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/reduce"
)

// r1SoftmaxOracle is softmax (or log-softmax) of xs in float64, with
// inf_as_zero making a row whose max is -Inf 0s.
func r1SoftmaxOracle(xs []float64, log, infAsZero bool) []float64 {
	m := math.Inf(-1)
	nan := false
	for _, x := range xs {
		if math.IsNaN(x) {
			nan = true
		}
		m = math.Max(m, x)
	}
	out := make([]float64, len(xs))
	if nan {
		for i := range out {
			out[i] = math.NaN()
		}
		return out
	}
	if math.IsInf(m, -1) && infAsZero {
		return out
	}
	s := 0.0
	for _, x := range xs {
		s += math.Exp(x - m)
	}
	for i, x := range xs {
		if log {
			out[i] = x - m - math.Log(s)
		} else {
			out[i] = math.Exp(x-m) / s
		}
	}
	return out
}

// TestSoftmaxColumnsSpecials runs Softmax and LogSoftmax over the
// middle dim of [outer, C, inner] (the fused column kernel), with
// odd inner extents, C of 1 and more, f32, bf16 and f16, rows holding
// -Inf, NaN, +Inf, huge values, all -Inf (with and without InfAsZero), on
// 1, 2 and 3 threads and every ISA, against a float64 oracle: NaN exactly
// where the oracle has NaN, exact 0 (softmax) and -Inf (log-softmax)
// where it has them, else within a few units of the dst type.
func TestSoftmaxColumnsSpecials(t *testing.T) {
	shapes := [][3]int{{1, 5, 1}, {3, 7, 3}, {2, 1, 17}, {1, 2, 15}, {2, 33, 31}, {1, 100, 65}, {3, 9, 129}, {1, 3, 257}, {2, 513, 5},
		// Rows (the normalized dim innermost): held rows two at a time, odd counts.
		{9, 5, 1}, {17, 33, 1}, {7, 100, 1}, {3, 1000, 1}, {11, 16, 1}, {5, 2, 1}, {13, 1, 1}, {15, 17, 1}, {9, 257, 1}}
	dts := []dtypes.DataType{dtypes.F32, dtypes.BF16, dtypes.F16}
	for _, isa := range advISAs {
		prev := jit.SetMaxISA(isa)
		r := rand.New(rand.NewPCG(11, uint64(isa)))
		for _, sh := range shapes {
			O, C, I := sh[0], sh[1], sh[2]
			n := O * C * I
			for _, dt := range dts {
				huge := 3e38
				if dt == dtypes.F16 {
					huge = 65000
				}
				vals := make([]float64, n)
				// column (o, i): choose a pattern by its index.
				for o := range O {
					for i := range I {
						pat := (o*I + i) % 8
						for c := range C {
							v := r.Float64()*8 - 4
							switch pat {
							case 1: // a -Inf in the column
								if c == (i % C) {
									v = math.Inf(-1)
								}
							case 2: // all -Inf
								v = math.Inf(-1)
							case 3: // a NaN late in the column
								if c == C-1 {
									v = math.NaN()
								}
							case 4: // huge values
								v = huge * (r.Float64()*2 - 1)
							case 5: // a +Inf
								if c == C/2 {
									v = math.Inf(1)
								}
							case 6: // all equal -huge
								v = -huge
							}
							vals[(o*C+c)*I+i] = v
						}
					}
				}
				src32 := make([]float32, n)
				src16 := make([]uint16, n)
				for k, v := range vals {
					if dt == dtypes.F32 {
						src32[k] = float32(v)
					} else {
						dtypes.StoreF32(dt, u16Bytes(src16), int64(k), float32(v))
						vals[k] = float64(dtypes.LoadF32(dt, u16Bytes(src16), int64(k)))
					}
					if dt == dtypes.F32 {
						vals[k] = float64(src32[k])
					}
				}
				for _, log := range []bool{false, true} {
					for _, iaz := range []bool{false, true} {
						if log && iaz {
							continue
						}
						want := make([]float64, n)
						col := make([]float64, C)
						for o := range O {
							for i := range I {
								for c := range C {
									col[c] = vals[(o*C+c)*I+i]
								}
								res := r1SoftmaxOracle(col, log, iaz)
								for c := range C {
									// The dst type's value: rounding may overflow to ±Inf.
									var b [4]byte
									dtypes.StoreF32(dt, b[:], 0, float32(res[c]))
									want[(o*C+c)*I+i] = float64(dtypes.LoadF32(dt, b[:], 0))
									if math.Abs(res[c]) < 1e30 && !math.IsInf(want[(o*C+c)*I+i], 0) {
										want[(o*C+c)*I+i] = res[c]
									}
								}
							}
						}
						for _, th := range []int{1, 2, 3} {
							pt := jit.SetThreads(th)
							opts := []reduce.Option{}
							if iaz {
								opts = append(opts, reduce.InfAsZero(true))
							}
							got := make([]float64, n)
							var err error
							if dt == dtypes.F32 {
								dst := make([]float32, n)
								if log {
									err = reduce.LogSoftmax(dst, src32, []int{O, C, I}, 1, opts...)
								} else {
									err = reduce.Softmax(dst, src32, []int{O, C, I}, 1, opts...)
								}
								for k := range dst {
									got[k] = float64(dst[k])
								}
							} else {
								opts = append(opts, reduce.Type(dt))
								dst := make([]uint16, n)
								if log {
									err = reduce.LogSoftmax(dst, src16, []int{O, C, I}, 1, opts...)
								} else {
									err = reduce.Softmax(dst, src16, []int{O, C, I}, 1, opts...)
								}
								for k := range dst {
									got[k] = float64(dtypes.LoadF32(dt, u16Bytes(dst), int64(k)))
								}
							}
							jit.SetThreads(pt)
							name := fmt.Sprintf("%v %v %v log=%v iaz=%v %d threads", isa, dt, sh, log, iaz, th)
							if err != nil {
								t.Errorf("%s: %v", name, err)
								continue
							}
							tol := 1e-5
							if dt == dtypes.BF16 {
								tol = 1.6e-2
							} else if dt == dtypes.F16 {
								tol = 2e-3
							}
							bad := 0
							for k := range n {
								w, g := want[k], got[k]
								ok := true
								switch {
								case math.IsNaN(w):
									ok = math.IsNaN(g)
								case math.IsInf(w, 0) || w == 0:
									ok = w == g
								default:
									ok = math.Abs(g-w) <= tol*math.Max(math.Abs(w), 1e-3) || (!log && math.Abs(g-w) <= 1e-6 && dt == dtypes.F32) || (dt != dtypes.F32 && math.Abs(g-w) <= 1e-4 && !log)
									if log {
										ok = math.Abs(g-w) <= tol*math.Max(math.Abs(w), 1) // log(s) of s near 1 is ill-conditioned
									}
									if dt == dtypes.F16 && !log && math.Abs(w) < 6.2e-5 {
										ok = math.Abs(g-w) <= 6e-8
									}
								}
								if !ok {
									if bad < 4 {
										o, c, i := k/(C*I), k/I%C, k%I
										t.Errorf("%s: [%d %d %d] (src %v) = %v, want %v", name, o, c, i, vals[k], g, w)
									}
									bad++
								}
							}
							if bad > 0 {
								t.Errorf("%s: %d bad", name, bad)
							}
						}
					}
				}
			}
		}
		jit.SetMaxISA(prev)
	}
}
