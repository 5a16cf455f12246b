package ipc

import (
	"testing"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/conf/conftest"
)

func TestServerConfigFrom(t *testing.T) {
	conftest.CheckDefaults(t, ServerConfigFrom, nil, ServerConfig{
		MaxDataLength: DefaultMaxDataLength, MaxInFlight: DefaultMaxInFlight, MaxConnInFlight: DefaultMaxConnInFlight,
		HeaderTimeout: DefaultHeaderTimeout, IdleTimeout: DefaultIdleTimeout, IdleThreshold: DefaultIdleThreshold,
		WriteTimeout: DefaultWriteTimeout,
	})
	conftest.CheckMapping(t, ServerConfigFrom, nil, map[string]string{
		"ipc.maximum.data.length":                   "1048576",
		"strata.ipc.server.handlers.max":            "8",
		"strata.ipc.server.connection.max-inflight": "4",
		"ipc.server.max.connections":                "100",
		"ipc.client.idlethreshold":                  "10",
		"ipc.client.connection.maxidletime":         "500",
		"strata.ipc.server.write.timeout":           "1000",
	})
	c := conf.New()
	c.Set("ipc.server.max.connections", "-1")
	if _, err := ServerConfigFrom(c); err == nil {
		t.Error("a negative connection limit was accepted")
	}
}
