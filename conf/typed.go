package conf

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// ErrEmpty is the reason (see ValueError.Err) a typed getter fails on a
// key whose value is empty or blank, e.g. one that is unset and has no
// default.
var ErrEmpty = errors.New("empty value")

// ValueError is the error a typed getter returns for a value it cannot
// parse. Its message names the key and the value:
//
//	conf: dfs.replication: invalid integer "three": not an integer
type ValueError struct {
	Key   string // the key read
	Value string // its value after expansion
	Want  string // what was wanted: "integer", "number", "boolean", "size", "duration"
	Err   error  // why the value was rejected; ErrEmpty for an empty value
}

func (e *ValueError) Error() string {
	return fmt.Sprintf("conf: %s: invalid %s %q: %v", e.Key, e.Want, e.Value, e.Err)
}

func (e *ValueError) Unwrap() error { return e.Err }

// typed reads key with Get and parses it with parse, wrapping errors.
func typed[T any](c *Configuration, key, want string, parse func(string) (T, error)) (T, error) {
	v := c.Get(key)
	x, err := parse(v)
	if err != nil {
		var zero T
		return zero, &ValueError{Key: canonical(key), Value: v, Want: want, Err: err}
	}
	return x, nil
}

// GetInt returns key's value as an integer. Like Hadoop's getLong it
// ignores surrounding white space and accepts a 0x hexadecimal prefix.
func (c *Configuration) GetInt(key string) (int64, error) {
	return typed(c, key, "integer", func(s string) (int64, error) { return parseInt(s, true) })
}

// GetFloat returns key's value as a finite number. Like Java's
// Float.parseFloat it ignores surrounding white space and accepts a
// trailing f or d (Hadoop writes "0.999f").
func (c *Configuration) GetFloat(key string) (float64, error) {
	return typed(c, key, "number", parseFloat)
}

// GetBool returns key's value as a boolean: "true" or "false", ignoring
// case and surrounding white space.
func (c *Configuration) GetBool(key string) (bool, error) {
	return typed(c, key, "boolean", parseBool)
}

// GetBytes returns key's value as a size in bytes, as Hadoop's
// getLongBytes does; see ParseBytes.
func (c *Configuration) GetBytes(key string) (int64, error) {
	return typed(c, key, "size", ParseBytes)
}

// GetDuration returns key's value as a duration, as Hadoop's
// getTimeDuration does; see ParseDuration. A number without a unit is in
// defaultUnit, e.g. time.Millisecond for dfs.namenode.safemode.extension.
func (c *Configuration) GetDuration(key string, defaultUnit time.Duration) (time.Duration, error) {
	return typed(c, key, "duration", func(s string) (time.Duration, error) {
		return ParseDuration(s, defaultUnit)
	})
}

// GetStrings returns key's value split at commas, each part trimmed of
// white space, empty parts dropped (Hadoop's getTrimmedStrings). It
// returns nil for an empty value.
func (c *Configuration) GetStrings(key string) []string { return TrimmedStrings(c.Get(key)) }

// TrimmedStrings is v split at commas, each part trimmed of white space,
// empty parts dropped (Hadoop's StringUtils.getTrimmedStrings); nil for
// an empty v.
func TrimmedStrings(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

var (
	errNotInt   = errors.New("not an integer")
	errRange    = errors.New("out of range")
	errNotFloat = errors.New("not a number")
	errNotBool  = errors.New(`want "true" or "false"`)
)

// parseInt parses a decimal integer or, if hex is set and it has a 0x or
// 0X prefix (after an optional sign), a hexadecimal one, ignoring
// surrounding white space.
func parseInt(s string, hex bool) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, ErrEmpty
	}
	digits, neg := s, false
	if digits[0] == '-' || digits[0] == '+' {
		digits, neg = digits[1:], digits[0] == '-'
	}
	base := 10
	if hex && len(digits) > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X') {
		base, digits = 16, digits[2:]
	}
	if digits == "" || digits[0] == '+' || digits[0] == '-' || strings.Contains(digits, "_") {
		return 0, errNotInt
	}
	u, err := strconv.ParseUint(digits, base, 64)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			return 0, errRange
		}
		return 0, errNotInt
	}
	switch {
	case neg && u <= 1<<63:
		return int64(-u), nil // -(1<<63) wraps to math.MinInt64
	case !neg && u <= math.MaxInt64:
		return int64(u), nil
	}
	return 0, errRange
}

