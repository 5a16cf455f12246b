# The SanDisk paper's "HDD with SSD for intermediate data": HDFS on each
# DataNode's HDDs, mapred.local.dir on one added SSD.
name = ssd-intermediate
description = HDFS on HDD, intermediate data on SSD
device.hdd = hdd-7200
device.ssd = sata-ssd
hdfs.volumes = [DISK]hdd
mapred.local.dir = ssd
price = 43081
# all-hdd plus one SATA SSD per DataNode at 3 W.
watts = 962
paper.speedup = 1.4
