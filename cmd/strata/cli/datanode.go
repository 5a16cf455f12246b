package cli

import (
	"context"
	"fmt"

	"github.com/stratafs/strata/internal/datanode"
	"github.com/stratafs/strata/internal/media"
	"github.com/stratafs/strata/internal/namenode"
)

func init() {
	register(command{name: "datanode", summary: "run a DataNode (volumes from dfs.datanode.data.dir)", run: runDataNode})
}

func runDataNode(ctx context.Context, env *Env, args []string) int {
	if len(args) > 0 {
		fmt.Fprintf(env.Stderr, "datanode: unexpected argument %q\n", args[0])
		return 2
	}
	if err := media.Configure(env.Conf); err != nil {
		fmt.Fprintf(env.Stderr, "datanode: %v\n", err)
		return 1
	}
	cfg, err := datanode.ConfigFrom(env.Conf, namenode.RPCAddress(env.Conf))
	if err != nil {
		fmt.Fprintf(env.Stderr, "datanode: %v\n", err)
		return 1
	}
	login, err := daemonLogin(cfg.Security, cfg.PrincipalHost(), env.Conf)
	if err != nil {
		fmt.Fprintf(env.Stderr, "datanode: %v\n", err)
		return 1
	}
	if login != nil {
		cfg.Login, cfg.User = login, login.User
	}
	cfg.Logger = logger(env.Stderr)
	dn, err := datanode.New(cfg)
	if err != nil {
		fmt.Fprintf(env.Stderr, "datanode: %v\n", err)
		return 1
	}
	if err := dn.Start(); err != nil {
		dn.Close()
		fmt.Fprintf(env.Stderr, "datanode: %v\n", err)
		return 1
	}
	<-ctx.Done()
	cfg.Logger.Info("datanode: shutting down")
	if err := dn.Close(); err != nil {
		fmt.Fprintf(env.Stderr, "datanode: %v\n", err)
		return 1
	}
	return 0
}
