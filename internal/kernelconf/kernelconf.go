// Package kernelconf holds what the emitters' choosers share: the target
// a kernel is chosen for (an instruction set and a core family) and the
// names of the kernel shapes.
//
// Each emitter decides a kernel's whole configuration before it emits a
// byte (amd64.Choose, arm64.Choose: "decide, then lower", as oneDNN
// fills its conf_ before generate()). The decisions themselves stay with
// the emitters, in files that decide and never emit, because nearly all
// of them weigh one instruction set's costs (AVX-512's opmasks and
// VRANGEPS, AVX2's sixteen registers, NEON's pairwise adds) and one core
// family's measured figures; what both read (the target, the shape
// names that verbose output prints) is here, so that a kernel's
// configuration reads alike on every ISA.
package kernelconf

// ISA is the instruction set a kernel is chosen for.
type ISA uint8

const (
	AVX2       ISA = iota // AVX2, FMA and F16C
	AVX512                // AVX-512 F, BW, DQ and VL
	AVX512BF16            // AVX512 with AVX512_BF16 (VCVTNEPS2BF16)
	NEON                  // AArch64 base ASIMD
)

var isaNames = [...]string{AVX2: "avx2", AVX512: "avx512", AVX512BF16: "avx512_bf16", NEON: "neon"}

func (i ISA) String() string {
	if int(i) < len(isaNames) {
		return isaNames[i]
	}
	return "isa?"
}

// Family is the core family whose measured figures tune the choices.
// Intel is the family the generators were first tuned on, and the one
// every other core gets.
type Family uint8

const (
	Intel Family = iota
	Zen          // AMD Zen 3 and later
)

func (f Family) String() string {
	if f == Zen {
		return "zen"
	}
	return "intel"
}

// Target is what a kernel's configuration is chosen for.
type Target struct {
	ISA    ISA
	Family Family
}

// String is the ISA and, on amd64, the family ("avx512/zen"): no NEON
// family is tuned apart.
func (t Target) String() string {
	if t.ISA == NEON {
		return t.ISA.String()
	}
	return t.ISA.String() + "/" + t.Family.String()
}

// Shape is the kernel shape a plan is lowered to.
type Shape uint8

const (
	// Empty: no output is written (a kept loop of size 0).
	Empty Shape = iota
	// Row: the innermost reduced loop is contiguous, rows a vector at a time.
	Row
	// Element: nothing reduced is contiguous, an element at a time.
	Element
	// Column: a contiguous kept Inner, accumulated in blocks over the rows.
	Column
	// FlatColumn: a narrow Inner whose rows are back to back, read as one stream.
	FlatColumn
	// RowByRow: a stage-1 column plan reduced a row at a time into its dst row.
	RowByRow
)

var shapeNames = [...]string{Empty: "empty", Row: "row", Element: "element", Column: "column",
	FlatColumn: "flat-column", RowByRow: "row-by-row"}

func (s Shape) String() string {
	if int(s) < len(shapeNames) {
		return shapeNames[s]
	}
	return "shape?"
}

// Hints are what the runtime knows of a plan's place in a problem that
// the plan, a pure description of one kernel's loops, does not say. The
// runtime passes them to the emitter with the plan; they change how the
// kernel reads, never what it computes, and a kernel's cache key
// includes them (Key).
type Hints struct {
	// RowByRow asks for the rows of a column plan to be reduced one
	// after the other into the dst (f32 partials, or the native kernel's
	// lanes), as an accumulator row, instead
	// of in blocks of columns held in registers down all the rows. The
	// runtime sets it on stage-1 plans of long reductions over wide,
	// contiguous rows in a large src, which are read best as one stream
	// (rowByRow in internal/jit/decompose.go). Each output still takes
	// its rows in order, in one chain; the interpreter and emitters
	// without the form ignore it, and emitters take it only where the
	// plan has the shape the form needs.
	RowByRow bool
	// FromMemory says the plan is part of a problem whose src is too
	// large for the caches, so that its loads are served by DRAM (the
	// runtime sets it on every sub-plan of a problem reading at least 32
	// MiB of src). An emitter may then read at the pace the memory
	// serves best (amd64 on Zen cores paces its row sweeps): that changes
	// the order of a sum's adds, not what is summed, and it is in the
	// key, so results still do not depend on the thread count.
	FromMemory bool
}

// Key is the hints' part of a kernel's cache key, appended to the plan's
// (plan.Plan.Key).
func (h Hints) Key() string { return h.spell(";rowbyrow", ";mem") }

// String is the hints for verbose output: " rowbyrow", " frommemory",
// both or "".
func (h Hints) String() string { return h.spell(" rowbyrow", " frommemory") }

// spell joins the words of the hints that are set.
func (h Hints) spell(rowByRow, fromMemory string) string {
	s := ""
	if h.RowByRow {
		s += rowByRow
	}
	if h.FromMemory {
		s += fromMemory
	}
	return s
}
