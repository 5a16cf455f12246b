package shuffle

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stratafs/strata/internal/jobtoken"
	"github.com/stratafs/strata/internal/spill"
	"github.com/stratafs/strata/internal/vfs"
)

// Path is the URL path a Server answers (Hadoop's ShuffleHandler also
// serves /mapOutput). A TaskTracker mounts the Server there:
// mux.Handle(shuffle.Path, srv).
const Path = "/mapOutput"

// HTTP headers of the protocol (docs/format/shuffle.md).
const (
	// HeaderVersion is sent by the fetcher with Version; a server refuses
	// another version with 400. A request without it is served (curl).
	HeaderVersion = "X-Strata-Shuffle-Version"
	// HeaderRawLength is the segment's IndexEntry.RawLength.
	HeaderRawLength = "X-Strata-Raw-Length"
	// HeaderPartLength is the segment's IndexEntry.PartLength, which is
	// also the Content-Length.
	HeaderPartLength = "X-Strata-Part-Length"
	// HeaderMap and HeaderReduce echo the map attempt and partition
	// served, so that a fetcher can check it got what it asked for.
	HeaderMap    = "X-Strata-Map"
	HeaderReduce = "X-Strata-Reduce"
)

// Messages of a refused (401) request: Hadoop's ShuffleHandler's.
const (
	MsgNoHash  = "fetcher cannot be authenticated"
	MsgBadHash = "Verification of the hashed request failed"
)

// Version is the protocol version this package speaks.
const Version = "1"

// Server defaults.
const (
	DefaultMaxConcurrent = 64
	DefaultRetryAfter    = time.Second
	DefaultWriteTimeout  = 60 * time.Second
)

// sendChunk is how much of a segment is sent under one write deadline.
const sendChunk = 4 << 20

// MapOutputInfo describes a finished map attempt's output
// (spill.Output): the file and its index.
type MapOutputInfo struct {
	JobID     string // e.g. job_202401011200_0001
	AttemptID string // the map attempt, e.g. attempt_202401011200_0001_m_000003_0
	// Path is the attempt's file.out.
	Path string
	// Index is the file's index, one entry per reduce partition. If nil,
	// Add reads it from Path + ".index" (spill.OutputIndexFile next to
	// spill.OutputFile).
	Index []spill.IndexEntry
}

// ServerConfig configures a Server. The zero value gives the defaults.
type ServerConfig struct {
	// Logger receives a line for every failed request (Warn for server
	// errors, Debug for the caller's). nil: no logging.
	Logger *slog.Logger
	// MaxConcurrent bounds the requests being served at once (open files
	// and disk streams); others get 503 with Retry-After. 0 means
	// DefaultMaxConcurrent; negative means no limit.
	MaxConcurrent int
	// RetryAfter is what a 503 tells the fetcher to wait, sent in whole
	// seconds (at least 1). 0 means DefaultRetryAfter.
	RetryAfter time.Duration
	// WriteTimeout bounds how long the client may take to accept each 4 MiB
	// of a segment; a stalled reducer then loses its connection instead of
	// holding a slot for ever. 0 means DefaultWriteTimeout; negative means
	// none.
	WriteTimeout time.Duration
	// FS is the file system the map outputs are read from; nil means
	// media.Default() (the OS, with emulated media where configured).
	// Segments go out with sendfile when FS gives an *os.File (or a paced
	// file whose bytes its vfs.Charger charges), through the File
	// otherwise (fault injection).
	FS vfs.FS
}

// ServerStats are a Server's running totals.
type ServerStats struct {
	Served int64 // segments sent completely (200)
	Bytes  int64 // body bytes written, complete segments or not
	Busy   int64 // requests refused with 503
	Failed int64 // other refusals and failed sends (4xx, 5xx, broken connections)
}

