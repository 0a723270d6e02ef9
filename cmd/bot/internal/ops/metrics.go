package ops

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/storage/etcdstore"
)

// Metrics are the bot's Prometheus metrics, on its own registry: what the service does (it is
// the service's table.Observer), what the outboxes hold and did, and the Go runtime's.
type Metrics struct {
	reg       *prometheus.Registry
	commands  *prometheus.CounterVec
	latency   *prometheus.HistogramVec
	commits   *prometheus.CounterVec
	commitDur prometheus.Histogram
	decisions *prometheus.HistogramVec
	reloads   *prometheus.CounterVec
	leases    *prometheus.CounterVec
	leaseHeld *prometheus.GaugeVec
	// lastBackup is the newest backup this process knows of (Unix seconds; 0: none): sent by its
	// admin door, or read from backups (see NoteBackup).
	lastBackup atomic.Int64
	// backups is the store's KV where every backup notes its time; nil: this process's alone.
	backups table.KV
	// log says why the store's note could not be read or written.
	log *slog.Logger
}

var _ table.ClusterObserver = (*Metrics)(nil)

// NewMetrics makes the metrics on a registry of their own; the build's version, source revision
// and Go version label kontermatt_build_info.
func NewMetrics(version, revision, goVersion string) *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.commands = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kontermatt_commands_total",
		Help: "Commands handled, by verb and outcome (ok or refused)."}, []string{"verb", "outcome"})
	m.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "kontermatt_command_seconds",
		Help: "Time to handle a command, the durable commit included.", Buckets: prometheus.ExponentialBuckets(0.0001, 2.5, 12)},
		[]string{"verb"})
	m.commits = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kontermatt_commits_total",
		Help: "Writes of a table's change to the database, by result: ok, conflict (another copy wrote the table first: the compare-and-swap failed), unavailable (no quorum) or failed."}, []string{"result"})
	m.commitDur = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "kontermatt_commit_seconds",
		Help: "Time of one durable commit.", Buckets: prometheus.ExponentialBuckets(0.0001, 2.5, 12)})
	m.decisions = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "kontermatt_decision_seconds",
		Help: "Time of one computer player's decision, by level.", Buckets: prometheus.ExponentialBuckets(0.0001, 3, 12)},
		[]string{"level"})
	m.reloads = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kontermatt_table_reloads_total",
		Help: "Tables read again from the database, by why: conflict (a commit lost to another copy's: compare-and-swap failed, the command was applied again), watch (another copy's change taken in), compacted."},
		[]string{"why"})
	m.leases = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kontermatt_lease_changes_total",
		Help: "Leases this copy took (held) or lost (lost), by lease."}, []string{"lease", "change"})
	m.leaseHeld = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "kontermatt_lease_held",
		Help: "1 while this copy holds the lease (timers: it fires the tables' timers), else 0."}, []string{"lease"})
	// Every counter has each of its label values from the start, at 0: an alert on an increase
	// (commits_total{result="failed"}) sees the first failure, not only the second.
	for _, result := range []string{"ok", "conflict", "unavailable", "failed"} {
		m.commits.WithLabelValues(result)
	}
	for _, why := range []string{"conflict", "watch", "compacted"} {
		m.reloads.WithLabelValues(why)
	}
	for _, verb := range api.Verbs { // the typed ones; internal verbs (move, close, pause) appear when they happen
		for _, outcome := range []string{"ok", "refused"} {
			m.commands.WithLabelValues(string(verb), outcome)
		}
	}
	info := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "kontermatt_build_info",
		Help: "Always 1: the version, source revision and Go version of the running binary."}, []string{"version", "revision", "goversion"})
	info.WithLabelValues(version, revision, goVersion).Set(1)
	lastBackup := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "kontermatt_last_backup_timestamp_seconds",
		Help: "When the last backup was made (Unix time): by this bot's admin door, or noted in the database by `kontermatt backup` in another process or by another copy; 0: none known."},
		func() float64 { return float64(m.newestBackup()) })
	m.reg.MustRegister(m.commands, m.latency, m.commits, m.commitDur, m.decisions, m.reloads, m.leases, m.leaseHeld, info, lastBackup,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *Metrics) Command(verb api.Verb, outcome string, took time.Duration) {
	m.commands.WithLabelValues(string(verb), outcome).Inc()
	m.latency.WithLabelValues(string(verb)).Observe(took.Seconds())
}

