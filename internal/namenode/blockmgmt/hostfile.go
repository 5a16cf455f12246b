package blockmgmt

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"time"
)

// HostEntry names DataNodes in a hosts file: a host name or address, and
// a transfer port (0: every port of the host).
type HostEntry struct {
	Host string
	Port uint32
	// addrs are Host's addresses, resolved when the file is loaded.
	addrs []string
}

func (e HostEntry) String() string {
	if e.Port == 0 {
		return e.Host
	}
	return net.JoinHostPort(e.Host, strconv.Itoa(int(e.Port)))
}

// matches compares addresses only: d.IP is the address the node connects
// from, d.Host is what it claims (a name entry matches through the
// addresses it resolved to when the file was loaded).
func (e HostEntry) matches(d *Datanode) bool {
	if e.Port != 0 && e.Port != d.XferPort {
		return false
	}
	if e.Host == d.IP {
		return true
	}
	for _, a := range e.addrs {
		if a == d.IP {
			return true
		}
	}
	return false
}

// HostRule is what a hosts file says of the DataNodes an entry matches:
// the admin state they should be in (Normal, Decommissioned or
// InMaintenance) and, for maintenance, until when.
type HostRule struct {
	Entry             HostEntry
	State             AdminState
	MaintenanceExpire time.Time // zero: no expiry
}

// Hosts is the NameNode's view of dfs.hosts and dfs.hosts.exclude (Hadoop's
// HostConfigManager): which DataNodes may register and which should be
// decommissioned or in maintenance. The zero Hosts allows every node and
// decommissions none.
type Hosts struct {
	// Include lists the DataNodes allowed to register; empty allows all.
	Include []HostEntry
	// Rules are the non-Normal states asked for, first match wins.
	Rules []HostRule
}

// Included reports whether d may register.
func (h *Hosts) Included(d *Datanode) bool {
	if h == nil || len(h.Include) == 0 {
		return true
	}
	for _, e := range h.Include {
		if e.matches(d) {
			return true
		}
	}
	return false
}

// Wanted is the admin state the hosts files ask of d.
func (h *Hosts) Wanted(d *Datanode) HostRule {
	if h != nil {
		for _, r := range h.Rules {
			if r.Entry.matches(d) {
				return r
			}
		}
	}
	return HostRule{State: Normal}
}

// maxHostsFileSize bounds a hosts file the NameNode reads.
const maxHostsFileSize = 64 << 20

// ParseHostsFile reads Hadoop's plain hosts format: one host or host:port
// per line (several may share a line, separated by white space), '#'
// starting a comment.
func ParseHostsFile(r io.Reader) ([]HostEntry, error) {
	var out []HostEntry
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		for _, f := range strings.Fields(line) {
			e, err := parseHostEntry(f, 0)
			if err != nil {
				return nil, err
			}
			out = append(out, e)
		}
	}
	return out, sc.Err()
}

func parseHostEntry(s string, port int) (HostEntry, error) {
	host := s
	if h, p, err := net.SplitHostPort(s); err == nil {
		n, err := strconv.Atoi(p)
		if err != nil || n <= 0 || n > 65535 {
			return HostEntry{}, fmt.Errorf("bad port in hosts entry %q", s)
		}
		host, port = h, n
	}
	if host == "" || port < 0 || port > 65535 {
		return HostEntry{}, fmt.Errorf("bad hosts entry %q", s)
	}
	return HostEntry{Host: host, Port: uint32(port)}, nil
}

// combinedHost is one entry of Hadoop's CombinedHostsFileReader JSON.
type combinedHost struct {
	HostName                  string `json:"hostName"`
	Port                      int    `json:"port"`
	UpgradeDomain             string `json:"upgradeDomain"`
	AdminState                string `json:"adminState"`
	MaintenanceExpireTimeInMS int64  `json:"maintenanceExpireTimeInMS"`
}

