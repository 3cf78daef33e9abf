/* contour-run: runs one intent of a plugin through Contour's C API, as `tdm run` does.
 *
 *   contour-run MODULE.wasm INTENT [PARAMS_JSON] [--record FILE | --replay FILE]
 *
 * stdout: the outcome JSON as one line (what `tdm run` prints for the same module and params);
 * stderr: the plugin's own output, then `fuel_used=N`. Exit 0 when the intent completed, 1 when
 * it failed (a module refused at load included, a replay that diverged), 2 on usage or I/O
 * errors. --record FILE writes the trace of the run; --replay FILE replays such a trace against
 * MODULE and prints the outcome and fuel it reproduced. Only WebAssembly binaries: compile a
 * .wat first (wat2wasm). The virtual environment is seeded with 0. */

#include "contour.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXIT_COMPLETED 0
#define EXIT_FAILED 1
#define EXIT_USAGE 2

static int usage(void) {
    fprintf(stderr, "usage: contour-run MODULE.wasm INTENT [PARAMS_JSON] [--record FILE | --replay FILE]\n");
    return EXIT_USAGE;
}

/* Reads the whole file at `path` into a malloc'd buffer; NULL (with a message) on failure. */
static unsigned char *read_file(const char *path, size_t *len_out) {
    FILE *file = fopen(path, "rb");
    if (file == NULL) {
        fprintf(stderr, "contour-run: cannot open %s\n", path);
        return NULL;
    }
    size_t cap = 65536, len = 0;
    unsigned char *data = malloc(cap);
    while (data != NULL) {
        len += fread(data + len, 1, cap - len, file);
        if (len < cap) {
            break;
        }
        unsigned char *grown = realloc(data, cap * 2);
        if (grown == NULL) {
            free(data);
            data = NULL;
            break;
        }
        data = grown;
        cap *= 2;
    }
    int failed = data == NULL || ferror(file);
    fclose(file);
    if (failed) {
        fprintf(stderr, "contour-run: cannot read %s\n", path);
        free(data);
        return NULL;
    }
    *len_out = len;
    return data;
}

static int write_file(const char *path, const contour_buffer *buffer) {
    FILE *file = fopen(path, "wb");
    if (file == NULL) {
        fprintf(stderr, "contour-run: cannot create %s\n", path);
        return -1;
    }
    size_t len = contour_buffer_len(buffer);
    size_t written = fwrite(contour_buffer_data(buffer), 1, len, file);
    int closed = fclose(file);
    if (written != len || closed != 0) {
        fprintf(stderr, "contour-run: cannot write %s\n", path);
        return -1;
    }
    return 0;
}

/* Prints a buffer's bytes to `stream`, then `newline` when non-zero. */
static void print_buffer(FILE *stream, const contour_buffer *buffer, int newline) {
    fwrite(contour_buffer_data(buffer), 1, contour_buffer_len(buffer), stream);
    if (newline) {
        fputc('\n', stream);
    }
}

static int ends_with(const char *text, const char *suffix) {
    size_t n = strlen(text), m = strlen(suffix);
    return n >= m && strcmp(text + n - m, suffix) == 0;
}

/* --replay: replays the trace against the module and prints what it reproduced. */
static int replay(const unsigned char *module, size_t module_len, const char *trace_path) {
    size_t trace_len = 0;
    unsigned char *trace = read_file(trace_path, &trace_len);
    if (trace == NULL) {
        return EXIT_USAGE;
    }
    contour_replay_report report;
    memset(&report, 0, sizeof report);
    contour_status status = contour_replay(trace, trace_len, module, module_len, NULL, &report);
    free(trace);
    if (status == CONTOUR_STATUS_DIVERGED) {
        fprintf(stderr, "contour-run: replay diverged: ");
        print_buffer(stderr, report.divergence, 1);
        contour_replay_report_free(&report);
        return EXIT_FAILED;
    }
    if (status != CONTOUR_STATUS_OK) {
        fprintf(stderr, "contour-run: %s\n", contour_last_error());
        return EXIT_FAILED;
    }
    if (report.last_outcome == NULL) {
        fprintf(stderr, "contour-run: the trace holds no intent\n");
        contour_replay_report_free(&report);
        return EXIT_FAILED;
    }
    print_buffer(stdout, report.last_outcome, 1);
    fprintf(stderr, "fuel_used=%llu\n", (unsigned long long)report.last_fuel_used);
    int code = report.last_completed ? EXIT_COMPLETED : EXIT_FAILED;
    contour_replay_report_free(&report);
    return code;
}

