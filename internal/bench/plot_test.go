package bench

import (
	"bytes"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// svgStats decodes an SVG with encoding/xml (so it is well-formed) and
// counts the problem marks (a <g class="problem"> holding one circle),
// collecting all text.
func svgStats(t *testing.T, data []byte) (marks int, text string) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(data))
	var sb strings.Builder
	root := ""
	inProblem, circles := false, 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v\n%s", err, data)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			if root == "" {
				root = e.Name.Local
			}
			for _, a := range e.Attr {
				if e.Name.Local == "g" && a.Name.Local == "class" && a.Value == "problem" {
					inProblem, circles = true, 0
				}
			}
			if inProblem && e.Name.Local == "circle" {
				circles++
			}
		case xml.EndElement:
			if inProblem && e.Name.Local == "g" {
				if circles == 1 {
					marks++
				}
				inProblem = false
			}
		case xml.CharData:
			sb.Write(e)
			sb.WriteByte('\n')
		}
	}
	if root != "svg" {
		t.Fatalf("root element %q, want svg", root)
	}
	return marks, sb.String()
}

func TestBandwidthSVG(t *testing.T) {
	pts := []plotPoint{
		{idx: 0, label: "1024x64:1x64_naxis0", impl: "jit:avx512", bytes: 256 << 10, gbs: 180, pct: 104, probe: 0},
		{idx: 1, label: "odd<&>\"name'", impl: "interp", bytes: 3 << 20, gbs: 12.5, pct: 10, probe: 0},
		{idx: 7, label: "8x8:8x1", impl: "jit:avx2", bytes: 256, gbs: 3, probe: -1},
	}
	curves := []probeCurve{{name: "lib", pts: []probePoint{{4096, 60, false}, {8192, 90, false}, {1 << 20, 120, false}, {4 << 20, 70, false}}}}
	caches := []cacheLevel{{"L1", 32 << 10}, {"L2", 1 << 20}, {"L3", 32 << 20}}
	var buf bytes.Buffer
	if err := writeBandwidthSVG(&buf, pts, curves, caches, "title <x>", "AMD EPYC, 2 threads"); err != nil {
		t.Fatal(err)
	}
	marks, text := svgStats(t, buf.Bytes())
	if marks != len(pts) {
		t.Errorf("%d problem marks, want %d", marks, len(pts))
	}
	for _, want := range []string{"title <x>", "1024x64:1x64_naxis0", "odd<&>\"name'", "jit:avx512", "interp", "jit:avx2",
		"lib read probe", "L2 1M", "L1 32K", "104%", "%readBW"} {
		if !strings.Contains(text, want) {
			t.Errorf("text %q missing from the chart", want)
		}
	}
	// L3 (32M) lies beyond the x range (up to 4M): not drawn.
	if strings.Contains(buf.String(), ">L3 32M<") {
		t.Errorf("a cache size outside the plotted range is drawn")
	}
	// Degenerate input still gives a well-formed chart.
	buf.Reset()
	if err := writeBandwidthSVG(&buf, []plotPoint{{idx: 0, label: "z", impl: "interp", bytes: 0, gbs: 0, probe: -1}}, nil, nil, "t", "s"); err != nil {
		t.Fatal(err)
	}
	if marks, _ := svgStats(t, buf.Bytes()); marks != 1 {
		t.Errorf("degenerate chart: %d marks, want 1", marks)
	}
}

// TestPlotOption runs the CLI with --plot: one mark per timed problem, its
// descriptor and impl in the chart, the probe it was compared with drawn.
func TestPlotOption(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bw.svg")
	code, out, errw := runMain(t, "--plot="+path, "--mode=P", "--fix-times-per-prb=2", "--reduction", "--sdt=f32,bf16", "64x64:64x1", "16x1024:1x1024")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errw)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	marks, text := svgStats(t, data)
	if marks != 4 {
		t.Errorf("%d marks, want 4 (one per problem)", marks)
	}
	for _, want := range []string{"64x64:64x1", "16x1024:1x1024", "read probe"} {
		if !strings.Contains(text, want) {
			t.Errorf("%q missing from the chart", want)
		}
	}
	if !strings.Contains(text, "jit:") && !strings.Contains(text, "interp") {
		t.Errorf("no implementation named in the chart")
	}

	// Nothing timed (C mode): a warning, no file.
	path2 := filepath.Join(t.TempDir(), "none.svg")
	code, _, errw = runMain(t, "--plot="+path2, "--reduction", "8x8:8x1")
	if _, err := os.Stat(path2); code != 0 || err == nil || !strings.Contains(errw, "no problem was timed") {
		t.Errorf("C mode --plot: exit %d, file err %v, stderr %q", code, err, errw)
	}
	// An unwritable place is refused before the run.
	dir := t.TempDir()
	for _, bad := range []string{filepath.Join(dir, "missing", "x.svg"), dir, dir + "/"} {
		code, out, errw := runMain(t, "--plot="+bad, "--reduction", "8x8:8x1")
		if code != 2 || !strings.Contains(errw, "--plot") || strings.Contains(out, "PASSED") {
			t.Errorf("--plot=%s: exit %d, stderr %q", bad, code, errw)
		}
	}
}

func TestProblemLabel(t *testing.T) {
	cases := []struct {
		d    PerfData
		want string
	}{
		{PerfData{Driver: "reduction", Desc: "2x3:2x1_nX", Sdt: "bf16", Ddt: "f32", Attr: "relu", Prb: "--reduction 2x3:2x1_nX"}, "2x3:2x1_nX bf16:f32 relu"},
		{PerfData{Driver: "graph", Desc: "op/f32/r.json", Sdt: "f32", Ddt: "f32", DT: "bf16",
			Prb: "--mode=P --graph --in-shapes=0:4x4 --case=op/f32/r.json"}, "--in-shapes=0:4x4 --case=op/f32/r.json f32:f32 bf16"},
		{PerfData{Prb: "--reduction 8x8:8x1"}, "--reduction 8x8:8x1"},
	}
	for _, c := range cases {
		if got := problemLabel(&c.d); got != c.want {
			t.Errorf("%+v: %q, want %q", c.d, got, c.want)
		}
	}
}

func TestDataCaches(t *testing.T) {
	dir := t.TempDir()
	mk := func(idx, level, typ, size string) {
		d := filepath.Join(dir, "index"+idx)
		os.MkdirAll(d, 0o755)
		for f, v := range map[string]string{"level": level, "type": typ, "size": size} {
			if err := os.WriteFile(filepath.Join(d, f), []byte(v+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	mk("0", "1", "Data", "32K")
	mk("1", "1", "Instruction", "32K")
	mk("2", "2", "Unified", "1024K")
	mk("3", "3", "Unified", "32M")
	mk("4", "4", "Unified", "junk")
	got := dataCaches(dir)
	want := []cacheLevel{{"L1", 32 << 10}, {"L2", 1 << 20}, {"L3", 32 << 20}}
	if len(got) != len(want) {
		t.Fatalf("caches %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("cache %d: %v, want %v", i, got[i], want[i])
		}
	}
	if got := dataCaches(filepath.Join(dir, "nope")); len(got) != 0 {
		t.Errorf("missing folder: %v", got)
	}
}
