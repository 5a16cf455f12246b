package namenode

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/namenode/editlog"
	"github.com/stratafs/strata/internal/namenode/quorum"
	"github.com/stratafs/strata/internal/nameservice"
	"github.com/stratafs/strata/internal/proto/hdfspb"
	"github.com/stratafs/strata/internal/proto/namenodepb"
)

// Protocol names served by a member of an HA nameservice.
const (
	// HAServiceProtocolName is Hadoop's: haadmin -getServiceState,
	// -checkHealth, -transitionToActive/-transitionToStandby.
	HAServiceProtocolName = "org.apache.hadoop.ha.HAServiceProtocol"
	// RaftAdminProtocolName is strata's: leadership transfer and
	// membership changes (haadmin -failover, -addNameNode, -removeNameNode).
	RaftAdminProtocolName = "org.stratafs.namenode.RaftAdminProtocol"
)

// withHA makes ClientProtocol a member's: a standby refuses every call
// with StandbyException (clients fail over on it), and a reply on the
// active waits until everything the call could have seen is committed,
// so that no client reads an edit that a failover could still lose.
func (n *NameNode) withHA(methods map[string]ipc.Method) map[string]ipc.Method {
	if n.ha == nil {
		return methods
	}
	out := make(map[string]ipc.Method, len(methods))
	for name, m := range methods {
		if uncheckedInHA[name] {
			out[name] = m
			continue
		}
		ownAnswer := answersFromOwnEdit[name]
		category := "WRITE"
		if strings.HasPrefix(name, "get") || strings.HasPrefix(name, "list") || strings.HasPrefix(name, "is") {
			category = "READ"
		}
		out[name] = m.Around(func(ctx context.Context, req proto.Message, next func(context.Context, proto.Message) (proto.Message, error)) (proto.Message, error) {
			if n.ServiceState() != HAActive {
				return nil, standbyError(category)
			}
			var synced syncedTxID
			resp, err := next(context.WithValue(ctx, syncedKey{}, &synced), req)
			if ownAnswer && synced.Load() > 0 {
				// Its answer came from its own edit, committed (Sync),
				// and everything it saw was applied before that edit.
				return resp, err
			}
			seen := n.ns.appliedTxID()
			if werr := n.ha.journal.waitCommitted(ctx, seen); werr != nil {
				if errors.Is(werr, errNotActive) {
					return nil, standbyError(category)
				}
				return nil, werr
			}
			return resp, err
		})
	}
	return out
}

// uncheckedInHA are the methods every member serves whatever its state
// (Hadoop's OperationCategory.UNCHECKED): refreshNodes, which dfsadmin
// sends to each NameNode so that all read the hosts files.
var uncheckedInHA = map[string]bool{"refreshNodes": true}

// answersFromOwnEdit are the ClientProtocol methods whose answer, when
// they logged an edit, is computed under the namesystem lock of that edit
// alone: once the edit is committed, nothing they answered can be lost.
var answersFromOwnEdit = map[string]bool{
	"mkdirs": true, "delete": true, "rename": true, "rename2": true,
	"setPermission": true, "setOwner": true, "setTimes": true,
	"setReplication": true, "setStoragePolicy": true,
}

// syncedTxID is where mutateThen notes, for withHA, that the call's edits
// were made durable (their last txid).
type syncedTxID struct{ atomic.Uint64 }

type syncedKey struct{}

func noteSynced(ctx context.Context, txid uint64) {
	if v, ok := ctx.Value(syncedKey{}).(*syncedTxID); ok {
		v.Store(txid)
	}
}

func haStateProto(s HAState) hdfspb.HAServiceStateProto {
	switch s {
	case HAActive:
		return hdfspb.HAServiceStateProto_ACTIVE
	case HAStandby:
		return hdfspb.HAServiceStateProto_STANDBY
	}
	return hdfspb.HAServiceStateProto_INITIALIZING
}

