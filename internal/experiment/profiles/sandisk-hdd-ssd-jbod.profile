# The SanDisk paper's "HDD with SSD for intermediate data" as it was: each
# DataNode's two 7,200 rpm disks hold HDFS (a volume each), one added
# CloudSpeed SATA SSD holds mapred.local.dir.
name = sandisk-hdd-ssd-jbod
description = two HDDs per node for HDFS (JBOD), intermediate data on a CloudSpeed SSD
device.hdd0 = hdd-7200
device.hdd1 = hdd-7200
device.ssd = cloudspeed-ssd
hdfs.volumes = [DISK]hdd0,[DISK]hdd1
mapred.local.dir = ssd
price = 43081
watts = 962
paper.speedup = 1.4
# With -hosts: the paper's 10 GbE between every node.
link.mbps = 10000
