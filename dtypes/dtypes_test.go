package dtypes_test

import (
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
)

// dataTypes is the table every property of DataType is checked against,
// written out from oneDNN Graph's names and element sizes.
var dataTypes = []struct {
	t     dtypes.DataType
	name  string
	size  int
	valid bool
	float bool
}{
	{dtypes.Undef, "undef", 0, false, false},
	{dtypes.F32, "f32", 4, true, true},
	{dtypes.BF16, "bf16", 2, true, true},
	{dtypes.F16, "f16", 2, true, true},
	{dtypes.S32, "s32", 4, true, false},
	{dtypes.S64, "s64", 8, true, false},
	{dtypes.S8, "s8", 1, true, false},
	{dtypes.U8, "u8", 1, true, false},
	{dtypes.Boolean, "boolean", 1, true, false},
	{dtypes.F64, "f64", 8, true, false},
	{dtypes.U32, "u32", 4, true, false},
	{dtypes.U64, "u64", 8, true, false},
	{dtypes.S16, "s16", 2, true, false},
	{dtypes.U16, "u16", 2, true, false},
}

func TestDataTypeTable(t *testing.T) {
	seen := map[dtypes.DataType]bool{}
	for _, c := range dataTypes {
		if seen[c.t] {
			t.Errorf("%s: value %d used twice", c.name, int(c.t))
		}
		seen[c.t] = true
		if got := c.t.String(); got != c.name {
			t.Errorf("DataType(%d).String() = %q, want %q", int(c.t), got, c.name)
		}
		got, err := dtypes.Parse(c.name)
		if err != nil || got != c.t {
			t.Errorf("Parse(%q) = %v, %v; want %v, nil", c.name, got, err, c.t)
		}
		if got := c.t.Size(); got != c.size {
			t.Errorf("%s.Size() = %d, want %d", c.name, got, c.size)
		}
		if got := c.t.Valid(); got != c.valid {
			t.Errorf("%s.Valid() = %v, want %v", c.name, got, c.valid)
		}
		if got := c.t.IsFloat(); got != c.float {
			t.Errorf("%s.IsFloat() = %v, want %v", c.name, got, c.float)
		}
	}
	if dtypes.DataType(0) != dtypes.Undef {
		t.Errorf("the zero DataType is %v, want undef", dtypes.DataType(0))
	}
}

// Values outside the table are neither valid nor float, have size 0 and a
// String that names the number (and that Parse does not accept).
func TestDataTypeOutOfRange(t *testing.T) {
	for _, v := range []int{-1, len(dataTypes), len(dataTypes) + 1, 1 << 20} {
		d := dtypes.DataType(v)
		if d.Valid() || d.IsFloat() || d.Size() != 0 {
			t.Errorf("DataType(%d): Valid %v, IsFloat %v, Size %d; want false, false, 0",
				v, d.Valid(), d.IsFloat(), d.Size())
		}
		s := d.String()
		if !strings.Contains(s, "DataType(") {
			t.Errorf("DataType(%d).String() = %q, want it to name the number", v, s)
		}
		if _, err := dtypes.Parse(s); err == nil {
			t.Errorf("Parse(%q) accepted an out-of-range name", s)
		}
	}
}

func TestParseUnknown(t *testing.T) {
	for _, s := range []string{"", "F32", "fp32", "float32", "bf8", "f 32", " f32", "f32 ", "bool", "int32"} {
		got, err := dtypes.Parse(s)
		if err == nil {
			t.Errorf("Parse(%q) = %v, nil; want an error", s, got)
			continue
		}
		if got != dtypes.Undef {
			t.Errorf("Parse(%q) returned %v with its error, want undef", s, got)
		}
		if s != "" && !strings.Contains(err.Error(), s) {
			t.Errorf("Parse(%q) error %q does not name the input", s, err)
		}
	}
}
