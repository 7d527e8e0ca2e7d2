package io.nvmf4j.javaengine;

import io.nvmf4j.core.Reservation;
import io.nvmf4j.core.Reservation.Notice;

import java.io.IOException;
import java.util.Arrays;
import java.util.List;

/**
 * One shared reservation value in memory (ReservationMetadata's format), changed by compare-and-set of its bytes as
 * the OSD does: the part of an image's metadata that the Ceph tests run for real. Every {@link #target()} is one
 * target's view of it.
 */
final class MemoryReservationValue {
    /** What an announcement does (nothing: no watchers, the other targets learn of changes when they read). */
    @FunctionalInterface
    interface Announcement {
        void run() throws IOException;
    }

    /** The value kept for every target; null: none yet. */
    byte[] value;
    volatile Announcement onAnnounce = () -> { };

    /** A target's view: reads, compare-and-sets and announces through this value. */
    Reservation.Shared target() {
        return new Reservation.Shared() {
            @Override
            public Reservation.Kept read() throws IOException {
                return value == null ? new Reservation.Kept(Reservation.State.EMPTY, null)
                    : ReservationMetadata.parse(value);
            }

            @Override
            public Reservation.Kept compareAndSet(Reservation.Kept expected, Reservation.State next,
                                                  List<Notice> notices) throws IOException {
                if (!Arrays.equals(expected.raw(), value)) {
                    return null;
                }
                value = ReservationMetadata.format(expected, next, notices);
                return ReservationMetadata.parse(value);
            }

            @Override
            public void announce() throws IOException {
                onAnnounce.run();
            }

            @Override
            public void close() {
            }
        };
    }
}
