# The third paper's Amdahl blade with its hard disk: one Samsung Spinpoint
# F1 (7,200 rpm SATA) for HDFS and the intermediate data, the baseline its
# SSDs were measured against.
name = amdahl-blade-hdd
description = Amdahl blade: one Spinpoint F1 HDD for HDFS and intermediate data
device.hdd = spinpoint-f1
hdfs.volumes = [DISK]hdd
mapred.local.dir = hdd
# With -hosts: as amdahl-blade (an estimated Atom-class share, 1 GbE).
link.mbps = 1000
node.cpus = 0.25
