package io.nvmf4j.service.metrics;

import io.nvmf4j.config.ConfigStore;
import io.nvmf4j.config.MetricsConfig;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.service.api.TestService;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.TcpHostOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code metrics.latencyBucketsMicros}: the histograms of a running service have exactly the configured bounds
 * (plus +Inf); with none configured, Micrometer's 1 µs .. 10 s ladder; a changed list applies at the next start.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class LatencyBucketsTest {
    private static final Pattern LE = Pattern.compile(
        "(?m)^nvmf_io_latency_seconds_bucket\\{[^}]*nsid=\"1\",op=\"read\"[^}]*le=\"([^\"]+)\"} (\\d+)");

    @TempDir
    Path dir;

    @Test
    void configuredBoundsAreTheBucketsAndApplyAtTheNextStart() throws Exception {
        try (TestService s = TestService.start(dir, c -> {
            c.metrics = new MetricsConfig();
            c.metrics.latencyBucketsMicros = List.of(20L, 200L, 2000L);
        })) {
            read(s);
            assertThat(bounds(s)).containsExactly("+Inf", "0.002", "2.0E-4", "2.0E-5");
        }
        TargetConfig c = ConfigStore.load(dir.resolve("config.json"));
        c.metrics.latencyBucketsMicros = List.of(5L, 50L);
        ConfigStore.save(dir.resolve("config.json"), c);
        try (TestService s = TestService.restart(dir)) {
            read(s);
            assertThat(bounds(s)).containsExactly("+Inf", "5.0E-5", "5.0E-6");
        }
    }

    @Test
    void withoutAListTheDefaultLadderRunsFromOneMicrosecondToTenSeconds() throws Exception {
        try (TestService s = TestService.start(dir, c -> { })) {
            read(s);
            Set<String> le = bounds(s);
            assertThat(le).hasSize(106).contains("1.0E-6", "10.0", "+Inf");
        }
    }

    private static void read(TestService s) throws Exception {
        try (NvmeController c = NvmeController.open("127.0.0.1", s.nvmePort, TestService.NQN, TestService.HOSTNQN, 0, 1,
            TcpHostOptions.DEFAULT)) {
            assertThat(c.io(0).read(1, 0, 1).ok()).isTrue();
        }
    }

    /** The le values of namespace 1's read histogram, and that its +Inf bucket counted the read. */
    private static Set<String> bounds(TestService s) {
        String text = s.http.get("/metrics").body();
        Set<String> le = new TreeSet<>();
        Matcher m = LE.matcher(text);
        while (m.find()) {
            le.add(m.group(1));
            if (m.group(1).equals("+Inf")) {
                assertThat(m.group(2)).as("reads in the +Inf bucket").isEqualTo("1");
            }
        }
        return le;
    }
}
