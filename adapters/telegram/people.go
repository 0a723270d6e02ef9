package telegram

import "github.com/kontermatt/kontermatt/core/table"

// People is what the adapter keeps about a person by their Telegram user ID, so that forgetting
// them deletes it (table.Config.People). Keys of a table that name them ("<table>/<user>") follow
// the KV convention and need no entry here; bucketPending is listed for the per-user entries
// older versions kept there.
var People = table.People{Platform: Platform, Prefix: "tg:", Buckets: []string{bucketBlocked, bucketPending}}
