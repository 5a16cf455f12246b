package shuffle

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/stratafs/strata/internal/jobtoken"
	"github.com/stratafs/strata/internal/spill"
	"github.com/stratafs/strata/internal/vfs"
)

// busyError is a 503 (or 429) from a server at its concurrency limit.
type busyError struct {
	status     int
	retryAfter time.Duration // 0 if not given
}

func (e *busyError) Error() string {
	return fmt.Sprintf("server busy (%d %s)", e.status, http.StatusText(e.status))
}

// statusError is any other unexpected HTTP status.
type statusError struct {
	status int
	msg    string
}

func (e *statusError) Error() string {
	return fmt.Sprintf("HTTP %d %s: %s", e.status, http.StatusText(e.status), e.msg)
}

// connError is a request that got no HTTP response at all: no
// connection, a reset, or no response headers in time. It is charged to
// every map queued for that server.
type connError struct{ err error }

func (e *connError) Error() string { return e.err.Error() }
func (e *connError) Unwrap() error { return e.err }

// localError is a failure of this node's disks: it ends the shuffle
// instead of blaming the map.
type localError struct{ err error }

func (e *localError) Error() string { return "shuffle: local disk: " + e.err.Error() }
func (e *localError) Unwrap() error { return e.err }

// response is a successful response whose body is being read.
type response struct {
	body      *timedBody
	raw, part int64
}

// timedBody cancels the request when no bytes arrive for d.
type timedBody struct {
	rc     io.ReadCloser
	timer  *time.Timer
	d      time.Duration
	ctx    context.Context
	cancel context.CancelCauseFunc
}

func (b *timedBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if n > 0 {
		b.timer.Reset(b.d)
	}
	if err != nil && err != io.EOF {
		err = b.classify(err)
	}
	return n, err
}

func (b *timedBody) classify(err error) error {
	if errors.Is(context.Cause(b.ctx), ErrTimeout) {
		return fmt.Errorf("%w: no data for %v", ErrTimeout, b.d)
	}
	return err
}

func (b *timedBody) Close() error {
	b.timer.Stop()
	err := b.rc.Close()
	b.cancel(nil)
	return err
}

// expectEOF checks that the body has nothing after the segment (which
// also lets the connection be reused).
func (b *timedBody) expectEOF() error {
	var one [1]byte
	n, err := b.Read(one[:])
	if n > 0 {
		return errors.New("response longer than its segment")
	}
	if err != nil && err != io.EOF {
		return err
	}
	return nil
}

func (s *Shuffle) mapURL(loc MapLocation) string {
	q := url.Values{"job": {s.cfg.JobID}, "map": {loc.AttemptID}, "reduce": {strconv.Itoa(s.cfg.Reduce)}}
	return strings.TrimRight(loc.URL, "/") + Path + "?" + q.Encode()
}

// signedURL is u as its hash covers it: with the port explicit, as the
// server sees its own.
func signedURL(u *url.URL) *url.URL {
	if u.Port() != "" {
		return u
	}
	c := *u
	port := "80"
	if u.Scheme == "https" {
		port = "443"
	}
	c.Host = net.JoinHostPort(u.Hostname(), port)
	return &c
}

// get requests loc's segment and checks the response headers.
func (s *Shuffle) get(loc MapLocation) (*response, error) {
	ctx, cancel := context.WithCancelCause(s.ctx)
	timer := time.AfterFunc(s.cfg.ConnectTimeout+s.cfg.ReadTimeout, func() { cancel(ErrTimeout) })
	fail := func(err error) (*response, error) {
		timer.Stop()
		var ne net.Error
		if errors.Is(context.Cause(ctx), ErrTimeout) {
			err = fmt.Errorf("%w: no response within %v", ErrTimeout, s.cfg.ConnectTimeout+s.cfg.ReadTimeout)
		} else if errors.As(err, &ne) && ne.Timeout() {
			err = fmt.Errorf("%w: %v", ErrTimeout, err)
		}
		cancel(nil)
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.mapURL(loc), nil)
	if err != nil {
		return fail(err)
	}
	req.Header.Set(HeaderVersion, Version)
	urlHash := jobtoken.URLHash(s.cfg.Secret, signedURL(req.URL))
	req.Header.Set(jobtoken.HeaderURLHash, urlHash)
	resp, err := s.client.Do(req)
	if err != nil {
		r, err := fail(err)
		if s.ctx.Err() == nil {
			err = &connError{err}
		}
		return r, err
	}
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		if resp.StatusCode == http.StatusServiceUnavailable || resp.StatusCode == http.StatusTooManyRequests {
			be := &busyError{status: resp.StatusCode}
			if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && secs >= 0 {
				be.retryAfter = time.Duration(secs) * time.Second
			}
			return fail(be)
		}
		return fail(&statusError{status: resp.StatusCode, msg: strings.TrimSpace(string(msg))})
	}
	r := &response{body: &timedBody{rc: resp.Body, timer: timer, d: s.cfg.ReadTimeout, ctx: ctx, cancel: cancel}}
	bad := func(format string, args ...any) (*response, error) {
		r.body.Close()
		return nil, fmt.Errorf("bad response: "+format, args...)
	}
	h := resp.Header
	// Hadoop's Fetcher.verifyConnection: the reply proves the server
	// knows the job's secret.
	if rh := h.Get(jobtoken.HeaderReplyHash); rh == "" {
		return bad("security validation of TT Map output failed: no %s", jobtoken.HeaderReplyHash)
	} else if err := jobtoken.VerifyReply(s.cfg.Secret, urlHash, rh); err != nil {
		return bad("security validation of TT Map output failed: %v", err)
	}
	if v := h.Get(HeaderVersion); v != Version {
		return bad("protocol version %q, want %q", v, Version)
	}
	if m := h.Get(HeaderMap); m != loc.AttemptID {
		return bad("map %q, want %q", m, loc.AttemptID)
	}
	if red := h.Get(HeaderReduce); red != strconv.Itoa(s.cfg.Reduce) {
		return bad("reduce %q, want %d", red, s.cfg.Reduce)
	}
	r.raw, err = strconv.ParseInt(h.Get(HeaderRawLength), 10, 64)
	if err != nil || r.raw < 2 {
		return bad("raw length %q", h.Get(HeaderRawLength))
	}
	r.part, err = strconv.ParseInt(h.Get(HeaderPartLength), 10, 64)
	if err != nil || r.part < 5 || r.part != resp.ContentLength {
		return bad("part length %q, content length %d", h.Get(HeaderPartLength), resp.ContentLength)
	}
	if s.cfg.Codec == spill.None && r.raw != r.part-4 {
		return bad("raw length %d and part length %d of an uncompressed segment", r.raw, r.part)
	}
	timer.Reset(s.cfg.ReadTimeout)
	return r, nil
}

