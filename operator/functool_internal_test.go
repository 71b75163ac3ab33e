package operator

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"reflect"
	"strconv"
	"testing"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/internal/toolcall"
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

// CallInto gives what Call gives, for every plain result (in the caller's
// room or without one), for arguments that are not valid and for the
// function's error.
func TestCallIntoAsCall(t *testing.T) {
	type args struct {
		N int `json:"n"`
	}
	failed := errors.New("failed")
	tools := map[string]Tool{
		"int":    MustFuncTool("int", "A test tool.", func(_ context.Context, in args) (int, error) { return in.N * 1000, nil }),
		"min":    MustFuncTool("min", "A test tool.", func(_ context.Context, in args) (int64, error) { return math.MinInt64 + int64(in.N), nil }),
		"bool":   MustFuncTool("bool", "A test tool.", func(_ context.Context, in args) (bool, error) { return in.N > 0, nil }),
		"named":  MustFuncTool("named", "A test tool.", func(_ context.Context, in args) (namedInt, error) { return namedInt(in.N), nil }),
		"string": MustFuncTool("string", "A test tool.", func(_ context.Context, in args) (string, error) { return "got " + strconv.Itoa(in.N), nil }),
		"struct": MustFuncTool("struct", "A test tool.", func(_ context.Context, in args) (args, error) { return in, nil }),
		"result": MustFuncTool("result", "A test tool.", func(_ context.Context, in args) (*model.ToolResult, error) {
			return &model.ToolResult{Content: []model.Part{model.TextPart("r")}, IsError: in.N < 0}, nil
		}),
		"image": MustFuncTool("image", "A test tool.", func(_ context.Context, in args) ([]model.Part, error) {
			return []model.Part{model.TextPart("a dot"), model.BinaryPart("image/png", []byte{byte(in.N)})}, nil
		}),
		"content": MustFuncTool("content", "A test tool.", func(_ context.Context, in args) (pictured, error) { return pictured{N: in.N}, nil }),
		"fail":    MustFuncTool("fail", "A test tool.", func(context.Context, args) (int, error) { return 0, failed }),
	}
	for name, tool := range tools {
		into, ok := tool.(toolcall.Into)
		if !ok {
			continue // its results never fit a room (TestFuncToolInto)
		}
		for _, raw := range []string{`{"n":3}`, `{"n":-2}`, `{"n":"x"}`, `{}`} {
			want, wantErr := tool.Call(t.Context(), json.RawMessage(raw))
			var got model.ToolResult
			var room toolcall.Room
			err := into.CallInto(t.Context(), json.RawMessage(raw), &got, &room)
			if !errors.Is(err, wantErr) || (err == nil) != (wantErr == nil) {
				t.Fatalf("%s(%s): error %v, Call's %v", name, raw, err, wantErr)
			}
			if want == nil {
				if !reflect.DeepEqual(got, model.ToolResult{}) {
					t.Errorf("%s(%s): result %+v after an error", name, raw, got)
				}
				continue
			}
			if !reflect.DeepEqual(&got, want) {
				t.Errorf("%s(%s): result %+v, Call's %+v", name, raw, got, *want)
			}
			// Without a room, as a caller that has none to spare calls it.
			var bare model.ToolResult
			if err := into.CallInto(t.Context(), json.RawMessage(raw), &bare, nil); !errors.Is(err, wantErr) || !reflect.DeepEqual(&bare, want) {
				t.Errorf("%s(%s) without a room: result %+v, %v; Call's %+v, %v", name, raw, bare, err, *want, wantErr)
			}
		}
	}
}

