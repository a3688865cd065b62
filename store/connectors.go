package store

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/jackc/pgx/v5"
)

// TargetState is the state a user asked a connector to be in.
type TargetState string

// The target states of Connect (TargetState.java).
const (
	TargetStarted TargetState = "STARTED"
	TargetPaused  TargetState = "PAUSED"
	TargetStopped TargetState = "STOPPED"
)

// Connector is the desired state of one connector.
type Connector struct {
	Name        string
	Config      map[string]string // exactly as submitted, plus name
	TargetState TargetState
	Version     int64 // bumped by every config or target-state change
	// DeclaredBy names the mm2.properties the connector was declared from, "" for one created through REST.
	DeclaredBy string
	// TakenOver says what the connector took over from Java MM2 when a declaration created it; nil for most.
	TakenOver *Takeover
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Takeover is what a declared connector took over from the Java MM2 it replaces, at At (when it was created):
// a source connector the source offsets of Partitions partitions, read from Topic (mm2-offsets.<source>.internal);
// a checkpoint connector the checkpoints of Groups groups (Partitions group partitions) on Topic, its
// checkpoints topic, from which it continues.
type Takeover struct {
	Topic      string    `json:"topic"`
	Partitions int       `json:"partitions"`
	Groups     int       `json:"groups,omitempty"`
	At         time.Time `json:"-"`
}

const connectorColumns = "name, config, target_state, version, created_at, updated_at, coalesce(declared_by, ''), taken_over"

// scanConnector reads a connector row, its secrets decrypted.
func (s *Store) scanConnector(row pgx.Row) (Connector, error) {
	var c Connector
	if err := row.Scan(&c.Name, &c.Config, &c.TargetState, &c.Version, &c.CreatedAt, &c.UpdatedAt, &c.DeclaredBy, &c.TakenOver); err != nil {
		return c, err
	}
	if c.TakenOver != nil {
		c.TakenOver.At = c.CreatedAt
	}
	var err error
	c.Config, err = s.open(c.Config)
	return c, err
}

// ListConnectorNames returns the names of all connectors, sorted.
func (s *Store) ListConnectorNames(ctx context.Context) ([]string, error) {
	rows, err := s.pool.Query(ctx, "SELECT name FROM connectors ORDER BY name")
	if err != nil {
		return nil, fmt.Errorf("list connectors: %w", err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("list connectors: %w", err)
	}
	return names, nil
}

// ListConnectors returns every connector, sorted by name.
func (s *Store) ListConnectors(ctx context.Context) ([]Connector, error) {
	rows, err := s.pool.Query(ctx, "SELECT "+connectorColumns+" FROM connectors ORDER BY name")
	if err != nil {
		return nil, fmt.Errorf("list connectors: %w", err)
	}
	cs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Connector, error) { return s.scanConnector(r) })
	if err != nil {
		return nil, fmt.Errorf("list connectors: %w", err)
	}
	return cs, nil
}

// GetConnector returns the named connector or ErrNotFound.
func (s *Store) GetConnector(ctx context.Context, name string) (Connector, error) {
	c, err := s.scanConnector(s.pool.QueryRow(ctx, "SELECT "+connectorColumns+" FROM connectors WHERE name = $1", name))
	if errors.Is(err, pgx.ErrNoRows) {
		return Connector{}, fmt.Errorf("get connector %q: %w", name, ErrNotFound)
	}
	if err != nil {
		return Connector{}, fmt.Errorf("get connector %q: %w", name, err)
	}
	return c, nil
}

// CreateConnector stores a new connector, or returns ErrAlreadyExists.
func (s *Store) CreateConnector(ctx context.Context, name string, config map[string]string, state TargetState) (Connector, error) {
	var c Connector
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		c, err = s.insertConnector(ctx, tx, name, config, state)
		return err
	})
	if err != nil {
		return Connector{}, fmt.Errorf("create connector %q: %w", name, err)
	}
	return c, nil
}

func (s *Store) insertConnector(ctx context.Context, tx pgx.Tx, name string, config map[string]string, state TargetState) (Connector, error) {
	sealed, err := s.seal(config)
	if err != nil {
		return Connector{}, err
	}
	c, err := s.scanConnector(tx.QueryRow(ctx, `
		INSERT INTO connectors (name, config, target_state) VALUES ($1, $2, $3)
		ON CONFLICT (name) DO NOTHING
		RETURNING `+connectorColumns, name, sealed, state))
	if errors.Is(err, pgx.ErrNoRows) {
		return Connector{}, ErrAlreadyExists
	}
	if err != nil {
		return Connector{}, err
	}
	if err := s.history(ctx, tx, name, "created", config, state); err != nil {
		return Connector{}, err
	}
	return c, notify(ctx, tx, "connector")
}

// PutConnector creates the connector with target state STARTED, or replaces the config of an existing one
// (keeping its target state). created tells which happened. A declared connector is refused with a
// *DeclaredError.
func (s *Store) PutConnector(ctx context.Context, name string, config map[string]string) (c Connector, created bool, err error) {
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		c, err = s.updateConnector(ctx, tx, name, func(cur *Connector) error {
			if cur.DeclaredBy != "" {
				return &DeclaredError{Name: name, By: cur.DeclaredBy}
			}
			cur.Config = config
			return nil
		})
		if errors.Is(err, ErrNotFound) {
			created = true
			c, err = s.insertConnector(ctx, tx, name, config, TargetStarted)
		}
		return err
	})
	if err != nil {
		return Connector{}, false, fmt.Errorf("put connector %q: %w", name, err)
	}
	return c, created, nil
}

