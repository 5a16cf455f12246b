package localcluster

// An HA nameservice in one process: Config.NameNodes members of one Raft
// group, as three NameNode hosts would run it. The members' addresses are
// part of the group's Raft configuration (stored at format), so they are
// chosen once — free ports when the configured dfs.namenode.rpc-address
// (and http-address) has port 0, else consecutive ports from it — and
// kept in <dir>/nameservice.xml (NameserviceFile): a restart on the same
// directory binds the same addresses. A Conf that configures a
// nameservice itself is used as it is.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/internal/namenode"
	"github.com/stratafs/strata/internal/nameservice"
)

// NameserviceID is the id of the nameservice Start builds for
// Config.NameNodes above 1 (the one Hadoop's documentation uses).
const NameserviceID = "ns1"

// NameserviceFile, under Config.Dir, keeps the addresses Start chose for
// the members of the nameservice it built: Hadoop's HA keys, as XML.
const NameserviceFile = "nameservice.xml"

// activeTimeout bounds Start's wait for the group to elect an active.
const activeTimeout = 30 * time.Second

// MemberID is the HA id Start gives NameNode i: nn1, nn2, ...
func MemberID(i int) string { return "nn" + strconv.Itoa(i+1) }

// NameDirOf is NameNode i's name directory under dir in HA: <dir>/name,
// <dir>/name1, <dir>/name2, ...
func NameDirOf(dir string, i int) string {
	if i == 0 {
		return filepath.Join(dir, "name")
	}
	return filepath.Join(dir, "name"+strconv.Itoa(i))
}

// HAKeys is the configuration of ns that every daemon and client of it
// needs: Hadoop's keys (dfs.nameservices, dfs.ha.namenodes.<ns>, each
// member's rpc-address and http-address, the failover proxy provider).
// fs.defaultFS is not among them.
func HAKeys(ns nameservice.Nameservice) map[string]string {
	ids := make([]string, len(ns.NameNodes))
	m := map[string]string{
		nameservice.KeyNameservices:        ns.ID,
		nameservice.PrefixProvider + ns.ID: "org.apache.hadoop.hdfs.server.namenode.ha.ConfiguredFailoverProxyProvider",
	}
	for i, nn := range ns.NameNodes {
		ids[i] = nn.ID
		m[nameservice.PrefixRPCAddress+ns.ID+"."+nn.ID] = nn.RPCAddr
		if nn.HTTPAddr != "" {
			m[nameservice.PrefixHTTPAddress+ns.ID+"."+nn.ID] = nn.HTTPAddr
		}
	}
	m[nameservice.PrefixNameNodes+ns.ID] = strings.Join(ids, ",")
	return m
}

// HAKeys is the cluster's nameservice configuration (HAKeys), nil
// without HA.
func (c *Cluster) HAKeys() map[string]string {
	if c.ha == nil {
		return nil
	}
	out := make(map[string]string, len(c.ha))
	for k, v := range c.ha {
		out[k] = v
	}
	return out
}

// startHA lays out the members, formats the first one on a new directory,
// starts the formatted members, bootstraps and starts the others (a new
// member fetches the storage identity from a running one), and waits for
// an active. On error it stops the members it started.
func (c *Cluster) startHA() (err error) {
	if c.cfg.Conf.IsSet("dfs.namenode.name.dir") {
		return errors.New("localcluster: an HA cluster lays out its members' name directories under its directory; unset dfs.namenode.name.dir")
	}
	ns, err := c.nameservice()
	if err != nil {
		return err
	}
	c.Nameservice, c.ha = ns.ID, HAKeys(ns)
	for k, v := range c.ha {
		c.conf.Set(k, v)
	}
	c.conf.Set("fs.defaultFS", "hdfs://"+ns.ID)
	c.conf.Unset(nameservice.KeyNameNodeID) // each member sets its own
	for i, m := range ns.NameNodes {
		mc := c.conf.Clone()
		mc.Set(nameservice.KeyNameNodeID, m.ID)
		mc.Set("dfs.namenode.name.dir", NameDirOf(c.cfg.Dir, i))
		nc, err := namenode.ConfigFrom(mc)
		if err != nil {
			return fmt.Errorf("namenode %s: %w", m.ID, err)
		}
		nc.Logger = c.log.With("nn", m.ID)
		if c.cfg.NameNodeConfig != nil {
			c.cfg.NameNodeConfig(&nc)
		}
		c.nnCfgs = append(c.nnCfgs, nc)
	}
	c.NameDir, c.NameNodes = c.nnCfgs[0].NameDir, make([]*namenode.NameNode, len(c.nnCfgs))
	defer func() {
		if err != nil {
			c.StopNameNode()
		}
	}()

	fresh := make([]bool, len(c.nnCfgs))
	any := false
	for i, nc := range c.nnCfgs {
		fresh[i] = !formatted(nc.NameDir)
		any = any || !fresh[i]
	}
	if !any {
		// Format bootstraps the Raft group with every member.
		v, err := namenode.Format(c.nnCfgs[0], false)
		if err != nil {
			return fmt.Errorf("format %s: %w", c.nnCfgs[0].NameDir, err)
		}
		c.Formatted, fresh[0] = v.ClusterID, false
	}
	for i := range c.nnCfgs {
		if !fresh[i] {
			if err := c.StartNameNodeAt(i); err != nil {
				return err
			}
		}
	}
	for i, nc := range c.nnCfgs {
		if !fresh[i] {
			continue
		}
		if _, err := namenode.BootstrapStandby(nc, false); err != nil {
			return fmt.Errorf("bootstrap %s: %w", nc.NameDir, err)
		}
		if err := c.StartNameNodeAt(i); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), activeTimeout)
	defer cancel()
	_, err = c.WaitActive(ctx)
	return err
}

