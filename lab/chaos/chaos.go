package chaos

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"go.uber.org/zap"

	"crawlq/internal/backoff"
	"crawlq/proxies"
	"crawlq/tasks"
)

// tick is how often the harness reads the progress.
const tick = 250 * time.Millisecond

// Run starts the cluster, enqueues Options.Jobs jobs, fires the faults as
// the jobs finish, waits for every job (or the deadline), then counts.
// Everything it started is stopped and removed before it returns. An error
// means the run itself could not be made; missed goals are in
// Report.Failures.
func Run(ctx context.Context, o Options) (*Report, error) {
	o = o.withDefaults()
	if err := o.validate(); err != nil {
		return nil, err
	}
	if !supported {
		return nil, errors.New("chaos: needs a Unix system (SIGSTOP, SIGCONT)")
	}
	begin := time.Now()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c, err := startCluster(ctx, o)
	if err != nil {
		return nil, err
	}
	defer c.close()
	r := &run{c: c, begin: begin, rep: &Report{}}
	r.rep.Details.SetupS = seconds(time.Since(begin))
	if o.KeepDir {
		r.rep.Details.Dir = c.dir
	}
	if err := r.execute(ctx); err != nil {
		return nil, err
	}
	r.rep.Details.DurationS = seconds(time.Since(begin))
	return r.rep, nil
}

// run is one chaos run in progress.
type run struct {
	c      *cluster
	begin  time.Time
	jobs   []queuedJob
	queues []string
	rep    *Report
	dead   map[string]bool
}

func (r *run) execute(ctx context.Context) error {
	if err := r.c.startWorkers(); err != nil {
		return err
	}
	start := time.Now()
	if err := r.enqueue(ctx); err != nil {
		return err
	}
	faults := newFaultRunner(r.c, start)
	if err := r.crawl(ctx, faults); err != nil {
		return err
	}
	r.rep.Details.Faults = faults.wait()
	r.rep.Details.CrawlS = seconds(time.Since(start))
	if err := backoff.Sleep(ctx, r.c.o.LeaseTTL); err != nil {
		return err
	}
	return r.count(ctx)
}

// enqueue plans the jobs and queues them.
func (r *run) enqueue(ctx context.Context) error {
	plan := planJobs(r.c.tb, r.c.o.Jobs, r.c.o.Seed, r.c.o.NoResultJobs)
	if len(plan) != r.c.o.Jobs {
		return fmt.Errorf("chaos: the testbed catalog gives %d jobs, not %d", len(plan), r.c.o.Jobs)
	}
	enq := &tasks.Enqueuer{Client: r.c.client, Sites: r.c.reg}
	jobs := make([]tasks.Job, len(plan))
	for i, p := range plan {
		jobs[i] = p.job
	}
	ts, err := enq.Build(jobs, func(i int) string { return fmt.Sprintf("chaos job %d", i) })
	if err != nil {
		return err
	}
	if err := r.index(plan); err != nil {
		return err
	}
	b, err := enq.Enqueue(ctx, ts)
	if err != nil {
		return err
	}
	if len(b.Duplicates) > 0 {
		return fmt.Errorf("chaos: %d planned jobs share a task ID", len(b.Duplicates))
	}
	r.rep.Jobs = len(b.Enqueued)
	r.c.log.Info("jobs enqueued", zap.Int("jobs", r.rep.Jobs))
	return nil
}

// index records each planned job's task ID, queue and items.
func (r *run) index(plan []plannedJob) error {
	qs := map[string]bool{}
	for _, p := range plan {
		j, err := p.job.Normalize(r.c.reg)
		if err != nil {
			return err
		}
		s, err := r.c.reg.Get(j.Site)
		if err != nil {
			return err
		}
		r.jobs = append(r.jobs, queuedJob{id: j.TaskID(), queue: s.Queue, items: p.items})
		qs[s.Queue] = true
	}
	for q := range qs {
		r.queues = append(r.queues, q)
	}
	sort.Strings(r.queues)
	return nil
}

