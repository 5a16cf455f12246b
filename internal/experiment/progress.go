package experiment

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/stratafs/strata/internal/term"
)

// Progress shows what an experiment is doing: a line when each phase
// starts and one when it ends with its runtime; on a terminal, one live
// line with the phase, its job's map and reduce progress and the elapsed
// time instead of the start line.
type Progress struct {
	w        io.Writer
	terminal bool
	mu       sync.Mutex
	phase    string
	job      string
	start    time.Time
	stop     chan struct{}
	wg       sync.WaitGroup
}

// NewProgress writes to w, live if w is a terminal.
func NewProgress(w io.Writer) *Progress {
	return &Progress{w: w, terminal: term.IsTerminal(w)}
}

// Logf prints a line.
func (p *Progress) Logf(format string, args ...any) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clearLocked()
	fmt.Fprintf(p.w, format+"\n", args...)
	p.drawLocked()
}

// Begin starts a phase.
func (p *Progress) Begin(phase string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.phase, p.job, p.start = phase, "", time.Now()
	if !p.terminal {
		fmt.Fprintf(p.w, "%s ...\n", phase)
		return
	}
	p.drawLocked()
	p.stop = make(chan struct{})
	p.wg.Add(1)
	go p.tick(p.stop)
}

func (p *Progress) tick(stop chan struct{}) {
	defer p.wg.Done()
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			p.mu.Lock()
			p.drawLocked()
			p.mu.Unlock()
		}
	}
}

// job sets the running job's progress ("map 45% reduce 10%").
func (p *Progress) jobStatus(s string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.job = s
	p.drawLocked()
}

// End ends the phase with a result ("12.34 s").
func (p *Progress) End(result string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	stop := p.stop
	p.stop = nil
	p.mu.Unlock()
	if stop != nil {
		close(stop)
		p.wg.Wait()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clearLocked()
	fmt.Fprintf(p.w, "%s: %s\n", p.phase, result)
	p.phase = ""
}

func (p *Progress) drawLocked() {
	if !p.terminal || p.phase == "" {
		return
	}
	fmt.Fprintf(p.w, "\r\033[K%s  %s  %.0f s", p.phase, p.job, time.Since(p.start).Seconds())
}

func (p *Progress) clearLocked() {
	if p.terminal && p.phase != "" {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

// jobConsole is the writer a job's console goes to: every line to log,
// and the "map X% reduce Y%" lines to the progress display.
type jobConsole struct {
	log  io.Writer
	prog *Progress
	buf  []byte
}

func (c *jobConsole) Write(b []byte) (int, error) {
	c.buf = append(c.buf, b...)
	for {
		i := bytes.IndexByte(c.buf, '\n')
		if i < 0 {
			break
		}
		line := string(c.buf[:i])
		c.buf = c.buf[i+1:]
		if j := strings.Index(line, " map "); j >= 0 && strings.Contains(line, "% reduce ") {
			c.prog.jobStatus(strings.TrimSpace(line[j:]))
		}
	}
	if len(c.buf) > 64<<10 {
		c.buf = c.buf[:0]
	}
	return c.log.Write(b)
}
