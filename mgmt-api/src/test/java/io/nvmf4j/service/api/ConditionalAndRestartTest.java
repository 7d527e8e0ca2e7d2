package io.nvmf4j.service.api;

import com.fasterxml.jackson.databind.JsonNode;
import io.nvmf4j.javaengine.JavaEngine;
import io.nvmf4j.service.api.Http.Res;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * ETag and If-Match on the whole document (RFC 9110 8.8.3, 13.1.1), and restartRequired: which stored start-up
 * settings wait for the next start, with GET /transports showing the live and the stored values.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ConditionalAndRestartTest {
    private static final String CONFIG = "/api/v1/config";

    @TempDir
    Path dir;
    private TestService t;

    @BeforeEach
    void start() throws Exception {
        t = TestService.start(dir, c -> { });
    }

    @AfterEach
    void stop() {
        t.close();
    }

    @Test
    void getAndPutCarryAnEtagThatChangesWithTheDocument() {
        Res get = t.http.get(CONFIG);
        String etag = get.header("ETag");
        assertThat(etag).matches("\"[0-9a-f]{32}\"");
        assertThat(t.http.get(CONFIG).header("ETag")).as("same document, same tag").isEqualTo(etag);

        assertThat(t.http.post("/api/v1/bdevs", "{\"name\":\"n1\",\"type\":\"null\",\"numBlocks\":8}").status())
            .isEqualTo(201);
        String changed = t.http.get(CONFIG).header("ETag");
        assertThat(changed).as("any change changes the tag").isNotEqualTo(etag);

        Res put = t.http.withIfMatch(changed).put(CONFIG, get.body());
        assertThat(put.status()).as("%s", put).isEqualTo(200);
        assertThat(put.header("ETag")).as("the PUT's answer carries the new document's tag")
            .isEqualTo(t.http.get(CONFIG).header("ETag")).isEqualTo(etag);
    }

    @Test
    void ifMatchMismatchIs412AndChangesNothing() {
        Res get = t.http.get(CONFIG);
        String etag = get.header("ETag");
        String wanted = get.body().replace("\"cores\" : 1", "\"cores\" : 2");
        assertThat(wanted).isNotEqualTo(get.body());
        String before = t.fileJson();

        for (String stale : List.of("\"00000000000000000000000000000000\"", "W/" + etag, etag.replace("\"", ""))) {
            Res r = t.http.withIfMatch(stale).put(CONFIG, wanted);
            assertThat(r.status()).as("If-Match: %s -> %s", stale, r).isEqualTo(412);
            assertThat(r.header("Content-Type")).isEqualTo("application/json");
            assertThat(r.error()).isEqualTo("If-Match: the document has changed; its ETag is now " + etag
                + " (GET it again, then retry)");
            assertThat(r.field()).isNull();
            assertThat(r.header("ETag")).as("412 tells the current tag").isEqualTo(etag);
        }
        assertThat(t.fileJson()).as("nothing changed").isEqualTo(before);
        assertThat(t.http.get(CONFIG).header("ETag")).isEqualTo(etag);
    }

    @Test
    void ifMatchStarOrAListWithTheCurrentTagOrNoIfMatchReplaces() {
        Res get = t.http.get(CONFIG);
        String etag = get.header("ETag");
        String cores2 = get.body().replace("\"cores\" : 1", "\"cores\" : 2");
        assertThat(t.http.withIfMatch("*").put(CONFIG, cores2).status()).as("* matches any current document")
            .isEqualTo(200);
        String now = t.http.get(CONFIG).header("ETag");
        assertThat(now).isNotEqualTo(etag);
        Res list = t.http.withIfMatch("\"other\", " + now).put(CONFIG, get.body());
        assertThat(list.status()).as("%s", list).isEqualTo(200);
        Res unconditional = t.http.put(CONFIG, cores2);
        assertThat(unconditional.status()).as("no If-Match: unconditional").isEqualTo(200);
        assertThat(unconditional.json().get("cores").asInt()).isEqualTo(2);
    }

    @Test
    void putConfigNamesTheStartupSettingsThatWaitForARestart() {
        Res get = t.http.get(CONFIG);
        assertThat(get.header(ApiContract.RESTART_REQUIRED)).as("nothing pending at start").isNull();
        String wanted = get.body().replace("\"cores\" : 1", "\"cores\" : 2")
            .replace("\"idleStrategy\" : \"backoff\"", "\"idleStrategy\" : \"busy\"");
        Res put = t.http.put(CONFIG, wanted);
        assertThat(put.status()).as("%s", put).isEqualTo(200);
        assertThat(put.header(ApiContract.RESTART_REQUIRED)).isEqualTo("cores, idleStrategy");
        assertThat(t.http.get(CONFIG).header(ApiContract.RESTART_REQUIRED)).isEqualTo("cores, idleStrategy");
        assertThat(((JavaEngine) t.service.target().engine()).pollGroups().describe())
            .as("the running poll groups keep their settings").startsWith("1 poll group(s), backoff idle strategy");
    }

    @Test
    void transportsShowLiveAndStoredValuesAndWhatWaitsForARestart() throws Exception {
        JsonNode fresh = t.http.get("/api/v1/transports").json();
        assertThat(fresh.get("tcp")).isEqualTo(fresh.get("live").get("tcp"));
        assertThat(fresh.get("rdma")).isEqualTo(fresh.get("live").get("rdma"));
        assertThat(fresh.get("restartRequired").asBoolean()).isFalse();
        assertThat(fresh.get("restartFields")).isEmpty();

        Res tcp = t.http.put("/api/v1/transports/tcp", "{\"maxQueueDepth\":256}");
        assertThat(tcp.status()).as("%s", tcp).isEqualTo(200);
        assertThat(tcp.json().get("restartRequired").asBoolean()).isTrue();
        assertThat(strings(tcp.json().get("restartFields"))).containsExactly("tcp.maxQueueDepth");
        assertThat(tcp.json().get("tcp").get("maxQueueDepth").asInt()).isEqualTo(256);

        Res rdma = t.http.put("/api/v1/transports/rdma", "{\"maxIoQueues\":4,\"srqDepth\":512}");
        assertThat(rdma.status()).as("%s", rdma).isEqualTo(200);
        assertThat(strings(rdma.json().get("restartFields")))
            .containsExactly("tcp.maxQueueDepth", "rdma.maxIoQueues", "rdma.srqDepth");
        assertThat(rdma.json().get("rdma").get("srqDepth").asInt()).isEqualTo(512);
        assertThat(t.http.put("/api/v1/transports/rdma", "{\"srqDepth\":1}").error())
            .isEqualTo("srqDepth: must be 16..16384, got 1");

        JsonNode pending = t.http.get("/api/v1/transports").json();
        assertThat(pending.get("tcp").get("maxQueueDepth").asInt()).as("stored").isEqualTo(256);
        assertThat(pending.get("live").get("tcp").get("maxQueueDepth").asInt()).as("in effect").isEqualTo(128);
        assertThat(pending.get("rdma").get("maxIoQueues").asInt()).as("stored").isEqualTo(4);
        assertThat(pending.get("live").get("rdma").get("maxIoQueues").asInt()).as("in effect").isEqualTo(8);
        assertThat(pending.get("restartRequired").asBoolean()).isTrue();
        assertThat(t.fileJson()).contains("\"srqDepth\" : 512");

        t.close();
        t = TestService.restart(dir);
        JsonNode restarted = t.http.get("/api/v1/transports").json();
        assertThat(restarted.get("live").get("tcp").get("maxQueueDepth").asInt()).as("applied by the restart")
            .isEqualTo(256);
        assertThat(restarted.get("live").get("rdma").get("srqDepth").asInt()).isEqualTo(512);
        assertThat(restarted.get("restartRequired").asBoolean()).isFalse();
        assertThat(restarted.get("restartFields")).isEmpty();
        Res back = t.http.put("/api/v1/transports/tcp", "{\"maxQueueDepth\":256}");
        assertThat(back.json().get("restartRequired").asBoolean()).as("storing the value in effect needs no restart")
            .isFalse();
    }

    private static List<String> strings(JsonNode array) {
        List<String> out = new ArrayList<>();
        array.forEach(n -> out.add(n.asText()));
        return out;
    }
}
