package cli

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/internal/httpauth"
	"github.com/stratafs/strata/internal/proto/hdfspb"
	"github.com/stratafs/strata/internal/storage"
)

func init() {
	register(command{name: "fsck", summary: "check the health of files: fsck PATH [-files [-blocks [-locations]]]", run: runFsck})
}

// runFsck asks the NameNode's HTTP server for the report, as Hadoop's
// fsck does, and exits 0 only when the path is healthy.
func runFsck(ctx context.Context, env *Env, args []string) int {
	q := url.Values{}
	path := ""
	for _, a := range args {
		switch a {
		case "-files":
			q.Set("files", "1")
		case "-blocks":
			q.Set("blocks", "1")
		case "-locations":
			q.Set("locations", "1")
		default:
			if strings.HasPrefix(a, "-") || path != "" {
				fmt.Fprintln(env.Stderr, "Usage: strata fsck <path> [-files [-blocks [-locations]]]")
				return 1
			}
			path = a
		}
	}
	if path == "" {
		path = "/"
	}
	q.Set("path", path)
	q.Set("ugi", fs.CurrentUser())
	q.Set("user.name", fs.CurrentUser())
	addr := env.Conf.Get("dfs.namenode.http-address")
	u := "http://" + addr + "/fsck?" + q.Encode()
	fmt.Fprintf(env.Stdout, "Connecting to namenode via %s\n", u)
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", u, nil)
	do := http.DefaultClient.Do
	if strings.EqualFold(env.Conf.GetTrimmed("hadoop.security.authentication"), "kerberos") {
		// A secure NameNode's HTTP port wants SPNEGO, with the user's
		// ticket (kinit), as Hadoop's fsck authenticates.
		kc, err := httpauth.NewClient(nil, addr)
		if err != nil {
			fmt.Fprintf(env.Stderr, "fsck: %v\n", err)
			return 1
		}
		defer kc.Close()
		do = kc.Do
	}
	resp, err := do(req)
	if err != nil {
		fmt.Fprintf(env.Stderr, "fsck: %v\n", err)
		return 1
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	last := ""
	for sc.Scan() {
		fmt.Fprintln(env.Stdout, sc.Text())
		if t := strings.TrimSpace(sc.Text()); t != "" {
			last = t
		}
	}
	if strings.HasSuffix(last, "is HEALTHY") {
		return 0
	}
	return 1
}

// dfsadminReport prints `dfsadmin -report`: totals, then each DataNode
// with its capacity per storage type, in Hadoop's lists (live, dead,
// decommissioning, entering and in maintenance); lists names the lists
// asked for (-live, -dead, ...), none meaning all.
func dfsadminReport(ctx context.Context, env *Env, lists map[string]bool) int {
	c, err := hdfsClient(env)
	if err != nil {
		fmt.Fprintf(env.Stderr, "report: %v\n", err)
		return 1
	}
	defer c.Close()
	var stats hdfspb.GetFsStatsResponseProto
	if err := c.Call(ctx, "getFsStats", &hdfspb.GetFsStatusRequestProto{}, &stats); err != nil {
		fmt.Fprintf(env.Stderr, "report: %v\n", err)
		return 1
	}
	reports := map[hdfspb.DatanodeReportTypeProto][]*hdfspb.DatanodeStorageReportProto{}
	for _, t := range []hdfspb.DatanodeReportTypeProto{hdfspb.DatanodeReportTypeProto_LIVE, hdfspb.DatanodeReportTypeProto_DEAD,
		hdfspb.DatanodeReportTypeProto_DECOMMISSIONING, hdfspb.DatanodeReportTypeProto_ENTERING_MAINTENANCE, hdfspb.DatanodeReportTypeProto_IN_MAINTENANCE} {
		var rep hdfspb.GetDatanodeStorageReportResponseProto
		if err := c.Call(ctx, "getDatanodeStorageReport", &hdfspb.GetDatanodeStorageReportRequestProto{Type: t.Enum()}, &rep); err != nil {
			fmt.Fprintf(env.Stderr, "report: %v\n", err)
			return 1
		}
		reports[t] = rep.GetDatanodeStorageReports()
	}
	w := env.Stdout
	pct := func(a, b uint64) string {
		if b == 0 {
			return "0.00%"
		}
		return fmt.Sprintf("%.2f%%", float64(a)*100/float64(b))
	}
	fmt.Fprintf(w, "Configured Capacity: %d (%s)\n", stats.GetCapacity(), humanBytes(stats.GetCapacity()))
	fmt.Fprintf(w, "DFS Remaining: %d (%s)\n", stats.GetRemaining(), humanBytes(stats.GetRemaining()))
	fmt.Fprintf(w, "DFS Used: %d (%s)\n", stats.GetUsed(), humanBytes(stats.GetUsed()))
	fmt.Fprintf(w, "DFS Used%%: %s\n", pct(stats.GetUsed(), stats.GetCapacity()))
	fmt.Fprintf(w, "Replicated Blocks:\n\tUnder replicated blocks: %d\n\tBlocks with corrupt replicas: %d\n\tMissing blocks: %d\n\tPending deletion blocks: %d\n",
		stats.GetUnderReplicated(), stats.GetCorruptBlocks(), stats.GetMissingBlocks(), stats.GetPendingDeletionBlocks())
	// Totals per storage type over live nodes.
	type tot struct{ cap, used, rem uint64 }
	byType := map[storage.Type]*tot{}
	for _, r := range reports[hdfspb.DatanodeReportTypeProto_LIVE] {
		for _, s := range r.GetStorageReports() {
			t := storage.Type(s.GetStorage().GetStorageType())
			if byType[t] == nil {
				byType[t] = &tot{}
			}
			byType[t].cap += s.GetCapacity()
			byType[t].used += s.GetDfsUsed()
			byType[t].rem += s.GetRemaining()
		}
	}
	fmt.Fprintf(w, "Capacity by storage type:\n")
	for _, t := range []storage.Type{storage.RAMDisk, storage.SSD, storage.Disk, storage.Archive, storage.NVDIMM, storage.Provided} {
		if x := byType[t]; x != nil {
			fmt.Fprintf(w, "\t%-8s configured %s, used %s, remaining %s\n", t, humanBytes(x.cap), humanBytes(x.used), humanBytes(x.rem))
		}
	}
	fmt.Fprintf(w, "\n-------------------------------------------------\n")
	all := len(lists) == 0
	for _, l := range []struct {
		flag, title string
		t           hdfspb.DatanodeReportTypeProto
	}{
		{"-live", "Live datanodes", hdfspb.DatanodeReportTypeProto_LIVE},
		{"-dead", "Dead datanodes", hdfspb.DatanodeReportTypeProto_DEAD},
		{"-decommissioning", "Decommissioning datanodes", hdfspb.DatanodeReportTypeProto_DECOMMISSIONING},
		{"-enteringmaintenance", "Entering maintenance datanodes", hdfspb.DatanodeReportTypeProto_ENTERING_MAINTENANCE},
		{"-inmaintenance", "In maintenance datanodes", hdfspb.DatanodeReportTypeProto_IN_MAINTENANCE},
	} {
		if !all && !lists[l.flag] {
			continue
		}
		nodes := reports[l.t]
		// As Hadoop: an empty list is named only when asked for.
		if len(nodes) > 0 || lists[l.flag] {
			fmt.Fprintf(w, "%s (%d):\n\n", l.title, len(nodes))
		}
		for _, r := range nodes {
			printDatanode(w, r, pct)
		}
	}
	return 0
}

func printDatanode(w interface{ Write([]byte) (int, error) }, r *hdfspb.DatanodeStorageReportProto, pct func(a, b uint64) string) {
	d := r.GetDatanodeInfo()
	id := d.GetId()
	fmt.Fprintf(w, "Name: %s:%d (%s)\nHostname: %s\n", id.GetIpAddr(), id.GetXferPort(), id.GetHostName(), id.GetHostName())
	if loc := d.GetLocation(); loc != "" && loc != "/default-rack" {
		fmt.Fprintf(w, "Rack: %s\n", loc)
	}
	fmt.Fprintf(w, "Decommission Status : %s\n", decommissionStatus(d.GetAdminState()))
	fmt.Fprintf(w, "Configured Capacity: %d (%s)\nDFS Used: %d (%s)\nDFS Remaining: %d (%s)\nDFS Used%%: %s\nDFS Remaining%%: %s\n",
		d.GetCapacity(), humanBytes(d.GetCapacity()), d.GetDfsUsed(), humanBytes(d.GetDfsUsed()),
		d.GetRemaining(), humanBytes(d.GetRemaining()), pct(d.GetDfsUsed(), d.GetCapacity()), pct(d.GetRemaining(), d.GetCapacity()))
	fmt.Fprintf(w, "Xceivers: %d\nLast contact: %s\nNum of Blocks: %d\n", d.GetXceiverCount(), time.UnixMilli(int64(d.GetLastUpdate())).Format("Mon Jan 02 15:04:05 MST 2006"), d.GetNumBlocks())
	for _, s := range r.GetStorageReports() {
		state := ""
		if s.GetFailed() {
			state = " FAILED"
		}
		fmt.Fprintf(w, "  Storage %s [%s]%s: capacity %s, used %s, remaining %s\n", s.GetStorageUuid(), storage.Type(s.GetStorage().GetStorageType()),
			state, humanBytes(s.GetCapacity()), humanBytes(s.GetDfsUsed()), humanBytes(s.GetRemaining()))
	}
	fmt.Fprintln(w)
}

// humanBytes formats like Hadoop's StringUtils.byteDesc: "1.5 GB".
func humanBytes(n uint64) string {
	units := []string{"B", "KB", "MB", "GB", "TB", "PB", "EB"}
	v := float64(n)
	i := 0
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%d B", n)
	}
	return fmt.Sprintf("%.2f %s", v, units[i])
}

var _ = proto.String
