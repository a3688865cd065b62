/*
 * cpath.c: the record path of a source task in C (see doc.go for the contract with Go).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cpath.h"
#include "rdk.h"

#define CP_BATCH_MAX 4096

/* A source topic of the pipeline, and its remote topic's handle in the producer. */
struct cp_topic {
        char *name, *remote;
        rd_kafka_topic_t *src_rkt; /* the consumer's handle, learned from the first record */
        rd_kafka_topic_t *rkt;     /* the producer's handle of the remote topic; its opaque is this */
        int *byp;                  /* partition number -> part index, -1 */
        int nbyp;
};

struct cp_part {
        struct cp_topic *t;
        int32_t partition;
        int64_t start_at;   /* where the pipeline assigned it */
        int64_t next;       /* next source offset expected; -1 before the first record */
        int64_t first_past; /* the first record's offset when it lay past start_at and the partition is read again */
        int64_t skip_gen;   /* its records consumed in this batch or before are stale (the partition was sought) */
        int confirmed;      /* a delivery with a target offset came for it from this producer */
        int broken;         /* a delivery failed: nothing after counts */
        /* The batch gate (see gate): records of the partition produced and not yet reported, their estimated
         * size in a ProduceRequest, when (p->now) and in which step the first of them was produced, and
         * whether the batch has been kicked (sent) so that nothing may join it. */
        int64_t out_n, out_wire, started, started_step;
        int sent;
        int64_t held_pass; /* a record of this pass of the consumed batch is held: so are its later ones */
        int64_t fwd_gen, ack_gen;
        int fwd_idx, ack_idx;
};

/* A pipeline's own thread for runs (cp_runner_start): the Go side submits a run, waits for a byte on fd in
 * Go's poller, and collects the output. state moves IDLE -> ASKED (cp_run_submit) -> DONE (the run ended) ->
 * IDLE (cp_run_result); QUIT ends the thread once no run is in progress. The hand-overs under mu order every
 * access to the pipeline: the thread touches it only between ASKED and DONE, the Go side only outside. */
enum { RUN_IDLE, RUN_ASKED, RUN_DONE, RUN_QUIT };
struct cp_runner {
        pthread_t th;
        pthread_mutex_t mu;
        pthread_cond_t cv;
        int state;
        int fd;
        int timeout_ms, max;
        int64_t start, until, budget_ns;
};

struct cp_pipe {
        rd_kafka_t *c, *p;
        rd_kafka_queue_t *q;
        struct cp_topic *topics;
        int ntopics;
        struct cp_part *parts;
        int nparts;
        int64_t limit; /* pacing: bound of produced-but-undelivered bytes */
        /* The open-batch bound (see open_cap_update): partitions with a batch in the producer, the bound of
         * them, the latency it aims at, and the window over which batches completed, for their rate. */
        int64_t open, open_cap, open_latency_ns;
        int64_t rate_start, rate_done;
        double rate;
        int64_t batch_cap;   /* the batch gate's bound of a partition's batch, in estimated request bytes */
        int64_t linger_ns;   /* the producer's linger.ms */
        int64_t now, steps;  /* the current step's clock and number */
        int64_t pass;        /* passes over the consumed batch */
        int64_t inflight;
        /* lent counts the consumed messages whose values the producer holds (produce: no copy); each is
         * destroyed at its delivery report, and the consumer must not be destroyed while one is out. */
        int64_t lent;
        int64_t gen;     /* output generation: bumped by cp_out_reset */
        int64_t batches; /* consumer batches so far */
        int failed;      /* a delivery failed or a record was refused: stop producing */
        int pos, n;      /* msgs[pos..n) were consumed and not handed over yet (a full producer queue) */
        atomic_int interrupted;
        /* The idempotent producer's id (see producer_id_conf): ready once librdkafka says it has one; quiet_debug
         * when the configuration asked for no debug lines, so that those kmirror asked for stay out of the log. */
        int idempotent, quiet_debug;
        atomic_int pid_ready;
        /* produce_mu is held while a step hands records to the producer and while cp_purge purges it, from
         * any thread; purged is set under it: once the producer has been purged nothing more is produced, or a
         * record produced after the purge could be written ahead of the purged ones it follows. */
        pthread_mutex_t produce_mu;
        int purged;
        struct cp_runner *runner; /* the thread that runs cp_run_submit's runs, once started */
        /* The provenance header and cycle guard (cp_set_provenance); prov_name NULL: off. */
        char *prov_name, *prov_stamp, *prov_alias, *prov_id;
        size_t prov_name_len, prov_stamp_len, prov_alias_len, prov_id_len;
        cp_out out;
        char *stats[2];
        rd_kafka_message_t *msgs[CP_BATCH_MAX];
        int64_t msg_batch[CP_BATCH_MAX]; /* the consumer batch (p->batches) each of msgs came in */
        /* msg_part is each of msgs' part index (-1: none), read from the message while consume had just
         * brought it into the cache: a pass over held records then checks their partitions without touching
         * the messages again, which had gone cold — the first load from each held message was three quarters
         * of cp_step's own CPU (perf annotate) while the gate held records over many passes. */
        int msg_part[CP_BATCH_MAX];
};

static void *grow(void *buf, int *cap, int need, size_t elem) {
        if (need <= *cap)
                return buf;
        int n = *cap ? *cap : 16;
        while (n < need)
                n *= 2;
        void *nb = realloc(buf, (size_t)n * elem);
        if (!nb)
                abort(); /* out of memory: nothing sensible to do on the record path */
        *cap = n;
        return nb;
}

