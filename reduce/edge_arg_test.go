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

// r1ArgOracle is the exact index along axis: NaN wins (the first, or
// the last with last), ties go to the first (last) index.
func r1ArgOracle(vals []float64, dims []int, axis int, isMin, last bool) []int64 {
	O, A, I := 1, dims[axis], 1
	for i := range axis {
		O *= dims[i]
	}
	for i := axis + 1; i < len(dims); i++ {
		I *= dims[i]
	}
	out := make([]int64, O*I)
	for o := range O {
		for i := range I {
			best := -1
			for a := range A {
				v := vals[(o*A+a)*I+i]
				if best < 0 {
					best = a
					continue
				}
				b := vals[(o*A+best)*I+i]
				bn, vn := math.IsNaN(b), math.IsNaN(v)
				switch {
				case bn && vn:
					if last {
						best = a
					}
				case bn:
				case vn:
					best = a
				case v == b:
					if last {
						best = a
					}
				case (v > b) != isMin:
					best = a
				}
			}
			out[o*I+i] = int64(best)
		}
	}
	return out
}

// TestArgSpecials runs ArgMax and ArgMin over [O, A, I] along every
// axis, f32, f64, bf16, f16, s8, u8 and s32 src, with and without
// select_last_index, s32 and s64 dst, on data built to trip a
// one-compare update: NaNs (quiet, signalling, negative; first, last,
// several, all), ties of equal values and of -0 and +0, ±Inf, the
// type's extremes, on every ISA and 1 and 2 threads, against an exact
// oracle.
func TestArgSpecials(t *testing.T) {
	shapes := [][]int{{1, 1, 1}, {3, 5, 1}, {2, 17, 3}, {1, 33, 16}, {4, 1000, 1}, {1, 257, 33}, {2, 7, 129}, {5, 64, 2}}
	dts := []dtypes.DataType{dtypes.F32, dtypes.F64, dtypes.BF16, dtypes.F16, dtypes.S8, dtypes.U8, dtypes.S32}
	for _, isa := range advISAs {
		prev := jit.SetMaxISA(isa)
		r := rand.New(rand.NewPCG(23, uint64(isa)))
		for _, dims := range shapes {
			n := dims[0] * dims[1] * dims[2]
			for _, dt := range dts {
				isFloat := dt == dtypes.F32 || dt == dtypes.F64 || dt == dtypes.BF16 || dt == dtypes.F16
				// A pattern per column position, chosen by the flat index's row.
				vals := make([]float64, n)
				nanBits := []uint32{0x7fc00000, 0x7f800001, 0xffc00000, 0xff800001, 0x7fffffff}
				var f32 []float32
				if dt == dtypes.F32 {
					f32 = make([]float32, n)
				}
				pat := r.IntN(9)
				for k := range n {
					if k%7 == 0 {
						pat = r.IntN(9)
					}
					var v float64
					switch pat {
					case 0:
						v = float64(r.IntN(5) - 2) // many ties
					case 1:
						v = math.Copysign(0, float64(r.IntN(2)*2-1)) // ±0
					case 2:
						v = float64(r.IntN(3)) - 1
						if isFloat && r.IntN(4) == 0 {
							v = math.NaN()
						}
					case 3:
						if isFloat {
							v = []float64{math.Inf(1), math.Inf(-1), 0, math.NaN()}[r.IntN(4)]
						} else {
							v = float64(r.IntN(3))
						}
					case 4:
						if isFloat {
							v = math.NaN()
						}
					default:
						v = float64(r.IntN(200)) - 100
						if dt == dtypes.U8 {
							v = float64(r.IntN(256))
						}
						if dt == dtypes.S8 && r.IntN(8) == 0 {
							v = []float64{-128, 127}[r.IntN(2)]
						}
						if dt == dtypes.S32 && r.IntN(8) == 0 {
							v = []float64{math.MinInt32, math.MaxInt32, 1 << 24, 1<<24 + 1}[r.IntN(4)]
						}
					}
					if dt == dtypes.U8 && v < 0 {
						v = -v
					}
					vals[k] = v
					if dt == dtypes.F32 {
						f32[k] = float32(v)
						if math.IsNaN(v) {
							f32[k] = math.Float32frombits(nanBits[r.IntN(len(nanBits))])
						}
					}
				}
				for axis := range 3 {
					for _, isMin := range []bool{false, true} {
						for _, last := range []bool{false, true} {
							want := r1ArgOracle(vals, dims, axis, isMin, last)
							for _, th := range []int{1, 2} {
								pt := jit.SetThreads(th)
								got64 := make([]int64, len(want))
								got32 := make([]int32, len(want))
								var e1, e2 error
								opts := []reduce.Option{reduce.SelectLastIndex(last)}
								run := func(f func(d64 []int64, d32 []int32) (error, error)) { e1, e2 = f(got64, got32) }
								switch dt {
								case dtypes.F32:
									run(func(a []int64, b []int32) (error, error) {
										if isMin {
											return reduce.ArgMin(a, f32, dims, axis, opts...), reduce.ArgMin(b, f32, dims, axis, opts...)
										}
										return reduce.ArgMax(a, f32, dims, axis, opts...), reduce.ArgMax(b, f32, dims, axis, opts...)
									})
								case dtypes.F64:
									s := vals
									run(func(a []int64, b []int32) (error, error) {
										if isMin {
											return reduce.ArgMin(a, s, dims, axis, opts...), reduce.ArgMin(b, s, dims, axis, opts...)
										}
										return reduce.ArgMax(a, s, dims, axis, opts...), reduce.ArgMax(b, s, dims, axis, opts...)
									})
								case dtypes.BF16, dtypes.F16:
									s := make([]uint16, n)
									for k, v := range vals {
										dtypes.StoreF32(dt, u16Bytes(s), int64(k), float32(v))
									}
									o := append(opts, reduce.Type(dt))
									run(func(a []int64, b []int32) (error, error) {
										if isMin {
											return reduce.ArgMin(a, s, dims, axis, o...), reduce.ArgMin(b, s, dims, axis, o...)
										}
										return reduce.ArgMax(a, s, dims, axis, o...), reduce.ArgMax(b, s, dims, axis, o...)
									})
								case dtypes.S8:
									s := make([]int8, n)
									for k, v := range vals {
										s[k] = int8(v)
									}
									run(func(a []int64, b []int32) (error, error) {
										if isMin {
											return reduce.ArgMin(a, s, dims, axis, opts...), reduce.ArgMin(b, s, dims, axis, opts...)
										}
										return reduce.ArgMax(a, s, dims, axis, opts...), reduce.ArgMax(b, s, dims, axis, opts...)
									})
								case dtypes.U8:
									s := make([]uint8, n)
									for k, v := range vals {
										s[k] = uint8(v)
									}
									run(func(a []int64, b []int32) (error, error) {
										if isMin {
											return reduce.ArgMin(a, s, dims, axis, opts...), reduce.ArgMin(b, s, dims, axis, opts...)
										}
										return reduce.ArgMax(a, s, dims, axis, opts...), reduce.ArgMax(b, s, dims, axis, opts...)
									})
								case dtypes.S32:
									s := make([]int32, n)
									for k, v := range vals {
										s[k] = int32(v)
									}
									run(func(a []int64, b []int32) (error, error) {
										if isMin {
											return reduce.ArgMin(a, s, dims, axis, opts...), reduce.ArgMin(b, s, dims, axis, opts...)
										}
										return reduce.ArgMax(a, s, dims, axis, opts...), reduce.ArgMax(b, s, dims, axis, opts...)
									})
								}
								jit.SetThreads(pt)
								name := fmt.Sprintf("%v %v %v axis %d min=%v last=%v %d threads", isa, dt, dims, axis, isMin, last, th)
								if e1 != nil || e2 != nil {
									t.Errorf("%s: %v, %v", name, e1, e2)
									continue
								}
								bad := 0
								for k := range want {
									if got64[k] != want[k] || int64(got32[k]) != want[k] {
										if bad < 3 {
											t.Errorf("%s: [%d] = %d (s64) %d (s32), want %d", name, k, got64[k], got32[k], want[k])
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
		}
		jit.SetMaxISA(prev)
	}
}
