// Package term tells whether strata's output goes to a terminal, where
// progress is drawn as one live line instead of printed line by line.
package term

import (
	"io"
	"os"
)

// IsTerminal reports whether w is an *os.File on a character device.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || f == nil {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