static int64_t now_ns(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* wait_target polls the producer for up to ms, counting the time as waiting for the target. */
static void wait_target(cp_pipe *p, int ms) {
        int64_t t0 = now_ns();
        rd_kafka_poll(p->p, ms);
        p->out.target_wait_ns += now_ns() - t0;
}

static cp_err *add_err(cp_err **arr, int *n, int *cap) {
        *arr = grow(*arr, cap, *n + 1, sizeof(cp_err));
        cp_err *e = &(*arr)[(*n)++];
        memset(e, 0, sizeof(*e));
        return e;
}

static void set_msg(cp_err *e, const char *msg) {
        snprintf(e->msg, sizeof(e->msg), "%s", msg ? msg : "");
}

static int part_of(struct cp_topic *t, int32_t partition) {
        if (!t || partition < 0 || partition >= t->nbyp)
                return -1;
        return t->byp[partition];
}

/* message_headers returns a message's headers, NULL when it has none. For a consumed message librdkafka
 * parses them on every call that finds none (a buffer allocated and freed each time), which at a few hundred
 * thousand records a second is a tenth of the pipeline's CPU: the record path asks once per record. */
static rd_kafka_headers_t *message_headers(const rd_kafka_message_t *m) {
        rd_kafka_headers_t *h = NULL;
        return rd_kafka_message_headers(m, &h) == RDK_ERR_NO_ERROR ? h : NULL;
}

/* The size of headers h (names and values; NULL: none), as Go's Record.Size counts them. */
static int64_t headers_size(rd_kafka_headers_t *h) {
        if (!h)
                return 0;
        int64_t n = 0;
        const char *name;
        const void *val;
        size_t size;
        for (size_t i = 0; rd_kafka_header_get_all(h, i, &name, &val, &size) == RDK_ERR_NO_ERROR; i++)
                n += (int64_t)strlen(name) + (val ? (int64_t)size : 0);
        return n;
}

static int64_t msg_ts(const rd_kafka_message_t *m) {
        int type = 0;
        int64_t ts = rd_kafka_message_timestamp(m, &type);
        return (type == 0 || ts < 0) ? CP_NO_TS : ts;
}

/* ack_into adds one delivery report of part idx to its latest run of this output, or starts a new one. */
static void ack_into(cp_pipe *p, int idx, int kind, int64_t src, int64_t target, int64_t size, int64_t ts) {
        struct cp_part *pt = &p->parts[idx];
        cp_out *o = &p->out;
        if (pt->ack_gen == p->gen) {
                cp_ack *a = &o->acks[pt->ack_idx];
                int extend = a->kind == kind;
                if (extend && kind == CP_ACK_MAPPED)
                        extend = src == a->last + 1 && target == a->target + (a->last - a->first) + 1;
                if (extend) {
                        a->last = src;
                        a->records++;
                        a->size_bytes += size;
                        a->last_ts = ts;
                        return;
                }
        }
        o->acks = grow(o->acks, &o->capacks, o->nacks + 1, sizeof(cp_ack));
        pt->ack_gen = p->gen;
        pt->ack_idx = o->nacks;
        o->acks[o->nacks++] = (cp_ack){.part = idx, .kind = kind, .first = src, .last = src, .target = target, .records = 1,
                                       .size_bytes = size, .last_ts = ts};
}

static void delivered(cp_pipe *p, const rd_kafka_message_t *m, int64_t src);

/* on_delivery reports a copied record's delivery and gives back the consumed message it was made from, whose
 * value the producer used in place (produce). */
static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque) {
        (void)rk;
        cp_pipe *p = opaque;
        rd_kafka_message_t *consumed = m->_private;
        delivered(p, m, consumed->offset);
        rd_kafka_message_destroy(consumed);
        p->lent--;
}

/* delivered applies the delivery report of the record copied from source offset src. */
static void delivered(cp_pipe *p, const rd_kafka_message_t *m, int64_t src) {
        p->inflight -= (int64_t)(m->len + m->key_len);
        int idx = part_of(rd_kafka_topic_opaque(m->rkt), m->partition);
        if (idx < 0)
                return; /* cannot happen: every produced record names a part's topic and partition */
        struct cp_part *pt = &p->parts[idx];
        if (pt->out_n > 0 && --pt->out_n == 0) {
                pt->sent = 0;
                pt->out_wire = 0;
                p->open--;
                p->rate_done++;
        }
        int64_t size = (int64_t)(m->len + m->key_len) + headers_size(message_headers(m));
        int64_t ts = msg_ts(m);
        if (pt->broken) {
                ack_into(p, idx, CP_ACK_DROPPED, src, -1, size, ts);
                return;
        }
        if (m->err == RDK_ERR_NO_ERROR && m->offset >= 0) {
                pt->confirmed = 1;
                ack_into(p, idx, CP_ACK_MAPPED, src, m->offset, size, ts);
                return;
        }
        if (m->err == RDK_ERR_NO_ERROR && pt->confirmed) {
                ack_into(p, idx, CP_ACK_UNMAPPED, src, -1, size, ts);
                return;
        }
        pt->broken = 1;
        p->failed = 1;
        cp_err *e = add_err(&p->out.fails, &p->out.nfails, &p->out.capfails);
        e->part = idx;
        e->code = m->err;
        e->offset = src;
        e->unconfirmed = m->err == RDK_ERR_NO_ERROR;
        set_msg(e, m->err ? rd_kafka_err2str(m->err) : "written without a target offset before any confirmed delivery");
}

/* on_error hands every error event of either client to Go, which decides what it means (package kafka's
 * IsAuthentication, IsFatal), as it does for confluent-kafka-go's clients: classifying here missed failed TLS
 * handshakes and refused certificates, which librdkafka reports under other codes than
 * RD_KAFKA_RESP_ERR__AUTHENTICATION. */
static void on_error(rd_kafka_t *rk, int err, const char *reason, void *opaque) {
        cp_pipe *p = opaque;
        cp_err *e = rk == p->p ? add_err(&p->out.perrs, &p->out.nperrs, &p->out.capperrs)
                               : add_err(&p->out.cerrs, &p->out.ncerrs, &p->out.capcerrs);
        e->part = -1;
        e->code = err;
        e->offset = -1;
        set_msg(e, reason);
        if (err == RDK_ERR__FATAL) {
                /* "Local: Fatal error" says nothing; the underlying error says why (a fence, a sequence gap). */
                char buf[sizeof(e->msg)];
                int code = rd_kafka_fatal_error(rk, buf, sizeof(buf));
                e->fatal = 1;
                if (code) {
                        e->code = code;
                        set_msg(e, buf);
                }
        }
}

/* on_log keeps a log line for Go (log.queue: librdkafka calls it from rd_kafka_poll, on the pipeline's
 * thread). A burst beyond CP_LOGS_MAX lines between two calls is dropped. */
#define CP_LOGS_MAX 256
static void on_log(const rd_kafka_t *rk, int level, const char *fac, const char *buf) {
        cp_pipe *p = rd_kafka_opaque(rk);
        cp_out *o = &p->out;
        if (rk == p->p && fac && buf && !strcmp(fac, "IDEMPSTATE") && strstr(buf, "-> Assigned"))
                atomic_store(&p->pid_ready, 1);
        if (rk == p->p && p->quiet_debug && level >= 7)
                return;
        if (o->nlogs >= CP_LOGS_MAX)
                return;
        o->logs = grow(o->logs, &o->caplogs, o->nlogs + 1, sizeof(cp_log));
        cp_log *l = &o->logs[o->nlogs++];
        l->level = level;
        l->producer = rk == p->p;
        snprintf(l->fac, sizeof(l->fac), "%s", fac ? fac : "");
        snprintf(l->msg, sizeof(l->msg), "%s", buf ? buf : "");
}

/* on_stats keeps librdkafka's own buffer of the document (returning 1 hands it over) instead of a copy: the
 * document has an entry for every partition of every topic the client knows — all of a topic's partitions,
 * not only the assigned ones, so megabytes per client at a thousand partitions over round-robin tasks — and
 * each copy was one more block of that size for the allocator to keep. It is NUL-terminated (librdkafka
 * writes it with snprintf). */
static int on_stats(rd_kafka_t *rk, char *json, size_t len, void *opaque) {
        (void)len;
        cp_pipe *p = opaque;
        int which = rk == p->p;
        free(p->stats[which]);
        p->stats[which] = json;
        p->out.stats = 1;
        return 1;
}

/* conf_num reads a numeric property of conf (its default when unset), or def when it cannot. */
static double conf_num(rd_kafka_conf_t *conf, const char *name, double def) {
        char buf[64];
        size_t size = sizeof(buf);
        if (rd_kafka_conf_get(conf, name, buf, &size) != RDK_CONF_OK)
                return def;
        char *end;
        double v = strtod(buf, &end);
        return end == buf ? def : v;
}

