package io.nvmf4j.qos;

import io.nvmf4j.config.QosLimits;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The budget arithmetic of a limit, on a clock the test gives (no timing): each I/O starts when the budget before
 * it is earned, in arrival order, taken exactly once across threads; an idle limit keeps no more than its burst.
 */
class RateBucketTest {
    private static final long T0 = 5_000_000_000L;

    @Test
    void eachReservationStartsWhenTheBudgetBeforeItIsEarned() {
        RateBucket b = new RateBucket(1000, T0); // 1 ms per unit
        assertThat(b.reserve(1, T0)).as("a full bucket: at once").isLessThanOrEqualTo(T0);
        long second = b.reserve(1, T0);
        long third = b.reserve(1, T0);
        assertThat(third - second).as("one unit apart").isEqualTo(1_000_000);
        assertThat(second).as("the burst, then the first unit").isEqualTo(T0 - RateBucket.BURST_NANOS + 1_000_000);
    }

    @Test
    void anIdleBucketForgetsWhatItDidNotUseBeyondItsBurst() {
        RateBucket b = new RateBucket(10, T0);
        b.reserve(1, T0);
        long later = T0 + 60_000_000_000L;
        assertThat(b.reserve(1, later)).isEqualTo(later - RateBucket.BURST_NANOS);
        assertThat(b.reserve(1, later)).as("then paced again").isEqualTo(later - RateBucket.BURST_NANOS + 100_000_000);
    }

    @Test
    void costIsRoundedUpSoALimitNeverOvershoots() {
        assertThat(new RateBucket(3, T0).costNanos(1)).isEqualTo(333_333_334);
        assertThat(new RateBucket(1_000_000, T0).costNanos(1)).isEqualTo(1_000);
        assertThat(new RateBucket(QosLimits.BYTES_PER_MB, T0).costNanos(4096)).isEqualTo(3_906_250);
        assertThat(new RateBucket(1, T0).costNanos(1L << 32)).as("the largest I/O fits")
            .isEqualTo((1L << 32) * 1_000_000_000L);
    }

    /** Four threads take 10,000 units each at one instant: the budget moves by exactly 40,000 units. */
    @Test
    void threadsTakeTheBudgetExactlyOnce() throws Exception {
        RateBucket b = new RateBucket(1_000_000, T0);
        long first = b.reserve(1, T0);
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            Thread t = new Thread(() -> {
                try {
                    go.await();
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
                for (int k = 0; k < 10_000; k++) {
                    b.reserve(1, T0);
                }
            });
            t.start();
            threads.add(t);
        }
        go.countDown();
        for (Thread t : threads) {
            t.join();
        }
        assertThat(b.reserve(1, T0) - first).isEqualTo((1 + 40_000) * 1_000L);
    }

    @Test
    void aLimiterWaitsForTheLatestOfItsLimits() {
        QosLimits l = new QosLimits(1000L, null, 1L, 0L); // 1 ms per I/O, 1 MB/s of writes
        QosLimiter q = new QosLimiter(l, T0);
        q.reserve(false, QosLimits.BYTES_PER_MB, T0);
        long write = q.reserve(false, 4096, T0);
        assertThat(write).as("behind the 1 MB written before it").isEqualTo(T0 - RateBucket.BURST_NANOS + 1_000_000_000);
        long read = q.reserve(true, 4096, T0);
        assertThat(read).as("reads: only the IOPS limit").isEqualTo(T0 - RateBucket.BURST_NANOS + 2_000_000);
        assertThat(new QosLimiter(new QosLimits(), T0).reserve(true, 4096, T0)).as("unlimited")
            .isEqualTo(Long.MIN_VALUE);
    }
}
