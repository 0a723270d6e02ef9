package telegram

import "github.com/kontermatt/kontermatt/core/i18n"

// tr gives one of the few texts only this adapter says (about Telegram's private chats): the
// catalog's "telegram." keys, so tr(lang, "dm.needed") is telegram.dm.needed. Everything else
// comes from the service, already localized.
func tr(lang, key string, args ...any) string {
	return i18n.T(i18n.Pick(lang), "telegram."+key, args...)
}
