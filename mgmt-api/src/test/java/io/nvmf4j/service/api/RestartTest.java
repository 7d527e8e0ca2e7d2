package io.nvmf4j.service.api;

import io.nvmf4j.testhost.FreePorts;
import com.fasterxml.jackson.databind.JsonNode;
import io.nvmf4j.javaengine.JavaEngine;
import io.nvmf4j.config.ConfigStore;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.service.api.Http.Res;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** Changes made through the API survive a restart exactly, identities included. */
@Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class RestartTest {
    @TempDir
    Path dir;

    @Test
    void aRestartRestoresExactlyTheSameState() throws Exception {
        String nqn2 = "nqn.2026-11.io.nvmf4j:restart";
        int port2 = FreePorts.pick();
        JsonNode before;
        String token;
        try (TestService t = TestService.start(dir, c -> { })) {
            Http h = t.http;
            token = Files.readString(dir.resolve("api-token")).trim();
            ok(h.post("/api/v1/bdevs", "{\"name\":\"n1\",\"type\":\"null\",\"numBlocks\":1000}"));
            ok(h.post("/api/v1/bdevs", "{\"name\":\"n2\",\"type\":\"malloc\",\"blockSize\":4096,\"numBlocks\":256}"));
            ok(h.post("/api/v1/subsystems/" + Http.enc(TestService.NQN) + "/namespaces",
                "{\"bdev\":\"n1\",\"nsid\":7,\"eui64\":\"0011223344556677\"}"));
            ok(h.post("/api/v1/subsystems", "{\"nqn\":\"" + nqn2 + "\",\"serial\":\"SN-RESTART\",\"maxNamespaces\":8,"
                + "\"minCntlid\":10,\"maxCntlid\":20,\"hosts\":[\"" + TestService.HOSTNQN + "\"],"
                + "\"namespaces\":[{\"bdev\":\"n2\",\"nsid\":3}],"
                + "\"listeners\":[{\"address\":\"127.0.0.1\",\"port\":" + port2 + "}]}"));
            ok(h.post("/api/v1/subsystems/" + Http.enc(nqn2) + "/hosts", "{\"nqn\":\"nqn.2026-11.io.nvmf4j:h2\"}"));
            ok(h.post("/api/v1/discovery/referrals", "{\"address\":\"10.0.0.1\",\"port\":8009}"));
            ok(h.patch("/api/v1/bdevs/n1", "{\"numBlocks\":2000}"));
            before = h.get("/api/v1/config").json();
        }
        try (TestService t = TestService.restart(dir)) {
            assertThat(t.service.apiToken().value()).as("token file reused").isEqualTo(token);
            JsonNode after = t.http.get("/api/v1/config").json();
            assertThat(after).isEqualTo(before);
            TargetConfig live = t.service.target().configSnapshot();
            assertThat(live.subsystems).extracting(s -> s.nqn).containsExactly(TestService.NQN, nqn2);
            assertThat(live.subsystems.get(1).serial).isEqualTo("SN-RESTART");
            assertThat(live.subsystems.get(1).hosts).containsExactly(TestService.HOSTNQN, "nqn.2026-11.io.nvmf4j:h2");
            assertThat(live.subsystems.get(0).namespaces).extracting(n -> n.nsid).containsExactly(1, 7);
            assertThat(live.subsystems.get(0).namespaces.get(1).nguid)
                .isEqualTo(before.get("subsystems").get(0).get("namespaces").get(1).get("nguid").asText());
            assertThat(live.subsystems.get(0).namespaces.get(1).uuid)
                .isEqualTo(before.get("subsystems").get(0).get("namespaces").get(1).get("uuid").asText());
            assertThat(((JavaEngine) t.service.target().engine()).target().subsystem(nqn2).namespace(3)).as("the java engine's live namespace").isNotNull();
            assertThat(t.service.target().listeners().keySet()).extracting(l -> l.port).contains(port2);
            assertThat(ConfigStore.toJson(live)).isEqualTo(t.fileJson());
        }
    }

    private static void ok(Res r) {
        assertThat(r.status()).as("%s", r).isBetween(200, 201);
    }
}
