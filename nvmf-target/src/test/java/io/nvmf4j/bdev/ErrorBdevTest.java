package io.nvmf4j.bdev;

import io.nvmf4j.engine.ErrorInjection;
import io.nvmf4j.nvme.NvmeStatus;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The error bdev's held commands (review: close cancelled them instead of completing them, so their buffers and
 * queue slots were never returned; the held set had no bound; a timeout said Command Abort Requested, the answer
 * to a host's Abort command that nobody sent).
 */
class ErrorBdevTest {
    private static final int BS = 512;

    @Test
    void closeCompletesEveryHeldCommandExactlyOnceWithAbortedSqDeletion() {
        MallocBdev base = new MallocBdev("m0", BS, 64);
        ErrorBdev d = new ErrorBdev("e0", base, 16);
        d.inject(new ErrorInjection("read", "timeout", 0, 60_000));
        List<TestIo> ios = new ArrayList<>();
        try {
            for (int i = 0; i < 5; i++) {
                TestIo io = TestIo.of(i * BS, BS);
                ios.add(io);
                d.read(io);
            }
            assertThat(d.heldCommands()).isEqualTo(5);
            assertThat(ios).noneMatch(TestIo::isDone);
            d.close();
            for (TestIo io : ios) {
                assertThat(io.await()).as("status on close").isEqualTo(NvmeStatus.ABORTED_SQ_DELETION);
                assertThat(io.completions()).as("completed once").isEqualTo(1);
            }
            assertThat(d.heldCommands()).isZero();
            TestIo late = TestIo.of(0, BS);
            ios.add(late);
            d.read(late);
            assertThat(late.await()).as("a command held after close fails at once")
                .isEqualTo(NvmeStatus.ABORTED_SQ_DELETION);
        } finally {
            ios.forEach(TestIo::close);
            base.close();
        }
    }

    /**
     * The error bdev's timer thread is kept busy (a held read's completion blocks it) while the writes are submitted
     * and counted, so their 200 ms holds cannot end before the checks, whatever the speed of the machine.
     */
    @Test
    void timeoutIsCommandInterruptedAndTheHeldSetIsBounded() throws Exception {
        MallocBdev base = new MallocBdev("m0", BS, 64);
        ErrorBdev d = new ErrorBdev("e0", base, 2);
        CountDownLatch release = new CountDownLatch(1);
        StuckIo timerHeld = new StuckIo(release);
        List<TestIo> ios = new ArrayList<>();
        try {
            d.inject(new ErrorInjection("read", "timeout", 1, 1));
            d.read(timerHeld);
            assertThat(timerHeld.entered.await(10, TimeUnit.SECONDS)).as("the timer thread completing the read")
                .isTrue();
            assertThat(d.heldCommands()).as("the read left the held set before its completion").isZero();
            d.inject(new ErrorInjection("write", "timeout", 0, 200));
            for (int i = 0; i < 3; i++) {
                TestIo io = TestIo.of(0, new byte[BS]);
                ios.add(io);
                d.write(io);
            }
            assertThat(d.heldCommands()).as("held up to maxHeld").isEqualTo(2);
            assertThat(ios.get(2).isDone()).as("the third fails at once").isTrue();
            assertThat(ios.get(2).await()).isEqualTo(NvmeStatus.COMMAND_INTERRUPTED);
            assertThat(d.refusedHolds()).isEqualTo(1);
            assertThat(ios.subList(0, 2)).as("held while the timer is busy").noneMatch(TestIo::isDone);
            release.countDown();
            for (TestIo io : ios.subList(0, 2)) {
                int status = io.await();
                assertThat(status).as("SCT 0 / SC 21h, Command Interrupted").isEqualTo(0x21);
                assertThat(status & NvmeStatus.DNR).as("retryable: no DNR").isZero();
                assertThat(io.completions()).isEqualTo(1);
            }
            assertThat(timerHeld.status).as("the read, completed before the writes")
                .isEqualTo(NvmeStatus.COMMAND_INTERRUPTED);
            assertThat(d.heldCommands()).isZero();
        } finally {
            release.countDown();
            d.close();
            ios.forEach(TestIo::close);
            base.close();
        }
    }

    @Test
    void aHeldLimitBelowOneIsRefused() {
        MallocBdev base = new MallocBdev("m0", BS, 64);
        try {
            assertThatThrownBy(() -> new ErrorBdev("e0", base, 0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("maxHeld must be at least 1");
        } finally {
            base.close();
        }
    }
}
