package graph

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/gdnn/gdnn/dtypes"
)

// MaxJSONBytes is the largest graph JSON ReadJSON reads (64 MiB). Dumps of
// whole models are a few MiB; the cap bounds what a hostile file can make
// ReadJSON allocate.
const MaxJSONBytes = 64 << 20

// jsonVersion is the format version WriteJSON writes: the oneDNN Graph
// serialization format 3.x that ReadJSON reads.
const jsonVersion = "3.0.0"

// jsonLimits bounds the counts a graph JSON may hold, so that memory use
// stays proportional to what a real graph needs even within MaxJSONBytes.
type jsonLimits struct {
	ops        int // ops in "graph"
	ports      int // inputs, or outputs, of one op
	tensorRefs int // tensor entries of all ops together, and of each ports list
	attrs      int // attributes of one op
	attrElems  int // elements of all array attributes together
	keys       int // keys of one JSON object
	skipDepth  int // nesting depth of the value of an ignored (unknown) field
}

// defaultJSONLimits are generous for real dumps (large models have a few
// thousand ops and per-channel f32[] attributes of a few thousand values).
var defaultJSONLimits = jsonLimits{
	ops: 1 << 16, ports: 1 << 10, tensorRefs: 1 << 18, attrs: 256, attrElems: 1 << 20, keys: 1024, skipDepth: 64,
}

// fpmathModes are oneDNN's fpmath_mode names. gdnn always computes at least
// as precisely as "strict", so every mode is honoured.
var fpmathModes = []string{"strict", "bf16", "f16", "tf32", "any"}

// ReadJSON parses a graph in oneDNN Graph's serialization format (version
// 3.x, as written by ONEDNN_GRAPH_DUMP and read by benchdnn's graph
// driver) and adds its ops, in file order, with AddOp, so every schema rule
// applies. It does not call Finalize: callers may first edit the graph's
// input shapes (as benchdnn's --in-shapes does) and must then call
// Finalize themselves.
//
// The top-level object holds "version" (major 3), "engine_kind" ("cpu"),
// "graph" (the ops), and optionally "fpmath_mode" (kept in Graph.FPMath;
// "strict" when absent) and "input_ports"/"output_ports" (checked to name
// tensors of the graph; the graph derives its ports itself, except that an
// output port that ops of the graph also consume gets an End op reading
// it, as oneDNN marks such a graph output, so that no fused partition
// swallows it). Each op holds
// "id", "kind", "inputs", "outputs" and optionally "name" and "attrs"; each
// attribute is {"type": "s64"|"s64[]"|"f32"|"f32[]"|"bool"|"string",
// "value": ...}, with bools as 0/1 or false/true. Each tensor holds "id",
// "dtype", "shape", "layout_type" ("strided", "any" or "undef") and
// optionally "stride" and "property_type". A dim or stride of -1 or
// INT64_MIN (DNNL_GRAPH_UNKNOWN_DIM in oneDNN 3.x) is unknown, in inputs
// and outputs alike, and any other negative value is an InvalidShape
// error; a null shape is an unknown rank; an absent or null stride of a
// strided tensor means dense strides, filled in by Finalize. Fields gdnn
// does not know are ignored so that dumps of newer oneDNN versions still
// load.
//
// Every malformed input gives an error wrapping a Status whose message
// names the JSON path (e.g. graph[2].inputs[0].shape[1]) and the bad
// value. Values oneDNN defines but gdnn does not implement (engine_kind
// "gpu", op kinds such as "AvgPool", data types such as "f8_e4m3",
// property_type "host_scalar", layout_type "opaque", a version other than
// 3) give Unimplemented instead, so callers can tell a valid case gdnn
// cannot run from a broken file. The input may hold at most MaxJSONBytes; counts of ops, tensors
// and attribute values are bounded too.
func ReadJSON(r io.Reader) (*Graph, error) {
	return readJSON(r, defaultJSONLimits)
}

// readJSON is ReadJSON with explicit limits, so tests can reach them cheaply.
func readJSON(r io.Reader, lim jsonLimits) (*Graph, error) {
	if r == nil {
		return nil, Errorf(InvalidArguments, "ReadJSON: the reader is nil")
	}
	capped := &capReader{r: io.LimitReader(r, MaxJSONBytes+1)}
	jr := &jsonReader{dec: newJSONDecoder(capped), lim: lim}
	doc, err := jr.document()
	if err != nil {
		return nil, err
	}
	// Exactly one value: anything after it but white space is an error.
	tok, err := jr.dec.Token()
	var se *json.SyntaxError
	switch {
	case err == io.EOF:
	case errors.As(err, &se):
		return nil, pathErr(InvalidArguments, "", "trailing data after the top-level object near byte %d: %v", jr.dec.InputOffset(), se)
	case err != nil:
		return nil, jr.tokenErr("", err)
	default:
		return nil, pathErr(InvalidArguments, "", "trailing data after the top-level object: %s", describe(tok))
	}
	return doc.build()
}

// errTooLarge reports input beyond MaxJSONBytes.
var errTooLarge = errors.New("input larger than MaxJSONBytes")

