package io.nvmf4j.service.api;

import com.fasterxml.jackson.databind.JsonNode;
import io.nvmf4j.config.ApiConfig;
import io.vertx.core.Vertx;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import static org.assertj.core.api.Assertions.assertThat;

/** The generated OpenAPI document lists exactly the (method, path) pairs the router serves. */
class OpenApiTest {
    @Test
    void everyRouteIsDocumentedAndEveryDocumentedRouteIsServed() throws Exception {
        Vertx vertx = Vertx.vertx();
        try {
            ApiConfig api = new ApiConfig();
            api.token = "0123456789abcdef0123";
            ApiToken token = ApiToken.resolve(api, Path.of("/nonexistent"), Path.of("/nonexistent/config.json"));
            Set<String> served = new TreeSet<>();
            for (String route : ApiRoutes.describe(ApiRoutes.router(vertx, null, token, null, () -> true))) {
                served.add(route.replaceAll(":([A-Za-z]+)", "{$1}"));
            }
            Set<String> documented = new TreeSet<>();
            JsonNode doc = Http.parse(ApiContract.document());
            for (Iterator<Map.Entry<String, JsonNode>> p = doc.get("paths").fields(); p.hasNext(); ) {
                Map.Entry<String, JsonNode> e = p.next();
                e.getValue().fieldNames().forEachRemaining(m -> documented.add(m.toUpperCase() + " " + e.getKey()));
            }
            assertThat(served).as("routes served").hasSizeGreaterThanOrEqualTo(34);
            assertThat(documented).isEqualTo(served);
        } finally {
            vertx.close().toCompletionStage().toCompletableFuture().get();
        }
    }
}
