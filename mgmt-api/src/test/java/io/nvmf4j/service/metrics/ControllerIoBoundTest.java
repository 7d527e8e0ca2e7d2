package io.nvmf4j.service.metrics;

import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.TcpHostOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The per-controller view does not grow with the controllers that came and went: 2,000 short-lived controllers
 * over loopback NVMe/TCP (each connects, writes once and disconnects), from 20 host NQNs, with nobody scraping;
 * the entries held never pass twice the live controllers plus {@link Metrics#PRUNE_SLACK}, and once all are gone
 * a read lists none and holds none. With {@code metrics.perControllerMeters} off (the default) the scrape has no
 * per-controller series, and one per-host set per host NQN.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ControllerIoBoundTest {
    private static final int CONTROLLERS = 2000;
    private static final int HOSTS = 20;

    private static String host(int i) {
        return String.format("nqn.2014-08.org.nvmexpress:uuid:00000000-0000-4000-8000-%012d", i % HOSTS);
    }

    private static long hostWrites(MetricsTarget target) {
        return target.metrics.hosts().stream().mapToLong(h -> h.io().writes()).sum();
    }

    @Test
    void manyShortLivedControllersLeaveNoEntriesBehind() throws Exception {
        try (MetricsTarget target = MetricsTarget.start()) {
            int most = 0;
            long start = System.nanoTime();
            for (int i = 0; i < CONTROLLERS; i++) {
                try (NvmeController c = NvmeController.open(MetricsTarget.ADDRESS, target.port, MetricsTarget.SUBNQN,
                    host(i), 0, 1, TcpHostOptions.DEFAULT)) {
                    assertThat(c.io(0).write(1, i % 1000, new byte[512]).ok()).isTrue();
                }
                most = Math.max(most, target.metrics.controllerEntries());
            }
            System.out.printf("%d controllers in %d ms; most entries held %d%n", CONTROLLERS,
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start), most);
            // a controller is torn down just after its host closed the connection: a few may still be live
            assertThat(most).as("entries held while controllers come and go").isLessThanOrEqualTo(4 * Metrics.PRUNE_SLACK);

            // a write is counted just after its response went out: the host may have read the response, closed,
            // and this thread may look before the poll thread counted the last one (seen on a loaded machine)
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            long writes = 0;
            while ((writes = hostWrites(target)) < CONTROLLERS && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertThat(writes).as("every write counted for its host").isEqualTo(CONTROLLERS);
            while (!target.metrics.controllers(null, null).isEmpty() && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertThat(target.metrics.controllers(null, null)).as("live controllers after all went").isEmpty();
            assertThat(target.metrics.controllerEntries()).isZero();
            assertThat(target.metrics.hosts()).hasSize(HOSTS);
            assertThat(hostWrites(target)).as("no write counted twice").isEqualTo(CONTROLLERS);

            Scrape s = new Scrape(target.metrics.scrape());
            assertThat(s.seriesContaining("nvmf_controller_io")).as("no per-controller series by default").isEmpty();
            assertThat(s.seriesContaining("nvmf_host_io_commands_total{host=")).hasSize(HOSTS * 3);
        }
    }
}
