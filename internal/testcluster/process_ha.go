package testcluster

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/stratafs/strata/hdfs"
	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/namenode"
	"github.com/stratafs/strata/internal/proto/hdfspb"
)

// procHA is a process cluster's HA nameservice: NameNode i is process
// procs[i], member NameNodeID(i), at rpc[i] and http[i].
type procHA struct {
	procs     []*Process
	rpc, http []string
	conf      map[string]string // HAConf
}

// NameNodeHostAt is the network host of NameNode i with Config.Hosts and
// Config.NameNodes > 1: NameNodeHost for the first, "nn<i>" for the
// others.
func NameNodeHostAt(i int) string {
	if i == 0 {
		return NameNodeHost
	}
	return fmt.Sprintf("nn%d", i)
}

// setupHA picks the members' addresses and adds the nameservice's keys
// to settings.
func (p *Processes) setupHA(settings map[string]string) {
	n := p.cfg.NameNodes
	h := &procHA{}
	for i := 0; i < n; i++ {
		if p.net != nil {
			octet := 2
			if i > 0 {
				octet = 4 + i
			}
			ip := p.net.addHost(NameNodeHostAt(i), octet).IP
			h.rpc, h.http = append(h.rpc, ip+":8020"), append(h.http, ip+":9870")
		} else {
			h.rpc, h.http = append(h.rpc, FreePort(p.t)), append(h.http, FreePort(p.t))
		}
	}
	h.conf = HAConf(h.rpc, h.http)
	for k, v := range h.conf {
		settings[k] = v
	}
	p.ha = h
	p.rpc, p.http = h.rpc[0], h.http[0]
}

// startHA formats the first member, starts it, bootstraps and starts the
// others, and waits for an active NameNode.
func (p *Processes) startHA() {
	p.t.Helper()
	h := p.ha
	for i := range h.rpc {
		pr := p.newProcess("namenode "+NameNodeID(i), p.NameNodeArgsAt(i, "namenode"))
		pr.wrap = p.hostWrap(NameNodeHostAt(i))
		h.procs = append(h.procs, pr)
	}
	p.nn = h.procs[0]
	out, err := exec.Command(p.bin, p.NameNodeArgsAt(0, "namenode", "-format")...).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "successfully formatted") {
		p.t.Fatalf("testcluster: namenode -format: %v\n%s", err, out)
	}
	p.StartNameNodeAt(0)
	for i := 1; i < len(h.rpc); i++ {
		p.waitHTTP(0)
		out, err := exec.Command(p.bin, p.NameNodeArgsAt(i, "namenode", "-bootstrapStandby")...).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "successfully bootstrapped") {
			p.t.Fatalf("testcluster: namenode -bootstrapStandby (%s): %v\n%s", NameNodeID(i), err, out)
		}
		p.StartNameNodeAt(i)
	}
	p.ActiveNameNode()
}

// waitHTTP waits until NameNode i's HTTP port answers.
func (p *Processes) waitHTTP(i int) {
	p.t.Helper()
	p.ha.procs[i].waitListening(p.ha.http[i])
}

// NameNodeArgsAt is NameNode i's command line (HA), followed by extra.
func (p *Processes) NameNodeArgsAt(i int, extra ...string) []string {
	args := []string{
		"-D", "dfs.namenode.name.dir=" + p.NameDirAt(i),
		"-D", "dfs.ha.namenode.id=" + NameNodeID(i),
	}
	return append(append(args, p.opts...), extra...)
}

// NameDirAt is NameNode i's name directory: <dir>/name, <dir>/name1, ...
func (p *Processes) NameDirAt(i int) string {
	if i == 0 {
		return p.NameDir()
	}
	return filepath.Join(p.dir, fmt.Sprintf("name%d", i))
}

// NumNameNodes is the number of NameNodes (1 without HA).
func (p *Processes) NumNameNodes() int {
	if p.ha == nil {
		return 1
	}
	return len(p.ha.procs)
}

