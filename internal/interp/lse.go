package interp

import (
	"math"

	"github.com/gdnn/gdnn/internal/plan"
)

// maxOf is the reduction lseRow's first pass combines with.
var maxOf = plan.AlgMax.Reduction(0, 0)

// lseRow sets row[j] to the log-sum-exp of the elements of output j (its
// reduced elements from base + j*stride) in two passes, as
// plan.LogSumExp says: the largest element m, then LSEShift(m) +
// log(sum(exp(x - LSEShift(m)))).
func (e *exec) lseRow(row []float64, base, stride int) {
	for j := range row {
		row[j] = math.Inf(-1)
	}
	e.forRows(base, func(off int) { e.src.foldRow(&maxOf, row, off, stride) })
	shift := e.shift[:len(row)]
	for j := range row {
		shift[j], row[j] = plan.LSEShift(row[j]), 0
	}
	e.forRows(base, func(off int) {
		for j := range row {
			row[j] += math.Exp(float64(e.src.at(off+j*stride)) - shift[j])
		}
	})
	for j := range row {
		row[j] = shift[j] + math.Log(row[j])
	}
}
