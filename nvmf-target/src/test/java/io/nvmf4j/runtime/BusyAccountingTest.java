package io.nvmf4j.runtime;

import io.netty.channel.SelectStrategy;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The busy time behind {@code nvmf_pollgroup_busy_seconds_total}: from the loop's first pass, idle stretches out. */
class BusyAccountingTest {
    @Test
    void busyTimeStartsAtTheFirstPassAndStandsStillWhileIdle() throws Exception {
        List<IdleStrategies.Accounting> made = new ArrayList<>();
        SelectStrategy s = IdleStrategies.factory("interrupt", made).newSelectStrategy();
        IdleStrategies.Accounting a = made.get(0);
        Thread.sleep(50);
        assertThat(a.busyNanos()).as("before the event loop ran").isZero();
        long first = System.nanoTime();
        s.calculateStrategy(() -> 1, false); // a pass with work
        Thread.sleep(30);
        long working = a.busyNanos();
        // at least the sleep, at most the time this test measured around it (however long the sleep overran)
        assertThat(working).as("working since the first pass").isBetween(25_000_000L, System.nanoTime() - first);
        s.calculateStrategy(() -> 0, false); // nothing to do: idle from here
        long idleFrom = a.busyNanos();
        Thread.sleep(50);
        assertThat(a.busyNanos()).as("stands still while idle").isEqualTo(idleFrom);
        s.calculateStrategy(() -> 1, false);
        Thread.sleep(20);
        assertThat(a.busyNanos()).as("counts again with work").isGreaterThan(idleFrom + 15_000_000L);
    }

    /**
     * A pass that continues what the last one did reads no clock: a busy loop's idle passes between two stretches of
     * work still count as idle, its working passes as busy.
     */
    @Test
    void busyCountsRunsOfIdlePassesAsIdleAndRunsOfWorkingPassesAsBusy() throws Exception {
        List<IdleStrategies.Accounting> made = new ArrayList<>();
        SelectStrategy s = IdleStrategies.factory("busy", made).newSelectStrategy();
        IdleStrategies.Accounting a = made.get(0);
        long first = System.nanoTime();
        s.calculateStrategy(() -> 1, false);
        Thread.sleep(10);
        s.calculateStrategy(() -> 1, false); // still working
        Thread.sleep(20);
        long idleStart = System.nanoTime();
        assertThat(s.calculateStrategy(() -> 0, false)).as("busy: poll again").isZero();
        long idleFrom = a.busyNanos();
        assertThat(idleFrom).isBetween(25_000_000L, System.nanoTime() - first);
        for (int i = 0; i < 5; i++) {
            Thread.sleep(10);
            assertThat(s.calculateStrategy(() -> 0, false)).isZero();
        }
        assertThat(a.busyNanos()).as("idle passes add nothing").isEqualTo(idleFrom);
        s.calculateStrategy(() -> 1, false);
        long idle = a.idleNanos();
        assertThat(idle).as("idle from the first idle pass to the pass with work")
            .isBetween(50_000_000L, System.nanoTime() - idleStart);
        Thread.sleep(10);
        assertThat(a.idleNanos()).as("closed by the work").isEqualTo(idle);
        Thread.sleep(20);
        assertThat(a.busyNanos()).as("counts again with work").isGreaterThan(idleFrom + 15_000_000L);
    }

    /** Backoff times its idling on every idle pass: after its spin and yield phases it blocks. */
    @Test
    void backoffBlocksOnceItHasIdledPastItsSpinAndYieldPhases() throws Exception {
        SelectStrategy s = IdleStrategies.factory("backoff").newSelectStrategy();
        s.calculateStrategy(() -> 1, false);
        assertThat(s.calculateStrategy(() -> 0, false)).as("first idle pass: spin").isZero();
        Thread.sleep(IdleStrategies.YIELD_NANOS / 1_000_000 + 5);
        assertThat(s.calculateStrategy(() -> 0, false)).as("idle longer than spin and yield").isEqualTo(SelectStrategy.SELECT);
        s.calculateStrategy(() -> 1, false);
        assertThat(s.calculateStrategy(() -> 0, false)).as("work resets it: spin again").isZero();
    }
}
