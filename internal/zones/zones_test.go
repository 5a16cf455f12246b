package zones

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stratafs/strata/conf"
)

func TestAlpha(t *testing.T) {
	for _, tt := range []struct{ theta, dec, want float64 }{
		{1, 30, 1.154720}, {1, 45, 1.414285}, {1, 60, 2.000305}, {1, -60, 2.000305},
		{1, 88.95, 180}, {1.0 / 60, 0, 1.0 / 60},
	} {
		if got := Alpha(tt.theta, tt.dec); math.Abs(got-tt.want) > 5e-7 {
			t.Errorf("Alpha(%g, %g) = %.7f, want %.6f", tt.theta, tt.dec, got, tt.want)
		}
	}
}

func TestRecords(t *testing.T) {
	o := Object{ID: 1<<63 + 5, RA: 359.99999999999994, Dec: -90}
	rec := AppendRecord(nil, o)
	if len(rec) != RecordSize {
		t.Fatalf("record of %d bytes", len(rec))
	}
	if got, err := DecodeRecord(rec); err != nil || got != o {
		t.Fatalf("DecodeRecord = %+v, %v; want %+v", got, err, o)
	}
	if got, err := ParseText(AppendText(nil, o)); err != nil || got != o {
		t.Fatalf("ParseText(%q) = %+v, %v; want %+v", AppendText(nil, o), got, err, o)
	}
	for _, bad := range []Object{{RA: 360}, {RA: -1e-9}, {Dec: 90.0000001}, {RA: math.NaN()}, {Dec: math.Inf(-1)}} {
		if _, err := DecodeRecord(AppendRecord(nil, bad)); !errors.Is(err, ErrBadRecord) {
			t.Errorf("DecodeRecord(%+v) = %v, want ErrBadRecord", bad, err)
		}
	}
	if _, err := DecodeRecord(rec[:23]); !errors.Is(err, ErrBadRecord) {
		t.Errorf("short record: %v", err)
	}
	for _, line := range []string{"", "1 2", "1 2 3 4", "x 1 2", "1 1e999 0", "-1 0 0", "1 10 95"} {
		if _, err := ParseText([]byte(line)); !errors.Is(err, ErrBadRecord) {
			t.Errorf("ParseText(%q) = %v, want ErrBadRecord", line, err)
		}
	}
}

func TestGeometryErrors(t *testing.T) {
	for _, p := range [][4]float64{
		{0, 1, 1, 1}, {2, 1, 1, 1}, {math.NaN(), 1, 1, 1}, // θ
		{0.01, 0.001, 1, 0.01}, {0.01, 181, 1, 0.01}, // height
		{0.01, 1, 0.001, 0.01}, {0.01, 1, 1, 0.01 / 2000}, // width, zone
		{1.0 / 3600, 1.0 / 3600, 1.0 / 3600, 1.0 / 3600}, // too many blocks
	} {
		if _, err := NewGeometry(p[0], p[1], p[2], p[3]); !errors.Is(err, ErrGeometry) {
			t.Errorf("NewGeometry%v = %v, want ErrGeometry", p, err)
		}
	}
}

// greatCircle returns the point at distance d (degrees) from (ra, dec)
// towards position angle pa (degrees east of north).
func greatCircle(ra, dec, d, pa float64) (float64, float64) {
	sr, cr := math.Sincos(ra * deg)
	sd, cd := math.Sincos(dec * deg)
	east := Vector{-sr, cr, 0}
	north := Vector{-sd * cr, -sd * sr, cd}
	sp, cp := math.Sincos(pa * deg)
	sdd, cdd := math.Sincos(d * deg)
	c := UnitVector(ra, dec)
	t := Vector{sp*east.X + cp*north.X, sp*east.Y + cp*north.Y, sp*east.Z + cp*north.Z}
	return RADec(Vector{c.X*cdd + t.X*sdd, c.Y*cdd + t.Y*sdd, c.Z*cdd + t.Z*sdd})
}

