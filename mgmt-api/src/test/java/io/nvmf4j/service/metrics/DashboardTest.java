package io.nvmf4j.service.metrics;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.PduCodec;
import io.nvmf4j.testhost.TcpHost;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.InputStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The shipped Grafana dashboard only queries metrics the target publishes: after I/O, an I/O error and a
 * malformed PDU, every metric name in a panel or variable query appears in a scrape.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class DashboardTest {
    private static final String RESOURCE = "/grafana/nvmf4j-dashboard.json";
    private static final Pattern METRIC = Pattern.compile("\\b(?:nvmf|jvm|process|system)_[a-z0-9_]+");

    @Test
    void everyQueriedMetricIsInTheScrape() throws Exception {
        JsonNode dashboard = load();
        List<String> queries = queries(dashboard);
        Set<String> queried = new TreeSet<>();
        for (String q : queries) {
            Matcher m = METRIC.matcher(q);
            while (m.find()) {
                queried.add(m.group());
            }
        }
        assertThat(queried).as("metric names in the dashboard").hasSizeGreaterThan(15);

        try (MetricsTarget target = MetricsTarget.start()) {
            try (NvmeController c = target.controller(1, 0)) {
                assertThat(c.io(0).write(1, 0, new byte[4096]).ok()).isTrue();
                assertThat(c.io(0).read(1, 0, 8).ok()).isTrue();
                assertThat(c.io(0).read(1, MetricsTarget.NS1_BLOCKS, 1).ok()).isFalse();
                assertThat(c.admin().getLogPage(0x55, 0, 0, 512).ok()).isFalse();
            }
            try (TcpHost h = target.tcp()) {
                h.sendRaw(PduCodec.encode(0x0F, 0, new byte[16], null, false, false));
                assertThat(h.awaitClosed(Duration.ofSeconds(5))).isTrue();
            }
            System.gc(); // JvmGcMetrics registers the pause timer at the first GC notification
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            Set<String> names = new Scrape(target.metrics.scrape()).names();
            while (!names.containsAll(queried) && System.nanoTime() < deadline) {
                Thread.sleep(50);
                names = new Scrape(target.metrics.scrape()).names();
            }
            Set<String> missing = new TreeSet<>(queried);
            missing.removeAll(names);
            assertThat(missing).as("dashboard metrics missing from the scrape").isEmpty();
        }
    }

    @Test
    void panelsUseTheDatasourceVariable() throws Exception {
        JsonNode dashboard = load();
        JsonNode vars = dashboard.path("templating").path("list");
        assertThat(vars.get(0).path("type").asText()).isEqualTo("datasource");
        assertThat(vars.get(0).path("query").asText()).isEqualTo("prometheus");
        int panels = 0;
        for (JsonNode p : dashboard.path("panels")) {
            if (p.path("type").asText().equals("row")) {
                continue;
            }
            panels++;
            assertThat(p.path("datasource").path("uid").asText()).as(p.path("title").asText()).isEqualTo("${datasource}");
            assertThat(p.path("targets")).as(p.path("title").asText()).isNotEmpty();
        }
        assertThat(panels).isGreaterThanOrEqualTo(12);
        assertThat(String.join("\n", queries(dashboard)))
            .contains("histogram_quantile(0.5,", "histogram_quantile(0.99,", "histogram_quantile(0.999,");
    }

    private static JsonNode load() throws Exception {
        try (InputStream in = DashboardTest.class.getResourceAsStream(RESOURCE)) {
            assertThat(in).as(RESOURCE).isNotNull();
            return new ObjectMapper().readTree(in);
        }
    }

    /** Every PromQL expression: panel targets and variable queries. */
    private static List<String> queries(JsonNode dashboard) {
        List<String> out = new ArrayList<>();
        for (JsonNode p : dashboard.path("panels")) {
            for (JsonNode t : p.path("targets")) {
                out.add(t.path("expr").asText());
            }
        }
        for (JsonNode v : dashboard.path("templating").path("list")) {
            if (v.path("type").asText().equals("query")) {
                out.add(v.path("definition").asText());
            }
        }
        return out;
    }
}
