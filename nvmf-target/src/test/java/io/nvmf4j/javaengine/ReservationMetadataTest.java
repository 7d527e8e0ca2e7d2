package io.nvmf4j.javaengine;

import io.nvmf4j.bdev.RbdBdev;
import io.nvmf4j.core.Reservation;
import io.nvmf4j.nvme.NvmeStatus;
import io.nvmf4j.testhost.CephCluster;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The reservation kept in an RBD image (ReservationMetadata) as two targets open it, each with its own client of a
 * real Ceph cluster ({@link CephCluster}): what another target changes while one opens the namespace is in the state
 * that one enforces, without waiting for a command or a later notification.
 */
@ExtendWith(CephCluster.class)
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ReservationMetadataTest {
    private static final AtomicInteger IMAGES = new AtomicInteger();
    private static final long HOST_HI = 0x7d0c1e2a00004000L;
    private static final long HOST_LO = 0x800000000000000aL;
    private static final long KEY = 0xA1A1_0000_0000_00A1L;
    private final List<RbdBdev> open = new ArrayList<>();
    private final List<Reservation> reservations = new ArrayList<>();

    @AfterEach
    void closeAll() {
        reservations.forEach(Reservation::forget);
        open.forEach(RbdBdev::close);
    }

    private RbdBdev gateway(String image) {
        CephCluster c = CephCluster.get();
        RbdBdev d = RbdBdev.open("r0", 512, 8192, new RbdBdev.Options(c.pool(), image, c.conf(), c.client(),
            c.keyring(), true, 10));
        open.add(d);
        return d;
    }

    /**
     * Target B opens the namespace while target A registers a host and takes a Write Exclusive reservation (the hook
     * runs between B's two steps). B's state has them at once: its I/O check refuses the other host's writes.
     */
    @Test
    void aChangeWhileAnotherTargetOpensTheNamespaceIsSeenThere() throws Exception {
        String image = "resvmeta-" + ProcessHandle.current().pid() + "-" + IMAGES.incrementAndGet();
        RbdBdev a = gateway(image);
        RbdBdev b = gateway(image);
        Reservation onA = ReservationMetadata.open(a);
        reservations.add(onA);
        int[] status = new int[2];
        Reservation onB = ReservationMetadata.open(b, () -> {
            status[0] = onA.register(HOST_HI, HOST_LO, Reservation.REGISTER, false, 0, KEY,
                Reservation.CPTPL_NO_CHANGE, new ArrayList<>());
            status[1] = onA.acquire(HOST_HI, HOST_LO, Reservation.ACQUIRE, Reservation.WRITE_EXCLUSIVE, KEY, 0,
                new ArrayList<>());
        });
        reservations.add(onB);
        assertThat(status).as("register and acquire through A").containsOnly(NvmeStatus.SUCCESS);
        assertThat(onB.state().registrants()).as("B's state: A's registration").isEqualTo(1);
        assertThat(onB.state().rtype).as("B's state: A's reservation").isEqualTo(Reservation.WRITE_EXCLUSIVE);
        assertThat(onB.checkAccess(HOST_HI ^ 1, HOST_LO, true)).as("another host's write through B")
            .isEqualTo(Reservation.CONFLICT);
    }
}
