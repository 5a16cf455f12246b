package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/hdfs"
	"github.com/stratafs/strata/internal/balancer"
	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/namenode"
	"github.com/stratafs/strata/internal/nameservice"
)

func init() {
	register(command{name: "balancer", summary: "move replicas until every DataNode's utilisation is within a threshold of the mean", run: runBalancer})
}

const balancerUsage = "Usage: strata balancer\n" +
	"\t[-policy <policy>]\tthe balancing policy: datanode or blockpool\n" +
	"\t[-threshold <threshold>]\tPercentage of disk capacity\n" +
	"\t[-exclude [-f <hosts-file> | <comma-separated list of hosts>]]\tExcludes the specified datanodes.\n" +
	"\t[-include [-f <hosts-file> | <comma-separated list of hosts>]]\tIncludes only the specified datanodes.\n" +
	"\t[-idleiterations <idleiterations>]\tNumber of consecutive idle iterations (-1 for Infinite) before exit."

// balancerIDPath marks a running balancer, as Hadoop's.
const balancerIDPath = "/system/balancer.id"

func runBalancer(ctx context.Context, env *Env, args []string) int {
	cfg := balancer.Config{Threshold: 10, IdleIterations: 5, Out: env.Stdout}
	blockPool := false
	bad := func(format string, a ...any) int {
		fmt.Fprintf(env.Stderr, format+"\n", a...)
		fmt.Fprintln(env.Stderr, balancerUsage)
		return balancer.IllegalArgument
	}
	hostList := func(i *int, flag string) ([]string, error) {
		if *i+1 >= len(args) {
			return nil, fmt.Errorf("%s needs an argument", flag)
		}
		*i++
		if args[*i] == "-f" {
			if *i+1 >= len(args) {
				return nil, fmt.Errorf("%s -f needs a file", flag)
			}
			*i++
			data, err := os.ReadFile(args[*i])
			if err != nil {
				return nil, err
			}
			var out []string
			for _, line := range strings.Split(string(data), "\n") {
				if j := strings.IndexByte(line, '#'); j >= 0 {
					line = line[:j]
				}
				out = append(out, strings.Fields(line)...)
			}
			return out, nil
		}
		var out []string
		for _, h := range strings.Split(args[*i], ",") {
			if h = strings.TrimSpace(h); h != "" {
				out = append(out, h)
			}
		}
		return out, nil
	}
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "-threshold":
			if i+1 >= len(args) {
				return bad("-threshold needs a number")
			}
			i++
			v, err := strconv.ParseFloat(args[i], 64)
			if err != nil || v < 1 || v > 100 {
				return bad("Number out of range: threshold = %s", args[i])
			}
			cfg.Threshold = v
		case "-policy":
			if i+1 >= len(args) {
				return bad("-policy needs a name")
			}
			i++
			switch strings.ToLower(args[i]) {
			case "datanode":
			case "blockpool":
				blockPool = true
			default:
				return bad("Illegal policy name: %s", args[i])
			}
		case "-idleiterations":
			if i+1 >= len(args) {
				return bad("-idleiterations needs a number")
			}
			i++
			v, err := strconv.Atoi(args[i])
			if err != nil || v == 0 || v < -1 {
				return bad("Invalid idleiterations: %s", args[i])
			}
			if v == -1 {
				v = 1 << 30
			}
			cfg.IdleIterations = v
		case "-exclude", "-include":
			flag := args[i]
			hosts, err := hostList(&i, flag)
			if err != nil {
				return bad("%v", err)
			}
			if flag == "-include" {
				cfg.Include = append(cfg.Include, hosts...)
			} else {
				cfg.Exclude = append(cfg.Exclude, hosts...)
			}
		default:
			return bad("Unknown argument: %s", args[i])
		}
	}
	r := conf.NewReader(env.Conf, "")
	cfg.MinBlockSize = r.Bytes("dfs.balancer.getBlocks.min-block-size")
	cfg.GetBlocksSize = r.Bytes("dfs.balancer.getBlocks.size")
	cfg.MaxSizeToMove = r.Bytes("dfs.balancer.max-size-to-move")
	cfg.MovesPerNode = int(min(r.Int("dfs.datanode.balance.max.concurrent.moves"), 50))
	cfg.Wait = 2*r.Duration("dfs.heartbeat.interval", time.Second) + r.Duration("dfs.namenode.redundancy.interval.seconds", time.Second)
	if err := r.Err(); err != nil {
		return bad("%v", err)
	}

	cl, err := hdfsClient(env)
	if err != nil {
		fmt.Fprintf(env.Stderr, "balancer: %v\n", err)
		return balancer.IOException
	}
	defer cl.Close()
	addrs, err := nameNodeRPCAddrs(env)
	if err != nil {
		fmt.Fprintf(env.Stderr, "balancer: %v\n", err)
		return balancer.IOException
	}
	lock, err := markBalancerRunning(ctx, cl)
	if err != nil {
		fmt.Fprintf(env.Stderr, "balancer: %s\n", errText(err))
		return balancer.IOException
	}
	if lock == nil {
		fmt.Fprintln(env.Stdout, "Another Balancer is running..  Exiting ...")
		return balancer.AlreadyRunning
	}
	defer func() {
		lock.Close()
		dctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		cl.Delete(dctx, balancerIDPath, false)
	}()
	start := time.Now()
	slog.Info("balancer: starting", "threshold", cfg.Threshold, "blockpool", blockPool, "include", cfg.Include, "exclude", cfg.Exclude, "idleiterations", cfg.IdleIterations)
	rc := &balancer.RPCCluster{Client: cl, NameNodes: addrs, User: fs.CurrentUser(), BlockPoolUsed: blockPool}
	rc.DataTransferProtection = env.Conf.Get("dfs.data.transfer.protection")
	rc.EncryptDataTransfer, _ = env.Conf.GetBool("dfs.encrypt.data.transfer")
	status := balancer.New(rc, cfg).Run(ctx)
	fmt.Fprintf(env.Stdout, "%s  Balancing took %s\n", time.Now().Format("Jan 2, 2006 3:04:05 PM"), time2Str(time.Since(start)))
	return status
}

