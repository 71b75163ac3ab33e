package calculator_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image/png"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/calculator"
	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/internal/clienttest"
)

// cmd is the server command, built and serving HTTP for the stdio and http tests.
var cmd clienttest.Command

func TestMain(m *testing.M) {
	os.Exit(clienttest.Main(m, "github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/cmd/calculator", &cmd))
}

// transports runs f in-process (with cfg) and over stdio (the command with
// its default limits), and over streamable HTTP.
func transports(t *testing.T, cfg calculator.Config, f func(t *testing.T, c *clienttest.Client)) {
	t.Run("inprocess", func(t *testing.T) {
		s, err := calculator.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		f(t, clienttest.InProcess(t, s, clienttest.Options{}))
	})
	t.Run("stdio", func(t *testing.T) {
		f(t, clienttest.Stdio(t, cmd.Binary, clienttest.Options{Legacy: true}))
	})
	t.Run("http", func(t *testing.T) {
		f(t, clienttest.HTTP(t, cmd.HTTP.URL, clienttest.Options{}))
	})
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	t.Cleanup(cancel)
	return c
}

func call(t *testing.T, c *clienttest.Client, tool string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, _, err := c.Call(ctx(t), tool, args, false)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestListTools(t *testing.T) {
	transports(t, calculator.Config{}, func(t *testing.T, c *clienttest.Client) {
		res, err := c.ListTools(ctx(t), mcp.ListToolsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
		}
		slices.Sort(names)
		if diff := cmp.Diff([]string{"calculate", "chart", "run_code"}, names); diff != "" {
			t.Errorf("tools (-want +got):\n%s", diff)
		}
	})
}

func TestCalculate(t *testing.T) {
	transports(t, calculator.Config{}, func(t *testing.T, c *clienttest.Client) {
		res := call(t, c, "calculate", map[string]any{"expression": "(49 * 10) / 4"})
		if res.IsError || clienttest.Text(res) != "(49 * 10) / 4 = 122.5" {
			t.Errorf("calculate = %q", clienttest.Text(res))
		}
		var got calculator.Calculation
		clienttest.Structured(t, res, &got)
		if diff := cmp.Diff(calculator.Calculation{Expression: "(49 * 10) / 4", Result: 122.5, Formatted: "122.5"}, got); diff != "" {
			t.Errorf("structured (-want +got):\n%s", diff)
		}
	})
}

func TestRunCode(t *testing.T) {
	program := `
def mean(xs):
    return sum(xs) / len(xs)

prices = {"Starter": 19, "Team": 49, "Business": 89}
for name, p in sorted(prices.items()):
    print(name, p * 12)
print(math.sqrt(16), json.encode({"a": [1, 2]}))
s = struct(x = 1)
result = mean(list(prices.values()))
`
	transports(t, calculator.Config{}, func(t *testing.T, c *clienttest.Client) {
		res := call(t, c, "run_code", map[string]any{"code": program})
		if res.IsError {
			t.Fatalf("tool error: %s", clienttest.Text(res))
		}
		want := "Business 1068\nStarter 228\nTeam 588\n4.0 {\"a\":[1,2]}\nresult = 52.333333333333336\n"
		if diff := cmp.Diff(want, clienttest.Text(res)); diff != "" {
			t.Errorf("text (-want +got):\n%s", diff)
		}
		var rr calculator.RunResult
		clienttest.Structured(t, res, &rr)
		if rr.Result != "52.333333333333336" || rr.Steps == 0 {
			t.Errorf("structured = %+v", rr)
		}
	})
}

// TestRunCodeTimeLimit: a program that runs past timeout_ms stops with a
// time limit error. It runs in process, with a step bound no machine can
// reach in 50ms: with the default bound of the built server (10,000,000
// steps) an idle machine met the step limit first.
func TestRunCodeTimeLimit(t *testing.T) {
	tests := []struct {
		name string
		code string
		want []string // substrings of the error text
	}{
		{"loop", "print('start')\nwhile True:\n    pass\n",
			[]string{"run_code: time limit error", "longer than 50ms", "Output before the error:\nstart\n"}},
		{"sum", "x = sum(range(1000000000000))", []string{"run_code: time limit error"}},
	}
	s, err := calculator.New(calculator.Config{MaxSteps: 1 << 50})
	if err != nil {
		t.Fatal(err)
	}
	c := clienttest.InProcess(t, s, clienttest.Options{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := call(t, c, "run_code", map[string]any{"code": tt.code, "timeout_ms": 50})
			text := clienttest.Text(res)
			if !res.IsError {
				t.Fatalf("result %q, want a tool error", text)
			}
			for _, w := range tt.want {
				if !strings.Contains(text, w) {
					t.Errorf("error %q lacks %q", text, w)
				}
			}
		})
	}
}

