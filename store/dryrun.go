package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/jackc/pgx/v5"
)

// A dry run on PostgreSQL works on a copy of the schema, a new schema
// beside it named crmimport_dry_run_ and twelve hex digits, dropped when
// the dry run ends (throwawayPostgres). A dry run killed (SIGKILL, its
// machine lost) left it behind: a copy of the customer's data that
// nothing mentioned (issue 23 item 22). So each copy is owned:
//
//   - its dry run holds an advisory lock on the copy's name from before it
//     makes it until it has dropped it, in a session of its own; the
//     server lets go of the lock when that session ends, however it ends;
//   - the copy says whose it is: the schema it copies, when it was made
//     and by which process (a comment on the schema);
//   - LeftCopies lists the copies of a schema that no session holds the
//     lock of (`runs` and `doctor` name them), and the next dry run of the
//     schema removes them, each under its lock: a copy whose lock another
//     session holds is a live dry run's, and is left alone.
//
// A copy made by a crmimport of before says nothing of itself and has no
// owner to ask: it is listed, and removed, with those of every schema. A
// dry run on a file works on a copy in the system's temporary folder
// (Throwaway), which none of this covers.

// dryRunPrefix begins the name of every dry run's copy.
const dryRunPrefix = "crmimport_dry_run_"

// copyLockClass is the first key of a copy's lock ("crmc" in ASCII); the
// second is hashtext(copy), as for a schema's write lock.
const copyLockClass = 0x63726d63

// DryRunCopy is a copy that a dry run on PostgreSQL made of a schema and
// left behind (LeftCopies).
type DryRunCopy struct {
	Schema string `json:"schema"`
	Of     string `json:"of"`   // the schema it copies; "" when the copy does not say
	Made   string `json:"made"` // when it was made (RFC 3339); "" when it does not say
	By     string `json:"by"`   // by which process: "pid N on HOST"; "" when it does not say
}

// Drop is the statement that removes the copy, for a user to run.
func (c DryRunCopy) Drop() string {
	return "DROP SCHEMA " + pgx.Identifier{c.Schema}.Sanitize() + " CASCADE"
}

// String says what the copy is, in a sentence's words.
func (c DryRunCopy) String() string {
	if c.Of == "" {
		return fmt.Sprintf("schema %s, a copy made by a dry run of a crmimport older than this one, which ended without dropping it", c.Schema)
	}
	return fmt.Sprintf("schema %s, a copy of schema %s made by a dry run on %s (%s), which ended without dropping it (killed)",
		c.Schema, c.Of, c.Made, c.By)
}

// leftCopiesSQL: the dry runs' copies in the database whose lock no
// session holds.
const leftCopiesSQL = `
SELECT n.nspname, coalesce(obj_description(n.oid, 'pg_namespace'), '')
FROM pg_namespace n
WHERE n.nspname LIKE 'crmimport\_dry\_run\_%'
  AND NOT EXISTS (SELECT 1 FROM pg_locks l
    WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
      AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
      AND l.classid = (?::int4)::oid AND l.objid = hashtext(n.nspname)::oid)
ORDER BY n.nspname`

// LeftCopies lists the copies of db's schema that dry runs made and left
// behind, and those that say nothing of themselves: a dry run killed, or
// whose copy could not be dropped. It only reads. A SQLite file has none
// here.
func LeftCopies(ctx context.Context, db *sql.DB) ([]DryRunCopy, error) {
	return DialectOf(db).leftCopies(ctx, db)
}

func (d Dialect) leftCopies(ctx context.Context, db *sql.DB) ([]DryRunCopy, error) {
	switch d {
	case SQLite:
		return nil, nil // a file's dry run works on a copy in a temporary folder (Throwaway)
	case Postgres:
		return pgLeftCopies(ctx, db)
	default:
		panic(d.Untaught("store.LeftCopies"))
	}
}

// pgLeftCopies is LeftCopies on the server.
func pgLeftCopies(ctx context.Context, db *sql.DB) ([]DryRunCopy, error) {
	var schema sql.NullString
	if err := db.QueryRowContext(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		return nil, fmt.Errorf("dry runs' copies: %w", err)
	}
	return listLeftCopies(ctx, db, schema.String)
}

// rowsQueryer is a *sql.DB or a *sql.Conn.
type rowsQueryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// listLeftCopies lists the copies of schema, and those that say nothing
// of themselves, whose lock no session holds.
func listLeftCopies(ctx context.Context, q rowsQueryer, schema string) ([]DryRunCopy, error) {
	rows, err := q.QueryContext(ctx, leftCopiesSQL, int64(copyLockClass))
	if err != nil {
		return nil, fmt.Errorf("dry runs' copies: %w", err)
	}
	defer rows.Close()
	var out []DryRunCopy
	for rows.Next() {
		var c DryRunCopy
		var name, comment string
		if err := rows.Scan(&name, &comment); err != nil {
			return nil, err
		}
		if json.Unmarshal([]byte(comment), &c) != nil {
			// No comment (a copy of before), or one that is not a
			// dry run's: the copy says nothing of itself.
			c = DryRunCopy{}
		}
		c.Schema = name
		if c.Of == "" || c.Of == schema {
			out = append(out, c)
		}
	}
	return out, rows.Err()
}

