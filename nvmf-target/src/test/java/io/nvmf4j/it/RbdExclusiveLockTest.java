package io.nvmf4j.it;

import io.nvmf4j.testhost.FreePorts;
import io.nvmf4j.ControlException;
import io.nvmf4j.javaengine.JavaEngine;
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
 * path) while its reads work; stepping down through the API hands the lock over; a gateway made optimized (or restarted
 * optimized) while the other, alive, keeps the lock does not break it; once a fencing agent has blocklisted the owner
 * the other gateway takes the lock and the fenced one reconnects.
 */
@ExtendWith(CephCluster.class)
@Timeout(value = 180, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class RbdExclusiveLockTest extends RbdGateways {
    static final int SCT_PATH = 3;
    static final int SC_ANA_INACCESSIBLE = 2;
    static final int SC_ANA_TRANSITION = 3;
    private final ListenerConfig[] listener = new ListenerConfig[2];

    RbdExclusiveLockTest() {
        super("lock");
    }

    private void start(int i, String state) throws IOException {
        listener[i] = new ListenerConfig("tcp", TestTarget.ADDRESS, FreePorts.pick());
        listener[i].anaStates = new LinkedHashMap<>(Map.of("1", state));
        gw[i] = JavaEngine.start(gatewayConfig(listener[i], true));
    }

    private NvmeController connect(int i, String hostnqn) throws IOException {
        return connectPort(listener[i].port, hostnqn);
    }

    private boolean owns(int i) throws IOException {
        return ((RbdBdev) gw[i].engine().bdev("r0")).ownsExclusiveLock();
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

    /**
     * A gateway made optimized while the other, alive, keeps the lock does not break it (breaking blocklists the
     * owner, and Ceph would drop the writes it acknowledged): the API answers 409 and both stay as they were.
     */
    @Test
    void aGatewayMadeOptimizedWhileTheOtherKeepsTheLockDoesNotBreakIt() throws Exception {
        start(0, "optimized");
        start(1, "non-optimized");
        NvmeController a = connect(0, ReservationTest.HOST_A);
        ok(a.io(0).write(1, 30, block(6)));
        assertThatThrownBy(() -> gw[1].setAnaState(TestTarget.SUBNQN, listener[1], 1, "optimized"))
            .isInstanceOf(ControlException.class).hasMessageContaining("keeps it (it answers): not broken")
            .hasMessageContaining("stays non-optimized");
        assertThat(owns(0)).as("the live owner keeps the lock").isTrue();
        assertThat(owns(1)).isFalse();
        assertThat(((RbdBdev) gw[0].engine().bdev("r0")).blocklistedCount()).isZero();
        assertThat(gw[1].anaGroups(TestTarget.SUBNQN, listener[1]).get(0).state()).isEqualTo("non-optimized");
        ok(a.io(0).write(1, 31, block(7)));
        assertThat(a.io(0).read(1, 30, 2).data()).isEqualTo(concat(block(6), block(7)));
    }

    /**
     * A gateway restarted with a saved document that says optimized, while the other gateway holds the lock and
     * serves: it does not take the lock at start (a restart never steals), serves the namespace non-optimized, and
     * the live owner's writes go on.
     */
    @Test
    void aRestartedGatewayDoesNotStealTheLiveOwnersLock() throws Exception {
        start(0, "optimized");
        NvmeController a = connect(0, ReservationTest.HOST_A);
        ok(a.io(0).write(1, 50, block(14)));
        start(1, "optimized");
        assertThat(owns(0)).as("the live owner keeps the lock").isTrue();
        assertThat(owns(1)).isFalse();
        assertThat(((RbdBdev) gw[0].engine().bdev("r0")).blocklistedCount()).isZero();
        assertThat(gw[1].anaGroups(TestTarget.SUBNQN, listener[1]).get(0).state()).isEqualTo("non-optimized");
        ok(a.io(0).write(1, 51, block(15)));
        NvmeController b = connect(1, ReservationTest.HOST_B);
        pathError(b.io(0).write(1, 52, block(16)), SC_ANA_TRANSITION);
        assertThat(b.io(0).read(1, 50, 2).data()).isEqualTo(concat(block(14), block(15)));
    }

    /** Blocklists the current owner of the image's exclusive lock at Ceph (as a fencing agent does). */
    private void blocklistLockOwner() throws Exception {
        String address = null;
        for (String line : lockers().split("\n")) {
            String[] f = line.trim().split("\\s+");
            if (f.length >= 4 && f[0].startsWith("client.")) {
                address = f[f.length - 1];
            }
        }
        assertThat(address).as("the locker's address in rbd lock ls:%n%s", lockers()).isNotNull();
        CephCluster.get().ceph("osd", "blocklist", "add", address);
    }

    @Test
    void aBlocklistedGatewayReconnectsAndServesAgainWithoutARestart() throws Exception {
        start(0, "optimized");
        start(1, "non-optimized");
        RbdBdev bdev0 = (RbdBdev) gw[0].engine().bdev("r0");
        NvmeController a = connect(0, ReservationTest.HOST_A);
        NvmeController b = connect(1, ReservationTest.HOST_B);
        ok(a.admin().setFeatures(AnaTest.FID_ASYNC_EVENT_CONFIG, AnaLogs.AEC_ANA_CHANGE));
        ok(a.io(0).write(1, 40, block(9)));
        long reconnected = RbdBdev.reconnectedTotal();
        java.util.concurrent.CompletableFuture<Completion> aen = a.admin().asyncEventRequest();

        // gateway 1's client is blocklisted at Ceph (a fencing agent); gateway 2 takes the lock of the fenced owner
        blocklistLockOwner();
        awaitOptimized(1);
        ok(b.io(0).write(1, 41, block(10)));
        Completion refused = a.io(0).write(1, 41, block(11));
        assertThat(refused.sct()).as("a path error, no data error: %s", refused).isEqualTo(SCT_PATH);
        assertThat(refused.sc()).as("%s", refused).isIn(SC_ANA_TRANSITION, SC_ANA_INACCESSIBLE);

        // gateway 1 notices, is fenced (its ANA group inaccessible), reconnects as a new client by itself
        assertThat(aen.get(60, TimeUnit.SECONDS).dw0()).as("ANA change event on gateway 1's controller")
            .isEqualTo(AnaLogs.AEN_ANA_CHANGE);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        while (RbdBdev.reconnectedTotal() == reconnected && System.nanoTime() < deadline) {
            Thread.sleep(100);
        }
        assertThat(RbdBdev.reconnectedTotal()).as("gateway 1 reconnected").isGreaterThan(reconnected);
        assertThat(bdev0.isFenced()).isFalse();
        assertThat(bdev0.blocklistedCount()).isEqualTo(1);
        assertThat(RbdBdev.blocklistedTotal()).isGreaterThanOrEqualTo(1);
        // it serves again, as a non-optimized path: the lock stays gateway 2's (it does not take it back by itself)
        assertThat(gw[0].anaGroups(TestTarget.SUBNQN, listener[0]).get(0).state()).isEqualTo("non-optimized");
        assertThat(AnaLogs.groups(AnaLogs.read(a.admin(), false)).get(0)).as("the ANA log through gateway 1")
            .containsExactly(1, AnaLogs.ANAS_NON_OPTIMIZED, 1);
        Completion read = a.io(0).read(1, 40, 2);
        ok(read);
        assertThat(read.data()).as("gateway 1 reads through its new client what both wrote")
            .isEqualTo(concat(block(9), block(10)));
        pathError(a.io(0).write(1, 42, block(12)), SC_ANA_TRANSITION);
        assertThat(owns(1)).isTrue();
        assertThat(owns(0)).isFalse();

        // the operator moves the optimized path back: gateway 2 steps down, gateway 1 takes the lock, nothing broken
        gw[1].setAnaState(TestTarget.SUBNQN, listener[1], 1, "non-optimized");
        gw[0].setAnaState(TestTarget.SUBNQN, listener[0], 1, "optimized");
        assertThat(owns(0)).isTrue();
        assertThat(gw[0].anaGroups(TestTarget.SUBNQN, listener[0]).get(0).state()).isEqualTo("optimized");
        ok(a.io(0).write(1, 42, block(13)));
        assertThat(b.io(0).read(1, 42, 1).data()).isEqualTo(block(13));
        assertThat(bdev0.blocklistedCount()).as("taken back without a break").isEqualTo(1);
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

    /** Makes gateway {@code i} optimized, trying again while the old owner's lock is still seen as alive. */
    private void awaitOptimized(int i) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            try {
                gw[i].setAnaState(TestTarget.SUBNQN, listener[i], 1, "optimized");
                return;
            } catch (ControlException e) {
                assertThat(System.nanoTime()).as("gateway %d optimized: %s", i + 1, e.getMessage()).isLessThan(deadline);
                Thread.sleep(500);
            }
        }
    }

    private static byte[] concat(byte[] x, byte[] y) {
        byte[] out = new byte[x.length + y.length];
        System.arraycopy(x, 0, out, 0, x.length);
        System.arraycopy(y, 0, out, x.length, y.length);
        return out;
    }
}
