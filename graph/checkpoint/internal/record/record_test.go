package record

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// TestDecodeBodyPastReleases loads bodies as every release so far wrote them
// (the shape has not changed since the first SQL backend), byte for byte.
func TestDecodeBodyPastReleases(t *testing.T) {
	tests := []struct {
		name, data string
		want       checkpoint.Checkpoint
	}{
		{"nothing", `{}`, checkpoint.Checkpoint{}},
		{"ran", `{"ran":["a","b"]}`, checkpoint.Checkpoint{Ran: []string{"a", "b"}}},
		{"paused", `{"ran":["ask"],"next":[{"id":"t1","node":"approve"}],"interrupts":[{"id":"i1","node":"approve","task":"t1","payload":"Im9rPyI="}]}`,
			checkpoint.Checkpoint{Ran: []string{"ask"}, Next: []checkpoint.Task{{ID: "t1", Node: "approve"}},
				Interrupts: []checkpoint.Interrupt{{ID: "i1", Node: "approve", TaskID: "t1", Payload: []byte(`"ok?"`)}}}},
		{"sent task with input", `{"next":[{"id":"t2","node":"n","input":"MQ=="}]}`,
			checkpoint.Checkpoint{Next: []checkpoint.Task{{ID: "t2", Node: "n", Input: []byte("1")}}}},
		{"empty names", `{"next":[{"id":"","node":""}],"interrupts":[{"id":"","node":""}]}`,
			checkpoint.Checkpoint{Next: []checkpoint.Task{{}}, Interrupts: []checkpoint.Interrupt{{}}}},
		{"format version 1", `{"v":1,"next":[{"id":"t1","node":"approve"}]}`,
			checkpoint.Checkpoint{Next: []checkpoint.Task{{ID: "t1", Node: "approve"}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got checkpoint.Checkpoint
			if err := DecodeBody([]byte(tc.data), &got); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("DecodeBody(%s) (-want +got):\n%s", tc.data, d)
			}
			// What this release writes of it reads back the same.
			enc, err := EncodeBody(&got)
			if err != nil {
				t.Fatal(err)
			}
			var again checkpoint.Checkpoint
			if err := DecodeBody(enc, &again); err != nil {
				t.Fatalf("DecodeBody(EncodeBody) = %v", err)
			}
			if d := cmp.Diff(got, again, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("round trip (-want +got):\n%s", d)
			}
		})
	}
}

// TestDecodeBodyRefused checks that a body no release wrote fails as corrupt
// instead of loading as a checkpoint without tasks or interrupts.
func TestDecodeBodyRefused(t *testing.T) {
	tests := []struct{ name, data, says string }{
		{"null", `null`, "not a JSON object"},
		{"empty", ``, "empty"},
		{"array", `[]`, "not a JSON object"},
		{"string", `"x"`, "not a JSON object"},
		{"null next", `{"next":null}`, "next is null"},
		{"null interrupts", `{"interrupts":null}`, "interrupts is null"},
		{"null ran", `{"ran":null}`, "ran is null"},
		{"null node name", `{"ran":["a",null]}`, "ran[1]"},
		{"newer format", `{"v":2,"tasks":[{"id":"t1","node":"approve"}]}`, "format version 2"},
		{"format version 0", `{"v":0,"next":[{"id":"t1","node":"approve"}]}`, "format version 0"},
		{"task without id", `{"next":[{"node":"approve"}]}`, "next[0] has no id"},
		{"task with null node", `{"next":[{"id":"t1","node":null}]}`, "next[0] has no node"},
		{"null task", `{"next":[null]}`, "next[0] has no id and node"},
		{"interrupt without node", `{"interrupts":[{"id":"i1"}]}`, "interrupts[0] has no node"},
		{"wrong type", `{"next":[{"id":5,"node":"a"}]}`, "next"},
		{"trailing data", `{} {}`, "after top-level value"},
		{"not JSON", `{"ran":`, "unexpected end"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cp := checkpoint.Checkpoint{ThreadID: "th", ID: "c1"}
			err := DecodeBody([]byte(tc.data), &cp)
			var ce *checkpoint.CorruptError
			if !errors.As(err, &ce) || ce.ThreadID != "th" || ce.CheckpointID != "c1" {
				t.Fatalf("DecodeBody(%s) = %v (Next %v); want a *checkpoint.CorruptError of th/c1", tc.data, err, cp.Next)
			}
			if !strings.Contains(err.Error(), tc.says) {
				t.Errorf("error %q does not say %q", err, tc.says)
			}
		})
	}
}

// BenchmarkDecodeBody decodes the body of a paused checkpoint: two nodes
// ran, one task next, one interrupt.
func BenchmarkDecodeBody(b *testing.B) {
	data := []byte(`{"ran":["ask","draft"],"next":[{"id":"3:approve:0","node":"approve"}],"interrupts":[{"id":"3:approve:0#0","node":"approve","task":"3:approve:0","payload":"eyJkcmFmdCI6ImhlbGxvIn0="}]}`)
	b.ReportAllocs()
	for b.Loop() {
		var cp checkpoint.Checkpoint
		if err := DecodeBody(data, &cp); err != nil {
			b.Fatal(err)
		}
	}
}

// TestDecodeBodyIgnoresUnknownFields: a field this release does not know,
// such as an optional one a later release adds without changing "v", is
// ignored, so that a rollback still reads what the later release wrote.
func TestDecodeBodyIgnoresUnknownFields(t *testing.T) {
	for _, data := range []string{
		`{"next":[{"id":"t1","node":"approve","retry":1}],"deadline":"2030-01-01"}`,
		`{"v":1,"next":[{"id":"t1","node":"approve","retry":1}],"deadline":"2030-01-01"}`,
	} {
		cp := checkpoint.Checkpoint{ThreadID: "th", ID: "c1"}
		if err := DecodeBody([]byte(data), &cp); err != nil {
			t.Fatalf("DecodeBody(%s) = %v; want unknown fields ignored", data, err)
		}
		if len(cp.Next) != 1 || cp.Next[0].ID != "t1" || cp.Next[0].Node != "approve" {
			t.Errorf("DecodeBody(%s) Next = %v; want the task t1 of approve", data, cp.Next)
		}
	}
}
