package hostnet

import (
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"testing"
	"testing/fstest"
	"time"
)

func TestReadLink(t *testing.T) {
	sys := fstest.MapFS{
		"st0/statistics/tx_bytes":   {Data: []byte("1048576\n")},
		"st0/statistics/rx_bytes":   {Data: []byte("2048\n")},
		"st0/statistics/tx_packets": {Data: []byte("800\n")},
		"st0/statistics/rx_packets": {Data: []byte("31\n")},
		"bad/statistics/tx_bytes":   {Data: []byte("12x\n")},
		"bad/statistics/rx_bytes":   {Data: []byte("1\n")},
		"bad/statistics/tx_packets": {Data: []byte("1\n")},
		"bad/statistics/rx_packets": {Data: []byte("1\n")},
	}
	c, err := ReadLink(sys, "st0")
	if err != nil || c != (LinkCounters{InBytes: 1048576, OutBytes: 2048, InPackets: 800, OutPackets: 31}) {
		t.Fatalf("ReadLink = %+v, %v", c, err)
	}
	if d := c.Sub(LinkCounters{InBytes: 1, OutBytes: 2, InPackets: 3, OutPackets: 4}); d != (LinkCounters{1048575, 2046, 797, 27}) {
		t.Errorf("Sub = %+v", d)
	}
	for _, dev := range []string{"bad", "missing"} {
		if _, err := ReadLink(sys, dev); err == nil {
			t.Errorf("ReadLink(%s) accepted", dev)
		}
	}
}

// sinkEnv makes the test binary a TCP sink on the address it names
// (TestMain): a program to run on a host.
const sinkEnv = "HOSTNET_TEST_SINK"

func TestMain(m *testing.M) {
	if addr := os.Getenv(sinkEnv); addr != "" {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			os.Exit(2)
		}
		c, err := l.Accept()
		if err == nil {
			io.Copy(io.Discard, c)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// A megabyte sent from the client to a host is in the host's link's
// InBytes (with the frames' headers), its ACKs in OutBytes; the client
// has no link.
func TestLink(t *testing.T) {
	n, err := New()
	if errors.Is(err, ErrUnavailable) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	a, err := n.AddHost("a", 2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.Link(ClientHost); err == nil {
		t.Error("the client host has link counters")
	}
	if _, err := exec.LookPath("tc"); err == nil {
		if err := n.Shape("a", 200_000_000); err != nil {
			t.Fatal(err)
		}
		if r := n.Rate("a"); r != 200_000_000 {
			t.Errorf("Rate = %d after Shape", r)
		}
	}
	addr := a.IP + ":7000"
	w := n.Wrap("a")
	sink := exec.Command(w[0], append(w[1:], os.Args[0], "-test.run=^$")...)
	sink.Env = append(os.Environ(), sinkEnv+"="+addr)
	if err := sink.Start(); err != nil {
		t.Fatal(err)
	}
	defer sink.Process.Kill()
	var c net.Conn
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err = net.DialTimeout("tcp", addr, time.Second); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	before, err := n.Link("a")
	if err != nil {
		t.Fatal(err)
	}
	const size = 1 << 20
	if _, err := c.Write(make([]byte, size)); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if err := sink.Wait(); err != nil {
		t.Fatalf("sink: %v", err)
	}
	after, err := n.Link("a")
	if err != nil {
		t.Fatal(err)
	}
	d := after.Sub(before)
	t.Logf("1 MiB to host a: %+v", d)
	// Headers once per offloaded packet of up to 64 KiB, the
	// handshake's end and the FIN: a little more than was sent.
	if d.InBytes < size || d.InBytes > size*11/10 || d.InPackets < size/65536 {
		t.Errorf("in: %d bytes, %d packets for %d sent", d.InBytes, d.InPackets, size)
	}
	if d.OutBytes == 0 || d.OutBytes > size/10 || d.OutPackets == 0 {
		t.Errorf("out (ACKs): %d bytes, %d packets", d.OutBytes, d.OutPackets)
	}
}
