package io.nvmf4j.service;

import io.nvmf4j.testhost.FreePorts;
import com.fasterxml.jackson.databind.JsonNode;
import io.nvmf4j.config.ConfigStore;
import io.nvmf4j.config.EngineCapabilities;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.service.api.Http;
import io.nvmf4j.service.api.Http.Res;
import io.nvmf4j.service.api.TestService;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.TcpHostOptions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static io.nvmf4j.service.api.Http.enc;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The REST API over the spdk engine: the service runs in a child JVM (SPDK starts once per process) and the
 * engine's refusals come back as 400/404/409 with SPDK's reason, the service living on.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class SpdkApiTest {
    private static final String NQN = "nqn.2026-12.io.nvmf4j:spdk-api";
    private static final String TOKEN = "5d".repeat(32);
    private static final long START_TIMEOUT_MS = 30_000;

    @TempDir
    static Path dir;
    static Process service;
    static ServiceProcess child;
    static Http http;
    /** The port of the subsystem's NVMe/TCP listener. */
    static int ioPort;

    @BeforeAll
    static void start() throws Exception {
        SpdkRequirement.assumeBuilt();
        ioPort = FreePorts.pick();
        TargetConfig c = SpdkRequirement.document(NQN, TOKEN, ioPort);
        Path file = dir.resolve("config.json");
        ConfigStore.save(file, c);
        child = ServiceProcess.start(dir, dir.resolve("service.log"), "--state-dir", dir.toString(), "--config",
            file.toString());
        service = child.process;
        http = new Http(c.api.port, TOKEN);
        awaitApi();
    }

    @AfterAll
    static void stop() throws Exception {
        if (service != null) {
            service.destroy();  // SIGTERM
            boolean exited = service.waitFor(15, TimeUnit.SECONDS);
            if (!exited) {
                service.destroyForcibly().waitFor();
            }
            assertThat(exited).as("stopped within 15 s of SIGTERM; output:%n%s", output()).isTrue();
            assertThat(service.exitValue()).as("exit code; output:%n%s", output()).isZero();
        }
    }

    /** The spdk engine reports the options it started with (live) beside the stored ones. */
    /**
     * QoS on the spdk engine: a namespace's limits go to SPDK's bdev QoS, set, changed again and removed; an IOPS
     * limit SPDK would round is refused, and per-host limits and groups (which SPDK's QoS has not) are refused with
     * that reason, nothing changed.
     */
    @Test
    void qosPerNamespaceThroughSpdksBdevQos() throws IOException {
        String ns = "/api/v1/subsystems/" + enc(NQN) + "/namespaces/1/qos";
        String host = "nqn.2014-08.org.nvmexpress:uuid:3f1b4a52-8c1e-4d0a-9a57-0000000000cc";
        Res r = http.put(ns, "{\"iops\": 1500}");
        assertThat(r.status()).as("%s", r).isEqualTo(400);
        assertThat(r.field()).isEqualTo("iops");
        assertThat(r.error()).isEqualTo("iops: the spdk engine (SPDK's bdev QoS) takes IOPS in multiples of 1000, "
            + "got 1500");
        r = http.put(ns, "{\"iops\": 2000, \"rwMBps\": 10}");
        assertThat(r.status()).as("%s", r).isEqualTo(200);
        r = http.put(ns, "{\"iops\": 5000, \"readMBps\": 3, \"writeMBps\": 4}");
        assertThat(r.status()).as("a second change: %s", r).isEqualTo(200);
        assertThat(http.get(ns).json().get("iops").asLong()).isEqualTo(5000);
        r = http.put(ns + "/hosts/" + enc(host), "{\"iops\": 1000}");
        assertThat(r.status()).as("%s", r).isEqualTo(400);
        assertThat(r.error()).contains("QoS per host is java engine only");
        r = http.put("/api/v1/subsystems/" + enc(NQN) + "/qos/hosts/" + enc(host), "{\"iops\": 1000}");
        assertThat(r.status()).as("%s", r).isEqualTo(400);
        r = http.post("/api/v1/qos-groups", "{\"name\": \"g\", \"namespaces\": [{\"nqn\": \"" + NQN
            + "\", \"nsid\": 1}], \"limits\": {\"iops\": 1000}}");
        assertThat(r.status()).as("%s", r).isEqualTo(400);
        assertThat(r.error()).isEqualTo("limits: QoS groups are java engine only: SPDK's bdev QoS limits each bdev on"
            + " its own (no shared budget across bdevs); use engine java");
        assertThat(http.delete(ns).status()).isEqualTo(204);
        assertThat(http.get(ns).json().size()).as("no QoS left").isZero();
        assertThat(output()).doesNotContain("Round up the rate limit");
    }

    @Test
    void transportsShowTheLiveOptionsBesideTheStoredOnes() {
        Res put = http.put("/api/v1/transports/rdma", "{\"maxIoQueues\":4}");
        assertThat(put.status()).as("%s", put).isEqualTo(200);
        assertThat(put.json().get("restartFields").toString()).isEqualTo("[\"rdma.maxIoQueues\"]");
        JsonNode t = http.get("/api/v1/transports").json();
        assertThat(t.get("rdma").get("maxIoQueues").asInt()).as("stored").isEqualTo(4);
        assertThat(t.get("live").get("rdma").get("maxIoQueues").asInt()).as("in effect").isEqualTo(8);
        assertThat(t.get("live").get("tcp")).isEqualTo(t.get("tcp"));
        Res back = http.put("/api/v1/transports/rdma", "{}");
        assertThat(back.json().get("restartRequired").asBoolean()).as("%s", back).isFalse();
    }

    /**
     * The I/O views over the spdk engine: a namespace's percentiles answer (one entry, op all, from SPDK's histogram
     * of its bdev, counting the writes and reads sent); per host, per controller and the slowest I/Os answer 400
     * with the reason SPDK cannot, each by name; an unknown namespace is 404.
     */
    @Test
    void ioViewsAnswerWhatSpdkHasAndRefuseTheRestByName() throws IOException {
        String latency = "/api/v1/subsystems/" + enc(NQN) + "/namespaces/1/latency";
        Res before = http.get(latency);
        assertThat(before.status()).as("%s", before).isEqualTo(200);
        try (NvmeController c = NvmeController.open("127.0.0.1", ioPort, NQN,
            "nqn.2014-08.org.nvmexpress:uuid:3f1b4a52-8c1e-4d0a-9a57-0000000000dd", 0, 1, TcpHostOptions.DEFAULT)) {
            for (int i = 0; i < 30; i++) {
                assertThat(c.io(0).write(1, i * 8L, new byte[4096]).ok()).isTrue();
                assertThat(c.io(0).read(1, i * 8L, 8).ok()).isTrue();
            }
        }
        JsonNode after = http.get(latency).json();
        assertThat(after.size()).as("%s", after).isEqualTo(1);
        JsonNode all = after.get(0);
        assertThat(all.get("op").asText()).isEqualTo("all");
        assertThat(all.get("count").asLong() - before.json().get(0).get("count").asLong()).as("%s", all)
            .isEqualTo(60);
        assertThat(all.get("p50Micros").asDouble()).as("%s", all).isPositive()
            .isLessThanOrEqualTo(all.get("p90Micros").asDouble());
        assertThat(all.get("p99Micros").asDouble()).as("%s", all).isGreaterThanOrEqualTo(all.get("p90Micros").asDouble())
            .isLessThanOrEqualTo(all.get("p999Micros").asDouble());
        assertThat(all.get("maxMicros").asDouble()).as("%s", all).isGreaterThanOrEqualTo(all.get("p999Micros").asDouble());
        assertError(http.get("/api/v1/subsystems/" + enc(NQN) + "/namespaces/7/latency"), 404,
            "no namespace 7 in " + NQN);
        String perHost = EngineCapabilities.SPDK.refusal(EngineCapabilities.Feature.IO_PER_HOST);
        assertError(http.get("/api/v1/io/hosts"), 400, perHost);
        assertError(http.get("/api/v1/io/controllers?subsystem=" + enc(NQN)), 400, perHost);
        assertError(http.get("/api/v1/io/slowest?limit=5"), 400,
            EngineCapabilities.SPDK.refusal(EngineCapabilities.Feature.IO_SLOWEST));
        Res bad = http.get("/api/v1/io/slowest?limit=65");
        assertThat(bad.status()).as("the query is checked first: %s", bad).isEqualTo(400);
        assertThat(bad.field()).isEqualTo("limit");
    }

    @Test
    void duplicateSubsystemIsAConflict() {
        Res r = http.post("/api/v1/subsystems", "{\"nqn\":\"" + NQN + "\"}");
        assertError(r, 409, "subsystem " + NQN + " already exists");
    }

    @Test
    void aBdevSpdkRefusesIsABadRequestWithSpdksReason() throws IOException {
        // a file the validator accepts (in an allowed directory) but SPDK's aio bdev refuses: 1000 bytes are no
        // whole number of 512-byte blocks (numBlocks 0 takes the file as it is)
        Path odd = Files.write(dir.resolve("images/odd.img"), new byte[1000]); // the default place of images
        Res r = http.post("/api/v1/bdevs", "{\"name\":\"odd0\",\"type\":\"file\",\"numBlocks\":0,\"path\":\""
            + odd.toString().replace("\\", "\\\\") + "\"}");
        assertThat(r.status()).as("%s", r).isEqualTo(400);
        assertThat(r.error()).as("SPDK's reason").startsWith("SPDK refused bdev odd0 (file): ")
            .contains("Invalid argument");
        assertThat(http.get("/api/v1/bdevs/odd0").status()).isEqualTo(404);
    }

    @Test
    void unknownNamesAreNotFoundAndNamesInUseConflicts() {
        assertError(http.delete("/api/v1/subsystems/" + enc("nqn.2026-12.io.nvmf4j:none")), 404,
            "no subsystem nqn.2026-12.io.nvmf4j:none");
        assertError(http.delete("/api/v1/bdevs/zz"), 404, "no bdev zz");
        assertError(http.delete("/api/v1/bdevs/m0"), 409, "bdev m0 backs namespace 1 of " + NQN);
    }

    @Test
    void aGoodChangeWorksAfterRefusedOnes() {
        for (int i = 0; i < 20; i++) {
            assertThat(http.post("/api/v1/subsystems", "{\"nqn\":\"" + NQN + "\"}").status()).isEqualTo(409);
            assertThat(http.delete("/api/v1/bdevs/zz").status()).isEqualTo(404);
        }
        Res created = http.post("/api/v1/bdevs", "{\"name\":\"n1\",\"type\":\"null\",\"numBlocks\":2048}");
        assertThat(created.status()).as("%s", created).isEqualTo(201);
        assertThat(http.get("/api/v1/bdevs/n1").json().get("numBlocks").asLong()).isEqualTo(2048);
        assertThat(http.delete("/api/v1/bdevs/n1").status()).isEqualTo(204);
        assertThat(service.isAlive()).isTrue();
    }

    private static void assertError(Res r, int status, String error) {
        assertThat(r.status()).as("%s", r).isEqualTo(status);
        assertThat(r.error()).isEqualTo(error);
        assertThat(r.body()).doesNotContain("Exception").doesNotContain("\tat ");
    }

    /** Polls the API until it answers; fails with the service's output when it exits or takes too long. */
    private static void awaitApi() throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(START_TIMEOUT_MS);
        while (true) {
            try {
                if (http.get("/api/v1/bdevs").status() == 200) {
                    return;
                }
            } catch (UncheckedIOException e) {
                // not listening yet
            }
            assertThat(service.isAlive()).as("service running; output:%n%s", output()).isTrue();
            assertThat(System.nanoTime()).as("API up within %d ms; output:%n%s", START_TIMEOUT_MS, output())
                .isLessThan(deadline);
            service.waitFor(50, TimeUnit.MILLISECONDS);
        }
    }

    private static String output() {
        return child.output();
    }
}