func (m *Metrics) Commit(took time.Duration, err error) {
	result := "ok"
	switch {
	case errors.Is(err, table.ErrConflict):
		result = "conflict" // another copy committed the table first
	case errors.Is(err, table.ErrUnavailable):
		result = "unavailable"
	case err != nil:
		result = "failed"
	}
	m.commits.WithLabelValues(result).Inc()
	m.commitDur.Observe(took.Seconds())
}

func (m *Metrics) Decision(level string, took time.Duration) {
	m.decisions.WithLabelValues(level).Observe(took.Seconds())
}

func (m *Metrics) Reloaded(why string) { m.reloads.WithLabelValues(why).Inc() }

func (m *Metrics) Lease(name string, held bool) {
	change, v := "lost", 0.0
	if held {
		change, v = "held", 1
	}
	m.leases.WithLabelValues(name, change).Inc()
	m.leaseHeld.WithLabelValues(name).Set(v)
}

// ReadBackups has the last-backup series read, at each scrape, the time every backup notes in
// the store's KV (NoteBackup), and BackupSent note there the admin door's.
func (m *Metrics) ReadBackups(kv table.KV, log *slog.Logger) { m.backups, m.log = kv, log }

// BackupSent notes a live backup sent (the admin door's Backups), in the store too, within the
// backup request's ctx.
func (m *Metrics) BackupSent(ctx context.Context, at time.Time) {
	m.sawBackup(at.Unix())
	if m.backups == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, storeCallTime)
	defer cancel()
	if err := NoteBackup(ctx, m.backups, at); err != nil {
		m.log.Warn("could not note the backup's time in the database: other copies' last-backup series miss it", "err", err)
	}
}

// storeCallTime bounds the metrics' calls to the store: a scrape must not hang on a cluster
// without quorum (Prometheus's own scrape timeout is 10 s by default).
const storeCallTime = 2 * time.Second

// sawBackup keeps the newest of the backup times seen.
func (m *Metrics) sawBackup(sec int64) {
	for {
		old := m.lastBackup.Load()
		if sec <= old || m.lastBackup.CompareAndSwap(old, sec) {
			return
		}
	}
}

// newestBackup reads the store's note (if the metrics have one) and gives the newest backup time
// known; a store that does not answer leaves the last one read.
func (m *Metrics) newestBackup() int64 {
	if m.backups != nil {
		// Prometheus gives a gauge's function no context: the scrape's read owns its own,
		// bounded well inside a scrape's usual 10 s timeout (as etcdAlarms' Collect).
		ctx, cancel := context.WithTimeout(context.Background(), storeCallTime)
		defer cancel()
		at, ok, err := LastBackup(ctx, m.backups)
		switch {
		case err != nil:
			m.log.Warn("could not read the last backup's time from the database", "err", err)
		case ok:
			m.sawBackup(at.Unix())
		}
	}
	return m.lastBackup.Load()
}

// Watch adds what is read at each scrape: the tables by status and each platform's reports.
func (m *Metrics) Watch(svc *table.Service, platforms []Platform) {
	m.reg.MustRegister(&scraped{svc: svc, platforms: platforms})
}

// WatchEtcd adds the etcd cluster's alarms, read at each scrape: kontermatt_etcd_alarm is 1 for
// each kind raised on any member (NOSPACE: writes are refused until the host mends it), else 0.
func (m *Metrics) WatchEtcd(st *etcdstore.Store) { m.reg.MustRegister(etcdAlarms{st}) }

type etcdAlarms struct{ st *etcdstore.Store }

var descAlarm = prometheus.NewDesc("kontermatt_etcd_alarm", "1 while the etcd cluster has the alarm raised on a member (NOSPACE: its quota is full, every write refused), else 0.", []string{"alarm"}, nil)

func (e etcdAlarms) Describe(ch chan<- *prometheus.Desc) { ch <- descAlarm }

func (e etcdAlarms) Collect(ch chan<- prometheus.Metric) {
	// Prometheus gives a collector no context: the scrape's question owns its own, bounded well
	// inside a scrape's usual 10 s timeout.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	alarms, err := e.st.Alarms(ctx)
	if err != nil {
		return // no answer: no sample, rather than a false 0 (the quorum's own series says why)
	}
	for _, kind := range etcdstore.AlarmNames {
		v := 0.0
		for _, a := range alarms {
			if strings.HasPrefix(a, kind+" ") {
				v = 1
			}
		}
		ch <- prometheus.MustNewConstMetric(descAlarm, prometheus.GaugeValue, v, kind)
	}
}

