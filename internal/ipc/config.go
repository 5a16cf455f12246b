package ipc

import (
	"errors"
	"fmt"
	"time"

	"github.com/stratafs/strata/conf"
)

// ServerConfigFrom reads a server's limits from configuration:
// ipc.maximum.data.length, strata.ipc.server.handlers.max,
// strata.ipc.server.connection.max-inflight, ipc.server.max.connections,
// ipc.client.connection.maxidletime (the server's idle timeout is twice
// it, as Hadoop's), ipc.client.idlethreshold and
// strata.ipc.server.write.timeout. The Logger is left for the caller.
func ServerConfigFrom(c *conf.Configuration) (ServerConfig, error) {
	var cfg ServerConfig
	var errs []error
	num := func(key string, dst *int) {
		v, err := c.GetInt(key)
		if err != nil {
			errs = append(errs, err)
			return
		}
		*dst = int(v)
	}
	dur := func(key string, dst *time.Duration) {
		d, err := c.GetDuration(key, time.Millisecond)
		if err != nil {
			errs = append(errs, err)
			return
		}
		*dst = d
	}
	num("ipc.maximum.data.length", &cfg.MaxDataLength)
	num("strata.ipc.server.handlers.max", &cfg.MaxInFlight)
	num("strata.ipc.server.connection.max-inflight", &cfg.MaxConnInFlight)
	num("ipc.server.max.connections", &cfg.MaxConnections)
	num("ipc.client.idlethreshold", &cfg.IdleThreshold)
	var idle time.Duration
	dur("ipc.client.connection.maxidletime", &idle)
	cfg.IdleTimeout = 2 * idle
	dur("strata.ipc.server.write.timeout", &cfg.WriteTimeout)
	cfg.HeaderTimeout = DefaultHeaderTimeout
	if err := errors.Join(errs...); err != nil {
		return cfg, err
	}
	return cfg, cfg.Validate()
}

// Validate reports a limit that cannot work. Zero values mean the
// defaults NewServer fills in.
func (cfg ServerConfig) Validate() error {
	switch {
	case cfg.MaxDataLength < 0:
		return fmt.Errorf("ipc: ipc.maximum.data.length must not be negative, got %d", cfg.MaxDataLength)
	case cfg.MaxInFlight < 0:
		return fmt.Errorf("ipc: strata.ipc.server.handlers.max must not be negative, got %d", cfg.MaxInFlight)
	case cfg.MaxConnInFlight < 0:
		return fmt.Errorf("ipc: strata.ipc.server.connection.max-inflight must not be negative, got %d", cfg.MaxConnInFlight)
	case cfg.MaxConnections < 0:
		return fmt.Errorf("ipc: ipc.server.max.connections must not be negative, got %d", cfg.MaxConnections)
	case cfg.IdleTimeout < 0, cfg.WriteTimeout < 0, cfg.HeaderTimeout < 0:
		return errors.New("ipc: server timeouts must not be negative")
	}
	return nil
}