// fixture is a catalogue of n background objects (uniform or clustered)
// plus the edge cases for radius theta (degrees): pairs across the ra =
// 0/360 seam, around both poles and on them, duplicates, and pairs just
// inside and just outside θ, in every direction.
func fixture(n int, clustered bool, theta float64, seed uint64) []Object {
	gen := SkyGen{Seed: seed, Clusters: uint64(max(1, n/20)), Fraction: 0.6, Sigma: theta * 3600 / 2}
	if clustered {
		gen.Distribution = Clustered
	}
	objs := catalogue(gen, n)
	add := func(ra, dec float64) {
		objs = append(objs, Object{ID: uint64(len(objs)), RA: ra, Dec: dec})
	}
	r := rand.New(rand.NewPCG(seed, 99))
	centres := [][2]float64{
		{0, 0}, {359.9999999, 10}, {1e-9, -45}, {0, 89.99}, {180, -89.99}, {10, 90}, {300, -90},
		{r.Float64() * 360, 60}, {r.Float64() * 360, -75}, {90, 89.9 - theta/2}, {270, -89.9 + theta/3},
	}
	for _, c := range centres {
		add(c[0], c[1])
		add(c[0], c[1]) // a duplicate: distance 0
		for _, pa := range []float64{0, 45, 90, 135, 180, 225, 270, 315} {
			for _, d := range []float64{theta * (1 - 1e-9), theta * (1 + 1e-9), theta / 3, theta * 1.5} {
				ra, dec := greatCircle(c[0], c[1], d, pa+r.Float64())
				add(ra, dec)
			}
		}
	}
	// Objects on both sides of the seam at many declinations.
	for dec := -89.0; dec <= 89; dec += 7 {
		add(359.99999, dec)
		ra, d := greatCircle(359.99999, dec, theta*0.9, 90)
		add(ra, d)
	}
	return objs
}

// catalogue returns objects 0 to n-1 of gen.
func catalogue(gen SkyGen, n int) []Object {
	objs := make([]Object, n)
	src := &rand.PCG{}
	rng := rand.New(src)
	for i := range objs {
		objs[i] = gen.Object(uint64(i), src, rng)
	}
	return objs
}

type pairKey struct{ a, b uint64 }

func key(a, b uint64) pairKey {
	if b < a {
		a, b = b, a
	}
	return pairKey{a, b}
}

func bruteSet(objs []Object, theta float64) map[pairKey]float64 {
	want := map[pairKey]float64{}
	BruteForce(objs, theta, func(a, b Object, d float64) { want[key(a.ID, b.ID)] = d })
	return want
}

