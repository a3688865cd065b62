// Package web is reserved for kmirror's dashboard (server-rendered pages and static assets, embedded into the
// binary). No dashboard has been built yet; until then operators use the REST API, kcctl or any Kafka Connect UI.
package web
