# HDFS on HDD, MapReduce intermediate data in memory (a RAM disk per node,
# as tmpfs would give). Not one of the paper's configurations.
name = ram-intermediate
description = HDFS on HDD, intermediate data on a RAM disk
device.hdd = hdd-7200
device.ram = ram
hdfs.volumes = [DISK]hdd
mapred.local.dir = ram
price = 37561
watts = 944
