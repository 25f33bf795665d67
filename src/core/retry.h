#pragma once
/*
 * Retry eligibility and next-retry ETA, exactly per system (SPEC §1).
 * Pure functions; every boundary is unit-tested in tests/unit/test_retry.c.
 */
#include "model.h"

/* tasker: NULL inputs are passed as -1 (attempts NULL → 0, retryable NULL → true,
 * max_attempts NULL → 3). Eligible when attempts == 0 || (retryable && attempts < max).
 * max_attempts == 0 → the first attempt is still eligible (Tasker's own readiness SQL
 * runs a step with attempts = 0), no retry after it; flagged either way as a config
 * warning. retryable == 0 && max > 1 → flagged. */
rd_verdict retry_tasker(int attempts, int max_attempts, int retryable);
/* A Tasker step in its state: a finished or in-flight step (complete, resolved_manually,
 * cancelled, in_progress, enqueued*) is not retried whatever its budget, and the reason
 * says what is true of it ("complete", "in progress"); other states: retry_tasker. */
rd_verdict retry_tasker_step(const char *state, int attempts, int max_attempts, int retryable);
/* next retry: last_attempted + backoff_request_seconds when set (>= 0), else
 * exponential default 2^attempts seconds capped at 300 (lo == hi). */
void retry_tasker_eta(double last_attempted_at, int backoff_request_seconds, int attempts,
                      double *lo, double *hi);

/* attune: eligible when status == failed && max_retries > 0 && retry_count < max_retries.
 * max_retries -1 = NULL (treated as 0). */
rd_verdict retry_attune(const char *status, int retry_count, int max_retries);
typedef struct rd_attune_backoff { double base, multiplier, max, jitter; } rd_attune_backoff;
void attune_backoff_defaults(rd_attune_backoff *b);   /* 1 s, 2.0, 300 s, 0.2 */
/* delay range for the retry after retry_count: min(base*mult^n, max) * (1 ± jitter) */
void retry_attune_delay(const rd_attune_backoff *b, int retry_count, double *lo, double *hi);
/* retry reason from an error message (systems.md substrings); "unknown" otherwise. */
const char *attune_classify_reason(const char *error);

/* alakai: only the newest attempt counts; eligible when status == failed &&
 * attempt <= max_retries (MAX_RETRIES, default 1). */
rd_verdict retry_alakai(const char *status, int attempt, int max_retries);
/* A failed Alakai task at this attempt has used its budget (retry_alakai's NO for a failed
 * one), without building the verdict's text: for walks over every task. */
bool retry_alakai_exhausted(int attempt, int max_retries);

/* openagents: eligible when max_retries > 0 && retry_count < max_retries (and the job
 * is failed). Status compared case-insensitively. */
rd_verdict retry_openagents(const char *status, int retry_count, int max_retries);
/* policy JSON (fixed_delay / exponential_backoff); false when missing or malformed,
 * then retry_delay_s (>=0) is used as a fixed delay when given, else false. */
bool retry_openagents_delay(const char *policy_json, int retry_delay_s, int retry_count,
                            double *lo, double *hi);
