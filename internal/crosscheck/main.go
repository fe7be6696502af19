// Command crosscheck compares gdnn's reduction results with oneDNN's own, element by element,
// on random benchdnn-style problems. bench/onednn/crosscheck.sh builds it and the oneDNN side
// (bench/onednn/crosscheck.c, a co-process linked with -ldnnl) and runs it; see there.
//
// For each problem (alg, p and eps, src and dst data types, src and dst format tags, dims,
// reduced axes, an optional sum post-op) it fills a logical src (and for a sum the dst before
// the run) from the seed, lets oneDNN run its reduction primitive on it in oneDNN's physical
// layout, hands the very same physical bytes with the same tags to a gdnn partition built from
// the public API (benchdnn's algs as gdnnbench builds them: Lp norms as Abs or Square ->
// ReduceSum -> Maximum or Add of eps -> Sqrt; the sum post-op as an Add of the previous dst,
// in place for scale 1 and zero point 0, else of scale * (dst - zp) computed here in f32, as
// oneDNN computes it), and compares the two dsts logically. The fills keep every sum and
// product exact in f32, so the libraries may differ only by their final roundings: a float
// dst must agree within benchdnn's threshold (epsilon of the dst type, 5x for the Lp norms),
// an integer dst exactly. A float64 reference of gdnn's semantics (README, Semantics) says,
// for every difference, which side it agrees with.
//
// With -edge F a fraction F of the float problems also holds NaN, +-Inf and -0 (and for max
// and min the largest finite values), or only zeros of both signs. oneDNN 2.6 is not IEEE
// there everywhere (max and min may drop a NaN); an edge problem where gdnn equals the
// reference and oneDNN does not is listed as "oneDNN differs" and does not fail the run, any
// other difference does. A -0 against a +0 is counted, not failed. The exit status is 1 on
// any failing difference, 2 on a usage or set-up error. Problem i of a seed depends on the
// seed and i alone: -index i runs it again.
//
// The instruction set is gdnn's own choice, capped by GDNN_MAX_CPU_ISA (avx512, avx2, none
// for the interpreter), as everywhere.
package main

import (
	"bufio"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/layout"
	"github.com/gdnn/gdnn/partition"
)

var algs = []string{"sum", "max", "min", "mul", "mean", "norm_lp_max", "norm_lp_sum", "norm_lp_power_p_max", "norm_lp_power_p_sum"}

// problem is one cross-check case.
type problem struct {
	alg        string
	p, eps     float32
	sdt, ddt   dtypes.DataType
	stag, dtag string
	src, dst   []int64
	sum        bool
	scale      float32
	zp         int32
	edge       bool
	fill       string // what the src holds (for the summary)
}

func (pr *problem) isNorm() bool { return strings.HasPrefix(pr.alg, "norm") }

func dimsStr(d []int64) string {
	s := make([]string, len(d))
	for i, v := range d {
		s[i] = strconv.FormatInt(v, 10)
	}
	return strings.Join(s, "x")
}

func (pr *problem) sumStr() string {
	if !pr.sum {
		return "-"
	}
	return fmt.Sprintf("%g:%d", pr.scale, pr.zp)
}

// String is the problem as benchdnn's repro line spells it.
func (pr *problem) String() string {
	s := fmt.Sprintf("--reduction --alg=%s", pr.alg)
	if pr.isNorm() {
		s += fmt.Sprintf(" --p=%g --eps=%g", pr.p, pr.eps)
	}
	s += fmt.Sprintf(" --sdt=%s --ddt=%s --stag=%s --dtag=%s", pr.sdt, pr.ddt, pr.stag, pr.dtag)
	if pr.sum {
		s += fmt.Sprintf(" --attr-post-ops=sum:%g:%d", pr.scale, pr.zp)
	}
	return s + " " + dimsStr(pr.src) + ":" + dimsStr(pr.dst)
}

func isInt(dt dtypes.DataType) bool { return dt == dtypes.S8 || dt == dtypes.U8 || dt == dtypes.S32 }

func pick[T any](r *rand.Rand, xs ...T) T { return xs[r.Intn(len(xs))] }

