package webui

import (
	"encoding/json"
	"net/http"
	"net/http/pprof"
	"path"
	"runtime"
	"strings"

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
	mux.HandleFunc("GET /stacks", ServeStacks)
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

// ServeStacks writes every goroutine's stack, as Hadoop's /stacks writes
// its threads'.
func ServeStacks(w http.ResponseWriter, r *http.Request) {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) || len(buf) >= 64<<20 {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Write(buf)
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
