// Package nfsgw is strata's NFSv3 gateway ("strata nfs3"): it serves NFS
// version 3 and its MOUNT protocol on one TCP port, so an NFS client can
// mount HDFS without a portmapper, and does every operation through
// strata's HDFS client.
//
// The protocol is github.com/willscott/go-nfs over a billy file system per
// HDFS user (userFS). What go-nfs cannot do sits in a thin front on each
// connection (front.go): picking the acting user from each call's
// AUTH_UNIX credentials (uid → name through the host's user database,
// unknown ids and AUTH_NULL act as "nobody"; the NameNode then enforces
// HDFS permissions for that user); serving WRITE and COMMIT, whose
// write-once semantics follow Hadoop's gateway (write.go): one HDFS output
// stream per file, out-of-order writes buffered within a bound, overwrites
// of written data refused with NFS3ERR_PERM, COMMIT closing the stream;
// and serving READ from HDFS readers kept open between calls (read.go).
// Statuses the NameNode gave a user are reused for up to a second and
// directory listings for the READDIR pages that follow (listing.go).
//
// File handles carry the inode id, not the path
// (docs/format/nfs-handles.md); the NameNode turns
// /.reserved/.inodes/<id> back into the current path, so handles outlive
// renames and gateway restarts.
package nfsgw
