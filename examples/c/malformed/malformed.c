/* malformed: a C plugin that breaks the ABI on purpose, to show that the host (not the SDK)
 * enforces it. Each intent returns a different kind of bad response:
 *
 *   not_json     a well-framed response whose bytes are not JSON
 *   past_memory  a length prefix (4 MiB - 16: under the response limit) that runs past the end
 *                of linear memory (a few pages)
 *   bad_shape    JSON, but not an outcome ({"status":"maybe"})
 *   bad_utf8     a well-framed response with invalid UTF-8
 *   (anything else) not_json
 */
#include "tdm_plugin.h"

static uint8_t frame[4];

tdm_response tdm_handle(const char *method, size_t method_len, const char *params, size_t params_len) {
    (void)params;
    (void)params_len;
    if (tdm_str_eq(method, method_len, "past_memory")) {
        /* 0x003f_fff0 bytes claimed: within max_response_bytes, far past the memory's end. */
        frame[0] = 0xf0;
        frame[1] = 0xff;
        frame[2] = 0x3f;
        frame[3] = 0x00;
        return (tdm_response){frame};
    }
    if (tdm_str_eq(method, method_len, "bad_shape")) {
        static const char text[] = "{\"status\":\"maybe\"}";
        return tdm_response_bytes(text, sizeof text - 1);
    }
    if (tdm_str_eq(method, method_len, "bad_utf8")) {
        static const char text[] = "{\"status\":\"completed\",\"output\":\"\xff\xfe\"}";
        return tdm_response_bytes(text, sizeof text - 1);
    }
    static const char text[] = "this is not JSON";
    return tdm_response_bytes(text, sizeof text - 1);
}
