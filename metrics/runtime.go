package metrics

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// connectorUnit is the task number of a connector instance in UnitState and UnitGone (store.ConnectorUnit).
const connectorUnit = -1

// Connect's unit states, lowercased as Connect's status metrics and kmirror's state-sets show them.
var unitStates = [...]string{"unassigned", "running", "paused", "failed", "restarting", "stopped"}

type unitKey struct {
	connector string
	task      int
}

// UnitState records the state (a Connect state such as RUNNING or FAILED, in any case) of a unit this worker
// runs: a connector instance when task is -1, else one of its tasks. It implements tasks.Observer.
func (r *Registry) UnitState(connector string, task int, state string) {
	r.rtMu.Lock()
	defer r.rtMu.Unlock()
	r.units[unitKey{validLabel(connector), task}] = strings.ToLower(state)
}

// UnitGone forgets a unit that no longer runs on this worker. It implements tasks.Observer.
func (r *Registry) UnitGone(connector string, task int) {
	r.UnitNotices(connector, task, nil)
	r.rtMu.Lock()
	defer r.rtMu.Unlock()
	delete(r.units, unitKey{validLabel(connector), task})
}

// Leader records whether this worker holds the leader lease. It implements tasks.Observer.
func (r *Registry) Leader(leader bool) {
	r.rtMu.Lock()
	defer r.rtMu.Unlock()
	r.leader = leader
}

// assignment is what the runtime last said is assigned to this worker.
type assignment struct {
	known             bool
	clientID          string // the worker id, jmx-sanitized: Connect's coordinator metrics are tagged client-id
	connectors, tasks int
}

// Assignment records how many connector instances and tasks are assigned to this worker. It implements
// tasks.Observer.
func (r *Registry) Assignment(worker string, connectors, tasks int) {
	a := assignment{known: true, clientID: jmxSanitize(validLabel(worker)), connectors: connectors, tasks: tasks}
	r.rtMu.Lock()
	defer r.rtMu.Unlock()
	r.assigned = a
}

// Rebalancing records whether this worker is handing units over or taking them up. It implements
// tasks.Observer.
func (r *Registry) Rebalancing(rebalancing bool) {
	r.rtMu.Lock()
	defer r.rtMu.Unlock()
	r.rebalancing = rebalancing
}

var (
	// Connect's WorkerCoordinator metrics (group connect-coordinator-metrics, tagged client-id), as Strimzi's
	// JMX exporter rule names them: kafka_connect_coordinator_<name>{clientid}.
	descAssignedConnectors = prometheus.NewDesc("kafka_connect_coordinator_assigned_connectors", "Connect coordinator assigned-connectors: connector instances assigned to this worker.", []string{"clientid"}, nil)
	descAssignedTasks      = prometheus.NewDesc("kafka_connect_coordinator_assigned_tasks", "Connect coordinator assigned-tasks: tasks assigned to this worker.", []string{"clientid"}, nil)
	// Connect's connect-worker-rebalance-metrics rebalancing.
	descRebalancing = prometheus.NewDesc("kafka_connect_worker_rebalance_rebalancing",
		"Connect worker-rebalance rebalancing: 1 while this worker hands units it lost over or takes up units it was given, else 0 (kmirror has no stop-the-world rebalance).", nil, nil)
	descWorkerConnectorCount = prometheus.NewDesc("kafka_connect_worker_connector_count", "Connect connector-count: connector instances on this worker.", nil, nil)
	descWorkerTaskCount      = prometheus.NewDesc("kafka_connect_worker_task_count", "Connect task-count: tasks on this worker.", nil, nil)
	// Connect's connector-<state>-task-count and connector-total-task-count. Connect counts the connector's
	// tasks cluster-wide on every worker hosting one; these count this worker's, so sum() is the cluster's.
	taskCountStates          = []string{"running", "paused", "failed", "unassigned", "restarting", "total"}
	descWorkerTaskStateCount = func() map[string]*prometheus.Desc {
		m := make(map[string]*prometheus.Desc)
		for _, s := range taskCountStates {
			help := "Connect connector-" + s + "-task-count: the connector's tasks in state " + s + " on this worker."
			if s == "total" {
				help = "Connect connector-total-task-count: the connector's tasks on this worker."
			}
			m[s] = prometheus.NewDesc("kafka_connect_worker_connector_"+s+"_task_count", help, []string{"connector"}, nil)
		}
		return m
	}()
	descConnectorStatus = prometheus.NewDesc("kafka_connect_connector_status", "Connect task status: 1 for the task's current status.", []string{"connector", "task", "status"}, nil)
	descConnectorState  = prometheus.NewDesc("kmirror_connector_state", "State of a connector instance on this worker (state-set).", []string{"connector", "state"}, nil)
	descTaskState       = prometheus.NewDesc("kmirror_task_state", "State of a task on this worker (state-set).", []string{"connector", "task", "state"}, nil)
	descWorkerLeader    = prometheus.NewDesc("kmirror_worker_leader", "1 while this worker holds the leader lease, else 0.", nil, nil)
)

