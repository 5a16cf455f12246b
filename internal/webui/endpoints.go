package webui

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/pprof"
	"path"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Bean is one MBean of /jmx: "name" and "modelerType" and its
// attributes, as Hadoop's JMXJsonServlet writes them.
type Bean map[string]any

// Endpoints are the handlers every daemon serves beside its pages.
type Endpoints struct {
	// Beans returns the daemon's beans for /jmx (read on each request).
	Beans func() []Bean
	// Metrics, when set, is served at /metrics for Prometheus.
	Metrics prometheus.Gatherer
	// PProf serves net/http/pprof at /debug/pprof/ (strata.http.pprof.enabled).
	PProf bool
}

// Register adds /static/webui/, /jmx, /stacks, /metrics (with Metrics)
// and /debug/pprof/ (with PProf) to mux.
func (e Endpoints) Register(mux *http.ServeMux) {
	mux.Handle("GET "+StaticPrefix, Static())
	if e.Beans != nil {
		mux.HandleFunc("GET /jmx", func(w http.ResponseWriter, r *http.Request) { ServeJMX(w, r, e.Beans()) })
	}
	mux.Handle("GET /stacks", &Stacks{})
	if e.Metrics != nil {
		mux.Handle("GET /metrics", promhttp.HandlerFor(e.Metrics, promhttp.HandlerOpts{}))
	}
	if e.PProf {
		mux.HandleFunc("GET /debug/pprof/", pprof.Index)
		mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	}
}

// ServeJMX writes beans as {"beans":[...]}. As Hadoop's servlet,
// ?qry=PATTERN keeps the beans whose name matches (a * matches any run of
// characters, "Hadoop:service=NameNode,name=*"), and ?get=BEAN::ATTR
// answers one attribute.
func ServeJMX(w http.ResponseWriter, r *http.Request, beans []Bean) {
	q := r.URL.Query()
	if get := q.Get("get"); get != "" {
		name, attr, ok := strings.Cut(get, "::")
		if !ok {
			http.Error(w, "get: expected BEAN::ATTRIBUTE", http.StatusBadRequest)
			return
		}
		for _, b := range beans {
			if b["name"] == name {
				if v, ok := b[attr]; ok {
					writeJSON(w, map[string]any{"beans": []Bean{{"name": name, attr: v}}})
					return
				}
			}
		}
		w.WriteHeader(http.StatusNotFound)
		writeJSON(w, map[string]any{"beans": []Bean{}})
		return
	}
	out := []Bean{}
	qry := q.Get("qry")
	for _, b := range beans {
		name, _ := b["name"].(string)
		if qry == "" || matchBean(qry, name) {
			out = append(out, b)
		}
	}
	writeJSON(w, map[string]any{"beans": out})
}

// matchBean matches an ObjectName pattern: * for any run of characters.
func matchBean(pattern, name string) bool {
	// path.Match's * stops at '/', which bean names do not contain; its
	// other metacharacters are escaped.
	p := strings.NewReplacer(`\`, `\\`, `?`, `\?`, `[`, `\[`).Replace(pattern)
	ok, err := path.Match(p, name)
	return err == nil && ok
}

// maxStacks bounds a /stacks dump: the dump stops the world while it is
// taken, so a larger one would pause the daemon too long (the rest is
// cut, with a note).
const maxStacks = 8 << 20

// stacksInterval is the least time between two dumps of one daemon.
const stacksInterval = time.Second

// Stacks serves every goroutine's stack, as Hadoop's /stacks writes its
// threads'. It is on by default as Hadoop's is (operators read it when a
// daemon hangs, when there is no time to turn a key on and restart), but
// a dump stops the world, so it is bounded instead: at most maxStacks, one
// dump at a time and at most one per stacksInterval; a request beyond
// that is answered 429 with Retry-After. now is the clock (nil:
// time.Now).
type Stacks struct {
	mu   sync.Mutex
	busy bool
	last time.Time
	now  func() time.Time
}

func (s *Stacks) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	now := time.Now
	if s.now != nil {
		now = s.now
	}
	s.mu.Lock()
	if s.busy || (!s.last.IsZero() && now().Sub(s.last) < stacksInterval) {
		s.mu.Unlock()
		w.Header().Set("Retry-After", "1")
		http.Error(w, "a stack dump was taken less than a second ago; try again", http.StatusTooManyRequests)
		return
	}
	s.busy = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.busy, s.last = false, now()
		s.mu.Unlock()
	}()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Write(dumpStacks(maxStacks))
}

// dumpStacks is every goroutine's stack, cut at limit bytes with a note.
func dumpStacks(limit int) []byte {
	buf := make([]byte, min(1<<20, limit))
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return buf[:n]
		}
		if len(buf) >= limit {
			return append(buf[:n], fmt.Sprintf("\n... cut at %d bytes\n", limit)...)
		}
		buf = make([]byte, min(2*len(buf), limit))
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

// RuntimeBeans are the JVM beans monitoring tools read, from Go's
// runtime: java.lang:type=Memory's heap figures and
// Hadoop:service=<service>,name=JvmMetrics.
func RuntimeBeans(service string) []Bean {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return []Bean{
		{"name": "java.lang:type=Memory", "modelerType": "sun.management.MemoryImpl",
			"HeapMemoryUsage": map[string]any{"committed": ms.HeapSys, "init": 0, "max": ms.Sys, "used": ms.HeapAlloc}},
		{"name": "Hadoop:service=" + service + ",name=JvmMetrics", "modelerType": "JvmMetrics",
			"MemHeapUsedM": float64(ms.HeapAlloc) / (1 << 20), "MemHeapCommittedM": float64(ms.HeapSys) / (1 << 20),
			"GcCount": ms.NumGC, "GcTimeMillis": ms.PauseTotalNs / 1e6, "ThreadsRunnable": runtime.NumGoroutine()},
	}
}
