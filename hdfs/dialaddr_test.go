package hdfs

import (
	"testing"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/internal/proto/hdfspb"
	"google.golang.org/protobuf/proto"
)

// dfs.client.use.datanode.hostname: the client dials a DataNode by the
// host name it reported only when asked to, else by its IP address.
func TestDialAddrUseDatanodeHostname(t *testing.T) {
	loc := &hdfspb.DatanodeInfoProto{Id: &hdfspb.DatanodeIDProto{
		IpAddr: proto.String("10.1.2.3"), HostName: proto.String("dn3.example"), XferPort: proto.Uint32(9866)}}
	for _, tc := range []struct {
		set  string
		want string
	}{{"", "10.1.2.3:9866"}, {"false", "10.1.2.3:9866"}, {"true", "dn3.example:9866"}} {
		c := conf.New()
		c.Set("fs.defaultFS", "hdfs://127.0.0.1:8020")
		if tc.set != "" {
			c.Set("dfs.client.use.datanode.hostname", tc.set)
		}
		opts, err := OptionsFrom(c, "127.0.0.1:8020")
		if err != nil {
			t.Fatal(err)
		}
		if got := (&Client{opts: opts}).dialAddr(loc); got != tc.want {
			t.Errorf("use.datanode.hostname=%q: dial %s, want %s", tc.set, got, tc.want)
		}
	}
	// A DataNode that reported no host name is dialled by its address.
	noName := &hdfspb.DatanodeInfoProto{Id: &hdfspb.DatanodeIDProto{IpAddr: proto.String("10.1.2.3"), XferPort: proto.Uint32(9866)}}
	if got := (&Client{opts: Options{UseDatanodeHostname: true}}).dialAddr(noName); got != "10.1.2.3:9866" {
		t.Errorf("no host name: dial %s", got)
	}
}
