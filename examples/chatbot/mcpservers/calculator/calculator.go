package calculator

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"go.uber.org/zap"

	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/internal/args"
)

// Name is the server name reported to clients when Config.Name is empty.
const Name = "calculator"

// Version is the server version reported to clients.
const Version = "1.0.0"

// Defaults for Config's limits.
const (
	DefaultMaxSteps    = 10_000_000
	DefaultTimeout     = 5 * time.Second
	DefaultMaxOutput   = 64 << 10
	DefaultMaxCodeSize = 64 << 10
	// MaxChartValues is how many bars chart draws at most.
	MaxChartValues = 50
)

// ErrConfig reports a negative limit in Config.
var ErrConfig = errors.New("calculator: invalid config")

// Config configures the server. The zero value uses the defaults.
type Config struct {
	// Name is the server name reported to clients. Empty means Name.
	Name string
	// MaxSteps bounds the Starlark execution steps of one run_code call.
	// Zero means DefaultMaxSteps (about a second of work).
	MaxSteps uint64
	// Timeout bounds the wall time of one run_code call. Zero means
	// DefaultTimeout.
	Timeout time.Duration
	// MaxOutput bounds the printed output kept from one run, in bytes; the
	// rest is dropped and the result says so. Zero means DefaultMaxOutput.
	MaxOutput int
	// MaxCodeSize bounds the size of a program in bytes. Zero means
	// DefaultMaxCodeSize.
	MaxCodeSize int
	// Logger receives a debug line per program run. Nil means no logging.
	Logger *zap.Logger
}

// Calculation is the structured content of a calculate result.
type Calculation struct {
	// Expression is the expression as given.
	Expression string `json:"expression"`
	// Result is its value.
	Result float64 `json:"result"`
	// Formatted is Result with up to 15 significant digits.
	Formatted string `json:"formatted"`
}

type calc struct {
	cfg Config
	log *zap.Logger
}

