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
	"strconv"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/examples/cortexr"
	"github.com/agentgraph/agentgraph/mcp"
)

// mathSession is a session over the math server reading images from
// imageDir.
func mathSession(t *testing.T, imageDir string) *mcp.Session {
	t.Helper()
	mgr, err := mcp.NewManager(mcp.ManagerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mgr.Shutdown(context.Background()) })
	if err := mgr.Add(mcp.Server{Name: "math", InProcess: cortexr.NewMathServer(imageDir)}); err != nil {
		t.Fatal(err)
	}
	reg, err := mcp.NewRegistry(mcp.RegistryConfig{Manager: mgr})
	if err != nil {
		t.Fatal(err)
	}
	sess := reg.NewSession(mcp.Callbacks{})
	t.Cleanup(func() { sess.Close() })
	return sess
}

// writePNG writes a w×h PNG image at path.
func writePNG(t *testing.T, path string, w, h int) {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.RGBA{uint8(x), uint8(y), 0, 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestMathServerNewTools(t *testing.T) {
	ctx := context.Background()
	images := t.TempDir()
	sess := mathSession(t, images)
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
	writePNG(t, filepath.Join(images, "big.png"), 300, 150)
	res, err := sess.CallTool(ctx, mcp.ToolCall{Name: "create_thumbnail", Arguments: map[string]any{"image_path": "big.png"}})
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
	res, _ = sess.CallTool(ctx, mcp.ToolCall{Name: "create_thumbnail", Arguments: map[string]any{"image_path": "none.png"}})
	if !res.IsError || !strings.Contains(res.Error, "image_path") {
		t.Errorf("missing image = %+v", res)
	}
}

// create_thumbnail reads only regular files in its image directory, and
// its errors do not tell whether a file outside exists.
func TestThumbnailStaysInImageDir(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	images, outside := t.TempDir(), t.TempDir()
	writePNG(t, filepath.Join(images, "in.png"), 10, 10)
	writePNG(t, filepath.Join(outside, "secret.png"), 10, 10)
	if err := os.Mkdir(filepath.Join(images, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	linked := true
	if err := os.Symlink(filepath.Join(outside, "secret.png"), filepath.Join(images, "link.png")); err != nil {
		linked = false // Windows without the privilege
	}
	thumb := func(sess *mcp.Session, path string) (ok bool, msg string) {
		t.Helper()
		res, err := sess.CallTool(ctx, mcp.ToolCall{Name: "create_thumbnail", Arguments: map[string]any{"image_path": path}})
		if err != nil {
			t.Fatalf("create_thumbnail(%q): %v", path, err)
		}
		return !res.IsError, strings.ReplaceAll(res.Error, strconv.Quote(path), "PATH")
	}
	sess := mathSession(t, images)
	for _, p := range []string{"in.png", filepath.Join(images, "in.png"), "sub/../in.png"} {
		if ok, msg := thumb(sess, p); !ok {
			t.Errorf("create_thumbnail(%q) inside the image directory: %s", p, msg)
		}
	}
	refused := []string{
		filepath.Join(outside, "secret.png"), filepath.Join(outside, "none.png"),
		"../" + filepath.Base(outside) + "/secret.png", "../" + filepath.Base(outside) + "/none.png",
		"none.png", "sub",
	}
	if linked {
		refused = append(refused, "link.png")
	}
	var first string
	for _, p := range refused {
		ok, msg := thumb(sess, p)
		if ok {
			t.Errorf("create_thumbnail(%q) read a file it must not", p)
			continue
		}
		if first == "" {
			first = msg
		}
		if msg != first {
			t.Errorf("create_thumbnail(%q) = %q; want the same error for every path it refuses, %q", p, msg, first)
		}
	}

	// No image directory: no file at all.
	if ok, msg := thumb(mathSession(t, ""), filepath.Join(images, "in.png")); ok || !strings.Contains(msg, "Config.ImageDir") {
		t.Errorf("create_thumbnail without an image directory = %v, %q", ok, msg)
	}
}
