package io.nvmf4j.service.api;

import io.nvmf4j.config.BdevConfig;
import io.nvmf4j.service.api.Http.Res;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** /api/v1/bdevs/{name}/errors on a real port: inject, list, clear; each bad request a 4xx with its reason. */
@Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ErrorInjectionApiTest {
    @TempDir
    Path dir;
    private TestService t;
    private Http http;

    @BeforeEach
    void start() throws Exception {
        t = TestService.start(dir, c -> {
            c.bdevs.add(new BdevConfig("base0", "malloc", 512, 2048));
            BdevConfig e = new BdevConfig("err0", "error", 512, 0);
            e.base = "base0";
            c.bdevs.add(e);
        });
        http = t.http;
    }

    @AfterEach
    void stop() {
        t.close();
    }

    @Test
    void injectListAndClearWithoutTouchingTheSavedDocument() {
        String saved = t.fileJson();
        Res r = http.post("/api/v1/bdevs/err0/errors", "{\"ioType\": \"read\", \"errorType\": \"eio\", \"count\": 3}");
        assertThat(r.status()).as("%s", r).isEqualTo(201);
        assertThat(r.json().get(0).get("ioType").asText()).isEqualTo("read");
        assertThat(r.json().get(0).get("count").asInt()).isEqualTo(3);
        Res all = http.post("/api/v1/bdevs/err0/errors", "{\"ioType\": \"all\", \"errorType\": \"timeout\", \"timeoutMs\": 500}");
        assertThat(all.status()).as("%s", all).isEqualTo(201);
        assertThat(http.get("/api/v1/bdevs/err0/errors").json()).hasSize(5);
        assertThat(t.fileJson()).as("injections are not saved").isEqualTo(saved);
        assertThat(http.delete("/api/v1/bdevs/err0/errors").status()).isEqualTo(204);
        assertThat(http.get("/api/v1/bdevs/err0/errors").json()).isEmpty();
    }

    @Test
    void badRequestsAreRefusedWithTheReason() {
        Res type = http.post("/api/v1/bdevs/err0/errors", "{\"ioType\": \"trim\", \"errorType\": \"eio\"}");
        assertThat(type.status()).as("%s", type).isEqualTo(400);
        assertThat(type.body()).contains("ioType must be read, write");
        Res missing = http.post("/api/v1/bdevs/err0/errors", "{\"ioType\": \"read\"}");
        assertThat(missing.status()).isEqualTo(400);
        assertThat(missing.field()).isEqualTo("errorType");
        Res unknownField = http.post("/api/v1/bdevs/err0/errors", "{\"ioType\": \"read\", \"errorType\": \"eio\", \"x\": 1}");
        assertThat(unknownField.status()).isEqualTo(400);
        Res notError = http.post("/api/v1/bdevs/base0/errors", "{\"ioType\": \"read\", \"errorType\": \"eio\"}");
        assertThat(notError.status()).isEqualTo(400);
        assertThat(notError.body()).contains("not an error bdev");
        assertThat(http.get("/api/v1/bdevs/nope/errors").status()).isEqualTo(404);
        assertThat(http.delete("/api/v1/bdevs/nope/errors").status()).isEqualTo(404);
        for (Res r : new Res[] {type, missing, unknownField, notError}) {
            assertThat(r.body()).doesNotContain("Exception").doesNotContain("\tat ");
        }
    }
}
