package namenode

// Until block management's standby mode lands.
func (s *Namesystem) bmSetStandby(bool) {}
func (s *Namesystem) bmProcessQueued()  {}
