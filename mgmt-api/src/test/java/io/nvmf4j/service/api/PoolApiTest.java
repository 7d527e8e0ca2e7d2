package io.nvmf4j.service.api;

import com.fasterxml.jackson.databind.JsonNode;
import io.nvmf4j.service.api.Http.Res;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static io.nvmf4j.service.api.Http.enc;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Pools, volumes, snapshots and clones through the REST API of a real service, on a real XFS made with
 * {@code reflink=1} (root; skipped where mkfs.xfs or losetup is missing).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class PoolApiTest {
    private static final long MIB = 1 << 20;
    private static final String POOLS = "/api/v1/pools";
    private static final String P = POOLS + "/p";
    private static final String NS = "/api/v1/subsystems/" + enc(TestService.NQN) + "/namespaces";

    @TempDir
    Path tmp;
    private PoolService pools;
    private Path poolDir;
    private TestService t;
    private Http http;

    @BeforeEach
    void start() throws Exception {
        pools = PoolService.start(tmp);
        poolDir = pools.poolDir;
        t = pools.service;
        http = t.http;
    }

    @AfterEach
    void stop() throws Exception {
        if (pools != null) {
            pools.close();
        }
    }

    private static Res expect(int status, Res r) {
        assertThat(r.status()).as("%s", r).isEqualTo(status);
        return r;
    }

    private List<String> poolFiles() throws IOException {
        try (Stream<Path> s = Files.list(poolDir)) {
            return s.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    @Test
    void aVolumeLivesThroughTheApi() {
        JsonNode pool = expect(201, http.post(POOLS, "{\"name\":\"p\",\"path\":\"" + poolDir + "\"}")).json();
        assertThat(pool.get("size").asLong()).isGreaterThan(300 * MIB);
        assertThat(pool.get("volumes").asInt()).isZero();
        assertThat(expect(200, http.get(POOLS)).json().get(0).get("name").asText()).isEqualTo("p");

        JsonNode v1 = expect(201, http.post(P + "/volumes", "{\"name\":\"v1\",\"size\":" + 64 * MIB + "}")).json();
        assertThat(v1.get("bdev").asText()).isEqualTo("p/v1");
        assertThat(v1.get("thin").asBoolean()).isTrue();
        assertThat(v1.get("provisionedBytes").asLong()).isEqualTo(64 * MIB);
        assertThat(v1.get("allocatedBytes").asLong()).isLessThan(MIB);
        expect(201, http.post(NS, "{\"nsid\":2,\"bdev\":\"p/v1\"}"));
        assertThat(expect(200, http.get(P + "/volumes/v1")).json().get("namespace").asText())
            .isEqualTo(TestService.NQN + "/2");

        JsonNode taken = expect(201, http.post(P + "/volumes/v1/snapshots", "{\"name\":\"s1\"}")).json();
        assertThat(taken.get("snapshots").get(0).get("name").asText()).isEqualTo("s1");
        assertThat(taken.get("pauseNanos").asLong()).isPositive(); // a namespace used it: writes were held
        JsonNode clone = expect(201, http.post(P + "/volumes/v1/snapshots/s1/clone", "{\"name\":\"c1\"}")).json();
        assertThat(clone.get("origin").asText()).isEqualTo("v1@s1");
        assertThat(clone.get("provisionedBytes").asLong()).isEqualTo(64 * MIB);
        expect(201, http.post(NS, "{\"nsid\":3,\"bdev\":\"p/c1\"}"));
        assertThat(expect(200, http.get(P + "/volumes/v1/snapshots")).json().get(0).get("clones").get(0).asText())
            .isEqualTo("c1");

        expect(201, http.post(P + "/volumes", "{\"name\":\"v2\",\"size\":" + 8 * MIB + ",\"blockSize\":4096}"));
        JsonNode group = expect(201, http.post(P + "/group-snapshots", "{\"name\":\"g1\",\"volumes\":[\"v1\",\"v2\"]}"))
            .json();
        assertThat(group.get("snapshots")).hasSize(2);
        assertThat(group.get("snapshots").get(1).get("group").asText()).isEqualTo("g1");

        JsonNode grown = expect(200, http.patch(P + "/volumes/v1", "{\"size\":" + 128 * MIB + "}")).json();
        assertThat(grown.get("provisionedBytes").asLong()).isEqualTo(128 * MIB);
        assertThat(expect(409, http.patch(P + "/volumes/v1", "{\"size\":" + 32 * MIB + "}")).error())
            .contains("backs namespace");

        // out of order: each refused with 409, nothing changed
        String before = t.liveJson();
        assertThat(expect(409, http.delete(P + "/volumes/v1")).error()).contains("backs namespace");
        assertThat(expect(409, http.delete(P + "/volumes/v1/snapshots/s1")).error()).contains("has clone(s) [c1]");
        assertThat(expect(409, http.delete(P + "/volumes/c1")).error()).contains("backs namespace");
        assertThat(expect(409, http.delete(P)).error()).contains("still has volume(s)");
        assertThat(t.liveJson()).isEqualTo(before);
        assertThat(t.fileJson()).isEqualTo(before);

        expect(404, http.get(POOLS + "/none"));
        expect(404, http.get(P + "/volumes/none"));
        expect(404, http.delete(P + "/volumes/v1/snapshots/none"));
        expect(404, http.post(P + "/volumes/v1/snapshots/none/clone", "{\"name\":\"c2\"}"));

        // in order
        expect(204, http.delete(NS + "/3"));
        expect(204, http.delete(P + "/volumes/c1"));
        expect(204, http.delete(P + "/volumes/v1/snapshots/s1"));
        expect(204, http.delete(P + "/volumes/v1/snapshots/g1"));
        expect(204, http.delete(P + "/volumes/v2/snapshots/g1"));
        expect(409, http.delete(P + "/volumes/v1"));
        expect(204, http.delete(NS + "/2"));
        expect(204, http.delete(P + "/volumes/v1"));
        expect(204, http.delete(P + "/volumes/v2"));
        expect(204, http.delete(P));
        assertThat(expect(200, http.get(POOLS)).json()).isEmpty();
        assertThat(t.fileJson()).doesNotContain("\"pools\" : [ {");
    }

    @Test
    void badBodiesAre400NamingTheFieldWithNothingChanged() throws IOException {
        expect(201, http.post(POOLS, "{\"name\":\"p\",\"path\":\"" + poolDir + "\"}"));
        expect(201, http.post(P + "/volumes", "{\"name\":\"v1\",\"size\":" + MIB + "}"));
        expect(201, http.post(P + "/volumes/v1/snapshots", "{\"name\":\"s1\"}"));
        String before = t.liveJson();
        List<String> files = poolFiles();

        String[][] cases = {
            {"POST", POOLS, "{\"name\":\"q\"}", "path"},
            {"POST", POOLS, "{\"name\":\"q/x\",\"path\":\"" + poolDir + "\"}", "name"},
            {"POST", POOLS, "{\"name\":\"q\",\"path\":\"/etc\"}", "path"},
            {"POST", P + "/volumes", "{\"size\":" + MIB + "}", "name"},
            {"POST", P + "/volumes", "{\"name\":\"v2\"}", "size"},
            {"POST", P + "/volumes", "{\"name\":\"v2\",\"size\":0}", "size"},
            {"POST", P + "/volumes", "{\"name\":\"v2\",\"size\":1000}", "size"},
            {"POST", P + "/volumes", "{\"name\":\"v2\",\"size\":18446744073709551616}", "size"},
            {"POST", P + "/volumes", "{\"name\":\"v2\",\"size\":\"1G\"}", "size"},
            {"POST", P + "/volumes", "{\"name\":\"../v2\",\"size\":" + MIB + "}", "name"},
            {"POST", P + "/volumes", "{\"name\":\"v2\",\"size\":" + MIB + ",\"blockSize\":1000}", "blockSize"},
            {"POST", P + "/volumes", "{\"name\":\"v2\",\"size\":" + MIB + ",\"colour\":1}", "colour"},
            {"PATCH", P + "/volumes/v1", "{}", "size"},
            {"PATCH", P + "/volumes/v1", "{\"size\":-512}", "size"},
            {"POST", P + "/volumes/v1/snapshots", "{}", "name"},
            {"POST", P + "/volumes/v1/snapshots", "{\"name\":\"a b\"}", "name"},
            {"POST", P + "/volumes/v1/snapshots/s1/clone", "{}", "name"},
            {"POST", P + "/volumes/v1/snapshots/s1/clone", "{\"name\":\"\"}", "name"},
            {"POST", P + "/group-snapshots", "{\"name\":\"g\"}", "volumes"},
            {"POST", P + "/group-snapshots", "{\"name\":\"g\",\"volumes\":[]}", "volumes"},
            {"POST", P + "/group-snapshots", "{\"name\":\"g\",\"volumes\":[\"v1\",\"v1\"]}", "volumes"},
            {"POST", P + "/group-snapshots", "{\"volumes\":[\"v1\"]}", "name"},
        };
        for (String[] c : cases) {
            Res r = http.send(c[0], c[1], c[2], "application/json");
            assertThat(r.status()).as("%s %s %s -> %s", c[0], c[1], c[2], r).isEqualTo(400);
            assertThat(r.field()).as("%s %s %s -> %s", c[0], c[1], c[2], r).isEqualTo(c[3]);
        }
        assertThat(t.liveJson()).isEqualTo(before);
        assertThat(t.fileJson()).isEqualTo(before);
        assertThat(poolFiles()).isEqualTo(files);
    }

    /**
     * A change whose document cannot be saved (a directory where the save's temporary file goes) leaves the pool's
     * files and the document as they were, and the pool serves on as before.
     */
    @Test
    void aSaveThatFailsLeavesFilesAndDocumentAsBefore() throws IOException {
        expect(201, http.post(POOLS, "{\"name\":\"p\",\"path\":\"" + poolDir + "\"}"));
        expect(201, http.post(P + "/volumes", "{\"name\":\"v1\",\"size\":" + 4 * MIB + "}"));
        expect(201, http.post(P + "/volumes", "{\"name\":\"v2\",\"size\":" + 4 * MIB + "}"));
        expect(201, http.post(P + "/volumes/v1/snapshots", "{\"name\":\"s1\"}"));
        expect(201, http.post(NS, "{\"nsid\":2,\"bdev\":\"p/v1\"}"));
        Path other = Files.createDirectory(poolDir.getParent().resolve("other"));
        String before = t.liveJson();
        List<String> files = poolFiles();
        TestService.BlockedSaves blocked = t.blockSaves();

        String[][] changes = {
            {"POST", POOLS, "{\"name\":\"q\",\"path\":\"" + other + "\"}"},
            {"POST", P + "/volumes", "{\"name\":\"v3\",\"size\":" + MIB + "}"},
            {"DELETE", P + "/volumes/v2", null},
            {"POST", P + "/volumes/v1/snapshots", "{\"name\":\"s2\"}"},
            {"POST", P + "/group-snapshots", "{\"name\":\"g1\",\"volumes\":[\"v1\",\"v2\"]}"},
            {"POST", P + "/volumes/v1/snapshots/s1/clone", "{\"name\":\"c1\"}"},
            {"DELETE", P + "/volumes/v1/snapshots/s1", null},
        };
        for (String[] c : changes) {
            Res r = http.send(c[0], c[1], c[2], c[2] == null ? null : "application/json");
            assertThat(r.status()).as("%s %s -> %s", c[0], c[1], r).isEqualTo(500);
            assertThat(r.error()).as("%s %s", c[0], c[1]).endsWith("; the change was undone");
            assertThat(t.liveJson()).as("%s %s: the document", c[0], c[1]).isEqualTo(before);
            assertThat(poolFiles()).as("%s %s: the pool's files", c[0], c[1]).isEqualTo(files);
        }
        for (String size : new String[] {"" + 8 * MIB, "" + 2 * MIB}) {
            Res r = http.patch(P + "/volumes/v2", "{\"size\":" + size + "}");
            assertThat(r.status()).as("%s", r).isEqualTo(500);
            assertThat(r.error()).endsWith("; nothing was changed");
            assertThat(t.liveJson()).isEqualTo(before);
            assertThat(Files.size(poolDir.resolve("v2.vol"))).isEqualTo(4 * MIB);
        }
        blocked.close();
        assertThat(t.fileJson()).isEqualTo(before);

        // the pool serves on as the document says: each change succeeds once the document can be saved
        expect(201, http.post(POOLS, "{\"name\":\"q\",\"path\":\"" + other + "\"}"));
        expect(201, http.post(P + "/volumes", "{\"name\":\"v3\",\"size\":" + MIB + "}"));
        expect(201, http.post(NS, "{\"nsid\":3,\"bdev\":\"p/v2\"}"));
        expect(201, http.post(P + "/volumes/v1/snapshots", "{\"name\":\"s2\"}"));
        expect(201, http.post(P + "/group-snapshots", "{\"name\":\"g1\",\"volumes\":[\"v1\",\"v2\"]}"));
        expect(201, http.post(P + "/volumes/v1/snapshots/s1/clone", "{\"name\":\"c1\"}"));
        expect(200, http.patch(P + "/volumes/v2", "{\"size\":" + 8 * MIB + "}"));
        expect(204, http.delete(NS + "/3"));
        expect(204, http.delete(P + "/volumes/v3"));
        assertThat(t.fileJson()).isEqualTo(t.liveJson());
    }
}
