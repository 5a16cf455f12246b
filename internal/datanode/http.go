package datanode

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/stratafs/strata/internal/datanode/fsdataset"
	"github.com/stratafs/strata/internal/httpauth"
)

// Status is the JSON served at /status.
type Status struct {
	UUID      string                 `json:"datanodeUuid"`
	XferAddr  string                 `json:"xferAddress"`
	NameNode  string                 `json:"namenode"`
	Pool      string                 `json:"blockPoolId"`
	Xceivers  int64                  `json:"xceivers"`
	Volumes   []fsdataset.VolumeInfo `json:"volumes"`
	Written   int64                  `json:"bytesWritten"`
	Read      int64                  `json:"bytesRead"`
	Checksums int64                  `json:"checksumErrors"`
	// ShortCircuit counts replicas handed to local readers.
	ShortCircuit int64 `json:"shortCircuitReads"`
	// BlockTokens tells whether block access tokens are checked (the
	// NameNode's keys said enabled); BlockKeys whether the NameNode handed
	// keys over at all.
	BlockTokens bool `json:"blockTokens"`
	BlockKeys   bool `json:"blockKeys"`
	// TokenRefusals counts refused block and redirect tokens; Panics the
	// panics recovered while serving peers.
	TokenRefusals int64 `json:"tokenRefusals"`
	Panics        int64 `json:"panics"`
	// SASLRefusals counts connections dropped at the data transfer
	// protection handshake.
	SASLRefusals int64 `json:"saslRefusals"`
}

// Status reports the DataNode's state.
func (d *DataNode) Status() Status {
	return Status{
		UUID: d.data.DatanodeUUID(), XferAddr: d.XferAddr(), NameNode: strings.Join(d.cfg.NameNodeAddrs, ","), Pool: d.pool(),
		Xceivers: d.xceivers.Load(), Volumes: d.data.Volumes(),
		Written: d.stats.BytesWritten.Load(), Read: d.stats.BytesRead.Load(), Checksums: d.stats.ChecksumErrors.Load(),
		ShortCircuit: d.stats.ShortCircuitReads.Load(),
		BlockTokens:  d.BlockTokensEnabled(), BlockKeys: d.tokens.Load() != nil,
		TokenRefusals: d.stats.TokenRefusals.Load(), Panics: d.stats.Panics.Load(),
		SASLRefusals: d.stats.SASLRefusals.Load(),
	}
}

func (d *DataNode) httpHandler(auth *httpauth.Filter) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.Encode(d.Status())
	})
	reg := prometheus.NewRegistry()
	counter := func(name, help string, f func() float64) {
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: "strata", Subsystem: "datanode", Name: name, Help: help}, f))
	}
	counter("bytes_written_total", "Block bytes received and stored.", func() float64 { return float64(d.stats.BytesWritten.Load()) })
	counter("bytes_read_total", "Block bytes sent to readers.", func() float64 { return float64(d.stats.BytesRead.Load()) })
	counter("blocks_written_total", "Replicas finalized after a write.", func() float64 { return float64(d.stats.BlocksWritten.Load()) })
	counter("blocks_replicated_total", "Replicas copied to other DataNodes on the NameNode's command.", func() float64 { return float64(d.stats.BlocksReplicated.Load()) })
	counter("checksum_errors_total", "Checksum mismatches seen in received or stored data.", func() float64 { return float64(d.stats.ChecksumErrors.Load()) })
	counter("block_token_refusals_total", "Operations refused for a missing or invalid block or redirect token.", func() float64 { return float64(d.stats.TokenRefusals.Load()) })
	counter("panics_total", "Panics recovered while serving a connection or a NameNode command.", func() float64 { return float64(d.stats.Panics.Load()) })
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "strata", Subsystem: "datanode", Name: "xceivers", Help: "DataTransferProtocol operations in progress."},
		func() float64 { return float64(d.xceivers.Load()) }))
	vol := prometheus.NewDesc("strata_datanode_volume_bytes", "Volume capacity, used and remaining bytes.", []string{"storage_id", "type", "kind"}, nil)
	reg.MustRegister(collectorFunc{desc: vol, collect: func(ch chan<- prometheus.Metric) {
		for _, v := range d.data.Volumes() {
			for kind, val := range map[string]int64{"capacity": v.Capacity, "used": v.DfsUsed, "remaining": v.Remaining} {
				ch <- prometheus.MustNewConstMetric(vol, prometheus.GaugeValue, float64(val), v.StorageID, v.Type.String(), kind)
			}
		}
	}})
	d.registerUI(mux, reg) // pages, /jmx, /metrics, /stacks (webui.go)
	mux.Handle("/webhdfs/v1/", d.cors(d.webhdfs()))
	// Secure mode guards the pages, /jmx and /status; WebHDFS keeps its
	// own authentication (the NameNode's redirect token, and delegation
	// tokens in Hadoop), not SPNEGO, as Hadoop's DataNode does.
	return auth.WrapExcept(mux, "/webhdfs/v1/")
}

type collectorFunc struct {
	desc    *prometheus.Desc
	collect func(chan<- prometheus.Metric)
}

func (c collectorFunc) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }
func (c collectorFunc) Collect(ch chan<- prometheus.Metric) { c.collect(ch) }
