package blockmgmt

import (
	"fmt"
	"time"
)

// Safe mode: while it is on the namespace is read-only and the monitor
// neither replicates nor deletes. It is on after a start with blocks
// (until enough of them are reported: the startup safe mode) and while an
// administrator holds it on (the manual safe mode).

// safeBlocks counts committed blocks with at least one good replica.
func (m *Manager) safeBlocks() (safe, total int) {
	for _, id := range m.blocks.IDs() {
		b := m.blocks.Get(id)
		if !b.Committed {
			continue
		}
		total++
		if len(GoodReplicas(b)) > 0 {
			safe++
		}
	}
	return safe, total
}

// StartupSafeMode turns the startup safe mode on when there are committed
// blocks to wait for (after loading the namespace).
func (m *Manager) StartupSafeMode() {
	if _, total := m.safeBlocks(); total > 0 {
		m.startupSafe = true
	}
}

// CheckSafeMode leaves the startup safe mode once the threshold fraction
// of blocks has a good replica and SafeModeExtension has passed since the
// threshold was reached; falling below the threshold restarts the wait.
func (m *Manager) CheckSafeMode(now time.Time) {
	if !m.startupSafe {
		return
	}
	safe, total := m.safeBlocks()
	if float64(safe) < m.cfg.SafeModeThreshold*float64(total) {
		m.safeReachedAt = time.Time{}
		return
	}
	if m.safeReachedAt.IsZero() {
		m.safeReachedAt = now
	}
	if now.Sub(m.safeReachedAt) >= m.cfg.SafeModeExtension {
		m.startupSafe = false
		m.log.Info("namenode: leaving safe mode", "blocks_reported", safe, "blocks_total", total)
	}
}

// InSafeMode reports whether either safe mode is on.
func (m *Manager) InSafeMode() bool { return m.manualSafe || m.startupSafe }

// InStartupSafeMode reports whether the startup safe mode is on.
func (m *Manager) InStartupSafeMode() bool { return m.startupSafe }

// EnterSafeMode turns the manual safe mode on.
func (m *Manager) EnterSafeMode() { m.manualSafe = true }

// LeaveSafeMode turns both safe modes off.
func (m *Manager) LeaveSafeMode() {
	m.manualSafe = false
	m.startupSafe = false
}

// SafeModeTip describes the safe mode, as dfsadmin shows it.
func (m *Manager) SafeModeTip() string {
	if !m.startupSafe {
		if m.manualSafe {
			return "Safe mode is ON. It was turned on manually."
		}
		return "Safe mode is OFF."
	}
	safe, total := m.safeBlocks()
	need := int(m.cfg.SafeModeThreshold*float64(total)+0.999999) - safe
	if need > 0 {
		return fmt.Sprintf("Safe mode is ON. The reported blocks %d needs additional %d blocks to reach the threshold %.4f of total blocks %d.", safe, need, m.cfg.SafeModeThreshold, total)
	}
	return fmt.Sprintf("Safe mode is ON. The reported blocks %d has reached the threshold %.4f of total blocks %d. Safe mode will be turned off automatically.", safe, m.cfg.SafeModeThreshold, total)
}
