/* Core API answers to an action (actions/request.c `result_from_response`): byte 0 picks
 * the HTTP status (the ones with a meaning of their own, or any), whether the request was
 * sent and whether the body was cut; byte 1 the action; the rest is the body (as the HTTP
 * client hands it over: NUL-terminated after body_len bytes, NUL bytes possible inside).
 * The result is always one classified line: a code that fits the status, a message that
 * is NUL-terminated, non-empty and holds no line end, an attempt in range, and the same
 * answer twice gives the same result. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/actions/request.h"
#include "fuzz.h"

static const long statuses[] = { 0, 200, 201, 202, 204, 401, 403, 404, 409, 500, 502, 503,
                                 299, 300, 100, 999, -1 };

static rd_result_code expected_code(const rd_http_resp *resp)
{
    switch (resp->status) {
    case 0: return resp->request_sent ? RD_RES_MAYBE_APPLIED : RD_RES_UNREACHABLE;
    case 401: return RD_RES_UNAUTHORIZED;
    case 403: return RD_RES_FORBIDDEN;
    case 502: return RD_RES_BAD_GATEWAY;
    default: break;
    }
    if (resp->status >= 200 && resp->status < 300)
        return RD_RES_OK;
    return RD_RES__COUNT;                 /* 404, 409 and the rest: checked below */
}

static void classify(rd_result *r, rd_action a, const rd_http_resp *resp)
{
    memset(r, 0x5A, sizeof *r);
    r->action = a;
    result_from_response(r, resp);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2 || size > 65536)
        return 0;
    rd_http_resp resp;
    memset(&resp, 0, sizeof resp);
    size_t k = data[0] % (sizeof statuses / sizeof *statuses);
    resp.status = statuses[k] >= 0 ? statuses[k] : 100 + data[0] * 3;
    resp.request_sent = data[0] & 0x40;
    resp.truncated = data[0] & 0x80;
    rd_action a = (rd_action)(data[1] % RD_ACT__COUNT);
    snprintf(resp.error, sizeof resp.error, "connection reset");
    resp.body = fuzz_cstr(data + 2, size - 2);
    resp.body_len = size - 2;

    rd_result r, again;
    classify(&r, a, &resp);
    classify(&again, a, &resp);
    FUZZ_ASSERT(memchr(r.message, '\0', sizeof r.message));
    FUZZ_ASSERT(r.message[0] != '\0');
    FUZZ_ASSERT(!strpbrk(r.message, "\r\n"));
    FUZZ_ASSERT(strcmp(r.message, again.message) == 0 && r.code == again.code &&
                r.attempt == again.attempt);
    FUZZ_ASSERT(r.http_status == resp.status);
    FUZZ_ASSERT(r.attempt >= 0 && r.attempt < 1000000000);
    FUZZ_ASSERT(r.code < RD_RES__COUNT);
    rd_result_code want = expected_code(&resp);
    if (want != RD_RES__COUNT)
        FUZZ_ASSERT(r.code == want);
    else if (resp.status == 404)
        FUZZ_ASSERT(r.code == RD_RES_NOT_FOUND || r.code == RD_RES_OTHER);
    else if (resp.status == 409)
        FUZZ_ASSERT(r.code == RD_RES_CONFLICT_STATUS || r.code == RD_RES_CONFLICT_BUDGET);
    else
        FUZZ_ASSERT(r.code == RD_RES_OTHER);
    if (r.code != RD_RES_OK)
        FUZZ_ASSERT(r.attempt == 0);
    free(resp.body);
    return 0;
}
