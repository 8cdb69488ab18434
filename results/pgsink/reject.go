package pgsink

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/redis/go-redis/v9"
)

// Rejection is a stream entry that cannot become an observation, kept in
// the rejected table with why instead of being dropped.
type Rejection struct {
	// ID is the entry's stream ID: the row's key.
	ID string
	// Fields are the entry's raw fields as JSON (rawFields).
	Fields []byte
	// Reason says why it is not an observation.
	Reason string
}

// reject is the Rejection of entry m for err (what Decode said).
func reject(m redis.XMessage, err error) Rejection {
	return Rejection{ID: m.ID, Fields: rawFields(m.Values), Reason: text(err.Error())}
}

// rawFields is an entry's fields as a JSON object. A field name or value
// that PostgreSQL's jsonb cannot hold as text (not UTF-8, or a NUL) is
// kept whole in base64: "base64:NAME" for a name, {"base64": "…"} for a
// value.
func rawFields(values map[string]any) []byte {
	out := make(map[string]any, len(values))
	for k, v := range values {
		s := fmt.Sprint(v)
		if !isText(k) {
			k = "base64:" + base64.StdEncoding.EncodeToString([]byte(k))
		}
		if isText(s) {
			out[k] = s
		} else {
			out[k] = map[string]string{"base64": base64.StdEncoding.EncodeToString([]byte(s))}
		}
	}
	b, _ := json.Marshal(out)
	return b
}

func isText(s string) bool { return utf8.ValidString(s) && !strings.ContainsRune(s, 0) }

// text is s as PostgreSQL text: valid UTF-8, no NUL.
func text(s string) string {
	return strings.ToValidUTF8(strings.ReplaceAll(s, "\x00", `\x00`), "\uFFFD")
}

// notItem says why an entry's item field does not decode.
func notItem(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Errorf("item field %q: a JSON %s where %s belongs", te.Field, te.Value, te.Type)
	}
	return fmt.Errorf("item is not JSON: %w", err)
}

// insertRejected adds a batch's rejections; an entry already there (a
// redelivery) adds nothing.
const insertRejected = `INSERT INTO rejected (stream_id, fields, reason)
    SELECT id, f::jsonb, r FROM unnest($1::text[], $2::text[], $3::text[]) AS u(id, f, r)
    ON CONFLICT (stream_id) DO NOTHING`

// rejectedArgs are insertRejected's arguments for rs.
func rejectedArgs(rs []Rejection) (ids, fields, reasons []string) {
	for _, r := range rs {
		ids = append(ids, r.ID)
		fields = append(fields, string(r.Fields))
		reasons = append(reasons, r.Reason)
	}
	return ids, fields, reasons
}
