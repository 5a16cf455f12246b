package tasktracker

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/stratafs/strata/internal/delegation"
	"github.com/stratafs/strata/internal/jobtoken"
	"github.com/stratafs/strata/internal/proto/mrpb"
)

// tokenFileName is the attempt's token file in its first local
// directory (Hadoop's jobToken file in the job's directory).
const tokenFileName = "container_tokens"

// writeTokenFile writes an attempt's credentials — the job's delegation
// tokens (spec.credentials) and, for a reduce, its job token for the
// JobTracker at jtAddr — into a token file in dir, mode 0600 and owned by
// the task's user (cred), and takes them out of spec: the child reads
// them from the file HADOOP_TOKEN_FILE_LOCATION names, as Hadoop's
// children do. In kerberos mode a reduce always gets its job token, the
// only credential it has for the JobTracker. It returns the file's path,
// "" when there is nothing to write; the caller removes the file once the
// child has exited.
func writeTokenFile(dir string, spec *mrpb.TaskSpec, jtAddr string, cred *syscall.Credential, kerberos bool) (string, error) {
	creds := spec.GetCredentials()
	spec.Credentials = nil
	jobTok := kerberos && len(spec.GetJobToken()) > 0 && jtAddr != ""
	if len(creds) == 0 && !jobTok {
		return "", nil
	}
	var toks []delegation.AliasToken
	if len(creds) > 0 {
		var err error
		if toks, err = delegation.ReadCredentials(creds); err != nil {
			return "", fmt.Errorf("tasktracker: the job's credentials: %w", err)
		}
	}
	if secret := spec.GetJobToken(); jobTok {
		toks = append(toks, delegation.AliasToken{Alias: jtAddr, Token: delegation.Token{
			Identifier: jobtoken.Identifier(spec.GetJobId()), Password: secret, Kind: jobtoken.Kind, Service: jtAddr}})
	}
	// A new file, never through a link: the directory is the task
	// user's, who could have planted one to have the TaskTracker write
	// (or chown) a file of its choosing.
	path := filepath.Join(dir, tokenFileName)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return "", fmt.Errorf("tasktracker: token file: %w", err)
	}
	_, err = f.Write(delegation.WriteCredentials(toks))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = chown(path, cred)
	}
	if err != nil {
		os.Remove(path)
		return "", fmt.Errorf("tasktracker: token file: %w", err)
	}
	return path, nil
}