// capReader counts the bytes read and fails once more than MaxJSONBytes
// arrive (it reads through an io.LimitReader of MaxJSONBytes+1, so it never
// reads much more than that).
type capReader struct {
	r io.Reader
	n int64
}

func (c *capReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if c.n > MaxJSONBytes {
		return 0, errTooLarge
	}
	return n, err
}

func newJSONDecoder(r io.Reader) *json.Decoder {
	d := json.NewDecoder(r)
	d.UseNumber() // keeps int64 ids and dims exact
	return d
}

// jsonReader walks the token stream, building values as it goes and
// naming the path of whatever is wrong. Streaming (instead of decoding into
// a tree first) lets it stop at the first over-long array before storing it.
type jsonReader struct {
	dec   *json.Decoder
	lim   jsonLimits
	refs  int // tensor entries read
	elems int // array attribute elements read
}

// jsonDoc is the top-level object, read but not yet added to a Graph.
type jsonDoc struct {
	fpmath            string
	ops               []*Op
	inPorts, outPorts []uint64
}

// pathErr returns an error with status s naming the JSON path.
func pathErr(s Status, path, format string, args ...any) error {
	return Errorf(s, "JSON at %s: %s", shownPath(path), fmt.Sprintf(format, args...))
}

// atPath prefixes an error from elsewhere in the package with a JSON path,
// keeping its status.
func atPath(path string, err error) error {
	var e *Error
	if errors.As(err, &e) {
		return Errorf(e.Status, "JSON at %s: %s", shownPath(path), e.Msg)
	}
	return Errorf(InvalidArguments, "JSON at %s: %v", shownPath(path), err)
}

func shownPath(p string) string {
	if p == "" {
		return "top level"
	}
	return p
}

// keyPath appends an object key to a path: a.b for plain names, a["x y"]
// otherwise (so that the path stays unambiguous).
func keyPath(parent, key string) string {
	if isPlainKey(key) {
		if parent == "" {
			return key
		}
		return parent + "." + key
	}
	return parent + "[" + quoteShort(key) + "]"
}

