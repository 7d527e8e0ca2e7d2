package io.nvmf4j.service;

import com.fasterxml.jackson.databind.JsonNode;
import io.nvmf4j.config.ConfigJournal;
import io.nvmf4j.config.ConfigStore;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.it.Le;
import io.nvmf4j.service.api.Http;
import io.nvmf4j.testhost.NvmeController;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static io.nvmf4j.service.api.Http.enc;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The spdk engine's lvol pool on a file bdev, changed behind the document's back between two starts of the service
 * (a child JVM: SPDK starts once per process): the service changes the store (an lvol deleted, one grown and written
 * beyond its old size, one shrunk) and stops, then the document from before those changes is put back. The next start
 * serves everything else: the volume whose lvol is gone lists as missing over REST and its namespace is not served
 * (one log line, its nsid inactive), and each lvol of another size is set to the document's, the shrink saying that it
 * cuts data away. The namespace and the volume then leave the document, and the start after finds nothing missing.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class SpdkVolumeRestartTest {
    private static final String NQN = "nqn.2026-12.io.nvmf4j:spdk-volumes";
    private static final String HOSTNQN = "nqn.2014-08.org.nvmexpress:uuid:3f1b4a52-8c1e-4d0a-9a57-0000000000dd";
    private static final String TOKEN = "6e".repeat(32);
    private static final long MIB = 1L << 20;
    private static final String P = "/api/v1/pools/p";
    private static final String NS = "/api/v1/subsystems/" + enc(NQN) + "/namespaces";

    @TempDir
    Path dir;
    private SpdkLvolService svc;
    private Http http;

    @AfterEach
    void stop() throws InterruptedException {
        if (svc != null) {
            svc.close();
        }
    }

    @Test
    void anLvolMissingOrOfAnotherSizeAtStartLeavesEverythingElseServing() throws Exception {
        SpdkRequirement.assumeBuilt();
        svc = new SpdkLvolService(dir, NQN, TOKEN, 64 * MIB);
        http = svc.http;
        svc.start();
        expect(201, http.post("/api/v1/pools", "{\"name\":\"p\",\"kind\":\"lvol\",\"baseBdev\":\"f0\","
            + "\"clusterSize\":" + MIB + "}"));
        for (String v : new String[] {"v1:4", "v2:4", "v3:4", "v4:8"}) {
            String[] f = v.split(":");
            expect(201, http.post(P + "/volumes", "{\"name\":\"" + f[0] + "\",\"size\":" + Long.parseLong(f[1]) * MIB
                + "}"));
        }
        for (int nsid = 2; nsid <= 4; nsid++) {
            expect(201, http.post(NS, "{\"nsid\":" + nsid + ",\"bdev\":\"p/v" + (nsid - 1) + "\"}"));
        }
        byte[] pattern = Le.random(64 << 10, 35);
        try (NvmeController c = host()) {
            assertThat(c.io(0).write(2, 0, pattern).ok()).isTrue();
        }
        TargetConfig before = ConfigStore.load(svc.file);

        // behind the document's back: what the service does now is forgotten once the document above is put back
        expect(204, http.delete(NS + "/3"));
        expect(204, http.delete(P + "/volumes/v2"));
        expect(200, http.patch(P + "/volumes/v3", "{\"size\":" + 8 * MIB + "}"));
        try (NvmeController c = host()) {
            assertThat(c.io(0).write(4, 6 * MIB / 512, Le.random(4096, 36)).ok()).as("a write beyond 4 MiB").isTrue();
        }
        expect(200, http.patch(P + "/volumes/v4", "{\"size\":" + 4 * MIB + "}"));
        svc.stop();
        ConfigStore.save(svc.file, before);
        Files.deleteIfExists(ConfigJournal.journalOf(svc.file));

        svc.start();
        String log = svc.output();
        log.lines().filter(l -> l.contains("pool p:") || l.contains("not served")).forEach(System.out::println);
        assertThat(log).contains("pool p: the lvol store on bdev f0 lacks [v2] of the configuration; the start goes on"
            + " without them");
        assertThat(log.lines().filter(l -> l.contains("not served"))).as("log:%n%s", log).singleElement().asString()
            .contains("namespace 3 of " + NQN + ": not served: its volume p/v2 is missing (the lvol store on bdev f0"
                + " has no lvol v2)");
        assertThat(log).contains("pool p: lvol v3 holds 8388608 bytes, the configuration says 4194304 (a resize that"
            + " did not complete): set to 4194304; it holds data of its own up to byte 7340032, which the shrink cuts"
            + " away");
        assertThat(log).contains("pool p: lvol v4 holds 4194304 bytes, the configuration says 8388608 (a resize that"
            + " did not complete): set to 8388608");

        JsonNode v2 = expect(200, http.get(P + "/volumes/v2")).json();
        System.out.println("GET " + P + "/volumes/v2 after the start: " + v2);
        assertThat(v2.get("state").asText()).isEqualTo("missing");
        assertThat(v2.get("cause").asText()).isEqualTo("the lvol store on bdev f0 has no lvol v2");
        assertThat(v2.get("allocatedBytes").asLong()).isZero();
        assertThat(v2.get("namespace").asText()).isEqualTo(NQN + "/3");
        JsonNode v3 = expect(200, http.get(P + "/volumes/v3")).json();
        assertThat(v3.get("state").asText()).isEqualTo("available");
        assertThat(v3.get("cause").isNull()).isTrue();
        assertThat(v3.get("provisionedBytes").asLong()).isEqualTo(4 * MIB);
        assertThat(expect(200, http.get(P + "/volumes/v4")).json().get("provisionedBytes").asLong())
            .isEqualTo(8 * MIB);
        try (NvmeController c = host()) {
            assertThat(c.io(0).read(1, 0, 8).ok()).as("the malloc namespace serves").isTrue();
            var r = c.io(0).read(2, 0, pattern.length / 512);
            assertThat(r.ok() && java.util.Arrays.equals(r.data(), pattern)).as("v1 keeps its data").isTrue();
            assertThat(c.io(0).read(3, 0, 1).sc()).as("v2's nsid is inactive").isEqualTo(0x0B);
            assertThat(c.io(0).read(4, 4 * MIB / 512 - 1, 1).ok()).as("v3's last block").isTrue();
            assertThat(c.io(0).read(4, 4 * MIB / 512, 1).sc()).as("v3 ends at 4 MiB: LBA out of range")
                .isEqualTo(0x80);
            assertThat(c.io(0).read(5, 0, 1).sc()).isEqualTo(0x0B);
        }
        assertThat(expect(409, http.patch(P + "/volumes/v2", "{\"size\":" + 8 * MIB + "}")).error())
            .contains("volume v2 of pool p is missing");

        // the missing volume leaves the document: its namespace first, then the volume (no lvol to delete)
        expect(204, http.delete(NS + "/3"));
        expect(204, http.delete(P + "/volumes/v2"));
        expect(404, http.get(P + "/volumes/v2"));
        svc.stop();
        svc.start();
        assertThat(svc.output()).doesNotContain("not served").doesNotContain("lacks").doesNotContain("holds");
        assertThat(expect(200, http.get(P + "/volumes")).json()).extracting(v -> v.get("name").asText())
            .containsExactly("v1", "v3", "v4");
    }

    private NvmeController host() throws java.io.IOException {
        return svc.host(HOSTNQN);
    }

    private static Http.Res expect(int status, Http.Res r) {
        return SpdkLvolService.expect(status, r);
    }
}
