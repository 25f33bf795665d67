#pragma once
/*
 * The sweep's keys read ahead (redis_keyq.c): what SCAN returned and no HGETALL has asked
 * for yet, a FIFO in one growing buffer (no allocation per key). It lets SCAN run ahead
 * of the fetches, so the fetches sent to the server never wait for a SCAN reply queued
 * behind them (redis_sweep.c).
 */
#include <stddef.h>

typedef struct rs_keyq rs_keyq;

rs_keyq *rs_keyq_new(void);
void rs_keyq_free(rs_keyq *q);
void rs_keyq_push(rs_keyq *q, const char *key, size_t len);
/* The oldest key (NULL when empty), removed; valid until the next push or clear. */
const char *rs_keyq_pop(rs_keyq *q, size_t *len);
size_t rs_keyq_len(const rs_keyq *q);
void rs_keyq_clear(rs_keyq *q);     /* empty; keeps its memory for the next sweep */
size_t rs_keyq_memory(const rs_keyq *q);   /* bytes held (its buffers' capacity) */
