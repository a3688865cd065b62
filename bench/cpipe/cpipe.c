/*
 * cpipe: the benchmark's "C pipe", the floor of what librdkafka itself costs for replication (issue 15).
 *
 * A paced consume -> produce loop written against librdkafka's C API, linked against the very static
 * librdkafka that confluent-kafka-go bundles (bench/cpipe.go builds it with cc). Per pipeline ("worker"):
 * one assign-only consumer feeding one idempotent producer, partition p of a source topic to partition p of
 * its remote topic, key, value, headers and timestamp kept. No offset tracking, no offset syncs, no database:
 * it is what a replicator whose record bytes never leave C would cost at best. Every client property comes
 * from the config file, which the bench writes from the same translation the Go pipe and kmirror use.
 *
 * Pacing: librdkafka 2.11.1's idempotent producer counts a partition's in-flight records against its limit
 * of in-flight requests (5), so a partition has one ProduceRequest in flight at a time, and a record queued
 * behind it whose linger.ms has expired makes the broker thread poll with a zero timeout: it spins until the
 * response arrives. A loop that queues freely starves the brokers on a small machine; bounding only the
 * bytes in flight (pace_bytes) was not enough at tasks.max 8, because whatever is queued behind the request
 * spins once it is older than linger.ms. So each partition has one batch at a time (the batch gate, as
 * connectors/kafka/cpath does): records join it while it fits one request and is younger than most of
 * linger.ms; then every pending batch is sent at once (rd_kafka_flush, which makes queued records ready)
 * and nothing joins a sent batch until all of it has been reported. pace_bytes still bounds the pipeline.
 *
 * Config file (one directive a line, values are the rest of the line):
 *   consumer KEY VALUE         librdkafka property of every consumer
 *   producer KEY VALUE         librdkafka property of every producer
 *   pace_bytes N               per-pipeline bound of produced-but-undelivered value+key bytes (0: none)
 *   part W TOPIC P REMOTE      pipeline W consumes TOPIC partition P and produces to REMOTE partition P
 *
 * Runs until SIGTERM/SIGINT, then flushes what is in flight (30 s at most). Exit status 1 on any delivery
 * failure or client error, so the bench notices (it treats an exited system as a failed run).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rdkafka.h"

#define MAX_PROPS 256
#define BATCH 1024

struct prop {
        char *key, *val;
};

struct part {
        char *topic, *remote;
        int32_t partition;
        rd_kafka_topic_t *rkt; /* the remote topic's handle in this worker's producer */
        /* The batch gate: records produced and not yet reported, their estimated request size, when the
         * first of them was produced, and whether the batch has been sent (nothing may join it). */
        long long out_n, out_wire;
        int64_t started;
        long long started_batch; /* the consumed batch the first of them came in */
        int sent;
        long long held_pass; /* a record of this pass over the consumed batch is held, so are its later ones */
};

struct worker {
        int id;
        struct part *parts;
        int nparts, cap;
        pthread_t thread;
        /* Produced-but-undelivered bytes. Written by the worker thread (produce) and by the delivery
         * report callback, which librdkafka calls from rd_kafka_poll on the same thread: no lock needed,
         * but atomics keep the intent clear and cost nothing measurable here. */
        atomic_llong inflight;
        atomic_int failed;
        long long produced, delivered;
        long long batches; /* consumed batches so far */
};

static struct prop cprops[MAX_PROPS], pprops[MAX_PROPS];
static int ncprops, npprops;
static long long pace_bytes;
static long long batch_cap;   /* a partition batch's bound, in estimated request bytes */
static int64_t linger_us;      /* the producer's linger.ms */

/* A record's worst-case size in a request beyond its key, value and headers, and what a request needs
 * besides its records, generously (as connectors/kafka/cpath). */
#define RECORD_OVERHEAD 48
#define REQUEST_RESERVE 512

