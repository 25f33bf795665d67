/* The HTTP client's refusals that need no server: a header value holding CR or LF (a token
 * file with a stray line break) never starts a request. */
#include <event2/event.h>
#include <stddef.h>

#include "../../src/io/http.h"
#include "../unit/check.h"

static void never(const rd_http_resp *r, void *ud)
{
    (void)r;
    *(int *)ud += 1;
}

static void test_header_injection(void)
{
    struct event_base *base = event_base_new();
    rd_http *h = http_new(base);
    int called = 0;
    static const char *const bad[][2] = {
        {"Authorization: Bearer abc\r\nX-Evil: 1", NULL},
        {"Authorization: Bearer abc\n", NULL},
        {"X-Ok: 1", "Authorization: Bearer a\rb"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        const char *hdrs[3] = {bad[i][0], bad[i][1], NULL};
        rd_http_req req = {.method = "POST", .url = "http://127.0.0.1:9/x", .body = "{}",
                           .headers = hdrs};
        CHECK(http_start(h, &req, never, &called) == 0);
    }
    CHECK(http_pending(h) == 0);
    /* a clean header list starts (the transfer is then cancelled: no callback) */
    const char *ok[] = {"Authorization: Bearer abc", NULL};
    rd_http_req req = {.method = "GET", .url = "http://127.0.0.1:9/x", .headers = ok};
    uint64_t id = http_start(h, &req, never, &called);
    CHECK(id != 0);
    CHECK(http_pending(h) == 1);
    http_cancel(h, id);
    CHECK(http_pending(h) == 0);
    CHECK(called == 0);
    http_free(h);
    event_base_free(base);
}

int main(void)
{
    test_header_injection();
    return check_done("io_http");
}
