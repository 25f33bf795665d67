/* What became of a retry (core/outcome.h): the classification of a store's row against the
 * group the batch froze, the counts, and the canary's and breaker's rule at each boundary. */
#include "outcome.h"

#include <stdlib.h>

#include "check.h"
#include "fingerprint.h"

int main(void)
{
    char fp[256];
    fingerprint_make("bulk boom id 17", fp, sizeof fp);
    static const struct {
        const char *outcome, *error, *orig, *fp;
        rd_bout want;
    } rows[] = {
        {NULL, NULL, NULL, NULL, BOUT_UNREAD},                        /* no attempt yet */
        {"succeeded", NULL, NULL, NULL, BOUT_SUCCEEDED},
        {"running", NULL, NULL, NULL, BOUT_RUNNING},
        {"queued", NULL, NULL, NULL, BOUT_RUNNING},                   /* any other word */
        {"failed", "bulk boom id 42", NULL, "", BOUT_NEW_ERROR},      /* group unknown */
        {"failed", "bulk boom id 42", "bulk boom id 9", NULL, BOUT_FAILED_AGAIN},
        {"failed", "disk full on vol-3", "bulk boom id 9", NULL, BOUT_NEW_ERROR},
        {"failed", NULL, "bulk boom id 9", NULL, BOUT_NEW_ERROR},     /* no error text now */
        {"failed", "", "", NULL, BOUT_NEW_ERROR},
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        rd_bout_row r = {rows[i].outcome, rows[i].error, rows[i].orig};
        char ctx[32];
        snprintf(ctx, sizeof ctx, "row %zu", i);
        CHECK_MSG(bout_classify(&r, rows[i].fp) == rows[i].want, ctx);
    }
    /* the frozen fingerprint wins over the store's own original error */
    rd_bout_row same = {"failed", "bulk boom id 99", "something else"};
    CHECK(bout_classify(&same, fp) == BOUT_FAILED_AGAIN);
    rd_bout_row other = {"failed", "something else", "bulk boom id 99"};
    CHECK(bout_classify(&other, fp) == BOUT_NEW_ERROR);
    CHECK(bout_classify(NULL, fp) == BOUT_UNREAD);

    CHECK_STR(bout_name(BOUT_FAILED_AGAIN), "failed_again");
    CHECK_STR(bout_name(BOUT_NONE), "none");
    CHECK_STR(bout_name((rd_bout)99), "none");
    CHECK(bout_final(BOUT_SUCCEEDED) && bout_final(BOUT_NEW_ERROR) && bout_final(BOUT_FAILED_AGAIN));
    CHECK(!bout_final(BOUT_RUNNING) && !bout_final(BOUT_UNREAD) && !bout_final(BOUT_NONE));

    rd_bout_counts c = {0};
    CHECK_NEAR(bout_refail_share(&c), 0);
    CHECK(bout_verdict(&c, 0.5, 1) == BOUT_GO);       /* nothing in: never a trip */
    CHECK(bout_verdict(&c, 0.0, 0) == BOUT_GO);
    /* the breaker: 20 outcomes in at least, a share above max */
    static const struct {
        size_t ok, again, nerr, running, min;
        double max;
        rd_bout_verdict want;
    } v[] = {
        {9, 10, 0, 50, 20, 0.5, BOUT_GO},      /* 19 in: not yet */
        {10, 10, 0, 0, 20, 0.5, BOUT_GO},      /* 50 % is not above 50 % */
        {9, 11, 0, 0, 20, 0.5, BOUT_TRIP},     /* 55 % */
        {0, 10, 10, 0, 20, 0.5, BOUT_GO},      /* new errors are not failing again */
        {0, 1, 0, 0, 1, 0.5, BOUT_TRIP},       /* the canary: one in is enough */
        {1, 0, 0, 0, 1, 0.0, BOUT_GO},         /* 0 % allowed, 0 % failing */
        {99, 1, 0, 0, 1, 0.0, BOUT_TRIP},      /* 0 % allowed, 1 % failing */
        {0, 5, 0, 0, 1, 1.0, BOUT_GO},         /* 100 % allowed */
    };
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
        rd_bout_counts k = {.succeeded = v[i].ok, .failed_again = v[i].again,
                            .new_error = v[i].nerr, .running = v[i].running};
        char ctx[32];
        snprintf(ctx, sizeof ctx, "verdict %zu", i);
        CHECK_MSG(bout_verdict(&k, v[i].max, v[i].min) == v[i].want, ctx);
    }
    rd_bout order[] = {BOUT_NONE, BOUT_UNREAD, BOUT_RUNNING, BOUT_SUCCEEDED, BOUT_SUCCEEDED,
                       BOUT_FAILED_AGAIN, BOUT_NEW_ERROR};
    for (size_t i = 0; i < sizeof order / sizeof *order; i++)
        bout_count(&c, order[i]);
    CHECK(c.unread == 1 && c.running == 1 && c.succeeded == 2 && c.failed_again == 1 &&
          c.new_error == 1);
    CHECK(bout_finished(&c) == 4);
    CHECK_NEAR(bout_refail_share(&c), 0.25);
    char line[200];
    bout_line(&c, line, sizeof line);
    CHECK_STR(line, "2 succeeded, 1 failed again, 1 new error, 1 running, 1 not yet in the store");
    return check_done("outcome");
}
