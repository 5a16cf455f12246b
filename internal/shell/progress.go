package shell

import (
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"time"
)

// Progress of long copies (-put, -get, -cp, ...): when the shell writes to
// a terminal, a copy that takes longer than progressAfter gets a progress
// line on stderr, "\r<name>: 512.0 MiB / 1.0 GiB (45%) 210.3 MiB/s",
// redrawn every progressEvery and erased when the copy ends. It is never
// shown when stdout or stderr is not a terminal (scripts, tests).
var (
	progressAfter = time.Second
	progressEvery = 250 * time.Millisecond
)

// progress draws one copy's progress line from its own goroutine; the
// copy counts bytes through reader.
type progress struct {
	w     io.Writer
	name  string
	total int64 // -1 when unknown (stdin)
	start time.Time
	n     atomic.Int64
	stop  chan struct{}
	done  chan struct{}
}

// startProgress starts the progress line for a copy of total bytes shown
// as name, or returns nil when the shell does not show progress.
func (c *cmdCtx) startProgress(name string, total int64) *progress {
	if !c.progress {
		return nil
	}
	p := &progress{
		w: c.sh.Stderr, name: name, total: total, start: time.Now(),
		stop: make(chan struct{}), done: make(chan struct{}),
	}
	go p.run()
	return p
}

// reader counts what is read from r. A nil progress returns r itself.
func (p *progress) reader(r io.Reader) io.Reader {
	if p == nil {
		return r
	}
	return &countingReader{r: r, n: &p.n}
}

// finish erases the line (if it was drawn) and returns once the
// goroutine has stopped writing. Safe on a nil progress.
func (p *progress) finish() {
	if p == nil {
		return
	}
	close(p.stop)
	<-p.done
}

func (p *progress) run() {
	defer close(p.done)
	t := time.NewTicker(progressEvery)
	defer t.Stop()
	width := 0
	for {
		select {
		case <-p.stop:
			if width > 0 {
				fmt.Fprint(p.w, "\r"+strings.Repeat(" ", width)+"\r")
			}
			return
		case now := <-t.C:
			elapsed := now.Sub(p.start)
			if elapsed < progressAfter {
				continue
			}
			line := progressLine(p.name, p.n.Load(), p.total, elapsed)
			pad := ""
			if len(line) < width {
				pad = strings.Repeat(" ", width-len(line))
			}
			fmt.Fprint(p.w, "\r"+line+pad)
			width = max(width, len(line))
		}
	}
}

// progressLine is "<name>: 512.0 MiB / 1.0 GiB (45%) 210.3 MiB/s"; without
// a known total, "<name>: 512.0 MiB 210.3 MiB/s".
func progressLine(name string, n, total int64, elapsed time.Duration) string {
	var b strings.Builder
	b.WriteString(name)
	b.WriteString(": ")
	b.WriteString(iecSize(n))
	if total >= 0 {
		pct := int64(100)
		if total > 0 {
			pct = n * 100 / total
		}
		fmt.Fprintf(&b, " / %s (%d%%)", iecSize(total), pct)
	}
	if secs := elapsed.Seconds(); secs > 0 {
		fmt.Fprintf(&b, " %s/s", iecSize(int64(float64(n)/secs)))
	}
	return b.String()
}

// iecSize formats n bytes with binary prefixes and one decimal:
// "512 B", "1.5 KiB", "210.3 MiB".
func iecSize(n int64) string {
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	const units = "KMGTPE"
	v := float64(n) / 1024
	i := 0
	for v >= 1023.95 && i < len(units)-1 { // no "1024.0 KiB"
		v /= 1024
		i++
	}
	return fmt.Sprintf("%.1f %ciB", v, units[i])
}

type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}
