package tasks

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"crawlq/results"
	"crawlq/sessions"
)

// ErrUnknownShape means an answer is not of the site's own shape (a wall,
// a redirect stub, an unknown JSON): the parser recognized no listing and
// no card in it. Such an answer is never stored as an empty result,
// however many proxies agree on it; the job fails with the reason, and a
// copy of the answer is kept (KeptAnswer) for the user to see.
var ErrUnknownShape = errors.New("answer not of the site's own shape")

// AnswerTTL is how long the copy of an unknown answer is kept.
const AnswerTTL = 7 * 24 * time.Hour

// MaxKeptAnswer caps the bytes of a kept answer's body.
const MaxKeptAnswer = 256 << 10

// answerPrefix keys a task's kept answer (a hash; see KeepAnswer).
const answerPrefix = results.JobsTag + "answer:"

// AnswerKey is the Redis key of the answer task last failed on.
func AnswerKey(task string) string { return answerPrefix + task }

// KeptAnswer is a copy of an answer a job failed on.
type KeptAnswer struct {
	URL    string
	Status int
	// Reason is why the answer was refused (the parser's error).
	Reason string
	At     time.Time
	// Body is the answer's body, at most MaxKeptAnswer bytes.
	Body []byte
}

// KeepAnswer stores a as task's kept answer for AnswerTTL, replacing the
// one before.
func KeepAnswer(ctx context.Context, rdb redis.UniversalClient, task string, a KeptAnswer) error {
	body := a.Body[:min(len(a.Body), MaxKeptAnswer)]
	key := AnswerKey(task)
	_, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Del(ctx, key)
		p.HSet(ctx, key, "url", a.URL, "status", a.Status, "reason", a.Reason,
			"at", a.At.UTC().Format(time.RFC3339Nano), "body", body)
		p.Expire(ctx, key, AnswerTTL)
		return nil
	})
	if err != nil {
		return fmt.Errorf("keep answer of task %s: %w", task, err)
	}
	return nil
}

// LoadAnswer reads task's kept answer; redis.Nil when there is none.
func LoadAnswer(ctx context.Context, rdb redis.UniversalClient, task string) (KeptAnswer, error) {
	m, err := rdb.HGetAll(ctx, AnswerKey(task)).Result()
	if err != nil {
		return KeptAnswer{}, fmt.Errorf("load answer of task %s: %w", task, err)
	}
	if len(m) == 0 {
		return KeptAnswer{}, redis.Nil
	}
	status, _ := strconv.Atoi(m["status"])
	at, _ := time.Parse(time.RFC3339Nano, m["at"])
	return KeptAnswer{URL: m["url"], Status: status, Reason: m["reason"], At: at, Body: []byte(m["body"])}, nil
}

// unknownShape keeps a copy of the step's answer, which the parser did not
// recognize (cause), and returns the job's error naming the reason and
// where the copy is. agreed says a second proxy gave the same answer:
// retrying cannot help, the job fails at once.
func (r *run) unknownShape(ctx context.Context, step sessions.Step, cause error, agreed bool) error {
	a := KeptAnswer{Reason: cause.Error(), At: r.h.cfg.Now()}
	if resp := step.Response; resp != nil {
		a.URL, a.Status, a.Body = resp.FinalURL, resp.Status, resp.Body
	}
	where := "not kept"
	if r.h.cfg.Sink != nil {
		if err := KeepAnswer(ctx, r.h.cfg.Sink.Redis(), r.task, a); err == nil {
			where = "kept at " + AnswerKey(r.task)
			r.sum.Answer = AnswerKey(r.task)
		}
	}
	err := fmt.Errorf("%w: %w (answer %s)", ErrUnknownShape, cause, where)
	if agreed {
		return permanent(err)
	}
	return retryAfter(5*time.Second, err) // perhaps one proxy's unseen block page
}