// methods is HAServiceProtocol. transitionToActive asks the current
// active to hand leadership to this member; transitionToStandby hands it
// to another member. Both need the superuser.
func (h *haNode) methods() map[string]ipc.Method {
	return map[string]ipc.Method{
		"getServiceStatus": ipc.Unary(func(ctx context.Context, _ *hdfspb.GetServiceStatusRequestProto) (*hdfspb.GetServiceStatusResponseProto, error) {
			st := h.serviceState()
			resp := &hdfspb.GetServiceStatusResponseProto{State: haStateProto(st).Enum()}
			if st == HAStandby {
				resp.ReadyToBecomeActive = proto.Bool(true)
			}
			return resp, nil
		}),
		"monitorHealth": ipc.Unary(func(ctx context.Context, _ *hdfspb.MonitorHealthRequestProto) (*hdfspb.MonitorHealthResponseProto, error) {
			if err := h.health(); err != nil {
				return nil, ipc.Errorf("org.apache.hadoop.ha.HealthCheckFailedException", "%v", err)
			}
			return &hdfspb.MonitorHealthResponseProto{}, nil
		}),
		"transitionToActive": ipc.Unary(func(ctx context.Context, _ *hdfspb.TransitionToActiveRequestProto) (*hdfspb.TransitionToActiveResponseProto, error) {
			if err := h.ns.checker(ctx).Superuser("transitionToActive"); err != nil {
				return nil, err
			}
			return &hdfspb.TransitionToActiveResponseProto{}, h.transferTo(ctx, h.cfg.ID)
		}),
		"transitionToStandby": ipc.Unary(func(ctx context.Context, _ *hdfspb.TransitionToStandbyRequestProto) (*hdfspb.TransitionToStandbyResponseProto, error) {
			if err := h.ns.checker(ctx).Superuser("transitionToStandby"); err != nil {
				return nil, err
			}
			if h.serviceState() != HAActive {
				return &hdfspb.TransitionToStandbyResponseProto{}, nil
			}
			return &hdfspb.TransitionToStandbyResponseProto{}, h.transferTo(ctx, "")
		}),
	}
}

// adminMethods is RaftAdminProtocol.
func (h *haNode) adminMethods() map[string]ipc.Method {
	return map[string]ipc.Method{
		"transferLeadership": ipc.Unary(func(ctx context.Context, req *namenodepb.TransferLeadershipRequest) (*namenodepb.TransferLeadershipResponse, error) {
			if err := h.ns.checker(ctx).Superuser("transferLeadership"); err != nil {
				return nil, err
			}
			return &namenodepb.TransferLeadershipResponse{}, h.transferTo(ctx, req.GetTarget())
		}),
		"addMember": ipc.Unary(func(ctx context.Context, req *namenodepb.AddMemberRequest) (*namenodepb.AddMemberResponse, error) {
			return &namenodepb.AddMemberResponse{}, h.addMember(ctx, req.GetId(), req.GetRpcAddress())
		}),
		"removeMember": ipc.Unary(func(ctx context.Context, req *namenodepb.RemoveMemberRequest) (*namenodepb.RemoveMemberResponse, error) {
			return &namenodepb.RemoveMemberResponse{}, h.removeMember(ctx, req.GetId())
		}),
		"getGroup": ipc.Unary(func(ctx context.Context, _ *namenodepb.GroupRequest) (*namenodepb.GroupResponse, error) {
			st := h.stats()
			resp := &namenodepb.GroupResponse{Leader: proto.String(st.Leader), Term: proto.Uint64(st.Term), CommitIndex: proto.Uint64(st.CommitIndex)}
			for _, m := range st.Members {
				resp.Members = append(resp.Members, &namenodepb.GroupMember{Id: proto.String(m.ID), RpcAddress: proto.String(m.Addr), Suffrage: proto.String(m.Suffrage)})
			}
			return resp, nil
		}),
	}
}

