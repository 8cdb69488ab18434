package pgsink

import (
	"crawlq/internal/mask"

	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// ErrBadURL is a database URL that is not a PostgreSQL URL or connection
// string (its text is not repeated: it may hold a password).
var ErrBadURL = errors.New("not a valid PostgreSQL URL or connection string")

// PermanentError is a PostgreSQL failure that retrying cannot mend: the
// database or the role does not exist, authentication was refused, the
// role may not create the tables, or the schema is newer than this
// crawlq. The sink stops on it.
type PermanentError struct {
	// URL is the database's URL, its password masked.
	URL string
	Err error
}

func (e *PermanentError) Error() string {
	var pg *pgconn.PgError
	if errors.As(e.Err, &pg) {
		return fmt.Sprintf("postgres at %s: %s (SQLSTATE %s): not retried, fix the database URL or the server",
			e.URL, pg.Message, pg.Code)
	}
	return "postgres at " + e.URL + ": " + oneLine(e.Err)
}

func (e *PermanentError) Unwrap() error { return e.Err }

// Permanent says err is one the sink stops on instead of retrying.
func Permanent(err error) bool {
	var p *PermanentError
	return errors.Is(err, ErrBadURL) || errors.As(err, &p)
}

// permanentCodes are the SQLSTATEs retrying cannot mend.
var permanentCodes = []string{
	"3D000", // invalid_catalog_name: the database does not exist
	"28000", // invalid_authorization_specification: no such role, or pg_hba refuses it
	"28P01", // invalid_password
	"42501", // insufficient_privilege: the role may not create the sink's tables
}

// classify names url in err and says whether it is permanent
// (*PermanentError) or not (a one-line error, retried).
func classify(url string, err error) error {
	var pg *pgconn.PgError
	if errors.Is(err, ErrNewerSchema) || errors.As(err, &pg) && slices.Contains(permanentCodes, pg.Code) {
		return &PermanentError{URL: mask.URL(url), Err: err}
	}
	return fmt.Errorf("postgres at %s: %w", mask.URL(url), flat{err})
}

// flat is an error on one line: pgx lists each connection attempt (every
// address, with and without TLS) on a line of its own.
type flat struct{ error }

func (f flat) Error() string { return oneLine(f.error) }
func (f flat) Unwrap() error { return f.error }

// oneLine is err's text on one line, each distinct line once.
func oneLine(err error) string {
	var b strings.Builder
	var seen []string
	for _, l := range strings.Split(err.Error(), "\n") {
		if l = strings.TrimSpace(l); l == "" || slices.Contains(seen, l) {
			continue
		}
		seen = append(seen, l)
		switch s := b.String(); {
		case s == "":
		case strings.HasSuffix(s, ":"):
			b.WriteString(" ")
		default:
			b.WriteString("; ")
		}
		b.WriteString(l)
	}
	return b.String()
}
