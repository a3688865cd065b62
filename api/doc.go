// Package api is kmirror's Kafka Connect REST API: the paths, JSON shapes, status codes and error texts of a
// Connect worker (Apache Kafka 4.1), so that curl users, kcctl, dashboards and the Terraform providers drive
// kmirror as they drive Connect running MirrorMaker 2.
//
// # What the API does and does not do
//
// The API reads and writes desired state in the store and never drives the runtime: a create, a pause or a
// restart request is one store call (one transaction, which NOTIFYs), and whichever worker owns the work
// reacts. Any kmirror process can therefore answer any request, and there is no request forwarding; Connect's
// forward query parameter is accepted and ignored. A rejected request leaves no trace: validation happens
// before the write, or inside the write's transaction (PATCH config) so that the transaction rolls back.
// State transitions (RUNNING after a create, RESTARTING to RUNNING, ...) belong to the runtime.
//
// # Paths
//
// Routing is on the escaped path with one trailing slash ignored, and each path segment is unescaped on its
// own, so a connector named "a/b" is /connectors/a%2Fb. Every non-2xx answer is Connect's error body
// {"error_code":N,"message":"..."}, including Jersey's own: unknown routes (404 "HTTP 404 Not Found", also
// for a task id that is not an integer), wrong methods (405, with Allow), non-JSON request bodies on the
// Connect resources (415) and Accept headers that exclude JSON (406). GET /health answers with WorkerStatus
// whatever its code. Connect's worker-to-worker endpoints (POST /connectors/{c}/tasks, PUT
// /connectors/{c}/fence) do not exist (404). GET /openapi.json describes the whole API.
//
// Bodies are read as Jackson reads them: JSON numbers and booleans given where Connect expects strings are
// stored as their text, so {"tasks.max": 1} is stored as "1"; config maps are returned exactly as stored.
//
// # Deliberate differences from Connect
//
//   - Malformed JSON and wrongly typed bodies (an object as a config value, unknown members in the POST
//     envelope or in offsets, {"offsets":{}}, a missing config, an unknown initial_state) get 400 with a
//     message naming what is wrong. Connect lets Jackson fail and answers 500.
//   - Request bodies over 1 MiB get 413; Connect has no limit.
//   - An unknown connector.class gets Connect's text ("Failed to find any class that implements Connector and
//     which name matches X, available connectors are: PluginDesc{...}, ...") with 400. Connect 4.1.1 also answers
//     400 on create and update but prefixes "org.apache.kafka.connect.errors.ConnectException: "; kmirror leaves
//     the prefix out, so kcctl's test for the message's start (which lists the plugins) still works. On the
//     validate endpoint, where Connect's message carries the exception class (BadRequestException) and the
//     status is 500 for every failure that stops validation, kmirror keeps the text with its class prefix and
//     answers 400, for a missing connector.class as well.
//   - A connector without source.cluster.bootstrap.servers or target.cluster.bootstrap.servers (whichever its
//     clients need) is refused at create and update (400, naming each missing key). Connect 4.1.1 validates such
//     a config with no errors, creates it (201) and the connector then fails. The validate endpoint reports the
//     same errors kmirror's create would, as entries without a definition (MM2 defines no such keys), so a dry
//     run (kcctl apply --dry-run) predicts the create's answer.
//   - The names "." and ".." are refused (400, an error on the name key, also on the validate endpoint): clients
//     resolve such a path segment, percent-encoded or not (/connectors/.. is /), so such a connector could never
//     be read, changed or deleted. Connect accepts them.
//   - GET /connector-plugins?connectorsOnly=false lists the three MM2 connectors and ByteArrayConverter (as
//     converter and as header_converter, with its config definition at /connector-plugins/ByteArrayConverter/config):
//     what kmirror accepts. Connect 4.1.1 also lists BooleanConverter, JsonConverter, StringConverter,
//     SimpleHeaderConverter, its transformations and its predicates; kmirror replicates bytes and runs no
//     transformation or predicate, so validation rejects them and the list leaves them out.
//   - Offsets rejected by the Mirror connectors' alterOffsets (cluster, topic and group must be strings,
//     partition an int >= 0, offset an int >= 0, and exactly 0 for the checkpoint and heartbeat connectors),
//     or by Connect's check that offsets hold only primitive values, get 400 with Connect's texts instead of
//     500. When several entries are wrong, the first in request order is reported (Connect's order is a
//     HashMap's).
//   - On a worker with exactly-once source support, PATCH and DELETE of a MirrorSourceConnector's offsets are
//     filed in the store and applied by the worker holding the STOPPED connector (offsets topic on the target,
//     then PostgreSQL); the answer waits for that, up to 60 s, and a failure is a 500 naming its cause (Connect
//     also answers 500, with its own texts).
//   - Location headers escape the whole name as one path segment ('/' as %2F), so they route back to the
//     connector; Connect leaves '/' unescaped.
//   - PUT /connectors/{c}/topics/reset answers 202 for an unknown connector, like Connect, which checks nothing.
//     Topic tracking cannot be disabled, so the 403 answers do not exist. As in Connect, the topics are those
//     the connector's tasks write: the remote topics (source), heartbeats (heartbeat), <source>.checkpoints.internal
//     (checkpoint); the offset-syncs topic is written outside Connect's producer and is not listed. After a reset,
//     Connect lists a topic again at the next write to it; kmirror's heartbeat and checkpoint tasks re-record
//     their topic at most every 10 s while they write, so it is listed again at their first write at least 10 s
//     after they last recorded it, and the source tasks list theirs when they next start (a restart, a config
//     change, a rebalance).
//   - Restart with includeTasks or onlyFailed computes the plan before queuing the request, so a connector
//     without status (404 "Status for connector X not found") gets no restart queued; Connect queues it anyway.
//   - The admin logger endpoints accept OFF, FATAL, ERROR, WARN, INFO, DEBUG and TRACE in any case (log4j2's
//     ALL is refused as an invalid level), and treat any capitalisation of "root" as the root logger. They
//     answer 404 when the server provides no Loggers, as Connect does with admin.listeners set but empty.
//     GET /admin/loggers lists root and every logger the worker created or a PUT created, as Connect 4.x
//     lists its log4j2 context, but keeps the loggers at OFF, which Connect leaves out. A PUT reaches the
//     descendants by dotted name (kmirror.task does not reach kmirror.tasks; Connect matches any name starting
//     with the text). A worker that starts after a cluster-scope PUT applies the stored levels, oldest first;
//     Connect ignores the changes written before the worker started.
//   - The "version" of the status objects (KIP-891) is the version of the MM2 connectors built into kmirror
//     (4.1.1), which connector.plugin.version cannot change, rather than one each worker records: the store keeps
//     none. Workers of different kmirror releases that implement different MM2 versions would all be reported
//     with the answering worker's.
//   - Internal failures do not show their text. Connect answers 500 with the exception's message; kmirror's
//     messages come from the store, and during a database outage they carry the database's host, port, user and
//     name. While the database cannot be reached (store.IsUnavailable), requests that need it get 503 with
//     Retry-After: 5 and "kmirror cannot reach its database; try again shortly"; any other internal failure gets
//     500 "Internal server error while handling <method> <path>; see the worker's log". The error goes to the
//     log, identical ones at most once per 10 s with the number of repeats. /health keeps Connect's unhealthy
//     text and adds only the cause ("Database unreachable.").
//   - With --rest-users-file (package auth, wired by server), a request without valid credentials gets Connect's
//     BasicAuthSecurityRestExtension answer, 401 "User cannot access the resource." in plain text, plus the
//     WWW-Authenticate challenges (Basic and Bearer) Connect does not send, which browsers need to ask for a
//     password. Connect has no roles; kmirror's read-only role gets 403 with the error body on anything but GET
//     and HEAD. /health needs no credentials (Connect's extension guards it too, which breaks probes). A
//     read-only caller may not send ?revealSecrets=true (403).
//   - Every client secret written in a connector or task config reads "[hidden]" in every response, admins'
//     included (shownConfig); Connect returns PASSWORD values as stored. An admin (anyone while authentication
//     is off) reads them as stored with ?revealSecrets=true on the GETs that return configs. A secret written
//     back as "[hidden]" by PUT or PATCH keeps the stored value; one that stands for nothing stored is a 400
//     naming the key (keepStoredSecrets).
//   - GET /connectors/{c}/notices is a kmirror extension: the typed notices behind the status traces (kind,
//     message, topic, partition, first and last offset), kept out of the status objects so that strict Connect
//     clients see Connect's shape there.
//   - GET /workers is a kmirror extension (Connect has none): the members, the leader, heartbeat ages, and the
//     units each worker is assigned or still hands over.
//   - GET /connectors/{c}/groups and GET /connectors/{c}/groups/{group}/offsets are kmirror extensions for
//     failover (docs/failover.md), served for a MirrorCheckpointConnector only: the consumer groups it
//     translates (partitions, how many translate inexactly, when their offsets were last read on the source and
//     that age in ms), and per source partition the group's committed source offset, the target topic and offset
//     to resume from (null when untranslatable), whether that is exact, its basis (offset_map: kmirror's exact
//     offset ranges; offset_syncs: MM2's offset syncs, approximate but never ahead; none), the commit metadata,
//     read_at and age_ms, replicated_at, and whether the checkpoint is on the checkpoints topic. Instants are
//     RFC 3339 UTC with milliseconds. A group id is one path segment, percent-encoded like a connector name.
//     404s: Connect's "Connector X not found", a connector of another class (the message says so), a group the
//     connector has no translation for (the message names both).
//   - GET /connectors/{c}/partitions is a kmirror extension for a MirrorSourceConnector (docs/partitions.md):
//     per source partition, as its task last reported it (table partition_stats, every ~2 s), the task and
//     worker, replicated and end offsets, lag in records and seconds, records/s, bytes/s, its share of the
//     connector's records/s, its status, and whether the report is stale (older than 10 s by the database's
//     clock: then its status is at least stop and its rates count nowhere); per task of the current task set,
//     its state, worker, partition count and rates; totals; and verdicts on the parallelism, each a kind, a
//     severity and a message with the figures it rests on (unusable task slots, stragglers, bounds by
//     tasks.max, by the workers or by each task's pipeline, stale or missing reports, caught up). The verdicts are a pure function of the response
//     (partitions_verdicts.go), so the rules are table-tested apart from the store. A connector whose tasks
//     have not reported answers 200 with an empty by_partition and a no_reports verdict. 404s as for the
//     group endpoints: "Connector X not found", or a connector of another class.
//
// # The OpenAPI document
//
// GET /openapi.json describes what the server takes and answers: query flags are strings read as Jersey's
// Boolean.valueOf reads them ("true" in any case is true, anything else, "null" included, false), unknown
// expand values and logger scopes are allowed, config values may be any JSON scalar (stored as text), and the
// forms the server refuses (objects or arrays as values, unknown members, an empty offsets list, a create or
// replace without connector.class) are refused by the schemas too. TestOpenAPIDocumentMatchesServer checks real
// requests and answers against it with kin-openapi's openapi3filter.
//
// Messages that print a Java map ("Connector config {...} contains no connector type", the Mirror offset
// errors) print it in java.util.HashMap iteration order, as Connect does (see javafmt.go).
package api
