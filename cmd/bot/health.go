package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/kontermatt/kontermatt/cmd/bot/internal/ops"
)

// runHealth asks the running bot whether it is ready (GET /readyz on its admin socket, or on
// admin_addr: what /healthz answers too): exit 0 with "healthy: …", else exit 1 with what is
// not. It is the container's health check: the image has no shell and no curl. -config and the
// environment (the token included) say where the bot is, as they tell the bot itself.
func runHealth(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	var live bool
	cfg, code, done := dbFlags("health", args, 0, stdout, stderr, func(fs *flag.FlagSet) {
		fs.BoolVar(&live, "live", false, "ask liveness (/livez: the process answers) instead of readiness: a liveness probe's command")
	})
	if done {
		return code
	}
	line, healthy := ops.AskHealth(adminTarget(cfg), live)
	if !healthy {
		fmt.Fprintln(stdout, "not healthy: "+line)
		return 1
	}
	fmt.Fprintln(stdout, "healthy: "+line)
	return 0
}

// adminSocket is the admin socket's path: admin_socket, else beside the database with bbolt
// (DATABASE.sock: `backup -db DATABASE` reaches the bot holding that very file), else
// kontermatt.sock in the working directory with etcd, which has no database file.
func adminSocket(cfg Config) string {
	switch {
	case cfg.AdminSocket != "":
		return cfg.AdminSocket
	case cfg.Store == "etcd":
		return "kontermatt.sock"
	}
	return cfg.Database + ".sock"
}

// adminTarget is the way the one-shot commands reach the running bot of cfg.
func adminTarget(cfg Config) ops.Target {
	holds := cfg.Database
	if cfg.Store == "etcd" {
		holds = describeStore(cfg)
	}
	return ops.Target{Socket: adminSocket(cfg), Addr: cfg.AdminAddr, Token: cfg.AdminToken, Holds: holds}
}