// tagFor returns a tag of rank n from the kinds benchdnn's reduction batches use.
func tagFor(r *rand.Rand, n int) string {
	switch {
	case n == 1:
		return "abx"
	case n == 2:
		return pick(r, "abx", "abx", "ba", "AB16a16b")
	case r.Intn(3) == 0:
		return "abx"
	}
	tags := []string{"axb", "aBx8b", "aBx16b", "aBx32b", "aBx4b", "ABx16a16b", "ABx32a32b", "ABx8a8b", "ABx4a4b"}
	switch n {
	case 3:
		tags = append(tags, "acb", "bac", "ABc32a16b")
	case 4:
		tags = append(tags, "acdb", "bacd", "ABcd32a16b", "Acdb16a")
	case 5:
		tags = append(tags, "acdeb", "ABcde32a16b")
	}
	return pick(r, tags...)
}

// gen draws a problem.
func gen(r *rand.Rand, maxElems int64, edgeFrac float64) *problem {
	pr := &problem{alg: pick(r, algs...)}
	if pr.alg == "norm_lp_max" || pr.alg == "norm_lp_sum" || pr.alg == "norm_lp_power_p_max" || pr.alg == "norm_lp_power_p_sum" {
		pr.p = pick(r, float32(1), 2, 2, 1, 1, 2, 2, 3)
		pr.eps = pick(r, float32(0), 0.5, 1, 1e-3, 16)
	}
	// oneDNN 2.6 refuses (on CPU) f16, float src into integer dst, s8 into u8 and u8 into s8,
	// and Lp norms of integer src: those are drawn rarely, to show it still does.
	pr.sdt = pick(r, dtypes.F32, dtypes.F32, dtypes.BF16, dtypes.BF16, dtypes.S8, dtypes.U8)
	if r.Intn(30) == 0 {
		pr.sdt = dtypes.F16
	}
	if isInt(pr.sdt) {
		pr.ddt = pick(r, pr.sdt, dtypes.S32, dtypes.F32)
		if r.Intn(20) == 0 {
			pr.ddt = pick(r, dtypes.S8, dtypes.U8, dtypes.BF16)
		}
		if pr.isNorm() && r.Intn(10) != 0 {
			pr.sdt, pr.ddt = dtypes.F32, dtypes.F32
		}
	} else {
		pr.ddt = pick(r, pr.sdt, dtypes.F32)
		if r.Intn(20) == 0 {
			pr.ddt = pick(r, dtypes.S8, dtypes.U8, dtypes.S32)
		}
	}
	rank := 1 + r.Intn(5)
	budget := maxElems
	if r.Intn(10) != 0 {
		budget = min(budget, 1<<14)
	}
	for {
		pr.src = make([]int64, rank)
		n := int64(1)
		for i := range pr.src {
			d := pick(r, int64(1), 2, 3, 5, 7, 8, 13, 16, 17, 31, 32, 33, 64, 100, 257)
			if r.Intn(8) == 0 {
				d = 1 + r.Int63n(1200)
			}
			pr.src[i] = d
			n *= d
		}
		if n <= budget {
			break
		}
	}
	pr.dst = append([]int64(nil), pr.src...)
	for i := range pr.dst {
		if r.Intn(2) == 0 {
			pr.dst[i] = 1
		}
	}
	// oneDNN wants a reduction: some dim above 1 reduced.
	if pr.reducedCount() == 1 {
		i := r.Intn(rank)
		if pr.src[i] == 1 {
			pr.src[i] = pick(r, int64(2), 3, 16, 17)
		}
		pr.dst[i] = 1
	}
	pr.stag = tagFor(r, rank)
	pr.dtag = pr.stag
	if r.Intn(3) == 0 {
		pr.dtag = tagFor(r, rank)
	}
	if r.Intn(6) == 0 {
		// gdnn fuses the sum's previous dst as a strided operand only.
		if l, err := layout.Parse(pr.dtag, rank); err == nil && l.Blocked() && r.Intn(4) != 0 {
			pr.dtag = "abx"
		}
		pr.sum = true
		pr.scale = pick(r, float32(1), 1, 2, 0.5, -1)
		if isInt(pr.ddt) && r.Intn(3) == 0 {
			pr.zp = pick(r, int32(1), 3, -2)
		}
	}
	pr.edge = !isInt(pr.sdt) && r.Float64() < edgeFrac
	return pr
}