func isPlainKey(k string) bool {
	if k == "" || len(k) > 64 {
		return false
	}
	for i, c := range k {
		if c != '_' && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}

func indexPath(parent string, i int) string { return parent + "[" + strconv.Itoa(i) + "]" }

// quoteShort quotes s, cut to 64 bytes so a hostile value cannot make a
// message huge.
func quoteShort(s string) string {
	if len(s) > 64 {
		return strconv.Quote(s[:64]) + "..."
	}
	return strconv.Quote(s)
}

// describe names a token for messages: `string "abc"`, `number 1.5`, ...
func describe(t json.Token) string {
	switch v := t.(type) {
	case json.Delim:
		switch v {
		case '[':
			return "an array"
		case '{':
			return "an object"
		}
		return "'" + v.String() + "'"
	case string:
		return "string " + quoteShort(v)
	case json.Number:
		if len(v) > 64 {
			return "number " + string(v[:64]) + "..."
		}
		return "number " + string(v)
	case bool:
		return fmt.Sprintf("bool %v", v)
	case nil:
		return "null"
	}
	return fmt.Sprintf("%v", t)
}

// tokenErr turns a decoder error into a Status error naming the path.
func (r *jsonReader) tokenErr(path string, err error) error {
	var se *json.SyntaxError
	switch {
	case errors.Is(err, errTooLarge):
		return Errorf(InvalidArguments, "graph JSON is larger than %d bytes (MaxJSONBytes)", MaxJSONBytes)
	case errors.As(err, &se):
		return pathErr(InvalidArguments, path, "not valid JSON near byte %d: %v", r.dec.InputOffset(), se)
	case err == io.EOF && r.dec.InputOffset() == 0:
		return pathErr(InvalidArguments, path, "the input is empty; want a JSON object")
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return pathErr(InvalidArguments, path, "the JSON ends too early (truncated input)")
	}
	return Errorf(RuntimeError, "reading graph JSON at %s: %v", shownPath(path), err)
}

func (r *jsonReader) token(path string) (json.Token, error) {
	t, err := r.dec.Token()
	if err != nil {
		return nil, r.tokenErr(path, err)
	}
	return t, nil
}

// object reads one object, calling field for each key (field must consume
// the value), and returns the set of keys seen. A key may appear once.
func (r *jsonReader) object(path string, field func(key, kpath string) error) (map[string]bool, error) {
	t, err := r.token(path)
	if err != nil {
		return nil, err
	}
	if d, ok := t.(json.Delim); !ok || d != '{' {
		return nil, pathErr(InvalidArguments, path, "want an object, got %s", describe(t))
	}
	seen := map[string]bool{}
	for {
		t, err := r.token(path)
		if err != nil {
			return nil, err
		}
		if d, ok := t.(json.Delim); ok && d == '}' {
			return seen, nil
		}
		key, ok := t.(string)
		if !ok { // the decoder guarantees a key here; kept as a guard
			return nil, pathErr(InvalidArguments, path, "want an object key, got %s", describe(t))
		}
		kp := keyPath(path, key)
		if seen[key] {
			return nil, pathErr(InvalidArguments, kp, "the key %s appears twice in one object", quoteShort(key))
		}
		if len(seen) >= r.lim.keys {
			return nil, pathErr(InvalidArguments, path, "the object has more than %d keys", r.lim.keys)
		}
		seen[key] = true
		if err := field(key, kp); err != nil {
			return nil, err
		}
	}
}

// require checks that every name is in seen.
func require(path string, seen map[string]bool, names ...string) error {
	for _, n := range names {
		if !seen[n] {
			return pathErr(InvalidArguments, path, "missing field %q", n)
		}
	}
	return nil
}

// array reads one array, calling elem for each element (elem must consume
// it, and may refuse an index beyond a limit before reading it). With
// allowNull, null is accepted and reported as isNull.
func (r *jsonReader) array(path string, allowNull bool, elem func(i int, ipath string) error) (isNull bool, err error) {
	t, err := r.token(path)
	if err != nil {
		return false, err
	}
	if t == nil && allowNull {
		return true, nil
	}
	if d, ok := t.(json.Delim); !ok || d != '[' {
		return false, pathErr(InvalidArguments, path, "want an array, got %s", describe(t))
	}
	for i := 0; r.dec.More(); i++ {
		if err := elem(i, indexPath(path, i)); err != nil {
			return false, err
		}
	}
	// The closing ']' (or the syntax error that stopped More).
	if _, err := r.token(path); err != nil {
		return false, err
	}
	return false, nil
}

// skip consumes one value of a field gdnn ignores, bounding its nesting.
func (r *jsonReader) skip(path string) error {
	depth := 0
	for {
		t, err := r.token(path)
		if err != nil {
			return err
		}
		if d, ok := t.(json.Delim); ok {
			switch d {
			case '[', '{':
				depth++
				if depth > r.lim.skipDepth {
					return pathErr(InvalidArguments, path, "the value is nested more than %d levels deep", r.lim.skipDepth)
				}
			default:
				depth--
			}
		}
		if depth == 0 {
			return nil
		}
	}
}

func (r *jsonReader) str(path string) (string, error) {
	t, err := r.token(path)
	if err != nil {
		return "", err
	}
	s, ok := t.(string)
	if !ok {
		return "", pathErr(InvalidArguments, path, "want a string, got %s", describe(t))
	}
	return s, nil
}

func (r *jsonReader) number(path, want string) (json.Number, error) {
	t, err := r.token(path)
	if err != nil {
		return "", err
	}
	n, ok := t.(json.Number)
	if !ok {
		return "", pathErr(InvalidArguments, path, "want %s, got %s", want, describe(t))
	}
	return n, nil
}

// id reads an op or tensor id: an integer in [0, 2^64-1].
func (r *jsonReader) id(path string) (uint64, error) {
	n, err := r.number(path, "an id (an integer in [0, 2^64-1])")
	if err != nil {
		return 0, err
	}
	s := string(n)
	v, perr := strconv.ParseUint(s, 10, 64)
	switch {
	case perr == nil:
		return v, nil
	case strings.HasPrefix(s, "-"):
		return 0, pathErr(InvalidArguments, path, "id %s is negative; ids are in [0, 2^64-1]", s)
	case errors.Is(perr, strconv.ErrRange):
		return 0, pathErr(InvalidArguments, path, "id %s is beyond 2^64-1", s)
	}
	return 0, pathErr(InvalidArguments, path, "want an id (an integer in [0, 2^64-1]), got %s", describe(n))
}

func (r *jsonReader) int64(path string) (int64, error) {
	n, err := r.number(path, "an integer")
	if err != nil {
		return 0, err
	}
	v, perr := strconv.ParseInt(string(n), 10, 64)
	switch {
	case perr == nil:
		return v, nil
	case errors.Is(perr, strconv.ErrRange):
		return 0, pathErr(InvalidArguments, path, "integer %s is outside the int64 range", string(n))
	}
	return 0, pathErr(InvalidArguments, path, "want an integer, got %s", describe(n))
}

// f32 reads a finite number and rounds it to float32 (once, from the
// decimal text, so the value is the nearest float32).
func (r *jsonReader) f32(path string) (float32, error) {
	n, err := r.number(path, "a number")
	if err != nil {
		return 0, err
	}
	v, perr := strconv.ParseFloat(string(n), 32)
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, pathErr(InvalidArguments, path, "%s is outside the f32 range", describe(n))
	}
	if perr != nil && !errors.Is(perr, strconv.ErrRange) {
		return 0, pathErr(InvalidArguments, path, "want a number, got %s", describe(n))
	}
	return float32(v), nil
}

// boolean reads a bool: dumps write 0 or 1; true and false are accepted too.
func (r *jsonReader) boolean(path string) (bool, error) {
	t, err := r.token(path)
	if err != nil {
		return false, err
	}
	switch v := t.(type) {
	case bool:
		return v, nil
	case json.Number:
		switch v {
		case "0":
			return false, nil
		case "1":
			return true, nil
		}
	}
	return false, pathErr(InvalidArguments, path, "want a bool (0, 1, false or true), got %s", describe(t))
}

