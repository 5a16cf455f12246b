package zones

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
)

const (
	deg = math.Pi / 180
	// arcsec is one arcsecond in degrees.
	arcsec = 1.0 / 3600
	// MaxTheta is the largest search radius, in arcseconds (one degree).
	MaxTheta = 3600.0
	// polarLimit is where the ra window becomes the whole ring: when
	// |dec| + θ exceeds it (degrees).
	polarLimit = 89.9
	// maxBlocks bounds the number of blocks of a Geometry (block ids are
	// 32 bits in the map output).
	maxBlocks = 1 << 31
	// maxZonesPerTheta bounds θ / zone height: the reducers' sweep visits
	// 2·ceil(θ/h)+1 zones per object.
	maxZonesPerTheta = 1000
)

// widen turns a search radius into the one used to choose blocks, zones
// and ra windows: a hair larger, so that floating-point rounding can only
// add candidates (the chord test decides), never lose a pair.
func widen(theta float64) float64 { return theta*(1+1e-9) + 1e-12 }

// Vector is a unit vector on the sphere.
type Vector struct{ X, Y, Z float64 }

// UnitVector returns the unit vector of (ra, dec), in degrees.
func UnitVector(ra, dec float64) Vector {
	sr, cr := math.Sincos(ra * deg)
	sd, cd := math.Sincos(dec * deg)
	return Vector{cd * cr, cd * sr, sd}
}

// Chord2 is the squared chord length |a − b|².
func Chord2(a, b Vector) float64 {
	dx, dy, dz := a.X-b.X, a.Y-b.Y, a.Z-b.Z
	return dx*dx + dy*dy + dz*dz
}

// ChordLimit is 4·sin²(θ/2) for θ in degrees: two objects are neighbours
// within θ when their Chord2 is below it.
func ChordLimit(theta float64) float64 {
	s := math.Sin(theta * deg / 2)
	return 4 * s * s
}

// Distance is the angle in arcseconds whose squared chord is chord2:
// 2·asin(|a − b| / 2).
func Distance(chord2 float64) float64 {
	return 2 * math.Asin(min(1, math.Sqrt(chord2)/2)) / deg * 3600
}

// Alpha is the half-width in right ascension (degrees) of the window that
// holds every object within theta of an object at declination dec (both
// in degrees): atan(sin θ / sqrt(|cos(dec − θ)·cos(dec + θ)|)), or 180 (the
// whole ring) when |dec| + θ > 89.9°.
func Alpha(theta, dec float64) float64 {
	dec = math.Abs(dec)
	if dec+theta > polarLimit {
		return 180
	}
	a := math.Atan(math.Sin(theta*deg)/math.Sqrt(math.Abs(math.Cos((dec-theta)*deg)*math.Cos((dec+theta)*deg)))) / deg
	return math.Abs(a)
}

// Geometry divides the sphere into blocks for a search radius θ: stripes
// of declination of equal height, each cut into equal ranges of right
// ascension, as many as fit at the stripe's widest (equatorward) edge for
// the block width. Blocks are numbered stripe by stripe from the south
// pole, and by ra from 0° within a stripe. Inside a block the reducers
// use zones (sub-blocks) of height ZoneHeight.
type Geometry struct {
	// Theta is the search radius in degrees.
	Theta float64
	// BlockHeight is the stripe height and BlockWidth the ra width at the
	// equator asked for, in degrees; StripeHeight is the height in use
	// (180° divided into a whole number of stripes).
	BlockHeight, BlockWidth, StripeHeight float64
	// ZoneHeight is the height of the reducers' zones, in degrees.
	ZoneHeight float64

	chord2   float64 // ChordLimit(Theta)
	wide     float64 // widen(Theta)
	zoneK    int     // zones each side an object's neighbours may lie in
	zones    int64   // zones on the sphere
	raBlocks []int   // blocks per stripe
	first    []int64 // id of each stripe's first block
	blocks   int64
}

// ErrGeometry is wrapped by NewGeometry's errors.
var ErrGeometry = errors.New("zones: bad geometry")

