package operator

import (
	"context"
	"encoding/json"
	"math"
	"reflect"
	"testing"

	"github.com/agentgraph/agentgraph/agent/model"
)

type namedInt int

func (n namedInt) String() string { return "n" + string(rune('0'+int(n))) }

// TestResultOfPlainValues: a result of a predeclared integer type or bool
// is the JSON encoding/json writes for it, as Structured and as text.
func TestResultOfPlainValues(t *testing.T) {
	for _, v := range []any{0, -1, math.MaxInt, math.MinInt64, int8(-128), int16(300), int32(-7), int64(math.MaxInt64),
		uint(0), uint8(255), uint16(65535), uint32(math.MaxUint32), uint64(math.MaxUint64), uintptr(9), true, false,
		namedInt(3), 1.5, float32(2)} {
		got, err := resultOf(v)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		text := string(raw)
		if s, ok := v.(interface{ String() string }); ok {
			text = s.String()
		}
		want := &model.ToolResult{Structured: raw, Content: []model.Part{model.TextPart(text)}}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%T %v: result %+v, want %+v", v, v, got, want)
		}
	}
}

// TestResultOfIntAllocations: an integer result allocates the result, its
// content and its text, not an encoder.
func TestResultOfIntAllocations(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { _, _ = resultOf(12345) }); n > 4 {
		t.Errorf("resultOf(12345): %v allocations, want at most 4", n)
	}
}

// TestFuncToolCallAllocations: a call of a tool on flat arguments
// allocates its result alone (the result, its content and its JSON); the
// arguments are decoded in place.
func TestFuncToolCallAllocations(t *testing.T) {
	add := MustFuncTool("add", "Adds two integers.", func(_ context.Context, in flatPair) (int, error) { return in.A + in.B, nil })
	ctx := context.Background()
	args := json.RawMessage(`{"a":2,"b":3}`)
	var res *model.ToolResult
	n := testing.AllocsPerRun(100, func() {
		var err error
		if res, err = add.Call(ctx, args); err != nil {
			t.Fatal(err)
		}
	})
	if n > 3 || res.Text() != "5" {
		t.Errorf("add(2, 3): %v allocations, result %q; want at most 3, 5", n, res.Text())
	}
}
