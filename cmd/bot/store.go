package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kontermatt/kontermatt/cmd/bot/internal/ops"
	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/storage"
	"github.com/kontermatt/kontermatt/storage/etcdstore"
)

// botStore is what the bot and its tools need of a store, bbolt or etcd.
type botStore interface {
	table.Store
	table.KV
	KVEach(ctx context.Context, bucket string, fn func(key string, value []byte) error) error
	storage.Dumper
	storage.Loader
	Close() error
}

var (
	_ botStore = (*storage.Store)(nil)
	_ botStore = (*etcdstore.Store)(nil)
)

// openConfigured opens the store the config names: the bbolt file at cfg.Database with opts, or
// the etcd cluster. Its error is the one line for the screen.
func openConfigured(cfg Config, opts storage.Options) (botStore, error) {
	if cfg.Store != "etcd" {
		return openStore(cfg.Database, opts)
	}
	return openEtcd(cfg)
}

// openEtcd connects to the configured cluster.
func openEtcd(cfg Config) (*etcdstore.Store, error) {
	// Called at start-up and by the one-shot subcommands, before any request exists: the
	// connection's checks are bounded by the store's timeout (etcdOptions).
	ctx := context.Background()
	opts, err := etcdOptions(cfg)
	if err != nil {
		return nil, err
	}
	st, err := etcdstore.Open(ctx, opts)
	if err != nil {
		if errors.Is(err, table.ErrUnavailable) {
			// etcd's client says only that nobody answered: a TLS mistake (a wrong CA, a missing
			// client certificate) reads the same. Ask the members' TLS directly, and say that.
			if tlsErr := tlsProblem(opts); tlsErr != nil {
				return nil, fmt.Errorf("the etcd cluster at %s refuses this bot's TLS: %v (etcd.ca, etcd.cert, etcd.key): %w", strings.Join(opts.Endpoints, ", "), tlsErr, err)
			}
			return nil, fmt.Errorf("the etcd cluster at %s does not answer (%v): %w", strings.Join(opts.Endpoints, ", "), opts.Timeout, err)
		}
		return nil, err
	}
	return st, nil
}

// tlsProblem is the TLS error of the first https:// endpoint that has one: its certificate not
// signed by etcd.ca, or the member refusing the client's certificate (or its absence), which a
// member says in an alert right after the handshake. Nil when TLS is fine or not used, or no
// member can be reached at all.
func tlsProblem(opts etcdstore.Options) error {
	if opts.TLS == nil {
		return nil
	}
	for _, ep := range opts.Endpoints {
		u, err := url.Parse(ep)
		if err != nil || u.Scheme != "https" {
			continue
		}
		conf := opts.TLS.Clone()
		conf.ServerName = u.Hostname()
		conf.NextProtos = []string{"h2"} // as gRPC asks
		dialer := &net.Dialer{Timeout: 2 * time.Second}
		conn, err := tls.DialWithDialer(dialer, "tcp", u.Host, conf)
		if err != nil {
			var opErr *net.OpError
			if errors.As(err, &opErr) && opErr.Op == "dial" {
				continue // not reached: not a TLS problem
			}
			return err
		}
		// TLS 1.3: a member that wants a client certificate says so after the handshake.
		_ = conn.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
		_, err = conn.Read(make([]byte, 1))
		conn.Close()
		if err != nil && strings.Contains(err.Error(), "tls:") {
			return err
		}
	}
	return nil
}

// etcdOptions are the store's options from the config: the TLS files read, the user from the
// environment.
func etcdOptions(cfg Config) (etcdstore.Options, error) {
	e := cfg.Etcd
	opts := etcdstore.Options{Endpoints: e.Endpoints, Prefix: e.Prefix, Username: e.Username, Password: e.Password, Timeout: e.Timeout, History: e.History, Election: e.ElectionTimeout}
	if opts.Timeout == 0 {
		opts.Timeout = etcdstore.DefaultTimeout
	}
	if e.Cert == "" && e.CA == "" && !strings.HasPrefix(strings.Join(e.Endpoints, ","), "https://") {
		return opts, nil
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if e.Cert != "" {
		pair, err := tls.LoadX509KeyPair(e.Cert, e.Key)
		if err != nil {
			return opts, fmt.Errorf("etcd.cert and etcd.key: %w", err)
		}
		tc.Certificates = []tls.Certificate{pair}
	}
	if e.CA != "" {
		pem, err := os.ReadFile(e.CA)
		if err != nil {
			return opts, fmt.Errorf("etcd.ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return opts, fmt.Errorf("etcd.ca: %s holds no PEM certificate", e.CA)
		}
		tc.RootCAs = pool
	}
	opts.TLS = tc
	return opts, nil
}

// describeStore names the store for the start line: the file, or the cluster and prefix.
func describeStore(cfg Config) string {
	if cfg.Store == "etcd" {
		return fmt.Sprintf("etcd %s prefix %q", strings.Join(cfg.Etcd.Endpoints, ","), cfg.Etcd.Prefix)
	}
	return cfg.Database
}

// etcdBackup writes a consistent snapshot of an etcd store, at one revision, as a bbolt file at
// path (written beside it, then renamed over it): a file the bbolt store opens.
func etcdBackup(st *etcdstore.Store, path string) (n int, err error) {
	// The backup subcommand and the admin door's Backup (whose port, shared with bbolt's
	// io.Writer backup, takes no context) call it: the snapshot owns its lifetime, each read
	// bounded by the store's timeout.
	ctx := context.Background()
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return 0, err
	}
	tmp := f.Name()
	f.Close()
	os.Remove(tmp) // storage.Open makes the file anew
	defer func() {
		if err != nil {
			os.Remove(tmp)
		}
	}()
	dst, err := storage.Open(tmp, storage.Options{})
	if err != nil {
		return 0, err
	}
	n, err = dst.Load(ctx, st)
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return n, err
	}
	return n, os.Rename(tmp, path)
}

// snapshotsOf is the admin door's view of the bot's store: the bbolt file, or the etcd
// cluster's snapshots, written beside the admin socket (etcd has no database file).
func snapshotsOf(st botStore, cfg Config) ops.BackupSource {
	if s, ok := st.(*storage.Store); ok {
		return s
	}
	return etcdSnapshots{st: st.(*etcdstore.Store), path: strings.TrimSuffix(adminSocket(cfg), ".sock")}
}

// etcdSnapshots serves the admin door's live backups of an etcd-backed bot: each a snapshot
// into a file beside the configured database path.
type etcdSnapshots struct {
	st   *etcdstore.Store
	path string
}

func (e etcdSnapshots) Path() string { return e.path }

func (e etcdSnapshots) Backup(w io.Writer) (int64, error) {
	dir, base := filepath.Split(e.path)
	if dir == "" {
		dir = "."
	}
	tmp := filepath.Join(dir, "."+base+".etcd-backup")
	if _, err := etcdBackup(e.st, tmp); err != nil {
		return 0, err
	}
	defer os.Remove(tmp)
	f, err := os.Open(tmp)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return io.Copy(w, f)
}
