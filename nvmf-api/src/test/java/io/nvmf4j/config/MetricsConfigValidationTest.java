package io.nvmf4j.config;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * {@code metrics.latencyBucketsMicros}: positive, strictly ascending, bounded; absent means the default ladder.
 * {@code metrics.perControllerMeters}: only on an engine that counts I/O per controller.
 */
class MetricsConfigValidationTest {
    private static TargetConfig with(Long... micros) {
        TargetConfig c = ConfigStore.defaultConfig();
        c.metrics = new MetricsConfig();
        c.metrics.latencyBucketsMicros = new ArrayList<>(Arrays.asList(micros));
        return c;
    }

    private static String problems(TargetConfig c) {
        ConfigException e = catchThrowableOfType(ConfigException.class, () -> ConfigValidator.validate(c));
        assertThat(e).as("the document must be refused").isNotNull();
        return e.getMessage();
    }

    @Test
    void absentAndAscendingPositiveListsAreAccepted() {
        assertThatCode(() -> ConfigValidator.validate(ConfigStore.defaultConfig())).doesNotThrowAnyException();
        TargetConfig empty = ConfigStore.defaultConfig();
        empty.metrics = new MetricsConfig();
        assertThatCode(() -> ConfigValidator.validate(empty)).as("\"metrics\": {}").doesNotThrowAnyException();
        assertThatCode(() -> ConfigValidator.validate(with(1L, 10L, 100L, MetricsConfig.MAX_LATENCY_BUCKET_MICROS)))
            .doesNotThrowAnyException();
        List<Long> most = new ArrayList<>();
        for (long i = 1; i <= MetricsConfig.MAX_LATENCY_BUCKETS; i++) {
            most.add(i * 10);
        }
        assertThatCode(() -> ConfigValidator.validate(with(most.toArray(new Long[0])))).doesNotThrowAnyException();
    }

    @Test
    void badListsNameTheFieldAndTheValue() {
        assertThat(problems(with())).contains("metrics.latencyBucketsMicros: must list 1..64 bucket bounds, got 0");
        assertThat(problems(with(0L, 10L))).contains("metrics.latencyBucketsMicros[0]: must be 1..3600000000 (microseconds), got 0");
        assertThat(problems(with(10L, -5L))).contains("metrics.latencyBucketsMicros[1]: must be 1..3600000000");
        assertThat(problems(with(10L, 100L, 100L)))
            .contains("metrics.latencyBucketsMicros[2]: must be greater than the bound before it (100), got 100");
        assertThat(problems(with(100L, 10L))).contains("metrics.latencyBucketsMicros[1]: must be greater than");
        assertThat(problems(with(MetricsConfig.MAX_LATENCY_BUCKET_MICROS + 1)))
            .contains("metrics.latencyBucketsMicros[0]: must be 1..3600000000 (microseconds), got 3600000001");
        assertThat(problems(with(10L, null))).contains("metrics.latencyBucketsMicros[1]: must be 1..3600000000 (microseconds), got null");
        Long[] tooMany = new Long[MetricsConfig.MAX_LATENCY_BUCKETS + 1];
        for (int i = 0; i < tooMany.length; i++) {
            tooMany[i] = (long) i + 1;
        }
        assertThat(problems(with(tooMany))).contains("must list 1..64 bucket bounds, got 65");
    }

    @Test
    void theListSurvivesTheStoreAndAFractionIsRefusedOnRead() throws Exception {
        TargetConfig c = with(50L, 500L);
        TargetConfig back = ConfigStore.mapper().readValue(ConfigStore.toJson(c), TargetConfig.class);
        assertThat(back.metrics.latencyBucketsMicros).containsExactly(50L, 500L);
        assertThat(ConfigStore.toJson(ConfigStore.defaultConfig())).as("absent by default").doesNotContain("metrics");
        Throwable fraction = org.assertj.core.api.Assertions.catchThrowable(() -> ConfigStore.mapper()
            .readValue("{\"metrics\": {\"latencyBucketsMicros\": [1.5]}}", TargetConfig.class));
        assertThat(fraction).as("1.5 µs is not an integer").isNotNull().hasMessageContaining("latencyBucketsMicros");
    }

    /**
     * Per-controller meters on the spdk engine, whose SPDK counts no I/O per controller, are refused with the engine's
     * reason (they would publish nothing); off, or on the java engine, they are accepted.
     */
    @Test
    void perControllerMetersOnTheSpdkEngineAreRefusedByName() {
        TargetConfig c = ConfigStore.defaultConfig();
        c.engine = "spdk";
        c.metrics = new MetricsConfig();
        c.metrics.perControllerMeters = false;
        assertThatCode(() -> ConfigValidator.validate(c)).as("off").doesNotThrowAnyException();
        c.metrics.perControllerMeters = true;
        assertThat(problems(c)).contains("metrics.perControllerMeters: I/O per host and per controller is java engine"
            + " only: SPDK's NVMe-oF target keeps no I/O counts, bytes or latency per controller or host");
        c.engine = "java";
        assertThatCode(() -> ConfigValidator.validate(c)).as("java engine").doesNotThrowAnyException();
    }
}
