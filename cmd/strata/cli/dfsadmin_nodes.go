package cli

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/namenode"
	"github.com/stratafs/strata/internal/nameservice"
	"github.com/stratafs/strata/internal/proto/hdfspb"
)

const dfsadminUsage = "Usage: strata dfsadmin [-report [-live] [-dead] [-decommissioning] [-enteringmaintenance] [-inmaintenance]] [-safemode <enter | leave | get | wait | forceExit>] [-refreshNodes] [-printTopology]"

// runDFSAdminNodes runs the dfsadmin commands about DataNodes: -report,
// -refreshNodes and -printTopology; done is false for other commands.
func runDFSAdminNodes(ctx context.Context, env *Env, args []string) (code int, done bool) {
	if len(args) == 0 {
		return 0, false
	}
	switch args[0] {
	case "-report":
		lists := map[string]bool{}
		for _, a := range args[1:] {
			switch a {
			case "-live", "-dead", "-decommissioning", "-enteringmaintenance", "-inmaintenance":
				lists[a] = true
			default:
				fmt.Fprintf(env.Stderr, "report: unknown option %s\n%s\n", a, dfsadminUsage)
				return 1, true
			}
		}
		return dfsadminReport(ctx, env, lists), true
	case "-refreshNodes":
		if len(args) != 1 {
			fmt.Fprintln(env.Stderr, dfsadminUsage)
			return 1, true
		}
		return refreshNodes(ctx, env), true
	case "-printTopology":
		if len(args) != 1 {
			fmt.Fprintln(env.Stderr, dfsadminUsage)
			return 1, true
		}
		return printTopology(ctx, env), true
	}
	return 0, false
}

// printTopology prints each rack, sorted, with its DataNodes
// ("   ip:port (hostname)"), sorted, as Hadoop's dfsadmin -printTopology.
func printTopology(ctx context.Context, env *Env) int {
	c, err := hdfsClient(env)
	if err != nil {
		fmt.Fprintf(env.Stderr, "printTopology: %v\n", err)
		return 1
	}
	defer c.Close()
	var rep hdfspb.GetDatanodeReportResponseProto
	if err := c.Call(ctx, "getDatanodeReport", &hdfspb.GetDatanodeReportRequestProto{Type: hdfspb.DatanodeReportTypeProto_ALL.Enum()}, &rep); err != nil {
		fmt.Fprintf(env.Stderr, "printTopology: %s\n", errText(err))
		return 1
	}
	type node struct{ name, host string }
	racks := map[string][]node{}
	for _, d := range rep.GetDi() {
		id := d.GetId()
		loc := d.GetLocation()
		if loc == "" {
			loc = "/default-rack"
		}
		racks[loc] = append(racks[loc], node{fmt.Sprintf("%s:%d", id.GetIpAddr(), id.GetXferPort()), id.GetHostName()})
	}
	names := make([]string, 0, len(racks))
	for r := range racks {
		names = append(names, r)
	}
	sort.Strings(names)
	for _, r := range names {
		fmt.Fprintf(env.Stdout, "Rack: %s\n", r)
		ns := racks[r]
		sort.Slice(ns, func(i, j int) bool { return ns[i].name < ns[j].name })
		for _, n := range ns {
			fmt.Fprintf(env.Stdout, "   %s", n.name)
			if n.host != "" {
				fmt.Fprintf(env.Stdout, " (%s)", n.host)
			}
			fmt.Fprintln(env.Stdout)
		}
		fmt.Fprintln(env.Stdout)
	}
	return 0
}

// decommissionStatus is the "Decommission Status" of Hadoop's DataNode
// report.
func decommissionStatus(s hdfspb.DatanodeInfoProto_AdminState) string {
	switch s {
	case hdfspb.DatanodeInfoProto_DECOMMISSIONED:
		return "Decommissioned"
	case hdfspb.DatanodeInfoProto_DECOMMISSION_INPROGRESS:
		return "Decommission in progress"
	case hdfspb.DatanodeInfoProto_IN_MAINTENANCE:
		return "In maintenance"
	case hdfspb.DatanodeInfoProto_ENTERING_MAINTENANCE:
		return "Entering maintenance"
	}
	return "Normal"
}

// refreshNodes asks the NameNode to re-read its hosts files; with an HA
// nameservice every member, as Hadoop's dfsadmin does, since each keeps
// its own view of the DataNodes.
func refreshNodes(ctx context.Context, env *Env) int {
	u, err := fs.DefaultURI(env.Conf)
	if err != nil {
		fmt.Fprintf(env.Stderr, "refreshNodes: %v\n", err)
		return 1
	}
	if ns, ok, err := nameservice.Lookup(env.Conf, u.Hostname()); err == nil && ok {
		code := 0
		for _, addr := range ns.RPCAddrs() {
			c := ipc.NewClient(ipc.ClientConfig{Addr: addr, User: fs.CurrentUser(), Protocol: namenode.ClientProtocolName, DialTimeout: 5 * time.Second})
			cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			err := c.Call(cctx, "refreshNodes", &hdfspb.RefreshNodesRequestProto{}, &hdfspb.RefreshNodesResponseProto{})
			cancel()
			c.Close()
			if err != nil {
				fmt.Fprintf(env.Stderr, "Refresh nodes failed for %s: %s\n", addr, remoteText(err))
				code = 1
				continue
			}
			fmt.Fprintf(env.Stdout, "Refresh nodes successful for %s\n", addr)
		}
		return code
	}
	c, err := hdfsClient(env)
	if err != nil {
		fmt.Fprintf(env.Stderr, "refreshNodes: %v\n", err)
		return 1
	}
	defer c.Close()
	if err := c.Call(ctx, "refreshNodes", &hdfspb.RefreshNodesRequestProto{}, &hdfspb.RefreshNodesResponseProto{}); err != nil {
		fmt.Fprintf(env.Stderr, "refreshNodes: %s\n", errText(err))
		return 1
	}
	fmt.Fprintln(env.Stdout, "Refresh nodes successful")
	return 0
}

// remoteText is an IPC error's remote message when it has one.
func remoteText(err error) string {
	var re *ipc.RemoteError
	if errors.As(err, &re) {
		return re.Message
	}
	return err.Error()
}
