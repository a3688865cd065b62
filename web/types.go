package web

import (
	"encoding/json"
	"math"
	"strconv"
	"time"
)

// The REST API's JSON shapes, as far as the dashboard reads them. They are declared here, not imported, so the
// dashboard depends on the wire format only.

type unitState struct {
	State    string `json:"state"`
	WorkerID string `json:"worker_id"`
	Trace    string `json:"trace"`
}

type taskState struct {
	ID int `json:"id"`
	unitState
}

type connectorStatus struct {
	Name      string      `json:"name"`
	Connector unitState   `json:"connector"`
	Tasks     []taskState `json:"tasks"`
	Type      string      `json:"type"`
}

type connectorInfo struct {
	Name       string            `json:"name"`
	Config     map[string]string `json:"config"`
	Type       string            `json:"type"`
	DeclaredBy string            `json:"declared_by"`
	TakenOver  *takenOver        `json:"taken_over"`
}

// takenOver is what a connector declared from an mm2.properties took over from Java MM2, said for people.
type takenOver struct {
	Message string `json:"message"`
}

// expanded is one entry of GET /connectors?expand=status&expand=info.
type expanded struct {
	Info   connectorInfo   `json:"info"`
	Status connectorStatus `json:"status"`
}

type partitionRow struct {
	Topic            string   `json:"topic"`
	Partition        int      `json:"partition"`
	RemoteTopic      string   `json:"remote_topic"`
	Task             int      `json:"task"`
	WorkerID         string   `json:"worker_id"`
	ReplicatedOffset *int64   `json:"replicated_offset"`
	EndOffset        *int64   `json:"end_offset"`
	LagRecords       *int64   `json:"lag_records"`
	LagSeconds       *float64 `json:"lag_seconds"`
	RecordsPerSecond float64  `json:"records_per_second"`
	BytesPerSecond   float64  `json:"bytes_per_second"`
	Share            *float64 `json:"share"`
	Status           string   `json:"status"`
	LastReplicatedAt *string  `json:"last_replicated_at"`
	UpdatedAt        string   `json:"updated_at"`
	Stale            bool     `json:"stale"`
}

// apiTimeLayout is how the REST API writes instants.
const apiTimeLayout = "2006-01-02T15:04:05.000Z"

// LagAge is the "Lag age" cell: the API's lag in seconds, or, for a partition behind whose next record the task
// has not read yet (so no age is known), a bound: that record came after the last replicated one, so it is at
// most as old as the time from that record's timestamp to the report. "–" when neither is known.
func (p partitionRow) LagAge() string {
	if p.LagSeconds != nil {
		return optSeconds(p.LagSeconds)
	}
	if p.LagRecords == nil || *p.LagRecords <= 0 || p.LastReplicatedAt == nil {
		return "–"
	}
	last, err1 := time.Parse(apiTimeLayout, *p.LastReplicatedAt)
	at, err2 := time.Parse(apiTimeLayout, p.UpdatedAt)
	if err1 != nil || err2 != nil {
		return "–"
	}
	bound := math.Ceil(max(at.Sub(last).Seconds(), 0)*10) / 10 // rounded up: still a bound
	return "≤ " + strconv.FormatFloat(max(bound, 0.1), 'f', 1, 64) + " s"
}

type taskRow struct {
	Task             int     `json:"task"`
	WorkerID         string  `json:"worker_id"`
	State            string  `json:"state"`
	Partitions       int     `json:"partitions"`
	RecordsPerSecond float64 `json:"records_per_second"`
	BytesPerSecond   float64 `json:"bytes_per_second"`
}

type totals struct {
	RecordsPerSecond float64  `json:"records_per_second"`
	BytesPerSecond   float64  `json:"bytes_per_second"`
	LagRecords       *int64   `json:"lag_records"`
	MaxLagSeconds    *float64 `json:"max_lag_seconds"`
	Status           *string  `json:"status"`
}