static int64_t mono_us(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}
static struct worker *workers;
static int nworkers;
static volatile sig_atomic_t stopping;

static void on_signal(int sig) {
        (void)sig;
        stopping = 1;
}

static void die(const char *fmt, const char *arg) {
        fprintf(stderr, "cpipe: ");
        fprintf(stderr, fmt, arg);
        fprintf(stderr, "\n");
        exit(1);
}

static struct worker *worker_get(int id) {
        if (id < 0 || id > 4096)
                die("bad worker id in %s", "config");
        if (id >= nworkers) {
                workers = realloc(workers, sizeof(*workers) * (id + 1));
                for (int i = nworkers; i <= id; i++) {
                        memset(&workers[i], 0, sizeof(workers[i]));
                        workers[i].id = i;
                }
                nworkers = id + 1;
        }
        return &workers[id];
}

static void read_config(const char *path) {
        FILE *f = fopen(path, "r");
        if (!f)
                die("cannot open %s", path);
        char *line = NULL;
        size_t cap = 0;
        ssize_t n;
        while ((n = getline(&line, &cap, f)) > 0) {
                while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
                        line[--n] = 0;
                char *sp = strchr(line, ' ');
                if (!sp)
                        continue;
                *sp = 0;
                char *rest = sp + 1;
                if (!strcmp(line, "consumer") || !strcmp(line, "producer")) {
                        char *sp2 = strchr(rest, ' ');
                        if (!sp2)
                                die("property without value: %s", rest);
                        *sp2 = 0;
                        struct prop *p;
                        if (line[0] == 'c') {
                                if (ncprops == MAX_PROPS)
                                        die("too many %s properties", "consumer");
                                p = &cprops[ncprops++];
                        } else {
                                if (npprops == MAX_PROPS)
                                        die("too many %s properties", "producer");
                                p = &pprops[npprops++];
                        }
                        p->key = strdup(rest);
                        p->val = strdup(sp2 + 1);
                } else if (!strcmp(line, "pace_bytes")) {
                        pace_bytes = atoll(rest);
                } else if (!strcmp(line, "part")) {
                        int w;
                        int32_t p;
                        char topic[512], remote[512];
                        if (sscanf(rest, "%d %511s %" SCNd32 " %511s", &w, topic, &p, remote) != 4)
                                die("bad part line: %s", rest);
                        struct worker *wk = worker_get(w);
                        if (wk->nparts == wk->cap) {
                                wk->cap = wk->cap ? 2 * wk->cap : 8;
                                wk->parts = realloc(wk->parts, sizeof(*wk->parts) * wk->cap);
                        }
                        wk->parts[wk->nparts++] = (struct part){.topic = strdup(topic), .remote = strdup(remote), .partition = p};
                } else {
                        die("unknown directive %s", line);
                }
        }
        free(line);
        fclose(f);
}

static rd_kafka_conf_t *make_conf(struct prop *props, int n) {
        rd_kafka_conf_t *conf = rd_kafka_conf_new();
        char err[512];
        for (int i = 0; i < n; i++) {
                if (rd_kafka_conf_set(conf, props[i].key, props[i].val, err, sizeof(err)) != RD_KAFKA_CONF_OK)
                        die("%s", err);
        }
        return conf;
}

/* Delivery reports: called from rd_kafka_poll(producer) on the worker's thread. */
static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque) {
        (void)rk;
        struct worker *w = opaque;
        atomic_fetch_sub(&w->inflight, (long long)(m->len + m->key_len));
        struct part *pt = m->_private;
        if (pt && --pt->out_n == 0) {
                pt->sent = 0;
                pt->out_wire = 0;
        }
        if (m->err) {
                if (!atomic_exchange(&w->failed, 1))
                        fprintf(stderr, "cpipe: worker %d: delivery failed: %s\n", w->id, rd_kafka_err2str(m->err));
                return;
        }
        w->delivered++;
}

