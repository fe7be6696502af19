package graph

import (
	"errors"
	"slices"
	"strings"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
)

// attrSpec describes one attribute an op kind accepts.
type attrSpec struct {
	name     string
	typ      AttrType
	required bool
	def      *Attr // default when absent and not required; nil: none
}

// schema is what an op kind accepts: port counts, attributes, data types,
// and how its output shapes follow from its inputs.
type schema struct {
	minIn, maxIn int
	minOut       int
	maxOut       int
	attrs        []attrSpec
	// strictAttrs rejects attributes not listed (kinds gdnn compiles, and
	// End, which oneDNN defines with none, so a misplaced attribute there
	// is a mistake, never a newer oneDNN's); other kinds accept unknown
	// attributes so that graphs dumped by newer oneDNN versions still load.
	strictAttrs bool
	// values checks the attribute values (after their types); nil accepts
	// any value.
	values func(op *Op) error
	// types checks the data types of the ports; nil accepts any.
	types func(op *Op) error
	// infer returns the output dims (nil: unknown rank; UnknownDim where
	// unknown) from the inputs; nil leaves outputs as the user gave them.
	infer func(op *Op, in []LogicalTensor) ([][]int64, error)
}

func def(a Attr) *Attr { return &a }

var (
	reduceAttrs = []attrSpec{
		{name: "axes", typ: AttrS64s},
		{name: "keep_dims", typ: AttrBool, def: def(Attr{Type: AttrBool, B: false})},
	}
	binaryAttrs = []attrSpec{
		{name: "auto_broadcast", typ: AttrString, def: def(Attr{Type: AttrString, S: "numpy"})},
	}
)

var schemas = map[OpKind]*schema{}

