package conf

import "testing"

// TestRedactor: Hadoop's default patterns hide cloud keys, passwords and
// tokens, and the list itself; other settings show.
func TestRedactor(t *testing.T) {
	r, err := NewRedactor(New())
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]bool{
		"fs.s3a.secret.key": true, "fs.s3a.bucket.b.secret.key": true, "fs.s3.awsSecretAccessKey": false, // as in Hadoop: ".?" is one character
		"fs.azure.account.key.acct.blob.core.windows.net": true, "ssl.server.keystore.password": true,
		"dfs.webhdfs.oauth2.access.token": true, "fs.adl.oauth2.credential": true, "hadoop.security.sensitive-config-keys": true,
		"fs.s3a.access.key": false, "mapreduce.job.name": false, "dfs.replication": false, "fs.s3a.secret.key.provider.path": true,
	} {
		if got := r.Sensitive(key); got != want {
			t.Errorf("Sensitive(%q) = %v, want %v", key, got, want)
		}
	}
	if got := r.Redact("my.password", "hunter2"); got != Redacted {
		t.Errorf("Redact: %q", got)
	}
	c := New()
	c.Set(KeySensitiveConfigKeys, "(")
	if _, err := NewRedactor(c); err == nil {
		t.Error("a bad pattern is accepted")
	}
}
