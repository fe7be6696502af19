package interp

import "github.com/gdnn/gdnn/internal/plan"

// lseRow sets acc[j] to the log-sum-exp of the elements of output j of
// the row at src offset base, in two passes as plan.LogSumExp says: the
// largest element m, then LSEShift(m) + log(sum(exp(x - LSEShift(m)))).
func (e *exec) lseRow(acc []float64, base int) {
	shift := e.shift[:len(acc)]
	e.reduceRow(kMax, shift, base)
	for j, m := range shift {
		shift[j] = plan.LSEShift(m)
	}
	e.reduceRow(kExpShift, acc, base)
	for j, s := range acc {
		acc[j] = shift[j] + plan.LogF64(s)
	}
}
