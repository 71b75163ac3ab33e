package operator_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/operator"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

type forecastArgs struct {
	City  string       `json:"city" jsonschema:"description=City name\\, such as Paris" validate:"min=2"`
	Units string       `json:"units,omitempty" jsonschema:"enum=celsius,enum=fahrenheit,default=celsius" validate:"omitempty,oneof=celsius fahrenheit"`
	Days  int          `json:"days,omitempty" jsonschema:"minimum=1,maximum=7,description=How many days ahead"`
	Where *coordinates `json:"where,omitempty"`
	Tags  []string     `json:"tags,omitempty" validate:"max=3"`
	Email string       `json:"email,omitempty" validate:"omitempty,email"`
}

type coordinates struct {
	Lat float64 `json:"lat" validate:"gte=-90,lte=90"`
	Lon float64 `json:"lon" validate:"gte=-180,lte=180"`
}

type forecast struct {
	City  string  `json:"city"`
	TempC float64 `json:"temp_c"`
}

func forecastTool(t *testing.T, ran *atomic.Int32) operator.Tool {
	t.Helper()
	tl, err := operator.FuncTool("get_forecast", "Gets the weather forecast of a city",
		func(ctx context.Context, in forecastArgs) (forecast, error) {
			if ran != nil {
				ran.Add(1)
			}
			return forecast{City: in.City, TempC: 21.5}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test -update rewrites it)\ngot:\n%s\nwant:\n%s", name, got, want)
	}
}

func TestFuncToolSchemaGolden(t *testing.T) {
	def := forecastTool(t, nil).Definition()
	if def.Name != "get_forecast" || def.Description != "Gets the weather forecast of a city" {
		t.Fatalf("definition = %+v", def)
	}
	var doc map[string]any
	if err := json.Unmarshal(def.Parameters, &doc); err != nil {
		t.Fatalf("parameters are not JSON: %v", err)
	}
	for _, noise := range []string{"$schema", "$id", "$defs", "$ref", "definitions"} {
		if strings.Contains(string(def.Parameters), `"`+noise+`"`) {
			t.Errorf("parameters hold %s: %s", noise, def.Parameters)
		}
	}
	if doc["type"] != "object" {
		t.Errorf("type = %v, want object", doc["type"])
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, def.Parameters, "", "  "); err != nil {
		t.Fatal(err)
	}
	pretty.WriteByte('\n')
	golden(t, "forecast.schema.json", pretty.Bytes())
}

func TestFuncToolEmptyArguments(t *testing.T) {
	tl := operator.MustFuncTool("now", "Tells the time", func(context.Context, struct{}) (string, error) { return "noon", nil })
	if got := string(tl.Definition().Parameters); got != `{"additionalProperties":false,"properties":{},"type":"object"}` {
		t.Errorf("parameters = %s", got)
	}
	for _, args := range []string{``, `null`, `{}`, ` {} `} {
		res, err := tl.Call(context.Background(), json.RawMessage(args))
		if err != nil || res.IsError || res.Text() != "noon" {
			t.Errorf("Call(%q) = %+v, %v; want noon", args, res, err)
		}
	}
}