func init() {
	for k := ReduceMean; k < numOpKinds; k++ {
		if !k.IsReduction() {
			continue
		}
		schemas[k] = &schema{minIn: 1, maxIn: 2, minOut: 1, maxOut: 1, attrs: reduceAttrs, strictAttrs: true,
			types: reduceTypes, infer: inferReduce}
	}
	eltAttrs := func(k OpKind) []attrSpec {
		op := postOpKinds[k].Op()
		var a []attrSpec
		for _, name := range []string{op.Alpha, op.Beta} {
			if name != "" {
				a = append(a, attrSpec{name: name, typ: AttrF32, required: true})
			}
		}
		if op.BetaDefault != nil {
			a[len(a)-1] = attrSpec{name: op.Beta, typ: AttrF32, def: def(Attr{Type: AttrF32, F: *op.BetaDefault})}
		}
		if op.Mode != "" {
			a = append(a, attrSpec{name: "mode", typ: AttrString, def: def(Attr{Type: AttrString, S: op.Mode})})
		}
		return a
	}
	for k := Abs; k <= Tanh; k++ {
		schemas[k] = &schema{minIn: 1, maxIn: 1, minOut: 1, maxOut: 1, attrs: eltAttrs(k), strictAttrs: true,
			values: eltwiseValues, types: sameFloatTypes, infer: inferSame}
	}
	for k := Add; k <= Subtract; k++ {
		schemas[k] = &schema{minIn: 2, maxIn: 2, minOut: 1, maxOut: 1, attrs: binaryAttrs, strictAttrs: true,
			values: binaryValues, types: binaryTypes, infer: inferBroadcast}
	}
	schemas[MatMul] = &schema{minIn: 2, maxIn: 3, minOut: 1, maxOut: 1, types: floatTypes, infer: inferMatMul,
		attrs: []attrSpec{
			{name: "transpose_a", typ: AttrBool, def: def(Attr{Type: AttrBool})},
			{name: "transpose_b", typ: AttrBool, def: def(Attr{Type: AttrBool})},
		}}
	schemas[Convolution] = &schema{minIn: 2, maxIn: 3, minOut: 1, maxOut: 1, types: floatTypes, infer: inferConv,
		attrs: []attrSpec{
			{name: "strides", typ: AttrS64s, required: true},
			{name: "pads_begin", typ: AttrS64s, required: true},
			{name: "pads_end", typ: AttrS64s, required: true},
			{name: "dilations", typ: AttrS64s, required: true},
			{name: "auto_pad", typ: AttrString, def: def(Attr{Type: AttrString, S: "None"})},
			{name: "groups", typ: AttrS64, def: def(Attr{Type: AttrS64, I: 1})},
			{name: "data_format", typ: AttrString, def: def(Attr{Type: AttrString, S: "NXC"})},
			{name: "weights_format", typ: AttrString, def: def(Attr{Type: AttrString, S: "XIO"})},
		}}
	schemas[TypeCast] = &schema{minIn: 1, maxIn: 1, minOut: 1, maxOut: 1, types: floatTypes, infer: inferSame}
	schemas[Reorder] = &schema{minIn: 1, maxIn: 1, minOut: 1, maxOut: 1, infer: inferSame}
	schemas[StaticTranspose] = &schema{minIn: 1, maxIn: 1, minOut: 1, maxOut: 1, infer: inferTranspose,
		attrs: []attrSpec{{name: "order", typ: AttrS64s, required: true}}}
	schemas[StaticReshape] = &schema{minIn: 1, maxIn: 1, minOut: 1, maxOut: 1, infer: inferReshape,
		attrs: []attrSpec{
			{name: "shape", typ: AttrS64s, required: true},
			{name: "special_zero", typ: AttrBool, required: true},
		}}
	for _, k := range []OpKind{Dequantize, Quantize} {
		schemas[k] = &schema{minIn: 1, maxIn: 1, minOut: 1, maxOut: 1, attrs: quantAttrs, strictAttrs: true,
			types: quantTypes, infer: inferQuant}
	}
	schemas[Wildcard] = &schema{minIn: 0, maxIn: 1 << 16, minOut: 0, maxOut: 1 << 16}
	// End takes no attributes (oneDNN's End defines none): any attribute
	// on it is refused by name, as a typo'd --op-attrs target would
	// otherwise pass silently.
	schemas[End] = &schema{minIn: 1, maxIn: 1, minOut: 0, maxOut: 0, strictAttrs: true}
}

func schemaOf(k OpKind) *schema { return schemas[k] }

// checkSchema checks port counts, attributes and data types of op.
func checkSchema(op *Op) error {
	s := schemaOf(op.Kind)
	if s == nil {
		return Errorf(InvalidGraphOp, "%s: unknown op kind", op)
	}
	if op.attrErr != nil {
		return op.attrErr
	}
	if n := len(op.Inputs); n < s.minIn || n > s.maxIn {
		return Errorf(InvalidGraphOp, "%s: has %d inputs, %s takes %s", op, n, op.Kind, countRange(s.minIn, s.maxIn))
	}
	if n := len(op.Outputs); n < s.minOut || n > s.maxOut {
		return Errorf(InvalidGraphOp, "%s: has %d outputs, %s takes %s", op, n, op.Kind, countRange(s.minOut, s.maxOut))
	}
	for _, sp := range s.attrs {
		a, ok := op.attrs[sp.name]
		if !ok {
			if sp.required {
				return Errorf(InvalidGraphOp, "%s: required attribute %q (%s) is missing", op, sp.name, sp.typ)
			}
			continue
		}
		if a.Type != sp.typ {
			return Errorf(InvalidGraphOp, "%s: attribute %q has type %s, want %s", op, sp.name, a.Type, sp.typ)
		}
	}
	if s.strictAttrs {
		for _, name := range op.AttrNames() {
			if !s.knows(name) {
				return Errorf(InvalidGraphOp, "%s: unknown attribute %q for %s", op, name, op.Kind)
			}
		}
	}
	if s.values != nil {
		if err := s.values(op); err != nil {
			return err
		}
	}
	for i, t := range append(append([]LogicalTensor(nil), op.Inputs...), op.Outputs...) {
		if err := checkTensor(op, t, i); err != nil {
			return err
		}
	}
	if s.types != nil {
		return s.types(op)
	}
	return nil
}

