package hdfs

import "testing"

func TestTokenService(t *testing.T) {
	for _, c := range []struct {
		authority string
		addrs     []string
		want      string
	}{
		{"nn.example.com:9000", []string{"nn.example.com:9000"}, "nn.example.com:9000"},
		{"nn", []string{"nn:8020"}, "nn:8020"}, // the default port filled in
		{"ns1", []string{"nn1:8020", "nn2:8020"}, "ha-hdfs:ns1"},
		{"ns1", []string{"nn1:8020"}, "ha-hdfs:ns1"}, // a logical name with one member
	} {
		if got := tokenService(c.authority, c.addrs); got != c.want {
			t.Errorf("tokenService(%q, %v) = %q, want %q", c.authority, c.addrs, got, c.want)
		}
	}
	// Through New, as fs.Register builds it from an hdfs://nn URI.
	c, err := New(Options{Addrs: []string{"nn:8020"}, Authority: "nn"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.service != "nn:8020" {
		t.Fatalf("service %q", c.service)
	}
}
