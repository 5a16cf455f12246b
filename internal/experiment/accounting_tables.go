package experiment

import (
	"fmt"
	"io"
	"math"
)

// accountedStep is the step whose accounting the tables show.
const accountedStep = "terasort"

// printAccounting prints accountingTables as text: for each profile's
// first run's TeraSort, the CPU and FILE counters, the mean phase lengths,
// the intermediate-space peak, the devices' work and the bytes over each
// host's link (or a line saying why there are none).
func (r *Results) printAccounting(w io.Writer) {
	col := nameColumn(r.profileNames())
	for _, t := range r.accountingTables() {
		fmt.Fprintf(w, "\n%s\n", t.Title)
		tw := newTable(w)
		for _, row := range append([][]string{t.Header}, t.Rows...) {
			fmt.Fprintf(tw, "%s\t", col(row[0]))
			for _, c := range row[1:] {
				fmt.Fprintf(tw, "%s\t", c)
			}
			fmt.Fprintln(tw)
		}
		tw.Flush()
	}
	if n := r.accountingNote(); n != "" {
		fmt.Fprintf(w, "\n%s\n", n)
	}
}

// sizeString is n bytes with three significant digits in decimal units
// ("20.4 MB").
func sizeString(n int64) string {
	v, unit := float64(n), "B"
	for _, u := range []string{"kB", "MB", "GB", "TB"} {
		if math.Abs(v) < 1000 {
			break
		}
		v, unit = v/1000, u
	}
	return formatTick(v) + " " + unit
}
