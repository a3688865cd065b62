package api

import "strings"

// The failover operation's part of the OpenAPI document (failover_handlers.go, docs/failover.md).

func withFailoverPaths(paths obj) obj {
	paths["/connectors/{connector}/failover"] = operationPaths("failover", "over", "kmirror extension: fail over from the source cluster to the target: stop the source connector once it has replicated "+
		"what the source held (or at once when the source does not answer), commit every followed group's translated offsets on the target "+
		"(groups with members there are reported, not touched), and keep a report per partition and group. Answers at once; GET shows the progress and the report.",
		obj{"description": "Optional settings; an empty body takes the defaults.", "required": false,
			"content": obj{"application/json": obj{"schema": ref("FailoverRequest")}}},
		"A failover of the connector is already under way")
	paths["/connectors/{connector}/failback"] = operationPaths("failback", "back", "kmirror extension, on the B→A MirrorSourceConnector after a failover of the A→B one (failover_of): start it from "+
		"the end offsets of B's own topics the failover recorded, so that only what was produced on B since is copied to A; then, as a failover, "+
		"drain, stop it and commit the groups' positions on A (positions in topics that came from A translated back through the A→B offset map). "+
		"Answers at once; GET shows the progress and the report.",
		jsonBody("failover_of is required; the other fields as for a failover.", ref("FailbackRequest")),
		"A failover or failback of the connector is already under way")
	return paths
}

// operationPaths is the path of a failover or failback (kind; way, the word after "failed"): POST files one,
// described by summary and taking body, answered by conflict while one is under way; GET shows the latest.
func operationPaths(kind, way, summary string, body obj, conflict string) obj {
	connector := pathParameter("connector", "The MirrorSourceConnector of the flow (A→B). Percent-encode '/' as %2F.", obj{"type": "string"})
	id := strings.ToUpper(kind[:1]) + kind[1:]
	return obj{
		"post": operation("start"+id, summary, []obj{connector}, body, obj{
			"202": withFailoverLocation(response("Filed: a worker runs it", ref("Failover"))),
			"400": errorResponse("A field is invalid (the message names it)"),
			"404": errorResponse("Unknown connector, or a connector that is not a MirrorSourceConnector"),
			"409": errorResponse(conflict),
		}),
		"get": operation("get"+id, "kmirror extension: the connector's latest "+kind+", its state and, once it ended, its report", []obj{connector}, nil, obj{
			"200": response("The latest "+kind, ref("Failover")),
			"404": errorResponse("Unknown connector, a connector that is not a MirrorSourceConnector, or one that never failed " + way),
		}),
	}
}

func withFailoverLocation(r obj) obj {
	r["headers"] = obj{"Location": obj{"description": "Where to poll the operation", "schema": obj{"type": "string"}}}
	return r
}

