package datanode

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/stratafs/strata/internal/datanode/fsdataset"
	"github.com/stratafs/strata/internal/webui"
)

// The DataNode's web page (Hadoop's datanode.html): its volumes, transfer
// threads, block scanner and the latest warnings and errors.

// recentErrors is how many warnings and errors the page keeps.
const recentErrors = 50

// scanProgress is the block scanner's progress through its current pass.
type scanProgress struct {
	mu                        sync.Mutex
	passStart, lastPassEnd    time.Time
	replicas, done            int
	bytes, doneBytes          int64
	passes, corrupt, corrupt0 int64
}

func (s *scanProgress) startPass(report map[string][]fsdataset.ReplicaInfo) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.passStart, s.replicas, s.done, s.bytes, s.doneBytes = time.Now(), 0, 0, 0, 0
	for _, infos := range report {
		for _, info := range infos {
			if info.State == fsdataset.Finalized {
				s.replicas++
				s.bytes += info.NumBytes
			}
		}
	}
}

func (s *scanProgress) scanned(n int64, corrupt bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.done++
	s.doneBytes += n
	if corrupt {
		s.corrupt++
	}
}

func (s *scanProgress) endPass() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.passes++
	s.lastPassEnd = time.Now()
	s.passStart = time.Time{}
}

// ScanStatus is the block scanner's state, for the page and /jmx.
type ScanStatus struct {
	Enabled                bool
	Period                 time.Duration
	Scanning               bool
	PassStart, LastPassEnd time.Time
	Replicas, Done         int
	Bytes, DoneBytes       int64
	Passes, CorruptFound   int64
}

// ScanStatus reports the block scanner's progress.
func (d *DataNode) ScanStatus() ScanStatus {
	s := &d.scan
	s.mu.Lock()
	defer s.mu.Unlock()
	return ScanStatus{Enabled: d.cfg.ScanPeriod >= 0, Period: d.cfg.ScanPeriod, Scanning: !s.passStart.IsZero(),
		PassStart: s.passStart, LastPassEnd: s.lastPassEnd, Replicas: s.replicas, Done: s.done,
		Bytes: s.bytes, DoneBytes: s.doneBytes, Passes: s.passes, CorruptFound: s.corrupt}
}

// RecentErrors are the latest warnings and errors the DataNode logged,
// newest first.
func (d *DataNode) RecentErrors() []webui.LogEntry { return d.errs.Entries() }

type dnPage struct {
	Status
	MaxXceivers int
	Scan        ScanStatus
	Errors      []webui.LogEntry
	Blocks      int
	Capacity    int64
	Used        int64
	Remaining   int64
	Failed      int
	NameNodes   []string
}

func (d *DataNode) pageData() dnPage {
	p := dnPage{Status: d.Status(), MaxXceivers: d.cfg.MaxTransferThreads, Scan: d.ScanStatus(), Errors: d.RecentErrors(),
		NameNodes: d.cfg.NameNodeAddrs}
	for _, v := range p.Volumes {
		p.Blocks += v.NumBlocks
		if v.Failed {
			p.Failed++
			continue
		}
		p.Capacity += v.Capacity
		p.Used += v.DfsUsed
		p.Remaining += v.Remaining
	}
	return p
}