// markBalancerRunning creates /system/balancer.id and keeps it open, as
// Hadoop's balancer: a second balancer's create (or append, if the file
// is left over) fails while the first holds the lease. nil: another
// balancer runs.
func markBalancerRunning(ctx context.Context, cl *hdfs.Client) (*hdfs.FileWriter, error) {
	alreadyRunning := func(err error) bool {
		var re *hdfs.RemoteError
		return errors.As(err, &re) && (re.Class == ipc.ClassAlreadyBeingCreated || re.Class == ipc.ClassFileAlreadyExists)
	}
	if _, err := cl.Stat(ctx, balancerIDPath); err == nil {
		w, err := cl.Append(ctx, balancerIDPath)
		if err != nil {
			if alreadyRunning(err) {
				return nil, nil
			}
			return nil, err
		}
		w.Close()
		if err := cl.Delete(ctx, balancerIDPath, false); err != nil {
			return nil, err
		}
	}
	// A small block: the file holds a host name, and a default-sized
	// block would need that much room on some node.
	w, err := cl.CreateFile(ctx, balancerIDPath, fs.CreateOptions{CreateParent: true, BlockSize: 1 << 20})
	if err != nil {
		if alreadyRunning(err) {
			return nil, nil
		}
		return nil, err
	}
	host, _ := os.Hostname()
	if _, err := w.Write([]byte(host + "\n")); err != nil {
		w.Close()
		return nil, err
	}
	if err := w.Flush(); err != nil {
		w.Close()
		return nil, err
	}
	return w, nil
}

// nameNodeRPCAddrs are the RPC addresses of the NameNodes of
// fs.defaultFS: every member of its nameservice, else the one address.
func nameNodeRPCAddrs(env *Env) ([]string, error) {
	u, err := fs.DefaultURI(env.Conf)
	if err != nil {
		return nil, err
	}
	if ns, ok, err := nameservice.Lookup(env.Conf, u.Hostname()); err != nil {
		return nil, err
	} else if ok {
		return ns.RPCAddrs(), nil
	}
	if u.Host != "" {
		h := u.Host
		if u.Port() == "" {
			h += ":8020"
		}
		return []string{h}, nil
	}
	return []string{namenode.RPCAddress(env.Conf)}, nil
}

// time2Str prints an elapsed time as Hadoop's balancer does: "850.0
// milliseconds", "1.015 seconds", "2.5 minutes".
func time2Str(d time.Duration) string {
	ms := float64(d.Milliseconds())
	v, unit := ms, "milliseconds"
	switch {
	case ms >= 3600*1000:
		v, unit = ms/(3600*1000), "hours"
	case ms >= 60*1000:
		v, unit = ms/(60*1000), "minutes"
	case ms >= 1000:
		v, unit = ms/1000, "seconds"
	}
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if !strings.ContainsAny(s, ".") {
		s += ".0"
	}
	return s + " " + unit
}
