package discord

import (
	"strings"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/kontermatt/kontermatt/core/i18n"
)

// Permissions decide what is sent, not whether a channel lives. Every interaction carries
// app_permissions, the bot's permissions in its channel (developer docs, Interactions: Receiving
// and Responding); a request that needs one the bot lacks fails alone, with 403 and code 50013
// (developer docs, Opcodes and Status Codes), or 50001 when the bot cannot see the channel. So
// the adapter remembers per channel what it may do, and sends what fits: the board without its
// picture when it may not attach files, no new message where it may not send any (its own
// messages it may still edit: a maintainer in discord-api-docs#3096), nothing where it cannot see.
//
// app_permissions do not tell everything: a private thread the bot is not a member of refuses it
// as unseen (50001) and a locked thread refuses new messages (160005), though its permissions
// allow both (they come from the bot's roles and the parent channel). Discord counts refused
// requests against the bot (10,000 in 10 minutes and it is banned for a while: developer docs,
// Rate Limits: Invalid Request Limit), so what a refusal taught stands, whatever the
// interactions' app_permissions say, until a post works again (tried once it is permsFresh old)
// or there is a clear sign it changed: app_permissions other than those it came with (an admin
// changed them), or a thread's metadata saying it is no longer locked.

// The permissions the bot uses (developer docs, Permissions: Bitwise Permission Flags).
const (
	permViewChannel   = discordgo.PermissionViewChannel           // see the channel: every request
	permSendMessages  = discordgo.PermissionSendMessages          // post in a channel (not a thread)
	permSendInThreads = discordgo.PermissionSendMessagesInThreads // post in a thread
	permAttachFiles   = discordgo.PermissionAttachFiles           // the board and table pictures
	permEmbedLinks    = discordgo.PermissionEmbedLinks            // an embed (the adapter sends none)
	permManageThreads = discordgo.PermissionManageThreads         // post in locked and private threads
)

// Permissions are those the bot asks for when it is invited: View Channel, Send Messages, Send
// Messages in Threads and Attach Files, 274877942784. It needs no other: it reads no messages
// (commands and buttons arrive as interactions), sends no embeds and pings only the players.
const Permissions = permViewChannel | permSendMessages | permSendInThreads | permAttachFiles

// responsePermissions are the only permissions an app without a bot member in the server has:
// Discord fills app_permissions with @everyone's, limited to those usable in interaction answers
// (developer docs, Change Log: Calculated Permissions in Interaction Payloads, 2022-06-29).
const responsePermissions = permAttachFiles | permEmbedLinks | discordgo.PermissionMentionEveryone | discordgo.PermissionUseExternalEmojis

// defaultPermsFresh is how long what an interaction said about a channel is believed, and a
// refusal before the refused request is tried again.
const defaultPermsFresh = 5 * time.Minute

// channelInfo is what the bot may do in a channel: what the last interaction there said, and
// what the last refusal taught.
type channelInfo struct {
	perms   int64 // app_permissions
	thread  bool
	private bool      // a private thread: posting needs the bot to be one of its members
	locked  bool      // a locked thread: posting needs Manage Threads
	at      time.Time // when an interaction said so; zero if none did
	refusal refusal
	// automod is when AutoMod blocked a message there that nobody was told of yet.
	automod time.Time
}

// refusal is what a refused request taught about a channel.
type refusal struct {
	lacks int64 // what the refusal showed lacking
	code  int   // Discord's code: 50001, 50013 or 160005
	perms int64 // app_permissions when it came, -1 if unknown: a change is a clear sign
	at    time.Time
}

// watchedPermissions are the permissions whose change may end a refusal.
const watchedPermissions = permViewChannel | permSendMessages | permSendInThreads | permAttachFiles | permManageThreads

// fresh reports whether a time noted is recent enough to be believed (a.usersMu held).
func (a *Adapter) fresh(t time.Time) bool { return !t.IsZero() && time.Since(t) <= a.permsFresh }

// sendPermission is what posting takes in a channel or a thread: in threads Send Messages does
// not count, only Send Messages in Threads (developer docs, Permissions: Permissions for Threads).
func sendPermission(thread bool) int64 {
	if thread {
		return permSendInThreads
	}
	return permSendMessages
}

// seeChannel notes the bot's permissions in a guild channel, from an interaction there; a
// refusal there stands unless they show a clear sign it changed.
func (a *Adapter) seeChannel(ch string, perms int64, x interactionExtras) {
	a.usersMu.Lock()
	defer a.usersMu.Unlock()
	c := a.channels[ch]
	c.perms, c.thread, c.private, c.at = perms, x.thread, x.private, time.Now()
	if x.metadata {
		c.locked = x.locked
	}
	if r := &c.refusal; !r.at.IsZero() {
		switch {
		case r.perms >= 0 && (r.perms^perms)&watchedPermissions != 0, // an admin changed them
			r.code == discordgo.ErrCodeThreadIsLocked && x.metadata && !x.locked: // unlocked
			c.refusal = refusal{}
		case r.perms < 0:
			r.perms = perms // learnt when nothing was known: these are what it stands against
		}
	}
	a.channels[ch] = c
}