func withFailoverSchemas(schemas obj) obj {
	str := obj{"type": "string"}
	i32 := obj{"type": "integer", "format": "int32"}
	i64 := obj{"type": "integer", "format": "int64"}
	nullableI64 := obj{"type": "integer", "format": "int64", "nullable": true}
	instant := obj{"type": "string", "format": "date-time"}
	array := func(items obj) obj { return obj{"type": "array", "items": items} }
	schemas["FailoverRequest"] = closed(object(obj{
		"checkpoint_connector": obj{"type": "string", "nullable": true, "description": "The MirrorCheckpointConnector whose groups move; default: every one of the source connector's aliases"},
		"drain_timeout_ms":     obj{"type": "integer", "format": "int64", "minimum": 0, "maximum": maxDrainTimeout.Milliseconds(), "nullable": true, "description": "How long to wait for the drain (default 60000); 0 stops the source connector at once"},
	}))
	schemas["FailbackRequest"] = closed(object(obj{
		"failover_of":          obj{"type": "string", "description": "The A→B MirrorSourceConnector whose succeeded failover this undoes"},
		"checkpoint_connector": obj{"type": "string", "nullable": true, "description": "The B→A MirrorCheckpointConnector whose groups move back; default: every one of the aliases"},
		"drain_timeout_ms":     obj{"type": "integer", "format": "int64", "minimum": 0, "maximum": maxDrainTimeout.Milliseconds(), "nullable": true},
	}, "failover_of"))
	schemas["Failover"] = object(obj{
		"id": i64, "kind": obj{"type": "string", "enum": []string{"failover", "failback"}}, "connector": str,
		"failover_of":          obj{"type": "string", "description": "A failback: the A→B connector whose failover it undoes"},
		"checkpoint_connector": obj{"type": "string", "nullable": true},
		"drain_timeout_ms":     i64,
		"state":                obj{"type": "string", "enum": []string{"pending", "running", "succeeded", "failed"}},
		"phase":                obj{"type": "string", "nullable": true, "description": "What a running operation is doing: starting (a failback), draining, stopping or groups"},
		"error":                obj{"type": "string", "nullable": true, "description": "Why it failed"},
		"requested_at":         instant,
		"finished_at":          obj{"type": "string", "format": "date-time", "nullable": true},
		"report":               obj{"allOf": []obj{ref("FailoverReport")}, "nullable": true, "description": "Once it ended (a failed one may have none)"},
	}, "id", "kind", "connector", "checkpoint_connector", "drain_timeout_ms", "state", "phase", "error", "requested_at", "finished_at", "report")
	schemas["FailoverReport"] = object(obj{
		"kind": obj{"type": "string", "enum": []string{"failover", "failback"}}, "connector": str, "source_alias": str, "target_alias": str,
		"failover_of":            str,
		"started_from":           array(object(obj{"topic": str, "partition": i32, "offset": i64}, "topic", "partition", "offset")),
		"checkpoint_connectors":  array(str),
		"source_reachable":       obj{"type": "boolean", "description": "The source cluster answered; false: nothing waited for it, and its ends are those last seen"},
		"drained":                obj{"type": "boolean", "description": "Everything the source held when the failover began was replicated before the stop"},
		"source_stopped":         obj{"type": "boolean", "description": "The source connector is STOPPED and its tasks committed their last offsets"},
		"started_at":             instant,
		"stopped_at":             instant,
		"partitions":             array(ref("FailoverPartition")),
		"not_replicated_offsets": obj{"type": "integer", "format": "int64", "description": "The offsets of every not_replicated range, summed"},
		"groups":                 array(ref("FailoverGroup")),
		"target_ends":            array(object(obj{"topic": str, "partition": i32, "offset": i64}, "topic", "partition", "offset")),
	}, "kind", "connector", "source_alias", "target_alias", "checkpoint_connectors", "source_reachable", "drained", "source_stopped", "started_at", "stopped_at",
		"partitions", "not_replicated_offsets", "groups", "target_ends")
	schemas["FailoverPartition"] = object(obj{
		"source_topic": str, "partition": i32, "target_topic": str,
		"replicated_to":  obj{"type": "integer", "format": "int64", "description": "Every source record before this offset is on the target"},
		"source_end":     nullableI64,
		"end_basis":      obj{"type": "string", "enum": []string{"listed", "last_seen", "unknown"}},
		"not_replicated": obj{"nullable": true, "allOf": []obj{object(obj{"from": i64, "to": i64}, "from", "to")}, "description": "Source offsets (inclusive) not on the target"},
	}, "source_topic", "partition", "target_topic", "replicated_to", "source_end", "end_basis", "not_replicated")
	schemas["FailoverGroup"] = object(obj{
		"group": str, "action": obj{"type": "string", "enum": []string{"committed", "active", "failed", "none"}},
		"target_state": str, "target_members": i32, "error": str,
		"partitions": array(object(obj{
			"source_topic": str, "partition": i32, "source_offset": i64,
			"position_from": obj{"type": "string", "enum": []string{"read", "last_read"}},
			"read_at":       instant, "target_topic": str, "target_offset": nullableI64,
			"exact":                  obj{"type": "boolean"},
			"basis":                  obj{"type": "string", "enum": []string{"offset_map", "offset_syncs", "none"}},
			"committed":              obj{"type": "boolean"},
			"previous_target_offset": nullableI64,
		}, "source_topic", "partition", "source_offset", "position_from", "read_at", "target_topic", "target_offset", "exact", "basis", "committed", "previous_target_offset")),
	}, "group", "action", "target_state", "target_members", "partitions")
	return schemas
}
