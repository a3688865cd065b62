// Package redact hides values that must never be shown — secrets resolved from config providers — wherever
// text leaves the process: log records, status traces and notices.
//
// A connector config may take a client setting from a config provider (${env:VAR}, ${file:/path:key}); the
// REST API only ever shows the reference. The resolved value still reaches librdkafka, which writes it into
// its own texts: a bootstrap address in a connection error, every setting in a debug=conf dump. Those texts
// travel into kmirror's log and into the traces and notices the status shows. A [Values] remembers every
// value a provider resolved and replaces it with [Hidden] in any text given to it; [Values.Handler] does so for
// every record a slog handler writes.
package redact