var dnPageTmpl = webui.Parse(`{{define "content"}}
<h2>Overview</h2>
<table class="kv" id="dninfo">
<tr><th>DataNode UUID</th><td>{{.UUID}}</td></tr>
<tr><th>Data transfer address</th><td>{{.XferAddr}}</td></tr>
<tr><th>NameNodes</th><td>{{join .NameNodes ", "}}</td></tr>
<tr><th>Block pool</th><td>{{.Pool}}</td></tr>
<tr><th>Block access tokens</th><td>{{if .BlockTokens}}checked{{else}}off{{end}}{{if .BlockKeys}} (keys received){{end}}</td></tr>
<tr><th>Transfer threads in use</th><td id="xceivers">{{.Xceivers}} of {{.MaxXceivers}}</td></tr>
<tr><th>Blocks</th><td id="blockcount">{{.Blocks}}</td></tr>
<tr><th>Capacity</th><td>{{bytes .Capacity}}: {{usage .Used .Remaining .Capacity}}, {{bytes .Remaining}} remaining</td></tr>
<tr><th>Failed volumes</th><td{{if gt .Failed 0}} class="bad"{{end}}>{{.Failed}}</td></tr>
<tr><th>Bytes written / read</th><td>{{bytes .Written}} / {{bytes .Read}}</td></tr>
<tr><th>Short-circuit reads</th><td>{{.ShortCircuit}}</td></tr>
<tr><th>Checksum errors</th><td{{if gt .Checksums 0}} class="bad"{{end}}>{{.Checksums}}</td></tr>
<tr><th>Refused tokens / recovered panics</th><td>{{.TokenRefusals}} / {{.Panics}}</td></tr>
</table>
<h2>Volumes</h2>
<table class="sortable" id="volumes">
<thead><tr><th>Directory</th><th>Storage type</th><th>Storage ID</th><th>State</th><th class="num">Capacity</th><th>Used</th><th class="num">Remaining</th><th class="num">Blocks</th></tr></thead>
<tbody>{{range .Volumes}}<tr><td>{{.Path}}</td><td>{{.Type}}</td><td>{{.StorageID}}</td>
<td>{{if .Failed}}<span class="state FAILED">FAILED</span>{{else}}<span class="ok">in service</span>{{end}}</td>
<td class="num" data-sort="{{.Capacity}}">{{bytes .Capacity}}</td><td data-sort="{{.DfsUsed}}">{{usage .DfsUsed .Remaining .Capacity}}</td>
<td class="num" data-sort="{{.Remaining}}">{{bytes .Remaining}}</td><td class="num">{{.NumBlocks}}</td></tr>{{end}}</tbody></table>
<h2>Block scanner</h2>
{{with .Scan}}{{if .Enabled}}<table class="kv" id="scanner">
<tr><th>Period</th><td>{{dur .Period}}</td></tr>
<tr><th>Current pass</th><td>{{if .Scanning}}{{.Done}} of {{.Replicas}} replicas, {{bytes .DoneBytes}} of {{bytes .Bytes}} {{bar .DoneBytes .Bytes}} (started {{since .PassStart}}){{else}}idle{{end}}</td></tr>
<tr><th>Passes completed</th><td>{{.Passes}}{{if .Passes}}, last {{since .LastPassEnd}}{{end}}</td></tr>
<tr><th>Corrupt replicas found</th><td{{if gt .CorruptFound 0}} class="bad"{{end}}>{{.CorruptFound}}</td></tr>
</table>{{else}}<p class="muted">The block scanner is off (dfs.datanode.scan.period.hours &lt; 0).</p>{{end}}{{end}}
<h2>Recent warnings and errors</h2>
<table class="sortable" id="errors"><thead><tr><th>Time</th><th>Level</th><th>Message</th></tr></thead><tbody>
{{range .Errors}}<tr><td>{{ts .Time}}</td><td>{{.Level}}</td><td class="wrap">{{.Message}}<span class="muted">{{.Attrs}}</span></td></tr>
{{else}}<tr><td colspan="3" class="muted">none since start</td></tr>{{end}}</tbody></table>
{{end}}`, nil)

func (d *DataNode) registerUI(mux *http.ServeMux, reg *prometheus.Registry) {
	page := func(w http.ResponseWriter, r *http.Request) {
		webui.Render(w, dnPageTmpl, webui.Page{Daemon: "DataNode " + d.XferAddr(), Title: "DataNode " + d.XferAddr(),
			Nav: []webui.Link{{Name: "Overview", Href: "/"}}, Active: "/", Refresh: 5, Data: d.pageData()})
	}
	mux.HandleFunc("GET /{$}", page)
	mux.HandleFunc("GET /datanode.html", page)
	webui.Endpoints{Beans: d.jmxBeans, Metrics: reg, PProf: d.cfg.PProf}.Register(mux)
}

// jmxBeans are Hadoop's DataNode beans with the attributes monitoring
// tools read.
func (d *DataNode) jmxBeans() []webui.Bean {
	p := d.pageData()
	vols := map[string]any{}
	for _, v := range p.Volumes {
		vols[v.Path] = map[string]any{"usedSpace": v.DfsUsed, "freeSpace": v.Remaining, "reservedSpace": d.cfg.Reserved,
			"numBlocks": v.NumBlocks, "storageType": v.Type.String(), "failed": v.Failed}
	}
	vj, _ := json.Marshal(vols)
	nns := map[string]string{}
	for _, a := range d.cfg.NameNodeAddrs {
		nns[a] = p.Pool
	}
	nj, _ := json.Marshal(nns)
	beans := []webui.Bean{
		{"name": "Hadoop:service=DataNode,name=DataNodeInfo", "modelerType": "org.apache.hadoop.hdfs.server.datanode.DataNode",
			"Version": "strata", "SoftwareVersion": "strata", "DatanodeUuid": p.UUID, "XceiverCount": p.Xceivers,
			"DataXceiverActiveCount": p.Xceivers, "XmitsInProgress": 0, "VolumeInfo": string(vj), "NamenodeAddresses": string(nj),
			"ClusterId": d.clusterIDOrEmpty(), "DataPort": d.xferPort(), "HttpPort": d.httpPort()},
		{"name": "Hadoop:service=DataNode,name=FSDatasetState", "modelerType": "FSDatasetState",
			"Capacity": p.Capacity, "DfsUsed": p.Used, "Remaining": p.Remaining, "NumFailedVolumes": p.Failed,
			"NumBlocksCached": 0, "NumBlocks": p.Blocks, "StorageInfo": p.UUID},
		{"name": "Hadoop:service=DataNode,name=DataNodeActivity-" + strings.ReplaceAll(p.XferAddr, ":", "-"), "modelerType": "DataNodeActivity",
			"BytesWritten": p.Written, "BytesRead": p.Read, "BlocksWritten": d.stats.BlocksWritten.Load(),
			"BlocksRead": d.stats.BlocksRead.Load(), "BlocksReplicated": d.stats.BlocksReplicated.Load(),
			"BlocksVerified": p.Scan.Done, "BlockVerificationFailures": p.Scan.CorruptFound, "ChecksumErrors": p.Checksums},
	}
	return append(beans, webui.RuntimeBeans("DataNode")...)
}