// Server serves finished map outputs to reducers over HTTP: a
// TaskTracker's half of the shuffle (Hadoop's ShuffleHandler). It is an
// http.Handler for GET (and HEAD) Path?job=J&map=A&reduce=R; the body is
// partition R's segment of attempt A's file.out, byte for byte as stored
// (docs/format/shuffle.md). Files are opened per request and sent with
// sendfile where the platform has it.
//
// Every request must carry the UrlHash header that job J's secret
// (SetSecret) signs it with, as Hadoop's SecureShuffleUtils computes it
// over the server's port, the path and the query; the reply carries
// ReplyHash. A request without a valid hash — or for a job the server
// has no secret of, so that nothing tells an unknown job from a known
// one — gets 401 and no data, before any map output is looked up.
//
// All methods are safe for concurrent use. The Server holds no files
// between requests and has nothing to close; removing a job's files
// (spill.RemoveOutput) is the caller's job, after RemoveJob.
type Server struct {
	fs           vfs.FS // never nil
	log          *slog.Logger
	sem          chan struct{} // nil: unlimited
	retryAfter   string
	writeTimeout time.Duration

	mu      sync.RWMutex
	jobs    map[string]map[string]*servedOutput // job → attempt → output
	secrets map[string][]byte                   // job → shuffle secret

	served, bytes, busy, failed atomic.Int64
}

type servedOutput struct {
	path  string
	index []spill.IndexEntry
}

// NewServer returns a Server with no map outputs.
func NewServer(cfg ServerConfig) *Server {
	s := &Server{fs: orDefault(cfg.FS), log: cfg.Logger, jobs: map[string]map[string]*servedOutput{},
		secrets: map[string][]byte{}}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	switch n := cfg.MaxConcurrent; {
	case n == 0:
		s.sem = make(chan struct{}, DefaultMaxConcurrent)
	case n > 0:
		s.sem = make(chan struct{}, n)
	}
	ra := cfg.RetryAfter
	if ra <= 0 {
		ra = DefaultRetryAfter
	}
	s.retryAfter = strconv.Itoa(max(1, int(math.Ceil(ra.Seconds()))))
	s.writeTimeout = cfg.WriteTimeout
	if s.writeTimeout == 0 {
		s.writeTimeout = DefaultWriteTimeout
	}
	return s
}

// Add makes a finished map attempt's output fetchable. Adding the same
// attempt again replaces it. It fails if a field is empty or the index
// cannot be read (an error wrapping spill.ErrCorrupt for a bad index
// file); the file itself is not opened until a reducer asks for it.
func (s *Server) Add(info MapOutputInfo) error {
	if info.JobID == "" || info.AttemptID == "" || info.Path == "" {
		return fmt.Errorf("shuffle: map output needs a job, an attempt and a path (got %q, %q, %q)", info.JobID, info.AttemptID, info.Path)
	}
	idx := info.Index
	if idx == nil {
		var err error
		if idx, err = spill.ReadIndexFS(s.fs, info.Path+".index"); err != nil {
			return fmt.Errorf("shuffle: map output %s of %s: %w", info.AttemptID, info.JobID, err)
		}
	}
	if len(idx) == 0 {
		return fmt.Errorf("shuffle: map output %s of %s has no partitions", info.AttemptID, info.JobID)
	}
	o := &servedOutput{path: info.Path, index: append([]spill.IndexEntry(nil), idx...)}
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.jobs[info.JobID]
	if m == nil {
		m = map[string]*servedOutput{}
		s.jobs[info.JobID] = m
	}
	m[info.AttemptID] = o
	return nil
}

// Remove forgets one map attempt (its output was lost or is obsolete);
// later requests for it get 404. Requests already being served finish.
func (s *Server) Remove(jobID, attemptID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m := s.jobs[jobID]; m != nil {
		delete(m, attemptID)
		if len(m) == 0 {
			delete(s.jobs, jobID)
		}
	}
}

