/* io/sigv4 against AWS's published Signature V4 test suite (AKIDEXAMPLE, 20150830T123600Z,
 * region us-east-1, service "service"), and the SQS JSON decoder. */
#include <stdlib.h>
#include <string.h>

#include "../../src/io/sigv4.h"
#include "../../src/sources/sqs_decode.h"
#include "check.h"

static const char SECRET[] = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
enum { WHEN = 1440938160 };           /* 2015-08-30T12:36:00Z */

static void test_vectors(void)
{
    static const struct {
        const char *method, *url, *token, *sig, *signed_hdrs;
    } cases[] = {
        { "GET", "https://example.amazonaws.com/", NULL,
          "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31", "host;x-amz-date" },
        { "POST", "https://example.amazonaws.com/", NULL,
          "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b", "host;x-amz-date" },
        /* parameters out of order: the canonical query string is sorted */
        { "GET", "https://example.amazonaws.com/?Param2=value2&Param1=value1", NULL,
          "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500", "host;x-amz-date" },
        { "GET", "https://example.amazonaws.com/",
          "6e86291e8372ff2a2260956d9b8aae1d763fbf315fa00fa31553b73ebf194267",
          "07ec1639c89043aa0e3e2de82b96708f198cceab042d4a97044c66dd9f74e7f8",
          "host;x-amz-date;x-amz-security-token" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        sigv4_in in = { .method = cases[i].method, .url = cases[i].url, .region = "us-east-1",
                        .service = "service", .access_key = "AKIDEXAMPLE",
                        .secret_key = SECRET, .token = cases[i].token, .when = WHEN };
        sigv4_out out;
        char why[128];
        CHECK(sigv4_sign(&in, &out, why, sizeof why));
        CHECK_STR(out.signature, cases[i].sig);
        CHECK_STR(out.date_hdr, "X-Amz-Date: 20150830T123600Z");
        CHECK(strstr(out.auth_hdr, "Credential=AKIDEXAMPLE/20150830/us-east-1/service/"
                                   "aws4_request, SignedHeaders=") != NULL);
        CHECK(strstr(out.auth_hdr, cases[i].signed_hdrs) != NULL);
        CHECK((out.token_hdr != NULL) == (cases[i].token != NULL));
        sigv4_out_free(&out);
    }
    sigv4_in bad = { .method = "GET", .url = "https://x/", .region = "us-east-1",
                     .service = "sqs", .access_key = "", .secret_key = SECRET, .when = WHEN };
    sigv4_out out;
    char why[128];
    CHECK(!sigv4_sign(&bad, &out, why, sizeof why));
}

static void test_region(void)
{
    static const struct { const char *host, *want; } cases[] = {
        { "sqs.eu-west-1.amazonaws.com", "eu-west-1" },
        { "eu-central-1.queue.amazonaws.com", "eu-central-1" },
        { "sqs.us-gov-west-1.amazonaws.com", "us-gov-west-1" },
        { "127.0.0.1:4566", NULL },
        { "queue.amazonaws.com", NULL },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char out[64] = "";
        bool ok = sigv4_region_from_host(cases[i].host, out, sizeof out);
        CHECK_MSG(ok == (cases[i].want != NULL), cases[i].host);
        if (cases[i].want)
            CHECK_STR(out, cases[i].want);
    }
}

static void test_decode(void)
{
    sqs_attrs a;
    char why[256];
    const char *ok = "{\"Attributes\":{\"ApproximateNumberOfMessages\":\"5\","
                     "\"ApproximateNumberOfMessagesNotVisible\":\"2\","
                     "\"ApproximateNumberOfMessagesDelayed\":\"1\","
                     "\"MessageRetentionPeriod\":\"345600\",\"RedrivePolicy\":"
                     "\"{\\\"deadLetterTargetArn\\\":\\\"arn:aws:sqs:us-east-1:1:q-dlq\\\","
                     "\\\"maxReceiveCount\\\":\\\"3\\\"}\"}}";
    CHECK(sqs_decode_attrs(ok, strlen(ok), &a, why, sizeof why));
    CHECK(a.visible == 5 && a.in_flight == 2 && a.delayed == 1 && a.max_receive == 3 &&
          a.retention_s == 345600);
    CHECK_STR(a.dlq_name, "q-dlq");
    static const char *const bad[] = { "", "[]", "{\"Attributes\":[]}", "{\"Attributes\":{}}",
                                       "{\"Attributes\":{\"ApproximateNumberOfMessages\":\"x\"}}",
                                       "{\"Attr" };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        CHECK_MSG(!sqs_decode_attrs(bad[i], strlen(bad[i]), &a, why, sizeof why), bad[i]);

    char msg[256];
    bool thr;
    const char *e = "{\"__type\":\"com.amazonaws.sqs#QueueDoesNotExist\",\"message\":\"gone\"}";
    sqs_decode_error(e, strlen(e), 400, msg, sizeof msg, &thr);
    CHECK_STR(msg, "QueueDoesNotExist: gone");
    CHECK(!thr);
    const char *x = "<ErrorResponse><Error><Code>Throttling</Code><Message>slow</Message>"
                    "</Error></ErrorResponse>";
    sqs_decode_error(x, strlen(x), 400, msg, sizeof msg, &thr);
    CHECK_STR(msg, "Throttling: slow");
    CHECK(thr);
    sqs_decode_error("", 0, 403, msg, sizeof msg, &thr);
    CHECK_STR(msg, "AccessDenied (HTTP 403)");

    const char *m = "{\"Messages\":[{\"MessageId\":\"m1\",\"Body\":\"{\\\"taskId\\\":\\\"t1\\\","
                    "\\\"attempt\\\":2,\\\"taskType\\\":\\\"render\\\"}\",\"Attributes\":"
                    "{\"ApproximateReceiveCount\":\"3\",\"SentTimestamp\":\"1700000000000\","
                    "\"ApproximateFirstReceiveTimestamp\":\"1700000001500\"}},"
                    "{\"MessageId\":\"m1\",\"Body\":\"dup\"},"
                    "{\"MessageId\":\"m2\",\"Body\":\"not json\"}]}";
    rd_dlq_entry *items = NULL;
    size_t n = 0;
    CHECK(sqs_decode_messages(m, strlen(m), "q-dlq", &items, &n, why, sizeof why));
    CHECK(n == 2);
    if (n == 2) {
        CHECK_STR(items[0].execution_id, "t1");
        CHECK_STR(items[0].task_type, "render");
        CHECK(items[0].attempt == 2 && items[0].count == 3);
        CHECK_NEAR(items[0].sent_at, 1700000000.0);
        CHECK_NEAR(items[0].first_death_at, 1700000001.5);
        CHECK(items[1].execution_id == NULL && items[1].attempt == 0);
        CHECK_STR(items[1].payload, "not json");
    }
    for (size_t i = 0; i < n; i++)
        dlq_entry_clear(&items[i]);
    free(items);
    CHECK(!sqs_decode_messages("{\"Messages\":{}}", 15, "q", &items, &n, why, sizeof why));

    char *name = sqs_queue_name("https://sqs.us-east-1.amazonaws.com/1234/my-queue");
    CHECK_STR(name, "my-queue");
    free(name);
    CHECK(sqs_queue_name("https://sqs.us-east-1.amazonaws.com") == NULL);
}

int main(void)
{
    test_vectors();
    test_region();
    test_decode();
    return check_done("sigv4");
}
