/* The names of the model's states (model.h: core_state_name, elig_name, health_name,
 * src_state_name): below model.c and the field tables (model_tables.c), which both print
 * them. */
#include "model.h"

const char *core_state_name(rd_core_state s)
{
    switch (s) {
    case RD_CORE_CHECKING: return "checking";
    case RD_CORE_OK: return "ok";
    case RD_CORE_ERROR: return "error";
    case RD_CORE_DOWN: return "down";
    case RD_CORE_NONE: break;
    }
    return "none";
}

const char *elig_name(rd_elig e)
{
    switch (e) {
    case RD_ELIG_YES: return "yes";
    case RD_ELIG_NO: return "no";
    case RD_ELIG_CONFIG_ERROR: return "config-error";
    case RD_ELIG_UNKNOWN: break;
    }
    return "unknown";
}

const char *health_name(rd_health h)
{
    switch (h) {
    case RD_HEALTH_HEALTHY: return "healthy";
    case RD_HEALTH_DEGRADED: return "degraded";
    case RD_HEALTH_UNHEALTHY: return "unhealthy";
    case RD_HEALTH_UNKNOWN: break;
    }
    return "unknown";
}

const char *src_state_name(rd_src_state s)
{
    switch (s) {
    case RD_SRC_OK: return "ok";
    case RD_SRC_STALE: return "stale";
    case RD_SRC_DOWN: return "down";
    case RD_SRC_CONNECTING: break;
    }
    return "connecting";
}
