package io.nvmf4j.javaengine;

import io.nvmf4j.core.Reservation;
import io.nvmf4j.core.Reservation.Notice;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The journal of notices that travels with a shared reservation (ReservationMetadata's value format, Reservation's
 * reading of it): two targets share one value here through an in-memory compare-and-set of its bytes, the part of
 * the image's metadata that RbdReservationTest runs on a real Ceph cluster. What is checked here is what the cluster
 * test cannot force: a target that missed announcements (no watch here at all) hands on every notice it missed at
 * its next read, exactly once, never its own, and the journal keeps only the latest 64.
 */
class ReservationJournalTest {
    private static final long A = 0xA, B = 0xB, C = 0xC;
    private static final long KEY_A = 0xA1, KEY_B = 0xB2, KEY_C = 0xC3;

    /** The value kept for both targets; they learn of changes only when they read (a missed announcement). */
    private final MemoryReservationValue shared = new MemoryReservationValue();

    private Reservation target(List<Notice> heard) throws IOException {
        Reservation r = new Reservation(shared.target());
        r.onRemoteNotices(heard::addAll);
        return r;
    }

    private static List<Notice> none() {
        return new ArrayList<>();
    }

    @Test
    void aTargetHandsOnTheOtherTargetsNoticesOnceAtItsNextReadAndNeverItsOwn() throws IOException {
        List<Notice> heard1 = new ArrayList<>();
        List<Notice> heard2 = new ArrayList<>();
        Reservation t1 = target(heard1);
        Reservation t2 = target(heard2);
        assertThat(t1.register(A, A, Reservation.REGISTER, false, 0, KEY_A, 0, none())).isZero();
        assertThat(t2.register(B, B, Reservation.REGISTER, false, 0, KEY_B, 0, none())).isZero();
        assertThat(t1.acquire(A, A, Reservation.ACQUIRE, Reservation.WRITE_EXCLUSIVE, KEY_A, 0, none())).isZero();

        List<Notice> own = new ArrayList<>();
        assertThat(t1.acquire(A, A, Reservation.PREEMPT, Reservation.WRITE_EXCLUSIVE, KEY_A, KEY_B, own)).isZero();
        Notice preempted = new Notice(B, B, Reservation.NOTICE_REGISTRATION_PREEMPTED);
        assertThat(own).as("the preempting target tells its controllers itself").containsExactly(preempted);
        assertThat(t2.state().registrants()).as("target 2 has not read yet").isEqualTo(2);
        t2.refresh();
        assertThat(heard2).containsExactly(preempted);
        assertThat(t2.state().registrants()).isEqualTo(1);
        t2.refresh();
        assertThat(heard2).as("read again: nothing new").hasSize(1);
        t1.refresh();
        assertThat(heard1).as("its own notice is not handed on again").isEmpty();

        // target 2 misses three changes of target 1, one with a notice for B: its next command hands that on
        assertThat(t2.register(B, B, Reservation.REGISTER, false, 0, KEY_B, 0, none())).isZero();
        assertThat(t1.release(A, A, Reservation.RELEASE, Reservation.WRITE_EXCLUSIVE, KEY_A, none())).isZero();
        assertThat(t1.acquire(A, A, Reservation.ACQUIRE, Reservation.WRITE_EXCLUSIVE_REGISTRANTS_ONLY, KEY_A, 0,
            none())).isZero();
        assertThat(t1.release(A, A, Reservation.RELEASE, Reservation.WRITE_EXCLUSIVE_REGISTRANTS_ONLY, KEY_A,
            none())).isZero();
        List<Notice> cOwn = new ArrayList<>();
        assertThat(t2.register(C, C, Reservation.REGISTER, false, 0, KEY_C, 0, cOwn)).isZero();
        assertThat(heard2).as("before its own command ran").containsExactly(preempted,
            new Notice(B, B, Reservation.NOTICE_RESERVATION_RELEASED));
        assertThat(cOwn).isEmpty();

        // a clear through target 2: target 1 hears of the two other registrants, target 2 tells them itself
        List<Notice> cleared = new ArrayList<>();
        assertThat(t2.release(C, C, Reservation.CLEAR, 0, KEY_C, cleared)).isZero();
        assertThat(cleared).hasSize(2);
        t1.refresh();
        assertThat(heard1).containsExactlyInAnyOrderElementsOf(cleared);
        t2.refresh();
        assertThat(heard2).hasSize(2);
        assertThat(ReservationMetadata.parse(shared.value).noticeSeq()).isEqualTo(4);
    }

    @Test
    void theJournalKeepsTheLatest64AndAReaderThatMissedMoreGetsThose() throws IOException {
        List<Notice> heard2 = new ArrayList<>();
        Reservation t1 = target(new ArrayList<>());
        Reservation t2 = target(heard2);
        assertThat(t1.register(A, A, Reservation.REGISTER, false, 0, KEY_A, 0, none())).isZero();
        for (int i = 1; i <= 70; i++) {
            assertThat(t1.register(B, B, Reservation.REGISTER, false, 0, i, 0, none())).isZero();
            assertThat(t1.acquire(A, A, Reservation.PREEMPT, Reservation.WRITE_EXCLUSIVE, KEY_A, i, none())).isZero();
        }
        Reservation.Kept kept = ReservationMetadata.parse(shared.value);
        assertThat(kept.noticeSeq()).isEqualTo(70);
        assertThat(kept.notices()).hasSize(ReservationMetadata.JOURNAL);
        t2.refresh();
        assertThat(heard2).as("the 64 latest of 70 missed").hasSize(64)
            .allMatch(n -> n.equals(new Notice(B, B, Reservation.NOTICE_REGISTRATION_PREEMPTED)));
    }

    @Test
    void aValueWithoutJournalReadsAsNoNoticesAndABadJournalIsUnreadable() throws IOException {
        byte[] old = ("{\"generation\":1,\"rtype\":0,\"type\":\"none\",\"ptpl\":false,\"holder\":null,\"registrants\":"
            + "[{\"hostid\":\"0000000000000000000000000000000a\",\"key\":\"161\",\"holder\":false}]}")
            .getBytes(StandardCharsets.UTF_8);
        Reservation.Kept k = ReservationMetadata.parse(old);
        assertThat(k.noticeSeq()).isZero();
        assertThat(k.notices()).isEmpty();
        assertThat(k.state().registrants()).isEqualTo(1);
        shared.value = old;
        List<Notice> heard = new ArrayList<>();
        Reservation t = target(heard);
        assertThat(t.register(B, B, Reservation.REGISTER, false, 0, KEY_B, 0, none())).isZero();
        assertThat(new String(shared.value, StandardCharsets.UTF_8)).as("no journal until there is a notice")
            .doesNotContain("notices");

        String bad = new String(old, StandardCharsets.UTF_8).replace("]}",
            "],\"notices\":{\"last\":1,\"pages\":[{\"hostid\":\"0000000000000000000000000000000a\",\"type\":7}]}}");
        assertThatThrownBy(() -> ReservationMetadata.parse(bad.getBytes(StandardCharsets.UTF_8)))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("notice type 7");
        String short_ = bad.replace("\"last\":1", "\"last\":0").replace("\"type\":7", "\"type\":1");
        assertThatThrownBy(() -> ReservationMetadata.parse(short_.getBytes(StandardCharsets.UTF_8)))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("below the journal's length");
    }
}
