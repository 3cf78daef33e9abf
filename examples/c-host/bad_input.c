/* bad_input: feeds Contour's C API what a careless or hostile C caller would, and checks that
 * every call answers an error code and a message, never a crash (run under valgrind and
 * AddressSanitizer by `make c-host-check`).
 *
 *   bad_input ECHO.wasm FORWARD.wasm
 *
 * ECHO is examples/echo/echo.wat compiled, FORWARD std-host/fixtures/forward.wat (a plugin that
 * turns its params into one host call and answers what the host said). Exit 0 when every check
 * passed; each failure is a line on stderr. */

#include "contour.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

/* Checks that `status` is `expected` and that a failure left a message naming the function
 * called (`call` is the call's source text, so an older message cannot pass for a new one). */
static void expect_call(const char *what, const char *call, contour_status status, contour_status expected) {
    const char *message = contour_last_error();
    size_t name_len = strcspn(call, "(");
    if (status != expected) {
        fprintf(stderr, "FAIL %s: got %s, expected %s (%s)\n", what, contour_status_str(status),
                contour_status_str(expected), message);
        failures++;
    } else if (expected != CONTOUR_STATUS_OK && (strncmp(message, call, name_len) != 0 || message[name_len] != ':')) {
        fprintf(stderr, "FAIL %s: %s without its message (last error: %s)\n", what, contour_status_str(status), message);
        failures++;
    } else {
        printf("ok   %-52s %s%s%s\n", what, contour_status_str(status), expected != CONTOUR_STATUS_OK ? ": " : "",
               expected != CONTOUR_STATUS_OK ? message : "");
    }
}

#define expect(what, call, expected) expect_call(what, #call, call, expected)

static void check(const char *what, int condition) {
    if (!condition) {
        fprintf(stderr, "FAIL %s\n", what);
        failures++;
    } else {
        printf("ok   %s\n", what);
    }
}

static unsigned char *read_file(const char *path, size_t *len_out) {
    FILE *file = fopen(path, "rb");
    if (file == NULL) {
        return NULL;
    }
    fseek(file, 0, SEEK_END);
    long len = ftell(file);
    fseek(file, 0, SEEK_SET);
    unsigned char *data = len > 0 ? malloc((size_t)len) : NULL;
    if (data != NULL && fread(data, 1, (size_t)len, file) != (size_t)len) {
        free(data);
        data = NULL;
    }
    fclose(file);
    *len_out = (size_t)len;
    return data;
}

/* What the host callback does this time. */
enum mode { GARBAGE, HUGE, REENTER, SILENT, FAILING, GOOD };
static enum mode mode;
static contour_sandbox *running;
static contour_status seen[3];

static int32_t host(void *user_data, const uint8_t *method, size_t method_len, const uint8_t *params,
                    size_t params_len, contour_host_answer *answer) {
    (void)user_data, (void)method, (void)method_len, (void)params, (void)params_len;
    static const char garbage[] = "{not json";
    static const char good[] = "{\"value\":\"eu-west\"}";
    contour_report report;
    switch (mode) {
    case GARBAGE:
        seen[0] = contour_host_answer_ok(answer, (const uint8_t *)garbage, strlen(garbage));
        seen[1] = contour_host_answer_ok(answer, (const uint8_t *)"\xff\xfe", 2);
        return 0; /* no answer was stored: the plugin is told host_fault */
    case HUGE: {
        size_t len = CONTOUR_MAX_HOST_ANSWER_BYTES + 1;
        char *huge = malloc(len);
        if (huge == NULL) {
            return 1;
        }
        memset(huge, ' ', len);
        huge[0] = '"', huge[len - 1] = '"';
        seen[0] = contour_host_answer_ok(answer, (const uint8_t *)huge, len);
        free(huge);
        return 0;
    }
    case REENTER:
        seen[0] = contour_sandbox_execute(running, (const uint8_t *)"greet", 5, NULL, 0, &report);
        seen[1] = contour_sandbox_free(running);
        seen[2] = contour_sandbox_set_host(running, NULL, NULL, NULL, 0);
        return contour_host_answer_ok(answer, (const uint8_t *)good, strlen(good)) == CONTOUR_STATUS_OK ? 0 : 1;
    case SILENT:
        return 0;
    case FAILING:
        return 7;
    case GOOD:
        seen[0] = contour_host_answer_ok(answer, (const uint8_t *)good, strlen(good));
        seen[1] = contour_host_answer_ok(answer, (const uint8_t *)good, strlen(good));
        return 0;
    }
    return 1;
}