// reducedCount is the number of src elements per output.
func (pr *problem) reducedCount() int64 {
	n := int64(1)
	for i := range pr.src {
		if pr.dst[i] != pr.src[i] {
			n *= pr.src[i]
		}
	}
	return n
}

func numel(d []int64) int64 {
	n := int64(1)
	for _, v := range d {
		n *= v
	}
	return n
}

// fillSrc returns the logical src values: exact in sdt, and such that every sum of the
// problem's alg is exact in f32 and every product stays far from the f32 range.
func fillSrc(r *rand.Rand, pr *problem) []float64 {
	n := numel(pr.src)
	nred := pr.reducedCount()
	v := make([]float64, n)
	quarter := func(k int) float64 { return float64(r.Intn(2*k+1)-k) / 4 }
	switch {
	case pr.alg == "max" || pr.alg == "min":
		pr.fill = "random"
		for i := range v {
			switch pr.sdt {
			case dtypes.S8:
				v[i] = float64(r.Intn(256) - 128)
			case dtypes.U8:
				v[i] = float64(r.Intn(256))
			default:
				x := float32(r.NormFloat64() * math.Pow(2, float64(r.Intn(20)-10)))
				v[i] = float64(dtypes.LoadF32(pr.sdt, roundBytes(pr.sdt, x), 0))
			}
		}
	case pr.alg == "mul":
		// +-1 with a few factors 2, 1/2 (3 for integers) and rare zeros.
		pr.fill = "pow2"
		q := min(0.25, 6/float64(nred))
		for i := range v {
			x := 1.0
			if r.Float64() < q {
				if isInt(pr.sdt) {
					x = pick(r, 2.0, 3)
				} else {
					x = pick(r, 2.0, 0.5, 4)
				}
			}
			if pr.sdt != dtypes.U8 && r.Intn(2) == 0 {
				x = -x
			}
			if r.Intn(4*int(min(nred, 1<<20))+50) == 0 {
				x = 0
			}
			v[i] = x
		}
	default: // sums, means, norms
		// Every partial sum a multiple of the unit (1 for integers, 1/4 for floats, 1/16
		// for their squares) below 2^24 units, so exact in f32 in any order: |x| (or x²)
		// at most lim units.
		pr.fill = "quarters"
		lim := (1 << 24) / nred
		if pr.p == 2 {
			lim = int64(math.Sqrt(float64(lim)))
		}
		k := int(max(1, min(lim, 32)))
		for i := range v {
			switch pr.sdt {
			case dtypes.S8:
				k := int(max(1, min(lim, 128)))
				v[i] = float64(r.Intn(2*k) - k)
			case dtypes.U8:
				v[i] = float64(r.Intn(int(max(1, min(lim, 255))) + 1))
			default:
				v[i] = quarter(k)
			}
		}
	}
	if pr.edge {
		pr.fill += "+edge"
		// The largest finite values for max and min only: in a sum they overflow, or absorb
		// the exact part, at a point that depends on the order of the adds, and a product
		// past the range overflows in pieces (README, Semantics).
		specials := []float64{math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 0, math.MaxFloat32, -math.MaxFloat32}
		if pr.sdt != dtypes.F32 || (pr.alg != "max" && pr.alg != "min") {
			specials = specials[:5]
		}
		allZero := r.Intn(4) == 0 // outputs of only +-0 say how each side signs a zero
		q := pick(r, 0.01, 0.1, 0.5)
		for i := range v {
			switch {
			case allZero:
				v[i] = pick(r, 0.0, math.Copysign(0, -1), math.Copysign(0, -1))
			case r.Float64() < q:
				v[i] = pick(r, specials...)
			}
		}
	}
	return v
}

// fillPrev returns the logical dst before the run, for a sum post-op.
func fillPrev(r *rand.Rand, pr *problem) []float64 {
	v := make([]float64, numel(pr.dst))
	for i := range v {
		switch pr.ddt {
		case dtypes.U8:
			v[i] = float64(r.Intn(40))
		case dtypes.S8, dtypes.S32:
			v[i] = float64(r.Intn(41) - 20)
		default:
			v[i] = float64(r.Intn(33)-16) / 4
		}
	}
	return v
}

func roundBytes(dt dtypes.DataType, x float32) []byte {
	b := make([]byte, 4)
	dtypes.StoreF32(dt, b, 0, x)
	return b
}

