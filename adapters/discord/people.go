package discord

import "github.com/kontermatt/kontermatt/core/table"

// People is what the adapter keeps about a person by their Discord user ID, so that forgetting
// them deletes it (table.Config.People).
var People = table.People{Platform: Platform, Prefix: "dc:", Buckets: []string{bucketNoDM, bucketHands}}