/* Loads the plugin and runs the intent (recorded into `record_path` when not NULL). */
static int run(const unsigned char *module, size_t module_len, const char *module_path, const char *intent,
               const char *params, const char *record_path) {
    int code = EXIT_USAGE;
    contour_runtime *runtime = NULL;
    contour_plugin *plugin = NULL;
    contour_sandbox *sandbox = NULL;
    contour_buffer *refusal = NULL;
    contour_blocked_reason reason = CONTOUR_BLOCKED_REASON_NONE;

    if (contour_runtime_new(NULL, &runtime, &reason) != CONTOUR_STATUS_OK) {
        fprintf(stderr, "contour-run: %s\n", contour_last_error());
        return EXIT_FAILED;
    }
    contour_status status = contour_plugin_load(runtime, module, module_len, NULL, &plugin, &reason, &refusal);
    if (status == CONTOUR_STATUS_REFUSED) {
        fprintf(stderr, "contour-run: refused at load (%s): %s\n", contour_blocked_reason_str(reason),
                contour_last_error());
        print_buffer(stdout, refusal, 1);
        fprintf(stderr, "fuel_used=0\n");
        contour_buffer_free(refusal);
        code = EXIT_FAILED;
        goto done;
    }
    if (status != CONTOUR_STATUS_OK || contour_sandbox_new(plugin, 0, &sandbox) != CONTOUR_STATUS_OK) {
        fprintf(stderr, "contour-run: %s\n", contour_last_error());
        goto done;
    }
    if (record_path != NULL &&
        contour_sandbox_record_start(sandbox, module, module_len, (const uint8_t *)module_path,
                                     strlen(module_path)) != CONTOUR_STATUS_OK) {
        fprintf(stderr, "contour-run: %s\n", contour_last_error());
        goto done;
    }
    contour_report report;
    status = contour_sandbox_execute(sandbox, (const uint8_t *)intent, strlen(intent), (const uint8_t *)params,
                                     strlen(params), &report);
    if (status != CONTOUR_STATUS_OK) {
        fprintf(stderr, "contour-run: %s\n", contour_last_error());
        goto done;
    }
    print_buffer(stderr, report.plugin_stdout, 0);
    print_buffer(stderr, report.plugin_stderr, 0);
    print_buffer(stdout, report.outcome, 1);
    fprintf(stderr, "fuel_used=%llu\n", (unsigned long long)report.fuel_used);
    code = report.completed ? EXIT_COMPLETED : EXIT_FAILED;
    contour_report_free(&report);
    if (record_path != NULL) {
        contour_buffer *trace = NULL;
        if (contour_sandbox_record_stop(sandbox, &trace) != CONTOUR_STATUS_OK) {
            fprintf(stderr, "contour-run: %s\n", contour_last_error());
            code = EXIT_USAGE;
        } else {
            if (write_file(record_path, trace) != 0) {
                code = EXIT_USAGE;
            }
            contour_buffer_free(trace);
        }
    }
done:
    if (sandbox != NULL) {
        contour_sandbox_free(sandbox);
    }
    if (plugin != NULL) {
        contour_plugin_free(plugin);
    }
    contour_runtime_free(runtime);
    return code;
}

int main(int argc, char **argv) {
    const char *positional[3] = {NULL, NULL, "{}"};
    const char *record_path = NULL, *replay_path = NULL;
    int count = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--record") == 0 || strcmp(argv[i], "--replay") == 0) {
            if (i + 1 >= argc || record_path != NULL || replay_path != NULL) {
                return usage();
            }
            if (strcmp(argv[i], "--record") == 0) {
                record_path = argv[++i];
            } else {
                replay_path = argv[++i];
            }
        } else if (count < 3) {
            positional[count++] = argv[i];
        } else {
            return usage();
        }
    }
    if (count < 2) {
        return usage();
    }
    if (ends_with(positional[0], ".wat")) {
        fprintf(stderr, "contour-run: %s: only WebAssembly binaries are read; compile it first (wat2wasm)\n",
                positional[0]);
        return EXIT_USAGE;
    }
    size_t module_len = 0;
    unsigned char *module = read_file(positional[0], &module_len);
    if (module == NULL) {
        return EXIT_USAGE;
    }
    int code = replay_path != NULL ? replay(module, module_len, replay_path)
                                   : run(module, module_len, positional[0], positional[1], positional[2], record_path);
    free(module);
    return code;
}
