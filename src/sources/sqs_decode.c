/* Amazon SQS JSON-protocol answers (see sqs_decode.h). */
#include "sqs_decode.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/jsonget.h"
#include "../core/xalloc.h"

/* SQS sends numbers as strings ("12"); tolerate real numbers too. */
static long num(const cJSON *o, const char *k, long def)
{
    const char *s = json_str(o, k);
    if (!s)
        return json_long(o, k, def, 999999999999999L);
    if (!*s)
        return def;
    char *end;
    long l = strtol(s, &end, 10);
    return *end || l < 0 ? def : l;
}

static void arn_name(const char *arn, char *out, size_t cap)
{
    const char *p = arn ? strrchr(arn, ':') : NULL;
    snprintf(out, cap, "%s", p ? p + 1 : "");
}

bool sqs_decode_attrs(const char *body, size_t len, sqs_attrs *out, char *why, size_t cap)
{
    *out = (sqs_attrs){ .visible = -1, .in_flight = -1, .delayed = -1, .retention_s = -1 };
    cJSON *j = cJSON_ParseWithLength(body ? body : "", len);
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(j, "Attributes");
    if (!cJSON_IsObject(a)) {
        snprintf(why, cap, "malformed GetQueueAttributes answer (no Attributes object)");
        cJSON_Delete(j);
        return false;
    }
    out->visible = num(a, "ApproximateNumberOfMessages", -1);
    out->in_flight = num(a, "ApproximateNumberOfMessagesNotVisible", -1);
    out->delayed = num(a, "ApproximateNumberOfMessagesDelayed", -1);
    out->retention_s = num(a, "MessageRetentionPeriod", -1);
    const char *rp = json_str(a, "RedrivePolicy");
    if (rp) {
        cJSON *p = cJSON_Parse(rp);
        arn_name(json_str(p, "deadLetterTargetArn"), out->dlq_name, sizeof out->dlq_name);
        out->max_receive = num(p, "maxReceiveCount", 0);
        cJSON_Delete(p);
    }
    cJSON_Delete(j);
    if (out->visible < 0) {
        snprintf(why, cap, "malformed GetQueueAttributes answer (no message counts)");
        return false;
    }
    return true;
}

/* <Code>X</Code> ... <Message>Y</Message> of a Query-protocol error. */
static bool xml_field(const char *body, const char *tag, char *out, size_t cap)
{
    char open[32], close[32];
    snprintf(open, sizeof open, "<%s>", tag);
    snprintf(close, sizeof close, "</%s>", tag);
    const char *a = strstr(body, open);
    const char *b = a ? strstr(a, close) : NULL;
    if (!b)
        return false;
    a += strlen(open);
    size_t n = (size_t)(b - a) < cap - 1 ? (size_t)(b - a) : cap - 1;
    memcpy(out, a, n);
    out[n] = '\0';
    return true;
}

void sqs_decode_error(const char *body, size_t len, long status, char *msg, size_t cap,
                      bool *throttled)
{
    char code[96] = "", text[160] = "";
    cJSON *j = body && len ? cJSON_ParseWithLength(body, len) : NULL;
    if (cJSON_IsObject(j)) {
        const char *t = json_str(j, "__type");
        const char *m = json_str(j, "message");
        if (!m)
            m = json_str(j, "Message");
        const char *hash = t ? strrchr(t, '#') : NULL;
        snprintf(code, sizeof code, "%s", hash ? hash + 1 : t ? t : "");
        snprintf(text, sizeof text, "%s", m ? m : "");
    } else if (body && len) {
        char *copy = xstrndup(body, len);
        xml_field(copy, "Code", code, sizeof code);
        xml_field(copy, "Message", text, sizeof text);
        free(copy);
    }
    cJSON_Delete(j);
    *throttled = status == 503 || strstr(code, "Throttl") || strstr(code, "RequestThrottled") ||
                 strstr(code, "TooManyRequests") || strstr(code, "SlowDown");
    if (!code[0] && status == 403)
        snprintf(code, sizeof code, "AccessDenied");
    if (!code[0])
        snprintf(msg, cap, "SQS answered HTTP %ld", status);
    else if (!text[0])
        snprintf(msg, cap, "%s (HTTP %ld)", code, status);
    else
        snprintf(msg, cap, "%s: %s", code, text);
}

enum { SQS_ID_CAP = 128 };           /* message ids are kept to this many bytes */

/* id already in items, compared as it is stored (capped) */
static bool seen(const rd_dlq_entry *items, size_t n, const char *id)
{
    for (size_t i = 0; i < n; i++)
        if (items[i].id && strncmp(items[i].id, id, SQS_ID_CAP) == 0)
            return true;
    return false;
}

