package toolresult_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/operator/toolresult"
)

func TestText(t *testing.T) {
	r := &toolresult.Result{Contents: []toolresult.Content{
		toolresult.TextContent("one"),
		{MIMEType: "image/png", Data: "iVBO"},
		{Text: "two"}, // no MIME type: text
		{Kind: toolresult.KindResourceLink, URI: "file:///a", Text: "a link's description"},
		{MIMEType: "text/markdown", Text: "## three"},
		{Kind: toolresult.KindStructured, MIMEType: toolresult.MIMEJSON, Text: `{"n":1}`},
	}}
	if got, want := r.Text(), "one\ntwo\n## three"; got != want {
		t.Errorf("Text = %q, want %q", got, want)
	}
	var none *toolresult.Result
	if none.Text() != "" || none.Value() != nil {
		t.Errorf("a nil result has text %q, value %v", none.Text(), none.Value())
	}
	if v := r.Value(); v != "one\ntwo\n## three" {
		t.Errorf("Value without structured output = %v, want the text", v)
	}
	r.Structured = map[string]any{"n": 1}
	if diff := cmp.Diff(map[string]any{"n": 1}, r.Value()); diff != "" {
		t.Errorf("Value (-want +got):\n%s", diff)
	}
}

func TestBytes(t *testing.T) {
	for _, data := range []string{"AQI=", "AQI"} { // padded and not
		b, err := toolresult.Content{MIMEType: "image/png", Data: data}.Bytes()
		if err != nil || string(b) != "\x01\x02" {
			t.Errorf("Bytes of %q = %q, %v", data, b, err)
		}
	}
	if _, err := (toolresult.Content{MIMEType: "image/png", Data: "!!"}).Bytes(); err == nil {
		t.Error("Bytes of data that is not base64: no error")
	}
	if b, _ := toolresult.TextContent("hi").Bytes(); string(b) != "hi" {
		t.Errorf("Bytes of a text item = %q", b)
	}
}

// pngBytes is the start of a PNG image: what the bytes of one sniff as.
var pngBytes = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

func TestPart(t *testing.T) {
	wav := []byte("RIFF\x24\x00\x00\x00WAVEfmt ")
	for name, tc := range map[string]struct {
		c    toolresult.Content
		want model.Part
	}{
		"text":           {toolresult.TextContent("hi"), model.TextPart("hi")},
		"image":          {toolresult.Content{Kind: toolresult.KindImage, MIMEType: "image/png", Data: b64(pngBytes)}, model.BinaryPart("image/png", pngBytes)},
		"image misnamed": {toolresult.Content{Kind: toolresult.KindImage, MIMEType: "image/jpg", Data: b64(pngBytes)}, model.BinaryPart("image/png", pngBytes)},
		"bad base64":     {toolresult.Content{MIMEType: "image/png", Data: "!!"}, model.TextPart("[image/png, data that is not valid base64]")},
		// Binary items a provider would take for images are notes.
		"audio": {toolresult.Content{Kind: toolresult.KindAudio, MIMEType: "audio/wav", Data: b64(wav), AltText: "a chime"},
			model.TextPart(fmt.Sprintf("[audio/wav, %d bytes, not shown] a chime", len(wav)))},
		"pdf resource": {toolresult.Content{Kind: toolresult.KindResource, MIMEType: "application/pdf", URI: "file:///x.pdf", Data: b64([]byte("%PDF-1.7"))},
			model.TextPart("[application/pdf file:///x.pdf, 8 bytes, not shown]")},
		"html as image": {toolresult.Content{Kind: toolresult.KindImage, MIMEType: "text/html", Data: b64([]byte("<html><body>"))},
			model.TextPart("[text/html, 12 bytes that are not a PNG, JPEG, GIF or WebP image, not shown]")},
		"svg as png": {toolresult.Content{Kind: toolresult.KindImage, MIMEType: "image/png", Data: b64([]byte("<svg onload=alert(1)>"))},
			model.TextPart("[image/png, 21 bytes that are not a PNG, JPEG, GIF or WebP image, not shown]")},
		"no type":       {toolresult.Content{Data: b64([]byte{1, 2})}, model.TextPart("[application/octet-stream, 2 bytes, not shown]")},
		"text resource": {toolresult.Content{Kind: toolresult.KindResource, MIMEType: "text/markdown", URI: "file:///n.md", Text: "notes"}, model.TextPart("Resource file:///n.md (text/markdown):\nnotes")},
		"resource link": {toolresult.Content{Kind: toolresult.KindResourceLink, MIMEType: "text/csv", URI: "file:///d.csv", Name: "d.csv", Text: "the data"}, model.TextPart("Resource link: d.csv <file:///d.csv> (text/csv): the data")},
		"mcp widget":    {toolresult.Content{Kind: toolresult.KindWidget, MIMEType: toolresult.MIMEWidget, URI: "ui://w", Text: `{"widget_type":"chart"}`}, model.TextPart("Widget ui://w:\n" + `{"widget_type":"chart"}`)},
		"widget value":  {toolresult.Content{MIMEType: toolresult.MIMEWidget, Value: toolresult.Widget{Type: "chart", Title: "Sales"}}, model.TextPart(`{"widget_type":"chart","title":"Sales"}`)},
		"json string":   {toolresult.Content{MIMEType: toolresult.MIMEJSON, Value: "plain"}, model.TextPart("plain")},
	} {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.c.Part()); diff != "" {
				t.Errorf("Part (-want +got):\n%s", diff)
			}
		})
	}
}

