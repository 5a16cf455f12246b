package namenode

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/stratafs/strata/internal/httpauth"
	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/namenode/editlog"
	"github.com/stratafs/strata/internal/webhdfs"
)

// Timeouts of the HTTP server (web UI, /status, /jmx, /metrics, /fsck and
// WebHDFS). Every request and response is small — WebHDFS's data goes to
// DataNodes by redirect — except fsck's report and LISTSTATUS, which are
// streamed and give each write its own httpWriteTimeout. Hadoop's Jetty
// has only an idle timeout (hadoop.http.idle_timeout.ms, Config's
// HTTPIdleTimeout); these bound the rest.
const (
	httpHeaderTimeout = 10 * time.Second // to send the request's headers
	httpReadTimeout   = time.Minute      // to send the whole request
	httpWriteTimeout  = time.Minute      // to read the response (each chunk of a streamed one)
)

// FsStats is the cluster's capacity as the NameNode knows it from DataNode
// reports, in bytes.
type FsStats struct {
	Capacity, Used, Remaining int64
	LiveDataNodes             int
}

// fsStats sums the live DataNodes' storage reports.
func (n *NameNode) fsStats() FsStats {
	var st FsStats
	live := map[string]bool{}
	for _, s := range n.ns.Storages() {
		if s.Dead || s.Failed {
			continue
		}
		live[s.DatanodeUUID] = true
		st.Capacity += s.Capacity
		st.Used += s.Used
		st.Remaining += s.Remaining
	}
	st.LiveDataNodes = len(live)
	return st
}

// Status is the JSON document served at /status (and shown on /).
type Status struct {
	RPCAddress     string    `json:"rpcAddress"`
	HTTPAddress    string    `json:"httpAddress"`
	Started        time.Time `json:"started"`
	ClusterID      string    `json:"clusterId"`
	NamespaceID    uint32    `json:"namespaceId"`
	NameDir        string    `json:"nameDir"`
	SafeMode       bool      `json:"safeMode"`
	Files          int64     `json:"files"`
	Directories    int64     `json:"directories"`
	LastTxID       uint64    `json:"lastTxId"`
	Checkpoints    int       `json:"checkpoints"`
	EditSyncs      uint64    `json:"editLogSyncs"`
	EditRecords    uint64    `json:"editLogRecords"`
	RPCCalls       int64     `json:"rpcCalls"`
	RPCConnections int64     `json:"rpcConnections"`
	// HA is the member's view of its Raft group; nil without a nameservice.
	HA *HAStats `json:"ha,omitempty"`
	// NameDirs is every storage directory's state (editlog.Log.Dirs).
	NameDirs []editlog.DirStatus `json:"nameDirs"`
	FsStats
}

// Status reports the NameNode's state, as served at /status.
func (n *NameNode) Status() Status {
	files, dirs := n.ns.Counts()
	es := n.edit.Stats()
	v := n.edit.Version()
	n.cpMu.Lock()
	cps := n.checkpoints
	n.cpMu.Unlock()
	var ha *HAStats
	lastTx := n.edit.LastTxID()
	if n.ha != nil {
		st := n.ha.stats()
		st.Peers = n.ha.peers(st.CommitIndex)
		ha, lastTx = &st, st.AppliedTxID
	}
	return Status{
		HA: ha, RPCAddress: n.RPCAddr(), HTTPAddress: n.HTTPAddr(), Started: n.started,
		ClusterID: v.ClusterID, NamespaceID: v.NamespaceID, NameDir: n.cfg.NameDir,
		SafeMode: n.ns.InSafeMode(), Files: files, Directories: dirs,
		LastTxID: lastTx, Checkpoints: cps, EditSyncs: es.Syncs, EditRecords: es.Records,
		RPCCalls: n.rpc.Stats().Calls.Load(), RPCConnections: n.rpc.Stats().Connections.Load(),
		NameDirs: n.edit.Dirs(), FsStats: n.fsStats(),
	}
}