// UpdateConnector locks the connector, lets change modify it and stores the result, all in one transaction. If
// change returns an error nothing is written and that error is returned as is.
func (s *Store) UpdateConnector(ctx context.Context, name string, change func(c *Connector) error) (Connector, error) {
	var c Connector
	err := s.inTxRetried(ctx, func(tx pgx.Tx) error {
		var err error
		c, err = s.updateConnector(ctx, tx, name, change)
		return err
	})
	return c, err
}

func (s *Store) updateConnector(ctx context.Context, tx pgx.Tx, name string, change func(c *Connector) error) (Connector, error) {
	cur, err := s.scanConnector(tx.QueryRow(ctx, "SELECT "+connectorColumns+" FROM connectors WHERE name = $1 FOR UPDATE", name))
	if errors.Is(err, pgx.ErrNoRows) {
		return Connector{}, fmt.Errorf("update connector %q: %w", name, ErrNotFound)
	}
	if err != nil {
		return Connector{}, fmt.Errorf("update connector %q: %w", name, err)
	}
	next := cur
	next.Config = maps.Clone(cur.Config)
	if err := change(&next); err != nil {
		return Connector{}, err
	}
	configChanged := !maps.Equal(cur.Config, next.Config)
	stateChanged := cur.TargetState != next.TargetState
	if !configChanged && !stateChanged {
		return cur, nil
	}
	sealed, err := s.seal(next.Config)
	if err != nil {
		return Connector{}, err
	}
	updated, err := s.scanConnector(tx.QueryRow(ctx, `
		UPDATE connectors SET config = $2, target_state = $3, version = version + 1, updated_at = now()
		WHERE name = $1 RETURNING `+connectorColumns, name, sealed, next.TargetState))
	if err != nil {
		return Connector{}, fmt.Errorf("update connector %q: %w", name, err)
	}
	if configChanged {
		if err := s.history(ctx, tx, name, "config", next.Config, next.TargetState); err != nil {
			return Connector{}, err
		}
	}
	if stateChanged {
		if err := s.history(ctx, tx, name, "target_state", nil, next.TargetState); err != nil {
			return Connector{}, err
		}
	}
	return updated, notify(ctx, tx, "connector")
}

// SetTargetState changes the connector's target state; ErrNotFound if it does not exist.
func (s *Store) SetTargetState(ctx context.Context, name string, state TargetState) error {
	_, err := s.UpdateConnector(ctx, name, func(c *Connector) error {
		c.TargetState = state
		return nil
	})
	return err
}

// DeleteConnector removes the connector with its task configs, assignments, statuses, topic tracking and config
// history. Its source offsets stay, as in Connect. ErrNotFound if it does not exist, a *DeclaredError if a file
// declares it.
func (s *Store) DeleteConnector(ctx context.Context, name string) error {
	return s.inTxRetried(ctx, func(tx pgx.Tx) error {
		var by *string
		err := tx.QueryRow(ctx, "SELECT declared_by FROM connectors WHERE name = $1 FOR UPDATE", name).Scan(&by)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("delete connector %q: %w", name, ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("delete connector %q: %w", name, err)
		}
		if by != nil {
			return &DeclaredError{Name: name, By: *by}
		}
		return deleteConnector(ctx, tx, name)
	})
}

func deleteConnector(ctx context.Context, tx pgx.Tx, name string) error {
	tag, err := tx.Exec(ctx, "DELETE FROM connectors WHERE name = $1", name)
	if err != nil {
		return fmt.Errorf("delete connector %q: %w", name, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("delete connector %q: %w", name, ErrNotFound)
	}
	// Its history goes with it: the configs it holds carry the connector's secrets.
	if _, err := tx.Exec(ctx, "DELETE FROM connector_history WHERE connector_name = $1", name); err != nil {
		return fmt.Errorf("delete history of %q: %w", name, err)
	}
	return notify(ctx, tx, "connector")
}

// HistoryEntry is one recorded change of a connector.
type HistoryEntry struct {
	ID          int64
	Event       string
	Config      map[string]string
	TargetState TargetState
	At          time.Time
}

// ConnectorHistory returns the recorded changes of the named connector, oldest first: the last
// OpenOptions.HistoryKeep of them (none once it is deleted).
func (s *Store) ConnectorHistory(ctx context.Context, name string) ([]HistoryEntry, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT id, event, coalesce(config, '{}'::jsonb), coalesce(target_state, ''), at
		FROM connector_history WHERE connector_name = $1 ORDER BY id`, name)
	if err != nil {
		return nil, fmt.Errorf("read history of %q: %w", name, err)
	}
	hs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (HistoryEntry, error) {
		var h HistoryEntry
		if err := r.Scan(&h.ID, &h.Event, &h.Config, &h.TargetState, &h.At); err != nil {
			return h, err
		}
		var err error
		h.Config, err = s.open(h.Config)
		return h, err
	})
	if err != nil {
		return nil, fmt.Errorf("read history of %q: %w", name, err)
	}
	return hs, nil
}

func (s *Store) history(ctx context.Context, tx pgx.Tx, name, event string, config map[string]string, state TargetState) error {
	var st *string
	if state != "" {
		v := string(state)
		st = &v
	}
	sealed, err := s.seal(config)
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, "INSERT INTO connector_history (connector_name, event, config, target_state) VALUES ($1, $2, $3, $4)",
		name, event, sealed, st)
	if err != nil {
		return fmt.Errorf("record history: %w", err)
	}
	_, err = tx.Exec(ctx, `
		DELETE FROM connector_history WHERE connector_name = $1 AND id <= (
			SELECT id FROM connector_history WHERE connector_name = $1 ORDER BY id DESC OFFSET $2 LIMIT 1)`, name, s.historyKeep)
	if err != nil {
		return fmt.Errorf("trim history: %w", err)
	}
	return nil
}
