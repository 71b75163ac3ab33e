package calculator

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"math"
)

// WidgetMIMEType is the MIME type of interactive widget specifications
// embedded in tool results as text resources.
const WidgetMIMEType = "application/vnd.mcp.widget+json"

// DataTable is a data_table widget specification: a table the chat page
// renders, sortable by column.
type DataTable struct {
	// WidgetType is always "data_table".
	WidgetType string `json:"widget_type"`
	// Title is shown above the table.
	Title string `json:"title,omitempty"`
	// Columns are the column headings.
	Columns []string `json:"columns"`
	// Rows are the cells, one slice per row, in column order.
	Rows [][]any `json:"rows"`
	// Sortable lets the reader sort by a column.
	Sortable bool `json:"sortable"`
}

// Chart image geometry.
const (
	chartWidth  = 640
	chartHeight = 360
	chartMargin = 24
)

var palette = []color.RGBA{
	{0x2f, 0x6f, 0xeb, 0xff}, {0xf5, 0x9e, 0x0b, 0xff}, {0x10, 0xb9, 0x81, 0xff},
	{0xef, 0x44, 0x44, 0xff}, {0x8b, 0x5c, 0xf6, 0xff}, {0x06, 0xb6, 0xd4, 0xff},
}

// BarChart draws values as a bar chart PNG, one colour per bar, with a zero
// baseline so negative values hang below it. It has no text: labels travel
// in the accompanying table and alt text.
func BarChart(values []float64) ([]byte, error) {
	img := image.NewRGBA(image.Rect(0, 0, chartWidth, chartHeight))
	fill(img, img.Bounds(), color.RGBA{0xff, 0xff, 0xff, 0xff})

	lo, hi := 0.0, 0.0
	for _, v := range values {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	if hi == lo {
		hi = lo + 1
	}
	plot := image.Rect(chartMargin, chartMargin, chartWidth-chartMargin, chartHeight-chartMargin)
	y := func(v float64) int {
		return plot.Max.Y - int(math.Round((v-lo)/(hi-lo)*float64(plot.Dy())))
	}
	grid := color.RGBA{0xe5, 0xe7, 0xeb, 0xff}
	for i := 1; i <= 4; i++ {
		gy := plot.Max.Y - plot.Dy()*i/4
		fill(img, image.Rect(plot.Min.X, gy, plot.Max.X, gy+1), grid)
	}
	if n := len(values); n > 0 {
		slot := float64(plot.Dx()) / float64(n)
		gap := int(slot * 0.2)
		for i, v := range values {
			x0 := plot.Min.X + int(float64(i)*slot) + gap/2
			x1 := plot.Min.X + int(float64(i+1)*slot) - gap/2
			top, bottom := y(math.Max(v, 0)), y(math.Min(v, 0))
			if top == bottom {
				bottom++ // a zero value still shows as a hairline
			}
			fill(img, image.Rect(x0, top, max(x1, x0+1), bottom), palette[i%len(palette)])
		}
	}
	axis := color.RGBA{0x37, 0x41, 0x51, 0xff}
	zero := y(0)
	fill(img, image.Rect(plot.Min.X, zero, plot.Max.X, zero+2), axis)
	fill(img, image.Rect(plot.Min.X-2, plot.Min.Y, plot.Min.X, plot.Max.Y), axis)

	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func fill(img *image.RGBA, r image.Rectangle, c color.RGBA) {
	r = r.Intersect(img.Bounds())
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			img.SetRGBA(x, y, c)
		}
	}
}
