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
// Discord counts refused requests against the bot (10,000 in 10 minutes and it is banned for a
// while: developer docs, Rate Limits: Invalid Request Limit), so a lack learned from a refusal
// is believed for permsFresh before the request is tried again.

// The permissions the bot uses (developer docs, Permissions: Bitwise Permission Flags).
const (
	permViewChannel   = discordgo.PermissionViewChannel           // see the channel: every request
	permSendMessages  = discordgo.PermissionSendMessages          // post in a channel (not a thread)
	permSendInThreads = discordgo.PermissionSendMessagesInThreads // post in a thread
	permAttachFiles   = discordgo.PermissionAttachFiles           // the board and table pictures
	permEmbedLinks    = discordgo.PermissionEmbedLinks            // an embed (the adapter sends none)
)

// Permissions are those the bot asks for when it is invited: View Channel, Send Messages, Send
// Messages in Threads and Attach Files, 274877942784. It needs no other: it reads no messages
// (commands and buttons arrive as interactions), sends no embeds and pings only the players.
const Permissions = permViewChannel | permSendMessages | permSendInThreads | permAttachFiles

// responsePermissions are the only permissions an app without a bot member in the server has:
// Discord fills app_permissions with @everyone's, limited to those usable in interaction answers
// (developer docs, Change Log: Calculated Permissions in Interaction Payloads, 2022-06-29).
const responsePermissions = permAttachFiles | permEmbedLinks | discordgo.PermissionMentionEveryone | discordgo.PermissionUseExternalEmojis

// permsFresh is how long what the adapter knows about a channel's permissions is believed.
const permsFresh = 5 * time.Minute

// channelInfo is what the bot may do in a channel, as last seen.
type channelInfo struct {
	perms  int64
	thread bool
	at     time.Time
}

// sendPermission is what posting takes in a channel or a thread: in threads Send Messages does
// not count, only Send Messages in Threads (developer docs, Permissions: Permissions for Threads).
func sendPermission(thread bool) int64 {
	if thread {
		return permSendInThreads
	}
	return permSendMessages
}

// seeChannel notes the bot's permissions in a guild channel, from an interaction there.
func (a *Adapter) seeChannel(ch string, perms int64, thread bool) {
	a.usersMu.Lock()
	defer a.usersMu.Unlock()
	a.channels[ch] = channelInfo{perms: perms, thread: thread, at: time.Now()}
}

// lacks notes a permission the bot was just refused in a channel.
func (a *Adapter) lacks(ch string, perm int64) {
	a.usersMu.Lock()
	defer a.usersMu.Unlock()
	c, ok := a.channels[ch]
	if !ok || time.Since(c.at) > permsFresh {
		c = channelInfo{perms: Permissions | permEmbedLinks} // nothing known: only this is lacking
	}
	c.perms &^= perm
	c.at = time.Now()
	a.channels[ch] = c
}

// may reports whether the bot may do perm in a channel, as far as it knows; a channel it knows
// nothing fresh about is worth a try.
func (a *Adapter) may(ch string, perm func(thread bool) int64) bool {
	a.usersMu.Lock()
	defer a.usersMu.Unlock()
	c, ok := a.channels[ch]
	if !ok || time.Since(c.at) > permsFresh {
		return true
	}
	p := perm(c.thread)
	return c.perms&p == p
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
