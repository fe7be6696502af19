package bench

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/shape"
	"github.com/gdnn/gdnn/internal/status"
	"github.com/gdnn/gdnn/partition"
)

// caseDirEnv names a folder searched first for --case files.
const caseDirEnv = "GDNN_GRAPH_CASE_DIR"

// graphOption handles the graph driver's knobs; --case runs.
func (r *runner) graphOption(a Arg, name, val string, hasVal bool) (bool, error) {
	s := &r.gr
	def := defaultGraph(s.perfTpl)
	switch name {
	case "case", "mb", "in-shapes", "op-attrs", "dt", "expected-n-partitions", "op-kind", "tensor-property":
		if !hasVal {
			return true, inputErr(a, "option --%s needs a value (--%s=VALUE)", name, name)
		}
	default:
		return r.commonDriverOption(a, name, val, hasVal, &s.match, &s.impl, &s.skip, &s.perfTpl, TemplateGraphCSV)
	}
	items := splitList(val)
	switch name {
	case "case":
		r.trailing = nil
		return true, r.runGraphCase(a, val)
	case "mb":
		s.mb = def.mb
		if items != nil {
			s.mb = nil
			for _, it := range items {
				n, err := strconv.ParseInt(it, 10, 64)
				if err != nil || n < 0 {
					return true, inputErr(a, "--mb: %q is not a non-negative integer", it)
				}
				s.mb = append(s.mb, n)
			}
		}
	case "in-shapes":
		s.inShapes = strings.Split(val, ",")
		for _, it := range s.inShapes {
			if _, err := ParseInShapes(it); err != nil {
				return true, wrapInput(a, err)
			}
		}
	case "op-attrs":
		s.opAttrs = strings.Split(val, ",")
		for _, it := range s.opAttrs {
			if _, err := ParseOpAttrs(it); err != nil {
				return true, wrapInput(a, err)
			}
		}
	case "dt":
		s.dt = strings.Split(val, ",")
		for _, it := range s.dt {
			if _, err := ParseDT(it); err != nil {
				return true, wrapInput(a, err)
			}
		}
	case "expected-n-partitions":
		s.expectedN = def.expectedN
		if items != nil {
			s.expectedN = nil
			for _, it := range items {
				n, err := strconv.Atoi(it)
				if err != nil || n < 0 {
					return true, inputErr(a, "--expected-n-partitions: %q is not a non-negative integer", it)
				}
				s.expectedN = append(s.expectedN, n)
			}
		}
	case "tensor-property":
		s.tensorProp = strings.Split(val, ",")
		for _, it := range s.tensorProp {
			if _, err := ParseTensorProperty(it); err != nil {
				return true, wrapInput(a, err)
			}
		}
	case "op-kind":
		s.opKind = strings.Split(val, ",")
		for _, it := range s.opKind {
			if _, err := ParseOpKinds(it); err != nil {
				return true, wrapInput(a, err)
			}
		}
	}
	return true, nil
}

// resolveCase finds a --case file: --case-dir (or $GDNN_GRAPH_CASE_DIR)
// first, then the including batch file's folder and each of its parents
// (benchdnn's paths are relative to its inputs/graph folder), then the
// current directory, then the graph folder of each inputs folder
// (--inputs-dir, $GDNN_BENCHDNN_INPUTS), as --batch searches them.
func (r *runner) resolveCase(a Arg, name string) (string, error) {
	if filepath.IsAbs(name) {
		if fileExists(name) {
			return name, nil
		}
		if isDir(name) {
			return "", inputErr(a, "--case: %s is a directory, not a file", name)
		}
		return "", inputErr(a, "--case: no such file %q", name)
	}
	var tried []string
	try := func(dir string) string {
		p := filepath.Join(dir, name)
		if slices.Contains(tried, p) {
			return ""
		}
		tried = append(tried, p)
		if fileExists(p) {
			return p
		}
		return ""
	}
	for _, d := range []string{r.g.caseDir, os.Getenv(caseDirEnv)} {
		if d != "" {
			if p := try(d); p != "" {
				return p, nil
			}
		}
	}
	if a.Dir != "" {
		for d := a.Dir; ; {
			if p := try(d); p != "" {
				return p, nil
			}
			parent := filepath.Dir(d)
			if parent == d {
				break
			}
			d = parent
		}
	}
	if p := try("."); p != "" {
		return p, nil
	}
	for _, d := range inputsDirs(r.g.inputsDir) {
		if p := try(filepath.Join(d, "graph")); p != "" {
			return p, nil
		}
	}
	for _, p := range tried {
		if isDir(p) {
			return "", inputErr(a, "--case: %s is a directory, not a file", p)
		}
	}
	return "", inputErr(a, "--case: cannot find %q (tried %s; set --case-dir or $%s)", name, strings.Join(tried, ", "), caseDirEnv)
}

// graphCase is one graph problem: a case file with one choice of knobs.
type graphCase struct {
	file, caseArg         string
	mb                    int64
	inShapes, opAttrs, dt string
	opKind                string
	tensorProp            string
	expectedN             int
}

func (r *runner) reproGraph(c graphCase) string {
	var b strings.Builder
	b.WriteString(r.globalRepro())
	b.WriteString("--graph ")
	if c.mb != 0 {
		fmt.Fprintf(&b, "--mb=%d ", c.mb)
	}
	if c.inShapes != "" {
		fmt.Fprintf(&b, "--in-shapes=%s ", c.inShapes)
	}
	if c.opAttrs != "" {
		fmt.Fprintf(&b, "--op-attrs=%s ", c.opAttrs)
	}
	if c.opKind != "" {
		fmt.Fprintf(&b, "--op-kind=%s ", c.opKind)
	}
	if c.dt != "" {
		fmt.Fprintf(&b, "--dt=%s ", c.dt)
	}
	if c.tensorProp != "" {
		fmt.Fprintf(&b, "--tensor-property=%s ", c.tensorProp)
	}
	if c.expectedN != 1 {
		fmt.Fprintf(&b, "--expected-n-partitions=%d ", c.expectedN)
	}
	fmt.Fprintf(&b, "--case=%s", c.caseArg)
	return b.String()
}