static void on_error(rd_kafka_t *rk, int err, const char *reason, void *opaque) {
        struct worker *w = opaque;
        fprintf(stderr, "cpipe: worker %d: %s: %s: %s\n", w->id, rd_kafka_name(rk), rd_kafka_err2name(err), reason);
        /* A fatal error (idempotence broken) ends the run; everything else librdkafka retries itself. */
        if (err == RD_KAFKA_RESP_ERR__FATAL)
                atomic_store(&w->failed, 1);
}

static struct part *find_part(struct worker *w, const char *topic, int32_t partition) {
        for (int i = 0; i < w->nparts; i++)
                if (w->parts[i].partition == partition && !strcmp(w->parts[i].topic, topic))
                        return &w->parts[i];
        return NULL;
}

/* gate_holds tells whether record m, of estimated request size need, must wait before it joins its
 * partition's batch: the batch was sent, or is full (one request), or is older than most of linger.ms (and
 * was begun in an earlier consumed batch, so that linger.ms 0 still batches what one consume returned). */
static int gate_holds(struct worker *w, struct part *pt, long long need) {
        if (pt->out_n == 0)
                return 0;
        return pt->sent || pt->out_wire + need > batch_cap ||
               (pt->started_batch != w->batches && mono_us() - pt->started >= linger_us / 10 * 8);
}

/* kick_or_wait waits a little for deliveries; while a held-back batch has not been sent, it sends every
 * pending batch of the pipeline at once (rd_kafka_flush makes queued records ready while it runs), and
 * nothing joins a sent batch until all of it is reported. */
static void kick_or_wait(struct worker *w, rd_kafka_t *p) {
        int kick = 0;
        for (int i = 0; i < w->nparts && !kick && linger_us > 0; i++) /* linger.ms 0: nothing waits to be kicked */
                kick = w->parts[i].out_n > 0 && !w->parts[i].sent;
        if (!kick) {
                rd_kafka_poll(p, 5);
                return;
        }
        rd_kafka_flush(p, 5);
        for (int i = 0; i < w->nparts; i++)
                if (w->parts[i].out_n > 0)
                        w->parts[i].sent = 1;
}

/* record_size is record m's estimated size in a ProduceRequest. */
static long long record_size(const rd_kafka_message_t *m) {
        long long n = (long long)(m->len + m->key_len) + RECORD_OVERHEAD;
        rd_kafka_headers_t *h;
        if (rd_kafka_message_headers(m, &h) == RD_KAFKA_RESP_ERR_NO_ERROR) {
                const char *name;
                const void *val;
                size_t size;
                for (size_t i = 0; rd_kafka_header_get_all(h, i, &name, &val, &size) == RD_KAFKA_RESP_ERR_NO_ERROR; i++)
                        n += (long long)(strlen(name) + size);
        }
        return n;
}

