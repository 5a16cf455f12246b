package shell

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/stratafs/strata/fs"
)

func itoa(n int) string { return strconv.Itoa(n) }

// humanSize formats n as Hadoop's
// StringUtils.TraditionalBinaryPrefix.long2String(n, "", 1): "1023",
// "1 K", "1.5 M".
func humanSize(n int64) string {
	const symbols = "KMGTPE"
	if n == math.MinInt64 {
		return "-8 E"
	}
	sign := ""
	if n < 0 {
		sign, n = "-", -n
	}
	if n < 1<<10 {
		return sign + strconv.FormatInt(n, 10)
	}
	i := 0 // prefix index: K=0 ... E=5, value 1<<(10*(i+1))
	for i+1 < len(symbols) && n >= int64(1)<<(10*(i+2)) {
		i++
	}
	shift := uint(10 * (i + 1))
	if n&(int64(1)<<shift-1) == 0 {
		return sign + strconv.FormatInt(n>>shift, 10) + " " + symbols[i:i+1]
	}
	s := javaFixed(float64(n)/float64(int64(1)<<shift), 1)
	if strings.HasPrefix(s, "1024") && i+1 < len(symbols) {
		i++
		s = javaFixed(float64(n)/float64(int64(1)<<(10*(i+1))), 1)
	}
	return sign + s + " " + symbols[i:i+1]
}

// javaFixed formats v with the given decimals as Java's "%.Nf" does:
// HALF_UP rounding of the shortest decimal representation.
func javaFixed(v float64, decimals int) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "Infinity"
	case math.IsInf(v, -1):
		return "-Infinity"
	}
	s := strconv.FormatFloat(v, 'f', -1, 64)
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	intPart, frac, _ := strings.Cut(s, ".")
	if len(frac) <= decimals {
		frac += strings.Repeat("0", decimals-len(frac))
		if decimals == 0 {
			return sign + intPart
		}
		return sign + intPart + "." + frac
	}
	digits := []byte(intPart + frac[:decimals])
	if frac[decimals] >= '5' {
		i := len(digits) - 1
		for ; i >= 0; i-- {
			if digits[i] == '9' {
				digits[i] = '0'
				continue
			}
			digits[i]++
			break
		}
		if i < 0 {
			digits = append([]byte{'1'}, digits...)
		}
	}
	ip := string(digits[:len(digits)-decimals])
	if decimals == 0 {
		return sign + ip
	}
	return sign + ip + "." + string(digits[len(digits)-decimals:])
}

// formatPercent is Hadoop's StringUtils.formatPercent(fraction, 0).
func formatPercent(fraction float64) string {
	return javaFixed(fraction*100, 0) + "%"
}

// permString renders permission bits as Hadoop's FsPermission.toString.
func permString(perm uint16) string { return fs.PermString(perm) }

// millis is a time as Hadoop's milliseconds since the epoch (0 for the
// zero time).
func millis(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// hadoopTime returns t for formatting, the epoch for the zero time.
func hadoopTime(t time.Time) time.Time {
	if t.IsZero() {
		return time.UnixMilli(0)
	}
	return t
}

// printable replaces non-printable characters with '?', as Hadoop's
// PrintableString (ls -q).
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if r == utf8RuneError || !unicode.IsPrint(r) && r != ' ' {
			return '?'
		}
		return r
	}, s)
}

const utf8RuneError = '\uFFFD'

// table is Hadoop's FsUsage.TableBuilder: columns padded to their widest
// value, two spaces apart; left-aligned unless marked right; a
// left-aligned last column is not padded.
type table struct {
	rows   [][]string
	right  map[int]bool
	header bool
}

func (t *table) add(cols ...string) { t.rows = append(t.rows, cols) }

func (t *table) empty() bool {
	n := len(t.rows)
	if t.header {
		n--
	}
	return n <= 0
}

func (t *table) print(w io.Writer) {
	if t.empty() {
		return
	}
	ncol := len(t.rows[0])
	widths := make([]int, ncol)
	for _, r := range t.rows {
		for i, v := range r {
			widths[i] = max(widths[i], len(v))
		}
	}
	for _, r := range t.rows {
		var b strings.Builder
		for i, v := range r {
			if i > 0 {
				b.WriteString("  ")
			}
			switch {
			case t.right[i]:
				fmt.Fprintf(&b, "%*s", widths[i], v)
			case i != ncol-1:
				fmt.Fprintf(&b, "%-*s", widths[i], v)
			default:
				b.WriteString(v)
			}
		}
		fmt.Fprintln(w, b.String())
	}
}