/* A record's worst-case size in a ProduceRequest beyond its key, value and headers (librdkafka's
 * RD_KAFKAP_MESSAGE_V2_MAX_OVERHEAD plus a header's own varints), and what a request needs besides its
 * records (request and record batch headers, topic name, client id), generously. */
#define CP_RECORD_OVERHEAD 48
#define CP_REQUEST_RESERVE 512

/* gate_conf takes the batch gate's bounds from the producer's configuration (see gate). */
static void gate_conf(cp_pipe *p, rd_kafka_conf_t *conf) {
        double batch = conf_num(conf, "batch.size", 1000000), max = conf_num(conf, "message.max.bytes", 1000000);
        p->batch_cap = (int64_t)(batch < max ? batch : max) - CP_REQUEST_RESERVE;
        p->linger_ns = (int64_t)(conf_num(conf, "queue.buffering.max.ms", 5) * 1e6);
}

/* producer_id_conf makes an idempotent producer say when it has its producer id. Until then it sends nothing,
 * and it asks for the id in 500 ms steps until a broker it learned from the metadata is up: about a second
 * after start, during which the records it holds age on message.timeout.ms, the overdue watch and the stall
 * pause. librdkafka tells only in a debug line of its "eos" context (state change "-> Assigned"), so that
 * context is added to the configuration's debug contexts; when those were none, on_log drops every debug
 * line again. */
static int producer_id_conf(cp_pipe *p, rd_kafka_conf_t *conf, char *errstr, int errstr_size) {
        char v[512];
        size_t n = sizeof(v);
        if (rd_kafka_conf_get(conf, "enable.idempotence", v, &n) != RDK_CONF_OK || strcmp(v, "true"))
                return 0;
        p->idempotent = 1;
        n = sizeof(v);
        if (rd_kafka_conf_get(conf, "debug", v, &n) != RDK_CONF_OK)
                v[0] = 0;
        if (strstr(v, "eos") || strstr(v, "all"))
                return 0;
        p->quiet_debug = v[0] == 0;
        char dbg[sizeof(v) + 8];
        snprintf(dbg, sizeof(dbg), "%s%seos", v, v[0] ? "," : "");
        return rd_kafka_conf_set(conf, "debug", dbg, errstr, (size_t)errstr_size) != RDK_CONF_OK;
}

static rd_kafka_t *new_client(cp_pipe *p, rdk_type_t type, char **props, char *errstr, int errstr_size) {
        rd_kafka_conf_t *conf = rd_kafka_conf_new();
        for (int i = 0; props && props[i] && props[i + 1]; i += 2) {
                if (rd_kafka_conf_set(conf, props[i], props[i + 1], errstr, (size_t)errstr_size) != RDK_CONF_OK) {
                        rd_kafka_conf_destroy(conf);
                        return NULL;
                }
        }
        if (rd_kafka_conf_set(conf, "log.queue", "true", errstr, (size_t)errstr_size) != RDK_CONF_OK) {
                rd_kafka_conf_destroy(conf);
                return NULL;
        }
        if (type == RDK_PRODUCER) {
                gate_conf(p, conf);
                if (producer_id_conf(p, conf, errstr, errstr_size)) {
                        rd_kafka_conf_destroy(conf);
                        return NULL;
                }
        }
        rd_kafka_conf_set_log_cb(conf, on_log);
        rd_kafka_conf_set_opaque(conf, p);
        rd_kafka_conf_set_error_cb(conf, on_error);
        rd_kafka_conf_set_stats_cb(conf, on_stats);
        if (type == RDK_PRODUCER)
                rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
        rd_kafka_t *rk = rd_kafka_new(type, conf, errstr, (size_t)errstr_size);
        if (!rk) {
                rd_kafka_conf_destroy(conf);
                return NULL;
        }
        rd_kafka_set_log_queue(rk, NULL); /* log lines are served by rd_kafka_poll */
        return rk;
}

cp_pipe *cp_pipe_new(char **cprops, char **pprops, int nparts, char **topics, int32_t *partitions, char **remotes,
                     int64_t pace_bytes, int64_t open_latency_ns, char *errstr, int errstr_size) {
        cp_pipe *p = calloc(1, sizeof(*p));
        if (!p) {
                snprintf(errstr, (size_t)errstr_size, "out of memory");
                return NULL;
        }
        p->parts = calloc((size_t)(nparts > 0 ? nparts : 1), sizeof(*p->parts));
        p->topics = calloc((size_t)(nparts > 0 ? nparts : 1), sizeof(*p->topics));
        p->nparts = nparts;
        pthread_mutex_init(&p->produce_mu, NULL);
        p->limit = pace_bytes > 0 ? pace_bytes * (nparts > 0 ? nparts : 1) : 0;
        p->open_latency_ns = open_latency_ns;
        p->gen = 1;
        if (!(p->p = new_client(p, RDK_PRODUCER, pprops, errstr, errstr_size)) ||
            !(p->c = new_client(p, RDK_CONSUMER, cprops, errstr, errstr_size))) {
                cp_pipe_destroy(p);
                return NULL;
        }
        for (int i = 0; i < nparts; i++) {
                struct cp_topic *t = NULL;
                for (int j = 0; j < p->ntopics; j++)
                        if (!strcmp(p->topics[j].name, topics[i]))
                                t = &p->topics[j];
                if (!t) {
                        t = &p->topics[p->ntopics++];
                        t->name = strdup(topics[i]);
                        t->remote = strdup(remotes[i]);
                        /* The producer's own topic defaults (message.timeout.ms above all: the lease's fence on
                         * the Kafka side, connectors/source_delivery.go), not librdkafka's: a fresh topic conf
                         * would bring back its 300 s delivery timeout. */
                        rd_kafka_topic_conf_t *tc = rd_kafka_default_topic_conf_dup(p->p);
                        rd_kafka_topic_conf_set_opaque(tc, t);
                        t->rkt = rd_kafka_topic_new(p->p, t->remote, tc);
                        if (!t->rkt) {
                                snprintf(errstr, (size_t)errstr_size, "remote topic %s: %s", t->remote,
                                         rd_kafka_err2str(rd_kafka_last_error()));
                                cp_pipe_destroy(p);
                                return NULL;
                        }
                }
                int32_t part = partitions[i];
                if (part < 0) {
                        snprintf(errstr, (size_t)errstr_size, "partition %d of %s", part, topics[i]);
                        cp_pipe_destroy(p);
                        return NULL;
                }
                if (part >= t->nbyp) {
                        int n = part + 1;
                        t->byp = realloc(t->byp, sizeof(int) * (size_t)n);
                        for (int k = t->nbyp; k < n; k++)
                                t->byp[k] = -1;
                        t->nbyp = n;
                }
                t->byp[part] = i;
                p->parts[i] = (struct cp_part){.t = t, .partition = part, .next = -1, .first_past = -1, .start_at = -1};
        }
        p->q = rd_kafka_queue_get_consumer(p->c);
        if (!p->q) {
                snprintf(errstr, (size_t)errstr_size, "the consumer has no queue (group.id missing?)");
                cp_pipe_destroy(p);
                return NULL;
        }
        return p;
}

static void runner_stop(cp_pipe *p);

/* How long cp_pipe_destroy waits for the delivery reports of purged records. librdkafka reports them from its
 * broker threads, and the Go side has waited for them already (the drain of the pipeline's end), so this only
 * serves what is ready by now. */
