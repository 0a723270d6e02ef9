package ops

import (
	"context"
	"strconv"
	"time"

	"github.com/kontermatt/kontermatt/core/table"
)

// Where every backup notes its time, in the store's KV: the running bot's last-backup series
// reads it, so a backup made by `kontermatt backup` in another process, or through another
// copy's admin door, shows too, not only those this process sent.
const (
	backupBucket = "ops"
	backupKey    = "last_backup"
)

// NoteBackup records in kv that a backup was made at at (Unix seconds).
func NoteBackup(ctx context.Context, kv table.KV, at time.Time) error {
	return kv.Put(ctx, backupBucket, backupKey, []byte(strconv.FormatInt(at.Unix(), 10)))
}

// LastBackup is the time the newest backup noted in kv was made; ok false when none was.
func LastBackup(ctx context.Context, kv table.KV) (at time.Time, ok bool, err error) {
	v, ok, err := kv.Get(ctx, backupBucket, backupKey)
	if err != nil || !ok {
		return time.Time{}, false, err
	}
	sec, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil {
		return time.Time{}, false, err
	}
	return time.Unix(sec, 0), true, nil
}
