package tabletest

import (
	"sync"

	"github.com/kontermatt/kontermatt/core/table"
)

// Hang makes a test store's commits of one table wait until released: a disk or a cluster that
// hangs on that table's write while the other tables' go through. A store's Commit calls Wait
// before it commits. The zero Hang hangs nothing; make one with NewHang.
type Hang struct {
	mu    sync.Mutex
	table string // the table whose commits wait; "" none
	// Stuck gets a value when a commit starts waiting.
	Stuck chan struct{}
	// Release is closed to let the waiting commits, and every later one, through.
	Release chan struct{}
}

// NewHang is a Hang that hangs nothing yet.
func NewHang() *Hang {
	return &Hang{Stuck: make(chan struct{}, 1), Release: make(chan struct{})}
}

// At makes the commits of table id wait from now on.
func (h *Hang) At(id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.table = id
}

// Wait waits, if c is a commit of the table hung, until Release is closed.
func (h *Hang) Wait(c table.Change) {
	h.mu.Lock()
	hang := h.table != "" && c.TableID == h.table
	h.mu.Unlock()
	if !hang {
		return
	}
	select {
	case h.Stuck <- struct{}{}:
	default:
	}
	<-h.Release
}
