package bosai

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agentgraph/agentgraph/operator/toolresult"
)

// ErrNotTabular reports a result that holds no table.
var ErrNotTabular = errors.New("bosai: result holds no table")

// Tabulate turns an MCP tool result into a table (the seed's SQL result
// transformation). It reads the result's structured content in either of
// two shapes:
//
//   - a query result, the seed's MCP shape: {"success": true,
//     "columns": ["a", "b"], "data": [[1, 2], ...]}; "success": false fails
//     with the result's "error";
//   - records: an array of objects, or an object with a field holding one
//     (the first such field), such as
//     {"query": "...", "results": [{...}, ...]}. The columns are the
//     records' keys, in the order the first record lists them, then any
//     new key in the order it appears.
//
// RowCount is the number of rows. A result with no structured content, or
// none in these shapes, fails with ErrNotTabular; a tool error fails with
// the tool's message.
func Tabulate(res *toolresult.Result) (*TabularResult, error) {
	if res == nil {
		return nil, ErrNotTabular
	}
	if res.IsError {
		return nil, fmt.Errorf("bosai: tool %s failed: %s", res.Tool, res.Error)
	}
	for _, c := range res.Contents {
		if c.Kind == toolresult.KindStructured && c.Text != "" {
			return TabulateJSON([]byte(c.Text))
		}
	}
	if res.Structured == nil {
		return nil, ErrNotTabular
	}
	raw, err := json.Marshal(res.Structured)
	if err != nil {
		return nil, fmt.Errorf("bosai: encoding structured content: %w", err)
	}
	return TabulateJSON(raw)
}

// TabulateJSON is Tabulate for a JSON document, such as an HTTP response
// body.
func TabulateJSON(raw []byte) (*TabularResult, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '[' {
		return records(raw)
	}
	keys, err := keysInOrder(raw)
	if err != nil {
		return nil, err
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, fmt.Errorf("bosai: decoding table: %w", err)
	}
	if _, ok := obj["columns"]; ok {
		if _, ok := obj["data"]; ok {
			return queryResult(obj)
		}
	}
	for _, k := range keys {
		v := bytes.TrimSpace(obj[k])
		if len(v) > 0 && v[0] == '[' {
			if t, err := records(v); err == nil {
				return t, nil
			}
		}
	}
	return nil, ErrNotTabular
}

// queryResult converts the seed's {"columns", "data"} shape.
func queryResult(obj map[string]json.RawMessage) (*TabularResult, error) {
	var q struct {
		Success *bool    `json:"success"`
		Error   string   `json:"error"`
		Columns []string `json:"columns"`
		Data    [][]any  `json:"data"`
	}
	b, _ := json.Marshal(obj)
	if err := json.Unmarshal(b, &q); err != nil {
		return nil, fmt.Errorf("bosai: decoding query result: %w", err)
	}
	if q.Success != nil && !*q.Success {
		return nil, fmt.Errorf("bosai: query failed: %s", q.Error)
	}
	t := &TabularResult{Columns: q.Columns, Rows: make([]map[string]any, 0, len(q.Data))}
	for i, row := range q.Data {
		if len(row) != len(q.Columns) {
			return nil, fmt.Errorf("bosai: query result row %d has %d values for %d columns", i, len(row), len(q.Columns))
		}
		m := make(map[string]any, len(row))
		for j, v := range row {
			m[q.Columns[j]] = v
		}
		t.Rows = append(t.Rows, m)
	}
	t.RowCount = len(t.Rows)
	return t, nil
}

// records converts an array of objects.
func records(raw []byte) (*TabularResult, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fmt.Errorf("bosai: decoding records: %w", err)
	}
	t := &TabularResult{Columns: []string{}, Rows: make([]map[string]any, 0, len(items))}
	seen := map[string]bool{}
	for i, item := range items {
		keys, err := keysInOrder(item)
		if err != nil {
			return nil, fmt.Errorf("bosai: record %d: %w", i, ErrNotTabular)
		}
		var row map[string]any
		if err := json.Unmarshal(item, &row); err != nil {
			return nil, fmt.Errorf("bosai: record %d: %w", i, err)
		}
		for _, k := range keys {
			if !seen[k] {
				seen[k] = true
				t.Columns = append(t.Columns, k)
			}
		}
		t.Rows = append(t.Rows, row)
	}
	t.RowCount = len(t.Rows)
	return t, nil
}

// keysInOrder returns the keys of the JSON object raw in document order.
func keysInOrder(raw []byte) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, ErrNotTabular
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("bosai: decoding object: %w", err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, fmt.Errorf("bosai: decoding object: %w", err)
		}
	}
	return keys, nil
}
