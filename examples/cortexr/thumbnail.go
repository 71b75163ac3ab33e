package cortexr

import (
	"bytes"
	"fmt"
	"image"
	_ "image/gif" // decoders for thumbnail
	_ "image/jpeg"
	"image/png"
	"io"
	"os"
)

// maxImageBytes and maxImagePixels bound the images thumbnail decodes.
const (
	maxImageBytes  = 20 << 20
	maxImagePixels = 50_000_000
)

// thumbnail returns a PNG of the image at path scaled down (nearest
// neighbour) to fit size×size pixels.
func thumbnail(path string, size int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("image_path: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxImageBytes+1))
	if err != nil {
		return nil, fmt.Errorf("image_path: %w", err)
	}
	if len(data) > maxImageBytes {
		return nil, fmt.Errorf("image_path: %s is larger than %d bytes", path, maxImageBytes)
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("image_path: %s is not a PNG, JPEG or GIF image: %v", path, err)
	}
	if cfg.Width*cfg.Height > maxImagePixels {
		return nil, fmt.Errorf("image_path: %s is %dx%d pixels, more than %d", path, cfg.Width, cfg.Height, maxImagePixels)
	}
	src, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("image_path: decoding %s: %v", path, err)
	}
	b := src.Bounds()
	w, h := b.Dx(), b.Dy()
	if w > size || h > size {
		if w >= h {
			w, h = size, max(1, h*size/b.Dx())
		} else {
			w, h = max(1, w*size/b.Dy()), size
		}
	}
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			dst.Set(x, y, src.At(b.Min.X+x*b.Dx()/w, b.Min.Y+y*b.Dy()/h))
		}
	}
	var out bytes.Buffer
	if err := png.Encode(&out, dst); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}
