package calculator

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func TestEval(t *testing.T) {
	tests := []struct {
		expr string
		want float64
	}{
		{"1 + 2 * 3", 7},
		{"(1 + 2) * 3", 9},
		{"10 - 4 - 3", 3},
		{"2 ^ 3 ^ 2", 512},
		{"-2 ^ 2", -4},
		{"2 ** 10", 1024},
		{"2 ^ -1", 0.5},
		{"10 % 3", 1},
		{"7 / 2", 3.5},
		{"sqrt(16) + abs(-3)", 7},
		{"round(3.14159, 2)", 3.14},
		{"round(2.5)", 3},
		{"max(1, 5, 3) - min(4, 2)", 3},
		{"1_000 * 1e3", 1e6},
		{"2.5E-1", 0.25},
		{"ln(e) + log(1000) + log2(8)", 7},
		{"PI", math.Pi},
		{"cos(0) + sin(0)", 1},
		{"hypot(3, 4)", 5},
		{"pow(2, 0.5) ^ 2", 2.0000000000000004},
		{"--3", 3},
		{"(49 * 10) / 12", 490.0 / 12},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			got, err := Eval(tt.expr)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("Eval(%q) = %v, want %v", tt.expr, got, tt.want)
			}
		})
	}
}

func TestEvalErrors(t *testing.T) {
	tests := []struct {
		expr   string
		column int
		msg    string
	}{
		{"", 1, "empty expression"},
		{"   ", 1, "empty expression"},
		{"1 +", 4, "expected a number, a name or \"(\", found end of expression"},
		{"2 / 0", 3, "division by zero"},
		{"2 % (1 - 1)", 3, "remainder by zero"},
		{"(1 + 2", 7, "expected \")\" to close the parenthesis at column 1"},
		{"1 2", 3, "unexpected number 2 after a complete expression"},
		{"foo + 1", 1, "unknown name \"foo\""},
		{"bar(1)", 1, "unknown function \"bar\""},
		{"sqrt", 1, "function sqrt needs arguments"},
		{"sqrt(-1)", 1, "sqrt: argument -1 is out of range; it must be >= 0"},
		{"1 $ 2", 3, "unexpected character '$'"},
		{"2 × 3", 3, "unexpected character '×'"},
		{"round(1, 2, 3)", 1, "round takes 1 to 2 arguments, got 3"},
		{"hypot(1)", 1, "hypot takes 2 arguments, got 1"},
		{"max()", 1, "max takes at least 1 arguments, got 0"},
		{"round(1, 0.5)", 1, "digits must be a whole number"},
		{"10 ^ 400", 1, "not a finite number"},
		{"1.2.3", 1, "\"1.2.3\" is not a number"},
		{"max(1 2)", 7, "expected \",\" or \")\" in the arguments of max"},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			_, err := Eval(tt.expr)
			var ee *ExprError
			if !errors.As(err, &ee) {
				t.Fatalf("Eval(%q) error = %v, want an *ExprError", tt.expr, err)
			}
			if ee.Column != tt.column || !strings.Contains(ee.Msg, tt.msg) {
				t.Errorf("Eval(%q) = column %d %q, want column %d containing %q", tt.expr, ee.Column, ee.Msg, tt.column, tt.msg)
			}
		})
	}
}

func TestFormatNumber(t *testing.T) {
	for v, want := range map[float64]string{0.1 + 0.2: "0.3", 14: "14", -0.0: "0", 1e21: "1e+21", 1.0 / 3: "0.333333333333333"} {
		if got := FormatNumber(v); got != want {
			t.Errorf("FormatNumber(%v) = %q, want %q", v, got, want)
		}
	}
}
