package telegram

import (
	"errors"
	"testing"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// One reading of Telegram's refusals, as the Bot API words them (the fake's words are the
// reference server's).
func TestProblemOf(t *testing.T) {
	refusal := func(code int, desc string) error { return &tgbotapi.Error{Code: code, Message: desc} }
	for _, tc := range []struct {
		err  error
		want problem
	}{
		{errors.New("connection reset"), problem{kind: notTelegrams}},
		{&tgbotapi.Error{Code: 400, Message: errUpgraded, ResponseParameters: tgbotapi.ResponseParameters{MigrateToChatID: superGroup}},
			problem{kind: migrated, to: superGroup}},
		{&tgbotapi.Error{Code: 429, Message: "Too Many Requests: retry after 5", ResponseParameters: tgbotapi.ResponseParameters{RetryAfter: 5}},
			problem{kind: retryAfter, after: 5 * time.Second}},
		{refusal(403, errKicked), problem{kind: kicked}},
		{refusal(403, "Forbidden: bot was blocked by the user"), problem{kind: kicked}},
		{refusal(403, "Forbidden: bot can't initiate conversation with a user"), problem{kind: kicked}},
		{refusal(400, "Bad Request: chat not found"), problem{kind: kicked}},
		{refusal(400, errNoText), problem{kind: noRights, lacks: text}},
		{refusal(400, "Bad Request: CHAT_WRITE_FORBIDDEN"), problem{kind: noRights, lacks: text}},
		{refusal(400, errNoPhotos), problem{kind: noRights, lacks: photos}},
		{refusal(400, errNoDocuments), problem{kind: noRights, lacks: documents}},
		{refusal(400, errTopic), problem{kind: topicClosed}},
		{refusal(400, errNoThread), problem{kind: threadGone}},
		{refusal(400, "Bad Request: message is not modified: specified new message content and reply markup are exactly the same"), problem{kind: notModified}},
		{refusal(400, "Bad Request: message to edit not found"), problem{kind: messageGone}},
		{refusal(400, "Bad Request: message to delete not found"), problem{kind: messageGone}},
		{refusal(400, "Bad Request: message can't be edited"), problem{kind: messageGone}},
		{refusal(400, errOld), problem{kind: otherProblem}}, // older than 48 hours: its buttons go instead
		{refusal(400, "Bad Request: BUTTON_DATA_INVALID"), problem{kind: otherProblem}},
	} {
		if got := problemOf(tc.err); got != tc.want {
			t.Errorf("%v: %+v, want %+v", tc.err, got, tc.want)
		}
	}
}
