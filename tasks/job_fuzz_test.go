package tasks_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"crawlq/tasks"
	"crawlq/tasks/site"
)

// jobPayloadSeeds are task payloads of every site and kind, pasted URLs,
// generic page jobs and broken ones.
var jobPayloadSeeds = []string{
	`{"site":"wildberries","kind":"search","query":"кофе в зернах","pages":3,"follow":true}`,
	`{"site":"wildberries","kind":"category","category":"beauty3?cat=9000","pages":2}`,
	`{"site":"wildberries","kind":"product","id":"164419278"}`,
	`{"site":"wildberries","kind":"product","url":"https://www.wildberries.ru/catalog/164419278/detail.aspx?targetUrl=SG"}`,
	`{"site":"ozon","kind":"search","query":"корм для кошек","pages":2,"follow":true,"class":"residential"}`,
	`{"site":"ozon","kind":"category","category":"korm-dlya-koshek-12348"}`,
	`{"site":"ozon","kind":"product","url":"https://www.ozon.ru/product/kofe-v-zernah-1-kg-123456789/"}`,
	`{"site":"avito","kind":"search","location":"moskva","query":"iphone 13","pages":5}`,
	`{"site":"avito","kind":"category","location":"krasnodar","category":"kvartiry/sdam"}`,
	`{"site":"avito","kind":"item","url":"https://www.avito.ru/moskva/telefony/iphone_13_128gb_3456789012"}`,
	`{"site":"avito","kind":"item","id":"3456789012","class":"mobile"}`,
	`{"kind":"fetch","fetch":{"url":"http://127.0.0.1:8081/p/1","expect":["h1"],"markers":["captcha"],"item":".card","fields":{"title":"h1","price":".price","url":"a@href"}}}`,
	`{"kind":"fetch","fetch":{"url":"ftp://example.com/","fields":{"title":"h1"}}}`,
	`{"kind":"fetch","fetch":{"url":"http://h/","fields":{"title":"h1[","nope":"p"}}}`,
	`{"site":"wildberries","kind":"search","query":"x","pages":101}`,
	`{"site":"wildberries","kind":"search","query":"x","pages":-1}`,
	`{"site":"nosuch","kind":"search","query":"x"}`,
	`{"site":"ozon","kind":"item","id":"1"}`,
	`{"site":"avito","kind":"search","query":"x","class":"satellite"}`,
	`{"site":"wildberries","kind":"search","query":"x","extra":true}`,
	`{"site":"wildberries","kind":"search","query":"x"} trailing`,
	`{bad`,
	`null`,
	`[]`,
	``,
}

// FuzzDecodeJob: a payload decodes and normalizes or fails with a
// *tasks.JobError (wrapping ErrBadJob); a normalized job is a fixed point:
// encoding it, decoding and normalizing again gives the same job and task
// ID, and NewTask accepts it with that payload.
func FuzzDecodeJob(f *testing.F) {
	for _, s := range jobPayloadSeeds {
		f.Add([]byte(s))
	}
	reg := site.Default()
	f.Fuzz(func(t *testing.T, payload []byte) {
		j, err := tasks.DecodeJob(payload)
		if err == nil {
			j, err = j.Normalize(reg)
		}
		if err != nil {
			checkJobError(t, payload, err)
			return
		}
		enc, err := json.Marshal(j)
		if err != nil {
			t.Fatalf("marshal normalized job %+v: %v", j, err)
		}
		again, err := tasks.DecodeJob(enc)
		if err == nil {
			again, err = again.Normalize(reg)
		}
		if err != nil {
			t.Fatalf("payload %q normalized to %s, which fails: %v", payload, enc, err)
		}
		if d := cmp.Diff(j, again); d != "" {
			t.Fatalf("normalizing %s again changed it (-first +second):\n%s", enc, d)
		}
		if j.TaskID() != again.TaskID() {
			t.Fatalf("task ID changed: %s vs %s", j.TaskID(), again.TaskID())
		}
		task, err := tasks.NewTask(reg, j)
		if err != nil || task.Type() != j.Type() {
			t.Fatalf("NewTask(%s): %v, %v; want type %s", enc, task, err, j.Type())
		}
		queued, err := tasks.DecodeJob(task.Payload())
		if err != nil || (j.Run == "" && queued.Run == "") {
			t.Fatalf("NewTask(%s) payload %s: %v; want the job with a run ID drawn", enc, task.Payload(), err)
		}
		if j.Run == "" {
			queued.Run = ""
		}
		if d := cmp.Diff(j, queued); d != "" {
			t.Fatalf("NewTask(%s) queued another job (-normalized +queued):\n%s", enc, d)
		}
	})
}

func checkJobError(t *testing.T, payload []byte, err error) {
	t.Helper()
	var je *tasks.JobError
	if !errors.As(err, &je) || !errors.Is(err, tasks.ErrBadJob) || je.Field == "" {
		t.Fatalf("payload %q: error %v (%T) is not a *tasks.JobError naming a field", payload, err, err)
	}
}