// document reads the top-level object.
func (r *jsonReader) document() (*jsonDoc, error) {
	doc := &jsonDoc{fpmath: "strict"}
	seen, err := r.object("", func(key, p string) error {
		switch key {
		case "version":
			s, err := r.str(p)
			if err != nil {
				return err
			}
			return checkVersion(p, s)
		case "engine_kind":
			s, err := r.str(p)
			if err != nil {
				return err
			}
			switch s {
			case "cpu":
				return nil
			case "gpu":
				// oneDNN's other engine: a valid case gdnn cannot run.
				return pathErr(Unimplemented, p, "engine_kind %s: gdnn runs graphs on \"cpu\" only", quoteShort(s))
			}
			return pathErr(InvalidArguments, p, "unknown engine_kind %s, want cpu or gpu", quoteShort(s))
		case "fpmath_mode":
			s, err := r.str(p)
			if err != nil {
				return err
			}
			if !slices.Contains(fpmathModes, s) {
				return pathErr(InvalidArguments, p, "fpmath_mode %s, want one of %s", quoteShort(s), strings.Join(fpmathModes, ", "))
			}
			doc.fpmath = s
			return nil
		case "input_ports":
			var err error
			doc.inPorts, err = r.ports(p)
			return err
		case "output_ports":
			var err error
			doc.outPorts, err = r.ports(p)
			return err
		case "graph":
			var err error
			doc.ops, err = r.ops(p)
			return err
		}
		return r.skip(p)
	})
	if err != nil {
		return nil, err
	}
	if err := require("", seen, "version", "engine_kind", "graph"); err != nil {
		return nil, err
	}
	return doc, nil
}

// checkVersion accepts "3", "3.x" and "3.x.y" (decimal numbers only).
func checkVersion(path, s string) error {
	parts := strings.Split(s, ".")
	if len(parts) > 3 {
		return pathErr(InvalidArguments, path, "version %s is not of the form MAJOR.MINOR.PATCH", quoteShort(s))
	}
	for _, p := range parts {
		if p == "" || len(p) > 9 || strings.Trim(p, "0123456789") != "" {
			return pathErr(InvalidArguments, path, "version %s is not of the form MAJOR.MINOR.PATCH", quoteShort(s))
		}
	}
	if major, _ := strconv.Atoi(parts[0]); major != 3 {
		return pathErr(Unimplemented, path, "version %s: gdnn reads the version 3 format only", quoteShort(s))
	}
	return nil
}

// ports reads an input_ports or output_ports list of tensor ids.
func (r *jsonReader) ports(path string) ([]uint64, error) {
	ids := []uint64{}
	_, err := r.array(path, false, func(i int, p string) error {
		if i >= r.lim.tensorRefs {
			return pathErr(InvalidArguments, path, "has more than %d entries", r.lim.tensorRefs)
		}
		id, err := r.id(p)
		ids = append(ids, id)
		return err
	})
	return ids, err
}