func (r *runner) runGraphCase(a Arg, name string) error {
	path, err := r.resolveCase(a, name)
	if err != nil {
		return err
	}
	data, err := r.readOnce(path, graph.MaxJSONBytes)
	if errors.Is(err, errTooLarge) {
		return inputErr(a, "--case: %q is larger than %d MiB", path, graph.MaxJSONBytes>>20)
	}
	if err != nil {
		return inputErr(a, "--case: cannot read %q: %v", path, err)
	}
	if r.g.mode.Fast {
		return inputErr(a, "the graph driver does not support --mode=F")
	}
	if strings.ContainsAny(r.g.modeModifier, "Mm") {
		return inputErr(a, "the graph driver does not support --mode-modifier=M")
	}
	s := r.gr
	for _, c := range s.cases(path, name) {
		for rep := 0; rep < r.g.repeats; rep++ {
			repro := r.reproGraph(c)
			if dropped(s.match, "graph", repro) {
				continue
			}
			idx := r.stats.Tests
			r.stats.Tests++
			if r.counting {
				continue
			}
			res := r.doGraph(idx, repro, c, data)
			if res.perf != nil {
				res.perf.Prb = repro
			}
			r.report(idx, repro, res, s.perfTpl)
		}
	}
	return nil
}

// cases are the problems of case file (named caseArg) under the knobs:
// every combination of their values, the first knob varying slowest.
func (s graphSettings) cases(file, caseArg string) []graphCase {
	cs := []graphCase{{file: file, caseArg: caseArg}}
	cs = expand(cs, s.mb, func(c *graphCase, v int64) { c.mb = v })
	cs = expand(cs, s.inShapes, func(c *graphCase, v string) { c.inShapes = v })
	cs = expand(cs, s.opAttrs, func(c *graphCase, v string) { c.opAttrs = v })
	cs = expand(cs, s.opKind, func(c *graphCase, v string) { c.opKind = v })
	cs = expand(cs, s.dt, func(c *graphCase, v string) { c.dt = v })
	cs = expand(cs, s.tensorProp, func(c *graphCase, v string) { c.tensorProp = v })
	return expand(cs, s.expectedN, func(c *graphCase, v int) { c.expectedN = v })
}

// expand is each of cs with each of vals set in turn by set.
func expand[T any](cs []graphCase, vals []T, set func(*graphCase, T)) []graphCase {
	out := make([]graphCase, 0, len(cs)*len(vals))
	for _, c := range cs {
		for _, v := range vals {
			set(&c, v)
			out = append(out, c)
		}
	}
	return out
}

