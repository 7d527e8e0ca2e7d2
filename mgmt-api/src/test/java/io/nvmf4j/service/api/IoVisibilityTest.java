package io.nvmf4j.service.api;

import com.fasterxml.jackson.databind.JsonNode;
import io.nvmf4j.config.BdevConfig;
import io.nvmf4j.config.MetricsConfig;
import io.nvmf4j.config.NamespaceConfig;
import io.nvmf4j.service.api.Http.Res;
import io.nvmf4j.testhost.Completion;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.NvmeHost;
import io.nvmf4j.testhost.TcpHostOptions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import static io.nvmf4j.service.api.Http.enc;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Per-host and per-controller I/O, the slowest recent I/Os and a namespace's percentiles through REST and
 * {@code /metrics}, after real NVMe/TCP I/O from two hosts of the in-tree test host on loopback: the counts and
 * bytes are exactly what each host sent, a controller that went leaves the per-controller view, an I/O the error
 * bdev holds 300 ms heads the slowest list with its namespace, host and LBA, and bad query parameters are 400
 * naming the parameter.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class IoVisibilityTest {
    private static final String HOST_A = "nqn.2014-08.org.nvmexpress:uuid:0a0a0a0a-0000-4000-8000-00000000000a";
    private static final String HOST_B = "nqn.2014-08.org.nvmexpress:uuid:0b0b0b0b-0000-4000-8000-00000000000b";
    private static final long HOLD_MS = 300;

    @TempDir
    static Path dir;
    private static TestService t;
    private static Http http;

    @BeforeAll
    static void start() throws Exception {
        t = TestService.start(dir, c -> {
            c.bdevs.add(new BdevConfig("b1", "malloc", 512, 2048));
            BdevConfig e = new BdevConfig("e1", "error", 512, 0);
            e.base = "b1";
            c.bdevs.add(e);
            c.subsystems.get(0).namespaces.add(new NamespaceConfig(2, "e1"));
            c.metrics = new MetricsConfig();
            c.metrics.perControllerMeters = true;
        });
        http = t.http;
    }

    @AfterAll
    static void stop() {
        t.close();
    }

    private static NvmeController connect(String host) throws IOException {
        return NvmeController.open("127.0.0.1", t.nvmePort, TestService.NQN, host, 0, 1, TcpHostOptions.DEFAULT);
    }

    /** GETs {@code path} until its JSON answer passes {@code done} or 10 s pass; returns the last answer. */
    private static JsonNode await(String path, Predicate<JsonNode> done) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (true) {
            Res r = http.get(path);
            assertThat(r.status()).as("%s", r).isEqualTo(200);
            if (done.test(r.json()) || System.nanoTime() > deadline) {
                return r.json();
            }
            Thread.sleep(20);
        }
    }

    private static JsonNode find(JsonNode list, String field, String value) {
        for (JsonNode n : list) {
            if (value.equals(n.path(field).asText())) {
                return n;
            }
        }
        return null;
    }

    @Test
    void countsAndBytesPerHostAndControllerAreWhatEachHostSent() throws Exception {
        int cntlidA;
        try (NvmeController a = connect(HOST_A); NvmeController b = connect(HOST_B)) {
            cntlidA = a.cntlid();
            NvmeHost ioA = a.io(0);
            NvmeHost ioB = b.io(0);
            for (int i = 0; i < 6; i++) {
                assertThat(ioA.write(1, i * 8L, new byte[4096]).ok()).isTrue();
            }
            for (int i = 0; i < 4; i++) {
                assertThat(ioA.read(1, i * 8L, 8).ok()).isTrue();
            }
            assertThat(ioA.flush(1).ok()).isTrue();
            for (int i = 0; i < 3; i++) {
                assertThat(ioB.write(1, 100 + i, new byte[512]).ok()).isTrue();
            }
            for (int i = 0; i < 2; i++) {
                assertThat(ioB.read(1, 100 + i, 1).ok()).isTrue();
            }
            // a command is recorded as its response is flushed, just after the host can have it: await the last
            JsonNode hosts = await("/api/v1/io/hosts", l -> find(l, "host", HOST_A) != null
                && find(l, "host", HOST_A).at("/io/others").asLong() == 1
                && find(l, "host", HOST_B) != null && find(l, "host", HOST_B).at("/io/reads").asLong() == 2);
            JsonNode ha = find(hosts, "host", HOST_A);
            JsonNode hb = find(hosts, "host", HOST_B);
            assertThat(ha.get("controllers").asInt()).isEqualTo(1);
            assertThat(ha.at("/io/writes").asLong()).isEqualTo(6);
            assertThat(ha.at("/io/reads").asLong()).isEqualTo(4);
            assertThat(ha.at("/io/others").asLong()).isEqualTo(1);
            assertThat(ha.at("/io/bytesWritten").asLong()).isEqualTo(6 * 4096);
            assertThat(ha.at("/io/bytesRead").asLong()).isEqualTo(4 * 4096);
            assertThat(ha.at("/io/errors").asLong()).isZero();
            assertThat(ha.at("/io/meanReadMicros").asDouble()).isPositive();
            assertThat(ha.at("/io/maxMicros").asDouble()).isGreaterThanOrEqualTo(ha.at("/io/meanWriteMicros").asDouble());
            assertThat(hb.at("/io/writes").asLong()).isEqualTo(3);
            assertThat(hb.at("/io/reads").asLong()).isEqualTo(2);
            assertThat(hb.at("/io/others").asLong()).isZero();
            assertThat(hb.at("/io/bytesWritten").asLong()).isEqualTo(3 * 512);
            assertThat(hb.at("/io/bytesRead").asLong()).isEqualTo(2 * 512);

            Res ctrls = http.get("/api/v1/io/controllers?subsystem=" + enc(TestService.NQN) + "&host=" + enc(HOST_A));
            assertThat(ctrls.status()).as("%s", ctrls).isEqualTo(200);
            assertThat(ctrls.json()).hasSize(1);
            assertThat(ctrls.json().get(0).get("cntlid").asInt()).isEqualTo(cntlidA);
            assertThat(ctrls.json().get(0).get("io")).isEqualTo(ha.get("io"));
            assertThat(http.get("/api/v1/io/controllers?host=" + enc(HOST_B)).json().get(0).get("cntlid").asInt())
                .isEqualTo(b.cntlid());

            String scrape = http.get("/metrics").body();
            assertThat(scrape).contains("nvmf_host_io_commands_total{host=\"" + HOST_A + "\",op=\"write\"} 6.0");
            assertThat(scrape).contains("nvmf_host_io_bytes_total{host=\"" + HOST_B + "\",op=\"read\"} 1024.0");
            assertThat(scrape).as("metrics.perControllerMeters is on").contains("nvmf_controller_io_commands_total{cntlid=\""
                + cntlidA + "\",host=\"" + HOST_A + "\",op=\"read\",subsystem=\"" + TestService.NQN + "\"} 4.0");
        }
        JsonNode left = await("/api/v1/io/controllers?host=" + enc(HOST_A), l -> l.isEmpty());
        assertThat(left).as("a controller that went leaves the per-controller view").isEmpty();
        assertThat(http.get("/metrics").body()).as("and its meters go").doesNotContain("nvmf_controller_io_commands_total{cntlid=\""
            + cntlidA + "\",host=\"" + HOST_A + "\"");
        JsonNode hosts = http.get("/api/v1/io/hosts").json();
        assertThat(find(hosts, "host", HOST_A)).as("the host's counts stay a while").isNotNull();
        assertThat(find(hosts, "host", HOST_A).get("controllers").asInt()).isZero();
    }

    @Test
    void aHeldReadHeadsTheSlowestListAndTheNamespacePercentiles() throws Exception {
        Res inject = http.post("/api/v1/bdevs/e1/errors", "{\"ioType\":\"read\",\"errorType\":\"timeout\",\"count\":1,"
            + "\"timeoutMs\":" + HOLD_MS + "}");
        assertThat(inject.status()).as("%s", inject).isEqualTo(201);
        try (NvmeController a = connect(HOST_A)) {
            NvmeHost io = a.io(0);
            for (int i = 0; i < 20; i++) {
                assertThat(io.write(2, i, new byte[512]).ok()).isTrue();
            }
            long start = System.nanoTime();
            Completion held = io.read(2, 77, 2);
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isGreaterThanOrEqualTo(HOLD_MS);
            assertThat(held.ok()).as("the held read fails with Command Interrupted").isFalse();
            JsonNode slowest = await("/api/v1/io/slowest?limit=5", l -> l.size() > 0
                && l.get(0).get("latencyMicros").asDouble() >= HOLD_MS * 1000);
            JsonNode top = slowest.get(0);
            assertThat(slowest.size()).isLessThanOrEqualTo(5);
            assertThat(top.get("subsystem").asText()).isEqualTo(TestService.NQN);
            assertThat(top.get("nsid").asInt()).isEqualTo(2);
            assertThat(top.get("host").asText()).isEqualTo(HOST_A);
            assertThat(top.get("cntlid").asInt()).isEqualTo(a.cntlid());
            assertThat(top.get("qid").asInt()).isEqualTo(1);
            assertThat(top.get("opcode").asInt()).isEqualTo(NvmeHost.OPC_READ);
            assertThat(top.get("op").asText()).isEqualTo("read");
            assertThat(top.get("lba").asLong()).isEqualTo(77);
            assertThat(top.get("blocks").asInt()).isEqualTo(2);
            assertThat(top.get("bytes").asInt()).isZero();
            assertThat(top.get("latencyMicros").asDouble()).isGreaterThanOrEqualTo(HOLD_MS * 1000);
            assertThat(top.get("status").asText()).isEqualTo("0/0x" + String.format("%02x", held.sc()));
            assertThat(top.get("time").asText()).endsWith("Z");
            for (int i = 1; i < slowest.size(); i++) {
                assertThat(slowest.get(i).get("latencyMicros").asDouble())
                    .isLessThanOrEqualTo(slowest.get(i - 1).get("latencyMicros").asDouble());
            }

            Res lat = http.get("/api/v1/subsystems/" + enc(TestService.NQN) + "/namespaces/2/latency");
            assertThat(lat.status()).as("%s", lat).isEqualTo(200);
            JsonNode read = find(lat.json(), "op", "read");
            JsonNode write = find(lat.json(), "op", "write");
            assertThat(read.get("count").asLong()).isEqualTo(1);
            // one read, of the latency the slowest list shows (the hold and however late the device's timer ran on
            // this machine): every percentile lies in its histogram bucket (bounds about 1.25x apart)
            double heldMicros = top.get("latencyMicros").asDouble();
            assertThat(read.get("p50Micros").asDouble()).isBetween(heldMicros / 1.3, heldMicros * 1.3);
            assertThat(read.get("p999Micros").asDouble()).isGreaterThanOrEqualTo(read.get("p50Micros").asDouble());
            assertThat(write.get("count").asLong()).isEqualTo(20);
            assertThat(write.get("p50Micros").asDouble()).isPositive()
                .isLessThanOrEqualTo(write.get("p90Micros").asDouble());
            assertThat(write.get("p99Micros").asDouble()).isLessThanOrEqualTo(write.get("p999Micros").asDouble());
            assertThat(write.get("p999Micros").asDouble()).isLessThanOrEqualTo(write.get("maxMicros").asDouble());
        } finally {
            http.delete("/api/v1/bdevs/e1/errors");
        }
    }

    @Test
    void badQueryParametersAre400NamingTheParameter() {
        expect400("/api/v1/io/slowest?limit=abc", "limit", "must be an integer");
        expect400("/api/v1/io/slowest?limit=0", "limit", "must be 1..64, got 0");
        expect400("/api/v1/io/slowest?limit=65", "limit", "must be 1..64, got 65");
        expect400("/api/v1/io/slowest?limit=99999999999999999999", "limit", "must be an integer");
        expect400("/api/v1/io/slowest?limit=1&limit=2", "limit", "given 2 times");
        expect400("/api/v1/io/controllers?hots=x", "hots", "unknown query parameter");
        expect400("/api/v1/io/hosts?host=x", "host", "takes none");
        expect400("/api/v1/subsystems/" + enc(TestService.NQN) + "/namespaces/1/latency?op=read", "op",
            "unknown query parameter");
        Res ok = http.get("/api/v1/io/controllers?subsystem=nqn.none:x");
        assertThat(ok.status()).isEqualTo(200);
        assertThat(ok.json()).as("a subsystem without controllers").isEmpty();
    }

    private static void expect400(String path, String field, String reason) {
        Res r = http.get(path);
        assertThat(r.status()).as("%s -> %s", path, r).isEqualTo(400);
        assertThat(r.field()).as("%s", r).isEqualTo(field);
        assertThat(r.error()).as("%s", r).contains(reason);
    }
}
