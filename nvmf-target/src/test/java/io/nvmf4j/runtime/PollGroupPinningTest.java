package io.nvmf4j.runtime;

import io.netty.util.concurrent.EventExecutor;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** pollGroupCores: each poll group's thread runs on its own CPU, asked of the kernel from that thread. */
class PollGroupPinningTest {
    @Test
    void eachPollGroupRunsOnItsCpuAlone() throws Exception {
        BitSet allowed = CpuAffinity.current();
        assertThat(allowed.cardinality()).as("CPUs of this test process").isPositive();
        int groups = Math.min(2, allowed.cardinality());
        BitSet pinTo = new BitSet();
        // the last CPUs this process may use: pinned groups differ from where the scheduler starts threads
        int cpu = allowed.length();
        while (pinTo.cardinality() < groups) {
            cpu = allowed.previousSetBit(cpu - 1);
            pinTo.set(cpu);
        }
        try (PollGroups pg = new PollGroups(groups, "backoff", pinTo)) {
            List<BitSet> seen = new ArrayList<>();
            for (EventExecutor e : pg.workers()) {
                seen.add(e.submit(CpuAffinity::current).get(5, TimeUnit.SECONDS));
            }
            BitSet union = new BitSet();
            for (BitSet s : seen) {
                assertThat(s.cardinality()).as("CPUs of one poll group %s", s).isEqualTo(1);
                union.or(s);
            }
            assertThat(union).isEqualTo(pinTo);
            assertThat(pg.describe()).contains("pinned to CPUs " + pinTo);
        }
        // the calling thread (and so the JVM's other threads) keeps its CPUs
        assertThat(CpuAffinity.current()).isEqualTo(allowed);
    }

    @Test
    void aCpuThisProcessMayNotUseIsRefusedBeforeAnyThreadStarts() {
        BitSet allowed = CpuAffinity.current();
        BitSet beyond = new BitSet();
        beyond.set(allowed.length() + 7);
        assertThatThrownBy(() -> new PollGroups(1, "backoff", beyond))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("CPU(s) " + beyond + " are not among the CPUs this process may use " + allowed);
    }

    @Test
    void theCountMustMatchThePollGroups() {
        BitSet one = new BitSet();
        one.set(CpuAffinity.current().nextSetBit(0));
        assertThatThrownBy(() -> new PollGroups(2, "backoff", one))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("names 1 CPU(s) {" );
    }
}
