package io.nvmf4j.runtime;

import io.netty.channel.SelectStrategy;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Pollers (an RDMA CQ) are polled on every pass and armed only when the strategy is about to block: a
 * busy strategy never arms them, a blocking one arms them first and does not block when completions came
 * in meanwhile.
 */
class PollerTest {
    /** Counts polls and arms; {@code pending} completions are found by the next poll. */
    private static final class Cq implements IdleStrategies.Poller {
        int polls;
        int arms;
        int pending;
        int pendingAtArm;

        @Override
        public int poll() {
            polls++;
            int n = pending;
            pending = 0;
            return n;
        }

        @Override
        public int beforeBlocking() {
            arms++;
            pending += pendingAtArm; // arrived just before the arm
            pendingAtArm = 0;
            return poll();
        }
    }

    private static SelectStrategy strategy(String name, Cq cq) throws Exception {
        List<IdleStrategies.Accounting> made = new ArrayList<>();
        SelectStrategy s = IdleStrategies.factory(name, made).newSelectStrategy();
        s.calculateStrategy(() -> 0, false);
        assertThat(IdleStrategies.current()).as("the strategy of this thread").isSameAs(made.get(0));
        made.get(0).addPoller(cq);
        return s;
    }

    @Test
    void busyPollsEveryPassAndNeverArms() throws Exception {
        Cq cq = new Cq();
        SelectStrategy s = strategy("busy", cq);
        for (int i = 0; i < 1000; i++) {
            cq.pending = i % 3;
            assertThat(s.calculateStrategy(() -> 0, false)).as("busy never blocks").isNotEqualTo(SelectStrategy.SELECT);
        }
        assertThat(cq.polls).isEqualTo(1000);
        assertThat(cq.arms).as("a busy poll group never arms the CQ").isZero();
    }

    @Test
    void interruptArmsBeforeBlockingAndPollsOnceMore() throws Exception {
        Cq cq = new Cq();
        SelectStrategy s = strategy("interrupt", cq);
        cq.pending = 2;
        assertThat(s.calculateStrategy(() -> 0, false)).as("completions are work: no blocking").isZero();
        assertThat(cq.arms).isZero();
        cq.pendingAtArm = 1;
        assertThat(s.calculateStrategy(() -> 0, false)).as("a completion that came in while arming: another pass")
            .isZero();
        assertThat(cq.arms).isEqualTo(1);
        assertThat(s.calculateStrategy(() -> 0, false)).as("nothing: armed, then blocks")
            .isEqualTo(SelectStrategy.SELECT);
        assertThat(cq.arms).isEqualTo(2);
        IdleStrategies.current().removePoller(cq);
        int polls = cq.polls;
        s.calculateStrategy(() -> 0, false);
        assertThat(cq.polls).as("removed: not polled").isEqualTo(polls);
    }
}