func comparePairs(t *testing.T, got, want map[pairKey]float64) {
	t.Helper()
	n := 0
	for k := range want {
		if _, ok := got[k]; !ok && n < 5 {
			t.Errorf("pair %v missing", k)
			n++
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok && n < 10 {
			t.Errorf("pair %v found but not within θ", k)
			n++
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d pairs, want %d", len(got), len(want))
	}
}

// geometries are (θ, block height, block width, zone height) in degrees
// to check: blocks from the smallest allowed to the whole sky, zones
// narrower and wider than θ.
func geometries() [][4]float64 {
	var out [][4]float64
	for _, theta := range []float64{1.0 / 3600, 10.0 / 3600, 60.0 / 3600, 0.5} {
		// The smallest blocks: θ (but not so small that blocks exceed
		// 2^31), then a few times θ.
		small := max(theta, 0.03)
		for _, b := range [][2]float64{{small, small}, {3 * small, 7 * small}, {2, 1}, {30, 45}, {180, 360}} {
			for _, z := range []float64{theta, theta / 3, 4 * theta} {
				out = append(out, [4]float64{theta, b[0], b[1], z})
			}
		}
	}
	return out
}

// TestSearchMatchesBruteForce holds the in-memory Zones search (the jobs'
// code without the shuffle) to the brute-force pair set, for several θ,
// block and zone sizes.
func TestSearchMatchesBruteForce(t *testing.T) {
	for _, clustered := range []bool{false, true} {
		cache := map[float64][]Object{}
		wants := map[float64]map[pairKey]float64{}
		for _, p := range geometries() {
			theta := p[0]
			if _, ok := cache[theta]; !ok {
				cache[theta] = fixture(1500, clustered, theta, 3)
				wants[theta] = bruteSet(cache[theta], theta)
				if len(wants[theta]) < 200 {
					t.Fatalf("fixture for θ=%g″ has only %d pairs", theta*3600, len(wants[theta]))
				}
			}
			g, err := NewGeometry(p[0], p[1], p[2], p[3])
			if err != nil {
				t.Fatal(err)
			}
			got := map[pairKey]float64{}
			err = g.Search(cache[theta], func(a, b Object, d float64) error {
				k := key(a.ID, b.ID)
				if _, dup := got[k]; dup {
					return fmt.Errorf("pair %v found twice", k)
				}
				got[k] = d
				return nil
			})
			if err != nil {
				t.Fatalf("clustered=%v geometry %v: %v", clustered, p, err)
			}
			t.Run(fmt.Sprintf("clustered=%v/θ=%g″/block=%gx%g/zone=%g″", clustered, theta*3600, p[1], p[2], p[3]*3600), func(t *testing.T) {
				comparePairs(t, got, wants[theta])
			})
		}
	}
}

// TestUniformPairCount checks the pair count of a uniform catalogue of a
// million objects within 60″ against N(N−1)/2·(1−cos θ)/2, and that the
// cumulative histogram grows as 1 − cos θ.
func TestUniformPairCount(t *testing.T) {
	if testing.Short() {
		t.Skip("a million objects")
	}
	const n = 1_000_000
	objs := catalogue(SkyGen{Seed: 42}, n)
	theta := 60.0 / 3600
	g, err := NewGeometry(theta, BlockSide(n, 100000, 1, theta), BlockSide(n, 100000, 1, theta), theta)
	if err != nil {
		t.Fatal(err)
	}
	h := NewHistogram(60)
	if err := g.Search(objs, func(a, b Object, d float64) error { h.Add(d); return nil }); err != nil {
		t.Fatal(err)
	}
	expect := func(th float64) float64 { return n * (n - 1) / 2 * (1 - math.Cos(th*arcsec*deg)) / 2 }
	var cum uint64
	for i, c := range h {
		cum += c
		th := float64(i + 1)
		want := expect(th)
		// Pair counts of a Poisson catalogue: variance about the mean.
		if math.Abs(float64(cum)-want) > 5*math.Sqrt(want)+1 {
			t.Errorf("pairs within %g″: %d, expected %.1f ± %.1f", th, cum, want, math.Sqrt(want))
		}
	}
	t.Logf("%d pairs within 60″, expected %.1f", cum, expect(60))
}

func TestHistogramBins(t *testing.T) {
	h := NewHistogram(2.5)
	if len(h) != 3 {
		t.Fatalf("%d bins for 2.5″", len(h))
	}
	for _, d := range []float64{0, 0.999, 1, 2.4, 2.5, 3} {
		h.Add(ChordLimit(d * arcsec))
	}
	if fmt.Sprint(h) != "[2 1 3]" {
		t.Fatalf("histogram %v, want [2 1 3]", h)
	}
}

func TestReport(t *testing.T) {
	c := conf.New()
	var b bytes.Buffer
	Report(&b, c, 100, "pairs found", 2e9)
	if !strings.Contains(b.String(), "Work: 100 pairs found in 2.0 s (50 per second)") || !strings.Contains(b.String(), "Energy: not estimated") {
		t.Errorf("report without power:\n%s", b.String())
	}
	c.Set(KeyPowerWatts, "200")
	b.Reset()
	Report(&b, c, 100000, "pairs found", 2e9)
	if !strings.Contains(b.String(), "Energy: 0.4 kJ at 200 W (250 pairs found per joule)") {
		t.Errorf("report at 200 W:\n%s", b.String())
	}
	c.Set(KeyPowerWatts, "-3")
	b.Reset()
	Report(&b, c, 1, "pairs found", 2e9)
	if !strings.Contains(b.String(), "is not a positive number") {
		t.Errorf("report with bad power:\n%s", b.String())
	}
}

// BenchmarkSearch is the in-memory neighbour search (the jobs' routing
// and per-block code, no shuffle) on a uniform catalogue of a million
// objects at θ = 60″.
func BenchmarkSearch(b *testing.B) {
	const n = 1_000_000
	objs := catalogue(SkyGen{Seed: 1}, n)
	theta := 60.0 / 3600
	side := BlockSide(n, 100000, 2, theta)
	g, err := NewGeometry(theta, side, side, theta)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	pairs := 0
	for range b.N {
		g.Search(objs, func(a, b Object, d float64) error { pairs++; return nil })
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "objects/s")
	b.ReportMetric(float64(pairs)/b.Elapsed().Seconds(), "pairs/s")
}