// parseFloat parses a finite number, ignoring surrounding white space and
// one trailing f, F, d or D as Java does.
func parseFloat(s string) (float64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, ErrEmpty
	}
	if n := len(s); n > 1 && strings.ContainsRune("fFdD", rune(s[n-1])) && (s[n-2] == '.' || s[n-2] >= '0' && s[n-2] <= '9') {
		s = s[:n-1]
	}
	if strings.ContainsAny(s, "_xXpP") { // no Go-only syntax: 1_000, 0x1p-2
		return 0, errNotFloat
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			return 0, errRange
		}
		return 0, errNotFloat
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, errNotFloat
	}
	return f, nil
}

// parseBool parses "true" or "false", ignoring case and surrounding space.
func parseBool(s string) (bool, error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return false, ErrEmpty
	case strings.EqualFold(s, "true"):
		return true, nil
	case strings.EqualFold(s, "false"):
		return false, nil
	}
	return false, errNotBool
}

// ParseBytes parses a size in bytes as Hadoop's
// StringUtils.TraditionalBinaryPrefix.string2long does: an integer,
// optionally followed by one of the binary prefixes k, m, g, t, p or e
// (any case) multiplying it by 2^10, 2^20, ... 2^60. White space around
// the integer is ignored. Examples: "4096", "128m" (134217728), "1G".
// Fractions ("1.5g") and two-letter units ("128mb") are rejected, as in
// Hadoop.
func ParseBytes(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, ErrEmpty
	}
	last := s[len(s)-1]
	if last >= '0' && last <= '9' {
		return parseInt(s, false)
	}
	shift := strings.IndexByte("kmgtpe", lower(last))
	if shift < 0 {
		return 0, fmt.Errorf("invalid size suffix %q; allowed: k, m, g, t, p, e (any case)", s[len(s)-1:])
	}
	n, err := parseInt(s[:len(s)-1], false)
	if err != nil {
		if errors.Is(err, ErrEmpty) {
			return 0, errNotInt
		}
		return 0, err
	}
	mult := int64(1) << (10 * (shift + 1))
	if n > math.MaxInt64/mult || n < math.MinInt64/mult {
		return 0, errRange
	}
	return n * mult, nil
}

// durationUnits are Hadoop's ParsedTimeDuration suffixes, in the order
// Hadoop tries them (so "ms" wins over "s").
var durationUnits = []struct {
	suffix string
	unit   time.Duration
}{
	{"ns", time.Nanosecond},
	{"us", time.Microsecond},
	{"ms", time.Millisecond},
	{"s", time.Second},
	{"m", time.Minute},
	{"h", time.Hour},
	{"d", 24 * time.Hour},
}

// ParseDuration parses a duration as Hadoop's getTimeDuration does: an
// integer followed by one of the units ns, us, ms, s, m, h or d (any
// case), or a bare integer in defaultUnit. White space around the integer
// is ignored. Examples: "30s", "500ms", "2d", "3000" (with time.Millisecond).
// Unlike time.ParseDuration it does not accept fractions or compound
// values like "1m30s".
func ParseDuration(s string, defaultUnit time.Duration) (time.Duration, error) {
	if defaultUnit <= 0 {
		return 0, fmt.Errorf("default unit %v is not positive", defaultUnit)
	}
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" {
		return 0, ErrEmpty
	}
	num, unit, suffixed := s, defaultUnit, false
	for _, u := range durationUnits {
		if strings.HasSuffix(s, u.suffix) {
			num, unit, suffixed = strings.TrimSuffix(s, u.suffix), u.unit, true
			break
		}
	}
	if last := s[len(s)-1]; !suffixed && (last < '0' || last > '9') {
		return 0, fmt.Errorf("invalid duration unit; allowed: ns, us, ms, s, m, h, d (any case), or none for %v", defaultUnit)
	}
	n, err := parseInt(num, false)
	if err != nil {
		if errors.Is(err, ErrEmpty) {
			return 0, errNotInt
		}
		return 0, err
	}
	if n > math.MaxInt64/int64(unit) || n < math.MinInt64/int64(unit) {
		return 0, errRange
	}
	return time.Duration(n) * unit, nil
}

func lower(b byte) byte {
	if b >= 'A' && b <= 'Z' {
		return b + 'a' - 'A'
	}
	return b
}
