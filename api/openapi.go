package api

import (
	"net/http"
	"strings"
	"unicode"

	"github.com/kmirror/kmirror/connectors"
	"github.com/kmirror/kmirror/kmtype"
	"github.com/kmirror/kmirror/parallelism"
)

// openAPI is GET /openapi.json: an OpenAPI 3 description of every route. TestOpenAPIMatchesRouter keeps it and
// the router in step.
func (s *server) openAPI(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, openAPIDocument())
	return nil
}

// obj is a JSON object of the document.
type obj = map[string]any

func openAPIDocument() obj {
	return obj{
		"openapi": "3.0.3",
		"info": obj{
			"title":   "kmirror",
			"version": ConnectVersion,
			"description": "MirrorMaker 2 as a service speaking the Kafka Connect REST API. Every error response is " +
				"{\"error_code\": <status>, \"message\": <text>} with Connect's texts; /health answers with WorkerStatus instead. " +
				"While the database cannot be reached, operations that need it answer 503 with Retry-After. " +
				"With --rest-users-file, every operation but /health needs HTTP basic auth or a bearer token: without valid " +
				"credentials it answers 401 with Connect's plain-text body, and a read-only user gets 403 on anything but GET and HEAD.",
		},
		// Credentials are optional in the document ({}) because kmirror serves without them unless the operator
		// gives it a users file; a client that has some sends either kind.
		"security": []obj{{}, {"basicAuth": []string{}}, {"bearerAuth": []string{}}},
		"paths":    withSharedResponses(withFailoverPaths(openAPIPaths())),
		"components": obj{"schemas": withFailoverSchemas(openAPISchemas()), "responses": openAPISharedResponses(),
			"securitySchemes": obj{
				"basicAuth":  obj{"type": "http", "scheme": "basic", "description": "A user of the users file (name:role:bcrypt or argon2id hash)"},
				"bearerAuth": obj{"type": "http", "scheme": "bearer", "description": "A token made by kmirror passwd --token, whose SHA-256 is in the users file"},
			}},
	}
}

// openAPISharedResponses are the failures any operation can meet, whatever it does.
func openAPISharedResponses() obj {
	return obj{
		"InternalError": errorResponse("An internal failure; the message names the request, the worker's log has the details"),
		"Unauthorized": obj{
			"description": "Authentication is on and the request has no valid credentials (Connect's BasicAuthSecurityRestExtension answer)",
			"headers":     obj{"WWW-Authenticate": obj{"description": "The Basic and Bearer challenges", "schema": obj{"type": "string"}}},
			"content":     obj{"text/plain": obj{"schema": obj{"type": "string", "enum": []string{"User cannot access the resource."}}}},
		},
		"TooManyFailures": obj{
			"description": "The client (IP address) sent too many wrong passwords; nothing was checked (see Retry-After)",
			"headers":     obj{"Retry-After": obj{"description": "Seconds to wait before retrying", "schema": obj{"type": "integer"}}},
			"content":     obj{"text/plain": obj{"schema": obj{"type": "string"}}},
		},
		"Forbidden": errorResponse("The user's role may not do this: read-only may only GET and HEAD (or a browser's cross-origin write)"),
		"Unavailable": obj{
			"description": "kmirror cannot reach its database (operations that need it)",
			"headers":     obj{"Retry-After": obj{"description": "Seconds to wait before retrying", "schema": obj{"type": "integer"}}},
			"content":     obj{"application/json": obj{"schema": ref("ErrorMessage")}},
		},
	}
}

// withSharedResponses adds the shared 500 and 503 to every operation that does not describe those codes
// itself (/health does: its bodies are WorkerStatus), and the 401, 403 and 429 of authentication to every operation
// that needs credentials (all but /health, which probes reach without any).
func withSharedResponses(paths obj) obj {
	for path, ops := range paths {
		for _, op := range ops.(obj) {
			responses := op.(obj)["responses"].(obj)
			shared := map[string]string{"500": "InternalError", "503": "Unavailable", "401": "Unauthorized", "403": "Forbidden",
				"429": "TooManyFailures"}
			if path == "/health" {
				delete(shared, "401")
				delete(shared, "429")
				delete(shared, "403")
				op.(obj)["security"] = []obj{}
			}
			for code, name := range shared {
				if _, ok := responses[code]; !ok {
					responses[code] = obj{"$ref": "#/components/responses/" + name}
				}
			}
		}
	}
	return paths
}