func TestModelResult(t *testing.T) {
	t.Run("local result", func(t *testing.T) {
		r := (&toolresult.Result{Tool: "weather", Contents: []toolresult.Content{toolresult.TextContent("rain")},
			Structured: map[string]any{"sky": "rain"}}).ModelResult()
		if r.Name != "weather" || r.IsError || r.Text() != "rain" || string(r.Structured) != `{"sky":"rain"}` || len(r.Content) != 1 {
			t.Errorf("ModelResult = %+v (structured %s)", r, r.Structured)
		}
	})
	t.Run("structured output of a local tool is not repeated as text", func(t *testing.T) {
		r := (&toolresult.Result{Tool: "n", Structured: map[string]any{"n": 1}}).ModelResult()
		if len(r.Content) != 0 || string(r.Structured) != `{"n":1}` {
			t.Errorf("ModelResult = %+v (structured %s)", r, r.Structured)
		}
	})
	t.Run("an MCP server's structured content keeps its JSON and is read as text", func(t *testing.T) {
		raw := `{"z":1,"a":2}` // key order a map would not keep
		r := (&toolresult.Result{Tool: "q", Structured: map[string]any{"z": 1.0, "a": 2.0}, Contents: []toolresult.Content{
			{Kind: toolresult.KindImage, MIMEType: "image/png", Data: b64(pngBytes)},
			{Kind: toolresult.KindStructured, MIMEType: toolresult.MIMEJSON, Text: raw},
		}}).ModelResult()
		want := []model.Part{model.BinaryPart("image/png", pngBytes), model.TextPart(raw)}
		if diff := cmp.Diff(want, r.Content); diff != "" || string(r.Structured) != raw {
			t.Errorf("content (-want +got):\n%s\nstructured %s", diff, r.Structured)
		}
	})
	t.Run("an MCP server's structured content beside text", func(t *testing.T) {
		r := (&toolresult.Result{Contents: []toolresult.Content{
			{Kind: toolresult.KindText, MIMEType: toolresult.MIMEText, Text: "21.5 C"},
			{Kind: toolresult.KindStructured, MIMEType: toolresult.MIMEJSON, Text: `{"t":21.5}`},
		}}).ModelResult()
		if r.Text() != "21.5 C" || len(r.Content) != 1 || string(r.Structured) != `{"t":21.5}` {
			t.Errorf("ModelResult = %+v (structured %s)", r, r.Structured)
		}
	})
	t.Run("failure", func(t *testing.T) {
		r := (&toolresult.Result{IsError: true, Error: "no such city", Contents: []toolresult.Content{{MIMEType: "image/png", Data: b64(pngBytes)}}}).ModelResult()
		want := []model.Part{model.TextPart("no such city"), model.BinaryPart("image/png", pngBytes)}
		if diff := cmp.Diff(want, r.Content); diff != "" || !r.IsError {
			t.Errorf("content (-want +got):\n%s", diff)
		}
		r = (&toolresult.Result{IsError: true, Error: "no such city", Contents: []toolresult.Content{toolresult.TextContent("Paris? Lyon?")}}).ModelResult()
		if r.Text() != "Paris? Lyon?" {
			t.Errorf("a failure the items explain gets the error too: %q", r.Text())
		}
	})
	t.Run("nil", func(t *testing.T) {
		var none *toolresult.Result
		if r := none.ModelResult(); r == nil || r.IsError || len(r.Content) != 0 {
			t.Errorf("nil ModelResult = %+v", r)
		}
	})
}

