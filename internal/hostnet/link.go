package hostnet

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
)

// LinkCounters are what crossed a host's link, counted by the kernel on
// the bridge end of its veth pair: that end transmits what goes into the
// host and receives what comes out of it. Bytes are frames from the
// Ethernet header on (no preamble or FCS); with segmentation offload a
// packet is up to 64 KiB of segments whose headers are counted once, so
// packets and header bytes are fewer than on a wire.
type LinkCounters struct {
	InBytes, OutBytes     uint64
	InPackets, OutPackets uint64
}

// Sub is c minus o, for what crossed between two readings.
func (c LinkCounters) Sub(o LinkCounters) LinkCounters {
	return LinkCounters{InBytes: c.InBytes - o.InBytes, OutBytes: c.OutBytes - o.OutBytes,
		InPackets: c.InPackets - o.InPackets, OutPackets: c.OutPackets - o.OutPackets}
}

// sysClassNet is where the kernel lists network devices and their
// statistics.
const sysClassNet = "/sys/class/net"

// Link reads host name's link counters. ClientHost has none: it is the
// bridge itself, and what it sends or receives crosses the other hosts'
// links, where it is counted.
func (n *Network) Link(name string) (LinkCounters, error) {
	h := n.hosts[name]
	if h == nil {
		return LinkCounters{}, fmt.Errorf("hostnet: no host %q", name)
	}
	if h.Veth == "" {
		return LinkCounters{}, errors.New("hostnet: Link: the client host is the bridge and has no link of its own")
	}
	return ReadLink(os.DirFS(sysClassNet), h.Veth)
}

// ReadLink reads the counters of dev, the bridge end of a host's veth
// pair, from sys (a /sys/class/net tree): its statistics' tx_* are what
// it sent into the host, rx_* what it received from it.
func ReadLink(sys fs.FS, dev string) (LinkCounters, error) {
	var c LinkCounters
	for _, f := range []struct {
		name string
		to   *uint64
	}{
		{"tx_bytes", &c.InBytes}, {"rx_bytes", &c.OutBytes},
		{"tx_packets", &c.InPackets}, {"rx_packets", &c.OutPackets},
	} {
		b, err := fs.ReadFile(sys, dev+"/statistics/"+f.name)
		if err != nil {
			return LinkCounters{}, fmt.Errorf("hostnet: link %s: %w", dev, err)
		}
		v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
		if err != nil {
			return LinkCounters{}, fmt.Errorf("hostnet: link %s: %s: %w", dev, f.name, err)
		}
		*f.to = v
	}
	return c, nil
}

// Rate is the rate host name's link was last shaped to by Shape, in bits
// per second; 0 when unshaped.
func (n *Network) Rate(name string) int64 { return n.rates[name] }