// copyOwner is the session that holds a dry run's copy's lock.
type copyOwner struct {
	db   *sql.DB
	conn *sql.Conn
	name string
}

const (
	takeCopyLockSQL    = `SELECT pg_advisory_lock(?, hashtext(?))`
	tryCopyLockSQL     = `SELECT pg_try_advisory_lock(?, hashtext(?))`
	releaseCopyLockSQL = `SELECT pg_advisory_unlock(?, hashtext(?))`
	// commentSQL is the statement that puts a comment on a schema, both
	// quoted by the server.
	commentSQL = `SELECT format('COMMENT ON SCHEMA %I IS %L', ?::text, ?::text)`
)

// ownCopy takes the lock of the copy name in a session of its own, removes
// the copies of the address's schema that no live dry run owns (telling
// each through the context's notice: WithNotice), and makes the copy's
// schema, saying whose it is. The session holds the lock until release.
func (a pgAddress) ownCopy(ctx context.Context, name string) (*copyOwner, error) {
	db, err := a.connect(ctx, a.url.String(), 1)
	if err != nil {
		return nil, err
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, err
	}
	o := &copyOwner{db: db, conn: conn, name: name}
	if _, err := conn.ExecContext(ctx, takeCopyLockSQL, int64(copyLockClass), name); err != nil {
		return nil, errors.Join(fmt.Errorf("own the copy %s: %w", name, err), o.release())
	}
	if err := o.removeLeft(ctx, a.schema); err != nil {
		return nil, errors.Join(err, o.release())
	}
	host, err := os.Hostname()
	if err != nil {
		host = "an unknown host"
	}
	about, err := json.Marshal(struct {
		Of   string `json:"of"`
		Made string `json:"made"`
		By   string `json:"by"`
	}{a.schema, time.Now().UTC().Format(time.RFC3339), fmt.Sprintf("pid %d on %s", os.Getpid(), host)})
	if err != nil {
		return nil, errors.Join(err, o.release())
	}
	var comment string
	if err := conn.QueryRowContext(ctx, commentSQL, name, string(about)).Scan(&comment); err != nil {
		return nil, errors.Join(fmt.Errorf("make the copy %s: %w", name, err), o.release())
	}
	// The schema and what it says of itself, in one transaction.
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("make the copy %s: %w", name, err), o.release())
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "CREATE SCHEMA "+pgx.Identifier{name}.Sanitize()); err != nil {
		return nil, errors.Join(fmt.Errorf("make the copy %s: %w", name, err), o.release())
	}
	if _, err := tx.ExecContext(ctx, comment); err != nil {
		return nil, errors.Join(fmt.Errorf("make the copy %s: %w", name, err), o.release())
	}
	if err := tx.Commit(); err != nil {
		return nil, errors.Join(fmt.Errorf("make the copy %s: %w", name, err), o.release())
	}
	return o, nil
}

// removeLeft removes the copies of schema that no live dry run owns, each
// under its lock, telling each (WithNotice). A copy that cannot be removed
// is told too, with the statement that removes it: the dry run goes on.
func (o *copyOwner) removeLeft(ctx context.Context, schema string) error {
	left, err := listLeftCopies(ctx, o.conn, schema)
	if err != nil {
		return err
	}
	notice := noticeOf(ctx)
	if notice == nil {
		notice = func(string) {}
	}
	for _, c := range left {
		var mine bool
		if err := o.conn.QueryRowContext(ctx, tryCopyLockSQL, int64(copyLockClass), c.Schema).Scan(&mine); err != nil {
			return fmt.Errorf("dry runs' copies: %w", err)
		}
		if !mine {
			continue // a dry run owns it since it was listed
		}
		_, err := o.conn.ExecContext(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{c.Schema}.Sanitize()+" CASCADE")
		var released bool
		if uerr := o.conn.QueryRowContext(ctx, releaseCopyLockSQL, int64(copyLockClass), c.Schema).Scan(&released); uerr != nil {
			return fmt.Errorf("dry runs' copies: %w", uerr)
		}
		if err != nil {
			notice(fmt.Sprintf("dry run: could not remove %s (remove it by hand: %s): %v", c, c.Drop(), err))
			continue
		}
		notice(fmt.Sprintf("dry run: removed %s", c))
	}
	return nil
}

// drop drops the copy's schema, when the copy could not be made whole.
func (o *copyOwner) drop(ctx context.Context) error {
	_, err := o.conn.ExecContext(context.WithoutCancel(ctx), "DROP SCHEMA IF EXISTS "+pgx.Identifier{o.name}.Sanitize()+" CASCADE")
	if err != nil {
		return fmt.Errorf("drop the copy's schema %s (drop it by hand: DROP SCHEMA %s CASCADE): %w", o.name, pgx.Identifier{o.name}.Sanitize(), err)
	}
	return nil
}

// release lets go of the copy's lock: its session ends.
func (o *copyOwner) release() error {
	return errors.Join(o.conn.Close(), o.db.Close())
}