// addMember adds a voter to the group (on the leader, by the superuser).
// The new member must have been bootstrapped (-bootstrapStandby) and be
// running; it catches up from a snapshot and the log.
func (h *haNode) addMember(ctx context.Context, id, addr string) error {
	if err := h.ns.checker(ctx).Superuser("addMember"); err != nil {
		return err
	}
	if id == "" || addr == "" || len(id) > 256 || len(addr) > 1024 {
		return ipc.Errorf(ipc.ClassIllegalArgument, "addMember needs an id and an RPC address")
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return ipc.Errorf(ipc.ClassIllegalArgument, "addMember: RPC address %q: %v", addr, err)
	}
	if err := h.leaderOnly(); err != nil {
		return err
	}
	return raftErr(h.node.Raft.AddVoter(raft.ServerID(id), raft.ServerAddress(addr), 0, 30*time.Second).Error())
}

// removeMember takes a member out of the group (on the leader, by the
// superuser).
func (h *haNode) removeMember(ctx context.Context, id string) error {
	if err := h.ns.checker(ctx).Superuser("removeMember"); err != nil {
		return err
	}
	if id == "" {
		return ipc.Errorf(ipc.ClassIllegalArgument, "removeMember needs an id")
	}
	if err := h.leaderOnly(); err != nil {
		return err
	}
	return raftErr(h.node.Raft.RemoveServer(raft.ServerID(id), 0, 30*time.Second).Error())
}

func raftErr(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, raft.ErrNotLeader) || errors.Is(err, raft.ErrLeadershipLost) {
		return standbyError("WRITE")
	}
	return ipc.Errorf(ipc.ClassIOException, "%v", err)
}

func (h *haNode) leaderOnly() error {
	if h.node.Raft.State() != raft.Leader {
		return standbyError("WRITE")
	}
	return nil
}

// health is what -checkHealth reports: the member runs, knows a leader
// and, when active, its journal works.
func (h *haNode) health() error {
	if err := h.ns.journalFailed(); err != nil {
		return err
	}
	if addr, _ := h.node.Raft.LeaderWithID(); addr == "" {
		return errors.New("no active NameNode known to this member")
	}
	return nil
}

// transferTo makes target (a member id; "" for any) the active. Called on
// any member: a non-leader forwards the request to the leader.
func (h *haNode) transferTo(ctx context.Context, target string) error {
	if h.node.Raft.State() == raft.Leader {
		if target == h.cfg.ID {
			return nil
		}
		var f raft.Future
		if target == "" {
			f = h.node.Raft.LeadershipTransfer()
		} else {
			m, ok := h.member(target)
			if !ok {
				return ipc.Errorf(ipc.ClassIllegalArgument, "no NameNode %q in nameservice %s", target, h.cfg.Nameservice)
			}
			f = h.node.Raft.LeadershipTransferToServer(raft.ServerID(m.ID), raft.ServerAddress(m.RPCAddr))
		}
		if err := f.Error(); err != nil {
			return ipc.Errorf(ipc.ClassIOException, "leadership transfer: %v", err)
		}
		return nil
	}
	addr, id := h.node.Raft.LeaderWithID()
	if addr == "" {
		return ipc.Errorf(ipc.ClassIOException, "no active NameNode to take over from")
	}
	c := ipc.NewClient(ipc.ClientConfig{Addr: string(addr), User: h.nn.cfg.Superuser, Protocol: RaftAdminProtocolName, DialTimeout: 5 * time.Second, Login: h.nn.login})
	defer c.Close()
	if target == "" {
		target = h.cfg.ID
	}
	h.log.Info("namenode: asking the active to hand over", "active", id, "target", target)
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return c.Call(ctx, "transferLeadership", &namenodepb.TransferLeadershipRequest{Target: proto.String(target)}, &namenodepb.TransferLeadershipResponse{})
}