func encode(dt dtypes.DataType, v []float64) []byte {
	b := make([]byte, len(v)*dt.Size())
	for i, x := range v {
		if dt == dtypes.S32 {
			binary.LittleEndian.PutUint32(b[4*i:], uint32(int32(x)))
			continue
		}
		dtypes.StoreF32(dt, b, int64(i), float32(x))
	}
	return b
}

func load(dt dtypes.DataType, b []byte, i int64) float64 {
	if dt == dtypes.S32 {
		return float64(int32(binary.LittleEndian.Uint32(b[4*i:])))
	}
	return float64(dtypes.LoadF32(dt, b, i))
}

// onednn is the co-process.
type onednn struct {
	cmd  *exec.Cmd
	in   *bufio.Writer
	out  *bufio.Reader
	info string
}

func startOneDNN(path string) (*onednn, error) {
	cmd := exec.Command(path)
	cmd.Stderr = os.Stderr
	w, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	rd, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	o := &onednn{cmd: cmd, in: bufio.NewWriterSize(w, 1<<20), out: bufio.NewReaderSize(rd, 1<<20)}
	line, err := o.out.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "READY ") {
		return nil, fmt.Errorf("%s did not start: %q %v", path, line, err)
	}
	o.info = strings.TrimSpace(strings.TrimPrefix(line, "READY "))
	return o, nil
}

// result of one oneDNN run.
type onednnRun struct {
	impl, no       string
	srcPhys, dst0P []byte
	dst            []byte // logical
}

func (o *onednn) run(pr *problem, src, prev []byte) (*onednnRun, error) {
	fmt.Fprintf(o.in, "%s %g %g %s %s %s %s %s:%s %s\n", pr.alg, pr.p, pr.eps, pr.sdt, pr.ddt, pr.stag, pr.dtag,
		dimsStr(pr.src), dimsStr(pr.dst), pr.sumStr())
	o.in.Write(src)
	if pr.sum {
		o.in.Write(prev)
	}
	if err := o.in.Flush(); err != nil {
		return nil, err
	}
	line, err := o.out.ReadString('\n')
	if err != nil {
		return nil, fmt.Errorf("oneDNN side: %v", err)
	}
	f := strings.Fields(line)
	if len(f) >= 2 && f[0] == "NO" {
		return &onednnRun{no: f[1]}, nil
	}
	if len(f) != 4 || f[0] != "OK" {
		return nil, fmt.Errorf("oneDNN side: bad answer %q", line)
	}
	sb, _ := strconv.Atoi(f[2])
	db, _ := strconv.Atoi(f[3])
	res := &onednnRun{impl: f[1], srcPhys: make([]byte, sb), dst0P: make([]byte, db), dst: make([]byte, numel(pr.dst)*int64(pr.ddt.Size()))}
	for _, b := range [][]byte{res.srcPhys, res.dst0P, res.dst} {
		if _, err := io.ReadFull(o.out, b); err != nil {
			return nil, fmt.Errorf("oneDNN side: %v", err)
		}
	}
	return res, nil
}

