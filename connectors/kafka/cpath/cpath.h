/*
 * cpath.h: the C half of package cpath (see doc.go). One cp_pipe is one replication pipeline: a consumer on
 * the source, a producer on the target, and the bookkeeping of what moved between them since the Go side
 * last looked (cp_out). Every function except cp_interrupt and cp_cached_watermarks must be called from one
 * thread at a time (the Go side calls them from the pipeline's goroutine; between cp_run_submit and
 * cp_run_result the pipeline's own thread runs on its behalf).
 */
#ifndef KMIRROR_CPATH_H
#define KMIRROR_CPATH_H

#include <stdint.h>

#define CP_NO_TS INT64_MIN

/* Kinds of cp_ack. */
enum { CP_ACK_MAPPED = 0, CP_ACK_UNMAPPED = 1, CP_ACK_DROPPED = 2 };

/* Records of one partition handed to the producer during one call. */
typedef struct {
        int32_t part; /* index of the partition, in the order of cp_pipe_new's parts */
        int32_t records;
        int64_t first, last; /* source offsets of the first and last record */
        int64_t next;        /* the source offset the consumer should return next */
        int64_t value_bytes; /* value bytes (MM2's byte count) */
        int64_t size_bytes;  /* key + value + header bytes */
        int64_t last_ts;     /* source timestamp of the last record, Unix ms, or CP_NO_TS */
        int64_t first_ts;    /* source timestamp of the first record */
        int64_t rereads;     /* 1 when the partition's first record lay past its start and it is read again */
        /* Records the cycle guard did not copy (cp_set_provenance): an entry counts either records handed to the
         * producer or skipped ones, never both, so that Go applies them in the order they were consumed; first
         * and last are then the skipped records' offsets. */
        int64_t skipped;
} cp_fwd;

/* A run of delivery reports of one partition, in produce order. MAPPED: source offsets first..last were
 * written at target offsets target..target+(last-first), both contiguous. UNMAPPED: records written without
 * a target offset, counted as acknowledged (a confirmed delivery of this producer came before, see doc.go).
 * DROPPED: reports on a partition whose delivery failed earlier in the pipeline: they change nothing. */
typedef struct {
        int32_t part;
        int32_t kind;
        int64_t first, last, target;
        int64_t records;
        int64_t size_bytes;
        int64_t last_ts;
} cp_ack;

/* An error: a failed delivery (the first of its partition), a consumer error (part -1: client-wide), or an
 * error event of the producer (part -1). fatal: 1 for librdkafka's fatal error (code and msg are then the
 * underlying error rd_kafka_fatal_error names), -1 for a record the producer refused. */
typedef struct {
        int32_t part;
        int32_t code;
        int64_t offset;
        int32_t unconfirmed; /* delivery reported written without an offset before any confirmed one */
        int32_t fatal;
        char msg[256];
} cp_err;

/* A librdkafka log line (syslog level). */
typedef struct {
        int32_t level;
        int32_t producer;
        char fac[32];
        char msg[480];
} cp_log;

typedef struct {
        cp_fwd *fwd;
        int nfwd, capfwd;
        cp_ack *acks;
        int nacks, capacks;
        cp_err *fails;
        int nfails, capfails;
        cp_err *cerrs;
        int ncerrs, capcerrs;
        cp_err *perrs; /* the producer's error events */
        int nperrs, capperrs;
        cp_log *logs;
        int nlogs, caplogs;
        int64_t consumed;       /* records (and errors) the consumer returned */
        int64_t inflight_bytes; /* produced and not yet reported, after the call */
        int64_t open_batches;   /* partitions with records produced and not yet reported, after the call */
        int32_t paced;          /* the call waited for deliveries instead of consuming */
        int64_t target_wait_ns; /* time spent waiting for the target: pacing, a full producer queue */
        int64_t source_wait_ns; /* time the steps that consumed nothing waited for the source */
        int64_t pending;        /* records consumed and not handed to the producer yet (a full queue) */
        int32_t stats;          /* new statistics are waiting (cp_take_stats) */
} cp_out;

typedef struct cp_pipe cp_pipe;

/* props: NULL-terminated key, value, key, value... for the consumer and the producer. parts: nparts
 * source topics, partitions and remote topics. Returns NULL with errstr set on failure. */
