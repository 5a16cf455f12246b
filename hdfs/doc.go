// Package hdfs is strata's HDFS client: a Go API for hdfs:// paths that
// talks to a NameNode (strata's or Hadoop's) with ClientProtocol over
// Hadoop IPC. Client implements fs.FileSystem; importing this package
// registers the "hdfs" scheme with package fs.
//
// Errors wrap the os and fs sentinels (os.ErrNotExist, os.ErrExist,
// os.ErrPermission, fs.ErrNotEmpty, fs.ErrNotDir) so errors.Is works, and
// their text is the NameNode's message, as Hadoop's shell prints it.
package hdfs
