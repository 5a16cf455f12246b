package namenode

import "github.com/stratafs/strata/internal/namenode/namespace"

// Until block management's standby mode and the retry cache land.
func (s *Namesystem) bmSetStandby(bool)           {}
func (s *Namesystem) bmProcessQueued()            {}
func (s *Namesystem) noteReplayed(namespace.Edit) {}
