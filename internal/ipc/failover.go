package ipc

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/conf"
)

// ClassRetriable is the exception a server answers when the call may
// succeed if retried on the same server after a while.
const ClassRetriable = "org.apache.hadoop.ipc.RetriableException"

// Hadoop's defaults for FailoverConfig.
const (
	DefaultFailoverMaxAttempts = 15                     // dfs.client.failover.max.attempts
	DefaultFailoverSleepBase   = 500 * time.Millisecond // dfs.client.failover.sleep.base.millis
	DefaultFailoverSleepMax    = 15 * time.Second       // dfs.client.failover.sleep.max.millis
	DefaultRetryMaxAttempts    = 10                     // dfs.client.retry.max.attempts
)

// FailoverConfig configures a FailoverClient.
type FailoverConfig struct {
	// Addrs are the servers' host:port, tried in this order (Hadoop's
	// ConfiguredFailoverProxyProvider); at least one.
	Addrs []string
	// Client is the configuration of each server's Client; its Addr is
	// ignored and its ClientID, when nil, is made once for all servers.
	Client ClientConfig
	// MaxFailovers bounds the failovers of one call
	// (dfs.client.failover.max.attempts); 0 means 15, negative none.
	MaxFailovers int
	// MaxRetries bounds the retries of one call on the same server after
	// RetriableException (dfs.client.retry.max.attempts); 0 means 10,
	// negative none.
	MaxRetries int
	// SleepBase and SleepMax shape the backoff before the n-th failover
	// or retry, n >= 1: min(SleepBase·2^n, SleepMax) times a random factor
	// in [0.5, 1.5) (dfs.client.failover.sleep.base.millis, 500 ms, and
	// dfs.client.failover.sleep.max.millis, 15 s). The first is immediate.
	SleepBase, SleepMax time.Duration
	// Sleep waits d or until ctx is done, returning ctx's error then; nil
	// means a timer. Tests inject it.
	Sleep func(ctx context.Context, d time.Duration) error
	// Rand returns a float in [0, 1) for the backoff's jitter; nil means
	// math/rand/v2.
	Rand func() float64
}

// FailoverConfigFrom reads the failover keys: dfs.client.failover.max.attempts,
// dfs.client.failover.sleep.base.millis, dfs.client.failover.sleep.max.millis
// and dfs.client.retry.max.attempts. Addrs and Client are left for the caller.
func FailoverConfigFrom(c *conf.Configuration) (FailoverConfig, error) {
	r := conf.NewReader(c, "")
	cfg := FailoverConfig{
		MaxFailovers: int(r.Int("dfs.client.failover.max.attempts")),
		MaxRetries:   int(r.Int("dfs.client.retry.max.attempts")),
		SleepBase:    r.Duration("dfs.client.failover.sleep.base.millis", time.Millisecond),
		SleepMax:     r.Duration("dfs.client.failover.sleep.max.millis", time.Millisecond),
	}
	if err := r.Err(); err != nil {
		return cfg, err
	}
	// A configured 0 means none, as in Hadoop; in the struct 0 is the default.
	for _, n := range []*int{&cfg.MaxFailovers, &cfg.MaxRetries} {
		if *n == 0 {
			*n = -1
		}
	}
	switch {
	case cfg.MaxFailovers < -1:
		return cfg, fmt.Errorf("ipc: dfs.client.failover.max.attempts must not be negative, got %d", cfg.MaxFailovers)
	case cfg.MaxRetries < -1:
		return cfg, fmt.Errorf("ipc: dfs.client.retry.max.attempts must not be negative, got %d", cfg.MaxRetries)
	case cfg.SleepBase < 0 || cfg.SleepMax < 0:
		return cfg, errors.New("ipc: dfs.client.failover.sleep.*.millis must not be negative")
	}
	return cfg, nil
}

// proxy is what a FailoverClient calls: one server's Client.
type proxy interface {
	CallWith(ctx context.Context, method string, req, resp proto.Message, id, retry int32) error
	Close() error
}

// FailoverClient calls the active one of several servers that answer
// org.apache.hadoop.ipc.StandbyException while they are not active: the
// Go form of Hadoop's RetryInvocationHandler over a
// ConfiguredFailoverProxyProvider with FailoverOnNetworkExceptionRetry.
//
// A call goes to the current server. When it fails with StandbyException
// or a connection failure (ConnError: refused, reset, EOF, dial timeout),
// the client moves to the next server, round-robin, and sends the call
// again with the same call id and a retry count one higher, so that a
// server's retry cache recognises an at-most-once call that did run
// before the connection broke. RetriableException retries on the same
// server. Every other answer, success or RemoteError, is returned as is.
// The n-th failover (or retry) after the first waits as FailoverConfig
// says; the wait ends early with ctx's error when ctx is done.
//
// Every call is taken to be idempotent or at-most-once, as all of
// Hadoop's ClientProtocol methods are annotated. A FailoverClient is safe
// for concurrent use; a failover by one call moves all later calls, and
// calls that failed on a server already failed over from do not move the
// client again.
type FailoverClient struct {
	cfg     FailoverConfig
	proxies []proxy
	addrs   []string
	ids     func() int32

	mu      sync.Mutex
	current int    // index into proxies
	epoch   uint64 // counts failovers, so that concurrent failures move once
}

