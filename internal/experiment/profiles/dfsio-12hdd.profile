# The second paper's DataNodes, disks only: twelve 7,200 rpm SATA disks per
# node, each an HDFS volume and a mapred.local.dir (JBOD). Its cluster: 4
# DataNodes (-datanodes 4); the device count per node is kept, since it
# is what a node's TestDFSIO tasks spread over (docs/EXPERIMENTS.md).
name = dfsio-12hdd
description = twelve HDDs per node (JBOD), HDFS and intermediate data on all
device.hdd0 = hdd-7200
device.hdd1 = hdd-7200
device.hdd2 = hdd-7200
device.hdd3 = hdd-7200
device.hdd4 = hdd-7200
device.hdd5 = hdd-7200
device.hdd6 = hdd-7200
device.hdd7 = hdd-7200
device.hdd8 = hdd-7200
device.hdd9 = hdd-7200
device.hdd10 = hdd-7200
device.hdd11 = hdd-7200
hdfs.volumes = [DISK]hdd0,[DISK]hdd1,[DISK]hdd2,[DISK]hdd3,[DISK]hdd4,[DISK]hdd5,[DISK]hdd6,[DISK]hdd7,[DISK]hdd8,[DISK]hdd9,[DISK]hdd10,[DISK]hdd11
mapred.local.dir = hdd0,hdd1,hdd2,hdd3,hdd4,hdd5,hdd6,hdd7,hdd8,hdd9,hdd10,hdd11
