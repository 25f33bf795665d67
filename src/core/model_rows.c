/* One row of the model freed (model.h: execution_clear, worker_clear, queue_clear,
 * dlq_entry_clear): below model.c and storegroups.c, which both hold executions. */
#include "model.h"

#include "model_tables.h"

/* The owned strings of each row are named by its field table (model_tables.c). */
void execution_clear(rd_execution *e) { record_clear(&exec_record, e); }
void worker_clear(rd_worker *w) { record_clear(&worker_record, w); }
void queue_clear(rd_queue *q) { record_clear(&queue_record, q); }
void dlq_entry_clear(rd_dlq_entry *d) { record_clear(&dlq_record, d); }
