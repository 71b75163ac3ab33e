package operator

import (
	"context"
	"encoding/json"
	"math"
	"math/big"
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

// TestResultOfIntAllocations: an integer result is one allocation, which
// holds the result, its content and its JSON, not an encoder.
func TestResultOfIntAllocations(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { _, _ = resultOf(12345) }); n > 1 {
		t.Errorf("resultOf(12345): %v allocations, want 1", n)
	}
}

// TestResultOfPlainOwnText: the text of a plain result does not change
// when its holder modifies or appends to Structured.
func TestResultOfPlainOwnText(t *testing.T) {
	for _, v := range []any{-9223372036854775807 - 1, uint64(math.MaxUint64), true, 7} {
		res, err := resultOf(v)
		if err != nil {
			t.Fatal(err)
		}
		want := res.Text()
		for i := range res.Structured {
			res.Structured[i] = 'x'
		}
		_ = append(res.Structured, 'y')
		if got := res.Text(); got != want {
			t.Errorf("%v: the text became %q after Structured was modified, want %q", v, got, want)
		}
	}
}

// TestFuncToolCallAllocations: a call of a tool on flat arguments
// allocates its result alone, at once (the result, its content and its
// JSON); the arguments are decoded in place.
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
	if n > 1 || res.Text() != "5" {
		t.Errorf("add(2, 3): %v allocations, result %q; want 1, 5", n, res.Text())
	}
}

// numText writes short numbers exactly and long ones rounded, with their
// sign and exponent, at a cost linear in their length.
func TestNumText(t *testing.T) {
	for in, want := range map[string]string{
		"7":            "7",
		"-1/3":         "-1/3",
		"1e38":         "100000000000000000000000000000000000000",
		"1e40":         "about 1e+40",
		"-25e999999":   "about -2.5e+1000000",
		"1e-1000000":   "about 1e-1000000",
		"-3e-50":       "about -3e-50",
		"9999999.9e50": "about 1e+57",
		"123456789e60": "about 1.23457e+68",
	} {
		r, ok := new(big.Rat).SetString(in)
		if !ok {
			t.Fatalf("SetString(%q)", in)
		}
		if got := numText(r); got != want {
			t.Errorf("numText(%s) = %q, want %q", in, got, want)
		}
	}
}
