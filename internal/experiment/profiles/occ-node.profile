# A server-class node as in the third paper's comparison cluster (3 OCC
# nodes; -datanodes 3): 15,000 rpm SAS disks as a JBOD, two here, each an
# HDFS volume and a mapred.local.dir. The disk count per node is an
# assumption of this profile; change it to the cluster being modelled.
name = occ-node
description = server node: two 15K SAS disks (JBOD), HDFS and intermediate data on both
device.sas0 = sas-15k
device.sas1 = sas-15k
hdfs.volumes = [DISK]sas0,[DISK]sas1
mapred.local.dir = sas0,sas1
# With -hosts: a server-class node gets one of this machine's CPUs (the
# unit amdahl-blade's share is measured in); the link rate is left
# unshaped, the paper's network for these nodes not being modelled.
node.cpus = 1
