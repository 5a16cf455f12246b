// Package jobtoken is the per-job secret that authenticates the shuffle,
// as Hadoop's JobToken and SecureShuffleUtils do even with simple
// authentication: the JobTracker makes a random secret per job and hands it
// to the job's tasks and to the TaskTrackers that run them; a reducer signs
// each map-output request with it, and the TaskTracker serves only a
// request whose signature matches the secret of the job it names, and
// signs its reply so the reducer knows it spoke to a tracker of the job.
//
// The signature is Hadoop's: base64(HMAC-SHA1(secret, msg)) where msg is
// the URL's port, path, "?" and query (SecureShuffleUtils.buildMsgFrom),
// sent in the UrlHash request header; the reply's ReplyHash header is
// base64(HMAC-SHA1(secret, the request's UrlHash)). The wire format is in
// docs/format/shuffle.md.
package jobtoken

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
)

// Header names, Hadoop's.
const (
	HeaderURLHash   = "UrlHash"
	HeaderReplyHash = "ReplyHash"
)

// SecretLen is the length of a job's secret in bytes (Hadoop's HmacSHA1
// key generator makes 64).
const SecretLen = 64

// NewSecret returns a random job secret from r (nil: crypto/rand).
func NewSecret(r io.Reader) ([]byte, error) {
	if r == nil {
		r = rand.Reader
	}
	s := make([]byte, SecretLen)
	if _, err := io.ReadFull(r, s); err != nil {
		return nil, fmt.Errorf("jobtoken: %w", err)
	}
	return s, nil
}

// Msg is what a request's hash covers: port, path, "?" and raw query.
func Msg(u *url.URL) string {
	return u.Port() + u.EscapedPath() + "?" + u.RawQuery
}

func mac(secret []byte, msg string) string {
	h := hmac.New(sha1.New, secret)
	io.WriteString(h, msg)
	return base64.StdEncoding.EncodeToString(h.Sum(nil))
}

// URLHash signs a shuffle request URL.
func URLHash(secret []byte, u *url.URL) string { return mac(secret, Msg(u)) }

// ReplyHash signs the reply to a request whose UrlHash was urlHash.
func ReplyHash(secret []byte, urlHash string) string { return mac(secret, urlHash) }

// ErrBadHash is a request or reply whose hash does not match.
var ErrBadHash = errors.New("jobtoken: verification of the hashed request failed")

// VerifyURL checks a request's UrlHash against the URL it came with; the
// comparison takes the same time whatever the hash.
func VerifyURL(secret []byte, u *url.URL, urlHash string) error {
	if urlHash == "" || !hmac.Equal([]byte(URLHash(secret, u)), []byte(urlHash)) {
		return ErrBadHash
	}
	return nil
}

// VerifyReply checks a reply's ReplyHash.
func VerifyReply(secret []byte, urlHash, replyHash string) error {
	if replyHash == "" || !hmac.Equal([]byte(ReplyHash(secret, urlHash)), []byte(replyHash)) {
		return ErrBadHash
	}
	return nil
}

// Encode and Decode carry a secret in an environment variable or a
// configuration value (base64, standard alphabet).
func Encode(secret []byte) string { return base64.StdEncoding.EncodeToString(secret) }

// Decode parses Encode's output, refusing a secret of the wrong length.
func Decode(s string) ([]byte, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("jobtoken: %w", err)
	}
	if len(b) != SecretLen {
		return nil, errors.New("jobtoken: secret of " + strconv.Itoa(len(b)) + " bytes, want " + strconv.Itoa(SecretLen))
	}
	return b, nil
}