// loadGraph reads the case and applies the knobs, returning a finalized
// graph whose inferred output shapes agree with those the case states
// (checkStatedOutputs).
func loadGraph(c graphCase, data []byte) (*graph.Graph, error) {
	g0, err := graph.ReadJSON(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	shapes, _ := ParseInShapes(c.inShapes)
	attrs, _ := ParseOpAttrs(c.opAttrs)
	kinds, _ := ParseOpKinds(c.opKind)
	if g0, err = removeOps(g0, kinds); err != nil {
		return nil, err
	}
	dto, _ := ParseDT(c.dt)
	produced := map[uint64]bool{}
	for _, op := range g0.Ops() {
		for _, t := range op.Outputs {
			produced[t.ID] = true
		}
	}
	propOf, err := tensorProperties(g0, c.tensorProp)
	if err != nil {
		return nil, err
	}
	stated, layouts := statedOutputDims(g0, c)
	// The graph's input tensors (those no op produces), as the case gives
	// them, then rewritten by --in-shapes and --mb.
	inputs := map[uint64]graph.LogicalTensor{}
	for _, op := range g0.Ops() {
		for _, t := range op.Inputs {
			if _, ok := inputs[t.ID]; !ok && !produced[t.ID] {
				inputs[t.ID] = t.Clone()
			}
		}
	}
	shapeOf := map[uint64]*ShapeOverride{}
	for i, o := range shapes {
		if _, ok := inputs[o.ID]; !ok {
			return nil, status.Errorf(status.InvalidArguments, "--in-shapes: tensor %d is not an input of the graph", o.ID)
		}
		shapeOf[o.ID] = &shapes[i]
	}
	var withMB map[uint64]bool
	if c.mb > 0 {
		withMB = inputsWithMB(g0, inputs)
	}
	for id, t := range inputs {
		mb := int64(0)
		if withMB[id] {
			mb = c.mb
		}
		if shapeOf[id] == nil && mb == 0 {
			continue
		}
		rewritten, err := rewriteInput(t, shapeOf[id], mb)
		if err != nil {
			return nil, err
		}
		inputs[id] = rewritten
	}
	// As benchdnn's --dt (flex_rewrite.cpp, dt_rewrite_norm), a LayerNorm
	// or GroupNorm has only its src and dst retyped: gamma, beta and the
	// statistics keep their types (f32 statistics under 16-bit data).
	normKept := map[uint64]bool{}
	for _, op := range g0.Ops() {
		if op.Kind == graph.LayerNorm || op.Kind == graph.GroupNorm {
			for _, t := range append(append([]graph.LogicalTensor(nil), op.Inputs[min(1, len(op.Inputs)):]...), op.Outputs[min(1, len(op.Outputs)):]...) {
				normKept[t.ID] = true
			}
		}
	}
	retype := func(t graph.LogicalTensor) graph.LogicalTensor {
		if dt, ok := dto.PerID[t.ID]; ok {
			t.DataType = dt
		} else if dto.All != dtypes.Undef && t.DataType.IsFloat() && !normKept[t.ID] {
			t.DataType = dto.All
		}
		return t
	}
	for id := range dto.PerID {
		if _, ok := inputs[id]; !ok && !produced[id] {
			return nil, status.Errorf(status.InvalidArguments, "--dt: tensor %d is not in the graph", id)
		}
	}
	// An op's output, and another op's input it is, as gdnn infers it:
	// with the layout the case gives it, if any.
	laidOut := func(t graph.LogicalTensor) graph.LogicalTensor {
		if s, ok := layouts[t.ID]; ok {
			return graph.NewLogicalTensorStrided(t.ID, t.DataType, stated[t.ID], s)
		}
		return graph.NewLogicalTensorAny(t.ID, t.DataType, nil)
	}
	g := graph.New()
	g.FPMath = g0.FPMath
	seenOps, seenKind := map[uint64]bool{}, map[uint64]bool{}
	for _, op0 := range g0.Ops() {
		op := op0.Clone()
		for i, t := range op.Inputs {
			if in, ok := inputs[t.ID]; ok {
				op.Inputs[i] = retype(in.Clone())
			} else {
				op.Inputs[i] = retype(laidOut(t))
			}
			if p, ok := propOf[t.ID]; ok {
				op.Inputs[i].Property = p
			}
		}
		for i, t := range op.Outputs {
			op.Outputs[i] = retype(laidOut(t))
			if p, ok := propOf[t.ID]; ok {
				op.Outputs[i].Property = p
			}
		}
		for _, k := range kinds {
			if k.OpID != op.ID || k.Remove {
				continue
			}
			seenKind[op.ID] = true
			if !(op.Kind.IsBinary() && k.Kind.IsBinary() || op.Kind.IsEltwise() && k.Kind.IsEltwise()) {
				return nil, status.Errorf(status.InvalidArguments, "--op-kind: %s cannot become %s (binary ops change to binary kinds, eltwise ops to eltwise kinds)", op, k.Kind)
			}
			op.Kind = k.Kind
		}
		for _, a := range attrs {
			if a.OpID != op.ID {
				continue
			}
			seenOps[op.ID] = true
			t, ok := knownAttrTypes[a.Name]
			if cur, has := op.Attr(a.Name); has {
				t, ok = cur.Type, true
			}
			if !ok {
				return nil, status.Errorf(status.InvalidArguments, "--op-attrs: %s has no attribute %q to override", op, a.Name)
			}
			v, err := typedAttr(t, a.Value)
			if err != nil {
				return nil, err
			}
			op.SetAttr(a.Name, v)
		}
		if err := g.AddOp(op); err != nil {
			return nil, err
		}
	}
	for _, a := range attrs {
		if !seenOps[a.OpID] {
			return nil, status.Errorf(status.InvalidArguments, "--op-attrs: op %d is not in the graph", a.OpID)
		}
	}
	for _, k := range kinds {
		if !k.Remove && !seenKind[k.OpID] {
			return nil, status.Errorf(status.InvalidArguments, "--op-kind: op %d is not in the graph", k.OpID)
		}
	}
	if err := g.Finalize(); err != nil {
		return nil, err
	}
	if err := checkStatedOutputs(g, stated); err != nil {
		return nil, err
	}
	return g, nil
}

// statedOutputDims returns the op output shapes the case states that the
// graph must reproduce: every op output whose shape is fully known (not
// null or empty, no unknown dim), by tensor id, and the strides of those
// the case lays out (layout strided, one stride per dim). loadGraph
// rebuilds the other outputs as layout any with unknown dims, so that
// the knobs can change shapes and gdnn infers them; without this record
// a case whose output shape contradicts its op would still run, where
// oneDNN rejects the graph. The outputs laid out keep their dims and
// strides, and a partition's outputs are compiled with them
// (compileOutput), as benchdnn compiles the case's output layouts.
//
// It returns nil (no check) when any knob that can change a shape is set
// for this problem: --in-shapes and --mb rewrite inputs, and --op-attrs
// can change axes or keep_dims, so the case's output shapes describe
// another problem (benchdnn too re-infers them: driver_graph.md). Being
// conservative, any non-empty value counts, even one that happens to keep
// the shapes (e.g. --in-shapes with a tag only). --dt and
// --tensor-property change no shape.
func statedOutputDims(g0 *graph.Graph, c graphCase) (dims, strides map[uint64][]int64) {
	if c.inShapes != "" || c.mb != 0 || c.opAttrs != "" {
		return nil, nil
	}
	dims, strides = map[uint64][]int64{}, map[uint64][]int64{}
	for _, op := range g0.Ops() {
		for _, t := range op.Outputs {
			// An empty shape is not checked: oneDNN writes both a
			// scalar and a tensor of unknown rank as [].
			if t.KnownDims() && len(t.Dims) > 0 {
				dims[t.ID] = slices.Clone(t.Dims)
				if t.Concrete() {
					strides[t.ID] = slices.Clone(t.Strides)
				}
			}
		}
	}
	return dims, strides
}

// compileOutput is the tensor a partition's output t is compiled with:
// t itself where the case laid it out (statedOutputDims), else layout any,
// gdnn's dense choice.
func compileOutput(t graph.LogicalTensor) graph.LogicalTensor {
	if t.Concrete() {
		return t
	}
	return graph.NewLogicalTensorAny(t.ID, t.DataType, nil)
}

// checkStatedOutputs compares the output shapes the case states (stated)
// with the dims gdnn infers for the finalized graph g. These are also the
// dims gdnn compiles: buildGraphPartition compiles with g's own tensors,
// and Compile infers the same chain from them, so a separate check of the
// compiled tensors would find nothing new. Agreement follows
// graph.MergeDims, the rule Finalize applies to dims given through the
// API: same rank, and each dim gdnn infers equal to the stated one; a dim
// or rank gdnn cannot infer (e.g. axes given as a tensor) contradicts
// nothing. A disagreement is InvalidShape, reported as INVALID_ARGUMENTS
// like the other errors of loading a case, since oneDNN refuses such a
// graph.
//
// Outputs the case lays out carry their stated dims into the graph, so
// for them Finalize refuses a disagreement first, in its own words.
//
// Only dims are checked here: the stated strides are the layout a
// partition's outputs are compiled with, and Compile refuses strides it
// cannot take (that do not nest); strides wrong on their own
// (negative, or not one per dim) are already refused by graph.ReadJSON.
func checkStatedOutputs(g *graph.Graph, stated map[uint64][]int64) error {
	// In graph order, so that the first mismatch reported is stable.
	for _, op := range g.Ops() {
		for _, t := range op.Outputs {
			want, ok := stated[t.ID]
			if !ok {
				continue
			}
			got, _ := g.Tensor(t.ID)
			if _, err := shape.MergeDims(op, t.ID, want, got.Dims); err != nil {
				return status.Errorf(status.InvalidShape, "%s: output tensor %d has shape %s in the case, but gdnn infers %s",
					op, t.ID, graph.DimsString(want), graph.DimsString(got.Dims))
			}
		}
	}
	return nil
}

// tensorProperties resolves a --tensor-property value against the case:
// the property each named tensor gets. Every tensor must be in the graph
// (an error otherwise, as driver_graph.md says). undef, variable and
// constant are honoured: gdnn reads every input on every execute (it keeps
// no constant-tensor cache), so a constant input is valid even though
// gdnnbench refills inputs between the executes of a check. host_scalar (a
// scalar in host memory) has no counterpart in gdnn: Unimplemented.
func tensorProperties(g *graph.Graph, val string) (map[uint64]graph.Property, error) {
	entries, err := ParseTensorProperty(val)
	if err != nil || entries == nil {
		return nil, err
	}
	inGraph := map[uint64]bool{}
	for _, op := range g.Ops() {
		for _, t := range append(slices.Clone(op.Inputs), op.Outputs...) {
			inGraph[t.ID] = true
		}
	}
	props := map[uint64]graph.Property{}
	for _, e := range entries {
		if !inGraph[e.ID] {
			return nil, status.Errorf(status.InvalidArguments, "--tensor-property: tensor %d is not in the graph", e.ID)
		}
		switch e.Name {
		case "undef":
			props[e.ID] = graph.PropertyUndef
		case "variable":
			props[e.ID] = graph.PropertyVariable
		case "constant":
			props[e.ID] = graph.PropertyConstant
		case "host_scalar":
			return nil, status.Errorf(status.Unimplemented, "--tensor-property: tensor %d: property host_scalar (a scalar in host memory) is not supported by gdnn", e.ID)
		}
	}
	return props, nil
}

// rewriteInput applies an --in-shapes entry (o; nil when none names t)
// and then --mb (mb > 0) to graph input t, as driver_graph.md describes
// and benchdnn's graph driver does:
//
//   - --mb replaces dim 0 of the shape, whether the case or --in-shapes
//     gave it: --mb takes precedence over --in-shapes;
//   - a tag from --in-shapes lays out the final shape, mb included;
//   - a shape from --in-shapes without strides is dense;
//   - strides (from --in-shapes or the case) are kept as given unless --mb
//     changes dim 0: they were written for the other size, so the final
//     shape gets dense strides in the same dim order (an NHWC input stays
//     NHWC; benchdnn too turns such strides into a tag);
//   - an input without strides (stride-less, or layout any/undef) stays
//     so, and Compile lays out its final shape.
func rewriteInput(t graph.LogicalTensor, o *ShapeOverride, mb int64) (graph.LogicalTensor, error) {
	// The shape and strides as written, by the case or by --in-shapes.
	dims, strides := t.Dims, t.Strides
	hasStrides := t.Layout == graph.LayoutStrided && t.Strides != nil
	var tagOrder []int
	if o != nil {
		if !o.KeepDims {
			dims = o.Dims
		}
		hasStrides = true
		switch {
		case o.Tag != "":
			l, err := ResolveTag(o.Tag, len(dims))
			if err != nil {
				return t, err
			}
			if l.Any {
				return t, status.Errorf(status.InvalidArguments, "--in-shapes: tensor %d: an input cannot have layout any", t.ID)
			}
			if err := plainOnly(l, "--in-shapes"); err != nil {
				return t, err
			}
			tagOrder = l.Order
		case o.Strides != nil:
			if len(o.Strides) != len(dims) {
				return t, status.Errorf(status.InvalidShape, "--in-shapes: tensor %d: %d strides for rank %d", t.ID, len(o.Strides), len(dims))
			}
			strides = o.Strides
		default:
			strides = graph.DenseStrides(dims)
		}
	}
	final := slices.Clone(dims)
	if mb > 0 && len(final) > 0 {
		final[0] = mb
	}
	switch {
	case tagOrder != nil:
		strides = Layout{Order: tagOrder}.Strides(final)
	case !hasStrides:
		t.Dims = final
		return t, nil
	case slices.Equal(final, dims):
	case len(strides) != len(dims) || slices.ContainsFunc(strides, func(s int64) bool { return s < 0 }):
		// Unknown or inconsistent strides have no dim order to keep; they
		// stay as given and Compile reports them.
	default:
		strides = Layout{Order: strideOrder(strides)}.Strides(final)
	}
	return graph.NewLogicalTensorStrided(t.ID, t.DataType, final, strides).WithProperty(t.Property), nil
}

// strideOrder returns the dims ordered from the largest stride to the
// smallest, equal strides in dim order (size-1 dims often repeat their
// neighbour's stride), like benchdnn's strides-to-tag conversion.
func strideOrder(strides []int64) []int {
	order := make([]int, len(strides))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return strides[order[a]] > strides[order[b]] })
	return order
}

