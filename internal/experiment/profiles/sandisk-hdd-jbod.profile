# The SanDisk paper's All-HDD DataNode as it was: two 7,200 rpm SATA
# disks per DataNode as a JBOD, each an HDFS volume and a
# mapred.local.dir, so HDFS and intermediate data spread over both
# actuators (all-hdd is the one-disk version). The paper's cluster: 6
# DataNodes; run with -datanodes 6 for its shape, the default 3 for this
# machine (docs/EXPERIMENTS.md, "Scaling").
name = sandisk-hdd-jbod
description = two HDDs per node (JBOD): HDFS and intermediate data on both
device.hdd0 = hdd-7200
device.hdd1 = hdd-7200
hdfs.volumes = [DISK]hdd0,[DISK]hdd1
mapred.local.dir = hdd0,hdd1
price = 37561
watts = 944
paper.speedup = 1.0
# With -hosts: the paper's 10 GbE between every node.
link.mbps = 10000
