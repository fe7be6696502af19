package bench

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/graph"
)

// TestGraphPortsAsBenchdnn: a case whose output_ports names a tensor no
// op has, or whose input_ports names one an op produces, runs as
// benchdnn runs it (the entries ignored, said at -v1), while
// graph.ReadJSON still refuses the file; a case whose ports are all of
// the graph's is read unchanged, its output port still kept apart by an
// End op.
func TestGraphPortsAsBenchdnn(t *testing.T) {
	for _, c := range []struct {
		name     string
		in, out  []any
		note     string
		readJSON string
	}{
		{"output port not in the graph", []any{0, 2}, []any{3, 5}, "output_ports: tensor 5 is not in the graph", "output_ports[1]: tensor 5 is not in the graph"},
		{"input port not in the graph", []any{0, 9}, []any{3}, "input_ports: tensor 9 is not in the graph", "input_ports[1]: tensor 9 is not in the graph"},
		{"input port an op produces", []any{0, 1}, []any{3}, "input_ports: tensor 1 is produced by an op", "tensor 1 is produced by"},
	} {
		path := writeCase(t, meanAddCase, func(doc map[string]any) {
			doc["input_ports"], doc["output_ports"] = c.in, c.out
		})
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := graph.ReadJSON(bytes.NewReader(data)); err == nil || !strings.Contains(err.Error(), c.readJSON) {
			t.Errorf("%s: graph.ReadJSON gives %v, want the refusal %q", c.name, err, c.readJSON)
		}
		code, out, errw := runGraph(t, path, "--mode=C", "-v1")
		if code != 0 || summary(t, out)[1] != "1" || !strings.Contains(out, c.note) {
			t.Errorf("%s: exit %d, want PASSED and the note %q\nstdout:\n%s\nstderr:\n%s", c.name, code, c.note, out, errw)
		}
	}
	path := writeCase(t, meanAddCase, func(doc map[string]any) {
		doc["input_ports"], doc["output_ports"] = []any{0, 2}, []any{1, 3}
	})
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, notes := benchdnnPorts(data); !bytes.Equal(got, data) || notes != nil {
		t.Errorf("valid ports: the data changed (notes %q)", notes)
	}
	g, err := loadGraph(graphCase{expectedN: 1}, data)
	if err != nil {
		t.Fatal(err)
	}
	if end, ok := g.Op(2); !ok || end.Kind != graph.End {
		t.Errorf("op 2 is %v, want the End op of output port 1", end)
	}
}

// TestGraphPortsNotJSON: data benchdnnPorts cannot read comes back as
// it is, for ReadJSON to refuse with its reason.
func TestGraphPortsNotJSON(t *testing.T) {
	for _, data := range []string{"", "[1]", `{"graph": 3, "output_ports": [5]}`, `{"graph": [], "output_ports": "x"}`} {
		if got, notes := benchdnnPorts([]byte(data)); string(got) != data || notes != nil {
			t.Errorf("%q: got %q, notes %q", data, got, notes)
		}
	}
}
