package experiment

import (
	"bytes"
	"encoding/xml"
	"io"
	"math"
	"strings"
	"testing"
)

type svgRect struct {
	Class  string  `xml:"class,attr"`
	Series string  `xml:"data-series,attr"`
	Group  string  `xml:"data-group,attr"`
	Value  float64 `xml:"data-value,attr"`
	Y      float64 `xml:"y,attr"`
	Height float64 `xml:"height,attr"`
}

// bars parses an SVG document and returns its bars.
func bars(t *testing.T, doc []byte) []svgRect {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(doc))
	var out []svgRect
	root := false
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v\n%s", err, doc)
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		if !root {
			if se.Name.Local != "svg" || se.Name.Space != "http://www.w3.org/2000/svg" {
				t.Fatalf("root element %v, want svg in the SVG namespace", se.Name)
			}
			root = true
		}
		if se.Name.Local == "rect" {
			var r svgRect
			if err := dec.DecodeElement(&r, &se); err != nil {
				t.Fatal(err)
			}
			if r.Class == "bar" {
				out = append(out, r)
			}
		}
	}
	return out
}

func TestChartBarsProportional(t *testing.T) {
	c := &Chart{Title: "Runtime <comparison> & more", YLabel: "runtime (s)",
		Groups: []string{"all-hdd", "ssd-intermediate", "all-ssd"}, Series: []string{"TeraGen", "TeraSort", "Total"},
		Values: [][]float64{{4202.5, 4014, 1148}, {7386.5, 3836, 3262.5}, {11589, 7850, 4410.5}}}
	var b bytes.Buffer
	if err := c.WriteSVG(&b); err != nil {
		t.Fatal(err)
	}
	got := bars(t, b.Bytes())
	if len(got) != 9 {
		t.Fatalf("%d bars, want 9", len(got))
	}
	// Heights are proportional to values, on a shared baseline.
	k := got[0].Height / got[0].Value
	base := got[0].Y + got[0].Height
	for _, r := range got {
		if math.Abs(r.Height-k*r.Value) > 0.02 || math.Abs(r.Y+r.Height-base) > 0.02 {
			t.Errorf("bar %s/%s value %v: height %v at y %v (want %v on baseline %v)", r.Group, r.Series, r.Value, r.Height, r.Y, k*r.Value, base)
		}
	}
	// The tallest bar is the largest value and fits the plot.
	if top := k * 11589; top > plotH || top < plotH/2 {
		t.Errorf("largest bar %v tall in a %d plot", top, plotH)
	}
	if !strings.Contains(b.String(), "Runtime &lt;comparison&gt; &amp; more") {
		t.Error("title not escaped")
	}
}

func TestChartMissingAndZero(t *testing.T) {
	c := &Chart{Title: "t", Groups: []string{"1 files", "3 files"}, Series: []string{"a", "b"},
		Values: [][]float64{{0, 5}, {math.NaN(), 2.5}}}
	var b bytes.Buffer
	if err := c.WriteSVG(&b); err != nil {
		t.Fatal(err)
	}
	got := bars(t, b.Bytes())
	if len(got) != 3 {
		t.Fatalf("%d bars, want 3 (NaN left out)", len(got))
	}
	h := map[string]float64{}
	for _, r := range got {
		h[r.Series+"/"+r.Group] = r.Height
	}
	if h["a/1 files"] != 0 || math.Abs(h["a/3 files"]-2*h["b/3 files"]) > 0.02 {
		t.Errorf("heights %v", h)
	}
}

func TestNiceCeil(t *testing.T) {
	for _, tc := range []struct{ in, want float64 }{{11589, 20000}, {4.6, 5}, {2.17, 2.5}, {100, 100}, {0, 1}, {0.013, 0.02}} {
		if got := niceCeil(tc.in); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("niceCeil(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestFormatTick(t *testing.T) {
	for _, tc := range []struct {
		in   float64
		want string
	}{{0, "0"}, {0.002, "0.002"}, {0.00456, "0.00456"}, {4.6, "4.6"}, {2.1709, "2.17"}, {11589, "11589"}, {12.34, "12.3"}} {
		if got := formatTick(tc.in); got != tc.want {
			t.Errorf("formatTick(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
