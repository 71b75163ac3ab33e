package cortexr

import (
	"context"
	"encoding/base64"
	"fmt"
	"math"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// MathServerName is the name NewMathServer's server reports and the name
// Config uses for it when Config.Servers is empty.
const MathServerName = "math"

// MathServerDescription is the catalogue line perception reads for the math
// server.
const MathServerDescription = "Arithmetic (add, subtract, multiply, divide, power, remainder, factorial, cube root, sine, cosine, tangent), image thumbnails (create_thumbnail) and string/list tools: ASCII values of a string's characters, the sum of exponentials of a list of integers, Fibonacci numbers."

// number is the structured content of the math tools: the seed's
// {"result": ...} shape.
type number struct {
	Result float64 `json:"result"`
}

type integers struct {
	Result []int `json:"result"`
}

// NewMathServer returns an in-process MCP server with the math and string
// tools of the seed's mcp_server_1: add, subtract, multiply, divide, power,
// factorial, strings_to_chars_to_int, int_list_to_exponential_sum and
// fibonacci_numbers, and create_thumbnail over the images in imageDir
// (empty: none). Every result carries its value as structured content
// {"result": value}; bad arguments are tool errors naming the argument.
func NewMathServer(imageDir string) *server.MCPServer {
	s := server.NewMCPServer(MathServerName, "1.0.0", server.WithToolCapabilities(false))
	binary := func(name, desc string, op func(a, b float64) (float64, error)) {
		addReadOnly(s, name, desc, func(_ context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			a, err := req.RequireFloat("a")
			if err != nil {
				return argumentError("a", err)
			}
			b, err := req.RequireFloat("b")
			if err != nil {
				return argumentError("b", err)
			}
			v, err := op(a, b)
			if err != nil {
				return mcpgo.NewToolResultError(err.Error()), nil
			}
			return numberResult(v)
		},
			mcpgo.WithNumber("a", mcpgo.Required(), mcpgo.Description("First operand.")),
			mcpgo.WithNumber("b", mcpgo.Required(), mcpgo.Description("Second operand.")),
			mcpgo.WithOutputSchema[number](),
		)
	}
	binary("add", "Add two numbers a and b.", func(a, b float64) (float64, error) { return a + b, nil })
	binary("subtract", "Subtract b from a.", func(a, b float64) (float64, error) { return a - b, nil })
	binary("multiply", "Multiply a by b.", func(a, b float64) (float64, error) { return a * b, nil })
	binary("divide", "Divide a by b.", func(a, b float64) (float64, error) {
		if b == 0 {
			return 0, fmt.Errorf("argument b is 0: division by zero is undefined")
		}
		return a / b, nil
	})
	binary("power", "Raise a to the power b.", func(a, b float64) (float64, error) { return math.Pow(a, b), nil })
	binary("remainder", "The remainder of a divided by b, with the sign of a (Python's math.fmod).", func(a, b float64) (float64, error) {
		if b == 0 {
			return 0, fmt.Errorf("argument b is 0: the remainder of a division by zero is undefined")
		}
		return math.Mod(a, b), nil
	})
	unary := func(name, desc string, op func(a float64) float64) {
		addReadOnly(s, name, desc, func(_ context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			a, err := req.RequireFloat("a")
			if err != nil {
				return argumentError("a", err)
			}
			return numberResult(op(a))
		},
			mcpgo.WithNumber("a", mcpgo.Required(), mcpgo.Description("The operand.")),
			mcpgo.WithOutputSchema[number](),
		)
	}
	unary("cbrt", "The cube root of a.", math.Cbrt)
	unary("sin", "The sine of a, in radians.", math.Sin)
	unary("cos", "The cosine of a, in radians.", math.Cos)
	unary("tan", "The tangent of a, in radians.", math.Tan)
	addReadOnly(s, "create_thumbnail", "A thumbnail of at most 100x100 pixels of a PNG, JPEG or GIF image file, as a PNG image.",
		func(_ context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			p, err := req.RequireString("image_path")
			if err != nil {
				return argumentError("image_path", err)
			}
			png, err := thumbnail(imageDir, p, 100)
			if err != nil {
				return mcpgo.NewToolResultError(err.Error()), nil
			}
			return mcpgo.NewToolResultImage("thumbnail of "+p, base64.StdEncoding.EncodeToString(png), "image/png"), nil
		},
		mcpgo.WithString("image_path", mcpgo.Required(), mcpgo.Description("The image file's path in the image directory.")),
	)

	addReadOnly(s, "factorial", "The factorial n! of a whole number n from 0 to 170.", func(_ context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		n, err := req.RequireFloat("n")
		if err != nil || n != math.Trunc(n) || n < 0 || n > 170 {
			return mcpgo.NewToolResultError("argument n must be a whole number from 0 to 170"), nil
		}
		v := 1.0
		for i := 2.0; i <= n; i++ {
			v *= i
		}
		return numberResult(v)
	},
		mcpgo.WithNumber("n", mcpgo.Required(), mcpgo.Description("A whole number, 0 to 170.")),
		mcpgo.WithOutputSchema[number](),
	)
	addReadOnly(s, "strings_to_chars_to_int", "Convert the characters of a string to their ASCII (Unicode code point) values.", func(_ context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		str, err := req.RequireString("string")
		if err != nil {
			return argumentError("string", err)
		}
		out := []int{}
		for _, r := range str {
			out = append(out, int(r))
		}
		return integersResult(out)
	},
		mcpgo.WithString("string", mcpgo.Required(), mcpgo.Description("The string, such as \"INDIA\".")),
		mcpgo.WithOutputSchema[integers](),
	)
	addReadOnly(s, "int_list_to_exponential_sum", "Sum the exponentials e^x of a list of integers.", func(_ context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		xs, err := req.RequireFloatSlice("numbers")
		if err != nil {
			return argumentError("numbers", err)
		}
		var sum float64
		for _, x := range xs {
			sum += math.Exp(x)
		}
		return numberResult(sum)
	},
		mcpgo.WithArray("numbers", mcpgo.Required(), mcpgo.WithNumberItems(), mcpgo.Description("The integers.")),
		mcpgo.WithOutputSchema[number](),
	)
	addReadOnly(s, "fibonacci_numbers", "The first n Fibonacci numbers, 0 1 1 2 3 ..., for n from 0 to 90.", func(_ context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		n, err := req.RequireInt("n")
		if err != nil || n < 0 || n > 90 {
			return mcpgo.NewToolResultError("argument n must be a whole number from 0 to 90"), nil
		}
		out := []int{}
		a, b := 0, 1
		for range n {
			out = append(out, a)
			a, b = b, a+b
		}
		return integersResult(out)
	},
		mcpgo.WithNumber("n", mcpgo.Required(), mcpgo.Description("How many, 0 to 90.")),
		mcpgo.WithOutputSchema[integers](),
	)
	return s
}

// addReadOnly adds to s the read-only tool name, described by desc, with
// the arguments and output schema of opts, that h serves.
func addReadOnly(s *server.MCPServer, name, desc string, h server.ToolHandlerFunc, opts ...mcpgo.ToolOption) {
	opts = append([]mcpgo.ToolOption{mcpgo.WithDescription(desc)}, opts...)
	s.AddTool(mcpgo.NewTool(name, append(opts, mcpgo.WithReadOnlyHintAnnotation(true))...), h)
}

// argumentError is the tool error of the argument name that the request
// does not give as the tool needs it.
func argumentError(name string, err error) (*mcpgo.CallToolResult, error) {
	return mcpgo.NewToolResultError("argument " + name + ": " + err.Error()), nil
}

// integersResult is the result of a tool that returns the integers xs.
func integersResult(xs []int) (*mcpgo.CallToolResult, error) {
	return mcpgo.NewToolResultStructured(integers{Result: xs}, fmt.Sprint(xs)), nil
}

func numberResult(v float64) (*mcpgo.CallToolResult, error) {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return mcpgo.NewToolResultError(fmt.Sprintf("the result %v is not a finite number", v)), nil
	}
	return mcpgo.NewToolResultStructured(number{Result: v}, fmt.Sprint(v)), nil
}
