package io.nvmf4j.service.api;

import io.nvmf4j.testhost.FreePorts;
import com.fasterxml.jackson.databind.JsonNode;
import io.nvmf4j.service.api.Http.Res;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.TcpHostOptions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static io.nvmf4j.service.api.Http.enc;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every route of docs/rest-api.md over a real port: the success answer and each error code with its
 * exact message and field; after every change the file on disk equals the live document.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class RestApiTest {
    private static final String NQN = TestService.NQN;
    private static final String SUB = "/api/v1/subsystems/" + enc(NQN);

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

    private void assertPersisted() {
        assertThat(t.fileJson()).as("file equals the live document").isEqualTo(t.liveJson());
    }

    private static void assertError(Res r, int status, String error, String field) {
        assertThat(r.status()).as("%s", r).isEqualTo(status);
        assertThat(r.header("Content-Type")).isEqualTo("application/json");
        assertThat(r.error()).isEqualTo(error);
        assertThat(r.field()).isEqualTo(field);
        assertThat(r.body()).doesNotContain("Exception").doesNotContain("\tat ");
    }

    @Test
    void tokenFileIsCreatedWithMode0600AndAuthIsRequired() throws Exception {
        Path tokenFile = dir.resolve("api-token");
        assertThat(Files.getPosixFilePermissions(tokenFile)).isEqualTo(PosixFilePermissions.fromString("rw-------"));
        assertThat(Files.readString(tokenFile).trim()).matches("[0-9a-f]{64}");

        Res none = http.withToken(null).get("/api/v1/bdevs");
        assertError(none, 401, "missing bearer token", null);
        assertThat(none.header("WWW-Authenticate")).isEqualTo("Bearer realm=\"nvmf4j\"");
        assertError(http.withToken("0".repeat(64)).get("/api/v1/bdevs"), 401, "wrong bearer token", null);
        assertError(http.withToken(null).get("/metrics"), 401, "missing bearer token", null);
        assertError(http.withToken("x").get("/api/v1/openapi.json"), 401, "wrong bearer token", null);
        assertError(http.withToken(null).delete("/api/v1/bdevs/m0"), 401, "missing bearer token", null);
        assertError(http.withToken(null).get("/api/v1/nope"), 401, "missing bearer token", null);
        assertThat(http.withToken(null).send("GET", "/api/v1/bdevs", null, null).raw().request().headers()
            .firstValue("Authorization")).isEmpty();
    }

    @Test
    void healthNeedsNoToken() {
        Http anon = http.withToken(null);
        Res h = anon.get("/api/v1/health");
        assertThat(h.status()).isEqualTo(200);
        assertThat(h.json()).isEqualTo(Http.parse("{\"status\":\"UP\",\"live\":true,\"ready\":true}"));
        assertThat(anon.get("/api/v1/health/live").status()).isEqualTo(200);
        assertThat(anon.get("/api/v1/health/ready").json().get("status").asText()).isEqualTo("UP");
    }

    @Test
    void unknownRouteIs404AndWrongMethodIs405() {
        assertError(http.get("/api/v1/nope"), 404, "no route GET /api/v1/nope", null);
        assertError(http.put("/api/v1/bdevs", "{}"), 405, "method PUT is not allowed on /api/v1/bdevs", null);
        assertError(http.delete("/api/v1/config"), 405, "method DELETE is not allowed on /api/v1/config", null);
    }

    @Test
    void bdevsCreateListGetGrowDelete() {
        Res created = http.post("/api/v1/bdevs", "{\"name\":\"n1\",\"type\":\"null\",\"numBlocks\":1000}");
        assertThat(created.status()).as("%s", created).isEqualTo(201);
        assertThat(created.json()).isEqualTo(Http.parse(
            "{\"name\":\"n1\",\"type\":\"null\",\"blockSize\":512,\"numBlocks\":1000,\"directIo\":false,\"usedBy\":null}"));
        assertPersisted();

        Res list = http.get("/api/v1/bdevs");
        assertThat(list.status()).isEqualTo(200);
        assertThat(list.json()).hasSize(2);
        assertThat(list.json().get(0).get("usedBy").asText()).isEqualTo(NQN + "/1");
        assertThat(list.json().get(1).get("usedBy").isNull()).isTrue();
        assertThat(http.get("/api/v1/bdevs/n1").json().get("numBlocks").asLong()).isEqualTo(1000);

        Res grown = http.patch("/api/v1/bdevs/n1", "{\"numBlocks\":5000}");
        assertThat(grown.status()).as("%s", grown).isEqualTo(200);
        assertThat(grown.json().get("numBlocks").asLong()).isEqualTo(5000);
        assertPersisted();

        assertThat(http.delete("/api/v1/bdevs/n1").status()).isEqualTo(204);
        assertPersisted();
        assertError(http.get("/api/v1/bdevs/n1"), 404, "no bdev n1", null);
    }

    @Test
    void bdevErrors() {
        String before = t.liveJson();
        assertError(http.post("/api/v1/bdevs", "{\"name\":\"m0\",\"type\":\"null\",\"numBlocks\":8}"),
            409, "bdev m0 already exists", null);
        assertError(http.post("/api/v1/bdevs", "{\"name\":\"b\",\"type\":\"malloc\",\"blockSize\":520,\"numBlocks\":8}"),
            400, "blockSize: must be 512 or 4096, got 520", "blockSize");
        assertError(http.post("/api/v1/bdevs", "{\"name\":\"b\",\"type\":\"null\",\"colour\":\"blue\"}"),
            400, "colour: unknown field", "colour");
        assertError(http.post("/api/v1/bdevs", "{\"name\":\"b\",\"type\":\"null\",\"numBlocks\":\"many\"}"),
            400, "numBlocks: expected an integer, got a string", "numBlocks");
        assertError(http.post("/api/v1/bdevs", "{\"name\":\"b\",\"type\":\"null\",\"numBlocks\":1.5}"),
            400, "numBlocks: expected an integer, got a decimal number", "numBlocks");
        assertError(http.post("/api/v1/bdevs", "{\"name\":"), 400, "malformed JSON at line 1, column 9", null);
        assertError(http.post("/api/v1/bdevs", ""), 400, "body: a JSON object is required", "body");
        assertError(http.post("/api/v1/bdevs", "null"), 400, "body: a JSON object is required", "body");
        assertError(http.post("/api/v1/bdevs", "[1]"), 400, "body: expected an object, got an array", "body");
        assertError(http.send("POST", "/api/v1/bdevs", "name=b", "application/x-www-form-urlencoded"),
            415, "Content-Type must be application/json, got application/x-www-form-urlencoded", null);
        assertError(http.send("POST", "/api/v1/bdevs", "{}", null),
            415, "Content-Type must be application/json, got none", null);
        String huge = "{\"name\":\"" + "x".repeat((int) ApiRoutes.BODY_LIMIT) + "\"}";
        assertError(http.post("/api/v1/bdevs", huge), 413, "request body larger than 1048576 bytes", null);

        assertError(http.patch("/api/v1/bdevs/m0", "{\"numBlocks\":10}"), 400,
            "numBlocks: 10 does not grow bdev m0 (2048 blocks); shrinking would lose data", "numBlocks");
        assertError(http.patch("/api/v1/bdevs/m0", "{\"numBlocks\":4096}"), 400,
            "numBlocks: malloc bdev m0 cannot grow in place; add a new bdev instead", "numBlocks");
        assertError(http.patch("/api/v1/bdevs/m0", "{}"), 400, "numBlocks: missing", "numBlocks");
        assertError(http.patch("/api/v1/bdevs/zz", "{\"numBlocks\":4096}"), 404, "no bdev zz", null);
        assertError(http.delete("/api/v1/bdevs/m0"), 409, "bdev m0 backs namespace 1 of " + NQN, null);
        assertError(http.delete("/api/v1/bdevs/zz"), 404, "no bdev zz", null);
        assertThat(t.liveJson()).isEqualTo(before);
        assertPersisted();
    }

    @Test
    void subsystemsCreateListGetPatchDelete() {
        String nqn = "nqn.2026-11.io.nvmf4j:second";
        Res created = http.post("/api/v1/subsystems", "{\"nqn\":\"" + nqn + "\",\"model\":\"m\",\"maxNamespaces\":4}");
        assertThat(created.status()).as("%s", created).isEqualTo(201);
        assertThat(created.json().get("serial").asText()).as("generated").matches("[0-9a-f]{20}");
        assertThat(created.json().get("allowAnyHost").asBoolean()).isFalse();
        assertPersisted();
        assertThat(http.get("/api/v1/subsystems").json()).extracting(n -> n.get("nqn").asText())
            .containsExactly(NQN, nqn);
        assertThat(http.get("/api/v1/subsystems/" + enc(nqn)).json().get("maxNamespaces").asInt()).isEqualTo(4);

        Res patched = http.patch("/api/v1/subsystems/" + enc(nqn), "{\"allowAnyHost\":true}");
        assertThat(patched.status()).isEqualTo(200);
        assertThat(patched.json().get("allowAnyHost").asBoolean()).isTrue();
        assertPersisted();

        assertError(http.post("/api/v1/subsystems", "{\"nqn\":\"" + nqn + "\"}"), 409,
            "subsystem " + nqn + " already exists", null);
        assertError(http.post("/api/v1/subsystems", "{\"nqn\":\"bad\"}"), 400,
            "nqn: must be nqn.yyyy-mm.<reverse domain>:<name> or nqn.2014-08.org.nvmexpress:uuid:<uuid>, got 'bad' "
                + "(set \"allowLegacyNqns\": true for free-form names)", "nqn");
        assertError(http.patch("/api/v1/subsystems/" + enc(nqn), "{\"allowAnyHost\":\"yes\"}"), 400,
            "allowAnyHost: expected true or false, got a string", "allowAnyHost");
        assertError(http.patch("/api/v1/subsystems/" + enc(nqn), "{}"), 400, "allowAnyHost: missing", "allowAnyHost");

        assertThat(http.delete("/api/v1/subsystems/" + enc(nqn)).status()).isEqualTo(204);
        assertPersisted();
        assertError(http.get("/api/v1/subsystems/" + enc(nqn)), 404, "no subsystem " + nqn, null);
        assertError(http.delete("/api/v1/subsystems/" + enc(nqn)), 404, "no subsystem " + nqn, null);
        assertError(http.patch("/api/v1/subsystems/" + enc(nqn), "{\"allowAnyHost\":true}"), 404,
            "no subsystem " + nqn, null);
    }

    @Test
    void namespacesAddListGetRemove() {
        http.post("/api/v1/bdevs", "{\"name\":\"n1\",\"type\":\"null\",\"numBlocks\":1000}");
        Res added = http.post(SUB + "/namespaces", "{\"bdev\":\"n1\"}");
        assertThat(added.status()).as("%s", added).isEqualTo(201);
        JsonNode n = added.json();
        assertThat(n.get("nsid").asInt()).as("lowest free").isEqualTo(2);
        assertThat(n.get("nguid").asText()).matches("[0-9a-f]{32}");
        assertThat(n.get("uuid").asText()).hasSize(36);
        assertPersisted();
        assertThat(http.get(SUB + "/namespaces").json()).extracting(x -> x.get("nsid").asInt()).containsExactly(1, 2);
        assertThat(http.get(SUB + "/namespaces/2").json()).isEqualTo(n);

        assertError(http.post(SUB + "/namespaces", "{\"bdev\":\"n1\",\"nsid\":7}"), 409,
            "bdev n1 already backs namespace 2 of " + NQN, null);
        assertError(http.post(SUB + "/namespaces", "{\"bdev\":\"m0\",\"nsid\":2}"), 409,
            "nsid 2 is already in use in " + NQN, null);
        assertError(http.post(SUB + "/namespaces", "{\"bdev\":\"ghost\"}"), 400,
            "bdev: no bdev named 'ghost'", "bdev");
        assertError(http.post(SUB + "/namespaces", "{\"bdev\":\"n1\",\"nguid\":\"xyz\",\"nsid\":9}"), 409,
            "bdev n1 already backs namespace 2 of " + NQN, null);
        assertError(http.get(SUB + "/namespaces/abc"), 400, "nsid: must be an integer, got 'abc'", "nsid");

        assertThat(http.delete(SUB + "/namespaces/2").status()).isEqualTo(204);
        assertPersisted();
        assertError(http.get(SUB + "/namespaces/2"), 404, "no namespace 2 in " + NQN, null);
        assertError(http.delete(SUB + "/namespaces/2"), 404, "no namespace 2 in " + NQN, null);
        assertError(http.get("/api/v1/subsystems/" + enc("nqn.x:none") + "/namespaces"), 404,
            "no subsystem nqn.x:none", null);
    }

    @Test
    void hostsAllowListDisallow() {
        Res added = http.post(SUB + "/hosts", "{\"nqn\":\"" + TestService.HOSTNQN + "\"}");
        assertThat(added.status()).isEqualTo(201);
        assertThat(added.json().get("nqn").asText()).isEqualTo(TestService.HOSTNQN);
        assertPersisted();
        assertThat(http.get(SUB + "/hosts").json()).extracting(JsonNode::asText).containsExactly(TestService.HOSTNQN);
        assertError(http.post(SUB + "/hosts", "{\"nqn\":\"" + TestService.HOSTNQN + "\"}"), 409,
            "host " + TestService.HOSTNQN + " is already allowed on " + NQN, null);
        assertError(http.post(SUB + "/hosts", "{\"nqn\":\"h\"}"), 400,
            "nqn: must be nqn.yyyy-mm.<reverse domain>:<name> or nqn.2014-08.org.nvmexpress:uuid:<uuid>, got 'h' "
                + "(set \"allowLegacyNqns\": true for free-form names)", "nqn");
        assertError(http.post(SUB + "/hosts", "{}"), 400, "nqn: missing", "nqn");
        assertThat(http.delete(SUB + "/hosts/" + enc(TestService.HOSTNQN)).status()).isEqualTo(204);
        assertPersisted();
        assertError(http.delete(SUB + "/hosts/" + enc(TestService.HOSTNQN)), 404,
            "host " + TestService.HOSTNQN + " is not in the list of " + NQN, null);
    }

    /** A host with DH-HMAC-CHAP key files: paths in the config, keys never; bad files and bodies are 400s. */
    @Test
    void hostsWithDhchapKeys() throws Exception {
        String secret = io.nvmf4j.auth.DhchapKey.format(1, new byte[32]);
        Path key = dir.resolve("host.key");
        java.nio.file.Files.writeString(key, secret);
        java.nio.file.Files.setPosixFilePermissions(key, java.nio.file.attribute.PosixFilePermissions.fromString("rw-r--r--"));
        Res open = http.post(SUB + "/hosts", "{\"nqn\":\"" + TestService.HOSTNQN + "\",\"dhchapKey\":\"" + key + "\"}");
        assertThat(open.status()).as("%s", open).isEqualTo(400);
        assertThat(open.error()).contains("hostKeys[0].dhchapKey").contains("permissions 0644 are too open");
        assertThat(http.get(SUB + "/hosts").json()).as("nothing changed").isEmpty();

        java.nio.file.Files.setPosixFilePermissions(key, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
        assertError(http.post(SUB + "/hosts", "{\"nqn\":\"" + TestService.HOSTNQN + "\",\"dhchapCtrlKey\":\"" + key
            + "\"}"), 400, "dhchapCtrlKey: needs dhchapKey too (bidirectional authentication is on top of the host's)",
            "dhchapCtrlKey");
        Res added = http.post(SUB + "/hosts", "{\"nqn\":\"" + TestService.HOSTNQN + "\",\"dhchapKey\":\"" + key
            + "\",\"dhchapCtrlKey\":\"" + key + "\"}");
        assertThat(added.status()).as("%s", added).isEqualTo(201);
        assertPersisted();
        JsonNode sub = http.get(SUB).json();
        assertThat(sub.get("hostKeys").get(0).get("host").asText()).isEqualTo(TestService.HOSTNQN);
        assertThat(sub.get("hostKeys").get(0).get("dhchapKey").asText()).isEqualTo(key.toString());
        String config = http.get("/api/v1/config").body();
        assertThat(config).contains(key.toString()).doesNotContain(secret.substring(10, 40));
        assertThat(t.fileJson().toString()).doesNotContain(secret.substring(10, 40));

        assertThat(http.delete(SUB + "/hosts/" + enc(TestService.HOSTNQN)).status()).isEqualTo(204);
        assertThat(http.get(SUB).json().has("hostKeys")).as("the keys go with the host").isFalse();
        assertPersisted();
    }

    /**
     * A host with an NVMe/TCP TLS PSK file and a listener that requires TLS: the path in the config, the key never;
     * a bad secureChannel, a derivation without a key and a key file others may read are 400s.
     */
    @Test
    void hostsWithTlsKeysAndASecureListener() throws Exception {
        String psk = io.nvmf4j.auth.TlsPsk.format(1, "nvmf4j-rest-api-test-psk-32bytes".getBytes());
        Path key = dir.resolve("host.psk");
        java.nio.file.Files.writeString(key, psk);
        java.nio.file.Files.setPosixFilePermissions(key, java.nio.file.attribute.PosixFilePermissions.fromString("rw-r-----"));
        Res open = http.post(SUB + "/hosts", "{\"nqn\":\"" + TestService.HOSTNQN + "\",\"tlsKey\":\"" + key + "\"}");
        assertThat(open.status()).as("%s", open).isEqualTo(400);
        assertThat(open.error()).contains("hostKeys[0].tlsKey").contains("permissions 0640 are too open");
        assertError(http.post(SUB + "/hosts", "{\"nqn\":\"" + TestService.HOSTNQN + "\",\"tlsKeyDerivation\":\"rfc8446\"}"),
            400, "tlsKeyDerivation: needs tlsKey too", "tlsKeyDerivation");
        java.nio.file.Files.setPosixFilePermissions(key, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
        String withKey = "{\"nqn\":\"" + TestService.HOSTNQN + "\",\"tlsKey\":\"" + key
            + "\",\"tlsKeyDerivation\":\"rfc8446\"}";
        // a PSK host must connect over TLS: on a subsystem whose listeners are all plain it never could
        Res plainOnly = http.post(SUB + "/hosts", withKey);
        assertThat(plainOnly.status()).as("%s", plainOnly).isEqualTo(400);
        assertThat(plainOnly.field()).isEqualTo("subsystems[0].hostKeys[0].tlsKey");
        assertThat(plainOnly.error()).contains("has a TLS PSK, so it must connect over TLS, but every listener of"
            + " this subsystem is plain");

        int port = FreePorts.pick();
        Res bad = http.post(SUB + "/listeners", "{\"address\":\"127.0.0.1\",\"port\":" + port
            + ",\"secureChannel\":\"yes\"}");
        assertThat(bad.status()).as("%s", bad).isEqualTo(400);
        assertThat(bad.error()).contains("secureChannel: must be none, optional or required, got yes");
        Res tls = http.post(SUB + "/listeners", "{\"address\":\"127.0.0.1\",\"port\":" + port
            + ",\"secureChannel\":\"required\"}");
        assertThat(tls.status()).as("%s", tls).isEqualTo(201);
        assertThat(tls.json().get("secureChannel").asText()).isEqualTo("required");
        Res added = http.post(SUB + "/hosts", withKey);
        assertThat(added.status()).as("%s", added).isEqualTo(201);
        assertPersisted();
        JsonNode hk = http.get(SUB).json().get("hostKeys").get(0);
        assertThat(hk.get("tlsKey").asText()).isEqualTo(key.toString());
        assertThat(hk.get("tlsKeyDerivation").asText()).isEqualTo("rfc8446");
        assertThat(hk.has("dhchapKey")).isFalse();
        assertThat(http.get("/api/v1/config").body()).contains(key.toString()).doesNotContain(psk.substring(16, 50));
        assertThat(t.fileJson().toString()).doesNotContain(psk.substring(16, 50));

        try (io.nvmf4j.testhost.TcpHost plain = io.nvmf4j.testhost.TcpHost.open("127.0.0.1", port,
            TcpHostOptions.DEFAULT)) {
            plain.sendRaw(io.nvmf4j.testhost.TcpHost.icReq(0, false, false));
            assertThat(plain.awaitClosed(java.time.Duration.ofSeconds(5))).as("plain ICReq refused").isTrue();
        }
        Res lastTls = http.delete(SUB + "/listeners/tcp/127.0.0.1/" + port);
        assertThat(lastTls.status()).as("the PSK host's only TLS listener: %s", lastTls).isEqualTo(400);
        assertThat(lastTls.field()).isEqualTo("subsystems[0].hostKeys[0].tlsKey");
        assertThat(http.delete(SUB + "/hosts/" + enc(TestService.HOSTNQN)).status()).isEqualTo(204);
        assertThat(http.delete(SUB + "/listeners/tcp/127.0.0.1/" + port).status()).isEqualTo(204);
    }

    @Test
    void listenersAddListRemove() throws Exception {
        int port = FreePorts.pick();
        Res added = http.post(SUB + "/listeners", "{\"address\":\"127.0.0.1\",\"port\":" + port + "}");
        assertThat(added.status()).as("%s", added).isEqualTo(201);
        assertThat(added.json()).isEqualTo(Http.parse("{\"transport\":\"tcp\",\"address\":\"127.0.0.1\",\"port\":" + port
            + ",\"secureChannel\":\"none\",\"boundPort\":" + port + ",\"state\":\"listening\",\"cause\":null}"));
        assertPersisted();
        try (NvmeController c = NvmeController.open("127.0.0.1", port, NQN, TestService.HOSTNQN, 30000, 1,
            TcpHostOptions.DEFAULT)) {
            assertThat(c.cntlid()).isPositive();
        }
        assertThat(http.get(SUB + "/listeners").json()).hasSize(2);
        assertError(http.post(SUB + "/listeners", "{\"address\":\"127.0.0.1\",\"port\":" + port + "}"), 409,
            "subsystem " + NQN + " already listens on tcp:127.0.0.1:" + port, null);
        assertError(http.post(SUB + "/listeners", "{\"address\":\"localhost\",\"port\":1}"), 400,
            "address: must be an IPv4 or IPv6 literal (no host names), got 'localhost'", "address");
        try (java.net.ServerSocket busy = new java.net.ServerSocket(0, 1, java.net.InetAddress.getByName("127.0.0.1"))) {
            Res r = http.post(SUB + "/listeners", "{\"address\":\"127.0.0.1\",\"port\":" + busy.getLocalPort() + "}");
            assertThat(r.status()).as("%s", r).isEqualTo(409);
            assertThat(r.error()).isEqualTo("address 127.0.0.1:" + busy.getLocalPort() + " is already in use");
        }
        assertThat(http.delete(SUB + "/listeners/tcp/127.0.0.1/" + port).status()).isEqualTo(204);
        assertPersisted();
        assertError(http.delete(SUB + "/listeners/tcp/127.0.0.1/" + port), 404,
            "subsystem " + NQN + " has no listener tcp:127.0.0.1:" + port, null);
        assertError(http.delete(SUB + "/listeners/tcp/127.0.0.1/x"), 400, "port: must be an integer, got 'x'", "port");
    }

    @Test
    void controllersShowConnectedHosts() throws Exception {
        assertThat(http.get(SUB + "/controllers").json()).isEmpty();
        try (NvmeController c = NvmeController.open("127.0.0.1", t.nvmePort, NQN, TestService.HOSTNQN, 15000, 2,
            TcpHostOptions.DEFAULT)) {
            Res r = http.get(SUB + "/controllers");
            assertThat(r.status()).isEqualTo(200);
            JsonNode ctrl = r.json().get(0);
            assertThat(ctrl.get("cntlid").asInt()).isEqualTo(c.cntlid());
            assertThat(ctrl.get("hostnqn").asText()).isEqualTo(TestService.HOSTNQN);
            assertThat(ctrl.get("hostid").asText()).isEqualTo(
                java.util.UUID.nameUUIDFromBytes(TestService.HOSTNQN.getBytes(java.nio.charset.StandardCharsets.US_ASCII))
                    .toString());
            assertThat(ctrl.get("kato").asInt()).isEqualTo(15000);
            assertThat(ctrl.get("address").asText()).contains("127.0.0.1");
            assertThat(ctrl.get("queues")).extracting(q -> q.get("qid").asInt()).containsExactly(0, 1, 2);
        }
        assertError(http.get("/api/v1/subsystems/" + enc("nqn.x:none") + "/controllers"), 404,
            "no subsystem nqn.x:none", null);
    }

    @Test
    void reservationIsShownReadOnlyAndKeptInTheStateDirectory() throws Exception {
        Res empty = http.get(SUB + "/namespaces/1/reservation");
        assertThat(empty.status()).isEqualTo(200);
        assertThat(empty.json().get("type").asText()).isEqualTo("none");
        assertThat(empty.json().get("registrants")).isEmpty();
        String nguid = t.service.target().configSnapshot().subsystems.get(0).namespaces.get(0).nguid;
        java.nio.file.Path kept = dir.resolve("reservation-" + nguid + ".json");
        try (NvmeController c = NvmeController.open("127.0.0.1", t.nvmePort, NQN, TestService.HOSTNQN, 15000, 1,
            TcpHostOptions.DEFAULT)) {
            assertThat(c.io(0).resvRegister(1, 0, false, 3, 0, 0xFEEDL).ok()).isTrue(); // CPTPL 11b: PTPL on
            assertThat(c.io(0).resvAcquire(1, 0, 4, 0xFEEDL, 0).ok()).isTrue();
            JsonNode r = http.get(SUB + "/namespaces/1/reservation").json();
            assertThat(r.get("type").asText()).isEqualTo("exclusive-access-registrants-only");
            assertThat(r.get("ptpl").asBoolean()).isTrue();
            assertThat(r.get("holder").asText()).isEqualTo(HexFormat.of().formatHex(c.hostid()));
            assertThat(r.get("registrants").get(0).get("key").asText()).isEqualTo(Long.toString(0xFEEDL));
            assertThat(kept).exists();

            // an import that changes the namespace (masking it to this host) replaces it: same NGUID, same
            // reservation, same file
            io.nvmf4j.config.TargetConfig want = io.nvmf4j.config.ConfigStore.parse(http.get("/api/v1/config").body());
            want.subsystems.get(0).namespaces.get(0).hosts = new java.util.ArrayList<>(List.of(TestService.HOSTNQN));
            Res imported = http.put("/api/v1/config", io.nvmf4j.config.ConfigStore.toJson(want));
            assertThat(imported.status()).as("%s", imported).isEqualTo(200);
            assertThat(t.service.target().configSnapshot().subsystems.get(0).namespaces.get(0).hosts)
                .as("replaced by the import").containsExactly(TestService.HOSTNQN);
            JsonNode after = http.get(SUB + "/namespaces/1/reservation").json();
            assertThat(after.get("type").asText()).as("kept through the import")
                .isEqualTo("exclusive-access-registrants-only");
            assertThat(after.get("registrants")).hasSize(1);
            assertThat(kept).as("its file too").exists();
            assertThat(c.io(0).write(1, 0, new byte[512]).ok()).as("the holder still writes").isTrue();
        }
        assertThat(http.post(SUB + "/namespaces/1/reservation", "{}").status()).as("read-only").isEqualTo(405);
        assertError(http.get(SUB + "/namespaces/9/reservation"), 404, "no namespace 9 in " + NQN, null);
        assertThat(http.delete(SUB + "/namespaces/1").status()).isEqualTo(204);
        assertThat(kept).as("removed with the namespace").doesNotExist();
    }

    @Test
    void referralsAddListRemove() {
        String body = "{\"transport\":\"tcp\",\"address\":\"10.0.0.9\",\"port\":8009}";
        Res added = http.post("/api/v1/discovery/referrals", body);
        assertThat(added.status()).isEqualTo(201);
        assertThat(added.json()).isEqualTo(Http.parse(body));
        assertPersisted();
        assertThat(http.get("/api/v1/discovery/referrals").json()).containsExactly(Http.parse(body));
        assertError(http.post("/api/v1/discovery/referrals", body), 409,
            "referral tcp:10.0.0.9:8009 already exists", null);
        assertError(http.post("/api/v1/discovery/referrals", "{\"address\":\"10.0.0.9\",\"port\":0}"), 400,
            "port: must be 1..65535, got 0", "port");
        assertThat(http.delete("/api/v1/discovery/referrals/tcp/10.0.0.9/8009").status()).isEqualTo(204);
        assertPersisted();
        assertError(http.delete("/api/v1/discovery/referrals/tcp/10.0.0.9/8009"), 404,
            "no referral tcp:10.0.0.9:8009", null);
    }

    @Test
    void transportsGetAndStoreForTheNextStart() {
        assertThat(http.get("/api/v1/transports").json().get("tcp").get("maxQueueDepth").asInt()).isEqualTo(128);
        Res r = http.put("/api/v1/transports/tcp", "{\"maxQueueDepth\":256,\"inCapsuleDataSize\":4096}");
        assertThat(r.status()).as("%s", r).isEqualTo(200);
        assertThat(r.json().get("restartRequired").asBoolean()).isTrue();
        assertThat(r.json().get("tcp").get("maxQueueDepth").asInt()).isEqualTo(256);
        assertThat(http.get("/api/v1/transports").json().get("tcp").get("inCapsuleDataSize").asInt()).isEqualTo(4096);
        assertPersisted();
        assertError(http.put("/api/v1/transports/tcp", "{\"maxQueueDepth\":2}"), 400,
            "maxQueueDepth: must be 16..1024, got 2", "maxQueueDepth");
    }

    @Test
    void metricsAreServedInPrometheusText() {
        Res r = http.get("/metrics");
        assertThat(r.status()).isEqualTo(200);
        assertThat(r.header("Content-Type")).isEqualTo("text/plain; version=0.0.4");
        assertThat(r.body()).contains("nvmf_transport_connections", "nvmf_pollgroup_busy_seconds_total",
            "nvmf_pollgroup_allocated_bytes_total", "nvmf_rbd_blocklisted_total", "nvmf_rbd_reconnected_total",
            "nvmf_rbd_rewatch_failures_total",
            "nvmf_subsystem_namespaces", "jvm_memory_used_bytes");
    }

    @Test
    void openApiDocumentIsServed() {
        Res r = http.get("/api/v1/openapi.json");
        assertThat(r.status()).isEqualTo(200);
        assertThat(r.json().get("openapi").asText()).startsWith("3.");
    }
}
