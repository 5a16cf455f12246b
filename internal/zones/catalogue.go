package zones

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
)

// RecordSize is the length of a catalogue record: object id, ra and dec,
// each 8 bytes big-endian (docs/format/sky-catalogue.md).
const RecordSize = 24

// Object is one catalogue entry: an id and a position in degrees, ra in
// [0, 360) and dec in [−90, 90].
type Object struct {
	ID      uint64
	RA, Dec float64
}

// ErrBadRecord is wrapped by the errors of DecodeRecord and ParseText.
var ErrBadRecord = errors.New("zones: bad catalogue record")

// AppendRecord appends o's binary record to b.
func AppendRecord(b []byte, o Object) []byte {
	b = binary.BigEndian.AppendUint64(b, o.ID)
	b = binary.BigEndian.AppendUint64(b, math.Float64bits(o.RA))
	return binary.BigEndian.AppendUint64(b, math.Float64bits(o.Dec))
}

// DecodeRecord decodes a binary record, checking it (see Check).
func DecodeRecord(rec []byte) (Object, error) {
	if len(rec) != RecordSize {
		return Object{}, fmt.Errorf("%w: %d bytes, want %d", ErrBadRecord, len(rec), RecordSize)
	}
	o := Object{ID: binary.BigEndian.Uint64(rec),
		RA:  math.Float64frombits(binary.BigEndian.Uint64(rec[8:])),
		Dec: math.Float64frombits(binary.BigEndian.Uint64(rec[16:]))}
	return o, o.Check()
}

// Check reports a position off the sphere: ra outside [0, 360), dec
// outside [−90, 90], or either not a finite number.
func (o Object) Check() error {
	if !(o.RA >= 0 && o.RA < 360) || !(o.Dec >= -90 && o.Dec <= 90) {
		return fmt.Errorf("%w: object %d at ra %g, dec %g is off the sphere (ra in [0, 360), dec in [-90, 90])", ErrBadRecord, o.ID, o.RA, o.Dec)
	}
	return nil
}

// AppendText appends o as a text line without its newline: "id ra dec",
// the numbers in the shortest form that reads back exactly.
func AppendText(b []byte, o Object) []byte {
	b = strconv.AppendUint(b, o.ID, 10)
	b = append(b, ' ')
	b = strconv.AppendFloat(b, o.RA, 'g', -1, 64)
	b = append(b, ' ')
	return strconv.AppendFloat(b, o.Dec, 'g', -1, 64)
}

// ParseText parses a text line "id ra dec" (fields separated by spaces or
// tabs), checking the position.
func ParseText(line []byte) (Object, error) {
	f := bytes.Fields(line)
	if len(f) != 3 {
		return Object{}, fmt.Errorf("%w: %q: want \"id ra dec\"", ErrBadRecord, truncate(line))
	}
	id, err1 := strconv.ParseUint(string(f[0]), 10, 64)
	ra, err2 := strconv.ParseFloat(string(f[1]), 64)
	dec, err3 := strconv.ParseFloat(string(f[2]), 64)
	if err := errors.Join(err1, err2, err3); err != nil {
		return Object{}, fmt.Errorf("%w: %q: %v", ErrBadRecord, truncate(line), err)
	}
	o := Object{ID: id, RA: ra, Dec: dec}
	return o, o.Check()
}

func truncate(b []byte) []byte {
	if len(b) > 80 {
		return b[:80]
	}
	return b
}

// Distribution is how SkyGen places objects.
type Distribution int

const (
	// Uniform places objects uniformly on the sphere.
	Uniform Distribution = iota
	// Clustered is a Neyman–Scott process: a fraction of the objects
	// scattered around cluster centres (themselves uniform) with a
	// Gaussian of a few arcseconds, the rest uniform.
	Clustered
)

// SkyGen generates catalogue objects. Object i depends only on the seed,
// the parameters and i, so a catalogue is the same however it is split
// over map tasks.
type SkyGen struct {
	Seed         uint64
	Distribution Distribution
	// Clusters is the number of cluster centres (≥ 1 when Clustered).
	Clusters uint64
	// Fraction of the objects in clusters, in [0, 1].
	Fraction float64
	// Sigma is the cluster scatter per axis, in arcseconds.
	Sigma float64
}

// clusterStream keeps cluster centres apart from object streams.
const clusterStream = 0x9e3779b97f4a7c15

// uniform returns a uniform position on the sphere.
func uniform(rng *rand.Rand) (ra, dec float64) {
	ra = 360 * rng.Float64()
	dec = math.Asin(2*rng.Float64()-1) / deg
	return ra, dec
}

// Object returns object id.
func (g *SkyGen) Object(id uint64, src *rand.PCG, rng *rand.Rand) Object {
	src.Seed(g.Seed, id)
	ra, dec := uniform(rng)
	if g.Distribution == Clustered && g.Clusters > 0 && rng.Float64() < g.Fraction {
		k := rng.Uint64N(g.Clusters)
		g1, g2 := rng.NormFloat64(), rng.NormFloat64()
		src.Seed(g.Seed^clusterStream, k)
		ra, dec = uniform(rng)
		ra, dec = offset(ra, dec, g1*g.Sigma*arcsec, g2*g.Sigma*arcsec)
	}
	return Object{ID: id, RA: ra, Dec: dec}
}

// offset moves (ra, dec) by dx east and dy north (degrees) in the plane
// tangent at it, and projects back onto the sphere.
func offset(ra, dec, dx, dy float64) (float64, float64) {
	sr, cr := math.Sincos(ra * deg)
	sd, cd := math.Sincos(dec * deg)
	c := Vector{cd * cr, cd * sr, sd}
	east := Vector{-sr, cr, 0}
	north := Vector{-sd * cr, -sd * sr, cd}
	x, y := dx*deg, dy*deg
	v := Vector{c.X + x*east.X + y*north.X, c.Y + x*east.Y + y*north.Y, c.Z + x*east.Z + y*north.Z}
	n := math.Sqrt(v.X*v.X + v.Y*v.Y + v.Z*v.Z)
	return RADec(Vector{v.X / n, v.Y / n, v.Z / n})
}

// RADec returns the position of unit vector v in degrees, ra in [0, 360).
func RADec(v Vector) (ra, dec float64) {
	ra = math.Atan2(v.Y, v.X) / deg
	if ra < 0 {
		ra += 360
	}
	if ra >= 360 {
		ra = 0
	}
	return ra, math.Asin(max(-1, min(1, v.Z))) / deg
}