// NewGeometry checks the parameters (θ, block height and width, zone
// height, all in degrees) and lays out the blocks.
func NewGeometry(theta, blockHeight, blockWidth, zoneHeight float64) (*Geometry, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrGeometry, fmt.Sprintf(format, a...))
	}
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	switch {
	case !finite(theta) || theta <= 0 || theta > MaxTheta*arcsec:
		return nil, bad("θ = %g″ is out of range (0, %g″]", theta*3600, MaxTheta)
	case !finite(blockHeight) || blockHeight < theta || blockHeight > 180:
		return nil, bad("block height %g° must be at least θ (%g″) and at most 180°", blockHeight, theta*3600)
	case !finite(blockWidth) || blockWidth < theta || blockWidth > 360:
		return nil, bad("block width %g° must be at least θ (%g″) and at most 360°", blockWidth, theta*3600)
	case !finite(zoneHeight) || zoneHeight <= 0 || theta/zoneHeight > maxZonesPerTheta || zoneHeight > 180:
		return nil, bad("zone height %g″ must be at least θ/%d and at most 180°", zoneHeight*3600, maxZonesPerTheta)
	}
	g := &Geometry{Theta: theta, BlockHeight: blockHeight, BlockWidth: blockWidth, ZoneHeight: zoneHeight,
		chord2: ChordLimit(theta), wide: widen(theta)}
	g.zoneK = int(math.Ceil(g.wide / zoneHeight))
	g.zones = int64(math.Ceil(180/zoneHeight - 1e-9))
	stripes := math.Ceil(180/blockHeight - 1e-9)
	if stripes > maxBlocks {
		return nil, bad("block height %g° gives too many stripes", blockHeight)
	}
	n := int(stripes)
	g.StripeHeight = 180 / float64(n)
	g.raBlocks = make([]int, n)
	g.first = make([]int64, n)
	for s := range n {
		lo, hi := -90+float64(s)*g.StripeHeight, -90+float64(s+1)*g.StripeHeight
		edge := 0.0 // the stripe's equatorward edge
		if lo > 0 {
			edge = lo
		} else if hi < 0 {
			edge = -hi
		}
		k := math.Floor(360 * math.Cos(edge*deg) / blockWidth)
		if k > maxBlocks {
			return nil, bad("block width %g° gives too many blocks", blockWidth)
		}
		g.raBlocks[s] = max(1, int(k))
		g.first[s] = g.blocks
		g.blocks += int64(g.raBlocks[s])
		if g.blocks > maxBlocks {
			return nil, bad("blocks of %g° × %g° are too many (more than %d)", blockHeight, blockWidth, maxBlocks)
		}
	}
	return g, nil
}

// Blocks is the number of blocks.
func (g *Geometry) Blocks() int64 { return g.blocks }

// Stripes is the number of stripes.
func (g *Geometry) Stripes() int { return len(g.raBlocks) }

// stripe is the stripe of declination dec, clamped to the sphere.
func (g *Geometry) stripe(dec float64) int {
	s := int(math.Floor((dec + 90) / g.StripeHeight))
	return min(max(s, 0), len(g.raBlocks)-1)
}

// raIndex is the index of ra's block in stripe s.
func (g *Geometry) raIndex(s int, ra float64) int {
	n := g.raBlocks[s]
	j := int(math.Floor(ra / (360 / float64(n))))
	return min(max(j, 0), n-1)
}

// Home is the block that owns an object at (ra, dec); ra in [0, 360).
func (g *Geometry) Home(ra, dec float64) uint32 {
	s := g.stripe(dec)
	return uint32(g.first[s] + int64(g.raIndex(s, ra)))
}

// Copies calls fn with every block other than home, and numbered above
// it, that has a point within θ of the object at (ra, dec): the border
// copies the object is sent to. Copies go forward only: a pair of objects
// in blocks A < B is found in B, from A's object's copy, and nowhere else.
// Near the poles (|dec| + θ > 89.9°) the ra window is the whole ring; at
// the ra = 0/360 seam it wraps.
func (g *Geometry) Copies(ra, dec float64, home uint32, fn func(block uint32) error) error {
	s0 := g.stripe(dec - g.wide)
	s1 := g.stripe(dec + g.wide)
	alpha := widen(Alpha(g.wide, dec))
	for s := s0; s <= s1; s++ {
		if g.first[s]+int64(g.raBlocks[s]) <= int64(home) {
			continue // every block of the stripe is at or before home
		}
		n := g.raBlocks[s]
		w := 360 / float64(n)
		j0, j1 := 0, n-1
		if alpha < 180 {
			j0, j1 = int(math.Floor((ra-alpha)/w)), int(math.Floor((ra+alpha)/w))
			if j1-j0+1 >= n {
				j0, j1 = 0, n-1
			}
		}
		for j := j0; j <= j1; j++ {
			b := g.first[s] + int64(((j%n)+n)%n)
			if b <= int64(home) {
				continue
			}
			if err := fn(uint32(b)); err != nil {
				return err
			}
		}
	}
	return nil
}

