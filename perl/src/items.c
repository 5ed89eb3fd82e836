/*
 * items.c - the items of a whole memcached get response, as stored (see
 * items.h).
 */
#include "cmrx.h"
#include "items.h"

/* The engine's default cap on a value's declared length (1 GiB), as
 * GetParser's reader uses it. */
#define ITEMS_ENGINE_MAX_VALUE 0

int
items_read(const char *bytes, size_t len, items_each_fn each, void *ctx, items_failure *failure)
{
    cmrx_parser *engine = cmrx_parser_new(ITEMS_ENGINE_MAX_VALUE);
    cmrx_event ev; /* the engine writes only what each event defines */
    items_item item = { 0 };
    size_t at = 0;
    int in_value = 0; /* between a VALUE line and the CRLF after its data */
    int result = ITEMS_CUT_SHORT;

    failure->why = NULL;
    failure->at = 0;
    failure->key = NULL;
    failure->key_len = 0;
    if (!engine) {
        failure->why = "out of memory";
        return ITEMS_BAD;
    }
    for (;;) {
        int kind = cmrx_parser_next(engine, (const uint8_t *)bytes + at, len - at, &ev);
        if (kind == CMRX_EV_PARTIAL)
            break; /* the end of the bytes: after END, or a cut */
        if (kind == CMRX_EV_ERROR) {
            failure->why = cmrx_parse_error_str(ev.error);
            failure->at = at;
            if (in_value) {
                failure->key = item.key;
                failure->key_len = item.key_len;
            }
            result = ITEMS_BAD;
            break;
        }
        switch (kind) {
        case CMRX_EV_VALUE:
            in_value = 1;
            item.key = (const char *)ev.key;
            item.key_len = ev.key_len;
            item.flags = ev.flags;
            item.has_cas = ev.has_cas;
            item.cas = ev.has_cas ? ev.cas : 0;
            /* The data follows the line: the engine's DATA events hand out
             * those bytes, which stay where they are. */
            item.data = bytes + at + ev.consumed;
            item.data_len = (size_t)ev.len; /* at most 1 GiB */
            break;
        case CMRX_EV_VALUE_END:
            in_value = 0;
            each(ctx, &item);
            break;
        case CMRX_EV_END:
            result = ITEMS_COMPLETE; /* bytes after it: the next event is an error */
            break;
        default: /* CMRX_EV_DATA */
            break;
        }
        at += ev.consumed;
    }
    cmrx_parser_free(engine);
    return result;
}