// member finds a member by id: configured, or added since (in the Raft
// configuration).
func (h *haNode) member(id string) (nameservice.NameNode, bool) {
	for _, x := range h.cfg.Members {
		if x.ID == id {
			return x, true
		}
	}
	if f := h.node.Raft.GetConfiguration(); f.Error() == nil {
		for _, s := range f.Configuration().Servers {
			if string(s.ID) == id {
				return nameservice.NameNode{ID: id, RPCAddr: string(s.Address)}, true
			}
		}
	}
	return nameservice.NameNode{}, false
}

// formatRaft starts a new group in cfg's storage: `namenode -format` on
// the first member of a nameservice.
func formatRaft(cfg Config, force bool) error {
	q := quorumConfig(cfg, cfg.Logger)
	has, err := quorum.HasState(q)
	if err != nil {
		return err
	}
	if has {
		if !force {
			return fmt.Errorf("namenode: %s already holds Raft state; format with -force to wipe it", q.Dir)
		}
		if err := os.RemoveAll(q.Dir); err != nil {
			return err
		}
	}
	return quorum.Bootstrap(q)
}

// digestPath serves the txid and SHA-256 of the member's namespace image
// and block state (namespace.Tree.WriteBlockState), so that tests and
// operators can check that members agree.
const digestPath = "/strata/ha/digest"

// Digest is what digestPath serves.
type Digest struct {
	AppliedTxID   uint64 `json:"appliedTxId"`
	CommittedTxID uint64 `json:"committedTxId"`
	SHA256        string `json:"sha256"`
}