func openAPIPaths() obj {
	connector := pathParameter("connector", "The connector's name. Percent-encode '/' as %2F.", obj{"type": "string"})
	task := pathParameter("task", "The task's id.", obj{"type": "integer", "format": "int32"})
	plugin := pathParameter("plugin", "A connector class name or alias (MirrorSourceConnector, MirrorSource).", obj{"type": "string"})
	logger := pathParameter("logger", "A logger name, or root.", obj{"type": "string"})
	group := pathParameter("group", "A consumer group id. Percent-encode it as one path segment ('/' as %2F, '%' as %25).", obj{"type": "string"})
	notCheckpoint := errorResponse("Unknown connector, or a connector that is not a MirrorCheckpointConnector")
	notFound := errorResponse("Unknown connector")
	badRequest := errorResponse("Invalid request")
	declaredConflictResponse := errorResponse("The connector is declared by an mm2.properties (kmirror extension): change it in that file")
	configBody := jsonBody("A flat connector config with connector.class: string values (numbers and booleans are accepted and stored as text).", ref("ConfigRequest"))

	return obj{
		"/": obj{"get": operation("serverInfo", "Version, commit and cluster id of this worker", nil, nil, obj{
			"200": response("Server info", ref("ServerInfo")),
		})},
		"/health": obj{"get": operation("healthCheck", "Whether the worker is ready to handle requests", nil, nil, obj{
			"200": response("Healthy", ref("WorkerStatus")),
			"500": response("Unhealthy", ref("WorkerStatus")),
			"503": response("Still starting", ref("WorkerStatus")),
		})},
		"/metrics": obj{"get": operation("getMetrics", "kmirror extension: this worker's Prometheus metrics (Strimzi MM2 dashboard names and kmirror_* ones; docs in package metrics), served by the server beside this API", nil, nil, obj{
			"200": obj{"description": "Prometheus text format, OpenMetrics or protobuf, as the Accept header asks", "content": obj{
				"text/plain; version=0.0.4":                   obj{"schema": obj{"type": "string"}},
				"application/openmetrics-text; version=1.0.0": obj{"schema": obj{"type": "string"}},
			}},
		})},
		"/workers": obj{"get": operation("listWorkers", "kmirror extension: the cluster's workers, its leader, heartbeat ages and each worker's units", nil, nil, obj{
			"200": response("Workers", ref("Workers")),
		})},
		"/openapi.json": obj{"get": operation("openAPI", "This document", nil, nil, obj{
			"200": response("The OpenAPI document", obj{"type": "object"}),
		})},
		"/connectors": obj{
			"get": operation("listConnectors", "List connectors, optionally with their status and info",
				[]obj{{
					"name": "expand", "in": "query", "required": false, "explode": true,
					"description": "status and/or info; may repeat. With status, connectors that have no status yet are left out. Other values are ignored, as Connect ignores them.",
					"schema":      obj{"type": "array", "items": obj{"type": "string"}},
				}, queryFlag(revealParam, "Show client secrets (passwords, sasl.jaas.config, inline PEM keys) as stored instead of [hidden]; admins only (403 for a read-only caller)")}, nil, obj{
					"200": response("Connector names, or an object keyed by name when expand is given", obj{"oneOf": []obj{
						{"type": "array", "items": obj{"type": "string"}},
						{"type": "object", "additionalProperties": ref("ConnectorExpansion")},
					}}),
				}),
			"post": operation("createConnector", "Create a connector", nil,
				jsonBody("The connector's name, config and optional initial state.", ref("CreateConnectorRequest")), obj{
					"201": withLocation(response("Created", ref("ConnectorInfo"))),
					"400": badRequest,
					"409": errorResponse("A connector with this name exists"),
				}),
		},
		"/connectors/{connector}": obj{
			"get": operation("getConnector", "A connector's config (secrets [hidden] unless revealSecrets), tasks and type", []obj{connector, queryFlag(revealParam, "Show client secrets (passwords, sasl.jaas.config, inline PEM keys) as stored instead of [hidden]; admins only (403 for a read-only caller)")}, nil, obj{
				"200": response("The connector", ref("ConnectorInfo")),
				"404": notFound,
			}),
			"delete": operation("deleteConnector", "Delete a connector", []obj{connector}, nil, obj{
				"204": response("Deleted", nil),
				"404": notFound,
				"409": declaredConflictResponse,
			}),
		},
		"/connectors/{connector}/config": obj{
			"get": operation("getConnectorConfig", "The connector's config as stored, its secrets [hidden] unless revealSecrets", []obj{connector, queryFlag(revealParam, "Show client secrets (passwords, sasl.jaas.config, inline PEM keys) as stored instead of [hidden]; admins only (403 for a read-only caller)")}, nil, obj{
				"200": response("The config", ref("Config")),
				"404": notFound,
			}),
			"put": operation("putConnectorConfig", "Create a connector or replace its config", []obj{connector}, configBody, obj{
				"200": response("Replaced", ref("ConnectorInfo")),
				"201": withLocation(response("Created", ref("ConnectorInfo"))),
				"400": badRequest,
				"409": declaredConflictResponse,
			}),
			"patch": operation("patchConnectorConfig", "Change some keys of a connector's config; null removes a key", []obj{connector},
				jsonBody("Keys to set, or to remove with null; connector.class only if it changes.", ref("ConfigPatch")), obj{
					"200": response("Patched", ref("ConnectorInfo")),
					"400": badRequest,
					"404": notFound,
					"409": declaredConflictResponse,
				}),
		},
		"/connectors/{connector}/status": obj{"get": operation("getConnectorStatus", "The connector's and its tasks' states", []obj{connector}, nil, obj{
			"200": response("Status", ref("ConnectorStateInfo")),
			"404": errorResponse("Unknown connector, or no status reported yet"),
		})},
		"/connectors/{connector}/notices": obj{"get": operation("getConnectorNotices", "kmirror extension: typed notices of the connector and its tasks (data not replicated with offsets, unreachable clusters, remote topics gone)", []obj{connector}, nil, obj{
			"200": response("Notices", ref("ConnectorNotices")),
			"404": errorResponse("Unknown connector, or no status reported yet"),
		})},
		"/connectors/{connector}/groups": obj{"get": operation("listConsumerGroups", "kmirror extension: the consumer groups a MirrorCheckpointConnector translates, how many of their partitions translate exactly, and how old the data is", []obj{connector}, nil, obj{
			"200": response("Groups, by name", ref("ConsumerGroups")),
			"404": notCheckpoint,
		})},
		"/connectors/{connector}/groups/{group}/offsets": obj{"get": operation("getConsumerGroupOffsets", "kmirror extension: per source partition, a consumer group's committed source offset and the target offset to resume from after a failover", []obj{connector, group}, nil, obj{
			"200": response("Translations, by source topic and partition", ref("ConsumerGroupOffsets")),
			"404": errorResponse("Unknown connector, a connector that is not a MirrorCheckpointConnector, or a group it has no translation for"),
		})},
		"/connectors/{connector}/partitions": obj{"get": operation("getConnectorPartitions", "kmirror extension: per source partition of a MirrorSourceConnector, its task and worker, position, end, lag, throughput and share; per task, its state and throughput; totals; and verdicts on the parallelism (docs/partitions.md)", []obj{connector}, nil, obj{
			"200": response("Partitions by topic and partition, tasks by id, verdicts", ref("ConnectorPartitions")),
			"404": errorResponse("Unknown connector, or a connector that is not a MirrorSourceConnector"),
		})},
		"/connectors/{connector}/restart": obj{"post": operation("restartConnector", "Restart the connector, and optionally its tasks",
			[]obj{connector, queryFlag("includeTasks", "Also restart tasks"), queryFlag("onlyFailed", "Only restart FAILED instances")}, nil, obj{
				"202": response("Restart plan: RESTARTING marks what will restart", ref("ConnectorStateInfo")),
				"204": response("Restart of the connector instance requested", nil),
				"404": notFound,
			})},
		"/connectors/{connector}/pause": obj{"put": operation("pauseConnector", "Pause the connector and its tasks", []obj{connector}, nil, obj{
			"202": response("Pause requested", nil),
			"404": notFound,
		})},
		"/connectors/{connector}/resume": obj{"put": operation("resumeConnector", "Resume a paused or stopped connector", []obj{connector}, nil, obj{
			"202": response("Resume requested", nil),
			"404": notFound,
		})},
		"/connectors/{connector}/stop": obj{"put": operation("stopConnector", "Stop the connector and remove its tasks", []obj{connector}, nil, obj{
			"204": response("Stop requested", nil),
			"404": notFound,
		})},
		"/connectors/{connector}/tasks": obj{"get": operation("getTasks", "The connector's tasks and their configs", []obj{connector, queryFlag(revealParam, "Show client secrets (passwords, sasl.jaas.config, inline PEM keys) as stored instead of [hidden]; admins only (403 for a read-only caller)")}, nil, obj{
			"200": withTaskConfigsFrom(response("Tasks", obj{"type": "array", "items": ref("TaskInfo")})),
			"404": notFound,
		})},
		"/connectors/{connector}/tasks-config": obj{"get": deprecated(operation("getTasksConfig", "Task configs keyed by <connector>-<task> (deprecated)", []obj{connector, queryFlag(revealParam, "Show client secrets (passwords, sasl.jaas.config, inline PEM keys) as stored instead of [hidden]; admins only (403 for a read-only caller)")}, nil, obj{
			"200": withTaskConfigsFrom(response("Task configs", obj{"type": "object", "additionalProperties": ref("Config")})),
			"404": notFound,
		}))},
		"/connectors/{connector}/tasks/{task}/status": obj{"get": operation("getTaskStatus", "One task's state", []obj{connector, task}, nil, obj{
			"200": response("Task state", ref("TaskState")),
			"404": errorResponse("No status for this task"),
		})},
		"/connectors/{connector}/tasks/{task}/restart": obj{"post": operation("restartTask", "Restart one task", []obj{connector, task}, nil, obj{
			"204": response("Restart requested", nil),
			"404": errorResponse("Unknown connector or task"),
		})},
		"/connectors/{connector}/topics": obj{"get": operation("getConnectorTopics", "Topics the connector has produced to", []obj{connector}, nil, obj{
			"200": response("Topics, keyed by connector name", obj{"type": "object", "additionalProperties": ref("ActiveTopics")}),
		})},
		"/connectors/{connector}/topics/reset": obj{"put": operation("resetConnectorTopics", "Forget the topics the connector has produced to", []obj{connector}, nil, obj{
			"202": response("Reset", nil),
		})},
		"/connectors/{connector}/offsets": obj{
			"get": operation("getOffsets", "The connector's committed source offsets", []obj{connector}, nil, obj{
				"200": response("Offsets", ref("ConnectorOffsets")),
				"404": notFound,
			}),
			"patch": operation("alterOffsets", "Set or remove (offset null) offsets of a STOPPED connector", []obj{connector},
				jsonBody("The offsets to write.", ref("ConnectorOffsetsRequest")), obj{
					"200": response("Altered", ref("Message")),
					"400": errorResponse("No offsets, a connector that is not STOPPED, or offsets the connector rejects"),
					"404": notFound,
				}),
			"delete": operation("resetOffsets", "Remove every offset of a STOPPED connector", []obj{connector}, nil, obj{
				"200": response("Reset", ref("Message")),
				"400": errorResponse("The connector is not STOPPED"),
				"404": notFound,
			}),
		},
		"/connector-plugins": obj{"get": operation("listConnectorPlugins", "Installed plugins",
			[]obj{queryFlag("connectorsOnly", "Only connectors (the default); false lists every plugin type")}, nil, obj{
				"200": response("Plugins", obj{"type": "array", "items": ref("PluginInfo")}),
			})},
		"/connector-plugins/{plugin}/config": obj{"get": operation("getPluginConfig", "A plugin's config definition", []obj{plugin}, nil, obj{
			"200": response("Key definitions, the plugin's own first", obj{"type": "array", "items": ref("ConfigKeyInfo")}),
			"404": errorResponse("Unknown plugin"),
		})},
		"/connector-plugins/{plugin}/config/validate": obj{"put": operation("validateConfig", "Validate a connector config",
			[]obj{plugin}, configBody, obj{
				"200": response("Validation result, whether or not it found errors", ref("ConfigInfos")),
				"400": errorResponse("connector.class is missing, unknown, or does not match the path"),
			})},
		"/admin/loggers": obj{"get": operation("listLoggers", "Every known logger with its effective level", nil, nil, obj{
			"200": response("Levels by logger name", obj{"type": "object", "additionalProperties": ref("LoggerLevel")}),
		})},
		"/admin/loggers/{logger}": obj{
			"get": operation("getLogger", "A logger's effective level", []obj{logger}, nil, obj{
				"200": response("Level", ref("LoggerLevel")),
				"404": errorResponse("Unknown logger"),
			}),
			"put": operation("setLogger", "Set the level of a logger and its descendants", []obj{logger, {
				"name": "scope", "in": "query", "required": false,
				"description": "cluster (any case) changes every worker; worker, the default, or any other value changes this worker, as in Connect",
				"schema":      obj{"type": "string"},
			}}, jsonBody("The level.", ref("LevelRequest")), obj{
				"200": response("Worker scope: the loggers changed", obj{"type": "array", "items": obj{"type": "string"}}),
				"204": response("Cluster scope: stored for every worker", nil),
				"400": errorResponse("No level given"),
				"404": errorResponse("Invalid level"),
			}),
		},
	}
}

