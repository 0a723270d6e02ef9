package table

import "sync"

// tableIndex is the tables this copy holds in memory, by ID and by place (each place's current
// table). It exists so that the service's one lock guards one thing and says so: the two maps
// and each table's placeKey, read or changed only here. Its lock is held for that alone: never
// across I/O, and never while a table's lock is waited for. The lock order is index, then table
// (claim locks a new table under it), so what holds a table's lock changes the index from a
// goroutine of its own (Service.forget, Service.replace).
type tableIndex struct {
	mu      sync.Mutex
	tables  map[string]*tbl
	byPlace map[string]string // place key → the place's current table
}

func newTableIndex() *tableIndex {
	return &tableIndex{tables: map[string]*tbl{}, byPlace: map[string]string{}}
}

// all gives the tables in memory; each must be locked to be read.
func (x *tableIndex) all() []*tbl {
	x.mu.Lock()
	defer x.mu.Unlock()
	out := make([]*tbl, 0, len(x.tables))
	for _, t := range x.tables {
		out = append(out, t)
	}
	return out
}

// get gives a table in memory by ID.
func (x *tableIndex) get(id string) (*tbl, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	t, ok := x.tables[id]
	return t, ok
}

// count is how many tables are in memory.
func (x *tableIndex) count() int {
	x.mu.Lock()
	defer x.mu.Unlock()
	return len(x.tables)
}

// current gives the ID of the place's current table and the table (nil if it is not in memory).
func (x *tableIndex) current(placeKey string) (id string, t *tbl, ok bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	id, ok = x.byPlace[placeKey]
	return id, x.tables[id], ok
}

// placed gives the table's place key and whether it is that place's current table.
func (x *tableIndex) placed(t *tbl) (placeKey string, current bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	return t.placeKey, x.byPlace[t.placeKey] == t.id()
}

// add puts a table loaded from the store in, made by newTable, unless one by its ID is in memory
// already: that one stays, and add gives it. The table becomes its place's current one unless a
// newer one (by its making) is.
func (x *tableIndex) add(id string, newTable func() *tbl) *tbl {
	x.mu.Lock()
	defer x.mu.Unlock()
	if have, ok := x.tables[id]; ok {
		return have // loaded meanwhile (the watch, a command naming it): that one stays
	}
	t := newTable()
	x.tables[id] = t
	if cur, ok := x.byPlace[t.placeKey]; !ok || x.tables[cur].created <= t.created {
		x.byPlace[t.placeKey] = id
	}
	return t
}

// claim puts a new table at the place, made by newTable, if the place's current table is still
// prev and the ID is free; newTable gives it locked (lock order: index, then table).
func (x *tableIndex) claim(placeKey, prev, id string, newTable func() *tbl) (*tbl, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if cur, ok := x.byPlace[placeKey]; ok && cur != prev {
		return nil, false // another table took the place meanwhile
	}
	if _, taken := x.tables[id]; taken {
		return nil, false
	}
	t := newTable()
	x.tables[id], x.byPlace[placeKey] = t, id
	return t, true
}

// remove takes the table out of memory, and out of its place if it is still the current one
// there.
func (x *tableIndex) remove(t *tbl) {
	x.mu.Lock()
	defer x.mu.Unlock()
	id := t.id()
	if x.tables[id] == t {
		delete(x.tables, id)
	}
	if x.byPlace[t.placeKey] == id {
		delete(x.byPlace, t.placeKey)
	}
}

// moved notes that another copy moved the table to the place key: it becomes the place's
// current table unless a newer one is. A table out of memory meanwhile stays out.
func (x *tableIndex) moved(t *tbl, key string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.tables[t.id()] != t {
		return
	}
	if x.byPlace[t.placeKey] == t.id() {
		delete(x.byPlace, t.placeKey)
	}
	t.placeKey = key
	if cur, ok := x.byPlace[key]; !ok || x.tables[cur].created <= t.created {
		x.byPlace[key] = t.id()
	}
}

// move moves the table from one place to another, whatever the other had: MovePlace stored it.
func (x *tableIndex) move(t *tbl, from, to string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.byPlace[from] == t.id() {
		delete(x.byPlace, from)
	}
	x.byPlace[to] = t.id()
	t.placeKey = to
}
