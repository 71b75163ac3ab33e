package bosai_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentgraph/agentgraph/examples/bosai"
	"github.com/agentgraph/agentgraph/operator/toolresult"
)

func structured(text string) *toolresult.Result {
	return &toolresult.Result{Tool: "q", Contents: []toolresult.Content{
		{Kind: toolresult.KindText, Text: "a summary"},
		{Kind: toolresult.KindStructured, Text: text},
	}}
}

func TestTabulate(t *testing.T) {
	for _, tc := range []struct {
		name    string
		res     *toolresult.Result
		want    *bosai.TabularResult
		wantErr string
	}{
		{
			name: "seed query shape",
			res:  structured(`{"success": true, "columns": ["plan", "price"], "data": [["Starter", 19], ["Team", 49]], "row_count": 2}`),
			want: &bosai.TabularResult{Columns: []string{"plan", "price"}, RowCount: 2,
				Rows: []map[string]any{{"plan": "Starter", "price": 19.0}, {"plan": "Team", "price": 49.0}}},
		},
		{
			name: "records in an object, columns in the first record's order",
			res:  structured(`{"query": "team", "results": [{"rank": 1, "title": "Pricing", "score": 6.4}, {"rank": 2, "title": "FAQ", "score": 5, "section": "Billing"}]}`),
			want: &bosai.TabularResult{Columns: []string{"rank", "title", "score", "section"}, RowCount: 2,
				Rows: []map[string]any{{"rank": 1.0, "title": "Pricing", "score": 6.4}, {"rank": 2.0, "title": "FAQ", "score": 5.0, "section": "Billing"}}},
		},
		{
			name: "bare array",
			res:  structured(`[{"z": 1, "a": 2}]`),
			want: &bosai.TabularResult{Columns: []string{"z", "a"}, RowCount: 1, Rows: []map[string]any{{"z": 1.0, "a": 2.0}}},
		},
		{
			name: "structured value without its encoding",
			res:  &toolresult.Result{Structured: map[string]any{"columns": []any{"n"}, "data": []any{[]any{1}}}},
			want: &bosai.TabularResult{Columns: []string{"n"}, RowCount: 1, Rows: []map[string]any{{"n": 1.0}}},
		},
		{
			name: "empty records",
			res:  structured(`{"query": "nothing", "results": []}`),
			want: &bosai.TabularResult{Columns: []string{}, Rows: []map[string]any{}},
		},
		{name: "failed query", res: structured(`{"success": false, "columns": [], "data": [], "error": "column x does not exist"}`), wantErr: "column x does not exist"},
		{name: "ragged row", res: structured(`{"columns": ["a", "b"], "data": [[1]]}`), wantErr: "row 0 has 1 values for 2 columns"},
		{name: "no table", res: structured(`{"result": 42}`), wantErr: bosai.ErrNotTabular.Error()},
		{name: "text only", res: &toolresult.Result{Contents: []toolresult.Content{{Kind: toolresult.KindText, Text: "hi"}}}, wantErr: bosai.ErrNotTabular.Error()},
		{name: "tool error", res: &toolresult.Result{Tool: "q", IsError: true, Error: "bad query"}, wantErr: "tool q failed: bad query"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := bosai.Tabulate(tc.res)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("table (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := bosai.Tabulate(nil); !errors.Is(err, bosai.ErrNotTabular) {
		t.Errorf("Tabulate(nil) = %v, want ErrNotTabular", err)
	}
}