// A result's JSON uses the field names a user interface reads.
func TestResultJSON(t *testing.T) {
	b, err := json.Marshal(toolresult.Result{Tool: "t", Contents: []toolresult.Content{toolresult.TextContent("hi")}, IsError: true, Error: "e"})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"tool":"t","contents":[{"mime_type":"text/plain","text":"hi"}],"is_error":true,"error":"e"}`; string(b) != want {
		t.Errorf("JSON = %s, want %s", b, want)
	}
}

func ExampleResult_ModelResult() {
	res := &toolresult.Result{
		Tool: "forecast",
		Contents: []toolresult.Content{
			toolresult.TextContent("Rain in Paris tomorrow."),
			{MIMEType: toolresult.MIMEWidget, Value: toolresult.Widget{Type: "chart", Title: "Rain"}},
		},
		Structured: map[string]any{"city": "Paris", "rain": true},
	}
	fmt.Println(res.Text())
	m := res.ModelResult()
	for _, p := range m.Content {
		fmt.Println(p.Text)
	}
	fmt.Println(string(m.Structured))
	// Output:
	// Rain in Paris tomorrow.
	// Rain in Paris tomorrow.
	// {"widget_type":"chart","title":"Rain"}
	// {"city":"Paris","rain":true}
}

// Structured output a model cannot be given is never an empty success: an
// error result names the problem, or, beside text, a note says it is not
// shown.
func TestModelResultUnusableStructured(t *testing.T) {
	deep := strings.Repeat("[", 20000) + strings.Repeat("]", 20000)
	for name, r := range map[string]*toolresult.Result{
		"invalid JSON": {Tool: "t", Contents: []toolresult.Content{{Kind: toolresult.KindStructured, MIMEType: toolresult.MIMEJSON, Text: `{"a":1,`}}},
		"too deep":     {Tool: "t", Contents: []toolresult.Content{{Kind: toolresult.KindStructured, MIMEType: toolresult.MIMEJSON, Text: deep}}},
		"NaN":          {Tool: "t", Structured: map[string]any{"x": math.NaN()}},
	} {
		t.Run(name, func(t *testing.T) {
			m := r.ModelResult()
			if !m.IsError || !strings.Contains(m.Text(), "structured output") || m.Structured != nil {
				t.Errorf("ModelResult = error %v, text %q, structured %d bytes; want an error result naming the structured output", m.IsError, m.Text(), len(m.Structured))
			}
			r.Contents = append([]toolresult.Content{toolresult.TextContent("the answer is 42")}, r.Contents...)
			m = r.ModelResult()
			if m.IsError || !strings.Contains(m.Text(), "the answer is 42") || !strings.Contains(m.Text(), "not shown") {
				t.Errorf("beside text: ModelResult = error %v, text %q; want the text and a note", m.IsError, m.Text())
			}
		})
	}
}
