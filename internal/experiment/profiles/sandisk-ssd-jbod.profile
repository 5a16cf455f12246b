# The SanDisk paper's All-SSD DataNode as it was: the two HDDs replaced by
# two CloudSpeed SATA SSDs, each an HDFS volume and a mapred.local.dir.
# The volumes are tagged DISK, as the paper's plain directories were, so
# the default (HOT) policy places blocks on them.
name = sandisk-ssd-jbod
description = two CloudSpeed SSDs per node (JBOD): HDFS and intermediate data on both
device.ssd0 = cloudspeed-ssd
device.ssd1 = cloudspeed-ssd
hdfs.volumes = [DISK]ssd0,[DISK]ssd1
mapred.local.dir = ssd0,ssd1
price = 46567
watts = 896
paper.speedup = 2.6
# With -hosts: the paper's 10 GbE between every node.
link.mbps = 10000
