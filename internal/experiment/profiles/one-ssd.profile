# HDFS's ONE_SSD storage policy: every node has an HDD and an SSD volume,
# and the first replica of each block goes to SSD, the others to DISK.
# Intermediate data stays on HDD. Not one of the paper's configurations.
name = one-ssd
description = ONE_SSD storage policy (one replica on SSD), intermediate data on HDD
device.hdd = hdd-7200
device.ssd = sata-ssd
hdfs.volumes = [DISK]hdd,[SSD]ssd
mapred.local.dir = hdd
storage.policy = ONE_SSD
price = 43081
watts = 962
