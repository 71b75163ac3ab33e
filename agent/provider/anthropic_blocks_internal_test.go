package provider

import (
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/agent/model"
)

// Only images go in image blocks, typed by their bytes; other binary data
// (audio, HTML a server called an image) is named in a text block.
func TestBlockOfBinary(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00")
	for _, tc := range []struct {
		p         model.Part
		typ, want string
	}{
		{model.BinaryPart("image/jpg", png), "image", "image/png"},
		{model.BinaryPart("audio/wav", []byte("RIFF\x00\x00\x00\x00WAVE")), "text", "[audio/wav, 12 bytes, not shown]"},
		{model.BinaryPart("image/png", []byte("<html>")), "text", "[image/png, 6 bytes, not shown]"},
	} {
		b, err := blockOf(tc.p, true)
		if err != nil {
			t.Fatal(err)
		}
		got := b.Text
		if b.Source != nil {
			got = b.Source.MediaType
		}
		if b.Type != tc.typ || got != tc.want {
			t.Errorf("blockOf(%s part) = %s block %q, want %s block %q", tc.p.MIMEType, b.Type, got, tc.typ, tc.want)
		}
	}
}

// TestBlockOfUserAttachment: in a user's message, a PDF goes as a
// document block, and data the API cannot read is an error rather than a
// note the user never sees.
func TestBlockOfUserAttachment(t *testing.T) {
	pdf := []byte("%PDF-1.7\n%\xe2\xe3\n1 0 obj")
	for _, toolResult := range []bool{false, true} {
		b, err := blockOf(model.BinaryPart("application/pdf", pdf), toolResult)
		if err != nil || b.Type != "document" || b.Source == nil || b.Source.MediaType != "application/pdf" {
			t.Errorf("PDF (tool result %v): %+v, %v; want a document block", toolResult, b, err)
		}
	}
	_, err := blockOf(model.BinaryPart("audio/wav", []byte("RIFF\x00\x00\x00\x00WAVE")), false)
	if err == nil || !strings.Contains(err.Error(), "audio/wav") || !strings.Contains(err.Error(), "convert") {
		t.Errorf("a user's audio attachment: %v; want an error naming the type and the fix", err)
	}
}
