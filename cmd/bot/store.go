package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/storage"
	"github.com/kontermatt/kontermatt/storage/etcdstore"
)

// botStore is what the bot and its tools need of a store, bbolt or etcd.
type botStore interface {
	table.Store
	table.KV
	KVEach(bucket string, fn func(key string, value []byte) error) error
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
	opts, err := etcdOptions(cfg)
	if err != nil {
		return nil, err
	}
	st, err := etcdstore.Open(opts)
	if err != nil {
		if errors.Is(err, table.ErrUnavailable) {
			return nil, fmt.Errorf("the etcd cluster at %s does not answer (%v): %w", strings.Join(opts.Endpoints, ", "), opts.Timeout, err)
		}
		return nil, err
	}
	return st, nil
}

// etcdOptions are the store's options from the config: the TLS files read, the user from the
// environment.
func etcdOptions(cfg Config) (etcdstore.Options, error) {
	e := cfg.Etcd
	opts := etcdstore.Options{Endpoints: e.Endpoints, Prefix: e.Prefix, Username: e.Username, Password: e.Password, Timeout: e.Timeout, History: e.History}
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
	n, err = dst.Load(st)
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return n, err
	}
	return n, os.Rename(tmp, path)
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
