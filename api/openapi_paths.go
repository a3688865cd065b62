package api

// The OpenAPI document's paths, one per route of routes.go (openapi.go builds the document).

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
