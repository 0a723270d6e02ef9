package storage

import bolt "go.etcd.io/bbolt"

// Space tells how large the database file is and how much of it the pages in use take. bbolt
// never shrinks its file: pages freed by pruning are reused by later writes, so the file stays
// at its high-water mark while the space in use follows what is kept.
func (s *Store) Space() (file, inUse int64, err error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	err = s.db.View(func(tx *bolt.Tx) error {
		st := s.db.Stats()
		file = tx.Size()
		inUse = file - int64(st.FreePageN+st.PendingPageN)*int64(s.db.Info().PageSize)
		return nil
	})
	return file, inUse, err
}
