package experiment

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/stratafs/strata/internal/hostnet"
)

// TCPOptions configure Table 2: Bytes sent one way over one connection
// in Chunk-byte writes, on loopback and, with network namespaces,
// between two hosts, unshaped and (LinkMbps > 0) shaped by tc tbf.
type TCPOptions struct {
	Bytes    int64
	Chunk    int
	LinkMbps float64
}

// TCPRow is one of Table 2's measurements.
type TCPRow struct {
	Case string  `json:"case"` // local, remote, remote shaped
	Link string  `json:"link"` // loopback, veth+bridge, tbf rate
	MBps float64 `json:"mb_per_s"`
	// SenderCPU and ReceiverCPU are each side's thread's user+system CPU
	// time over the wall time (1 = one CPU); SystemCPU the whole
	// machine's busy CPU from /proc/stat (softirq work included).
	SenderCPU   float64 `json:"sender_cpu"`
	ReceiverCPU float64 `json:"receiver_cpu"`
	SystemCPU   float64 `json:"system_cpu"`
	Seconds     float64 `json:"seconds"`
}

// RunTable2 measures local TCP, then, where network namespaces can be
// made, TCP between two hosts; skipped says why the hosts' rows are
// missing.
func RunTable2(ctx context.Context, o TCPOptions, progress *Progress) (rows []TCPRow, skipped []string, err error) {
	if o.Bytes <= 0 {
		o.Bytes = 1 << 30
	}
	if o.Chunk <= 0 {
		o.Chunk = 64 << 10
	}
	progress.Begin("  table 2: TCP on loopback")
	r, err := tcpRun(ctx, "", "", "127.0.0.1", o)
	if err != nil {
		progress.End("failed")
		return nil, nil, fmt.Errorf("table 2: loopback: %w", err)
	}
	progress.End(fmt.Sprintf("%.0f MB/s", r.MBps))
	r.Case, r.Link = "local", "loopback"
	rows = append(rows, r)
	if err := hostnet.Available(); err != nil {
		return rows, []string{"Table 2, two hosts: " + err.Error()}, nil
	}
	n, err := hostnet.New()
	if err != nil {
		return rows, []string{"Table 2, two hosts: " + err.Error()}, nil
	}
	defer n.Close()
	snd, err := n.AddHost("snd", 2)
	if err != nil {
		return rows, nil, fmt.Errorf("table 2: %w", err)
	}
	rcv, err := n.AddHost("rcv", 3)
	if err != nil {
		return rows, nil, fmt.Errorf("table 2: %w", err)
	}
	cases := []struct {
		name string
		mbps float64
	}{{"remote", 0}}
	if o.LinkMbps > 0 {
		cases = append(cases, struct {
			name string
			mbps float64
		}{"remote shaped", o.LinkMbps})
	}
	for _, c := range cases {
		link := "veth + bridge, unshaped"
		if c.mbps > 0 {
			link = fmt.Sprintf("veth + bridge, tbf %g Mbit/s", c.mbps)
			for _, h := range []string{"snd", "rcv"} {
				if err := n.Shape(h, int64(c.mbps*1e6)); err != nil {
					return rows, nil, fmt.Errorf("table 2: %w", err)
				}
			}
		}
		progress.Begin("  table 2: TCP between two hosts, " + link)
		r, err := tcpRun(ctx, netnsPath(snd.NS), netnsPath(rcv.NS), rcv.IP, o)
		if err != nil {
			progress.End("failed")
			return rows, nil, fmt.Errorf("table 2: %s: %w", c.name, err)
		}
		progress.End(fmt.Sprintf("%.0f MB/s", r.MBps))
		r.Case, r.Link = c.name, link
		rows = append(rows, r)
	}
	return rows, nil, nil
}

func netnsPath(ns string) string { return "/run/netns/" + ns }

// onThread runs fn on an OS thread of its own, in network namespace ns
// (a /run/netns path; "" for this one), and returns its error and the
// thread's CPU time. A thread moved into another namespace is not given
// back to the Go runtime: the goroutine ends locked, which ends the
// thread.
func onThread(ns string, fn func() error) <-chan threadResult {
	ch := make(chan threadResult, 1)
	go func() {
		runtime.LockOSThread()
		if ns != "" {
			f, err := os.Open(ns)
			if err != nil {
				ch <- threadResult{err: err}
				return
			}
			err = unix.Setns(int(f.Fd()), unix.CLONE_NEWNET)
			f.Close()
			if err != nil {
				ch <- threadResult{err: fmt.Errorf("setns %s: %w", ns, err)}
				return
			}
		} else {
			defer runtime.UnlockOSThread()
		}
		before := threadCPU()
		err := fn()
		ch <- threadResult{err: err, cpu: threadCPU() - before}
	}()
	return ch
}

