package api

// The JSON entities of Connect's REST API (connect/runtime/.../rest/entities). Field order follows the order in
// which Jackson emits them, so responses read like Connect's byte for byte where Connect's order is stable.

// connectorTaskID is ConnectorTaskId: {"connector":"c","task":0}.
type connectorTaskID struct {
	Connector string `json:"connector"`
	Task      int    `json:"task"`
}

// connectorInfo is ConnectorInfo. Config is the stored map exactly as submitted (plus name). DeclaredBy, an
// extension Connect's clients ignore, names the mm2.properties a connector was declared from; it is absent for
// connectors created through REST, so their bodies stay Connect's.
type connectorInfo struct {
	Name       string            `json:"name"`
	Config     map[string]string `json:"config"`
	Tasks      []connectorTaskID `json:"tasks"`
	Type       string            `json:"type"`
	DeclaredBy string            `json:"declared_by,omitempty"`
	TakenOver  *takenOver        `json:"taken_over,omitempty"`
}

// takenOver, an extension beside DeclaredBy, says what a declared connector took over from the Java MM2 it
// replaces when it was created, at At: the source offsets of Partitions partitions read from Topic, or (with
// Groups) the checkpoints of Groups groups on Topic, its checkpoints topic. Message says it for people.
type takenOver struct {
	Topic      string `json:"topic"`
	Partitions int    `json:"partitions"`
	Groups     int    `json:"groups,omitempty"`
	At         string `json:"at"`
	Message    string `json:"message"`
}

// connectorState is the "connector" object of ConnectorStateInfo. Every field is a string because
// go-kafka-connect decodes it into map[string]string. Version is the running plugin's version (KIP-891), left
// out as Connect leaves out an undefined one.
type connectorState struct {
	State    string `json:"state"`
	WorkerID string `json:"worker_id"`
	Trace    string `json:"trace,omitempty"`
	Version  string `json:"version,omitempty"`
}

// taskState is ConnectorStateInfo.TaskState, also the body of GET .../tasks/{t}/status.
type taskState struct {
	ID       int    `json:"id"`
	State    string `json:"state"`
	WorkerID string `json:"worker_id"`
	Trace    string `json:"trace,omitempty"`
	Version  string `json:"version,omitempty"`
}

// connectorStateInfo is ConnectorStateInfo, the body of GET .../status and of a restart plan.
type connectorStateInfo struct {
	Name      string         `json:"name"`
	Connector connectorState `json:"connector"`
	Tasks     []taskState    `json:"tasks"`
	Type      string         `json:"type"`
}

// taskInfo is TaskInfo, one element of GET .../tasks.
type taskInfo struct {
	ID     connectorTaskID   `json:"id"`
	Config map[string]string `json:"config"`
}

// activeTopics is ActiveTopicsInfo without its connector name, which is the key of the enclosing object.
type activeTopics struct {
	Topics []string `json:"topics"`
}

// connectorOffset is ConnectorOffset; a nil Offset is JSON null (a reset of that partition).
type connectorOffset struct {
	Partition map[string]any `json:"partition"`
	Offset    map[string]any `json:"offset"`
}

// connectorOffsets is ConnectorOffsets.
type connectorOffsets struct {
	Offsets []connectorOffset `json:"offsets"`
}

// message is Message.
type message struct {
	Message string `json:"message"`
}

// pluginInfo is PluginInfo; Version is left out when the plugin reports "undefined" (NoVersionFilter).
type pluginInfo struct {
	Class   string `json:"class"`
	Type    string `json:"type"`
	Version string `json:"version,omitempty"`
}

// workerStatus is WorkerStatus, the body of GET /health whatever its status code.
type workerStatus struct {
	Status  string `json:"status"`
	Message string `json:"message"`
}