// eltwiseValues refuses the attributes of an eltwise op that leave it
// without a meaning (package ops's ParamsProblem says which) and a mode
// oneDNN does not list.
func eltwiseValues(op *Op) error {
	info := postOpKinds[op.Kind].Op()
	if info.Mode != "" {
		mode, _ := op.Str("mode")
		if _, ok := ops.OfGraphOp(info.GraphOp, mode); !ok {
			return Errorf(InvalidGraphOp, "%s: mode %q, want %s", op, mode, ops.ModesText(info.GraphOp))
		}
	}
	var alpha, beta float32
	if info.Alpha != "" {
		alpha, _ = op.Float(info.Alpha)
	}
	if info.Beta != "" {
		beta, _ = op.Float(info.Beta)
	}
	if msg := postOpKinds[op.Kind].ParamsProblem(alpha, beta, false); msg != "" {
		return Errorf(InvalidGraphOp, "%s: %s", op, msg)
	}
	return nil
}

// binaryValues refuses an auto_broadcast other than oneDNN's "numpy" and
// "none".
func binaryValues(op *Op) error {
	if mode, _ := op.Str("auto_broadcast"); mode != "numpy" && mode != "none" {
		return Errorf(InvalidGraphOp, "%s: auto_broadcast %q, want \"numpy\" or \"none\"", op, mode)
	}
	return nil
}

func (s *schema) knows(name string) bool {
	for _, sp := range s.attrs {
		if sp.name == name {
			return true
		}
	}
	return false
}

func countRange(lo, hi int) string {
	switch {
	case lo == hi:
		return itoa(lo)
	case hi >= 1<<16:
		return "at least " + itoa(lo)
	}
	return itoa(lo) + " to " + itoa(hi)
}

func itoa(i int) string { return DimsString([]int64{int64(i)}) }

// checkTensor checks what every logical tensor must satisfy on its own.
func checkTensor(op *Op, t LogicalTensor, _ int) error {
	if !t.DataType.Valid() {
		return Errorf(InvalidDataType, "%s: tensor %d has data type %s", op, t.ID, t.DataType)
	}
	if t.Property < PropertyUndef || t.Property > PropertyConstant {
		return Errorf(InvalidArguments, "%s: tensor %d has property %s", op, t.ID, t.Property)
	}
	if len(t.Dims) > MaxRank {
		return Errorf(InvalidShape, "%s: tensor %d has rank %d, more than the supported %d", op, t.ID, len(t.Dims), MaxRank)
	}
	for i, d := range t.Dims {
		if d < UnknownDim {
			return Errorf(InvalidShape, "%s: tensor %d dim %d is %d (negative)", op, t.ID, i, d)
		}
	}
	switch t.Layout {
	case LayoutStrided:
		if t.Strides != nil && t.Dims != nil && len(t.Strides) != len(t.Dims) {
			return Errorf(InvalidShape, "%s: tensor %d has %d dims but %d strides", op, t.ID, len(t.Dims), len(t.Strides))
		}
		for i, s := range t.Strides {
			if s < UnknownDim {
				return Errorf(InvalidShape, "%s: tensor %d stride %d is %d (negative)", op, t.ID, i, s)
			}
		}
	case LayoutAny, LayoutUndef:
	case LayoutBlocked:
		if t.Tag == "" {
			return Errorf(InvalidArguments, "%s: tensor %d has layout blocked but no format tag", op, t.ID)
		}
	default:
		return Errorf(InvalidArguments, "%s: tensor %d has layout %s", op, t.ID, t.Layout)
	}
	return nil
}

// MaxRank is the largest tensor rank gdnn accepts.
const MaxRank = 12