func openAPISchemas() obj {
	str := obj{"type": "string"}
	integer := obj{"type": "integer", "format": "int32"}
	nullableStr := obj{"type": "string", "nullable": true}
	strings := obj{"type": "array", "items": str}
	return obj{
		"ErrorMessage": object(obj{"error_code": integer, "message": nullableStr}, "error_code", "message"),
		"Unit":         object(obj{"connector": str, "task": obj{"type": "integer", "format": "int32", "nullable": true}}, "connector", "task"),
		"Worker": object(obj{
			"id": str, "url": str, "leader": obj{"type": "boolean"}, "started_at": str,
			"heartbeat_age_ms": obj{"type": "integer", "format": "int64"},
			"assigned":         obj{"type": "array", "items": ref("Unit")}, "draining": obj{"type": "array", "items": ref("Unit")},
			"connectors": obj{"type": "integer"}, "tasks": obj{"type": "integer"}, "handing_over": obj{"type": "integer"},
		}, "id", "url", "leader", "started_at", "heartbeat_age_ms", "assigned", "draining", "connectors", "tasks", "handing_over"),
		"Notice": object(obj{
			"kind": str, "message": str, "topic": str, "partition": obj{"type": "integer", "format": "int32"},
			"first_offset": obj{"type": "integer", "format": "int64"}, "last_offset": obj{"type": "integer", "format": "int64"},
			"level": obj{"type": "string", "enum": []string{"info"}, "description": "info: a fact, not a problem; absent for a problem"},
		}, "kind", "message"),
		"ConnectorNotices": object(obj{"name": str, "units": obj{"type": "array", "items": object(obj{
			"task": obj{"type": "integer", "format": "int32", "nullable": true}, "state": str, "worker_id": str,
			"notices": obj{"type": "array", "items": ref("Notice")},
		}, "task", "state", "worker_id", "notices")}}, "name", "units"),
		"ConsumerGroup": object(obj{
			"group":              str,
			"partitions":         obj{"type": "integer", "description": "Source partitions the group has committed offsets in"},
			"inexact_partitions": obj{"type": "integer", "description": "Partitions whose translation is approximate or missing"},
			"exact":              obj{"type": "boolean", "description": "Every partition translates exactly (inexact_partitions is 0)"},
			"read_at":            obj{"type": "string", "format": "date-time", "description": "When the group's offsets were last read on the source (the oldest over its partitions)"},
			"age_ms":             obj{"type": "integer", "format": "int64", "description": "Milliseconds since read_at"},
		}, "group", "partitions", "inexact_partitions", "exact", "read_at", "age_ms"),
		"ConsumerGroups": object(obj{"name": str, "groups": obj{"type": "array", "items": ref("ConsumerGroup")}}, "name", "groups"),
		"ConsumerGroupOffset": object(obj{
			"source_topic":  str,
			"partition":     obj{"type": "integer", "format": "int32", "description": "The same on the source and the target topic"},
			"source_offset": obj{"type": "integer", "format": "int64", "description": "The group's committed offset on the source"},
			"target_topic":  obj{"type": "string", "description": "The topic on the target the group resumes in (A.orders)"},
			"target_offset": obj{"type": "integer", "format": "int64", "nullable": true, "description": "The offset to resume from on the target; null when it cannot be translated"},
			"exact":         obj{"type": "boolean", "description": "Resuming at target_offset reads every later record once and none twice"},
			"basis": obj{"type": "string", "enum": []string{kmtype.BasisOffsetMap, kmtype.BasisOffsetSyncs, kmtype.BasisNone},
				"description": "offset_map: kmirror's exact source-to-target offset ranges; offset_syncs: MM2's sparse offset syncs (approximate, never ahead); none: nothing to translate with"},
			"metadata":           obj{"type": "string", "description": "The commit metadata of the group's source offset, as JSON text (bytes that are not valid UTF-8 show as U+FFFD)"},
			"metadata_base64":    obj{"type": "string", "format": "byte", "nullable": true, "description": "The exact bytes of the commit metadata when they are not valid UTF-8; null otherwise"},
			"read_at":            obj{"type": "string", "format": "date-time", "description": "When the group's offset was read on the source"},
			"age_ms":             obj{"type": "integer", "format": "int64", "description": "Milliseconds since read_at: how old the data behind the answer is"},
			"replicated_at":      obj{"type": "string", "format": "date-time", "nullable": true, "description": "When the offset map behind the translation last grew; null for the other bases"},
			"checkpoint_emitted": obj{"type": "boolean", "description": "A checkpoint with this translation is on the checkpoints topic"},
		}, "source_topic", "partition", "source_offset", "target_topic", "target_offset", "exact", "basis", "metadata", "metadata_base64", "read_at", "age_ms",
			"replicated_at", "checkpoint_emitted"),
		"ConsumerGroupOffsets": object(obj{"name": str, "group": str, "offsets": obj{"type": "array", "items": ref("ConsumerGroupOffset")}},
			"name", "group", "offsets"),
		"ConnectorPartitions": object(obj{
			"name":         str,
			"tasks_max":    obj{"type": "integer", "description": "The connector's tasks.max"},
			"partitions":   obj{"type": "integer", "description": "Source partitions the connector replicates, by its task configs (or by the reports when they do not say)"},
			"tasks":        obj{"type": "integer", "description": "Tasks in state RUNNING"},
			"totals":       ref("PartitionTotals"),
			"by_partition": obj{"type": "array", "items": ref("PartitionStat"), "description": "Every reported partition, by topic and partition; empty until a task has reported"},
			"by_task":      obj{"type": "array", "items": ref("TaskPartitions"), "description": "The tasks of the current task set, by id"},
			"verdicts":     obj{"type": "array", "items": ref("ParallelismVerdict"), "description": "Conclusions on the parallelism, warnings first"},
			"moves":        obj{"type": "array", "items": ref("PartitionMove"), "description": "The last move by measured load of each current task, each move once, newest first"},
		}, "name", "tasks_max", "partitions", "tasks", "totals", "by_partition", "by_task", "verdicts", "moves"),
		"PartitionMove": object(obj{
			"at":        obj{"type": "string", "format": "date-time", "description": "When the planner made the move"},
			"from_task": obj{"type": "integer", "format": "int32", "description": "The task that carried more than its share"},
			"to_task":   obj{"type": "integer", "format": "int32", "description": "The task that took its hot partitions"},
			"out":       obj{"type": "array", "items": str, "description": "Partitions (topic-partition) moved from from_task to to_task"},
			"in":        obj{"type": "array", "items": str, "description": "Partitions moved the other way, one per partition out, so both keep their share"},
			"reason":    str,
		}, "at", "from_task", "to_task", "out", "in", "reason"),
		"PartitionTotals": object(obj{
			"records_per_second": obj{"type": "number", "description": "Over fresh reports"},
			"bytes_per_second":   obj{"type": "number", "description": "Over fresh reports"},
			"lag_records":        obj{"type": "integer", "format": "int64", "nullable": true, "description": "Sum over the partitions that know their lag (stale ones included); null when none does"},
			"max_lag_seconds":    obj{"type": "number", "nullable": true, "description": "The largest lag_seconds; null when no partition knows it"},
			"status":             obj{"type": "string", "nullable": true, "description": "The worst partition status; null without partitions"},
		}, "records_per_second", "bytes_per_second", "lag_records", "max_lag_seconds", "status"),
		"PartitionStat": object(obj{
			"topic":              obj{"type": "string", "description": "The source topic"},
			"partition":          obj{"type": "integer", "format": "int32", "description": "The same on the source and the remote topic"},
			"remote_topic":       obj{"type": "string", "description": "The topic on the target (A.orders)"},
			"task":               obj{"type": "integer", "format": "int32", "description": "The task that reported the partition"},
			"worker_id":          obj{"type": "string", "description": "The worker that ran the task when it reported"},
			"replicated_offset":  obj{"type": "integer", "format": "int64", "description": "The next source offset to replicate"},
			"end_offset":         obj{"type": "integer", "format": "int64", "nullable": true, "description": "The source's end offset as last seen (the last stable offset under read_committed); null until seen"},
			"lag_records":        obj{"type": "integer", "format": "int64", "nullable": true, "description": "max(0, end_offset - replicated_offset): an upper bound on records where transaction markers or compaction leave gaps"},
			"lag_seconds":        obj{"type": "number", "nullable": true, "description": "0 when caught up, else the age of the source record at replicated_offset: how stale the target is; null until known"},
			"records_per_second": obj{"type": "number"},
			"bytes_per_second":   obj{"type": "number"},
			"share":              obj{"type": "number", "nullable": true, "description": "The partition's fraction (0..1) of the connector's records/s over fresh reports; null when stale"},
			"status": obj{"type": "string", "enum": parallelism.Statuses(),
				"description": "ok, warn (position moving, lag not falling), rewind (position went back), stall (position not moving with lag), stop (task not running, no progress, or a stale report), truncated (records lost to retention before replication), paused (the connector is paused: nothing is replicated, the lag is the backlog), deleted (the source topic is gone and the task has replicated what the source still served; the connector drops the partition at its next topic refresh)"},
			"last_replicated_at": obj{"type": "string", "format": "date-time", "nullable": true, "description": "The source timestamp of the last replicated record"},
			"updated_at":         obj{"type": "string", "format": "date-time", "description": "When the task reported, by the database's clock"},
			"stale":              obj{"type": "boolean", "description": "No report for more than 10 s: the task is not running or cannot reach PostgreSQL"},
		}, "topic", "partition", "remote_topic", "task", "worker_id", "replicated_offset", "end_offset", "lag_records", "lag_seconds",
			"records_per_second", "bytes_per_second", "share", "status", "last_replicated_at", "updated_at", "stale"),
		"TaskPartitions": object(obj{
			"task":               obj{"type": "integer", "format": "int32"},
			"worker_id":          obj{"type": "string", "description": "The worker that runs the task, empty when none does"},
			"state":              str,
			"partitions":         obj{"type": "integer", "description": "The task's partitions, by its config"},
			"records_per_second": obj{"type": "number", "description": "Over the task's fresh reports"},
			"bytes_per_second":   obj{"type": "number", "description": "Over the task's fresh reports"},
			"pipeline":           obj{"allOf": []obj{ref("TaskPipeline")}, "nullable": true, "description": "What the task last measured of its pipeline; null until it has (capacity advice)"},
			"last_move":          obj{"allOf": []obj{ref("PartitionMove")}, "nullable": true, "description": "The task's last move by measured load; null when none changed its partitions"},
		}, "task", "worker_id", "state", "partitions", "records_per_second", "bytes_per_second", "pipeline", "last_move"),
		"TaskPipeline": object(obj{
			"interval_seconds":          obj{"type": "number", "description": "The measuring interval"},
			"wait_source_fraction":      obj{"type": "number", "description": "Share of the poll loop's time spent waiting for source records"},
			"wait_target_fraction":      obj{"type": "number", "description": "Share spent waiting for the target: a full producer queue, no acknowledgement, no lease"},
			"busy_fraction":             obj{"type": "number", "description": "The rest: handling records"},
			"producer":                  ref("ClientFigures"),
			"consumer":                  ref("ClientFigures"),
			"batch_size_bytes":          obj{"type": "integer", "format": "int64", "description": "The replication producer's batch.size as librdkafka runs it"},
			"queue_max_bytes":           obj{"type": "integer", "format": "int64", "description": "Its queue limit (queue.buffering.max.kbytes; Java's buffer.memory)"},
			"linger_ms":                 obj{"type": "number"},
			"compression_type":          str,
			"max_in_flight":             obj{"type": "integer", "description": "Requests in flight allowed per broker connection"},
			"fetch_max_bytes":           obj{"type": "integer", "format": "int64"},
			"max_partition_fetch_bytes": obj{"type": "integer", "format": "int64"},
			"worker_cpu_cores":          obj{"type": "number", "description": "CPU the task's worker process used over the interval, in cores"},
			"worker_cpus":               obj{"type": "integer", "description": "Cores the worker may use (GOMAXPROCS)"},
			"updated_at":                obj{"type": "string", "format": "date-time"},
			"stale":                     obj{"type": "boolean", "description": "Older than 10 s: the figures are the last reported"},
		}, "interval_seconds", "wait_source_fraction", "wait_target_fraction", "busy_fraction", "batch_size_bytes", "linger_ms",
			"compression_type", "max_in_flight", "worker_cpu_cores", "worker_cpus", "updated_at", "stale"),
		"ClientFigures": object(obj{
			"batch_avg_bytes":    obj{"type": "number", "description": "Mean batch size sent (producer)"},
			"batch_avg_records":  obj{"type": "number", "description": "Mean records per batch (producer)"},
			"batches":            obj{"type": "integer", "format": "int64", "description": "Batches over librdkafka's statistics window"},
			"rtt_avg_ms":         obj{"type": "number", "description": "The slowest broker's average round trip"},
			"throttle_avg_ms":    obj{"type": "number", "description": "The highest average broker throttle (quotas)"},
			"in_flight_requests": obj{"type": "integer", "format": "int64", "description": "Requests awaiting a response, all brokers"},
			"in_flight_max":      obj{"type": "integer", "format": "int64", "description": "The most awaiting a response at one broker"},
		}, "rtt_avg_ms", "throttle_avg_ms", "in_flight_requests", "in_flight_max"),
		"ParallelismVerdict": object(obj{
			"kind":                obj{"type": "string", "enum": parallelism.Kinds()},
			"severity":            obj{"type": "string", "enum": parallelism.Severities()},
			"message":             str,
			"tasks_max":           obj{"type": "integer"},
			"partitions":          obj{"type": "integer", "description": "The partitions the verdict is about (a count)"},
			"tasks":               obj{"type": "integer", "description": "Tasks running (workers_bound, no_reports), or that can run (unusable_task_slots)"},
			"unused":              obj{"type": "integer", "description": "Task slots no task can fill"},
			"suggested_tasks_max": obj{"type": "integer"},
			"task_ids":            obj{"type": "array", "items": obj{"type": "integer", "format": "int32"}, "description": "The tasks the verdict is about"},
			"workers":             obj{"type": "integer", "description": "Workers running the connector's tasks"},
			"live_workers":        obj{"type": "integer", "description": "Registered workers"},
			"topic":               str,
			"partition":           obj{"type": "integer", "format": "int32"},
			"share":               obj{"type": "number"},
			"records_per_second":  obj{"type": "number"},
			"max_lag_seconds":     obj{"type": "number"},
			"lag_records":         obj{"type": "integer", "format": "int64", "description": "The paused partitions' backlog (paused)"},
			// Capacity advice (docs/partitions.md).
			"worker_id":                 str,
			"worker_cpu_cores":          obj{"type": "number"},
			"worker_cpus":               obj{"type": "integer"},
			"wait_source_fraction":      obj{"type": "number"},
			"wait_target_fraction":      obj{"type": "number"},
			"busy_fraction":             obj{"type": "number"},
			"batch_avg_bytes":           obj{"type": "number"},
			"batch_size_bytes":          obj{"type": "integer", "format": "int64"},
			"queue_max_bytes":           obj{"type": "integer", "format": "int64"},
			"linger_ms":                 obj{"type": "number"},
			"compression_type":          str,
			"rtt_avg_ms":                obj{"type": "number"},
			"throttle_avg_ms":           obj{"type": "number"},
			"in_flight_requests":        obj{"type": "integer", "format": "int64"},
			"max_in_flight":             obj{"type": "integer"},
			"fetch_max_bytes":           obj{"type": "integer", "format": "int64"},
			"max_partition_fetch_bytes": obj{"type": "integer", "format": "int64"},
			"suggested_settings":        obj{"type": "object", "additionalProperties": str, "description": "Connector config changes the advice proposes, for PUT /connectors/{c}/config"},
		}, "kind", "severity", "message"),

		"Workers":      object(obj{"leader": obj{"type": "string", "nullable": true}, "workers": obj{"type": "array", "items": ref("Worker")}}, "leader", "workers"),
		"ServerInfo":   object(obj{"version": str, "commit": str, "kafka_cluster_id": str}, "version", "commit", "kafka_cluster_id"),
		"WorkerStatus": object(obj{"status": obj{"type": "string", "enum": []string{"healthy", "starting", "unhealthy"}}, "message": str}, "status", "message"),
		"Config":       obj{"type": "object", "additionalProperties": str},
		// Requests: values are read as Jackson reads Map<String,String>, so numbers and booleans are taken as their
		// text; objects and arrays are refused (400). A null is a validation error (400), except in a PATCH, where
		// it removes the key.
		"ConfigRequest": obj{"type": "object", "required": []string{"connector.class"}, "additionalProperties": ref("ConfigValue"),
			"properties": obj{"connector.class": obj{"type": "string", "minLength": 1}}},
		"ConfigPatch": obj{"type": "object", "additionalProperties": ref("ConfigValue")},
		"ConfigValue": obj{"nullable": true, "description": "A string; a number or boolean is stored as its text",
			"not": obj{"anyOf": []obj{{"type": "object"}, {"type": "array", "items": obj{}}}}},
		"CreateConnectorRequest": closed(object(obj{
			"name":   str,
			"config": ref("ConfigRequest"),
			"initial_state": obj{"type": "string", "description": "RUNNING (the default), PAUSED or STOPPED, in any case",
				"pattern": "^(" + anyCase("RUNNING") + "|" + anyCase("PAUSED") + "|" + anyCase("STOPPED") + ")$"},
		}, "name", "config")),
		"ConnectorTaskId": object(obj{"connector": str, "task": integer}, "connector", "task"),
		"ConnectorInfo": object(obj{
			"name":   str,
			"config": ref("Config"),
			"tasks":  obj{"type": "array", "items": ref("ConnectorTaskId")},
			"type":   obj{"type": "string", "enum": []string{"source", "sink", "unknown"}},
			"declared_by": obj{"type": "string",
				"description": "kmirror extension: the mm2.properties this connector is declared from; absent for connectors created through REST"},
			"taken_over": object(obj{"topic": str, "partitions": integer, "groups": integer, "at": obj{"type": "string", "format": "date-time"}, "message": str},
				"topic", "partitions", "at", "message"),
		}, "name", "config", "tasks", "type"),
		"ConnectorState": object(obj{
			"state":     str,
			"worker_id": str,
			"trace":     obj{"type": "string", "description": "Present only when not empty"},
			"version":   obj{"type": "string", "description": "The running plugin's version (KIP-891); absent when undefined"},
		}, "state", "worker_id"),
		"TaskState": object(obj{
			"id":        integer,
			"state":     str,
			"worker_id": str,
			"trace":     obj{"type": "string", "description": "Present only when not empty"},
			"version":   obj{"type": "string", "description": "The running plugin's version (KIP-891); absent when undefined"},
		}, "id", "state", "worker_id"),
		"ConnectorStateInfo": object(obj{
			"name":      str,
			"connector": ref("ConnectorState"),
			"tasks":     obj{"type": "array", "items": ref("TaskState")},
			"type":      obj{"type": "string", "enum": []string{"source", "sink", "unknown"}},
		}, "name", "connector", "tasks", "type"),
		"ConnectorExpansion": object(obj{"status": ref("ConnectorStateInfo"), "info": ref("ConnectorInfo")}),
		"TaskInfo":           object(obj{"id": ref("ConnectorTaskId"), "config": ref("Config")}, "id", "config"),
		"ActiveTopics":       object(obj{"topics": strings}, "topics"),
		"ConnectorOffset": closed(object(obj{
			"partition": obj{"type": "object", "additionalProperties": true, "nullable": true},
			"offset":    obj{"type": "object", "additionalProperties": true, "nullable": true},
		}, "partition", "offset")),
		"ConnectorOffsets": object(obj{"offsets": obj{"type": "array", "items": ref("ConnectorOffset")}}, "offsets"),
		// What PATCH .../offsets takes: at least one entry (Connect answers 400 "Partitions / offsets need to be
		// provided" otherwise) and nothing beside offsets.
		"ConnectorOffsetsRequest": closed(object(obj{"offsets": obj{"type": "array", "minItems": 1, "items": ref("ConnectorOffset")}}, "offsets")),
		"Message":                 object(obj{"message": str}, "message"),
		"PluginInfo": object(obj{
			"class":   str,
			"type":    obj{"type": "string", "enum": []string{"source", "sink", "converter", "header_converter", "transformation", "predicate"}},
			"version": str,
		}, "class", "type"),
		"ConfigKeyInfo": object(obj{
			"name":          str,
			"type":          str,
			"required":      obj{"type": "boolean"},
			"default_value": nullableStr,
			"importance":    str,
			"documentation": str,
			"group":         nullableStr,
			"width":         str,
			"display_name":  str,
			"dependents":    strings,
			"order":         integer,
		}, "name", "type", "required", "default_value", "importance", "documentation", "group", "width", "display_name", "dependents", "order"),
		"ConfigValueInfo": object(obj{
			"name":               str,
			"value":              nullableStr,
			"recommended_values": strings,
			"errors":             strings,
			"visible":            obj{"type": "boolean"},
		}, "name", "value", "recommended_values", "errors", "visible"),
		"ConfigInfo": object(obj{
			"definition": obj{"allOf": []obj{ref("ConfigKeyInfo")}, "nullable": true},
			"value":      obj{"allOf": []obj{ref("ConfigValueInfo")}, "nullable": true},
		}, "definition", "value"),
		"ConfigInfos": object(obj{
			"name":        str,
			"error_count": integer,
			"groups":      strings,
			"configs":     obj{"type": "array", "items": ref("ConfigInfo")},
		}, "name", "error_count", "groups", "configs"),
		"LoggerLevel": object(obj{"level": str, "last_modified": obj{"type": "integer", "format": "int64", "nullable": true}}, "level", "last_modified"),
		// Read as Jackson reads Map<String,String>: other keys are ignored but must hold scalars too, and a number is
		// taken as its text (then an invalid level, 404).
		"LevelRequest": obj{"type": "object", "required": []string{"level"}, "additionalProperties": ref("ConfigValue"),
			"properties": obj{"level": obj{"not": obj{"anyOf": []obj{{"type": "object"}, {"type": "array", "items": obj{}}}},
				"description": "OFF, FATAL, ERROR, WARN, INFO, DEBUG or TRACE, in any case; another value is answered with 404"}}},
	}
}