// NamespaceDigest hashes the namespace image as it stands.
func (n *NameNode) NamespaceDigest() (Digest, error) {
	s := n.ns
	h := sha256.New()
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := s.tree.WriteImage(h); err != nil {
		return Digest{}, err
	}
	// Block owners, snapshot holders and commit state are not all in the
	// image; members must agree on them too.
	if err := s.tree.WriteBlockState(h); err != nil {
		return Digest{}, err
	}
	return Digest{AppliedTxID: s.applied, CommittedTxID: s.committed, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

func (n *NameNode) serveDigest(w http.ResponseWriter, r *http.Request) {
	d, err := n.NamespaceDigest()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(d)
}

// memberPath serves a member's own HAStats, for its peers' status pages.
const memberPath = "/strata/ha/member"

func (n *NameNode) serveMember(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(n.ha.stats())
}

// peers asks every other configured member for its stats (500 ms each, in
// parallel) and reports its lag behind commit.
func (h *haNode) peers(commit uint64) []HAPeer {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var out []HAPeer
	cl, err := h.nn.peerHTTP.client(&h.nn.cfg, &http.Client{Timeout: 500 * time.Millisecond})
	for _, m := range h.cfg.Members {
		if m.ID == h.cfg.ID || m.HTTPAddr == "" {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := HAPeer{ID: m.ID}
			var st HAStats
			var resp *http.Response
			err := err // each member's own: the goroutines run at once
			if err == nil {
				resp, err = get(cl, "http://"+m.HTTPAddr+memberPath)
			}
			if err == nil {
				err = json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&st)
				resp.Body.Close()
			}
			if err != nil {
				p.State, p.Err = "unreachable", err.Error()
			} else {
				p.State, p.AppliedIndex, p.Lag = st.State, st.AppliedIndex, int64(commit)-int64(st.AppliedIndex)
			}
			mu.Lock()
			out = append(out, p)
			mu.Unlock()
		}()
	}
	wg.Wait()
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// peerLagCollector exports each peer's lag behind this member's commit
// index, asking the peers at scrape time (peers).
type peerLagCollector struct{ h *haNode }

var peerLagDesc = prometheus.NewDesc("strata_namenode_ha_peer_lag",
	"Raft entries a peer's applied index is behind this member's commit index (-1: unreachable).", []string{"peer"}, nil)

func (c peerLagCollector) Describe(ch chan<- *prometheus.Desc) { ch <- peerLagDesc }

func (c peerLagCollector) Collect(ch chan<- prometheus.Metric) {
	for _, p := range c.h.peers(c.h.raftNumber("commit_index")) {
		lag := float64(p.Lag)
		if p.Err != "" {
			lag = -1
		}
		ch <- prometheus.MustNewConstMetric(peerLagDesc, prometheus.GaugeValue, lag, p.ID)
	}
}

// versionPath serves a member's storage identity to `-bootstrapStandby`.
const versionPath = "/strata/ha/version"

type versionJSON struct {
	LayoutVersion int    `json:"layoutVersion"`
	NamespaceID   uint32 `json:"namespaceID"`
	ClusterID     string `json:"clusterID"`
	BlockPoolID   string `json:"blockPoolID"`
	CTime         int64  `json:"cTime"`
	Created       int64  `json:"created"`
}

func (n *NameNode) serveVersion(w http.ResponseWriter, r *http.Request) {
	v := n.edit.Version()
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(versionJSON{
		LayoutVersion: v.LayoutVersion, NamespaceID: v.NamespaceID, ClusterID: v.ClusterID,
		BlockPoolID: v.BlockPoolID, CTime: v.CTime, Created: v.Created.UnixMilli(),
	})
}

// BootstrapStandby formats cfg's storage as a new member of its
// nameservice: it copies the namespace, cluster and block pool ids from a
// running member (over HTTP, dfs.namenode.http-address.<ns>.<nn>) and
// leaves the Raft state empty, so that the member learns the namespace
// from the active (a snapshot, then the log) once it starts.
func BootstrapStandby(cfg Config, force bool) (editlog.Version, error) {
	if err := cfg.Validate(); err != nil {
		return editlog.Version{}, err
	}
	if cfg.HA == nil {
		return editlog.Version{}, errors.New("namenode: -bootstrapStandby needs an HA nameservice (dfs.nameservices, dfs.ha.namenodes.<ns>)")
	}
	var errs []error
	for _, m := range cfg.HA.Members {
		if m.ID == cfg.HA.ID {
			continue
		}
		if m.HTTPAddr == "" {
			errs = append(errs, fmt.Errorf("%s: no dfs.namenode.http-address.%s.%s", m.ID, cfg.HA.Nameservice, m.ID))
			continue
		}
		v, err := fetchVersion(&cfg, m.HTTPAddr)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", m.ID, err))
			continue
		}
		v, err = editlog.FormatDirsAs(cfg.FS, cfg.StorageDirs(), force, v)
		if err != nil {
			return v, err
		}
		q := quorumConfig(cfg, cfg.Logger)
		if err := os.RemoveAll(q.Dir); err != nil {
			return v, err
		}
		return v, nil
	}
	return editlog.Version{}, fmt.Errorf("namenode: no member of %s answered: %w", cfg.HA.Nameservice, errors.Join(errs...))
}

func fetchVersion(cfg *Config, httpAddr string) (editlog.Version, error) {
	hc := &http.Client{Timeout: 10 * time.Second}
	var cl httpDoer = hc
	if cfg.secure() {
		kc, err := newPeerClient(cfg, hc)
		if err != nil {
			return editlog.Version{}, err
		}
		defer kc.Close()
		cl = kc
	}
	resp, err := get(cl, "http://"+httpAddr+versionPath)
	if err != nil {
		return editlog.Version{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return editlog.Version{}, fmt.Errorf("%s: %s", versionPath, resp.Status)
	}
	var vj versionJSON
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<16)).Decode(&vj); err != nil {
		return editlog.Version{}, err
	}
	if vj.ClusterID == "" || vj.BlockPoolID == "" || vj.NamespaceID == 0 {
		return editlog.Version{}, errors.New("incomplete storage identity")
	}
	return editlog.Version{
		LayoutVersion: vj.LayoutVersion, NamespaceID: vj.NamespaceID, ClusterID: vj.ClusterID,
		BlockPoolID: vj.BlockPoolID, CTime: vj.CTime, Created: time.UnixMilli(vj.Created),
	}, nil
}