// inputsWithMB returns the graph inputs whose dim 0 is the minibatch that
// --mb overrides, by benchdnn's rule: a tensor carries the minibatch when
// every op that reads it passes the minibatch on through that input
// (passesMB) and the op's output carries it in turn; a tensor no op reads
// carries it. So weights, axes tensors and operands of lower rank keep
// their shape.
func inputsWithMB(g *graph.Graph, inputs map[uint64]graph.LogicalTensor) map[uint64]bool {
	memo := map[uint64]bool{}
	var carries func(id uint64) bool
	carries = func(id uint64) bool {
		if v, ok := memo[id]; ok {
			return v
		}
		memo[id] = false // on a cycle (which Finalize reports), nothing carries it
		ok := true
		for _, op := range g.Consumers(id) {
			if !passesMB(op, id) || (len(op.Outputs) > 0 && !carries(op.Outputs[0].ID)) {
				ok = false
				break
			}
		}
		memo[id] = ok
		return ok
	}
	with := map[uint64]bool{}
	for id := range inputs {
		if carries(id) {
			with[id] = true
		}
	}
	return with
}

// removeOps returns g without the ops --op-kind=ID:undef names, as
// benchdnn's graph driver removes them: the consumers of a unary op's
// output read its input instead; a binary op passes on the one input that
// another op produces (an error when both or neither are produced).
func removeOps(g *graph.Graph, kinds []KindOverride) (*graph.Graph, error) {
	remove := map[uint64]bool{}
	alias := map[uint64]graph.LogicalTensor{} // a removed op's output -> the tensor read instead
	// In the knob's order, so that the first bad entry is the one reported.
	for _, k := range kinds {
		if !k.Remove {
			continue
		}
		remove[k.OpID] = true
		op, ok := g.Op(k.OpID)
		switch {
		case !ok:
			return nil, status.Errorf(status.InvalidArguments, "--op-kind: op %d is not in the graph", k.OpID)
		case len(op.Outputs) != 1 || !op.Kind.IsEltwise() && !op.Kind.IsBinary():
			return nil, status.Errorf(status.InvalidArguments, "--op-kind: %s cannot be removed (undef removes binary and eltwise ops)", op)
		}
		pass := op.Inputs[0]
		if op.Kind.IsBinary() {
			a, b := g.Producer(op.Inputs[0].ID) != nil, g.Producer(op.Inputs[1].ID) != nil
			if a == b {
				return nil, status.Errorf(status.InvalidArguments,
					"--op-kind: %s cannot be removed: %s of its inputs is produced by another op, so which one to pass on is not known",
					op, map[bool]string{true: "each", false: "neither"}[a])
			}
			if b {
				pass = op.Inputs[1]
			}
		}
		alias[op.Outputs[0].ID] = pass
	}
	if len(remove) == 0 {
		return g, nil
	}
	resolve := func(t graph.LogicalTensor) graph.LogicalTensor {
		for range len(alias) { // a chain of removed ops is at most this long
			a, ok := alias[t.ID]
			if !ok {
				break
			}
			t = a
		}
		return t.Clone()
	}
	out := graph.New()
	out.FPMath = g.FPMath
	for _, op := range g.Ops() {
		if remove[op.ID] {
			continue
		}
		c := op.Clone()
		for i, t := range c.Inputs {
			c.Inputs[i] = resolve(t)
		}
		if err := out.AddOp(c); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// passesMB reports whether op passes the minibatch of its input id on to
// its output. As in benchdnn: a binary op through each input of the
// largest rank among its inputs (the others broadcast), MatMul of rank > 2
// through both matrices, any other op through its first input only.
// (benchdnn's list of binary ops spells Subtract "Substract", so benchdnn
// treats Subtract like a unary op; gdnn follows the evident intent.)
//
// An input of unknown rank (a null shape, as a graph written before
// Finalize has for its intermediate tensors) may be of the largest rank:
// it passes the minibatch on, and does not stop an input of known rank
// from passing it.
func passesMB(op *graph.Op, id uint64) bool {
	switch {
	case op.Kind.IsBinary():
		rank, maxRank := 0, 0
		for _, t := range op.Inputs {
			maxRank = max(maxRank, t.Rank())
			if t.ID == id {
				rank = t.Rank()
			}
		}
		return rank < 0 || rank == maxRank
	case op.Kind == graph.MatMul && len(op.Inputs) >= 2 && len(op.Inputs[0].Dims) > 2:
		return id == op.Inputs[0].ID || id == op.Inputs[1].ID
	}
	return len(op.Inputs) > 0 && op.Inputs[0].ID == id
}

func (r *runner) doGraph(idx int, repro string, c graphCase, data []byte) result {
	if idx < r.g.start {
		return result{state: "SKIPPED", reason: "before --start", quiet: true}
	}
	if r.g.mode.List {
		return result{state: "LISTED"}
	}
	data, notes := benchdnnPorts(data)
	if r.g.verbose >= 1 {
		for _, n := range notes {
			fmt.Fprintf(r.out, "%s: %s\n", c.file, n)
		}
	}
	g, err := loadGraph(c, data)
	if err != nil {
		return result{state: stateOf(err), reason: reasonOf(err)}
	}
	parts, err := partition.Get(g, partition.Fusion)
	if err != nil {
		return result{state: stateOf(err), reason: reasonOf(err)}
	}
	// Unsupported ops split a graph into more partitions than benchdnn
	// expects from oneDNN: that is UNIMPLEMENTED, not a wrong count.
	for _, p := range parts {
		if !p.IsSupported() {
			return result{state: "UNIMPLEMENTED", reason: p.Reason()}
		}
	}
	if c.expectedN != 0 && len(parts) != c.expectedN {
		return result{state: "FAILED", reason: fmt.Sprintf("expected %d partitions, got %d", c.expectedN, len(parts))}
	}
	if ops := parts[0].Ops(); len(parts) == 1 && ops[len(ops)-1].Kind.IsArg() {
		return r.doGraphArg(idx, c, parts[0])
	}
	var res result
	var perf *PerfData
	for pi, p := range parts {
		if dec := readDecomposition(p); dec != nil || normOps(p)[0].Kind.IsNormalization() {
			np, fail := r.doGraphNorm(g, p, dec, c, idx, pi, len(parts), &res)
			if fail != nil {
				return *fail
			}
			if np != nil {
				perf = np
			}
			continue
		}
		gp, fail := r.buildGraphPartition(g, p)
		if fail != nil {
			return *fail
		}
		res.impl = gp.cp.Impl()
		if why := r.implFilter(res.impl, r.gr.impl, r.gr.skip); why != "" {
			return result{state: "SKIPPED", reason: why, impl: res.impl}
		}
		if r.g.mode.Init {
			r.implNote(gp.cp, partitionNote(pi, len(parts)))
			continue
		}
		exec := func(i int) error { return r.execute(gp.b, i) }
		if r.g.mode.Bitwise {
			if fail := r.bitwise(gp.b, redCase{sdt: gp.sdt}, exec); fail != nil {
				fail.impl = res.impl
				return *fail
			}
		}
		if r.g.mode.Exec {
			fillInputs(gp.b, gp.sdt, fillRandom, uint64(idx))
			if err := exec(0); err != nil {
				return result{state: stateOf(err), reason: reasonOf(err), impl: res.impl}
			}
		}
		if r.g.mode.Corr {
			check := r.checkOnce
			if gp.exact != nil {
				check = func(b *built, c redCase, mode fillMode, seed uint64, exec func(int) error) *result {
					return r.checkExact(b, c, *gp.exact, mode, seed, exec)
				}
			}
			for _, mode := range []fillMode{fillExact, fillRandom} {
				if fail := check(gp.b, redCase{sdt: gp.sdt, ddt: gp.ddt}, mode, seedOf(repro), exec); fail != nil {
					fail.impl = res.impl
					fail.reason = fmt.Sprintf("partition %d: %s", pi, fail.reason)
					return *fail
				}
			}
		}
		if r.g.mode.Perf && len(parts) == 1 {
			if !r.g.mode.Corr {
				fillInputs(gp.b, gp.sdt, fillRandom, seedOf(repro))
			}
			t, err := measure(func() error { return exec(0) }, r.g.maxMs, r.g.fixTimes)
			if err != nil {
				return result{state: stateOf(err), reason: reasonOf(err), impl: res.impl}
			}
			prb := Problem{Src: gp.b.srcLT.Dims, Dst: shape.ReduceDims(gp.b.srcLT.Dims, gp.b.reduced, true)}
			perf = r.perfData(gp.b, redCase{prb: prb, sdt: gp.sdt, ddt: gp.ddt, alg: gp.b.fill.kind.name, stag: "-", dtag: "-"}, idx, res.impl, t)
			perf.Driver, perf.DT, perf.Desc = "graph", c.dt, c.caseArg
		}
		r.implNote(gp.cp, partitionNote(pi, len(parts)))
	}
	switch {
	case r.g.mode.Init:
		res.state = "INITIALIZED"
	case r.g.mode.Exec:
		res.state = "EXECUTED"
	default:
		res.state = "PASSED"
	}
	res.perf = perf
	return res
}

// partitionNote names partition pi of n in implNote's line: nothing when
// the graph has one.
func partitionNote(pi, n int) string {
	if n == 1 {
		return ""
	}
	return " partition " + strconv.Itoa(pi)
}

// graphPartition is a supported partition of a case, compiled, with its
// buffers and reference chain.
type graphPartition struct {
	b        *built
	cp       *partition.CompiledPartition
	sdt, ddt dtypes.DataType
	exact    *plan.Reduction // checked by the exact reference, not the float one
}

// buildGraphPartition compiles a supported reduction partition (an
// optional Abs or Square pre-op, a Reduce* op, post-ops) with the graph's
// concrete input shapes and prepares buffers and the reference.
func (r *runner) buildGraphPartition(g *graph.Graph, p *partition.Partition) (*graphPartition, *result) {
	fail := func(err error) (*graphPartition, *result) {
		return nil, &result{state: stateOf(err), reason: reasonOf(err)}
	}
	ops := p.Ops()
	rd, why := readReduction(ops)
	if why != "" {
		return nil, &result{state: "UNIMPLEMENTED", reason: why}
	}
	if rd.mask != nil && len(p.Inputs()) > 0 && p.Inputs()[0].ID == rd.mask.ID {
		// The partitioner makes the Multiply's operand of the product's
		// dims its first port, the tensor the reduction reads: the src.
		src, mask := *rd.mask, rd.src
		rd.src, rd.mask = src, &mask
	}
	red, k, root, src := rd.op, rd.kind, rd.root, rd.src
	axes, fromAttr, err := graph.ReduceAxesAttr(red)
	if err != nil {
		return fail(err)
	}
	if !fromAttr {
		return nil, &result{state: "UNIMPLEMENTED", reason: "axes given as an input tensor: gdnnbench cannot choose their values"}
	}
	var ins []graph.LogicalTensor
	for _, t := range p.Inputs() {
		ct, ok := g.Tensor(t.ID)
		if !ok {
			return fail(status.Errorf(status.InvalidGraph, "partition input %d is not in the graph", t.ID))
		}
		ins = append(ins, ct)
	}
	outs := p.Outputs()
	if len(outs) != 1 {
		return fail(status.Errorf(status.Unimplemented, "partition has %d outputs, gdnnbench checks one", len(outs)))
	}
	t0 := time.Now()
	cp, err := p.Compile(ins, []graph.LogicalTensor{compileOutput(outs[0])})
	ctime := float64(time.Since(t0)) / float64(time.Millisecond)
	if err != nil {
		return fail(err)
	}
	// Buffers and the reference follow the tensors as compiled, not as the
	// graph holds them: an input without strides (no "stride" field, null,
	// or layout any/undef) has none in the graph, and Compile is what gives
	// it its layout (dense).
	srcLT, err := cp.QueryLogicalTensor(src.ID)
	if err != nil {
		return fail(err)
	}
	reduced, err := shape.NormalizeAxes(red, red.Inputs[0].ID, axes, len(srcLT.Dims))
	if err != nil {
		return fail(err)
	}
	exact, why := rd.exactCheck(srcLT.DataType)
	if why != "" {
		return nil, &result{state: "UNIMPLEMENTED", reason: why}
	}
	b := &built{cp: cp, srcLT: srcLT, reduced: reduced, ctimeMs: ctime}
	b.fill = srcFill{kind: k, narrow: srcLT.DataType == dtypes.F16}
	if b.outLT, err = cp.QueryLogicalTensor(outs[0].ID); err != nil {
		return fail(err)
	}
	keep, _ := red.Bool("keep_dims")
	meanDims := shape.ReduceDims(srcLT.Dims, reduced, keep)
	if !sameDims(meanDims, b.outLT.Dims) {
		return nil, &result{state: "UNIMPLEMENTED", reason: fmt.Sprintf("post-ops broadcast the reduction from %v to %v; gdnnbench's reference covers same-shape chains",
			meanDims, b.outLT.Dims)}
	}
	b.fill.narrow = b.fill.narrow || b.outLT.DataType == dtypes.F16
	b.fill.dst = b.outLT.DataType
	if root {
		b.chain = append(b.chain, refPostOp{g: graphPostOp{elt: "sqrt"}})
	}
	chainVal := rd.val
	seen := map[uint64]int{} // an operand read by several ops: its index in opLTs
	// operand allocates the buffer of partition input id, read by op,
	// once: its index in opLTs and operands. The inputs are ports in
	// the order their ops read them, as execute passes them.
	operand := func(op *graph.Op, id uint64) (int, error) {
		if i, ok := seen[id]; ok {
			return i, nil
		}
		lt, err := cp.QueryLogicalTensor(id)
		if err != nil {
			return 0, status.Errorf(status.InvalidGraph, "%s: operand %d is not a partition input", op, id)
		}
		span, err := spanOf(lt.Dims, lt.Strides)
		if err == nil {
			err = checkMemory(span * int64(lt.DataType.Size()))
		}
		if err != nil {
			return 0, err
		}
		buf, err := newBuffer(lt.DataType, span)
		if err != nil {
			return 0, err
		}
		seen[id] = len(b.opLTs)
		b.opLTs = append(b.opLTs, lt)
		b.operands = append(b.operands, buf)
		return seen[id], nil
	}
	if rd.mask != nil {
		// The mask is the partition's second port, after src.
		if _, err := operand(ops[0], rd.mask.ID); err != nil {
			return fail(err)
		}
		b.masked = true
	}
	for _, op := range ops[rd.post:] {
		rp, opnd, err := refOpOf(op, chainVal, b.outLT.Dims)
		if err != nil {
			return fail(err)
		}
		if opnd != nil && opnd.ID == src.ID {
			return nil, &result{state: "UNIMPLEMENTED", reason: fmt.Sprintf("%s reads src %d as its operand; gdnnbench fills src and operands apart", op, src.ID)}
		}
		if opnd != nil {
			i, err := operand(op, opnd.ID)
			if err != nil {
				return fail(err)
			}
			// The reference lays results out over the keep-dims shape:
			// a reduction without keep_dims has the reduced axes (of size
			// 1) put back, and the operand is broadcast over them.
			lt := b.opLTs[i]
			rp.operand, rp.view = b.operands[i], keepDimsView(alignedView(lt.Dims, lt.Strides, b.outLT.Dims), reduced)
		}
		if rp.g.elt == "log" || rp.g.elt == "sqrt" {
			b.fill.posOnly = true
		}
		b.chain = append(b.chain, rp)
		chainVal = op.Outputs[0].ID
	}
	// The partition's input ports beyond src, a mask and operands (e.g.
	// none today) must all be accounted for.
	if len(ins) != 1+len(b.opLTs) {
		return fail(status.Errorf(status.Unimplemented, "partition has %d inputs; gdnnbench feeds src, a mask and binary operands only", len(ins)))
	}
	span, err := spanOf(srcLT.Dims, srcLT.Strides)
	if err != nil {
		return fail(err)
	}
	if err := checkMemory(ioBytes(b, span, srcLT.DataType.Size(), exact)); err != nil {
		return fail(err)
	}
	if b.src, err = newBuffer(srcLT.DataType, span); err != nil {
		return fail(err)
	}
	ospan, err := spanOf(b.outLT.Dims, b.outLT.Strides)
	if err != nil {
		return fail(err)
	}
	for i := 0; i < 2; i++ {
		if b.outs[i], err = newBuffer(b.outLT.DataType, ospan); err != nil {
			return fail(err)
		}
	}
	gp := &graphPartition{b: b, cp: cp, sdt: srcLT.DataType, ddt: b.outLT.DataType}
	if exact {
		gp.exact = &rd.exact
	}
	return gp, nil
}

// reading is what gdnnbench reads of a partition's reduction.
type reading struct {
	op   *graph.Op // the Reduce* op
	kind kind
	root bool                // a square root follows (ReduceL2)
	src  graph.LogicalTensor // the partition's src: the pre-op's input, or the reduction's
	post int                 // the place of the first post-op: after the reduction, or after log-sum-exp's Log
	val  uint64              // the tensor that carries the reduction's value to the post-ops
	// mask is a Multiply pre-op's other operand (masked pooling), by
	// which each src element is multiplied before it is reduced; nil:
	// none. Which operand is src, buildGraphPartition reads from the
	// partition's ports.
	mask *graph.LogicalTensor
	// exact is the reduction as internal/oracle's exact reference
	// computes it, which checks a reduction alone (no pre-op, no
	// post-op) of integer or boolean data. floatRef: the float64
	// reference has this kind (the bitwise and logical ones it has not).
	exact           plan.Reduction
	alone, floatRef bool
}

// exactCheck reports whether a partition whose reduction rd reads and
// whose src is sdt is checked by the exact reference, and if not, why
// it has none.
func (rd reading) exactCheck(sdt dtypes.DataType) (exact bool, why string) {
	if rd.alone && plan.IsExact(sdt, rd.exact) {
		return true, ""
	}
	if !rd.floatRef {
		return false, fmt.Sprintf("gdnnbench has no reference for %s of %s data", rd.op.Kind, sdt)
	}
	return false, ""
}

// readReduction finds the reduction in a partition's ops and what it
// computes, or says why gdnnbench has no reference for them: the
// reduction must come first or after one pre-op that feeds it, Abs or a
// square (graph.Op.IsSquare), Exp before a ReduceSum whose Log follows
// (log-sum-exp), or a Multiply of two tensors before a ReduceSum or
// ReduceMean (masked pooling): the pre-ops gdnn fuses.
func readReduction(ops []*graph.Op) (reading, string) {
	ri := slices.IndexFunc(ops, func(op *graph.Op) bool { return op.Kind.IsReduction() })
	if ri < 0 || ri > 1 {
		return reading{}, "gdnnbench checks partitions of a reduction with at most one pre-op before it"
	}
	red := ops[ri]
	k, root, known := kindOfOp(red.Kind)
	exact, hasExact := exactReduction(k.name)
	if !known {
		exact, hasExact = plan.OfGraphOp(red.Kind.String())
	}
	alone := hasExact && len(ops) == 1
	if !known && !alone {
		return reading{}, fmt.Sprintf("gdnnbench has no reference for %s", red.Kind)
	}
	rd := reading{op: red, kind: k, root: root, src: red.Inputs[0], post: ri + 1, val: red.Outputs[0].ID,
		exact: exact, alone: alone, floatRef: known}
	if !known {
		rd.kind.name = red.Kind.String() // what the perf line names
	}
	if ri == 1 {
		pre := ops[0]
		name, ok := "abs", pre.Kind == graph.Abs
		if pre.IsSquare() {
			name, ok = "square", true
		}
		lse := pre.Kind == graph.Exp && red.Kind == graph.ReduceSum && len(ops) > 2 && ops[2].Kind == graph.Log &&
			len(ops[2].Inputs) == 1 && ops[2].Inputs[0].ID == red.Outputs[0].ID && len(ops[2].Outputs) == 1
		masked := pre.Kind == graph.Multiply && !pre.IsSquare() && len(pre.Inputs) == 2 &&
			(red.Kind == graph.ReduceSum || red.Kind == graph.ReduceMean)
		if !ok && !lse && !masked || k.pre != "" || len(pre.Outputs) != 1 || pre.Outputs[0].ID != red.Inputs[0].ID {
			return reading{}, fmt.Sprintf("gdnnbench has no reference for %s before %s", pre, red)
		}
		rd.kind.pre, rd.src = name, pre.Inputs[0]
		if masked {
			rd.kind.pre, rd.mask = "", &pre.Inputs[1]
		}
		if lse {
			// The Log is log-sum-exp's own: the post-ops come after it.
			rd.kind, rd.post, rd.val = logSumExpKind, 3, ops[2].Outputs[0].ID
		}
	}
	return rd, ""
}

// alignedView returns an operand's strides over the dst dims with numpy
// right alignment, 0 where the operand broadcasts.
func alignedView(opDims, opStrides, dst []int64) []int64 {
	v := make([]int64, len(dst))
	off := len(dst) - len(opDims)
	for d := range dst {
		od := d - off
		if od >= 0 && opDims[od] != 1 {
			v[d] = opStrides[od]
		}
	}
	return v
}

// keepDimsView returns view, strides over a reduction's output dims,
// over its keep-dims dims: 0 for each reduced axis the output dropped.
// A view of the keep-dims rank is returned as it is.
func keepDimsView(view []int64, reduced []bool) []int64 {
	if len(view) == len(reduced) {
		return view
	}
	v := make([]int64, 0, len(reduced))
	next := 0
	for _, r := range reduced {
		if r || next >= len(view) {
			v = append(v, 0)
			continue
		}
		v = append(v, view[next])
		next++
	}
	return v
}

// refOpOf maps a fused graph op to its reference post-op. chainVal is the
// id of the tensor carrying the reduction's chain; a binary op returns its other
// input as operand.
func refOpOf(op *graph.Op, chainVal uint64, dst []int64) (refPostOp, *graph.LogicalTensor, error) {
	f := func(name string) float64 {
		v, _ := op.Float(name)
		return float64(v)
	}
	rp := refPostOp{}
	mode, _ := op.Str("mode")
	k, ok := ops.OfGraphOp(op.Kind.String(), mode)
	if !ok {
		return rp, nil, status.Errorf(status.Unimplemented, "%s: gdnnbench has no reference for %s", op, op.Kind)
	}
	if k.IsBinary() {
		rp.g.bin = k.Op().Bench
		other := op.Inputs[1]
		if op.Inputs[0].ID != chainVal {
			other, rp.swapped = op.Inputs[0], true
		}
		return rp, &other, nil
	}
	rp.g.elt = k.Op().Bench
	switch op.Kind {
	case graph.Clamp:
		rp.g.alpha, rp.g.beta = f("min"), f("max")
	case graph.Elu, graph.LeakyReLU:
		rp.g.alpha = f("alpha")
	case graph.HardSigmoid:
		rp.g.alpha, rp.g.beta = f("alpha"), f("beta")
	case graph.HardSwish:
		rp.g.alpha, rp.g.beta = 1.0/6, 0.5
	case graph.Pow:
		rp.g.alpha, rp.g.beta = 1, f("beta")
	case graph.SoftPlus:
		rp.g.alpha = f("beta")
		if rp.g.alpha == 0 || math.IsNaN(rp.g.alpha) {
			return rp, nil, status.Errorf(status.InvalidArguments, "%s: SoftPlus beta %v", op, rp.g.alpha)
		}
	}
	return rp, nil, nil
}
