package telegram

import (
	"github.com/kontermatt/kontermatt/core/i18n"
)

// tr gives one of the few texts only this adapter says (about Telegram's private chats, its
// welcome in a group) from the one catalog, where they are kept under "telegram.<key>".
// Everything else comes from the service, already localized.
func tr(lang, key string, args ...any) string {
	return i18n.T(i18n.Pick(lang), "telegram."+key, args...)
}