// nameservice is the cluster's nameservice: the one Conf configures, else
// the one kept in NameserviceFile, else Config.NameNodes members on new
// addresses, which it keeps there.
func (c *Cluster) nameservice() (nameservice.Nameservice, error) {
	if c.conf.IsSet(nameservice.KeyNameservices) {
		ids := nameservice.IDs(c.conf)
		if len(ids) != 1 {
			return nameservice.Nameservice{}, fmt.Errorf("localcluster: %s lists %d nameservices, want one", nameservice.KeyNameservices, len(ids))
		}
		return lookup(c.conf, ids[0], 0)
	}
	file := filepath.Join(c.cfg.Dir, NameserviceFile)
	if _, err := os.Stat(file); err == nil {
		kept := conf.New()
		if err := kept.LoadFile(file); err != nil {
			return nameservice.Nameservice{}, err
		}
		ns, err := lookup(kept, NameserviceID, c.cfg.NameNodes)
		if err != nil {
			return ns, fmt.Errorf("%s: %w", file, err)
		}
		return ns, nil
	}
	if formatted(NameDirOf(c.cfg.Dir, 0)) {
		return nameservice.Nameservice{}, fmt.Errorf("localcluster: %s holds a single NameNode's storage, not a nameservice's (no %s); use another directory", c.cfg.Dir, NameserviceFile)
	}
	ns, err := pickNameservice(c.conf.Get("dfs.namenode.rpc-address"), c.conf.Get("dfs.namenode.http-address"), c.cfg.NameNodes)
	if err != nil {
		return ns, err
	}
	kept := conf.New()
	for k, v := range HAKeys(ns) {
		kept.Set(k, v)
	}
	if err := os.MkdirAll(c.cfg.Dir, 0o755); err != nil {
		return ns, err
	}
	return ns, kept.WriteXMLFile(file)
}

// lookup reads nameservice id from c; want, if positive, is the number of
// members it must have.
func lookup(c *conf.Configuration, id string, want int) (nameservice.Nameservice, error) {
	ns, ok, err := nameservice.Lookup(c, id)
	switch {
	case err != nil:
		return ns, err
	case !ok:
		return ns, fmt.Errorf("localcluster: nameservice %s is not configured", id)
	case len(ns.NameNodes) < 2:
		return ns, fmt.Errorf("localcluster: nameservice %s has %d NameNode, want at least 2", id, len(ns.NameNodes))
	case want > 0 && len(ns.NameNodes) != want:
		return ns, fmt.Errorf("localcluster: nameservice %s has %d NameNodes, not %d (a new directory starts a new nameservice)", id, len(ns.NameNodes), want)
	}
	for _, m := range ns.NameNodes {
		if m.HTTPAddr == "" {
			return ns, fmt.Errorf("localcluster: nameservice %s: %s has no %s%s.%s (a new member fetches the storage identity over HTTP)", id, m.ID, nameservice.PrefixHTTPAddress, id, m.ID)
		}
	}
	return ns, nil
}

// pickNameservice lays out n members of NameserviceID on the hosts of the
// rpc and http addresses: each on port+i, or on a free port when port is
// 0.
func pickNameservice(rpc, http string, n int) (nameservice.Nameservice, error) {
	if n > nameservice.MaxNameNodes {
		return nameservice.Nameservice{}, fmt.Errorf("localcluster: %d NameNodes, at most %d", n, nameservice.MaxNameNodes)
	}
	ns := nameservice.Nameservice{ID: NameserviceID}
	taken := map[string]bool{}
	addr := func(base string, i int) (string, error) {
		host, p, err := net.SplitHostPort(base)
		if err != nil {
			return "", fmt.Errorf("localcluster: %q: %w", base, err)
		}
		port, err := strconv.Atoi(p)
		if err != nil || port < 0 || port+i > 65535 {
			return "", fmt.Errorf("localcluster: %q: bad port", base)
		}
		if port > 0 {
			return net.JoinHostPort(host, strconv.Itoa(port+i)), nil
		}
		a, err := freeAddr(host, taken)
		taken[a] = true
		return a, err
	}
	for i := 0; i < n; i++ {
		r, err := addr(rpc, i)
		if err != nil {
			return ns, err
		}
		h, err := addr(http, i)
		if err != nil {
			return ns, err
		}
		ns.NameNodes = append(ns.NameNodes, nameservice.NameNode{ID: MemberID(i), RPCAddr: r, HTTPAddr: h})
	}
	return ns, nil
}

// freeAddr finds a port free on host now, away from the kernel's
// ephemeral range (32768 and up on Linux) so that an outgoing connection
// cannot take it before the member listens.
func freeAddr(host string, taken map[string]bool) (string, error) {
	for i := 0; i < 100; i++ {
		a := net.JoinHostPort(host, strconv.Itoa(20000+rand.IntN(12000)))
		if taken[a] {
			continue
		}
		if l, err := net.Listen("tcp", a); err == nil {
			l.Close()
			return a, nil
		}
	}
	return "", fmt.Errorf("localcluster: no free port on %s", host)
}
