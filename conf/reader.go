package conf

import (
	"errors"
	"fmt"
	"time"
)

// Reader reads many typed values from a Configuration and collects their
// errors, so a daemon's ConfigFrom reads field after field and reports
// every bad value at once:
//
//	r := conf.NewReader(c, "datanode")
//	cfg.MaxTransferThreads = int(r.Int("dfs.datanode.max.transfer.threads"))
//	cfg.SocketTimeout = r.Duration("dfs.client.socket-timeout", time.Millisecond)
//	return cfg, r.Err()
//
// A value that does not parse reads as its type's zero value.
type Reader struct {
	c      *Configuration
	prefix string
	errs   []error
}

// NewReader returns a Reader of c whose errors start with "prefix: "
// (none when prefix is "").
func NewReader(c *Configuration, prefix string) *Reader { return &Reader{c: c, prefix: prefix} }

// Add records err (if not nil) with the Reader's prefix.
func (r *Reader) Add(err error) {
	if err == nil {
		return
	}
	if r.prefix != "" {
		err = fmt.Errorf("%s: %w", r.prefix, err)
	}
	r.errs = append(r.errs, err)
}

// AddAs records err (if not nil) as it is, for errors that already name
// their package.
func (r *Reader) AddAs(err error) {
	if err != nil {
		r.errs = append(r.errs, err)
	}
}

// Int is GetInt.
func (r *Reader) Int(key string) int64 {
	v, err := r.c.GetInt(key)
	r.Add(err)
	return v
}

// Float is GetFloat.
func (r *Reader) Float(key string) float64 {
	v, err := r.c.GetFloat(key)
	r.Add(err)
	return v
}

// Bool is GetBool.
func (r *Reader) Bool(key string) bool {
	v, err := r.c.GetBool(key)
	r.Add(err)
	return v
}

// Bytes is GetBytes.
func (r *Reader) Bytes(key string) int64 {
	v, err := r.c.GetBytes(key)
	r.Add(err)
	return v
}

// Duration is GetDuration.
func (r *Reader) Duration(key string, unit time.Duration) time.Duration {
	v, err := r.c.GetDuration(key, unit)
	r.Add(err)
	return v
}

// Err joins the errors recorded so far (nil if none).
func (r *Reader) Err() error { return errors.Join(r.errs...) }
