/* What the console and the CLI ask of the open system's sources, as the session's verbs:
 * neither room calls the sources itself (docs/architecture.md, the room table). Each verb
 * is a no-op (or says so) when the session has no sources. */
#include "session.h"

static rd_sources *src_of(const rd_session *s)
{
    return s ? session_sources(s) : NULL;
}

bool session_settled(const rd_session *s)
{
    rd_sources *src = src_of(s);
    return src && sources_settled(src);
}

bool session_idle(const rd_session *s)
{
    rd_sources *src = src_of(s);
    return src && sources_idle(src);
}

void session_refresh(rd_session *s)
{
    if (src_of(s))
        sources_refresh(src_of(s));
}

void session_set_filter(rd_session *s, const rd_exec_filter *f)
{
    if (src_of(s))
        sources_set_filter(src_of(s), f);
}

void session_page(rd_session *s, int dir)
{
    if (src_of(s))
        sources_page(src_of(s), dir);
}

void session_jump(rd_session *s, const char *id)
{
    if (src_of(s))
        sources_jump(src_of(s), id);
}

void session_request_chain(rd_session *s, const char *id)
{
    if (src_of(s))
        sources_request_chain(src_of(s), id);
}

void session_request_detail(rd_session *s, const char *id)
{
    if (src_of(s))
        sources_request_detail(src_of(s), id);
}

void session_request_worker(rd_session *s, const char *id)
{
    if (src_of(s))
        sources_request_worker(src_of(s), id);
}

void session_peek_dlq(rd_session *s, bool more)
{
    if (src_of(s))
        sources_peek_dlq(src_of(s), more);
}

bool session_request_groups(rd_session *s, double window_s, long cap)
{
    return src_of(s) && sources_request_groups(src_of(s), window_s, cap);
}

void session_dlq_page(rd_session *s, int dir)
{
    if (src_of(s))
        sources_dlq_page(src_of(s), dir);
}

void session_dlq_order(rd_session *s, bool oldest, const char *text)
{
    if (src_of(s))
        sources_dlq_order(src_of(s), oldest, text);
}

void session_set_interest(rd_session *s, unsigned panels)
{
    if (src_of(s))
        sources_set_interest(src_of(s), panels);
}