func TestRunCodeFailures(t *testing.T) {
	tests := []struct {
		name string
		args map[string]any
		want []string // substrings of the error text
	}{
		{"step limit", map[string]any{"code": "n = 0\nwhile True:\n    n += 1\n", "max_steps": 1000},
			[]string{"run_code: step limit error", "limit of 1000 execution steps"}},
		{"sum counts steps", map[string]any{"code": "x = sum(range(1000000))", "max_steps": 1000},
			[]string{"run_code: step limit error", "limit of 1000 execution steps"}},
		{"load", map[string]any{"code": `load("os.star", "getenv")`}, []string{"load is disabled"}},
		{"no open", map[string]any{"code": `print(open("/etc/passwd").read())`}, []string{"syntax error", "undefined: open"}},
		{"no recursion", map[string]any{"code": "def f(n):\n    return f(n)\nf(1)\n"}, []string{"runtime error", "called recursively"}},
		{"runtime error with output", map[string]any{"code": "print('hi')\nx = 1 // 0\n"},
			[]string{"runtime error", "code.star:2", "division by zero", "Output before the error:\nhi\n"}},
		{"syntax error", map[string]any{"code": "def (:\n"}, []string{"syntax error", "code.star:1"}},
		{"no code", map[string]any{}, []string{"argument code is required"}},
		{"zero steps", map[string]any{"code": "x = 1", "max_steps": 0}, []string{"argument max_steps must be a whole number from 1 to"}},
		{"timeout too long", map[string]any{"code": "x = 1", "timeout_ms": 10_000_000}, []string{"argument timeout_ms must be a whole number from 1 to 5000"}},
	}
	transports(t, calculator.Config{}, func(t *testing.T, c *clienttest.Client) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				res := call(t, c, "run_code", tt.args)
				text := clienttest.Text(res)
				if !res.IsError {
					t.Fatalf("result %q, want a tool error", text)
				}
				for _, w := range tt.want {
					if !strings.Contains(text, w) {
						t.Errorf("error %q lacks %q", text, w)
					}
				}
			})
		}
	})
}

func TestConfiguredLimits(t *testing.T) {
	// A time limit no run here reaches, so that each call ends at the
	// limit it tests (30ms was reached first on a loaded machine).
	s, err := calculator.New(calculator.Config{MaxSteps: 500, Timeout: 30 * time.Second, MaxOutput: 12})
	if err != nil {
		t.Fatal(err)
	}
	c := clienttest.InProcess(t, s, clienttest.Options{})
	res := call(t, c, "run_code", map[string]any{"code": "for i in range(1000):\n    pass\n"})
	if !strings.Contains(clienttest.Text(res), "limit of 500 execution steps") {
		t.Errorf("step limit: %q", clienttest.Text(res))
	}
	res = call(t, c, "run_code", map[string]any{"code": "print('abcdefgh')\nprint('ijklmnop')\n"})
	if res.IsError || clienttest.Text(res) != "abcdefgh\nijk\n[output truncated at 12 bytes]\n" {
		t.Errorf("truncation: %q", clienttest.Text(res))
	}
	res = call(t, c, "run_code", map[string]any{"code": "x = 1", "max_steps": 501})
	if !res.IsError || !strings.Contains(clienttest.Text(res), "argument max_steps must be a whole number from 1 to 500") {
		t.Errorf("max_steps above the configured limit: %q", clienttest.Text(res))
	}
	res = call(t, c, "run_code", map[string]any{"code": "x = 1", "timeout_ms": 30_001})
	if !res.IsError || !strings.Contains(clienttest.Text(res), "argument timeout_ms must be a whole number from 1 to 30000") {
		t.Errorf("timeout_ms above the configured limit: %q", clienttest.Text(res))
	}

	if _, err := calculator.New(calculator.Config{Timeout: -1}); !errors.Is(err, calculator.ErrConfig) {
		t.Errorf("New with a negative timeout: %v", err)
	}
}

func TestRunStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(20*time.Millisecond, cancel)
	_, err := calculator.Run(ctx, "while True:\n    pass\n", calculator.Limits{})
	var re *calculator.RunError
	if !errors.As(err, &re) || re.Kind != "cancelled" {
		t.Errorf("Run after cancel: %v, want a cancelled RunError", err)
	}
}

func TestChart(t *testing.T) {
	transports(t, calculator.Config{}, func(t *testing.T, c *clienttest.Client) {
		res := call(t, c, "chart", map[string]any{
			"title":  "Monthly cost for 10 editors",
			"labels": []any{"Acme Team", "Northwind Pro", "Initech Plus"},
			"values": []any{490, 750, 350},
		})
		if res.IsError || len(res.Content) != 3 {
			t.Fatalf("chart result: %+v", res)
		}
		text, ok := mcp.AsTextContent(res.Content[0])
		if !ok || !strings.Contains(text.Text, "| Northwind Pro | 750 |") {
			t.Errorf("text content %+v", res.Content[0])
		}
		img, ok := mcp.AsImageContent(res.Content[1])
		if !ok || img.MIMEType != "image/png" {
			t.Fatalf("second content is not a PNG image: %+v", res.Content[1])
		}
		if img.Meta == nil || !strings.Contains(fmt.Sprint(img.Meta.AdditionalFields["alt_text"]), "Northwind Pro") {
			t.Errorf("image has no alt text naming the bars: %+v", img.Meta)
		}
		raw, err := base64.StdEncoding.DecodeString(img.Data)
		if err != nil {
			t.Fatal(err)
		}
		pic, err := png.Decode(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		if b := pic.Bounds(); b.Dx() != 640 || b.Dy() != 360 {
			t.Errorf("image size %v", b)
		}
		// The second bar is the tallest: near the top of the plot at its
		// centre there is bar colour, not background.
		if r, g, b, _ := pic.At(320, 40).RGBA(); r == 0xffff && g == 0xffff && b == 0xffff {
			t.Errorf("no bar drawn at the top of the tallest column")
		}
		res3, ok := res.Content[2].(mcp.EmbeddedResource)
		if !ok {
			t.Fatalf("third content is %T, want an embedded resource", res.Content[2])
		}
		tr, ok := res3.Resource.(mcp.TextResourceContents)
		if !ok || tr.MIMEType != calculator.WidgetMIMEType {
			t.Fatalf("widget resource %+v", res3.Resource)
		}
		var widget calculator.DataTable
		if err := json.Unmarshal([]byte(tr.Text), &widget); err != nil {
			t.Fatal(err)
		}
		want := calculator.DataTable{WidgetType: "data_table", Title: "Monthly cost for 10 editors", Columns: []string{"Label", "Value"},
			Rows: [][]any{{"Acme Team", 490.0}, {"Northwind Pro", 750.0}, {"Initech Plus", 350.0}}, Sortable: true}
		if diff := cmp.Diff(want, widget); diff != "" {
			t.Errorf("widget (-want +got):\n%s", diff)
		}
	})
}

func TestBadArguments(t *testing.T) {
	tests := []clienttest.BadCall{
		{Tool: "calculate", Want: "argument expression is required"},
		{Tool: "calculate", Args: map[string]any{"expression": "2 +"}, Want: "argument expression: column 4: expected a number"},
		{Tool: "calculate", Args: map[string]any{"expression": "1/0"}, Want: "argument expression: column 2: division by zero"},
		{Tool: "chart", Args: map[string]any{"values": []any{1}}, Want: "argument labels is required"},
		{Tool: "chart", Args: map[string]any{"labels": []any{"a"}}, Want: "argument values is required"},
		{Tool: "chart", Args: map[string]any{"labels": []any{"a", "b"}, "values": []any{1}}, Want: "must have the same length, got 2 labels and 1 values"},
		{Tool: "chart", Args: map[string]any{"labels": []any{"a"}, "values": []any{"x"}}, Want: "argument values[0] must be a number"},
		{Tool: "chart", Args: map[string]any{"labels": []any{3}, "values": []any{1}}, Want: "argument labels[0] must be a string"},
	}
	transports(t, calculator.Config{}, func(t *testing.T, c *clienttest.Client) {
		clienttest.CheckBadCalls(t, c, ctx, tests)
	})
}