// isFloat reports whether t is float data an op takes: f32, bf16, f16,
// or f64 (a gdnn extension: reductions and their fused ops compute f64
// data in float64).
func isFloat(t dtypes.DataType) bool { return t.IsFloat() || t == dtypes.F64 }

// wideDsts is the table of the dst types a Reduce* op over f64 src may
// have: its reductions compute in float64 and round once.
var wideDsts = map[dtypes.DataType][]dtypes.DataType{dtypes.F64: {dtypes.F64, dtypes.F32}}

// floatTypes: every input f32, bf16 or f16; every output too, except that
// an eltwise or binary op's output may be s8, u8 or s32 (see intOutput).
func floatTypes(op *Op) error {
	for _, t := range op.Inputs {
		if !isFloat(t.DataType) {
			return Errorf(InvalidDataType, "%s: input tensor %d is %s, want f32, bf16, f16 or f64", op, t.ID, t.DataType)
		}
	}
	for _, t := range op.Outputs {
		if isFloat(t.DataType) || intOutput(op, t) {
			continue
		}
		want := "f32, bf16, f16 or f64"
		if op.Kind.IsEltwise() || op.Kind.IsBinary() {
			want = "f32, bf16, f16, f64, or s8, u8 or s32 from an f32 input"
		}
		return Errorf(InvalidDataType, "%s: output tensor %d is %s, want %s", op, t.ID, t.DataType, want)
	}
	return nil
}

// intOutput reports whether out is an integer output gdnn takes as an
// extension of oneDNN Graph: an eltwise or binary op may store its f32
// result to an s8, u8 or s32 tensor, rounded to nearest even and
// saturated, as oneDNN's reduction primitive stores a post-op chain's
// result to an integer dst. That is how a fused chain after a reduction of
// 8-bit data ends in an integer tensor while its post-ops compute in f32.
// No partition runs such an op on its own.
func intOutput(op *Op, out LogicalTensor) bool {
	if !out.DataType.IsInt() {
		return false
	}
	switch {
	case op.Kind.IsEltwise():
		return op.Inputs[0].DataType == dtypes.F32
	case op.Kind.IsBinary():
		return op.Inputs[0].DataType == dtypes.F32 || op.Inputs[1].DataType == dtypes.F32
	}
	return false
}

// binaryTypes: floatTypes, except that one input may be s8, u8 or s32, a
// gdnn extension mirroring oneDNN's binary and sum post-ops, which read an
// integer second tensor widened to f32 (s32 beyond 2^24 rounded to
// nearest even). That is how a fused chain accumulates into an integer
// tensor: Reduce* -> Add(result, previous s32 dst) -> s32. A partition
// fuses such an op only where the chain's own tensor is the float input.
func binaryTypes(op *Op) error {
	a, b := op.Inputs[0], op.Inputs[1]
	for _, t := range op.Inputs {
		if !isFloat(t.DataType) && !t.DataType.IsInt() {
			return Errorf(InvalidDataType, "%s: input tensor %d is %s, want f32, bf16, f16 or f64 (one of the two inputs may be s8, u8 or s32)",
				op, t.ID, t.DataType)
		}
	}
	if !a.DataType.IsInt() && !b.DataType.IsInt() {
		return floatTypes(op)
	}
	if a.DataType.IsInt() && b.DataType.IsInt() {
		return Errorf(InvalidDataType, "%s: input tensors %d and %d are %s and %s; at most one input may be an integer",
			op, a.ID, b.ID, a.DataType, b.DataType)
	}
	f := a
	if f.DataType.IsInt() {
		f = b
	}
	if !isFloat(f.DataType) {
		return Errorf(InvalidDataType, "%s: input tensor %d is %s, want f32, bf16, f16 or f64", op, f.ID, f.DataType)
	}
	out := op.Outputs[0]
	if !isFloat(out.DataType) && !intOutput(op, out) {
		return Errorf(InvalidDataType, "%s: output tensor %d is %s, want f32, bf16, f16, f64, or s8, u8 or s32 from an f32 input",
			op, out.ID, out.DataType)
	}
	return nil
}

