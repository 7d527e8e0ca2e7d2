package io.nvmf4j.service.api;

import io.nvmf4j.testhost.FreePorts;
import io.nvmf4j.service.api.Http.Res;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServer;
import io.vertx.core.json.JsonObject;
import io.vertx.json.schema.Draft;
import io.vertx.json.schema.JsonSchema;
import io.vertx.json.schema.JsonSchemaOptions;
import io.vertx.json.schema.OutputUnit;
import io.vertx.json.schema.Validator;
import io.vertx.ext.web.Router;
import io.vertx.openapi.contract.OpenAPIContract;
import io.vertx.openapi.validation.ResponseValidator;
import io.vertx.openapi.validation.ValidatableResponse;
import io.nvmf4j.bdev.ScratchMounts;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

import static io.nvmf4j.service.api.Http.enc;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Every answer of every route, success and error, validated against the generated document by Vert.x's OpenAPI
 * response validator (status code, content type, body schema); every documented (operation, status) is
 * exercised, and 405 answers match components.responses.MethodNotAllowed with the documented Allow.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ApiContractTest {
    private static final String NQN = TestService.NQN;
    private static final String SUB = "/api/v1/subsystems/" + enc(NQN);
    private static final String BIG = "{\"name\":\"" + "x".repeat((int) ApiRoutes.BODY_LIMIT + 10) + "\"}";

    @TempDir
    static Path dir;
    private static TestService t;
    private static Http http;
    private static Http anon;
    private static Vertx vertx;
    private static ResponseValidator validator;
    private static OpenAPIContract contract;
    private static final Set<String> validated = new TreeSet<>();
    /** The XFS made with reflink=1 the pool routes run on; null where it cannot be made (not root). */
    private static ScratchMounts mounts;
    private static Path poolFs;

    @BeforeAll
    static void start() throws Exception {
        try {
            ScratchMounts.assumeRoot();
            mounts = new ScratchMounts(dir);
            poolFs = mounts.xfs(400L << 20);
        } catch (org.opentest4j.TestAbortedException e) {
            poolFs = null;
        }
        t = TestService.start(dir, c -> {
            if (poolFs != null) {
                c.storage = io.nvmf4j.config.StorageConfig.directories(poolFs.toString());
            }
        });
        http = t.http;
        anon = http.withToken(null);
        vertx = Vertx.vertx();
        contract = OpenAPIContract.from(vertx, new JsonObject(ApiContract.document()))
            .toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        validator = ResponseValidator.create(vertx, contract);
    }

    @AfterAll
    static void stop() throws Exception {
        t.close();
        if (mounts != null) {
            mounts.close();
        }
        vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }

    /** Sends, checks the status, validates the answer against its operation; returns it. */
    private static Res check(int status, Http client, String method, String path, String body, String type) {
        Res r = client.send(method, path, body, type);
        assertThat(r.status()).as("%s %s -> %s", method, path, r).isEqualTo(status);
        String id = operationId(method, path);
        validate(id, r);
        validated.add(id + " " + status);
        return r;
    }

    private static Res check(int status, String method, String path, String json) {
        return check(status, http, method, path, json, json == null ? null : "application/json");
    }

    private static void validate(String operationId, Res r) {
        Map<String, String> headers = new HashMap<>();
        r.raw().headers().map().forEach((k, v) -> headers.put(k, String.join(",", v)));
        if (r.status() == 401) {
            // Vert.x's header decoder cannot read a quoted-string inside a value (realm="..."): checked here
            assertThat(headers.remove("www-authenticate")).as("401's challenge").isEqualTo("Bearer realm=\"nvmf4j\"");
        }
        String type = r.header("Content-Type");
        if (type != null && !type.startsWith("application/json")) {
            // Vert.x 5.0.7 validates only JSON bodies (a text/plain one fails inside it): the media type, without
            // its parameters (version=0.0.4), must be the one the document names for this status
            io.vertx.openapi.contract.Response documented = contract.operation(operationId).getResponse(r.status());
            assertThat(documented).as("%s documents %s", operationId, r.status()).isNotNull();
            assertThat(documented.getContent().keySet()).as("%s %s", operationId, r.status())
                .containsExactly(type.split(";", 2)[0].trim());
            assertThat(r.body()).isNotEmpty();
            return;
        }
        ValidatableResponse answer = r.body().isEmpty() ? ValidatableResponse.create(r.status(), headers)
            : ValidatableResponse.create(r.status(), headers, Buffer.buffer(r.body()), type);
        try {
            validator.validate(answer, operationId).toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new AssertionError(operationId + " answered " + r + " (" + type + "), which the document refuses: "
                + e.getMessage(), e);
        }
    }

    private static String operationId(String method, String path) {
        String bare = path.split("\\?", 2)[0];
        return ApiContract.OPERATIONS.stream().filter(op -> op.method.equals(method)
                && bare.matches(op.path.replaceAll(":[A-Za-z]+", "[^/]+")))
            .map(op -> op.id).findFirst().orElseThrow(() -> new AssertionError("no operation " + method + " " + path));
    }

    @Test
    @Order(1)
    void everySuccessAndErrorAnswerValidates() throws Exception {
        check(200, anon, "GET", "/api/v1/health", null, null);
        check(200, anon, "GET", "/api/v1/health/live", null, null);
        check(200, anon, "GET", "/api/v1/health/ready", null, null);
        check(200, "GET", "/api/v1/openapi.json", null);
        check(401, anon, "GET", "/api/v1/openapi.json", null, null);
        check(200, "GET", "/metrics", null);
        check(401, anon, "GET", "/metrics", null, null);

        String bdevs = "/api/v1/bdevs";
        crud(bdevs, "{\"name\":\"n1\",\"type\":\"null\",\"numBlocks\":1024}", "{\"name\":\"q1\"}",
            "{\"name\":\"m0\",\"type\":\"malloc\",\"numBlocks\":8}");
        check(200, "GET", bdevs + "/m0", null);
        check(404, "GET", bdevs + "/zz", null);
        check(401, anon, "GET", bdevs + "/m0", null, null);
        body(bdevs + "/n1", "PATCH", "{\"numBlocks\":2048}", "{\"numBlocks\":\"x\"}");
        check(404, "PATCH", bdevs + "/zz", "{\"numBlocks\":4096}");
        check(409, "DELETE", bdevs + "/m0", null);
        check(404, "DELETE", bdevs + "/zz", null);
        check(401, anon, "DELETE", bdevs + "/n1", null, null);
        check(204, "DELETE", bdevs + "/n1", null);

        String errors = bdevs + "/e1/errors";
        check(201, "POST", bdevs, "{\"name\":\"b1\",\"type\":\"null\",\"numBlocks\":1024}");
        check(201, "POST", bdevs, "{\"name\":\"e1\",\"type\":\"error\",\"base\":\"b1\"}");
        body(errors, "POST", "{\"ioType\":\"read\",\"errorType\":\"eio\",\"count\":1}", "{\"ioType\":\"trim\"}");
        check(404, "POST", bdevs + "/zz/errors", "{\"ioType\":\"read\",\"errorType\":\"eio\"}");
        check(200, "GET", errors, null);
        check(404, "GET", bdevs + "/zz/errors", null);
        check(401, anon, "GET", errors, null, null);
        check(204, "DELETE", errors, null);
        check(404, "DELETE", bdevs + "/zz/errors", null);
        check(401, anon, "DELETE", errors, null, null);
        check(204, "DELETE", bdevs + "/e1", null);
        check(204, "DELETE", bdevs + "/b1", null);

        String subs = "/api/v1/subsystems";
        String other = "nqn.2026-11.io.nvmf4j:other";
        crud(subs, "{\"nqn\":\"" + other + "\"}", "{\"nqn\":\"x\"}", "{\"nqn\":\"" + NQN + "\"}");
        check(200, "GET", SUB, null);
        check(404, "GET", subs + "/" + enc("nqn.x:none"), null);
        check(401, anon, "GET", SUB, null, null);
        body(SUB, "PATCH", "{\"allowAnyHost\":false}", "{\"allowAnyHost\":\"maybe\"}");
        check(404, "PATCH", subs + "/" + enc("nqn.x:none"), "{\"allowAnyHost\":true}");
        check(401, anon, "DELETE", subs + "/" + enc(other), null, null);
        check(204, "DELETE", subs + "/" + enc(other), null);
        check(404, "DELETE", subs + "/" + enc(other), null);

        check(201, "POST", bdevs, "{\"name\":\"n2\",\"type\":\"null\",\"numBlocks\":1024}");
        String ns = SUB + "/namespaces";
        nested(ns, "{\"nsid\":2,\"bdev\":\"n2\"}", "{\"nsid\":\"two\"}", "{\"nsid\":1,\"bdev\":\"n2\"}");
        check(200, "GET", ns + "/1", null);
        check(400, "GET", ns + "/one", null);
        check(404, "GET", ns + "/9", null);
        check(401, anon, "GET", ns + "/1", null, null);
        check(200, "GET", ns + "/1/reservation", null);
        check(400, "GET", ns + "/one/reservation", null);
        check(404, "GET", ns + "/9/reservation", null);
        check(401, anon, "GET", ns + "/1/reservation", null, null);
        body(ns + "/1", "PATCH", "{\"anaGroup\":2}", "{\"anaGroup\":0}");
        check(200, "PATCH", ns + "/1", "{\"anaGroup\":1}");
        check(400, "PATCH", ns + "/one", "{\"anaGroup\":1}");
        check(404, "PATCH", ns + "/9", "{\"anaGroup\":1}");
        check(400, "DELETE", ns + "/one", null);
        check(404, "DELETE", ns + "/9", null);
        check(401, anon, "DELETE", ns + "/2", null, null);
        check(204, "DELETE", ns + "/2", null);

        check(201, "POST", ns, "{\"nsid\":2,\"bdev\":\"n2\",\"hosts\":[]}"); // masked: no host sees it yet
        String nsHosts = ns + "/2/hosts";
        nested(nsHosts, "{\"nqn\":\"" + TestService.HOSTNQN + "\"}", "{\"nqn\":7}",
            "{\"nqn\":\"" + TestService.HOSTNQN + "\"}");
        check(401, anon, "DELETE", nsHosts + "/" + enc(TestService.HOSTNQN), null, null);
        check(204, "DELETE", nsHosts + "/" + enc(TestService.HOSTNQN), null);
        check(404, "DELETE", nsHosts + "/" + enc(TestService.HOSTNQN), null);
        check(400, "GET", ns + "/two/hosts", null);
        check(400, "DELETE", ns + "/two/hosts/" + enc(TestService.HOSTNQN), null);
        check(204, "DELETE", ns + "/2", null);

        String hosts = SUB + "/hosts";
        nested(hosts, "{\"nqn\":\"" + TestService.HOSTNQN + "\"}", "{\"nqn\":7}",
            "{\"nqn\":\"" + TestService.HOSTNQN + "\"}");
        check(401, anon, "DELETE", hosts + "/" + enc(TestService.HOSTNQN), null, null);
        check(204, "DELETE", hosts + "/" + enc(TestService.HOSTNQN), null);
        check(404, "DELETE", hosts + "/" + enc(TestService.HOSTNQN), null);

        String listeners = SUB + "/listeners";
        int port = FreePorts.pick();
        String listener = "{\"transport\":\"tcp\",\"address\":\"127.0.0.1\",\"port\":" + port + "}";
        nested(listeners, listener, "{\"port\":\"x\"}", listener);
        check(400, "DELETE", listeners + "/tcp/127.0.0.1/x", null);
        check(401, anon, "DELETE", listeners + "/tcp/127.0.0.1/" + port, null, null);
        check(204, "DELETE", listeners + "/tcp/127.0.0.1/" + port, null);
        check(404, "DELETE", listeners + "/tcp/127.0.0.1/" + port, null);
        String ana = listeners + "/tcp/127.0.0.1/" + t.nvmePort + "/ana";
        check(200, "GET", ana, null);
        check(400, "GET", listeners + "/tcp/127.0.0.1/x/ana", null);
        check(404, "GET", listeners + "/tcp/127.0.0.1/1/ana", null);
        check(401, anon, "GET", ana, null, null);
        body(ana + "/1", "PUT", "{\"state\":\"non-optimized\"}", "{\"state\":\"slow\"}");
        check(404, "PUT", listeners + "/tcp/127.0.0.1/1/ana/1", "{\"state\":\"optimized\"}");
        check(200, "PUT", ana + "/1", "{\"state\":\"optimized\"}");

        check(200, "GET", SUB + "/controllers", null);
        check(404, "GET", subs + "/" + enc("nqn.x:none") + "/controllers", null);
        check(401, anon, "GET", SUB + "/controllers", null, null);
        String ioApi = "/api/v1/io";
        check(200, "GET", ioApi + "/hosts", null);
        check(400, "GET", ioApi + "/hosts?limit=1", null);
        check(401, anon, "GET", ioApi + "/hosts", null, null);
        check(200, "GET", ioApi + "/controllers?subsystem=" + enc(NQN), null);
        check(400, "GET", ioApi + "/controllers?cntlid=1", null);
        check(401, anon, "GET", ioApi + "/controllers", null, null);
        check(200, "GET", ioApi + "/slowest?limit=8", null);
        check(400, "GET", ioApi + "/slowest?limit=65", null);
        check(401, anon, "GET", ioApi + "/slowest", null, null);
        check(200, "GET", SUB + "/namespaces/1/latency", null);
        check(400, "GET", SUB + "/namespaces/one/latency", null);
        check(404, "GET", SUB + "/namespaces/9/latency", null);
        check(401, anon, "GET", SUB + "/namespaces/1/latency", null, null);

        String refs = "/api/v1/discovery/referrals";
        String referral = "{\"transport\":\"tcp\",\"address\":\"10.0.0.9\",\"port\":8009}";
        crud(refs, referral, "{\"port\":70000}", referral);
        check(400, "DELETE", refs + "/tcp/10.0.0.9/x", null);
        check(401, anon, "DELETE", refs + "/tcp/10.0.0.9/8009", null, null);
        check(204, "DELETE", refs + "/tcp/10.0.0.9/8009", null);
        check(404, "DELETE", refs + "/tcp/10.0.0.9/8009", null);

        String discoveryHosts = "/api/v1/discovery/hosts";
        java.nio.file.Path psk = dir.resolve("discovery.psk");
        java.nio.file.Files.createFile(psk, java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
            java.nio.file.attribute.PosixFilePermissions.fromString("rw-------")));
        java.nio.file.Files.writeString(psk, io.nvmf4j.auth.TlsPsk.format(1, new byte[32]));
        String discoveryHost = "{\"nqn\":\"" + TestService.HOSTNQN + "\",\"tlsKey\":\"" + psk + "\"}";
        crud(discoveryHosts, discoveryHost, "{\"nqn\":\"" + TestService.HOSTNQN + "\"}", discoveryHost);
        check(401, anon, "DELETE", discoveryHosts + "/" + enc(TestService.HOSTNQN), null, null);
        check(204, "DELETE", discoveryHosts + "/" + enc(TestService.HOSTNQN), null);
        check(404, "DELETE", discoveryHosts + "/" + enc(TestService.HOSTNQN), null);

        check(200, "GET", "/api/v1/transports", null);
        check(401, anon, "GET", "/api/v1/transports", null, null);
        body("/api/v1/transports/tcp", "PUT", "{\"maxQueueDepth\":256}", "{\"maxQueueDepth\":2}");
        body("/api/v1/transports/rdma", "PUT", "{\"maxIoQueues\":4}", "{\"rnrRetryCount\":8}");
        check(200, "GET", "/api/v1/transports", null);

        Res doc = check(200, "GET", "/api/v1/config", null);
        check(401, anon, "GET", "/api/v1/config", null, null);
        body("/api/v1/config", "PUT", doc.body(), "{\"cores\":0}");
        try (ServerSocket taken = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            String busy = doc.body().replaceFirst(
                "\"port\" *: *" + t.nvmePort, "\"port\":" + taken.getLocalPort());
            check(409, "PUT", "/api/v1/config", busy);
        }
        check(412, http.withIfMatch("\"0123\""), "PUT", "/api/v1/config", doc.body(), "application/json");
    }

    /** Pools, volumes, snapshots and clones, on the XFS made at the start. */
    @Test
    @Order(1)
    void everyPoolAnswerValidates() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(poolFs != null, "no XFS with reflink=1 (needs root)");
        String pools = "/api/v1/pools";
        String pool = "{\"name\":\"p\",\"path\":\"" + java.nio.file.Files.createDirectory(poolFs.resolve("p")) + "\"}";
        crud(pools, pool, "{\"name\":\"q\"}", pool);
        String p = pools + "/p";
        check(200, "GET", p, null);
        check(404, "GET", pools + "/zz", null);
        check(401, anon, "GET", p, null, null);

        String volumes = p + "/volumes";
        String volume = "{\"name\":\"v1\",\"size\":1048576}";
        crud(volumes, volume, "{\"name\":\"v2\",\"size\":0}", volume);
        check(404, "GET", pools + "/zz/volumes", null);
        check(404, "POST", pools + "/zz/volumes", volume);
        String v1 = volumes + "/v1";
        check(200, "GET", v1, null);
        check(404, "GET", volumes + "/zz", null);
        check(401, anon, "GET", v1, null, null);
        body(v1, "PATCH", "{\"size\":2097152}", "{\"size\":-1}");
        check(404, "PATCH", volumes + "/zz", "{\"size\":2097152}");
        check(201, "POST", SUB + "/namespaces", "{\"nsid\":7,\"bdev\":\"p/v1\"}");
        check(409, "PATCH", v1, "{\"size\":1048576}");

        String snapshots = v1 + "/snapshots";
        crud(snapshots, "{\"name\":\"s1\"}", "{\"name\":\"a b\"}", "{\"name\":\"s1\"}");
        check(404, "GET", volumes + "/zz/snapshots", null);
        check(404, "POST", volumes + "/zz/snapshots", "{\"name\":\"s2\"}");
        String clone = snapshots + "/s1/clone";
        body(clone, "POST", "{\"name\":\"c1\"}", "{\"name\":\"a/b\"}");
        check(409, "POST", clone, "{\"name\":\"c1\"}");
        check(404, "POST", snapshots + "/zz/clone", "{\"name\":\"c2\"}");
        String groups = p + "/group-snapshots";
        body(groups, "POST", "{\"name\":\"g1\",\"volumes\":[\"v1\",\"c1\"]}", "{\"name\":\"g2\",\"volumes\":[]}");
        check(409, "POST", groups, "{\"name\":\"g1\",\"volumes\":[\"v1\"]}");
        check(404, "POST", pools + "/zz/group-snapshots", "{\"name\":\"g1\",\"volumes\":[\"v1\"]}");

        check(409, "DELETE", snapshots + "/s1", null);
        check(404, "DELETE", snapshots + "/zz", null);
        check(401, anon, "DELETE", snapshots + "/s1", null, null);
        check(409, "DELETE", v1, null);
        check(404, "DELETE", volumes + "/zz", null);
        check(401, anon, "DELETE", v1, null, null);
        check(409, "DELETE", p, null);
        check(404, "DELETE", pools + "/zz", null);
        check(401, anon, "DELETE", p, null, null);
        check(204, "DELETE", snapshots + "/g1", null);
        check(204, "DELETE", volumes + "/c1/snapshots/g1", null);
        check(204, "DELETE", volumes + "/c1", null);
        check(204, "DELETE", snapshots + "/s1", null);
        check(204, "DELETE", SUB + "/namespaces/7", null);
        check(204, "DELETE", v1, null);
        check(204, "DELETE", p, null);
    }

    /** The QoS routes: limits of a namespace, of a host on a namespace or subsystem, and groups. */
    @Test
    @Order(1)
    void everyQosAnswerValidates() {
        String ns = SUB + "/namespaces";
        String host = "/qos/hosts/" + enc(TestService.HOSTNQN);
        String none = "/api/v1/subsystems/" + enc("nqn.x:none");
        check(200, "GET", ns + "/1/qos", null);
        check(400, "GET", ns + "/one/qos", null);
        check(404, "GET", ns + "/9/qos", null);
        check(401, anon, "GET", ns + "/1/qos", null, null);
        body(ns + "/1/qos", "PUT", "{\"iops\":1000000}", "{\"iops\":-1}");
        check(404, "PUT", ns + "/9/qos", "{\"iops\":1}");
        check(400, "DELETE", ns + "/one/qos", null);
        check(401, anon, "DELETE", ns + "/1/qos", null, null);
        check(204, "DELETE", ns + "/1/qos", null);
        check(404, "DELETE", ns + "/1/qos", null);
        body(ns + "/1" + host, "PUT", "{\"readMBps\":100000}", "{\"readMBps\":-1}");
        check(404, "PUT", ns + "/9" + host, "{\"iops\":1}");
        check(400, "DELETE", ns + "/one" + host, null);
        check(401, anon, "DELETE", ns + "/1" + host, null, null);
        check(204, "DELETE", ns + "/1" + host, null);
        check(404, "DELETE", ns + "/1" + host, null);
        check(200, "GET", SUB + "/qos", null);
        check(404, "GET", none + "/qos", null);
        check(401, anon, "GET", SUB + "/qos", null, null);
        body(SUB + host, "PUT", "{\"writeMBps\":100000}", "{\"writeMBps\":-1}");
        check(404, "PUT", none + host, "{\"iops\":1}");
        check(401, anon, "DELETE", SUB + host, null, null);
        check(204, "DELETE", SUB + host, null);
        check(404, "DELETE", SUB + host, null);

        String groups = "/api/v1/qos-groups";
        String group = "{\"name\":\"g\",\"namespaces\":[{\"nqn\":\"" + NQN + "\",\"nsid\":1}],"
            + "\"limits\":{\"rwMBps\":100000}}";
        String twice = "{\"name\":\"h\",\"namespaces\":[{\"nqn\":\"" + NQN + "\",\"nsid\":1},{\"nqn\":\""
            + NQN + "\",\"nsid\":1}],\"limits\":{}}";
        crud(groups, group, twice, group);
        check(200, "GET", groups + "/g", null);
        check(404, "GET", groups + "/zz", null);
        check(401, anon, "GET", groups + "/g", null, null);
        body(groups + "/g", "PUT", group, twice.replace("\"h\"", "\"g\""));
        check(404, "PUT", groups + "/zz", group.replace("\"g\"", "\"zz\""));
        check(401, anon, "DELETE", groups + "/g", null, null);
        check(204, "DELETE", groups + "/g", null);
        check(404, "DELETE", groups + "/g", null);
    }

    /** GET (200, 401), POST (201, 400, 409, 413, 415, 401) on a collection without path parameters. */
    private static void crud(String path, String created, String invalid, String conflicting) {
        check(200, "GET", path, null);
        check(401, anon, "GET", path, null, null);
        body(path, "POST", created, invalid);
        check(409, "POST", path, conflicting);
    }

    /** As {@link #crud} on a collection of a subsystem, plus its 404s. */
    private static void nested(String path, String created, String invalid, String conflicting) {
        crud(path, created, invalid, conflicting);
        String none = path.replace(enc(NQN), enc("nqn.x:none"));
        check(404, "GET", none, null);
        check(404, "POST", none, created);
    }

    /** A route with a JSON body: success, 400, 413, 415 and 401. */
    private static void body(String path, String method, String ok, String invalid) {
        check(method.equals("POST") ? 201 : 200, method, path, ok);
        check(400, method, path, invalid);
        check(400, method, path, "{\"nope\":1}");
        check(400, method, path, "{");
        check(413, method, path, BIG);
        check(415, http, method, path, ok, "text/plain");
        check(401, anon, method, path, ok, "application/json");
    }

    /** 503 comes from a service that is not ready (starting or stopping): the same routes over a router saying so. */
    @Test
    @Order(2)
    void notReadyAnswersValidate() throws Exception {
        Router router = ApiRoutes.router(vertx, t.service.config(), t.service.apiToken(), null, () -> false);
        HttpServer server = vertx.createHttpServer().requestHandler(router).listen(0, "127.0.0.1")
            .toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        try {
            Http starting = new Http(server.actualPort(), null);
            assertThat(check(503, starting, "GET", "/api/v1/health", null, null).json().get("ready").asBoolean())
                .isFalse();
            check(503, starting, "GET", "/api/v1/health/ready", null, null);
        } finally {
            server.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        }
    }

    @Test
    @Order(3)
    void everyDocumentedAnswerWasExercised() {
        Set<String> documented = new TreeSet<>();
        for (ApiContract.Op<?> op : ApiContract.OPERATIONS) {
            if (poolFs == null && op.path.contains("/pools")) {
                continue; // no XFS to run them on (not root): everyPoolAnswerValidates was skipped
            }
            op.allAnswers().forEach(a -> documented.add(op.id + " " + a.status()));
        }
        assertThat(validated).as("route x status answers validated").containsAll(documented);
        System.out.printf("ApiContractTest: %d route x status answers validated (%d operations, %d documented)%n",
            validated.size(), ApiContract.OPERATIONS.size(), documented.size());
    }

    @Test
    @Order(4)
    void wrongMethodIs405WithAllowAndTheErrorBody() {
        Validator error = Validator.create(JsonSchema.of(new JsonObject(ApiContract.document())
                .getJsonObject("components").getJsonObject("schemas").getJsonObject("Error")),
            new JsonSchemaOptions().setDraft(Draft.DRAFT202012).setBaseUri("app:///"));
        Map<String, String> cases = Map.of(
            "/api/v1/config", "GET, PUT",
            "/api/v1/bdevs", "GET, POST",
            "/api/v1/bdevs/m0", "GET, PATCH, DELETE",
            SUB + "/listeners/tcp/127.0.0.1/4420", "DELETE",
            "/api/v1/transports/rdma", "PUT",
            "/metrics", "GET");
        for (Map.Entry<String, String> c : cases.entrySet()) {
            for (String method : new String[] {"POST", "PUT", "PATCH", "DELETE", "GET"}) {
                if (c.getValue().contains(method)) {
                    continue;
                }
                Res r = http.send(method, c.getKey(), method.equals("GET") || method.equals("DELETE") ? null : "{}",
                    "application/json");
                assertThat(r.status()).as("%s %s", method, c.getKey()).isEqualTo(405);
                assertThat(r.header("Allow")).as("%s %s", method, c.getKey()).isEqualTo(c.getValue());
                assertThat(r.header("Content-Type")).isEqualTo("application/json");
                assertThat(r.error()).isEqualTo("method " + method + " is not allowed on " + c.getKey());
                OutputUnit out = error.validate(new JsonObject(r.body()));
                assertThat(out.getValid()).as("%s against Error: %s", r, out.getErrors()).isTrue();
            }
        }
    }

    /** The validator is not a rubber stamp: an extra field, a wrong type and an undocumented status fail. */
    @Test
    @Order(5)
    void theValidatorRefusesAnswersOutsideTheDocument() {
        Map<String, String> json = Map.of("content-type", "application/json");
        assertThatThrownBy(() -> validator.validate(ValidatableResponse.create(200, json,
                Buffer.buffer("{\"status\":\"UP\",\"extra\":1}"), "application/json"), "liveness")
            .toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS)).hasMessageContaining("extra");
        assertThatThrownBy(() -> validator.validate(ValidatableResponse.create(200, json,
                Buffer.buffer("{\"cores\":\"two\"}"), "application/json"), "getConfig")
            .toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS)).isNotNull();
        assertThatThrownBy(() -> validator.validate(ValidatableResponse.create(418, json,
                Buffer.buffer("{\"error\":\"x\",\"field\":null}"), "application/json"), "getConfig")
            .toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS)).hasMessageContaining("418");
    }
}
