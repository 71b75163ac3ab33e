package cortexr_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/examples/cortexr"
	"github.com/agentgraph/agentgraph/mcp"
)

func TestMathServerNewTools(t *testing.T) {
	ctx := context.Background()
	mgr, err := mcp.NewManager(mcp.ManagerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer mgr.Shutdown(ctx)
	if err := mgr.Add(mcp.Server{Name: "math", InProcess: cortexr.NewMathServer()}); err != nil {
		t.Fatal(err)
	}
	reg, err := mcp.NewRegistry(mcp.RegistryConfig{Manager: mgr})
	if err != nil {
		t.Fatal(err)
	}
	sess := reg.NewSession(mcp.Callbacks{})
	defer sess.Close()
	num := func(name string, args map[string]any) float64 {
		t.Helper()
		res, err := sess.CallTool(ctx, mcp.ToolCall{Name: name, Arguments: args})
		if err != nil || res.IsError {
			t.Fatalf("%s(%v): %v %+v", name, args, err, res)
		}
		return res.Structured.(map[string]any)["result"].(float64)
	}
	for _, c := range []struct {
		name string
		args map[string]any
		want float64
	}{
		{"cbrt", map[string]any{"a": 27.0}, 3},
		{"remainder", map[string]any{"a": 17.0, "b": 5.0}, 2},
		{"remainder", map[string]any{"a": -7.0, "b": 3.0}, -1},
		{"sin", map[string]any{"a": math.Pi / 2}, 1},
		{"cos", map[string]any{"a": 0.0}, 1},
		{"tan", map[string]any{"a": math.Pi / 4}, 1},
	} {
		if got := num(c.name, c.args); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s(%v) = %v, want %v", c.name, c.args, got, c.want)
		}
	}
	res, _ := sess.CallTool(ctx, mcp.ToolCall{Name: "remainder", Arguments: map[string]any{"a": 1.0, "b": 0.0}})
	if !res.IsError || !strings.Contains(res.Error, "argument b is 0") {
		t.Errorf("remainder by 0 = %+v", res)
	}

	// A 300x150 image becomes a 100x50 PNG thumbnail.
	img := image.NewRGBA(image.Rect(0, 0, 300, 150))
	for y := range 150 {
		for x := range 300 {
			img.Set(x, y, color.RGBA{uint8(x), uint8(y), 0, 255})
		}
	}
	path := filepath.Join(t.TempDir(), "big.png")
	var buf bytes.Buffer
	png.Encode(&buf, img)
	os.WriteFile(path, buf.Bytes(), 0o644)
	res, err = sess.CallTool(ctx, mcp.ToolCall{Name: "create_thumbnail", Arguments: map[string]any{"image_path": path}})
	if err != nil || res.IsError {
		t.Fatalf("create_thumbnail: %v %+v", err, res)
	}
	var data string
	for _, c := range res.Contents {
		if c.IsImage() {
			data = c.Data
		}
	}
	raw, _ := base64.StdEncoding.DecodeString(data)
	cfg, err := png.DecodeConfig(bytes.NewReader(raw))
	if err != nil || cfg.Width != 100 || cfg.Height != 50 {
		t.Fatalf("thumbnail %dx%d, %v; want 100x50", cfg.Width, cfg.Height, err)
	}
	res, _ = sess.CallTool(ctx, mcp.ToolCall{Name: "create_thumbnail", Arguments: map[string]any{"image_path": filepath.Join(t.TempDir(), "none.png")}})
	if !res.IsError || !strings.Contains(res.Error, "image_path") {
		t.Errorf("missing image = %+v", res)
	}
}