// ParseCombinedHostsFile reads the JSON of Hadoop's
// CombinedHostFileManager: an array of {"hostName", "port",
// "adminState": NORMAL|DECOMMISSIONED|IN_MAINTENANCE,
// "maintenanceExpireTimeInMS"} objects (or, the older form, those objects
// one after another). Every entry is included; those not NORMAL become
// rules.
func ParseCombinedHostsFile(data []byte) (*Hosts, error) {
	var hosts []combinedHost
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '[' {
		if err := json.Unmarshal(data, &hosts); err != nil {
			return nil, fmt.Errorf("hosts file: %w", err)
		}
	} else {
		dec := json.NewDecoder(bytes.NewReader(data))
		for dec.More() {
			var h combinedHost
			if err := dec.Decode(&h); err != nil {
				return nil, fmt.Errorf("hosts file: %w", err)
			}
			hosts = append(hosts, h)
		}
	}
	out := &Hosts{}
	for _, h := range hosts {
		e, err := parseHostEntry(h.HostName, h.Port)
		if err != nil {
			return nil, err
		}
		out.Include = append(out.Include, e)
		switch strings.ToUpper(h.AdminState) {
		case "", "NORMAL":
		case "DECOMMISSIONED":
			out.Rules = append(out.Rules, HostRule{Entry: e, State: Decommissioned})
		case "IN_MAINTENANCE":
			r := HostRule{Entry: e, State: InMaintenance}
			if h.MaintenanceExpireTimeInMS > 0 {
				r.MaintenanceExpire = time.UnixMilli(h.MaintenanceExpireTimeInMS)
			}
			out.Rules = append(out.Rules, r)
		default:
			return nil, fmt.Errorf("hosts file: unknown adminState %q for %s", h.AdminState, h.HostName)
		}
	}
	return out, nil
}

// HostsFiles names the files LoadHosts reads.
type HostsFiles struct {
	Include, Exclude string // dfs.hosts, dfs.hosts.exclude
	// Combined selects the JSON format for Include
	// (dfs.namenode.hosts.provider.classname is CombinedHostFileManager);
	// Exclude is then unused.
	Combined bool
}

// CombinedHostFileManagerClass is Hadoop's class name selecting the JSON
// hosts file.
const CombinedHostFileManagerClass = "org.apache.hadoop.hdfs.server.blockmanagement.CombinedHostFileManager"

func readBounded(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxHostsFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxHostsFileSize {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, maxHostsFileSize)
	}
	return data, nil
}

// LoadHosts reads the hosts files and resolves their host names (which
// may wait on DNS: call it without the namesystem lock). An unset file
// is empty; a file that cannot be read is an error, as Hadoop's
// refreshNodes fails.
func LoadHosts(f HostsFiles) (*Hosts, error) {
	h := &Hosts{}
	if f.Combined {
		if f.Include != "" {
			data, err := readBounded(f.Include)
			if err != nil {
				return nil, err
			}
			if h, err = ParseCombinedHostsFile(data); err != nil {
				return nil, err
			}
		}
	} else {
		for _, which := range []struct {
			path string
			inc  bool
		}{{f.Include, true}, {f.Exclude, false}} {
			if which.path == "" {
				continue
			}
			data, err := readBounded(which.path)
			if err != nil {
				return nil, err
			}
			es, err := ParseHostsFile(bytes.NewReader(data))
			if err != nil {
				return nil, fmt.Errorf("%s: %w", which.path, err)
			}
			if which.inc {
				h.Include = es
			} else {
				for _, e := range es {
					h.Rules = append(h.Rules, HostRule{Entry: e, State: Decommissioned})
				}
			}
		}
	}
	resolve := func(e *HostEntry) {
		if net.ParseIP(e.Host) == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			e.addrs, _ = net.DefaultResolver.LookupHost(ctx, e.Host)
			cancel()
		}
	}
	for i := range h.Include {
		resolve(&h.Include[i])
	}
	for i := range h.Rules {
		resolve(&h.Rules[i].Entry)
	}
	return h, nil
}
