package io.nvmf4j.service.api;

import com.fasterxml.jackson.databind.JsonNode;
import io.nvmf4j.config.ConfigStore;
import io.nvmf4j.config.ListenerConfig;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.rdma.Rdma;
import io.nvmf4j.service.api.Http.Res;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.NvmeHost;
import io.nvmf4j.testhost.TcpHostOptions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static io.nvmf4j.service.api.Http.enc;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Strict validation seen through the REST API: errors name the field of the request (not the document path the
 * fragment lands at), no coercion and no duplicate keys in bodies, NQNs by the spec, canonical addresses; and
 * honest listeners: a port-0 listener reported with its bound port, an rdma listener without a device failed.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class StrictValidationApiTest {
    private static final String NQN = TestService.NQN;
    private static final String SUB = "/api/v1/subsystems/" + enc(NQN);
    private static final int LID_DISCOVERY = 0x70;

    @TempDir
    Path dir;
    private TestService t;
    private Http http;

    @BeforeEach
    void start() throws Exception {
        t = TestService.start(dir, c -> { });
        http = t.http;
    }

    @AfterEach
    void stop() {
        t.close();
    }

    private void assertError(Res r, int status, String error, String field) {
        assertThat(r.status()).as("%s", r).isEqualTo(status);
        assertThat(r.error()).isEqualTo(error);
        assertThat(r.field()).isEqualTo(field);
        assertThat(r.body()).doesNotContain("Exception", "`", "subsystems[", "bdevs[", "referrals[", "fasterxml");
    }

    @Test
    void errorsNameTheFieldOfTheRequest() {
        String before = t.liveJson();
        assertError(http.post(SUB + "/listeners", "{\"address\":\"127.0.0.1\",\"port\":70000}"), 400,
            "port: must be 0..65535 (0: any free port), got 70000", "port");
        assertError(http.post(SUB + "/listeners", "{\"transport\":\"fc\",\"address\":\"127.0.0.1\",\"port\":1}"),
            400, "transport: must be tcp or rdma, got fc", "transport");
        assertError(http.post(SUB + "/listeners", "{\"address\":\"127.000.000.001\",\"port\":1}"), 400,
            "address: must be an IPv4 literal without leading zeros (each part 0..255), got '127.000.000.001'",
            "address");
        assertError(http.post(SUB + "/namespaces", "{\"bdev\":\"nope\"}"), 400, "bdev: no bdev named 'nope'", "bdev");
        http.post("/api/v1/bdevs", "{\"name\":\"n1\",\"type\":\"null\",\"numBlocks\":8}");
        assertError(http.post(SUB + "/namespaces", "{\"bdev\":\"n1\",\"nguid\":\"00000000000000000000000000000000\"}"),
            400, "nguid: must not be all zeros (that means \"no nguid\"; leave it out to have one generated)", "nguid");
        String nguid = t.service.target().configSnapshot().subsystems.get(0).namespaces.get(0).nguid;
        assertError(http.post(SUB + "/namespaces", "{\"bdev\":\"n1\",\"nguid\":\"" + nguid.toUpperCase() + "\"}"),
            400, "nguid: nguid " + nguid.toUpperCase() + " is already used by namespace 1 of " + NQN, "nguid");
        assertError(http.post("/api/v1/bdevs", "{\"name\":\"../x\",\"type\":\"null\",\"numBlocks\":8}"), 400,
            "name: must be 1..63 of A-Z a-z 0-9 . _ - and not start with '.' or '-', got '../x'", "name");
        assertError(http.post("/api/v1/bdevs",
                "{\"name\":\"huge\",\"type\":\"null\",\"blockSize\":4096,\"numBlocks\":9223372036854775807}"), 400,
            "numBlocks: 9223372036854775807 blocks of 4096 bytes exceed the largest bdev (274877906944 blocks, 1 PiB)",
            "numBlocks");
        assertError(http.post("/api/v1/discovery/referrals", "{\"address\":\"10.0.0.1\",\"port\":0}"), 400,
            "port: must be 1..65535, got 0", "port");
        assertError(http.post(SUB + "/hosts", "{\"nqn\":\"nqn.2014-08.org.nvmexpress:uuid:h1\"}"), 400,
            "nqn: must end in a UUID (8-4-4-4-12 hex digits) after 'nqn.2014-08.org.nvmexpress:uuid:', got "
                + "'nqn.2014-08.org.nvmexpress:uuid:h1' (set \"allowLegacyNqns\": true for free-form names)", "nqn");
        assertError(http.post("/api/v1/subsystems", "{\"nqn\":\"nqn.2026-11.io.nvmf4j:s\",\"listeners\":"
                + "[{\"address\":\"127.0.0.1\",\"port\":-1}]}"), 400,
            "listeners[0].port: must be 0..65535 (0: any free port), got -1", "listeners[0].port");
        assertError(http.put("/api/v1/transports/tcp", "{\"maxQueueDepth\":8}"), 400,
            "maxQueueDepth: must be 16..1024, got 8", "maxQueueDepth");
        http.delete("/api/v1/bdevs/n1");
        assertThat(t.liveJson()).isEqualTo(before);
        assertThat(t.fileJson()).isEqualTo(before);
    }

    @Test
    void growingABdevBeyondTheLargestIsRefusedBeforeAnythingIsSaved() {
        http.post("/api/v1/bdevs", "{\"name\":\"n2\",\"type\":\"null\",\"numBlocks\":8}");
        String before = t.fileJson();
        assertError(http.patch("/api/v1/bdevs/n2", "{\"numBlocks\":9223372036854775807}"), 400,
            "numBlocks: 9223372036854775807 blocks of 512 bytes exceed the largest bdev (2199023255552 blocks, 1 PiB)",
            "numBlocks");
        assertThat(t.fileJson()).isEqualTo(before);
        assertThat(http.get("/api/v1/bdevs/n2").json().get("numBlocks").asLong()).isEqualTo(8);
    }

    @Test
    void bodiesAreNotCoercedAndHaveNoDuplicateKeys() {
        String before = t.liveJson();
        assertError(http.post(SUB + "/listeners", "{\"address\":\"127.0.0.1\",\"port\":\"4420\"}"), 400,
            "port: expected an integer, got a string", "port");
        assertError(http.post(SUB + "/listeners", "{\"address\":\"127.0.0.1\",\"port\":4420.0}"), 400,
            "port: expected an integer, got a decimal number", "port");
        assertError(http.post(SUB + "/listeners", "{\"address\":\"127.0.0.1\",\"port\":1,\"port\":2}"), 400,
            "port: duplicate key", "port");
        assertError(http.post(SUB + "/listeners", "{\"address\":4,\"port\":1}"), 400,
            "address: expected a string, got an integer", "address");
        assertError(http.patch(SUB, "{\"allowAnyHost\":1}"), 400, "allowAnyHost: expected true or false, got an integer",
            "allowAnyHost");
        assertError(http.post("/api/v1/bdevs", "{\"name\":\"b\",\"type\":\"null\",\"numBlocks\":1e3}"), 400,
            "numBlocks: expected an integer, got a decimal number", "numBlocks");
        assertError(http.post("/api/v1/bdevs", "{\"name\":\"b\",\"type\":\"null\",\"numBlocks\":99999999999999999999}"),
            400, "numBlocks: number out of range", "numBlocks");
        assertError(http.post(SUB + "/hosts", "{\"nqn\":null}"), 400, "nqn: missing", "nqn");
        assertError(http.put("/api/v1/config", "{\"cores\":1,\"cores\":2}"), 400, "cores: duplicate key", "cores");
        Res dup = http.put("/api/v1/config", "{\"subsystems\":[{\"nqn\":\"nqn.2026-11.io.nvmf4j:a\","
            + "\"nqn\":\"nqn.2026-11.io.nvmf4j:b\"}]}");
        assertThat(dup.status()).isEqualTo(400);
        assertThat(dup.error()).as("the request is the document: its path").isEqualTo("subsystems[0].nqn: duplicate key");
        assertThat(dup.field()).isEqualTo("subsystems[0].nqn");
        assertThat(t.liveJson()).isEqualTo(before);
    }

    @Test
    void addressesAreStoredAndComparedInCanonicalForm() {
        Res added = http.post(SUB + "/listeners", "{\"address\":\"0:0:0:0:0:0:0:1\",\"port\":0}");
        assertThat(added.status()).as("%s", added).isEqualTo(201);
        assertThat(added.json().get("address").asText()).isEqualTo("::1");
        assertThat(t.fileJson()).contains("\"address\" : \"::1\"").doesNotContain("0:0:0:0:0:0:0:1");
        assertError(http.post(SUB + "/listeners", "{\"address\":\"::0001\",\"port\":0}"), 409,
            "subsystem " + NQN + " already listens on tcp:[::1]:0", null);
        assertThat(http.delete(SUB + "/listeners/tcp/" + enc("0:0:0:0:0:0:0:1") + "/0").status())
            .as("removed by another spelling").isEqualTo(204);
        Res r = http.post("/api/v1/discovery/referrals", "{\"address\":\"2001:DB8:0:0:0:0:0:9\",\"port\":8009}");
        assertThat(r.json().get("address").asText()).isEqualTo("2001:db8::9");
        assertError(http.post("/api/v1/discovery/referrals", "{\"address\":\"2001:db8::9\",\"port\":8009}"), 409,
            "referral tcp:[2001:db8::9]:8009 already exists", null);
    }

    @Test
    void legacyNamesNeedTheOptIn() {
        String legacy = "blktests-subsystem-1";
        assertError(http.post("/api/v1/subsystems", "{\"nqn\":\"" + legacy + "\"}"), 400,
            "nqn: must be nqn.yyyy-mm.<reverse domain>:<name> or nqn.2014-08.org.nvmexpress:uuid:<uuid>, got '"
                + legacy + "' (set \"allowLegacyNqns\": true for free-form names)", "nqn");
        TargetConfig c = t.service.target().configSnapshot();
        c.allowLegacyNqns = true;
        Res put = http.put("/api/v1/config", ConfigStore.toJson(c));
        assertThat(put.status()).as("%s", put).isEqualTo(200);
        Res created = http.post("/api/v1/subsystems", "{\"nqn\":\"" + legacy + "\",\"hosts\":[\"blktests-host-1\"]}");
        assertThat(created.status()).as("%s", created).isEqualTo(201);
        assertThat(http.get("/api/v1/subsystems/" + legacy).json().get("hosts").get(0).asText())
            .isEqualTo("blktests-host-1");
        assertThat(t.fileJson()).contains("\"allowLegacyNqns\" : true");
    }

    /** Port 0: the answer, GET listeners, the subsystem view and the discovery log give the bound port. */
    @Test
    void portZeroListenerIsReportedWithItsBoundPort() throws Exception {
        Res added = http.post(SUB + "/listeners", "{\"address\":\"127.0.0.1\",\"port\":0}");
        assertThat(added.status()).as("%s", added).isEqualTo(201);
        int bound = added.json().get("boundPort").asInt();
        assertThat(bound).isPositive();
        assertThat(added.json().get("port").asInt()).as("configured port, the key for DELETE").isZero();
        assertThat(added.json().get("state").asText()).isEqualTo("listening");
        JsonNode listed = http.get(SUB + "/listeners").json();
        assertThat(listed).hasSize(2);
        assertThat(listed.get(1)).isEqualTo(added.json());
        assertThat(http.get(SUB).json().get("listeners").get(1)).isEqualTo(added.json());
        assertThat(http.get("/api/v1/subsystems").json().get(0).get("listeners").get(1)).isEqualTo(added.json());
        assertThat(t.fileJson()).as("stored as configured: 0 (a new port at every start)").contains("\"port\" : 0");
        try (NvmeController d = NvmeController.open("127.0.0.1", bound, NvmeHost.DISCOVERY_NQN, TestService.HOSTNQN,
            0, 0, TcpHostOptions.DEFAULT)) {
            List<String[]> entries = discoveryEntries(d.admin());
            assertThat(entries).filteredOn(e -> e[0].equals(NQN)).extracting(e -> e[1])
                .containsExactlyInAnyOrder(Integer.toString(t.nvmePort), Integer.toString(bound));
            assertThat(entries).extracting(e -> e[1]).doesNotContain("0");
        }
        assertThat(http.delete(SUB + "/listeners/tcp/127.0.0.1/0").status()).isEqualTo(204);
    }

    /** No RDMA device here: the rdma listener is kept, failed with its cause, and not in the discovery log. */
    @Test
    void rdmaListenerWithoutADeviceShowsFailedWithItsCause() throws Exception {
        Assumptions.assumeFalse(Rdma.isAvailable(), "this machine has an RDMA device; the e2e guest covers it");
        Res added = http.post(SUB + "/listeners", "{\"transport\":\"rdma\",\"address\":\"127.0.0.1\",\"port\":4420}");
        assertThat(added.status()).as("%s", added).isEqualTo(201);
        assertThat(added.json().get("state").asText()).isEqualTo("failed");
        assertThat(added.json().get("boundPort").isNull()).isTrue();
        assertThat(added.json().get("cause").asText()).startsWith("rdma transport unavailable: ");
        JsonNode view = http.get(SUB).json().get("listeners");
        assertThat(view.get(0).get("state").asText()).isEqualTo("listening");
        assertThat(view.get(1)).isEqualTo(added.json());
        assertThat(t.fileJson()).contains("\"transport\" : \"rdma\"");
        try (NvmeController d = NvmeController.open("127.0.0.1", t.nvmePort, NvmeHost.DISCOVERY_NQN,
            TestService.HOSTNQN, 0, 0, TcpHostOptions.DEFAULT)) {
            List<String[]> entries = discoveryEntries(d.admin());
            assertThat(entries).extracting(e -> e[2]).as("TRTYPE of every entry: tcp only").containsOnly("3");
            assertThat(entries).extracting(e -> e[0]).contains(NQN);
        }
        assertThat(http.delete(SUB + "/listeners/rdma/127.0.0.1/4420").status()).isEqualTo(204);
        assertThat(t.service.target().listenerStates()).doesNotContainKey(new ListenerConfig("rdma", "127.0.0.1", 4420));
    }

    /** [subnqn, trsvcid, trtype] of each discovery log entry. */
    private static List<String[]> discoveryEntries(NvmeHost admin) {
        byte[] header = admin.getLogPage(LID_DISCOVERY, 0, 0, 16).data();
        long numrec = java.nio.ByteBuffer.wrap(header, 8, 8).order(java.nio.ByteOrder.LITTLE_ENDIAN).getLong();
        byte[] log = admin.getLogPage(LID_DISCOVERY, 0, 0, (int) (1024 * (numrec + 1))).data();
        List<String[]> out = new ArrayList<>();
        for (int i = 0; i < numrec; i++) {
            int o = 1024 + i * 1024;
            out.add(new String[] {text(log, o + 256, 256), text(log, o + 32, 32), Integer.toString(log[o] & 0xFF)});
        }
        return out;
    }

    private static String text(byte[] b, int off, int len) {
        return new String(b, off, len, java.nio.charset.StandardCharsets.US_ASCII).replace("\0", "").trim();
    }
}
