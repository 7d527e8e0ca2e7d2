package io.nvmf4j.it;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The short soak of the normal suite: 200 connect/disconnect and 200 namespace add/remove cycles with heap, direct
 * memory, threads, fds and controllers back to baseline ({@link Soak}; {@code ./dev.sh soak} runs 1000).
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class SoakTest {
    @Test
    void twoHundredCyclesOfEachLeaveNothingBehind() throws Exception {
        assertThat(Soak.run(Integer.getInteger("nvmf4j.soak.cycles", 200))).as("what did not come back").isEmpty();
    }
}
