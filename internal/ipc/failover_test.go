package ipc

import (
	"bytes"
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/internal/proto/ipcpb"
)

// fakeProxy answers calls from a script of errors (nil: success) and
// records what it was sent.
type fakeProxy struct {
	name   string
	answer func(n int) error // n counts this proxy's calls from 0
	log    *callLog
	n      int
	closed bool
}

type sent struct {
	proxy     string
	id, retry int32
}

type callLog struct {
	mu    sync.Mutex
	calls []sent
}

func (l *callLog) add(s sent) {
	l.mu.Lock()
	l.calls = append(l.calls, s)
	l.mu.Unlock()
}

func (p *fakeProxy) CallWith(ctx context.Context, method string, req, resp proto.Message, id, retry int32) error {
	p.log.add(sent{p.name, id, retry})
	n := p.n
	p.n++
	return p.answer(n)
}

func (p *fakeProxy) Close() error { p.closed = true; return nil }

var (
	errStandby   = &RemoteError{Class: ClassStandby, Message: "Operation category READ is not supported in state standby"}
	errRetriable = &RemoteError{Class: ClassRetriable, Message: "NameNode still not started"}
	errRefused   = connErr(errors.New("ipc: connecting to nn: connection refused"))
)

func always(err error) func(int) error { return func(int) error { return err } }

// newFake returns a FailoverClient over fake proxies whose sleeps are
// recorded instead of slept, with a jitter factor of exactly 1.
func newFake(cfg FailoverConfig, answers ...func(int) error) (*FailoverClient, *callLog, *[]time.Duration) {
	log := &callLog{}
	var proxies []proxy
	for i, a := range answers {
		name := string(rune('a' + i))
		cfg.Addrs = append(cfg.Addrs, name)
		proxies = append(proxies, &fakeProxy{name: name, answer: a, log: log})
	}
	var sleeps []time.Duration
	cfg.Sleep = func(ctx context.Context, d time.Duration) error {
		sleeps = append(sleeps, d)
		return ctx.Err()
	}
	cfg.Rand = func() float64 { return 0.5 }
	next := int32(100)
	return newFailover(cfg, proxies, func() int32 { next++; return next }), log, &sleeps
}

func TestFailoverOnStandbyRetriesSameCallID(t *testing.T) {
	f, log, sleeps := newFake(FailoverConfig{}, always(errStandby), always(nil))
	if err := f.Call(context.Background(), "m", nil, nil); err != nil {
		t.Fatal(err)
	}
	want := []sent{{"a", 101, 0}, {"b", 101, 1}}
	if !equalSent(log.calls, want) {
		t.Fatalf("calls %v, want %v", log.calls, want)
	}
	if len(*sleeps) != 1 || (*sleeps)[0] != 0 {
		t.Fatalf("sleeps %v, want one immediate failover", *sleeps)
	}
	if f.Current() != "b" {
		t.Fatalf("current %s, want b", f.Current())
	}
	// The next call goes straight to the active one, with a new id.
	if err := f.Call(context.Background(), "m", nil, nil); err != nil {
		t.Fatal(err)
	}
	if got := log.calls[2]; got != (sent{"b", 102, 0}) {
		t.Fatalf("second call sent %v", got)
	}
}

func TestFailoverBackoffAndLimit(t *testing.T) {
	f, log, sleeps := newFake(FailoverConfig{}, always(errStandby), always(errRefused), always(errStandby))
	err := f.Call(context.Background(), "m", nil, nil)
	if !IsClass(err, ClassStandby) && !IsConnError(err) {
		t.Fatalf("err %v, want the last attempt's", err)
	}
	if !strings.Contains(err.Error(), "giving up after 15 failovers") {
		t.Fatalf("err %q does not say it gave up", err)
	}
	if len(log.calls) != 16 {
		t.Fatalf("%d attempts, want 16 (15 failovers)", len(log.calls))
	}
	for i, c := range log.calls {
		if want := string(rune('a' + i%3)); c.proxy != want || c.retry != int32(i) || c.id != 101 {
			t.Fatalf("attempt %d sent %v, want proxy %s retry %d id 101", i, c, want, i)
		}
	}
	s := time.Second
	want := []time.Duration{0, s, 2 * s, 4 * s, 8 * s, 15 * s, 15 * s, 15 * s, 15 * s, 15 * s, 15 * s, 15 * s, 15 * s, 15 * s, 15 * s}
	if !equalDurations(*sleeps, want) {
		t.Fatalf("sleeps %v, want %v", *sleeps, want)
	}
}