// runGdnn builds and runs pr on gdnn over the physical src (and dst before the run), and
// returns the logical dst, the implementation, and a non-empty reason where gdnn does not
// compute the problem.
func runGdnn(pr *problem, srcPhys, dst0Phys []byte) (dst []byte, impl, unsupported string, err error) {
	rank := len(pr.src)
	var axes []int64
	for i := range pr.src {
		if pr.dst[i] == 1 && pr.src[i] != 1 {
			axes = append(axes, int64(i))
		}
	}
	ones := make([]int64, rank)
	for i := range ones {
		ones[i] = 1
	}
	type step struct {
		kind    graph.OpKind
		attrs   map[string]any
		operand *graph.LogicalTensor
	}
	var pre graph.OpKind
	var steps []step
	red := map[string]graph.OpKind{"sum": graph.ReduceSum, "max": graph.ReduceMax, "min": graph.ReduceMin,
		"mul": graph.ReduceProd, "mean": graph.ReduceMean}[pr.alg]
	nextID := uint64(10)
	id := func() uint64 { nextID++; return nextID }
	bin := func(k graph.OpKind, lt graph.LogicalTensor) {
		steps = append(steps, step{kind: k, attrs: map[string]any{"auto_broadcast": "numpy"}, operand: &lt})
	}
	operandData := map[uint64]any{}
	if pr.isNorm() {
		switch pr.p {
		case 1:
			pre = graph.Abs
		case 2:
			pre = graph.Square
		default:
			return nil, "", fmt.Sprintf("p=%g: gdnn computes Lp norms for p 1 and 2 only", pr.p), nil
		}
		red = graph.ReduceSum
		epsLT := graph.NewLogicalTensor(id(), dtypes.F32, ones)
		operandData[epsLT.ID] = []float32{pr.eps}
		if strings.HasSuffix(pr.alg, "_max") {
			bin(graph.Maximum, epsLT)
		} else {
			bin(graph.Add, epsLT)
		}
		if pr.p == 2 && !strings.Contains(pr.alg, "power_p") {
			steps = append(steps, step{kind: graph.Sqrt, attrs: map[string]any{}})
		}
	}
	outLT := graph.NewLogicalTensorBlocked(1, pr.ddt, pr.dst, pr.dtag)
	dstL, err := layout.Parse(pr.dtag, rank)
	if err != nil {
		return nil, "", "", err
	}
	dstDesc, err := dstL.Desc(pr.dst)
	if err != nil {
		return nil, "", "", err
	}
	outBuf := make([]byte, dstDesc.Span()*int64(pr.ddt.Size()))
	inPlace := false
	if pr.sum {
		if pr.scale == 1 && pr.zp == 0 {
			inPlace = true
			acc := graph.NewLogicalTensorBlocked(2, pr.ddt, pr.dst, pr.dtag)
			if !dstL.Blocked() {
				acc = graph.NewLogicalTensorStrided(2, pr.ddt, pr.dst, dstL.Strides(pr.dst))
			}
			copy(outBuf, dst0Phys)
			bin(graph.Add, acc)
		} else {
			// scale * (prev - zp) in f32, as oneDNN's sum computes it, as a dense operand.
			acc := graph.NewLogicalTensor(2, dtypes.F32, pr.dst)
			vals := make([]float32, numel(pr.dst))
			idx := make([]int64, rank)
			for i := range vals {
				prev := float32(load(pr.ddt, dst0Phys, dstDesc.Offset(idx)))
				vals[i] = pr.scale * (prev - float32(pr.zp))
				for d := rank - 1; d >= 0; d-- {
					if idx[d]++; idx[d] < pr.dst[d] {
						break
					}
					idx[d] = 0
				}
			}
			operandData[acc.ID] = vals
			bin(graph.Add, acc)
		}
	}
	srcLT := graph.NewLogicalTensorBlocked(0, pr.sdt, pr.src, pr.stag)
	g := graph.New()
	cur := srcLT
	// The chain's tensors have the dst type; a chain into an integer dst computes in f32
	// (gdnn keeps integers at the end of a chain, as gdnnbench builds it).
	midDT := pr.ddt
	if isInt(midDT) {
		midDT = dtypes.F32
	}
	mid := func() graph.LogicalTensor { return graph.NewLogicalTensorAny(id(), midDT, nil) }
	preOut := func() graph.LogicalTensor { return graph.NewLogicalTensorAny(id(), pr.sdt, nil) } // Abs and Square keep the type
	opID := uint64(0)
	add := func(op *graph.Op) error {
		opID++
		return g.AddOp(op)
	}
	last := func(i int) bool { return i == len(steps) }
	if pre != 0 {
		o := preOut()
		if err := add(graph.NewOp(opID, pre, "pre").AddInput(cur).AddOutput(o)); err != nil {
			return nil, "", "", err
		}
		cur = o
	}
	o := outLT
	if !last(0) {
		o = mid()
	}
	if err := add(graph.NewOp(opID, red, "reduce").AddInput(cur).AddOutput(o).
		SetAttr("axes", axes).SetAttr("keep_dims", true)); err != nil {
		return nil, "", "", err
	}
	cur = o
	for i, s := range steps {
		o := outLT
		if !last(i + 1) {
			o = mid()
		}
		op := graph.NewOp(opID, s.kind, "post").AddInput(cur)
		if s.operand != nil {
			op.AddInput(*s.operand)
		}
		for k, v := range s.attrs {
			op.SetAttr(k, v)
		}
		if err := add(op.AddOutput(o)); err != nil {
			return nil, "", "", err
		}
		cur = o
	}
	if err := g.Finalize(); err != nil {
		return nil, "", "", err
	}
	parts, err := partition.Get(g, partition.Fusion)
	if err != nil {
		return nil, "", "", err
	}
	if len(parts) != 1 || !parts[0].IsSupported() {
		why := fmt.Sprintf("%d partitions", len(parts))
		for _, p := range parts {
			if !p.IsSupported() {
				why += ": " + p.Reason()
			}
		}
		return nil, "", why, nil
	}
	p := parts[0]
	cp, err := p.Compile(p.Inputs(), p.Outputs())
	if err != nil {
		return nil, "", "", err
	}
	var ins []partition.Tensor
	for _, lt := range cp.Inputs() {
		var data any
		switch {
		case lt.ID == 0:
			data = srcPhys
		case lt.ID == 2 && inPlace:
			data = outBuf
		default:
			data = operandData[lt.ID]
		}
		t, err := partition.NewTensor(lt, data)
		if err != nil {
			return nil, "", "", fmt.Errorf("input %d: %v", lt.ID, err)
		}
		ins = append(ins, t)
	}
	ot, err := partition.NewTensor(cp.Outputs()[0], outBuf)
	if err != nil {
		return nil, "", "", err
	}
	if err := cp.Execute(ins, []partition.Tensor{ot}); err != nil {
		return nil, "", "", err
	}
	dst = make([]byte, numel(pr.dst)*int64(pr.ddt.Size()))
	idx := make([]int64, rank)
	es := int64(pr.ddt.Size())
	for i := int64(0); i < numel(pr.dst); i++ {
		off := dstDesc.Offset(idx) * es
		copy(dst[i*es:(i+1)*es], outBuf[off:off+es])
		for d := rank - 1; d >= 0; d-- {
			if idx[d]++; idx[d] < pr.dst[d] {
				break
			}
			idx[d] = 0
		}
	}
	impl = cp.Impl()
	if cp.Reason() != "" && impl != "interp" {
		impl += " (part interpreted)"
	}
	return dst, impl, "", nil
}

