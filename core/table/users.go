package table

import (
	"encoding/json"
	"log/slog"
	"sync"
)

// bucketUsers is the service's KV bucket of people's own settings: player ID → userPrefs.
const bucketUsers = "table.user"

// userPrefs are what a person chose for themselves, whatever table they sit at.
type userPrefs struct {
	Lang   string `json:"lang,omitempty"`
	Hidden bool   `json:"hidden,omitempty"` // not ranked, and their statistics shown to them alone
	Coach  bool   `json:"coach,omitempty"`  // a private review after each game they play
}

// users caches people's settings in front of the KV; without a KV it is all there is.
type users struct {
	mu    sync.Mutex
	kv    KV
	log   *slog.Logger
	prefs map[string]userPrefs // loaded on first use; a missing entry reads as the zero value
}

func (u *users) init(kv KV, log *slog.Logger) {
	u.kv, u.log, u.prefs = kv, log, map[string]userPrefs{}
}

func (u *users) get(id string) userPrefs {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.getLocked(id)
}

func (u *users) getLocked(id string) userPrefs {
	if p, ok := u.prefs[id]; ok || u.kv == nil || id == "" {
		return p
	}
	var p userPrefs
	data, ok, err := u.kv.Get(bucketUsers, id)
	switch {
	case err != nil:
		u.log.Error("reading a person's settings", "err", err)
		return p // not cached: read again next time
	case ok:
		if err := json.Unmarshal(data, &p); err != nil {
			u.log.Error("a person's settings do not decode; using the defaults", "err", err)
		}
	}
	u.prefs[id] = p
	return p
}

func (u *users) put(id string, p userPrefs) error {
	if u.kv != nil {
		data, _ := json.Marshal(p)
		if err := u.kv.Put(bucketUsers, id, data); err != nil {
			return err
		}
	}
	u.prefs[id] = p
	return nil
}

// setCoach keeps a person's choice to have their games reviewed.
func (u *users) setCoach(id string, on bool) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	p := u.getLocked(id)
	p.Coach = on
	return u.put(id, p)
}

// lang is the person's own language, or "".
func (u *users) lang(id string) string { return u.get(id).Lang }

func (u *users) setLang(id, lang string) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	p := u.getLocked(id)
	p.Lang = lang
	return u.put(id, p)
}

func (u *users) setHidden(id string, hidden bool) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	p := u.getLocked(id)
	p.Hidden = hidden
	return u.put(id, p)
}

// forget drops what is cached of a person (the KV entry is deleted by the caller).
func (u *users) forget(id string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	delete(u.prefs, id)
}

// adopt takes over a language choice an older table state kept, unless the person has chosen
// since.
func (u *users) adopt(id, lang string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if p := u.getLocked(id); p.Lang == "" {
		p.Lang = lang
		if err := u.put(id, p); err != nil {
			u.log.Error("keeping a language choice", "err", err)
		}
	}
}

// getJSON reads a KV entry of the service's into v; false when there is none, or it does not
// read (which is logged).
func (s *Service) getJSON(bucket, key string, v any) bool {
	data, ok, err := s.cfg.KV.Get(bucket, key)
	if err != nil {
		s.cfg.Log.Error("reading a setting", "bucket", bucket, "err", err)
		return false
	}
	if ok {
		if err := json.Unmarshal(data, v); err != nil {
			s.cfg.Log.Error("a setting does not decode; using the defaults", "bucket", bucket, "key", key, "err", err)
			return false
		}
	}
	return ok
}
