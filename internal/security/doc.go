// Package security holds Hadoop's secure-mode identity logic, free of
// sockets so that it can be tested on its own: which authentication a
// daemon uses (hadoop.security.authentication), the RPC protection levels
// it offers (hadoop.rpc.protection), service principals with _HOST
// substituted (SecurityUtil.getServerPrincipal), the mapping of Kerberos
// principals to local user names (hadoop.security.auth_to_local, Hadoop's
// KerberosName rules), proxy-user authorization (hadoop.proxyuser.*, as
// DefaultImpersonationProvider), and logging in: a daemon from its keytab,
// a client from the kinit credential cache.
//
// Invariants: in kerberos mode a process's user is its Kerberos principal
// mapped through auth_to_local, never HADOOP_USER_NAME (LoginUser); a
// principal that no rule maps is refused, never passed through (unless the
// mit mechanism is chosen, which maps it to itself as Hadoop does).
package security