// reference computes gdnn's semantics in float64 over the logical src, then the dst rounding.
func reference(pr *problem, src, prev []float64) []float64 {
	rank := len(pr.src)
	nd := numel(pr.dst)
	acc := make([]float64, nd)
	id := 0.0
	switch pr.alg {
	case "mul":
		id = 1
	case "max":
		id = math.Inf(-1)
	case "min":
		id = math.Inf(1)
	}
	for i := range acc {
		acc[i] = id
	}
	dstStr := make([]int64, rank)
	s := int64(1)
	for d := rank - 1; d >= 0; d-- {
		if pr.dst[d] != 1 {
			dstStr[d] = s
		}
		s *= pr.dst[d]
	}
	idx := make([]int64, rank)
	for i := range src {
		o := int64(0)
		for d := range idx {
			o += idx[d] * dstStr[d]
		}
		x := src[i]
		a := acc[o]
		switch pr.alg {
		case "mul":
			a *= x
		case "max", "min":
			if math.IsNaN(a) || math.IsNaN(x) {
				a = math.NaN()
			} else if (pr.alg == "max") == (x > a || (x == 0 && a == 0 && !math.Signbit(x))) {
				a = x
			}
		default:
			if pr.isNorm() {
				x = math.Pow(math.Abs(x), float64(pr.p))
			}
			a += x
		}
		acc[o] = a
		for d := rank - 1; d >= 0; d-- {
			if idx[d]++; idx[d] < pr.src[d] {
				break
			}
			idx[d] = 0
		}
	}
	n := float64(pr.reducedCount())
	out := make([]float64, nd)
	for i, a := range acc {
		if a == 0 && (pr.alg == "sum" || pr.alg == "mean") {
			a = math.Abs(a) // a sum from +0
		}
		switch pr.alg {
		case "mean":
			a /= n
		case "norm_lp_max", "norm_lp_power_p_max":
			a = math.Max(a, float64(pr.eps))
		case "norm_lp_sum", "norm_lp_power_p_sum":
			a += float64(pr.eps)
		}
		if strings.HasPrefix(pr.alg, "norm_lp_") && !strings.Contains(pr.alg, "power_p") {
			a = math.Pow(a, 1/float64(pr.p))
		}
		a = float64(float32(a)) // the f32 result
		if pr.sum {
			a = float64(float32(a) + pr.scale*(float32(prev[i])-float32(pr.zp)))
		}
		out[i] = load(pr.ddt, roundBytes(pr.ddt, float32(a)), 0)
		if pr.ddt == dtypes.S32 {
			out[i] = float64(dtypes.F32ToS32(float32(a)))
		}
	}
	return out
}

