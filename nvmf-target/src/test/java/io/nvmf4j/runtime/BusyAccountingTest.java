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
        s.calculateStrategy(() -> 1, false); // a pass with work
        Thread.sleep(30);
        long working = a.busyNanos();
        assertThat(working).as("working since the first pass").isBetween(25_000_000L, 1_000_000_000L);
        s.calculateStrategy(() -> 0, false); // nothing to do: idle from here
        long idleFrom = a.busyNanos();
        Thread.sleep(50);
        assertThat(a.busyNanos()).as("stands still while idle").isEqualTo(idleFrom);
        s.calculateStrategy(() -> 1, false);
        Thread.sleep(20);
        assertThat(a.busyNanos()).as("counts again with work").isGreaterThan(idleFrom + 15_000_000L);
    }
}
