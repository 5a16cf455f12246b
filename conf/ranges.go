package conf

import (
	"fmt"
	"strconv"
	"strings"
)

// IntegerRanges is a set of non-negative integers written as Hadoop's
// Configuration.IntegerRanges writes them: comma-separated numbers and
// ranges "a-b", "-b" (0 to b) and "a-" (a and up), e.g. "0-2,5,9-".
type IntegerRanges struct {
	ranges [][2]int // inclusive; hi -1 means no upper end
}

// ParseIntegerRanges parses s; an empty s is the empty set.
func ParseIntegerRanges(s string) (IntegerRanges, error) {
	var r IntegerRanges
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(part, "-")
		var a, b int
		var err error
		if a, err = rangeEnd(lo, 0); err == nil {
			b = a
			if isRange {
				b, err = rangeEnd(hi, -1)
			}
		}
		if err != nil || (b != -1 && b < a) {
			return IntegerRanges{}, fmt.Errorf("conf: integer range %q: bad part %q", s, part)
		}
		r.ranges = append(r.ranges, [2]int{a, b})
	}
	return r, nil
}

// rangeEnd is one end of a range; empty means dflt.
func rangeEnd(s string, dflt int) (int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return dflt, nil
	}
	n, err := strconv.Atoi(s)
	if err == nil && n < 0 {
		err = fmt.Errorf("negative")
	}
	return n, err
}

// Contains reports whether n is in the set.
func (r IntegerRanges) Contains(n int) bool {
	for _, x := range r.ranges {
		if n >= x[0] && (x[1] == -1 || n <= x[1]) {
			return true
		}
	}
	return false
}
