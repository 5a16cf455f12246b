package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/namenode"
	"github.com/stratafs/strata/internal/nameservice"
	"github.com/stratafs/strata/internal/proto/hdfspb"
	"github.com/stratafs/strata/internal/proto/namenodepb"
)

func init() {
	register(command{name: "haadmin", summary: "HA administration of a nameservice (-getServiceState, -getAllServiceState, -failover, -checkHealth, -addNameNode, -removeNameNode)", run: runHAAdmin})
}

const haadminUsage = `Usage: strata haadmin [-ns <nameserviceId>]
    [-transitionToActive <serviceId>]
    [-transitionToStandby <serviceId>]
    [-failover <serviceId> <serviceId>]
    [-getServiceState <serviceId>]
    [-getAllServiceState]
    [-checkHealth <serviceId>]
    [-getGroup]
    [-addNameNode <serviceId> <host:port>]
    [-removeNameNode <serviceId>]
`

// runHAAdmin is Hadoop's `hdfs haadmin` for a Raft nameservice: the
// service ids are the nameservice's NameNode ids (dfs.ha.namenodes.<ns>).
// -failover hands leadership over (no fencing is needed: a deposed active
// cannot commit); -addNameNode and -removeNameNode change the group.
func runHAAdmin(ctx context.Context, env *Env, args []string) int {
	nsID := ""
	if len(args) >= 2 && args[0] == "-ns" {
		nsID, args = args[1], args[2:]
	}
	if len(args) == 0 {
		fmt.Fprint(env.Stderr, haadminUsage)
		return 255
	}
	if nsID == "" {
		ids := nameservice.IDs(env.Conf)
		if len(ids) != 1 {
			fmt.Fprintf(env.Stderr, "haadmin: %d nameservices configured in dfs.nameservices; name one with -ns\n", len(ids))
			return 255
		}
		nsID = ids[0]
	}
	ns, ok, err := nameservice.Lookup(env.Conf, nsID)
	if err != nil || !ok {
		fmt.Fprintf(env.Stderr, "haadmin: nameservice %q: not configured (dfs.ha.namenodes.%s) %v\n", nsID, nsID, err)
		return 255
	}
	a := haAdmin{env: env, ns: ns}
	want := func(n int) bool {
		if len(args)-1 != n {
			fmt.Fprintf(env.Stderr, "haadmin: %s takes %d argument(s)\n%s", args[0], n, haadminUsage)
			return false
		}
		return true
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	switch args[0] {
	case "-getServiceState":
		if !want(1) {
			return 255
		}
		st, err := a.state(ctx, args[1])
		if err != nil {
			return a.fail(err)
		}
		fmt.Fprintln(env.Stdout, st)
	case "-getAllServiceState":
		if !want(0) {
			return 255
		}
		for _, m := range ns.NameNodes {
			st, err := a.state(ctx, m.ID)
			if err != nil {
				fmt.Fprintf(env.Stdout, "%-50s %s\n", m.RPCAddr, "Failed to connect: "+firstLine(err))
				continue
			}
			fmt.Fprintf(env.Stdout, "%-50s %s\n", m.RPCAddr, st)
		}
	case "-checkHealth":
		if !want(1) {
			return 255
		}
		if err := a.call(ctx, args[1], namenode.HAServiceProtocolName, "monitorHealth", &hdfspb.MonitorHealthRequestProto{}, &hdfspb.MonitorHealthResponseProto{}); err != nil {
			return a.fail(err)
		}
	case "-transitionToActive":
		if !want(1) {
			return 255
		}
		req := &hdfspb.TransitionToActiveRequestProto{ReqInfo: &hdfspb.HAStateChangeRequestInfoProto{ReqSource: hdfspb.HARequestSource_REQUEST_BY_USER.Enum()}}
		if err := a.call(ctx, args[1], namenode.HAServiceProtocolName, "transitionToActive", req, &hdfspb.TransitionToActiveResponseProto{}); err != nil {
			return a.fail(err)
		}
	case "-transitionToStandby":
		if !want(1) {
			return 255
		}
		req := &hdfspb.TransitionToStandbyRequestProto{ReqInfo: &hdfspb.HAStateChangeRequestInfoProto{ReqSource: hdfspb.HARequestSource_REQUEST_BY_USER.Enum()}}
		if err := a.call(ctx, args[1], namenode.HAServiceProtocolName, "transitionToStandby", req, &hdfspb.TransitionToStandbyResponseProto{}); err != nil {
			return a.fail(err)
		}
	case "-failover":
		if !want(2) {
			return 255
		}
		from, to := args[1], args[2]
		target, ok := ns.Member(to)
		if !ok {
			fmt.Fprintf(env.Stderr, "haadmin: no NameNode %q in %s\n", to, ns.ID)
			return 255
		}
		if st, err := a.state(ctx, from); err == nil && st != "active" {
			fmt.Fprintf(env.Stderr, "haadmin: %s is %s, not active; failing over to %s anyway\n", from, st, to)
		}
		req := &namenodepb.TransferLeadershipRequest{Target: proto.String(to)}
		if err := a.call(ctx, to, namenode.RaftAdminProtocolName, "transferLeadership", req, &namenodepb.TransferLeadershipResponse{}); err != nil {
			return a.fail(err)
		}
		// The transfer returns once the target won; wait for it to serve.
		for {
			if st, err := a.state(ctx, to); err == nil && st == "active" {
				break
			}
			select {
			case <-ctx.Done():
				return a.fail(fmt.Errorf("%s did not become active", to))
			case <-time.After(50 * time.Millisecond):
			}
		}
		fmt.Fprintf(env.Stdout, "Failover to NameNode at %s successful\n", target.RPCAddr)
	case "-getGroup":
		if !want(0) {
			return 255
		}
		var resp namenodepb.GroupResponse
		if err := a.callAny(ctx, "getGroup", &namenodepb.GroupRequest{}, &resp); err != nil {
			return a.fail(err)
		}
		fmt.Fprintf(env.Stdout, "leader %s, term %d, commit index %d\n", resp.GetLeader(), resp.GetTerm(), resp.GetCommitIndex())
		for _, m := range resp.GetMembers() {
			fmt.Fprintf(env.Stdout, "%-10s %-40s %s\n", m.GetId(), m.GetRpcAddress(), strings.ToLower(m.GetSuffrage()))
		}
	case "-addNameNode":
		if !want(2) {
			return 255
		}
		req := &namenodepb.AddMemberRequest{Id: proto.String(args[1]), RpcAddress: proto.String(args[2])}
		if err := a.callActive(ctx, "addMember", req, &namenodepb.AddMemberResponse{}); err != nil {
			return a.fail(err)
		}
		fmt.Fprintf(env.Stdout, "Added NameNode %s at %s to %s\n", args[1], args[2], ns.ID)
	case "-removeNameNode":
		if !want(1) {
			return 255
		}
		req := &namenodepb.RemoveMemberRequest{Id: proto.String(args[1])}
		if err := a.callActive(ctx, "removeMember", req, &namenodepb.RemoveMemberResponse{}); err != nil {
			return a.fail(err)
		}
		fmt.Fprintf(env.Stdout, "Removed NameNode %s from %s\n", args[1], ns.ID)
	default:
		fmt.Fprintf(env.Stderr, "haadmin: unknown command %s\n%s", args[0], haadminUsage)
		return 255
	}
	return 0
}

type haAdmin struct {
	env *Env
	ns  nameservice.Nameservice
}

func (a haAdmin) fail(err error) int {
	fmt.Fprintf(a.env.Stderr, "haadmin: %s\n", firstLine(err))
	return 255
}

func firstLine(err error) string {
	s := err.Error()
	var re *ipc.RemoteError
	if errors.As(err, &re) {
		s = re.Message
	}
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

func (a haAdmin) call(ctx context.Context, id, protocol, method string, req, resp proto.Message) error {
	m, ok := a.ns.Member(id)
	if !ok {
		return fmt.Errorf("no NameNode %q in nameservice %s", id, a.ns.ID)
	}
	return a.callAddr(ctx, m.RPCAddr, protocol, method, req, resp)
}

func (a haAdmin) callAddr(ctx context.Context, addr, protocol, method string, req, resp proto.Message) error {
	c := ipc.NewClient(ipc.ClientConfig{Addr: addr, User: fs.CurrentUser(), Protocol: protocol, DialTimeout: 5 * time.Second})
	defer c.Close()
	cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	return c.Call(cctx, method, req, resp)
}

func (a haAdmin) state(ctx context.Context, id string) (string, error) {
	var resp hdfspb.GetServiceStatusResponseProto
	if err := a.call(ctx, id, namenode.HAServiceProtocolName, "getServiceStatus", &hdfspb.GetServiceStatusRequestProto{}, &resp); err != nil {
		return "", err
	}
	return strings.ToLower(resp.GetState().String()), nil
}

// callAny calls the first member that answers.
func (a haAdmin) callAny(ctx context.Context, method string, req, resp proto.Message) error {
	var last error
	for _, m := range a.ns.NameNodes {
		if last = a.callAddr(ctx, m.RPCAddr, namenode.RaftAdminProtocolName, method, req, resp); last == nil {
			return nil
		}
	}
	return last
}

// callActive calls the member that is active.
func (a haAdmin) callActive(ctx context.Context, method string, req, resp proto.Message) error {
	for _, m := range a.ns.NameNodes {
		if st, err := a.state(ctx, m.ID); err == nil && st == "active" {
			return a.callAddr(ctx, m.RPCAddr, namenode.RaftAdminProtocolName, method, req, resp)
		}
	}
	return fmt.Errorf("no active NameNode in %s", a.ns.ID)
}