// SetSecret sets the shuffle secret of a job (jobtoken.NewSecret's, from
// the JobTracker): only requests it signs are served. Setting it again
// replaces it; RemoveJob forgets it.
func (s *Server) SetSecret(jobID string, secret []byte) error {
	if jobID == "" || len(secret) == 0 {
		return fmt.Errorf("shuffle: a job secret needs a job and a secret (job %q, %d bytes)", jobID, len(secret))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.secrets[jobID] = append([]byte(nil), secret...)
	return nil
}

// RemoveJob forgets every map attempt of a finished job and its secret.
// Requests already being served finish (on Unix a removed file stays
// readable while open).
func (s *Server) RemoveJob(jobID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.jobs, jobID)
	delete(s.secrets, jobID)
}

// Stats returns the running totals.
func (s *Server) Stats() ServerStats {
	return ServerStats{Served: s.served.Load(), Bytes: s.bytes.Load(), Busy: s.busy.Load(), Failed: s.failed.Load()}
}

func (s *Server) secret(job string) []byte {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.secrets[job]
}

// verify checks r's UrlHash against job's secret, as Hadoop's
// ShuffleHandler.verifyRequest does, and returns the secret. The hash
// covers the port this server was reached on (its own, not one the
// client names), the path and the raw query.
func (s *Server) verify(r *http.Request, job string) ([]byte, string, error) {
	hash := r.Header.Get(jobtoken.HeaderURLHash)
	if hash == "" {
		return nil, "", errors.New(MsgNoHash)
	}
	secret := s.secret(job)
	if secret == nil {
		return nil, "", errors.New(MsgBadHash)
	}
	port := ""
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		if _, p, err := net.SplitHostPort(a.String()); err == nil {
			port = p
		}
	} else if _, p, err := net.SplitHostPort(r.Host); err == nil {
		port = p // no connection (a handler called directly)
	}
	u := &url.URL{Host: net.JoinHostPort("", port), Path: r.URL.Path, RawPath: r.URL.RawPath, RawQuery: r.URL.RawQuery}
	if port == "" {
		u.Host = ""
	}
	if err := jobtoken.VerifyURL(secret, u, hash); err != nil {
		return nil, "", errors.New(MsgBadHash)
	}
	return secret, hash, nil
}

func (s *Server) lookup(job, attempt string) *servedOutput {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.jobs[job][attempt]
}

func (s *Server) refuse(w http.ResponseWriter, r *http.Request, code int, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	s.failed.Add(1)
	level := slog.LevelDebug
	if code >= 500 {
		level = slog.LevelWarn
	}
	s.log.Log(r.Context(), level, "shuffle: refused request", "status", code, "url", r.URL.String(), "remote", r.RemoteAddr, "reason", msg)
	http.Error(w, "shuffle: "+msg, code)
}

