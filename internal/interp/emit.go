package interp

import (
	"encoding/binary"
	"math"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
)

// emit turns a row of combined values into outputs: the finalize (in
// float64, rounded once to f32), each post-op over the whole row in
// turn, then the conversion and store. Output j is written at dst
// element do + j*row.dst and reads binary operand k at
// bo[k] + j*row.bin[k].
func (e *exec) emit(acc []float64, do int, bo *[plan.MaxBinary]int) {
	out := e.out[:len(acc)]
	e.finish(acc, out)
	k := 0
	for i := range e.ops {
		op := &e.ops[i]
		if op.Kind.IsBinary() {
			y := e.bins[k].elems(bo[k], len(out), e.row.bin[k], e.bufs[0][:])
			binaryRow(op.Kind, out, y)
			k++
		} else {
			eltwiseRow(op, out)
		}
	}
	e.store(out, do, e.row.dst)
}

// finish sets out to the finalized values of acc, rounded to f32.
func (e *exec) finish(acc []float64, out []float32) {
	out = out[:len(acc)]
	switch {
	case !e.finalize:
		for j, s := range acc {
			out[j] = float32(s)
		}
	case e.red.Finalize == plan.FinalizeMean:
		d := float64(e.div)
		for j, s := range acc {
			out[j] = float32(s / d)
		}
	default:
		for j, s := range acc {
			out[j] = float32(e.red.FinalizeF64(s, e.div))
		}
	}
}

// store converts out to the dst type and writes it from dst element do,
// stride apart.
func (e *exec) store(out []float32, do, stride int) {
	switch e.dstDT {
	case dtypes.F32:
		for j, v := range out {
			binary.LittleEndian.PutUint32(e.dst[4*(do+j*stride):], math.Float32bits(v))
		}
	case dtypes.BF16:
		for j, v := range out {
			binary.LittleEndian.PutUint16(e.dst[2*(do+j*stride):], dtypes.F32ToBF16(v))
		}
	case dtypes.F16:
		for j, v := range out {
			binary.LittleEndian.PutUint16(e.dst[2*(do+j*stride):], dtypes.F32ToF16(v))
		}
	default:
		for j, v := range out {
			dtypes.StoreF32(e.dstDT, e.dst, int64(do+j*stride), v)
		}
	}
}

// binaryRow applies the binary post-op k to every result of out with
// the operand beside it in y, as plan.Binary does.
func binaryRow(k ops.Kind, out, y []float32) {
	y = y[:len(out)]
	switch k {
	case ops.Add:
		for j, b := range y {
			out[j] += b
		}
	case ops.Multiply:
		for j, b := range y {
			out[j] *= b
		}
	case ops.Subtract:
		for j, b := range y {
			out[j] -= b
		}
	case ops.Divide:
		for j, b := range y {
			out[j] /= b
		}
	default:
		for j, b := range y {
			out[j] = plan.Binary(k, out[j], b)
		}
	}
}

// eltwiseRow applies the unary post-op op to every result of out, as
// plan.Eltwise does: the cheap ops in loops of their own (a NaN stays
// itself, bits and all), the rest through plan.Eltwise.
func eltwiseRow(op *plan.PostOp, out []float32) {
	switch op.Kind {
	case ops.ReLU:
		for j, x := range out {
			if x <= 0 {
				out[j] = 0
			}
		}
	case ops.Abs:
		for j, x := range out {
			if x == x {
				out[j] = math.Float32frombits(math.Float32bits(x) &^ (1 << 31))
			}
		}
	case ops.Square:
		for j, x := range out {
			if x == x {
				out[j] = x * x
			}
		}
	case ops.Sqrt:
		for j, x := range out {
			if x == x {
				out[j] = float32(math.Sqrt(float64(x)))
			}
		}
	case ops.Log:
		for j, x := range out {
			if x == x {
				out[j] = float32(math.Log(float64(x)))
			}
		}
	case ops.Exp:
		for j, x := range out {
			if x == x {
				out[j] = float32(math.Exp(float64(x)))
			}
		}
	default:
		for j, x := range out {
			out[j] = plan.Eltwise(op.Kind, op.Alpha, op.Beta, x)
		}
	}
}