type runtimeCollector struct{ r *Registry }

func (c runtimeCollector) Describe(ch chan<- *prometheus.Desc) {
	describe(ch, descWorkerConnectorCount, descWorkerTaskCount, descConnectorStatus, descConnectorState, descTaskState,
		descWorkerLeader, descAssignedConnectors, descAssignedTasks, descRebalancing)
	for _, d := range descWorkerTaskStateCount {
		ch <- d
	}
}

type unitState struct {
	unitKey
	state string
}

func (c runtimeCollector) Collect(ch chan<- prometheus.Metric) {
	r := c.r
	r.rtMu.Lock()
	units := make([]unitState, 0, len(r.units))
	for k, s := range r.units {
		units = append(units, unitState{k, s})
	}
	leader, assigned, rebalancing := r.leader, r.assigned, r.rebalancing
	r.rtMu.Unlock()
	slices.SortFunc(units, func(a, b unitState) int {
		return cmp.Or(strings.Compare(a.connector, b.connector), cmp.Compare(a.task, b.task))
	})

	gauge := func(d *prometheus.Desc, v float64, lv ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, lv...)
	}
	stateSet := func(d *prometheus.Desc, current string, lv ...string) {
		for _, s := range unitStates {
			v := 0.0
			if s == current {
				v = 1
			}
			gauge(d, v, append(lv, s)...)
		}
	}
	var connectors, tasks int
	counts := make(map[string]map[string]int) // connector -> state -> tasks
	for _, u := range units {
		if u.task == connectorUnit {
			connectors++
			stateSet(descConnectorState, u.state, u.connector)
			continue
		}
		tasks++
		task := strconv.Itoa(u.task)
		stateSet(descTaskState, u.state, u.connector, task)
		gauge(descConnectorStatus, 1, jmxSanitize(u.connector), task, u.state)
		if counts[u.connector] == nil {
			counts[u.connector] = make(map[string]int)
		}
		counts[u.connector][u.state]++
		counts[u.connector]["total"]++
	}
	gauge(descWorkerConnectorCount, float64(connectors))
	gauge(descWorkerTaskCount, float64(tasks))
	for conn, byState := range counts {
		for _, s := range taskCountStates {
			gauge(descWorkerTaskStateCount[s], float64(byState[s]), jmxSanitize(conn))
		}
	}
	isLeader := 0.0
	if leader {
		isLeader = 1
	}
	gauge(descWorkerLeader, isLeader)
	if assigned.known {
		gauge(descAssignedConnectors, float64(assigned.connectors), assigned.clientID)
		gauge(descAssignedTasks, float64(assigned.tasks), assigned.clientID)
	}
	isRebalancing := 0.0
	if rebalancing {
		isRebalancing = 1
	}
	gauge(descRebalancing, isRebalancing)
}