func TestFuncToolRejectsBadCallsNamingFields(t *testing.T) {
	var ran atomic.Int32
	tl := forecastTool(t, &ran)
	cases := []struct {
		name, args string
		want       []string // lines the error text must hold
	}{
		{"missing required", `{}`, []string{"- city: is required but missing"}},
		{"unknown field", `{"city":"Paris","country":"FR"}`, []string{"- country: is not a known argument; remove it"}},
		{"unknown nested field", `{"city":"Paris","where":{"lat":1,"lon":2,"alt":3}}`, []string{"- where.alt: is not a known argument"}},
		{"wrong type", `{"city":42}`, []string{"- city: got number, want string"}},
		{"enum", `{"city":"Paris","units":"kelvin"}`, []string{"- units: value must be one of 'celsius', 'fahrenheit'"}},
		{"schema bound", `{"city":"Paris","days":9}`, []string{"- days: is 9; must be at most 7"}},
		{"several at once", `{"days":0,"extra":true}`, []string{"- city: is required", "- days: is 0; must be at least 1", "- extra: is not a known argument"}},
		{"validate min length", `{"city":"P"}`, []string{"- city: must have at least 2 characters"}},
		{"validate nested range", `{"city":"Paris","where":{"lat":91,"lon":0}}`, []string{"- where.lat: is 91; must be at most 90"}},
		{"validate max items", `{"city":"Paris","tags":["a","b","c","d"]}`, []string{"- tags: must have at most 3 items"}},
		{"validate email", `{"city":"Paris","email":"nope"}`, []string{`- email: "nope" is not an email address`}},
		{"not an object", `["Paris"]`, []string{"- the arguments must be a JSON object of named arguments, not an array"}},
		{"not JSON", `{"city":`, []string{"- the arguments are not valid JSON"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := tl.Call(context.Background(), json.RawMessage(c.args))
			if err != nil {
				t.Fatalf("Call returned error %v; a bad call must be a result the model reads", err)
			}
			if !res.IsError {
				t.Fatalf("result is not an error: %+v", res)
			}
			text := res.Text()
			if !strings.HasPrefix(text, "Invalid arguments for tool get_forecast:\n") || !strings.HasSuffix(text, "Correct the arguments and call the tool again.") {
				t.Errorf("text does not frame the problems:\n%s", text)
			}
			for _, w := range c.want {
				if !strings.Contains(text, w) {
					t.Errorf("text lacks %q:\n%s", w, text)
				}
			}
			if res.Structured != nil {
				t.Errorf("an error result carries Structured %s", res.Structured)
			}
		})
	}
	if n := ran.Load(); n != 0 {
		t.Errorf("the function ran %d times on bad arguments", n)
	}
}

func TestFuncToolResult(t *testing.T) {
	var ran atomic.Int32
	res, err := forecastTool(t, &ran).Call(context.Background(), json.RawMessage(`{"city":"Paris","units":"celsius","where":{"lat":48.85,"lon":2.35}}`))
	if err != nil || res.IsError {
		t.Fatalf("Call = %+v, %v", res, err)
	}
	if string(res.Structured) != `{"city":"Paris","temp_c":21.5}` {
		t.Errorf("Structured = %s", res.Structured)
	}
	if res.Text() != `{"city":"Paris","temp_c":21.5}` {
		t.Errorf("text = %q", res.Text())
	}
	if ran.Load() != 1 {
		t.Errorf("ran %d times", ran.Load())
	}
}

type chart struct {
	Title string `json:"title"`
	PNG   []byte `json:"-"`
}

func (c chart) ToolContent() []model.Part {
	return []model.Part{model.TextPart("Chart: " + c.Title), model.BinaryPart("image/png", c.PNG)}
}

type celsius float64

func (c celsius) String() string { return fmt.Sprintf("%.1f°C", float64(c)) }

type noArgs struct{}