// agree reports whether a and b agree within benchdnn's threshold for pr.
func agree(pr *problem, a, b float64) bool {
	switch {
	case math.IsNaN(a) || math.IsNaN(b):
		return math.IsNaN(a) && math.IsNaN(b)
	case math.IsInf(a, 0) || math.IsInf(b, 0):
		return a == b
	case isInt(pr.ddt):
		return a == b
	}
	trh := 1.0 / (1 << 23)
	switch pr.ddt {
	case dtypes.BF16:
		trh = 1.0 / (1 << 7)
	case dtypes.F16:
		trh = 1.0 / (1 << 10)
	}
	if pr.isNorm() {
		trh *= 5
	}
	m := math.Max(math.Max(math.Abs(a), math.Abs(b)), 0x1p-126)
	return math.Abs(a-b) <= trh*m
}

type counts struct{ run, pass, fail, differs, onednnNo, gdnnNo int }

func main() {
	onednnPath := flag.String("onednn", "", "the oneDNN side (crosscheck.c built)")
	n := flag.Int("n", 1000, "problems to run")
	seed := flag.Int64("seed", 1, "random seed")
	maxElems := flag.Int64("max-elems", 1<<20, "largest src, elements")
	edge := flag.Float64("edge", 0.15, "fraction of float problems with NaN, Inf, -0 and the largest values")
	verbose := flag.Bool("v", false, "print every problem")
	only := flag.String("alg", "", "only this alg")
	index := flag.Int("index", -1, "run only problem number INDEX of the seed's sequence (a repro)")
	onlyDT := flag.String("dt", "", "only problems with these data types, SDT:DDT (e.g. f32:s8)")
	flag.Parse()
	if *onednnPath == "" {
		fmt.Fprintln(os.Stderr, "crosscheck: -onednn is required (bench/onednn/crosscheck.sh builds it)")
		os.Exit(2)
	}
	o, err := startOneDNN(*onednnPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, "crosscheck:", err)
		os.Exit(2)
	}
	fmt.Printf("crosscheck: oneDNN %s, seed %d, %d problems, GDNN_MAX_CPU_ISA=%q\n", o.info, *seed, *n, os.Getenv("GDNN_MAX_CPU_ISA"))
	byKey := map[string]*counts{}
	bump := func(k string, f func(c *counts)) {
		c := byKey[k]
		if c == nil {
			c = &counts{}
			byKey[k] = c
		}
		f(c)
	}
	impls := map[string]int{}
	onednnNo, gdnnNo := map[string]int{}, map[string]int{}
	zeroSign := map[string]int{}
	differsBy := map[string]int{}
	failed, differs := 0, 0
	for i := 0; i < *n; i++ {
		if *index >= 0 && i != *index {
			continue
		}
		r := rand.New(rand.NewSource(*seed*1_000_003 + int64(i)))
		pr := gen(r, *maxElems, *edge)
		if (*only != "" && pr.alg != *only) || (*onlyDT != "" && *onlyDT != pr.sdt.String()+":"+pr.ddt.String()) {
			continue
		}
		src := fillSrc(r, pr)
		var prev []float64
		if pr.sum {
			prev = fillPrev(r, pr)
		}
		keys := []string{"alg " + pr.alg, "dt " + pr.sdt.String() + ":" + pr.ddt.String(), "stag " + pr.stag, "dtag " + pr.dtag}
		if pr.sum {
			keys = append(keys, "post-op sum")
		}
		if pr.edge {
			keys = append(keys, "edge values")
		}
		for _, k := range keys {
			bump(k, func(c *counts) { c.run++ })
		}
		res, err := o.run(pr, encode(pr.sdt, src), encode(pr.ddt, prev))
		if err != nil {
			fmt.Fprintln(os.Stderr, "crosscheck:", err, "at", pr)
			os.Exit(2)
		}
		if res.no != "" {
			onednnNo[res.no+" "+pr.sdt.String()+":"+pr.ddt.String()]++
			for _, k := range keys {
				bump(k, func(c *counts) { c.onednnNo++ })
			}
			if *verbose {
				fmt.Printf("onednn-no #%d %s: %s\n", i, res.no, pr)
			}
			continue
		}
		got, impl, why, err := runGdnn(pr, res.srcPhys, res.dst0P)
		if err != nil {
			why = "error: " + err.Error()
		}
		if why != "" {
			if len(why) > 160 {
				why = why[:160]
			}
			gdnnNo[why]++
			for _, k := range keys {
				bump(k, func(c *counts) { c.gdnnNo++ })
			}
			if *verbose {
				fmt.Printf("gdnn-no #%d %s: %s\n", i, why, pr)
			}
			continue
		}
		impls[impl+" / onednn "+res.impl]++
		ref := reference(pr, src, prev)
		var lines []string
		bad, onlyOneDNN := 0, true
		for j := range ref {
			a, b := load(pr.ddt, res.dst, int64(j)), load(pr.ddt, got, int64(j))
			if a == 0 && b == 0 && math.Signbit(a) != math.Signbit(b) {
				zeroSign[fmt.Sprintf("%s: oneDNN %g, gdnn %g, reference %g", pr.alg, a, b, ref[j])]++
			}
			if agree(pr, a, b) {
				continue
			}
			bad++
			gRef, oRef := agree(pr, b, ref[j]), agree(pr, a, ref[j])
			if !(gRef && !oRef) {
				onlyOneDNN = false
			}
			if len(lines) < 8 {
				lines = append(lines, fmt.Sprintf("  [%d] onednn %g gdnn %g ref %g (gdnn=ref %v, onednn=ref %v)", j, a, b, ref[j], gRef, oRef))
			}
		}
		state := "PASSED"
		switch {
		case bad == 0:
			for _, k := range keys {
				bump(k, func(c *counts) { c.pass++ })
			}
		case pr.edge && onlyOneDNN:
			state = "ONEDNN-DIFFERS"
			differs++
			differsBy[pr.alg+" "+pr.sdt.String()+":"+pr.ddt.String()+" oneDNN "+res.impl]++
			for _, k := range keys {
				bump(k, func(c *counts) { c.differs++ })
			}
		default:
			state = "MISMATCH"
			failed++
			for _, k := range keys {
				bump(k, func(c *counts) { c.fail++ })
			}
		}
		if bad > 0 || *verbose {
			fmt.Printf("%s #%d (%d of %d differ, fill %s, gdnn %s, onednn %s): %s\n", state, i, bad, len(ref), pr.fill, impl, res.impl, pr)
			for _, l := range lines {
				fmt.Println(l)
			}
		}
	}
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fmt.Printf("\n%-28s %6s %6s %6s %8s %9s %8s\n", "", "run", "pass", "fail", "differs", "onednn-no", "gdnn-no")
	for _, k := range keys {
		c := byKey[k]
		fmt.Printf("%-28s %6d %6d %6d %8d %9d %8d\n", k, c.run, c.pass, c.fail, c.differs, c.onednnNo, c.gdnnNo)
	}
	printMap := func(title string, m map[string]int) {
		if len(m) == 0 {
			return
		}
		fmt.Println(title)
		ks := make([]string, 0, len(m))
		for k := range m {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		for _, k := range ks {
			fmt.Printf("  %5d %s\n", m[k], k)
		}
	}
	printMap("implementations (gdnn / oneDNN):", impls)
	printMap("not run by oneDNN:", onednnNo)
	printMap("not run by gdnn:", gdnnNo)
	printMap("zero results of opposite signs (not failures):", zeroSign)
	printMap("edge problems where oneDNN differs and gdnn is the reference (not failures):", differsBy)
	fmt.Printf("crosscheck: %d mismatches, %d edge problems where oneDNN differs and gdnn is the reference\n", failed, differs)
	if failed > 0 {
		os.Exit(1)
	}
}
