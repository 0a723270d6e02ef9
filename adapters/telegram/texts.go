package telegram

import (
	"fmt"

	"github.com/kontermatt/kontermatt/core/i18n"
)

// The few texts only this adapter says: about Telegram's private chats. Everything else comes
// from the service, already localized.
var texts = map[string]map[string]string{
	"en": {
		"dm.needed":  "%s, I can't send you your cards privately yet: tap the button below, then Start. Until then, “%[2]s” on the table shows them.",
		"dm.button":  "Get my cards privately",
		"hand.press": "Your cards stay private: tap “%s” on the table message, or open a private chat with me.",
		"start.hi":   "Hello! I deal Konter a Matt. Add me to a group and type /new there; your cards will come here.",
		"start.ok":   "You're set: your cards will come here.",
		"btn.alien":  "This button is not mine.",
	},
	"lb": {
		"dm.needed":  "%s, ech kann dir deng Kaarten nach net privat schécken: dréck op de Knäppchen hei ënnendrënner an dann op Start. Bis dohin weist „%[2]s“ um Dësch se dir.",
		"dm.button":  "Meng Kaarten privat kréien",
		"hand.press": "Deng Kaarte bleiwe privat: dréck op „%s“ um Dësch, oder maach e privaten Chat mat mir op.",
		"start.hi":   "Moien! Ech ginn Konter a Matt. Setz mech an e Grupp a schreif do /new; deng Kaarte kommen dann hei hin.",
		"start.ok":   "Alles kloer: deng Kaarte kommen hei hin.",
		"btn.alien":  "Dëse Knäppchen ass net vu mir.",
	},
	"de": {
		"dm.needed":  "%s, ich kann dir deine Karten noch nicht privat schicken: tippe unten auf den Knopf und dann auf Start. Bis dahin zeigt „%[2]s“ am Tisch sie dir.",
		"dm.button":  "Meine Karten privat bekommen",
		"hand.press": "Deine Karten bleiben privat: tippe am Tisch auf „%s“ oder öffne einen privaten Chat mit mir.",
		"start.hi":   "Hallo! Ich gebe Konter a Matt. Füge mich einer Gruppe hinzu und schreibe dort /new; deine Karten kommen dann hierher.",
		"start.ok":   "Alles klar: deine Karten kommen hierher.",
		"btn.alien":  "Dieser Knopf gehört nicht zu mir.",
	},
	"fr": {
		"dm.needed":  "%s, je ne peux pas encore t'envoyer tes cartes en privé : appuie sur le bouton ci-dessous, puis sur Démarrer. D'ici là, « %[2]s » sur la table te les montre.",
		"dm.button":  "Recevoir mes cartes en privé",
		"hand.press": "Tes cartes restent privées : appuie sur « %s » sur la table, ou ouvre une discussion privée avec moi.",
		"start.hi":   "Bonjour ! Je distribue le Konter a Matt. Ajoute-moi à un groupe et tape /new ; tes cartes arriveront ici.",
		"start.ok":   "C'est bon : tes cartes arriveront ici.",
		"btn.alien":  "Ce bouton ne vient pas de moi.",
	},
}

// tr gives this adapter's text for key in lang (English when missing).
func tr(lang, key string, args ...any) string {
	s, ok := texts[i18n.Pick(lang)][key]
	if !ok {
		s = texts["en"][key]
	}
	if len(args) > 0 {
		return fmt.Sprintf(s, args...)
	}
	return s
}
