# The second paper's DataNodes, SSD runs: HDFS on each node's one SATA SSD,
# the twelve 7,200 rpm disks keeping the intermediate data (JBOD).
name = dfsio-ssd
description = HDFS on one SSD per node, intermediate data on twelve HDDs (JBOD)
device.ssd = sata-ssd
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
hdfs.volumes = [DISK]ssd
mapred.local.dir = hdd0,hdd1,hdd2,hdd3,hdd4,hdd5,hdd6,hdd7,hdd8,hdd9,hdd10,hdd11