#define CP_RETURN_LENT_NS (1LL * 1000000000LL)

/* return_lent purges the producer and serves its delivery reports until every consumed message lent to it
 * (produce) is back, or CP_RETURN_LENT_NS has passed. */
static void return_lent(cp_pipe *p) {
        if (!p->p || p->lent == 0)
                return;
        rd_kafka_purge(p->p, RDK_PURGE_F_QUEUE | RDK_PURGE_F_INFLIGHT | RDK_PURGE_F_NON_BLOCKING);
        for (int64_t end = now_ns() + CP_RETURN_LENT_NS; p->lent > 0 && now_ns() < end;)
                rd_kafka_poll(p->p, 10);
}

/* pause_all stops the consumer's fetches of every partition (asynchronously: librdkafka's broker threads act
 * on it), for a consumer left behind. */
static void pause_all(cp_pipe *p) {
        rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(p->nparts);
        for (int i = 0; i < p->nparts; i++)
                rd_kafka_topic_partition_list_add(l, p->parts[i].t->name, p->parts[i].partition);
        rd_kafka_pause_partitions(p->c, l);
        rd_kafka_topic_partition_list_destroy(l);
}

int64_t cp_pipe_destroy(cp_pipe *p) {
        if (!p)
                return 0;
        runner_stop(p);
        return_lent(p);
        for (; p->pos < p->n; p->pos++)
                rd_kafka_message_destroy(p->msgs[p->pos]);
        if (p->q)
                rd_kafka_queue_destroy(p->q);
        /* A consumed message the producer never gave back keeps both clients: the consumer's destroy waits for
         * its messages, and the producer's for the broker threads that never reported them. Both are left
         * behind, the consumer paused, rather than a destroy that waits for ever. */
        int64_t left = p->lent;
        if (p->c) {
                if (left == 0) {
                        rd_kafka_consumer_close(p->c);
                        rd_kafka_destroy(p->c);
                } else {
                        pause_all(p);
                }
        }
        for (int i = 0; i < p->ntopics; i++) {
                if (p->topics[i].rkt)
                        rd_kafka_topic_destroy(p->topics[i].rkt);
                free(p->topics[i].name);
                free(p->topics[i].remote);
                free(p->topics[i].byp);
        }
        if (p->p && left == 0) {
                rd_kafka_purge(p->p, RDK_PURGE_F_QUEUE | RDK_PURGE_F_INFLIGHT | RDK_PURGE_F_NON_BLOCKING);
                rd_kafka_poll(p->p, 0);
                rd_kafka_destroy(p->p);
        }
        free(p->topics);
        free(p->parts);
        free(p->out.fwd);
        free(p->out.acks);
        free(p->out.fails);
        free(p->out.cerrs);
        free(p->out.perrs);
        free(p->out.logs);
        free(p->stats[0]);
        free(p->stats[1]);
        free(p->prov_name);
        free(p->prov_stamp);
        free(p->prov_alias);
        free(p->prov_id);
        pthread_mutex_destroy(&p->produce_mu);
        free(p);
        return left;
}

int cp_assign(cp_pipe *p, int64_t *starts, char *errstr, int errstr_size) {
        rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(p->nparts);
        for (int i = 0; i < p->nparts; i++) {
                rd_kafka_topic_partition_list_add(l, p->parts[i].t->name, p->parts[i].partition)->offset = starts[i];
                p->parts[i].start_at = starts[i];
                p->parts[i].next = -1;
                p->parts[i].first_past = -1;
        }
        rd_kafka_resp_err_t err = rd_kafka_assign(p->c, l);
        rd_kafka_topic_partition_list_destroy(l);
        if (err) {
                snprintf(errstr, (size_t)errstr_size, "assign partitions: %s", rd_kafka_err2str(err));
                return err;
        }
        return 0;
}

cp_out *cp_out_of(cp_pipe *p) {
        p->out.inflight_bytes = p->inflight;
        p->out.open_batches = p->open;
        p->out.pending = p->n - p->pos;
        return &p->out;
}

void cp_out_reset(cp_pipe *p) {
        p->gen++;
        p->out.nfwd = p->out.nacks = p->out.nfails = p->out.ncerrs = p->out.nperrs = p->out.nlogs = 0;
        p->out.consumed = 0;
        p->out.paced = 0;
        p->out.target_wait_ns = 0;
        p->out.source_wait_ns = 0;
        p->out.stats = 0;
}

/* fwd_of returns part idx's latest entry of this output, or a new one; fwd_kind the same, but a new one when the
 * latest counts records of the other kind (skipped or not: see cp_fwd). */
static cp_fwd *fwd_kind(cp_pipe *p, int idx, int skip);
static cp_fwd *fwd_of(cp_pipe *p, int idx) {
        struct cp_part *pt = &p->parts[idx];
        cp_out *o = &p->out;
        if (pt->fwd_gen == p->gen)
                return &o->fwd[pt->fwd_idx];
        o->fwd = grow(o->fwd, &o->capfwd, o->nfwd + 1, sizeof(cp_fwd));
        pt->fwd_gen = p->gen;
        pt->fwd_idx = o->nfwd;
        cp_fwd *f = &o->fwd[o->nfwd++];
        *f = (cp_fwd){.part = idx, .first = -1, .last = -1, .next = pt->next, .last_ts = CP_NO_TS, .first_ts = CP_NO_TS};
        return f;
}

static int seek_part(cp_pipe *p, int idx, int64_t offset, char *errstr, int errstr_size) {
        struct cp_part *pt = &p->parts[idx];
        rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
        rd_kafka_topic_partition_list_add(l, pt->t->name, pt->partition)->offset = offset;
        int code = 0;
        rd_kafka_error_t *e = rd_kafka_seek_partitions(p->c, l, 10000);
        if (e) {
                code = rd_kafka_error_code(e);
                rd_kafka_error_destroy(e);
        } else {
                code = l->elems[0].err;
        }
        if (code == RDK_ERR__STATE) {
                /* A partition whose fetch stopped on an error refuses a seek: assign it again instead. */
                code = 0;
                l->elems[0].offset = offset;
                if ((e = rd_kafka_incremental_unassign(p->c, l)) || (e = rd_kafka_incremental_assign(p->c, l))) {
                        code = rd_kafka_error_code(e);
                        rd_kafka_error_destroy(e);
                }
        }
        rd_kafka_topic_partition_list_destroy(l);
        if (code && errstr)
                snprintf(errstr, (size_t)errstr_size, "seek %s [%d] to %lld: %s", pt->t->name, pt->partition, (long long)offset,
                         rd_kafka_err2str(code));
        return code;
}

int cp_seek(cp_pipe *p, int idx, int64_t offset, char *errstr, int errstr_size) {
        if (idx < 0 || idx >= p->nparts)
                return -1;
        int code = seek_part(p, idx, offset, errstr, errstr_size);
        if (!code) {
                /* librdkafka drops what it had fetched before the seek; records of the batch still waiting for
                 * the producer are stale too. */
                p->parts[idx].next = offset;
                p->parts[idx].skip_gen = p->batches;
        }
        return code;
}

