# The SanDisk paper's All-SSD configuration: the HDDs swapped for SSDs,
# which hold both HDFS and the intermediate data.
name = all-ssd
description = HDFS and intermediate data on SSD
device.ssd = sata-ssd
# The paper's DataNodes listed plain directories, which HDFS takes as
# DISK: the volume is tagged DISK so the default (HOT) policy places
# blocks on it, as it did there.
hdfs.volumes = [DISK]ssd
mapred.local.dir = ssd
price = 46567
# 1 NameNode at 200 W, 6 DataNodes at 110 W plus 2 SSDs at 3 W.
watts = 896
paper.speedup = 2.6