func (d *DataNode) clusterIDOrEmpty() string {
	d.poolMu.Lock()
	defer d.poolMu.Unlock()
	return d.clusterID
}

// cors lets the NameNode's browse page send an upload's data here (a
// cross-origin PUT, after the NameNode's CREATE answered with this
// DataNode's address, as Hadoop's explorer does). Only pages of exactly
// the NameNodes' web UIs may (scheme, host and port; see allowedOrigins),
// or of an origin Config.CORSOrigins lists: the request's own authority
// is still the signed redirect token in the URL.
func (d *DataNode) cors(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin != "" && d.origins.allowed(origin, d.allowedOrigins) {
			w.Header().Set("Access-Control-Allow-Origin", origin)
			w.Header().Set("Vary", "Origin")
			if r.Method == http.MethodOptions {
				w.Header().Set("Access-Control-Allow-Methods", "GET, PUT, POST")
				w.Header().Set("Access-Control-Allow-Headers", "Content-Type")
				w.Header().Set("Access-Control-Max-Age", "600")
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// originCache is the set of allowed origins, rebuilt at most once per
// originTTL (it resolves the NameNodes' host names).
type originCache struct {
	mu    sync.Mutex
	at    time.Time
	set   map[string]bool
	clock func() time.Time
}

const originTTL = time.Minute

func (c *originCache) allowed(origin string, build func() map[string]bool) bool {
	now := time.Now()
	if c.clock != nil {
		now = c.clock()
	}
	c.mu.Lock()
	if c.set == nil || now.Sub(c.at) > originTTL {
		c.set, c.at = build(), now
	}
	key, ok := normalOrigin(origin)
	ok = ok && c.set[key]
	c.mu.Unlock()
	return ok
}

// normalOrigin is origin as "scheme://host:port", lower case, with the
// scheme's port when it names none; false for what is not an http(s)
// origin.
func normalOrigin(origin string) (string, bool) {
	u, err := url.Parse(strings.TrimSuffix(origin, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" || u.User != nil || u.RawQuery != "" {
		return "", false
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	return strings.ToLower(u.Scheme + "://" + net.JoinHostPort(u.Hostname(), port)), true
}

// allowedOrigins are "http://host:port" for each NameNode web UI address
// the DataNode knows (Config.NameNodeHTTPAddrs): the address as written,
// and the addresses its host name resolves to, so a page reached by IP
// matches a NameNode configured by name. A UI bound to a wildcard host
// (0.0.0.0) is reached by the host names of the NameNodes' RPC
// addresses. Config.CORSOrigins are added as they are.
func (d *DataNode) allowedOrigins() map[string]bool {
	set := map[string]bool{}
	add := func(host, port string) {
		set["http://"+strings.ToLower(net.JoinHostPort(host, port))] = true
		if net.ParseIP(host) != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		ips, _ := net.DefaultResolver.LookupHost(ctx, host)
		for _, ip := range ips {
			set["http://"+net.JoinHostPort(ip, port)] = true
		}
	}
	for _, a := range d.cfg.NameNodeHTTPAddrs {
		host, port, err := net.SplitHostPort(strings.TrimSpace(a))
		if err != nil {
			continue
		}
		if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
			for _, rpc := range d.cfg.NameNodeAddrs {
				if h, _, err := net.SplitHostPort(rpc); err == nil {
					add(h, port)
				}
			}
			continue
		}
		add(host, port)
	}
	for _, o := range d.cfg.CORSOrigins {
		if key, ok := normalOrigin(strings.TrimSpace(o)); ok {
			set[key] = true
		}
	}
	return set
}
