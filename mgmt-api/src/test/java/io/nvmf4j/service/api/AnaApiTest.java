package io.nvmf4j.service.api;

import com.fasterxml.jackson.databind.JsonNode;
import io.nvmf4j.it.AnaLogs;
import io.nvmf4j.it.Le;
import io.nvmf4j.testhost.Completion;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.TcpHostOptions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static io.nvmf4j.service.api.Http.enc;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * ANA states through REST: GET and PUT of a listener's groups, the connected host's ANA change event and log page,
 * persistence in the document, and each refusal with its field.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class AnaApiTest {
    @TempDir
    static Path dir;
    private static TestService t;
    private static String ana;

    @BeforeAll
    static void start() throws Exception {
        t = TestService.start(dir.resolve("state"), c -> c.subsystems.get(0).listeners.get(0).anaStates = null);
        ana = "/api/v1/subsystems/" + enc(TestService.NQN) + "/listeners/tcp/127.0.0.1/" + t.nvmePort + "/ana";
    }

    @AfterAll
    static void stop() {
        if (t != null) {
            t.close();
        }
    }

    @Test
    void stateChangeReachesTheConnectedHostAndTheDocument() throws Exception {
        assertThat(t.http.get(ana).json()).isEqualTo(Http.parse("[{\"group\":1,\"state\":\"optimized\",\"nsids\":[1]}]"));
        try (NvmeController c = NvmeController.open("127.0.0.1", t.nvmePort, TestService.NQN, TestService.HOSTNQN,
            10_000, 1, TcpHostOptions.DEFAULT)) {
            assertThat(c.admin().setFeatures(0x0B, 1 << 11).ok()).isTrue();
            CompletableFuture<Completion> aer = c.admin().asyncEventRequest();
            Http.Res r = t.http.put(ana + "/1", "{\"state\": \"inaccessible\"}");
            assertThat(r.status()).as("%s", r).isEqualTo(200);
            assertThat(r.json()).isEqualTo(Http.parse("{\"group\":1,\"state\":\"inaccessible\",\"nsids\":[1]}"));
            assertThat(aer.get(10, TimeUnit.SECONDS).dw0()).as("ANA change AEN").isEqualTo(0x000C0302);
            byte[] log = c.admin().getLogPage(0x0C, 0, 0, 4096).data();
            assertThat(log[16 + 16]).as("ANAS of group 1").isEqualTo((byte) 3);
            Completion read = c.io(0).read(1, 0, 1);
            assertThat(read.sct()).as("path related").isEqualTo(3);
            assertThat(read.sc()).as("ANA inaccessible").isEqualTo(2);
            JsonNode saved = Http.parse(t.fileJson()).get("subsystems").get(0).get("listeners").get(0);
            assertThat(saved.get("anaStates")).as("persisted").isEqualTo(Http.parse("{\"1\":\"inaccessible\"}"));

            assertThat(t.http.put(ana + "/1", "{\"state\": \"optimized\"}").status()).isEqualTo(200);
            assertThat(c.io(0).read(1, 0, 1).ok()).isTrue();
            assertThat(Http.parse(t.fileJson()).get("subsystems").get(0).get("listeners").get(0).has("anaStates"))
                .as("optimized is the default, left out").isFalse();
        }
    }

    /**
     * PATCH of a namespace's anaGroup moves it while a host is connected over TCP: the host gets the ANA change
     * event and reads the ANA log page with the namespace in its new group, whose state (set ahead through the
     * listener) its I/O then takes; the document keeps the new group, and moving it back restores all.
     */
    @Test
    void aNamespaceMovesToAnotherAnaGroupWhileAHostIsConnected() throws Exception {
        String ns = "/api/v1/subsystems/" + enc(TestService.NQN) + "/namespaces/1";
        try (NvmeController c = NvmeController.open("127.0.0.1", t.nvmePort, TestService.NQN, TestService.HOSTNQN,
            10_000, 1, TcpHostOptions.DEFAULT)) {
            byte[] before = AnaLogs.read(c.admin(), false);
            assertThat(AnaLogs.groups(before)).as("before").containsExactly(new int[] {1, AnaLogs.ANAS_OPTIMIZED, 1});
            assertThat(c.admin().setFeatures(0x0B, AnaLogs.AEC_ANA_CHANGE).ok()).isTrue();
            CompletableFuture<Completion> aer = c.admin().asyncEventRequest();
            Http.Res r = t.http.patch(ns, "{\"anaGroup\": 2}");
            assertThat(r.status()).as("%s", r).isEqualTo(200);
            assertThat(r.json().get("anaGroup").asInt()).isEqualTo(2);
            assertThat(aer.get(10, TimeUnit.SECONDS).dw0()).as("ANA change AEN").isEqualTo(AnaLogs.AEN_ANA_CHANGE);
            byte[] after = AnaLogs.read(c.admin(), false);
            assertThat(AnaLogs.groups(after)).as("after").containsExactly(new int[] {2, AnaLogs.ANAS_OPTIMIZED, 1});
            assertThat(Le.u64(after, 0)).as("CHGCNT").isGreaterThan(Le.u64(before, 0));
            assertThat(Http.parse(t.fileJson()).get("subsystems").get(0).get("namespaces").get(0).get("anaGroup")
                .asInt()).as("persisted").isEqualTo(2);
            assertThat(t.http.get(ana).json()).isEqualTo(Http.parse("[{\"group\":2,\"state\":\"optimized\","
                + "\"nsids\":[1]}]"));

            assertThat(t.http.put(ana + "/2", "{\"state\": \"inaccessible\"}").status()).isEqualTo(200);
            Completion read = c.io(0).read(1, 0, 1);
            assertThat(read.sct()).as("the new group's state: path related").isEqualTo(AnaLogs.SCT_PATH);
            assertThat(read.sc()).isEqualTo(AnaLogs.SC_ANA_INACCESSIBLE);
            assertThat(t.http.put(ana + "/2", "{\"state\": \"optimized\"}").status()).isEqualTo(200);
            assertThat(t.http.patch(ns, "{\"anaGroup\": 1}").status()).isEqualTo(200);
            assertThat(c.io(0).read(1, 0, 1).ok()).as("back in group 1, optimized").isTrue();
            assertThat(AnaLogs.groups(AnaLogs.read(c.admin(), false))).containsExactly(
                new int[] {1, AnaLogs.ANAS_OPTIMIZED, 1});
        }
    }

    @Test
    void aNamespaceGroupRefusalNamesItsField() {
        String ns = "/api/v1/subsystems/" + enc(TestService.NQN) + "/namespaces";
        String before = t.fileJson();
        assertThat(refusal(t.http.patch(ns + "/1", "{\"anaGroup\": 0}"), "anaGroup"))
            .isEqualTo("anaGroup: an ANA group id must be 1..128, got 0");
        assertThat(refusal(t.http.patch(ns + "/1", "{\"anaGroup\": 129}"), "anaGroup"))
            .isEqualTo("anaGroup: an ANA group id must be 1..128, got 129");
        assertThat(refusal(t.http.patch(ns + "/1", "{}"), "anaGroup")).isEqualTo("anaGroup: missing");
        refusal(t.http.patch(ns + "/1", "{\"anaGroup\": \"two\"}"), "anaGroup");
        assertThat(t.http.patch(ns + "/9", "{\"anaGroup\": 2}").status()).as("no such namespace").isEqualTo(404);
        assertThat(t.http.patch("/api/v1/subsystems/" + enc("nqn.2026-11.io.nvmf4j:none") + "/namespaces/1",
            "{\"anaGroup\": 2}").status()).isEqualTo(404);
        assertThat(t.fileJson()).as("unchanged").isEqualTo(before);
    }

    /** Asserts a 400 that names {@code field}; its message. */
    private static String refusal(Http.Res r, String field) {
        assertThat(r.status()).as("%s", r).isEqualTo(400);
        assertThat(r.field()).as("%s", r).isEqualTo(field);
        return r.error();
    }

    @Test
    void aWholeDocumentChangesStatesInPlace() {
        com.fasterxml.jackson.databind.node.ObjectNode doc = (com.fasterxml.jackson.databind.node.ObjectNode)
            t.http.get("/api/v1/config").json();
        ((com.fasterxml.jackson.databind.node.ObjectNode) doc.get("subsystems").get(0).get("listeners").get(0))
            .putObject("anaStates").put("1", "change");
        Http.Res r = t.http.put("/api/v1/config", doc.toString());
        assertThat(r.status()).as("%s", r).isEqualTo(200);
        assertThat(t.http.get(ana).json().get(0).get("state").asText()).as("live").isEqualTo("change");
        ((com.fasterxml.jackson.databind.node.ObjectNode) doc.get("subsystems").get(0).get("listeners").get(0))
            .remove("anaStates");
        assertThat(t.http.put("/api/v1/config", doc.toString()).status()).isEqualTo(200);
        assertThat(t.http.get(ana).json().get(0).get("state").asText()).isEqualTo("optimized");
    }

    @Test
    void refusalsNameTheirField() {
        Http.Res r = t.http.put(ana + "/2", "{\"state\": \"optimized\"}");
        assertThat(r.status()).as("%s", r).isEqualTo(400);
        assertThat(r.field()).isEqualTo("group");
        assertThat(r.error()).isEqualTo("group: no namespace of " + TestService.NQN + " is in ANA group 2");
        r = t.http.put(ana + "/0", "{\"state\": \"optimized\"}");
        assertThat(r.status()).isEqualTo(400);
        assertThat(r.error()).isEqualTo("group: an ANA group id must be 1..128, got 0");
        r = t.http.put(ana + "/one", "{\"state\": \"optimized\"}");
        assertThat(r.status()).isEqualTo(400);
        assertThat(r.field()).isEqualTo("group");
        r = t.http.put(ana + "/1", "{\"state\": \"fast\"}");
        assertThat(r.status()).isEqualTo(400);
        assertThat(r.field()).isEqualTo("state");
        assertThat(r.error()).isEqualTo("state: must be optimized, non-optimized, inaccessible, persistent-loss, "
            + "change, got fast");
        r = t.http.put(ana + "/1", "{}");
        assertThat(r.status()).isEqualTo(400);
        assertThat(r.error()).isEqualTo("state: missing");
        r = t.http.put(ana + "/1", "{\"state\": \"optimized\", \"speed\": 1}");
        assertThat(r.status()).isEqualTo(400);
        String other = "/api/v1/subsystems/" + enc(TestService.NQN) + "/listeners/tcp/127.0.0.1/1/ana";
        assertThat(t.http.put(other + "/1", "{\"state\": \"optimized\"}").status()).as("no such listener").isEqualTo(404);
        assertThat(t.http.get(other).status()).isEqualTo(404);
        assertThat(t.http.get("/api/v1/subsystems/" + enc("nqn.2026-11.io.nvmf4j:none") + "/listeners/tcp/127.0.0.1/"
            + t.nvmePort + "/ana").status()).isEqualTo(404);
        assertThat(t.http.send("PUT", ana + "/1", "state=optimized", "text/plain").status()).isEqualTo(415);
        assertThat(t.service.target().configSnapshot().subsystems.get(0).listeners.get(0).anaStates).as("unchanged")
            .isNull();
    }
}
