package io.nvmf4j.cli;

import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine.Command;

/** {@code nvmfctl health}: liveness and readiness (no token needed); exit 3 when the service is not ready. */
@Command(name = "health", description = "Liveness and readiness of the service (exit 3 when not ready).")
final class HealthCommand extends ApiCommand {
    @Override
    public Integer call() {
        ApiClient.Response r = api().exchange("GET", ApiClient.V1 + "/health", null);
        if (r.status() != 200 && r.status() != 503) {
            throw api().failure(r);
        }
        JsonNode h = r.json(mapper());
        if (json()) {
            printJson(h);
        } else {
            out().println(h.path("status").asText() + " (live: " + (h.path("live").asBoolean() ? "yes" : "no")
                + ", ready: " + (h.path("ready").asBoolean() ? "yes" : "no") + ") at " + api().url());
            out().flush();
        }
        return r.status() == 200 ? 0 : CliException.UNAVAILABLE;
    }
}
