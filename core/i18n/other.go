package i18n

// Luxembourgish, German and French texts; a key missing here falls back to English.

var lb = map[string]string{
	"card.name": "%[2]s %[1]s",
}

var de = map[string]string{
	"card.name": "%[2]s %[1]s",
}

var fr = map[string]string{
	"card.name": "%[1]s de %[2]s",
}
