#pragma once
/*
 * Decoding of Amazon SQS JSON-protocol answers (application/x-amz-json-1.0):
 * GetQueueAttributes, ReceiveMessage and error replies (JSON, or the XML of the Query
 * protocol some endpoints answer with). Pure (fuzzable): no I/O.
 */
#include <stdbool.h>
#include <stddef.h>

#include "../core/model.h"

typedef struct sqs_attrs {
    long visible, in_flight, delayed;    /* -1 unknown */
    long max_receive;                    /* 0 when no RedrivePolicy */
    long retention_s;                    /* -1 unknown */
    char dlq_name[96];                   /* from RedrivePolicy.deadLetterTargetArn, "" none */
} sqs_attrs;

bool sqs_decode_attrs(const char *body, size_t len, sqs_attrs *out, char *why, size_t cap);

/* A failed answer → "QueueDoesNotExist: The specified queue does not exist." (code and
 * message, raw: sanitize on output). throttled says the caller should back off. */
void sqs_decode_error(const char *body, size_t len, long status, char *msg, size_t cap,
                      bool *throttled);

enum { SQS_PAYLOAD_CAP = 4096 };
/* Appends the messages of a ReceiveMessage answer as DLQ entries of `queue`, skipping
 * message ids already in items (an endpoint may return one message twice). Body
 * fields: taskId → execution_id, attempt, taskType (or the taskType message
 * attribute); payload capped at SQS_PAYLOAD_CAP bytes. */
bool sqs_decode_messages(const char *body, size_t len, const char *queue,
                         rd_dlq_entry **items, size_t *n, char *why, size_t cap);

/* Last path segment of a queue URL (the queue name), allocated; NULL when none. */
char *sqs_queue_name(const char *url);
