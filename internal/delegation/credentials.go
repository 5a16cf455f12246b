package delegation

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"google.golang.org/protobuf/encoding/protowire"
)

// Hadoop's token storage file (Credentials.writeTokenStorageToStream):
// "HDTS", a format byte, then the tokens. Format 0 (WRITABLE) is what
// `hdfs fetchdt` writes; format 1 (PROTOBUF, `hadoop dtutil` by default)
// is a varint-delimited CredentialsProto. Both are read.

var storageMagic = []byte("HDTS")

const (
	formatWritable = 0
	formatProtobuf = 1
)

// maxStorageTokens bounds the tokens read from one file.
const maxStorageTokens = 1024

// maxStorageFile bounds a token file.
const maxStorageFile = 16 << 20

// AliasToken is one token of a token file and its alias (the service,
// for tokens fetchdt saves).
type AliasToken struct {
	Alias string
	Token Token
}

// WriteCredentials encodes tokens as a format 0 token storage file with
// no secret keys.
func WriteCredentials(tokens []AliasToken) []byte {
	b := append([]byte(nil), storageMagic...)
	b = append(b, formatWritable)
	b = appendVLong(b, int64(len(tokens)))
	for _, t := range tokens {
		b = appendText(b, t.Alias)
		b = append(b, t.Token.Writable()...)
	}
	return appendVLong(b, 0) // secret keys
}

// ReadCredentials decodes a token storage file of format 0 or 1; secret
// keys are skipped.
func ReadCredentials(data []byte) ([]AliasToken, error) {
	if len(data) > maxStorageFile {
		return nil, fmt.Errorf("token storage file of %d bytes is too large", len(data))
	}
	if len(data) < 5 || !bytes.Equal(data[:4], storageMagic) {
		return nil, errors.New("Bad header found in token storage.")
	}
	switch data[4] {
	case formatWritable:
		return readWritableCredentials(data[5:])
	case formatProtobuf:
		return readProtoCredentials(data[5:])
	}
	return nil, fmt.Errorf("Unknown version %d in token storage.", data[4])
}

func readWritableCredentials(b []byte) ([]AliasToken, error) {
	r := &reader{b: b}
	n := r.vint()
	if r.err == nil && (n < 0 || n > maxStorageTokens) {
		return nil, fmt.Errorf("token storage: %d tokens", n)
	}
	var out []AliasToken
	for i := int32(0); i < n && r.err == nil; i++ {
		alias := r.text()
		t := readToken(r)
		out = append(out, AliasToken{alias, t})
	}
	if ns := r.vint(); r.err == nil && ns > 0 {
		// Secret keys are of no use here but must be well formed.
		if ns > maxStorageTokens {
			return nil, fmt.Errorf("token storage: %d secret keys", ns)
		}
		for i := int32(0); i < ns && r.err == nil; i++ {
			r.text()
			r.bytes(maxText)
		}
	}
	if r.err != nil {
		return nil, fmt.Errorf("token storage: %w", r.err)
	}
	return out, nil
}

func readProtoCredentials(b []byte) ([]AliasToken, error) {
	l, n := protowire.ConsumeVarint(b)
	if n < 0 || l > uint64(len(b)-n) {
		return nil, errors.New("token storage: bad delimited CredentialsProto")
	}
	b = b[n : n+int(l)]
	var out []AliasToken
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, errors.New("token storage: bad field")
		}
		b = b[n:]
		if num == 1 && typ == protowire.BytesType { // tokens
			kv, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return nil, errors.New("token storage: bad token entry")
			}
			b = b[n:]
			at, err := parseKV(kv)
			if err != nil {
				return nil, err
			}
			if len(out) == maxStorageTokens {
				return nil, errors.New("token storage: too many tokens")
			}
			out = append(out, at)
			continue
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return nil, errors.New("token storage: bad field")
		}
		b = b[n:]
	}
	return out, nil
}

// parseKV decodes a CredentialsKVProto {alias 1, TokenProto token 2}.
func parseKV(b []byte) (AliasToken, error) {
	var at AliasToken
	err := eachField(b, func(num protowire.Number, v []byte) error {
		switch num {
		case 1:
			at.Alias = string(v)
		case 2:
			return eachField(v, func(num protowire.Number, v []byte) error {
				switch num {
				case 1:
					at.Token.Identifier = append([]byte(nil), v...)
				case 2:
					at.Token.Password = append([]byte(nil), v...)
				case 3:
					at.Token.Kind = string(v)
				case 4:
					at.Token.Service = string(v)
				}
				return nil
			})
		}
		return nil
	})
	return at, err
}

// eachField calls f with every length-delimited field of message b and
// skips the others.
func eachField(b []byte, f func(protowire.Number, []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return errors.New("token storage: bad field")
		}
		b = b[n:]
		if typ == protowire.BytesType {
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return errors.New("token storage: bad field")
			}
			b = b[n:]
			if err := f(num, v); err != nil {
				return err
			}
			continue
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return errors.New("token storage: bad field")
		}
		b = b[n:]
	}
	return nil
}

// ReadCredentialsFile reads and decodes the token storage file at path,
// refusing one over 16 MiB before reading more than that.
func ReadCredentialsFile(path string) ([]AliasToken, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxStorageFile+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxStorageFile {
		return nil, fmt.Errorf("token storage file %s is larger than %d bytes", path, maxStorageFile)
	}
	return ReadCredentials(data)
}

// WriteCredentialsFile writes tokens to path as WriteCredentials encodes
// them. Tokens are credentials: the file is mode 0600, also when it
// existed with a wider mode (the mode is set before any token is
// written).
func WriteCredentialsFile(path string, tokens []AliasToken) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(WriteCredentials(tokens)); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// TokenFileEnv names the environment variable with the path of a token
// file whose tokens a process presents (Hadoop's
// UserGroupInformation.HADOOP_TOKEN_FILE_LOCATION): a task's delegation
// and job tokens.
const TokenFileEnv = "HADOOP_TOKEN_FILE_LOCATION"
