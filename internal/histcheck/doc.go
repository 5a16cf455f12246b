// Package histcheck records what clients of an HDFS nameservice saw while
// NameNodes were killed or partitioned, and checks with porcupine that the
// history is linearizable: that some order of the operations, each taking
// effect at one instant between its invocation and its response, explains
// every result a client received.
//
// # Recording
//
// A Recorder stamps each operation with an invocation and a response time
// from one monotonic clock (injectable for tests). An operation whose
// outcome the client cannot know — a timeout, a connection lost mid-call,
// StandbyException after the client ran out of failover attempts — is
// recorded with Result Unknown and response time math.MaxInt64: it may
// have taken effect at any instant after its invocation, or (placed after
// every other operation) not at all. Models accept any output for it. A
// read with an unknown outcome constrains nothing and is left out of the
// history. An operation the server definitely rejected (Result Failed:
// AccessControlException, SafeModeException, AlreadyBeingCreatedException
// for another client's open file, FileNotFoundException for the renamed
// temporary file) had no effect; models treat it as a no-op that may sit
// anywhere in its interval. A write whose create applied but whose close
// failed (LeaseExpiredException, FileNotFoundException: someone deleted
// the open file) is Unknown. Classify and Run hold these rules.
// Calls still open when Operations is called are reported as Unknown.
//
// # RegisterModel: a file as a register
//
// Each path is checked separately (Partition by key). State: absent, or
// present with content v. Initial state: absent, so the workload must run
// in a fresh directory.
//
//	Write(v) → OK|Unknown   state := v          (create-overwrite, or
//	                                             write temp + rename over k)
//	Write(v) → Failed       no effect
//	Read()   → OK v         legal iff state == v
//	Read()   → Absent       legal iff state is absent (FileNotFoundException)
//	Read()   → Torn         no constraint (see below)
//	Delete() → OK           legal iff present; state := absent
//	Delete() → Absent       legal iff absent (delete returned false)
//	Delete() → Unknown      state := absent
//
// Every value the workload writes is unique (client id and sequence
// number) and ends in a terminator, so a stale or lost write shows as a
// read no order explains. Writes by rename are atomic, so the workload
// records whatever bytes a read returned and any content that is not the
// register's value is a violation. A create-with-overwrite write is not
// atomic in HDFS: the old file is gone, and the new one visible and empty,
// from create until close. Reads of such keys that return something other
// than a whole value are recorded Torn and accepted. This is the model's
// weakness: a torn read that no in-flight write explains goes unnoticed,
// and so does a read of the old content after an overwrite whose create
// applied but whose close failed (the write is Unknown, and "it never
// happened" explains the old content).
//
// # NamespaceModel: a set of names, created once
//
// State: whether the path exists. Initial state: absent.
//
//	Create() → OK        legal iff absent; state := present
//	Create() → Exists    legal iff present (FileAlreadyExistsException)
//	Create() → Unknown   state := present
//	Exists() → OK|Absent legal iff it matches the state
//	Remove() → OK|Absent|Unknown  as Delete above
//
// Create is create without overwrite. A create retried by the client's
// failover after its first attempt applied must still report OK (Hadoop's
// retry cache answers the retry with the first result); a NameNode that
// answers FileAlreadyExistsException instead makes the history illegal,
// because no other client created the name in between. The same holds for
// delete and rename: both are at-most-once in Hadoop, and a retry that
// reports "absent" or FileNotFoundException for an operation that applied
// is a violation.
//
// Run drives both kinds of keys from many clients at once; Check runs
// porcupine on a history and, on a violation, writes porcupine's HTML
// visualisation of the failing keys and names them.
package histcheck
