package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"

	"github.com/jackc/pgx/v5"

	"github.com/kmirror/kmirror/kmtype"
)

// declareLock is the advisory lock key that serialises declarations: workers starting together declare one
// after the other, each seeing what the previous one wrote.
const declareLock int64 = 0x6b6d6972726f7201 // "kmirror" + 1

// Declared is a connector a file declares.
type Declared struct {
	Name   string
	Config map[string]string
	// Offsets are stored with the connector when the declaration creates it, in the same transaction, so that
	// its tasks start from them: the offsets of the Java MM2 it takes over from. Ignored for one that exists.
	Offsets []kmtype.Offset
	// TakenOver, kept with the connector when the declaration creates it, says what it takes over from Java
	// MM2 (its At is set to the creation time). Ignored for one that exists.
	TakenOver *Takeover
}

// DeclareResult says what a declaration changed, by connector name.
type DeclareResult struct {
	Created, Updated, Deleted, Unchanged []string
	// Skipped are declared names taken by connectors created through REST, which a file never changes.
	Skipped []string
}

// Declare makes the connectors declared by the file by match want, in one transaction under an advisory lock:
// a missing one is created (STARTED), a changed config is replaced (keeping the target state), and a connector
// declared by this file that want lacks is deleted if owned says the declaration covers it (a worker serving
// some targets only must not delete the others' connectors). A connector declared by another file is taken
// over: the last declaration wins. Connectors created through REST are left alone, and listed as Skipped when
// want names them.
func (s *Store) Declare(ctx context.Context, by string, want []Declared, owned func(Connector) bool) (DeclareResult, error) {
	var res DeclareResult
	err := s.inTxRetried(ctx, func(tx pgx.Tx) error {
		res = DeclareResult{}
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", declareLock); err != nil {
			return fmt.Errorf("lock declarations: %w", err)
		}
		rows, err := tx.Query(ctx, "SELECT "+connectorColumns+" FROM connectors ORDER BY name FOR UPDATE")
		if err != nil {
			return fmt.Errorf("read connectors: %w", err)
		}
		existing, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Connector, error) { return s.scanConnector(r) })
		if err != nil {
			return fmt.Errorf("read connectors: %w", err)
		}
		byName := make(map[string]Connector, len(existing))
		for _, c := range existing {
			byName[c.Name] = c
		}
		wanted := make(map[string]bool, len(want))
		for _, d := range want {
			wanted[d.Name] = true
			cur, ok := byName[d.Name]
			switch {
			case !ok:
				if _, err := s.insertConnector(ctx, tx, d.Name, d.Config, TargetStarted); err != nil {
					return fmt.Errorf("declare connector %q: %w", d.Name, err)
				}
				if len(d.Offsets) > 0 {
					keys, parts, offs, err := encodeOffsets(d.Offsets)
					if err != nil {
						return fmt.Errorf("declare connector %q: %w", d.Name, err)
					}
					if err := alterOffsets(ctx, tx, d.Name, keys, parts, offs, false); err != nil {
						return fmt.Errorf("declare connector %q with offsets: %w", d.Name, err)
					}
				}
				if d.TakenOver != nil {
					took, err := json.Marshal(d.TakenOver)
					if err != nil {
						return fmt.Errorf("declare connector %q: %w", d.Name, err)
					}
					if _, err := tx.Exec(ctx, "UPDATE connectors SET taken_over = $2 WHERE name = $1", d.Name, string(took)); err != nil {
						return fmt.Errorf("declare connector %q: %w", d.Name, err)
					}
				}
				res.Created = append(res.Created, d.Name)
			case cur.DeclaredBy == "":
				res.Skipped = append(res.Skipped, d.Name)
				continue
			case maps.Equal(cur.Config, d.Config) && cur.DeclaredBy == by:
				res.Unchanged = append(res.Unchanged, d.Name)
				continue
			default:
				if _, err := s.updateConnector(ctx, tx, d.Name, func(c *Connector) error {
					c.Config = d.Config
					return nil
				}); err != nil {
					return err
				}
				res.Updated = append(res.Updated, d.Name)
			}
			if _, err := tx.Exec(ctx, "UPDATE connectors SET declared_by = $2 WHERE name = $1", d.Name, by); err != nil {
				return fmt.Errorf("declare connector %q: %w", d.Name, err)
			}
		}
		for _, c := range existing {
			if c.DeclaredBy != by || wanted[c.Name] || !owned(c) {
				continue
			}
			if err := deleteConnector(ctx, tx, c.Name); err != nil && !errors.Is(err, ErrNotFound) {
				return err
			}
			res.Deleted = append(res.Deleted, c.Name)
		}
		return nil
	})
	if err != nil {
		return DeclareResult{}, err
	}
	return res, nil
}