// New builds the calculator server. It fails only on negative limits.
func New(cfg Config) (*server.MCPServer, error) {
	if cfg.Timeout < 0 || cfg.MaxOutput < 0 || cfg.MaxCodeSize < 0 {
		return nil, fmt.Errorf("%w: Timeout, MaxOutput and MaxCodeSize must not be negative (zero selects the default)", ErrConfig)
	}
	if cfg.MaxSteps == 0 {
		cfg.MaxSteps = DefaultMaxSteps
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxOutput == 0 {
		cfg.MaxOutput = DefaultMaxOutput
	}
	if cfg.MaxCodeSize == 0 {
		cfg.MaxCodeSize = DefaultMaxCodeSize
	}
	if cfg.Name == "" {
		cfg.Name = Name
	}
	c := &calc{cfg: cfg, log: cfg.Logger}
	if c.log == nil {
		c.log = zap.NewNop()
	}
	s := server.NewMCPServer(cfg.Name, Version,
		server.WithToolCapabilities(false),
		server.WithRecovery(),
		server.WithInstructions("Use calculate for arithmetic, run_code for anything that needs loops or "+
			"data structures (Starlark, a Python dialect: print results or assign them to result), and chart "+
			"to show numbers as a bar chart and a table."),
	)
	s.AddTool(mcp.NewTool("calculate",
		mcp.WithDescription("Evaluate an arithmetic expression exactly, e.g. \"(49 * 10) / 12\" or \"sqrt(2) ^ 2\". "+
			"Operators + - * / % ^, parentheses, pi, e, and abs sqrt cbrt exp ln log log2 sin cos tan asin acos atan "+
			"floor ceil round min max hypot pow."),
		mcp.WithString("expression", mcp.Required(), mcp.Description("The expression to evaluate.")),
		mcp.WithOutputSchema[Calculation](),
		mcp.WithReadOnlyHintAnnotation(true),
		mcp.WithIdempotentHintAnnotation(true),
	), c.calculate)
	s.AddTool(mcp.NewTool("run_code",
		mcp.WithDescription("Run a Starlark program (a small, deterministic Python dialect) in a sandbox and return "+
			"what it printed and the value of a global named result. sum and the modules math, json and struct are available; "+
			"load, files, network and recursion are not."),
		mcp.WithString("code", mcp.Required(), mcp.Description("The program source.")),
		mcp.WithInteger("max_steps", mcp.Description(fmt.Sprintf("Stop after this many execution steps, 1 to %d (the default).", cfg.MaxSteps)),
			mcp.Min(1), mcp.Max(float64(cfg.MaxSteps))),
		mcp.WithInteger("timeout_ms", mcp.Description(fmt.Sprintf("Stop after this many milliseconds, 1 to %d (the default).", cfg.Timeout.Milliseconds())),
			mcp.Min(1), mcp.Max(float64(cfg.Timeout.Milliseconds()))),
		mcp.WithOutputSchema[RunResult](),
		mcp.WithReadOnlyHintAnnotation(true),
		mcp.WithOpenWorldHintAnnotation(false),
	), c.runCode)
	s.AddTool(mcp.NewTool("chart",
		mcp.WithDescription("Show labelled numbers as a bar chart (PNG image) and a sortable data table widget."),
		mcp.WithArray("labels", mcp.Required(), mcp.WithStringItems(), mcp.Description("One label per bar.")),
		mcp.WithArray("values", mcp.Required(), mcp.WithNumberItems(), mcp.Description(fmt.Sprintf("One number per label, at most %d.", MaxChartValues))),
		mcp.WithString("title", mcp.Description("Chart title.")),
		mcp.WithReadOnlyHintAnnotation(true),
	), c.chart)
	return s, nil
}

func (c *calc) calculate(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	expr, errResult := args.String(req, "expression", "an arithmetic expression such as 2 * (3 + 4)")
	if errResult != nil {
		return errResult, nil
	}
	v, err := Eval(expr)
	if err != nil {
		return mcp.NewToolResultErrorf("argument expression: %s (in %q)", strings.TrimPrefix(err.Error(), "calculator: "), expr), nil
	}
	out := Calculation{Expression: expr, Result: v, Formatted: FormatNumber(v)}
	return mcp.NewToolResultStructured(out, fmt.Sprintf("%s = %s", strings.TrimSpace(expr), out.Formatted)), nil
}

func (c *calc) runCode(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	code, errResult := args.String(req, "code", "a Starlark program, e.g. print(sum([1, 2, 3]))")
	if errResult != nil {
		return errResult, nil
	}
	if len(code) > c.cfg.MaxCodeSize {
		return mcp.NewToolResultErrorf("argument code is %d bytes; the limit is %d", len(code), c.cfg.MaxCodeSize), nil
	}
	steps, errResult := args.Int(req, "max_steps", int(min(c.cfg.MaxSteps, 1<<53)), 1, int(min(c.cfg.MaxSteps, 1<<53)))
	if errResult != nil {
		return errResult, nil
	}
	maxMS := int(c.cfg.Timeout.Milliseconds())
	timeoutMS, errResult := args.Int(req, "timeout_ms", maxMS, 1, maxMS)
	if errResult != nil {
		return errResult, nil
	}
	lim := Limits{MaxSteps: uint64(steps), Timeout: time.Duration(timeoutMS) * time.Millisecond, MaxOutput: c.cfg.MaxOutput}
	if timeoutMS == maxMS {
		lim.Timeout = c.cfg.Timeout // keep sub-millisecond configured limits exact
	}
	start := time.Now()
	res, err := Run(ctx, code, lim)
	c.log.Debug("run_code", zap.Duration("elapsed", time.Since(start)), zap.Error(err))
	if err != nil {
		var re *RunError
		if !errors.As(err, &re) {
			return nil, err
		}
		msg := fmt.Sprintf("run_code: %s error: %s", re.Kind, re.Msg)
		if re.Output != "" {
			msg += "\n\nOutput before the error:\n" + re.Output
		}
		return mcp.NewToolResultError(msg), nil
	}
	var text strings.Builder
	text.WriteString(res.Output)
	if res.Truncated {
		fmt.Fprintf(&text, "\n[output truncated at %d bytes]\n", c.cfg.MaxOutput)
	}
	if res.Result != "" {
		fmt.Fprintf(&text, "result = %s\n", res.Result)
	}
	if text.Len() == 0 {
		text.WriteString("The program ran and printed nothing; print values or assign them to result.\n")
	}
	return mcp.NewToolResultStructured(res, text.String()), nil
}

func (c *calc) chart(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	raw := req.GetArguments()
	labels, ok := raw["labels"].([]any)
	if !ok || len(labels) == 0 {
		return mcp.NewToolResultError("argument labels is required: give an array of strings, one per bar"), nil
	}
	values, ok := raw["values"].([]any)
	if !ok || len(values) == 0 {
		return mcp.NewToolResultError("argument values is required: give an array of numbers, one per label"), nil
	}
	if len(labels) != len(values) {
		return mcp.NewToolResultErrorf("arguments labels and values must have the same length, got %d labels and %d values", len(labels), len(values)), nil
	}
	if len(values) > MaxChartValues {
		return mcp.NewToolResultErrorf("argument values has %d numbers; the limit is %d", len(values), MaxChartValues), nil
	}
	title, errResult := args.OptionalString(req, "title")
	if errResult != nil {
		return errResult, nil
	}
	names := make([]string, len(labels))
	nums := make([]float64, len(values))
	table := DataTable{WidgetType: "data_table", Title: title, Columns: []string{"Label", "Value"}, Sortable: true}
	var text strings.Builder
	if title != "" {
		fmt.Fprintf(&text, "%s\n\n", title)
	}
	text.WriteString("| Label | Value |\n|---|---|\n")
	for i := range labels {
		s, ok := labels[i].(string)
		if !ok {
			return mcp.NewToolResultErrorf("argument labels[%d] must be a string", i), nil
		}
		v, ok := args.Number(values[i])
		if !ok {
			return mcp.NewToolResultErrorf("argument values[%d] must be a number", i), nil
		}
		names[i], nums[i] = s, v
		table.Rows = append(table.Rows, []any{s, v})
		fmt.Fprintf(&text, "| %s | %s |\n", s, FormatNumber(v))
	}
	png, err := BarChart(nums)
	if err != nil {
		return nil, fmt.Errorf("calculator: drawing the chart: %w", err)
	}
	widget, err := json.Marshal(table)
	if err != nil {
		return nil, err
	}
	alt := "Bar chart"
	if title != "" {
		alt += " of " + title
	}
	alt += ": " + strings.Join(names, ", ")
	img := mcp.NewImageContent(base64.StdEncoding.EncodeToString(png), "image/png")
	img.Meta = &mcp.Meta{AdditionalFields: map[string]any{"alt_text": alt}}
	return &mcp.CallToolResult{Content: []mcp.Content{
		mcp.NewTextContent(text.String()),
		img,
		mcp.NewEmbeddedResource(mcp.TextResourceContents{
			URI:      "widget://calculator/chart/data_table",
			MIMEType: WidgetMIMEType,
			Text:     string(widget),
		}),
	}}, nil
}