// NewFailoverClient returns a FailoverClient with one Client per address,
// all sharing one client id. It does not connect until the first call.
func NewFailoverClient(cfg FailoverConfig) (*FailoverClient, error) {
	if len(cfg.Addrs) == 0 {
		return nil, errors.New("ipc: failover needs at least one address")
	}
	if len(cfg.Client.ClientID) != ClientIDLength {
		cfg.Client.ClientID = NewClientID()
	}
	clients := make([]*Client, len(cfg.Addrs))
	proxies := make([]proxy, len(cfg.Addrs))
	for i, a := range cfg.Addrs {
		cc := cfg.Client
		cc.Addr = a
		clients[i] = NewClient(cc)
		proxies[i] = clients[i]
	}
	// One id sequence for the shared client id: the server's retry cache
	// keys by (client id, call id), whichever server the call lands on.
	return newFailover(cfg, proxies, clients[0].NextCallID), nil
}

func newFailover(cfg FailoverConfig, proxies []proxy, ids func() int32) *FailoverClient {
	if cfg.MaxFailovers == 0 {
		cfg.MaxFailovers = DefaultFailoverMaxAttempts
	}
	if cfg.MaxRetries == 0 {
		cfg.MaxRetries = DefaultRetryMaxAttempts
	}
	cfg.MaxFailovers, cfg.MaxRetries = max(cfg.MaxFailovers, 0), max(cfg.MaxRetries, 0)
	if cfg.SleepBase == 0 {
		cfg.SleepBase = DefaultFailoverSleepBase
	}
	if cfg.SleepMax == 0 {
		cfg.SleepMax = DefaultFailoverSleepMax
	}
	if cfg.Sleep == nil {
		cfg.Sleep = sleepCtx
	}
	if cfg.Rand == nil {
		cfg.Rand = rand.Float64
	}
	return &FailoverClient{cfg: cfg, proxies: proxies, addrs: append([]string(nil), cfg.Addrs...), ids: ids}
}

// Addrs returns the servers in failover order.
func (f *FailoverClient) Addrs() []string { return append([]string(nil), f.addrs...) }

// Current returns the address calls go to now.
func (f *FailoverClient) Current() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.addrs[f.current]
}

// Call invokes method on the active server, failing over as the type's
// comment says. When it gives up it returns the last attempt's error,
// wrapped with the count of failovers (errors.As still finds a
// *RemoteError or *ConnError in it).
func (f *FailoverClient) Call(ctx context.Context, method string, req, resp proto.Message) error {
	id := f.ids()
	failovers, retries := 0, 0
	for attempt := int32(0); ; attempt++ {
		p, epoch := f.pick()
		err := p.CallWith(ctx, method, req, resp, id, attempt)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return err
		}
		var wait time.Duration
		switch {
		case IsClass(err, ClassStandby) || IsConnError(err):
			if failovers >= f.cfg.MaxFailovers {
				return fmt.Errorf("ipc: %s: giving up after %d failovers: %w", method, failovers, err)
			}
			wait = f.backoff(failovers)
			failovers++
			f.failover(epoch)
		case IsClass(err, ClassRetriable):
			if retries >= f.cfg.MaxRetries {
				return fmt.Errorf("ipc: %s: giving up after %d retries: %w", method, retries, err)
			}
			wait = f.backoff(retries)
			retries++
		default:
			return err
		}
		if err := f.cfg.Sleep(ctx, wait); err != nil {
			return err
		}
	}
}

func (f *FailoverClient) pick() (proxy, uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.proxies[f.current], f.epoch
}

// failover moves to the next server unless another call already moved
// away from the one that failed.
func (f *FailoverClient) failover(epoch uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.epoch != epoch {
		return
	}
	f.epoch++
	f.current = (f.current + 1) % len(f.proxies)
}

// backoff is Hadoop's getFailoverOrRetrySleepTime: 0 for n == 0, else
// RetryPolicies.calculateExponentialTime(base, n, max).
func (f *FailoverClient) backoff(n int) time.Duration {
	if n == 0 {
		return 0
	}
	d := f.cfg.SleepMax
	if n < 63 && f.cfg.SleepBase <= d>>n { // base<<n cannot overflow
		d = f.cfg.SleepBase << n
	}
	return time.Duration(float64(d) * (f.cfg.Rand() + 0.5))
}

// Close closes every server's Client. Safe to call twice.
func (f *FailoverClient) Close() error {
	var errs []error
	for _, p := range f.proxies {
		errs = append(errs, p.Close())
	}
	return errors.Join(errs...)
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
