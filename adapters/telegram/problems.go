package telegram

import (
	"errors"
	"strings"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// What Telegram's refusals mean, read in one place: the outbox's classes (Classify), what a
// refusal teaches about a chat (Refused, refusedBy) and the sends that fall back (sendNew,
// retire, edits) all ask problemOf, so no other code matches Telegram's words. The words are
// the Bot API's error descriptions, as the reference server writes them (tdlib/telegram-bot-api,
// Client.cpp); ResponseParameters carry the migration and the retry.

// problemKind is what a refused request says.
type problemKind uint8

const (
	notTelegrams problemKind = iota // not Telegram's answer: the network failed, or the server
	otherProblem                    // a refusal of this request alone (a bad button, a caption too long)
	// kicked: the bot may not write to the chat at all: removed or banned from a group (403
	// "bot was kicked from the group chat", "bot is not a member of the supergroup chat"), a user
	// who blocked it or never pressed Start (403 "bot was blocked by the user", "bot can't
	// initiate conversation with a user"), or a chat that is gone (400 "chat not found").
	kicked
	// noRights: a member that may not send this kind of message there (lacks says what): 400
	// "not enough rights to send text messages to the chat" (… photos, … documents),
	// CHAT_WRITE_FORBIDDEN, "have no rights to send a message".
	noRights
	topicClosed // 400 TOPIC_CLOSED: a closed forum topic takes nothing from the bot until reopened
	threadGone  // 400 "message thread not found": the forum topic was deleted
	notModified // 400 "message is not modified": an edit that changes nothing
	messageGone // the message to edit or delete is not there, or may no longer be edited
	migrated    // the group became a supergroup (ResponseParameters.migrate_to_chat_id)
	retryAfter  // rate limited (ResponseParameters.retry_after)
)

// problem is a refusal, read.
type problem struct {
	kind  problemKind
	lacks media         // noRights: what may not be sent
	to    int64         // migrated: the supergroup
	after time.Duration // retryAfter
}

// problemOf reads what err says; notTelegrams for an error that is not the Bot API's answer.
func problemOf(err error) problem {
	var te *tgbotapi.Error
	if !errors.As(err, &te) {
		return problem{kind: notTelegrams}
	}
	m := strings.ToLower(te.Message)
	has := func(words ...string) bool {
		for _, w := range words {
			if strings.Contains(m, w) {
				return true
			}
		}
		return false
	}
	switch {
	case te.MigrateToChatID != 0:
		// Bot API, ResponseParameters: "The group has been migrated to a supergroup with the
		// specified identifier."
		return problem{kind: migrated, to: te.MigrateToChatID}
	case te.RetryAfter > 0:
		return problem{kind: retryAfter, after: time.Duration(te.RetryAfter) * time.Second}
	case has("not enough rights to send text", "have no rights to send a message", "chat_write_forbidden", "chat_send_plain_forbidden"):
		return problem{kind: noRights, lacks: text}
	case has("not enough rights to send photos", "chat_send_photos_forbidden"):
		return problem{kind: noRights, lacks: photos}
	case has("not enough rights to send documents", "chat_send_docs_forbidden"):
		return problem{kind: noRights, lacks: documents}
	case has("topic_closed"):
		return problem{kind: topicClosed}
	case te.Code == 400 && has("message thread not found"):
		return problem{kind: threadGone}
	case has("message is not modified"):
		return problem{kind: notModified}
	case has("message to edit not found", "message to delete not found", "message can't be edited", "message_id_invalid"):
		return problem{kind: messageGone}
	case te.Code == 403, has("chat not found"):
		return problem{kind: kicked}
	}
	return problem{kind: otherProblem}
}

// lacks reports a refusal that says the chat takes text but not m from the bot.
func lacks(err error, m media) bool {
	p := problemOf(err)
	return p.kind == noRights && p.lacks&m != 0
}