// verdict keeps every field: new kinds are added to the API, and the dashboard renders any of them by
// severity and message.
type verdict struct {
	Kind     string
	Severity string
	Message  string
	// Topic and Partition are set when the verdict names one partition (a straggler does): its row is marked.
	Topic     string
	Partition *int
}

func (v *verdict) UnmarshalJSON(b []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	for k, dst := range map[string]*string{"kind": &v.Kind, "severity": &v.Severity, "message": &v.Message, "topic": &v.Topic} {
		if raw, ok := m[k]; ok {
			_ = json.Unmarshal(raw, dst)
		}
	}
	if raw, ok := m["partition"]; ok && v.Topic != "" {
		var p int
		if json.Unmarshal(raw, &p) == nil {
			v.Partition = &p
		}
	}
	return nil
}

type partitions struct {
	Name        string         `json:"name"`
	TasksMax    int            `json:"tasks_max"`
	Partitions  int            `json:"partitions"`
	Tasks       int            `json:"tasks"`
	Totals      totals         `json:"totals"`
	ByPartition []partitionRow `json:"by_partition"`
	ByTask      []taskRow      `json:"by_task"`
	Verdicts    []verdict      `json:"verdicts"`
	Moves       []partMove     `json:"moves"`
}

// partMove is a move of partitions between tasks by measured load (the partitions endpoint's moves).
type partMove struct {
	At       string   `json:"at"`
	FromTask int      `json:"from_task"`
	ToTask   int      `json:"to_task"`
	Out      []string `json:"out"`
	In       []string `json:"in"`
	Reason   string   `json:"reason"`
}

type configKey struct {
	Name          string   `json:"name"`
	Type          string   `json:"type"`
	Required      bool     `json:"required"`
	DefaultValue  *string  `json:"default_value"`
	Importance    string   `json:"importance"`
	Documentation string   `json:"documentation"`
	Group         *string  `json:"group"`
	DisplayName   string   `json:"display_name"`
	Order         int      `json:"order"`
	Dependents    []string `json:"dependents"`
}

type configValue struct {
	Name   string   `json:"name"`
	Errors []string `json:"errors"`
}

type configInfos struct {
	Name       string `json:"name"`
	ErrorCount int    `json:"error_count"`
	Configs    []struct {
		Definition *configKey   `json:"definition"`
		Value      *configValue `json:"value"`
	} `json:"configs"`
}

type pluginInfo struct {
	Class string `json:"class"`
	Type  string `json:"type"`
}

type worker struct {
	ID             string `json:"id"`
	URL            string `json:"url"`
	Leader         bool   `json:"leader"`
	StartedAt      string `json:"started_at"`
	HeartbeatAgeMs int64  `json:"heartbeat_age_ms"`
	Assigned       []struct {
		Connector string `json:"connector"`
		Task      *int   `json:"task"`
	} `json:"assigned"`
	Connectors  int `json:"connectors"`
	Tasks       int `json:"tasks"`
	HandingOver int `json:"handing_over"`
}

type workers struct {
	Leader  *string  `json:"leader"`
	Workers []worker `json:"workers"`
}

type group struct {
	Group      string `json:"group"`
	Partitions int    `json:"partitions"`
	Exact      bool   `json:"exact"`
	ReadAt     string `json:"read_at"`
	AgeMs      int64  `json:"age_ms"`
}

type groupOffset struct {
	SourceTopic       string  `json:"source_topic"`
	Partition         int32   `json:"partition"`
	SourceOffset      int64   `json:"source_offset"`
	TargetTopic       string  `json:"target_topic"`
	TargetOffset      *int64  `json:"target_offset"`
	Exact             bool    `json:"exact"`
	Basis             string  `json:"basis"`
	AgeMs             int64   `json:"age_ms"`
	ReplicatedAt      *string `json:"replicated_at"`
	CheckpointEmitted bool    `json:"checkpoint_emitted"`
}

type offsetsBody struct {
	Offsets []struct {
		Partition map[string]any `json:"partition"`
		Offset    map[string]any `json:"offset"`
	} `json:"offsets"`
}