/* Runs the forward plugin's one host call with the callback in `how`; the outcome JSON. */
static char *forward(contour_sandbox *sandbox, enum mode how) {
    static const char call[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"context.read\",\"params\":{\"key\":\"region\"}}";
    mode = how;
    running = sandbox;
    memset(seen, 0, sizeof seen);
    contour_report report;
    if (contour_sandbox_execute(sandbox, (const uint8_t *)"forward", 7, (const uint8_t *)call, strlen(call), &report) !=
        CONTOUR_STATUS_OK) {
        fprintf(stderr, "FAIL forward: %s\n", contour_last_error());
        failures++;
        return NULL;
    }
    size_t len = contour_buffer_len(report.outcome);
    char *text = malloc(len + 1);
    if (text != NULL) {
        memcpy(text, contour_buffer_data(report.outcome), len);
        text[len] = '\0';
    }
    contour_report_free(&report);
    return text;
}

static void check_outcome(const char *what, char *outcome, const char *needle) {
    int found = outcome != NULL && strstr(outcome, needle) != NULL;
    if (!found) {
        fprintf(stderr, "FAIL %s: outcome %s lacks %s\n", what, outcome ? outcome : "(none)", needle);
        failures++;
    } else {
        printf("ok   %-52s %s\n", what, needle);
    }
    free(outcome);
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: bad_input ECHO.wasm FORWARD.wasm\n");
        return 2;
    }
    size_t echo_len = 0, forward_len = 0;
    unsigned char *echo = read_file(argv[1], &echo_len);
    unsigned char *forward_wasm = read_file(argv[2], &forward_len);
    if (echo == NULL || forward_wasm == NULL) {
        fprintf(stderr, "bad_input: cannot read the modules\n");
        return 2;
    }
    contour_runtime *runtime = NULL;
    contour_plugin *plugin = NULL, *fwd = NULL;
    contour_sandbox *sandbox = NULL;
    contour_report report;
    contour_blocked_reason reason = CONTOUR_BLOCKED_REASON_NONE;
    expect("runtime_new", contour_runtime_new(NULL, &runtime, &reason), CONTOUR_STATUS_OK);
    expect("plugin_load echo", contour_plugin_load(runtime, echo, echo_len, NULL, &plugin, NULL, NULL), CONTOUR_STATUS_OK);
    expect("sandbox_new", contour_sandbox_new(plugin, 0, &sandbox), CONTOUR_STATUS_OK);

    /* NULL, dangling and wrong-kind handles. */
    expect("execute on a NULL sandbox", contour_sandbox_execute(NULL, (const uint8_t *)"greet", 5, NULL, 0, &report),
           CONTOUR_STATUS_NULL_POINTER);
    expect("execute with a NULL report", contour_sandbox_execute(sandbox, (const uint8_t *)"greet", 5, NULL, 0, NULL),
           CONTOUR_STATUS_NULL_POINTER);
    expect("plugin_load with a NULL runtime", contour_plugin_load(NULL, echo, echo_len, NULL, &plugin, NULL, NULL),
           CONTOUR_STATUS_NULL_POINTER);
    int on_stack = 0;
    expect("execute on a dangling sandbox",
           contour_sandbox_execute((contour_sandbox *)&on_stack, (const uint8_t *)"greet", 5, NULL, 0, &report),
           CONTOUR_STATUS_INVALID_HANDLE);
    expect("execute on a made-up address",
           contour_sandbox_execute((contour_sandbox *)(uintptr_t)0x1000, (const uint8_t *)"g", 1, NULL, 0, &report),
           CONTOUR_STATUS_INVALID_HANDLE);
    expect("execute on a plugin (wrong kind)",
           contour_sandbox_execute((contour_sandbox *)plugin, (const uint8_t *)"greet", 5, NULL, 0, &report),
           CONTOUR_STATUS_WRONG_KIND);
    expect("free a sandbox as a buffer", contour_buffer_free((contour_buffer *)sandbox), CONTOUR_STATUS_WRONG_KIND);
    check("buffer_len of a NULL buffer is 0 with a message",
          contour_buffer_len(NULL) == 0 && contour_last_error()[0] != '\0');
    check("blocked_reason_str of 999 is NULL", contour_blocked_reason_str(999) == NULL);
    check("blocked_reason_str names fuel_exhausted",
          strcmp(contour_blocked_reason_str(CONTOUR_BLOCKED_REASON_FUEL_EXHAUSTED), "fuel_exhausted") == 0);

    /* Lengths and contents. */
    expect("a length that overflows the address space",
           contour_plugin_load(runtime, (const uint8_t *)(uintptr_t)16, SIZE_MAX - 8, NULL, &fwd, NULL, NULL),
           CONTOUR_STATUS_LENGTH_OVERFLOW);
    expect("NULL bytes with a length", contour_plugin_load(runtime, NULL, 10, NULL, &fwd, NULL, NULL),
           CONTOUR_STATUS_NULL_POINTER);
    reason = CONTOUR_BLOCKED_REASON_NONE;
    expect("a module of 0 bytes", contour_plugin_load(runtime, echo, 0, NULL, &fwd, &reason, NULL),
           CONTOUR_STATUS_REFUSED);
    check("  refused as invalid_module", reason == CONTOUR_BLOCKED_REASON_INVALID_MODULE);
    size_t big_len = 32u * 1024 * 1024 + 1;
    unsigned char *big = calloc(big_len, 1);
    contour_buffer *refusal = NULL;
    expect("a module of 32 MiB + 1", contour_plugin_load(runtime, big, big_len, NULL, &fwd, &reason, &refusal),
           CONTOUR_STATUS_REFUSED);
    check("  refused as module_too_large", reason == CONTOUR_BLOCKED_REASON_MODULE_TOO_LARGE);
    check("  with the failed outcome", refusal != NULL && contour_buffer_len(refusal) > 0);
    contour_buffer_free(refusal);
    free(big);
    expect("params that are not JSON",
           contour_sandbox_execute(sandbox, (const uint8_t *)"greet", 5, (const uint8_t *)"{x", 2, &report),
           CONTOUR_STATUS_INVALID_ARGUMENT);
    expect("a method that is not UTF-8",
           contour_sandbox_execute(sandbox, (const uint8_t *)"\xc3", 1, NULL, 0, &report),
           CONTOUR_STATUS_INVALID_ARGUMENT);
    expect("a grant that does not parse",
           contour_sandbox_set_host(sandbox, host, NULL, (const uint8_t *)"[\"root\"]", 8),
           CONTOUR_STATUS_INVALID_ARGUMENT);

    /* Host callbacks: garbage, a huge answer, no answer, a failure, re-entrance. */
    contour_sandbox *fsandbox = NULL;
    expect("plugin_load forward", contour_plugin_load(runtime, forward_wasm, forward_len, NULL, &fwd, NULL, NULL),
           CONTOUR_STATUS_OK);
    expect("sandbox_new forward", contour_sandbox_new(fwd, 0, &fsandbox), CONTOUR_STATUS_OK);
    static const char grants[] = "[\"context:read\"]";
    expect("set_host", contour_sandbox_set_host(fsandbox, host, NULL, (const uint8_t *)grants, strlen(grants)),
           CONTOUR_STATUS_OK);
    check_outcome("a callback answering garbage: host_fault", forward(fsandbox, GARBAGE), "host_fault");
    check("  answer_ok refused the garbage", seen[0] == CONTOUR_STATUS_INVALID_ARGUMENT);
    check("  answer_ok refused bytes that are not UTF-8", seen[1] == CONTOUR_STATUS_INVALID_ARGUMENT);
    check_outcome("a callback answering 16 MiB + 1: host_fault", forward(fsandbox, HUGE), "host_fault");
    check("  answer_ok refused it as too large", seen[0] == CONTOUR_STATUS_TOO_LARGE);
    check_outcome("a callback returning 0 without answering", forward(fsandbox, SILENT), "host_fault");
    check_outcome("a callback returning 7", forward(fsandbox, FAILING), "host_intent_failed");
    check_outcome("a callback calling back into its sandbox", forward(fsandbox, REENTER), "eu-west");
    check("  execute from the callback is busy", seen[0] == CONTOUR_STATUS_BUSY);
    check("  free from the callback is busy", seen[1] == CONTOUR_STATUS_BUSY);
    check("  set_host from the callback is busy", seen[2] == CONTOUR_STATUS_BUSY);
    check_outcome("a good answer", forward(fsandbox, GOOD), "eu-west");
    check("  a second answer is refused", seen[1] == CONTOUR_STATUS_INVALID_STATE);

    /* Double frees. */
    expect("execute echo",
           contour_sandbox_execute(sandbox, (const uint8_t *)"greet", 5, (const uint8_t *)"{\"name\":\"Ada\"}", 14,
                                   &report),
           CONTOUR_STATUS_OK);
    contour_buffer *outcome = report.outcome;
    expect("free the outcome buffer", contour_buffer_free(outcome), CONTOUR_STATUS_OK);
    expect("free the outcome buffer again", contour_buffer_free(outcome), CONTOUR_STATUS_INVALID_HANDLE);
    report.outcome = NULL;
    expect("report_free (outcome already NULL)", contour_report_free(&report), CONTOUR_STATUS_OK);
    expect("report_free again", contour_report_free(&report), CONTOUR_STATUS_OK);
    expect("free the sandbox", contour_sandbox_free(sandbox), CONTOUR_STATUS_OK);
    expect("free the sandbox again", contour_sandbox_free(sandbox), CONTOUR_STATUS_INVALID_HANDLE);
    expect("execute on a freed sandbox",
           contour_sandbox_execute(sandbox, (const uint8_t *)"greet", 5, NULL, 0, &report),
           CONTOUR_STATUS_INVALID_HANDLE);
    expect("free a NULL sandbox", contour_sandbox_free(NULL), CONTOUR_STATUS_NULL_POINTER);
    expect("free the forward sandbox", contour_sandbox_free(fsandbox), CONTOUR_STATUS_OK);
    expect("free the plugins", contour_plugin_free(plugin), CONTOUR_STATUS_OK);
    expect("free the forward plugin", contour_plugin_free(fwd), CONTOUR_STATUS_OK);
    expect("free the plugin again", contour_plugin_free(plugin), CONTOUR_STATUS_INVALID_HANDLE);
    expect("free the runtime", contour_runtime_free(runtime), CONTOUR_STATUS_OK);
    expect("free the runtime again", contour_runtime_free(runtime), CONTOUR_STATUS_INVALID_HANDLE);
    free(echo);
    free(forward_wasm);
    if (failures != 0) {
        fprintf(stderr, "bad_input: %d checks failed\n", failures);
        return 1;
    }
    printf("bad_input: every check passed\n");
    return 0;
}
