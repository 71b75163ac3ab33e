package server_test

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/agent/server"
)

// TestDecodeMessagesImageURLs checks the image URLs an SDK sends: a data:
// URL of base64 image bytes becomes a binary part holding the bytes with
// their detected type (a provider is given the image, not a URL it may
// refuse), an https URL stays a URL, and any other URL, or a data: URL
// that holds no image, is refused naming the block.
func TestDecodeMessagesImageURLs(t *testing.T) {
	png := "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00"
	data := "data:image/png;base64," + base64.StdEncoding.EncodeToString([]byte(png))
	in := `[{"role":"user","content":[{"type":"text","text":"what is this?"},` +
		`{"type":"image_url","image_url":{"url":"` + data + `"}},` +
		`{"type":"image_url","image_url":"https://example.com/cat.png"},` +
		`{"type":"image","url":"` + data + `"}]}]`
	msgs, err := server.DecodeMessages(json.RawMessage(in))
	if err != nil {
		t.Fatal(err)
	}
	parts := msgs[0].Parts
	if len(parts) != 4 {
		t.Fatalf("parts: %+v", parts)
	}
	for _, k := range []int{1, 3} {
		if p := parts[k]; p.Kind != model.PartBinary || p.URL != "" || p.MIMEType != "image/png" || string(p.Data) != png {
			t.Errorf("part %d from a data: URL: kind %v, url %q, mime %q, %d bytes; want the PNG's bytes", k, p.Kind, p.URL, p.MIMEType, len(p.Data))
		}
	}
	if p := parts[2]; p.Kind != model.PartBinary || p.URL != "https://example.com/cat.png" {
		t.Errorf("part from an https URL: %+v", p)
	}
	for _, c := range []struct{ block, want string }{
		{`{"type":"image_url","image_url":{"url":"file:///etc/passwd"}}`, "content[0].image_url: give an http or https URL"},
		{`{"type":"image_url","image_url":{"url":"javascript:alert(1)"}}`, "content[0].image_url: give an http or https URL"},
		{`{"type":"image_url","image_url":{"url":"https:///nohost"}}`, "content[0].image_url: give an http or https URL"},
		{`{"type":"image_url","image_url":{"url":"data:image/png,notbase64"}}`, "content[0].image_url: a data: URL must hold base64"},
		{`{"type":"image_url","image_url":{"url":"data:image/png;base64,aGVsbG8="}}`, "content[0].image_url: the data: URL's data is not a PNG"},
		{`{"type":"image","url":"ftp://example.com/x.png"}`, "content[0]: url: give an http or https URL"},
	} {
		_, err := server.DecodeMessages(json.RawMessage(`[{"role":"user","content":[` + c.block + `]}]`))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("DecodeMessages with %s: %v; want an error containing %q", c.block, err, c.want)
		}
	}
}
