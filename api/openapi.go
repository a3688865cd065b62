package api

import (
	"net/http"
	"strings"
	"unicode"

	"github.com/kmirror/kmirror/connectors"
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