// scraped reads the service's and the outboxes' counts when Prometheus asks.
type scraped struct {
	svc       *table.Service
	platforms []Platform
}

var (
	descTables  = prometheus.NewDesc("kontermatt_tables", "Tables in memory, by status.", []string{"status"}, nil)
	descQueued  = prometheus.NewDesc("kontermatt_outbox_queued", "Messages waiting in a platform's outbox.", []string{"platform"}, nil)
	descSent    = prometheus.NewDesc("kontermatt_outbox_sent_total", "Messages a platform's outbox sent or edited.", []string{"platform"}, nil)
	descDropped = prometheus.NewDesc("kontermatt_outbox_dropped_total", "Messages a platform's outbox dropped (full queue, shutdown).", []string{"platform"}, nil)
	descFailed  = prometheus.NewDesc("kontermatt_outbox_failed_total", "Messages a platform refused or that failed too often.", []string{"platform"}, nil)
	descLimited = prometheus.NewDesc("kontermatt_rate_limited_total", "Rate limits (429) a platform answered.", []string{"platform"}, nil)
	descUp      = prometheus.NewDesc("kontermatt_platform_connected", "1 while a platform is connected (as /healthz says), else 0.", []string{"platform"}, nil)
	descSockets = prometheus.NewDesc("kontermatt_websockets_open", "Web sockets open now (the web table's pages and Mini Apps).", []string{"platform"}, nil)
	descRefused = prometheus.NewDesc("kontermatt_webhook_refusals_total", "Posts a platform's webhook or interactions endpoint refused (no secret, a bad signature, not a POST, a body too large).", []string{"platform"}, nil)
	descUpdate  = prometheus.NewDesc("kontermatt_last_update_timestamp_seconds", "When a platform last brought an update (Unix time); 0: none since the bot started.", []string{"platform"}, nil)
)

func (s *scraped) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descTables, descQueued, descSent, descDropped, descFailed, descLimited, descUp, descSockets, descRefused, descUpdate} {
		ch <- d
	}
}

func (s *scraped) Collect(ch chan<- prometheus.Metric) {
	counts := s.svc.Count()
	for _, st := range []api.Status{api.StatusLobby, api.StatusPlaying, api.StatusOver} {
		ch <- prometheus.MustNewConstMetric(descTables, prometheus.GaugeValue, float64(counts[st]), string(st))
	}
	for _, c := range s.platforms {
		if sr, ok := c.(SocketReporter); ok {
			ch <- prometheus.MustNewConstMetric(descSockets, prometheus.GaugeValue, float64(sr.Sockets()), c.Name())
		}
		if rr, ok := c.(RefusalReporter); ok {
			ch <- prometheus.MustNewConstMetric(descRefused, prometheus.CounterValue, float64(rr.WebhookRefusals()), c.Name())
		}
		if ur, ok := c.(UpdateReporter); ok {
			at := 0.0
			if t := ur.LastUpdate(); !t.IsZero() {
				at = float64(t.UnixMilli()) / 1000
			}
			ch <- prometheus.MustNewConstMetric(descUpdate, prometheus.GaugeValue, at, c.Name())
		}
		if cr, ok := c.(ConnectedReporter); ok {
			up := 0.0
			if cr.Connected() == nil {
				up = 1
			}
			ch <- prometheus.MustNewConstMetric(descUp, prometheus.GaugeValue, up, c.Name())
		}
		r, ok := c.(OutboxReporter)
		if !ok {
			continue
		}
		sent, dropped, failed, limited, queued := r.OutboxStats()
		ch <- prometheus.MustNewConstMetric(descQueued, prometheus.GaugeValue, float64(queued), c.Name())
		ch <- prometheus.MustNewConstMetric(descSent, prometheus.CounterValue, float64(sent), c.Name())
		ch <- prometheus.MustNewConstMetric(descDropped, prometheus.CounterValue, float64(dropped), c.Name())
		ch <- prometheus.MustNewConstMetric(descFailed, prometheus.CounterValue, float64(failed), c.Name())
		ch <- prometheus.MustNewConstMetric(descLimited, prometheus.CounterValue, float64(limited), c.Name())
	}
}

// Handler serves the metrics in Prometheus' text format.
func (m *Metrics) Handler() http.Handler { return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{}) }