static cp_fwd *fwd_kind(cp_pipe *p, int idx, int skip) {
        struct cp_part *pt = &p->parts[idx];
        if (pt->fwd_gen == p->gen) {
                cp_fwd *f = &p->out.fwd[pt->fwd_idx];
                if (skip ? f->records == 0 : f->skipped == 0)
                        return f;
                pt->fwd_gen = 0; /* the other kind: a new entry */
        }
        return fwd_of(p, idx);
}

int cp_set_provenance(cp_pipe *p, const char *name, const char *stamp, int stamp_len, const char *target_alias,
                      const char *target_id) {
        free(p->prov_name);
        free(p->prov_stamp);
        free(p->prov_alias);
        free(p->prov_id);
        p->prov_name = strdup(name);
        p->prov_stamp = malloc(stamp_len > 0 ? (size_t)stamp_len : 1);
        p->prov_alias = strdup(target_alias);
        p->prov_id = strdup(target_id);
        if (!p->prov_name || !p->prov_stamp || !p->prov_alias || !p->prov_id) {
                free(p->prov_name);
                p->prov_name = NULL;
                return -1;
        }
        memcpy(p->prov_stamp, stamp, (size_t)stamp_len);
        p->prov_stamp_len = (size_t)stamp_len;
        p->prov_name_len = strlen(name);
        p->prov_alias_len = strlen(target_alias);
        p->prov_id_len = strlen(target_id);
        return 0;
}

/* provenance reads the provenance header among a consumed message's headers h (NULL: none): PROV_NONE when it
 * has none (the producer stamps it), PROV_TARGET when it names the pipeline's target cluster (the record is not
 * copied), PROV_OTHER otherwise (a value that does not parse included: it is copied as it is). Value
 * "<alias>@<cluster id>", split at the last '@'; compared by id when both sides have one, else by alias. */
enum { PROV_OFF, PROV_NONE, PROV_TARGET, PROV_OTHER };
static int provenance(cp_pipe *p, rd_kafka_headers_t *h) {
        if (!p->prov_name)
                return PROV_OFF;
        const void *val = NULL;
        size_t size = 0;
        if (!h || rd_kafka_header_get_last(h, p->prov_name, &val, &size) != RDK_ERR_NO_ERROR)
                return PROV_NONE;
        const char *v = val;
        size_t at = size;
        while (v && at > 0 && v[at - 1] != '@')
                at--;
        if (!v || at == 0)
                return PROV_OTHER;
        size_t alias_len = at - 1, id_len = size - at;
        if (id_len > 0 && p->prov_id_len > 0)
                return id_len == p->prov_id_len && !memcmp(v + at, p->prov_id, id_len) ? PROV_TARGET : PROV_OTHER;
        return alias_len == p->prov_alias_len && !memcmp(v, p->prov_alias, alias_len) ? PROV_TARGET : PROV_OTHER;
}

/* first_record checks a partition's first record of the pipeline against where it was assigned (the Go
 * path's firstRecord, which doc.go explains). It returns 1 when the record is dropped and the partition read
 * again from its start. */
static int first_record(cp_pipe *p, int idx, int64_t off) {
        struct cp_part *pt = &p->parts[idx];
        int64_t want = pt->start_at;
        if (want == RDK_OFFSET_BEGINNING) {
                int64_t low = -1, high = -1;
                if (rd_kafka_get_watermark_offsets(p->c, pt->t->name, pt->partition, &low, &high) || low < 0)
                        return 0;
                want = low;
        }
        if (want < 0 || pt->first_past >= 0 || off <= want)
                return 0;
        if (seek_part(p, idx, want, NULL, 0))
                return 0; /* continue from it, as the Go path does */
        pt->first_past = off;
        pt->skip_gen = p->batches;
        fwd_of(p, idx)->rereads++;
        return 1;
}

/* open_cap_update sets how many partitions may have a batch in the producer at once (open_cap; 0: no bound).
 *
 * Why: librdkafka 2.11.1 sends one partition per ProduceRequest, and a broker answers one request of a
 * connection at a time, so a producer moves at most so many partition batches a second, whatever the number
 * of partitions with records. A pipeline of 1,250 partitions (10,000 over eight tasks) handed its whole first
 * fetch to the producer at once: the target answered about 60 of its requests a second, and the last
 * partitions' records waited in librdkafka's queue past the overdue allowance, so the pipeline restarted —
 * every pipeline, on every restart (docs/benchmarks.md, scale). Records kept in hand here wait on no delivery
 * clock; the consumer's prefetch bound holds the rest back.
 *
 * So the bound is the rate at which batches complete, measured over windows of about 250 ms, times the
 * latency the caller aims at (open_latency_ns), and never below CP_OPEN_MIN: a batch opened at the bound waits
 * about that latency for its turn. Where batches complete faster than they are opened (few partitions, or a
 * quick target) the bound lies far above the partitions with records and changes nothing; from CP_OPEN_MIN it
 * grows by latency ÷ a batch's round trip every window, so a burst is slowed for a window at most. */
#define CP_OPEN_MIN 64
static void open_cap_update(cp_pipe *p) {
        if (p->open_latency_ns <= 0)
                return;
        if (p->rate_start == 0) {
                p->rate_start = p->now;
                p->open_cap = CP_OPEN_MIN;
                return;
        }
        int64_t elapsed = p->now - p->rate_start;
        if (elapsed < 250000000)
                return;
        double inst = (double)p->rate_done * 1e9 / (double)elapsed;
        p->rate = p->rate > 0 ? (p->rate + inst) / 2 : inst;
        p->rate_start = p->now;
        p->rate_done = 0;
        double cap = p->rate * (double)p->open_latency_ns / 1e9;
        p->open_cap = cap > CP_OPEN_MIN ? (cap < 1e9 ? (int64_t)cap : 1000000000) : CP_OPEN_MIN;
}

/* open_full tells whether as many partitions have a batch in the producer as open_cap allows. */
static int open_full(cp_pipe *p) {
        return p->open_cap > 0 && p->open >= p->open_cap;
}

/* gate tells whether record m, of estimated request size need, must wait before it joins partition pt's
 * batch (1) or may be produced now (0).
 *
 * Why: librdkafka 2.11.1's idempotent producer counts a partition's in-flight *records* against its limit
 * of in-flight *requests* (RD_KAFKA_IDEMP_MAX_INFLIGHT, 5), so a partition has one ProduceRequest in flight
 * at a time; and a record queued behind it whose linger.ms has expired makes the broker thread's poll
 * timeout zero: the thread spins until the response arrives. Eight such threads on two cores starved the
 * brokers, whose answers then came later still (the collapse at tasks.max 8 in docs/benchmarks.md).
 *
 * So each partition has one batch at a time: records join it while it fits one request (batch.size, less
 * overheads: a batch that only fills by librdkafka's count of key and value bytes leaves a remainder queued
 * behind the request) and is younger than most of linger.ms (or was begun in this step), and nothing joins
 * it once it has been kicked (kick) until every record of it has been reported. A partition without a batch
 * opens one only while fewer than open_cap partitions have one (open_cap_update). */
static int gate(cp_pipe *p, struct cp_part *pt, int64_t need) {
        if (pt->out_n == 0)
                return open_full(p);
        if (pt->sent || pt->out_wire + need > p->batch_cap)
                return 1;
        return pt->started_step != p->steps && p->now - pt->started >= p->linger_ns / 10 * 8;
}