// ServeHTTP answers one request; see the Server doc and
// docs/format/shuffle.md for the statuses.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != Path {
		s.refuse(w, r, http.StatusNotFound, "no such path %q", r.URL.Path)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		s.refuse(w, r, http.StatusMethodNotAllowed, "method %s not allowed", r.Method)
		return
	}
	if v := r.Header.Get(HeaderVersion); v != "" && v != Version {
		s.refuse(w, r, http.StatusBadRequest, "protocol version %q not supported (want %q)", v, Version)
		return
	}
	q := r.URL.Query()
	job, attempt, red := q.Get("job"), q.Get("map"), q.Get("reduce")
	if job == "" || attempt == "" || red == "" {
		s.refuse(w, r, http.StatusBadRequest, "parameters job, map and reduce are required")
		return
	}
	secret, urlHash, err := s.verify(r, job)
	if err != nil {
		// Logged at Warn, as Hadoop's "Shuffle failure"; the body is the
		// bare message, as Hadoop's sendError.
		s.failed.Add(1)
		s.log.Warn("shuffle: refused unauthenticated request", "status", http.StatusUnauthorized, "job", job,
			"remote", r.RemoteAddr, "reason", err.Error())
		http.Error(w, err.Error(), http.StatusUnauthorized)
		return
	}
	reduce, err := strconv.Atoi(red)
	if err != nil || reduce < 0 {
		s.refuse(w, r, http.StatusBadRequest, "bad reduce %q", red)
		return
	}
	o := s.lookup(job, attempt)
	if o == nil {
		s.refuse(w, r, http.StatusNotFound, "no map output %s of %s", attempt, job)
		return
	}
	if reduce >= len(o.index) {
		s.refuse(w, r, http.StatusBadRequest, "reduce %d out of range: map output %s has %d partitions", reduce, attempt, len(o.index))
		return
	}
	if s.sem != nil {
		select {
		case s.sem <- struct{}{}:
			defer func() { <-s.sem }()
		default:
			s.busy.Add(1)
			w.Header().Set("Retry-After", s.retryAfter)
			http.Error(w, "shuffle: too many requests", http.StatusServiceUnavailable)
			return
		}
	}
	e := o.index[reduce]
	f, err := vfs.Open(s.fs, o.path)
	if err != nil {
		code := http.StatusInternalServerError
		if errors.Is(err, os.ErrNotExist) {
			code = http.StatusNotFound
		}
		s.refuse(w, r, code, "map output %s: %v", attempt, err)
		return
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil {
		s.refuse(w, r, http.StatusInternalServerError, "map output %s: %v", attempt, err)
		return
	} else if st.Size() < e.Offset+e.PartLength {
		s.refuse(w, r, http.StatusInternalServerError, "map output %s is %d bytes, partition %d ends at %d", attempt, st.Size(), reduce, e.Offset+e.PartLength)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/octet-stream")
	h.Set("Content-Length", strconv.FormatInt(e.PartLength, 10))
	h.Set(HeaderVersion, Version)
	h.Set(HeaderRawLength, strconv.FormatInt(e.RawLength, 10))
	h.Set(HeaderPartLength, strconv.FormatInt(e.PartLength, 10))
	h.Set(HeaderMap, attempt)
	h.Set(HeaderReduce, strconv.Itoa(reduce))
	h.Set(jobtoken.HeaderReplyHash, jobtoken.ReplyHash(secret, urlHash))
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		s.served.Add(1)
		return
	}
	// An *os.File goes to the connection with sendfile (a paced one with
	// its bytes charged here, as sendfile bypasses the pacing); any other
	// File is read through, so that what wraps it sees every byte.
	var src io.ReadSeeker = f
	of, charger, zeroCopy := vfs.OSFile(s.fs, f)
	if zeroCopy {
		src = of
	}
	if _, err := src.Seek(e.Offset, io.SeekStart); err != nil {
		s.failed.Add(1)
		s.log.Warn("shuffle: seek failed", "map", attempt, "err", err)
		return
	}
	// io.CopyN hands the ResponseWriter an *io.LimitedReader over the
	// *os.File, which net/http passes to the TCP connection's ReadFrom:
	// sendfile(2) on Linux.
	rc := http.NewResponseController(w)
	// (net/http clears the write deadline after the response.)
	for left := e.PartLength; left > 0; {
		n := min(left, sendChunk)
		if charger != nil {
			if err := charger.Charge(o.path, e.Offset+e.PartLength-left, n, false); err != nil {
				s.failed.Add(1)
				s.log.Warn("shuffle: reading map output failed", "map", attempt, "err", err)
				return
			}
		}
		if s.writeTimeout > 0 {
			rc.SetWriteDeadline(time.Now().Add(s.writeTimeout))
		}
		c, err := io.CopyN(w, src, n)
		s.bytes.Add(c)
		left -= c
		if err != nil {
			s.failed.Add(1)
			s.log.Debug("shuffle: send failed", "map", attempt, "reduce", reduce, "remote", r.RemoteAddr, "sent", e.PartLength-left, "err", err)
			return
		}
	}
	s.served.Add(1)
}
