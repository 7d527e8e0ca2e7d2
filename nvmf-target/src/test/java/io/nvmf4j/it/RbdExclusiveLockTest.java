package io.nvmf4j.it;

import io.nvmf4j.ControlException;
import io.nvmf4j.NvmfTarget;
import io.nvmf4j.bdev.RbdBdev;
import io.nvmf4j.config.ListenerConfig;
import io.nvmf4j.testhost.CephCluster;
import io.nvmf4j.testhost.Completion;
import io.nvmf4j.testhost.NvmeController;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static io.nvmf4j.it.ReservationTest.block;
import static io.nvmf4j.it.ReservationTest.ok;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * RBD's exclusive lock moving with the ANA optimized path: two targets in this JVM serve one RBD image of a real Ceph
 * cluster ({@link CephCluster}) as namespace 1 (ANA group 1) with {@code exclusiveLock}; gateway 1's listener is
 * optimized, gateway 2's non-optimized. The optimized gateway holds the lock (Ceph's {@code rbd lock ls} names its
 * client), the other's writes get Asymmetric Access Transition (a path error: the host sends them through the optimized
 * path) while its reads work; stepping down through the API hands the lock over; a gateway made optimized while the
 * other still keeps the lock breaks it, and Ceph's blocklist fences the old one's writes.
 */
@ExtendWith(CephCluster.class)
@Timeout(value = 180, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class RbdExclusiveLockTest extends RbdGateways {
    static final int SCT_PATH = 3;
    static final int SC_ANA_PERSISTENT_LOSS = 1;
    static final int SC_ANA_TRANSITION = 3;
    private final ListenerConfig[] listener = new ListenerConfig[2];

    RbdExclusiveLockTest() {
        super("lock");
    }

    private void start(int i, String state) throws IOException {
        listener[i] = new ListenerConfig("tcp", TestTarget.ADDRESS, TestTarget.freePort());
        listener[i].anaStates = new LinkedHashMap<>(Map.of("1", state));
        gw[i] = NvmfTarget.start(gatewayConfig(listener[i], true));
    }

    private NvmeController connect(int i, String hostnqn) throws IOException {
        return connectPort(listener[i].port, hostnqn);
    }

    private boolean owns(int i) throws IOException {
        return ((RbdBdev) gw[i].bdev("r0")).ownsExclusiveLock();
    }

    /** Ceph's own view: the lockers of the image's exclusive lock, as rbd lock ls prints them. */
    private String lockers() throws Exception {
        return CephCluster.get().rbd("lock", "ls", CephCluster.get().pool() + "/" + image);
    }

    private static void pathError(Completion c, int sc) {
        assertThat(c.sct()).as("%s", c).isEqualTo(SCT_PATH);
        assertThat(c.sc()).as("%s", c).isEqualTo(sc);
    }

    @Test
    void theOptimizedGatewayHoldsTheLockAndStepsDownThroughTheApi() throws Exception {
        start(0, "optimized");
        start(1, "non-optimized");
        assertThat(owns(0)).as("gateway 1, optimized, holds the lock").isTrue();
        assertThat(owns(1)).isFalse();
        assertThat(lockers()).as("Ceph shows one locker, librbd's managed lock").contains("auto ");

        NvmeController a = connect(0, ReservationTest.HOST_A);
        NvmeController b = connect(1, ReservationTest.HOST_B);
        ok(a.io(0).write(1, 20, block(1)));
        pathError(b.io(0).write(1, 21, block(2)), SC_ANA_TRANSITION); // the non-optimized path cannot write now
        Completion read = b.io(0).read(1, 20, 1);
        ok(read);
        assertThat(read.data()).as("reads work through either path").isEqualTo(block(1));
        assertThat(owns(0)).as("a refused write took nothing from the owner").isTrue();

        // step down: gateway 1 non-optimized (it gives the lock up), then gateway 2 optimized (it takes it, no break)
        gw[0].setAnaState(TestTarget.SUBNQN, listener[0], 1, "non-optimized");
        assertThat(owns(0)).isFalse();
        gw[1].setAnaState(TestTarget.SUBNQN, listener[1], 1, "optimized");
        assertThat(owns(1)).isTrue();
        ok(b.io(0).write(1, 21, block(3)));
        pathError(a.io(0).write(1, 20, block(4)), SC_ANA_TRANSITION);
        ok(b.io(0).write(1, 20, block(4))); // the host sends it through the optimized path instead
        assertThat(a.io(0).read(1, 20, 2).data()).as("gateway 1 reads what went through gateway 2")
            .isEqualTo(concat(block(4), block(3)));

        // and back: gateway 1 takes its place again once gateway 2 stepped down
        gw[1].setAnaState(TestTarget.SUBNQN, listener[1], 1, "non-optimized");
        gw[0].setAnaState(TestTarget.SUBNQN, listener[0], 1, "optimized");
        assertThat(owns(0)).isTrue();
        assertThat(owns(1)).isFalse();
        ok(a.io(0).write(1, 22, block(5)));
    }

    @Test
    void aGatewayMadeOptimizedWhileTheOtherKeepsTheLockBreaksItAndCephFencesTheOld() throws Exception {
        start(0, "optimized");
        start(1, "non-optimized");
        NvmeController a = connect(0, ReservationTest.HOST_A);
        NvmeController b = connect(1, ReservationTest.HOST_B);
        ok(a.io(0).write(1, 30, block(6)));
        // gateway 1 is cut off in the operator's view and does not step down: gateway 2 is made optimized anyway
        gw[1].setAnaState(TestTarget.SUBNQN, listener[1], 1, "optimized");
        assertThat(owns(1)).isTrue();
        ok(b.io(0).write(1, 31, block(7)));
        // Ceph blocklisted gateway 1's client when its lock was broken: nothing it sends lands any more
        Completion fenced = a.io(0).write(1, 31, block(8));
        assertThat(fenced.sct()).as("%s", fenced).isEqualTo(SCT_PATH);
        assertThat(fenced.sc()).as("%s", fenced).isIn(SC_ANA_TRANSITION, SC_ANA_PERSISTENT_LOSS);
        assertThat(b.io(0).read(1, 31, 1).data()).as("gateway 1's write did not land").isEqualTo(block(7));
    }

    @Test
    void aLockThatCannotBeTakenLeavesTheStateAsItWas() throws Exception {
        // an image made without the exclusive-lock feature: librbd refuses rbd_lock_acquire
        CephCluster.get().rbd("create", "--size", "8M", "--image-feature", "layering",
            CephCluster.get().pool() + "/" + image);
        start(0, "non-optimized");
        // the API answers 409
        assertThatThrownBy(() -> gw[0].setAnaState(TestTarget.SUBNQN, listener[0], 1, "optimized"))
            .isInstanceOf(ControlException.class).hasMessageContaining("exclusive lock")
            .hasMessageContaining("stays non-optimized");
        assertThat(gw[0].anaGroups(TestTarget.SUBNQN, listener[0]).get(0).state()).isEqualTo("non-optimized");
    }

    private static byte[] concat(byte[] x, byte[] y) {
        byte[] out = new byte[x.length + y.length];
        System.arraycopy(x, 0, out, 0, x.length);
        System.arraycopy(y, 0, out, x.length, y.length);
        return out;
    }
}
