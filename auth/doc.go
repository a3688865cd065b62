// Package auth authenticates REST requests and decides what each caller may do.
//
// # Who the callers are
//
// The operator lists them in a users file (--rest-users-file), one per line:
//
//	# name:role:hash
//	alice:admin:$2a$12$...                       a person: HTTP basic auth, bcrypt hash
//	bob:read-only:$argon2id$v=19$m=65536,t=3,p=4$... a person: HTTP basic auth, argon2id hash (PHC string)
//	prometheus:read-only:sha256:9f86d0...         a program: "Authorization: Bearer <token>", SHA-256 of the token
//
// Passwords are hashed slowly (bcrypt or argon2id) because people choose guessable ones; bearer tokens are
// 256 random bits made by `kmirror passwd --token`, so one SHA-256 is as safe for them and costs nothing per
// request. A slow hash per request would cost tens of milliseconds of CPU each time the dashboard polls, so a
// password that verified once is remembered, as a keyed SHA-256 of it, until the file changes.
//
// A refused password costs the same whoever it names: it is also checked against a decoy hash of every other
// cost (scheme and parameters) in the file, so an unknown name, a bcrypt user and an argon2id user take equally
// long to refuse. Each client (IP address; a /64 for IPv6) has one password check running at a time, so a
// client sending many guesses at once queues behind itself and not in front of others, and a budget of failed
// ones (Config.FailureBurst, then one per Config.FailureInterval): past it the client gets 429 Too Many
// Requests with Retry-After, and nothing is hashed. Clients behind one reverse proxy share its budget.
//
// The file is re-read when its bytes change (see package filewatch); a file that no longer parses keeps the
// previous users, and says so in the log once.
//
// # What each role may do
//
// admin may do everything. read-only may send GET and HEAD requests — everything the dashboard reads — and
// nothing else: any other method gets 403 with Connect's JSON error body, naming the user, the role and the
// request. A request that is open (GET /health for probes, and /metrics when the operator opens it) needs no
// credentials.
//
// # What a refused request looks like
//
// Kafka Connect's BasicAuthSecurityRestExtension (JaasBasicAuthFilter) answers a request it cannot
// authenticate with 401 and the plain-text body "User cannot access the resource."; kmirror answers the same,
// and adds the WWW-Authenticate challenge Connect leaves out (RFC 9110 requires it with a 401, and without it a
// browser opening the dashboard shows an error instead of asking for a password).
//
// # How it is wired
//
// [Authenticator.Authenticate] wraps the whole listener: it establishes who is calling and puts a [Principal]
// into the request's context. [Authorize] wraps the REST API's handler, which both the listener and the
// dashboard reach: the dashboard calls the API in-process with the browser request's context, so the same
// principal, and the same rule, applies to a button on a page as to a curl.
package auth
