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
	r := conf.NewReader(c, "")
	num := func(key string) int { return int(r.Int(key)) }
	cfg := ServerConfig{
		MaxDataLength:   num("ipc.maximum.data.length"),
		MaxInFlight:     num("strata.ipc.server.handlers.max"),
		MaxConnInFlight: num("strata.ipc.server.connection.max-inflight"),
		MaxConnections:  num("ipc.server.max.connections"),
		IdleThreshold:   num("ipc.client.idlethreshold"),
		IdleTimeout:     2 * r.Duration("ipc.client.connection.maxidletime", time.Millisecond),
		WriteTimeout:    r.Duration("strata.ipc.server.write.timeout", time.Millisecond),
		HeaderTimeout:   DefaultHeaderTimeout,
	}
	if err := r.Err(); err != nil {
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