cp_pipe *cp_pipe_new(char **cprops, char **pprops, int nparts, char **topics, int32_t *partitions, char **remotes,
                     int64_t pace_bytes, int64_t open_latency_ns, char *errstr, int errstr_size);
/* cp_pipe_destroy destroys the pipeline. It returns how many consumed records the producer never gave back:
 * then both clients are left behind (their memory and threads stay), since destroying either would wait for
 * ever. */
int64_t cp_pipe_destroy(cp_pipe *p);

/* cp_assign assigns every partition at starts[i] (an offset, RDK_OFFSET_BEGINNING or RDK_OFFSET_END). */
int cp_assign(cp_pipe *p, int64_t *starts, char *errstr, int errstr_size);
/* cp_step serves delivery reports and, unless paced, consumes one batch (up to max records, waiting up to
 * timeout_ms) and produces it — only within valid_ns of the call (< 0: no bound): records in hand past that
 * stay for a later step. */
cp_out *cp_step(cp_pipe *p, int timeout_ms, int max, int64_t valid_ns);
/* cp_run steps (cp_step is cp_run with a budget of 0) for up to budget_ns, with valid_ns counted from the
 * call, and returns early after a step that consumed nothing and holds nothing (the source is idle), once
 * valid_ns has passed, or when something must reach the caller at once: a failure, a consumer or producer
 * error, statistics, log lines, an interrupt. The output gathers every step's. */
cp_out *cp_run(cp_pipe *p, int timeout_ms, int max, int64_t valid_ns, int64_t budget_ns);
/* cp_runner_start starts the pipeline's own thread for runs, once per pipeline; it writes one byte to fd (a
 * pipe's write end) whenever a run it was given ends. Returns 0 or the error of pthread_create. cp_run_submit
 * gives it a run, as cp_run's arguments say (valid_ns counted from the submit), and returns at once;
 * cp_run_result waits for the run to end and returns its output. Between the two the caller calls nothing on
 * the pipeline but cp_interrupt, cp_purge, cp_watermarks and cp_cached_watermarks. cp_pipe_destroy stops the
 * thread. */
int cp_runner_start(cp_pipe *p, int fd);
void cp_run_submit(cp_pipe *p, int timeout_ms, int max, int64_t valid_ns, int64_t budget_ns);
cp_out *cp_run_result(cp_pipe *p);
/* cp_producer_ready serves the producer for up to timeout_ms until it can send: an idempotent producer once
 * it has its producer id, any other at once. Returns 1 when it can, 0 when the time ran out or the pipeline
 * was interrupted. Errors meanwhile are in the next output. */
int cp_producer_ready(cp_pipe *p, int timeout_ms);
/* cp_serve serves delivery reports and callbacks for up to timeout_ms, consuming nothing. */
void cp_serve(cp_pipe *p, int timeout_ms);
/* cp_flush waits up to timeout_ms for outstanding deliveries; returns how many are left. */
int cp_flush(cp_pipe *p, int timeout_ms);
cp_out *cp_out_of(cp_pipe *p);
void cp_out_reset(cp_pipe *p);
int cp_purge(cp_pipe *p, int in_flight);
int cp_outstanding(cp_pipe *p);
void cp_interrupt(cp_pipe *p);
int cp_seek(cp_pipe *p, int part, int64_t offset, char *errstr, int errstr_size);
int cp_watermarks(cp_pipe *p, int part, int timeout_ms, int64_t *low, int64_t *high);
int cp_cached_watermarks(cp_pipe *p, int part, int64_t *low, int64_t *high);
/* cp_positions fills pos[i] with partition i's position (-1 unknown). */
int cp_positions(cp_pipe *p, int64_t *pos);
/* cp_set_provenance makes the pipeline add header name with value stamp (stamp_len bytes) to every record
 * without one, and not copy a record whose header names the target cluster: by id when both the header and
 * target_id have one, else by alias (package connectors/provenance). Called before cp_assign; the strings are
 * copied. Returns 0, or -1 out of memory. */
int cp_set_provenance(cp_pipe *p, const char *name, const char *stamp, int stamp_len, const char *target_alias,
                      const char *target_id);
/* cp_take_stats returns the newest statistics of the consumer (which 0) or producer (1), or NULL; the
 * caller frees it with free(). */
char *cp_take_stats(cp_pipe *p, int which);
const char *cp_version(void);

#endif
