/*
 * rdk.h declares the part of librdkafka's C API (2.x ABI) that the data path uses. The package links
 * against the static librdkafka that confluent-kafka-go bundles (its cgo flags bring the library into every
 * binary that imports connectors/kafka), but the module's header lies outside this package's source tree,
 * where cgo cannot point an include path portably. The declarations below follow librdkafka's public,
 * stable ABI: struct layouts and enum values are those of rdkafka.h, and cpath_test.go checks the library
 * answers to them (version, message layout through a real round trip).
 */
#ifndef KMIRROR_RDK_H
#define KMIRROR_RDK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct rd_kafka_s rd_kafka_t;
typedef struct rd_kafka_topic_s rd_kafka_topic_t;
typedef struct rd_kafka_conf_s rd_kafka_conf_t;
typedef struct rd_kafka_topic_conf_s rd_kafka_topic_conf_t;
typedef struct rd_kafka_queue_s rd_kafka_queue_t;
typedef struct rd_kafka_headers_s rd_kafka_headers_t;
typedef struct rd_kafka_error_s rd_kafka_error_t;
typedef int rd_kafka_resp_err_t;

typedef enum { RDK_PRODUCER = 0, RDK_CONSUMER = 1 } rdk_type_t;
#define RDK_CONF_OK 0

typedef struct rd_kafka_message_s {
        rd_kafka_resp_err_t err;
        rd_kafka_topic_t *rkt;
        int32_t partition;
        void *payload;
        size_t len;
        void *key;
        size_t key_len;
        int64_t offset;
        void *_private;
} rd_kafka_message_t;

typedef struct rd_kafka_topic_partition_s {
        char *topic;
        int32_t partition;
        int64_t offset;
        void *metadata;
        size_t metadata_size;
        void *opaque;
        rd_kafka_resp_err_t err;
        void *_private;
} rd_kafka_topic_partition_t;

typedef struct rd_kafka_topic_partition_list_s {
        int cnt;
        int size;
        rd_kafka_topic_partition_t *elems;
} rd_kafka_topic_partition_list_t;

/* rd_kafka_vtype_t, for rd_kafka_producev's argument list. */
enum {
        RDK_V_END = 0,
        RDK_V_TOPIC = 1,
        RDK_V_RKT = 2,
        RDK_V_PARTITION = 3,
        RDK_V_VALUE = 4,
        RDK_V_KEY = 5,
        RDK_V_OPAQUE = 6,
        RDK_V_MSGFLAGS = 7,
        RDK_V_TIMESTAMP = 8,
        RDK_V_HEADER = 9,
        RDK_V_HEADERS = 10,
};

#define RDK_MSG_F_COPY 0x2
#define RDK_OFFSET_BEGINNING -2
#define RDK_OFFSET_END -1
#define RDK_OFFSET_INVALID -1001
#define RDK_PURGE_F_QUEUE 0x1
#define RDK_PURGE_F_INFLIGHT 0x2
#define RDK_PURGE_F_NON_BLOCKING 0x4

#define RDK_ERR_NO_ERROR 0
#define RDK_ERR__PARTITION_EOF -191
#define RDK_ERR__QUEUE_FULL -184
#define RDK_ERR__STATE -172
#define RDK_ERR__AUTHENTICATION -169
#define RDK_ERR__FATAL -150

const char *rd_kafka_version_str(void);
const char *rd_kafka_err2str(rd_kafka_resp_err_t err);
rd_kafka_resp_err_t rd_kafka_last_error(void);

rd_kafka_conf_t *rd_kafka_conf_new(void);
void rd_kafka_conf_destroy(rd_kafka_conf_t *conf);
int rd_kafka_conf_set(rd_kafka_conf_t *conf, const char *name, const char *value, char *errstr, size_t errstr_size);
int rd_kafka_conf_get(const rd_kafka_conf_t *conf, const char *name, char *dest, size_t *dest_size);
void rd_kafka_conf_set_opaque(rd_kafka_conf_t *conf, void *opaque);
void rd_kafka_conf_set_dr_msg_cb(rd_kafka_conf_t *conf,
                                 void (*dr_msg_cb)(rd_kafka_t *rk, const rd_kafka_message_t *rkmessage, void *opaque));
void rd_kafka_conf_set_error_cb(rd_kafka_conf_t *conf, void (*error_cb)(rd_kafka_t *rk, int err, const char *reason, void *opaque));
void rd_kafka_conf_set_stats_cb(rd_kafka_conf_t *conf, int (*stats_cb)(rd_kafka_t *rk, char *json, size_t json_len, void *opaque));
void rd_kafka_conf_set_log_cb(rd_kafka_conf_t *conf, void (*log_cb)(const rd_kafka_t *rk, int level, const char *fac, const char *buf));

rd_kafka_t *rd_kafka_new(rdk_type_t type, rd_kafka_conf_t *conf, char *errstr, size_t errstr_size);
void rd_kafka_destroy(rd_kafka_t *rk);
void *rd_kafka_opaque(const rd_kafka_t *rk);
int rd_kafka_poll(rd_kafka_t *rk, int timeout_ms);
rd_kafka_resp_err_t rd_kafka_fatal_error(rd_kafka_t *rk, char *errstr, size_t errstr_size);