type threadResult struct {
	err error
	cpu float64
}

// threadCPU is the calling thread's user+system CPU seconds.
func threadCPU() float64 {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// tcpRun sends o.Bytes from a thread in sendNS to a listener on a thread
// in recvNS at addr and measures the rate and both threads' CPU.
func tcpRun(ctx context.Context, sendNS, recvNS, addr string, o TCPOptions) (TCPRow, error) {
	var row TCPRow
	ready := make(chan string, 1)
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	recv := onThread(recvNS, func() error {
		// Sockets take the namespace of the thread that makes them; the
		// listener's accept and reads stay on this locked thread.
		ln, err := net.Listen("tcp", net.JoinHostPort(addr, "0"))
		if err != nil {
			close(ready)
			return err
		}
		defer ln.Close()
		ready <- ln.Addr().String()
		go func() { <-ctx.Done(); ln.Close() }()
		c, err := ln.Accept()
		if err != nil {
			return err
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Minute))
		buf := make([]byte, o.Chunk)
		n, err := io.CopyBuffer(io.Discard, onlyReader{c}, buf)
		if err == nil && n != o.Bytes {
			err = fmt.Errorf("received %d bytes of %d", n, o.Bytes)
		}
		return err
	})
	to, ok := <-ready
	if !ok {
		r := <-recv
		return row, r.err
	}
	sysBefore := systemBusy()
	start := time.Now()
	send := onThread(sendNS, func() error {
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", to)
		if err != nil {
			return err
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Minute))
		buf := make([]byte, o.Chunk)
		for n := int64(0); n < o.Bytes; {
			k := int(min(int64(len(buf)), o.Bytes-n))
			w, err := c.Write(buf[:k])
			n += int64(w)
			if err != nil {
				return err
			}
		}
		return nil
	})
	s, r := <-send, <-recv
	row.Seconds = time.Since(start).Seconds()
	if err := errors.Join(s.err, r.err); err != nil {
		return row, err
	}
	row.MBps = float64(o.Bytes) / 1e6 / row.Seconds
	row.SenderCPU, row.ReceiverCPU = s.cpu/row.Seconds, r.cpu/row.Seconds
	row.SystemCPU = (systemBusy() - sysBefore) / row.Seconds
	return row, nil
}

// onlyReader hides a connection's WriteTo/ReadFrom so that the copy
// reads into the buffer on this thread (no splice to io.Discard).
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

// table2Table is Table 2 with the paper's figures beside.
func (r *Paper3Results) table2Table() Paper3Table {
	t := Paper3Table{Title: "Table 2: TCP throughput and CPU (one connection, one way)",
		Header: []string{"case", "link", "strata MB/s", "paper MB/s", "strata/paper", "sender CPU", "receiver CPU", "machine CPU"}, file: "paper3-table2.csv"}
	for _, row := range r.Table2 {
		paper := 0.0
		if row.Case == "local" {
			paper = paper3.LocalTCPMBps
		}
		t.Rows = append(t.Rows, []string{row.Case, row.Link, p3cell(row.MBps, 0), p3cell(paper, 0), p3cell(ratio2(row.MBps, paper), 2),
			pct(row.SenderCPU), pct(row.ReceiverCPU), pct(row.SystemCPU)})
	}
	t.Note = "CPU: a thread's user+system time over the wall time (100% = one CPU). The seed text states only the local rate (343 MB/s, " +
		"\"approximately 1 GB/s memory copy\"); its CPU figures and the remote row are not in it."
	return t
}

func pct(v float64) string { return fmt.Sprintf("%.0f%%", 100*v) }

func (r *Paper3Results) table2Chart() namedChart {
	ch := &Chart{Title: "Table 2: TCP throughput", YLabel: "MB/s", Series: []string{"strata"}}
	var v []float64
	for _, row := range r.Table2 {
		ch.Groups = append(ch.Groups, strings.TrimSpace(row.Case))
		v = append(v, row.MBps)
	}
	ch.Values = [][]float64{v}
	return namedChart{file: "paper3-table2.svg", chart: ch}
}
