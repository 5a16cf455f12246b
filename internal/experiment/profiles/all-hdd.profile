# The SanDisk paper's All-HDD configuration: each DataNode keeps its HDFS
# blocks and its MapReduce intermediate data (mapred.local.dir) on HDD.
name = all-hdd
description = HDFS and intermediate data on HDD
device.hdd = hdd-7200
hdfs.volumes = [DISK]hdd
mapred.local.dir = hdd
# Dell online pricing of the paper's 7-server cluster, May 2014 (Table 6).
price = 37561
# Estimated cluster draw under load (docs/EXPERIMENTS.md): 1 NameNode at
# 200 W, 6 DataNodes at 110 W plus 2 HDDs at 7 W.
watts = 944
paper.speedup = 1.0
