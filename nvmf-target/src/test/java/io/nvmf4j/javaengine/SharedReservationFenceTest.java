package io.nvmf4j.javaengine;

import io.nvmf4j.core.Reservation;
import io.nvmf4j.core.Reservation.Notice;
import io.nvmf4j.nvme.NvmeStatus;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a shared reservation does around its announcement (the rules RbdGatewayFenceTest runs on a real Ceph
 * cluster): a target that takes in another target's change drains its namespace first when the change takes access
 * away, and only then; a change that takes access away but cannot be enforced on every target (its announcement
 * neither reached nor fenced one) is undone and ends with Namespace Not Ready, DNR clear; one that takes nothing away
 * stays. Two targets share one value through an in-memory compare-and-set of its bytes, as ReservationJournalTest.
 */
class SharedReservationFenceTest {
    private static final long A = 0xA, B = 0xB, C = 0xC;
    private static final long KEY_A = 0xA1, KEY_B = 0xB2, KEY_C = 0xC3;

    private final MemoryReservationValue kept = new MemoryReservationValue();
    /** Whether announcements fail (a target neither acknowledged nor could be fenced). */
    private volatile boolean unreachable;
    private final AtomicInteger announcements = new AtomicInteger();

    SharedReservationFenceTest() {
        kept.onAnnounce = () -> {
            announcements.incrementAndGet();
            if (unreachable) {
                throw new IOException("client.4242 did not acknowledge and cannot be blocklisted");
            }
        };
    }

    private static List<Notice> none() {
        return new ArrayList<>();
    }

    /** Two registrants, A holding Write Exclusive - Registrants Only (both may write). */
    private Reservation twoRegistrants() throws IOException {
        Reservation t = new Reservation(kept.target());
        assertThat(t.register(A, A, Reservation.REGISTER, false, 0, KEY_A, 0, none())).isZero();
        assertThat(t.register(B, B, Reservation.REGISTER, false, 0, KEY_B, 0, none())).isZero();
        assertThat(t.acquire(A, A, Reservation.ACQUIRE, Reservation.WRITE_EXCLUSIVE_REGISTRANTS_ONLY, KEY_A, 0,
            none())).isZero();
        return t;
    }

    @Test
    void aPreemptThatCannotBeEnforcedEverywhereIsUndoneAndEndsWithNamespaceNotReadyToRetry() throws IOException {
        Reservation t = twoRegistrants();
        Reservation.State before = t.state();
        byte[] bytes = kept.value.clone();
        unreachable = true;
        int status = t.acquire(A, A, Reservation.PREEMPT_AND_ABORT, Reservation.WRITE_EXCLUSIVE, KEY_A, KEY_B, none());
        assertThat(status).as("Namespace Not Ready").isEqualTo(0x82);
        assertThat(status & NvmeStatus.DNR).as("DNR clear: the host may send it again").isZero();
        assertThat(t.state().registrants()).as("B is registered again").isEqualTo(2);
        assertThat(t.state().rtype).isEqualTo(Reservation.WRITE_EXCLUSIVE_REGISTRANTS_ONLY);
        assertThat(t.state().generation).isEqualTo(before.generation);
        assertThat(ReservationMetadata.parse(kept.value).state().registrants()).as("the kept value too").isEqualTo(2);
        assertThat(t.checkAccess(B, B, true)).as("B may still write: nothing was fenced").isZero();
        assertThat(announcements.get()).as("the change and its undo were announced").isEqualTo(5);
        assertThat(kept.value).as("a new value (its journal keeps the notice), not the old bytes").isNotEqualTo(bytes);

        unreachable = false;
        assertThat(t.acquire(A, A, Reservation.PREEMPT_AND_ABORT, Reservation.WRITE_EXCLUSIVE, KEY_A, KEY_B, none()))
            .as("sent again once every target is reached").isZero();
        assertThat(t.state().registrants()).isEqualTo(1);
        assertThat(t.checkAccess(B, B, true)).isEqualTo(Reservation.CONFLICT);
    }

    @Test
    void aRegistrationThatNotEveryTargetTookInStays() throws IOException {
        Reservation t = new Reservation(kept.target());
        unreachable = true;
        assertThat(t.register(C, C, Reservation.REGISTER, false, 0, KEY_C, 0, none())).as("no host loses access")
            .isZero();
        assertThat(t.state().registrants()).isEqualTo(1);
        assertThat(t.release(C, C, Reservation.CLEAR, 0, KEY_C, none())).as("a clear takes nothing away").isZero();
    }

    @Test
    void anotherTargetDrainsBeforeItAcknowledgesOnlyWhenTheChangeTakesAccessAway() throws Exception {
        Reservation t1 = twoRegistrants();
        Reservation t2 = new Reservation(kept.target());
        List<String> events = new ArrayList<>();
        t2.drainWith(done -> {
            synchronized (events) {
                events.add("drain");
            }
            done.run();
        });

        assertThat(t1.register(C, C, Reservation.REGISTER, false, 0, KEY_C, 0, none())).isZero();
        refresh(t2, events);
        assertThat(events).as("a registration: acknowledged at once").containsExactly("done");

        events.clear();
        assertThat(t1.acquire(A, A, Reservation.PREEMPT_AND_ABORT, Reservation.WRITE_EXCLUSIVE, KEY_A, KEY_B, none()))
            .isZero();
        refresh(t2, events);
        assertThat(events).as("B loses write access: drained, then acknowledged").containsExactly("drain", "done");
        assertThat(t2.checkAccess(B, B, true)).isEqualTo(Reservation.CONFLICT);

        events.clear();
        assertThat(t1.release(A, A, Reservation.RELEASE, Reservation.WRITE_EXCLUSIVE_REGISTRANTS_ONLY, KEY_A, none()))
            .as("the preempt kept A's Registrants Only type").isZero();
        refresh(t2, events);
        assertThat(events).as("a release gives access: acknowledged at once").containsExactly("done");

        events.clear();
        assertThat(t1.acquire(C, C, Reservation.ACQUIRE, Reservation.EXCLUSIVE_ACCESS, KEY_C, 0, none())).isZero();
        refresh(t2, events);
        assertThat(events).as("a new Exclusive Access reservation takes reads away").containsExactly("drain", "done");
    }

    /** {@code t.refresh(false, done)}, waiting for done (it runs after the drain on another thread). */
    private static void refresh(Reservation t, List<String> events) throws InterruptedException {
        CountDownLatch latch = new CountDownLatch(1);
        t.refresh(false, () -> {
            synchronized (events) {
                events.add("done");
            }
            latch.countDown();
        });
        assertThat(latch.await(10, TimeUnit.SECONDS)).as("acknowledged").isTrue();
    }
}