/* produce queues one consumed record on the producer, waiting in its poll while the queue is full. */
static int produce(struct worker *w, rd_kafka_t *p, struct part *pt, rd_kafka_message_t *m, long long need) {
        rd_kafka_timestamp_type_t tstype;
        int64_t ts = rd_kafka_message_timestamp(m, &tstype);
        rd_kafka_headers_t *hdrs = NULL;
        const rd_kafka_headers_t *src;
        if (rd_kafka_message_headers(m, (rd_kafka_headers_t **)&src) == RD_KAFKA_RESP_ERR_NO_ERROR)
                hdrs = rd_kafka_headers_copy(src); /* producev takes ownership of what it is given */
        for (;;) {
                rd_kafka_resp_err_t err = rd_kafka_producev(
                    p, RD_KAFKA_V_RKT(pt->rkt), RD_KAFKA_V_PARTITION(m->partition),
                    /* librdkafka copies payloads up to message.copy.max.bytes into the request buffer
                     * anyway; producing without a copy saved ~5% CPU in the experiments, not worth
                     * holding fetch buffers until delivery. */
                    RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_VALUE(m->payload, m->len),
                    RD_KAFKA_V_KEY(m->key, m->key_len), RD_KAFKA_V_TIMESTAMP(ts > 0 ? ts : 0),
                    RD_KAFKA_V_HEADERS(hdrs), RD_KAFKA_V_OPAQUE(pt), RD_KAFKA_V_END);
                if (err == RD_KAFKA_RESP_ERR_NO_ERROR) {
                        if (pt->out_n++ == 0) {
                                pt->started = mono_us();
                                pt->started_batch = w->batches;
                                pt->out_wire = 0;
                        }
                        pt->out_wire += need;
                        atomic_fetch_add(&w->inflight, (long long)(m->len + m->key_len));
                        w->produced++;
                        return 0;
                }
                if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
                        if (hdrs)
                                rd_kafka_headers_destroy(hdrs);
                        fprintf(stderr, "cpipe: worker %d: produce: %s\n", w->id, rd_kafka_err2str(err));
                        return -1;
                }
                rd_kafka_poll(p, 10);
                if (stopping) {
                        if (hdrs)
                                rd_kafka_headers_destroy(hdrs);
                        return 0;
                }
        }
}

static void *run_worker(void *arg) {
        struct worker *w = arg;
        char err[512];

        rd_kafka_conf_t *pc = make_conf(pprops, npprops);
        rd_kafka_conf_set_opaque(pc, w);
        rd_kafka_conf_set_dr_msg_cb(pc, on_delivery);
        rd_kafka_conf_set_error_cb(pc, on_error);
        rd_kafka_t *p = rd_kafka_new(RD_KAFKA_PRODUCER, pc, err, sizeof(err));
        if (!p)
                die("producer: %s", err);

        rd_kafka_conf_t *cc = make_conf(cprops, ncprops);
        rd_kafka_conf_set_opaque(cc, w);
        rd_kafka_conf_set_error_cb(cc, on_error);
        rd_kafka_t *c = rd_kafka_new(RD_KAFKA_CONSUMER, cc, err, sizeof(err));
        if (!c)
                die("consumer: %s", err);
        rd_kafka_poll_set_consumer(c);

        rd_kafka_topic_partition_list_t *tpl = rd_kafka_topic_partition_list_new(w->nparts);
        for (int i = 0; i < w->nparts; i++) {
                rd_kafka_topic_partition_list_add(tpl, w->parts[i].topic, w->parts[i].partition)->offset =
                    RD_KAFKA_OFFSET_BEGINNING;
                w->parts[i].rkt = rd_kafka_topic_new(p, w->parts[i].remote, NULL);
        }
        rd_kafka_resp_err_t aerr = rd_kafka_assign(c, tpl);
        rd_kafka_topic_partition_list_destroy(tpl);
        if (aerr)
                die("assign: %s", rd_kafka_err2str(aerr));
        rd_kafka_queue_t *q = rd_kafka_queue_get_consumer(c);

        long long limit = pace_bytes * w->nparts;
        rd_kafka_message_t *msgs[BATCH];
        ssize_t n = 0; /* msgs[0..n) were consumed and not produced yet: the gate held them back */
        long long pass = 0;
        while (!stopping && !atomic_load(&w->failed)) {
                /* Pacing: wait in the producer's poll while this pipeline has too much undelivered. */
                if (limit > 0 && atomic_load(&w->inflight) > limit) {
                        rd_kafka_poll(p, 5);
                        continue;
                }
                rd_kafka_poll(p, 0);
                if (n == 0) {
                        n = rd_kafka_consume_batch_queue(q, 100, msgs, BATCH);
                        w->batches++;
                        if (n < 0) {
                                fprintf(stderr, "cpipe: worker %d: consume: %s\n", w->id, rd_kafka_err2str(rd_kafka_last_error()));
                                atomic_store(&w->failed, 1);
                                n = 0;
                                break;
                        }
                }
                /* One pass: a record the gate holds back stays, with the later records of its partition (order);
                 * the other partitions' records go on. */
                ssize_t keep = 0;
                pass++;
                for (ssize_t i = 0; i < n; i++) {
                        rd_kafka_message_t *m = msgs[i];
                        if (!m->err && !stopping && !atomic_load(&w->failed)) {
                                struct part *pt = find_part(w, rd_kafka_topic_name(m->rkt), m->partition);
                                if (pt) {
                                        long long need = record_size(m);
                                        if (pt->held_pass == pass || gate_holds(w, pt, need)) {
                                                pt->held_pass = pass;
                                                msgs[keep++] = m;
                                                continue;
                                        }
                                        if (produce(w, p, pt, m, need) < 0)
                                                atomic_store(&w->failed, 1);
                                }
                        } else if (m->err && m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF) {
                                fprintf(stderr, "cpipe: worker %d: consumer: %s\n", w->id, rd_kafka_message_errstr(m));
                        }
                        rd_kafka_message_destroy(m);
                }
                n = keep;
                if (n > 0)
                        kick_or_wait(w, p);
        }
        for (ssize_t i = 0; i < n; i++)
                rd_kafka_message_destroy(msgs[i]);

        rd_kafka_queue_destroy(q);
        rd_kafka_consumer_close(c);
        rd_kafka_destroy(c);
        rd_kafka_resp_err_t ferr = rd_kafka_flush(p, 30000);
        if (ferr)
                fprintf(stderr, "cpipe: worker %d: flush: %s (%d records left)\n", w->id, rd_kafka_err2str(ferr), rd_kafka_outq_len(p));
        for (int i = 0; i < w->nparts; i++)
                rd_kafka_topic_destroy(w->parts[i].rkt);
        rd_kafka_destroy(p);
        fprintf(stderr, "cpipe: worker %d: %lld produced, %lld delivered\n", w->id, w->produced, w->delivered);
        return NULL;
}