// httpHandler routes the HTTP port. auth (hadoop.http.authentication.*)
// guards every path but the NameNode-to-NameNode ones under haPathPrefix
// (haGuard's in secure mode),
// as Hadoop's filter guards its servlets; webAuth, when not nil, guards
// WebHDFS and the pages that act as a user (actsAsUser) in auth's place
// (secure mode, httpFilters): as Hadoop's JspHelper.getUGI, secure mode
// acts only as a user the filter authenticated, never as user.name.
func (n *NameNode) httpHandler(auth, webAuth *httpauth.Filter) http.Handler {
	mux := http.NewServeMux()
	n.registerUI(mux) // pages, /jmx, /metrics, /stacks (webui.go)
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, n.Status())
	})
	mux.HandleFunc("GET /fsck", n.serveFsck)
	mux.HandleFunc("GET "+versionPath, n.serveVersion)
	mux.HandleFunc("GET "+digestPath, n.serveDigest)
	if n.ha != nil {
		mux.HandleFunc("GET "+memberPath, n.serveMember)
	}
	mux.Handle(webhdfsPrefix, n.webhdfs())
	var ha http.Handler = mux // haPathPrefix: open, or NameNodes only
	if n.cfg.secure() {
		kerb := webAuth
		if kerb == nil {
			kerb = auth // the same Kerberos filter guards everything
		}
		ha = n.haGuard(kerb, mux)
	}
	pages := auth.WrapExcept(mux, haPathPrefix)
	if webAuth == nil {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch {
			case strings.HasPrefix(r.URL.Path, haPathPrefix):
				ha.ServeHTTP(w, r)
			case n.cfg.secure() && strings.HasPrefix(r.URL.Path, webhdfsPrefix) && hasDelegation(r.URL.RawQuery):
				mux.ServeHTTP(w, r) // the token authenticates (below)
			default:
				pages.ServeHTTP(w, r)
			}
		})
	}
	asUser := webAuth.Wrap(mux)
	if webAuth == noWebHDFSKeytab {
		// Secure mode without an HTTP keytab: these would trust
		// user.name beside Kerberos RPC, so they serve nothing.
		asUser = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			err := ipc.Errorf(webhdfs.ClassSecurity, "%s needs SPNEGO when %s is kerberos: set %s (or %s)",
				r.URL.Path, httpauth.KeySecurityAuthentication, httpauth.KeyWebHDFSKeytab, httpauth.KeyKeytab)
			if strings.HasPrefix(r.URL.Path, webhdfsPrefix) {
				webhdfs.WriteError(w, err)
				return
			}
			http.Error(w, err.Error(), http.StatusForbidden)
		})
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasPrefix(r.URL.Path, haPathPrefix):
			ha.ServeHTTP(w, r)
		case strings.HasPrefix(r.URL.Path, webhdfsPrefix) && hasDelegation(r.URL.RawQuery):
			// As Hadoop's WebHDFS AuthFilter: a request with a
			// delegation token skips SPNEGO; webAuthenticate verifies
			// the token and acts as its owner.
			mux.ServeHTTP(w, r)
		case strings.HasPrefix(r.URL.Path, webhdfsPrefix) || actsAsUser[r.URL.Path]:
			asUser.ServeHTTP(w, r)
		default:
			pages.ServeHTTP(w, r)
		}
	})
}

// hasDelegation reports whether a raw query names a delegation parameter,
// matched as package webhdfs parses names (case-insensitively, escaped
// or not). webAuthenticate refuses a request that got past the filter
// this way without a token webhdfs decoded.
func hasDelegation(rawQuery string) bool {
	for pair := range strings.SplitSeq(rawQuery, "&") {
		k, _, _ := strings.Cut(pair, "=")
		if u, err := url.QueryUnescape(k); err == nil && strings.EqualFold(u, "delegation") {
			return true
		}
	}
	return false
}

// actsAsUser are the paths besides WebHDFS that run as the request's
// user (browse, fsck): in secure mode they need the WebHDFS filter.
var actsAsUser = map[string]bool{"/explorer": true, "/explorer.html": true, "/fsckui": true, "/fsck": true}

// noWebHDFSKeytab is httpFilters' WebHDFS filter in secure mode when no
// keytab is configured for it.
var noWebHDFSKeytab = new(httpauth.Filter)

const webhdfsPrefix = "/webhdfs/v1/"

// httpFilters builds the HTTP port's filters: HTTPAuth's, and in secure
// mode WebHDFSAuth's for WebHDFS unless HTTPAuth already is the same
// Kerberos filter. Both sign cookies with one secret, so a cookie from
// the pages is good for WebHDFS and the other way round.
func (n *NameNode) httpFilters() (auth, webAuth *httpauth.Filter, err error) {
	hc, wc := n.cfg.HTTPAuth, n.cfg.WebHDFSAuth
	hc.Addr, wc.Addr = n.cfg.HTTPAddr, n.cfg.HTTPAddr
	if hc.Log == nil {
		hc.Log = n.log
	}
	if wc.Log == nil {
		wc.Log = n.log
	}
	separate := wc.Type == httpauth.TypeKerberos &&
		(hc.Type != httpauth.TypeKerberos || hc.Principal != wc.Principal || hc.Keytab != wc.Keytab)
	if separate && hc.Secret == nil && hc.SecretFile == "" {
		secret := make([]byte, 32)
		if _, err := rand.Read(secret); err != nil {
			return nil, nil, err
		}
		hc.Secret = secret
		if wc.Secret == nil && wc.SecretFile == "" {
			wc.Secret = secret
		}
	}
	if auth, err = httpauth.New(hc); err != nil {
		return nil, nil, err
	}
	if !separate {
		return auth, nil, nil
	}
	if wc.Keytab == "" {
		n.log.Warn("namenode: WebHDFS disabled: secure mode needs a SPNEGO keytab", "key", httpauth.KeyWebHDFSKeytab)
		return auth, noWebHDFSKeytab, nil
	}
	if webAuth, err = httpauth.New(wc); err != nil {
		return nil, nil, fmt.Errorf("WebHDFS (%s is kerberos): %w", httpauth.KeySecurityAuthentication, err)
	}
	return auth, webAuth, nil
}

