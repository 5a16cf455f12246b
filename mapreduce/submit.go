package mapreduce

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/internal/term"
)

// Submit runs job where mapreduce.framework.name says — "local" (the
// default) runs it in this process — and prints Hadoop-like progress to w:
// "map 45% reduce 10%" lines as the job advances (one live line on a
// terminal), then the counters and the elapsed time.
func Submit(ctx context.Context, job *Job, env fs.Env, w io.Writer) (*Result, error) {
	env = env.WithDefaults()
	c := job.Conf
	if c == nil {
		c = env.Conf
		job.Conf = c
	}
	run := RunLocal
	switch fw := c.Get("mapreduce.framework.name"); fw {
	case "local", "":
	case "classic":
		run = runClassic
	default:
		return nil, fmt.Errorf("mapreduce: mapreduce.framework.name=%q: use local or classic", fw)
	}
	pr := newProgressPrinter(w)
	fmt.Fprintf(w, "INFO mapreduce.Job: Running job %q\n", job.Name)
	res, err := run(ctx, job, env, pr.update)
	pr.done()
	if err != nil {
		if id := pr.jobID(); id != "" {
			fmt.Fprintf(w, "INFO mapreduce.Job: Job %s failed: %v\n", id, err)
		} else {
			fmt.Fprintf(w, "INFO mapreduce.Job: Job failed: %v\n", err)
		}
		return nil, err
	}
	fmt.Fprintf(w, "INFO mapreduce.Job: Job %s completed successfully in %.3f s\n", res.JobID, res.Elapsed.Seconds())
	PrintCounters(w, res.Counters)
	return res, nil
}

// PrintCounters prints counters as Hadoop's job client does.
func PrintCounters(w io.Writer, c *Counters) {
	n := 0
	for _, g := range c.Groups() {
		n += len(c.Group(g))
	}
	fmt.Fprintf(w, "INFO mapreduce.Job: Counters: %d\n", n)
	for _, g := range c.Groups() {
		fmt.Fprintf(w, "\t%s\n", g)
		for _, cv := range c.Group(g) {
			fmt.Fprintf(w, "\t\t%s=%d\n", cv.Name, cv.Value)
		}
	}
}

// progressPrinter prints "map X% reduce Y%" when it changes; on a
// terminal it rewrites one line with a bar instead.
type progressPrinter struct {
	w        io.Writer
	terminal bool
	mu       sync.Mutex
	last     string
	id       string
	lastDraw time.Time
}

func newProgressPrinter(w io.Writer) *progressPrinter {
	return &progressPrinter{w: w, terminal: term.IsTerminal(w)}
}

func (p *progressPrinter) jobID() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.id
}

func (p *progressPrinter) update(pr Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.id == "" {
		p.id = pr.JobID
		fmt.Fprintf(p.w, "INFO mapreduce.Job: Running job: %s (%d maps, %d reduces)\n", pr.JobID, pr.Maps, pr.Reduces)
	}
	line := fmt.Sprintf(" map %d%% reduce %d%%", int(pr.Map*100), int(pr.Reduce*100))
	if line == p.last {
		return
	}
	p.last = line
	if p.terminal {
		if time.Since(p.lastDraw) < 100*time.Millisecond && pr.Reduce < 1 {
			return
		}
		p.lastDraw = time.Now()
		bar := func(f float64) string {
			n := int(f * 20)
			return "[" + strings.Repeat("#", n) + strings.Repeat(".", 20-n) + "]"
		}
		fmt.Fprintf(p.w, "\r map %s %3d%%  reduce %s %3d%%", bar(pr.Map), int(pr.Map*100), bar(pr.Reduce), int(pr.Reduce*100))
		return
	}
	fmt.Fprintf(p.w, "INFO mapreduce.Job: %s\n", line)
}

func (p *progressPrinter) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.terminal && p.last != "" {
		fmt.Fprintln(p.w)
	}
}
