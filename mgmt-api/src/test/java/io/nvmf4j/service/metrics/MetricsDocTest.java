package io.nvmf4j.service.metrics;

import io.nvmf4j.service.api.Http.Res;
import io.nvmf4j.service.api.PoolService;
import io.nvmf4j.service.api.TestService;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.PduCodec;
import io.nvmf4j.testhost.TcpHost;
import io.nvmf4j.testhost.TcpHostOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * docs/metrics.md cannot drift from the java engine's meters: a running service's {@code GET /metrics}, after I/O,
 * an I/O error, an admin error and a malformed PDU (so that the meters created on first use exist), has exactly
 * the families the doc's Meters table lists for the java engine. {@code SpdkMetricsTest} does the same for spdk.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class MetricsDocTest {
    @TempDir
    Path dir;

    @Test
    void everyMeterOfTheJavaEngineIsDocumentedAndEveryDocumentedOneIsPublished() throws Exception {
        MetricsDoc doc = MetricsDoc.load();
        assertThat(doc.count("java")).as("java meters in " + MetricsDoc.FILE).isGreaterThan(15);
        PoolService pools = poolServiceOrNull();
        TestService s = pools != null ? pools.service : TestService.start(dir, c -> { });
        try {
            exercise(s);
            if (pools != null) {
                assertThat(s.http.post("/api/v1/pools", "{\"name\":\"p\",\"path\":\"" + pools.poolDir + "\"}")
                    .status()).isEqualTo(201);
                assertThat(s.http.post("/api/v1/pools/p/volumes", "{\"name\":\"v\",\"size\":1048576}").status())
                    .isEqualTo(201);
            }
            Res r = s.http.get("/metrics");
            assertThat(r.status()).isEqualTo(200);
            Set<String> families = MetricsDoc.families(r.body());
            assertThat(families).as("families in the scrape").contains("nvmf_io_errors_total", "nvmf_admin_errors_total",
                "nvmf_transport_errors_total", "nvmf_namespace_durability_errors");
            assertThat(doc.undocumented("java", families)).as("published but not in " + MetricsDoc.FILE).isEmpty();
            assertThat(doc.unpublished("java", families).stream()
                .filter(n -> pools != null || !n.startsWith("nvmf_pool_") && !n.startsWith("nvmf_volume_")))
                .as("in " + MetricsDoc.FILE + " but not published").isEmpty();
        } finally {
            if (pools != null) {
                pools.close();
            } else {
                s.close();
            }
        }
    }

    /** The service on an XFS with a pool directory, where one can be made (root); otherwise null. */
    private PoolService poolServiceOrNull() throws Exception {
        try {
            return PoolService.start(dir);
        } catch (org.opentest4j.TestAbortedException e) {
            return null;
        }
    }

    @Test
    void buildInfoNamesVersionRevisionJavaAndEngine() throws Exception {
        try (TestService s = TestService.start(dir, c -> { })) {
            String text = s.http.get("/metrics").body();
            Matcher m = Pattern.compile("(?m)^nvmf4j_build_info\\{engine=\"java\",java=\"([^\"]+)\",revision=\"([^\"]+)\","
                + "version=\"([^\"]+)\"} 1(\\.0)?$").matcher(text);
            assertThat(m.find()).as("nvmf4j_build_info in\n" + grep(text, "build_info")).isTrue();
            assertThat(m.group(1)).isEqualTo(System.getProperty("java.version"));
            assertThat(m.group(3)).as("the Maven project version").matches("\\d+\\.\\d+\\.\\d+(-SNAPSHOT)?");
            String head = gitHead();
            assertThat(m.group(2)).as("the git revision at build time").isEqualTo(head == null ? "unknown" : head);
        }
    }

    /** I/O on both namespaces' paths, an LBA out of range, a bad log page, a malformed PDU. */
    private static void exercise(TestService s) throws IOException, InterruptedException {
        try (NvmeController c = NvmeController.open("127.0.0.1", s.nvmePort, TestService.NQN, TestService.HOSTNQN, 0, 1,
            TcpHostOptions.DEFAULT)) {
            assertThat(c.io(0).write(1, 0, new byte[512]).ok()).isTrue();
            assertThat(c.io(0).read(1, 0, 1).ok()).isTrue();
            assertThat(c.io(0).read(1, 4096, 1).ok()).as("LBA out of range").isFalse();
            assertThat(c.admin().getLogPage(0x55, 0, 0, 512).ok()).as("invalid log page").isFalse();
        }
        try (TcpHost h = TcpHost.connect("127.0.0.1", s.nvmePort, TcpHostOptions.DEFAULT)) {
            h.sendRaw(PduCodec.encode(0x0F, 0, new byte[16], null, false, false));
            assertThat(h.awaitClosed(Duration.ofSeconds(5))).isTrue();
        }
    }

    /** {@code git rev-parse --short=12 HEAD} of this checkout, or null outside git. */
    private static String gitHead() throws InterruptedException {
        try {
            Process p = new ProcessBuilder("git", "rev-parse", "--short=12", "HEAD").redirectErrorStream(false).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            return p.waitFor() == 0 && !out.isEmpty() ? out : null;
        } catch (IOException e) {
            return null; // no git here
        }
    }

    private static String grep(String text, String fragment) {
        List<String> lines = text.lines().filter(l -> l.contains(fragment)).toList();
        return String.join("\n", lines);
    }
}