rd_kafka_resp_err_t rd_kafka_set_log_queue(rd_kafka_t *rk, rd_kafka_queue_t *rkqu);
const char *rd_kafka_name(const rd_kafka_t *rk);

rd_kafka_topic_conf_t *rd_kafka_topic_conf_new(void);
rd_kafka_topic_conf_t *rd_kafka_default_topic_conf_dup(rd_kafka_t *rk);
void rd_kafka_topic_conf_set_opaque(rd_kafka_topic_conf_t *conf, void *rkt_opaque);
rd_kafka_topic_t *rd_kafka_topic_new(rd_kafka_t *rk, const char *topic, rd_kafka_topic_conf_t *conf);
void rd_kafka_topic_destroy(rd_kafka_topic_t *rkt);
const char *rd_kafka_topic_name(const rd_kafka_topic_t *rkt);
void *rd_kafka_topic_opaque(const rd_kafka_topic_t *rkt);

rd_kafka_topic_partition_list_t *rd_kafka_topic_partition_list_new(int size);
void rd_kafka_topic_partition_list_destroy(rd_kafka_topic_partition_list_t *rkparlist);
rd_kafka_topic_partition_t *rd_kafka_topic_partition_list_add(rd_kafka_topic_partition_list_t *rktparlist, const char *topic,
                                                              int32_t partition);

rd_kafka_resp_err_t rd_kafka_assign(rd_kafka_t *rk, const rd_kafka_topic_partition_list_t *partitions);
rd_kafka_error_t *rd_kafka_incremental_assign(rd_kafka_t *rk, const rd_kafka_topic_partition_list_t *partitions);
rd_kafka_error_t *rd_kafka_incremental_unassign(rd_kafka_t *rk, const rd_kafka_topic_partition_list_t *partitions);
rd_kafka_error_t *rd_kafka_seek_partitions(rd_kafka_t *rk, rd_kafka_topic_partition_list_t *partitions, int timeout_ms);
rd_kafka_resp_err_t rd_kafka_position(rd_kafka_t *rk, rd_kafka_topic_partition_list_t *partitions);
rd_kafka_resp_err_t rd_kafka_pause_partitions(rd_kafka_t *rk, rd_kafka_topic_partition_list_t *partitions);
rd_kafka_resp_err_t rd_kafka_query_watermark_offsets(rd_kafka_t *rk, const char *topic, int32_t partition, int64_t *low,
                                                     int64_t *high, int timeout_ms);
rd_kafka_resp_err_t rd_kafka_get_watermark_offsets(rd_kafka_t *rk, const char *topic, int32_t partition, int64_t *low,
                                                   int64_t *high);
rd_kafka_resp_err_t rd_kafka_consumer_close(rd_kafka_t *rk);
rd_kafka_queue_t *rd_kafka_queue_get_consumer(rd_kafka_t *rk);
void rd_kafka_queue_destroy(rd_kafka_queue_t *rkqu);
ssize_t rd_kafka_consume_batch_queue(rd_kafka_queue_t *rkqu, int timeout_ms, rd_kafka_message_t **rkmessages,
                                     size_t rkmessages_size);
void rd_kafka_message_destroy(rd_kafka_message_t *rkmessage);
int64_t rd_kafka_message_timestamp(const rd_kafka_message_t *rkmessage, int *tstype);
rd_kafka_resp_err_t rd_kafka_message_headers(const rd_kafka_message_t *rkmessage, rd_kafka_headers_t **hdrsp);
rd_kafka_headers_t *rd_kafka_headers_copy(const rd_kafka_headers_t *src);
void rd_kafka_headers_destroy(rd_kafka_headers_t *hdrs);
rd_kafka_resp_err_t rd_kafka_header_get_all(const rd_kafka_headers_t *hdrs, size_t idx, const char **namep, const void **valuep,
                                            size_t *sizep);
rd_kafka_resp_err_t rd_kafka_header_get_last(const rd_kafka_headers_t *hdrs, const char *name, const void **valuep, size_t *sizep);
rd_kafka_headers_t *rd_kafka_headers_new(size_t initial_count);
rd_kafka_resp_err_t rd_kafka_header_add(rd_kafka_headers_t *hdrs, const char *name, ssize_t name_size, const void *value,
                                        ssize_t value_size);

rd_kafka_resp_err_t rd_kafka_producev(rd_kafka_t *rk, ...);
rd_kafka_resp_err_t rd_kafka_flush(rd_kafka_t *rk, int timeout_ms);
rd_kafka_resp_err_t rd_kafka_purge(rd_kafka_t *rk, int purge_flags);
int rd_kafka_outq_len(rd_kafka_t *rk);

rd_kafka_resp_err_t rd_kafka_error_code(const rd_kafka_error_t *error);
const char *rd_kafka_error_string(const rd_kafka_error_t *error);
void rd_kafka_error_destroy(rd_kafka_error_t *error);

#endif