func TestFuncToolResultShapes(t *testing.T) {
	ctx := context.Background()
	call := func(tl operator.Tool) *model.ToolResult {
		t.Helper()
		res, err := tl.Call(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}

	res := call(operator.MustFuncTool("chart", "Draws", func(context.Context, noArgs) (chart, error) {
		return chart{Title: "rain", PNG: []byte{0x89, 'P', 'N', 'G'}}, nil
	}))
	if len(res.Content) != 2 || res.Content[0].Text != "Chart: rain" || res.Content[1].Kind != model.PartBinary ||
		res.Content[1].MIMEType != "image/png" || string(res.Content[1].Data) != "\x89PNG" || string(res.Structured) != `{"title":"rain"}` {
		t.Errorf("ToolContent result = %+v, structured %s", res, res.Structured)
	}

	res = call(operator.MustFuncTool("temp", "Temperature", func(context.Context, noArgs) (celsius, error) { return 21.5, nil }))
	if res.Text() != "21.5°C" || string(res.Structured) != "21.5" {
		t.Errorf("Stringer result = %q, %s", res.Text(), res.Structured)
	}

	res = call(operator.MustFuncTool("greet", "Greets", func(context.Context, noArgs) (string, error) { return "hello", nil }))
	if res.Text() != "hello" || res.Structured != nil {
		t.Errorf("string result = %+v", res)
	}

	own := &model.ToolResult{Content: []model.Part{model.TextPart("not found")}, IsError: true}
	res = call(operator.MustFuncTool("find", "Finds", func(context.Context, noArgs) (*model.ToolResult, error) { return own, nil }))
	if !res.IsError || res.Text() != "not found" || res == own {
		t.Errorf("*model.ToolResult result = %+v (must be a copy)", res)
	}

	res = call(operator.MustFuncTool("parts", "Parts", func(context.Context, noArgs) ([]model.Part, error) {
		return []model.Part{model.TextPart("a"), model.TextPart("b")}, nil
	}))
	if res.Text() != "ab" {
		t.Errorf("[]model.Part result = %+v", res)
	}

	res = call(operator.MustFuncTool("nothing", "Nothing", func(context.Context, noArgs) (*forecast, error) { return nil, nil }))
	if res.Structured != nil || res.IsError {
		t.Errorf("nil result = %+v", res)
	}
}

func TestFuncToolPointerArguments(t *testing.T) {
	tl := operator.MustFuncTool("locate", "Locates", func(_ context.Context, in *coordinates) (string, error) {
		return fmt.Sprintf("%.1f,%.1f", in.Lat, in.Lon), nil
	})
	res, err := tl.Call(context.Background(), json.RawMessage(`{"lat":1,"lon":2}`))
	if err != nil || res.Text() != "1.0,2.0" {
		t.Fatalf("Call = %+v, %v", res, err)
	}
	res, _ = tl.Call(context.Background(), json.RawMessage(`{"lat":100,"lon":2}`))
	if !res.IsError || !strings.Contains(res.Text(), "- lat: is 100; must be at most 90") {
		t.Errorf("bad call = %q", res.Text())
	}
}

func TestFuncToolErrors(t *testing.T) {
	boom := errors.New("backend down")
	tl := operator.MustFuncTool("fail", "Fails", func(context.Context, noArgs) (string, error) { return "", boom })
	if _, err := tl.Call(context.Background(), nil); !errors.Is(err, boom) {
		t.Errorf("Call error = %v, want the function's error unchanged", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ran := false
	tl = operator.MustFuncTool("slow", "Slow", func(context.Context, noArgs) (string, error) { ran = true; return "", nil })
	if _, err := tl.Call(ctx, nil); !errors.Is(err, context.Canceled) || ran {
		t.Errorf("Call on a cancelled context = %v, ran %v", err, ran)
	}
	bad := operator.MustFuncTool("bad", "Bad", func(context.Context, noArgs) (func(), error) { return func() {}, nil })
	if _, err := bad.Call(context.Background(), nil); err == nil || !strings.Contains(err.Error(), "encoding the result as JSON") {
		t.Errorf("unencodable result error = %v", err)
	}
}

func TestFuncToolConstruction(t *testing.T) {
	fn := func(context.Context, noArgs) (string, error) { return "", nil }
	cases := []struct {
		name, desc string
		want       string
	}{
		{"", "d", "the tool name is empty"},
		{"get weather", "d", `holds ' ' at byte 3`},
		{"get.weather", "d", `holds '.' at byte 3`},
		{strings.Repeat("a", 65), "d", "is 65 bytes long; providers accept at most 64"},
		{"ok", " ", `tool "ok" has no description`},
	}
	for _, c := range cases {
		_, err := operator.FuncTool(c.name, c.desc, fn)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("FuncTool(%q, %q) error = %v, want %q", c.name, c.desc, err, c.want)
		}
	}
	if _, err := operator.FuncTool(strings.Repeat("a", 64), "d", fn); err != nil {
		t.Errorf("a 64-byte name: %v", err)
	}
	if _, err := operator.FuncTool("s", "d", func(context.Context, string) (string, error) { return "", nil }); err == nil || !strings.Contains(err.Error(), "is not a struct") {
		t.Errorf("string arguments: %v", err)
	}
	if _, err := operator.FuncTool[noArgs, string]("n", "d", nil); err == nil || !strings.Contains(err.Error(), "nil function") {
		t.Errorf("nil function: %v", err)
	}
	if _, err := operator.FuncTool("a", "d", fn, operator.WithSchema(json.RawMessage(`{"type":"array"}`))); err == nil || !strings.Contains(err.Error(), "arguments are an object") {
		t.Errorf("array schema: %v", err)
	}
	defer func() {
		if recover() == nil {
			t.Error("MustFuncTool did not panic on a bad name")
		}
	}()
	operator.MustFuncTool("bad name", "d", fn)
}

func TestFuncToolWithSchema(t *testing.T) {
	type args struct {
		Q string `json:"q"`
	}
	schema := json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"q":{"type":"string","maxLength":5}},"required":["q"]}`)
	tl := operator.MustFuncTool("search", "Searches", func(_ context.Context, in args) (string, error) { return in.Q, nil }, operator.WithSchema(schema))
	if p := string(tl.Definition().Parameters); strings.Contains(p, "$schema") || !strings.Contains(p, `"maxLength":5`) {
		t.Errorf("parameters = %s", p)
	}
	res, _ := tl.Call(context.Background(), json.RawMessage(`{"q":"too long"}`))
	if !res.IsError || !strings.Contains(res.Text(), "- q:") {
		t.Errorf("schema not enforced: %q", res.Text())
	}
	// The schema allows other properties; strict decoding still rejects them.
	res, _ = tl.Call(context.Background(), json.RawMessage(`{"q":"ok","x":1}`))
	if !res.IsError || !strings.Contains(res.Text(), "- x: is not a known argument") {
		t.Errorf("unknown field accepted: %q", res.Text())
	}
}

func TestFuncToolConcurrent(t *testing.T) {
	var ran atomic.Int32
	tl := forecastTool(t, &ran)
	var wg sync.WaitGroup
	const n = 64
	for i := range n {
		wg.Go(func() {
			args := fmt.Sprintf(`{"city":"City%d","days":%d}`, i, i%7+1)
			if i%2 == 1 {
				args = fmt.Sprintf(`{"city":"City%d","days":%d}`, i, 8+i)
			}
			res, err := tl.Call(context.Background(), json.RawMessage(args))
			if err != nil {
				t.Error(err)
				return
			}
			if want := i%2 == 1; res.IsError != want {
				t.Errorf("call %d: IsError = %v, want %v: %s", i, res.IsError, want, res.Text())
			}
			if !res.IsError && !strings.Contains(string(res.Structured), fmt.Sprintf(`"City%d"`, i)) {
				t.Errorf("call %d got %s", i, res.Structured)
			}
		})
	}
	wg.Wait()
	if ran.Load() != n/2 {
		t.Errorf("ran %d times, want %d", ran.Load(), n/2)
	}
}

type treeNode struct {
	Name     string      `json:"name" validate:"required"`
	Children []*treeNode `json:"children,omitempty"`
}

// A recursive argument type cannot be inlined: its schema keeps the
// definitions it refers to, and calls are still checked to any depth.
func TestFuncToolRecursiveArguments(t *testing.T) {
	tl, err := operator.FuncTool("count_nodes", "Counts the nodes of a tree", func(_ context.Context, in treeNode) (int, error) {
		var count func(n *treeNode) int
		count = func(n *treeNode) int {
			c := 1
			for _, ch := range n.Children {
				c += count(ch)
			}
			return c
		}
		return count(&in), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, tl.Definition().Parameters, "", "  "); err != nil {
		t.Fatal(err)
	}
	pretty.WriteByte('\n')
	golden(t, "tree.schema.json", pretty.Bytes())
	res, err := tl.Call(context.Background(), json.RawMessage(`{"name":"root","children":[{"name":"a","children":[{"name":"b"}]},{"name":"c"}]}`))
	if err != nil || res.IsError || res.Text() != "4" {
		t.Errorf("Call = %+v, %v", res, err)
	}
	res, _ = tl.Call(context.Background(), json.RawMessage(`{"name":"root","children":[{"name":"a","children":[{"nam":"b"}]}]}`))
	if !res.IsError || !strings.Contains(res.Text(), "- children[0].children[0].nam: is not a known argument") || !strings.Contains(res.Text(), "- children[0].children[0].name: is required but missing") {
		t.Errorf("deep bad call = %q", res.Text())
	}
}

func TestFuncToolAnyField(t *testing.T) {
	type args struct {
		Value any   `json:"value"`
		List  []any `json:"list,omitempty"`
	}
	tl := operator.MustFuncTool("store", "Stores a value", func(_ context.Context, in args) (string, error) { return fmt.Sprint(in.Value), nil })
	want := `{"additionalProperties":false,"properties":{"list":{"items":{},"type":"array"},"value":{}},"required":["value"],"type":"object"}`
	if got := string(tl.Definition().Parameters); got != want {
		t.Errorf("parameters\n got %s\nwant %s", got, want)
	}
	res, err := tl.Call(context.Background(), json.RawMessage(`{"value":[1,"a"],"list":[{"x":1}]}`))
	if err != nil || res.IsError || res.Text() != "[1 a]" {
		t.Errorf("Call = %+v, %v", res, err)
	}
}

// A number out of a schema bound is written exactly when short and rounded
// with its exponent when long: 1e1000000 (nine bytes of JSON) is not
// written out in a million digits. Problems quoting long values are cut,
// and many problems are counted past the first ones, so the error text
// stays small whatever the arguments.
func TestFuncToolProblemsBounded(t *testing.T) {
	var ran atomic.Int32
	tl := forecastTool(t, &ran)
	extra := make([]string, 100)
	for i := range extra {
		extra[i] = fmt.Sprintf(`"x%d":1`, i)
	}
	long := strings.Repeat("é", 5000)
	for _, c := range []struct {
		name, args string
		want       []string
	}{
		{"huge", `{"city":"Paris","days":1e1000000}`, []string{"- days: is about 1e+1000000; must be at most 7"}},
		{"huge negative", `{"city":"Paris","days":-25e999999}`, []string{"- days: is about -2.5e+1000000; must be at least 1"}},
		{"exact", `{"city":"Paris","days":12345678901234567890123456789}`, []string{"- days: is 12345678901234567890123456789; must be at most 7"}},
		{"many problems", `{"city":"Paris",` + strings.Join(extra, ",") + `}`, []string{"- x", "- and 80 more problems"}},
		{"long value", `{"city":"Paris","email":"` + long + `"}`, []string{"- email: \"éé", "… (cut from "}},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := tl.Call(context.Background(), json.RawMessage(c.args))
			if err != nil || !res.IsError {
				t.Fatalf("Call = %+v, %v", res, err)
			}
			text := res.Text()
			if len(text) > 21*1100 {
				t.Errorf("error text of %d bytes", len(text))
			}
			for _, w := range c.want {
				if !strings.Contains(text, w) {
					t.Errorf("text lacks %q:\n%.2000s", w, text)
				}
			}
			if !utf8.ValidString(text) {
				t.Errorf("text is not valid UTF-8")
			}
		})
	}
	if n := ran.Load(); n != 0 {
		t.Errorf("the function ran %d times on bad arguments", n)
	}
}
