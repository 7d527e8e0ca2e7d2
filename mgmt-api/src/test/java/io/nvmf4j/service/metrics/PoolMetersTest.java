package io.nvmf4j.service.metrics;

import io.nvmf4j.service.api.Http;
import io.nvmf4j.service.api.PoolService;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Pool and volume meters of a running service's {@code GET /metrics}, on a real XFS made with {@code reflink=1}:
 * capacity read at the scrape, a watermark crossing counted, and a deleted volume's series gone.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class PoolMetersTest {
    private static final long MIB = 1 << 20;

    @TempDir
    Path tmp;
    private PoolService pools;
    private Http http;

    @BeforeEach
    void start() throws Exception {
        pools = PoolService.start(tmp);
        http = pools.service.http;
    }

    @AfterEach
    void stop() throws Exception {
        if (pools != null) {
            pools.close();
        }
    }

    private Scrape scrape() {
        Http.Res r = http.get("/metrics");
        assertThat(r.status()).isEqualTo(200);
        return new Scrape(r.body());
    }

    private void created(String path, String json) {
        assertThat(http.post(path, json).status()).as("POST %s %s", path, json).isEqualTo(201);
    }

    @Test
    void poolsAndVolumesArePublishedAndADeletedVolumesSeriesGo() {
        assertThat(scrape().text).doesNotContain("nvmf_pool_").doesNotContain("nvmf_volume_");
        created("/api/v1/pools", "{\"name\":\"p\",\"path\":\"" + pools.poolDir + "\",\"warnPercent\":20}");
        created("/api/v1/pools/p/volumes", "{\"name\":\"thin\",\"size\":" + 64 * MIB + "}");

        Scrape s = scrape();
        Http.Res pool = http.get("/api/v1/pools/p");
        assertThat(s.value("nvmf_pool_size_bytes", "pool", "p")).isEqualTo(pool.json().get("size").asDouble());
        assertThat(s.value("nvmf_pool_free_bytes", "pool", "p")).isPositive();
        double usedBefore = s.value("nvmf_pool_used_bytes", "pool", "p");
        assertThat(usedBefore).isPositive();
        assertThat(s.value("nvmf_pool_watermark_crossings_total", "pool", "p")).isZero();
        assertThat(s.value("nvmf_volume_provisioned_bytes", "pool", "p", "volume", "thin")).isEqualTo(64.0 * MIB);
        assertThat(s.value("nvmf_volume_allocated_bytes", "pool", "p", "volume", "thin")).isLessThan(MIB);

        // 100 MiB allocated at once takes the 400 MiB file system above 20 %: one crossing
        created("/api/v1/pools/p/volumes", "{\"name\":\"thick\",\"size\":" + 100 * MIB + ",\"thick\":true}");
        s = scrape();
        assertThat(s.value("nvmf_volume_allocated_bytes", "pool", "p", "volume", "thick")).isGreaterThanOrEqualTo(100.0 * MIB);
        assertThat(s.value("nvmf_pool_used_bytes", "pool", "p")).isGreaterThanOrEqualTo(usedBefore + 100 * MIB);
        assertThat(s.value("nvmf_pool_watermark_crossings_total", "pool", "p")).isEqualTo(1);

        assertThat(http.patch("/api/v1/pools/p/volumes/thin", "{\"size\":" + 128 * MIB + "}").status()).isEqualTo(200);
        assertThat(scrape().value("nvmf_volume_provisioned_bytes", "pool", "p", "volume", "thin")).isEqualTo(128.0 * MIB);

        assertThat(http.delete("/api/v1/pools/p/volumes/thick").status()).isEqualTo(204);
        s = scrape();
        assertThat(s.text).doesNotContain("volume=\"thick\"").contains("volume=\"thin\"");
        assertThat(http.delete("/api/v1/pools/p/volumes/thin").status()).isEqualTo(204);
        assertThat(http.delete("/api/v1/pools/p").status()).isEqualTo(204);
        assertThat(scrape().text).doesNotContain("pool=\"p\"");
    }
}