func sameFloatTypes(op *Op) error {
	if err := floatTypes(op); err != nil {
		return err
	}
	if in, out := op.Inputs[0], op.Outputs[0]; in.DataType != out.DataType && !intOutput(op, out) {
		return Errorf(InvalidDataType, "%s: output tensor %d is %s but input tensor %d is %s; %s keeps the data type",
			op, out.ID, out.DataType, in.ID, in.DataType, op.Kind)
	}
	return nil
}

// reduceTypes: src f32/bf16/f16 with dst the same as src, or f32; src
// f64 with dst f64 or f32 (wideDsts); or, as
// gdnn extensions mirroring oneDNN's reduction primitive, src f32/bf16/f16
// with dst s8, u8 or s32, and src s8/u8 with dst s8, u8, s32, f32, bf16
// or f16 (computed in f32 or exactly, then rounded to nearest even and
// saturated into an integer dst). Axes s32 or s64 (oneDNN Graph takes
// s32; ONNX's axes input is int64).
func reduceTypes(op *Op) error {
	src, dst := op.Inputs[0], op.Outputs[0]
	if r, _ := plan.OfGraphOp(op.Kind.String()); plan.IsExact(src.DataType, r) || r.IsBitwise() || r.Transform == plan.TransformNonzero {
		var e *status.Error
		if err := plan.CheckExact(src.DataType, dst.DataType, r); errors.As(err, &e) {
			return Errorf(e.Status, "%s: src tensor %d is %s, dst tensor %d is %s: %s", op, src.ID, src.DataType, dst.ID, dst.DataType,
				strings.TrimPrefix(e.Msg, "plan: "))
		}
		return axesTypes(op)
	}
	wide, srcWide := wideDsts[src.DataType]
	switch {
	case srcWide && !slices.Contains(wide, dst.DataType):
		return Errorf(InvalidDataType, "%s: dst tensor %d is %s; with src %s it must be f64 or f32", op, dst.ID, dst.DataType, src.DataType)
	case srcWide:
	case dst.DataType == dtypes.F64:
		return Errorf(InvalidDataType, "%s: dst tensor %d is f64, which takes an f64 src (src %s)", op, dst.ID, src.DataType)
	case src.DataType.IsInt8():
		if !dst.DataType.IsFloat() && !dst.DataType.IsInt() {
			return Errorf(InvalidDataType, "%s: dst tensor %d is %s; with src %s it must be s8, u8, s32, f32, bf16 or f16",
				op, dst.ID, dst.DataType, src.DataType)
		}
	case !isFloat(src.DataType):
		return Errorf(InvalidDataType, "%s: src tensor %d is %s, want f32, bf16, f16, f64, an integer type or boolean", op, src.ID, src.DataType)
	case dst.DataType != src.DataType && dst.DataType != dtypes.F32 && !dst.DataType.IsInt():
		want := src.DataType.String() + ", f32, s8, u8 or s32"
		if src.DataType == dtypes.F32 {
			want = "f32, s8, u8 or s32"
		}
		return Errorf(InvalidDataType, "%s: dst tensor %d is %s; with src %s it must be %s",
			op, dst.ID, dst.DataType, src.DataType, want)
	}
	return axesTypes(op)
}

// axesTypes checks a reduction's axes input: s32 or s64.
func axesTypes(op *Op) error {
	if len(op.Inputs) == 2 {
		if ax := op.Inputs[1]; ax.DataType != dtypes.S32 && ax.DataType != dtypes.S64 {
			return Errorf(InvalidDataType, "%s: axes tensor %d is %s, want s32 or s64", op, ax.ID, ax.DataType)
		}
	}
	return nil
}