// lacks notes what the bot was just refused in a channel, and Discord's code for it.
func (a *Adapter) lacks(ch string, perm int64, code int) {
	a.usersMu.Lock()
	defer a.usersMu.Unlock()
	c := a.channels[ch]
	r := refusal{perms: -1}
	if a.fresh(c.refusal.at) {
		r.lacks = c.refusal.lacks
	}
	if a.fresh(c.at) {
		r.perms = c.perms
	}
	r.lacks |= perm
	r.code, r.at = code, time.Now()
	c.refusal = r
	a.channels[ch] = c
}

// works notes that a request needing perm went through in a channel: what a refusal taught of
// it no longer stands.
func (a *Adapter) works(ch string, perm int64) {
	a.usersMu.Lock()
	defer a.usersMu.Unlock()
	c, ok := a.channels[ch]
	if !ok || c.refusal.lacks&perm == 0 {
		return
	}
	if c.refusal.lacks &^= perm; c.refusal.lacks == 0 {
		c.refusal = refusal{}
	}
	a.channels[ch] = c
}

// may reports whether the bot may do perm in a channel, as far as it knows; a channel it knows
// nothing fresh about is worth a try.
func (a *Adapter) may(ch string, perm func(thread bool) int64) bool {
	a.usersMu.Lock()
	defer a.usersMu.Unlock()
	c := a.channels[ch]
	have := int64(Permissions | permEmbedLinks)
	if a.fresh(c.at) {
		have = c.perms
		if c.locked && have&permManageThreads == 0 {
			have &^= permSendInThreads
		}
	}
	if a.fresh(c.refusal.at) {
		have &^= c.refusal.lacks
	}
	p := perm(c.thread)
	return have&p == p
}

// automodBlocked notes that AutoMod blocked a message in a channel and nobody was told.
func (a *Adapter) automodBlocked(ch string) {
	a.usersMu.Lock()
	defer a.usersMu.Unlock()
	c := a.channels[ch]
	c.automod = time.Now()
	a.channels[ch] = c
}

// automodUntold reports, once, that AutoMod blocked a message in the channel lately and nobody
// was told: the one who acts there next is.
func (a *Adapter) automodUntold(ch string) bool {
	a.usersMu.Lock()
	defer a.usersMu.Unlock()
	c, ok := a.channels[ch]
	if !ok || !a.fresh(c.automod) {
		return false
	}
	c.automod = time.Time{}
	a.channels[ch] = c
	return true
}

// What each kind of request needs, for may.
func toSee(bool) int64         { return permViewChannel }
func toPost(thread bool) int64 { return permViewChannel | sendPermission(thread) }
func toAttach(bool) int64      { return permAttachFiles }

// missingToShow lists what the bot lacks to show a table in a channel with these permissions,
// in the order an admin should grant them.
func missingToShow(perms int64, thread bool) []int64 {
	var out []int64
	for _, p := range []int64{permViewChannel, sendPermission(thread)} {
		if perms&p == 0 {
			out = append(out, p)
		}
	}
	return out
}

// whyNotShown says, in lang, why the bot cannot show a table in a guild channel an interaction
// has just come from, or "": what its app_permissions lack, a lock its thread's metadata shows,
// or what a refusal there taught.
func (a *Adapter) whyNotShown(ch, lang string) string {
	a.usersMu.Lock()
	c := a.channels[ch]
	standing := a.fresh(c.refusal.at) && c.refusal.lacks&(permViewChannel|permSendMessages|permSendInThreads) != 0
	a.usersMu.Unlock()
	missing := missingToShow(c.perms, c.thread)
	switch {
	case len(missing) > 0:
	case c.locked && c.perms&permManageThreads == 0, standing && c.refusal.code == discordgo.ErrCodeThreadIsLocked:
		return i18n.T(lang, "discord.thread_locked")
	case standing && c.refusal.code == discordgo.ErrCodeMissingAccess && c.private:
		return i18n.T(lang, "discord.thread_private")
	case standing && c.refusal.code == discordgo.ErrCodeMissingAccess:
		missing = []int64{permViewChannel}
	case standing:
		missing = []int64{sendPermission(c.thread)}
	default:
		return ""
	}
	return i18n.T(lang, "discord.missing", permissionNames(lang, missing))
}

// permissionNames names permissions as Discord's settings do, each quoted, for a text.
func permissionNames(lang string, perms []int64) string {
	var names []string
	for _, p := range perms {
		key := map[int64]string{permViewChannel: "discord.perm.view", permSendMessages: "discord.perm.send",
			permSendInThreads: "discord.perm.threads", permAttachFiles: "discord.perm.attach"}[p]
		names = append(names, i18n.T(lang, key))
	}
	return strings.Join(names, ", ")
}
