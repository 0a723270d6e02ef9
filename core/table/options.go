package table

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/kontermatt/kontermatt/core"
)

// TimerPreset sets how long a player may think before a reminder and before a computer player
// acts for them.
type TimerPreset string

// The presets.
const (
	TimerFast    TimerPreset = "fast"
	TimerNormal  TimerPreset = "normal"
	TimerRelaxed TimerPreset = "relaxed"
	TimerNone    TimerPreset = "none"
)

// Durations: the reminder, the turn timeout and how long an undealt lobby stays open.
func (p TimerPreset) Durations() (reminder, timeout, lobby time.Duration) {
	switch p {
	case TimerFast:
		return 20 * time.Second, 45 * time.Second, 30 * time.Minute
	case TimerRelaxed:
		return 30 * time.Minute, 4 * time.Hour, 24 * time.Hour
	case TimerNone:
		return 0, 0, 24 * time.Hour
	}
	return 90 * time.Second, 3 * time.Minute, time.Hour
}

// Options are a table's settings, fixed when it opens: the rules, the turn timer and the computer
// players' level.
type Options struct {
	Rules core.Rules
	Timer TimerPreset
	Level string // computer player level: easy, normal, strong
}

// DefaultOptions are the defaults of RULES.md, the normal timer and normal computer players.
func DefaultOptions() Options {
	return Options{Rules: core.DefaultRules(), Timer: TimerNormal, Level: "normal"}
}

// Levels are the computer player levels a table may choose.
var Levels = []string{"easy", "normal", "strong"}

// optionError is a bad "key=value" at new; it carries the offending text for the message.
type optionError struct{ text string }

func (e *optionError) Error() string { return "bad option " + e.text }

func onOff(v string) (bool, bool) {
	switch strings.ToLower(v) {
	case "on", "yes", "true", "1", "an", "ja", "oui":
		return true, true
	case "off", "no", "false", "0", "aus", "nee", "nein", "non":
		return false, true
	}
	return false, false
}

// ParseOptions reads "key=value" arguments of new onto the defaults: stripes=1..20,
// draw=stake|flat1, bonus=on|off, announce=on|off, timer=fast|normal|relaxed|none,
// direction=clockwise|anticlockwise, level=easy|normal|strong. Arguments without "=" are ignored
// here (they are not options).
func ParseOptions(args []string) (Options, error) {
	o := DefaultOptions()
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		if !ok {
			continue
		}
		k, v = strings.ToLower(strings.TrimSpace(k)), strings.ToLower(strings.TrimSpace(v))
		bad := &optionError{text: a}
		switch k {
		case "stripes", "streechen":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 20 {
				return o, bad
			}
			o.Rules.Stripes = n
		case "draw", "draw_penalty":
			switch v {
			case "stake":
				o.Rules.DrawPenalty = core.DrawStake
			case "flat1", "1":
				o.Rules.DrawPenalty = core.DrawFlat1
			default:
				return o, bad
			}
		case "bonus", "all_tricks_bonus":
			b, ok := onOff(v)
			if !ok {
				return o, bad
			}
			o.Rules.AllTricksBonus = b
		case "announce", "announcements":
			b, ok := onOff(v)
			if !ok {
				return o, bad
			}
			o.Rules.Announcements = b
		case "timer":
			switch p := TimerPreset(v); p {
			case TimerFast, TimerNormal, TimerRelaxed, TimerNone:
				o.Timer = p
			default:
				return o, bad
			}
		case "direction", "dir":
			switch v {
			case "clockwise", "cw":
				o.Rules.Direction = core.Clockwise
			case "anticlockwise", "counterclockwise", "acw", "anti":
				o.Rules.Direction = core.Anticlockwise
			default:
				return o, bad
			}
		case "level", "bots":
			found := false
			for _, l := range Levels {
				found = found || l == v
			}
			if !found {
				return o, bad
			}
			o.Level = v
		default:
			return o, bad
		}
	}
	return o, nil
}

// String gives the options as new accepts them.
func (o Options) String() string {
	return fmt.Sprintf("stripes=%d draw=%v bonus=%s announce=%s timer=%s direction=%v level=%s",
		o.Rules.Stripes, o.Rules.DrawPenalty, onOffText(o.Rules.AllTricksBonus),
		onOffText(o.Rules.Announcements), o.Timer, o.Rules.Direction, o.Level)
}

func onOffText(b bool) string {
	if b {
		return "on"
	}
	return "off"
}