func ref(name string) obj { return obj{"$ref": "#/components/schemas/" + name} }

func object(properties obj, required ...string) obj {
	o := obj{"type": "object", "properties": properties}
	if len(required) > 0 {
		o["required"] = required
	}
	return o
}

func operation(id, summary string, params []obj, body obj, responses obj) obj {
	o := obj{"operationId": id, "summary": summary, "responses": responses}
	if len(params) > 0 {
		o["parameters"] = params
	}
	if body != nil {
		o["requestBody"] = body
	}
	return o
}

func deprecated(op obj) obj {
	op["deprecated"] = true
	return op
}

func pathParameter(name, description string, schema obj) obj {
	return obj{"name": name, "in": "path", "required": true, "description": description, "schema": schema}
}

// queryFlag is a Boolean query parameter as Jersey reads it (Boolean.valueOf): "true" in any case is true, any
// other value false, so its schema is a string.
func queryFlag(name, description string) obj {
	return obj{"name": name, "in": "query", "required": false, "schema": obj{"type": "string"},
		"description": description + `. "true" in any case is true; any other value, "null" included, is false.`}
}

// closed forbids members an object schema does not name: the server refuses them (400) where Connect's Jackson
// entities have no such property.
func closed(schema obj) obj {
	schema["additionalProperties"] = false
	return schema
}

