package provider

import (
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
		b, err := blockOf(tc.p)
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