int main(int argc, char **argv) {
        if (argc != 2) {
                fprintf(stderr, "usage: cpipe CONFIG\n");
                return 2;
        }
        read_config(argv[1]);
        /* The gate's bounds, from the producer's configuration (librdkafka's defaults when unset). */
        double batch = 1000000, max_msg = 1000000, linger = 5;
        for (int i = 0; i < npprops; i++) {
                if (!strcmp(pprops[i].key, "batch.size"))
                        batch = atof(pprops[i].val);
                else if (!strcmp(pprops[i].key, "message.max.bytes"))
                        max_msg = atof(pprops[i].val);
                else if (!strcmp(pprops[i].key, "linger.ms") || !strcmp(pprops[i].key, "queue.buffering.max.ms"))
                        linger = atof(pprops[i].val);
        }
        batch_cap = (long long)(batch < max_msg ? batch : max_msg) - REQUEST_RESERVE;
        linger_us = (int64_t)(linger * 1000);
        if (nworkers == 0)
                die("%s: no partitions", argv[1]);
        struct sigaction sa = {.sa_handler = on_signal};
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGINT, &sa, NULL);
        fprintf(stderr, "cpipe: librdkafka %s, %d pipelines, pace %lld bytes per partition, batches of %lld request bytes, linger %lld us\n",
                rd_kafka_version_str(), nworkers, pace_bytes, batch_cap, (long long)linger_us);
        for (int i = 0; i < nworkers; i++) {
                if (workers[i].nparts == 0)
                        die("pipeline numbers have a gap in %s", argv[1]);
                if (pthread_create(&workers[i].thread, NULL, run_worker, &workers[i]))
                        die("pthread_create: %s", strerror(errno));
        }
        int failed = 0;
        for (int i = 0; i < nworkers; i++) {
                pthread_join(workers[i].thread, NULL);
                failed |= atomic_load(&workers[i].failed);
        }
        return failed ? 1 : 0;
}
