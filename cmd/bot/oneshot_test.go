package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kontermatt/kontermatt/core/table/tabletest"
	"github.com/kontermatt/kontermatt/storage/etcdstore/etcdtest"
)

// runBinIn runs the binary in dir with the host's environment and extra, and gives its exit
// status and output.
func runBinIn(t *testing.T, bin, dir string, extra []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir, cmd.Env = dir, hostEnv(extra...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String(), errb.String()
	case errors.As(err, &exit):
		return exit.ExitCode(), out.String(), errb.String()
	}
	t.Fatal(err)
	return 0, "", ""
}

// TestHealthAndBackupWithConfigOnEtcd (issue 32): a host's view of a bot on etcd configured by a
// file without secrets and the environment with them (as compose and Kubernetes do), and no
// database path anywhere. `health -config FILE` and `backup -config FILE OUT`, run as the
// container's health check and a host's cron would (the same file, the same environment, the
// same working directory), reach it: health through kontermatt.sock in the working directory,
// or from elsewhere through admin_addr with the token from the environment; the backup is a
// snapshot of the cluster. No secret shows in their output.
func TestHealthAndBackupWithConfigOnEtcd(t *testing.T) {
	c := etcdtest.Start(t, etcdtest.Options{Members: 1})
	bin := buildBot(t)
	f := newFakeBotAPI(t, copiesToken)
	config := writeConfig(t, fmt.Sprintf(`store: etcd
etcd:
  endpoints: ["%s"]
  prefix: "oneshot/"
telegram:
  api_url: "%s"
  webhook:
    url: https://bot.example.org/telegram/hook
`, strings.Join(c.Endpoints(), `", "`), f.srv.URL))
	adminToken := "SECRET-admin-0123456789"
	env := []string{"KONTERMATT_TELEGRAM_TOKEN=" + copiesToken, "KONTERMATT_TELEGRAM_WEBHOOK_SECRET=" + copiesSecret,
		"KONTERMATT_TELEGRAM_WEBHOOK_LISTEN=" + freeAddr(t), "KONTERMATT_ADMIN_ADDR=" + freeAddr(t), "KONTERMATT_ADMIN_TOKEN=" + adminToken}
	dir := t.TempDir()
	out := &tabletest.Buffer{}
	bot := exec.Command(bin, "-config", config)
	bot.Dir, bot.Env, bot.Stdout, bot.Stderr = dir, hostEnv(env...), out, out
	if err := bot.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- bot.Wait() }()
	t.Cleanup(func() {
		bot.Process.Kill()
		<-done
		if t.Failed() {
			t.Logf("bot:\n%s", tail(out.String()))
		}
	})

	var code int
	var stdout, stderr string
	tabletest.WaitUntil(t, 30*time.Second, "health -config healthy", func() bool {
		code, stdout, stderr = runBinIn(t, bin, dir, env, "health", "-config", config)
		return code == 0
	})
	if !strings.Contains(stdout, "quorum ok") || !strings.Contains(stdout, "store etcd ") || stderr != "" {
		t.Errorf("health -config: exit %d, %q, %q", code, stdout, stderr)
	}
	if code, stdout, _ = runBinIn(t, bin, dir, env, "health", "-config", config, "-live"); code != 0 || stdout != "healthy: live ok\n" {
		t.Errorf("health -live: exit %d, %q", code, stdout)
	}
	if _, err := os.Lstat(filepath.Join(dir, "kontermatt.sock")); err != nil {
		t.Errorf("no kontermatt.sock in the working directory: %v", err)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*.db*")); len(files) != 0 {
		t.Errorf("a database path was used: %v", files)
	}
	// From another directory there is no socket: the TCP listener, with the token from the
	// environment.
	elsewhere := t.TempDir()
	code, stdout, stderr = runBinIn(t, bin, elsewhere, env, "health", "-config", config)
	if code != 0 || !strings.Contains(stdout, "quorum ok") {
		t.Errorf("health -config over admin_addr: exit %d, %q, %q", code, stdout, stderr)
	}
	code, stdout, stderr = runBinIn(t, bin, elsewhere, append(env[:len(env)-1:len(env)-1], "KONTERMATT_ADMIN_TOKEN=SECRET-wrong-token-0123"), "health", "-config", config)
	if code != 1 || !strings.Contains(stdout, "not healthy") {
		t.Errorf("health with a wrong token: exit %d, %q, %q", code, stdout, stderr)
	}
	backup := filepath.Join(t.TempDir(), "cluster.db")
	code, stdout, stderr = runBinIn(t, bin, dir, env, "backup", "-config", config, backup)
	if code != 0 || !strings.Contains(stdout, "one revision") {
		t.Errorf("backup -config: exit %d, %q, %q", code, stdout, stderr)
	}
	if all := out.String() + stdout + stderr; strings.Contains(all, "SECRET") || strings.Contains(all, copiesToken) {
		t.Errorf("a secret shows in the output")
	}
}
