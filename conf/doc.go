// Package conf holds strata's configuration: Hadoop's key names and
// defaults, Hadoop-style *-site.xml files from a configuration directory,
// -D key=value overrides and Hadoop's other generic command-line options,
// as Hadoop's Configuration and GenericOptionsParser do.
//
// # Layers
//
// A value comes from the highest of these layers that sets it:
//
//  1. the defaults: the table of known keys (KnownKeys), with Hadoop's
//     default values;
//  2. the site files in the configuration directory, in this order:
//     core-site.xml, hdfs-site.xml, mapred-site.xml, yarn-site.xml,
//     strata-site.xml (LoadDir; missing files are skipped). The directory
//     is the --config option, else $STRATA_CONF_DIR, else $HADOOP_CONF_DIR
//     (ConfigDir);
//  3. the files named by -conf options, in order (LoadFile);
//  4. the -D key=value options (and -fs, -jt), in order (Define).
//
// A typical command does:
//
//	g, args, err := conf.ParseGenericOptions(os.Args[1:])
//	if err != nil { ... }
//	c, err := g.Build()
//	if err != nil { ... }
//	for _, w := range c.Warnings() {
//		fmt.Fprintln(os.Stderr, w)
//	}
//	n, err := c.GetInt("dfs.replication")
//
// A property a file marks <final>true</final> cannot be overridden by a
// later file or by -D: the attempt is ignored and recorded as a warning.
// Set, the programmatic setter, overrides everything, as in Hadoop.
//
// # Deprecated keys
//
// Old Hadoop names such as fs.default.name, dfs.block.size or
// mapred.reduce.tasks stand for their replacements (fs.defaultFS,
// dfs.blocksize, mapreduce.job.reduces; see Deprecation). Setting an old
// name sets the new one and records the warning Hadoop prints,
// "fs.default.name is deprecated. Instead, use fs.defaultFS"; getting an
// old name gets the new one.
//
// # Expansion
//
// Get expands references in values: ${key} is key's value (itself
// expanded), ${env.NAME} the environment variable NAME
// (${env.NAME:-default} and ${env.NAME-default} as in Hadoop and the
// shell), and ${user.name} the operating-system user. user.name is not a
// key that can be set. A reference that does not resolve stays as
// written, as does one that would recurse into a key already being
// expanded (a cycle) or nest deeper than 20 levels, Hadoop's limit. GetRaw
// returns a value unexpanded.
//
// # Typed values
//
// GetInt, GetFloat, GetBool, GetBytes (sizes like 128m, as Hadoop's
// getLongBytes), GetDuration (durations like 30s or a bare number in a
// given unit, as Hadoop's getTimeDuration) and GetStrings (comma-separated
// lists) parse values; errors name the key and the value.
//
// # Unknown keys
//
// A key set from a file or the command line that is neither known nor
// deprecated is reported by Unknown and, with the closest known key when
// one is close (Suggest), in Warnings:
//
//	conf: -D: unknown key "dfs.replciation" (did you mean "dfs.replication"?)
//
// The value is still stored and readable, as Hadoop keeps any key. Keys
// under prefixes reserved for user-defined settings ("strata.job." for
// per-job parameters of user programs, and Hadoop's
// "hadoop.proxyuser.<user>." keys) are never reported.
package conf