/* held_can_go tells whether a partition with records held in this pass has no batch outstanding any more
 * and may open one (open_full), or the pipeline stopped producing (a failure, an interrupt): then the step
 * has work again. */
static int held_can_go(cp_pipe *p) {
        if (p->failed || atomic_load(&p->interrupted))
                return 1;
        if (open_full(p))
                return 0;
        for (int i = 0; i < p->nparts; i++)
                if (p->parts[i].held_pass == p->pass && p->parts[i].out_n == 0)
                        return 1;
        return 0;
}

/* kick_or_wait sends the pending batches when a partition with held records has one not sent yet:
 * rd_kafka_flush makes librdkafka's broker threads treat queued records as ready while it runs (briefly:
 * the broker thread only needs to see it), so they go now instead of after linger.ms, and nothing joins a
 * sent batch; with linger.ms 0 nothing waits to be sent, and there is no kick. Then, when wait is set, it
 * waits up to ms until a partition with held records can take them (returning to Go at every delivery report
 * of another partition only cost context switches), at least for one delivery report when the producer's
 * queue was full. The flush serves delivery reports itself, so the wait checks before it polls: polling first
 * slept until the timeout whenever the flush had already freed the partition — a single-partition pipeline
 * with linger.ms 0 and 4-record batches moved 514 records/s so, 5,782 with the check first, 7,555 without the
 * kick at all. */
static void kick_or_wait(cp_pipe *p, int ms, int wait, int full) {
        int kick = 0;
        for (int i = 0; i < p->nparts && !kick && p->linger_ns > 0; i++)
                kick = p->parts[i].held_pass == p->pass && p->parts[i].out_n > 0 && !p->parts[i].sent;
        int64_t t0 = now_ns();
        if (kick) {
                rd_kafka_flush(p->p, 1);
                for (int i = 0; i < p->nparts; i++)
                        if (p->parts[i].out_n > 0)
                                p->parts[i].sent = 1;
        }
        if (wait) {
                int64_t end = t0 + (int64_t)ms * 1000000, now = now_ns();
                while (now < end && (full || !held_can_go(p))) {
                        rd_kafka_poll(p->p, (int)((end - now + 999999) / 1000000));
                        now = now_ns();
                        full = 0;
                }
        }
        p->out.target_wait_ns += now_ns() - t0;
}

/* produce queues one record, src its headers (NULL: none) and ts its timestamp (msg_ts). The producer uses m's
 * value in place rather than copy it (a memcpy and a larger allocation per record, a twentieth of the
 * pipeline's CPU): m is lent to it until its delivery report (on_delivery). 0 on success (m lent), 1 when the
 * producer's queue is full (nothing queued: the caller keeps the record for the next step), -1 on a refused
 * record (reported in fails). */
static int produce(cp_pipe *p, int idx, rd_kafka_message_t *m, rd_kafka_headers_t *src, int64_t ts, int64_t need,
                   int stamp) {
        struct cp_part *pt = &p->parts[idx];
        rd_kafka_headers_t *hdrs = src ? rd_kafka_headers_copy(src) : NULL; /* producev takes over what it is given */
        if (stamp) {
                if (!hdrs)
                        hdrs = rd_kafka_headers_new(1);
                rd_kafka_header_add(hdrs, p->prov_name, (ssize_t)p->prov_name_len, p->prov_stamp, (ssize_t)p->prov_stamp_len);
        }
        int64_t bytes = (int64_t)(m->len + m->key_len);
        rd_kafka_resp_err_t err =
            rd_kafka_producev(p->p, RDK_V_RKT, pt->t->rkt, RDK_V_PARTITION, pt->partition, RDK_V_MSGFLAGS, 0,
                              RDK_V_VALUE, m->payload, m->len, RDK_V_KEY, m->key, m->key_len, RDK_V_TIMESTAMP,
                              (int64_t)(ts == CP_NO_TS ? 0 : ts), RDK_V_HEADERS, hdrs, RDK_V_OPAQUE, (void *)m,
                              RDK_V_END);
        if (err == RDK_ERR_NO_ERROR) {
                p->lent++;
                p->inflight += bytes;
                if (pt->out_n++ == 0) {
                        p->open++;
                        pt->started = p->now;
                        pt->started_step = p->steps;
                        pt->out_wire = 0;
                }
                pt->out_wire += need;
                return 0;
        }
        if (hdrs)
                rd_kafka_headers_destroy(hdrs);
        if (err == RDK_ERR__QUEUE_FULL)
                return 1;
        p->failed = 1;
        cp_err *e = add_err(&p->out.fails, &p->out.nfails, &p->out.capfails);
        e->part = idx;
        e->code = err;
        e->offset = m->offset;
        e->fatal = -1; /* refused by the producer, not a delivery report */
        set_msg(e, rd_kafka_err2str(err));
        return -1;
}

static struct cp_topic *topic_of(cp_pipe *p, rd_kafka_topic_t *rkt) {
        for (int i = 0; i < p->ntopics; i++)
                if (p->topics[i].src_rkt == rkt)
                        return &p->topics[i];
        const char *name = rd_kafka_topic_name(rkt);
        for (int i = 0; i < p->ntopics; i++)
                if (!p->topics[i].src_rkt && !strcmp(p->topics[i].name, name)) {
                        p->topics[i].src_rkt = rkt;
                        return &p->topics[i];
                }
        return NULL;
}

/* handle hands the consumed message m, of part idx (-1: none), over (or reports it): 0 when the caller destroys
 * m, 3 when it was lent to the producer (produce); 1 when the batch gate holds it back, 2 when the producer's
 * queue is full: m must wait. */
static int handle(cp_pipe *p, rd_kafka_message_t *m, int64_t batch, int idx) {
        if (idx >= 0 && batch <= p->parts[idx].skip_gen)
                return 0; /* consumed before the partition was sought: stale */
        if (m->err) {
                if (m->err != RDK_ERR__PARTITION_EOF) {
                        cp_err *e = add_err(&p->out.cerrs, &p->out.ncerrs, &p->out.capcerrs);
                        e->part = idx;
                        e->code = m->err;
                        e->offset = m->offset;
                        if (m->payload && m->len) /* the error string, for error messages */
                                snprintf(e->msg, sizeof(e->msg), "%.*s", (int)(m->len < 255 ? m->len : 255), (const char *)m->payload);
                        else
                                set_msg(e, rd_kafka_err2str(m->err));
                }
                return 0;
        }
        if (idx < 0 || p->failed || p->purged || p->parts[idx].broken)
                return 0;
        struct cp_part *pt = &p->parts[idx];
        if (pt->next < 0 && first_record(p, idx, m->offset))
                return 0;
        rd_kafka_headers_t *hdrs = message_headers(m);
        int prov = provenance(p, hdrs);
        if (prov == PROV_TARGET) {
                /* Not copied back into the cluster it came from; Go counts it dealt with in order (cp_fwd). */
                cp_fwd *f = fwd_kind(p, idx, 1);
                if (f->skipped++ == 0)
                        f->first = m->offset;
                f->last = m->offset;
                pt->next = m->offset + 1;
                f->next = pt->next;
                return 0;
        }
        int stamp = prov == PROV_NONE;
        int64_t hsize = headers_size(hdrs) + (stamp ? (int64_t)(p->prov_name_len + p->prov_stamp_len) : 0);
        int64_t need = (int64_t)(m->len + m->key_len) + hsize + CP_RECORD_OVERHEAD;
        if (gate(p, pt, need))
                return 1;
        /* What the bookkeeping needs of m, read before m is lent (its delivery report destroys it). */
        int64_t off = m->offset, ts = msg_ts(m), len = (int64_t)m->len, size = (int64_t)(m->len + m->key_len) + hsize;
        int r = produce(p, idx, m, hdrs, ts, need, stamp);
        if (r == 1)
                return 2;
        if (r == 0) {
                cp_fwd *f = fwd_kind(p, idx, 0);
                if (f->records == 0) {
                        f->first = off;
                        f->first_ts = ts;
                }
                f->records++;
                f->last = off;
                f->value_bytes += len;
                f->size_bytes += size;
                f->last_ts = ts;
                pt->next = off + 1;
                f->next = pt->next;
                return 3;
        }
        return 0;
}