// anyCase is a pattern matching word in any case, written without (?i), which ECMA-262 patterns lack.
func anyCase(word string) string {
	var b strings.Builder
	for _, r := range word {
		b.WriteString("[" + string(r) + string(unicode.ToLower(r)) + "]")
	}
	return b.String()
}

func jsonBody(description string, schema obj) obj {
	return obj{"description": description, "required": true, "content": obj{"application/json": obj{"schema": schema}}}
}

func response(description string, schema obj) obj {
	r := obj{"description": description}
	if schema != nil {
		r["content"] = obj{"application/json": obj{"schema": schema}}
	}
	return r
}

func errorResponse(description string) obj { return response(description, ref("ErrorMessage")) }

func withTaskConfigsFrom(r obj) obj {
	r["headers"] = obj{connectors.TaskConfigsHeader: obj{
		"description": connectors.TaskConfigsPrevious + ": the connector has not planned its tasks with its current config (it is starting, or it cannot: its status says why), so these are the task configs of its previous config, which the tasks still run; " + connectors.TaskConfigsCurrent + " otherwise",
		"schema":      obj{"type": "string", "enum": []string{connectors.TaskConfigsCurrent, connectors.TaskConfigsPrevious}}}}
	return r
}

func withLocation(r obj) obj {
	r["headers"] = obj{"Location": obj{"description": "The connector's URL", "schema": obj{"type": "string", "format": "uri"}}}
	return r
}
