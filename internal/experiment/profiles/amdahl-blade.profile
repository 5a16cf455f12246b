# The third paper's Amdahl blade: an Atom board with two OCZ Vertex SSDs
# striped as one RAID0 device, which holds HDFS and the intermediate data.
# Its cluster: 8 blades (-datanodes 8 where the machine allows; 3 by
# default, docs/EXPERIMENTS.md).
name = amdahl-blade
description = Amdahl blade: two Vertex SSDs in RAID0 for HDFS and intermediate data
device.md0 = raid0-2-vertex
hdfs.volumes = [DISK]md0
mapred.local.dir = md0
# With -hosts: the blades' gigabit Ethernet, and an Atom-class CPU share.
# The share is an estimate, not the paper's figure: a dual-core 1.6 GHz
# in-order Atom taken as about a quarter of one of this machine's cores'
# work; set node.cpus to the ratio measured for the CPUs being compared.
link.mbps = 1000
node.cpus = 0.25