/* step is one step (cp_step) that hands records to the producer only before until (monotonic ns); it returns 1
 * when it waited for deliveries instead of consuming (paced). */
static int step(cp_pipe *p, int timeout_ms, int max, int64_t until) {
        p->now = now_ns();
        p->steps++;
        rd_kafka_poll(p->p, 0);
        rd_kafka_poll(p->c, 0);
        open_cap_update(p);
        if (p->limit > 0 && p->inflight > p->limit) {
                /* Pacing: wait in the producer's poll, serving delivery reports, while too much is undelivered. */
                wait_target(p, timeout_ms < 5 ? timeout_ms : 5);
                p->out.paced = 1;
                return 1;
        }
        if (p->failed || atomic_load(&p->interrupted))
                return 0;
        /* Consume when what is in hand is through, and also, without waiting, while the gate holds records
         * back and there is room: the other partitions need not wait for the held ones' deliveries. */
        if (max <= 0 || max > CP_BATCH_MAX)
                max = CP_BATCH_MAX;
        int held = p->n - p->pos;
        if (held > 0 && p->pos > 0) {
                memmove(p->msgs, p->msgs + p->pos, sizeof(p->msgs[0]) * (size_t)held);
                memmove(p->msg_batch, p->msg_batch + p->pos, sizeof(p->msg_batch[0]) * (size_t)held);
                memmove(p->msg_part, p->msg_part + p->pos, sizeof(p->msg_part[0]) * (size_t)held);
                p->pos = 0;
                p->n = held;
        }
        int room = CP_BATCH_MAX - held;
        if (room > max)
                room = max;
        if (held == 0 || room >= max / 4) {
                ssize_t n = rd_kafka_consume_batch_queue(p->q, held ? 0 : timeout_ms, p->msgs + p->n, (size_t)room);
                if (n < 0) {
                        cp_err *e = add_err(&p->out.cerrs, &p->out.ncerrs, &p->out.capcerrs);
                        e->part = -1;
                        e->code = rd_kafka_last_error();
                        e->offset = -1;
                        set_msg(e, rd_kafka_err2str(e->code));
                        if (!held)
                                return 0;
                } else if (n > 0 || !held) {
                        p->batches++;
                        p->out.consumed += n;
                        if (!held)
                                p->pos = p->n = 0;
                        struct cp_topic *last = NULL;
                        rd_kafka_topic_t *last_rkt = NULL;
                        for (ssize_t i = 0; i < n; i++) {
                                rd_kafka_message_t *m = p->msgs[p->n + i];
                                if (!last_rkt || m->rkt != last_rkt) {
                                        last_rkt = m->rkt;
                                        last = topic_of(p, m->rkt);
                                }
                                p->msg_batch[p->n + i] = p->batches;
                                p->msg_part[p->n + i] = part_of(last, m->partition);
                        }
                        p->n += (int)n;
                }
        }
        /* One pass over the records in hand: a record the gate holds back stays, with every later record of
         * its partition (order), while the other partitions' records go on; after a full producer queue,
         * everything stays. Held records keep their order at the front. */
        int keep = p->pos, full = 0, moved = 0, lapsed = now_ns() >= until;
        p->pass++;
        pthread_mutex_lock(&p->produce_mu);
        for (int i = p->pos; i < p->n; i++) {
                rd_kafka_message_t *m = p->msgs[i];
                if (!lapsed && ((i - p->pos) & 63) == 63)
                        lapsed = now_ns() >= until;
                int idx = p->msg_part[i];
                int r = lapsed || full || (idx >= 0 && p->parts[idx].held_pass == p->pass) ? 1 : handle(p, m, p->msg_batch[i], idx);
                if (r == 3) {
                        moved++; /* lent to the producer until its delivery report */
                        continue;
                }
                if (r) {
                        full = full || r == 2;
                        if (idx >= 0)
                                p->parts[idx].held_pass = p->pass;
                        p->msg_batch[keep] = p->msg_batch[i];
                        p->msg_part[keep] = idx;
                        p->msgs[keep++] = m;
                        continue;
                }
                moved++;
                rd_kafka_message_destroy(m);
        }
        pthread_mutex_unlock(&p->produce_mu);
        p->n = keep;
        if (lapsed)
                return 0; /* nothing more goes out now; Go finds the permission ended */
        if (p->pos < p->n) {
                /* Records are held: send what must go, and unless this pass moved records and there is room to
                 * consume more, wait a little for deliveries; hand Go what happened so far. */
                kick_or_wait(p, timeout_ms < 10 ? timeout_ms : 10, !moved || full || CP_BATCH_MAX - (p->n - p->pos) < max / 4, full);
                return 0;
        }
        rd_kafka_poll(p->p, 0);
        return 0;
}

cp_out *cp_step(cp_pipe *p, int timeout_ms, int max, int64_t valid_ns) {
        return cp_run(p, timeout_ms, max, valid_ns, 0); /* a budget of 0: one step */
}

/* needs_go: what the last step left must reach Go now rather than after more steps — something broke or
 * failed, the consumer reported an error (Go seeks or fails), the producer an error event, statistics or log
 * lines wait, or the run was interrupted. */
static int needs_go(cp_pipe *p) {
        cp_out *o = &p->out;
        return p->failed || p->purged || atomic_load(&p->interrupted) || o->nfails || o->ncerrs || o->nperrs || o->nlogs ||
               o->stats;
}

/* run steps from start until budget_ns has passed, handing records to the producer only before until
 * (monotonic ns), as cp_run says. */
static void run(cp_pipe *p, int timeout_ms, int max, int64_t start, int64_t until, int64_t budget_ns) {
        for (;;) {
                int64_t t0 = now_ns(), waited = p->out.target_wait_ns, consumed = p->out.consumed;
                int paced = step(p, timeout_ms, max, until);
                int64_t t1 = now_ns();
                if (p->out.consumed == consumed) {
                        /* Nothing came: the step waited for the source, except while it waited for the target. */
                        int64_t w = (t1 - t0) - (p->out.target_wait_ns - waited);
                        if (w > 0)
                                p->out.source_wait_ns += w;
                        if (!paced && p->n == p->pos)
                                break; /* idle: Go reads the positions and watches the clocks */
                }
                if (t1 - start >= budget_ns || t1 >= until || needs_go(p))
                        break;
        }
}