// fetch fetches loc's segment into memory (reserving it first, waiting
// for room if need be) or to a local file.
func (s *Shuffle) fetch(loc MapLocation) (*segment, error) {
	var reserved int64
	defer func() {
		if reserved > 0 {
			s.unreserve(reserved)
		}
	}()
	for {
		r, err := s.get(loc)
		if err != nil {
			return nil, err
		}
		if r.part > s.maxSingle {
			if reserved > 0 {
				s.unreserve(reserved)
				reserved = 0
			}
			return s.toDisk(loc, r)
		}
		if reserved != r.part {
			if reserved > 0 {
				s.unreserve(reserved)
				reserved = 0
			}
			if !s.tryReserve(r.part) {
				// Hadoop's fetcher also lets go of the connection while it
				// waits for memory, and asks again.
				r.body.Close()
				if err := s.reserve(r.part); err != nil {
					return nil, err
				}
				reserved = r.part
				continue
			}
			reserved = r.part
		}
		seg, err := s.toMemory(loc, r)
		if err != nil {
			return nil, err
		}
		reserved = 0 // now the segment's
		return seg, nil
	}
}

// toMemory reads the segment into memory and verifies it. The caller
// has reserved r.part bytes.
func (s *Shuffle) toMemory(loc MapLocation, r *response) (*segment, error) {
	defer r.body.Close()
	data := make([]byte, r.part)
	if n, err := io.ReadFull(r.body, data); err != nil {
		if err == io.ErrUnexpectedEOF {
			err = fmt.Errorf("connection closed after %d of %d bytes", n, r.part)
		}
		return nil, err
	}
	if err := r.body.expectEOF(); err != nil {
		return nil, err
	}
	it, err := spill.NewMemorySegment(data, s.cfg.Codec)
	if err != nil {
		return nil, err
	}
	return &segment{size: r.part, raw: r.raw, it: it, orig: true, mem: true}, nil
}

// trackWriter remembers its writer's error, so that a failure of the
// local disk is told from one of the network. It also hides the
// destination's ReadFrom, which would read in small pieces.
type trackWriter struct {
	w   io.Writer
	err error
}

func (t *trackWriter) Write(p []byte) (int, error) {
	n, err := t.w.Write(p)
	if err != nil && t.err == nil {
		t.err = err
	}
	return n, err
}

// newFile returns a new file name in the attempt's dirs (round-robin).
func (s *Shuffle) newFile(prefix string) string {
	n := s.fileSeq.Add(1)
	return filepath.Join(s.dirs[int(n)%len(s.dirs)], fmt.Sprintf("%s_%d.out", prefix, n))
}

// toDisk copies the segment to a local file, verifying its checksum.
func (s *Shuffle) toDisk(loc MapLocation, r *response) (*segment, error) {
	defer r.body.Close()
	path := s.newFile(fmt.Sprintf("map_%d", loc.MapIndex))
	f, err := vfs.Create(s.fs, path)
	if err != nil {
		return nil, &localError{err}
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	tw := &trackWriter{w: bw}
	err = spill.CopySegment(tw, r.body, r.part)
	var local error
	if tw.err != nil {
		local = tw.err
	} else if err == nil {
		if ferr := bw.Flush(); ferr != nil {
			local = ferr
		}
	}
	if cerr := f.Close(); cerr != nil && local == nil && err == nil {
		local = cerr
	}
	if err == nil && local == nil {
		err = r.body.expectEOF()
	}
	if err != nil || local != nil {
		s.fs.Remove(path)
		if local != nil {
			return nil, &localError{fmt.Errorf("writing %s: %w", path, local)}
		}
		return nil, err
	}
	return &segment{size: r.part, raw: r.raw, path: path, orig: true}, nil
}
