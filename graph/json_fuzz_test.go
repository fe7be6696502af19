package graph

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzReadJSON feeds arbitrary bytes to ReadJSON. Whatever it rejects must
// come back as a *graph.Error with a named Status; whatever it accepts must
// round-trip: WriteJSON succeeds, ReadJSON of that output gives the same
// graph, and writing it again gives the same bytes. Finalize of the copy
// must not panic either (its errors are the schema's business).
func FuzzReadJSON(f *testing.F) {
	seeds, err := filepath.Glob(filepath.Join("testdata", "json", "*.json"))
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range seeds {
		b, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(baseDoc))
	f.Add([]byte(strings.Replace(baseDoc, `{"type": "f32", "value": -1.5}`, `{"value": -1.5, "type": "f32"}`, 1)))
	f.Add([]byte(`{"version":"3.0.0","engine_kind":"cpu","graph":[{"id":0,"kind":"Wildcard","inputs":[],"outputs":[]}]}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`[`))

	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := ReadJSON(bytes.NewReader(data))
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || strings.HasPrefix(e.Status.Error(), "status(") || e.Msg == "" {
				t.Fatalf("error %q (%T) is not a graph.Error with a named status and a message", err, err)
			}
			if g != nil {
				t.Fatal("a graph was returned with the error")
			}
			return
		}
		var b1 bytes.Buffer
		if err := g.WriteJSON(&b1); err != nil {
			t.Fatalf("WriteJSON of an accepted graph: %v", err)
		}
		g2, err := ReadJSON(bytes.NewReader(b1.Bytes()))
		if err != nil {
			t.Fatalf("ReadJSON(WriteJSON(g)): %v\n%s", err, b1.Bytes())
		}
		sameGraph(t, g, g2)
		var b2 bytes.Buffer
		if err := g2.WriteJSON(&b2); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b1.Bytes(), b2.Bytes()) {
			t.Fatalf("WriteJSON is not stable:\n%s\nvs\n%s", b1.Bytes(), b2.Bytes())
		}
		if err := g2.Finalize(); err == nil {
			var b3 bytes.Buffer
			if err := g2.WriteJSON(&b3); err != nil {
				t.Fatalf("WriteJSON after Finalize: %v", err)
			}
			g3, err := ReadJSON(bytes.NewReader(b3.Bytes()))
			if err != nil {
				t.Fatalf("ReadJSON(WriteJSON(finalized g)): %v\n%s", err, b3.Bytes())
			}
			sameGraph(t, g2, g3)
		}
	})
}