func TestFailoverConfiguredLimits(t *testing.T) {
	cfg := FailoverConfig{MaxFailovers: 2, SleepBase: 10 * time.Millisecond, SleepMax: 30 * time.Millisecond}
	f, log, sleeps := newFake(cfg, always(errStandby), always(errStandby))
	if err := f.Call(context.Background(), "m", nil, nil); !IsClass(err, ClassStandby) {
		t.Fatalf("err %v", err)
	}
	if len(log.calls) != 3 || !equalDurations(*sleeps, []time.Duration{0, 20 * time.Millisecond}) {
		t.Fatalf("%d calls, sleeps %v", len(log.calls), *sleeps)
	}
}

func TestFailoverJitter(t *testing.T) {
	f, _, _ := newFake(FailoverConfig{}, always(nil))
	for _, r := range []float64{0, 0.999} {
		f.cfg.Rand = func() float64 { return r }
		if d, want := f.backoff(2), time.Duration(float64(2*time.Second)*(r+0.5)); d != want {
			t.Errorf("backoff(2) with rand %v = %v, want %v", r, d, want)
		}
	}
	f.cfg.SleepBase = time.Hour // base<<n overflows: capped, not wrapped
	f.cfg.Rand = func() float64 { return 0.5 }
	if d := f.backoff(40); d != f.cfg.SleepMax {
		t.Errorf("backoff(40) = %v, want the cap %v", d, f.cfg.SleepMax)
	}
}

func TestFailoverReturnsOtherErrors(t *testing.T) {
	notFound := &RemoteError{Class: ClassFileNotFound, Message: "/x"}
	for _, err := range []error{notFound, ErrClientClosed, errors.New("ipc: response from a: bad frame")} {
		f, log, _ := newFake(FailoverConfig{}, always(err), always(nil))
		if got := f.Call(context.Background(), "m", nil, nil); got != err {
			t.Errorf("got %v, want %v unchanged", got, err)
		}
		if len(log.calls) != 1 || f.Current() != "a" {
			t.Errorf("%v: %d calls, current %s: should not fail over", err, len(log.calls), f.Current())
		}
	}
}

func TestRetriableRetriesSameServer(t *testing.T) {
	cfg := FailoverConfig{MaxRetries: 3}
	f, log, sleeps := newFake(cfg, func(n int) error {
		if n < 2 {
			return errRetriable
		}
		return nil
	}, always(nil))
	if err := f.Call(context.Background(), "m", nil, nil); err != nil {
		t.Fatal(err)
	}
	want := []sent{{"a", 101, 0}, {"a", 101, 1}, {"a", 101, 2}}
	if !equalSent(log.calls, want) || !equalDurations(*sleeps, []time.Duration{0, time.Second}) {
		t.Fatalf("calls %v sleeps %v", log.calls, *sleeps)
	}
	f, log, _ = newFake(cfg, always(errRetriable))
	if err := f.Call(context.Background(), "m", nil, nil); !IsClass(err, ClassRetriable) || len(log.calls) != 4 {
		t.Fatalf("err %v after %d calls, want RetriableException after 4", err, len(log.calls))
	}
}

func TestFailoverStopsWhenContextDone(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	f, log, _ := newFake(FailoverConfig{}, func(int) error { cancel(); return errStandby }, always(nil))
	if err := f.Call(ctx, "m", nil, nil); err != errStandby {
		t.Fatalf("err %v, want the attempt's error once ctx is done", err)
	}
	if len(log.calls) != 1 {
		t.Fatalf("%d calls after cancel", len(log.calls))
	}

	// The real sleep ends with ctx.
	f, _, _ = newFake(FailoverConfig{SleepBase: time.Hour, SleepMax: time.Hour}, always(errStandby), always(errStandby))
	f.cfg.Sleep = sleepCtx
	ctx, cancel = context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := f.Call(ctx, "m", nil, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v, want deadline exceeded", err)
	}
	if time.Since(start) > 10*time.Second {
		t.Fatalf("sleep ignored ctx: %v", time.Since(start))
	}
}

// Two calls failing on the same standby move the client once, not twice.
func TestConcurrentFailuresFailOverOnce(t *testing.T) {
	var arrived sync.WaitGroup
	arrived.Add(2)
	release := make(chan struct{})
	log := &callLog{}
	var mu sync.Mutex
	var hits [3]int
	mk := func(i int, err error) proxy {
		return proxyFunc(func(id, retry int32) error {
			mu.Lock()
			hits[i]++
			mu.Unlock()
			log.add(sent{string(rune('a' + i)), id, retry})
			if i == 0 {
				arrived.Done()
				<-release
			}
			return err
		})
	}
	f := newFailover(FailoverConfig{Addrs: []string{"a", "b", "c"}, Sleep: func(context.Context, time.Duration) error { return nil }},
		[]proxy{mk(0, errStandby), mk(1, nil), mk(2, errStandby)}, NewClient(ClientConfig{}).NextCallID)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = f.Call(context.Background(), "m", nil, nil) }()
	}
	arrived.Wait()
	close(release)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if hits != [3]int{2, 2, 0} || f.Current() != "b" {
		t.Fatalf("hits %v current %s: want both calls moved to b once", hits, f.Current())
	}
}

