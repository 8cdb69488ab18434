package pgsink

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// ErrNewerSchema is a database whose schema a newer crawlq migrated: this
// one does not know its tables and refuses to write.
var ErrNewerSchema = errors.New("database schema is newer than this crawlq")

// migrationLock is the advisory lock two sinks starting at once take, so
// one applies the migrations and the other sees them applied.
const migrationLock = 0x637261776c71 // "crawlq"

type migration struct {
	version int
	name    string
	sql     string
}

// migrations are the embedded files NNNN_name.sql, by version.
func migrations() ([]migration, error) {
	names, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, n := range names {
		base := strings.TrimPrefix(n, "migrations/")
		v, err := strconv.Atoi(strings.SplitN(base, "_", 2)[0])
		if err != nil {
			return nil, fmt.Errorf("migration %s: name must start with its version", base)
		}
		raw, _ := migrationFiles.ReadFile(n)
		out = append(out, migration{version: v, name: base, sql: string(raw)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	return out, nil
}

// SchemaVersion is the newest schema this crawlq knows.
func SchemaVersion() int {
	ms, _ := migrations()
	if len(ms) == 0 {
		return 0
	}
	return ms[len(ms)-1].version
}

// Migrate applies the migrations the database lacks, each in its own
// transaction, and refuses (ErrNewerSchema) a database a newer crawlq
// migrated. It returns the versions it applied.
func Migrate(ctx context.Context, conn *pgx.Conn) ([]int, error) {
	ms, err := migrations()
	if err != nil {
		return nil, err
	}
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", migrationLock); err != nil {
		return nil, fmt.Errorf("lock the schema: %w", err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", migrationLock) //nolint:errcheck
	have, err := currentVersion(ctx, conn)
	if err != nil {
		return nil, err
	}
	if known := SchemaVersion(); have > known {
		return nil, fmt.Errorf("%w: the database is at version %d, this crawlq knows up to %d: upgrade crawlq",
			ErrNewerSchema, have, known)
	}
	var applied []int
	for _, m := range ms {
		if m.version <= have {
			continue
		}
		if err := apply(ctx, conn, m); err != nil {
			return applied, err
		}
		applied = append(applied, m.version)
	}
	return applied, nil
}

// versionTable records the applied migrations.
const versionTable = "crawlq_schema_migrations"

func currentVersion(ctx context.Context, conn *pgx.Conn) (int, error) {
	_, err := conn.Exec(ctx, "CREATE TABLE IF NOT EXISTS "+versionTable+
		" (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())")
	if err != nil {
		return 0, fmt.Errorf("create %s: %w", versionTable, err)
	}
	var v int
	if err := conn.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM "+versionTable).Scan(&v); err != nil {
		return 0, fmt.Errorf("read the schema version: %w", err)
	}
	return v, nil
}

func apply(ctx context.Context, conn *pgx.Conn, m migration) error {
	err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, m.sql); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, "INSERT INTO "+versionTable+" (version, name) VALUES ($1, $2)", m.version, m.name)
		return err
	})
	if err != nil {
		return fmt.Errorf("migration %s: %w", m.name, err)
	}
	return nil
}