// crawl reads the progress every tick, fires the faults and notes workers
// that die on their own, until every job is finished or the deadline.
func (r *run) crawl(ctx context.Context, faults *faultRunner) error {
	deadline := r.begin.Add(r.c.o.Timeout - r.c.o.LeaseTTL - 20*time.Second)
	last := -1
	for time.Now().Before(deadline) {
		if n, ok := r.c.finished(r.queues); ok {
			faults.progress(ctx, float64(n)/float64(r.rep.Jobs))
			if n != last && n%50 == 0 {
				r.c.log.Info("progress", zap.Int("finished", n), zap.Int("jobs", r.rep.Jobs))
			}
			last = n
			if n >= r.rep.Jobs && faults.done() {
				return nil
			}
		}
		r.noteDeaths()
		if err := backoff.Sleep(ctx, tick); err != nil {
			return err
		}
	}
	r.c.log.Warn("deadline passed with jobs unfinished", zap.Int("finished", last), zap.Int("jobs", r.rep.Jobs))
	return nil
}

func (r *run) noteDeaths() {
	if r.dead == nil {
		r.dead = map[string]bool{}
	}
	for _, w := range r.c.workers {
		if msg := w.died(); msg != "" && !r.dead[msg] {
			r.dead[msg] = true
			r.rep.Details.WorkerExits = append(r.rep.Details.WorkerExits, msg)
			r.c.log.Error("worker died", zap.String("worker", w.id), zap.String("exit", msg))
		}
	}
}

// count fills the report: stuck leases while the workers idle, then the
// jobs, the invariants and the results stream after they stopped.
func (r *run) count(ctx context.Context) error {
	d := &r.rep.Details
	if err := r.stuckLeases(ctx); err != nil {
		return err
	}
	completed, err := r.c.tallyJobs(r.jobs, &r.rep.Result, d)
	if err != nil {
		return err
	}
	r.noteDeaths()
	if err := r.c.stopWorkers(); err != nil {
		d.WorkerExits = append(d.WorkerExits, strings.Split(err.Error(), "\n")...)
	}
	d.Modems = r.c.modemReport()
	d.Learned = r.c.learnedLimits(ctx)
	r.checkSites()
	r.scoreBans(ctx)
	counts, total, err := r.itemCounts(ctx)
	if err != nil {
		return err
	}
	d.Items = total
	tallyItems(counts, r.jobs, completed, &r.rep.Result, d)
	if r.c.sink != nil {
		missing, dup := d.MissingItems, r.rep.DuplicateItems
		r.rep.ObservationsMissing, r.rep.ObservationsDuplicated = &missing, &dup
	}
	return nil
}

// itemCounts counts the items per (site, id): in the results stream, or,
// with a sink, in PostgreSQL once the sink drained the stream (it trims
// what it stored).
func (r *run) itemCounts(ctx context.Context) (map[string]int, int, error) {
	if r.c.sink == nil {
		return r.c.streamCounts(ctx)
	}
	if err := r.c.drainSink(ctx); err != nil {
		r.rep.Details.WorkerExits = append(r.rep.Details.WorkerExits, err.Error())
	}
	return r.c.storedCounts(ctx)
}

// stuckLeases counts the broker's live leases (and its bans): with every job finished
// and one lease TTL gone, any left is held by a session that never ended.
func (r *run) stuckLeases(ctx context.Context) error {
	st, err := r.c.pool.Stats(ctx)
	if err != nil {
		return err
	}
	for _, p := range st.Proxies {
		for siteName, s := range p.Sites {
			r.rep.Details.BrokerBans += int(s.Banned)
			if s.State == proxies.StateLeased {
				r.rep.StuckLeases++
				r.rep.Details.StuckHolders = append(r.rep.Details.StuckHolders, fmt.Sprintf("%s %s by %s", siteName, p.ID, s.Holder))
			}
		}
	}
	sort.Strings(r.rep.Details.StuckHolders)
	return nil
}

// maxViolations bounds the violation details reported.
const maxViolations = 10

func (r *run) checkSites() {
	rep := r.c.tb.Check()
	r.rep.I1Violations, r.rep.I2Violations = rep.I1Violations, rep.I2Violations
	d := &r.rep.Details
	d.Requests = rep.Requests
	for _, n := range rep.BansPerIP {
		d.Bans += n
	}
	d.Violations = violationPairs(r.c.tb.Log.Entries(), r.c.tb.MinIntervals(), maxViolations)
}