type proxyFunc func(id, retry int32) error

func (p proxyFunc) CallWith(ctx context.Context, method string, req, resp proto.Message, id, retry int32) error {
	return p(id, retry)
}
func (p proxyFunc) Close() error { return nil }

func equalSent(a, b []sent) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func equalDurations(a, b []time.Duration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// haServer is a server whose "who" method answers its name, or
// StandbyException while standby is set, and records its callers.
type haServer struct {
	srv  *Server
	addr string

	mu      sync.Mutex
	standby bool
	hang    bool // calls wait for their context to end
	callers []Caller
}

func startHAServer(t *testing.T, name string, standby bool) *haServer {
	t.Helper()
	h := &haServer{srv: NewServer(ServerConfig{}), standby: standby}
	h.srv.Register(testProtocol, map[string]Method{
		"who": Unary(func(ctx context.Context, req *ipcpb.UserInformationProto) (*ipcpb.UserInformationProto, error) {
			c, _ := CallerFrom(ctx)
			h.mu.Lock()
			defer h.mu.Unlock()
			h.callers = append(h.callers, *c)
			if h.hang {
				h.mu.Unlock()
				<-ctx.Done()
				h.mu.Lock()
				return nil, ctx.Err()
			}
			if h.standby {
				return nil, Errorf(ClassStandby, "Operation category READ is not supported in state standby")
			}
			return &ipcpb.UserInformationProto{EffectiveUser: proto.String(name)}, nil
		}),
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h.addr = ln.Addr().String()
	go h.srv.Serve(ln)
	t.Cleanup(func() { h.srv.Close() })
	return h
}

func (h *haServer) seen() []Caller {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Caller(nil), h.callers...)
}

func who(t *testing.T, f *FailoverClient) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var resp ipcpb.UserInformationProto
	if err := f.Call(ctx, "who", &ipcpb.UserInformationProto{}, &resp); err != nil {
		t.Fatalf("who: %v", err)
	}
	return resp.GetEffectiveUser()
}

func newHAClient(t *testing.T, addrs ...string) *FailoverClient {
	f, err := NewFailoverClient(FailoverConfig{
		Addrs:     addrs,
		Client:    ClientConfig{User: "alice", Protocol: testProtocol, DialTimeout: 5 * time.Second},
		SleepBase: time.Millisecond, SleepMax: 10 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestFailoverOverIPCStandbyThenActive(t *testing.T) {
	s1 := startHAServer(t, "nn1", true)
	s2 := startHAServer(t, "nn2", false)
	f := newHAClient(t, s1.addr, s2.addr)
	if got := who(t, f); got != "nn2" {
		t.Fatalf("answered by %s, want nn2", got)
	}
	c1, c2 := s1.seen(), s2.seen()
	if len(c1) != 1 || len(c2) != 1 {
		t.Fatalf("nn1 saw %d calls, nn2 %d; want 1 each", len(c1), len(c2))
	}
	if c1[0].Retry != 0 || c2[0].Retry != 1 || c1[0].CallID != c2[0].CallID || !bytes.Equal(c1[0].ClientID, c2[0].ClientID) {
		t.Fatalf("nn1 saw %+v, nn2 %+v: want the same client and call id, retry 0 then 1", c1[0], c2[0])
	}
	// Later calls stay on the active NameNode.
	if got := who(t, f); got != "nn2" || len(s1.seen()) != 1 {
		t.Fatalf("second call answered by %s, nn1 saw %d calls", got, len(s1.seen()))
	}
}

func TestFailoverOverIPCServerClosed(t *testing.T) {
	s1 := startHAServer(t, "nn1", false)
	s2 := startHAServer(t, "nn2", false)
	f := newHAClient(t, s1.addr, s2.addr)
	if got := who(t, f); got != "nn1" {
		t.Fatalf("answered by %s, want nn1", got)
	}
	s1.srv.Close()
	if got := who(t, f); got != "nn2" {
		t.Fatalf("after nn1 closed, answered by %s, want nn2", got)
	}
	if f.Current() != s2.addr {
		t.Fatalf("current %s, want %s", f.Current(), s2.addr)
	}
	// nn2 going standby and nn1 gone: the client cycles until it gives up.
	s2.mu.Lock()
	s2.standby = true
	s2.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err := f.Call(ctx, "who", &ipcpb.UserInformationProto{}, &ipcpb.UserInformationProto{})
	if !IsClass(err, ClassStandby) && !IsConnError(err) || !strings.Contains(err.Error(), "giving up after 15 failovers") {
		t.Fatalf("err %v, want to give up after 15 failovers", err)
	}
}

// A server that closes while a call is in flight on it: the call is sent
// to the next one with the same call id, retry 1.
func TestFailoverOverIPCServerClosedDuringCall(t *testing.T) {
	s1 := startHAServer(t, "nn1", false)
	s2 := startHAServer(t, "nn2", false)
	s1.mu.Lock()
	s1.hang = true
	s1.mu.Unlock()
	f := newHAClient(t, s1.addr, s2.addr)
	done := make(chan string, 1)
	go func() {
		var resp ipcpb.UserInformationProto
		if err := f.Call(context.Background(), "who", &ipcpb.UserInformationProto{}, &resp); err != nil {
			done <- err.Error()
			return
		}
		done <- resp.GetEffectiveUser()
	}()
	deadline := time.Now().Add(20 * time.Second)
	for len(s1.seen()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the call never reached nn1")
		}
		time.Sleep(time.Millisecond)
	}
	s1.srv.Close()
	if got := <-done; got != "nn2" {
		t.Fatalf("answered by %s, want nn2", got)
	}
	c1, c2 := s1.seen(), s2.seen()
	if len(c2) != 1 || c2[0].CallID != c1[0].CallID || c2[0].Retry != 1 || !bytes.Equal(c1[0].ClientID, c2[0].ClientID) {
		t.Fatalf("nn1 saw %+v, nn2 %+v: want the same call resent with retry 1", c1, c2)
	}
}

func TestFailoverConfigFrom(t *testing.T) {
	cfg, err := FailoverConfigFrom(conf.New())
	if err != nil || cfg.MaxFailovers != 15 || cfg.MaxRetries != 10 || cfg.SleepBase != 500*time.Millisecond || cfg.SleepMax != 15*time.Second {
		t.Fatalf("defaults: %+v, %v", cfg, err)
	}
	c := conf.New()
	c.Set("dfs.client.failover.max.attempts", "0")
	c.Set("dfs.client.failover.sleep.base.millis", "20")
	cfg, err = FailoverConfigFrom(c)
	if err != nil || cfg.MaxFailovers != -1 || cfg.SleepBase != 20*time.Millisecond {
		t.Fatalf("configured: %+v, %v", cfg, err)
	}
	f, log, _ := newFake(cfg, always(errStandby), always(nil))
	if err := f.Call(context.Background(), "m", nil, nil); !IsClass(err, ClassStandby) || len(log.calls) != 1 {
		t.Fatalf("max.attempts 0: %v after %d calls, want no failover", err, len(log.calls))
	}
	for _, kv := range [][2]string{{"dfs.client.failover.max.attempts", "-2"}, {"dfs.client.failover.sleep.max.millis", "-1"}, {"dfs.client.retry.max.attempts", "x"}} {
		c := conf.New()
		c.Set(kv[0], kv[1])
		if _, err := FailoverConfigFrom(c); err == nil {
			t.Errorf("%s=%s accepted", kv[0], kv[1])
		}
	}
}

func TestCallWithSendsRetryCount(t *testing.T) {
	s := startHAServer(t, "nn1", false)
	id := NewClientID()
	c := NewClient(ClientConfig{Addr: s.addr, User: "alice", Protocol: testProtocol, ClientID: id})
	defer c.Close()
	ctx := context.Background()
	var resp ipcpb.UserInformationProto
	if err := c.CallWith(ctx, "who", &ipcpb.UserInformationProto{}, &resp, 7, 3); err != nil {
		t.Fatal(err)
	}
	if err := c.Call(ctx, "who", &ipcpb.UserInformationProto{}, &resp); err != nil {
		t.Fatal(err)
	}
	got := s.seen()
	if got[0].CallID != 7 || got[0].Retry != 3 || !bytes.Equal(got[0].ClientID, id) {
		t.Fatalf("CallWith arrived as %+v, want call id 7, retry 3, client id %x", got[0], id)
	}
	if got[1].Retry != -1 || got[1].CallID != 0 {
		t.Fatalf("Call arrived as %+v, want call id 0 and no retry count (-1)", got[1])
	}
	if !bytes.Equal(c.ClientID(), id) {
		t.Fatalf("ClientID() = %x, want %x", c.ClientID(), id)
	}
}

func TestConnErrorOnRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c := NewClient(ClientConfig{Addr: addr, Protocol: testProtocol})
	defer c.Close()
	err = c.Call(context.Background(), "who", &ipcpb.UserInformationProto{}, &ipcpb.UserInformationProto{})
	if !IsConnError(err) {
		t.Fatalf("err %v (%T), want a ConnError", err, err)
	}
	c.Close()
	if err := c.Call(context.Background(), "who", &ipcpb.UserInformationProto{}, nil); IsConnError(err) || !errors.Is(err, ErrClientClosed) {
		t.Fatalf("after Close: %v, want ErrClientClosed, not a ConnError", err)
	}
}
