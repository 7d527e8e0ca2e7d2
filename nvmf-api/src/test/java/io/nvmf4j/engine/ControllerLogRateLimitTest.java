package io.nvmf4j.engine;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The refusal log's limiter: so many per window, then silence, then a count of what was left out. */
class ControllerLogRateLimitTest {
    @Test
    void permitsPerWindowThenCountsTheGap() {
        ControllerLog.RateLimit limit = new ControllerLog.RateLimit(3, 1_000);
        assertThat(limit.acquire(0)).isZero();
        assertThat(limit.acquire(1)).isZero();
        assertThat(limit.acquire(2)).isZero();
        assertThat(limit.acquire(3)).as("fourth in the window").isEqualTo(-1);
        assertThat(limit.acquire(999)).isEqualTo(-1);
        assertThat(limit.acquire(1_000)).as("next window: the two left out").isEqualTo(2);
        assertThat(limit.acquire(1_001)).as("reported once").isZero();
    }
}