// Entry is an object as a reducer holds it: owned by the block, or a
// border copy from a block numbered below it.
type Entry struct {
	Object
	Copy bool
}

// item is an Entry prepared for the sweep.
type item struct {
	zone int64
	copy bool
	ra   float64
	v    Vector
	idx  int // the Entry's index
}

// zoneRange is one zone's run of items (sorted by ra) and its ra window.
type zoneRange struct {
	zone       int64
	start, end int
	alpha      float64
}

// Pairs calls fn once for every pair of entries within θ that the block
// owns: both owned, or one owned and one a copy (copies are never paired
// with each other). It is the Zones algorithm inside one block: entries
// are put into zones of ZoneHeight sorted by ra, and each owned entry is
// compared with the entries of its own and the ceil(θ/h) zones either
// side whose ra lies within the zone's α window (modulo 360°). chord2 is
// the pair's squared chord. a and b are indexes into entries.
func (g *Geometry) Pairs(entries []Entry, fn func(a, b int, chord2 float64) error) error {
	items := make([]item, len(entries))
	for i, e := range entries {
		items[i] = item{zone: g.zone(e.Dec), copy: e.Copy, ra: e.RA, v: UnitVector(e.RA, e.Dec), idx: i}
	}
	slices.SortFunc(items, func(a, b item) int {
		if c := cmp.Compare(a.zone, b.zone); c != 0 {
			return c
		}
		if c := cmp.Compare(a.ra, b.ra); c != 0 {
			return c
		}
		return cmp.Compare(a.idx, b.idx)
	})
	var zones []zoneRange
	for i := 0; i < len(items); {
		j := i
		for j < len(items) && items[j].zone == items[i].zone {
			j++
		}
		z := items[i].zone
		lo, hi := -90+float64(z)*g.ZoneHeight, -90+float64(z+1)*g.ZoneHeight
		zones = append(zones, zoneRange{zone: z, start: i, end: j, alpha: widen(Alpha(g.wide, min(90, max(math.Abs(lo), math.Abs(hi)))))})
		i = j
	}
	visit := func(i, j int) error {
		if !items[j].copy && j <= i {
			return nil // an owned pair is taken from its first item
		}
		if d := Chord2(items[i].v, items[j].v); d < g.chord2 {
			return fn(items[i].idx, items[j].idx, d)
		}
		return nil
	}
	for zi, zr := range zones {
		near := neighbourZones(zones, zi, g.zoneK)
		for i := zr.start; i < zr.end; i++ {
			if items[i].copy {
				continue
			}
			ra := items[i].ra
			for _, nz := range near {
				run := items[nz.start:nz.end]
				if zr.alpha >= 180 {
					for j := nz.start; j < nz.end; j++ {
						if err := visit(i, j); err != nil {
							return err
						}
					}
					continue
				}
				for _, shift := range [3]float64{-360, 0, 360} {
					lo, hi := ra-zr.alpha+shift, ra+zr.alpha+shift
					if hi < 0 || lo >= 360 {
						continue
					}
					k := sort.Search(len(run), func(k int) bool { return run[k].ra >= lo })
					for j := nz.start + k; j < nz.end && items[j].ra <= hi; j++ {
						if err := visit(i, j); err != nil {
							return err
						}
					}
				}
			}
		}
	}
	return nil
}

// neighbourZones returns the zones within k of zones[zi] (zones is sorted
// by zone number).
func neighbourZones(zones []zoneRange, zi, k int) []zoneRange {
	z := zones[zi].zone
	lo := zi
	for lo > 0 && zones[lo-1].zone >= z-int64(k) {
		lo--
	}
	hi := zi + 1
	for hi < len(zones) && zones[hi].zone <= z+int64(k) {
		hi++
	}
	return zones[lo:hi]
}

// zone is the zone number of declination dec.
func (g *Geometry) zone(dec float64) int64 {
	z := int64(math.Floor((dec + 90) / g.ZoneHeight))
	return min(max(z, 0), g.zones-1)
}