static double ms_attr(const cJSON *attrs, const char *k)
{
    long v = num(attrs, k, 0);
    return v > 0 ? (double)v / 1000.0 : 0;
}

static void body_fields(rd_dlq_entry *d, const char *text)
{
    cJSON *b = cJSON_Parse(text);
    if (!cJSON_IsObject(b)) {
        cJSON_Delete(b);
        return;
    }
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(b, "taskId");
    if (cJSON_IsString(id) && id->valuestring[0])
        d->execution_id = xstrndup(id->valuestring, 256);
    else if (cJSON_IsNumber(id) && fabs(id->valuedouble) < 9007199254740992.0 &&
             id->valuedouble == floor(id->valuedouble))
        d->execution_id = xasprintf("%.0f", id->valuedouble);   /* integral ids only */
    long att = num(b, "attempt", 0);
    d->attempt = att > 0 && att < 1000000 ? (int)att : 0;
    const char *tt = json_str(b, "taskType");
    if (tt && *tt)
        d->task_type = xstrndup(tt, 128);
    cJSON_Delete(b);
}

static void one_message(const cJSON *m, const char *queue, rd_dlq_entry *d)
{
    memset(d, 0, sizeof *d);
    d->id = xstrndup(json_str(m, "MessageId"), SQS_ID_CAP);
    d->queue = xstrdup(queue);
    const char *text = json_str(m, "Body");
    const cJSON *attrs = cJSON_GetObjectItemCaseSensitive(m, "Attributes");
    d->count = num(attrs, "ApproximateReceiveCount", -1);
    /* FIRST is the message's own sent time (kept when SQS moves it to the DLQ): its first
     * receive in the DLQ is often our own first peek, used only without a sent time */
    d->sent_at = ms_attr(attrs, "SentTimestamp");
    double first_rx = ms_attr(attrs, "ApproximateFirstReceiveTimestamp");
    d->first_death_at = d->sent_at > 0 && (first_rx <= 0 || d->sent_at < first_rx) ? d->sent_at : first_rx;
    char src[96] = "";
    arn_name(json_str(attrs, "DeadLetterQueueSourceArn"), src, sizeof src);
    if (src[0])
        d->origin_queue = xstrdup(src);
    if (text) {
        body_fields(d, text);
        d->payload = xstrndup(text, SQS_PAYLOAD_CAP);
    }
    const cJSON *ma = cJSON_GetObjectItemCaseSensitive(m, "MessageAttributes");
    const char *tt = json_str(json_obj(ma, "taskType"), "StringValue");
    if (!d->task_type && tt && *tt)
        d->task_type = xstrndup(tt, 128);
    if (d->task_type)
        d->reason = xasprintf("taskType %s", d->task_type);
    d->redelivered = d->count > 1;
}

bool sqs_decode_messages(const char *body, size_t len, const char *queue,
                         rd_dlq_entry **items, size_t *n, char *why, size_t cap)
{
    cJSON *j = cJSON_ParseWithLength(body ? body : "", len);
    if (!cJSON_IsObject(j)) {
        snprintf(why, cap, "malformed ReceiveMessage answer (not a JSON object)");
        cJSON_Delete(j);
        return false;
    }
    const cJSON *msgs = cJSON_GetObjectItemCaseSensitive(j, "Messages");
    if (msgs && !cJSON_IsArray(msgs)) {
        snprintf(why, cap, "malformed ReceiveMessage answer (Messages is not a list)");
        cJSON_Delete(j);
        return false;
    }
    const cJSON *m;
    cJSON_ArrayForEach(m, msgs) {
        const char *id = json_str(m, "MessageId");
        if (!cJSON_IsObject(m) || !id || !*id || seen(*items, *n, id))
            continue;
        *items = xrealloc(*items, (*n + 1) * sizeof **items);
        one_message(m, queue, &(*items)[*n]);
        (*n)++;
    }
    cJSON_Delete(j);
    return true;
}

char *sqs_queue_name(const char *url)
{
    if (!url)
        return NULL;
    const char *q = url + strcspn(url, "?#");
    const char *end = q;
    while (end > url && end[-1] == '/')
        end--;
    const char *p = end;
    while (p > url && p[-1] != '/')
        p--;
    if (p == end || (p > url + 1 && p[-1] == '/' && p[-2] == '/'))
        return NULL;                 /* no path, only a host */
    return xstrndup(p, (size_t)(end - p));
}