// haPathPrefix holds the NameNode-to-NameNode HTTP endpoints (HA status,
// image digests, -bootstrapStandby's storage version): outside the
// hadoop.http.authentication filter; in secure mode only NameNode
// principals reach them (ha_http_auth.go).
const haPathPrefix = "/strata/ha/"

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

// nameDirStatuses is NameNodeInfo's NameDirStatuses: as in Hadoop, a
// JSON document in a string, {"active":{dir:type},"failed":{dir:type}};
// every strata directory holds images and edits.
func nameDirStatuses(dirs []editlog.DirStatus) string {
	m := map[string]map[string]string{"active": {}, "failed": {}}
	for _, d := range dirs {
		state := "active"
		if !d.Active {
			state = "failed"
		}
		m[state][d.Path] = "IMAGE_AND_EDITS"
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// registry builds the Prometheus metrics, read live from the daemon's
// counters on each scrape.
func (n *NameNode) registry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	gauge := func(name, help string, f func() float64) {
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "strata", Subsystem: "namenode", Name: name, Help: help}, f))
	}
	counter := func(name, help string, f func() float64) {
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: "strata", Subsystem: "namenode", Name: name, Help: help}, f))
	}
	gauge("files", "Files in the namespace.", func() float64 { f, _ := n.ns.Counts(); return float64(f) })
	gauge("directories", "Directories in the namespace.", func() float64 { _, d := n.ns.Counts(); return float64(d) })
	gauge("safemode", "1 when the NameNode is in safe mode.", func() float64 {
		if n.ns.InSafeMode() {
			return 1
		}
		return 0
	})
	gauge("name_dirs_failed", "Storage directories (dfs.namenode.name.dir) taken out of service after a failure.", func() float64 {
		failed := 0
		for _, d := range n.edit.Dirs() {
			if !d.Active {
				failed++
			}
		}
		return float64(failed)
	})
	gauge("last_txid", "Last transaction id written to the edit log.", func() float64 { return float64(n.edit.LastTxID()) })
	counter("edit_log_syncs_total", "Edit log group commits (write + fsync).", func() float64 { return float64(n.edit.Stats().Syncs) })
	counter("edit_log_records_total", "Edit log records appended.", func() float64 { return float64(n.edit.Stats().Records) })
	counter("edit_log_sync_seconds_total", "Time spent writing and syncing the edit log.", func() float64 { return n.edit.Stats().SyncTime.Seconds() })
	counter("rpc_calls_total", "RPC calls served.", func() float64 { return float64(n.rpc.Stats().Calls.Load()) })
	counter("rpc_errors_total", "RPC calls answered with an error.", func() float64 { return float64(n.rpc.Stats().Errors.Load()) })
	counter("rpc_connections_total", "RPC connections accepted.", func() float64 { return float64(n.rpc.Stats().Connections.Load()) })
	counter("rpc_rejected_total", "RPC connections closed for a protocol violation.", func() float64 { return float64(n.rpc.Stats().Rejected.Load()) })
	gauge("goroutines", "Goroutines in the process.", func() float64 { return float64(runtime.NumGoroutine()) })
	if n.ha != nil {
		gauge("ha_state", "HA state: 0 initializing, 1 active, 2 standby (Hadoop's HAServiceStateProto).", func() float64 { return float64(haStateProto(n.ServiceState())) })
		gauge("ha_term", "Raft term this member is in.", func() float64 { return float64(n.ha.raftNumber("term")) })
		gauge("ha_commit_index", "Raft commit index this member knows.", func() float64 { return float64(n.ha.raftNumber("commit_index")) })
		gauge("ha_applied_txid", "Transaction id of the last edit in this member's namespace.", func() float64 { a, _ := n.ns.txids(); return float64(a) })
		gauge("ha_committed_txid", "Transaction id of the last edit this member knows committed.", func() float64 { _, c := n.ns.txids(); return float64(c) })
		reg.MustRegister(peerLagCollector{n.ha})
	}
	return reg
}

func (s Status) String() string {
	return fmt.Sprintf("%s files=%d dirs=%d", s.RPCAddress, s.Files, s.Directories)
}