// A FuncTool writes its results into its caller's room (toolcall.Into)
// when they fit one, those of a predeclared integer type or bool, and no
// other does: its caller would keep a room it leaves unused.
func TestFuncToolInto(t *testing.T) {
	type args struct{}
	into := func(tool Tool) bool { _, ok := tool.(toolcall.Into); return ok }
	for name, tool := range map[string]Tool{
		"int":   MustFuncTool("int", "A test tool.", func(context.Context, args) (int, error) { return 0, nil }),
		"int64": MustFuncTool("int64", "A test tool.", func(context.Context, args) (int64, error) { return 0, nil }),
		"uint8": MustFuncTool("uint8", "A test tool.", func(context.Context, args) (uint8, error) { return 0, nil }),
		"bool":  MustFuncTool("bool", "A test tool.", func(context.Context, args) (bool, error) { return false, nil }),
	} {
		if !into(tool) {
			t.Errorf("%s: not a toolcall.Into, want one", name)
		}
	}
	for name, tool := range map[string]Tool{
		"string": MustFuncTool("string", "A test tool.", func(context.Context, args) (string, error) { return "", nil }),
		"named":  MustFuncTool("named", "A test tool.", func(context.Context, args) (namedInt, error) { return 0, nil }),
		"struct": MustFuncTool("struct", "A test tool.", func(context.Context, args) (args, error) { return args{}, nil }),
		"float":  MustFuncTool("float", "A test tool.", func(context.Context, args) (float64, error) { return 0, nil }),
		"any":    MustFuncTool("any", "A test tool.", func(context.Context, args) (any, error) { return 1, nil }),
		"parts":  MustFuncTool("parts", "A test tool.", func(context.Context, args) ([]model.Part, error) { return nil, nil }),
		"result": MustFuncTool("result", "A test tool.", func(context.Context, args) (*model.ToolResult, error) { return nil, nil }),
	} {
		if into(tool) {
			t.Errorf("%s: a toolcall.Into, want none (its results never fit a room)", name)
		}
	}
}

// pictured is a result that says itself what the model reads.
type pictured struct {
	N int `json:"n"`
}

func (p pictured) ToolContent() []model.Part {
	return []model.Part{model.BinaryPart("image/png", []byte{byte(p.N)})}
}

// A Room already written is left as it is: the text of the result written
// there first stays, and the second result is allocated apart.
func TestCallIntoWrittenRoom(t *testing.T) {
	type args struct {
		N int `json:"n"`
	}
	tool := MustFuncTool("int", "A test tool.", func(_ context.Context, in args) (int, error) { return in.N, nil }).(toolcall.Into)
	var room toolcall.Room
	var first, second model.ToolResult
	if err := tool.CallInto(t.Context(), json.RawMessage(`{"n":7}`), &first, &room); err != nil {
		t.Fatal(err)
	}
	if err := tool.CallInto(t.Context(), json.RawMessage(`{"n":8}`), &second, &room); err != nil {
		t.Fatal(err)
	}
	if first.Text() != "7" || string(first.Structured) != "7" || second.Text() != "8" || string(second.Structured) != "8" {
		t.Fatalf("results %q %s and %q %s, want 7 and 8", first.Text(), first.Structured, second.Text(), second.Structured)
	}
}

// A call of a tool whose result is an integer allocates the result alone,
// whatever the integer (a large one is not boxed apart), and nothing
// given room for it.
func TestFuncToolLargeIntAllocations(t *testing.T) {
	mul := MustFuncTool("mul", "Multiplies two integers.", func(_ context.Context, in flatPair) (int, error) { return in.A * in.B, nil })
	ctx := context.Background()
	args := json.RawMessage(`{"a":1000,"b":3000}`)
	var res *model.ToolResult
	if n := testing.AllocsPerRun(100, func() { res, _ = mul.Call(ctx, args) }); n != 1 || res.Text() != "3000000" {
		t.Errorf("mul(1000, 3000): %v allocations, result %q; want 1, 3000000", n, res.Text())
	}
	var into model.ToolResult
	n := testing.AllocsPerRun(100, func() {
		var room toolcall.Room
		if err := mul.(toolcall.Into).CallInto(ctx, args, &into, &room); err != nil {
			t.Fatal(err)
		}
	})
	// room is the closure's, on the heap: one allocation.
	if n != 1 || into.Text() != "3000000" {
		t.Errorf("mul(1000, 3000) into a room: %v allocations, result %q; want 1 (the room), 3000000", n, into.Text())
	}
}
