package cortexr

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	_ "image/gif" // decoders for thumbnail
	_ "image/jpeg"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"syscall"
)

// maxImageBytes and maxImagePixels bound the images thumbnail decodes.
const (
	maxImageBytes  = 20 << 20
	maxImagePixels = 50_000_000
)

// openImage opens the regular file at path inside dir. path is relative
// to dir, or absolute and under it; ".." and symbolic links cannot leave
// dir (os.Root). Every failure reads the same, so that the error does not
// tell whether a file exists outside dir, or inside it but unreadable.
func openImage(dir, path string) (*os.File, error) {
	notFound := fmt.Errorf("image_path: %q is not a readable image file in the image directory", path)
	if dir == "" {
		return nil, errors.New("image_path: no image directory is configured (cortexr Config.ImageDir), so no image can be read")
	}
	if filepath.IsAbs(path) {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return nil, notFound
		}
		if path, err = filepath.Rel(abs, path); err != nil {
			return nil, notFound
		}
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, errors.New("image_path: the image directory cannot be opened")
	}
	defer root.Close()
	// Opening is itself an effect on anything but a regular file (a
	// terminal may become the controlling one, a watchdog device arms, a
	// FIFO releases its waiting writer): look before opening. Stat
	// follows symbolic links only within the root.
	if st, err := root.Stat(path); err != nil || !st.Mode().IsRegular() {
		return nil, notFound
	}
	// The file may be swapped between Stat and OpenFile: O_NONBLOCK keeps
	// a FIFO from waiting for a writer, O_NOCTTY keeps a terminal from
	// becoming the process's, and the check after opening refuses the
	// rest.
	f, err := root.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, notFound
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, notFound
	}
	return f, nil
}

// thumbnail returns a PNG of the image at path in dir scaled down
// (nearest neighbour) to fit size×size pixels.
func thumbnail(dir, path string, size int) ([]byte, error) {
	f, err := openImage(dir, path)
	if err != nil {
		return nil, err
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
