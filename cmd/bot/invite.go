package main

import (
	"fmt"
	"io"
	"os"

	"github.com/kontermatt/kontermatt/adapters/discord"
)

// runInvite prints the link that adds the configured Discord bot to a server, with the scopes
// and the permissions it needs. The application is the one the token belongs to, asked of
// Discord, unless -application names it (then no token is needed).
func runInvite(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("invite")
	configPath := fs.String("config", "", "YAML config file")
	appID := fs.String("application", "", "the application's ID (default: asked of Discord with the configured token)")
	if code, ok := parseFlags(fs, args, 0, stdout, stderr); !ok {
		return code
	}
	cfg, err := loadConfig(*configPath, os.Getenv)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	id := *appID
	if id == "" {
		if cfg.Discord.Token == "" {
			fmt.Fprintln(stderr, "bot invite: no Discord token (discord.token or KONTERMATT_DISCORD_TOKEN) to ask Discord which application it is; or give -application ID")
			return 2
		}
		var name string
		if id, name, err = discord.LookupApplication(cfg.Discord.Token, cfg.Discord.APIURL); err != nil {
			fmt.Fprintln(stderr, "bot invite:", err) // without the token
			return 1
		}
		fmt.Fprintf(stdout, "Invite %s to a server (whoever opens the link must be allowed to manage it):\n", name)
	}
	fmt.Fprintln(stdout, discord.InviteURL(id, cfg.Discord.GuildID))
	fmt.Fprintf(stdout, "scopes bot and applications.commands; permissions %d: %s\n", discord.Permissions, discord.PermissionsNamed("en"))
	return 0
}