cp_out *cp_run(cp_pipe *p, int timeout_ms, int max, int64_t valid_ns, int64_t budget_ns) {
        /* The run's permission to write is checked by Go before the call, but a step may wait up to timeout_ms
         * for records — and a process stopped (SIGSTOP, a VM pause) inside that wait resumes with records in
         * hand long after its permission ended and its partitions moved on: produced then, they land after the
         * successor's (a split brain). So the permission's remaining time comes along, on the monotonic clock,
         * and every step checks it again before records are handed to the producer. */
        int64_t start = now_ns();
        run(p, timeout_ms, max, start, valid_ns < 0 ? INT64_MAX : start + valid_ns, budget_ns);
        return cp_out_of(p);
}

static void *runner_main(void *arg) {
        cp_pipe *p = arg;
        struct cp_runner *r = p->runner;
        pthread_mutex_lock(&r->mu);
        for (;;) {
                while (r->state != RUN_ASKED && r->state != RUN_QUIT)
                        pthread_cond_wait(&r->cv, &r->mu);
                if (r->state == RUN_QUIT)
                        break;
                pthread_mutex_unlock(&r->mu);
                run(p, r->timeout_ms, r->max, r->start, r->until, r->budget_ns);
                pthread_mutex_lock(&r->mu);
                r->state = RUN_DONE;
                pthread_cond_broadcast(&r->cv);
                pthread_mutex_unlock(&r->mu);
                /* After DONE: a Go side woken by the byte finds the run ended. The fd outlives the thread
                 * (runner_stop joins it before the Go side closes the pipe). */
                while (write(r->fd, "", 1) < 0 && errno == EINTR)
                        ;
                pthread_mutex_lock(&r->mu);
        }
        pthread_mutex_unlock(&r->mu);
        return NULL;
}

int cp_runner_start(cp_pipe *p, int fd) {
        struct cp_runner *r = calloc(1, sizeof(*r));
        if (!r)
                return ENOMEM;
        pthread_mutex_init(&r->mu, NULL);
        pthread_cond_init(&r->cv, NULL);
        r->fd = fd;
        p->runner = r;
        /* The thread blocks every signal, as librdkafka's own do: Go's handlers expect its own threads, and
         * the thread inherits the creator's mask. */
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        int err = pthread_create(&r->th, NULL, runner_main, p);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (err) {
                pthread_cond_destroy(&r->cv);
                pthread_mutex_destroy(&r->mu);
                free(r);
                p->runner = NULL;
        }
        return err;
}

void cp_run_submit(cp_pipe *p, int timeout_ms, int max, int64_t valid_ns, int64_t budget_ns) {
        struct cp_runner *r = p->runner;
        /* The permission is counted from here, as cp_run counts it from its call: the thread may start later. */
        int64_t start = now_ns();
        pthread_mutex_lock(&r->mu);
        r->timeout_ms = timeout_ms;
        r->max = max;
        r->start = start;
        r->until = valid_ns < 0 ? INT64_MAX : start + valid_ns;
        r->budget_ns = budget_ns;
        r->state = RUN_ASKED;
        pthread_cond_broadcast(&r->cv);
        pthread_mutex_unlock(&r->mu);
}

cp_out *cp_run_result(cp_pipe *p) {
        struct cp_runner *r = p->runner;
        pthread_mutex_lock(&r->mu);
        while (r->state == RUN_ASKED)
                pthread_cond_wait(&r->cv, &r->mu);
        if (r->state == RUN_DONE)
                r->state = RUN_IDLE;
        pthread_mutex_unlock(&r->mu);
        return cp_out_of(p);
}

static void runner_stop(cp_pipe *p) {
        struct cp_runner *r = p->runner;
        if (!r)
                return;
        pthread_mutex_lock(&r->mu);
        while (r->state == RUN_ASKED) /* a run in progress ends first */
                pthread_cond_wait(&r->cv, &r->mu);
        r->state = RUN_QUIT;
        pthread_cond_broadcast(&r->cv);
        pthread_mutex_unlock(&r->mu);
        pthread_join(r->th, NULL);
        pthread_cond_destroy(&r->cv);
        pthread_mutex_destroy(&r->mu);
        free(r);
        p->runner = NULL;
}

int cp_producer_ready(cp_pipe *p, int timeout_ms) {
        int64_t end = now_ns() + (int64_t)timeout_ms * 1000000;
        for (;;) {
                if (!p->idempotent || atomic_load(&p->pid_ready))
                        return 1;
                int64_t left = end - now_ns();
                if (left <= 0 || atomic_load(&p->interrupted))
                        return 0;
                rd_kafka_poll(p->p, left > 10000000 ? 10 : (int)((left + 999999) / 1000000));
        }
}

void cp_serve(cp_pipe *p, int timeout_ms) {
        rd_kafka_poll(p->p, timeout_ms);
        rd_kafka_poll(p->c, 0);
}

int cp_flush(cp_pipe *p, int timeout_ms) {
        rd_kafka_flush(p->p, timeout_ms);
        return rd_kafka_outq_len(p->p);
}

int cp_purge(cp_pipe *p, int in_flight) {
        int flags = RDK_PURGE_F_QUEUE | RDK_PURGE_F_NON_BLOCKING;
        if (in_flight)
                flags |= RDK_PURGE_F_INFLIGHT;
        pthread_mutex_lock(&p->produce_mu);
        p->purged = 1;
        atomic_store(&p->interrupted, 1);
        int err = rd_kafka_purge(p->p, flags);
        pthread_mutex_unlock(&p->produce_mu);
        return err;
}

int cp_outstanding(cp_pipe *p) {
        return rd_kafka_outq_len(p->p);
}

void cp_interrupt(cp_pipe *p) {
        atomic_store(&p->interrupted, 1);
}

int cp_watermarks(cp_pipe *p, int idx, int timeout_ms, int64_t *low, int64_t *high) {
        if (idx < 0 || idx >= p->nparts)
                return -1;
        return rd_kafka_query_watermark_offsets(p->c, p->parts[idx].t->name, p->parts[idx].partition, low, high, timeout_ms);
}

int cp_cached_watermarks(cp_pipe *p, int idx, int64_t *low, int64_t *high) {
        if (idx < 0 || idx >= p->nparts)
                return -1;
        return rd_kafka_get_watermark_offsets(p->c, p->parts[idx].t->name, p->parts[idx].partition, low, high);
}

int cp_positions(cp_pipe *p, int64_t *pos) {
        rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(p->nparts);
        for (int i = 0; i < p->nparts; i++)
                rd_kafka_topic_partition_list_add(l, p->parts[i].t->name, p->parts[i].partition);
        rd_kafka_resp_err_t err = rd_kafka_position(p->c, l);
        for (int i = 0; i < p->nparts; i++)
                pos[i] = (!err && l->elems[i].err == 0 && l->elems[i].offset >= 0) ? l->elems[i].offset : -1;
        rd_kafka_topic_partition_list_destroy(l);
        return err;
}

char *cp_take_stats(cp_pipe *p, int which) {
        char *s = p->stats[which & 1];
        p->stats[which & 1] = NULL;
        return s;
}

const char *cp_version(void) {
        return rd_kafka_version_str();
}