// NameNodeAddrAt is NameNode i's RPC address.
func (p *Processes) NameNodeAddrAt(i int) string {
	if p.ha == nil {
		return p.rpc
	}
	return p.ha.rpc[i]
}

// NameNodeHTTPAddrAt is NameNode i's HTTP address.
func (p *Processes) NameNodeHTTPAddrAt(i int) string {
	if p.ha == nil {
		return p.http
	}
	return p.ha.http[i]
}

// NameNodeProcessAt is NameNode i's process.
func (p *Processes) NameNodeProcessAt(i int) *Process {
	if p.ha == nil {
		return p.nn
	}
	return p.ha.procs[i]
}

// StartNameNodeAt starts NameNode i (if stopped) and waits until its RPC
// port answers.
func (p *Processes) StartNameNodeAt(i int) {
	p.t.Helper()
	pr := p.NameNodeProcessAt(i)
	if pr.Running() {
		return
	}
	pr.start()
	pr.waitListening(p.NameNodeAddrAt(i))
}

// StopNameNodeAt stops NameNode i with SIGINT; KillNameNodeAt with SIGKILL.
func (p *Processes) StopNameNodeAt(i int) { p.t.Helper(); p.NameNodeProcessAt(i).stop() }
func (p *Processes) KillNameNodeAt(i int) { p.NameNodeProcessAt(i).kill() }

// ServiceState asks NameNode i for its HA state (HAServiceProtocol):
// "active", "standby", "initializing", or "" when it does not answer
// within timeout.
func (p *Processes) ServiceState(i int, timeout time.Duration) string {
	if !p.NameNodeProcessAt(i).Running() {
		return ""
	}
	c := ipc.NewClient(ipc.ClientConfig{Addr: p.NameNodeAddrAt(i), User: p.Superuser(), Protocol: namenode.HAServiceProtocolName, DialTimeout: timeout})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var resp hdfspb.GetServiceStatusResponseProto
	if err := c.Call(ctx, "getServiceStatus", &hdfspb.GetServiceStatusRequestProto{}, &resp); err != nil {
		return ""
	}
	return strings.ToLower(resp.GetState().String())
}

// ActiveNameNode waits up to 20 s until exactly one running NameNode says
// it is active and returns its index; without HA it is 0.
func (p *Processes) ActiveNameNode() int {
	p.t.Helper()
	if p.ha == nil {
		return 0
	}
	i, ok := p.WaitActive(20*time.Second, -1)
	if !ok {
		var states []string
		for j := range p.ha.procs {
			states = append(states, NameNodeID(j)+"="+p.ServiceState(j, time.Second))
		}
		sort.Strings(states)
		p.t.Fatalf("testcluster: no single active NameNode within 20 s (%s)", strings.Join(states, " "))
	}
	return i
}

// WaitActive polls until exactly one running NameNode other than not
// (-1: any) is active, for at most timeout.
func (p *Processes) WaitActive(timeout time.Duration, not int) (int, bool) {
	deadline := time.Now().Add(timeout)
	for {
		found, count := -1, 0
		for j := range p.ha.procs {
			if j != not && p.ServiceState(j, 500*time.Millisecond) == "active" {
				found, count = j, count+1
			}
		}
		if count == 1 {
			return found, true
		}
		if time.Now().After(deadline) {
			return -1, false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// clientOptions are a strata client's options for the cluster: every
// member of the nameservice with HA.
func (p *Processes) clientOptions(user string) hdfs.Options {
	if p.ha == nil {
		return hdfs.Options{Addr: p.rpc, User: user}
	}
	return hdfs.Options{Addrs: append([]string(nil), p.ha.rpc...), Authority: Nameservice, User: user}
}

// clientArgs are the generic options naming the nameservice.
func (h *procHA) clientArgs() []string {
	keys := make([]string, 0, len(h.conf))
	for k := range h.conf {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	args := []string{"-fs", "hdfs://" + Nameservice}
	for _, k := range keys {
		if k != "fs.defaultFS" {
			args = append(args, "-D", k+"="+h.conf[k])
		}
	}
	return args
}
