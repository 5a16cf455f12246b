package jobtoken

import (
	"bytes"
	"net/url"
	"testing"
)

func TestSignAndVerify(t *testing.T) {
	secret, err := NewSecret(bytes.NewReader(bytes.Repeat([]byte{7}, SecretLen)))
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse("http://tt1:50060/mapOutput?job=job_1_0001&reduce=3&map=attempt_1_0001_m_000002_0")
	if Msg(u) != "50060/mapOutput?job=job_1_0001&reduce=3&map=attempt_1_0001_m_000002_0" {
		t.Fatalf("msg %q", Msg(u))
	}
	h := URLHash(secret, u)
	if err := VerifyURL(secret, u, h); err != nil {
		t.Fatal(err)
	}
	other, _ := url.Parse("http://tt1:50060/mapOutput?job=job_1_0001&reduce=4&map=attempt_1_0001_m_000002_0")
	if VerifyURL(secret, other, h) == nil {
		t.Error("a hash for reduce 3 verified a request for reduce 4")
	}
	if VerifyURL(secret, u, "") == nil {
		t.Error("a request without a hash verified")
	}
	wrong, _ := NewSecret(nil)
	if VerifyURL(wrong, u, h) == nil {
		t.Error("another job's secret verified the hash")
	}
	r := ReplyHash(secret, h)
	if VerifyReply(secret, h, r) != nil || VerifyReply(wrong, h, r) == nil {
		t.Error("reply hash")
	}
	back, err := Decode(Encode(secret))
	if err != nil || !bytes.Equal(back, secret) {
		t.Fatalf("encode/decode: %v", err)
	}
	if _, err := Decode(Encode(secret[:10])); err == nil {
		t.Error("a short secret decoded")
	}
}
