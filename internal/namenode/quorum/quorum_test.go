package quorum

import (
	"bytes"
	"io"
	"log/slog"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

func TestEntryRoundTrip(t *testing.T) {
	e := Entry{Epoch: 0xdeadbeef, TxID: 300, Record: []byte("edit")}
	got, err := DecodeEntry(AppendEntry(nil, e))
	if err != nil || got.Epoch != e.Epoch || got.TxID != e.TxID || !bytes.Equal(got.Record, e.Record) {
		t.Fatalf("round trip = %+v, %v", got, err)
	}
	for name, data := range map[string][]byte{
		"empty":   nil,
		"short":   {1, 2, 3},
		"version": AppendEntry(nil, e)[1:],
		"txid 0":  append([]byte{1, 0, 0, 0, 0, 0, 0, 0, 1}, 0),
	} {
		if _, err := DecodeEntry(data); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
}

func FuzzDecodeEntry(f *testing.F) {
	f.Add(AppendEntry(nil, Entry{Epoch: 1, TxID: 1, Record: []byte("x")}))
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := DecodeEntry(data)
		if err != nil {
			return
		}
		if again, err := DecodeEntry(AppendEntry(nil, e)); err != nil || again.TxID != e.TxID || !bytes.Equal(again.Record, e.Record) {
			t.Fatalf("re-encoding %+v: %+v %v", e, again, err)
		}
	})
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// The mux routes by the first four bytes, gives IPC connections their
// bytes back, refuses Raft from outside the group, and a silent
// connection does not hold up others.
func TestMux(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var refuse atomic.Bool
	m := NewMux(ln, func(net.Addr) bool { return !refuse.Load() }, quiet())
	defer m.Close()
	addr := ln.Addr().String()

	silent, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()

	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte("hrpc\x09rest"))
	got := acceptWithin(t, m.Accept)
	buf := make([]byte, 9)
	if _, err := io.ReadFull(got, buf); err != nil || string(buf) != "hrpc\x09rest" {
		t.Fatalf("IPC side read %q, %v", buf, err)
	}
	got.Close()

	rc, err := m.Raft().Dial(raft.ServerAddress(addr), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	rc.Write([]byte{7})
	r := acceptWithin(t, m.Raft().Accept)
	b := make([]byte, 1)
	if _, err := io.ReadFull(r, b); err != nil || b[0] != 7 {
		t.Fatalf("Raft side read %v, %v (the magic must be consumed)", b, err)
	}
	r.Close()

	refuse.Store(true)
	rc2, err := m.Raft().Dial(raft.ServerAddress(addr), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer rc2.Close()
	rc2.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := rc2.Read(b); err == nil {
		t.Fatal("a Raft connection from outside the group was served")
	}
}

func acceptWithin(t *testing.T, accept func() (net.Conn, error)) net.Conn {
	t.Helper()
	ch := make(chan net.Conn, 1)
	go func() {
		c, err := accept()
		if err == nil {
			ch <- c
		}
	}()
	select {
	case c := <-ch:
		return c
	case <-time.After(5 * time.Second):
		t.Fatal("no connection accepted within 5 s")
		return nil
	}
}

// One address cannot take every sniffing slot.
func TestMuxPerAddressLimit(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	m := NewMux(ln, nil, quiet())
	defer m.Close()
	var conns []net.Conn
	for i := 0; i < maxSniffingPerIP+10; i++ {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	// Beyond the limit connections are closed at once.
	closed := 0
	for _, c := range conns {
		c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		if _, err := c.Read(make([]byte, 1)); err == io.EOF {
			closed++
		}
	}
	if closed < 10 {
		t.Fatalf("%d of %d silent connections from one address were closed, want at least 10", closed, len(conns))
	}
}
