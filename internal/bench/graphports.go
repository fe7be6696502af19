package bench

import (
	"encoding/json"
	"fmt"
)

// benchdnn's graph driver reads a case's "input_ports" and "output_ports"
// but does not hold the graph to them (tests/benchdnn/graph/deserialize.cpp):
// output_ports is never used, and the graph's inputs are the tensors no op
// produces, appended to input_ports whatever it lists. Some of its cases
// depend on that: pattern/int8/int8_softmax_add.json lists an output
// port 5 that no op has, and leaves the Add's operand out of its input
// ports. graph.ReadJSON refuses such a file, rightly for a library user
// who wrote it; gdnnbench, which runs benchdnn's cases, first drops the
// port entries benchdnn would not act on, as benchdnn does, and says so
// at -v1.

// benchdnnPorts returns the case data with every port entry that names
// no tensor of the graph, and every input port that an op produces,
// dropped, and a note per dropped entry. Data whose ports are all of the
// graph's (or that is no JSON object: ReadJSON says what is wrong) comes
// back unchanged.
func benchdnnPorts(data []byte) ([]byte, []string) {
	var doc map[string]json.RawMessage
	if json.Unmarshal(data, &doc) != nil {
		return data, nil
	}
	var ops []struct {
		Inputs, Outputs []struct {
			ID uint64 `json:"id"`
		}
	}
	if json.Unmarshal(doc["graph"], &ops) != nil {
		return data, nil
	}
	in, produced := map[uint64]bool{}, map[uint64]bool{}
	for _, op := range ops {
		for _, t := range op.Inputs {
			in[t.ID] = true
		}
		for _, t := range op.Outputs {
			produced[t.ID] = true
		}
	}
	var notes []string
	changed := false
	for _, key := range []string{"input_ports", "output_ports"} {
		raw, ok := doc[key]
		if !ok {
			continue
		}
		var ids []uint64
		if json.Unmarshal(raw, &ids) != nil {
			return data, nil
		}
		var kept []uint64
		for _, id := range ids {
			switch {
			case !in[id] && !produced[id]:
				notes = append(notes, fmt.Sprintf("%s: tensor %d is not in the graph; ignored, as benchdnn ignores it", key, id))
			case key == "input_ports" && produced[id]:
				notes = append(notes, fmt.Sprintf("%s: tensor %d is produced by an op; ignored, as benchdnn takes the graph's inputs from its ops", key, id))
			default:
				kept = append(kept, id)
				continue
			}
			changed = true
		}
		if kept == nil {
			kept = []uint64{}
		}
		doc[key], _ = json.Marshal(kept)
	}
	if !changed {
		return data, nil
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return data, nil
	}
	return out, notes
}