// ops reads the "graph" array.
func (r *jsonReader) ops(path string) ([]*Op, error) {
	var ops []*Op
	_, err := r.array(path, false, func(i int, p string) error {
		if i >= r.lim.ops {
			return pathErr(InvalidArguments, path, "has more than %d ops", r.lim.ops)
		}
		op, err := r.op(p)
		ops = append(ops, op)
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(ops) == 0 {
		return nil, pathErr(InvalidGraph, path, "the graph has no ops")
	}
	return ops, nil
}

// namedAttr is one attribute as read, in file order.
type namedAttr struct {
	name string
	a    Attr
}

// op reads one op object and builds the Op (AddOp checks it later).
func (r *jsonReader) op(path string) (*Op, error) {
	var (
		id              uint64
		kind            OpKind
		name            string
		attrs           []namedAttr
		inputs, outputs []LogicalTensor
	)
	seen, err := r.object(path, func(key, p string) error {
		var err error
		switch key {
		case "id":
			id, err = r.id(p)
		case "name":
			name, err = r.str(p)
		case "kind":
			var s string
			if s, err = r.str(p); err == nil {
				if kind, err = ParseOpKind(s); err != nil {
					err = unknownOpKindErr(p, s)
				}
			}
		case "attrs":
			attrs, err = r.attrs(p)
		case "inputs":
			inputs, err = r.tensors(p)
		case "outputs":
			outputs, err = r.tensors(p)
		default:
			err = r.skip(p)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := require(path, seen, "id", "kind", "inputs", "outputs"); err != nil {
		return nil, err
	}
	op := NewOp(id, kind, name)
	for _, na := range attrs {
		op.SetAttr(na.name, na.a)
	}
	for _, t := range inputs {
		op.AddInput(t)
	}
	for _, t := range outputs {
		op.AddOutput(t)
	}
	return op, nil
}

// attrs reads an op's "attrs" object.
func (r *jsonReader) attrs(path string) ([]namedAttr, error) {
	var out []namedAttr
	_, err := r.object(path, func(key, p string) error {
		if len(out) >= r.lim.attrs {
			return pathErr(InvalidArguments, path, "has more than %d attributes", r.lim.attrs)
		}
		a, err := r.attr(p)
		out = append(out, namedAttr{key, a})
		return err
	})
	return out, err
}

// attr reads {"type": T, "value": V}. The value is parsed by its declared
// type; when "value" comes before "type" it is kept raw until the type is
// known.
func (r *jsonReader) attr(path string) (Attr, error) {
	var (
		typ       AttrType
		haveType  bool
		a         Attr
		raw       json.RawMessage
		valuePath = keyPath(path, "value")
	)
	seen, err := r.object(path, func(key, p string) error {
		switch key {
		case "type":
			s, err := r.str(p)
			if err != nil {
				return err
			}
			t, ok := parseAttrType(s)
			if !ok {
				return pathErr(InvalidArguments, p, "unknown attribute type %s, want one of s64, s64[], f32, f32[], bool, string", quoteShort(s))
			}
			typ, haveType = t, true
			return nil
		case "value":
			if haveType {
				var err error
				a, err = r.attrValue(p, typ)
				return err
			}
			if err := r.dec.Decode(&raw); err != nil {
				return r.tokenErr(p, err)
			}
			return nil
		}
		return r.skip(p)
	})
	if err != nil {
		return Attr{}, err
	}
	if err := require(path, seen, "type", "value"); err != nil {
		return Attr{}, err
	}
	if raw != nil {
		sub := *r
		sub.dec = newJSONDecoder(bytes.NewReader(raw))
		if a, err = sub.attrValue(valuePath, typ); err != nil {
			return Attr{}, err
		}
		r.elems = sub.elems
	}
	return a, nil
}

// attrValue reads a value of attribute type t.
func (r *jsonReader) attrValue(path string, t AttrType) (Attr, error) {
	a := Attr{Type: t}
	var err error
	switch t {
	case AttrS64:
		a.I, err = r.int64(path)
	case AttrF32:
		a.F, err = r.f32(path)
	case AttrBool:
		a.B, err = r.boolean(path)
	case AttrString:
		a.S, err = r.str(path)
	case AttrS64s:
		a.Is = []int64{}
		_, err = r.array(path, false, func(_ int, p string) error {
			if err := r.countElem(path); err != nil {
				return err
			}
			v, err := r.int64(p)
			a.Is = append(a.Is, v)
			return err
		})
	case AttrF32s:
		a.Fs = []float32{}
		_, err = r.array(path, false, func(_ int, p string) error {
			if err := r.countElem(path); err != nil {
				return err
			}
			v, err := r.f32(p)
			a.Fs = append(a.Fs, v)
			return err
		})
	default:
		err = pathErr(InvalidArguments, path, "attribute type %s has no JSON form", t)
	}
	return a, err
}

func (r *jsonReader) countElem(path string) error {
	r.elems++
	if r.elems > r.lim.attrElems {
		return pathErr(InvalidArguments, path, "the graph's array attributes hold more than %d values", r.lim.attrElems)
	}
	return nil
}

// tensors reads an op's "inputs" or "outputs" array.
func (r *jsonReader) tensors(path string) ([]LogicalTensor, error) {
	ts := []LogicalTensor{}
	_, err := r.array(path, false, func(i int, p string) error {
		if i >= r.lim.ports {
			return pathErr(InvalidArguments, path, "has more than %d tensors", r.lim.ports)
		}
		if r.refs++; r.refs > r.lim.tensorRefs {
			return pathErr(InvalidArguments, p, "the graph has more than %d tensor entries", r.lim.tensorRefs)
		}
		t, err := r.tensor(p)
		ts = append(ts, t)
		return err
	})
	return ts, err
}

// tensor reads one logical tensor object.
func (r *jsonReader) tensor(path string) (LogicalTensor, error) {
	var (
		t       LogicalTensor
		strides []int64
	)
	seen, err := r.object(path, func(key, p string) error {
		var err error
		switch key {
		case "id":
			t.ID, err = r.id(p)
		case "dtype":
			var s string
			if s, err = r.str(p); err == nil {
				t.DataType, err = parseTensorDType(p, s)
			}
		case "shape":
			t.Dims, err = r.dims(p, "dims")
		case "stride":
			strides, err = r.dims(p, "strides")
		case "layout_type":
			var s string
			if s, err = r.str(p); err == nil {
				t.Layout, err = parseLayout(p, s)
			}
		case "property_type":
			var s string
			if s, err = r.str(p); err == nil {
				t.Property, err = parseProperty(p, s)
			}
		default:
			err = r.skip(p)
		}
		return err
	})
	if err != nil {
		return LogicalTensor{}, err
	}
	if err := require(path, seen, "id", "dtype", "shape", "layout_type"); err != nil {
		return LogicalTensor{}, err
	}
	// Strides mean something only for strided tensors; dumps write [] for
	// the others, which is dropped.
	if t.Layout == LayoutStrided {
		t.Strides = strides
		if t.Strides != nil && t.Dims != nil && len(t.Strides) != len(t.Dims) {
			return LogicalTensor{}, pathErr(InvalidShape, keyPath(path, "stride"),
				"has %d entries but the shape has %d dims", len(t.Strides), len(t.Dims))
		}
	}
	return t, nil
}

// oneDNNOpKinds are the op kinds of oneDNN Graph 3.x (dnnl::graph::op::kind).
// A kind in this list that gdnn does not describe is valid input gdnn
// cannot run (Unimplemented); any other name is malformed (InvalidGraphOp).
var oneDNNOpKinds = []string{
	"Abs", "AbsBackward", "Add", "AvgPool", "AvgPoolBackward", "BatchNormForwardTraining",
	"BatchNormInference", "BatchNormTrainingBackward", "BiasAdd", "BiasAddBackward", "Clamp",
	"ClampBackward", "Concat", "Convolution", "ConvolutionBackwardData", "ConvolutionBackwardWeights",
	"ConvTranspose", "ConvTransposeBackwardData", "ConvTransposeBackwardWeights", "Dequantize", "Divide",
	"DynamicDequantize", "DynamicQuantize", "Elu", "EluBackward", "End", "Exp", "GELU", "GELUBackward",
	"GenIndex", "GreaterEqual", "GroupNorm", "HardSigmoid", "HardSigmoidBackward", "HardSwish",
	"HardSwishBackward", "Interpolate", "InterpolateBackward", "LayerNorm", "LayerNormBackward",
	"LeakyReLU", "Log", "LogSoftmax", "LogSoftmaxBackward", "MatMul", "Maximum", "MaxPool",
	"MaxPoolBackward", "Minimum", "Mish", "MishBackward", "Multiply", "Pow", "PReLU", "PReLUBackward",
	"Quantize", "Reciprocal", "ReduceL1", "ReduceL2", "ReduceMax", "ReduceMean", "ReduceMin", "ReduceProd",
	"ReduceSum", "ReLU", "ReLUBackward", "Reorder", "RMSNorm", "Round", "Select", "Sigmoid", "SigmoidBackward",
	"SoftMax", "SoftMaxBackward", "SoftPlus", "SoftPlusBackward", "Sqrt", "SqrtBackward", "Square",
	"SquaredDifference", "StaticReshape", "StaticTranspose", "Subtract", "Tanh", "TanhBackward",
	"TypeCast", "Wildcard",
}

// unknownOpKindErr is the error for an op kind ParseOpKind does not know.
func unknownOpKindErr(path, s string) error {
	if slices.Contains(oneDNNOpKinds, s) {
		return pathErr(Unimplemented, path, "op kind %s is a oneDNN op that gdnn does not implement", quoteShort(s))
	}
	return pathErr(InvalidGraphOp, path, "unknown op kind %s", quoteShort(s))
}

// oneDNNOnlyDataTypes are oneDNN data type names that package dtypes does
// not have: valid input that gdnn cannot run (Unimplemented), unlike a
// name oneDNN does not know either (InvalidArguments).
var oneDNNOnlyDataTypes = []string{"f8_e5m2", "f8_e4m3", "s4", "u4", "e8m0", "f4_e2m1", "f4_e3m0"}

func parseTensorDType(path, s string) (dtypes.DataType, error) {
	dt, err := dtypes.Parse(s)
	if err != nil {
		if slices.Contains(oneDNNOnlyDataTypes, s) {
			return 0, pathErr(Unimplemented, path, "data type %s is a oneDNN type that gdnn does not implement", quoteShort(s))
		}
		return 0, pathErr(InvalidArguments, path, "unknown data type %s", quoteShort(s))
	}
	if !dt.Valid() {
		return 0, pathErr(InvalidDataType, path, "data type %s is not a tensor data type", quoteShort(s))
	}
	return dt, nil
}

func parseLayout(path, s string) (Layout, error) {
	switch s {
	case "strided":
		return LayoutStrided, nil
	case "any":
		return LayoutAny, nil
	case "undef":
		return LayoutUndef, nil
	case "opaque":
		return 0, pathErr(Unimplemented, path, "layout_type \"opaque\" (a backend's private layout) is not supported")
	}
	return 0, pathErr(InvalidArguments, path, "unknown layout_type %s, want strided, any or undef", quoteShort(s))
}

func parseProperty(path, s string) (Property, error) {
	switch s {
	case "undef":
		return PropertyUndef, nil
	case "variable":
		return PropertyVariable, nil
	case "constant":
		return PropertyConstant, nil
	case "host_scalar":
		// oneDNN's scalar passed in host memory: valid, but gdnn has no such tensors.
		return 0, pathErr(Unimplemented, path, "property_type \"host_scalar\" is not supported")
	}
	return 0, pathErr(InvalidArguments, path, "unknown property_type %s, want undef, variable, constant or host_scalar", quoteShort(s))
}

// dims reads a shape or stride: null (unknown rank) or at most MaxRank
// integers, each >= 0 or unknown.
func (r *jsonReader) dims(path, what string) ([]int64, error) {
	d := []int64{}
	isNull, err := r.array(path, true, func(i int, p string) error {
		if i >= MaxRank {
			return pathErr(InvalidShape, path, "has more than %d %s (graph.MaxRank)", MaxRank, what)
		}
		v, err := r.int64(p)
		if err != nil {
			return err
		}
		switch {
		case v == UnknownDim || v == math.MinInt64:
			v = UnknownDim
		case v < 0:
			return pathErr(InvalidShape, p, "%d is negative (only -1 and INT64_MIN mark an unknown value)", v)
		}
		d = append(d, v)
		return nil
	})
	if err != nil || isNull {
		return nil, err
	}
	return d, nil
}

// build adds the ops to a new Graph and checks the ports lists.
func (doc *jsonDoc) build() (*Graph, error) {
	g := New()
	g.FPMath = doc.fpmath
	for i, op := range doc.ops {
		if err := g.AddOp(op); err != nil {
			return nil, atPath(indexPath("graph", i), err)
		}
	}
	if err := checkPorts(g, "input_ports", doc.inPorts, true); err != nil {
		return nil, err
	}
	if err := checkPorts(g, "output_ports", doc.outPorts, false); err != nil {
		return nil, err
	}
	if err := keepOutputs(g, doc.outPorts); err != nil {
		return nil, err
	}
	return g, nil
}

// keepOutputs adds an End op reading each listed output port that an op
// produces and other ops consume (unless an End op reads it already):
// oneDNN marks such a graph output with an End op, and its dumps list
// only tensors no op consumes as output_ports. With the End op, the
// tensor has a consumer outside any fused chain, so partitioning keeps it
// as a partition output instead of fusing it away. The End ops take
// unused op ids, counting up from one above the largest in the file.
func keepOutputs(g *Graph, ids []uint64) error {
	var next uint64
	for _, op := range g.ops {
		next = max(next, op.ID+1)
	}
	for _, id := range ids {
		cons := g.consumers[id]
		if g.producer[id] == nil || len(cons) == 0 || slices.ContainsFunc(cons, func(op *Op) bool { return op.Kind == End }) {
			continue
		}
		for g.byID[next] != nil {
			next++
		}
		t, _ := g.Tensor(id)
		if err := g.AddOp(NewOp(next, End, "output_port_"+strconv.FormatUint(id, 10)).AddInput(t)); err != nil {
			return err
		}
		next++
	}
	return nil
}

// checkPorts checks that each listed tensor is in g, listed once, and (for
// inputs) not produced by an op.
func checkPorts(g *Graph, path string, ids []uint64, inputs bool) error {
	seen := make(map[uint64]bool, len(ids))
	for i, id := range ids {
		p := indexPath(path, i)
		if _, ok := g.Tensor(id); !ok {
			return pathErr(InvalidGraph, p, "tensor %d is not in the graph", id)
		}
		if seen[id] {
			return pathErr(InvalidGraph, p, "tensor %d is listed twice", id)
		}
		seen[id] = true
		if prod := g.Producer(id); inputs && prod != nil {
			return pathErr(InvalidGraph, p, "tensor %d is produced by %s, so it is not a graph input", id, prod)
		}
	}
	return nil
}

// The output document, with fields in the order oneDNN's dumps use.
type (
	jsonDocOut struct {
		Version     string      `json:"version"`
		EngineKind  string      `json:"engine_kind"`
		FPMath      string      `json:"fpmath_mode"`
		InputPorts  []uint64    `json:"input_ports"`
		OutputPorts []uint64    `json:"output_ports"`
		Graph       []jsonOpOut `json:"graph"`
	}
	jsonOpOut struct {
		ID      uint64                 `json:"id"`
		Name    string                 `json:"name"`
		Kind    string                 `json:"kind"`
		Attrs   map[string]jsonAttrOut `json:"attrs"` // encoding/json sorts the keys
		Inputs  []jsonTensorOut        `json:"inputs"`
		Outputs []jsonTensorOut        `json:"outputs"`
	}
	jsonAttrOut struct {
		Type  string `json:"type"`
		Value any    `json:"value"`
	}
	jsonTensorOut struct {
		ID       uint64  `json:"id"`
		DType    string  `json:"dtype"`
		Shape    []int64 `json:"shape"`  // nil (null): unknown rank
		Stride   []int64 `json:"stride"` // nil (null): dense, to be filled in
		Layout   string  `json:"layout_type"`
		Property string  `json:"property_type"`
	}
)

// WriteJSON writes g in oneDNN Graph's serialization format, as ReadJSON
// reads it: version "3.0.0", engine_kind "cpu", g.FPMath ("strict" when
// empty), input_ports (the tensors no op produces) and output_ports (the
// tensors no op consumes), both sorted, then the ops in g's order (the
// insertion order before Finalize, topological after), indented with two
// spaces like oneDNN's dumps. Bools are written as 0/1, unknown dims as -1,
// an unknown rank as a null shape. ReadJSON of the output gives a graph
// with the same ops, attributes and tensors.
//
// f32 attributes that are NaN or infinite have no JSON form: WriteJSON
// returns an InvalidArguments error naming the op and attribute.
func (g *Graph) WriteJSON(w io.Writer) error {
	if g == nil {
		return Errorf(InvalidArguments, "WriteJSON on a nil graph")
	}
	if w == nil {
		return Errorf(InvalidArguments, "WriteJSON: the writer is nil")
	}
	fp := g.FPMath
	if fp == "" {
		fp = "strict"
	}
	if !slices.Contains(fpmathModes, fp) {
		return Errorf(InvalidArguments, "WriteJSON: FPMath is %q, want one of %s", fp, strings.Join(fpmathModes, ", "))
	}
	ops := g.Ops()
	doc := jsonDocOut{Version: jsonVersion, EngineKind: "cpu", FPMath: fp, Graph: make([]jsonOpOut, 0, len(ops))}
	doc.InputPorts, doc.OutputPorts = graphPorts(g, ops)
	for _, op := range ops {
		o, err := opJSON(op)
		if err != nil {
			return err
		}
		doc.Graph = append(doc.Graph, o)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return Errorf(RuntimeError, "WriteJSON: encoding: %v", err)
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		return Errorf(RuntimeError, "WriteJSON: writing: %v", err)
	}
	return nil
}

// graphPorts returns the ids of the tensors no op produces and of the
// produced tensors no op consumes, each sorted.
func graphPorts(g *Graph, ops []*Op) (in, out []uint64) {
	in, out = []uint64{}, []uint64{}
	seen := map[uint64]bool{}
	for _, op := range ops {
		for _, t := range op.Inputs {
			if !seen[t.ID] && g.Producer(t.ID) == nil {
				in = append(in, t.ID)
			}
			seen[t.ID] = true
		}
		for _, t := range op.Outputs {
			if !seen[t.ID] && len(g.Consumers(t.ID)) == 0 {
				out = append(out, t.ID)
			}
			seen[t.ID] = true
		}
	}
	slices.Sort(in)
	slices.Sort(out)
	return in, out
}

func opJSON(op *Op) (jsonOpOut, error) {
	o := jsonOpOut{ID: op.ID, Name: op.Name, Kind: op.Kind.String(), Attrs: map[string]jsonAttrOut{},
		Inputs: make([]jsonTensorOut, 0, len(op.Inputs)), Outputs: make([]jsonTensorOut, 0, len(op.Outputs))}
	for _, name := range op.AttrNames() {
		a, _ := op.Attr(name)
		v, err := attrJSONValue(op, name, a)
		if err != nil {
			return o, err
		}
		o.Attrs[name] = jsonAttrOut{Type: a.Type.String(), Value: v}
	}
	for _, t := range op.Inputs {
		jt, err := tensorJSON(op, t)
		if err != nil {
			return o, err
		}
		o.Inputs = append(o.Inputs, jt)
	}
	for _, t := range op.Outputs {
		jt, err := tensorJSON(op, t)
		if err != nil {
			return o, err
		}
		o.Outputs = append(o.Outputs, jt)
	}
	return o, nil
}

func attrJSONValue(op *Op, name string, a Attr) (any, error) {
	finite := func(f float32) error {
		if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
			return Errorf(InvalidArguments, "WriteJSON: %s: attribute %q holds %v, which JSON cannot represent", op, name, f)
		}
		return nil
	}
	switch a.Type {
	case AttrS64:
		return a.I, nil
	case AttrS64s:
		return nonNil(a.Is), nil
	case AttrF32:
		return a.F, finite(a.F)
	case AttrF32s:
		for _, f := range a.Fs {
			if err := finite(f); err != nil {
				return nil, err
			}
		}
		return nonNil(a.Fs), nil
	case AttrBool:
		if a.B {
			return 1, nil
		}
		return 0, nil
	case AttrString:
		return a.S, nil
	}
	return nil, Errorf(InvalidArguments, "WriteJSON: %s: attribute %q has type %s", op, name, a.Type)
}

func tensorJSON(op *Op, t LogicalTensor) (jsonTensorOut, error) {
	jt := jsonTensorOut{ID: t.ID, DType: t.DataType.String(), Shape: t.Dims, Layout: t.Layout.String(), Property: t.Property.String()}
	if _, err := parseLayout("", jt.Layout); err != nil {
		return jt, Errorf(InvalidArguments, "WriteJSON: %s: tensor %d has layout %s", op, t.ID, t.Layout)
	}
	if _, err := parseProperty("", jt.Property); err != nil {
		return jt, Errorf(InvalidArguments, "WriteJSON: %s: tensor %d has property %s", op, t.ID, t.Property)
	}
	if !t.DataType.Valid() {
		return jt, Errorf(InvalidArguments, "WriteJSON: %s: tensor %d has data type %s", op, t.ID, t.DataType)
	}
	if t.Layout == LayoutStrided {
		jt.Stride = t.Strides
	} else {
		jt.Stride = []int64{} // as oneDNN's dumps write it
	}
	return jt, nil
}
